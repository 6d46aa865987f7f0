//! Unit tests of the fractal fit and of its window diagnostics.

use super::*;

#[test]
fn a_prediction_past_the_largest_time_is_an_error_and_equal_times_say_so() {
    let sizes = [1.0, 2.0, 4.0, 8.0];
    let err = fit_power_law(&sizes, &[1.0, 4.0, 16.0, 64.0], 1e308).unwrap_err();
    assert!(matches!(err, FitError::Overflow { .. }), "{err}");
    let flat = fit_power_law(&sizes, &[0.5; 4], 64.0).unwrap();
    assert!(flat.c.abs() < 1e-9);
    assert!(
        flat.notes.iter().any(|n| n.contains("equal at every size")),
        "{:?}",
        flat.notes
    );
    let rising = fit_power_law(&sizes, &[1.0, 2.0, 4.0, 8.0], 64.0).unwrap();
    assert!(!rising
        .notes
        .iter()
        .any(|n| n.contains("equal at every size")));
}
use proptest::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn rel(a: f64, b: f64) -> f64 {
    ((a - b) / b).abs()
}

/// A standard normal deviate by Box–Muller (rand_distr is not a dependency).
fn normal(rng: &mut StdRng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen();
    (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
}

#[test]
fn exact_recovery_noise_free() {
    let (a, c) = (3.7e-9, 1.37);
    let sizes = [1e3, 2e3, 4e3, 8e3, 16e3, 32e3];
    let times: Vec<f64> = sizes.iter().map(|n| a * f64::powf(*n, c)).collect();
    let target = 1e6;
    let fit = fit_power_law(&sizes, &times, target).unwrap();
    assert!(rel(fit.a, a) < 1e-9, "a = {}", fit.a);
    assert!(rel(fit.c, c) < 1e-9, "c = {}", fit.c);
    assert!(rel(fit.prediction_seconds, a * f64::powf(target, c)) < 1e-9);
    assert!(fit.residuals.iter().all(|r| r.abs() < 1e-9));
    assert!((fit.r_squared - 1.0).abs() < 1e-12);
    assert_eq!(fit.fit_range, [1e3, 32e3]);
    assert!(!fit.interpolation);
    assert_eq!(fit.variant, FitVariant::Paper);
    assert!(window_warnings(&fit, Some(c)).is_empty());
}

#[test]
fn noisy_truth_inside_interval() {
    let (a, c, sigma) = (2e-8, 1.5, 0.05);
    let sizes = [1e3, 2e3, 4e3, 8e3, 16e3, 32e3];
    let target = 256e3;
    let truth = a * f64::powf(target, c);
    let mut rng = StdRng::seed_from_u64(20180611);
    let times: Vec<f64> = sizes
        .iter()
        .map(|n| a * f64::powf(*n, c) * (sigma * normal(&mut rng)).exp())
        .collect();
    let fit = fit_power_law(&sizes, &times, target).unwrap();
    let [lo, hi] = fit.prediction_interval_seconds;
    assert!(lo < truth && truth < hi, "{lo} < {truth} < {hi}");
    assert!((fit.c - c).abs() < 4.0 * fit.fractal_dimension_se);
}

#[test]
fn interval_coverage_is_near_95_percent() {
    // A new noisy run at the target must fall inside the interval 95 % of the time.
    let (a, c, sigma) = (1e-6, 2.0, 0.1);
    let sizes = [100.0, 150.0, 220.0, 330.0, 500.0];
    let target = 5000.0;
    let mut rng = StdRng::seed_from_u64(7);
    let trials = 4000;
    let mut inside = 0;
    for _ in 0..trials {
        let times: Vec<f64> = sizes
            .iter()
            .map(|n| a * f64::powf(*n, c) * (sigma * normal(&mut rng)).exp())
            .collect();
        let fit = fit_power_law(&sizes, &times, target).unwrap();
        let new_run = a * f64::powf(target, c) * (sigma * normal(&mut rng)).exp();
        let [lo, hi] = fit.prediction_interval_seconds;
        if lo < new_run && new_run < hi {
            inside += 1;
        }
    }
    let coverage = inside as f64 / trials as f64;
    assert!((0.935..0.965).contains(&coverage), "coverage {coverage}");
}

#[test]
fn hand_computed_interval() {
    // Sizes 1, 2, 4, 8, target 16; L = ln 2. x = ln(n/16) = −4L, −3L, −2L, −L.
    // Times 1·e^δ, 2·e^−δ, 4·e^−δ, 8·e^δ with δ = 0.1, so y = x + 4L + r with
    // r = δ·(+1, −1, −1, +1), which sums to 0 and is orthogonal to x
    // (−4 + 3 + 2 − 1 = 0), hence m = 1 exactly, d = 4L, e^d = 16.
    // SSR = 4δ² = 0.04, s² = 0.04/2 = 0.02, s = 0.141421356.
    // x̄ = −2.5L, Sxx = L²·(1.5² + 0.5² + 0.5² + 1.5²) = 5L², so x̄²/Sxx = 6.25/5 = 1.25.
    // se(m) = s/√Sxx = √0.02/(√5·L) = 0.0912440; se(d) = s·√(1/4 + 1.25) = √0.03 = 0.1732051.
    // Half-width h = t_{0.975,2}·s·√(1 + 1/4 + 1.25) = 4.30265273·√(0.02·2.5)
    //             = 4.30265273·0.22360680 = 0.96210240.
    // Interval 16·e^{∓h} = 16·0.382089 = 6.11342 and 16·2.617193 = 41.8751.
    // R² = 1 − 0.04/(5L² + 0.04) = 2.4022651/2.4422651 = 0.9836218.
    let d = 0.1f64;
    let times = [d.exp(), 2.0 * (-d).exp(), 4.0 * (-d).exp(), 8.0 * d.exp()];
    let fit = fit_power_law(&[1.0, 2.0, 4.0, 8.0], &times, 16.0).unwrap();
    let l = 2f64.ln();
    assert!((fit.fractal_dimension - 1.0).abs() < 1e-12);
    assert!((fit.intercept - 4.0 * l).abs() < 1e-12);
    assert!((fit.prediction_seconds - 16.0).abs() < 1e-10);
    assert!((fit.residual_standard_error - 0.02f64.sqrt()).abs() < 1e-12);
    assert!((fit.log_size_mean + 2.5 * l).abs() < 1e-12);
    assert!((fit.log_size_sxx - 5.0 * l * l).abs() < 1e-12);
    assert!((fit.fractal_dimension_se - 0.02f64.sqrt() / (5f64.sqrt() * l)).abs() < 1e-10);
    assert!((fit.intercept_se - 0.03f64.sqrt()).abs() < 1e-10);
    assert!((fit.t_quantile - 4.302_652_729_749_464).abs() < 1e-9);
    let h = 4.302_652_729_749_464 * 0.05f64.sqrt();
    assert!((h - 0.962_102_40).abs() < 1e-8);
    let [lo, hi] = fit.prediction_interval_seconds;
    assert!((lo - 16.0 * (-h).exp()).abs() < 1e-9 && (lo - 6.11342).abs() < 1e-5);
    assert!((hi - 16.0 * h.exp()).abs() < 1e-9 && (hi - 41.8751).abs() < 1e-4);
    let r2 = 5.0 * l * l / (5.0 * l * l + 0.04);
    assert!((fit.r_squared - r2).abs() < 1e-12 && (r2 - 0.983_621_8).abs() < 1e-7);
    for (r, s) in fit.residuals.iter().zip([1.0, -1.0, -1.0, 1.0]) {
        assert!((r - s * d).abs() < 1e-12);
    }
    // predict_at the target reproduces the prediction; at a measured size the interval
    // is narrower (leverage smaller).
    assert_eq!(fit.predict_at(16.0).0, fit.prediction_seconds);
    let (p4, lo4, hi4) = fit.predict_at(4.0);
    assert!((p4 - 4.0).abs() < 1e-10);
    assert!(hi4 / lo4 < hi / lo);
    assert!(fit.predict_at(0.0).0.is_nan());
}

#[test]
fn degenerate_inputs() {
    let t3 = [1.0, 2.0, 4.0];
    assert!(matches!(
        fit_power_law(&[1.0, 2.0], &[1.0, 2.0], 8.0),
        Err(FitError::TooFewPoints {
            needed: 3,
            got: 2,
            ..
        })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, 3.0], &[1.0, 2.0], 8.0),
        Err(FitError::LengthMismatch {
            expected: 3,
            got: 2,
            ..
        })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, 3.0], &[1.0, 0.0, 4.0], 8.0),
        Err(FitError::NotPositive { index: 1, .. })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, 3.0], &[1.0, -2.0, 4.0], 8.0),
        Err(FitError::NotPositive { index: 1, .. })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, 3.0], &[1.0, f64::NAN, 4.0], 8.0),
        Err(FitError::NotFinite { index: 1, .. })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, f64::INFINITY, 3.0], &t3, 8.0),
        Err(FitError::NotFinite { index: 1, .. })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, -2.0, 3.0], &t3, 8.0),
        Err(FitError::NotPositive { index: 1, .. })
    ));
    assert!(matches!(
        fit_power_law(&[2.0, 1.0, 2.0], &t3, 8.0),
        Err(FitError::DuplicateSize {
            first: 0,
            second: 2,
            ..
        })
    ));
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, 3.0], &t3, 0.0),
        Err(FitError::BadTarget(_))
    ));
    assert!(matches!(
        fit_power_law(&[1.0, 2.0, 3.0], &t3, f64::NAN),
        Err(FitError::BadTarget(_))
    ));
    // The messages name what to fix.
    let e = fit_power_law(&[1.0, 2.0, 2.0], &t3, 8.0).unwrap_err();
    assert!(e.to_string().contains("size 2 appears twice"), "{e}");
}

#[test]
fn target_inside_range_is_flagged_not_refused() {
    let sizes = [1.0, 2.0, 4.0, 8.0];
    let times: Vec<f64> = sizes.iter().map(|n: &f64| 3.0 * n.powi(2)).collect();
    let fit = fit_power_law(&sizes, &times, 3.0).unwrap();
    assert!(fit.interpolation);
    assert!(fit.notes.iter().any(|n| n.contains("interpolation")));
    assert!(rel(fit.prediction_seconds, 27.0) < 1e-12);
    // At a measured size the target coincides with a point: x = 0 there.
    assert!(fit_power_law(&sizes, &times, 8.0).unwrap().interpolation);
}

#[test]
fn offset_variant_recovers_power_part() {
    let (a, c, v) = (1e-9, 2.0, 1e-3);
    let sizes = [100.0, 200.0, 400.0, 800.0, 1600.0];
    let times: Vec<f64> = sizes.iter().map(|n| a * f64::powf(*n, c) + v).collect();
    let offsets = [v; 5];
    let fit = fit_power_law_with_offset(&sizes, &times, &offsets, 1e5).unwrap();
    assert_eq!(fit.variant, FitVariant::OffsetSubtracted);
    assert!(rel(fit.c, c) < 1e-9 && rel(fit.a, a) < 1e-9);
    assert_eq!(fit.offset_at_target_seconds, v);
    assert!(rel(fit.prediction_seconds, a * 1e10 + v) < 1e-9);
    let [lo, hi] = fit.prediction_interval_seconds;
    assert!(lo >= v && lo <= fit.prediction_seconds && hi >= fit.prediction_seconds);
    assert!(window_warnings(&fit, Some(2.0)).is_empty());
    // The paper's variant on the same data misses badly.
    let plain = fit_power_law(&sizes, &times, 1e5).unwrap();
    assert!(plain.prediction_seconds < 0.1 * fit.prediction_seconds);
}

#[test]
fn offset_proportional_to_size_is_extrapolated() {
    // offset = 1e-6 s × n launches: exact through the affine offset model.
    let sizes = [10.0, 20.0, 40.0, 80.0];
    let offsets: Vec<f64> = sizes.iter().map(|n| 1e-6 * n).collect();
    let times: Vec<f64> = sizes
        .iter()
        .zip(&offsets)
        .map(|(n, o)| 1e-7 * n * n + o)
        .collect();
    let fit = fit_power_law_with_offset(&sizes, &times, &offsets, 1000.0).unwrap();
    assert!(rel(fit.offset_at_target_seconds, 1e-3) < 1e-9);
    assert!(rel(fit.prediction_seconds, 0.1 + 1e-3) < 1e-9);
}

#[test]
fn offset_refusals_name_the_size() {
    let sizes = [1.0, 2.0, 4.0];
    let times = [1.0, 2.0, 4.0];
    let e = fit_power_law_with_offset(&sizes, &times, &[0.5, 2.0, 0.5], 8.0).unwrap_err();
    assert_eq!(
        e,
        FitError::OffsetLeavesNonPositive {
            size: 2.0,
            time: 2.0,
            offset: 2.0
        }
    );
    assert!(e.to_string().contains("at size 2"), "{e}");
    assert!(matches!(
        fit_power_law_with_offset(&sizes, &times, &[0.5, -1.0, 0.5], 8.0),
        Err(FitError::Negative { index: 1, .. })
    ));
    assert!(matches!(
        fit_power_law_with_offset(&sizes, &times, &[0.5, 0.5], 8.0),
        Err(FitError::LengthMismatch { .. })
    ));
}

#[test]
fn warnings_fire_on_constant_dominated_window() {
    // 1e-3 + 1e-9·N² at N = 100 … 1600: the constant dominates the small sizes.
    let sizes = [100.0, 200.0, 400.0, 800.0, 1600.0];
    let times: Vec<f64> = sizes.iter().map(|n| 1e-3 + 1e-9 * n * n).collect();
    let fit = fit_power_law(&sizes, &times, 1e5).unwrap();
    let w = window_warnings(&fit, Some(2.0));
    assert!(w.iter().any(|s| s.contains("far below")), "{w:?}");
    assert!(w.iter().any(|s| s.contains("residuals curve")), "{w:?}");
    let q = curvature(&fit).unwrap();
    assert!(q.quadratic > 0.0 && q.significant);
    // Without the known exponent the curvature alone still fires.
    assert!(window_warnings(&fit, None)
        .iter()
        .any(|s| s.contains("residuals curve")));
}

#[test]
fn warnings_quiet_on_clean_power_law_and_slightly_noisy_one() {
    let sizes = [1e3, 2e3, 4e3, 8e3, 16e3];
    let clean: Vec<f64> = sizes.iter().map(|n| 1e-9 * f64::powf(*n, 2.0)).collect();
    assert!(window_warnings(&fit_power_law(&sizes, &clean, 1e5).unwrap(), Some(2.0)).is_empty());
    // ±0.5 % alternating jitter: no significant curvature of practical size.
    let jitter: Vec<f64> = clean
        .iter()
        .enumerate()
        .map(|(i, t)| t * if i % 2 == 0 { 1.005 } else { 0.995 })
        .collect();
    let fit = fit_power_law(&sizes, &jitter, 1e5).unwrap();
    assert!(window_warnings(&fit, Some(2.0)).is_empty());
}

#[test]
fn other_warnings() {
    let three = fit_power_law(&[1.0, 2.0, 4.0], &[1.0, 2.0, 4.0], 64.0).unwrap();
    let w = window_warnings(&three, Some(1.0));
    assert!(w.iter().any(|s| s.contains("only 3 points")), "{w:?}");
    let steep = fit_power_law(&[1.0, 2.0, 4.0, 8.0], &[1.0, 8.0, 64.0, 512.0], 64.0).unwrap();
    let w = window_warnings(&steep, Some(1.0));
    assert!(w.iter().any(|s| s.contains("far above")), "{w:?}");
    let flat = fit_power_law(&[10.0, 11.0, 12.0, 13.0], &[5.0, 4.0, 3.0, 2.0], 64.0).unwrap();
    let w = window_warnings(&flat, None);
    assert!(w.iter().any(|s| s.contains("≤ 0")), "{w:?}");
    assert!(w.iter().any(|s| s.contains("spans less")), "{w:?}");
}

proptest! {
    #[test]
    fn recovers_any_power_law(
        a in 1e-12f64..1e3,
        c in 0.1f64..4.0,
        n0 in 1.0f64..1e4,
        ratio in 1.2f64..4.0,
        k in 3usize..8,
        reach in 1.5f64..1e3,
    ) {
        let sizes: Vec<f64> = (0..k).map(|i| n0 * ratio.powi(i as i32)).collect();
        let times: Vec<f64> = sizes.iter().map(|n| a * n.powf(c)).collect();
        let target = sizes[k - 1] * reach;
        let fit = fit_power_law(&sizes, &times, target).unwrap();
        prop_assert!(rel(fit.c, c) < 1e-8);
        prop_assert!(rel(fit.a, a) < 1e-6);
        prop_assert!(rel(fit.prediction_seconds, a * target.powf(c)) < 1e-8);
        let [lo, hi] = fit.prediction_interval_seconds;
        prop_assert!(lo <= fit.prediction_seconds && fit.prediction_seconds <= hi);
    }
}
