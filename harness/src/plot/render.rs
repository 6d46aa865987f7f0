//! Drawing a [`Figure`] on any plotters backend. Log axes are drawn in log10 coordinates
//! with ticks labelled by their real value, so one code path serves every axis kind.

use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Figure, Mark, Panel, PlotError};

const WIDTH: u32 = 800;
const HEIGHT: u32 = 600;
/// Canvas size in pixels: readable when printed one column wide.
pub(super) const SIZE: (u32, u32) = (WIDTH, HEIGHT);
const FONT: &str = "sans-serif";

pub(super) fn ensure_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled font is valid; a failure would only leave plotters without a font,
        // which the drawing calls then report as an error.
        let _ = plotters::style::register_font(
            FONT,
            FontStyle::Normal,
            include_bytes!("../../assets/DejaVuSans.ttf"),
        );
    });
}

/// Colour-blind-safe series colours (Okabe & Ito, 2008).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
];

/// The colour of series `i`.
pub(super) fn color(i: usize) -> RGBAColor {
    PALETTE[i % PALETTE.len()].to_rgba()
}

/// Refuse empty figures and non-positive values on log axes before drawing anything.
pub(super) fn check(figure: &Figure) -> Result<(), PlotError> {
    let err = |message: String| PlotError::Data {
        figure: figure.title.clone(),
        message,
    };
    for panel in std::iter::once(&figure.main).chain(figure.lower.as_ref()) {
        if panel.series.iter().all(|s| s.points.is_empty()) {
            return Err(err(format!("panel '{}' has no points", panel.y_label)));
        }
        for s in &panel.series {
            for &(x, y) in &s.points {
                if !x.is_finite() || !y.is_finite() {
                    return Err(err(format!("series '{}' has a non-finite point", s.label)));
                }
                if (panel.log_x && x <= 0.0) || (panel.log_y && y <= 0.0) {
                    return Err(err(format!(
                        "series '{}' has ({x}, {y}), which a log axis cannot show",
                        s.label
                    )));
                }
            }
        }
    }
    Ok(())
}

/// Draw `figure` on `root`.
pub(super) fn draw<DB: DrawingBackend>(
    figure: &Figure,
    root: &DrawingArea<DB, Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let titled = root
        .titled(&figure.title, (FONT, 22))
        .map_err(|e| e.to_string())?;
    match &figure.lower {
        Some(lower) => {
            let (top, bottom) = titled.split_vertically((HEIGHT as f64 * 0.62) as u32);
            draw_panel(&figure.main, &top, false, true)?;
            // A lower panel whose series all appear above shares their colours and legend.
            let own_legend = lower
                .series
                .iter()
                .any(|s| !figure.main.series.iter().any(|m| m.label == s.label));
            draw_panel(lower, &bottom, true, own_legend)
        }
        None => draw_panel(&figure.main, &titled, true, true),
    }
}

fn to_axis(v: f64, log: bool) -> f64 {
    if log {
        v.log10()
    } else {
        v
    }
}

fn tick_label(v: f64, log: bool) -> String {
    if log && (v - v.round()).abs() < 1e-9 {
        return format!("1e{}", v.round() as i64);
    }
    let real = if log { 10f64.powf(v) } else { v };
    crate::export::table::sig(real, 3)
}

/// Tick count: one per decade on a log axis (so ticks fall on powers of ten), else 8.
fn tick_count(range: &std::ops::Range<f64>, log: bool) -> usize {
    if log {
        ((range.end.floor() - range.start.ceil()) as usize + 1).clamp(2, 12)
    } else {
        8
    }
}

fn range(values: impl Iterator<Item = f64>, log: bool) -> std::ops::Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let (lo, hi) = (to_axis(lo, log), to_axis(hi, log));
    let pad = if hi > lo { (hi - lo) * 0.05 } else { 0.5 };
    (lo - pad)..(hi + pad)
}

fn draw_panel<DB: DrawingBackend>(
    panel: &Panel,
    area: &DrawingArea<DB, Shift>,
    with_x_label: bool,
    legend: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let xs = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = panel.series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.intervals.iter().flat_map(|i| [i.1, i.2]))
            .filter(|v| !panel.log_y || *v > 0.0)
    });
    let (xr, yr) = (range(xs, panel.log_x), range(ys, panel.log_y));
    let (x_ticks, y_ticks) = (tick_count(&xr, panel.log_x), tick_count(&yr, panel.log_y));
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(if with_x_label { 50 } else { 30 })
        .y_label_area_size(80)
        .build_cartesian_2d(xr, yr)
        .map_err(|e| e.to_string())?;
    let (log_x, log_y) = (panel.log_x, panel.log_y);
    let x_fmt = move |v: &f64| tick_label(*v, log_x);
    let y_fmt = move |v: &f64| tick_label(*v, log_y);
    let mut mesh = chart.configure_mesh();
    mesh.y_desc(panel.y_label.as_str())
        .x_labels(x_ticks)
        .y_labels(y_ticks)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .light_line_style(WHITE.mix(0.0));
    if with_x_label {
        mesh.x_desc(panel.x_label.as_str());
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for (i, s) in panel.series.iter().enumerate() {
        let color = color(i);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (to_axis(x, log_x), to_axis(y, log_y)))
            .collect();
        let legend_color = color;
        let drawn = match s.mark {
            Mark::Line => chart
                .draw_series(LineSeries::new(pts, color.stroke_width(2)))
                .map_err(|e| e.to_string())?,
            Mark::Dashed => chart
                .draw_series(DashedLineSeries::new(pts, 8, 5, color.stroke_width(2)))
                .map_err(|e| e.to_string())?,
            Mark::Points => chart
                .draw_series(pts.into_iter().map(|p| Circle::new(p, 5, color.filled())))
                .map_err(|e| e.to_string())?,
        };
        drawn.label(s.label.as_str()).legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 18, y)], legend_color.stroke_width(3))
        });
        let bars = s
            .intervals
            .iter()
            .filter(|i| !log_y || (i.1 > 0.0 && i.2 > 0.0))
            .map(|&(x, lo, hi)| {
                let x = to_axis(x, log_x);
                PathElement::new(
                    vec![(x, to_axis(lo, log_y)), (x, to_axis(hi, log_y))],
                    color.stroke_width(2),
                )
            });
        chart.draw_series(bars).map_err(|e| e.to_string())?;
    }
    if !legend {
        return Ok(());
    }
    chart
        .configure_series_labels()
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| e.to_string())
}
