//! The fractal (log-log) run-time model of Escobar & Boppana, "Fractal-based performance
//! prediction of parallel CPU and GPU applications", IEEE HPCC 2018 (docs/models.md §2).
//!
//! A phase whose time grows as `T = a·N^c` (paper eq. 1) is a straight line on log-log axes:
//! `ln T_i = ln a + c·ln n_i` (eq. 2). The paper normalises the sizes by the target n_L, so
//! that with `x_i = ln(n_i / n_L)` and `y_i = ln T_i` the least-squares line
//! `y = m·x + d` (eq. 4, the "fractal equation") has the prediction at the target as its
//! intercept: `T(n_L) = e^d`. The slope `m` is the phase's fractal dimension, its real
//! complexity exponent, which need not be an integer; `c = m` and `a = e^d / n_L^m`.
//!
//! Beyond the paper this module reports the standard errors, R², the residuals and a 95 %
//! prediction interval for a new run at n_L, flags a target inside the measured range
//! (interpolation), offers a variant that subtracts a known constant part first (the paper
//! drops the constant `v` of `a·N^c + v`), and diagnoses windows where the power law does not
//! hold ([`window_warnings`]).
//!
//! This file holds the fit; the window diagnostics ([`curvature`], [`window_warnings`] and
//! their thresholds) are in `diagnostics`.

mod diagnostics;

pub use diagnostics::{
    curvature, window_warnings, Curvature, CURVATURE_ALPHA, CURVATURE_MIN_EFFECT,
    EXPONENT_HIGH_RATIO, EXPONENT_LOW_RATIO, MIN_WINDOW_SPAN,
};

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::fit_error::FitError;

/// The fewest runs the fit accepts: two for the line plus one degree of freedom for the
/// residual variance that the prediction interval needs (Student t with k − 2 dof).
pub const MIN_POINTS: usize = 3;

/// Coverage of the prediction interval: a new run at the target falls inside it with this
/// probability when the log-times scatter normally about the line.
pub const PREDICTION_LEVEL: f64 = 0.95;

/// Which form of the model was fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FitVariant {
    /// The paper's `T = a·N^c`, the constant ignored (serialised as `"paper"`).
    Paper,
    /// `T = a·N^c + offset` with the offset known and subtracted before the log-log fit
    /// (serialised as `"offset-subtracted"`).
    OffsetSubtracted,
}

/// A fractal fit of one phase and its prediction at the target size n_L.
///
/// All times are in seconds (any unit works if used throughout; the prediction comes back in
/// it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FractalFit {
    /// The paper's model or the offset-subtracted one.
    pub variant: FitVariant,
    /// The target size n_L.
    pub target: f64,
    /// Number of runs fitted, k.
    pub points: usize,
    /// The sizes n_i, in the order given.
    pub sizes: Vec<f64>,
    /// The measured times T_i, seconds.
    pub times_seconds: Vec<f64>,
    /// The known constant subtracted from each time before taking logs (zeros for the
    /// paper's variant), seconds.
    pub offsets_seconds: Vec<f64>,
    /// `x_i = ln(n_i / n_L)`.
    pub log_sizes: Vec<f64>,
    /// `y_i = ln(T_i − offset_i)`.
    pub log_times: Vec<f64>,
    /// Residuals `y_i − (m·x_i + d)` on the log scale (≈ relative errors).
    pub residuals: Vec<f64>,
    /// The slope m of `y = m·x + d` (eq. 4): the phase's fractal dimension.
    pub fractal_dimension: f64,
    /// Standard error of m, `s / √Sxx`.
    pub fractal_dimension_se: f64,
    /// The intercept d of `y = m·x + d`: `ln T(n_L)`.
    pub intercept: f64,
    /// Standard error of d, `s·√(1/k + x̄²/Sxx)`.
    pub intercept_se: f64,
    /// `a` of `T = a·N^c` (eq. 1): `e^d / n_L^m`, seconds per size^c.
    pub a: f64,
    /// `c` of `T = a·N^c` (eq. 1): equal to m.
    pub c: f64,
    /// Coefficient of determination of the log-log line (1 when the times are constant and
    /// the line is exact).
    pub r_squared: f64,
    /// `s = √(Σ residual² / (k − 2))`, the residual standard error on the log scale.
    pub residual_standard_error: f64,
    /// `t_{0.975, k−2}`, the Student t quantile used for the interval.
    pub t_quantile: f64,
    /// `x̄`, the mean of the `x_i`.
    pub log_size_mean: f64,
    /// `Sxx = Σ (x_i − x̄)²`.
    pub log_size_sxx: f64,
    /// Smallest and largest size fitted.
    pub fit_range: [f64; 2],
    /// Predicted time at n_L: `e^d` plus the offset at n_L. `e^d` estimates the median of a
    /// run's time (the log-times are averaged), not its mean.
    pub prediction_seconds: f64,
    /// 95 % prediction interval for one new run at n_L:
    /// `exp(d ± t_{0.975,k−2}·s·√(1 + 1/k + x̄²/Sxx))` plus the offset at n_L.
    pub prediction_interval_seconds: [f64; 2],
    /// The known constant added back at n_L (0 for the paper's variant), seconds.
    pub offset_at_target_seconds: f64,
    /// The offset as a function of size used by [`FractalFit::predict_at`]:
    /// `offset(n) = [0] + [1]·n`, the least-squares line through the given offsets (exact
    /// when they are constant or proportional to n); zeros for the paper's variant.
    pub offset_model: [f64; 2],
    /// True when n_L lies inside `fit_range`: the "prediction" interpolates.
    pub interpolation: bool,
    /// Remarks about the fit for the reader (interpolation, how the offset was extrapolated).
    pub notes: Vec<String>,
}

/// Checks a size/time series: equal lengths, at least `min_points`, sizes positive, finite
/// and distinct, times finite. Times are not required to be positive here; callers that take
/// their logarithm check that themselves.
pub fn validate_series(
    sizes: &[f64],
    times: &[f64],
    min_points: usize,
    model: &str,
) -> Result<(), FitError> {
    if sizes.len() != times.len() {
        return Err(FitError::LengthMismatch {
            what: "times".into(),
            expected: sizes.len(),
            got: times.len(),
        });
    }
    if sizes.len() < min_points {
        return Err(FitError::TooFewPoints {
            model: model.into(),
            needed: min_points,
            got: sizes.len(),
        });
    }
    for (i, &n) in sizes.iter().enumerate() {
        if !n.is_finite() {
            return Err(FitError::NotFinite {
                what: "sizes".into(),
                index: i,
                value: n,
            });
        }
        if n <= 0.0 {
            return Err(FitError::NotPositive {
                what: "sizes".into(),
                index: i,
                value: n,
            });
        }
    }
    if let Some((i, &t)) = times.iter().enumerate().find(|(_, t)| !t.is_finite()) {
        return Err(FitError::NotFinite {
            what: "times".into(),
            index: i,
            value: t,
        });
    }
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&i, &j| sizes[i].total_cmp(&sizes[j]));
    for w in order.windows(2) {
        if sizes[w[0]] == sizes[w[1]] {
            return Err(FitError::DuplicateSize {
                size: sizes[w[0]],
                first: w[0].min(w[1]),
                second: w[0].max(w[1]),
            });
        }
    }
    Ok(())
}

/// The paper's fractal fit: `x_i = ln(n_i/n_L)`, `y_i = ln T_i`, least squares
/// `y = m·x + d` (eq. 4), predicted time at n_L `T(n_L) = e^d`, with `c = m` and
/// `a = e^d / n_L^m` (eq. 1).
///
/// The 95 % prediction interval for a new run at n_L (x = 0) is
/// `exp(d ± t_{0.975,k−2}·s·√(1 + 1/k + x̄²/Sxx))`. A target inside the measured range is
/// allowed and sets [`FractalFit::interpolation`].
///
/// Refuses fewer than [`MIN_POINTS`] runs, mismatched lengths, non-finite or non-positive
/// sizes or times, repeated sizes and a non-positive target.
///
/// ```
/// use harness::fit::fractal::fit_power_law;
/// // T = 2·N^1.5 at N = 1, 4, 16; predict N = 64: 2·64^1.5 = 1024.
/// let fit = fit_power_law(&[1.0, 4.0, 16.0], &[2.0, 16.0, 128.0], 64.0).unwrap();
/// assert!((fit.prediction_seconds - 1024.0).abs() < 1e-9);
/// assert!((fit.c - 1.5).abs() < 1e-12 && (fit.a - 2.0).abs() < 1e-12);
/// ```
pub fn fit_power_law(sizes: &[f64], times: &[f64], target: f64) -> Result<FractalFit, FitError> {
    validate_series(sizes, times, MIN_POINTS, "the fractal fit")?;
    let zeros = vec![0.0; sizes.len()];
    fit_log_log(sizes, times, &zeros, target, FitVariant::Paper)
}

/// The fractal fit of `T = a·N^c + offset` with the offset known: fits `ln(T_i − o_i)`
/// against `x_i = ln(n_i/n_L)` as in [`fit_power_law`] and adds the offset at n_L back:
/// `T(n_L) = e^d + o(n_L)`, and likewise to both ends of the prediction interval (the offset
/// is taken as exact).
///
/// `offset_seconds_per_point[i]` is the constant part of run i, e.g. launch overhead ×
/// launches. The offset at n_L is extrapolated by the least-squares line through the offsets
/// against n ([`FractalFit::offset_model`]), which is exact when they are equal (a fixed
/// number of launches) or proportional to n, and is clamped at zero. For any other law,
/// subtract the offsets yourself, call [`fit_power_law`] and add the offset at n_L.
///
/// Refuses a negative or non-finite offset, and an offset that leaves a non-positive time
/// ([`FitError::OffsetLeavesNonPositive`], naming the size).
///
/// ```
/// use harness::fit::fractal::fit_power_law_with_offset;
/// // T = N^2 + 10 at N = 1, 2, 4, 8; predict N = 16: 256 + 10.
/// let fit = fit_power_law_with_offset(
///     &[1.0, 2.0, 4.0, 8.0],
///     &[11.0, 14.0, 26.0, 74.0],
///     &[10.0; 4],
///     16.0,
/// )
/// .unwrap();
/// assert!((fit.prediction_seconds - 266.0).abs() < 1e-9);
/// ```
pub fn fit_power_law_with_offset(
    sizes: &[f64],
    times: &[f64],
    offset_seconds_per_point: &[f64],
    target: f64,
) -> Result<FractalFit, FitError> {
    validate_series(sizes, times, MIN_POINTS, "the fractal fit")?;
    if offset_seconds_per_point.len() != sizes.len() {
        return Err(FitError::LengthMismatch {
            what: "offsets".into(),
            expected: sizes.len(),
            got: offset_seconds_per_point.len(),
        });
    }
    for (i, &o) in offset_seconds_per_point.iter().enumerate() {
        if !o.is_finite() {
            return Err(FitError::NotFinite {
                what: "offsets".into(),
                index: i,
                value: o,
            });
        }
        if o < 0.0 {
            return Err(FitError::Negative {
                what: "offsets".into(),
                index: i,
                value: o,
            });
        }
    }
    for i in 0..sizes.len() {
        // A time that is itself non-positive is reported as such, not as an offset problem.
        if times[i] > 0.0 && times[i] - offset_seconds_per_point[i] <= 0.0 {
            return Err(FitError::OffsetLeavesNonPositive {
                size: sizes[i],
                time: times[i],
                offset: offset_seconds_per_point[i],
            });
        }
    }
    fit_log_log(
        sizes,
        times,
        offset_seconds_per_point,
        target,
        FitVariant::OffsetSubtracted,
    )
}

/// The shared core: validated sizes and times, offsets checked.
fn fit_log_log(
    sizes: &[f64],
    times: &[f64],
    offsets: &[f64],
    target: f64,
    variant: FitVariant,
) -> Result<FractalFit, FitError> {
    if !(target.is_finite() && target > 0.0) {
        return Err(FitError::BadTarget(target));
    }
    if let Some((i, &t)) = times.iter().enumerate().find(|(_, &t)| t <= 0.0) {
        return Err(FitError::NotPositive {
            what: "times".into(),
            index: i,
            value: t,
        });
    }
    let k = sizes.len();
    let x: Vec<f64> = sizes.iter().map(|n| (n / target).ln()).collect();
    let y: Vec<f64> = times
        .iter()
        .zip(offsets)
        .map(|(t, o)| (t - o).ln())
        .collect();
    let (d, m, d_se, m_se, _) = super::linear::ols_line(&x, &y).map_err(FitError::Regression)?;

    let kf = k as f64;
    let x_mean = x.iter().sum::<f64>() / kf;
    let y_mean = y.iter().sum::<f64>() / kf;
    let sxx: f64 = x.iter().map(|xi| (xi - x_mean).powi(2)).sum();
    let syy: f64 = y.iter().map(|yi| (yi - y_mean).powi(2)).sum();
    let residuals: Vec<f64> = x.iter().zip(&y).map(|(xi, yi)| yi - (m * xi + d)).collect();
    let ssr: f64 = residuals.iter().map(|r| r * r).sum();
    let s = (ssr / (kf - 2.0)).sqrt();
    let r_squared = if syy > 0.0 { 1.0 - ssr / syy } else { 1.0 };
    let t_quantile = t_quantile(PREDICTION_LEVEL, k - 2)?;

    let fit_range = [
        sizes.iter().copied().fold(f64::INFINITY, f64::min),
        sizes.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ];
    let interpolation = target >= fit_range[0] && target <= fit_range[1];
    let mut notes = Vec::new();
    if interpolation {
        notes.push(format!(
            "target {target} lies inside the fitted range [{}, {}]: this is an interpolation",
            fit_range[0], fit_range[1]
        ));
    } else if target < fit_range[0] {
        notes.push(format!(
            "target {target} lies below the fitted range [{}, {}]",
            fit_range[0], fit_range[1]
        ));
    }
    let offset_model = match variant {
        FitVariant::Paper => [0.0, 0.0],
        FitVariant::OffsetSubtracted => offset_line(sizes, offsets),
    };
    let offset_at = |n: f64| (offset_model[0] + offset_model[1] * n).max(0.0);
    let offset_at_target = offset_at(target);
    if variant == FitVariant::OffsetSubtracted {
        if offset_model[1] == 0.0 {
            notes.push(format!(
                "constant offset {offset_at_target:.4e} s subtracted and added back at the target"
            ));
        } else {
            notes.push(format!(
                "offset extrapolated linearly in n to {offset_at_target:.4e} s at the target"
            ));
        }
    }

    let mut fit = FractalFit {
        variant,
        target,
        points: k,
        sizes: sizes.to_vec(),
        times_seconds: times.to_vec(),
        offsets_seconds: offsets.to_vec(),
        log_sizes: x,
        log_times: y,
        residuals,
        fractal_dimension: m,
        fractal_dimension_se: m_se,
        intercept: d,
        intercept_se: d_se,
        a: d.exp() / target.powf(m),
        c: m,
        r_squared,
        residual_standard_error: s,
        t_quantile,
        log_size_mean: x_mean,
        log_size_sxx: sxx,
        fit_range,
        prediction_seconds: 0.0,
        prediction_interval_seconds: [0.0, 0.0],
        offset_at_target_seconds: offset_at_target,
        offset_model,
        interpolation,
        notes,
    };
    if fit
        .log_times
        .iter()
        .all(|v| (v - fit.log_times[0]).abs() < 1e-12)
    {
        fit.notes.push(
            "the times are equal at every size: the fitted exponent is 0 up to rounding and R² says nothing (there is no variance to explain)"
                .into(),
        );
    }
    let (point, lo, hi) = fit.predict_at(target);
    if !(point.is_finite() && hi.is_finite()) {
        return Err(FitError::Overflow {
            target,
            exponent: fit.c,
        });
    }
    fit.prediction_seconds = point;
    fit.prediction_interval_seconds = [lo, hi];
    Ok(fit)
}

impl FractalFit {
    /// The fitted line at another size n, with its 95 % prediction interval:
    /// `x = ln(n/n_L)`, `ŷ = m·x + d`, half-width `h = t_{0.975,k−2}·s·√(1 + 1/k + (x − x̄)²/Sxx)`;
    /// returns `(e^ŷ, e^{ŷ−h}, e^{ŷ+h})`, each plus the offset at n for the offset-subtracted
    /// variant. At n = n_L this is the fit's own prediction. A non-positive n gives NaNs.
    pub fn predict_at(&self, n: f64) -> (f64, f64, f64) {
        if n.is_nan() || n <= 0.0 {
            return (f64::NAN, f64::NAN, f64::NAN);
        }
        let x = (n / self.target).ln();
        let y_hat = self.fractal_dimension * x + self.intercept;
        let k = self.points as f64;
        let leverage = 1.0 / k + (x - self.log_size_mean).powi(2) / self.log_size_sxx;
        let h = self.t_quantile * self.residual_standard_error * (1.0 + leverage).sqrt();
        let offset = match self.variant {
            FitVariant::Paper => 0.0,
            FitVariant::OffsetSubtracted => {
                (self.offset_model[0] + self.offset_model[1] * n).max(0.0)
            }
        };
        (
            y_hat.exp() + offset,
            (y_hat - h).exp() + offset,
            (y_hat + h).exp() + offset,
        )
    }
}

/// The least-squares line `offset(n) = b0 + b1·n` through the offsets; exactly constant when
/// they are all equal, so that a fixed overhead comes back bit for bit.
pub(super) fn offset_line(sizes: &[f64], offsets: &[f64]) -> [f64; 2] {
    if offsets.iter().all(|&o| o == offsets[0]) {
        return [offsets[0], 0.0];
    }
    let k = sizes.len() as f64;
    let nm = sizes.iter().sum::<f64>() / k;
    let om = offsets.iter().sum::<f64>() / k;
    let snn: f64 = sizes.iter().map(|n| (n - nm).powi(2)).sum();
    let sno: f64 = sizes
        .iter()
        .zip(offsets)
        .map(|(n, o)| (n - nm) * (o - om))
        .sum();
    let b1 = sno / snn;
    [om - b1 * nm, b1]
}

/// The two-sided Student t quantile `t_{(1+level)/2, dof}`.
pub(super) fn t_quantile(level: f64, dof: usize) -> Result<f64, FitError> {
    let dist = StudentsT::new(0.0, 1.0, dof as f64)
        .map_err(|e| FitError::Regression(format!("Student t with {dof} dof: {e}")))?;
    Ok(dist.inverse_cdf(0.5 + level / 2.0))
}

#[cfg(test)]
mod tests;
