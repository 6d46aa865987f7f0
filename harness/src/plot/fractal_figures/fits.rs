//! Figures of one series' fractal fit: the fit with its prediction interval and the
//! measured large sizes ([`fit_figure`]), and the paper's Fig. 1, the polynomials beside it
//! ([`polynomial_vs_fractal_figure`]).

use std::path::{Path, PathBuf};

use super::{
    data, workload_label, LARGE_LABEL, PI_HIGH_LABEL, PI_LABEL, PI_LOW_LABEL, SMALL_LABEL, TOTAL,
    X_LABEL, Y_LABEL,
};
use crate::experiments::series::Series as RunSeries;
use crate::fit::baselines::polynomial_baselines;
use crate::fit::fractal::{fit_power_law, FractalFit};
use crate::plot::{save_figure, Figure, Mark, Panel, PlotError, Series};

/// Sizes along the log-spaced extrapolation at which the fit and its interval are drawn
/// (the measured sizes are added to them).
const LOG_SAMPLES: usize = 20;

/// Sizes along the linear extrapolation of [`polynomial_vs_fractal_figure`]: enough for a
/// quartic to look smooth.
const LINEAR_SAMPLES: usize = 60;

/// Draws one phase (or the total) of `series` with its fractal fit, written as
/// `<dir>/<name>.{svg,png,csv}`.
///
/// Log-log axes: the series' medians with their 95 % CIs as error bars; the fitted line
/// `T = a·N^c` (the paper's fit, [`fit_power_law`], with target `target_max`) from the
/// smallest size to `target_max` (or to the largest size plotted, if that is larger); its 95 %
/// prediction interval for one new run as two dashed lines, from [`FractalFit::predict_at`]
/// at 20 log-spaced sizes plus every plotted size; and `validation_large`, the
/// measured `(size, median seconds)` at the large sizes. When `validation_large` is not empty,
/// a lower panel shows the signed error `(predicted − measured)/measured × 100` there.
///
/// `phase` `None` plots the run's total. Errors ([`PlotError::Data`]) name a phase that the
/// series lacks, a bad target, or why the fit failed (e.g. fewer than three sizes).
pub fn fit_figure(
    series: &RunSeries,
    validation_large: &[(usize, f64)],
    phase: Option<&str>,
    target_max: f64,
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    let figure = fit_plot(series, validation_large, phase, target_max)?;
    save_figure(&figure, &dir.join(name))
}

/// The figure [`fit_figure`] writes, in memory.
pub fn fit_plot(
    series: &RunSeries,
    validation_large: &[(usize, f64)],
    phase: Option<&str>,
    target_max: f64,
) -> Result<Figure, PlotError> {
    let title = format!(
        "Fractal fit: {} {} on {}",
        workload_label(series),
        phase.unwrap_or(TOTAL),
        short(&series.device.name)
    );
    let column = column(series, phase, &title)?;
    let fit = fit(&column, target_max, &title)?;
    let large: Vec<(f64, f64)> = validation_large
        .iter()
        .map(|&(n, t)| (n as f64, t))
        .collect();
    let lo = column.sizes[0];
    let hi = large
        .iter()
        .map(|p| p.0)
        .chain(column.sizes.iter().copied())
        .fold(target_max, f64::max);
    let mut xs = log_grid(lo, hi, LOG_SAMPLES);
    xs.extend(&column.sizes);
    xs.extend(large.iter().map(|p| p.0));
    let xs = sorted_unique(xs);
    let predicted: Vec<(f64, (f64, f64, f64))> =
        xs.iter().map(|&n| (n, fit.predict_at(n))).collect();
    let fit_label = fit_label(&fit);
    let mut main = vec![
        Series::new(
            fit_label.clone(),
            predicted.iter().map(|&(n, (t, _, _))| (n, t)).collect(),
            Mark::Line,
        ),
        Series::new(
            PI_LOW_LABEL,
            predicted.iter().map(|&(n, (_, l, _))| (n, l)).collect(),
            Mark::Dashed,
        )
        .in_legend(PI_LABEL),
        Series::new(
            PI_HIGH_LABEL,
            predicted.iter().map(|&(n, (_, _, h))| (n, h)).collect(),
            Mark::Dashed,
        )
        .in_legend(PI_LABEL),
        column.measured(),
    ];
    let lower = if large.is_empty() {
        None
    } else {
        main.push(Series::new(LARGE_LABEL, large.clone(), Mark::Points));
        let errors = large
            .iter()
            .map(|&(n, t)| (n, (fit.predict_at(n).0 - t) / t * 100.0))
            .collect();
        Some(Panel {
            x_label: X_LABEL.into(),
            y_label: "error (%)".into(),
            log_x: true,
            log_y: false,
            series: vec![
                Series::new("error at the large sizes", errors, Mark::Points)
                    .in_legend(fit_label.clone()),
                // Spans the main panel's sizes so that both panels share the x range.
                Series::new("zero error", vec![(lo, 0.0), (hi, 0.0)], Mark::Dotted).in_legend(""),
            ],
        })
    };
    let figure = Figure {
        title,
        main: Panel {
            x_label: X_LABEL.into(),
            y_label: Y_LABEL.into(),
            log_x: true,
            log_y: true,
            series: main,
        },
        lower,
    };
    Ok(figure)
}

/// The paper's Fig. 1 for one phase (or the total, `phase` `None`) of `series`, written as
/// `<dir>/<name>.{svg,png,csv}`: the medians with their 95 % CIs, the fractal fit and the
/// least-squares polynomials of degree 1–4 ([`polynomial_baselines`]: as many degrees as the
/// sizes allow) fitted to the same medians, all extrapolated to `target_max`.
///
/// The axes are linear, as in the paper: a polynomial that extrapolates to a negative time,
/// which a log axis could not show, is drawn as it is. Errors as [`fit_figure`].
pub fn polynomial_vs_fractal_figure(
    series: &RunSeries,
    phase: Option<&str>,
    target_max: f64,
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    let figure = polynomial_vs_fractal_plot(series, phase, target_max)?;
    save_figure(&figure, &dir.join(name))
}

/// The figure [`polynomial_vs_fractal_figure`] writes, in memory.
pub fn polynomial_vs_fractal_plot(
    series: &RunSeries,
    phase: Option<&str>,
    target_max: f64,
) -> Result<Figure, PlotError> {
    let title = format!(
        "Polynomials vs fractal fit: {} {}",
        workload_label(series),
        phase.unwrap_or(TOTAL)
    );
    let column = column(series, phase, &title)?;
    let fit = fit(&column, target_max, &title)?;
    let polynomials = polynomial_baselines(&column.sizes, &column.medians, target_max)
        .map_err(|e| data(&title, format!("the polynomial fits failed: {e}")))?;
    let lo = column.sizes[0];
    let hi = column.sizes.iter().copied().fold(target_max, f64::max);
    let mut xs: Vec<f64> = (0..LINEAR_SAMPLES)
        .map(|i| lo + (hi - lo) * i as f64 / (LINEAR_SAMPLES - 1) as f64)
        .collect();
    xs.extend(&column.sizes);
    let xs = sorted_unique(xs);
    let mut main = vec![Series::new(
        fit_label(&fit),
        xs.iter().map(|&n| (n, fit.predict_at(n).0)).collect(),
        Mark::Line,
    )];
    main.extend(polynomials.iter().map(|p| {
        Series::new(
            format!("degree-{} polynomial", p.degree),
            xs.iter().map(|&n| (n, p.evaluate(n))).collect(),
            Mark::Dashed,
        )
    }));
    main.push(column.measured());
    let figure = Figure {
        title,
        main: Panel {
            x_label: X_LABEL.into(),
            y_label: Y_LABEL.into(),
            log_x: false,
            log_y: false,
            series: main,
        },
        lower: None,
    };
    Ok(figure)
}

/// One phase's (or the total's) medians and CIs, sizes ascending.
struct Column {
    sizes: Vec<f64>,
    medians: Vec<f64>,
    intervals: Vec<(f64, f64, f64)>,
}

impl Column {
    /// The measured points with their CIs as error bars.
    fn measured(&self) -> Series {
        Series::new(
            SMALL_LABEL,
            self.sizes
                .iter()
                .copied()
                .zip(self.medians.clone())
                .collect(),
            Mark::Points,
        )
        .with_intervals(self.intervals.clone())
    }
}

/// The column of `phase` (the total for `None`); an error names a phase the series lacks.
fn column(series: &RunSeries, phase: Option<&str>, title: &str) -> Result<Column, PlotError> {
    if series.points.is_empty() {
        return Err(data(
            title,
            format!("the {} series has no sizes", workload_label(series)),
        ));
    }
    let mut points: Vec<_> = series.points.iter().collect();
    points.sort_by_key(|p| p.size);
    let mut column = Column {
        sizes: Vec::with_capacity(points.len()),
        medians: Vec::with_capacity(points.len()),
        intervals: Vec::with_capacity(points.len()),
    };
    for p in points {
        let (median, ci) = match phase {
            None => (p.total.median_seconds, p.total.ci95),
            Some(name) => match p.phases.iter().find(|ph| ph.name == name) {
                Some(ph) => (ph.median_seconds, ph.ci95),
                None => return Err(data(title, missing_phase(series, name, p.size))),
            },
        };
        let n = p.size as f64;
        column.sizes.push(n);
        column.medians.push(median);
        column.intervals.push((n, ci[0], ci[1]));
    }
    Ok(column)
}

/// Why `name` cannot be plotted: not in the series at all, or missing at one size.
fn missing_phase(series: &RunSeries, name: &str, size: usize) -> String {
    let mut known: Vec<&str> = Vec::new();
    for ph in series.points.iter().flat_map(|p| &p.phases) {
        if !known.contains(&ph.name.as_str()) {
            known.push(&ph.name);
        }
    }
    if known.contains(&name) {
        format!(
            "phase '{name}' is missing at N = {size} in the {} series",
            workload_label(series)
        )
    } else {
        format!(
            "phase '{name}' is not in the {} series (its phases: {}; leave the phase out for \
             the run's total)",
            workload_label(series),
            known.join(", ")
        )
    }
}

/// The paper's fit of `column` at `target`.
fn fit(column: &Column, target: f64, title: &str) -> Result<FractalFit, PlotError> {
    if !(target.is_finite() && target > 0.0) {
        return Err(data(
            title,
            format!("the target size {target} must be positive and finite"),
        ));
    }
    fit_power_law(&column.sizes, &column.medians, target)
        .map_err(|e| data(title, format!("the fractal fit failed: {e}")))
}

/// The legend of the fitted line, with its exponent.
fn fit_label(fit: &FractalFit) -> String {
    format!("fractal fit a*N^c (c = {:.3})", fit.c)
}

/// `count` sizes from `lo` to `hi`, equally spaced in log, ending exactly at both.
fn log_grid(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    let ratio = hi / lo;
    (0..count)
        .map(|i| match i {
            0 => lo,
            i if i + 1 == count => hi,
            i => lo * ratio.powf(i as f64 / (count - 1) as f64),
        })
        .collect()
}

fn sorted_unique(mut xs: Vec<f64>) -> Vec<f64> {
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    xs
}

/// The device name cut to fit a one-column title.
fn short(name: &str) -> String {
    const MAX: usize = 28;
    if name.chars().count() <= MAX {
        name.to_string()
    } else {
        let cut: String = name.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}
