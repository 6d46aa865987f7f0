//! Small-scale run series: a workload at a few sizes, each repeated, summarised per phase
//! (median, 95 % CI, fraction) — the input of the fractal predictor (docs/models.md §2).
//! It is written as JSON and CSV (and, on request, Markdown and Extra-P text) through
//! [`crate::export`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::cold::{ColdCaches, Eviction};
use crate::backend::{Device, DeviceClass, DeviceInfo};
use crate::bench::transfer::{LaunchProbe, LaunchProber};
use crate::export::json;
use crate::fit::drift::SharedRounds;
use crate::fit::forecast::{ColdMedian, PhaseMedian, SeriesMedians, SizeMedians};
use crate::fit::jumps::{per_unit_jumps, Jump, JUMP_RATIO};
use crate::fit::stats::Summary;
use crate::workloads::{check_fits, PhaseTiming, RunResult, Workload, WorkloadError};

/// One phase at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasePoint {
    /// Phase name.
    pub name: String,
    /// Median time over the repeats, seconds.
    pub median_seconds: f64,
    /// 95 % CI of the median, seconds.
    pub ci95: [f64; 2],
    /// Median fraction of the run's total.
    pub fraction: f64,
    /// Launches (or transfers) per run.
    pub count: u64,
    /// The fastest repeat, seconds (beside the median: on a noisy machine the minimum is the
    /// run least disturbed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_seconds: Option<f64>,
    /// Every repeat's time, seconds.
    pub samples: Vec<f64>,
    /// Bytes the phase moves per run, where its kernels say (counting each element read or
    /// written once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Work items the phase's launches run per run (their global sizes summed), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<u64>,
    /// Floating-point operations the phase's launches run per run, where its kernels declare
    /// them (a spec's `flops`); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flops: Option<u64>,
    /// The most threads any of its launches ran on, where the device tells (the host); absent
    /// in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Its time in the cold runs, where the series made them ([`RepeatPlan::cold`]): the same run
    /// with the caches emptied whenever its launches had swept the working set once
    /// ([`crate::backend::cold`]), so its data came from device memory as at a size past
    /// the last cache; absent on a GPU and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<ColdTimes>,
}

/// A phase's time in a size's cold runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColdTimes {
    /// Median over the cold runs, seconds.
    pub median_seconds: f64,
    /// The median's interval, seconds, as [`Summary`] gives it: from six runs on a 95 % one;
    /// below, the runs' range `[min, max]`, which covers the median with 1 − 2^(1−n): 75 %
    /// for the default three (the model reads the median alone).
    pub ci95: [f64; 2],
    /// Every cold run's time, seconds.
    pub samples: Vec<f64>,
}

/// Cold runs per size of a series on a CPU device by default, one in each of the first
/// rounds after the size's own run ([`crate::backend::cold`]): three, a median that one
/// disturbed run does not move.
pub const COLD_RUNS: usize = 3;

/// The total of one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TotalPoint {
    /// Median total, seconds.
    pub median_seconds: f64,
    /// The median's confidence interval, seconds: 95 % from six samples on; below six it is
    /// `[min, max]`, which covers less ([`crate::fit::stats::median_ci_coverage`]).
    pub ci95: [f64; 2],
    /// The fastest repeat's total, seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_seconds: Option<f64>,
    /// Every repeat's total, seconds.
    pub samples: Vec<f64>,
}

/// One size of the series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Problem size N.
    pub size: usize,
    /// Phases in first-seen order.
    pub phases: Vec<PhasePoint>,
    /// The run's total.
    pub total: TotalPoint,
    /// The kernels' share of it: the sum of the kernel phases per run (the total without
    /// uploads, downloads and host steps), summarised like the total. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernels: Option<TotalPoint>,
}

/// Whether a series' results were checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CheckState {
    /// Every warm-up run was compared with a reference and passed.
    #[default]
    Verified,
    /// The workload has no check (a spec without `[check]`): nothing was verified.
    Unchecked,
    /// Only the smallest size's warm-up was checked, and passed (`--verify smallest`).
    SmallestOnly,
    /// The check was switched off (`--verify none`): nothing was verified.
    Off,
}

impl CheckState {
    /// Whether this is [`CheckState::Verified`] (the value files leave out).
    pub fn is_verified(&self) -> bool {
        *self == CheckState::Verified
    }

    /// A table cell's word for it.
    pub fn label(&self) -> &'static str {
        match self {
            CheckState::Verified => "verified",
            CheckState::Unchecked => "unchecked",
            CheckState::SmallestOnly => "smallest verified",
            CheckState::Off => "not verified",
        }
    }

    /// What it means, in one line.
    pub fn describe(&self) -> &'static str {
        match self {
            CheckState::Verified => "results verified (one checked warm-up run per size)",
            CheckState::Unchecked => {
                "results unchecked: the workload has no check (a spec without [check]), so nothing verified them"
            }
            CheckState::SmallestOnly => {
                "results verified at the smallest size only (--verify smallest)"
            }
            CheckState::Off => "results not verified (--verify none)",
        }
    }
}

/// A whole series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Workload name.
    pub workload: String,
    /// Layout, where the workload has two.
    pub layout: Option<String>,
    /// The device.
    pub device: DeviceInfo,
    /// Iterations per run.
    pub iterations: usize,
    /// Runs per size (the least; see `max_repeats`).
    pub repeats: usize,
    /// The most runs per size: sizes whose total's median interval was wider than
    /// ±`ci_target` got more rounds, up to this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeats: Option<usize>,
    /// The relative half-width of the total's 95 % interval the repeats aimed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci_target: Option<f64>,
    /// Whether every warm-up run was verified (against the host implementation, or a spec's
    /// formula or reference); false when the workload has no check or `--verify` skipped
    /// some (`check` says which).
    pub verified: bool,
    /// `unchecked` when the workload has no check; left out when verified.
    #[serde(default, skip_serializing_if = "CheckState::is_verified")]
    pub check: CheckState,
    /// For a spec workload, the spec itself (text and parameters), so that the series says
    /// each size's bytes and work without the spec file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<crate::workloads::spec::StoredSpec>,
    /// The sizes, ascending.
    pub points: Vec<SeriesPoint>,
    /// Sizes whose time per unit of work stands out from both neighbours' (cache-set
    /// conflicts and the like): kept in the series, left out of the windowed fit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flagged: Vec<Jump>,
    /// The back-to-back launch cost measured in the series' own rounds (one small sample per
    /// round, [`LaunchProber`]): the L the `calibrated` variant uses in place of the
    /// calibration's. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_probe: Option<LaunchProbe>,
    /// How PoCL's and rayon's worker threads were placed while it ran
    /// (`backend/pinning.rs`); absent in older files, when neither was pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_threads: Option<crate::backend::pinning::Pinning>,
    /// Who emptied the caches before the cold runs (`host`, `device` or `flush`,
    /// `backend/cold.rs`); absent where the series made none, and in files written before
    /// the field existed (2026-12-02), whose cold runs had the device's default eviction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold_eviction: Option<Eviction>,
}

impl Series {
    /// A note on the sizes with fewer than six runs, whose interval (`[min, max]`) covers the
    /// median with less than 95 % confidence; `None` when every size has six or more.
    pub fn thin_intervals(&self) -> Option<String> {
        let thin: Vec<String> = self
            .points
            .iter()
            .filter(|p| crate::fit::stats::median_ci_coverage(p.total.samples.len()) < 0.95)
            .map(|p| {
                let n = p.total.samples.len();
                format!(
                    "N = {} ({n} run{}: {:.1} %)",
                    p.size,
                    if n == 1 { "" } else { "s" },
                    100.0 * crate::fit::stats::median_ci_coverage(n)
                )
            })
            .collect();
        (!thin.is_empty()).then(|| {
            format!(
                "note: fewer than 6 runs at {}: the interval shown is [min, max], which covers the median with the confidence given, not 95 % (--repeat 6 or more gives a 95 % one)",
                thin.join(", ")
            )
        })
    }

    /// Whether its results were checked; a file older than the `check` field that says
    /// `verified: false` was unchecked.
    pub fn check_state(&self) -> CheckState {
        match self.check {
            CheckState::Verified if !self.verified => CheckState::Unchecked,
            state => state,
        }
    }

    /// Read a series file; errors name the field.
    pub fn load(path: &Path) -> Result<Self, WorkloadError> {
        read_json(path)
    }

    /// The same series with only its kernel phases, and the kernels' sum as its total: what
    /// `predict --quantity kernels` forecasts (the device time without uploads and
    /// downloads). A point without a stored kernels summary (an older file) takes the sum of
    /// its kernel phases' medians.
    pub fn kernels_only(&self) -> Series {
        let mut s = self.clone();
        for p in &mut s.points {
            p.phases
                .retain(|ph| crate::fit::forecast::is_kernel_phase(&ph.name));
            let total = match p.kernels.take() {
                Some(k) => k,
                None => {
                    let sum: f64 = p.phases.iter().map(|ph| ph.median_seconds).sum();
                    TotalPoint {
                        median_seconds: sum,
                        ci95: [sum, sum],
                        min_seconds: None,
                        samples: vec![sum],
                    }
                }
            };
            p.total = total;
        }
        s
    }

    /// The numbers a forecast needs: per size, each phase's median, its interval and
    /// launches, and the machine's drift over the rounds (from the totals' runs).
    pub fn medians(&self) -> SeriesMedians {
        SeriesMedians {
            drift: self.drift(),
            drift_shared: None,
            target_amounts: Vec::new(),
            cold: self
                .points
                .iter()
                .flat_map(|p| {
                    p.phases.iter().filter_map(|ph| {
                        Some(ColdMedian {
                            size: p.size,
                            phase: ph.name.clone(),
                            seconds: ph.cold.as_ref()?.median_seconds,
                        })
                    })
                })
                .collect(),
            workload: self.workload.clone(),
            points: self
                .points
                .iter()
                .map(|p| SizeMedians {
                    size: p.size,
                    phases: p
                        .phases
                        .iter()
                        .map(|ph| PhaseMedian {
                            name: ph.name.clone(),
                            median_seconds: ph.median_seconds,
                            count: ph.count,
                            bytes: ph.bytes,
                            items: ph.items,
                            flops: ph.flops,
                            ci95_seconds: Some(ph.ci95),
                        })
                        .collect(),
                    total_seconds: p.total.median_seconds,
                })
                .collect(),
        }
    }

    /// The rounds every size ran (the runs of the size with fewest), which [`Self::drift`]
    /// is taken over.
    pub fn common_rounds(&self) -> usize {
        self.points
            .iter()
            .map(|p| p.total.samples.len())
            .min()
            .unwrap_or(0)
    }

    /// The rounds a `target` run inside this series' rounds shared with it, for the drift
    /// allowance ([`crate::fit::drift::drift_allowance`]); `None` where it ran at another
    /// time (`interleaved` false).
    pub fn shared_rounds(&self, target: &SeriesPoint, interleaved: bool) -> Option<SharedRounds> {
        interleaved.then(|| SharedRounds {
            window: self.common_rounds(),
            target: target.total.samples.len(),
        })
    }

    /// A copy whose `upload` phases that recorded no bytes take those `workload` says each
    /// size uploads ([`Workload::upload_bytes`]: series stored before spec runs recorded
    /// them); `None` where nothing is missing or the workload cannot say.
    pub fn with_upload_bytes(&self, workload: &dyn Workload) -> Option<Series> {
        let missing = |p: &SeriesPoint| {
            p.phases
                .iter()
                .any(|ph| ph.name == "upload" && ph.bytes.is_none())
        };
        if !self.points.iter().any(missing) {
            return None;
        }
        let mut filled = self.clone();
        for p in filled.points.iter_mut().filter(|p| missing(p)) {
            let bytes = workload.upload_bytes(p.size)?;
            for ph in p.phases.iter_mut().filter(|ph| ph.name == "upload") {
                ph.bytes = Some(bytes);
            }
        }
        Some(filled)
    }

    /// How far the machine's speed wandered from round to round, from the totals' runs
    /// ([`crate::fit::drift::round_drift`]).
    pub fn drift(&self) -> Option<f64> {
        let rounds: Vec<&[f64]> = self
            .points
            .iter()
            .map(|p| p.total.samples.as_slice())
            .collect();
        let totals: Vec<f64> = self.points.iter().map(|p| p.total.median_seconds).collect();
        crate::fit::drift::round_drift(&rounds, &totals)
    }

    /// `<dir>/<device-slug>.series.<workload>[-<layout>]` (add `.json` / `.csv`).
    pub fn stem(&self, dir: &Path) -> PathBuf {
        use crate::export::file_name_part;
        let layout = self
            .layout
            .as_ref()
            .map_or(String::new(), |l| format!("-{}", file_name_part(l)));
        dir.join(format!(
            "{}.series.{}{layout}",
            self.device.slug(),
            file_name_part(&self.workload)
        ))
    }
}

/// Read a JSON file written by a command; an error names the file and the field.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, WorkloadError> {
    json::read_json(path).map_err(|e| WorkloadError::Invalid(e.to_string()))
}

fn summary(values: &[f64], what: &str) -> Result<Summary, WorkloadError> {
    Summary::new(values).map_err(|e| WorkloadError::Invalid(format!("{what}: {e}")))
}

/// Summarise the repeats of one size.
pub fn summarise(size: usize, runs: &[RunResult]) -> Result<SeriesPoint, WorkloadError> {
    summarise_with_cold(size, runs, &[])
}

/// [`summarise`], each phase with its times in `cold` runs where there are any.
fn summarise_with_cold(
    size: usize,
    runs: &[RunResult],
    cold: &[RunResult],
) -> Result<SeriesPoint, WorkloadError> {
    let first = runs
        .first()
        .ok_or_else(|| WorkloadError::Invalid("a series point needs at least one run".into()))?;
    let mut phases = Vec::new();
    for phase in &first.phases {
        let pick = |r: &RunResult, f: fn(&PhaseTiming) -> f64| {
            r.phases
                .iter()
                .find(|p| p.name == phase.name)
                .map_or(0.0, f)
        };
        let samples: Vec<f64> = runs.iter().map(|r| pick(r, |p| p.seconds)).collect();
        let fractions: Vec<f64> = runs.iter().map(|r| pick(r, |p| p.fraction)).collect();
        let s = summary(&samples, &phase.name)?;
        phases.push(PhasePoint {
            name: phase.name.clone(),
            median_seconds: s.median,
            ci95: s.ci95,
            fraction: summary(&fractions, &phase.name)?.median,
            count: phase.count,
            min_seconds: Some(s.min),
            samples,
            bytes: phase.bytes,
            items: phase.items,
            flops: phase.flops,
            threads: runs
                .iter()
                .filter_map(|r| r.phases.iter().find(|p| p.name == phase.name)?.threads)
                .max(),
            cold: cold_times(cold, &phase.name)?,
        });
    }
    let point = |samples: Vec<f64>, what: &str| -> Result<TotalPoint, WorkloadError> {
        let t = summary(&samples, what)?;
        Ok(TotalPoint {
            median_seconds: t.median,
            ci95: t.ci95,
            min_seconds: Some(t.min),
            samples,
        })
    };
    let kernels: Vec<f64> = runs
        .iter()
        .map(|r| crate::workloads::kernel_seconds(&r.phases))
        .collect();
    Ok(SeriesPoint {
        size,
        phases,
        total: point(runs.iter().map(|r| r.total_seconds).collect(), "total")?,
        kernels: kernels
            .iter()
            .all(|&k| k > 0.0)
            .then(|| point(kernels, "kernels"))
            .transpose()?,
    })
}

/// Phase `name`'s times in the `cold` runs; `None` without cold runs or where a run lacks it.
fn cold_times(cold: &[RunResult], name: &str) -> Result<Option<ColdTimes>, WorkloadError> {
    let samples: Option<Vec<f64>> = cold
        .iter()
        .map(|r| r.phases.iter().find(|p| p.name == name).map(|p| p.seconds))
        .collect();
    let Some(samples) = samples.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let s = summary(&samples, name)?;
    Ok(Some(ColdTimes {
        median_seconds: s.median,
        ci95: s.ci95,
        samples,
    }))
}

/// Which warm-up runs of a series have their output checked against the workload's reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Checks {
    /// Every size of the series, and the first size predicted (a validation's large size).
    #[default]
    All,
    /// The smallest size of the series only: for a kernel whose reference is too slow at
    /// the large sizes (a sequential reference of an O(N³) kernel, say). An indexing or
    /// boundary error shows at any size; one that only shows past 2³¹ elements does not.
    Smallest,
    /// No run: the series is marked as not verified.
    None,
}

/// How often each size of a series runs, and which runs are checked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RepeatPlan {
    /// Runs per size, at least.
    pub min: usize,
    /// Runs per size, at most.
    pub max: usize,
    /// After `min` runs, a size whose total's 95 % interval of the median is wider than
    /// ±`ci_target` × the median (relative half-width) runs again, round by round, until it
    /// is within the target or has `max` runs.
    pub ci_target: f64,
    /// Which warm-up runs are checked.
    pub checks: Checks,
    /// Cold runs per size, one in each of the first rounds (at most `min`); `None`: the
    /// device's default ([`RepeatPlan::cold_runs`]).
    pub cold: Option<usize>,
    /// Who empties the caches before a cold run; `None`: the device's own
    /// ([`Eviction::for_device`]: the host on a CPU, a kernel on a GPU; a flush of the
    /// launch's buffers on a CPU that reports a very large cache).
    pub eviction: Option<Eviction>,
}

impl RepeatPlan {
    /// Exactly `repeats` runs per size, every warm-up checked, no cold runs.
    pub fn fixed(repeats: usize) -> Self {
        RepeatPlan {
            min: repeats,
            max: repeats,
            ci_target: f64::INFINITY,
            checks: Checks::All,
            cold: Some(0),
            eviction: None,
        }
    }

    /// The cold runs per size on a device of `class`: the plan's count where it gives one,
    /// else [`COLD_RUNS`] on a CPU and none on a GPU. A GPU's cold runs (its L2 emptied by a
    /// kernel, `backend::cold`) are made where asked for; the `calibrated` variant has been
    /// judged with them on CPU devices only, so a GPU series keeps the rates' move unless
    /// they are asked for.
    pub fn cold_runs(&self, class: DeviceClass) -> usize {
        self.cold.unwrap_or(match class {
            DeviceClass::Cpu => COLD_RUNS,
            DeviceClass::Gpu => 0,
        })
    }
}

/// The relative half-width of the total's interval over `runs`: infinite under six runs,
/// where the interval is not a 95 % one ([`Summary::ci_coverage`]).
fn relative_half_width(runs: &[RunResult]) -> f64 {
    let totals: Vec<f64> = runs.iter().map(|r| r.total_seconds).collect();
    match Summary::new(&totals) {
        Ok(s) if s.median > 0.0 => s.relative_half_width(),
        _ => f64::INFINITY,
    }
}

/// Run `workload` at each size: one verified warm-up run per size, then rounds over all the
/// sizes in turn (a, b, c, a, b, c, …) so that drift on a shared machine hits every size
/// alike, `plan.min` rounds and then more for the sizes whose interval is still too wide.
/// Sizes whose time per unit of work (the workload's bytes) spikes against both neighbours
/// are flagged ([`crate::fit::jumps`]). `progress` is told each size once it is summarised.
pub fn run_series(
    workload: &dyn Workload,
    layout: Option<String>,
    device: &dyn Device,
    sizes: &[usize],
    iterations: usize,
    plan: RepeatPlan,
    progress: impl FnMut(&SeriesPoint),
) -> Result<Series, WorkloadError> {
    run_series_beside(
        workload,
        layout,
        device,
        sizes,
        &[],
        iterations,
        plan,
        progress,
    )
    .map(|(series, _)| series)
}

/// Iterations of the run whose output is checked against the host's reference: the
/// reference runs one thread, and at a GPU's sizes and iteration counts (jacobi2d at
/// N = 28,972, 300 iterations: 2.5·10¹¹ cell updates) it would take minutes; an indexing or
/// boundary error shows in the first iterations.
pub const VERIFY_ITERATIONS: usize = 3;

/// One warm-up of `size` at `iterations`; with `verify`, its output checked, in a run of at
/// most [`VERIFY_ITERATIONS`] iterations before the full one. Returns whether a check was
/// made (a spec without one makes none).
fn warm_up(
    workload: &dyn Workload,
    device: &dyn Device,
    size: usize,
    iterations: usize,
    verify: bool,
) -> Result<bool, WorkloadError> {
    if !verify {
        workload.run(device, size, iterations, false)?;
        return Ok(false);
    }
    let checked = workload
        .run(device, size, iterations.min(VERIFY_ITERATIONS), true)?
        .verification
        .is_some();
    if iterations > VERIFY_ITERATIONS {
        workload.run(device, size, iterations, false)?;
    }
    Ok(checked)
}

/// [`run_series`], with the sizes `beside` (a validation's large sizes) measured inside the
/// same rounds: each of the first `plan.min` rounds runs the series' sizes and then each of
/// `beside` once (a, b, c, T, a, b, c, T, …). A machine that slows down or speeds up for a
/// while then slows the sizes fitted and the sizes predicted alike, instead of only one of
/// them; what is predicted still comes from the series alone. The first of `beside` has
/// its warm-up run verified, the rest not (a large size's output is believed once one has
/// been checked). Returns the series and one summarised point per size of `beside`, in the
/// order given.
#[allow(clippy::too_many_arguments)]
pub fn run_series_beside(
    workload: &dyn Workload,
    layout: Option<String>,
    device: &dyn Device,
    sizes: &[usize],
    beside: &[usize],
    iterations: usize,
    plan: RepeatPlan,
    mut progress: impl FnMut(&SeriesPoint),
) -> Result<(Series, Vec<SeriesPoint>), WorkloadError> {
    if sizes.is_empty() || plan.min == 0 {
        return Err(WorkloadError::Invalid(
            "a series needs at least one size and one repeat".into(),
        ));
    }
    let max = plan.max.max(plan.min);
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for &size in sorted.iter().chain(beside) {
        check_fits(workload, device, size)?;
    }
    // A warm-up run per size, verified as `plan.checks` asks: compilation and first-touch
    // costs stay out of the series. A workload without a check (a spec without one) makes
    // the series unchecked.
    let mut checked = true;
    for (i, &size) in sorted.iter().enumerate() {
        let verify = match plan.checks {
            Checks::All => true,
            Checks::Smallest => i == 0,
            Checks::None => false,
        };
        let made = warm_up(workload, device, size, iterations, verify)?;
        if verify {
            checked &= made;
        }
    }
    for (i, &size) in beside.iter().enumerate() {
        warm_up(
            workload,
            device,
            size,
            iterations,
            i == 0 && plan.checks == Checks::All,
        )?;
    }
    let check = match plan.checks {
        _ if !checked => CheckState::Unchecked,
        Checks::All => CheckState::Verified,
        Checks::Smallest => CheckState::SmallestOnly,
        Checks::None => CheckState::Off,
    };
    let mut prober = LaunchProber::new(device)?;
    let mut runs: Vec<Vec<RunResult>> = vec![Vec::new(); sorted.len()];
    // The cold runs, each size's beside its own in the first rounds (the same drift).
    let cold_count = plan.cold_runs(device.info().class);
    let eviction = plan.eviction.unwrap_or(Eviction::for_device(device.info()));
    let cold = (cold_count > 0)
        .then(|| ColdCaches::with_eviction(device, 1, eviction))
        .transpose()?;
    let mut cold_runs: Vec<Vec<RunResult>> = vec![Vec::new(); sorted.len()];
    let mut beside_runs: Vec<Vec<RunResult>> = vec![Vec::new(); beside.len()];
    for round in 0..max {
        let mut ran = false;
        for (i, &size) in sorted.iter().enumerate() {
            if round >= plan.min && relative_half_width(&runs[i]) <= plan.ci_target {
                continue;
            }
            runs[i].push(workload.run(device, size, iterations, false)?);
            if let Some(cold) = cold.as_ref().filter(|_| round < cold_count.min(plan.min)) {
                cold.start(workload.bytes_needed(size));
                cold_runs[i].push(workload.run(cold, size, iterations, false)?);
            }
            ran = true;
        }
        if round < plan.min {
            for (&size, runs) in beside.iter().zip(&mut beside_runs) {
                runs.push(workload.run(device, size, iterations, false)?);
            }
        }
        if !ran {
            break;
        }
        prober.sample()?;
    }
    let beside_points = beside
        .iter()
        .zip(&beside_runs)
        .map(|(&size, runs)| summarise(size, runs))
        .collect::<Result<Vec<_>, _>>()?;
    let mut points = Vec::with_capacity(sorted.len());
    for ((&size, runs), cold) in sorted.iter().zip(&runs).zip(&cold_runs) {
        let point = summarise_with_cold(size, runs, cold)?;
        progress(&point);
        points.push(point);
    }
    let work: Vec<(usize, f64, f64)> = points
        .iter()
        .map(|p| {
            (
                p.size,
                p.total.median_seconds,
                workload.bytes_needed(p.size) as f64,
            )
        })
        .collect();
    let series = Series {
        workload: workload.name().to_string(),
        layout,
        device: device.info().clone(),
        iterations,
        repeats: plan.min,
        max_repeats: (max > plan.min).then_some(max),
        ci_target: plan.ci_target.is_finite().then_some(plan.ci_target),
        verified: check == CheckState::Verified,
        check,
        spec: workload.stored_spec(),
        points,
        flagged: per_unit_jumps(&work, JUMP_RATIO),
        launch_probe: prober.finish(),
        worker_threads: crate::backend::pinning::pinning().cloned(),
        cold_eviction: cold.as_ref().map(ColdCaches::eviction),
    };
    Ok((series, beside_points))
}

mod export;
#[cfg(test)]
mod tests;
