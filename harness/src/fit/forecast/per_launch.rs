//! The per-launch estimate ([`CalibratedMethod::PerLaunch`]): for a phase whose every launch
//! does the same work at every size of the window (a one-item reset, a 4-byte download), its
//! time per launch is one quantity measured at each size, and the target's time is that
//! times the target's launches.

use super::window_stats::mean_and_half_width;
use super::{CalibratedEstimate, CalibratedMethod};
use crate::fit::fractal::FractalFit;

/// The estimate of a phase whose launches do the same work at every size of the window
/// (`fractal`: its times; `counts`: its launches per run): the time per launch τ_i = T_i / k_i
/// is taken as one quantity measured at each size, log-normal about its geometric mean τ̄:
///
/// `T = k_target·τ̄`, 95 % interval `k_target·τ̄·exp(± t_{0.975,k−1}·s·√(1 + 1/k))`,
///
/// s the standard deviation of ln τ_i and k_target the launch counts' least-squares line in N
/// at the target (as the launch overhead is extrapolated). `None` with fewer than three sizes
/// or no positive launch count at the target.
pub(super) fn per_launch_estimate(
    fractal: &FractalFit,
    counts: &[f64],
    target: f64,
) -> Option<CalibratedEstimate> {
    let k = counts.len();
    if k < 3 || fractal.times_seconds.len() != k {
        return None;
    }
    let logs: Vec<f64> = fractal
        .times_seconds
        .iter()
        .zip(counts)
        .map(|(t, c)| (t / c).ln())
        .collect();
    if logs.iter().any(|l| !l.is_finite()) {
        return None;
    }
    let (mean, half) = mean_and_half_width(&logs);
    let [b0, b1] = crate::fit::fractal::offset_line(&fractal.sizes, counts);
    let launches = b0 + b1 * target;
    if launches.is_nan() || launches <= 0.0 {
        return None;
    }
    let per_launch = mean.exp();
    Some(CalibratedEstimate {
        method: CalibratedMethod::PerLaunch,
        prediction_seconds: launches * per_launch,
        interval_seconds: [
            launches * (mean - half).exp(),
            launches * (mean + half).exp(),
        ],
        seconds_per_byte: None,
        fixed_seconds: None,
        bytes_at_target: None,
        bracket_seconds: None,
        seconds_per_launch: Some(per_launch),
        seconds_per_item: None,
        items_at_target: None,
        walk_seconds_per_byte: None,
        share_of_rate: None,
        share_of_flops: None,
        seconds_per_flop: None,
        flops_at_target: None,
        regime: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::test_support::*;
    use crate::fit::forecast::{
        forecast_calibrated, Forecast, LevelMove, PhaseMedian, SizeMedians,
    };
    use crate::units::Seconds;

    #[test]
    fn a_phase_whose_launches_do_the_same_work_at_every_size_costs_the_same_per_launch() {
        // PoCL ADI, run 11: a one-item reset (`zero_u32`, 36 launches of one work item) took
        // 12.5, 12.0, 12.0, 13.7 and 23.5 µs at N = 25 … 51, a launch's overhead and noise.
        // Its log-log line through that noise predicted 3.9 ms at N = 204 with an upper bound
        // of 10⁷ s (measured: 49 µs). Its launches do the same work at every size, so its time
        // per launch is one quantity measured five times, and it is not moved between levels.
        let sizes = [25usize, 30, 36, 43, 51];
        let reset = [12.5e-6, 12.0e-6, 12.0e-6, 13.7e-6, 23.5e-6];
        let make = |eps_bytes: u64| {
            series(
                sizes
                    .iter()
                    .zip(reset)
                    .map(|(&size, t0)| {
                        let n = size as f64;
                        let sweep = 1e-9 * n.powi(3);
                        let bytes = 8 * (size as u64).pow(3);
                        SizeMedians {
                            size,
                            phases: vec![
                                PhaseMedian {
                                    flops: None,
                                    name: "zero_u32".into(),
                                    median_seconds: t0,
                                    count: 36,
                                    bytes: None,
                                    items: Some(36),
                                    ci95_seconds: None,
                                },
                                PhaseMedian {
                                    flops: None,
                                    name: "sweep".into(),
                                    median_seconds: sweep,
                                    count: 36,
                                    bytes: Some(bytes),
                                    items: Some(36 * (size as u64 - 2).pow(2)),
                                    ci95_seconds: None,
                                },
                                PhaseMedian {
                                    flops: None,
                                    name: "download eps".into(),
                                    median_seconds: 1e-6 * (1.0 + size as f64 / 1000.0),
                                    count: 36,
                                    bytes: Some(eps_bytes),
                                    items: None,
                                    ci95_seconds: None,
                                },
                            ],
                            total_seconds: t0 + sweep + 1e-6,
                        }
                    })
                    .collect(),
            )
        };
        let moves = |factor: f64| {
            sizes.map(|size| LevelMove {
                size,
                rate: 1e10,
                factor,
                transfer_factors: vec![("download eps".into(), factor)],
                ..Default::default()
            })
        };
        let target = 204.0;
        let launch = Seconds(0.3e-6);
        let f = forecast_calibrated(&make(144), target, &moves(2.0), launch).expect("fits");
        let phase = |f: &Forecast, name: &str| {
            f.phases
                .iter()
                .find(|p| p.name == name)
                .and_then(|p| p.calibrated.clone())
                .expect("estimated")
        };
        let zero = phase(&f, "zero_u32");
        assert_eq!(zero.method, CalibratedMethod::PerLaunch);
        let per: Vec<f64> = reset.iter().map(|t| t / 36.0).collect();
        let geo = (per.iter().map(|t| t.ln()).sum::<f64>() / 5.0).exp();
        assert!(
            (zero.prediction_seconds / (36.0 * geo) - 1.0).abs() < 1e-12,
            "{zero:?}"
        );
        assert_eq!(
            zero.seconds_per_launch,
            Some(zero.prediction_seconds / 36.0)
        );
        // The interval: t_{0.975,4}·s·√(1 + 1/5) either side in logs.
        let s = (per.iter().map(|t| (t / geo).ln().powi(2)).sum::<f64>() / 4.0).sqrt();
        let half = 2.776_445 * s * 1.2f64.sqrt();
        let [lo, hi] = zero.interval_seconds;
        assert!(
            (lo / (36.0 * geo * (-half).exp()) - 1.0).abs() < 1e-5,
            "{lo}"
        );
        assert!((hi / (36.0 * geo * half.exp()) - 1.0).abs() < 1e-5, "{hi}");
        assert!(hi < 1e-4, "{hi}");
        // A transfer of the same 4 bytes per download at every size is per-launch too.
        let eps = phase(&f, "download eps");
        assert_eq!(eps.method, CalibratedMethod::PerLaunch);
        // Neither is moved: the same estimates without a level move.
        let unmoved = forecast_calibrated(&make(144), target, &moves(1.0), launch).expect("fits");
        assert_eq!(phase(&unmoved, "zero_u32"), zero);
        assert_eq!(phase(&unmoved, "download eps"), eps);
        // A phase whose work per launch grows with N is not per-launch; nor is a download
        // whose bytes grow.
        assert_ne!(phase(&f, "sweep").method, CalibratedMethod::PerLaunch);
        let mut growing = make(144);
        for p in &mut growing.points {
            p.phases[2].bytes = Some(4 * p.size as u64);
        }
        let g = forecast_calibrated(&growing, target, &moves(2.0), launch).expect("fits");
        assert_eq!(phase(&g, "download eps").method, CalibratedMethod::LogLog);
        // The total's interval is the sum of its phases': bounded now.
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        let [_, total_hi] = total.interval_seconds();
        assert!(total_hi < 10.0 * total.prediction_seconds(), "{total_hi}");
    }
}
