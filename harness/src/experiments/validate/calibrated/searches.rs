//! Declared binary searches (a spec's `searches = { a = "1" }`): a kernel whose work items
//! each binary-search a sorted array, moved from each small size's array to the target's
//! by the calibration's random gather sweep, level by level of the search
//! (docs/models.md §2.4, "Searches").
//!
//! A binary search is a walk down an implicit tree: its step d reads one of the 2^d keys of
//! depth d, and every search passes the same few keys near the root. Those stay in the
//! caches; the deeper steps gather from a footprint that doubles with each level until it
//! is every line of the array. So the cost of one search is no latency of the array's
//! level, and no rate of the launch's working set: it is a sum over the steps, each a
//! gather from the lines the steps down to it share among all searches. The random gather
//! sweep measures a gather's cost at a working set, with as many gathers in flight as the
//! device keeps (the searches of neighbouring work items run side by side), so
//!
//! ```text
//! cost(search) = Σ_{d < depth} c(F_d)        F_d = arrays · min(2^(d+1), lines) · 64 B
//! ```
//!
//! with depth = ⌈log₂ keys⌉ of one sorted array, `lines` the cache lines of one array, and
//! c(F) the sweep's cost per element where its gathered array holds F bytes (as for declared
//! gathers). A size's kernel time is moved to the target by
//! cost(target's search)/cost(this size's search): the same searches, each at what one
//! costs in the target's tree (the deeper tree's extra steps included).

use super::gathers::paired_declarations;
use crate::bench::gather::BYTES_PER_ELEMENT;
use crate::export::table::sig;
use crate::fit::window::DeviceFacts;
use crate::workloads::{SearchedBuffer, Workload};

/// Bytes of one cache line: the unit a search step's read occupies once the keys it may
/// read lie more than a line apart.
const LINE_BYTES: u64 = 64;

/// The steps of one search of `s`: ⌈log₂ keys⌉ of one sorted array (at least 1).
fn depth(s: &SearchedBuffer) -> u32 {
    let keys = (s.bytes / s.arrays.max(1) / s.stride_bytes.max(1)).max(2);
    u64::BITS - (keys - 1).leading_zeros()
}

/// Each buffer a kernel searches at `size` beside the same kernel's search of it at `large`:
/// the kernel and the two.
fn paired(
    workload: &dyn Workload,
    iterations: usize,
    size: usize,
    large: usize,
) -> Vec<(String, SearchedBuffer, SearchedBuffer)> {
    paired_declarations(
        workload,
        (iterations, false),
        size,
        large,
        |d| &d.searches,
        |s| &s.buffer,
    )
}

/// Seconds of one search of `s` by the random gather sweep, summed over its steps; `None`
/// without a sweep.
pub(super) fn seconds_per_search(device: &DeviceFacts, s: &SearchedBuffer) -> Option<f64> {
    let arrays = s.arrays.max(1);
    let lines = (s.bytes / arrays).div_ceil(LINE_BYTES).max(1);
    (0..depth(s))
        .map(|d| {
            let keys = 1u64.checked_shl(d + 1).unwrap_or(u64::MAX);
            let footprint = arrays
                .saturating_mul(keys.min(lines))
                .saturating_mul(LINE_BYTES);
            device
                .random_gather_rate_from(footprint)
                .filter(|r| *r > 0.0)
                .map(|r| BYTES_PER_ELEMENT as f64 / r)
        })
        .sum()
}

/// For each kernel phase that declares searches: how much longer its searches take in the
/// target's (`large`) arrays than in this size's, by [`seconds_per_search`], one search of
/// each buffer it searches summed at both sizes (a work item that searches two buffers pays
/// both searches); never below 1 (a larger tree is never searched faster; a sweep's noise
/// between two working sets could say so). Nothing where the calibration has no random
/// gather sweep.
pub(super) fn search_factors(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    size: usize,
    large: usize,
) -> Vec<(String, f64)> {
    // Each kernel's seconds of one search of every buffer it searches, at the target and here.
    let mut sums: Vec<(String, f64, f64)> = Vec::new();
    let pairs = paired(workload, iterations, size, large);
    for (kernel, here, there) in pairs {
        let Some((t, h)) =
            seconds_per_search(device, &there).zip(seconds_per_search(device, &here))
        else {
            continue;
        };
        match sums.iter_mut().find(|s| s.0 == kernel) {
            Some(s) => {
                s.1 += t;
                s.2 += h;
            }
            None => sums.push((kernel, t, h)),
        }
    }
    sums.into_iter()
        .map(|(kernel, t, h)| (kernel, (t / h).max(1.0)))
        .filter(|f| f.1.is_finite())
        .collect()
}

/// The note that says how the declared searches moved, read at the window's largest size
/// `top`; `None` where nothing declares a search.
pub(super) fn searches_note(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    top: usize,
    large: usize,
) -> Option<String> {
    let pairs = paired(workload, iterations, top, large);
    let parts: Vec<String> = pairs
        .into_iter()
        .map(|(kernel, here, there)| {
            match seconds_per_search(device, &here).zip(seconds_per_search(device, &there)) {
                Some((h, t)) => format!(
                    "{kernel}'s searches of {} ({} steps at the target, {} at {top}) cost {} ns each there and {} ns at {top} by the random gather sweep, step by step over the tree's footprint: each size's time is moved by their ratio",
                    here.buffer,
                    depth(&there),
                    depth(&here),
                    sig(t * 1e9, 3),
                    sig(h * 1e9, 3)
                ),
                None => format!(
                    "{kernel} declares searches of {}, but the calibration has no random gather sweep: they move with the rest of its time",
                    here.buffer
                ),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gather sweep that costs 1 ns an element up to 300 kB of working set and 4 ns
    /// from 3 MB on (12 bytes an element), each gathering from a third of its working set.
    fn device() -> DeviceFacts {
        let points = vec![(300_000, 12e9), (3_000_000, 3e9), (300_000_000, 3e9)];
        DeviceFacts {
            random_gather_arrays: points.iter().map(|&(w, r)| (w / 3, r)).collect(),
            random_gathers: points,
            ..Default::default()
        }
    }

    fn searched(keys: u64, arrays: u64, stride_bytes: u64) -> SearchedBuffer {
        SearchedBuffer {
            buffer: "a".into(),
            bytes: keys * arrays * stride_bytes,
            arrays,
            stride_bytes,
        }
    }

    #[test]
    fn a_search_costs_its_steps_each_at_the_footprint_of_the_levels_above_it() {
        // 2^20 keys of 4 bytes in one array: 20 steps. Step d shares 2^(d+1) lines among
        // all searches (3·64·2^(d+1) bytes in the sweep): 1 ns while that is at most 300 kB
        // (d ≤ 9), 4 ns from 3 MB (d ≥ 13), log-interpolated between.
        let s = searched(1 << 20, 1, 4);
        assert_eq!(depth(&s), 20);
        let t = seconds_per_search(&device(), &s).expect("a sweep");
        let expected: f64 = (0..20u32)
            .map(|d| {
                let w = (3u64 << 6 << (d + 1).min(16)) as f64; // at most 65,536 lines
                if w <= 300_000.0 {
                    1e-9
                } else if w >= 3_000_000.0 {
                    4e-9
                } else {
                    1e-9 * 4f64.powf((w / 300_000.0).ln() / 10f64.ln())
                }
            })
            .sum();
        assert!((t - expected).abs() < 1e-12, "{t} {expected}");
        // Keys 24 bytes apart: fewer keys in the same bytes (a shallower tree), and 68 arrays
        // side by side share the caches: each step's footprint is 68 times one array's.
        let grid = searched(10_000, 68, 24);
        assert_eq!(depth(&grid), 14);
        let one = searched(10_000, 1, 24);
        assert!(seconds_per_search(&device(), &grid) > seconds_per_search(&device(), &one));
        // No sweep, no cost.
        assert_eq!(seconds_per_search(&DeviceFacts::default(), &s), None);
    }

    const SEARCH: &str = "name = \"bs\"\nsource = \"k.cl\"\n[params]\nQ = \"2 * N\"\n[[buffers]]\nname = \"a\"\ntype = \"u32\"\nlength = \"N\"\ninit = { formula = \"i\" }\n[[buffers]]\nname = \"z\"\ntype = \"u32\"\nlength = \"Q\"\ninit = { formula = \"i % N\" }\n[[launches]]\nkernel = \"bs\"\nglobal = [\"Q\"]\nargs = [\"buf:a\", \"buf:z\", \"u32:N\"]\nbytes = \"4 * N + 4 * Q\"\naccess = \"dependent\"\nsearches = { a = \"1\" }\n";
    const KERNEL: &str = "__kernel void bs(__global const uint* a, __global uint* z, uint n) {\n    uint i = get_global_id(0), lo = 0, hi = n;\n    while (hi - lo > 1) { uint m = (lo + hi) / 2; if (a[m] <= z[i]) lo = m; else hi = m; }\n    z[i] = lo;\n}\n";

    #[test]
    fn a_declared_search_moves_each_size_by_the_ratio_of_one_search_at_both_sizes() {
        let (_dir, bs) = super::super::spec_in_temp(SEARCH, KERNEL);
        let declared = bs.declared_amounts(1000, 1).expect("amounts");
        assert_eq!(declared[0].searches, vec![searched(1000, 1, 4)]);
        let (size, large) = (1 << 12, 1 << 20);
        let f = search_factors(&bs, 1, &device(), size, large);
        let cost = |n: u64| seconds_per_search(&device(), &searched(n, 1, 4)).expect("a sweep");
        assert_eq!(f.len(), 1, "{f:?}");
        assert!(
            (f[0].1 - cost(1 << 20) / cost(1 << 12)).abs() < 1e-12,
            "{f:?}"
        );
        assert!(f[0].1 > 20.0 / 12.0, "deeper and further out: {f:?}");
        // Never below 1, and the note gives both costs.
        assert_eq!(search_factors(&bs, 1, &device(), size, size)[0].1, 1.0);
        let note = searches_note(&bs, 1, &device(), size, large).expect("a note");
        assert!(
            note.contains("bs's searches of a (20 steps at the target, 12 at 4096)"),
            "{note}"
        );
        let none = searches_note(&bs, 1, &DeviceFacts::default(), size, large).expect("a note");
        assert!(none.contains("no random gather sweep"), "{none}");
        assert!(search_factors(&bs, 1, &DeviceFacts::default(), size, large).is_empty());

        // Two buffers searched by each work item: their searches' seconds add up at each
        // size, so the factor lies between the two buffers' own (a product would count the
        // move twice).
        let two = SEARCH.replace(
            "searches = { a = \"1\" }",
            "searches = { a = \"1\", z = \"1\" }",
        );
        let (_two_dir, both) = super::super::spec_in_temp(&two, KERNEL);
        let f = search_factors(&both, 1, &device(), size, large)[0].1;
        let (a, z) = (|n: u64| cost(n), |n: u64| cost(2 * n));
        let expected = (a(1 << 20) + z(1 << 20)) / (a(1 << 12) + z(1 << 12));
        assert!((f - expected).abs() < 1e-12, "{f} {expected}");
        let (fa, fz) = (a(1 << 20) / a(1 << 12), z(1 << 20) / z(1 << 12));
        assert!(f >= fa.min(fz) && f <= fa.max(fz), "{f} {fa} {fz}");
    }
}
