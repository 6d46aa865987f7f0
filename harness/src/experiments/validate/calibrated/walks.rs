//! Declared walks (a spec's `walks = { A = { stride = "M", steps = "K" } }`): the steps of
//! work items that each walk a buffer a stride apart, charged what a step costs along the
//! target's walks by the calibration's page walk sweep (docs/models.md §2.4, "Walks").
//!
//! A GEMM's work items each walk a column of A and one of B, the matrices' leading dimension
//! apart. In the window the walks touch a few hundred pages and fit the TLB's reach; at the
//! target they touch thousands, and every step that lands on another page waits on a page
//! walk, while the lines still come from a cache: the streaming rates see no level change and
//! the window's own scaling sees no step. The page walk sweep measures what a step costs
//! along walks of each length (one page a step). A kernel's walks run side by side, so the
//! pages they touch add; a walk whose stride is under a page touches `stride / page` of a
//! page a step, and that share of its steps lands on another page.
//!
//! A walk whose stride is a whole number of pages (a power-of-two leading dimension) also
//! puts every step in the same sets of a cache indexed below a page, so its lines stop
//! staying in that cache long before its pages outgrow the TLB: such a walk is charged the
//! sweep's aliased curve (a page a step) instead, on whichever side its stride is one. The
//! window's odd sizes rarely are; a user's power-of-two target often is.

use crate::bench::pages::STRIDE_BYTES;
use crate::export::table::sig;
use crate::fit::window::DeviceFacts;
use crate::workloads::{WalkedBuffer, Workload};

/// Bytes of a page: 4 KiB, a CPU's default. A device whose pages are larger (a GPU's 64 KiB
/// or 2 MiB) shows a flat sweep over these walks, and its walks add nothing.
const PAGE_BYTES: f64 = 4096.0;

/// The share of a walk's steps that land on another page: its stride over a page, at most 1
/// (the sweep's stride is a page and a line: [`STRIDE_BYTES`]).
fn new_page_share(w: &WalkedBuffer) -> f64 {
    (w.stride_bytes as f64 / PAGE_BYTES).min(1.0)
}

/// The pages a kernel's walks touch together: each walk's steps times its share of new
/// pages. Not the bytes they span: a walk whose stride is several pages skips the pages
/// between its steps, and the TLB holds the pages touched.
fn pages(walks: &[WalkedBuffer]) -> u64 {
    walks
        .iter()
        .map(|w| w.steps as f64 * new_page_share(w))
        .sum::<f64>()
        .round() as u64
}

/// One kernel's walks at a size and at the target, by buffer.
struct PairedWalks {
    kernel: String,
    here: Vec<WalkedBuffer>,
    there: Vec<WalkedBuffer>,
}

/// Each kernel that declares walks at `size` and at `large`.
fn paired(
    workload: &dyn Workload,
    iterations: usize,
    size: usize,
    large: usize,
) -> Vec<PairedWalks> {
    let declared = |n: usize| workload.declared_amounts(n, iterations).unwrap_or_default();
    let target = declared(large);
    declared(size)
        .into_iter()
        .filter(|d| !d.walks.is_empty())
        .filter_map(|d| {
            let there = target.iter().find(|t| t.kernel == d.kernel)?;
            (!there.walks.is_empty()).then(|| PairedWalks {
                kernel: d.kernel.clone(),
                here: d.walks.clone(),
                there: there.walks.clone(),
            })
        })
        .collect()
}

/// Whether every step of a walk falls in the same sets of a cache indexed below a page: its
/// stride is a whole number of pages.
fn aliased(w: &WalkedBuffer) -> bool {
    w.stride_bytes > 0 && w.stride_bytes.is_multiple_of(PAGE_BYTES as u64)
}

/// What a step of `w` costs along walks that touch `pages` pages over a step of the sweep's
/// shortest walk (a page the TLB holds, lines the caches hold): the aliased curve's cost
/// where `w`'s stride is a whole number of pages and the calibration measured it, else the
/// sweep's; never below 0. `None` without the sweep.
fn extra_step_seconds(device: &DeviceFacts, w: &WalkedBuffer, pages: u64) -> Option<f64> {
    let valid = |s: &f64| s.is_finite() && *s >= 0.0;
    let plain = |pages: u64| device.page_walk_step_seconds(pages).filter(valid);
    let within = plain(0)?;
    let at = if aliased(w) {
        device
            .aliased_page_walk_step_seconds(pages)
            .filter(valid)
            .or_else(|| plain(pages))
    } else {
        plain(pages)
    }?;
    Some((at - within).max(0.0))
}

/// The extra seconds a step of each side's first walk costs ([`extra_step_seconds`]) at the
/// pages that side's walks touch: (here, there); `None` without the sweep.
fn step_seconds(device: &DeviceFacts, p: &PairedWalks) -> Option<(f64, f64)> {
    let first = |walks: &[WalkedBuffer]| {
        let w = walks.first()?;
        extra_step_seconds(device, w, pages(walks))
    };
    first(&p.here).zip(first(&p.there))
}

/// For each kernel phase with declared walks: the seconds its steps at `size` take more
/// along the target's (`large`) walks than along this size's, each walk's steps × (what the
/// sweep says a step costs at the pages the target's walks touch over one within the TLB's
/// reach × its share of new pages there − the same here); nothing where the calibration has
/// no page walk sweep or a walk is missing at the target. Walks the sweep rates cheaper add
/// nothing: a step never gets cheaper as its walk grows.
pub(super) fn walk_seconds(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    size: usize,
    large: usize,
) -> Vec<(String, f64)> {
    paired(workload, iterations, size, large)
        .into_iter()
        .map(|p| {
            let (pages_here, pages_there) = (pages(&p.here), pages(&p.there));
            let more = p
                .here
                .iter()
                .filter_map(|w| {
                    let t = p.there.iter().find(|t| t.buffer == w.buffer)?;
                    let here = extra_step_seconds(device, w, pages_here)?;
                    let there = extra_step_seconds(device, t, pages_there)?;
                    let cost = there * new_page_share(t) - here * new_page_share(w);
                    Some(w.item_steps as f64 * cost.max(0.0))
                })
                .sum();
            (p.kernel, more)
        })
        .collect()
}

/// The note that says how the declared walks moved, read at the window's largest size `top`;
/// `None` where nothing declares a walk.
pub(super) fn walks_note(
    workload: &dyn Workload,
    iterations: usize,
    device: &DeviceFacts,
    top: usize,
    large: usize,
) -> Option<String> {
    let parts: Vec<String> = paired(workload, iterations, top, large)
        .into_iter()
        .map(|p| {
            let names: Vec<&str> = p.here.iter().map(|w| w.buffer.as_str()).collect();
            let names = names.join(", ");
            let curve = |walks: &[WalkedBuffer]| match walks.first() {
                Some(w) if aliased(w) && !device.aliased_page_walks.is_empty() => {
                    "its stride a whole number of pages, every step in the same cache sets: the sweep's walks a page apart".to_string()
                }
                Some(w) if aliased(w) => format!(
                    "its stride a whole number of pages, but the calibration has no walks a page apart (calibrate again to measure them): the page walk sweep's, {STRIDE_BYTES} B a step"
                ),
                _ => format!("the page walk sweep's, {STRIDE_BYTES} B a step"),
            };
            match step_seconds(device, &p) {
                Some((here, there)) => format!(
                    "{}'s walks of {names} touch {} pages at the target and {} at {top}: a step costs {} ns more there than within the TLB's reach ({}) and {} ns more at {top} ({}), and each size's steps add the difference",
                    p.kernel,
                    pages(&p.there),
                    pages(&p.here),
                    sig(there * 1e9, 3),
                    curve(&p.there),
                    sig(here * 1e9, 3),
                    curve(&p.here),
                ),
                None => format!(
                    "{} declares walks of {names}, but the calibration has no page walk sweep: they move with the rest of its time",
                    p.kernel
                ),
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A calibration whose page walk sweep costs 0.25 ns a step along walks of up to 1,024
    /// pages and 3.25 ns from 4,096.
    fn device() -> DeviceFacts {
        DeviceFacts {
            page_walks: vec![
                (256, 0.25e-9),
                (1024, 0.25e-9),
                (4096, 3.25e-9),
                (16384, 3.25e-9),
            ],
            ..Default::default()
        }
    }

    /// A GEMM as a spec writes it: each work item of an N × N grid walks a column of A and
    /// one of B, N floats apart, N steps each.
    const GEMM: &str = "name = \"gemm\"\nsource = \"k.cl\"\n[[buffers]]\nname = \"A\"\ntype = \"f32\"\nlength = \"N * N\"\ninit = { constant = 1 }\n[[buffers]]\nname = \"B\"\ntype = \"f32\"\nlength = \"N * N\"\ninit = { constant = 1 }\n[[buffers]]\nname = \"C\"\ntype = \"f32\"\nlength = \"N * N\"\ninit = \"none\"\n[[launches]]\nkernel = \"gemm\"\nglobal = [\"N\", \"N\"]\nargs = [\"buf:A\", \"buf:B\", \"buf:C\", \"u32:N\"]\nbytes = \"12 * N * N\"\nwalks = { A = { stride = \"N\", steps = \"N\" }, B = { stride = \"N\", steps = \"N\" } }\n";
    const KERNEL: &str = "__kernel void gemm(__global const float* a, __global const float* b, __global float* c, uint n) {\n    uint i = get_global_id(0), j = get_global_id(1);\n    float s = 0.0f;\n    for (uint k = 0; k < n; k++) s += a[i + k * n] * b[j + k * n];\n    c[i + j * n] = s;\n}\n";

    #[test]
    fn a_gemms_steps_cost_the_sweeps_difference_between_the_two_walks() {
        let (_dir, gemm) = super::super::spec_in_temp(GEMM, KERNEL);
        // N = 2048: strides of 8 KiB, two walks of 2048 steps touch 4,096 pages, not the
        // 8,192 they span (3.25 ns a step, 3 ns more than within the TLB's reach, every step
        // a new page). N = 512: strides of 2 KiB (half the steps land on another page), two
        // walks touch 512 pages (0.25 ns: nothing more).
        let (size, large) = (512, 2048);
        let amounts = gemm.declared_amounts(size, 2).expect("amounts");
        let walks = &amounts[0].walks;
        assert_eq!(walks.len(), 2, "{walks:?}");
        assert_eq!(
            walks[0].item_steps,
            2 * 512 * 512 * 512,
            "N² items, N steps, 2 runs"
        );
        assert_eq!((walks[0].stride_bytes, walks[0].steps), (2048, 512));
        let extra = walk_seconds(&gemm, 2, &device(), size, large);
        assert_eq!(extra.len(), 1, "{extra:?}");
        assert_eq!(extra[0].0, "gemm");
        let per_walk = walks[0].item_steps as f64 * (3.25e-9 - 0.25e-9);
        assert!(
            (extra[0].1 - 2.0 * per_walk).abs() < 1e-9 * per_walk,
            "{extra:?} {per_walk}"
        );
        // Both sides inside the TLB's reach: nothing added, though more of the larger
        // size's steps land on another page.
        let inside = walk_seconds(&gemm, 1, &device(), 256, 512);
        assert_eq!(inside[0].1, 0.0, "{inside:?}");
        let note = walks_note(&gemm, 2, &device(), size, large).expect("a note");
        assert!(
            note.contains("walks of A, B touch 4096 pages at the target and 512 at 512")
                && note.contains("3.00 ns more there"),
            "{note}"
        );
        // Without a page walk sweep the note says so, and nothing is added.
        let none = DeviceFacts::default();
        assert_eq!(walk_seconds(&gemm, 2, &none, size, large)[0].1, 0.0);
        let note = walks_note(&gemm, 2, &none, size, large).expect("a note");
        assert!(note.contains("no page walk sweep"), "{note}");
    }

    #[test]
    fn a_stride_of_whole_pages_is_charged_the_aliased_curve() {
        let (_dir, gemm) = super::super::spec_in_temp(GEMM, KERNEL);
        // The aliased curve: 2.25 ns a step along walks that touch 2,048 pages.
        let facts = DeviceFacts {
            aliased_page_walks: vec![(64, 0.3e-9), (2048, 2.25e-9), (16384, 4.25e-9)],
            ..device()
        };
        // N = 1024: strides of exactly a page; two walks touch 2,048 pages, 2.25 ns a step
        // on the aliased curve, 2 ns over the plain curve's 0.25 within the TLB's reach.
        // N = 512: 2 KiB strides (a page every other step), 512 pages, nothing more.
        let (size, large) = (512, 1024);
        let amounts = gemm.declared_amounts(size, 1).expect("amounts");
        let steps = amounts[0].walks[0].item_steps as f64;
        let extra = walk_seconds(&gemm, 1, &facts, size, large);
        let want = 2.0 * steps * 2e-9;
        assert!((extra[0].1 - want).abs() < 1e-9 * want, "{extra:?} {want}");
        let note = walks_note(&gemm, 1, &facts, size, large).expect("a note");
        assert!(
            note.contains("2.00 ns more there")
                && note.contains("every step in the same cache sets")
                && note.contains("4160 B a step"),
            "{note}"
        );
        // Without the aliased curve the plain one charges the page-multiple walk: 2,048
        // pages lie halfway (in logarithms) between its 1,024 and 4,096. The note says so.
        let plain = walk_seconds(&gemm, 1, &device(), size, large);
        let at = (0.25e-9f64 * 3.25e-9).sqrt() - 0.25e-9;
        let want = 2.0 * steps * at;
        assert!((plain[0].1 - want).abs() < 1e-9 * want, "{plain:?} {want}");
        let note = walks_note(&gemm, 1, &device(), size, large).expect("a note");
        assert!(
            note.contains("the calibration has no walks a page apart"),
            "{note}"
        );
        // A window size whose stride is a whole page is charged the aliased curve too.
        let both = walk_seconds(&gemm, 1, &facts, 1024, 1024);
        assert_eq!(both[0].1, 0.0, "{both:?}");
    }

    #[test]
    fn a_spec_without_walks_adds_nothing_and_says_nothing() {
        let plain = GEMM.replace(
            "walks = { A = { stride = \"N\", steps = \"N\" }, B = { stride = \"N\", steps = \"N\" } }\n",
            "",
        );
        let (_dir, gemm) = super::super::spec_in_temp(&plain, KERNEL);
        assert!(walk_seconds(&gemm, 1, &device(), 512, 2048).is_empty());
        assert!(walks_note(&gemm, 1, &device(), 512, 2048).is_none());
    }
}
