//! Validation of the fractal prediction (docs/models.md §2): run the small series, predict each
//! large size, run it, and report the absolute percentage error per phase and in total.
//!
//! Two variants side by side: `paper` (every small size, the paper's fit) and, where the
//! device has a calibration, `windowed` (only the small sizes the calibration accepts for
//! that large size, launch overhead subtracted; [`crate::fit::window`]).

use serde::{Deserialize, Serialize};

use super::series::{read_json, run_series_beside, RepeatPlan, Series, SeriesPoint};
use crate::backend::Device;
use crate::export::table::sig;
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::drift::SharedRounds;
use crate::fit::forecast::{
    amount_at_target, forecast, forecast_calibrated_bounded, forecast_windowed, is_kernel_phase,
    CalibratedEstimate, Forecast, LevelMove, Variant,
};
use crate::fit::jumps::Jump;
use crate::fit::stats::median_of_sorted;
use crate::fit::window::{
    choose_window, choose_window_any_level, choose_window_unsaturated, DeviceFacts,
    HyperplaneRates, SizeFacts, WindowChoice, OVERHEAD_LIMIT, RELAXED_OVERHEAD_LIMIT,
};
use crate::units::Seconds;
use crate::workloads::{Access, Workload, WorkloadError};

/// One phase (or `total`) at one large size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ValidationRow {
    /// The recipe that made the prediction.
    pub variant: Variant,
    /// Large size.
    pub size: usize,
    /// Phase name, or `total` (the fractal fit of the totals), or `application` (the
    /// paper's step-3 prediction from the phases' fractions).
    pub phase: String,
    /// Predicted seconds.
    pub predicted_seconds: f64,
    /// Its 95 % prediction interval, where there is one.
    pub interval: Option<[f64; 2]>,
    /// Measured median seconds.
    pub measured_seconds: f64,
    /// |predicted − measured| / measured × 100.
    pub abs_percent_error: f64,
    /// How the `calibrated` variant made this phase's prediction (its method, cost per byte,
    /// bytes at the target, a bracket's two ends); absent for the other variants and in
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<CalibratedEstimate>,
}

/// Error statistics over the rows of one kind. Over no row at all (a variant that predicted
/// no case of a suite) each is NaN, which JSON writes as `null` and which reads back as NaN.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Mean absolute percentage error.
    #[serde(deserialize_with = "nan_where_null")]
    pub mean: f64,
    /// Median.
    #[serde(deserialize_with = "nan_where_null")]
    pub median: f64,
    /// Maximum.
    #[serde(deserialize_with = "nan_where_null")]
    pub max: f64,
}

/// A number whose `null` (JSON's spelling of NaN, as serde writes one) reads back as NaN: a
/// suite in which a variant predicted nothing could not be read again (`harness figures`
/// skipped it).
pub(crate) fn nan_where_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The whole validation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Validation {
    /// The small series the fits used.
    pub series: Series,
    /// The large sizes measured.
    pub large: Vec<SeriesPoint>,
    /// Every row.
    pub rows: Vec<ValidationRow>,
    /// Errors over the paper variant's `total` rows.
    pub total_error: ErrorSummary,
    /// Errors over every paper-variant row.
    pub all_error: ErrorSummary,
    /// Errors over the windowed variant's `total` rows, where it ran.
    pub windowed_total_error: Option<ErrorSummary>,
    /// The window chosen for each large size, where the device has a calibration.
    pub windows: Vec<LargeWindow>,
    /// Errors over the calibrated variant's `total` rows, where it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated_total_error: Option<ErrorSummary>,
    /// The calibrated variant's window and level factors for each large size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibrated_windows: Vec<LargeWindow>,
    /// Whether the large sizes ran inside the small series' rounds (a, b, c, T, a, b, c, T,
    /// …), so that the machine's drift hit the fitted and the predicted sizes alike; false
    /// in files from before that (the large sizes ran after the whole series).
    #[serde(default)]
    pub large_interleaved: bool,
}

/// The window the calibration chose for one large size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LargeWindow {
    /// The large size.
    pub size: usize,
    /// Accepted and rejected small sizes.
    pub choice: WindowChoice,
    /// Why the variant did not run, or how to make it run better.
    pub note: Option<String>,
    /// The calibrated variant's move of each accepted size to the target's level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub level_moves: Vec<LevelMove>,
}

/// Mean, median and maximum of `values` (NaN where empty).
pub(crate) fn summary(values: &[f64]) -> ErrorSummary {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    ErrorSummary {
        mean: if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        },
        median: if v.is_empty() {
            f64::NAN
        } else {
            median_of_sorted(&v)
        },
        max: v.last().copied().unwrap_or(f64::NAN),
    }
}

fn row(
    variant: Variant,
    size: usize,
    phase: &str,
    predicted: f64,
    interval: Option<[f64; 2]>,
    measured: f64,
) -> ValidationRow {
    ValidationRow {
        variant,
        size,
        phase: phase.to_string(),
        predicted_seconds: predicted,
        interval,
        measured_seconds: measured,
        abs_percent_error: (predicted - measured).abs() / measured * 100.0,
        calibrated: None,
    }
}

/// The rows of one forecast against one measured point.
fn rows_for(f: &Forecast, point: &SeriesPoint) -> Vec<ValidationRow> {
    let mut rows = Vec::new();
    for p in &f.phases {
        let m = if p.name == "total" {
            Some(point.total.median_seconds)
        } else {
            point
                .phases
                .iter()
                .find(|ph| ph.name == p.name)
                .map(|ph| ph.median_seconds)
        };
        if let Some(m) = m.filter(|&m| m > 0.0) {
            let mut r = row(
                f.variant,
                point.size,
                &p.name,
                p.prediction_seconds(),
                Some(p.interval_seconds()),
                m,
            );
            r.calibrated = p.calibrated.clone();
            rows.push(r);
        }
    }
    if let Some(app) = &f.application {
        rows.push(row(
            f.variant,
            point.size,
            "application",
            app.prediction_seconds,
            None,
            point.total.median_seconds,
        ));
    }
    rows
}

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

/// Small sizes chosen from the calibration for a prediction of `target` at 4–8× (`count`
/// sizes spread geometrically from target/8 to target/4): each one saturates the device
/// (at least n work items per launch) and, on 2-D and 3-D grids, is neither a power of two
/// nor a multiple of 16 (cache-set conflicts: [`grid_size_off_powers_of_two`]). The sizes
/// whose working set lives in another memory level than the target's are reported, since at
/// 4–8× the target's level cannot always be reached, and so is a grid target that is a
/// multiple of 16. Returns the sizes and notes for the user.
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
    let level = device.level_of(workload.bytes_needed(target));
    let elsewhere: Vec<usize> = sizes
        .iter()
        .copied()
        .filter(|&s| device.level_of(workload.bytes_needed(s)) != level)
        .collect();
    if !elsewhere.is_empty() {
        notes.push(format!(
            "N = {elsewhere:?} live in another memory level than the target's ({level}): the paper's fit crosses a level there"
        ));
    }
    Ok((sizes, notes))
}

/// The windowed forecast for one large size, or a note saying why there is none.
pub fn windowed_forecast(
    workload: &dyn Workload,
    series: &Series,
    device: &DeviceFacts,
    large: usize,
) -> (LargeWindow, Option<Forecast>) {
    let facts = size_facts(workload, series);
    let choice = choose_window(&facts, workload.bytes_needed(large), device);
    let smallest = series.points.first().map_or(1, |p| p.size);
    let hint = || match smallest_good_size(workload, device, smallest, large) {
        Some(s) => format!("run at least 3 small sizes from N = {s} (below {large})"),
        None => {
            format!("no size below {large} both saturates the device and lives in its memory level")
        }
    };
    let (forecast, note) = if choice.accepted.len() < 3 {
        (
            None,
            Some(format!(
                "only {} small size(s) pass the window rules, 3 are needed: {}",
                choice.accepted.len(),
                hint()
            )),
        )
    } else {
        match forecast_windowed(
            &series.medians(),
            large as f64,
            &choice.accepted,
            device.launch_seconds,
        ) {
            Ok(f) => (Some(f), (!choice.rejected.is_empty()).then(hint)),
            Err(e) => (None, Some(format!("the windowed fit failed: {e}"))),
        }
    };
    (
        LargeWindow {
            size: large,
            choice,
            note,
            level_moves: Vec::new(),
        },
        forecast,
    )
}

/// The kernel phases of `point` whose every launch ran on one thread (a host twin that is one
/// loop): they move between levels at one thread's rates (docs/models.md §2.4).
fn one_thread_phases(point: &SeriesPoint) -> impl Iterator<Item = &str> {
    point
        .phases
        .iter()
        .filter(|ph| ph.threads == Some(1) && is_kernel_phase(&ph.name))
        .map(|ph| ph.name.as_str())
}

/// The kernel phases of `series` whose launches at `target` have fewer work items than the
/// device's `executors`: each one's work items per launch over the series' sizes, taken to
/// the target as its bytes are ([`amount_at_target`]). A phase that does not count its work
/// items at every size, or runs the same items per launch at every size, is left out.
fn unfilled_phases(series: &Series, target: usize, executors: f64) -> Vec<String> {
    let Some(first) = series.points.first() else {
        return Vec::new();
    };
    first
        .phases
        .iter()
        .filter(|ph| is_kernel_phase(&ph.name))
        .filter(|ph| {
            let per_launch: Option<Vec<(f64, f64)>> = series
                .points
                .iter()
                .map(|p| {
                    let q = p.phases.iter().find(|q| q.name == ph.name)?;
                    let items = q.items.filter(|&i| i > 0 && q.count > 0)?;
                    Some((p.size as f64, items as f64 / q.count as f64))
                })
                .collect();
            // A phase whose launches run the same items at every size (a one-item reset) is
            // a fixed-work phase, estimated per launch.
            per_launch.is_some_and(|v| {
                let (sizes, items): (Vec<f64>, Vec<f64>) = v.into_iter().unzip();
                items.iter().any(|&i| i != items[0])
                    && amount_at_target(&sizes, &items, target as f64)
                        .is_some_and(|at| at < executors)
            })
        })
        .map(|ph| ph.name.clone())
        .collect()
}

/// `moves` with the target's level streaming at `rate` (bytes per second) instead of
/// `measured`: each size's g = R(W_i) / rate; a size without a rate stays unmoved. A phase
/// that moves at one thread's rates has its g scaled by the same ratio, `measured / rate`
/// (one thread's own floor and fast end are not measured).
fn at_target_rate(moves: &[LevelMove], rate: f64, measured: f64) -> Vec<LevelMove> {
    moves
        .iter()
        .map(|m| LevelMove {
            factor: if m.rate > 0.0 { m.rate / rate } else { 1.0 },
            own_rates: m
                .own_rates
                .iter()
                .map(|(name, r, g)| (name.clone(), *r, g * measured / rate))
                .collect(),
            ..m.clone()
        })
        .collect()
}

/// The bytes of a cube of side n, 4·N³: where the hyperplane sweep is read for a plane phase.
fn cube(n: usize) -> u64 {
    crate::workloads::grid_bytes(1, n, 3, 0)
}

/// `moves` with each hyperplane phase's g_i taken to the slowest (`slow`) or the fastest of
/// the cubes its hyperplane sweep measured at the target's working set
/// ([`HyperplaneRates::rate_spread`]) instead of their median, the sweep one thread's or the
/// device's as the phase ran: the target's cube is none of them, and may run as any. Each
/// size's own rate stays the median: the estimate takes the median over the window's sizes,
/// and a side near a power of two (one of three at 8 MiB ran at half its neighbours' rate on
/// one Intel VM) is the window's own sizes' no more than the target's. Empty where no
/// phase's sweep has the spread (docs/models.md §2.4, "A hyperplane sweep moves by the
/// hyperplane sweep").
fn at_plane_bounds(
    moves: &[LevelMove],
    workload: &dyn Workload,
    series: &Series,
    device: &DeviceFacts,
    large: usize,
    slow: bool,
) -> Vec<LevelMove> {
    let mut changed = false;
    let bounded = moves
        .iter()
        .map(|m| {
            let alone: Vec<&str> = series
                .points
                .iter()
                .filter(|p| p.size == m.size)
                .flat_map(one_thread_phases)
                .collect();
            let mut m = m.clone();
            for own in &mut m.own_rates {
                let Some(&(_, order)) = workload.hyperplane_phases().iter().find(|p| p.0 == own.0)
                else {
                    continue;
                };
                let rates = if alone.contains(&own.0.as_str()) {
                    device.one_thread.as_ref().map(|o| &o.hyperplanes)
                } else {
                    Some(&device.hyperplanes)
                };
                let Some([slowest, fastest]) =
                    rates.and_then(|r| r.rate_spread(cube(large), order))
                else {
                    continue;
                };
                own.2 = own.1 / if slow { slowest } else { fastest };
                changed = true;
            }
            m
        })
        .collect();
    if changed {
        bounded
    } else {
        Vec::new()
    }
}

/// The calibrated forecast for one large size (docs/models.md §2.4): every saturated,
/// unflagged, not overhead-dominated small size (launches × L at most [`OVERHEAD_LIMIT`] of
/// its time, or [`RELAXED_OVERHEAD_LIMIT`] where fewer than three sizes pass that, with a
/// note), moved to the large size's memory level by the calibrated streaming rates; where
/// fewer than three pass and the large size's own main kernel cannot fill the device either,
/// every unflagged size, its unfilled phases estimated as latency-bound (with a note); or a
/// note saying why there is none.
///
/// `shared`: the rounds the target ran in with the window, where it ran inside them
/// ([`run_series_beside`]); its interval then allows for less of the machine's drift.
///
/// Where the series measured the launch cost in its own rounds ([`Series::launch_probe`]),
/// that L replaces the calibration's, in the window's rules and in the forecast alike: it is
/// what the launches cost while the window ran.
pub fn calibrated_forecast(
    workload: &dyn Workload,
    series: &Series,
    device: &DeviceFacts,
    large: usize,
    shared: Option<SharedRounds>,
) -> (LargeWindow, Option<Forecast>) {
    let mut notes = Vec::new();
    let probed;
    let device = match &series.launch_probe {
        Some(probe) => {
            let beside = Seconds::from_ns(probe.line.fixed_ns);
            let ratio = beside.0 / device.launch_seconds.0;
            if !(0.8..=1.25).contains(&ratio) {
                notes.push(format!(
                    "launches cost {} ns each beside the series, {} ns in the calibration: the series' own cost is used",
                    sig(beside.as_ns(), 3),
                    sig(device.launch_seconds.as_ns(), 3)
                ));
            }
            probed = DeviceFacts {
                launch_seconds: beside,
                ..device.clone()
            };
            &probed
        }
        None => device,
    };
    let facts = size_facts(workload, series);
    let target_bytes = workload.bytes_needed(large);
    let mut choice = choose_window_any_level(&facts, target_bytes, device, OVERHEAD_LIMIT);
    if choice.accepted.len() < 3 {
        let relaxed = choose_window_any_level(&facts, target_bytes, device, RELAXED_OVERHEAD_LIMIT);
        if relaxed.accepted.len() >= 3 {
            notes.push(format!(
                "only {} small size(s) keep launches × L under {:.0} % of their time: sizes up to {:.0} % are used, so the estimate leans on L",
                choice.accepted.len(),
                100.0 * OVERHEAD_LIMIT,
                100.0 * RELAXED_OVERHEAD_LIMIT
            ));
            choice = relaxed;
        }
    }
    // A target whose own main kernel cannot fill the device (ADI's N² lines on a GPU's
    // 270,336 executors) has no saturated size below it: the window is every unflagged size,
    // and the phases that do not fill the device at the target are estimated as
    // latency-bound (docs/models.md §2.4, "Launches that cannot fill the device").
    let target_latency = device.latency_of(target_bytes);
    let unfilled_target = workload
        .parallelism(large)
        .is_some_and(|items| (items as f64) < device.executors);
    let unfilled = if choice.accepted.len() < 3 && unfilled_target {
        let all = choose_window_unsaturated(&facts, target_bytes, device);
        let phases = unfilled_phases(series, large, device.executors);
        if all.accepted.len() >= 3 && !phases.is_empty() && target_latency.is_some() {
            notes.push(format!(
                "the target's launches cannot fill the device either ({} work items per launch < n = {:.0}): every unflagged size is used, and {} estimated as latency-bound",
                workload.parallelism(large).unwrap_or(0),
                device.executors,
                phases.join(", ")
            ));
            choice = all;
            phases
        } else {
            Vec::new()
        }
    } else {
        Vec::new()
    };
    // Launch-bound: a workload whose every small size spends over half of its time in its
    // launches' fixed cost (many short launches: a wavefront's diagonals, a dynamic
    // programme's rows) still has a prediction, launches × L plus its work's extrapolation;
    // the window is every saturated, unflagged size whose launches cost less than its whole
    // time (more, and L contradicts the measurement), and the note says the estimate leans
    // on L (docs/models.md §2.4, "The window").
    if choice.accepted.len() < 3 && unfilled.is_empty() {
        let all = choose_window_any_level(&facts, target_bytes, device, 1.0);
        if all.accepted.len() >= 3 {
            notes.push(format!(
                "launch-bound: {} of the small sizes keep launches × L under {:.0} % of their time, so every size whose launches take less than all of it is used; the estimate is the target's launches × L plus its work's extrapolation, and leans on L",
                choice.accepted.len(),
                100.0 * RELAXED_OVERHEAD_LIMIT
            ));
            choice = all;
        }
    }
    let target_rate = device.streaming_rate(target_bytes);
    let target_level = device.level_of(target_bytes);
    let level_moves: Vec<LevelMove> = choice
        .accepted
        .iter()
        .map(|&size| {
            let working_set = workload.bytes_needed(size);
            let (rate, factor) = target_rate
                .zip(device.streaming_rate(working_set))
                .map_or((0.0, 1.0), |(t, r)| (r, r / t));
            // A transfer grows with the working set: one of b bytes here is one of
            // b · W_target / W_i bytes at the target.
            let grows = target_bytes as f64 / working_set.max(1) as f64;
            // Per transfer phase: the sweep's seconds per byte at this size's transfer and at
            // the target's, and whether this size's is past the sweep's largest.
            let transfers: Vec<(String, f64, f64, bool)> = series
                .points
                .iter()
                .find(|p| p.size == size)
                .into_iter()
                .flat_map(|p| &p.phases)
                .filter_map(|ph| {
                    let one = ph.bytes? as f64 / ph.count.max(1) as f64;
                    let here = device.transfer_seconds_per_byte(&ph.name, one)?;
                    let there = device.transfer_seconds_per_byte(&ph.name, one * grows)?;
                    let end = device.transfer_sweep_end(&ph.name)?;
                    Some((ph.name.clone(), here, there, one > end))
                })
                .collect();
            let transfer_factors = transfers
                .iter()
                .map(|(name, here, there, _)| (name.clone(), there / here))
                .collect();
            let transfer_costs = transfers
                .into_iter()
                .map(|(name, _, there, past)| (name, there, past))
                .collect();
            // The kernel phases that ran on one thread at this size move at one thread's
            // rates, where the calibration measured them.
            let alone: Vec<&str> = series
                .points
                .iter()
                .filter(|p| p.size == size)
                .flat_map(one_thread_phases)
                .collect();
            let one = device.one_thread.as_ref();
            let pair = |rate: &dyn Fn(u64) -> Option<f64>| {
                rate(target_bytes)
                    .zip(rate(working_set))
                    .map(|(t, r)| (r, r / t))
            };
            let one_stream = one.and_then(|o| pair(&|b| o.streaming_rate(b)));
            let one_line = one.and_then(|o| pair(&|b| o.line_rate(b)));
            let two_line = pair(&|b| device.line_rate(b));
            // The phases the workload declares strided move by the line rate; its transposes
            // by the transposing sweep's, where the calibration has one (the host's sweep is
            // one thread's, as the workloads' transposes run there), and those that gather
            // by the gathering sweep's, where it has that.
            let patterns = workload.access_patterns();
            let strided: Vec<&str> = patterns
                .iter()
                .filter(|p| p.1 >= Access::Strided)
                .map(|p| p.0)
                .collect();
            let transposing = pair(&|b| device.transpose_rate(b));
            let gathering = pair(&|b| device.gather_rate(b));
            let mut own_patterns = Vec::new();
            let line_moves = patterns
                .iter()
                .filter(|p| p.1 >= Access::Strided)
                .filter_map(|&(name, access)| {
                    let line = one_line.filter(|_| alone.contains(&name)).or(two_line);
                    let transpose = transposing.filter(|_| access >= Access::Transpose);
                    let pattern = gathering
                        .filter(|_| access == Access::TransposeRead)
                        .or(transpose);
                    if pattern.is_some() {
                        own_patterns.push(name.to_string());
                    }
                    let (r, g) = pattern.or(line)?;
                    Some((name.to_string(), r, g))
                })
                .collect();
            // The phases that update their grid in place by a five-point stencil move by the
            // stencil sweep, taken at that grid's bytes (4·N²), where the calibration has one;
            // the hyperplane sweeps by the hyperplane sweep; the other phases on one thread
            // by one thread's streaming rate.
            let grid = |n: usize| crate::workloads::grid_bytes(1, n, 2, 0);
            let stencil = one.and_then(|o| {
                o.stencil_rate(grid(large))
                    .zip(o.stencil_rate(grid(size)))
                    .map(|(t, r)| (r, r / t))
            });
            let stencils = workload.stencil_phases();
            // The phases that relax their cube one hyperplane a launch move by the
            // hyperplane sweep in their order, taken at the cube's bytes (4·N³): one
            // thread's where they ran on one thread, the device's where they were its own
            // launches.
            let planes = |name: &str, rates: Option<&HyperplaneRates>| {
                let order = workload.hyperplane_phases().iter().find(|p| p.0 == name)?.1;
                let rates = rates?;
                rates
                    .rate(cube(large), order)
                    .zip(rates.rate(cube(size), order))
                    .map(|(t, r)| (r, r / t))
            };
            let mut own_rates: Vec<(String, f64, f64)> = alone
                .iter()
                .filter(|name| !strided.contains(name))
                .filter_map(|&name| {
                    let own = stencil
                        .filter(|_| stencils.contains(&name))
                        .or_else(|| planes(name, one.map(|o| &o.hyperplanes)));
                    if own.is_some() {
                        own_patterns.push(name.to_string());
                    }
                    let (r, g) = own.or(one_stream)?;
                    Some((name.to_string(), r, g))
                })
                .collect();
            for &(name, _) in workload.hyperplane_phases() {
                if alone.contains(&name) || strided.contains(&name) {
                    continue;
                }
                if let Some((r, g)) = planes(name, Some(&device.hyperplanes)) {
                    own_patterns.push(name.to_string());
                    own_rates.push((name.to_string(), r, g));
                }
            }
            let latency_moves = target_latency
                .zip(device.latency_of(working_set))
                .map(|(t, here)| {
                    unfilled
                        .iter()
                        .map(|name| (name.clone(), t / here))
                        .collect()
                })
                .unwrap_or_default();
            LevelMove {
                latency_moves,
                transfer_costs,
                size,
                rate,
                factor,
                transfer_factors,
                line_moves,
                own_patterns,
                own_rates,
                in_target_level: target_rate.is_some()
                    && device.level_of(working_set) == target_level,
            }
        })
        .collect();
    if target_rate.is_none() {
        notes.push(
            "the calibration has no bandwidth sweep: no size is moved between levels".to_string(),
        );
    }
    if let Some(one) = &device.one_thread {
        let mut alone: Vec<&str> = series
            .points
            .iter()
            .filter(|p| choice.accepted.contains(&p.size))
            .flat_map(one_thread_phases)
            .collect();
        alone.sort_unstable();
        alone.dedup();
        if let (false, Some(rate)) = (alone.is_empty(), one.streaming_rate(target_bytes)) {
            notes.push(format!(
                "{} ran on one thread: moved at one thread's rates ({} GB/s streaming at the target's working set)",
                alone.join(", "),
                sig(rate * 1e-9, 3)
            ));
        }
    }
    let undeclared = workload.undeclared_access();
    if !undeclared.is_empty() {
        notes.push(format!(
            "{} declare{} no access pattern: moved between levels as streaming (a launch may say access = \"strided\", \"transpose\" or \"transpose-read\")",
            undeclared.join(", "),
            if undeclared.len() == 1 { "s" } else { "" }
        ));
    }
    // In device memory the rate also depends on how much of the working set a cache still
    // holds, which on a shared machine changes from minute to minute; with none, it is
    // BabelStream's. The interval reaches the time at that rate.
    let in_memory =
        device.levels.len() > 1 && target_level == device.levels[device.levels.len() - 1].0;
    let slower: Vec<LevelMove> = match (target_rate, device.memory_floor) {
        (Some(rate), Some(floor)) if in_memory && floor > 0.0 && floor < rate => {
            notes.push(format!(
                "device memory streams at {} GB/s with no cache's help (BabelStream) and {} GB/s in the sweep at the target's working set: the interval reaches the slower",
                sig(floor * 1e-9, 3),
                sig(rate * 1e-9, 3)
            ));
            at_target_rate(&level_moves, floor, rate)
        }
        _ => Vec::new(),
    };
    // The memory level's rate also moved from sample to sample of the calibration's own
    // sweep (on the 2-vCPU VM, by 5–60 % between its median and its fastest tenth): a target
    // that runs at another moment may meet the fast end of that spread. The interval reaches
    // the time at the rate of the sweep's fastest tenth of samples.
    let faster: Vec<LevelMove> = match (target_rate, device.streaming_spread_at(target_bytes)) {
        (Some(rate), Some(spread)) if in_memory && spread > 1.0 => {
            notes.push(format!(
                "the sweep's fastest tenth of samples at the target's working set ran {} % above its median: the interval reaches the time at that rate",
                sig((spread - 1.0) * 100.0, 2)
            ));
            at_target_rate(&level_moves, rate * spread, rate)
        }
        _ => Vec::new(),
    };
    // The hyperplane sweep's rate at the target is the median of its cubes': the interval
    // reaches the moves at the slowest and the fastest of them too.
    let planes_slow = at_plane_bounds(&level_moves, workload, series, device, large, true);
    let planes_fast = at_plane_bounds(&level_moves, workload, series, device, large, false);
    if !planes_slow.is_empty() {
        let names: Vec<&str> = workload.hyperplane_phases().iter().map(|p| p.0).collect();
        notes.push(format!(
            "{} moved by the hyperplane sweep: the interval also reaches the moves at its slowest and fastest cube's rate at the target's working set",
            names.join(" and ")
        ));
    }
    let forecast = if choice.accepted.len() < 3 {
        notes.push(format!(
            "only {} small size(s) are saturated and not overhead-dominated, 3 are needed",
            choice.accepted.len()
        ));
        None
    } else {
        let mut medians = series.medians();
        medians.drift_shared = shared;
        match forecast_calibrated_bounded(
            &medians,
            large as f64,
            &level_moves,
            &[&slower, &faster, &planes_slow, &planes_fast],
            device.launch_seconds,
        ) {
            Ok(f) => Some(f),
            Err(e) => {
                notes.push(format!("the calibrated fit failed: {e}"));
                None
            }
        }
    };
    (
        LargeWindow {
            size: large,
            choice,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            level_moves,
        },
        forecast,
    )
}

/// Run the small series with each large size inside its rounds (`plan.min` runs each,
/// [`run_series_beside`]), and compare. With
/// `device_facts` (from the device's calibration) the windowed variant runs beside the
/// paper's.
#[allow(clippy::too_many_arguments)]
pub fn validate(
    workload: &dyn Workload,
    layout: Option<String>,
    device: &dyn Device,
    device_facts: Option<&DeviceFacts>,
    small: &[usize],
    large: &[usize],
    iterations: usize,
    plan: RepeatPlan,
    mut progress: impl FnMut(&str),
) -> Result<Validation, WorkloadError> {
    if large.is_empty() {
        return Err(WorkloadError::Invalid(
            "give at least one --large size".into(),
        ));
    }
    let (series, measured) = run_series_beside(
        workload,
        layout,
        device,
        small,
        large,
        iterations,
        plan,
        |p| progress(&format!("small N = {} done", p.size)),
    )?;
    for point in &measured {
        progress(&format!("large N = {} done", point.size));
    }
    assess(workload, series, measured, device_facts, true)
}

/// Every variant's predictions of the `large` points from `series`, against what was
/// measured there: the rows and summaries of a [`Validation`]. Needs no device, so stored
/// measurements can be assessed again (`harness validate-suite --from`). `interleaved`: the
/// large points ran inside the series' rounds ([`Validation::large_interleaved`]).
pub fn assess(
    workload: &dyn Workload,
    series: Series,
    large: Vec<SeriesPoint>,
    device_facts: Option<&DeviceFacts>,
    interleaved: bool,
) -> Result<Validation, WorkloadError> {
    let mut rows = Vec::new();
    let mut windows = Vec::new();
    let mut calibrated_windows = Vec::new();
    let medians = series.medians();
    for point in &large {
        let size = point.size;
        let f =
            forecast(&medians, size as f64).map_err(|e| WorkloadError::Invalid(e.to_string()))?;
        rows.extend(rows_for(&f, point));
        if let Some(d) = device_facts {
            let (window, wf) = windowed_forecast(workload, &series, d, size);
            rows.extend(wf.iter().flat_map(|wf| rows_for(wf, point)));
            windows.push(window);
            let shared = series.shared_rounds(point, interleaved);
            let (window, cf) = calibrated_forecast(workload, &series, d, size, shared);
            rows.extend(cf.iter().flat_map(|cf| rows_for(cf, point)));
            calibrated_windows.push(window);
        }
    }
    let errors = |variant: Variant, total_only: bool| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.variant == variant && (!total_only || r.phase == "total"))
            .map(|r| r.abs_percent_error)
            .collect()
    };
    let windowed_totals = errors(Variant::Windowed, true);
    let calibrated_totals = errors(Variant::Calibrated, true);
    Ok(Validation {
        series,
        large,
        total_error: summary(&errors(Variant::Paper, true)),
        all_error: summary(&errors(Variant::Paper, false)),
        windowed_total_error: (!windowed_totals.is_empty()).then(|| summary(&windowed_totals)),
        windows,
        calibrated_total_error: (!calibrated_totals.is_empty())
            .then(|| summary(&calibrated_totals)),
        calibrated_windows,
        large_interleaved: interleaved,
        rows,
    })
}

impl Validation {
    /// The result's file name without extension, naming what was run so a second validation
    /// does not overwrite the first: `<device>.validate.<workload>[-<layout>].<smallest>-<largest
    /// small>-to-<large sizes>`.
    pub fn file_stem(&self) -> String {
        let s = &self.series;
        let layout = s.layout.as_ref().map_or(String::new(), |l| {
            format!("-{}", crate::export::file_name_part(l))
        });
        let small = match (s.points.first(), s.points.last()) {
            (Some(a), Some(b)) => format!("{}-{}", a.size, b.size),
            _ => "none".into(),
        };
        let large: Vec<String> = self.large.iter().map(|p| p.size.to_string()).collect();
        format!(
            "{}.validate.{}{layout}.{small}-to-{}",
            s.device.slug(),
            crate::export::file_name_part(&s.workload.replace('.', "_")),
            large.join("_")
        )
    }

    /// Read a file written by `harness validate`; errors name the field.
    pub fn load(path: &std::path::Path) -> Result<Self, WorkloadError> {
        read_json(path)
    }
}

impl Exportable for Validation {
    fn kind(&self) -> &'static str {
        "validation"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per variant, large size and phase.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "variant",
            "size",
            "phase",
            "predicted_s",
            "pi_low_s",
            "pi_high_s",
            "measured_s",
            "abs_percent_error",
        ]);
        for r in &self.rows {
            let (lo, hi) = r.interval.map_or((String::new(), String::new()), |i| {
                (i[0].to_string(), i[1].to_string())
            });
            t.row([
                r.variant.to_string(),
                r.size.to_string(),
                r.phase.clone(),
                r.predicted_seconds.to_string(),
                lo,
                hi,
                r.measured_seconds.to_string(),
                r.abs_percent_error.to_string(),
            ]);
        }
        t
    }

    /// The small series' measurements: the data the fits used.
    fn extrap_measurements(&self) -> Option<crate::export::extrap::Measurements> {
        self.series.extrap_measurements()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::CalibratedMethod;
    use crate::workloads::stream::{Stream, StreamKind};

    #[test]
    fn the_smallest_good_size_saturates_and_leaves_the_cache() {
        let device = DeviceFacts {
            one_thread: None,
            transposes: Vec::new(),
            gathers: Vec::new(),
            hyperplanes: HyperplaneRates::default(),
            executors: 1000.0,
            launch_seconds: crate::units::Seconds(1e-6),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            streaming: Vec::new(),
            memory_floor: None,
            lines: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: Vec::new(),
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
    fn the_launch_cost_measured_beside_the_series_replaces_the_calibrations() {
        let host = crate::backend::host::HostDevice::new();
        let vadd = Stream(StreamKind::Vadd);
        let sizes = [1 << 12, 1 << 13, 1 << 14];
        let mut series = super::super::series::run_series(
            &vadd,
            None,
            &host,
            &sizes,
            2,
            RepeatPlan::fixed(3),
            |_| {},
        )
        .expect("series");
        let probe = series
            .launch_probe
            .clone()
            .expect("the rounds probed launches");
        assert_eq!(probe.sample_fixed_ns.len(), 3);
        assert_eq!(probe.line.points.len(), 4);
        assert!(probe.line.fixed_ns >= 0.0 && probe.line.fixed_ns < 1e6);
        let facts = DeviceFacts {
            one_thread: None,
            transposes: Vec::new(),
            gathers: Vec::new(),
            hyperplanes: HyperplaneRates::default(),
            executors: 1.0,
            launch_seconds: Seconds(1e-9),
            levels: vec![("memory".into(), 1 << 30)],
            streaming: Vec::new(),
            memory_floor: None,
            lines: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: Vec::new(),
        };
        let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
        assert!(forecast.is_some(), "{:?}", window.note);
        assert_eq!(window.choice.accepted, sizes);
        // Launches that cost 1 ms each beside the series take every small size's time: the
        // window rejects them all, whatever the calibration said.
        series.launch_probe.as_mut().expect("probe").line.fixed_ns = 1e6;
        let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
        assert!(forecast.is_none());
        assert!(window.choice.accepted.is_empty());
        let note = window.note.expect("a note");
        assert!(
            note.contains(
                "launches cost 1.00e6 ns each beside the series, 1.00 ns in the calibration"
            ),
            "{note}"
        );
        // Launches that take 35 % of every size's time (its total made so, 1 ns a launch):
        // under the 20 % rule no size, under the relaxed 50 % every size, and the note says so.
        series.launch_probe.as_mut().expect("probe").line.fixed_ns = 1.0;
        let untouched = series.clone();
        for p in &mut series.points {
            let launches: u64 = p
                .phases
                .iter()
                .filter(|ph| is_kernel_phase(&ph.name))
                .map(|ph| ph.count)
                .sum();
            p.total.median_seconds = launches as f64 * 1e-9 / 0.35;
        }
        let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
        assert!(forecast.is_some(), "{:?}", window.note);
        assert_eq!(window.choice.accepted, sizes);
        let note = window.note.expect("a note");
        assert!(note.contains("only 0 small size(s) keep launches × L under 20 % of their time: sizes up to 50 % are used"), "{note}");
        // Launches that take 60 %: launch-bound, every size still used, and the note says
        // the estimate leans on L.
        for p in &mut series.points {
            p.total.median_seconds *= 0.35 / 0.6;
        }
        let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
        assert!(forecast.is_some(), "{:?}", window.note);
        assert_eq!(window.choice.accepted, sizes);
        let note = window.note.expect("a note");
        assert!(
            note.contains("launch-bound") && note.contains("leans on L"),
            "{note}"
        );
        // Launches that cost more than a size's whole time contradict it: no prediction.
        for p in &mut series.points {
            p.total.median_seconds *= 0.6 / 1.2;
        }
        let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
        assert!(forecast.is_none() && window.choice.accepted.is_empty());
        series = untouched;
        // Without a probe (an older series) the calibration's L stays.
        series.launch_probe = None;
        let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
        assert!(forecast.is_some(), "{:?}", window.note);
    }

    #[test]
    fn an_error_summary_over_no_row_reads_back() {
        let none = ErrorSummary {
            mean: f64::NAN,
            median: f64::NAN,
            max: f64::NAN,
        };
        let text = serde_json::to_string(&none).expect("serialises");
        assert_eq!(text, r#"{"mean":null,"median":null,"max":null}"#);
        let back: ErrorSummary = serde_json::from_str(&text).expect("reads back");
        assert!(back.mean.is_nan() && back.median.is_nan() && back.max.is_nan());
        let some: ErrorSummary =
            serde_json::from_str(r#"{"mean":1.5,"median":1.0,"max":3.0}"#).expect("reads");
        assert_eq!((some.mean, some.median, some.max), (1.5, 1.0, 3.0));
    }

    /// The built-in workload `name` and its series on the host at `sizes` (2 iterations, 3
    /// runs a size).
    fn host_series(name: &str, sizes: &[usize]) -> (Box<dyn Workload>, Series) {
        let host = crate::backend::host::HostDevice::new();
        let workload = crate::workloads::registry::lookup(name, None).expect("built in");
        let series = super::super::series::run_series(
            workload.as_ref(),
            None,
            &host,
            sizes,
            2,
            RepeatPlan::fixed(3),
            |_| {},
        )
        .expect("series");
        (workload, series)
    }

    /// A device with an L2 to 1 MiB and memory past it, whose sweeps (streaming, lines, the
    /// cube's `transposes` and, where given, the square's `gathers`) each measured 1 KiB,
    /// 1 MiB and 1 GiB at the rates given, bytes per second.
    fn swept_facts(transposes: [f64; 3], gathers: Option<[f64; 3]>) -> DeviceFacts {
        let sweep = |rates: [f64; 3]| -> Vec<(u64, f64)> {
            [1 << 10, 1 << 20, 1 << 30].into_iter().zip(rates).collect()
        };
        DeviceFacts {
            one_thread: None,
            transposes: sweep(transposes),
            gathers: gathers.map_or_else(Vec::new, sweep),
            hyperplanes: HyperplaneRates::default(),
            executors: 1.0,
            launch_seconds: Seconds(1e-9),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            streaming: sweep([100e9, 80e9, 40e9]),
            memory_floor: None,
            lines: sweep([60e9, 30e9, 15e9]),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: Vec::new(),
        }
    }

    #[test]
    fn the_transposes_move_by_the_transposing_sweep_and_the_sweeps_by_the_line_rate() {
        let sizes = [10, 12, 14];
        let (adi, series) = host_series("adi", &sizes);
        let mut facts = swept_facts([16e9, 8e9, 2e9], None);
        let target = 420;
        let at = |rates: &dyn Fn(u64) -> Option<f64>, size: usize| {
            let here = rates(adi.bytes_needed(size)).expect("a rate");
            (
                here,
                here / rates(adi.bytes_needed(target)).expect("a rate"),
            )
        };
        let (window, _) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
        assert_eq!(window.level_moves.len(), sizes.len());
        for m in &window.level_moves {
            let pair = |name: &str| {
                let l = m.line_moves.iter().find(|l| l.0 == name).expect(name);
                (l.1, l.2)
            };
            assert_eq!(pair("swap j,k"), at(&|b| facts.transpose_rate(b), m.size));
            assert_eq!(pair("sweep j"), at(&|b| facts.line_rate(b), m.size));
            assert!(
                pair("swap j,k").1 > pair("sweep j").1,
                "the sweep falls further"
            );
        }
        // Without a transposing sweep (calibrations before it) the transposes keep the line
        // rate, and a layout without transposes has none to move.
        facts.transposes.clear();
        let (window, _) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
        let m = &window.level_moves[0];
        let swap = m
            .line_moves
            .iter()
            .find(|l| l.0 == "swap j,k")
            .expect("swap");
        assert_eq!((swap.1, swap.2), at(&|b| facts.line_rate(b), m.size));
        let plain =
            crate::workloads::registry::lookup("adi", Some(crate::workloads::Layout::Plain))
                .expect("plain");
        assert!(plain
            .access_patterns()
            .iter()
            .all(|p| p.1 < crate::workloads::Access::Transpose));
    }

    #[test]
    fn sors_copy_back_moves_by_the_gathering_sweep_and_its_copy_in_by_the_cubes() {
        let sizes = [20, 24, 28];
        let (sor, series) = host_series("sor", &sizes);
        let mut facts = swept_facts([16e9, 8e9, 4e9], Some([16e9, 6e9, 1e9]));
        let target = 8000;
        let at = |rates: &dyn Fn(u64) -> Option<f64>, size: usize| {
            let here = rates(sor.bytes_needed(size)).expect("a rate");
            let there = rates(sor.bytes_needed(target)).expect("a rate");
            (here, here / there)
        };
        let pair = |m: &LevelMove, name: &str| {
            let l = m.line_moves.iter().find(|l| l.0 == name).expect(name);
            (l.1, l.2)
        };
        let (window, _) = calibrated_forecast(sor.as_ref(), &series, &facts, target, None);
        assert_eq!(window.level_moves.len(), sizes.len());
        for m in &window.level_moves {
            let back = pair(m, "from_skewed");
            assert_eq!(back, at(&|b| facts.gather_rate(b), m.size));
            assert_eq!(
                pair(m, "to_skewed"),
                at(&|b| facts.transpose_rate(b), m.size)
            );
            assert!(back.1 > 4.0, "the gathering sweep falls further: {back:?}");
        }
        // Without a gathering sweep (calibrations before it) the copy back keeps the cube's.
        facts.gathers.clear();
        let (window, _) = calibrated_forecast(sor.as_ref(), &series, &facts, target, None);
        let m = &window.level_moves[0];
        assert_eq!(
            pair(m, "from_skewed"),
            at(&|b| facts.transpose_rate(b), m.size)
        );
        assert!(
            crate::workloads::registry::lookup("sor", Some(crate::workloads::Layout::Plain))
                .expect("plain")
                .access_patterns()
                .is_empty()
        );
    }

    #[test]
    fn a_target_that_cannot_fill_the_device_is_predicted_from_its_walks() {
        // ADI on a device of 3000 executors: no size's sweeps, the target's neither (38² lines
        // at N = 40), fill it; the target's transposes (40³ items) do.
        let sizes = [10, 12, 14];
        let (adi, series) = host_series("adi", &sizes);
        let mut facts = DeviceFacts {
            one_thread: None,
            transposes: Vec::new(),
            gathers: Vec::new(),
            hyperplanes: HyperplaneRates::default(),
            executors: 3000.0,
            launch_seconds: Seconds(1e-9),
            levels: vec![("L2".into(), 1 << 15), ("memory".into(), 1 << 30)],
            streaming: Vec::new(),
            memory_floor: None,
            lines: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: vec![("L2".into(), 100e-9), ("memory".into(), 300e-9)],
        };
        let target = 40;
        let (window, forecast) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
        let note = window.note.clone().expect("a note");
        assert!(note.contains("cannot fill the device either"), "{note}");
        assert_eq!(window.choice.accepted, sizes.to_vec());
        let forecast = forecast.expect("a forecast");
        for m in &window.level_moves {
            let named: Vec<&str> = m.latency_moves.iter().map(|l| l.0.as_str()).collect();
            // The sweeps, not the one-item reset (a fixed-work phase) nor the transposes.
            assert_eq!(named, ["sweep i", "sweep j", "sweep k"], "{named:?}");
            let ratio = 300e-9 / facts.latency_of(adi.bytes_needed(m.size)).expect("t");
            assert!(m.latency_moves.iter().all(|l| l.1 == ratio));
        }
        for phase in ["sweep i", "sweep j", "sweep k"] {
            let c = forecast
                .phases
                .iter()
                .find(|p| p.name == phase)
                .and_then(|p| p.calibrated.as_ref())
                .expect("an estimate");
            assert_eq!(c.method, CalibratedMethod::LatencyBound, "{phase}");
        }
        // A device the target fills keeps the window rules: too few sizes, no forecast.
        facts.executors = 10.0;
        let (window, forecast) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
        assert!(window
            .level_moves
            .iter()
            .all(|m| m.latency_moves.is_empty()));
        assert!(forecast.is_some() || window.note.is_some());
        // Without the latencies nothing is moved by them.
        facts.executors = 3000.0;
        facts.latencies.clear();
        let (window, _) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
        assert!(window
            .level_moves
            .iter()
            .all(|m| m.latency_moves.is_empty()));
    }

    #[test]
    fn a_phase_that_ran_on_one_thread_moves_at_one_threads_rates() {
        let (sor_rb, series) = host_series("sor-rb", &[40, 48, 56]);
        let sweep = |rates: [f64; 4]| -> Vec<(u64, f64)> {
            [1 << 10, 1 << 16, 1 << 20, 1 << 30]
                .into_iter()
                .zip(rates)
                .collect()
        };
        let mut facts = DeviceFacts {
            transposes: Vec::new(),
            gathers: Vec::new(),
            hyperplanes: HyperplaneRates::default(),
            one_thread: Some(crate::fit::window::OneThreadRates {
                streaming: sweep([40e9, 40e9, 30e9, 10e9]),
                lines: sweep([20e9, 20e9, 5e9, 2e9]),
                ..Default::default()
            }),
            executors: 1.0,
            launch_seconds: Seconds(1e-9),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            streaming: sweep([100e9, 100e9, 80e9, 50e9]),
            memory_floor: None,
            lines: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: Vec::new(),
        };
        let target = 224;
        let (window, _) = calibrated_forecast(sor_rb.as_ref(), &series, &facts, target, None);
        let one = facts.one_thread.clone().expect("one thread");
        let at_target = one
            .streaming_rate(sor_rb.bytes_needed(target))
            .expect("a rate");
        let kernels: Vec<&str> = series.points[0]
            .phases
            .iter()
            .filter(|ph| is_kernel_phase(&ph.name))
            .map(|ph| ph.name.as_str())
            .collect();
        assert!(!window.level_moves.is_empty());
        for m in &window.level_moves {
            let here = one
                .streaming_rate(sor_rb.bytes_needed(m.size))
                .expect("a rate");
            let own: Vec<&str> = m.own_rates.iter().map(|o| o.0.as_str()).collect();
            assert_eq!(own, kernels, "every kernel phase ran on one thread");
            for o in &m.own_rates {
                assert_eq!((o.1, o.2), (here, here / at_target));
            }
            // The device's own rate stays beside them, for the phases that ran on all.
            assert_eq!(
                m.rate,
                facts
                    .streaming_rate(sor_rb.bytes_needed(m.size))
                    .expect("rate")
            );
        }
        let note = window.note.expect("a note");
        assert!(
            note.contains("ran on one thread: moved at one thread's rates (30.0 GB/s"),
            "{note}"
        );
        // With a stencil sweep the colours move by it, at the grid's 4·N² bytes (sor-rb's
        // working set adds 4 bytes), as sweeps of their own pattern; `zero_u32` keeps one
        // thread's streaming rate.
        let stencils = sweep([30e9, 20e9, 8e9, 12e9]);
        let stencil = crate::fit::window::OneThreadRates {
            stencils,
            ..one.clone()
        };
        facts.one_thread = Some(stencil.clone());
        let (window, _) = calibrated_forecast(sor_rb.as_ref(), &series, &facts, target, None);
        let grid = |n: usize| 4 * (n * n) as u64;
        let colours = ["sor_rb red", "sor_rb black"];
        for m in &window.level_moves {
            let here = stencil.stencil_rate(grid(m.size)).expect("a rate");
            let there = stencil.stencil_rate(grid(target)).expect("a rate");
            for o in &m.own_rates {
                if colours.contains(&o.0.as_str()) {
                    assert_eq!((o.1, o.2), (here, here / there), "{o:?}");
                } else {
                    assert_eq!(o.0, "zero_u32");
                    assert_ne!(o.1, here);
                }
            }
            assert_eq!(m.own_patterns, colours);
        }
        // A calibration without one thread's sweep moves them at the device's rates.
        facts.one_thread = None;
        let (window, _) = calibrated_forecast(sor_rb.as_ref(), &series, &facts, target, None);
        assert!(window.level_moves.iter().all(|m| m.own_rates.is_empty()));
    }

    #[test]
    fn lu_ssors_sweeps_move_by_the_hyperplane_sweep_in_their_own_order() {
        use crate::fit::window::PlaneOrder;
        let (lu, series) = host_series("lu-ssor", &[10, 12, 14]);
        let sweep = |rates: [f64; 4]| -> Vec<(u64, f64)> {
            [1 << 10, 1 << 14, 1 << 20, 1 << 30]
                .into_iter()
                .zip(rates)
                .collect()
        };
        let one = crate::fit::window::OneThreadRates {
            streaming: sweep([40e9, 40e9, 30e9, 10e9]),
            hyperplanes: HyperplaneRates {
                ascending: sweep([4e9, 3e9, 2e9, 1e9]),
                descending: sweep([4e9, 3e9, 1.5e9, 0.5e9]),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut facts = DeviceFacts {
            transposes: Vec::new(),
            gathers: Vec::new(),
            hyperplanes: HyperplaneRates::default(),
            one_thread: Some(one.clone()),
            executors: 1.0,
            launch_seconds: Seconds(1e-9),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            streaming: sweep([100e9, 100e9, 80e9, 50e9]),
            memory_floor: None,
            lines: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: Vec::new(),
        };
        let target = 400;
        let (window, _) = calibrated_forecast(lu.as_ref(), &series, &facts, target, None);
        assert!(!window.level_moves.is_empty());
        let cube = |n: usize| 4 * (n * n * n) as u64;
        for m in &window.level_moves {
            for (phase, order) in [
                ("ssor lower", PlaneOrder::Ascending),
                ("ssor upper", PlaneOrder::Descending),
            ] {
                let here = one.hyperplanes.rate(cube(m.size), order).expect("a rate");
                let there = one.hyperplanes.rate(cube(target), order).expect("a rate");
                let own = m.own_rates.iter().find(|o| o.0 == phase).expect(phase);
                assert_eq!((own.1, own.2), (here, here / there), "{own:?}");
            }
            assert_eq!(m.own_patterns, ["ssor lower", "ssor upper"]);
        }
        // Without the sweep (calibrations before it) they move at one thread's streaming
        // rate, as before, and are no patterns of their own.
        facts.one_thread = Some(crate::fit::window::OneThreadRates {
            hyperplanes: HyperplaneRates::default(),
            ..one.clone()
        });
        let (window, _) = calibrated_forecast(lu.as_ref(), &series, &facts, target, None);
        for m in &window.level_moves {
            assert!(m.own_patterns.is_empty(), "{m:?}");
            let here = one.streaming_rate(lu.bytes_needed(m.size)).expect("a rate");
            assert!(m.own_rates.iter().all(|o| o.1 == here), "{m:?}");
        }
        // Where the sweeps were the device's own launches (not one thread's), they move by
        // the device's own hyperplane sweep, not one thread's.
        let mut launched = series.clone();
        for ph in launched.points.iter_mut().flat_map(|p| &mut p.phases) {
            ph.threads = None;
        }
        facts.one_thread = Some(one.clone());
        facts.hyperplanes = HyperplaneRates {
            ascending: sweep([8e9, 8e9, 6e9, 4e9]),
            descending: sweep([8e9, 8e9, 5e9, 2e9]),
            ..Default::default()
        };
        let (window, _) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
        assert!(!window.level_moves.is_empty());
        for m in &window.level_moves {
            for (phase, order) in [
                ("ssor lower", PlaneOrder::Ascending),
                ("ssor upper", PlaneOrder::Descending),
            ] {
                let rates = &facts.hyperplanes;
                let here = rates.rate(cube(m.size), order).expect("a rate");
                let there = rates.rate(cube(target), order).expect("a rate");
                let own = m.own_rates.iter().find(|o| o.0 == phase).expect(phase);
                assert_eq!((own.1, own.2), (here, here / there), "{own:?}");
            }
            assert_eq!(m.own_patterns, ["ssor lower", "ssor upper"]);
        }
        // The moves at the ends of the sweep's intervals: this size's fastest rate over the
        // target's slowest, and the reverse; the estimate stays, its interval reaches them.
        let (_, without) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
        let ci = |rates: &[(u64, f64)]| -> Vec<(u64, [f64; 2])> {
            rates
                .iter()
                .map(|&(b, r)| (b, [0.9 * r, 1.1 * r]))
                .collect()
        };
        facts.hyperplanes.ascending_sides = ci(&facts.hyperplanes.ascending);
        facts.hyperplanes.descending_sides = ci(&facts.hyperplanes.descending);
        let (window, with) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
        let note = window.note.clone().unwrap_or_default();
        assert!(
            note.contains("ssor lower and ssor upper moved by the hyperplane sweep"),
            "{note}"
        );
        for slow in [true, false] {
            let bounded = at_plane_bounds(
                &window.level_moves,
                lu.as_ref(),
                &launched,
                &facts,
                target,
                slow,
            );
            assert_eq!(bounded.len(), window.level_moves.len());
            for (b, m) in bounded.iter().zip(&window.level_moves) {
                for (own, was) in b.own_rates.iter().zip(&m.own_rates) {
                    let ratio = if slow { 1.0 / 0.9 } else { 1.0 / 1.1 };
                    assert!((own.2 / was.2 - ratio).abs() < 1e-9, "{own:?} {was:?}");
                }
            }
        }
        let phase = |f: &Option<Forecast>| {
            let f = f.as_ref().expect("a forecast");
            let p = f
                .phases
                .iter()
                .find(|p| p.name == "ssor upper")
                .expect("the phase");
            p.calibrated.clone().expect("calibrated")
        };
        let (narrow, wide) = (phase(&without), phase(&with));
        assert_eq!(narrow.prediction_seconds, wide.prediction_seconds);
        // (The lower end may sit at 0 either way: the series' sizes are tiny and noisy.)
        assert!(
            wide.interval_seconds[0] <= narrow.interval_seconds[0]
                && wide.interval_seconds[1] > narrow.interval_seconds[1],
            "{narrow:?} {wide:?}"
        );
        // Without the spread (one thread's sweep has none here), no bounds.
        facts.hyperplanes.ascending_sides.clear();
        facts.hyperplanes.descending_sides.clear();
        assert!(at_plane_bounds(
            &window.level_moves,
            lu.as_ref(),
            &launched,
            &facts,
            target,
            true
        )
        .is_empty());
        // With neither sweep, no own pattern.
        facts.hyperplanes = HyperplaneRates::default();
        let (window, _) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
        assert!(window.level_moves.iter().all(|m| m.own_patterns.is_empty()));
    }

    #[test]
    fn auto_sizes_span_4_to_8_times_below_the_target_and_avoid_powers_of_two_on_grids() {
        let device = DeviceFacts {
            one_thread: None,
            transposes: Vec::new(),
            gathers: Vec::new(),
            hyperplanes: HyperplaneRates::default(),
            executors: 2.0,
            launch_seconds: crate::units::Seconds(1e-6),
            levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
            streaming: Vec::new(),
            memory_floor: None,
            lines: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            latencies: Vec::new(),
        };
        let vadd = Stream(StreamKind::Vadd);
        let (sizes, notes) = auto_small_sizes(&vadd, &device, 1 << 24, 5).expect("sizes");
        assert_eq!(sizes.first(), Some(&(1 << 21)));
        assert_eq!(sizes.last(), Some(&(1 << 22)));
        assert_eq!(sizes.len(), 5);
        assert!(notes.is_empty(), "{notes:?}");
        let jacobi = crate::workloads::registry::lookup("jacobi2d", None).expect("jacobi2d");
        let (sizes, notes) = auto_small_sizes(jacobi.as_ref(), &device, 4096, 5).expect("sizes");
        assert!(sizes.iter().all(|s| s % 16 != 0), "{sizes:?}");
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
}
