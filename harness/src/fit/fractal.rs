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

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::fit_error::FitError;

/// The fewest runs the fit accepts: two for the line plus one degree of freedom for the
/// residual variance that the prediction interval needs (Student t with k − 2 dof).
pub const MIN_POINTS: usize = 3;

/// Coverage of the prediction interval: a new run at the target falls inside it with this
/// probability when the log-times scatter normally about the line.
pub const PREDICTION_LEVEL: f64 = 0.95;

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

#[cfg(test)]
mod tests {
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
        assert!(
            window_warnings(&fit_power_law(&sizes, &clean, 1e5).unwrap(), Some(2.0)).is_empty()
        );
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
}
