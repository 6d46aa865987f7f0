//! Figures of the fractal prediction against the measurements, over validations: predicted
//! against measured time ([`parity_figure`]) and the error per workload
//! ([`error_bars_figure`]).

use std::path::{Path, PathBuf};

use super::{data, workload_label, PAPER, TOTAL, WINDOWED};
use crate::experiments::validate::Validation;
use crate::fit::forecast::Variant;
use crate::plot::{save_bars, save_figure, BarFigure, Figure, Mark, Panel, PlotError, Series};

/// Predicted (x) against measured (y) time of the run's total, log-log, written as
/// `<dir>/<name>.{svg,png,csv}`: one series per workload and variant (`workload[-layout]
/// (paper)`, `(windowed)`, `(calibrated)`; validations of the same label are merged) from the
/// `total` rows
/// of each [`Validation`], with the lines y = x and y = 0.9x, y = 1.1x
/// (±10 %) across the decades that the data span.
///
/// Errors ([`PlotError::Data`]) when no validation has a paper-variant `total` row.
pub fn parity_figure(
    validations: &[Validation],
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    save_figure(&parity_plot(validations)?, &dir.join(name))
}

/// The figure [`parity_figure`] writes, in memory.
pub fn parity_plot(validations: &[Validation]) -> Result<Figure, PlotError> {
    let title = "Fractal prediction vs measurement (run total)".to_string();
    let mut groups: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for v in validations {
        for variant in Variant::ALL {
            let label = format!("{} ({variant})", workload_label(&v.series));
            let points = v
                .rows
                .iter()
                .filter(|r| r.variant == variant && r.phase == TOTAL)
                .map(|r| (r.predicted_seconds, r.measured_seconds));
            match groups.iter_mut().find(|g| g.0 == label) {
                Some(g) => g.1.extend(points),
                None => groups.push((label, points.collect())),
            }
        }
    }
    groups.retain(|g| !g.1.is_empty());
    let positive = groups
        .iter()
        .flat_map(|g| g.1.iter().flat_map(|&(x, y)| [x, y]))
        .filter(|v| v.is_finite() && *v > 0.0);
    let (lo, hi) = positive.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if groups.is_empty() || !lo.is_finite() {
        return Err(data(
            &title,
            format!(
                "none of the {} validation(s) has a positive paper-variant '{TOTAL}' row",
                validations.len()
            ),
        ));
    }
    // The reference lines span whole decades, so that the log axes get at least two
    // labelled powers of ten even when the data span less than one.
    let lo = 10f64.powf(lo.log10().floor());
    let hi = 10f64.powf(hi.log10().ceil()).max(10.0 * lo);
    let line = |k: f64| vec![(lo, k * lo), (hi, k * hi)];
    let mut main: Vec<Series> = groups
        .into_iter()
        .map(|(label, points)| Series::new(label, points, Mark::Points))
        .collect();
    main.push(Series::new("y = x", line(1.0), Mark::Line));
    main.push(Series::new("y = 0.9x (-10 %)", line(0.9), Mark::Dotted));
    main.push(Series::new("y = 1.1x (+10 %)", line(1.1), Mark::Dotted));
    let figure = Figure {
        title,
        main: Panel {
            x_label: "predicted time (s)".into(),
            y_label: "measured time (s)".into(),
            log_x: true,
            log_y: true,
            series: main,
        },
        lower: None,
    };
    Ok(figure)
}

/// Bars of the fractal prediction's absolute percentage error of the run's total, written as
/// `<dir>/<name>.{svg,png,csv}` by [`save_bars`]: per validation one group for the paper
/// variant and, where they ran, one each for the windowed and calibrated variants (labelled
/// `workload[-layout] (variant)`), two bars each, the median and the maximum of
/// [`Validation::total_error`], [`Validation::windowed_total_error`] and
/// [`Validation::calibrated_total_error`].
///
/// Errors ([`PlotError::Data`]) when `validations` is empty or one has no total error (no
/// paper-variant `total` row), naming the workload.
pub fn error_bars_figure(
    validations: &[Validation],
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    save_bars(&error_bars_plot(validations)?, &dir.join(name))
}

/// The figure [`error_bars_figure`] writes, in memory.
pub fn error_bars_plot(validations: &[Validation]) -> Result<BarFigure, PlotError> {
    let title = "Fractal prediction error of the run total".to_string();
    if validations.is_empty() {
        return Err(data(&title, "no validation to plot".into()));
    }
    let mut groups = Vec::with_capacity(2 * validations.len());
    for v in validations {
        let label = workload_label(&v.series);
        let e = &v.total_error;
        if !(e.median.is_finite() && e.max.is_finite()) {
            return Err(data(
                &title,
                format!("{label} has no paper-variant '{TOTAL}' error to plot"),
            ));
        }
        groups.push((
            format!("{label} ({PAPER})"),
            vec![Some(e.median), Some(e.max)],
        ));
        // The windowed variant where it ran (the device had a calibration and ≥ 3 sizes
        // passed the window rules).
        if let Some(w) = v
            .windowed_total_error
            .as_ref()
            .filter(|w| w.median.is_finite() && w.max.is_finite())
        {
            groups.push((
                format!("{label} ({WINDOWED})"),
                vec![Some(w.median), Some(w.max)],
            ));
        }
        if let Some(c) = v
            .calibrated_total_error
            .as_ref()
            .filter(|c| c.median.is_finite() && c.max.is_finite())
        {
            groups.push((
                format!("{label} ({})", Variant::Calibrated),
                vec![Some(c.median), Some(c.max)],
            ));
        }
    }
    let figure = BarFigure {
        title,
        y_label: "abs. error of the total (%)".into(),
        series: vec!["median".into(), "maximum".into()],
        groups,
    };
    Ok(figure)
}
