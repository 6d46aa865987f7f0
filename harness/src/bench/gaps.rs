//! Serialization intervals Δt and ΔT (docs/models.md §1, "serialized memory"), and the number of
//! simultaneous executors n from the knee of the same curve.
//!
//! n executors each make exactly one read (one write) of their own element, for coalesced,
//! strided and random placement. The max-plus model says the last executor's read completes
//! at t + (n−1)Δt, so once the device is saturated the kernel time grows linearly in n with
//! slope Δt. We fit `time = a + n·Δt` by least squares over the largest n where the line
//! holds (R² ≥ 0.99, every point within 15 % of the line, and each added point moving the
//! slope by no more than its CI or 5 %) and report that range. Below
//! saturation the time is flat; the knee where the fitted line meets that plateau is the
//! measured number of simultaneous executors.

use serde::{Deserialize, Serialize};

use super::kernels::Pattern;
use super::{verify, BenchContext, BenchError};
use crate::backend::{download_u32, Arg, Buffer, DeviceClass, Launch};
use crate::fit::linear::{fit_line, LinearFit};

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// One global read per executor (Δt).
    Read,
    /// One global write per executor (ΔT).
    Write,
}

/// One point of an executor sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Executors launched.
    pub executors: u64,
    /// Median kernel time, ns.
    pub time_ns: f64,
    /// Its 95 % CI, ns.
    pub ci95_ns: [f64; 2],
}

/// The fitted interval of one pattern and direction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapFit {
    /// Access pattern.
    pub pattern: Pattern,
    /// Read (Δt) or write (ΔT).
    pub direction: Direction,
    /// The fitted slope: time between successive executors' accesses, ns.
    pub gap_ns: f64,
    /// 95 % CI of the slope, ns.
    pub ci95_ns: [f64; 2],
    /// The fitted intercept, ns.
    pub intercept_ns: f64,
    /// R² of the fit.
    pub r_squared: f64,
    /// Executors `[smallest, largest]` used by the fit.
    pub fit_range: [u64; 2],
    /// Useful bytes per ns implied by the slope (4 bytes per executor), GB/s; `None` when
    /// the slope is not positive.
    pub bandwidth_gbps: Option<f64>,
    /// Flat time at the smallest executor counts, ns (median of the first three points).
    pub plateau_ns: f64,
    /// Where the fitted line meets the plateau: executors that run without delaying
    /// each other; `None` when the line never meets it.
    pub knee_executors: Option<f64>,
    /// The knee at the slope's CI bounds.
    pub knee_ci95: Option<[f64; 2]>,
    /// Every point of the sweep, fitted or not.
    pub sweep: Vec<SweepPoint>,
}

/// Executor counts of the sweep: powers of two up to a limit (on a CPU
/// high enough to leave the last-level cache) that keeps the buffers within the device's
/// allocation limit, with 1.5× steps in between from 1024
/// on, so the saturated range (often only the top few sizes, past the caches) has enough
/// points for an interval.
pub fn executor_counts(ctx: &BenchContext<'_>, pattern: Pattern) -> Vec<u32> {
    let info = ctx.device.info();
    // The same with --quick, which takes fewer samples of the same sweep.
    let top: u32 = match info.class {
        DeviceClass::Gpu => 1 << 27,
        DeviceClass::Cpu => 1 << 24,
    };
    // Buffers stay within half the largest allocation and 1 GiB; on a CPU, where the host
    // also holds a copy, within 4× the largest cache the device reports, at least 256 MiB
    // (the strided pattern needs 128 bytes per executor). A fixed 256 MiB ended the strided
    // sweep inside the 260 MiB last-level cache of an Intel Xeon VM, where its line rate was
    // still falling (30 GB/s at 100 MB, 17 at 268 MB): the rate at every larger working set
    // was taken from that last point, too fast for memory.
    let cap: u64 = match info.class {
        DeviceClass::Gpu => 1 << 30,
        DeviceClass::Cpu => info
            .l2_bytes
            .map_or(256 << 20, |cache| cache.saturating_mul(4))
            .clamp(256 << 20, 1 << 30),
    };
    let budget = (info.max_alloc_bytes / 2).min(cap).max(1 << 20);
    let fits = |n: u32| (pattern.extent(n).0 as u64) * 4 <= budget;
    let mut counts = Vec::new();
    let mut n = 1u32;
    while n <= top && fits(n) {
        counts.push(n);
        let between = n + n / 2;
        if n >= 1024 && between < top && fits(between) {
            counts.push(between);
        }
        n = n.saturating_mul(2);
    }
    counts
}

/// Sweep and fit one pattern and direction.
pub fn measure_gap(
    ctx: &mut BenchContext<'_>,
    pattern: Pattern,
    direction: Direction,
) -> Result<GapFit, BenchError> {
    let counts = executor_counts(ctx, pattern);
    let largest = *counts.last().unwrap_or(&1);
    let elements = pattern.extent(largest).0;
    let data = ctx.device.alloc(elements * 4)?;
    // Reads leave the data as they found it, so a[k] = k is uploaded once; a write point
    // resets only the elements its executors touch (uploading the largest point's buffer
    // at every point took two minutes of an H100's calibration).
    let fill: Vec<u32> = match direction {
        Direction::Read => (0..elements as u32).collect(),
        Direction::Write => vec![u32::MAX; elements],
    };
    if direction == Direction::Read {
        ctx.device.upload(&data, bytemuck::cast_slice(&fill))?;
    }
    let errors = ctx.device.alloc(4)?;
    ctx.device.upload(&errors, &0u32.to_ne_bytes())?;
    let mut sweep = Vec::with_capacity(counts.len());
    for &n in &counts {
        let (_, mask) = pattern.extent(n);
        let launch = Launch::linear(n as usize, ctx.group());
        let name = format!("{direction:?}_{pattern:?}_s/{n}").to_lowercase();
        let run = |ctx: &BenchContext<'_>| -> Result<f64, BenchError> {
            let t = match direction {
                Direction::Read => ctx.launch(
                    "read_one",
                    &launch,
                    &[
                        Arg::Buf(&data),
                        Arg::U32(n),
                        Arg::U32(pattern.code()),
                        Arg::U32(mask),
                        Arg::Buf(&errors),
                    ],
                )?,
                Direction::Write => ctx.launch(
                    "write_one",
                    &launch,
                    &[
                        Arg::Buf(&data),
                        Arg::U32(n),
                        Arg::U32(pattern.code()),
                        Arg::U32(mask),
                    ],
                )?,
            };
            Ok(t.0)
        };
        if direction == Direction::Write {
            ctx.device
                .upload(&data, bytemuck::cast_slice(&fill[..pattern.extent(n).0]))?;
        }
        let m = ctx.measure(&name, || run(ctx))?;
        ctx.record(&name, &m);
        check(ctx, &data, &errors, pattern, direction, n)?;
        sweep.push(SweepPoint {
            executors: u64::from(n),
            time_ns: m.summary.median * 1e9,
            ci95_ns: [m.summary.ci95[0] * 1e9, m.summary.ci95[1] * 1e9],
        });
    }
    fit_gap(pattern, direction, sweep)
}

fn check(
    ctx: &BenchContext<'_>,
    data: &Buffer,
    errors: &Buffer,
    pattern: Pattern,
    direction: Direction,
    n: u32,
) -> Result<(), BenchError> {
    match direction {
        Direction::Read => {
            let wrong = download_u32(ctx.device, errors, 1)?[0];
            verify(wrong == 0, "read gap", || {
                format!("{wrong} executors read a wrong value ({pattern:?}, n = {n})")
            })
        }
        Direction::Write => {
            let (elements, mask) = pattern.extent(n);
            let got = download_u32(ctx.device, data, elements)?;
            let bad = (0..n)
                .map(|i| pattern.index(i, mask))
                .find(|&k| got[k as usize] != k);
            verify(bad.is_none(), "write gap", || {
                format!("element {bad:?} was not written ({pattern:?}, n = {n})")
            })
        }
    }
}

/// How far below the plateau the fitted line's intercept must lie for the knee to count, as a
/// share of the plateau. Where the intercept is closer, the sweep is a fixed cost plus Δt per
/// executor from the first executor on, and the line meets the plateau wherever noise puts
/// it: on an H100 the intercept sat within 2 % of the plateau, and the "knee" jumped between
/// none, 17,000 and 59,000 executors from one calibration to the next (the paper's models,
/// which divide by n, jumped 8× with it). Then no knee is reported and n is the device's.
pub const KNEE_MIN_DROP: f64 = 0.1;

/// Fit `time = a + n·gap` over the largest n where a line holds, and find the knee (where
/// the line's intercept lies at least [`KNEE_MIN_DROP`] below the plateau).
pub fn fit_gap(
    pattern: Pattern,
    direction: Direction,
    sweep: Vec<SweepPoint>,
) -> Result<GapFit, BenchError> {
    let (fit, first) = fit_tail(&sweep).map_err(|source| BenchError::Fit {
        what: format!("{direction:?} gap, {pattern:?}"),
        source,
    })?;
    let mut head: Vec<f64> = sweep.iter().take(3).map(|p| p.time_ns).collect();
    head.sort_by(f64::total_cmp);
    let plateau_ns = crate::fit::stats::median_of_sorted(&head);
    // Where the line's intercept is within KNEE_MIN_DROP of the plateau, the line explains
    // the plateau itself and their intersection is noise.
    let separated = fit.intercept * 1e9 < (1.0 - KNEE_MIN_DROP) * plateau_ns;
    let knee_at = |slope_ns: f64| {
        let k = (plateau_ns - fit.intercept * 1e9) / slope_ns;
        (separated && slope_ns > 0.0 && k >= 1.0).then_some(k)
    };
    let slope_ns = fit.slope * 1e9;
    let knee = knee_at(slope_ns);
    let knee_ci = match (
        knee_at(fit.slope_ci95[1] * 1e9),
        knee_at(fit.slope_ci95[0] * 1e9),
    ) {
        (Some(lo), Some(hi)) => Some([lo, hi]),
        _ => None,
    };
    Ok(GapFit {
        pattern,
        direction,
        gap_ns: slope_ns,
        ci95_ns: [fit.slope_ci95[0] * 1e9, fit.slope_ci95[1] * 1e9],
        intercept_ns: fit.intercept * 1e9,
        r_squared: fit.r_squared,
        fit_range: [sweep[first].executors, sweep[sweep.len() - 1].executors],
        bandwidth_gbps: (slope_ns > 0.0).then(|| 4.0 / slope_ns),
        plateau_ns,
        knee_executors: knee,
        knee_ci95: knee_ci,
        sweep,
    })
}

/// The fit starts from the largest sizes with this many points (three more degrees of
/// freedom than a line needs, so one noisy point cannot flip the slope's sign).
pub const MIN_FIT_POINTS: usize = 5;

/// Minimum R² for extending the fit range downward.
pub const MIN_R_SQUARED: f64 = 0.99;
/// Largest relative distance of a fitted point from the line.
pub const MAX_RELATIVE_RESIDUAL: f64 = 0.15;

/// Largest change of the slope, relative, that one more point may cause (beyond the
/// current slope's CI) before the range stops growing.
pub const MAX_SLOPE_CHANGE: f64 = 0.05;

fn fit_tail(
    sweep: &[SweepPoint],
) -> Result<(LinearFit, usize), crate::fit::linear::LinearFitError> {
    let n = sweep.len();
    let x: Vec<f64> = sweep.iter().map(|p| p.executors as f64).collect();
    let y: Vec<f64> = sweep.iter().map(|p| p.time_ns * 1e-9).collect();
    let mut first = n.saturating_sub(MIN_FIT_POINTS);
    let mut best = fit_line(&x[first..], &y[first..])?;
    while first > 0 {
        let candidate = fit_line(&x[first - 1..], &y[first - 1..])?;
        let slope_tolerance = ((best.slope_ci95[1] - best.slope_ci95[0]) / 2.0)
            .max(MAX_SLOPE_CHANGE * best.slope.abs());
        let holds = candidate.r_squared >= MIN_R_SQUARED
            && (candidate.slope - best.slope).abs() <= slope_tolerance
            && (first - 1..n).all(|i| {
                let line = candidate.intercept + candidate.slope * x[i];
                (y[i] - line).abs() <= MAX_RELATIVE_RESIDUAL * y[i].abs()
            });
        if !holds {
            break;
        }
        best = candidate;
        first -= 1;
    }
    Ok((best, first))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(plateau: f64, slope: f64) -> Vec<SweepPoint> {
        (0..24)
            .map(|k| {
                let n = 1u64 << k;
                let t = plateau.max(1000.0 + slope * n as f64);
                SweepPoint {
                    executors: n,
                    time_ns: t,
                    ci95_ns: [t, t],
                }
            })
            .collect()
    }

    #[test]
    fn recovers_slope_range_and_knee() {
        // time = max(5000, 1000 + 0.01·n) ns: linear from n = 400 000 on; knee at 400 000.
        let fit = fit_gap(Pattern::Coalesced, Direction::Read, synthetic(5000.0, 0.01)).unwrap();
        assert!((fit.gap_ns - 0.01).abs() < 1e-9, "{}", fit.gap_ns);
        assert!(fit.fit_range[0] >= 1 << 18, "{:?}", fit.fit_range);
        let knee = fit.knee_executors.unwrap();
        assert!((knee - 400_000.0).abs() / 400_000.0 < 1e-6, "{knee}");
        assert!((fit.bandwidth_gbps.unwrap() - 400.0).abs() < 1e-6);
    }

    #[test]
    fn no_knee_where_the_line_explains_the_plateau() {
        // time = 5000 + 0.01·n ns from n = 1 on, with the first points 1 % above the line
        // (noise): the line meets that "plateau" near n = 5000, which is no knee.
        let sweep: Vec<SweepPoint> = (0..24)
            .map(|k| {
                let n = 1u64 << k;
                let t = 5000.0 + 0.01 * n as f64 + if k < 3 { 50.0 } else { 0.0 };
                SweepPoint {
                    executors: n,
                    time_ns: t,
                    ci95_ns: [t, t],
                }
            })
            .collect();
        let fit = fit_gap(Pattern::Coalesced, Direction::Read, sweep).unwrap();
        assert!((fit.gap_ns - 0.01).abs() < 1e-3, "{}", fit.gap_ns);
        assert_eq!(fit.knee_executors, None);
        assert_eq!(fit.knee_ci95, None);
    }
}
