//! Two small statistics of a window that the estimators share: the amount (bytes or work
//! items) a phase does at the target, from the polynomial in N its amounts follow
//! ([`amount_at_target`]), and the mean of a quantity measured once at each size with the
//! half-width of its 95 % prediction interval ([`mean_and_half_width`]).

/// The mean of `values` (one quantity measured at each of k sizes) and the half-width of
/// its 95 % prediction interval for one more measurement, `t_{0.975,k−1}·s·√(1 + 1/k)`, s the
/// sample standard deviation.
pub(super) fn mean_and_half_width(values: &[f64]) -> (f64, f64) {
    let k = values.len();
    let mean = values.iter().sum::<f64>() / k as f64;
    let s = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1) as f64).sqrt();
    let half = crate::fit::linear::t_quantile_95(k - 1) * s * (1.0 + 1.0 / k as f64).sqrt();
    (mean, half)
}

/// The amount (bytes or work items) a phase does at `target`, from its amounts over the
/// window. What a workload counts is a polynomial in N of low degree ((N − 2)³ interior points
/// of a 3-D grid, (N − 2)²·N bytes of a sweep, n elements), so the lowest degree up to 3 that
/// reproduces every amount of the window (to 10⁻⁹, relative, with at least one point to spare)
/// gives it exactly; where none does (amounts rounded to whole work-groups), the log-log line
/// through them. (Until 2026-11-25 it was always the log-log line, whose local slope over a
/// small window carries the lower-order terms on: ADI's sweeps, (N − 2)²·N, were taken 11.8 %
/// too large at N = 204 from N = 25…51, lu-ssor's interior points 15 % at 260 from 34…65.)
pub fn amount_at_target(sizes: &[f64], amounts: &[f64], target: f64) -> Option<f64> {
    let n = amounts.len();
    for degree in 1..=3usize {
        if n < degree + 2 {
            break;
        }
        let Ok(fit) = crate::fit::baselines::fit_polynomial(sizes, amounts, degree, target) else {
            continue;
        };
        let exact = fit
            .residuals
            .iter()
            .zip(amounts)
            .all(|(r, a)| (r / a).abs() <= 1e-9);
        if exact && fit.prediction_seconds > 0.0 {
            return Some(fit.prediction_seconds);
        }
    }
    let log_sizes: Vec<f64> = sizes.iter().map(|s| s.ln()).collect();
    let log_amounts: Vec<f64> = amounts.iter().map(|b| b.ln()).collect();
    let line = crate::fit::linear::fit_line(&log_sizes, &log_amounts).ok()?;
    Some((line.intercept + line.slope * target.ln()).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_amount_at_the_target_is_the_windows_polynomial_not_its_log_log_line() {
        // ADI's sweep moves (N − 2)²·N cells' worth of bytes: from N = 25…51 the log-log line
        // (local slope ≈ 3.2) took N = 204 11.8 % too large (stored suite runs 1–19).
        let sizes = [25.0, 30.0, 36.0, 43.0, 51.0];
        let sweep = |n: f64| 8.0 * 35.0 * (n - 2.0) * (n - 2.0) * n;
        let amounts: Vec<f64> = sizes.iter().map(|&n| sweep(n)).collect();
        let at = amount_at_target(&sizes, &amounts, 204.0).expect("amount");
        assert!((at / sweep(204.0) - 1.0).abs() < 1e-9, "{at}");
        let log_sizes: Vec<f64> = sizes.iter().map(|s: &f64| s.ln()).collect();
        let logs: Vec<f64> = amounts.iter().map(|a| a.ln()).collect();
        let line = crate::fit::linear::fit_line(&log_sizes, &logs).expect("line");
        let old = (line.intercept + line.slope * 204f64.ln()).exp();
        assert!(
            old / sweep(204.0) > 1.1,
            "the log-log line overshoots: {old}"
        );
        // A linear amount is found at degree 1.
        let vadd: Vec<f64> = sizes.iter().map(|&n| 12.0 * n).collect();
        assert!((amount_at_target(&sizes, &vadd, 400.0).expect("amount") - 4800.0).abs() < 1e-6);
        // Amounts no polynomial of degree ≤ 3 reproduces (rounded up to whole groups of
        // 64) fall back to the log-log line; four points cannot vouch for a cubic.
        let rounded: Vec<f64> = sizes
            .iter()
            .map(|&n| (n.powf(2.5) / 64.0).ceil() * 64.0)
            .collect();
        let fallback = amount_at_target(&sizes, &rounded, 204.0).expect("amount");
        assert!(fallback > 0.0 && (fallback / 204f64.powf(2.5) - 1.0).abs() < 0.1);
        let four = &amounts[1..];
        let at4 = amount_at_target(&sizes[1..], four, 204.0).expect("amount");
        assert!((at4 / sweep(204.0) - 1.0).abs() > 1e-3);
    }
}
