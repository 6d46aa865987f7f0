//! The work-line estimate of a kernel phase ([`per_unit_estimate`]): its moved time less
//! launches as a line in the bytes it moves or, where it does not say, the work items it
//! runs, `w = c·U + f`. Where the cost per unit falls, the line is extrapolated to its
//! asymptote ([`CalibratedMethod::Asymptote`]); where it rises, the estimate lies between
//! "it saturates" and "it keeps growing" ([`CalibratedMethod::Bracket`],
//! [`CalibratedMethod::Saturated`]).

use super::window_stats::amount_at_target;
use super::{CalibratedEstimate, CalibratedMethod};
use crate::fit::fractal::FractalFit;

/// What a kernel phase's work is counted in: the bytes it moves; the flops it declares,
/// where it is compute-bound or below both roofs (its time follows its operations, not its
/// traffic: a matrix product's N³ over N² bytes); or, where it says neither (a hyperplane
/// sweep's gathers), the work items it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    Byte,
    Flop,
    Item,
}

/// What a kernel phase did at each size of the window, for [`per_unit_estimate`].
pub(super) struct Work<'a> {
    /// What `amounts` counts.
    pub(super) unit: Unit,
    /// The phase's work at each size: bytes, or work items.
    pub(super) amounts: &'a [f64],
    /// Each moved median's own variance, from its 95 % interval, where known.
    pub(super) noise: Option<&'a [f64]>,
    /// Compute-bound at the window's largest size ([`PhaseKinds::compute_bound`]), rated by
    /// the calibration at every size as at the target ([`rate_flat_to_target`]), or moved at
    /// every size by a sweep of its own access pattern ([`LevelMove::own_patterns`]): a rise
    /// in its cost per byte is estimated as saturating at the window's median.
    ///
    /// [`PhaseKinds::compute_bound`]: super::calibrated::PhaseKinds::compute_bound
    /// [`rate_flat_to_target`]: super::growth::rate_flat_to_target
    /// [`LevelMove::own_patterns`]: super::LevelMove::own_patterns
    pub(super) saturates: bool,
    /// Counted in work items and moved whole to the target's level at every size by a
    /// sweep of its own access pattern: it saturates at the window's median cost per item.
    pub(super) moved_whole: bool,
    /// The phase's launches at each size, where known.
    pub(super) launches: Option<&'a [f64]>,
    /// Its amount at the target as the workload declares it there, where it can say;
    /// else the window's amounts are extrapolated ([`amount_at_target`]).
    pub(super) declared_at_target: Option<f64>,
}

/// The work-line estimate of one kernel phase from its moved fit (`fractal`: times, launch
/// offsets, the log-log line) and its work at each size (`phase.amounts` in `phase.unit`:
/// bytes, or work items where the phase does not say what it moves): `w = c·U + f`; `None`
/// where the numbers give no line (fewer than three sizes, equal amounts).
pub(super) fn per_unit_estimate(
    fractal: &FractalFit,
    phase: &Work<'_>,
    target: f64,
    growth_cap: Option<f64>,
) -> Option<CalibratedEstimate> {
    let Work {
        unit,
        amounts,
        noise,
        saturates,
        moved_whole,
        declared_at_target,
        ..
    } = *phase;
    let n = amounts.len();
    if n < 3 || fractal.times_seconds.len() != n {
        return None;
    }
    let work: Vec<f64> = fractal
        .times_seconds
        .iter()
        .zip(&fractal.offsets_seconds)
        .map(|(t, o)| t - o)
        .collect();
    let offset = fractal.offset_at_target_seconds;
    let at_target = match declared_at_target {
        Some(declared) => declared,
        None => amount_at_target(&fractal.sizes, amounts, target)?,
    };
    let line = crate::fit::linear::fit_line(amounts, &work).ok()?;
    // The estimate's fields in the phase's unit: ([per byte, per item, per flop], [bytes,
    // items, flops]).
    let per_unit_field = |per: f64| match unit {
        Unit::Byte => ([Some(per), None, None], [Some(at_target), None, None]),
        Unit::Item => ([None, Some(per), None], [None, Some(at_target), None]),
        Unit::Flop => ([None, None, Some(per)], [None, None, Some(at_target)]),
    };
    if line.slope > 0.0 && line.intercept >= 0.0 {
        let (at, half) = line_prediction(&line, amounts, noise, at_target)?;
        let mut interval = [(at - half).max(0.0), at + half];
        // Where the launches grow with N, the fixed cost may be paid per launch rather than
        // once a run: `w = c·U + h·k`, fitted as a line per launch, `w/k = c·U/k + h`, parts
        // from the line above at the target though both fit the window; the interval reaches
        // its prediction interval too (docs/models.md §2.4, "Asymptote").
        if let Some((per_launch, per_launch_half)) = phase.launches.and_then(|k| {
            per_launch_prediction(fractal, amounts, &work, noise, k, at_target, target)
        }) {
            interval[0] = interval[0].min((per_launch - per_launch_half).max(0.0));
            interval[1] = interval[1].max(per_launch + per_launch_half);
        }
        let (
            [seconds_per_byte, seconds_per_item, seconds_per_flop],
            [bytes_at_target, items_at_target, flops_at_target],
        ) = per_unit_field(line.slope);
        return Some(CalibratedEstimate {
            method: CalibratedMethod::Asymptote,
            prediction_seconds: at + offset,
            interval_seconds: [interval[0] + offset, interval[1] + offset],
            seconds_per_byte,
            fixed_seconds: Some(line.intercept),
            bytes_at_target,
            bracket_seconds: None,
            seconds_per_launch: None,
            seconds_per_item,
            items_at_target,
            walk_seconds_per_byte: None,
            share_of_rate: None,
            share_of_flops: None,
            seconds_per_flop,
            flops_at_target,
            regime: None,
        });
    }
    // The cost per unit rises across the window: saturation at the largest sizes' cost, or
    // growth at the rate it still rises at the top of the window; the estimate lies between
    // them. The interval is the bracket widened at both ends by one run's scatter about the
    // window's log-log line (docs/models.md §2.4).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| amounts[a].total_cmp(&amounts[b]));
    let top = &order[n - 2..];
    let largest = *order.last()?;
    let per_unit = top.iter().map(|&i| work[i] / amounts[i]).sum::<f64>() / 2.0;
    if per_unit <= 0.0 {
        return None;
    }
    let whole = fractal.prediction_seconds - offset;
    if whole <= 0.0 {
        return None;
    }
    let grown = top_growth(&fractal.sizes, &work, amounts, &order[n - 3..], target)
        .map_or(whole, |g| g * at_target);
    // Every size's moved cost estimates the target's alike: a compute-bound phase's, one the
    // calibration rates at every size as the target, one a sweep of its own pattern moved.
    let at_median = moved_whole || (saturates && unit != Unit::Item);
    let saturated = match (unit, growth_cap) {
        // A compute-bound phase: its compute does not change with the level, and step 1
        // charged each size the target's traffic, so it saturates at the moved costs' median,
        // which a hump at the top of the window does not carry (docs/models.md §2.4,
        // "Saturated"). So does a phase whose every size the calibration rates as the target
        // (no level lies between), and one that a sweep of its own pattern moved at every
        // size: what still rises across its window is where the sweep and the kernel
        // disagree about a band of working sets, not a level still to come. A phase counted
        // in items that such a sweep moved whole likewise (docs/models.md §2.4, "A
        // hyperplane sweep moves by the hyperplane sweep").
        _ if at_median => {
            let mut costs: Vec<f64> = (0..n).map(|i| work[i] / amounts[i]).collect();
            costs.sort_by(f64::total_cmp);
            crate::fit::stats::median_of_sorted(&costs) * at_target
        }
        // A phase counted in items was not moved to the target's level (step 1 needs its
        // bytes): it saturates at the largest size's cost moved halfway along the cap,
        // between all of its work as compute (no move) and all of it as traffic (g_top),
        // and never below the top two sizes' cost (docs/models.md §2.4, "Bracket").
        (Unit::Item, Some(g)) => (work[largest] / amounts[largest] * (1.0 + g) / 2.0 * at_target)
            .max(per_unit * at_target),
        _ => per_unit * at_target,
    };
    let rise_within_noise = unit != Unit::Item
        && noise.is_some_and(|v| {
            v.len() == n && rise_within_noise(&work, amounts, v, order[n - 3], largest)
        });
    let growth = grown
        .min(growth_cap.map_or(f64::INFINITY, |g| {
            g * work[largest] / amounts[largest] * at_target
        }))
        .max(saturated);
    // One run's scatter about the log-log line, without the line's slope uncertainty (the
    // two ways on are the model's uncertainty): exp(t_{0.975,k−2}·s·√(1 + 1/k)). Until
    // 2026-11-27 the interval also reached the whole window's log-log line and down to that
    // line's lower 95 % bound: the way on that this variant replaces, which made the
    // intervals wider without making them hold more often (docs/models.md §2.4).
    let scatter = (fractal.t_quantile
        * fractal.residual_standard_error
        * (1.0 + 1.0 / fractal.points as f64).sqrt())
    .exp();
    let scatter = if scatter.is_finite() {
        scatter.max(1.0)
    } else {
        1.0
    };
    let (
        [seconds_per_byte, seconds_per_item, seconds_per_flop],
        [bytes_at_target, items_at_target, flops_at_target],
    ) = per_unit_field(saturated / at_target);
    let (method, estimate) = if rise_within_noise || at_median {
        (CalibratedMethod::Saturated, saturated)
    } else {
        (CalibratedMethod::Bracket, (saturated * growth).sqrt())
    };
    Some(CalibratedEstimate {
        method,
        prediction_seconds: estimate + offset,
        interval_seconds: [saturated / scatter + offset, growth * scatter + offset],
        seconds_per_byte,
        fixed_seconds: None,
        bytes_at_target,
        bracket_seconds: Some([saturated + offset, growth + offset]),
        seconds_per_launch: None,
        seconds_per_item,
        items_at_target,
        walk_seconds_per_byte: None,
        share_of_rate: None,
        share_of_flops: None,
        seconds_per_flop,
        flops_at_target,
        regime: None,
    })
}

/// The line `fit` (through `amounts`, their medians' variances `noise`) at `at_target`, and
/// the half-width of its 95 % prediction interval there: `t·√(s²·(1 + 1/k + (U − Ū)²/S_UU))`,
/// s² the residual variance from the slope's standard error, never less than the medians'
/// own mean variance (five medians can fall on a line by chance). Student's t goes with the
/// variance used: the residual's has k − 2 degrees of freedom; the medians' own comes from
/// their repeats, at least three a size, so 2 a size at the least (until 2026-11-26 t_{k−2}
/// was used for both, 12.7 for a line through three sizes whose scatter was the repeats'
/// own, docs/models.md §2.4).
fn line_prediction(
    fit: &crate::fit::linear::LinearFit,
    amounts: &[f64],
    noise: Option<&[f64]>,
    at_target: f64,
) -> Option<(f64, f64)> {
    let n = amounts.len();
    let mean = amounts.iter().sum::<f64>() / n as f64;
    let sxx: f64 = amounts.iter().map(|b| (b - mean).powi(2)).sum();
    let measured = noise.map_or(0.0, |v| v.iter().sum::<f64>() / v.len().max(1) as f64);
    let residual = fit.slope_se.powi(2) * sxx;
    let (s2, dof) = if residual >= measured {
        (residual, n - 2)
    } else {
        (measured, 2 * n)
    };
    let half = crate::fit::linear::t_quantile_95(dof)
        * (s2 * (1.0 + 1.0 / n as f64 + (at_target - mean).powi(2) / sxx)).sqrt();
    let at = fit.slope * at_target + fit.intercept;
    (at.is_finite() && half.is_finite()).then_some((at, half))
}

/// The work line fitted per launch, `w_i/k_i = c·U_i/k_i + h` (`launches` k_i, `work` w_i,
/// `amounts` U_i), at the target: `k_T·(c·U_T/k_T + h)` and its 95 % half-width, k_T the
/// launch counts' least-squares line in N at `target`. `None` where the launches are the same
/// at every size (the line per run is then the same line), or the line has no positive
/// slope, or a negative h.
fn per_launch_prediction(
    fractal: &FractalFit,
    amounts: &[f64],
    work: &[f64],
    noise: Option<&[f64]>,
    launches: &[f64],
    at_target: f64,
    target: f64,
) -> Option<(f64, f64)> {
    let n = amounts.len();
    if launches.len() != n
        || launches.iter().any(|&k| k <= 0.0)
        || launches.iter().all(|&k| k == launches[0])
    {
        return None;
    }
    let [b0, b1] = crate::fit::fractal::offset_line(&fractal.sizes, launches);
    let k_target = b0 + b1 * target;
    if k_target.is_nan() || k_target <= 0.0 {
        return None;
    }
    let x: Vec<f64> = amounts.iter().zip(launches).map(|(u, k)| u / k).collect();
    let y: Vec<f64> = work.iter().zip(launches).map(|(w, k)| w / k).collect();
    let per_launch_noise: Option<Vec<f64>> =
        noise.map(|v| v.iter().zip(launches).map(|(v, k)| v / (k * k)).collect());
    let fit = crate::fit::linear::fit_line(&x, &y).ok()?;
    if fit.slope <= 0.0 || fit.intercept < 0.0 {
        return None;
    }
    let (at, half) = line_prediction(&fit, &x, per_launch_noise.as_deref(), at_target / k_target)?;
    Some((k_target * at, k_target * half))
}

/// Whether the cost per unit `work[i] / amounts[i]` rises from size `from` to size `to` by no
/// more than those two medians' own noise: `c_to − c_from ≤ 1.96·√(σ²_to + σ²_from)`, σ²_i the
/// median's variance (`variances`, from its 95 % interval) over `amounts[i]²`. Suite run 52's
/// host sor-rb rose from 2.08 to 2.39 ns per updated cell from N = 2068 to 2919 (medians ±0.3
/// and ±0.55 at 95 %; the minima 2.01 and 2.20) and ran at 2.16 at the target, N = 11,676.
fn rise_within_noise(
    work: &[f64],
    amounts: &[f64],
    variances: &[f64],
    from: usize,
    to: usize,
) -> bool {
    let cost = |i: usize| work[i] / amounts[i];
    let variance = |i: usize| variances[i] / amounts[i].powi(2);
    let rise = cost(to) - cost(from);
    let noise = 1.96 * (variance(to) + variance(from)).sqrt();
    rise.is_finite() && noise.is_finite() && rise <= noise
}

/// The cost per byte at `target`, grown from the largest of `top` (the window's largest sizes)
/// along the power of N at which the cost per byte rises over `top`: `c_max·(N_t/N_max)^s`,
/// s the slope of ln(w_i/B_i) against ln N_i over `top`, never below 0 (a rise that has
/// stopped at the top of the window is saturation). `None` where a cost is not positive or
/// the sizes give no line.
fn top_growth(
    sizes: &[f64],
    work: &[f64],
    bytes: &[f64],
    top: &[usize],
    target: f64,
) -> Option<f64> {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for &i in top {
        let cost = work[i] / bytes[i];
        if !(cost > 0.0 && sizes[i] > 0.0) {
            return None;
        }
        xs.push(sizes[i].ln());
        ys.push(cost.ln());
    }
    let slope = crate::fit::linear::fit_line(&xs, &ys).ok()?.slope.max(0.0);
    let &largest = top.last()?;
    Some(work[largest] / bytes[largest] * (target / sizes[largest]).powf(slope))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::test_support::*;
    use crate::fit::forecast::{
        forecast_calibrated, Forecast, LevelMove, PhaseMedian, SizeMedians,
    };
    use crate::units::Seconds;

    /// [`one_phase_noisy`] for a phase whose rise the calibration cannot bound: it walks
    /// lines (so it is never compute-bound) at a line rate four times its own fastest in the
    /// window (so its time is not its traffic's, e ≤ ¼, and its growth is not capped), in
    /// the target's level (g = 1: no size moves).
    fn unbounded_phase(
        sizes: &[usize],
        work: impl Fn(f64) -> f64,
        bytes: impl Fn(f64) -> f64,
        noise: f64,
    ) -> Forecast {
        let rate = sizes
            .iter()
            .map(|&n| bytes(n as f64) / work(n as f64))
            .fold(0.0, f64::max);
        one_phase_at(sizes, work, bytes, noise, None, Some(4.0 * rate), true)
    }

    #[test]
    fn a_phase_that_counts_only_its_work_items_is_a_line_in_items() {
        // A line in items, extrapolated with the exact number of items at the target, and
        // reported per item, not per byte.
        let s = lu_sweeps();
        let f = forecast_calibrated(&s, 260.0, &unmoved(&LU_SIZES), Seconds(0.0)).expect("fits");
        let c = f.phases[0].calibrated.as_ref().expect("calibrated");
        assert_eq!(c.method, CalibratedMethod::Asymptote);
        assert!(
            (c.prediction_seconds / lu_work(260.0) - 1.0).abs() < 1e-6,
            "{c:?}"
        );
        assert!((c.items_at_target.expect("items") / lu_items(260.0) - 1.0).abs() < 1e-9);
        assert!((c.seconds_per_item.expect("per item") / 1.4e-9 - 1.0).abs() < 1e-6);
        assert_eq!((c.seconds_per_byte, c.bytes_at_target), (None, None));
    }

    #[test]
    fn a_cost_per_byte_that_falls_is_extrapolated_to_its_asymptote() {
        // 1 ns per byte plus 20 µs per run, B = 8·N²: the cost per byte falls with N, and
        // a log-log line would carry the fall on past its asymptote.
        let work = |n: f64| 1e-9 * 8.0 * n * n + 20e-6;
        let f = one_phase(&[100, 141, 200, 283, 400], work, |n| 8.0 * n * n);
        let k = f.phases.iter().find(|p| p.name == "k").expect("k");
        let c = k.calibrated.as_ref().expect("calibrated");
        assert_eq!(c.method, CalibratedMethod::Asymptote);
        let truth = work(3200.0);
        assert!((c.prediction_seconds / truth - 1.0).abs() < 1e-4, "{c:?}");
        // Exact points: the interval is the line itself.
        assert!(c.interval_seconds[0] <= truth * 1.0001 && truth * 0.9999 <= c.interval_seconds[1]);
        assert!((k.fractal.prediction_seconds / truth - 1.0).abs() > 1e-3);
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        assert_eq!(
            total.calibrated.as_ref().map(|c| c.method),
            Some(CalibratedMethod::SumOfPhases)
        );
        assert_eq!(total.prediction_seconds(), c.prediction_seconds);
    }

    #[test]
    fn noisy_medians_and_a_drifting_machine_widen_the_interval() {
        // The same exact line as above: alone, its interval is the line itself.
        let work = |n: f64| 1e-9 * 8.0 * n * n + 20e-6;
        let sizes = [100, 141, 200, 283, 400];
        let bytes = |n: f64| 8.0 * n * n;
        let interval = |f: &Forecast| {
            let k = f.phases.iter().find(|p| p.name == "k").expect("k");
            (k.prediction_seconds(), k.interval_seconds())
        };
        let (exact, [lo0, hi0]) = interval(&one_phase(&sizes, work, bytes));
        assert!((hi0 - lo0) / exact < 1e-3);
        // Medians known to ±10 % only: the line's residuals (zero) no longer set s², the
        // medians' variance does, and with it Student's t of the repeats' degrees of freedom
        // (2 a size, 10 here), not the line's (k − 2 = 3): the half-width is exactly
        // t₁₀ · √(s² · (1 + 1/5 + (B − B̄)²/S_BB)).
        let (at, [lo, hi]) = interval(&one_phase_noisy(&sizes, work, bytes, 0.10, None));
        assert!(
            (at / exact - 1.0).abs() < 1e-9,
            "the estimate does not move"
        );
        let mean_var = sizes
            .iter()
            .map(|&n| (0.10 * work(n as f64) / 1.96).powi(2))
            .sum::<f64>()
            / 5.0;
        let b: Vec<f64> = sizes.iter().map(|&n| bytes(n as f64)).collect();
        let b_mean = b.iter().sum::<f64>() / 5.0;
        let s_bb: f64 = b.iter().map(|x| (x - b_mean).powi(2)).sum();
        let lever = 1.0 + 1.0 / 5.0 + (bytes(3200.0) - b_mean).powi(2) / s_bb;
        let half = crate::fit::linear::t_quantile_95(10) * (mean_var * lever).sqrt();
        assert!(
            ((hi - at) / half - 1.0).abs() < 1e-6 && ((at - lo) / half - 1.0).abs() < 1e-6,
            "{lo} {at} {hi} {half}"
        );
        // A machine drifting 10 % from round to round: each side at least 1.96 × 10 %.
        let (at, [lo, hi]) = interval(&one_phase_noisy(
            &sizes,
            work,
            bytes,
            0.0,
            Some((0.10, None)),
        ));
        let side = ((0.196 * at).powi(2) + (hi0 - exact).powi(2)).sqrt();
        assert!(((hi - at) - side).abs() < 1e-12 * at, "{hi} {at} {side}");
        assert!(at - lo >= 0.196 * at * (1.0 - 1e-12));
        // The total (the sum of its one phase) carries the same interval.
        let f = one_phase_noisy(&sizes, work, bytes, 0.0, Some((0.10, None)));
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        assert_eq!(total.interval_seconds(), [lo, hi]);
    }

    #[test]
    fn a_cost_per_byte_that_rises_is_bracketed_by_saturation_and_growth() {
        // The cost per byte grows as N^0.3 across the window: it may saturate at the
        // largest sizes' cost or keep growing; the estimate is the geometric mean and the
        // interval spans both.
        let work = |n: f64| 1e-9 * 8.0 * n * n * (n / 100.0).powf(0.3);
        let f = unbounded_phase(&[100, 141, 200, 283, 400], work, |n| 8.0 * n * n, 0.0);
        let k = f.phases.iter().find(|p| p.name == "k").expect("k");
        let c = k.calibrated.as_ref().expect("calibrated");
        assert_eq!(c.method, CalibratedMethod::Bracket);
        let growth = work(3200.0);
        let per_byte =
            (work(283.0) / (8.0 * 283.0f64.powi(2)) + work(400.0) / (8.0 * 400.0f64.powi(2))) / 2.0;
        let saturated = per_byte * 8.0 * 3200.0f64.powi(2);
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-3;
        assert!(
            close(c.prediction_seconds, (growth * saturated).sqrt()),
            "{c:?}"
        );
        assert!(close(c.interval_seconds[0], saturated) && close(c.interval_seconds[1], growth));
    }

    #[test]
    fn a_rise_within_the_medians_noise_is_saturation_not_growth() {
        // The cost per byte grows as N^0.3: 23 % from N = 200 to 400. With each median known
        // to ±20 % (95 %) that rise is inside the two medians' noise, 1.96·√(σ₂₀₀² + σ₄₀₀²) =
        // 32 % of the cost at N = 200: the estimate is saturation, the interval the
        // bracket's. Known to ±5 % (8 %), the rise is growth, and the estimate the bracket's.
        let work = |n: f64| 1e-9 * 8.0 * n * n * (n / 100.0).powf(0.3);
        let sizes = [100, 141, 200, 283, 400];
        let bytes = |n: f64| 8.0 * n * n;
        let estimate = |noise: f64| {
            let f = unbounded_phase(&sizes, work, bytes, noise);
            let k = f.phases.iter().find(|p| p.name == "k").expect("k");
            k.calibrated.clone().expect("calibrated")
        };
        let noisy = estimate(0.20);
        assert_eq!(noisy.method, CalibratedMethod::Saturated, "{noisy:?}");
        let [saturated, growth] = noisy.bracket_seconds.expect("bracket");
        assert!(growth > 1.5 * saturated, "{noisy:?}");
        assert!((noisy.prediction_seconds / saturated - 1.0).abs() < 1e-12);
        assert!(noisy.interval_seconds[0] <= saturated && noisy.interval_seconds[1] >= growth);
        let steady = estimate(0.05);
        assert_eq!(steady.method, CalibratedMethod::Bracket, "{steady:?}");
        let [s, g] = steady.bracket_seconds.expect("bracket");
        assert!((steady.prediction_seconds / (s * g).sqrt() - 1.0).abs() < 1e-12);
        // The test is of the difference: σ² = (0.20·w/1.96)² at each of the two sizes.
        let (a, b) = (work(200.0) / bytes(200.0), work(400.0) / bytes(400.0));
        let sigma = |c: f64| 0.20 * c / 1.96;
        assert!(b - a < 1.96 * (sigma(a).powi(2) + sigma(b).powi(2)).sqrt());
        assert!(b - a > 1.96 * ((sigma(a) / 4.0).powi(2) + (sigma(b) / 4.0).powi(2)).sqrt());
    }

    #[test]
    fn a_rise_that_stopped_at_the_top_of_the_window_is_saturation() {
        // The cost per byte rises from N = 100 to 200 and is flat from there on: the estimate
        // is the flat cost; the interval holds it and reaches above it by one run's scatter
        // about the window's log-log line, which the bend in the window makes wide.
        let work = |n: f64| 1e-9 * 8.0 * n * n * (n.min(200.0) / 100.0).powf(0.5);
        let f = unbounded_phase(&[100, 141, 200, 283, 400], work, |n| 8.0 * n * n, 0.0);
        let k = f.phases.iter().find(|p| p.name == "k").expect("k");
        let c = k.calibrated.as_ref().expect("calibrated");
        assert_eq!(c.method, CalibratedMethod::Bracket);
        let flat = work(3200.0);
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-3;
        assert!(close(c.prediction_seconds, flat), "{c:?} {flat}");
        assert!(c.interval_seconds[0] <= flat, "{c:?}");
        assert!(c.interval_seconds[1] > 1.2 * flat, "{c:?}");
        let fr = &k.fractal;
        let scatter =
            (fr.t_quantile * fr.residual_standard_error * (1.0 + 1.0 / 5.0f64).sqrt()).exp();
        let offset = fr.offset_at_target_seconds;
        assert!(close(
            c.interval_seconds[1] - offset,
            (flat - offset) * scatter
        ));
        // Under the old rule (the whole window's log-log line as the growth) the early rise
        // was carried on to the target.
        assert!(c.prediction_seconds < 0.9 * (flat * c.interval_seconds[1]).sqrt());
    }

    #[test]
    fn the_asymptotes_interval_reaches_a_fixed_cost_paid_per_launch() {
        // A sweep of 20·N launches (one per diagonal, ten iterations) moving 80·N² bytes,
        // whose work is 0.3 ns per byte plus 1 µs per launch beyond L: its cost per byte
        // falls as 1/N, not as 1/N², so the line in bytes with one fixed cost per run
        // over-predicts the target; the line per launch, which fits the window alike, is
        // exact there, and the interval reaches it. PoCL's SOR diagonals in suite runs 60–62
        // fell from 0.54 to 0.42 ns per byte over the window and ran at 0.30 at the target.
        let sizes = [1032usize, 1227, 1460, 1736, 2065];
        let bytes = |n: usize| 80 * (n * n) as u64;
        let work = |n: usize, k: u64| 0.3e-9 * bytes(n) as f64 + 1e-6 * k as f64;
        let forecast = |launches: fn(usize) -> u64| {
            let s = series(
                sizes
                    .iter()
                    .map(|&n| SizeMedians {
                        size: n,
                        phases: vec![PhaseMedian {
                            flops: None,
                            name: "sor_diag".into(),
                            median_seconds: work(n, launches(n)),
                            count: launches(n),
                            bytes: Some(bytes(n)),
                            items: None,
                            ci95_seconds: None,
                        }],
                        total_seconds: work(n, launches(n)),
                    })
                    .collect(),
            );
            let f = forecast_calibrated(&s, 8260.0, &unmoved(&sizes), Seconds(0.0)).expect("fits");
            let p = f
                .phases
                .iter()
                .find(|p| p.name == "sor_diag")
                .expect("phase");
            p.calibrated.clone().expect("calibrated")
        };
        let diagonals = |n: usize| 20 * n as u64;
        let c = forecast(diagonals);
        assert_eq!(c.method, CalibratedMethod::Asymptote);
        let truth = work(8260, diagonals(8260));
        assert!(c.prediction_seconds > 1.02 * truth, "{c:?} {truth}");
        let [lo, hi] = c.interval_seconds;
        assert!(
            (lo / truth - 1.0).abs() < 1e-6 && hi > c.prediction_seconds,
            "{c:?} {truth}"
        );
        // With the same launches at every size, a cost per launch is a fixed cost per run:
        // the line in bytes is exact, and the interval is its own, closed on the truth.
        let fixed = |_: usize| 20_000;
        let same = forecast(fixed);
        let truth = work(8260, fixed(8260));
        let [lo, hi] = same.interval_seconds;
        assert!(
            (lo / truth - 1.0).abs() < 1e-9 && (hi / truth - 1.0).abs() < 1e-9,
            "{same:?}"
        );
    }

    #[test]
    fn a_small_noisy_rise_reaches_its_highest_way_on_not_its_lines_slope_uncertainty() {
        // PoCL SOR (reordered), run 12: the copy back from the skewed layout (`from_skewed`,
        // one launch, 1 % of the run) took 135, 121, 340, 468 and 558 µs at N = 362 … 725,
        // moved to memory as that run moved it; measured at N = 2900: 12.7 ms. Its cost per
        // byte rises through noise. The upper bound used to be the whole window's log-log
        // line's 95 % bound, 376 ms: 38 % of the whole run's measured time from a phase of
        // 1 %, which made the total's interval 2.2× wide.
        let sizes = [362usize, 431, 516, 609, 725];
        let times = [135.2e-6, 121.1e-6, 340.0e-6, 468.4e-6, 557.7e-6];
        let bytes = [1_048_352u64, 1_486_088, 2_130_048, 2_967_048, 4_205_000];
        let s = series(
            sizes
                .iter()
                .zip(times)
                .zip(bytes)
                .map(|((&size, t), b)| SizeMedians {
                    size,
                    phases: vec![PhaseMedian {
                        flops: None,
                        name: "from_skewed".into(),
                        median_seconds: t,
                        count: 1,
                        bytes: Some(b),
                        items: Some(b / 8),
                        ci95_seconds: None,
                    }],
                    total_seconds: t,
                })
                .collect(),
        );
        // A gather, moved at its line rate as the suite moves it today (at the device's
        // streaming rate it would move its bytes at 6 % of that rate, and count as
        // compute-bound).
        let moves = sizes.map(|size| LevelMove {
            size,
            rate: 119.53e9,
            factor: 1.9726,
            line_moves: vec![("from_skewed".into(), 119.53e9, 1.9726)],
            ..Default::default()
        });
        let f = forecast_calibrated(&s, 2900.0, &moves, Seconds(0.25e-6)).expect("fits");
        let p = f
            .phases
            .iter()
            .find(|p| p.name == "from_skewed")
            .expect("phase");
        let c = p.calibrated.as_ref().expect("calibrated");
        assert_eq!(c.method, CalibratedMethod::Bracket);
        let [saturated, growth] = c.bracket_seconds.expect("bracket");
        let measured = 12.71e-3;
        // The top's growth, widened by one run's scatter about the log-log line (of the
        // halfway move; the interval is the widest over the three moves, which differ here
        // by a few per cent).
        let fr = &p.fractal;
        let scatter =
            (fr.t_quantile * fr.residual_standard_error * (1.0 + 1.0 / 5.0f64).sqrt()).exp();
        let offset = fr.offset_at_target_seconds;
        let highest = (saturated - offset).max(growth - offset) * scatter + offset;
        let [lo, hi] = c.interval_seconds;
        assert!(
            hi >= highest * (1.0 - 1e-12) && hi < 1.05 * highest,
            "{hi} {highest}"
        );
        assert!(lo <= measured && measured <= hi, "{lo} {hi}");
        assert!(hi < 0.06, "{hi}");
        // The line's own 95 % bound, which carries its slope's uncertainty on top, is far
        // above it.
        assert!(fr.prediction_interval_seconds[1] > 5.0 * hi, "{fr:?}");
    }
}
