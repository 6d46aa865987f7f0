//! A CPU's private caches at their own rate: the streaming kernels with k passes inside one
//! launch.
//!
//! On a CPU the streaming sweep ([`super::bandwidth`]) takes one launch of one pass per
//! sample, what a kernel of that size gets, launch cost included: at working sets of a few
//! KiB the launch is most of it (PoCL on a 2-core EPYC VM: 90 % of an L1 sample, 64 % of an
//! L2 one), so the sweep says how fast launches go there, not the cache. Here each core gets
//! one executor and its contiguous share of the arrays, walks it pass after pass inside the
//! launch (its share stays in its own caches, as the working set's would across the cores),
//! and a sample is the time of 2k passes minus that of k, which cancels the launch. k is
//! enough passes to move 8 MiB and to run 0.5 ms (`MIN_SECONDS`). The samples are the quick
//! plan's (±5 %, at most 20 a working set) in a full calibration too: these rows feed no
//! prediction, their working sets agree within a few per cent, and the full plan's took 3–4 s
//! of the calibration's minute on the 2-core EPYC VM.
//!
//! Only the private caches' working sets (every level below the last-level cache) are
//! measured so: from the last-level cache on a pass takes tens of microseconds and the launch
//! is a few per cent of a sample. The level rows of those caches take these rates; the
//! sweep's own curves, which predictions move a kernel by, are left as they are.

use super::bandwidth::{
    arrays_on, elements, measure_sets, pattern, row, run, upload_arrays, BandwidthCurve,
    BandwidthSweep, StreamKernel,
};
use super::{BenchContext, BenchError};

/// Passes of the probe's shorter launch: a pass over a few KiB takes tens of nanoseconds, far
/// below a launch's jitter, so the probe times many of them.
const PROBE_PASSES: u32 = 64;
/// How long k passes must run at least: a sample must outlast a worker thread's wake-up
/// (tens of microseconds) many times over, or the launching thread, done with its own part,
/// takes the sleeping worker's part too and the sample runs on one core.
const MIN_SECONDS: f64 = 0.5e-3;
/// The most passes per sample: 0.5 ms of passes over 16 KiB at up to 1 TB/s.
const MAX_PASSES: u32 = 1 << 15;

/// k for a working set of `bytes` from a probe of [`PROBE_PASSES`] (`short`) and twice as many
/// passes (`long`): enough passes to run [`MIN_SECONDS`] and to move 8 MiB.
fn passes_for(bytes: usize, short: f64, long: f64) -> u32 {
    let per_pass = if long > short {
        (long - short) / f64::from(PROBE_PASSES)
    } else {
        long / f64::from(2 * PROBE_PASSES)
    };
    let by_time = if per_pass > 0.0 && per_pass.is_finite() {
        (MIN_SECONDS / per_pass).ceil().min(f64::from(MAX_PASSES)) as u32
    } else {
        MAX_PASSES
    };
    let by_bytes = (8usize << 20)
        .div_ceil(bytes.max(1))
        .min(MAX_PASSES as usize) as u32;
    by_time.max(by_bytes).clamp(1, MAX_PASSES)
}

/// The working sets of `sweep`'s curves that lie in a private cache's level row: every row
/// before the last-level cache's (the rows end in device memory), empty where the rows do not
/// end in device memory or hold fewer than three levels.
pub fn private_cache_sizes(sweep: &BandwidthSweep) -> Vec<usize> {
    let rows = &sweep.levels;
    if rows.len() < 3 || rows.last().is_none_or(|r| r.level != "memory") {
        return Vec::new();
    }
    let private = &rows[..rows.len() - 2];
    let mut sizes: Vec<usize> = sweep
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.working_set_bytes))
        .filter(|&b| {
            private
                .iter()
                .any(|r| (r.working_set_bytes[0]..=r.working_set_bytes[1]).contains(&b))
        })
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// Measure every streaming kernel at each of `sizes` with k passes inside one launch, one
/// executor per core, in rounds over the working sets, and check each kernel's output.
pub fn measure_cache_passes(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<Vec<BandwidthCurve>, BenchError> {
    let plan = std::mem::replace(&mut ctx.plan, super::SamplingPlan::quick());
    let curves = measure_with_passes(ctx, sizes);
    ctx.plan = plan;
    curves
}

fn measure_with_passes(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<Vec<BandwidthCurve>, BenchError> {
    let cores = ctx.device.info().compute_units.max(1) as usize;
    let mut curves = Vec::new();
    let pattern = pattern(sizes.iter().max().map_or(0, |&bytes| bytes / 4));
    let mut scratch = Vec::new();
    for kernel in StreamKernel::ALL {
        let mut sets = Vec::new();
        let bufs = upload_arrays(ctx, kernel, sizes, &pattern)?;
        for &bytes in sizes {
            let n = elements(kernel, bytes);
            if n < cores {
                continue;
            }
            let a = arrays_on(ctx, &bufs, kernel, n, cores, 1)?;
            // The probe's first launch also warms the arrays and the kernel.
            run(ctx, kernel, &a, PROBE_PASSES)?;
            let one = run(ctx, kernel, &a, PROBE_PASSES)?;
            let two = run(ctx, kernel, &a, 2 * PROBE_PASSES)?;
            let k = passes_for(n * 4 * kernel.arrays(), one, two);
            sets.push((bytes, a, k));
        }
        curves.push(measure_sets(
            ctx,
            kernel,
            &sets,
            "cache_passes",
            true,
            &mut scratch,
        )?);
    }
    Ok(curves)
}

/// `sweep` with `cache_curves` kept and every level row they measured taken from them (the
/// medians over the row's working sets, marked `passes_in_launch`).
pub fn with_cache_rows(sweep: &mut BandwidthSweep, cache_curves: Vec<BandwidthCurve>) {
    for r in &mut sweep.levels {
        let range = r.working_set_bytes;
        let measured = cache_curves
            .iter()
            .flat_map(|c| &c.points)
            .any(|p| (range[0]..=range[1]).contains(&p.working_set_bytes));
        if measured {
            *r = row(&cache_curves, &r.level, range, range[0]);
            r.passes_in_launch = true;
        }
    }
    sweep.cache_curves = cache_curves;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::test_copy_level as level;
    use crate::calibration::test_stream_point as point;

    /// The 2-core EPYC VM's levels (L1 to 64 KiB, L2 to 2 MiB, L3 to 64 MiB) and its PoCL
    /// copy rates of one launch each.
    fn sweep() -> BandwidthSweep {
        let kib = |k: usize| k << 10;
        BandwidthSweep {
            executors: 1024,
            curves: vec![BandwidthCurve {
                kernel: StreamKernel::Copy,
                points: [
                    (16, 7.7),
                    (32, 12.5),
                    (64, 30.9),
                    (512, 105.0),
                    (4096, 144.0),
                ]
                .map(|(k, g)| point(kib(k), g))
                .to_vec(),
            }],
            levels: vec![
                level("L1", [0, kib(64) - 1], 10.1),
                level("L2", [kib(64), kib(2048) - 1], 78.6),
                level("L3", [kib(2048), kib(65536) - 1], 144.0),
                level("memory", [kib(65536), usize::MAX], 50.0),
            ],
            cache_curves: Vec::new(),
        }
    }

    #[test]
    fn passes_run_a_millisecond_and_move_8_mib() {
        // 64 passes over 16 KiB in 3.2 µs, 128 in 6.4 µs: 50 ns a pass, 10,000 for 0.5 ms.
        assert_eq!(passes_for(16 << 10, 3.2e-6 + 20e-6, 6.4e-6 + 20e-6), 10_000);
        // 1 MiB at 3 µs a pass: 167 passes run 0.5 ms; 8 MiB would need only 8.
        assert_eq!(passes_for(1 << 20, 192e-6, 384e-6), 167);
        // Noise that hides the difference: the longer probe's time per pass, an overstatement,
        // errs towards fewer passes; no time at all, the most.
        assert_eq!(passes_for(1 << 20, 4e-3, 2e-3), 32);
        assert_eq!(passes_for(16 << 10, 0.0, 0.0), MAX_PASSES);
    }

    #[test]
    fn the_private_caches_are_every_level_below_the_last_cache() {
        let s = sweep();
        assert_eq!(
            private_cache_sizes(&s),
            vec![16 << 10, 32 << 10, 64 << 10, 512 << 10]
        );
        // Two levels (one cache and memory): no private cache to tell from the shared one.
        let mut two = s.clone();
        two.levels.drain(..2);
        assert!(private_cache_sizes(&two).is_empty());
        // Rows that do not end in device memory say nothing of which cache is the last.
        let mut open = s;
        open.levels.pop();
        assert!(private_cache_sizes(&open).is_empty());
    }

    #[test]
    fn the_rows_the_passes_measured_take_their_rates_and_say_so() {
        let mut s = sweep();
        let passes = vec![BandwidthCurve {
            kernel: StreamKernel::Copy,
            points: vec![
                point(16 << 10, 300.0),
                point(32 << 10, 320.0),
                point(64 << 10, 200.0),
                point(512 << 10, 180.0),
            ],
        }];
        with_cache_rows(&mut s, passes.clone());
        assert_eq!(s.levels[0].copy_gbps, Some(310.0));
        assert_eq!(s.levels[1].copy_gbps, Some(190.0));
        assert!(s.levels[0].passes_in_launch && s.levels[1].passes_in_launch);
        // The shared cache and memory keep the sweep's rows; the curves stay one launch's.
        assert_eq!(s.levels[2].copy_gbps, Some(144.0));
        assert!(!s.levels[2].passes_in_launch && !s.levels[3].passes_in_launch);
        assert_eq!(s.curves[0].points[0].gbps, 7.7);
        assert_eq!(s.cache_curves, passes);
    }
}
