//! Declared gathers (a spec's `gathers = { x = "NNZ" }`): the reads of a buffer at indices
//! another array holds, moved from each small size's buffer to the target's by the
//! calibration's random gather sweep (docs/models.md §2.4, "Gathers").
//!
//! A sparse product streams its matrix and gathers its vector `x`. At the window's sizes `x`
//! fits a cache that it outgrows at the target, while the matrix streams at the same rate at
//! both: the streaming rate moves the stream, and nothing the window measured says what the
//! gathers will cost. The random gather sweep reads `a[idx[i]]` at random indices, so its
//! cost per element where `a` is as large as the gathered buffer is the cost of a gather from
//! a buffer that large (with the index read and the value written, which cost the same at
//! both sizes and cancel in the difference).

use crate::bench::gather::BYTES_PER_ELEMENT;
use crate::export::table::sig;
use crate::fit::window::DeviceFacts;
use crate::workloads::{DeclaredAmounts, GatheredReads, Workload, STRETCH_READS};

/// The random gather sweep's seconds per read from a buffer of `bytes`, where it measured.
fn seconds_per_read(device: &DeviceFacts, bytes: u64) -> Option<f64> {
    device
        .random_gather_rate_from(bytes)
        .filter(|r| *r > 0.0)
        .map(|r| BYTES_PER_ELEMENT as f64 / r)
}

/// Each declaration `pick` finds in a kernel's amounts at `size` beside the same kernel's
/// declaration of the same buffer (`buffer`) at `large`: the kernel and the two. With
/// `footprints`, gathers carry their footprints (slower: for notes).
pub(super) fn paired_declarations<T: Clone>(
    workload: &dyn Workload,
    (iterations, footprints): (usize, bool),
    size: usize,
    large: usize,
    pick: impl Fn(&DeclaredAmounts) -> &Vec<T>,
    buffer: impl Fn(&T) -> &String,
) -> Vec<(String, T, T)> {
    let declared = |n: usize| {
        if footprints {
            workload.declared_amounts_with_footprints(n, iterations)
        } else {
            workload.declared_amounts(n, iterations)
        }
        .unwrap_or_default()
    };
    let target = declared(large);
    let mut pairs = Vec::new();
    for d in declared(size) {
        let Some(there) = target.iter().find(|t| t.kernel == d.kernel) else {
            continue;
        };
        for g in pick(&d) {
            if let Some(t) = pick(there).iter().find(|t| buffer(t) == buffer(g)) {
                pairs.push((d.kernel.clone(), g.clone(), t.clone()));
            }
        }
    }
    pairs
}

/// Each gather declared at `size` beside the same kernel's gathers from the same buffer at
/// `large`: the kernel, the gather at `size` and the one at `large` (with their footprints
/// where `footprints`).
fn paired(
    workload: &dyn Workload,
    (iterations, footprints): (usize, bool),
    size: usize,
    large: usize,
) -> Vec<(String, GatheredReads, GatheredReads)> {
    paired_declarations(
        workload,
        (iterations, footprints),
        size,
        large,
        |d| &d.gathers,
        |g| &g.buffer,
    )
}

/// For each kernel phase with declared gathers at `size`: the sum over its gathers of what
/// `seconds` says of each (the gather at `size` and its buffer's bytes at the target), a
/// gather it says nothing of left out, a phase with none of them too.
fn per_kernel(
    workload: &dyn Workload,
    iterations: usize,
    size: usize,
    large: usize,
    seconds: impl Fn(&GatheredReads, u64) -> Option<f64>,
) -> Vec<(String, f64)> {
    let mut sums: Vec<(String, f64)> = Vec::new();
    for (kernel, g, there) in paired(workload, (iterations, false), size, large) {
        let Some(t) = seconds(&g, there.bytes) else {
            continue;
        };
        match sums.iter_mut().find(|s| s.0 == kernel) {
            Some(s) => s.1 += t,
            None => sums.push((kernel, t)),
        }
    }
    sums
}

/// For each kernel phase with declared gathers: the seconds its gathers at `size` take more
/// from the target's (`large`) buffers than from this size's, by the random gather sweep
/// (nothing where the calibration has no random gather sweep); empty where nothing declares
/// a gather. A larger buffer that the sweep rates cheaper (its noise between two working
/// sets) adds nothing: a buffer's reads never get cheaper as it grows.
pub(super) fn gather_seconds(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    size: usize,
    large: usize,
) -> Vec<(String, f64)> {
    per_kernel(workload, iterations, size, large, |g, target_bytes| {
        Some(
            seconds_per_read(device, g.bytes)
                .zip(seconds_per_read(device, target_bytes))
                .map_or(0.0, |(here, there)| {
                    g.reads as f64 * (there - here).max(0.0)
                }),
        )
    })
}

/// For each kernel phase with declared gathers: the seconds its gathers at `size` take from
/// the target's (`large`) buffers, by the random gather sweep; empty where nothing declares
/// a gather or the calibration has no random gather sweep.
pub(super) fn gather_target_seconds(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    size: usize,
    large: usize,
) -> Vec<(String, f64)> {
    per_kernel(workload, iterations, size, large, |g, target_bytes| {
        seconds_per_read(device, target_bytes).map(|there| g.reads as f64 * there)
    })
}

/// Where the index buffer shows a declared gather's reads in a band of its buffer (a
/// stretch of [`STRETCH_READS`] reads covering under a tenth of it at the target): the
/// sentence that says so, else nothing. Such reads (a banded matrix's, a
/// restriction's map) come from cache at every size as a stencil's neighbours do, while the
/// rule charges them as gathers from the whole buffer: docs/spec-format.md says to declare
/// scattered reads only. (Charging them at the band instead was tried and not kept:
/// docs/decisions.md, "Gathers looked up at their footprint".)
fn band_note(kernel: &str, t: &GatheredReads, top: usize, g: &GatheredReads) -> String {
    let Some(there) = t.footprint.filter(|&f| f.saturating_mul(10) < t.bytes) else {
        return String::new();
    };
    let mb = |b: u64| sig(b as f64 * 1e-6, 3);
    let here = g
        .footprint
        .map_or_else(String::new, |f| format!(" and {} MB at {top}", mb(f)));
    format!(
        "; but its indices read {} in a band: a stretch of {STRETCH_READS} reads covers {} MB of it at the target{here} (its index buffer's initial values), as a banded matrix's or a regular map's do, and such reads come from cache and stream at every size: declare only scattered reads as gathers (docs/spec-format.md), or {kernel} is charged for a step its reads do not take",
        t.buffer,
        mb(there),
    )
}

/// The note that says how the declared gathers moved, read at the window's largest size
/// `top`; `None` where nothing declares a gather.
pub(super) fn gathers_note(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    top: usize,
    large: usize,
) -> Option<String> {
    let mb = |b: u64| sig(b as f64 * 1e-6, 3);
    let parts: Vec<String> = paired(workload, (iterations, true), top, large)
        .into_iter()
        .map(|(kernel, g, t)| {
            let band = band_note(&kernel, &t, top, &g);
            match seconds_per_read(device, g.bytes).zip(seconds_per_read(device, t.bytes)) {
                Some((here, there)) => format!(
                    "{kernel}'s gathers from {} ({} MB at the target, {} MB at {top}) cost {} ns each there and {} ns at {top} in the random gather sweep: each size's gathers add the difference, and the interval reaches them hiding behind the rest of the kernel's work{band}",
                    g.buffer,
                    mb(t.bytes),
                    mb(g.bytes),
                    sig(there * 1e9, 3),
                    sig(here * 1e9, 3)
                ),
                None => format!(
                    "{kernel} declares gathers from {}, but the calibration has no random gather sweep: they move with the rest of its time{band}",
                    g.buffer
                ),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibration whose random gather sweep costs 1 ns an element up to 1.2 MB of working
    /// set and 2 ns from 12 MB (12 bytes an element), with one fast working set between them;
    /// each gathers from a third of its working set.
    fn device() -> DeviceFacts {
        let points = vec![
            (300_000, 12e9),
            (1_200_000, 12e9),
            (3_000_000, 24e9),
            (12_000_000, 6e9),
            (48_000_000, 6e9),
        ];
        DeviceFacts {
            random_gather_arrays: points.iter().map(|&(w, r)| (w / 3, r)).collect(),
            random_gathers: points,
            ..Default::default()
        }
    }

    /// A sparse product as a spec writes it: K = 16 entries a row, each a read of x (N
    /// floats) at the column another array holds.
    const SPMV: &str = "name = \"spmv\"\nsource = \"k.cl\"\n[params]\nNNZ = \"16 * N\"\n[[buffers]]\nname = \"cols\"\ntype = \"u32\"\nlength = \"NNZ\"\ninit = { formula = \"(i * 40503) % N\" }\n[[buffers]]\nname = \"x\"\ntype = \"f32\"\nlength = \"N\"\ninit = { constant = 1 }\n[[buffers]]\nname = \"y\"\ntype = \"f32\"\nlength = \"N\"\ninit = \"none\"\n[[launches]]\nkernel = \"spmv\"\nglobal = [\"N\"]\nargs = [\"buf:cols\", \"buf:x\", \"buf:y\"]\nbytes = \"4 * NNZ + 8 * N\"\ngathers = { x = \"NNZ\" }\n";
    const KERNEL: &str = "__kernel void spmv(__global const uint* c, __global const float* x, __global float* y) {\n    uint r = get_global_id(0);\n    float s = 0.0f;\n    for (uint k = 0; k < 16; k++) s += x[c[16 * r + k]];\n    y[r] = s;\n}\n";

    #[test]
    fn a_sparse_products_gathers_cost_the_sweeps_difference_between_the_two_vectors() {
        let (_dir, spmv) = super::super::spec_in_temp(SPMV, KERNEL);
        // x is 4·N bytes: 0.1 MB at N = 25,000 (the sweep at 0.3 MB: 1 ns), 4 MB at
        // N = 1,000,000 (the sweep at 12 MB: 2 ns). Each of the size's NNZ reads per
        // iteration costs 1 ns more at the target.
        let (size, large) = (25_000, 1_000_000);
        let amounts = spmv.declared_amounts(size, 2).expect("amounts");
        let reads = amounts[0].gathers[0].reads as f64;
        let extra = gather_seconds(&spmv, 2, &device(), size, large);
        assert_eq!(extra.len(), 1, "{extra:?}");
        assert_eq!(extra[0].0, "spmv");
        assert!(
            (extra[0].1 - reads * 1e-9).abs() < 1e-12,
            "{extra:?} {reads}"
        );
        // At the target's buffer they cost 2 ns each.
        let there = gather_target_seconds(&spmv, 2, &device(), size, large);
        assert!((there[0].1 - 2.0 * reads * 1e-9).abs() < 1e-12, "{there:?}");
        // The fast working set between them is read as measured, not spread over the
        // smaller ones (an envelope would make x at 0.4 MB as fast as at 3 MB)...
        // (x at 0.4 MB reads the sweep at 1.2 MB: 1 ns, not the 0.67 ns of the median
        // around 3 MB that an envelope would take).
        let reads = spmv.declared_amounts(100_000, 1).expect("amounts")[0].gathers[0].reads;
        let between = gather_seconds(&spmv, 1, &device(), 100_000, large);
        assert!(
            (between[0].1 - reads as f64 * 1e-9).abs() < 1e-12,
            "{between:?}"
        );
        // ...and a target that the sweep rates cheaper adds nothing.
        let cheaper = gather_seconds(&spmv, 1, &device(), 100_000, 250_000);
        assert_eq!(cheaper[0].1, 0.0, "{cheaper:?}");
        let note = gathers_note(&spmv, 2, &device(), size, large).expect("a note");
        assert!(
            note.contains("x (4.00 MB at the target, 0.100 MB at 25000)")
                && note.contains("ns each there"),
            "{note}"
        );
        // Without a random gather sweep the note says so, and nothing is added.
        let none = DeviceFacts::default();
        assert_eq!(gather_seconds(&spmv, 2, &none, size, large)[0].1, 0.0);
        assert!(gather_target_seconds(&spmv, 2, &none, size, large).is_empty());
        let note = gathers_note(&spmv, 2, &none, size, large).expect("a note");
        assert!(note.contains("no random gather sweep"), "{note}");
        // Scattered columns: no word of a band.
        let note = gathers_note(&spmv, 2, &device(), size, large).expect("a note");
        assert!(!note.contains("band"), "{note}");
    }

    #[test]
    fn banded_gathers_are_charged_as_declared_and_the_note_says_they_stream() {
        // Row r reads x at r … r + 15 (a band 16 wide): 1,024 reads cross 64 rows, a span
        // of 79 floats (316 bytes) of x, or 78 where a stretch starts inside a row.
        let banded = SPMV.replace("(i * 40503) % N", "min(N - 1, floor(i / 16) + i % 16)");
        let (_dir, spmv) = super::super::spec_in_temp(&banded, KERNEL);
        let (size, large) = (25_000, 1_000_000);
        let with = spmv
            .declared_amounts_with_footprints(large, 1)
            .expect("amounts");
        assert_eq!(with[0].gathers[0].footprint, Some(316));
        assert_eq!(
            spmv.declared_amounts(large, 1).expect("amounts")[0].gathers[0].footprint,
            None
        );
        // The charge is the whole buffer's, as declared (a footprint's was not kept).
        let reads = spmv.declared_amounts(size, 2).expect("amounts")[0].gathers[0].reads;
        let extra = gather_seconds(&spmv, 2, &device(), size, large);
        assert!(
            (extra[0].1 - reads as f64 * 1e-9).abs() < 1e-12,
            "{extra:?}"
        );
        let note = gathers_note(&spmv, 2, &device(), size, large).expect("a note");
        assert!(
            note.contains("its indices read x in a band")
                && note.contains("covers 3.16e-4 MB of it at the target and 3.12e-4 MB at 25000"),
            "{note}"
        );
    }
}
