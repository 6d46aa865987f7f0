//! Grouped bar charts: error per workload, measured against predicted speedup.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::PlotError;
use crate::experiments::balance::MeasuredBalance;
use crate::export::csv::csv_field;

/// Bars in groups: one group per category (a workload), one bar per series (a model).
#[derive(Debug, Clone, PartialEq)]
pub struct BarFigure {
    /// Title.
    pub title: String,
    /// y-axis label, with unit.
    pub y_label: String,
    /// Names of the bars within a group (the legend).
    pub series: Vec<String>,
    /// `(category, one value per series)`.
    pub groups: Vec<(String, Vec<f64>)>,
}

/// Write `figure` as `<stem>.svg`, `<stem>.png` and `<stem>.csv`.
pub fn save_bars(figure: &BarFigure, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let bad = figure.groups.is_empty()
        || figure
            .groups
            .iter()
            .any(|(_, v)| v.len() != figure.series.len() || v.iter().any(|x| !x.is_finite()));
    if bad {
        return Err(PlotError::Data {
            figure: figure.title.clone(),
            message: "every group needs one finite value per series".into(),
        });
    }
    let mut text = format!(
        "category,{}\n",
        figure
            .series
            .iter()
            .map(|s| csv_field(s))
            .collect::<Vec<_>>()
            .join(",")
    );
    for (name, values) in &figure.groups {
        let vals: Vec<String> = values.iter().map(f64::to_string).collect();
        text.push_str(&format!("{},{}\n", csv_field(name), vals.join(",")));
    }
    super::save_drawing(figure, &text, stem)
}

/// Draw the bars on any backend.
pub(super) fn draw_bars<DB: DrawingBackend>(
    figure: &BarFigure,
    root: &DrawingArea<DB, plotters::coord::Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    const FONT: &str = "sans-serif";
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let k = figure.series.len().max(1) as f64;
    let n = figure.groups.len() as f64;
    let max = figure
        .groups
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max);
    let min = figure
        .groups
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::min);
    let pad = (max - min).max(1e-12) * 0.1;
    let names: Vec<String> = figure.groups.iter().map(|g| g.0.clone()).collect();
    let mut chart = ChartBuilder::on(root)
        .caption(&figure.title, (FONT, 22))
        .margin(12)
        .x_label_area_size(60)
        .y_label_area_size(80)
        .build_cartesian_2d(
            0.0..n,
            (min - if min < 0.0 { pad } else { 0.0 })..(max + pad),
        )
        .map_err(|e| e.to_string())?;
    let label = move |v: &f64| {
        let i = v.floor() as usize;
        if (v - v.floor() - 0.5).abs() < 1e-6 {
            names.get(i).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE)
        .x_labels(figure.groups.len() * 2 + 1)
        .x_label_formatter(&label)
        .y_desc(figure.y_label.as_str())
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / k;
    for (j, series) in figure.series.iter().enumerate() {
        let color = super::render::color(j);
        let bars = figure.groups.iter().enumerate().map(|(i, (_, values))| {
            let x0 = i as f64 + 0.1 + j as f64 * width;
            Rectangle::new([(x0, 0.0), (x0 + width * 0.95, values[j])], color.filled())
        });
        chart
            .draw_series(bars)
            .map_err(|e| e.to_string())?
            .label(series.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(|e| e.to_string())
}

/// The measured balance's bars: each split's measured speed-up beside the model's.
pub fn balance_figure(measured: &MeasuredBalance, size: usize) -> BarFigure {
    BarFigure {
        title: format!("speed-up over one core, SOR batch N = {size}"),
        y_label: "speed-up K over T1".into(),
        series: vec!["predicted (model)".into(), "measured".into()],
        groups: measured
            .runs
            .iter()
            .map(|r| (r.split.name.clone(), vec![r.predicted, r.speedup]))
            .collect(),
    }
}
