//! Straight-line least squares with standard errors, 95 % intervals and R², over `linregress`.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};
use thiserror::Error;

/// Errors from a linear fit.
#[derive(Debug, Error, PartialEq)]
pub enum LinearFitError {
    /// Fewer than three points leave no degrees of freedom for an interval.
    #[error("a line needs at least 3 points to give an interval, got {0}")]
    TooFewPoints(usize),
    /// x and y of different lengths.
    #[error("{x} x values but {y} y values")]
    LengthMismatch {
        /// Count of x.
        x: usize,
        /// Count of y.
        y: usize,
    },
    /// A NaN or infinite value.
    #[error("point {0} is not finite")]
    NotFinite(usize),
    /// All x equal: the slope is undefined.
    #[error("all x values are equal; the slope is undefined")]
    DegenerateX,
    /// The regression library failed.
    #[error("regression failed: {0}")]
    Regression(String),
}

/// `y = intercept + slope·x`, fitted by ordinary least squares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// The slope.
    pub slope: f64,
    /// Its standard error.
    pub slope_se: f64,
    /// Its 95 % confidence interval (Student t, n − 2 degrees of freedom).
    pub slope_ci95: [f64; 2],
    /// The intercept.
    pub intercept: f64,
    /// Its standard error.
    pub intercept_se: f64,
    /// Its 95 % confidence interval.
    pub intercept_ci95: [f64; 2],
    /// Coefficient of determination.
    pub r_squared: f64,
    /// Number of points.
    pub points: usize,
    /// Smallest and largest x used.
    pub x_range: [f64; 2],
}

/// The two-sided 95 % Student t quantile for `dof` degrees of freedom.
pub fn t_quantile_95(dof: usize) -> f64 {
    StudentsT::new(0.0, 1.0, dof.max(1) as f64)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::INFINITY)
}

/// Fit a line through `(x, y)`.
///
/// ```
/// use harness::fit::linear::fit_line;
/// let fit = fit_line(&[1.0, 2.0, 3.0, 4.0], &[3.0, 5.0, 7.0, 9.0]).unwrap();
/// assert!((fit.slope - 2.0).abs() < 1e-12 && (fit.intercept - 1.0).abs() < 1e-12);
/// ```
pub fn fit_line(x: &[f64], y: &[f64]) -> Result<LinearFit, LinearFitError> {
    if x.len() != y.len() {
        return Err(LinearFitError::LengthMismatch {
            x: x.len(),
            y: y.len(),
        });
    }
    if x.len() < 3 {
        return Err(LinearFitError::TooFewPoints(x.len()));
    }
    if let Some(i) = (0..x.len()).find(|&i| !x[i].is_finite() || !y[i].is_finite()) {
        return Err(LinearFitError::NotFinite(i));
    }
    let x_min = x.iter().copied().fold(f64::INFINITY, f64::min);
    let x_max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if x_min == x_max {
        return Err(LinearFitError::DegenerateX);
    }
    let (intercept, slope, intercept_se, slope_se, r_squared) =
        ols_line(x, y).map_err(LinearFitError::Regression)?;
    Ok(LinearFit::assemble(
        [intercept, slope],
        [intercept_se, slope_se],
        r_squared,
        [x_min, x_max],
        x.len(),
    ))
}

impl LinearFit {
    /// A fit from its estimates `[intercept, slope]` and their standard errors, with
    /// Student-t 95 % intervals on `points − 2` degrees of freedom.
    fn assemble(
        estimates: [f64; 2],
        standard_errors: [f64; 2],
        r_squared: f64,
        x_range: [f64; 2],
        points: usize,
    ) -> Self {
        let t = t_quantile_95(points - 2);
        let ci = |v: f64, se: f64| [v - t * se, v + t * se];
        LinearFit {
            slope: estimates[1],
            slope_se: standard_errors[1],
            slope_ci95: ci(estimates[1], standard_errors[1]),
            intercept: estimates[0],
            intercept_se: standard_errors[0],
            intercept_ci95: ci(estimates[0], standard_errors[0]),
            r_squared,
            points,
            x_range,
        }
    }
}

/// Fit a line minimising *relative* residuals: weighted least squares with weights `1/y²`.
///
/// Data that span orders of magnitude (transfer times from 4 KiB to 64 MiB) would otherwise be
/// fitted to the largest points alone, leaving the intercept meaningless. The intervals use
/// the weighted residual variance and Student t with n − 2 degrees of freedom; R² is the
/// weighted one. Every `y` must be positive.
///
/// ```
/// use harness::fit::linear::fit_line_relative;
/// let fit = fit_line_relative(&[1.0, 10.0, 100.0], &[12.0, 30.0, 210.0]).unwrap();
/// assert!((fit.slope - 2.0).abs() < 1e-9 && (fit.intercept - 10.0).abs() < 1e-9);
/// ```
pub fn fit_line_relative(x: &[f64], y: &[f64]) -> Result<LinearFit, LinearFitError> {
    let plain = fit_line(x, y)?;
    if let Some(i) = y.iter().position(|&v| v <= 0.0) {
        return Err(LinearFitError::NotFinite(i));
    }
    let w: Vec<f64> = y.iter().map(|v| 1.0 / (v * v)).collect();
    let total: f64 = w.iter().sum();
    let mean = |v: &[f64]| v.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / total;
    let (xm, ym) = (mean(x), mean(y));
    let sxx: f64 = (0..x.len()).map(|i| w[i] * (x[i] - xm).powi(2)).sum();
    let sxy: f64 = (0..x.len()).map(|i| w[i] * (x[i] - xm) * (y[i] - ym)).sum();
    let syy: f64 = (0..x.len()).map(|i| w[i] * (y[i] - ym).powi(2)).sum();
    let slope = sxy / sxx;
    let intercept = ym - slope * xm;
    let ssr: f64 = (0..x.len())
        .map(|i| w[i] * (y[i] - intercept - slope * x[i]).powi(2))
        .sum();
    let s2 = ssr / (x.len() - 2) as f64;
    let slope_se = (s2 / sxx).sqrt();
    let intercept_se = (s2 * (1.0 / total + xm * xm / sxx)).sqrt();
    Ok(LinearFit::assemble(
        [intercept, slope],
        [intercept_se, slope_se],
        if syy > 0.0 { 1.0 - ssr / syy } else { 1.0 },
        plain.x_range,
        x.len(),
    ))
}

/// Ordinary least squares `y = d + m·x` by `linregress`: `(d, m, se(d), se(m), R²)`; the
/// one wrapper of the regression library, shared by the fractal fit. The error says what
/// about the points keeps a line from being fitted, not the library's internal text.
pub(crate) fn ols_line(x: &[f64], y: &[f64]) -> Result<(f64, f64, f64, f64, f64), String> {
    use linregress::{FormulaRegressionBuilder, RegressionDataBuilder};
    // The library fits a line through points all at one x (nonsense numbers, no error) and
    // reports other trouble in its own words: both are said here in the user's.
    if !x.iter().chain(y).all(|v| v.is_finite()) {
        return Err("a point is not a finite number (a time at or below its offset?)".into());
    }
    if x.windows(2).all(|w| w[0] == w[1]) {
        return Err("every point is at the same size: give sizes that differ".into());
    }
    let err = |_: linregress::Error| {
        format!(
            "no line fits these {} points (at least 3 at different sizes are needed)",
            x.len()
        )
    };
    let data = RegressionDataBuilder::new()
        .build_from(vec![("Y", y.to_vec()), ("X", x.to_vec())])
        .map_err(err)?;
    let model = FormulaRegressionBuilder::new()
        .data(&data)
        .formula("Y ~ X")
        .fit()
        .map_err(err)?;
    let p = model.parameters();
    let se = model.se();
    if p.len() != 2 || se.len() != 2 {
        return Err(format!(
            "expected 2 parameters, linregress returned {}",
            p.len()
        ));
    }
    let r2 = model.rsquared();
    // A perfect fit gives R² = NaN in some linregress versions (0/0): it is 1.
    let r2 = if r2.is_finite() { r2 } else { 1.0 };
    Ok((p[0], p[1], se[0], se[1], r2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_regression_says_why_in_plain_words() {
        let e = ols_line(&[3.0, 3.0, 3.0], &[1.0, 2.0, 3.0]).unwrap_err();
        assert!(e.contains("same size"), "{e}");
        let e = ols_line(&[1.0, 2.0, 3.0], &[1.0, f64::NAN, 3.0]).unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
    }

    #[test]
    fn hand_computed_fit() {
        // x = 1..5, y = [2, 4, 5, 4, 5]: x̄ = 3, ȳ = 4, Sxy = 6, Sxx = 10 → slope 0.6,
        // intercept 2.2; residuals [−0.8, 0.6, 1, −0.6, −0.2], SSR = 2.4, s² = 0.8,
        // se(slope) = √(0.8/10) = 0.28284, R² = 1 − 2.4/6 = 0.6.
        let fit = fit_line(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 5.0, 4.0, 5.0]).unwrap();
        assert!((fit.slope - 0.6).abs() < 1e-12);
        assert!((fit.intercept - 2.2).abs() < 1e-12);
        assert!((fit.slope_se - 0.08f64.sqrt()).abs() < 1e-9);
        assert!((fit.r_squared - 0.6).abs() < 1e-9);
        // t(0.975, 3) = 3.182446
        let t = 3.182_446_305_284_263;
        assert!((fit.slope_ci95[1] - (0.6 + t * 0.08f64.sqrt())).abs() < 1e-6);
    }

    #[test]
    fn relative_fit_weights_small_points() {
        // y = 10 + 2x exactly at three points, plus one large point 10 % high: the plain fit
        // is pulled by the large point, the relative one keeps the intercept near 10.
        let x = [1.0, 10.0, 100.0, 10_000.0];
        let y = [12.0, 30.0, 210.0, 22_011.0];
        let plain = fit_line(&x, &y).unwrap();
        let relative = fit_line_relative(&x, &y).unwrap();
        assert!((relative.intercept - 10.0).abs() < (plain.intercept - 10.0).abs());
        assert!(relative.intercept_ci95[0] <= relative.intercept);
        assert!(fit_line_relative(&[1.0, 2.0, 3.0], &[1.0, 0.0, 3.0]).is_err());
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(
            fit_line(&[1.0, 2.0], &[1.0, 2.0]),
            Err(LinearFitError::TooFewPoints(2))
        );
        assert_eq!(
            fit_line(&[1.0; 3], &[1.0, 2.0, 3.0]),
            Err(LinearFitError::DegenerateX)
        );
        assert!(fit_line(&[1.0, 2.0, 3.0], &[1.0, f64::NAN, 3.0]).is_err());
    }
}
