//! The max-plus validation figure: time against N on log-log axes, one line per model
//! variant and the measured points with their CIs; below, each variant's error.

use std::path::{Path, PathBuf};

use super::{save_figure, Figure, Mark, Panel, PlotError, Series};
use crate::experiments::validate_maxplus::MaxPlusValidation;

/// Errors below this (%) are drawn at it: the error panel's axis is logarithmic.
const ERROR_FLOOR: f64 = 0.01;

/// Draw `v` as `<dir>/<name>.{svg,png,csv}`.
pub fn maxplus_figure(
    v: &MaxPlusValidation,
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    let x = |size: usize| size as f64;
    let Some(first) = v.rows.first() else {
        return Err(PlotError::Data {
            figure: v.graph.clone(),
            message: "no measured size to plot".into(),
        });
    };
    let mut main = Vec::new();
    let mut lower = Vec::new();
    for (i, p) in first.predictions.iter().enumerate() {
        let label = if p.published {
            p.model.clone()
        } else {
            format!("{} (extension)", p.model)
        };
        let predicted = v
            .rows
            .iter()
            .map(|r| (x(r.size), r.predictions[i].seconds))
            .collect();
        let errors = v
            .rows
            .iter()
            .map(|r| (x(r.size), r.abs_percent_errors[i].max(ERROR_FLOOR)))
            .collect();
        main.push(Series::new(label.clone(), predicted, Mark::Dashed));
        lower.push(Series::new(label, errors, Mark::Line));
    }
    let measured = v
        .rows
        .iter()
        .map(|r| (x(r.size), r.measured_seconds))
        .collect();
    let intervals = v
        .rows
        .iter()
        .map(|r| (x(r.size), r.measured_ci95[0], r.measured_ci95[1]))
        .collect();
    main.push(
        Series::new("measured (median, 95 % CI)", measured, Mark::Points).with_intervals(intervals),
    );
    let figure = Figure {
        title: format!("max-plus model: {} on {}", v.graph, short(&v.device)),
        main: Panel {
            x_label: format!("N ({})", size_meaning(v)),
            y_label: "time per iteration (s)".into(),
            log_x: true,
            log_y: true,
            series: main,
        },
        lower: Some(Panel {
            x_label: format!("N ({})", size_meaning(v)),
            y_label: "abs. error (%)".into(),
            log_x: true,
            log_y: true,
            series: lower,
        }),
    };
    save_figure(&figure, &dir.join(name))
}

fn size_meaning(v: &MaxPlusValidation) -> &'static str {
    use crate::model::maxplus::LaunchPlan;
    match v.kernel.plan {
        LaunchPlan::Elements => "elements",
        LaunchPlan::Interior2d | LaunchPlan::AntiDiagonals => "grid side",
        LaunchPlan::LineSweeps3d => "cube side",
    }
}

/// The device name cut to fit a one-column title.
fn short(name: &str) -> String {
    const MAX: usize = 36;
    if name.chars().count() <= MAX {
        name.to_string()
    } else {
        let cut: String = name.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}
