//! Grouped bar charts: error per workload, measured against predicted speedup.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::render::{self, Scale, Swatch, AXIS_PX, TICK_PX};
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
    /// `(category, one value per series)`; `None` where a series has no value for a category
    /// (a variant that made no prediction): drawn as "none", never as a bar of 0, and left
    /// empty in the CSV.
    pub groups: Vec<(String, Vec<Option<f64>>)>,
}

/// Write `figure` as `<stem>.svg`, `<stem>.png` and `<stem>.csv`.
pub fn save_bars(figure: &BarFigure, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    super::save(&super::Drawing::Bars(figure.clone()), stem)
}

/// Refuse a figure without groups, with a group of the wrong length, with a non-finite value
/// or with no value at all; its CSV otherwise.
pub(super) fn check_and_csv(figure: &BarFigure) -> Result<String, PlotError> {
    let bad = figure.groups.is_empty()
        || figure.groups.iter().any(|(_, v)| {
            v.len() != figure.series.len() || v.iter().flatten().any(|x| !x.is_finite())
        })
        || figure
            .groups
            .iter()
            .all(|(_, v)| v.iter().all(Option::is_none));
    if bad {
        return Err(PlotError::Data {
            figure: figure.title.clone(),
            message: "every group needs one finite value (or none) per series, and some value"
                .into(),
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
        let vals: Vec<String> = values
            .iter()
            .map(|v| v.map_or(String::new(), |x| x.to_string()))
            .collect();
        text.push_str(&format!("{},{}\n", csv_field(name), vals.join(",")));
    }
    Ok(text)
}

/// Draw the bars on any backend at `scale`, horizontally: one band per group from top to
/// bottom with its name at the left (cut to fit), the values along the x axis, the legend
/// below.
pub(super) fn draw_bars<DB: DrawingBackend>(
    figure: &BarFigure,
    root: &DrawingArea<DB, plotters::coord::Shift>,
    scale: Scale,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let swatches: Vec<Swatch> = figure
        .series
        .iter()
        .enumerate()
        .map(|(j, name)| Swatch {
            label: name.clone(),
            color: render::color(j),
            line: None,
            marker: None,
            bar: true,
        })
        .collect();
    let body = render::title_area(root, &figure.title, scale)?;
    let body = render::legend_area(&body, &swatches, scale)?;
    let k = figure.series.len().max(1) as f64;
    let n = figure.groups.len() as f64;
    let values = || {
        figure
            .groups
            .iter()
            .flat_map(|(_, v)| v.iter().flatten().copied())
    };
    let max = values().fold(0.0f64, f64::max);
    let min = values().fold(0.0f64, f64::min);
    let pad = (max - min).max(1e-12) * 0.06;
    let font = scale.font(TICK_PX);
    let most = body.dim_in_pixel().0 as f64 * 0.45;
    let mut names = Vec::with_capacity(figure.groups.len());
    let mut widest = 0.0f64;
    for (name, _) in &figure.groups {
        let text = render::fit_text(&body, name, &font, most as i32)?;
        let (w, _) = body
            .estimate_text_size(&text, &font)
            .map_err(|e| e.to_string())?;
        widest = widest.max(f64::from(w));
        names.push(text);
    }
    let mut chart = ChartBuilder::on(&body)
        .margin(scale.px(8.0))
        .margin_right(scale.px(14.0))
        .x_label_area_size(scale.px(44.0))
        .y_label_area_size((widest + scale.0 * 12.0).round() as i32)
        .build_cartesian_2d(
            (min - if min < 0.0 { pad } else { 0.0 })..(max + pad),
            0.0..n,
        )
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(6)
        .x_label_formatter(&|v: &f64| super::render::tick_label(*v, false))
        .bold_line_style(RGBColor(225, 225, 225).stroke_width(scale.upx(1.0)))
        .light_line_style(WHITE.mix(0.0))
        .axis_style(BLACK.stroke_width(scale.upx(1.0)))
        .x_desc(figure.y_label.as_str())
        .label_style(scale.font(TICK_PX))
        .axis_desc_style(scale.font(AXIS_PX))
        .draw()
        .map_err(|e| e.to_string())?;
    // Group i occupies the band [n - i - 1, n - i]: the first group at the top.
    let band = |i: usize| n - i as f64 - 1.0;
    let height = 0.8 / k;
    let base = if min < 0.0 { 0.0 } else { min.max(0.0) };
    // The "none (…)" labels fit their bar's slot, so they never run into the bars beside.
    let slot_px = {
        let (_, top) = chart.backend_coord(&(base, 0.0));
        let (_, bottom) = chart.backend_coord(&(base, height * 0.92));
        f64::from((top - bottom).abs()) / scale.0
    };
    let small = scale.font((TICK_PX * 0.6).min(slot_px * 0.95));
    for j in 0..figure.series.len() {
        let color = render::color(j);
        let y0 = |i: usize| band(i) + 0.9 - (j as f64 + 1.0) * height;
        let boxes = |style: ShapeStyle| {
            figure
                .groups
                .iter()
                .enumerate()
                .filter_map(move |(i, (_, values))| {
                    let v = values[j]?;
                    Some(Rectangle::new(
                        [(base, y0(i)), (v, y0(i) + height * 0.92)],
                        style,
                    ))
                })
        };
        // A series without a value for a group says so where its bar would start.
        for (i, _) in figure
            .groups
            .iter()
            .enumerate()
            .filter(|(_, g)| g.1[j].is_none())
        {
            let text = format!("none ({})", figure.series[j]);
            let (_, h) = root
                .estimate_text_size(&text, &small)
                .map_err(|e| e.to_string())?;
            let (x, y) = chart.backend_coord(&(base, y0(i) + height * 0.46));
            root.draw(&Text::new(
                text,
                (x + scale.px(3.0), y - h as i32 / 2),
                small.clone(),
            ))
            .map_err(|e| e.to_string())?;
        }
        chart
            .draw_series(boxes(color.filled()))
            .map_err(|e| e.to_string())?;
        chart
            .draw_series(boxes(BLACK.stroke_width(1)))
            .map_err(|e| e.to_string())?;
    }
    let x_left = min - if min < 0.0 { pad } else { 0.0 };
    for (i, name) in names.into_iter().enumerate() {
        let (x, y) = chart.backend_coord(&(x_left, band(i) + 0.5));
        let (w, _) = root
            .estimate_text_size(&name, &font)
            .map_err(|e| e.to_string())?;
        root.draw(&Text::new(
            name,
            (x - w as i32 - scale.px(6.0), y - scale.px(TICK_PX * 0.55)),
            font.clone(),
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The measured balance's bars: each split's measured speed-up beside the model's.
pub fn balance_figure(measured: &MeasuredBalance, size: usize) -> BarFigure {
    splits_figure(
        format!("speed-up over one core, SOR batch N = {size}"),
        measured
            .runs
            .iter()
            .map(|r| (r.split.name.clone(), r.predicted, r.speedup)),
    )
}

/// Bars of split runs `(name, the model's speed-up, the measured one)`.
pub fn splits_figure(
    title: String,
    runs: impl IntoIterator<Item = (String, f64, f64)>,
) -> BarFigure {
    BarFigure {
        title,
        y_label: "speed-up K over T1".into(),
        series: vec!["predicted (model)".into(), "measured".into()],
        groups: runs
            .into_iter()
            .map(|(name, predicted, measured)| (name, vec![Some(predicted), Some(measured)]))
            .collect(),
    }
}
