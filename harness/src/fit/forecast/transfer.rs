//! The transfer estimate ([`CalibratedMethod::Transfer`]): an upload or download costs its
//! bytes at the target times a cost per byte, which the calibration's transfer sweep measured
//! at the target's transfer size (or the window measured past the sweep's end).

use super::window_stats::{amount_at_target, mean_and_half_width};
use super::{CalibratedEstimate, CalibratedMethod};
use crate::fit::fractal::FractalFit;

/// The estimate of a transfer phase ([`CalibratedMethod::Transfer`], docs/models.md §2.4):
/// `fractal` its fit of the moved times (each size's time times the calibrated cost per byte
/// at the target's transfer size over that at its own), `bytes` its bytes at each size,
/// `costs` at each size the calibrated cost per byte at the target's transfer size and whether
/// the size's own transfer is past the sweep's largest. With B_t the bytes at the target:
///
/// `T = B_t · median{T_i / B_i : size i past the sweep}`, or `B_t · c_cal(target)` where no
/// size is past it;
///
/// the 95 % interval reaches from the lower to the higher of that and `B_t · median(T'_i/B_i)`
/// (T'_i the moved times: what the window says on its own), each widened by the moved costs'
/// scatter `exp(t_{0.975,k−1}·s·√(1 + 1/k))`, s the standard deviation of their logarithms.
/// A transfer's cost per byte falls with its size in steps no power of N follows (a pageable
/// copy's staging, the caches it passes through), so the log-log line through a window of
/// small transfers missed the target's by 40–400 % on the GPUs and by a median 49 % on the
/// CPUs (2026-11-27): the calibration's sweep measured the target's transfer size itself.
/// `None` with fewer than three sizes or a cost that is not positive.
pub(super) fn transfer_estimate(
    fractal: &FractalFit,
    bytes: &[f64],
    costs: &[(f64, bool)],
    target: f64,
) -> Option<CalibratedEstimate> {
    let k = bytes.len();
    if k < 3 || fractal.times_seconds.len() != k || costs.len() != k {
        return None;
    }
    let at_target = amount_at_target(&fractal.sizes, bytes, target)?;
    let moved: Vec<f64> = fractal
        .times_seconds
        .iter()
        .zip(bytes)
        .map(|(t, b)| t / b)
        .collect();
    if moved.iter().any(|c| !c.is_finite() || *c <= 0.0) || costs[0].0 <= 0.0 {
        return None;
    }
    let median = |v: &[f64]| -> f64 {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        crate::fit::stats::median_of_sorted(&v)
    };
    // Past the sweep's end the moving factor is 1: the moved cost is the measured one.
    let past: Vec<f64> = moved
        .iter()
        .zip(costs)
        .filter(|(_, c)| c.1)
        .map(|(m, _)| *m)
        .collect();
    let per_byte = if past.is_empty() {
        costs[0].0
    } else {
        median(&past)
    };
    let own = median(&moved);
    let logs: Vec<f64> = moved.iter().map(|c| c.ln()).collect();
    let scatter = mean_and_half_width(&logs).1.exp();
    let [lo, hi] = [per_byte.min(own), per_byte.max(own)];
    Some(CalibratedEstimate {
        seconds_per_byte: Some(per_byte),
        bytes_at_target: Some(at_target),
        ..CalibratedEstimate::without_bytes(
            CalibratedMethod::Transfer,
            at_target * per_byte,
            [at_target * lo / scatter, at_target * hi * scatter],
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::test_support::*;
    use crate::fit::forecast::{forecast_calibrated, LevelMove, PhaseMedian, SizeMedians};
    use crate::units::Seconds;

    /// An upload of 4·N² bytes per run at `seconds_per_byte`.
    fn upload_point(n: usize, seconds_per_byte: f64) -> SizeMedians {
        let bytes = 4 * (n * n) as u64;
        let t = bytes as f64 * seconds_per_byte;
        SizeMedians {
            size: n,
            phases: vec![PhaseMedian {
                flops: None,
                name: "upload".into(),
                median_seconds: t,
                count: 1,
                bytes: Some(bytes),
                items: None,
                ci95_seconds: None,
            }],
            total_seconds: t,
        }
    }

    /// The upload's estimate at N = 1600 from N = 100, 200, 400 whose transfers cost
    /// `window` seconds per byte, the sweep `sweep` at the target's transfer size, and
    /// `past(N)` says whether N's transfer is past the sweep's largest.
    fn upload_at_1600(window: [f64; 3], sweep: f64, past: fn(usize) -> bool) -> CalibratedEstimate {
        let sizes = [100usize, 200, 400];
        let points = sizes
            .iter()
            .zip(window)
            .map(|(&n, c)| upload_point(n, c))
            .collect();
        let moves: Vec<LevelMove> = latency_moves(&sizes, 1.0, Vec::new())
            .into_iter()
            .map(|m| LevelMove {
                latency_moves: Vec::new(),
                transfer_costs: vec![("upload".to_string(), sweep, past(m.size))],
                ..m
            })
            .collect();
        let f = forecast_calibrated(&series(points), 1600.0, &moves, Seconds(0.0)).expect("fits");
        estimate_of(&f, "upload")
    }

    #[test]
    fn a_transfer_costs_what_the_sweep_measured_at_the_targets_size() {
        // The window's small transfers ran at 0.2–1 GB/s (a per-transfer cost that no power of
        // N follows); the sweep measured 10 GB/s at the target's transfer size.
        let c = upload_at_1600([5e-9, 2e-9, 1e-9], 1e-10, |_| false);
        assert_eq!(c.method, CalibratedMethod::Transfer);
        let bytes = 4.0 * 1600.0 * 1600.0;
        assert!(
            (c.prediction_seconds / (bytes * 1e-10) - 1.0).abs() < 1e-9,
            "{}",
            c.prediction_seconds
        );
        // The interval reaches the window's own cost, 2 ns per byte (its median).
        assert!(
            c.interval_seconds[1] >= bytes * 2e-9,
            "{:?}",
            c.interval_seconds
        );
        assert!(c.interval_seconds[0] <= bytes * 1e-10);
    }

    #[test]
    fn a_transfer_past_the_sweep_costs_what_the_window_measured_there() {
        // Two sizes' transfers are larger than the sweep's largest: their own cost per byte
        // (median 1.1 ns) is the target's, not the sweep's last value (2 ns).
        let c = upload_at_1600([3e-9, 1.2e-9, 1.0e-9], 2e-9, |n| n >= 200);
        assert_eq!(c.method, CalibratedMethod::Transfer);
        let bytes = 4.0 * 1600.0 * 1600.0;
        assert!(
            (c.prediction_seconds / (bytes * 1.1e-9) - 1.0).abs() < 1e-9,
            "{}",
            c.prediction_seconds
        );
    }
}
