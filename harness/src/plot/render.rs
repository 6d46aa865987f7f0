//! Drawing a [`Figure`] on any plotters backend, in the house style every figure shares.
//!
//! - **Size**: the SVG canvas is 560 × 420 px, so that printed one column wide (8.5 cm) the
//!   tick labels are about 6 pt, the legend 5.5 pt and the title 7 pt (plotters draws a font
//!   of size s at 0.81·s px); the PNG is the same drawing scaled by [`PNG_SCALE`]
//!   (1008 × 756 px, 8.5 cm at 300 dpi).
//! - **Series** differ by colour *and* by marker shape (circle, triangle, square, diamond,
//!   cross, …) and, for lines, by dash pattern ([`Mark`]), so a figure survives greyscale
//!   printing and colour-blind readers. The palette is Okabe & Ito's, reordered so that
//!   neighbouring series differ in lightness.
//! - **The legend** sits in a band below the axes, never over the data.
//! - **Log axes** are drawn in log10 coordinates with ticks labelled by their real value, so
//!   one code path serves every axis kind.
//!
//! Nothing here depends on the time, the machine or the order of a hash map: the same figure
//! gives the same SVG bytes.

use std::sync::Once;

use plotters::coord::CoordTranslate;
use plotters::coord::Shift;
use plotters::element::{DashedPathElement, EmptyElement};
use plotters::prelude::*;

use super::{Figure, Mark, Panel, PlotError};

const WIDTH: u32 = 560;
const HEIGHT: u32 = 420;
/// Canvas size of the SVG, in pixels.
pub(super) const SIZE: (u32, u32) = (WIDTH, HEIGHT);
/// The PNG is drawn this many times larger than the SVG: print resolution at one column.
pub(super) const PNG_SCALE: f64 = 1.8;
const FONT: &str = "sans-serif";
/// Font sizes at scale 1, px.
const TITLE_PX: f64 = 20.0;
pub(super) const AXIS_PX: f64 = 18.0;
pub(super) const TICK_PX: f64 = 17.0;
const LEGEND_PX: f64 = 16.0;
/// Line series with more points than this are drawn without markers (they are curves, not
/// measurements).
const MAX_MARKED_POINTS: usize = 20;

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

/// A length scale: 1 for the SVG, [`PNG_SCALE`] for the PNG.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Scale(pub(super) f64);

impl Scale {
    /// `v` px at this scale, as a backend length.
    pub(super) fn px(self, v: f64) -> i32 {
        (v * self.0).round() as i32
    }

    /// `v` px at this scale, unsigned.
    pub(super) fn upx(self, v: f64) -> u32 {
        (v * self.0).round().max(0.0) as u32
    }

    /// The font of `size` px.
    pub(super) fn font(self, size: f64) -> TextStyle<'static> {
        (FONT, size * self.0).into_font().color(&BLACK)
    }
}

/// Colour-blind-safe series colours (Okabe & Ito, 2008), ordered so that consecutive series
/// also differ in lightness (blue, orange, black, vermillion, sky blue, green, purple).
const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 0, 0),
    RGBColor(213, 94, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
];

/// The colour of series `i`.
pub(super) fn color(i: usize) -> RGBAColor {
    PALETTE[i % PALETTE.len()].to_rgba()
}

/// Marker shapes, cycled with a different period than the palette so that colour and shape
/// together stay distinct for 35 series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    Circle,
    Triangle,
    Square,
    Diamond,
    Cross,
}

const SHAPES: [Shape; 5] = [
    Shape::Circle,
    Shape::Triangle,
    Shape::Square,
    Shape::Diamond,
    Shape::Cross,
];

/// The marker of series `i`.
pub(super) fn shape(i: usize) -> Shape {
    SHAPES[i % SHAPES.len()]
}

/// Draw a marker of `shape` centred at `at` on `area`, `radius` px, filled (a cross is
/// stroked `stroke` px wide).
pub(super) fn draw_marker<DB: DrawingBackend, CT: CoordTranslate>(
    area: &DrawingArea<DB, CT>,
    shape: Shape,
    at: CT::From,
    radius: i32,
    color: RGBAColor,
    stroke: u32,
) -> Result<(), String>
where
    CT::From: Clone,
    DB::ErrorType: 'static,
{
    let r = radius;
    let filled = ShapeStyle::from(color).filled();
    let anchor = EmptyElement::at(at);
    match shape {
        Shape::Circle => area.draw(&(anchor + Circle::new((0, 0), r, filled))),
        Shape::Triangle => {
            let h = r + r / 4;
            area.draw(
                &(anchor + Polygon::new(vec![(0, -h), (h, h * 3 / 4), (-h, h * 3 / 4)], filled)),
            )
        }
        Shape::Square => {
            let s = r * 4 / 5;
            area.draw(&(anchor + Rectangle::new([(-s, -s), (s, s)], filled)))
        }
        Shape::Diamond => {
            let d = r + r / 4;
            area.draw(&(anchor + Polygon::new(vec![(0, -d), (d, 0), (0, d), (-d, 0)], filled)))
        }
        Shape::Cross => {
            let style = ShapeStyle::from(color).stroke_width(stroke);
            area.draw(
                &(anchor
                    + PathElement::new(vec![(-r, -r), (r, r)], style)
                    + PathElement::new(vec![(-r, r), (r, -r)], style)),
            )
        }
    }
    .map_err(|e| e.to_string())
}

/// How one legend entry is drawn.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Swatch {
    /// The label.
    pub(super) label: String,
    /// Colour.
    pub(super) color: RGBAColor,
    /// A line (with its dash pattern, px at scale 1), or none.
    pub(super) line: Option<Option<(f64, f64)>>,
    /// A marker, or none.
    pub(super) marker: Option<Shape>,
    /// A filled box (bars).
    pub(super) bar: bool,
}

/// The dash pattern of a line mark, px at scale 1 (`None`: solid).
fn dash(mark: Mark) -> Option<(f64, f64)> {
    match mark {
        Mark::Line | Mark::Points => None,
        Mark::Dashed => Some((8.0, 5.0)),
        Mark::Dotted => Some((2.0, 4.0)),
    }
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

/// Each series' style index: by label, in order of first appearance (main panel first), so a
/// lower panel's series that repeat the main panel's look the same.
fn style_indices(figure: &Figure) -> Vec<String> {
    let mut labels: Vec<String> = Vec::new();
    for s in std::iter::once(&figure.main)
        .chain(figure.lower.as_ref())
        .flat_map(|p| &p.series)
    {
        if !labels.iter().any(|l| l == s.key()) {
            labels.push(s.key().to_string());
        }
    }
    labels
}

/// Whether a series of this mark and length is drawn with markers: measurements always,
/// lines through a few sizes (a model at the measured sizes) too, never a reference line
/// (two points, or dotted) or a smooth curve.
fn marked(mark: Mark, points: usize) -> bool {
    match mark {
        Mark::Points => true,
        Mark::Dotted => false,
        Mark::Line | Mark::Dashed => (3..=MAX_MARKED_POINTS).contains(&points),
    }
}

/// Draw `figure` on `root` at `scale`.
pub(super) fn draw<DB: DrawingBackend>(
    figure: &Figure,
    root: &DrawingArea<DB, Shift>,
    scale: Scale,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(|e| e.to_string())?;
    let labels = style_indices(figure);
    let mut swatches: Vec<Swatch> = Vec::new();
    for s in std::iter::once(&figure.main)
        .chain(figure.lower.as_ref())
        .flat_map(|p| &p.series)
    {
        let line = (s.mark != Mark::Points).then(|| dash(s.mark));
        let marker = marked(s.mark, s.points.len());
        if s.key().is_empty() {
            continue;
        }
        if let Some(w) = swatches.iter_mut().find(|w| w.label == s.key()) {
            // Points and a line under one entry: the legend shows both.
            w.line = w.line.or(line);
            if marker && w.marker.is_none() {
                let i = labels.iter().position(|l| l == s.key()).unwrap_or(0);
                w.marker = Some(shape(i));
            }
            continue;
        }
        let i = labels.iter().position(|l| l == s.key()).unwrap_or(0);
        swatches.push(Swatch {
            label: s.key().to_string(),
            color: color(i),
            line,
            marker: marker.then(|| shape(i)),
            bar: false,
        });
    }
    let body = title_area(root, &figure.title, scale)?;
    let body = legend_area(&body, &swatches, scale)?;
    match &figure.lower {
        Some(lower) => {
            let height = body.dim_in_pixel().1 as f64;
            let (top, bottom) = body.split_vertically((height * 0.62) as u32);
            draw_panel(&figure.main, &top, false, &labels, scale)?;
            draw_panel(lower, &bottom, true, &labels, scale)
        }
        None => draw_panel(&figure.main, &body, true, &labels, scale),
    }
}

/// Draw `title` centred at the top, cut with an ellipsis to the width; returns the area below.
pub(super) fn title_area<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    scale: Scale,
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    let font = scale.font(TITLE_PX);
    let width = root.dim_in_pixel().0 as i32 - scale.px(16.0);
    let text = fit_text(root, title, &font, width)?;
    let (w, _) = root
        .estimate_text_size(&text, &font)
        .map_err(|e| e.to_string())?;
    let x = (root.dim_in_pixel().0 as i32 - w as i32) / 2;
    root.draw(&Text::new(text, (x, scale.px(6.0)), font))
        .map_err(|e| e.to_string())?;
    Ok(root.margin(scale.px(TITLE_PX + 12.0), 0, 0, 0))
}

/// `text`, cut with an ellipsis so that it fits `width` px in `font`.
pub(super) fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    font: &TextStyle,
    width: i32,
) -> Result<String, String>
where
    DB::ErrorType: 'static,
{
    let fits = |t: &str| -> Result<bool, String> {
        let (w, _) = area
            .estimate_text_size(t, font)
            .map_err(|e| e.to_string())?;
        Ok(w as i32 <= width)
    };
    if fits(text)? {
        return Ok(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    let mut keep = chars.len();
    while keep > 1 {
        keep -= 1;
        let cut: String = chars[..keep].iter().collect::<String>() + "…";
        if fits(&cut)? {
            return Ok(cut);
        }
    }
    Ok("…".into())
}

/// Lay the swatches out in rows under the axes and draw them; returns the area above them.
pub(super) fn legend_area<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    swatches: &[Swatch],
    scale: Scale,
) -> Result<DrawingArea<DB, Shift>, String>
where
    DB::ErrorType: 'static,
{
    if swatches.is_empty() {
        return Ok(root.clone());
    }
    let font = scale.font(LEGEND_PX);
    let (width, height) = root.dim_in_pixel();
    let sample = scale.px(30.0);
    let gap = scale.px(6.0);
    let spacing = scale.px(18.0);
    let left = scale.px(12.0);
    let row_height = scale.px(LEGEND_PX + 6.0);
    let max_text = width as i32 - left * 2 - sample - gap;
    // (row, x, text)
    let mut placed: Vec<(i32, i32, String)> = Vec::with_capacity(swatches.len());
    let (mut row, mut x) = (0, left);
    for s in swatches {
        let text = fit_text(root, &s.label, &font, max_text)?;
        let (w, _) = root
            .estimate_text_size(&text, &font)
            .map_err(|e| e.to_string())?;
        let entry = sample + gap + w as i32;
        if x > left && x + entry > width as i32 - left {
            row += 1;
            x = left;
        }
        placed.push((row, x, text));
        x += entry + spacing;
    }
    let band = (row + 1) * row_height + scale.px(8.0);
    let top = height as i32 - band;
    for (s, (row, x, text)) in swatches.iter().zip(placed) {
        let y = top + scale.px(4.0) + row * row_height + row_height / 2;
        draw_swatch(root, s, (x, y), sample, scale)?;
        root.draw(&Text::new(
            text,
            (x + sample + gap, y - scale.px(LEGEND_PX * 0.55)),
            font.clone(),
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(root.margin(0, band, 0, 0))
}

/// One legend sample: a line (dashed as the series), a marker, or a box, `width` px wide,
/// vertically centred on `at.1`.
fn draw_swatch<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &Swatch,
    at: (i32, i32),
    width: i32,
    scale: Scale,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (x, y) = at;
    if s.bar {
        let h = scale.px(6.0);
        root.draw(&Rectangle::new(
            [(x + width / 4, y - h), (x + width * 3 / 4, y + h)],
            s.color.filled(),
        ))
        .map_err(|e| e.to_string())?;
        return root
            .draw(&Rectangle::new(
                [(x + width / 4, y - h), (x + width * 3 / 4, y + h)],
                BLACK.stroke_width(1),
            ))
            .map_err(|e| e.to_string());
    }
    if let Some(pattern) = s.line {
        let style = s.color.stroke_width(scale.upx(2.0));
        let ends = vec![(x, y), (x + width, y)];
        match pattern {
            None => root.draw(&PathElement::new(ends, style)),
            Some((on, off)) => root.draw(&DashedPathElement::new(
                ends,
                scale.upx(on),
                scale.upx(off),
                style,
            )),
        }
        .map_err(|e| e.to_string())?;
    }
    if let Some(shape) = s.marker {
        draw_marker(
            root,
            shape,
            (x + width / 2, y),
            scale.px(4.5),
            s.color,
            scale.upx(2.0),
        )?;
    }
    Ok(())
}

fn to_axis(v: f64, log: bool) -> f64 {
    if log {
        v.log10()
    } else {
        v
    }
}

/// A tick's label: powers of ten on a log axis as `1e3`, else three significant digits with
/// trailing zeros dropped, so that one axis reads 0, 50, 100, 150 and not 0, 50.0, 100, 150.
pub(super) fn tick_label(v: f64, log: bool) -> String {
    if log && (v - v.round()).abs() < 1e-9 {
        return format!("1e{}", v.round() as i64);
    }
    let real = if log { 10f64.powf(v) } else { v };
    let label = crate::export::table::sig(real, 3);
    if label.contains('.') && !label.contains('e') {
        label
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        label
    }
}

/// Tick count: one per decade on a log axis (so ticks fall on powers of ten), else as many
/// as `room` (the axis length over a label's spacing) allows, at most 6.
fn tick_count(range: &std::ops::Range<f64>, log: bool, room: usize) -> usize {
    if log {
        ((range.end.floor() - range.start.ceil()) as usize + 1).clamp(2, 12)
    } else {
        room.clamp(2, 6)
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
    labels: &[String],
    scale: Scale,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    // The axes span the finite values only: an unbounded interval end (a bandwidth whose time
    // interval reached zero) runs to the edge of the panel instead of stretching it forever.
    let xs = panel
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .filter(|v| v.is_finite());
    let ys = panel.series.iter().flat_map(|s| {
        s.points
            .iter()
            .map(|p| p.1)
            .chain(s.intervals.iter().flat_map(|i| [i.1, i.2]))
            .filter(|v| v.is_finite() && (!panel.log_y || *v > 0.0))
    });
    let (xr, yr) = (range(xs, panel.log_x), range(ys, panel.log_y));
    let y_range = yr.clone();
    let (width, height) = area.dim_in_pixel();
    let (x_ticks, y_ticks) = (
        tick_count(
            &xr,
            panel.log_x,
            (f64::from(width) / (scale.0 * 90.0)) as usize,
        ),
        tick_count(
            &yr,
            panel.log_y,
            (f64::from(height) / (scale.0 * TICK_PX * 2.6)) as usize,
        ),
    );
    let mut chart = ChartBuilder::on(area)
        .margin(scale.px(8.0))
        .margin_right(scale.px(14.0))
        .x_label_area_size(scale.px(if with_x_label { 44.0 } else { 22.0 }))
        .y_label_area_size(scale.px(72.0))
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
        .label_style(scale.font(TICK_PX))
        .axis_desc_style(scale.font(AXIS_PX))
        .bold_line_style(RGBColor(225, 225, 225).stroke_width(scale.upx(1.0)))
        .light_line_style(WHITE.mix(0.0))
        .axis_style(BLACK.stroke_width(scale.upx(1.0)));
    if with_x_label {
        mesh.x_desc(panel.x_label.as_str());
    }
    mesh.draw().map_err(|e| e.to_string())?;
    for s in &panel.series {
        let i = labels.iter().position(|l| l == s.key()).unwrap_or(0);
        let color = color(i);
        let pts: Vec<(f64, f64)> = s
            .points
            .iter()
            .map(|&(x, y)| (to_axis(x, log_x), to_axis(y, log_y)))
            .collect();
        let stroke = color.stroke_width(scale.upx(2.0));
        match (s.mark, dash(s.mark)) {
            (Mark::Points, _) => {}
            (_, None) => {
                chart
                    .draw_series(LineSeries::new(pts.clone(), stroke))
                    .map_err(|e| e.to_string())?;
            }
            (_, Some((on, off))) => {
                chart
                    .draw_series(DashedLineSeries::new(
                        pts.clone(),
                        scale.upx(on),
                        scale.upx(off),
                        stroke,
                    ))
                    .map_err(|e| e.to_string())?;
            }
        }
        let bars = s
            .intervals
            .iter()
            .filter(|i| !log_y || (i.1 > 0.0 && i.2 > 0.0))
            .map(|&(x, lo, hi)| {
                let x = to_axis(x, log_x);
                let (lo, hi) = (
                    to_axis(lo, log_y).max(y_range.start),
                    to_axis(hi, log_y).min(y_range.end),
                );
                PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(scale.upx(1.5)))
            });
        chart.draw_series(bars).map_err(|e| e.to_string())?;
        if marked(s.mark, s.points.len()) {
            let radius = scale.px(if s.mark == Mark::Points { 4.5 } else { 3.5 });
            let stroke_px = scale.upx(2.0);
            for p in pts {
                draw_marker(chart.plotting_area(), shape(i), p, radius, color, stroke_px)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::tick_label;

    #[test]
    fn tick_labels_on_one_axis_carry_no_trailing_zeros() {
        let labels: Vec<String> = [0.0, 50.0, 100.0, 150.0, 2.5, 0.125, 1234.0]
            .iter()
            .map(|&v| tick_label(v, false))
            .collect();
        assert_eq!(labels, ["0", "50", "100", "150", "2.5", "0.125", "1234"]);
        // Exponent forms keep their digits; log ticks on powers of ten read 1eK.
        assert_eq!(tick_label(1.5e-7, false), "1.50e-7");
        assert_eq!(tick_label(3.0, true), "1e3");
        assert_eq!(tick_label(0.5, true), "3.16");
    }
}
