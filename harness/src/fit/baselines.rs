//! The baselines the fractal model is judged against (Escobar & Boppana, IEEE HPCC 2018,
//! docs/models.md §2):
//!
//! - least-squares polynomials `T = Σ_{j=0}^{p} β_j·N^j` of degree p = 1 … 4, the paper's
//!   Fig. 1: fitted to six small runs they reproduce the runs and extrapolate wildly;
//! - the nonlinear fit `T = a·N^c + b`, the paper's eq. 1 with the constant `v` it drops kept
//!   as `b`, by a grid and golden-section search over c (a and b are linear given c) polished
//!   by Gauss–Newton.
//!
//! Both are solved with a small Householder QR least-squares solver of our own
//! ([`least_squares`]), on sizes scaled to order one, so that `N^4` at N = 10⁶ does not
//! ruin the normal equations.

use serde::Serialize;

use super::fit_error::FitError;
use super::fractal::validate_series;

/// The largest polynomial degree offered, as in the paper's Fig. 1.
pub const MAX_DEGREE: usize = 4;

/// The fewest runs [`fit_power_offset`] accepts: three parameters and one degree of freedom
/// left to judge the fit by.
pub const POWER_OFFSET_MIN_POINTS: usize = 4;

/// Number of exponents tried on the grid of [`fit_power_offset`] before the golden-section
/// refinement; at the default range [0.05, 8] the grid step is about 0.02.
pub const EXPONENT_GRID_STEPS: usize = 400;

/// A column whose Householder pivot falls below this fraction of its norm is taken as a
/// linear combination of the others: the system is singular.
const SINGULAR_TOLERANCE: f64 = 1e-11;

/// Solves `min ‖A·β − y‖₂` by Householder QR, with the columns of A scaled to unit norm first
/// so that the rank test does not depend on their units. `rows` is A by rows; every row must
/// have the same length p ≤ number of rows.
///
/// ```
/// use harness::fit::baselines::least_squares;
/// // y = 1 + 2x through (0, 1), (1, 3), (2, 5).
/// let rows = vec![vec![1.0, 0.0], vec![1.0, 1.0], vec![1.0, 2.0]];
/// let beta = least_squares(&rows, &[1.0, 3.0, 5.0], "line").unwrap();
/// assert!((beta[0] - 1.0).abs() < 1e-12 && (beta[1] - 2.0).abs() < 1e-12);
/// ```
pub fn least_squares(rows: &[Vec<f64>], y: &[f64], what: &str) -> Result<Vec<f64>, FitError> {
    let m = rows.len();
    let p = rows.first().map_or(0, Vec::len);
    if m != y.len() || rows.iter().any(|r| r.len() != p) {
        return Err(FitError::LengthMismatch {
            what: format!("{what}: design rows"),
            expected: y.len(),
            got: m,
        });
    }
    if p == 0 || m < p {
        return Err(FitError::TooFewPoints {
            model: what.into(),
            needed: p.max(1),
            got: m,
        });
    }
    // Column-major copy, each column scaled to unit norm.
    let mut cols: Vec<Vec<f64>> = (0..p)
        .map(|j| rows.iter().map(|r| r[j]).collect())
        .collect();
    let mut norms = Vec::with_capacity(p);
    for col in &mut cols {
        let norm = col.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            return Err(FitError::Singular(what.into()));
        }
        col.iter_mut().for_each(|v| *v /= norm);
        norms.push(norm);
    }
    let mut rhs = y.to_vec();
    for j in 0..p {
        let norm = cols[j][j..].iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm < SINGULAR_TOLERANCE {
            return Err(FitError::Singular(what.into()));
        }
        let alpha = if cols[j][j] > 0.0 { -norm } else { norm };
        let mut v: Vec<f64> = cols[j][j..].to_vec();
        v[0] -= alpha;
        let vv: f64 = v.iter().map(|x| x * x).sum();
        let reflect = |target: &mut [f64]| {
            let dot: f64 = v.iter().zip(target.iter()).map(|(a, b)| a * b).sum();
            let f = 2.0 * dot / vv;
            target.iter_mut().zip(&v).for_each(|(t, vi)| *t -= f * vi);
        };
        for col in cols.iter_mut().skip(j + 1) {
            reflect(&mut col[j..]);
        }
        reflect(&mut rhs[j..]);
        cols[j][j] = alpha;
    }
    let mut beta = vec![0.0; p];
    for j in (0..p).rev() {
        let s: f64 = (j + 1..p).map(|i| cols[i][j] * beta[i]).sum();
        beta[j] = (rhs[j] - s) / cols[j][j];
    }
    for (b, n) in beta.iter_mut().zip(&norms) {
        *b /= n;
    }
    if beta.iter().all(|b| b.is_finite()) {
        Ok(beta)
    } else {
        Err(FitError::Singular(what.into()))
    }
}

/// A least-squares polynomial `T = Σ_{j=0}^{p} β_j·N^j` (paper Fig. 1), fitted in the scaled
/// size `u = (N − shift)/scale ∈ [0, 1]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolynomialFit {
    /// The degree p.
    pub degree: usize,
    /// The target size n_L.
    pub target: f64,
    /// Number of runs fitted.
    pub points: usize,
    /// `β_0 … β_p` in powers of N itself (expanded from the scaled fit; for display, the
    /// evaluation uses the scaled form).
    pub coefficients: Vec<f64>,
    /// `shift` of `u = (N − shift)/scale`: the smallest size.
    pub shift: f64,
    /// `scale` of `u = (N − shift)/scale`: the size range.
    pub scale: f64,
    /// Coefficients in powers of u, ascending.
    pub scaled_coefficients: Vec<f64>,
    /// Residual sum of squares, seconds².
    pub rss: f64,
    /// Coefficient of determination.
    pub r_squared: f64,
    /// `T_i − fit(N_i)`, seconds.
    pub residuals: Vec<f64>,
    /// Smallest and largest size fitted.
    pub fit_range: [f64; 2],
    /// The polynomial at n_L, seconds (may be negative: that is the point of Fig. 1).
    pub prediction_seconds: f64,
    /// True when n_L lies inside `fit_range`.
    pub interpolation: bool,
}

impl PolynomialFit {
    /// The polynomial at size n, by Horner's rule in the scaled size u.
    pub fn evaluate(&self, n: f64) -> f64 {
        let u = (n - self.shift) / self.scale;
        self.scaled_coefficients
            .iter()
            .rev()
            .fold(0.0, |acc, b| acc * u + b)
    }
}

/// Fits `T = Σ_{j=0}^{p} β_j·N^j` of degree p ∈ 1 … 4 by least squares (Householder QR on
/// sizes scaled to [0, 1]) and evaluates it at the target: the paper's Fig. 1 baseline.
/// Degree p needs at least p + 1 runs; with exactly p + 1 it interpolates them.
///
/// ```
/// use harness::fit::baselines::fit_polynomial;
/// // T = 1 + N² exactly.
/// let fit = fit_polynomial(&[1.0, 2.0, 3.0, 4.0], &[2.0, 5.0, 10.0, 17.0], 2, 10.0).unwrap();
/// assert!((fit.prediction_seconds - 101.0).abs() < 1e-9);
/// ```
pub fn fit_polynomial(
    sizes: &[f64],
    times: &[f64],
    degree: usize,
    target: f64,
) -> Result<PolynomialFit, FitError> {
    if !(1..=MAX_DEGREE).contains(&degree) {
        return Err(FitError::BadDegree(degree));
    }
    let model = format!("a degree-{degree} polynomial");
    validate_series(sizes, times, degree + 1, &model)?;
    if !target.is_finite() {
        return Err(FitError::BadTarget(target));
    }
    let fit_range = range(sizes);
    let shift = fit_range[0];
    let scale = fit_range[1] - fit_range[0];
    let rows: Vec<Vec<f64>> = sizes
        .iter()
        .map(|n| {
            let u = (n - shift) / scale;
            (0..=degree).map(|j| u.powi(j as i32)).collect()
        })
        .collect();
    let scaled = least_squares(&rows, times, &model)?;
    let mut fit = PolynomialFit {
        degree,
        target,
        points: sizes.len(),
        coefficients: expand(&scaled, shift, scale),
        shift,
        scale,
        scaled_coefficients: scaled,
        rss: 0.0,
        r_squared: 0.0,
        residuals: Vec::new(),
        fit_range,
        prediction_seconds: 0.0,
        interpolation: target >= fit_range[0] && target <= fit_range[1],
    };
    fit.residuals = sizes
        .iter()
        .zip(times)
        .map(|(n, t)| t - fit.evaluate(*n))
        .collect();
    fit.rss = fit.residuals.iter().map(|r| r * r).sum();
    fit.r_squared = r_squared(times, fit.rss);
    fit.prediction_seconds = fit.evaluate(target);
    Ok(fit)
}

/// Every polynomial baseline of degree 1 … 4 that the runs allow (degree p needs p + 1
/// runs), as in the paper's Fig. 1 (six runs, all four degrees). Errors only when the series
/// itself is invalid or too short even for a line.
pub fn polynomial_baselines(
    sizes: &[f64],
    times: &[f64],
    target: f64,
) -> Result<Vec<PolynomialFit>, FitError> {
    validate_series(sizes, times, 2, "a degree-1 polynomial")?;
    let top = MAX_DEGREE.min(sizes.len() - 1);
    (1..=top)
        .map(|p| fit_polynomial(sizes, times, p, target))
        .collect()
}

/// Settings of [`fit_power_offset`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerOffsetOptions {
    /// Refuse a negative constant: where the unconstrained b would be negative, b = 0 and
    /// only a and c are fitted. Default false.
    pub nonnegative_offset: bool,
    /// The exponents c searched, `[lowest, highest]`; default [0.05, 8]. c = 0 is excluded
    /// because `N^0` and the constant cannot be told apart.
    pub exponent_range: [f64; 2],
    /// Minimise relative residuals `Σ ((T_i − f_i)/T_i)²` instead of absolute ones, so that
    /// the small runs count as much as the large (times must then be positive). Default
    /// false: the plain residual sum of squares.
    pub relative_residuals: bool,
}

impl Default for PowerOffsetOptions {
    fn default() -> Self {
        PowerOffsetOptions {
            nonnegative_offset: false,
            exponent_range: [0.05, 8.0],
            relative_residuals: false,
        }
    }
}

/// The nonlinear least-squares fit `T = a·N^c + b` (the paper's eq. 1 with its constant
/// kept) and its prediction at the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerOffsetFit {
    /// `a`, seconds per size^c.
    pub a: f64,
    /// `b`, the constant part, seconds.
    pub b_seconds: f64,
    /// The exponent c.
    pub c: f64,
    /// The minimised residual sum of squares (relative, dimensionless, when
    /// `relative_residuals`; otherwise seconds²).
    pub rss: f64,
    /// `1 − RSS/Σ w_i (T_i − T̄_w)²` in the same weighting.
    pub r_squared: f64,
    /// `T_i − (a·N_i^c + b)`, seconds.
    pub residuals: Vec<f64>,
    /// Number of runs fitted.
    pub points: usize,
    /// Smallest and largest size fitted.
    pub fit_range: [f64; 2],
    /// The target size n_L.
    pub target: f64,
    /// `a·n_L^c + b`, seconds.
    pub prediction_seconds: f64,
    /// True when n_L lies inside `fit_range`.
    pub interpolation: bool,
    /// True when `nonnegative_offset` held b at 0.
    pub offset_clamped: bool,
    /// Remarks (an exponent at the edge of the searched range).
    pub notes: Vec<String>,
}

impl PowerOffsetFit {
    /// `a·n^c + b`.
    pub fn evaluate(&self, n: f64) -> f64 {
        self.a * n.powf(self.c) + self.b_seconds
    }
}

/// Fits `T = a·N^c + b` by nonlinear least squares. For a fixed c the model is linear in a
/// and b, a 2×2 least-squares problem, so the residual sum of squares is a function of c
/// alone: it is scanned on [`EXPONENT_GRID_STEPS`] exponents over `exponent_range`, the best
/// bracket refined by golden-section search, and the result polished by Gauss–Newton steps
/// on (a, b, c) jointly. Sizes are scaled by the largest, `u = N/N_max`, and `a` converted
/// back at the end. Needs [`POWER_OFFSET_MIN_POINTS`] runs.
///
/// ```
/// use harness::fit::baselines::{fit_power_offset, PowerOffsetOptions};
/// let sizes = [1.0, 2.0, 4.0, 8.0, 16.0];
/// let times: Vec<f64> = sizes.iter().map(|n: &f64| 0.5 * n.powf(1.5) + 3.0).collect();
/// let fit = fit_power_offset(&sizes, &times, 64.0, &PowerOffsetOptions::default()).unwrap();
/// assert!((fit.c - 1.5).abs() < 1e-8 && (fit.b_seconds - 3.0).abs() < 1e-7);
/// ```
pub fn fit_power_offset(
    sizes: &[f64],
    times: &[f64],
    target: f64,
    options: &PowerOffsetOptions,
) -> Result<PowerOffsetFit, FitError> {
    validate_series(sizes, times, POWER_OFFSET_MIN_POINTS, "a·N^c + b")?;
    if !(target.is_finite() && target > 0.0) {
        return Err(FitError::BadTarget(target));
    }
    let [c_lo, c_hi] = options.exponent_range;
    if !(c_lo.is_finite() && c_hi.is_finite() && 0.0 < c_lo && c_lo < c_hi) {
        return Err(FitError::BadSetting {
            name: "exponent_range".into(),
            value: if c_lo > 0.0 { c_hi } else { c_lo },
            expected: "0 < lowest < highest, both finite".into(),
        });
    }
    if options.relative_residuals {
        if let Some((i, &t)) = times.iter().enumerate().find(|(_, &t)| t <= 0.0) {
            return Err(FitError::NotPositive {
                what: "times".into(),
                index: i,
                value: t,
            });
        }
    }
    let fit_range = range(sizes);
    let n_max = fit_range[1];
    let problem = PowerOffsetProblem {
        u: sizes.iter().map(|n| n / n_max).collect(),
        t: times.to_vec(),
        w: times
            .iter()
            .map(|t| {
                if options.relative_residuals {
                    1.0 / (t * t)
                } else {
                    1.0
                }
            })
            .collect(),
        nonnegative: options.nonnegative_offset,
    };

    // Grid over c.
    let step = (c_hi - c_lo) / EXPONENT_GRID_STEPS as f64;
    let grid: Vec<(f64, f64)> = (0..=EXPONENT_GRID_STEPS)
        .map(|i| {
            let c = c_lo + step * i as f64;
            (c, problem.rss_at(c).map_or(f64::INFINITY, |s| s.rss))
        })
        .collect();
    let best = (0..grid.len())
        .min_by(|&i, &j| grid[i].1.total_cmp(&grid[j].1))
        .filter(|&i| grid[i].1.is_finite())
        .ok_or_else(|| FitError::Singular("a·N^c + b".into()))?;

    // Golden-section search in the bracket around the best grid point.
    let mut lo = grid[best.saturating_sub(1)].0;
    let mut hi = grid[(best + 1).min(grid.len() - 1)].0;
    let rss = |c: f64| problem.rss_at(c).map_or(f64::INFINITY, |s| s.rss);
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let mut c1 = hi - ratio * (hi - lo);
    let mut c2 = lo + ratio * (hi - lo);
    let (mut f1, mut f2) = (rss(c1), rss(c2));
    for _ in 0..200 {
        if hi - lo <= 1e-12 * hi.abs().max(1.0) {
            break;
        }
        if f1 <= f2 {
            hi = c2;
            c2 = c1;
            f2 = f1;
            c1 = hi - ratio * (hi - lo);
            f1 = rss(c1);
        } else {
            lo = c1;
            c1 = c2;
            f1 = f2;
            c2 = lo + ratio * (hi - lo);
            f2 = rss(c2);
        }
    }
    let mut c = if f1 <= f2 { c1 } else { c2 };
    if grid[best].1 < rss(c) {
        c = grid[best].0;
    }
    let mut state = problem
        .rss_at(c)
        .ok_or_else(|| FitError::Singular("a·N^c + b".into()))?;
    let mut c_fit = c;

    // Gauss–Newton polish: golden-section finds c only to about √ε relative, because the
    // residual sum of squares is flat at its minimum; the joint linearisation finds it to ε.
    for _ in 0..50 {
        match problem.gauss_newton_step(c_fit, &state) {
            Some((c_new, s_new)) if s_new.rss < state.rss && c_new >= c_lo && c_new <= c_hi => {
                let done = (c_new - c_fit).abs() <= 1e-15 * c_fit.abs();
                c_fit = c_new;
                state = s_new;
                if done {
                    break;
                }
            }
            _ => break,
        }
    }

    let mut notes = Vec::new();
    if c_fit - c_lo < 2.0 * step || c_hi - c_fit < 2.0 * step {
        notes.push(format!(
            "exponent {c_fit:.3} at the edge of the searched range [{c_lo}, {c_hi}]"
        ));
    }
    let a = state.alpha / n_max.powf(c_fit);
    let residuals: Vec<f64> = sizes
        .iter()
        .zip(times)
        .map(|(n, t)| t - (a * n.powf(c_fit) + state.b))
        .collect();
    let weighted_mean = problem
        .t
        .iter()
        .zip(&problem.w)
        .map(|(t, w)| t * w)
        .sum::<f64>()
        / problem.w.iter().sum::<f64>();
    let syy: f64 = problem
        .t
        .iter()
        .zip(&problem.w)
        .map(|(t, w)| w * (t - weighted_mean).powi(2))
        .sum();
    Ok(PowerOffsetFit {
        a,
        b_seconds: state.b,
        c: c_fit,
        rss: state.rss,
        r_squared: if syy > 0.0 {
            1.0 - state.rss / syy
        } else {
            1.0
        },
        residuals,
        points: sizes.len(),
        fit_range,
        target,
        prediction_seconds: a * target.powf(c_fit) + state.b,
        interpolation: target >= fit_range[0] && target <= fit_range[1],
        offset_clamped: state.clamped,
        notes,
    })
}

/// `T ≈ α·u^c + b` in the scaled size, with weights.
struct PowerOffsetProblem {
    u: Vec<f64>,
    t: Vec<f64>,
    w: Vec<f64>,
    nonnegative: bool,
}

/// The linear part solved for one c.
struct LinearPart {
    alpha: f64,
    b: f64,
    rss: f64,
    clamped: bool,
}

impl PowerOffsetProblem {
    fn weighted_rss(&self, c: f64, alpha: f64, b: f64) -> f64 {
        (0..self.u.len())
            .map(|i| self.w[i] * (self.t[i] - alpha * self.u[i].powf(c) - b).powi(2))
            .sum()
    }

    /// α and b for a fixed c: weighted 2×2 least squares, or α alone with b = 0 when the
    /// constraint is on and b would be negative.
    fn rss_at(&self, c: f64) -> Option<LinearPart> {
        let sw: Vec<f64> = self.w.iter().map(|w| w.sqrt()).collect();
        let rows: Vec<Vec<f64>> = (0..self.u.len())
            .map(|i| vec![sw[i] * self.u[i].powf(c), sw[i]])
            .collect();
        let y: Vec<f64> = (0..self.u.len()).map(|i| sw[i] * self.t[i]).collect();
        let beta = least_squares(&rows, &y, "a·N^c + b").ok()?;
        let (alpha, b, clamped) = if self.nonnegative && beta[1] < 0.0 {
            let g: Vec<f64> = rows.iter().map(|r| r[0]).collect();
            let gg: f64 = g.iter().map(|v| v * v).sum();
            let gy: f64 = g.iter().zip(&y).map(|(a, b)| a * b).sum();
            (gy / gg, 0.0, true)
        } else {
            (beta[0], beta[1], false)
        };
        let rss = self.weighted_rss(c, alpha, b);
        rss.is_finite().then_some(LinearPart {
            alpha,
            b,
            rss,
            clamped,
        })
    }

    /// One Gauss–Newton step on (α, b, c), or on (α, c) with b held at 0 when clamped.
    /// Returns the new c with the linear part re-solved there.
    fn gauss_newton_step(&self, c: f64, s: &LinearPart) -> Option<(f64, LinearPart)> {
        let rows: Vec<Vec<f64>> = (0..self.u.len())
            .map(|i| {
                let sw = self.w[i].sqrt();
                let g = self.u[i].powf(c);
                let dc = s.alpha * g * self.u[i].ln();
                if s.clamped {
                    vec![sw * g, sw * dc]
                } else {
                    vec![sw * g, sw, sw * dc]
                }
            })
            .collect();
        let r: Vec<f64> = (0..self.u.len())
            .map(|i| self.w[i].sqrt() * (self.t[i] - s.alpha * self.u[i].powf(c) - s.b))
            .collect();
        let delta = least_squares(&rows, &r, "a·N^c + b").ok()?;
        let c_new = c + delta[delta.len() - 1];
        Some((c_new, self.rss_at(c_new)?))
    }
}

/// `[min, max]` of a non-empty slice.
fn range(v: &[f64]) -> [f64; 2] {
    [
        v.iter().copied().fold(f64::INFINITY, f64::min),
        v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    ]
}

/// `1 − RSS/Σ(T_i − T̄)²`, 1 for constant times fitted exactly.
fn r_squared(times: &[f64], rss: f64) -> f64 {
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    let syy: f64 = times.iter().map(|t| (t - mean).powi(2)).sum();
    if syy > 0.0 {
        1.0 - rss / syy
    } else {
        1.0
    }
}

/// Coefficients in N from coefficients in `u = (N − s)/w`:
/// `Σ_j b_j·((N − s)/w)^j = Σ_i N^i · Σ_{j≥i} b_j·C(j, i)·(−s)^{j−i} / w^j`.
fn expand(scaled: &[f64], shift: f64, scale: f64) -> Vec<f64> {
    let p = scaled.len();
    let mut out = vec![0.0; p];
    for (j, bj) in scaled.iter().enumerate() {
        let mut binom = 1.0;
        for (i, slot) in out.iter_mut().enumerate().take(j + 1) {
            if i > 0 {
                binom = binom * (j + 1 - i) as f64 / i as f64;
            }
            *slot += bj * binom * (-shift).powi((j - i) as i32) / scale.powi(j as i32);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::fractal::fit_power_law;
    use super::*;
    use proptest::prelude::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn householder_solves_an_overdetermined_system() {
        // Points (0, 1), (1, 2), (2, 2), (3, 4): x̄ = 1.5, ȳ = 2.25, Sxy = 4.5, Sxx = 5,
        // slope 0.9, intercept 2.25 − 1.35 = 0.9.
        let rows: Vec<Vec<f64>> = (0..4).map(|i| vec![1.0, i as f64]).collect();
        let beta = least_squares(&rows, &[1.0, 2.0, 2.0, 4.0], "line").unwrap();
        assert!((beta[0] - 0.9).abs() < 1e-14 && (beta[1] - 0.9).abs() < 1e-14);
        let dup: Vec<Vec<f64>> = (0..4).map(|i| vec![i as f64, 2.0 * i as f64]).collect();
        assert!(matches!(
            least_squares(&dup, &[1.0, 2.0, 2.0, 4.0], "dup"),
            Err(FitError::Singular(_))
        ));
        assert!(matches!(
            least_squares(&rows[..1], &[1.0], "short"),
            Err(FitError::TooFewPoints { .. })
        ));
    }

    #[test]
    fn polynomials_reproduce_exact_polynomials() {
        let beta = [2e-3, 3e-6, -4e-10, 5e-15, 6e-20];
        let sizes = [1e3, 2e3, 3e3, 5e3, 8e3, 13e3];
        let target = 1e5;
        for degree in 1..=4 {
            let poly = |n: f64| {
                (0..=degree)
                    .map(|j| beta[j] * n.powi(j as i32))
                    .sum::<f64>()
            };
            let times: Vec<f64> = sizes.iter().map(|&n| poly(n)).collect();
            let fit = fit_polynomial(&sizes, &times, degree, target).unwrap();
            assert!(
                rel(fit.prediction_seconds, poly(target)) < 1e-9,
                "degree {degree}: {} vs {}",
                fit.prediction_seconds,
                poly(target)
            );
            for (j, b) in fit.coefficients.iter().enumerate() {
                assert!(rel(*b, beta[j]) < 1e-6, "degree {degree} β{j} = {b}");
            }
            assert!(fit.rss < 1e-24 && (fit.r_squared - 1.0).abs() < 1e-12);
            assert!(!fit.interpolation);
        }
    }

    #[test]
    fn polynomial_degree_needs_points() {
        let sizes = [1.0, 2.0, 3.0];
        let times = [1.0, 4.0, 9.0];
        assert!(matches!(
            fit_polynomial(&sizes, &times, 3, 10.0),
            Err(FitError::TooFewPoints {
                needed: 4,
                got: 3,
                ..
            })
        ));
        assert!(matches!(
            fit_polynomial(&sizes, &times, 5, 10.0),
            Err(FitError::BadDegree(5))
        ));
        assert!(matches!(
            fit_polynomial(&sizes, &times, 0, 10.0),
            Err(FitError::BadDegree(0))
        ));
        let all = polynomial_baselines(&sizes, &times, 10.0).unwrap();
        assert_eq!(all.iter().map(|f| f.degree).collect::<Vec<_>>(), [1, 2]);
        assert!((all[1].prediction_seconds - 100.0).abs() < 1e-9);
        assert!(polynomial_baselines(&[1.0], &[1.0], 10.0).is_err());
    }

    #[test]
    fn fig1_polynomials_extrapolate_wildly_fractal_does_not() {
        // A phase of complexity N^1.37 with ±1 % jitter, six small runs, target 100× larger.
        let sizes = [1e3, 1.5e3, 2.2e3, 3.3e3, 5e3, 7.5e3];
        let truth = |n: f64| 1e-8 * n.powf(1.37);
        let times: Vec<f64> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| truth(n) * if i % 2 == 0 { 1.01 } else { 0.99 })
            .collect();
        let target = 7.5e5;
        let fractal = fit_power_law(&sizes, &times, target).unwrap();
        assert!(rel(fractal.prediction_seconds, truth(target)) < 0.1);
        let polys = polynomial_baselines(&sizes, &times, target).unwrap();
        assert_eq!(polys.len(), 4);
        let worst = polys
            .iter()
            .map(|p| rel(p.prediction_seconds, truth(target)))
            .fold(0.0, f64::max);
        assert!(worst > 1.0, "worst polynomial error {worst}");
    }

    #[test]
    fn power_offset_recovers_a_b_c() {
        let (a, b, c) = (2e-9, 1e-3, 1.7);
        let sizes = [1e3, 2e3, 4e3, 8e3, 16e3, 32e3, 64e3];
        let times: Vec<f64> = sizes.iter().map(|n| a * f64::powf(*n, c) + b).collect();
        let target = 1e6;
        for relative in [false, true] {
            let options = PowerOffsetOptions {
                relative_residuals: relative,
                ..PowerOffsetOptions::default()
            };
            let fit = fit_power_offset(&sizes, &times, target, &options).unwrap();
            assert!(rel(fit.c, c) < 1e-8, "c = {}", fit.c);
            assert!(rel(fit.a, a) < 1e-7, "a = {}", fit.a);
            assert!(rel(fit.b_seconds, b) < 1e-7, "b = {}", fit.b_seconds);
            assert!(rel(fit.prediction_seconds, a * f64::powf(target, c) + b) < 1e-7);
            assert!(!fit.offset_clamped && fit.notes.is_empty());
            assert!((fit.evaluate(sizes[2]) - times[2]).abs() < 1e-12);
        }
    }

    #[test]
    fn power_offset_constraint_clamps_negative_b() {
        // A pure power law with a slight dip: the free fit wants b < 0.
        let sizes = [1.0, 2.0, 4.0, 8.0, 16.0];
        let times: Vec<f64> = sizes.iter().map(|n: &f64| n.powf(1.2) - 0.05).collect();
        let free = fit_power_offset(&sizes, &times, 64.0, &PowerOffsetOptions::default()).unwrap();
        assert!((free.b_seconds + 0.05).abs() < 1e-8 && (free.c - 1.2).abs() < 1e-8);
        let options = PowerOffsetOptions {
            nonnegative_offset: true,
            ..PowerOffsetOptions::default()
        };
        let held = fit_power_offset(&sizes, &times, 64.0, &options).unwrap();
        assert!(held.offset_clamped && held.b_seconds == 0.0);
        assert!(held.rss >= free.rss);
    }

    #[test]
    fn power_offset_refusals() {
        let s = [1.0, 2.0, 3.0];
        assert!(matches!(
            fit_power_offset(&s, &[1.0, 2.0, 3.0], 9.0, &PowerOffsetOptions::default()),
            Err(FitError::TooFewPoints { needed: 4, .. })
        ));
        let s4 = [1.0, 2.0, 3.0, 4.0];
        let bad = PowerOffsetOptions {
            exponent_range: [0.0, 3.0],
            ..PowerOffsetOptions::default()
        };
        assert!(matches!(
            fit_power_offset(&s4, &[1.0, 2.0, 3.0, 4.0], 9.0, &bad),
            Err(FitError::BadSetting { .. })
        ));
        let rel_opts = PowerOffsetOptions {
            relative_residuals: true,
            ..PowerOffsetOptions::default()
        };
        assert!(matches!(
            fit_power_offset(&s4, &[1.0, 0.0, 3.0, 4.0], 9.0, &rel_opts),
            Err(FitError::NotPositive { index: 1, .. })
        ));
    }

    proptest! {
        #[test]
        fn any_polynomial_is_reproduced(
            coeffs in proptest::collection::vec(-10.0f64..10.0, 2..6),
            n0 in 0.5f64..100.0,
            gap in 0.5f64..50.0,
        ) {
            let degree = coeffs.len() - 1;
            let sizes: Vec<f64> = (0..degree + 3).map(|i| n0 + gap * i as f64).collect();
            let poly = |n: f64| coeffs.iter().rev().fold(0.0, |acc, b| acc * n + b);
            let times: Vec<f64> = sizes.iter().map(|&n| poly(n)).collect();
            let fit = fit_polynomial(&sizes, &times, degree, sizes[0]).unwrap();
            let scale = times.iter().map(|t| t.abs()).fold(1.0, f64::max);
            for (n, t) in sizes.iter().zip(&times) {
                prop_assert!((fit.evaluate(*n) - t).abs() < 1e-9 * scale);
            }
        }
    }
}
