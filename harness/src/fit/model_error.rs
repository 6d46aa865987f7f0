//! The `calibrated` prediction's own error (docs/models.md §2.4, "The model's error").
//!
//! Each interval the calibrated variant builds allows for what its inputs say about
//! themselves: the fit's residuals, the repeats' noise, the rates the target's level may run
//! at, the machine's drift. None of them allows for the model being wrong about a kernel —
//! a mechanism no rule covers, a pattern the spec did not declare — and on the development
//! ports those intervals held the measured time in 86 % of the cases, not 95 %. So every
//! calibrated interval is widened, in log space and in quadrature, by the model's own error,
//! measured on the development halves as a split-conformal quantile: the smallest widening
//! that would have held at least ⌈0.95·(n + 1)⌉ of their n cases. It is judged, as every
//! rule is, on the held-out halves.

/// The `calibrated` model's own error: a 95 % half-width in natural log units (×/÷ e^0.53,
/// about 1.70), added in quadrature to each side of every calibrated interval
/// ([`widen_for_model_error`]). Derived from the development halves of `kernels/ports/`
/// (the stored series in `harness/tests/fixtures/ports/`) by [`conformal_quantile`] over
/// [`model_error_needed`], rounded up to two decimals; `tests/accuracy.rs` derives it again
/// and fails when the stored value no longer matches.
pub const MODEL_ERROR: f64 = 0.53;

/// `[lo, hi]` around `estimate` widened by a model error `m` (log units): each side's log
/// half-width and m added in quadrature,
/// `hi' = e·exp(√(ln(hi/e)² + m²))`, `lo' = e·exp(−√(ln(e/lo)² + m²))`; a lower end at 0
/// stays there, and an interval that does not hold its estimate, or a non-positive
/// estimate, is returned as it is.
pub fn widen_for_model_error(estimate: f64, interval: [f64; 2], m: f64) -> [f64; 2] {
    let [lo, hi] = interval;
    if !(estimate > 0.0 && estimate.is_finite() && lo <= estimate && estimate <= hi) {
        return interval;
    }
    let up = (hi / estimate).ln().hypot(m);
    let lo = if lo > 0.0 {
        estimate * (-(estimate / lo).ln().hypot(m)).exp()
    } else {
        lo
    };
    [lo, estimate * up.exp()]
}

/// The smallest model error (log units) that would have made `interval` (already widened by
/// `applied`, [`widen_for_model_error`]) hold `measured`: 0 where it holds without any; on
/// the side the measured time fell, `√(d² − h²)` with `d = ln(measured/estimate)` and h that
/// side's log half-width before the widening, `√(H² − applied²)`. `None` for a non-positive
/// or non-finite time, or an interval that does not hold its estimate.
pub fn model_error_needed(
    measured: f64,
    estimate: f64,
    interval: [f64; 2],
    applied: f64,
) -> Option<f64> {
    let [lo, hi] = interval;
    let valid = |x: f64| x.is_finite() && x > 0.0;
    if !(valid(measured) && valid(estimate) && lo <= estimate && estimate <= hi) {
        return None;
    }
    let d = (measured / estimate).ln();
    let widened = if d >= 0.0 {
        (hi / estimate).ln()
    } else if lo > 0.0 {
        (estimate / lo).ln()
    } else {
        return Some(0.0);
    };
    let before = (widened * widened - applied * applied).max(0.0);
    Some((d * d - before).max(0.0).sqrt())
}

/// The split-conformal quantile of `scores` for `coverage` (0.95): the ⌈coverage·(n + 1)⌉-th
/// smallest of the n scores, so that a new case exchangeable with them falls at or below it
/// with probability at least `coverage`. `None` where n is too small for that rank (19 scores
/// for 0.95) or a score is not a number.
pub fn conformal_quantile(scores: &[f64], coverage: f64) -> Option<f64> {
    if scores.iter().any(|s| s.is_nan()) || !(0.0..1.0).contains(&coverage) {
        return None;
    }
    let n = scores.len();
    // Less a hair, so that 0.95·20 (19.000000000000004 in floating point) is rank 19.
    let rank = (coverage * (n + 1) as f64 - 1e-9).ceil() as usize;
    if rank == 0 || rank > n {
        return None;
    }
    let mut sorted = scores.to_vec();
    sorted.sort_by(f64::total_cmp);
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_widening_adds_in_quadrature_in_log_space() {
        // An estimate of 2 s with [1.6, 2.5]: log half-widths ln 1.25 on both sides; with
        // m = ln 1.25·√3 each becomes 2·ln 1.25 (√(1 + 3) = 2): [1.28, 3.125].
        let m = 1.25f64.ln() * 3f64.sqrt();
        let [lo, hi] = widen_for_model_error(2.0, [1.6, 2.5], m);
        assert!((lo - 2.0 / 1.5625).abs() < 1e-12, "{lo}");
        assert!((hi - 3.125).abs() < 1e-12, "{hi}");
        // A point interval becomes ×/÷ e^m; a lower end at 0 stays.
        let [lo, hi] = widen_for_model_error(1.0, [1.0, 1.0], 0.5);
        assert!((lo - (-0.5f64).exp()).abs() < 1e-12 && (hi - 0.5f64.exp()).abs() < 1e-12);
        assert_eq!(widen_for_model_error(1.0, [0.0, 1.0], 0.5)[0], 0.0);
        // Nothing to widen around: returned as it is.
        assert_eq!(widen_for_model_error(0.0, [0.0, 1.0], 0.5), [0.0, 1.0]);
        assert_eq!(widen_for_model_error(3.0, [1.0, 2.0], 0.5), [1.0, 2.0]);
        assert_eq!(widen_for_model_error(1.0, [0.5, 2.0], 0.0), [0.5, 2.0]);
    }

    #[test]
    fn the_error_needed_inverts_the_widening() {
        let raw = [1.6, 2.5];
        let m = 0.4;
        let wide = widen_for_model_error(2.0, raw, m);
        // Measured 5 s: d = ln 2.5, the raw upper half-width ln 1.25.
        let want = (2.5f64.ln().powi(2) - 1.25f64.ln().powi(2)).sqrt();
        let got = model_error_needed(5.0, 2.0, wide, m).unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        assert!((model_error_needed(5.0, 2.0, raw, 0.0).unwrap() - want).abs() < 1e-12);
        // Below: d = ln(0.5/2), the raw lower half-width ln 1.25.
        let want = (4f64.ln().powi(2) - 1.25f64.ln().powi(2)).sqrt();
        let got = model_error_needed(0.5, 2.0, wide, m).unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        // Inside the raw interval, or below a lower end at 0: none needed.
        assert_eq!(model_error_needed(2.2, 2.0, wide, m), Some(0.0));
        assert_eq!(model_error_needed(0.01, 2.0, [0.0, 2.5], 0.0), Some(0.0));
        // Widening by exactly the error needed makes the interval reach the measured time.
        let need = model_error_needed(7.0, 2.0, raw, 0.0).unwrap();
        let reach = widen_for_model_error(2.0, raw, need)[1];
        assert!((reach - 7.0).abs() < 1e-9, "{reach}");
        // Nonsense has no answer.
        assert_eq!(model_error_needed(f64::NAN, 2.0, raw, 0.0), None);
        assert_eq!(model_error_needed(1.0, 0.0, raw, 0.0), None);
        assert_eq!(model_error_needed(1.0, 3.0, raw, 0.0), None);
    }

    #[test]
    fn the_conformal_quantile_takes_the_rank_above_the_coverage() {
        // 19 scores 1..=19: rank ⌈0.95·20⌉ = 19, the largest; 18 are too few.
        let scores: Vec<f64> = (1..=19).rev().map(f64::from).collect();
        assert_eq!(conformal_quantile(&scores, 0.95), Some(19.0));
        assert_eq!(conformal_quantile(&scores[..18], 0.95), None);
        // 108 scores 0..108: rank ⌈0.95·109⌉ = 104, the value 103.
        let scores: Vec<f64> = (0..108).map(f64::from).collect();
        assert_eq!(conformal_quantile(&scores, 0.95), Some(103.0));
        assert_eq!(conformal_quantile(&[1.0, f64::NAN], 0.5), None);
        assert_eq!(conformal_quantile(&[], 0.95), None);
    }
}
