//! A case's target: past the largest cache, and grown until its small sizes fill the device
//! and, on a GPU, lie past the largest cache too.

use crate::calibration::Calibration;
use crate::experiments::validate::{array_size_off_powers_of_two, grid_size_off_powers_of_two};
use crate::workloads::Workload;

/// The largest cache the calibration knows, bytes: the last measured level below memory or
/// the largest cache the system reports, whichever is larger.
pub fn largest_cache_bytes(calibration: &Calibration) -> u64 {
    let measured = calibration
        .read_latency
        .levels
        .iter()
        .filter(|l| l.level != "memory")
        .map(|l| l.working_set_bytes[1] as u64)
        .max()
        .unwrap_or(0);
    let reported = calibration
        .reported_caches
        .iter()
        .map(|c| c.bytes)
        .max()
        .unwrap_or(0);
    measured.max(reported)
}

/// The smallest size whose working set is at least `floor_bytes`: on grids rounded up to a
/// size that is 4 more than a multiple of 8 ([`grid_size_off_powers_of_two`]), on 1-D arrays
/// an odd multiple of 16 ([`array_size_off_powers_of_two`]).
pub fn target_size(workload: &dyn Workload, floor_bytes: u64) -> usize {
    smallest_size_where(workload, u64::MAX, |n| {
        workload.bytes_needed(n) >= floor_bytes
    })
    .map_or(usize::MAX, |n| round_target(workload, n))
}

/// The smallest size from 16 up for which `ok` holds (`ok` must stay true above it), found by
/// doubling and bisection; `None` where the working set passes `cap_bytes` first.
fn smallest_size_where(
    workload: &dyn Workload,
    cap_bytes: u64,
    ok: impl Fn(usize) -> bool,
) -> Option<usize> {
    let (mut lo, mut hi) = (16usize, 32usize);
    while !ok(hi) {
        lo = hi;
        hi = hi.checked_mul(2)?;
        if workload.bytes_needed(hi) > cap_bytes {
            return None;
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// A target at or just above `hi`: on grids a size 4 more than a multiple of 8, on 1-D arrays
/// an odd multiple of 16 (both keep a kernel's strides off large powers of two).
fn round_target(workload: &dyn Workload, hi: usize) -> usize {
    let grows = workload.bytes_needed(2 * hi) as f64 / workload.bytes_needed(hi).max(1) as f64;
    if grows < 2.5 {
        return array_size_off_powers_of_two(hi);
    }
    let size = hi.div_ceil(4) * 4;
    grid_size_off_powers_of_two(size)
}

/// `target`, or a larger one whose smallest small size (target / 8) launches at least
/// `executors` work items, where its working set stays within `cap_bytes`. On a GPU a
/// target just past the L2 leaves its small sizes far short of the device's executors (on the
/// H100, 270,336, against 205,209 cells of jacobi2d's smallest grid, 453²), and the window
/// rules then refuse every one of them; a CPU's few executors are filled at any size.
pub fn saturating_target(
    workload: &dyn Workload,
    executors: f64,
    cap_bytes: u64,
    target: usize,
) -> usize {
    let saturated = smallest_small_size_fills(workload, executors);
    grown_target(workload, cap_bytes, target, &saturated, &saturated)
}

/// Whether a target's smallest small size (target / 8) launches at least `executors` work
/// items (a workload that does not count them is taken as filling the device).
fn smallest_small_size_fills(
    workload: &dyn Workload,
    executors: f64,
) -> impl Fn(usize) -> bool + '_ {
    move |n: usize| {
        workload
            .parallelism(n / 8)
            .is_none_or(|items| items as f64 >= executors)
    }
}

/// `target` where `wanted` holds for it; else the smallest rounded target above it for which
/// `wanted` holds and `also` too, within `cap_bytes`; else `target`.
fn grown_target(
    workload: &dyn Workload,
    cap_bytes: u64,
    target: usize,
    wanted: &dyn Fn(usize) -> bool,
    also: &dyn Fn(usize) -> bool,
) -> usize {
    if wanted(target) {
        return target;
    }
    smallest_size_where(workload, cap_bytes, wanted)
        .map(|n| round_target(workload, n.max(target)))
        .filter(|&n| workload.bytes_needed(n) <= cap_bytes && wanted(n) && also(n))
        .unwrap_or(target)
}

/// `target`, or a larger one whose smallest small size (target / 8) already has a working set
/// of `floor_bytes` (past the largest cache, so the whole window runs in device memory, as the
/// target does) and launches at least `executors` work items, where its working set stays
/// within `cap_bytes`. On a GPU a window in the L2 is launch-bound and a level away from its
/// target (on the H100 in 2026-11-26, vadd's window at 25–50 MB took the sweep's L2 rates
/// and came out 41 % high; jacobi2d's was refused as overhead-dominated), while device memory
/// holds such a target many times over. 3-D grids, whose small sizes hold 1/512 of the
/// target's cells, and launches that no affordable size fills, keep `target`.
pub fn target_with_window_in_memory(
    workload: &dyn Workload,
    executors: f64,
    floor_bytes: u64,
    cap_bytes: u64,
    target: usize,
) -> usize {
    let in_memory = |n: usize| workload.bytes_needed(n / 8) >= floor_bytes;
    let saturated = smallest_small_size_fills(workload, executors);
    grown_target(workload, cap_bytes, target, &in_memory, &saturated)
}
