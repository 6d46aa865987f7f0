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
use crate::backend::{Device, DeviceInfo};
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
    let saturated = |n: usize| {
        workload
            .parallelism(n / 8)
            .is_none_or(|items| items as f64 >= executors)
    };
    if saturated(target) {
        return target;
    }
    smallest_size_where(workload, cap_bytes, saturated)
        .map(|n| round_target(workload, n.max(target)))
        .filter(|&n| workload.bytes_needed(n) <= cap_bytes && saturated(n))
        .unwrap_or(target)
}

/// The case for `workload`: its target above the largest cache (and, on a device with many
/// executors, large enough that its small sizes fill it), its small sizes below.
pub fn plan_case(
    name: &str,
    layout: Option<String>,
    workload: &dyn Workload,
    calibration: &Calibration,
    facts: &DeviceFacts,
) -> Result<SuiteCase, WorkloadError> {
    let floor = largest_cache_bytes(calibration).max(1 << 20) * MEMORY_MARGIN;
    let target = saturating_target(
        workload,
        facts.executors,
        calibration.device.memory_bytes / 4,
        target_size(workload, floor),
    );
    let (small, notes) = auto_small_sizes(workload, facts, target, SMALL_SIZES)?;
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
/// run under [`MIN_SMALL_RUN_SECONDS`], as long as the target's run, estimated from one probe
/// run of the smallest size as proportional to the working set, stays under
/// [`MAX_TARGET_RUN_SECONDS`]. Returns the count and a note where the budget limited it.
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
    let per_iteration = probe.total_seconds / least as f64;
    if per_iteration.is_nan() || per_iteration <= 0.0 {
        return Ok((least, None));
    }
    let needed = (MIN_SMALL_RUN_SECONDS / per_iteration).ceil() as usize;
    let growth =
        workload.bytes_needed(case.target) as f64 / workload.bytes_needed(smallest).max(1) as f64;
    let allowed = (MAX_TARGET_RUN_SECONDS / (per_iteration * growth)).floor() as usize;
    let iterations = needed.min(allowed).max(least);
    let note = (needed > iterations).then(|| {
        format!(
            "{iterations} iterations: N = {smallest} runs {:.1} ms, under the {:.0} ms aimed for, because the target's runs would pass {MAX_TARGET_RUN_SECONDS} s",
            per_iteration * iterations as f64 * 1e3,
            MIN_SMALL_RUN_SECONDS * 1e3
        )
    });
    Ok((iterations, note))
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
    /// Share of its intervals that hold the measured value.
    pub interval_holds: f64,
    /// Share of its intervals no wider than 2× (high ÷ low).
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
}
