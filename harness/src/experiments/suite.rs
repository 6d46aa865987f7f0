//! The whole fractal-prediction validation in one run (docs/models.md §2.5): every built-in
//! workload (and any spec given) predicted at 4–8× its small sizes, with the small sizes and
//! the target chosen from the device's calibration, and one table of every variant's error.
//!
//! The target of each case is the smallest size whose working set is at least
//! [`MEMORY_MARGIN`] × the largest cache the calibration knows (measured or reported by the
//! system), so every prediction crosses into device memory; the small sizes are
//! [`auto_small_sizes`] at 4–8× below it.

use serde::{Deserialize, Serialize};

use super::series::RepeatPlan;
use super::validate::{
    auto_small_sizes, grid_size_off_powers_of_two, summary, validate, ErrorSummary, Validation,
};
use crate::backend::{Device, DeviceClass, DeviceInfo};
use crate::calibration::Calibration;
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::drift::drift_allowance;
use crate::fit::forecast::Variant;
use crate::fit::window::DeviceFacts;
use crate::workloads::{Workload, WorkloadError};

/// How many times the largest cache a target's working set is, at least.
pub const MEMORY_MARGIN: u64 = 2;

/// Small sizes per case.
pub const SMALL_SIZES: usize = 5;

/// The least time a run of the smallest small size should take, seconds: a run of a
/// fraction of a millisecond is mostly scheduling noise on a shared machine.
pub const MIN_SMALL_RUN_SECONDS: f64 = 0.02;

/// The most a run of the target should be expected to take, seconds (the suite's budget).
pub const MAX_TARGET_RUN_SECONDS: f64 = 2.0;

/// One case to run: a workload, its target and its small sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteCase {
    /// The workload's name (or spec path).
    pub workload: String,
    /// Its layout, where it has two.
    pub layout: Option<String>,
    /// The size predicted and measured.
    pub target: usize,
    /// The small sizes the fits use.
    pub small: Vec<usize>,
    /// Iterations per run ([`choose_iterations`]).
    pub iterations: usize,
    /// What the size choice noticed (levels crossed, unsaturated sizes).
    pub notes: Vec<String>,
}

impl SuiteCase {
    /// `workload[-layout]`.
    pub fn name(&self) -> String {
        match &self.layout {
            Some(l) => format!("{}-{l}", self.workload),
            None => self.workload.clone(),
        }
    }
}

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
/// the next power of two.
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
/// the next power of two.
fn round_target(workload: &dyn Workload, hi: usize) -> usize {
    let grows = workload.bytes_needed(2 * hi) as f64 / workload.bytes_needed(hi).max(1) as f64;
    if grows < 2.5 {
        return hi.next_power_of_two();
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

/// The case for `workload`: its target above the largest cache (and, on a device with many
/// executors, large enough that its small sizes fill it; on a GPU, where device memory
/// affords it, large enough that its small sizes are past the largest cache too), its small
/// sizes below.
pub fn plan_case(
    name: &str,
    layout: Option<String>,
    workload: &dyn Workload,
    calibration: &Calibration,
    facts: &DeviceFacts,
) -> Result<SuiteCase, WorkloadError> {
    let floor = largest_cache_bytes(calibration).max(1 << 20) * MEMORY_MARGIN;
    let cap = calibration.device.memory_bytes / 4;
    let mut target =
        saturating_target(workload, facts.executors, cap, target_size(workload, floor));
    let mut before = None;
    if calibration.device.class == DeviceClass::Gpu {
        let wider = target_with_window_in_memory(workload, facts.executors, floor, cap, target);
        if wider != target {
            before = Some(target);
            target = wider;
        }
    }
    let (small, mut notes) = auto_small_sizes(workload, facts, target, SMALL_SIZES)?;
    if let (Some(before), Some(&first)) = (before, small.first()) {
        notes.push(format!(
            "N = {target} rather than {before}: its smallest small size, N = {first}, already works on {} MiB, past {MEMORY_MARGIN} × the largest cache ({} MiB), so the whole window runs in device memory, as the target does",
            workload.bytes_needed(first) >> 20,
            (floor / MEMORY_MARGIN) >> 20
        ));
    }
    Ok(SuiteCase {
        workload: name.to_string(),
        layout,
        target,
        small,
        iterations: 0,
        notes,
    })
}

/// Iterations per run for `case`: at least `least`; more where the smallest small size would
/// run under [`MIN_SMALL_RUN_SECONDS`] or its kernels take less time than its transfers, as
/// long as the target's run, estimated from one probe run of the smallest size as
/// proportional to the working set, stays under [`MAX_TARGET_RUN_SECONDS`]
/// ([`plan_iterations`]). Returns the count and a note where the budget limited it.
pub fn choose_iterations(
    case: &SuiteCase,
    workload: &dyn Workload,
    device: &dyn Device,
    least: usize,
) -> Result<(usize, Option<String>), WorkloadError> {
    let least = least.max(1);
    let smallest = *case
        .small
        .first()
        .ok_or_else(|| WorkloadError::Invalid("a case needs small sizes".into()))?;
    let probe = workload.run(device, smallest, least, false)?;
    let growth =
        workload.bytes_needed(case.target) as f64 / workload.bytes_needed(smallest).max(1) as f64;
    let Some(plan) = plan_iterations(probe.total_seconds, probe.kernel_seconds, least, growth)
    else {
        return Ok((least, None));
    };
    let note = (plan.needed > plan.iterations).then(|| {
        format!(
            "{} iterations: N = {smallest} runs {:.1} ms, its kernels {:.1} ms of it, under the {:.0} ms and the kernels' share aimed for, because the target's runs would pass {MAX_TARGET_RUN_SECONDS} s",
            plan.iterations,
            plan.small_run_seconds * 1e3,
            plan.small_kernel_seconds * 1e3,
            MIN_SMALL_RUN_SECONDS * 1e3
        )
    });
    Ok((plan.iterations, note))
}

/// What [`plan_iterations`] chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationPlan {
    /// Iterations per run.
    pub iterations: usize,
    /// What the smallest size needed: its run at least [`MIN_SMALL_RUN_SECONDS`] and its
    /// kernels at least as long as the rest of its run (transfers, host steps).
    pub needed: usize,
    /// The smallest size's run at `iterations`, seconds (estimated).
    pub small_run_seconds: f64,
    /// Its kernels' share of that run, seconds.
    pub small_kernel_seconds: f64,
}

/// Iterations per run from a probe of the smallest size: `total` seconds over `least`
/// iterations, `kernel` of them in kernels (the rest, transfers and host steps, is paid once
/// per run), the target's working set `growth` times the smallest's. A run of k iterations
/// takes `rest + k·kernel/least`, the target's `growth` times that. At least `least`; more
/// until the smallest size's run reaches [`MIN_SMALL_RUN_SECONDS`] (counted, as before
/// 2026-11-26, as k·total/least) and its kernels take as long as its transfers; never so
/// many that the target's run passes [`MAX_TARGET_RUN_SECONDS`]. The second rule matters on a
/// GPU, where a window in device memory uploads hundreds of megabytes for microseconds of
/// kernel per iteration, and a total made of transfers would test the transfer estimate, not
/// the kernels'. `None` for a probe without a positive time.
pub fn plan_iterations(
    total: f64,
    kernel: f64,
    least: usize,
    growth: f64,
) -> Option<IterationPlan> {
    let least = least.max(1);
    let l = least as f64;
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let per_iteration = total / l;
    let kernel = if kernel.is_finite() {
        kernel.clamp(0.0, total)
    } else {
        0.0
    };
    let rest = total - kernel;
    let kernel_per_iteration = kernel / l;
    let by_time = (MIN_SMALL_RUN_SECONDS / per_iteration).ceil() as usize;
    let (by_share, allowed) = if kernel_per_iteration > 0.0 {
        (
            // (Less a hair, so that an exact ratio is not pushed up by its rounding.)
            (rest / kernel_per_iteration - 1e-9).ceil() as usize,
            ((MAX_TARGET_RUN_SECONDS / growth - rest) / kernel_per_iteration).floor() as usize,
        )
    } else {
        (
            0,
            (MAX_TARGET_RUN_SECONDS / (per_iteration * growth)).floor() as usize,
        )
    };
    let needed = by_time.max(by_share);
    let iterations = needed.min(allowed).max(least);
    let k = iterations as f64;
    Some(IterationPlan {
        iterations,
        needed,
        small_run_seconds: rest + k * kernel_per_iteration,
        small_kernel_seconds: k * kernel_per_iteration,
    })
}

/// Run one case: its small series, then its target, `case.iterations` per run.
pub fn run_case(
    case: &SuiteCase,
    workload: &dyn Workload,
    device: &dyn Device,
    facts: &DeviceFacts,
    plan: RepeatPlan,
    progress: impl FnMut(&str),
) -> Result<Validation, WorkloadError> {
    validate(
        workload,
        case.layout.clone(),
        device,
        Some(facts),
        &case.small,
        &[case.target],
        case.iterations.max(1),
        plan,
        progress,
    )
}

/// One variant's prediction of one case's total.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CasePrediction {
    /// The recipe.
    pub variant: Variant,
    /// Predicted seconds.
    pub predicted_seconds: f64,
    /// 95 % prediction interval.
    pub interval: Option<[f64; 2]>,
    /// |predicted − measured| / measured × 100.
    pub abs_percent_error: f64,
    /// Whether the interval holds the measured median.
    pub interval_holds: Option<bool>,
}

/// One case's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    /// `workload[-layout]`.
    pub case: String,
    /// The size predicted.
    pub size: usize,
    /// The small sizes fitted.
    pub small: Vec<usize>,
    /// Iterations per run.
    pub iterations: usize,
    /// Measured median total, seconds.
    pub measured_seconds: f64,
    /// How far the machine's speed wandered from round to round of the small series, in per
    /// cent (one standard deviation of the rounds' common factor,
    /// [`crate::fit::drift::round_drift`]); the calibrated interval allows 1.96× it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_percent: Option<f64>,
    /// One per variant that made a prediction, in [`Variant::ALL`]'s order.
    pub predictions: Vec<CasePrediction>,
    /// Why a variant made none, and what the choice of sizes noticed.
    pub notes: Vec<String>,
}

/// One variant over the whole suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantSummary {
    /// The recipe.
    pub variant: Variant,
    /// Cases it predicted, of all cases.
    pub predicted: usize,
    /// Cases in the suite.
    pub cases: usize,
    /// Errors over the cases it predicted, percent.
    pub error: ErrorSummary,
    /// Share of its intervals that hold the measured value (NaN, `null` in JSON, where it
    /// predicted no case).
    #[serde(deserialize_with = "super::validate::nan_where_null")]
    pub interval_holds: f64,
    /// Share of its intervals no wider than 2× (high ÷ low).
    #[serde(deserialize_with = "super::validate::nan_where_null")]
    pub interval_within_2x: f64,
}

/// The suite's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    /// The device.
    pub device: DeviceInfo,
    /// Every case.
    pub cases: Vec<CaseResult>,
    /// Per variant.
    pub summary: Vec<VariantSummary>,
}

impl Suite {
    /// The suite's table from each case's validation (the `total` rows).
    pub fn from_validations(device: DeviceInfo, validations: &[(SuiteCase, Validation)]) -> Self {
        let cases: Vec<CaseResult> = validations
            .iter()
            .map(|(case, v)| {
                let measured = v.large.first().map_or(f64::NAN, |p| p.total.median_seconds);
                let predictions = Variant::ALL
                    .iter()
                    .filter_map(|&variant| {
                        let r = v
                            .rows
                            .iter()
                            .find(|r| r.variant == variant && r.phase == "total")?;
                        Some(CasePrediction {
                            variant,
                            predicted_seconds: r.predicted_seconds,
                            interval: r.interval,
                            abs_percent_error: r.abs_percent_error,
                            interval_holds: r.interval.map(|[lo, hi]| {
                                lo <= r.measured_seconds && r.measured_seconds <= hi
                            }),
                        })
                    })
                    .collect();
                let drift = v.series.drift();
                let mut notes = case.notes.clone();
                if !v.large_interleaved {
                    notes.push(
                        "the target ran after the whole small series, not inside its rounds: a machine that changed speed between the two shifts every prediction".into(),
                    );
                }
                if let Some(d) = drift {
                    let shared = v
                        .large
                        .first()
                        .and_then(|t| v.series.shared_rounds(t, v.large_interleaved));
                    notes.push(format!(
                        "the machine drifted ±{:.1} % (1 sd) from round to round of the small sizes; the calibrated interval allows ±{:.1} % for it{}",
                        100.0 * d,
                        196.0 * drift_allowance(d, shared),
                        if shared.is_some() {
                            " (the target ran in the same rounds: the medians' share of the drift)"
                        } else {
                            ""
                        }
                    ));
                }
                for (label, windows) in [
                    (Variant::Windowed, &v.windows),
                    (Variant::Calibrated, &v.calibrated_windows),
                ] {
                    notes.extend(
                        windows
                            .iter()
                            .filter_map(|w| w.note.as_ref())
                            .map(|n| format!("{label}: {n}")),
                    );
                }
                CaseResult {
                    case: case.name(),
                    size: case.target,
                    small: v.series.points.iter().map(|p| p.size).collect(),
                    iterations: v.series.iterations,
                    measured_seconds: measured,
                    drift_percent: drift.map(|d| 100.0 * d),
                    predictions,
                    notes,
                }
            })
            .collect();
        let summary = Variant::ALL
            .iter()
            .map(|&variant| {
                let made: Vec<&CasePrediction> = cases
                    .iter()
                    .flat_map(|c| c.predictions.iter().filter(|p| p.variant == variant))
                    .collect();
                let errors: Vec<f64> = made.iter().map(|p| p.abs_percent_error).collect();
                let intervals: Vec<[f64; 2]> = made.iter().filter_map(|p| p.interval).collect();
                let share = |count: usize| {
                    if intervals.is_empty() {
                        f64::NAN
                    } else {
                        count as f64 / intervals.len() as f64
                    }
                };
                VariantSummary {
                    variant,
                    predicted: made.len(),
                    cases: cases.len(),
                    error: summary(&errors),
                    interval_holds: share(
                        made.iter()
                            .filter(|p| p.interval_holds == Some(true))
                            .count(),
                    ),
                    interval_within_2x: share(
                        intervals.iter().filter(|[lo, hi]| *hi <= 2.0 * *lo).count(),
                    ),
                }
            })
            .collect();
        Suite {
            device,
            cases,
            summary,
        }
    }

    /// The per-variant summary as a table: predicted cases, median and max error, interval
    /// coverage.
    pub fn summary_table(&self) -> Table {
        let mut t = Table::new([
            "variant",
            "predicted",
            "median_err_pct",
            "max_err_pct",
            "interval_holds_pct",
            "interval_within_2x_pct",
        ]);
        for s in &self.summary {
            t.row([
                s.variant.to_string(),
                format!("{}/{}", s.predicted, s.cases),
                pct(s.error.median),
                pct(s.error.max),
                pct(100.0 * s.interval_holds),
                pct(100.0 * s.interval_within_2x),
            ]);
        }
        t
    }

    /// One row per case: measured, and each variant's prediction with its error.
    pub fn wide_table(&self) -> Table {
        let mut header = vec![
            "case".to_string(),
            "N".into(),
            "iters".into(),
            "measured_s".into(),
        ];
        for v in Variant::ALL {
            header.push(format!("{v}_s"));
            header.push(format!("{v}_err_pct"));
        }
        let mut t = Table::new(header);
        for c in &self.cases {
            let mut row = vec![
                c.case.clone(),
                c.size.to_string(),
                c.iterations.to_string(),
                crate::export::table::sig(c.measured_seconds, 4),
            ];
            for v in Variant::ALL {
                match c.predictions.iter().find(|p| p.variant == v) {
                    Some(p) => {
                        let holds = if p.interval_holds == Some(true) {
                            ""
                        } else {
                            "*"
                        };
                        row.push(crate::export::table::sig(p.predicted_seconds, 4));
                        row.push(format!("{}{holds}", pct(p.abs_percent_error)));
                    }
                    None => {
                        row.push("-".into());
                        row.push("-".into());
                    }
                }
            }
            t.row(row);
        }
        t
    }
}

fn pct(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.1}")
    } else {
        "-".into()
    }
}

impl Exportable for Suite {
    fn kind(&self) -> &'static str {
        "validation suite"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per case and variant.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "case",
            "size",
            "measured_s",
            "variant",
            "predicted_s",
            "pi_low_s",
            "pi_high_s",
            "abs_percent_error",
            "interval_holds",
        ]);
        for c in &self.cases {
            for p in &c.predictions {
                let (lo, hi) = p.interval.map_or((String::new(), String::new()), |i| {
                    (i[0].to_string(), i[1].to_string())
                });
                t.row([
                    c.case.clone(),
                    c.size.to_string(),
                    c.measured_seconds.to_string(),
                    p.variant.to_string(),
                    p.predicted_seconds.to_string(),
                    lo,
                    hi,
                    p.abs_percent_error.to_string(),
                    p.interval_holds.map_or(String::new(), |h| h.to_string()),
                ]);
            }
        }
        t
    }

    /// The wide table, then the summary.
    fn to_markdown(&self) -> String {
        format!(
            "{}\n`*`: the 95 % prediction interval misses the measured value.\n\n{}",
            crate::export::markdown::table_to_markdown(&self.wide_table()),
            crate::export::markdown::table_to_markdown(&self.summary_table())
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::registry::lookup;

    #[test]
    fn targets_leave_the_largest_cache_and_avoid_powers_of_two_on_grids() {
        let floor = 64 << 20;
        let vadd = lookup("vadd", None).expect("vadd");
        let n = target_size(vadd.as_ref(), floor);
        assert!(n.is_power_of_two() && vadd.bytes_needed(n) >= floor);
        assert!(vadd.bytes_needed(n / 2) < floor);
        for name in ["jacobi2d", "adi", "lu-ssor"] {
            let w = lookup(name, None).expect("workload");
            let n = target_size(w.as_ref(), floor);
            assert!(w.bytes_needed(n) >= floor, "{name}: {n}");
            assert!(n % 8 == 4, "{name}: {n}");
            // Not far above the floor.
            assert!(w.bytes_needed(n) < floor + floor / 3, "{name}: {n}");
        }
    }

    #[test]
    fn on_a_gpu_the_target_grows_until_its_small_sizes_fill_the_device() {
        let h100 = 270_336.0;
        let memory = 80u64 << 30;
        let jacobi = lookup("jacobi2d", None).expect("jacobi2d");
        // Just past twice a 50 MiB L2: 3628, whose smallest small size (453) has 205,209 cells.
        let past_l2 = target_size(jacobi.as_ref(), 100 << 20);
        assert_eq!(past_l2, 3628);
        let n = saturating_target(jacobi.as_ref(), h100, memory / 4, past_l2);
        let smallest = jacobi.parallelism(n / 8).expect("jacobi2d knows its cells") as f64;
        assert!(smallest >= h100, "{n}: {smallest}");
        assert!(n % 8 == 4 && n > past_l2, "{n}");
        // Not far above what saturation needs: 10 % more than the smallest such target.
        let just = jacobi.parallelism((n - 8) / 8).expect("cells") as f64;
        assert!(just < h100 * 1.1, "{n}: {just}");
        // Two CPU executors are filled already; a cap too small keeps the target.
        assert_eq!(
            saturating_target(jacobi.as_ref(), 2.0, memory / 4, past_l2),
            past_l2
        );
        assert_eq!(
            saturating_target(jacobi.as_ref(), h100, 1 << 20, past_l2),
            past_l2
        );
        // A 3-D grid whose launches hold one line per cell of a plane cannot be filled within
        // the cap by growing N: its target stays.
        let adi = lookup("adi", None).expect("adi");
        let t = target_size(adi.as_ref(), 100 << 20);
        let grown = saturating_target(adi.as_ref(), h100, memory / 4, t);
        assert!(adi.bytes_needed(grown) <= memory / 4);
        assert!(
            grown == t || adi.parallelism(grown / 8).is_some_and(|i| i as f64 >= h100),
            "{t} -> {grown}"
        );
    }

    #[test]
    fn iterations_reach_the_run_time_and_the_kernels_share_within_the_targets_budget() {
        // A CPU's vadd at its smallest size: 1.8 ms over 10 iterations, 0.9 ms of kernels.
        // 20 ms needs 112 iterations by the run time (10 by the kernels' share).
        let cpu = plan_iterations(1.8e-3, 0.9e-3, 10, 8.0).expect("a plan");
        assert_eq!((cpu.iterations, cpu.needed), (112, 112));
        // A GPU's vadd with its window in device memory: 16 ms of transfers, 64 µs of kernel
        // per iteration; the share needs 250 iterations, and the target (8× the bytes) still
        // runs 8 × (16 ms + 250 × 64 µs) = 0.26 s.
        let gpu = plan_iterations(16e-3 + 10.0 * 64e-6, 10.0 * 64e-6, 10, 8.0).expect("a plan");
        assert_eq!((gpu.iterations, gpu.needed), (250, 250));
        assert!((gpu.small_kernel_seconds - 0.016).abs() < 1e-9);
        // The target's budget caps it: at 64× the bytes, 2 s allows
        // (2/64 − 16 ms) / 64 µs = 238 iterations.
        let capped = plan_iterations(16e-3 + 10.0 * 64e-6, 10.0 * 64e-6, 10, 64.0).expect("plan");
        assert_eq!((capped.iterations, capped.needed), (238, 250));
        // Never under `least`, and no plan from a probe that took no time.
        assert_eq!(
            plan_iterations(10.0, 9.0, 10, 1.0)
                .expect("plan")
                .iterations,
            10
        );
        assert_eq!(plan_iterations(0.0, 0.0, 10, 1.0), None);
    }

    #[test]
    fn on_a_gpu_the_window_moves_past_the_l2_where_device_memory_affords_it() {
        // The H100 of 2026-11-26: 50 MiB of L2, 80 GB, n = 32,826 from the knee.
        let (n, memory, floor) = (32_826.0, 80u64 << 30, 100u64 << 20);
        for (name, before) in [("vadd", 1usize << 24), ("jacobi2d", 3628), ("sor-rb", 5124)] {
            let w = lookup(name, None).expect("workload");
            let t = target_with_window_in_memory(w.as_ref(), n, floor, memory / 4, before);
            // The smallest small size is past twice the L2 and fills the device; the target
            // fits a quarter of the memory and is no larger than it must be.
            assert!(w.bytes_needed(t / 8) >= floor, "{name}: {t}");
            assert!(w.parallelism(t / 8).is_none_or(|i| i as f64 >= n), "{name}");
            assert!(w.bytes_needed(t) <= memory / 4, "{name}: {t}");
            let step = if name == "vadd" { t / 2 } else { t - 8 };
            assert!(
                w.bytes_needed(step / 8) < floor,
                "{name}: {t} is not the smallest"
            );
        }
        // vadd: 2^27 (2^24 floats × 3 arrays, 192 MiB, at target / 8).
        let vadd = lookup("vadd", None).expect("vadd");
        assert_eq!(
            target_with_window_in_memory(vadd.as_ref(), n, floor, memory / 4, 1 << 24),
            1 << 27
        );
        // A 3-D grid's window would need 512 × the floor: its target stays; so does a
        // target whose window is in memory already, and any under a cap too small.
        let adi = lookup("adi", None).expect("adi");
        assert_eq!(
            target_with_window_in_memory(adi.as_ref(), n, floor, memory / 4, 236),
            236
        );
        assert_eq!(
            target_with_window_in_memory(vadd.as_ref(), n, floor, memory / 4, 1 << 28),
            1 << 28
        );
        assert_eq!(
            target_with_window_in_memory(vadd.as_ref(), n, floor, 1 << 30, 1 << 24),
            1 << 24
        );
        // SOR's diagonals hold at most N cells: a window in memory (N ≥ 40,000) leaves its
        // small sizes unsaturated, so the target does not grow for nothing.
        let sor = lookup("sor", Some(crate::workloads::Layout::Reordered)).expect("sor");
        assert_eq!(
            target_with_window_in_memory(sor.as_ref(), n, floor, memory / 4, 3628),
            3628
        );
    }
}
