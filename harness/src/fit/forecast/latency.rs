//! The latency-bound estimate ([`CalibratedMethod::LatencyBound`]): a phase whose launches
//! cannot fill the device, at the target either, costs per launch its launch overhead plus
//! the walk of one executor, whose accesses each wait on the read latency of the level its
//! working set lives in.

use super::window_stats::{amount_at_target, mean_and_half_width};
use super::{CalibratedEstimate, CalibratedMethod};
use crate::fit::fractal::FractalFit;
use crate::units::Seconds;

/// What [`latency_estimate`] needs of a phase at each size of the window.
pub(super) struct Walks<'a> {
    /// Launches per run, k_i.
    pub(super) counts: &'a [f64],
    /// Bytes per work item u_i (1 where the phase declares no bytes).
    pub(super) bytes_per_item: &'a [f64],
    /// λ(W_target) / λ(W_i).
    pub(super) latency: &'a [f64],
    /// The phase's bytes and work items per run, for u at the target (u_t = B_t / I_t; the
    /// window's largest u where they are not known).
    pub(super) amounts: Option<(&'a [f64], &'a [f64])>,
}

/// The estimate of a phase whose launches cannot fill the device, at the target either
/// ([`CalibratedMethod::LatencyBound`], docs/models.md §2.4): `fractal` its (unmoved) fit,
/// `launch` L. Each size gives
///
/// `β_i = (T_i/k_i − L)·(λ(W_target)/λ(W_i)) / u_i`
///
/// and `T = k_t·L + k_t·β̄·u_t`, its 95 % interval `k_t·L + k_t·u_t·(β̄ ± t_{0.975,k−1}·s·√(1 + 1/k))`
/// (the lower end at least k_t·L), s the standard deviation of the β_i, k_t the launch counts'
/// least-squares line in N at the target: the walk is one quantity measured at each size, as
/// a fixed-work phase's time per launch is. The β_i are averaged, not their logarithms: a walk
/// of a fraction of L (SOR's diagonals on a GPU) can come out at or below zero at one size
/// where L was measured a little high. `None` with fewer than three sizes or no positive
/// launch count at the target.
pub(super) fn latency_estimate(
    fractal: &FractalFit,
    walks: &Walks<'_>,
    launch: Seconds,
    target: f64,
) -> Option<CalibratedEstimate> {
    let k = walks.counts.len();
    if k < 3
        || [
            fractal.times_seconds.len(),
            walks.bytes_per_item.len(),
            walks.latency.len(),
        ]
        .iter()
        .any(|&n| n != k)
    {
        return None;
    }
    let betas: Vec<f64> = (0..k)
        .map(|i| {
            let walk = fractal.times_seconds[i] / walks.counts[i] - launch.0;
            walk * walks.latency[i] / walks.bytes_per_item[i]
        })
        .collect();
    if betas.iter().any(|b| !b.is_finite()) {
        return None;
    }
    let (mean, half) = mean_and_half_width(&betas);
    let [b0, b1] = crate::fit::fractal::offset_line(&fractal.sizes, walks.counts);
    let launches = b0 + b1 * target;
    if launches.is_nan() || launches <= 0.0 {
        return None;
    }
    let largest = fractal
        .sizes
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| walks.bytes_per_item[i])?;
    let u_target = walks
        .amounts
        .and_then(|(bytes, items)| {
            let b = amount_at_target(&fractal.sizes, bytes, target)?;
            let i = amount_at_target(&fractal.sizes, items, target)?;
            (i > 0.0).then(|| b / i)
        })
        .unwrap_or(largest);
    let at = |beta: f64| launches * (launch.0 + beta.max(0.0) * u_target);
    Some(CalibratedEstimate {
        walk_seconds_per_byte: Some(mean),
        ..CalibratedEstimate::without_bytes(
            CalibratedMethod::LatencyBound,
            at(mean),
            [at(mean - half), at(mean + half)],
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::test_support::*;
    use crate::fit::forecast::{forecast_calibrated, LevelMove, PhaseMedian, SizeMedians};

    /// ADI's sweep on a GPU, as it is built: 64 launches of N² lines, each walking its line of N
    /// floats down and up (8·N bytes per line), 5 µs a launch and 0.1 µs per byte of a line
    /// at the window's latency, 2.5× that at the target's.
    fn sweep_point(n: usize) -> SizeMedians {
        let (launches, lines) = (64u64, (n * n) as u64);
        let per_line = 8.0 * n as f64;
        let t = launches as f64 * (5e-6 + 1e-7 * per_line);
        SizeMedians {
            size: n,
            phases: vec![PhaseMedian {
                flops: None,
                name: "sweep".into(),
                median_seconds: t,
                count: launches,
                bytes: Some(lines * 8 * n as u64 * launches),
                items: Some(lines * launches),
                ci95_seconds: None,
            }],
            total_seconds: t,
        }
    }

    #[test]
    fn a_launch_that_cannot_fill_the_device_walks_at_the_targets_latency() {
        let sizes = [31, 37, 44, 53, 63];
        let s = series(sizes.map(sweep_point).to_vec());
        let f = forecast_calibrated(
            &s,
            252.0,
            &latency_moves(&sizes, 2.5, Vec::new()),
            Seconds(5e-6),
        )
        .expect("fits");
        let c = estimate_of(&f, "sweep");
        assert_eq!(c.method, CalibratedMethod::LatencyBound);
        // β = 0.1 µs · 2.5 per byte of a line: 64·(5 µs + 0.25 µs · 8 · 252) at N = 252.
        let expected = 64.0 * (5e-6 + 2.5e-7 * 8.0 * 252.0);
        assert!(
            (c.prediction_seconds / expected - 1.0).abs() < 1e-9,
            "{}",
            c.prediction_seconds
        );
        assert!((c.walk_seconds_per_byte.expect("β") - 2.5e-7).abs() < 1e-18);
        // Every size says the same β: the interval is the point.
        let [lo, hi] = c.interval_seconds;
        assert!((hi - lo).abs() < 1e-12 * expected, "[{lo}, {hi}]");
        // Without the latency move the same series is a work line in its bytes, which grow
        // as N³ where the walk grows as N: nowhere near the walk's time.
        let rates = latency_moves(&sizes, 2.5, Vec::new())
            .into_iter()
            .map(|m| LevelMove {
                latency_moves: Vec::new(),
                ..m
            })
            .collect::<Vec<_>>();
        let g = forecast_calibrated(&s, 252.0, &rates, Seconds(5e-6)).expect("fits");
        let o = estimate_of(&g, "sweep");
        assert_ne!(o.method, CalibratedMethod::LatencyBound);
        assert!(
            (o.prediction_seconds / expected - 1.0).abs() > 0.5,
            "{}",
            o.prediction_seconds
        );
    }

    #[test]
    fn a_walk_at_or_below_the_launch_cost_is_averaged_not_logged() {
        // SOR's diagonals: the time per launch within a few tenths of a µs of L, one size
        // below it. β is the plain mean (here 0), so the estimate is the launches' cost.
        let walk = [0.2e-6, -0.2e-6, 0.1e-6, -0.1e-6, 0.0];
        let sizes = [500usize, 590, 702, 835, 993];
        let points = sizes
            .iter()
            .zip(walk)
            .map(|(&n, w)| {
                let k = 20 * n as u64;
                let t = k as f64 * (6e-6 + w);
                SizeMedians {
                    size: n,
                    phases: vec![PhaseMedian {
                        flops: None,
                        name: "sweep".into(),
                        median_seconds: t,
                        count: k,
                        bytes: None,
                        items: Some(k * n as u64),
                        ci95_seconds: None,
                    }],
                    total_seconds: t,
                }
            })
            .collect();
        let f = forecast_calibrated(
            &series(points),
            3972.0,
            &latency_moves(&sizes, 2.0, Vec::new()),
            Seconds(6e-6),
        )
        .expect("fits");
        let c = estimate_of(&f, "sweep");
        assert_eq!(c.method, CalibratedMethod::LatencyBound);
        let launches = 20.0 * 3972.0;
        assert!(
            (c.prediction_seconds / (launches * 6e-6) - 1.0).abs() < 1e-9,
            "{}",
            c.prediction_seconds
        );
        // The interval reaches above (the walks' scatter) and down to the launches alone.
        assert!((c.interval_seconds[0] / (launches * 6e-6) - 1.0).abs() < 1e-9);
        assert!(c.interval_seconds[1] > c.prediction_seconds);
    }
}
