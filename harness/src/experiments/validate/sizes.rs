//! Choosing the small sizes: what the window rules need to know about each size of a series,
//! the smallest size that saturates the device in the target's memory level, grid sides kept
//! off large powers of two, and the sizes `--small auto` picks for a target.

use crate::experiments::series::Series;
use crate::fit::forecast::is_kernel_phase;
use crate::fit::jumps::Jump;
use crate::fit::window::{DeviceFacts, SizeFacts};
use crate::workloads::{Workload, WorkloadError};

/// What the window rules need to know about each point of `series`.
pub fn size_facts(workload: &dyn Workload, series: &Series) -> Vec<SizeFacts> {
    series
        .points
        .iter()
        .map(|p| SizeFacts {
            size: p.size,
            parallelism: workload.parallelism(p.size),
            working_set_bytes: workload.bytes_needed(p.size),
            launches: p
                .phases
                .iter()
                .filter(|ph| is_kernel_phase(&ph.name))
                .map(|ph| ph.count)
                .sum(),
            seconds: p.total.median_seconds,
            anomaly: series
                .flagged
                .iter()
                .find(|j| j.size == p.size)
                .map(Jump::reason),
        })
        .collect()
}

/// The smallest size, doubling from `from` up to `target`, that saturates the device and
/// lives in the target's memory level; `None` if none below the target does.
pub fn smallest_good_size(
    workload: &dyn Workload,
    device: &DeviceFacts,
    from: usize,
    target: usize,
) -> Option<usize> {
    let level = device.level_of(workload.bytes_needed(target));
    let mut size = from.max(1);
    while size < target {
        let saturated = workload
            .parallelism(size)
            .is_none_or(|items| items as f64 >= device.executors);
        if saturated && device.level_of(workload.bytes_needed(size)) == level {
            return Some(size);
        }
        size *= 2;
    }
    None
}

/// `size` if it is not a multiple of 8, else `size + 4`: given a multiple of 4, a grid side
/// of 4 more than a multiple of 8, so that its rows (4·N bytes) are 16-byte aligned while its
/// rows and planes (4·N² bytes) are not strides of a large power of two. Strides of a large power of two map
/// a line's or a plane's elements onto a few cache sets, which then evict each other
/// (cache-set conflicts): line-solve's i-solve, whose elements are N² apart, took 6.8 ns per
/// cell at N = 208 = 16·13 on the host and 2.9 ns at 204 and 212 (3.5 and 1.3 ns on PoCL; AMD
/// EPYC, 48 KiB 12-way L1). No fit over other sizes predicts such a size.
pub fn grid_size_off_powers_of_two(size: usize) -> usize {
    if size.is_multiple_of(8) {
        size + 4
    } else {
        size
    }
}

/// The smallest grid side whose window sizes take the targets' alignment
/// ([`grid_size_like_targets`]); below it, a row holds under 512 bytes of 8-byte elements and
/// sizes 8 apart differ by an eighth or more, so that rounding would merge a window's sizes.
pub const ALIGNED_FROM: usize = 64;

/// The grid side nearest `size` that is 4 more than a multiple of 8, as a grid target is
/// ([`grid_size_off_powers_of_two`]), at most `hi` where one is. A grid target just past a
/// power-of-two cache is 2^k + 4, and the top of its window, target / 4, is then
/// 2^(k−2) + 1: rows 8 bytes (one complex element) off a multiple of 4 KiB, so a column
/// walk's rows fall into few cache sets and a transpose's loads and stores meet at the same
/// address bits below 4 KiB (4K aliasing). FT's transpose on PoCL (2-core EPYC VM, 48 KiB
/// 12-way L1, two runs each): 47–49 ps per byte at N = 513, 20–26 at 497, 505, 508, 516,
/// 521 and 524. A side of 4 more than a multiple of 8 keeps rows at least 16 bytes (4-byte
/// elements) or 32 bytes (8-byte) off every power of two, as the target's rows are: the
/// window and the target then share one alignment.
pub fn grid_size_like_targets(size: usize, hi: usize) -> usize {
    nearest_of_residue(size, hi, 8, 4)
}

/// The size ≡ `residue` (mod `step`) nearest `size`, at most `hi` where one is (a tie goes up;
/// none below `residue`).
fn nearest_of_residue(size: usize, hi: usize, step: usize, residue: usize) -> usize {
    let base = size - size % step;
    [
        base.saturating_sub(step - residue),
        base + residue,
        base + step + residue,
    ]
    .into_iter()
    .filter(|&s| s >= residue && s <= hi.max(residue))
    .min_by_key(|&s| (s.abs_diff(size), std::cmp::Reverse(s)))
    .unwrap_or(size)
}

/// The smallest 1-D size whose window sizes take the targets' alignment
/// ([`array_size_like_targets`]); below it an array is a few pages, too short for its
/// alignment to matter, and sizes 32 apart would merge a window's sizes.
pub const ARRAY_ALIGNED_FROM: usize = 1024;

/// An odd multiple of 16: a 1-D size whose arrays, when a kernel lays several of them side by
/// side or walks one with a stride of N (a feature-major or column-major layout, K vectors of
/// N), start 64·(2m + 1) bytes apart for 4-byte elements (128·(2m + 1) for 8-byte): an odd
/// number of cache lines, so that their streams spread over every cache set instead of falling
/// into a few. A power of two N puts every such stream into the same sets of each level, and
/// once there are more streams than ways they evict each other: kmeans' assignment, whose
/// 34 features lie N floats apart, cost 2.5× its neighbours per flop at N = 2^16 and 2^17 on
/// PoCL (2-core EPYC VM, 48 KiB 12-way L1; docs/models.md, "What the model does not know").
/// Whole multiples of 16 keep rows of 4-byte elements 64-byte aligned and divisible by
/// work-groups of up to 16.
pub fn array_size_off_powers_of_two(size: usize) -> usize {
    let up = size.div_ceil(16) * 16;
    if (up / 16).is_multiple_of(2) {
        up + 16
    } else {
        up
    }
}

/// The odd multiple of 16 nearest `size` ([`array_size_off_powers_of_two`]), at most `hi`
/// where one is: a 1-D window takes its target's alignment, as a grid's does.
pub fn array_size_like_targets(size: usize, hi: usize) -> usize {
    nearest_of_residue(size, hi, 32, 16)
}

/// Small sizes chosen from the calibration for a prediction of `target` at 4–8× (`count`
/// sizes spread geometrically from target/8 to target/4): each one saturates the device
/// (at least n work items per launch) and, on 2-D and 3-D grids, is 4 more than a multiple
/// of 8 from [`ALIGNED_FROM`] up ([`grid_size_like_targets`]) and below it neither a power of
/// two nor a multiple of 16 (cache-set conflicts: [`grid_size_off_powers_of_two`]); on 1-D
/// arrays, an odd multiple of 16 from [`ARRAY_ALIGNED_FROM`] up
/// ([`array_size_like_targets`]). The sizes whose working set lives in another memory level
/// than the target's are reported, since at 4–8× the target's level cannot always be
/// reached, and so is a grid target that is a multiple of 16 or a 1-D one that is a
/// multiple of 1024. Returns the sizes and notes for the user.
pub fn auto_small_sizes(
    workload: &dyn Workload,
    device: &DeviceFacts,
    target: usize,
    count: usize,
) -> Result<(Vec<usize>, Vec<String>), WorkloadError> {
    let (hi, lo) = (target / 4, target / 8);
    if lo < 2 || count < 3 {
        return Err(WorkloadError::Invalid(format!(
            "--small auto needs a large size of at least 16 and 3 sizes, got {target}"
        )));
    }
    // A grid's bytes grow 4× (2-D) or 8× (3-D) per doubling; a 1-D array's 2×.
    let growth = workload.bytes_needed(hi) as f64 / workload.bytes_needed(hi / 2).max(1) as f64;
    let grid = growth > 2.5;
    let step = (hi as f64 / lo as f64).powf(1.0 / (count - 1) as f64);
    let mut sizes: Vec<usize> = (0..count)
        .map(|k| (lo as f64 * step.powi(k as i32)).round() as usize)
        .map(|s| {
            if grid && s >= ALIGNED_FROM {
                return grid_size_like_targets(s, hi);
            }
            if !grid && s >= ARRAY_ALIGNED_FROM {
                return array_size_like_targets(s, hi);
            }
            if !grid || !(s.is_power_of_two() || s.is_multiple_of(16)) {
                return s;
            }
            // Off the power of two by a little (a multiple of 16 up by 4, 16 itself by 1),
            // down where up would pass target/4.
            let shift = (s / 16).clamp(1, 4);
            if s + shift > hi && s > shift {
                s - shift
            } else {
                s + shift
            }
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut notes = Vec::new();
    if grid && target.is_multiple_of(16) {
        notes.push(format!(
            "N = {target} is a multiple of 16: its rows and planes are strides of a large power of two bytes, which can meet cache-set conflicts that no fit over smaller sizes predicts (a side 4 more than a multiple of 8, such as {}, avoids them)",
            grid_size_off_powers_of_two(target)
        ));
    }
    if !grid && target >= ARRAY_ALIGNED_FROM && target.is_multiple_of(1024) {
        notes.push(format!(
            "N = {target} is a multiple of 1024: where N is also a stride (arrays of N side by side, a feature-major or column-major layout), their streams fall into the same cache sets, which no fit over smaller sizes predicts (an odd multiple of 16, such as {}, avoids them)",
            array_size_off_powers_of_two(target)
        ));
    }
    let unsaturated: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|&s| {
            workload
                .parallelism(s)
                .is_some_and(|items| (items as f64) < device.executors)
        })
        .collect();
    if !unsaturated.is_empty() {
        notes.push(format!(
            "N = {unsaturated:?} launch fewer than n = {:.0} work items: the device is not saturated there",
            device.executors
        ));
    }
    // The levels as the pointer chase sees them: the earliest edge any sweep shows is where
    // the target's level begins for the fit to cross (the rate's edge may lie at the target
    // itself, past twice the last cache, where no affordable size reaches).
    let level = device.latency_level_of(workload.bytes_needed(target));
    let elsewhere: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|&s| device.latency_level_of(workload.bytes_needed(s)) != level)
        .collect();
    if !elsewhere.is_empty() {
        notes.push(format!(
            "N = {elsewhere:?} live in another memory level than the target's ({level}): the paper's fit crosses a level there"
        ));
    }
    if elsewhere.len() == sizes.len() {
        if let Some(note) = size_in_targets_level(workload, device, hi, target, grid, &mut sizes) {
            notes.push(note);
        }
    }
    Ok((sizes, notes))
}

/// The largest share of the target's bytes that the size added in the target's memory level
/// may hold: a quarter, so that its runs cost at most about a quarter of the target's each.
pub const TARGET_LEVEL_SHARE: f64 = 0.25;

/// Where no size from `hi` down lives in the target's memory level (the pointer chase's,
/// [`DeviceFacts::latency_level_of`]): the smallest size above
/// `hi` whose working set does (off powers of two on a `grid`), added to `sizes` if it holds
/// at most [`TARGET_LEVEL_SHARE`] of the target's bytes, so that the fit crosses the level
/// edge the target lies past instead of guessing it (docs/models.md §2.4, "The window"). The
/// share of bytes stands for the share of run time: a kernel whose work grows faster than
/// its data (a matrix product) costs less still. Returns the note that says what was done.
fn size_in_targets_level(
    workload: &dyn Workload,
    device: &DeviceFacts,
    hi: usize,
    target: usize,
    grid: bool,
    sizes: &mut Vec<usize>,
) -> Option<String> {
    let bytes = |n: usize| workload.bytes_needed(n);
    let level = device.latency_level_of(bytes(target));
    let inside = |n: usize| device.latency_level_of(bytes(n)) == level;
    // The working set grows with N and the levels with the working set: bisect for the
    // smallest N in the target's level, (lo, up] holding it.
    let (mut lo, mut up) = (hi, target);
    while up - lo > 1 {
        let mid = lo + (up - lo) / 2;
        if inside(mid) {
            up = mid;
        } else {
            lo = mid;
        }
    }
    // On a grid, the first side from `up` on in the window's alignment (4 more than a
    // multiple of 8; below [`ALIGNED_FROM`], off powers of two).
    let size = match (grid, up >= ALIGNED_FROM) {
        (true, true) => up + (12 - up % 8) % 8,
        (true, false) => grid_size_off_powers_of_two(up),
        (false, _) => up,
    };
    if size >= target || !inside(size) {
        return None;
    }
    let share = bytes(size) as f64 / bytes(target).max(1) as f64;
    if share <= TARGET_LEVEL_SHARE {
        sizes.push(size);
        Some(format!(
            "N = {size} added: the smallest size whose working set lives in the target's level ({level}), {:.0} % of the target's bytes, so that the fit crosses the level's edge",
            100.0 * share
        ))
    } else {
        Some(format!(
            "no size added in the target's level ({level}): the smallest there, N = {size}, holds {:.0} % of the target's bytes (more than {:.0} %); the prediction crosses the level's edge on the calibration's rates alone",
            100.0 * share,
            100.0 * TARGET_LEVEL_SHARE
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::stream::{Stream, StreamKind};

    #[test]
    fn the_smallest_good_size_saturates_and_leaves_the_cache() {
        let device = DeviceFacts {
            executors: 1000.0,
            launch_seconds: crate::units::Seconds(1e-6),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            ..DeviceFacts::default()
        };
        let vadd = Stream(StreamKind::Vadd);
        // 12 bytes per element: past 1 MiB from N = 87 382; doubling from 1024 gives 131 072.
        assert_eq!(
            smallest_good_size(&vadd, &device, 1024, 1 << 24),
            Some(131_072)
        );
        // A target inside L2 needs only saturation.
        assert_eq!(smallest_good_size(&vadd, &device, 512, 1 << 16), Some(1024));
        assert_eq!(smallest_good_size(&vadd, &device, 512, 600), None);
    }

    #[test]
    fn auto_sizes_span_4_to_8_times_below_the_target_and_avoid_powers_of_two_on_grids() {
        let device = DeviceFacts {
            executors: 2.0,
            launch_seconds: crate::units::Seconds(1e-6),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            ..DeviceFacts::default()
        };
        let vadd = Stream(StreamKind::Vadd);
        // A 1-D window takes odd multiples of 16, the nearest to target/8 and target/4 (a
        // tie goes up; the top stays at or below target/4).
        let (sizes, notes) = auto_small_sizes(&vadd, &device, 1 << 24, 5).expect("sizes");
        assert_eq!(sizes.first(), Some(&((1 << 21) + 16)));
        assert_eq!(sizes.last(), Some(&((1 << 22) - 16)));
        assert_eq!(sizes.len(), 5);
        assert!(sizes.iter().all(|s| s % 32 == 16), "{sizes:?}");
        assert!(
            notes.len() == 1 && notes[0].contains("multiple of 1024"),
            "{notes:?}"
        );
        let (_, notes) = auto_small_sizes(&vadd, &device, (1 << 24) + 16, 5).expect("sizes");
        assert!(notes.is_empty(), "{notes:?}");
        let jacobi = crate::workloads::registry::lookup("jacobi2d", None).expect("jacobi2d");
        let (sizes, notes) = auto_small_sizes(jacobi.as_ref(), &device, 4096, 5).expect("sizes");
        assert!(sizes.iter().all(|s| s % 8 == 4), "{sizes:?}");
        // 512 and 1024 move off the power of two, the largest down so as to stay at 4×.
        assert_eq!(sizes.first(), Some(&516));
        assert_eq!(sizes.last(), Some(&1020));
        assert!(
            notes
                .iter()
                .any(|n| n.contains("multiple of 16") && n.contains("4100")),
            "{notes:?}"
        );
        let (_, notes) = auto_small_sizes(jacobi.as_ref(), &device, 4092, 5).expect("sizes");
        assert!(
            notes.iter().all(|n| !n.contains("multiple of 16")),
            "{notes:?}"
        );
        assert!(auto_small_sizes(&vadd, &device, 8, 5).is_err());
    }

    #[test]
    fn arrays_take_odd_multiples_of_16() {
        assert_eq!(array_size_off_powers_of_two(1 << 19), (1 << 19) + 16);
        assert_eq!(array_size_off_powers_of_two(1000), 1008);
        assert_eq!(array_size_off_powers_of_two(1008), 1008);
        assert_eq!(array_size_off_powers_of_two(1009), 1040);
        for n in [1024, 5000, 65_536, 100_003, 1 << 22] {
            let s = array_size_off_powers_of_two(n);
            assert!(s >= n && s % 32 == 16 && s - n <= 48, "{n}: {s}");
        }
        assert_eq!(array_size_like_targets(1 << 17, 1 << 17), (1 << 17) - 16);
        assert_eq!(array_size_like_targets(1 << 16, 1 << 17), (1 << 16) + 16);
        assert_eq!(array_size_like_targets(77_936, 1 << 17), 77_936);
        assert_eq!(array_size_like_targets(92_682, 1 << 17), 92_688);
    }

    #[test]
    fn window_sides_take_the_targets_alignment() {
        // FT's transpose at N = 2052: the window's top, 513, moves down to 508 (516 would pass
        // target / 4); 509 too; 513 below a higher bound goes up to 516.
        assert_eq!(grid_size_like_targets(513, 513), 508);
        assert_eq!(grid_size_like_targets(509, 600), 508);
        assert_eq!(grid_size_like_targets(513, 600), 516);
        assert_eq!(grid_size_like_targets(725, 725), 724);
        assert_eq!(grid_size_like_targets(1025, 1025), 1020);
        assert_eq!(grid_size_like_targets(1024, 2000), 1028, "a tie goes up");
        assert_eq!(grid_size_like_targets(516, 516), 516);
        // ft-transpose's suite target on a 32 MiB L3, its window 4–8× below.
        let device = DeviceFacts {
            executors: 2.0,
            ..DeviceFacts::default()
        };
        let jacobi = crate::workloads::registry::lookup("jacobi2d", None).expect("jacobi2d");
        let (sizes, _) = auto_small_sizes(jacobi.as_ref(), &device, 2052, 5).expect("sizes");
        assert_eq!(sizes.len(), 5, "{sizes:?}");
        assert!(sizes.iter().all(|s| s % 8 == 4), "{sizes:?}");
        assert_eq!(sizes.last(), Some(&508));
        // Small grids keep their sizes where rounding to 8 would merge them.
        let (sizes, _) = auto_small_sizes(jacobi.as_ref(), &device, 180, 5).expect("sizes");
        assert_eq!(sizes.len(), 5, "{sizes:?}");
        assert!(sizes.iter().all(|s| s % 16 != 0), "{sizes:?}");
    }

    #[test]
    fn a_window_out_of_the_targets_level_gains_its_cheapest_size_there() {
        let mut device = DeviceFacts {
            executors: 2.0,
            launch_seconds: crate::units::Seconds(1e-6),
            levels: vec![("L2".into(), 1 << 26), ("memory".into(), u64::MAX)],
            ..DeviceFacts::default()
        };
        // jacobi2d at N = 16 380 (8·N² bytes, about 2 GiB): past a 64 MiB L2 its auto window
        // (N/8 … N/4) holds 32–128 MiB, partly in memory already; past a 256 MiB L2 none of
        // it is, and the smallest grid past the L2 (N ≈ 5800, 12.5 % of the bytes) joins it.
        let jacobi = crate::workloads::registry::lookup("jacobi2d", None).expect("jacobi2d");
        let target = 16_380;
        let (sizes, notes) = auto_small_sizes(jacobi.as_ref(), &device, target, 5).expect("sizes");
        assert_eq!(sizes.len(), 5, "some of the window is in memory: {sizes:?}");
        device.levels[0].1 = 1 << 28;
        let (sizes, notes2) = auto_small_sizes(jacobi.as_ref(), &device, target, 5).expect("sizes");
        assert_eq!(sizes.len(), 6, "{sizes:?} {notes2:?}");
        let added = *sizes.last().unwrap();
        assert!(added > target / 4 && added % 8 == 4, "{added}");
        assert_eq!(device.level_of(jacobi.bytes_needed(added)), "memory");
        assert!(device.level_of(jacobi.bytes_needed(added - 8)) != "memory");
        assert!(notes2
            .iter()
            .any(|n| n.contains(&format!("N = {added} added"))));
        assert!(notes.iter().all(|n| !n.contains("added")), "{notes:?}");
        // A target just past the edge: the smallest size there holds half of its bytes.
        let near = 8_004;
        let (sizes, notes) = auto_small_sizes(jacobi.as_ref(), &device, near, 5).expect("sizes");
        assert_eq!(sizes.len(), 5);
        assert!(
            notes.iter().any(|n| n.starts_with("no size added")),
            "{notes:?}"
        );
    }
}
