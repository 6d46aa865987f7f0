//! The `calibrated` forecast (docs/models.md §2.4): [`forecast_calibrated`] and
//! [`forecast_calibrated_bounded`] move the window's sizes to the target's memory level, fit
//! them, and replace each phase's log-log extrapolation by the estimate that fits what the
//! phase is ([`calibrate_estimates`], by the estimators of [`estimators`]): per launch,
//! latency-bound, a transfer, or a line in its bytes, flops or work items. Here too are the
//! phase kinds that choice needs: the phases whose launches do fixed work
//! ([`fixed_work_phases`]) and each kernel phase's share of its level's streaming rate, which
//! says whether it is compute-bound ([`roof_shares`]).

use super::level_move::{move_to_target_level, LevelMove, MoveKinds, Overlap};
use super::regime::{classify, Regime, RoofShares, BOUND_SHARE};
use super::{
    forecast_variant, is_kernel_phase, CalibratedEstimate, CalibratedMethod, Forecast, PhaseMedian,
    SeriesMedians, SizeMedians, Variant,
};
use crate::fit::drift::{drift_allowance, widen_for_drift};
use crate::fit::fit_error::FitError;
use crate::units::Seconds;
use estimators::{estimate_phase, PhaseEvidence};

/// The `calibrated` forecast (docs/models.md §2.4): the points whose sizes are in `moves`,
/// each kernel phase's work (its time less its launches × `launch`) moved to the target's
/// memory level as a roofline would: the kernel takes the longer of its measured work and the
/// time its memory traffic takes at the target level's streaming rate:
///
/// `w_i = T_i − k_i·L`, `T'_i = k_i·L + max(w_i, B_i / R(W_target))`
///
/// (written with the stored factors, `B_i / R(W_target) = w_i · e_i · g_i` with
/// `e_i = B_i / (w_i · R(W_i))` and `g_i = R(W_i) / R(W_target)`), where B_i is the phase's
/// bytes moved (a phase that does not say does not move, as in `windowed`). e_i is not capped
/// at 1: a kernel that streams faster than the sweep did at its working set still cannot
/// stream faster at the target than the target level's rate; except where the small size
/// lies in the target's level itself ([`LevelMove::in_target_level`]) and g_i ≤ 1, whose
/// kernel then measured that level's rate for it (e_i ≤ 1 there). A transfer
/// phase moves by its [`LevelMove::transfer_factors`] (the calibrated transfer sweep's time
/// per byte at the target's transfer size over that at this size's); host steps do not move.
/// Then the log-log fit and extrapolation of the windowed variant. A kernel whose traffic fits
/// in its time even at the target's rate (compute- or latency-bound) keeps its time.
/// What a launch costs per work item beyond its fixed cost (PoCL's work-group loop) is part
/// of the kernel's compute in w_i: it overlaps the traffic as the rest of the compute does
/// (as in `ext_level`, where a launch costs `L_fixed + max(ℓ·I, body)`), so the two bounds
/// below treat it as they treat any compute.
pub fn forecast_calibrated(
    series: &SeriesMedians,
    target: f64,
    moves: &[LevelMove],
    launch: Seconds,
) -> Result<Forecast, FitError> {
    forecast_calibrated_bounded(series, target, moves, &[], launch)
}

/// [`forecast_calibrated`], its interval reaching also the estimates made with each of
/// `others` in place of `moves` (the same sizes moved to another rate the target's level may
/// run at: device memory with no cache's help, or as fast as the calibration's fastest
/// samples, docs/models.md §2.4); none where `others` is empty. The interval also reaches
/// the moves' bounds: overlapped, one after the other, and one after the other with a kernel
/// phase that declares no bytes taken as all traffic (its estimate is not moved, since
/// nothing measured says how much of it is traffic).
pub fn forecast_calibrated_bounded(
    series: &SeriesMedians,
    target: f64,
    moves: &[LevelMove],
    others: &[&[LevelMove]],
    launch: Seconds,
) -> Result<Forecast, FitError> {
    let fixed = fixed_work_phases(series, moves);
    let halfway = MoveKinds {
        fixed: &fixed,
        ..MoveKinds::default()
    };
    let waits = waiting_at_target(
        series,
        &move_to_target_level(series, moves, launch, Overlap::Half, halfway),
    );
    let phases = PhaseKinds {
        shares: roof_shares(series, moves, launch, &fixed),
        fixed,
        waits,
    };
    let fit_kinds =
        |moves: &[LevelMove], overlap: Overlap, kinds: MoveKinds| -> Result<Forecast, FitError> {
            let window = move_to_target_level(series, moves, launch, overlap, kinds);
            let mut forecast =
                forecast_variant(&window, target, Some(launch), Variant::Calibrated)?;
            calibrate_estimates(&window, &phases, moves, launch, &mut forecast);
            Ok(forecast)
        };
    let fit_overlapping = |moves: &[LevelMove], overlap: Overlap, overlapped: &[String]| {
        let kinds = MoveKinds {
            fixed: &phases.fixed,
            overlapped,
            ..MoveKinds::default()
        };
        fit_kinds(moves, overlap, kinds)
    };
    let fit = |moves: &[LevelMove], overlap: Overlap| fit_overlapping(moves, overlap, &[]);
    let mut forecast = fit(moves, Overlap::Half)?;
    // A compute-bound phase estimated as saturating hides its traffic behind its compute:
    // its point estimate is the roofline's (docs/models.md §2.4, "Saturated").
    let overlapped: Vec<String> = forecast
        .phases
        .iter()
        .filter(|p| {
            phases.compute_bound(&p.name)
                && p.calibrated
                    .as_ref()
                    .is_some_and(|c| c.method == CalibratedMethod::Saturated)
        })
        .map(|p| p.name.clone())
        .collect();
    if !overlapped.is_empty() {
        forecast = fit_overlapping(moves, Overlap::Half, &overlapped)?;
    }
    // The two bounds of how compute and traffic combine bound the interval too, and so do
    // the other rates the target's level may run at, each with both bounds: a faster rate
    // fully overlapped and a slower one taken one after the other are as possible as the
    // measured rate taken either way (until 2026-11-26 the other rates were taken halfway).
    let mut bounds = vec![
        fit(moves, Overlap::Full)?,
        fit(moves, Overlap::None)?,
        fit(moves, Overlap::AllTraffic)?,
    ];
    for other in others.iter().filter(|o| !o.is_empty()) {
        bounds.push(fit(other, Overlap::Full)?);
        bounds.push(fit(other, Overlap::None)?);
    }
    for bound in bounds {
        for (p, b) in forecast.phases.iter_mut().zip(&bound.phases) {
            if let (Some(c), Some(bc)) = (p.calibrated.as_mut(), b.calibrated.as_ref()) {
                c.interval_seconds[0] = c.interval_seconds[0].min(bc.interval_seconds[0]);
                c.interval_seconds[1] = c.interval_seconds[1].max(bc.interval_seconds[1]);
            }
        }
    }
    // A phase under its bandwidth roof, or at it but short of the sweep's rate, may spend
    // all its time on traffic that runs as far short of the rate at every level (too few
    // accesses in flight), which bytes alone cannot tell from compute: the interval reaches
    // the estimate with all of its time moved by g_i (docs/models.md §2.4, "The interval").
    // Its estimate, not its fit's interval: that bound's points scatter by each size's g_i,
    // and its fit's own interval would stack that scatter on the noise the main fit's
    // interval already carries.
    let mut maybe_traffic = phases.in_regime(Regime::BandwidthBound);
    maybe_traffic.extend(phases.in_regime(Regime::UnderBandwidth));
    if !maybe_traffic.is_empty() {
        let kinds = MoveKinds {
            fixed: &phases.fixed,
            overlapped: &[],
            maybe_traffic: &maybe_traffic,
        };
        let all = fit_kinds(moves, Overlap::AllTraffic, kinds)?;
        for (p, b) in forecast.phases.iter_mut().zip(&all.phases) {
            if let (Some(c), Some(bc)) = (p.calibrated.as_mut(), b.calibrated.as_ref()) {
                if bc.prediction_seconds.is_finite() {
                    c.interval_seconds[1] = c.interval_seconds[1].max(bc.prediction_seconds);
                }
            }
        }
    }
    Ok(forecast)
}

/// The phases of `series` whose every launch (or transfer) does the same work at each size
/// in `moves`: the same work items and the same bytes per launch, at least one of the two
/// known at every size. Their time does not grow with N beyond their launch count, so they
/// are neither moved to the target's level nor fitted on a log-log line (a one-item reset
/// that costs a launch's overhead at every size fits a slope through noise alone).
fn fixed_work_phases(series: &SeriesMedians, moves: &[LevelMove]) -> Vec<String> {
    let points: Vec<&SizeMedians> = series
        .points
        .iter()
        .filter(|p| moves.iter().any(|m| m.size == p.size))
        .collect();
    let Some(first) = points.first() else {
        return Vec::new();
    };
    // The same amount per launch: a_i·k_0 = a_0·k_i, or unknown at every size.
    let same_per_launch = |a: &[Option<u64>], k: &[u64]| -> Option<bool> {
        match a[0] {
            None => a.iter().all(Option::is_none).then_some(false),
            Some(a0) => a
                .iter()
                .zip(k)
                .all(|(ai, &ki)| {
                    ai.is_some_and(|ai| {
                        u128::from(ai) * u128::from(k[0]) == u128::from(a0) * u128::from(ki)
                    })
                })
                .then_some(true),
        }
    };
    first
        .phases
        .iter()
        .map(|ph| &ph.name)
        .filter(|name| {
            let found: Option<Vec<&PhaseMedian>> = points
                .iter()
                .map(|p| p.phases.iter().find(|ph| &ph.name == *name))
                .collect();
            let Some(found) = found else { return false };
            let counts: Vec<u64> = found.iter().map(|ph| ph.count).collect();
            if counts.contains(&0) {
                return false;
            }
            let items: Vec<Option<u64>> = found.iter().map(|ph| ph.items).collect();
            let bytes: Vec<Option<u64>> = found.iter().map(|ph| ph.bytes).collect();
            match (
                same_per_launch(&items, &counts),
                same_per_launch(&bytes, &counts),
            ) {
                (Some(i), Some(b)) => i || b,
                _ => false,
            }
        })
        .cloned()
        .collect()
}

/// The phases [`calibrate_estimates`] treats apart from the rest.
pub(super) struct PhaseKinds {
    /// Every launch does the same work at every size ([`fixed_work_phases`]).
    fixed: Vec<String>,
    /// Each kernel phase's shares of its roofs at the window's top ([`roof_shares`]).
    shares: Vec<PhaseShares>,
    /// The kernel phases that wait on memory for most of their time at the target's level
    /// ([`waiting_at_target`]).
    waits: Vec<String>,
}

impl PhaseKinds {
    /// Whether the phase `name` is compute-bound at the window's largest size: where it
    /// declares its flops (and the calibration rates them), a share of the calibrated
    /// operation rate of [`BOUND_SHARE`] or more; else a share of its level's rate under
    /// [`COMPUTE_BOUND_SHARE`], and eligible. A phase whose flops say it is below both roofs
    /// is not: its cost per unit rises as its accesses leave a level, as any phase's whose
    /// time is not its compute. Nor is one that waits on memory for most of its time at the
    /// target's level, whatever it did in its own ([`waiting_at_target`]).
    fn compute_bound(&self, name: &str) -> bool {
        !self.waits.iter().any(|w| w == name)
            && self.shares.iter().any(|s| {
                s.name == name
                    && match s.roofs.flops {
                        Some(f) => f >= BOUND_SHARE,
                        None => {
                            s.eligible && s.roofs.bytes.is_some_and(|e| e < COMPUTE_BOUND_SHARE)
                        }
                    }
            })
    }

    /// The phase `name`'s share of its level's rate at the window's largest size, if known.
    pub(super) fn share(&self, name: &str) -> Option<f64> {
        self.shares
            .iter()
            .find(|s| s.name == name)
            .and_then(|s| s.roofs.bytes)
    }

    /// The kernel phases in `regime` at the window's largest size ([`classify`]).
    fn in_regime(&self, regime: Regime) -> Vec<String> {
        self.shares
            .iter()
            .filter(|s| classify(&s.roofs) == regime)
            .map(|s| s.name.clone())
            .collect()
    }

    /// The phase `name`'s shares of its roofs at the window's largest size, if measured.
    fn roofs(&self, name: &str) -> Option<&RoofShares> {
        self.shares
            .iter()
            .find(|s| s.name == name)
            .map(|s| &s.roofs)
    }
}

/// The share of its level's streaming rate below which a kernel phase counts as
/// compute-bound: `e = B / (w·R) < ½` at the window's largest size (docs/models.md §2.4,
/// "Saturated"); the half of a roof from which a phase counts as bound by it.
pub(super) const COMPUTE_BOUND_SHARE: f64 = BOUND_SHARE;

/// The kernel phases whose time at the window's largest size the move to the target's level
/// (`moved`, halfway, from `series`) at least doubles: by what step 1 measured (cold runs)
/// or rated, at the target's level the wait it added is at least half of their time
/// ([`COMPUTE_BOUND_SHARE`]), so most of it is not compute there, however little of its own
/// level's bandwidth they used, and a rise of their moved cost across the window is that
/// wait still growing (docs/models.md §2.4, "Saturated").
fn waiting_at_target(series: &SeriesMedians, moved: &SeriesMedians) -> Vec<String> {
    let Some(top) = moved.points.iter().max_by_key(|p| p.size) else {
        return Vec::new();
    };
    let Some(measured) = series.points.iter().find(|p| p.size == top.size) else {
        return Vec::new();
    };
    top.phases
        .iter()
        .filter(|ph| is_kernel_phase(&ph.name))
        .filter(|ph| {
            measured.phases.iter().any(|m| {
                m.name == ph.name
                    && m.median_seconds > 0.0
                    && ph.median_seconds * (1.0 - COMPUTE_BOUND_SHARE) >= m.median_seconds
            })
        })
        .map(|ph| ph.name.clone())
        .collect()
}

/// One kernel phase's shares of its roofs ([`roof_shares`]).
struct PhaseShares {
    /// The phase.
    name: String,
    /// Its shares at the window's largest size: `e_top = B / (w·R)` among them.
    roofs: RoofShares,
    /// The same launches at every size and no strided or latency walk: a share under ½ of
    /// its level's rate makes the phase compute-bound.
    eligible: bool,
}

/// Each kernel phase of `series` at the largest size in `moves`, with its shares of each
/// roof ([`RoofShares`]): launches × L over its time; the share of its level's streaming
/// rate at which it moved its declared bytes, `e_top = B / (w·R)`, `w = T − k·L` the
/// measured time less its launches and R the rate the calibration's sweep streams at that
/// working set (one thread's rate where the phase ran on one, the line rate where it walks
/// lines); and the share of the calibrated operation rate at which it ran its declared
/// flops, `F / (w·P)`. Eligible to count as compute-bound on `e_top < ½` alone are the
/// phases that run the same number of launches at every size and walk no strided lines and
/// no latency walk (no [`LevelMove::line_moves`] or [`LevelMove::latency_moves`] entry at
/// any size). A rise in a compute-bound phase's cost per byte across the window is not its
/// traffic running into a slower level, which would need the traffic to take most of its
/// time; it is estimated as saturating (docs/models.md §2.4, "Saturated"). A phase whose
/// launches grow with N is not eligible: its cost per launch can keep rising with the work
/// each launch holds (PoCL's SOR diagonals with a contended atomic did); nor a strided walk,
/// whose lines each wait on the level's latency (the 3-D sweeps). A phase that declares its
/// flops and runs them at half the operation rate or more is compute-bound whatever else.
fn roof_shares(
    series: &SeriesMedians,
    moves: &[LevelMove],
    launch: Seconds,
    fixed: &[String],
) -> Vec<PhaseShares> {
    let points: Vec<&SizeMedians> = series
        .points
        .iter()
        .filter(|p| moves.iter().any(|m| m.size == p.size))
        .collect();
    let Some(top) = points.iter().max_by_key(|p| p.size) else {
        return Vec::new();
    };
    let Some(m) = moves.iter().find(|m| m.size == top.size) else {
        return Vec::new();
    };
    let walks = |name: &str| {
        moves.iter().any(|m| {
            m.line_moves.iter().any(|l| l.0 == name) || m.latency_moves.iter().any(|l| l.0 == name)
        })
    };
    top.phases
        .iter()
        .filter(|ph| is_kernel_phase(&ph.name))
        .filter_map(|ph| {
            let (rate, _) = m.rate_of(&ph.name);
            let launches = ph.count as f64 * launch.0;
            let work = ph.median_seconds - launches;
            if !(ph.median_seconds > 0.0 && work.is_finite()) {
                return None;
            }
            let of = |amount: Option<u64>, rate: Option<f64>| {
                let (a, r) = (amount.filter(|&a| a > 0)? as f64, rate?);
                let share = a / (work * r);
                (r > 0.0 && work > 0.0 && share.is_finite()).then_some(share)
            };
            // The same launches at every size of the window.
            let same_launches = points.iter().all(|p| {
                p.phases
                    .iter()
                    .any(|q| q.name == ph.name && q.count == ph.count)
            });
            Some(PhaseShares {
                name: ph.name.clone(),
                roofs: RoofShares {
                    launches: (launches / ph.median_seconds).max(0.0),
                    bytes: of(ph.bytes, Some(rate)),
                    flops: of(ph.flops, m.flop_rate),
                    waits_on_latency: m.latency_moves.iter().any(|l| l.0 == ph.name)
                        || m.dependent.contains(&ph.name),
                    fixed_work: fixed.contains(&ph.name),
                    declares_flops: ph.flops.is_some_and(|f| f > 0),
                },
                eligible: same_launches && !walks(&ph.name) && !fixed.contains(&ph.name),
            })
        })
        .collect()
}

/// The regime of the phase `name` ([`classify`]): a transfer or a host step by its name, a
/// kernel phase by its shares of its roofs; `None` for a kernel phase the window's top did
/// not measure.
fn regime_of(phases: &PhaseKinds, name: &str) -> Option<Regime> {
    if name == "upload" || name == "download" {
        return Some(Regime::Transfer);
    }
    if !is_kernel_phase(name) {
        return Some(Regime::Host);
    }
    phases.roofs(name).map(classify)
}

/// Replace each phase's log-log extrapolation by the calibrated variant's estimate
/// (docs/models.md §2.4), and the total's by the sum of the phases'. The estimator that claims
/// the phase makes it ([`estimators`]): a phase in `fixed` is its window's time per launch
/// times the launches at the target, one whose launches cannot fill the device a latency
/// walk, a transfer the calibration's transfer cost, and a kernel phase whose bytes are known
/// at every size is fitted as `w_i = c·B_i + f` (w_i its moved time less launches × L; in
/// flops where it declares them and is not bandwidth-bound, in work items where it declares
/// no bytes); other phases keep their log-log line.
fn calibrate_estimates(
    window: &SeriesMedians,
    phases: &PhaseKinds,
    moves: &[LevelMove],
    launch: Seconds,
    forecast: &mut Forecast,
) {
    let target = forecast.target;
    let mut sum = [0.0; 3];
    let mut complete = forecast.skipped_phases.is_empty();
    for p in forecast.phases.iter_mut().filter(|p| p.name != "total") {
        let evidence =
            PhaseEvidence::gather(&p.name, &p.fractal, window, moves, phases, launch, target);
        let mut estimate = estimate_phase(&evidence).unwrap_or(CalibratedEstimate::without_bytes(
            CalibratedMethod::LogLog,
            p.fractal.prediction_seconds,
            p.fractal.prediction_interval_seconds,
        ));
        if is_kernel_phase(&p.name) {
            estimate.share_of_rate = phases.share(&p.name);
            estimate.share_of_flops = phases.roofs(&p.name).and_then(|r| r.flops);
        }
        estimate.regime = regime_of(phases, &p.name);
        // A phase that declares its flops and reaches half of neither roof waits on
        // something no rate measures; where that is the memory's latency and the target's
        // level answers slower than the window's top, its cost rises by that ratio, which no
        // size of the window saw: the interval reaches it (docs/models.md §2.4, "What bounds
        // a phase").
        if estimate.regime == Some(Regime::BelowRoofs) {
            let top = window.points.iter().map(|pt| pt.size).max();
            let factor = moves
                .iter()
                .find(|m| Some(m.size) == top)
                .and_then(|m| m.latency_factor)
                .filter(|&f| f > 1.0);
            if let Some(f) = factor {
                estimate.interval_seconds[1] =
                    estimate.interval_seconds[1].max(estimate.prediction_seconds * f);
            }
        }
        if let Some(d) = window.drift {
            estimate.interval_seconds = widen_for_drift(
                estimate.prediction_seconds,
                estimate.interval_seconds,
                drift_allowance(d, window.drift_shared),
            );
        }
        sum[0] += estimate.prediction_seconds;
        sum[1] += estimate.interval_seconds[0];
        sum[2] += estimate.interval_seconds[1];
        complete &= estimate.prediction_seconds.is_finite();
        p.calibrated = Some(estimate);
    }
    if let Some(total) = forecast.phases.iter_mut().find(|p| p.name == "total") {
        if complete && sum[0] > 0.0 {
            total.calibrated = Some(CalibratedEstimate::without_bytes(
                CalibratedMethod::SumOfPhases,
                sum[0],
                [sum[1], sum[2]],
            ));
        } else {
            total
                .warnings
                .push("a phase could not be estimated: the total is the log-log line's".into());
        }
    }
}

/// One value per size of `window` from that size's move, if every size has a move and a
/// value.
fn per_move<T>(
    window: &SeriesMedians,
    moves: &[LevelMove],
    value: &dyn Fn(&LevelMove) -> Option<T>,
) -> Option<Vec<T>> {
    window
        .points
        .iter()
        .map(|pt| value(moves.iter().find(|m| m.size == pt.size)?))
        .collect()
}

mod estimators;

#[cfg(test)]
mod tests;
