//! Diagnoses of a fractal fit's measurement window: the curvature test of its residuals
//! ([`curvature`]) and the warnings where the power law `T = a·N^c` does not hold
//! ([`window_warnings`]).

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::FractalFit;

/// [`window_warnings`] warns when the fitted exponent is below this fraction of the known
/// complexity: a phase of complexity `N^2` that fits `N^0.9` is dominated by a constant
/// (launch overhead, latency) in the measured window, and its extrapolation will be far too
/// low.
pub const EXPONENT_LOW_RATIO: f64 = 0.5;

/// [`window_warnings`] warns when the fitted exponent exceeds this multiple of the known
/// complexity: the window probably straddles a cache or memory-capacity transition, so the
/// slope mixes two regimes and the extrapolation will be far too high.
pub const EXPONENT_HIGH_RATIO: f64 = 1.5;

/// Significance level of the curvature test: a quadratic term in `x` whose two-sided
/// Student-t p-value (k − 3 dof) is below this is called significant.
pub const CURVATURE_ALPHA: f64 = 0.05;

/// Smallest curvature worth a warning, in log-time units: the quadratic term must move the
/// curve by at least this much away from the straight line at the middle of the window,
/// `|β₂|·(x_max − x_min)²/4 ≥ 0.02`, about 2 % in time. Without it, data lying exactly on a
/// power law would "curve" by rounding error alone.
pub const CURVATURE_MIN_EFFECT: f64 = 0.02;

/// [`window_warnings`] warns when the largest fitted size is less than this multiple of the
/// smallest: the slope of a short window is poorly determined and its extrapolation error is
/// large (the `(x − x̄)²/Sxx` term of the interval).
pub const MIN_WINDOW_SPAN: f64 = 2.0;

/// The curvature test behind [`window_warnings`]: the residuals of the log-log line refitted
/// as `r = β₀ + β₁·x + β₂·x²`. Since the line's own terms are already removed, β₂ equals the
/// quadratic coefficient of `y = β₀ + β₁·x + β₂·x²` fitted to the log points.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curvature {
    /// β₂, per (ln size)². Positive: the log-log curve bends upward (time grows faster at the
    /// large end, typical of a constant overhead at the small end); negative: it flattens.
    pub quadratic: f64,
    /// Standard error of β₂.
    pub quadratic_se: f64,
    /// Two-sided p-value of β₂ = 0, Student t with k − 3 dof.
    pub p_value: f64,
    /// `|β₂|·(x_max − x_min)²/4`: how far, in log-time, the parabola leaves its chord at the
    /// middle of the window.
    pub effect: f64,
    /// Significant at [`CURVATURE_ALPHA`] and at least [`CURVATURE_MIN_EFFECT`].
    pub significant: bool,
}

/// Fits the quadratic of [`Curvature`] to a fit's residuals. `None` with fewer than four
/// points (no degree of freedom left) or when the regression fails.
pub fn curvature(fit: &FractalFit) -> Option<Curvature> {
    use linregress::{FormulaRegressionBuilder, RegressionDataBuilder};
    let k = fit.log_sizes.len();
    if k < 4 || fit.residuals.len() != k {
        return None;
    }
    // Centring x keeps x and x² from being nearly collinear; β₂ does not change.
    let xc: Vec<f64> = fit
        .log_sizes
        .iter()
        .map(|x| x - fit.log_size_mean)
        .collect();
    let x2: Vec<f64> = xc.iter().map(|x| x * x).collect();
    let data = RegressionDataBuilder::new()
        .build_from(vec![
            ("R", fit.residuals.clone()),
            ("X", xc.clone()),
            ("Q", x2),
        ])
        .ok()?;
    let model = FormulaRegressionBuilder::new()
        .data(&data)
        .formula("R ~ X + Q")
        .fit()
        .ok()?;
    let (quadratic, quadratic_se) = (*model.parameters().get(2)?, *model.se().get(2)?);
    let p_value = if quadratic_se > 0.0 {
        let dist = StudentsT::new(0.0, 1.0, (k - 3) as f64).ok()?;
        2.0 * dist.sf((quadratic / quadratic_se).abs())
    } else if quadratic == 0.0 {
        1.0
    } else {
        0.0
    };
    let span = xc.iter().copied().fold(f64::NEG_INFINITY, f64::max)
        - xc.iter().copied().fold(f64::INFINITY, f64::min);
    let effect = quadratic.abs() * span * span / 4.0;
    Some(Curvature {
        quadratic,
        quadratic_se,
        p_value,
        effect,
        significant: p_value < CURVATURE_ALPHA && effect >= CURVATURE_MIN_EFFECT,
    })
}

/// Diagnoses a measurement window where the paper's assumption `T = a·N^c` fails:
///
/// - fitted exponent `m < EXPONENT_LOW_RATIO × expected` ([`EXPONENT_LOW_RATIO`] = 0.5):
///   overhead or latency dominates the window;
/// - `m > EXPONENT_HIGH_RATIO × expected` ([`EXPONENT_HIGH_RATIO`] = 1.5): a cache or memory
///   transition lies inside the window;
/// - `m ≤ 0`: the time does not grow with the size at all;
/// - the residuals curve ([`curvature`] significant at [`CURVATURE_ALPHA`] with effect at
///   least [`CURVATURE_MIN_EFFECT`]);
/// - only three points, so curvature cannot be tested;
/// - the window spans less than [`MIN_WINDOW_SPAN`]× in size.
///
/// `expected_exponent` is the known complexity of the phase (2 for an `N²` kernel), if any.
/// An empty vector means nothing was found.
pub fn window_warnings(fit: &FractalFit, expected_exponent: Option<f64>) -> Vec<String> {
    let mut warnings = Vec::new();
    let m = fit.fractal_dimension;
    if m <= 0.0 {
        warnings.push(format!(
            "fitted exponent {m:.3} ≤ 0: the time does not grow with the size in this window"
        ));
    }
    if let Some(c) = expected_exponent.filter(|c| c.is_finite() && *c > 0.0) {
        if m < EXPONENT_LOW_RATIO * c {
            warnings.push(format!(
                "fitted exponent {m:.3} is far below the known complexity {c}: the window is \
                 overhead- or latency-dominated; measure larger sizes or subtract the constant \
                 part (fit_power_law_with_offset)"
            ));
        } else if m > EXPONENT_HIGH_RATIO * c {
            warnings.push(format!(
                "fitted exponent {m:.3} is far above the known complexity {c}: a cache or \
                 memory transition probably lies inside the window"
            ));
        }
    }
    match curvature(fit) {
        Some(q) if q.significant => warnings.push(format!(
            "residuals curve (quadratic term {:.3} per (ln n)², p = {:.2e}, {:.1} % at mid-window): \
             the window is overhead- or latency-dominated, or a cache transition lies inside it",
            q.quadratic,
            q.p_value,
            100.0 * q.effect
        )),
        Some(_) => {}
        None if fit.log_sizes.len() < 4 => warnings.push(
            "only 3 points: curvature of the residuals cannot be tested; add a run".to_string(),
        ),
        None => warnings.push("the curvature test failed to fit".to_string()),
    }
    let [lo, hi] = fit.fit_range;
    if hi < MIN_WINDOW_SPAN * lo {
        warnings.push(format!(
            "the window [{lo}, {hi}] spans less than {MIN_WINDOW_SPAN}× in size: the slope is \
             poorly determined"
        ));
    }
    warnings
}
