//! The max-plus validation figure: time against N on log-log axes, one line per model
//! variant (the paper's dashed, our extensions solid) and the measured points with their CIs;
//! below, each variant's error.

use std::path::{Path, PathBuf};

use super::{save_figure, Figure, Mark, Panel, PlotError, Series};
use crate::experiments::validate_maxplus::{MaxPlusRow, MaxPlusValidation};
use crate::model::maxplus::LaunchPlan;

/// Errors below this (%) are drawn at it: the error panel's axis is logarithmic.
const ERROR_FLOOR: f64 = 0.01;

/// Draw `v` as `<dir>/<name>.{svg,png,csv}`.
pub fn maxplus_figure(
    v: &MaxPlusValidation,
    dir: &Path,
    name: &str,
) -> Result<Vec<PathBuf>, PlotError> {
    let figure = maxplus_plot(&v.graph, &v.device, v.kernel.plan, &v.rows)?;
    save_figure(&figure, &dir.join(name))
}

/// The figure of a max-plus validation of `graph` on `device` from its rows (as stored in
/// its JSON): predicted per variant and measured against N, and each variant's error.
pub fn maxplus_plot(
    graph: &str,
    device: &str,
    plan: LaunchPlan,
    rows: &[MaxPlusRow],
) -> Result<Figure, PlotError> {
    let x = |size: usize| size as f64;
    let Some(first) = rows.first() else {
        return Err(PlotError::Data {
            figure: graph.to_string(),
            message: "no measured size to plot".into(),
        });
    };
    let models = first.predictions.len();
    if let Some(r) = rows
        .iter()
        .find(|r| r.predictions.len() != models || r.abs_percent_errors.len() != models)
    {
        return Err(PlotError::Data {
            figure: graph.to_string(),
            message: format!(
                "N = {} has {} predictions and {} errors where the first size has {models} of each",
                r.size,
                r.predictions.len(),
                r.abs_percent_errors.len()
            ),
        });
    }
    let mut main = Vec::new();
    let mut lower = Vec::new();
    for (i, p) in first.predictions.iter().enumerate() {
        let label = if p.published {
            p.model.clone()
        } else {
            format!("{} (extension)", p.model)
        };
        let predicted = rows
            .iter()
            .map(|r| (x(r.size), r.predictions[i].seconds))
            .collect();
        let errors = rows
            .iter()
            .map(|r| (x(r.size), r.abs_percent_errors[i].max(ERROR_FLOOR)))
            .collect();
        // The paper's variants dashed, ours solid, in both panels.
        let mark = if p.published {
            Mark::Dashed
        } else {
            Mark::Line
        };
        main.push(Series::new(label.clone(), predicted, mark));
        lower.push(Series::new(label, errors, mark));
    }
    let measured = rows
        .iter()
        .map(|r| (x(r.size), r.measured_seconds))
        .collect();
    let intervals = rows
        .iter()
        .map(|r| (x(r.size), r.measured_ci95[0], r.measured_ci95[1]))
        .collect();
    main.push(
        Series::new("measured (median, 95 % CI)", measured, Mark::Points).with_intervals(intervals),
    );
    let figure = Figure {
        title: format!("max-plus model: {graph} on {}", short(device)),
        main: Panel {
            x_label: format!("N ({})", size_meaning(plan)),
            y_label: "time per iteration (s)".into(),
            log_x: true,
            log_y: true,
            series: main,
        },
        lower: Some(Panel {
            x_label: format!("N ({})", size_meaning(plan)),
            y_label: "abs. error (%)".into(),
            log_x: true,
            log_y: true,
            series: lower,
        }),
    };
    Ok(figure)
}

fn size_meaning(plan: LaunchPlan) -> &'static str {
    match plan {
        LaunchPlan::Elements => "elements",
        LaunchPlan::Interior2d | LaunchPlan::AntiDiagonals => "grid side",
        LaunchPlan::LineSweeps3d => "cube side",
    }
}

/// The device name cut to fit a one-column title.
pub(crate) fn short(name: &str) -> String {
    const MAX: usize = 36;
    if name.chars().count() <= MAX {
        name.to_string()
    } else {
        let cut: String = name.chars().take(MAX - 1).collect();
        format!("{cut}…")
    }
}
