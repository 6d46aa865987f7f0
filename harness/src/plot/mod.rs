//! Publication figures with `plotters`: every figure is written as SVG and PNG, with the CSV
//! of the data behind it beside them. The three are drawn in memory and written as one unit
//! ([`crate::export::write_together`]), so an interrupted run never leaves a truncated
//! figure where a good one stood.
//!
//! The figures are data-driven: a [`Figure`] holds series of points on (optionally log)
//! axes and an optional lower panel (e.g. the error per model); a [`BarFigure`] holds grouped
//! bars. Both are drawn in one house style (`render`): readable printed one column wide
//! (8.5 cm), series told apart by marker shape and dash pattern as well as by colour, the
//! legend below the axes. Text is drawn with the bundled DejaVu Sans, so figures look the
//! same on any machine, and the same data gives byte-identical SVG.

mod bars;
pub mod calibration_figures;
pub mod fractal_figures;
pub mod maxplus_figure;
pub mod model_figures;
mod render;

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::{BitMapBackend, DrawingArea, DrawingBackend, IntoDrawingArea, SVGBackend};
use thiserror::Error;

use crate::export::csv::csv_field;
pub use bars::{balance_figure, save_bars, splits_figure, BarFigure};

/// Errors while drawing or writing a figure.
#[derive(Debug, Error)]
pub enum PlotError {
    /// The drawing backend failed.
    #[error("cannot draw {path}: {message}")]
    Draw {
        /// The file being drawn.
        path: PathBuf,
        /// The backend's message.
        message: String,
    },
    /// The data cannot be plotted (empty, or non-positive on a log axis).
    #[error("cannot plot {figure}: {message}")]
    Data {
        /// The figure's title.
        figure: String,
        /// What is wrong.
        message: String,
    },
    /// Writing the CSV failed.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// How a series is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// A line through the points.
    Line,
    /// A dashed line (a model or an extrapolation).
    Dashed,
    /// Markers only (measurements).
    Points,
    /// A dotted line (a reference such as y = x, or a level).
    Dotted,
}

/// One named series of points, optionally with a shaded band `(x, low, high)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
    /// How to draw it.
    pub mark: Mark,
    /// An interval drawn as error bars at each point: `(x, low, high)`.
    pub intervals: Vec<(f64, f64, f64)>,
    /// The legend entry it is drawn under, when not its own label: series with the same
    /// entry share colour and marker and appear once in the legend (the two bounds of an
    /// interval; a prediction and its error). An empty entry keeps it out of the legend (a
    /// reference line). The CSV always names the series by its label.
    pub legend: Option<String>,
}

impl Series {
    /// A series without intervals.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, mark: Mark) -> Self {
        Series {
            label: label.into(),
            points,
            mark,
            intervals: Vec::new(),
            legend: None,
        }
    }

    /// The same series drawn under the legend entry `entry` (see [`Series::legend`]).
    pub fn in_legend(mut self, entry: impl Into<String>) -> Self {
        self.legend = Some(entry.into());
        self
    }

    /// The legend entry it is drawn under.
    pub fn key(&self) -> &str {
        self.legend.as_deref().unwrap_or(&self.label)
    }

    /// A measured series from `(x, median, low, high)` rows: the medians as points (or a
    /// line, by `mark`) with their intervals as error bars.
    pub fn measured(
        label: impl Into<String>,
        mark: Mark,
        rows: impl IntoIterator<Item = (f64, f64, f64, f64)>,
    ) -> Self {
        let (points, intervals) = rows
            .into_iter()
            .map(|(x, y, lo, hi)| ((x, y), (x, lo, hi)))
            .unzip();
        Series::new(label, points, mark).with_intervals(intervals)
    }

    /// The same series with intervals.
    pub fn with_intervals(mut self, intervals: Vec<(f64, f64, f64)>) -> Self {
        self.intervals = intervals;
        self
    }
}

/// A panel: axes with labels (units in the label) and series.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// x-axis label, with unit.
    pub x_label: String,
    /// y-axis label, with unit.
    pub y_label: String,
    /// Logarithmic x axis.
    pub log_x: bool,
    /// Logarithmic y axis.
    pub log_y: bool,
    /// The series.
    pub series: Vec<Series>,
}

/// A figure: a title, a main panel and an optional lower panel sharing the x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Title above the main panel.
    pub title: String,
    /// The main panel.
    pub main: Panel,
    /// An optional lower panel (one third of the height).
    pub lower: Option<Panel>,
}

/// Write `figure` as `<stem>.svg`, `<stem>.png` and `<stem>.csv`; returns the paths.
pub fn save_figure(figure: &Figure, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    save(&Drawing::Plot(figure.clone()), stem)
}

/// Any figure: lines and points on axes, or grouped bars.
#[derive(Debug, Clone, PartialEq)]
pub enum Drawing {
    /// Series on (optionally log) axes.
    Plot(Figure),
    /// Grouped bars.
    Bars(BarFigure),
}

impl Drawing {
    /// The figure's title.
    pub fn title(&self) -> &str {
        match self {
            Drawing::Plot(f) => &f.title,
            Drawing::Bars(b) => &b.title,
        }
    }
}

/// A figure drawn in memory: the SVG text, the PNG bytes and the CSV of its data.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The SVG document.
    pub svg: String,
    /// The PNG image, at print resolution.
    pub png: Vec<u8>,
    /// The data behind the figure.
    pub csv: String,
}

/// Draw `drawing` in memory; `name` names it in errors.
pub fn render(drawing: &Drawing, name: &Path) -> Result<Rendered, PlotError> {
    let csv = match drawing {
        Drawing::Plot(f) => {
            render::check(f)?;
            figure_csv(f)
        }
        Drawing::Bars(b) => bars::check_and_csv(b)?,
    };
    Ok(Rendered {
        svg: svg_text(drawing, name)?,
        png: png_bytes(drawing, name)?,
        csv,
    })
}

/// Only the SVG of `drawing` (what a web page inlines); `name` names it in errors.
pub fn render_svg(drawing: &Drawing, name: &Path) -> Result<String, PlotError> {
    match drawing {
        Drawing::Plot(f) => render::check(f)?,
        Drawing::Bars(b) => {
            bars::check_and_csv(b)?;
        }
    }
    svg_text(drawing, name)
}

/// Write `drawing` as `<stem>.svg`, `<stem>.png` and `<stem>.csv` as one unit; returns the
/// paths.
pub fn save(drawing: &Drawing, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let rendered = render(drawing, stem)?;
    write_rendered(&rendered, stem)
}

/// Write an already drawn figure as `<stem>.svg`, `<stem>.png` and `<stem>.csv` as one
/// unit; returns the paths.
pub fn write_rendered(rendered: &Rendered, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let svg_path = crate::export::with_suffix(stem, "svg");
    let png_path = crate::export::with_suffix(stem, "png");
    let csv_path = crate::export::with_suffix(stem, "csv");
    crate::export::write_together(&[
        (&svg_path, rendered.svg.as_bytes()),
        (&png_path, &rendered.png),
        (&csv_path, rendered.csv.as_bytes()),
    ])
    .map_err(|e| PlotError::Io {
        path: e.path,
        source: e.source,
    })?;
    Ok(vec![svg_path, png_path, csv_path])
}

/// The paper's Fig. 6 for this machine and ρ: K^max, K^D (best integer q*) and the
/// proportional split against φ, written as `stepanenko-q<q>-r<r>` in `dir`.
pub fn stepanenko_figure(
    hybrid: &crate::model::stepanenko::Hybrid,
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    use crate::model::stepanenko::Hybrid;
    let phis: Vec<f64> = (1..20).map(|k| f64::from(k) * 0.05).collect();
    let curve = |f: fn(&crate::model::stepanenko::Decomposition) -> f64| {
        phis.iter()
            .filter_map(|&phi| Hybrid::new(phi, hybrid.rho, hybrid.q, hybrid.r).ok())
            .map(|h| (h.phi, f(&h.decompose())))
            .collect::<Vec<_>>()
    };
    let figure = Figure {
        title: format!(
            "Speed-up against phi (q = {}, r = {}, rho = {})",
            hybrid.q, hybrid.r, hybrid.rho
        ),
        main: Panel {
            x_label: "phi, MIMD share of T1".into(),
            y_label: "speed-up over one core".into(),
            log_x: false,
            log_y: false,
            series: vec![
                Series::new("K^max", curve(|d| d.k_max), Mark::Line),
                Series::new("K^D at best integer q*", curve(|d| d.k_d), Mark::Dashed),
                Series::new(
                    "proportional split",
                    curve(|d| d.k_proportional),
                    Mark::Line,
                ),
            ],
        },
        lower: None,
    };
    save_figure(
        &figure,
        &dir.join(format!("stepanenko-q{}-r{}", hybrid.q, hybrid.r)),
    )
}

impl Drawing {
    /// Draw on `root` at `scale`.
    fn draw_on<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        scale: render::Scale,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        match self {
            Drawing::Plot(f) => render::draw(f, root, scale),
            Drawing::Bars(b) => bars::draw_bars(b, root, scale),
        }
    }
}

/// The figure as SVG text (`path` names it in errors).
fn svg_text(figure: &Drawing, path: &Path) -> Result<String, PlotError> {
    render::ensure_font();
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, render::SIZE).into_drawing_area();
        finish(
            figure.draw_on(&root, render::Scale(1.0)),
            root.present(),
            path,
        )?;
    }
    Ok(xml_characters_only(text))
}

/// `svg` with every character XML 1.0 forbids (the C0 controls but tab, LF and CR, which a
/// title or legend taken from a device or spec name may hold) replaced by a space: the
/// backend escapes `<`, `>` and `&` but passes these through, which makes the file
/// ill-formed.
fn xml_characters_only(svg: String) -> String {
    let forbidden = |c: char| c < ' ' && !matches!(c, '\t' | '\n' | '\r');
    if !svg.contains(forbidden) {
        return svg;
    }
    svg.replace(forbidden, " ")
}

/// The figure as PNG bytes at print resolution (`path` names it in errors).
fn png_bytes(figure: &Drawing, path: &Path) -> Result<Vec<u8>, PlotError> {
    use image::ImageEncoder;
    render::ensure_font();
    let (width, height) = png_size();
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        finish(
            figure.draw_on(&root, render::Scale(render::PNG_SCALE)),
            root.present(),
            path,
        )?;
    }
    let mut png = Vec::new();
    // zlib's default level, not its best: on the committed figures (809, 2026-11-25) the best
    // level took 82 % of `harness figures`' CPU time (14.1 s wall) and its files came out
    // 0.7 % *larger* (46.9 against 46.5 MB) than the default's (6.3 s wall); the fast level
    // halves the time again but doubles the files.
    image::codecs::png::PngEncoder::new_with_quality(
        &mut png,
        image::codecs::png::CompressionType::Default,
        image::codecs::png::FilterType::Adaptive,
    )
    .write_image(&rgb, width, height, image::ColorType::Rgb8)
    .map_err(|e| PlotError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Ok(png)
}

/// The PNG's size in pixels.
fn png_size() -> (u32, u32) {
    let (w, h) = render::SIZE;
    let s = render::PNG_SCALE;
    (
        (f64::from(w) * s).round() as u32,
        (f64::from(h) * s).round() as u32,
    )
}

fn finish<E: std::fmt::Display>(
    drawn: Result<(), String>,
    presented: Result<(), E>,
    path: &Path,
) -> Result<(), PlotError> {
    let err = |message: String| PlotError::Draw {
        path: path.to_path_buf(),
        message,
    };
    drawn.map_err(err)?;
    presented.map_err(|e| err(e.to_string()))
}

fn figure_csv(figure: &Figure) -> String {
    let mut out = String::from("panel,series,x,y,low,high\n");
    let panels =
        std::iter::once(("main", &figure.main)).chain(figure.lower.as_ref().map(|p| ("lower", p)));
    for (name, panel) in panels {
        for s in &panel.series {
            for &(x, y) in &s.points {
                let band = s.intervals.iter().find(|i| i.0 == x);
                let (lo, hi) = band.map_or((String::new(), String::new()), |b| {
                    (b.1.to_string(), b.2.to_string())
                });
                out.push_str(&format!(
                    "{name},{},{x},{y},{lo},{hi}\n",
                    csv_field(&s.label)
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Figure {
        Figure {
            title: "time against size".into(),
            main: Panel {
                x_label: "N (elements)".into(),
                y_label: "time (s)".into(),
                log_x: true,
                log_y: true,
                series: vec![
                    Series::new(
                        "measured",
                        vec![(1e3, 1e-5), (1e4, 1e-4), (1e5, 1e-3)],
                        Mark::Points,
                    )
                    .with_intervals(vec![(1e3, 0.9e-5, 1.1e-5)]),
                    Series::new("model, a", vec![(1e3, 1.1e-5), (1e5, 1.1e-3)], Mark::Dashed),
                ],
            },
            lower: Some(Panel {
                x_label: "N (elements)".into(),
                y_label: "error (%)".into(),
                log_x: true,
                log_y: false,
                series: vec![Series::new(
                    "model",
                    vec![(1e3, 10.0), (1e5, -5.0)],
                    Mark::Line,
                )],
            }),
        }
    }

    #[test]
    fn control_characters_of_a_name_leave_the_svg_well_formed() {
        let mut figure = sample();
        figure.title = "device\u{1b}[31m\u{7}\u{0}name".into();
        figure.main.series[0].label = "leg\u{8}end".into();
        let svg = render_svg(&Drawing::Plot(figure), Path::new("control")).unwrap();
        assert!(
            !svg.chars()
                .any(|c| c < ' ' && !matches!(c, '\t' | '\n' | '\r')),
            "{svg}"
        );
        assert!(svg.contains("[31m"), "the rest of the name is kept");
    }

    #[test]
    fn an_unbounded_interval_runs_to_the_edge_of_the_panel() {
        // A bandwidth interval whose upper end is infinite (the first H100 calibration's):
        // the figure is drawn over the finite values (it used to draw forever).
        let mut figure = sample();
        figure.main.series[0] =
            figure.main.series[0]
                .clone()
                .with_intervals(vec![(1e3, 0.9e-5, f64::INFINITY)]);
        let svg = render_svg(&Drawing::Plot(figure), Path::new("unbounded")).unwrap();
        assert!(svg.contains("<svg") && !svg.contains("inf") && !svg.contains("NaN"));
    }

    #[test]
    fn writes_svg_png_and_csv() {
        let dir = tempfile::tempdir().unwrap();
        let paths = save_figure(&sample(), &dir.path().join("fig")).unwrap();
        for p in &paths {
            assert!(std::fs::metadata(p).unwrap().len() > 100, "{}", p.display());
        }
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(svg.contains("time (s)") && svg.contains("measured"));
        let csv = std::fs::read_to_string(&paths[2]).unwrap();
        assert!(csv.contains("main,\"model, a\",1000,0.000011,,"));
        assert_eq!(&std::fs::read(&paths[1]).unwrap()[1..4], b"PNG");
    }

    #[test]
    fn a_rewritten_figure_is_complete_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let stem = dir.path().join("fig");
        save_figure(&sample(), &stem).unwrap();
        let paths = save_figure(&sample(), &stem).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["fig.csv", "fig.png", "fig.svg"]);
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // The whole image decodes, at the canvas size.
        let png = image::load_from_memory_with_format(
            &std::fs::read(&paths[1]).unwrap(),
            image::ImageFormat::Png,
        )
        .unwrap();
        assert_eq!((png.width(), png.height()), png_size());
        let csv = std::fs::read_to_string(&paths[2]).unwrap();
        assert_eq!(csv, figure_csv(&sample()));
    }

    #[test]
    fn bars_are_written_as_one_unit() {
        let dir = tempfile::tempdir().unwrap();
        let figure = BarFigure {
            title: "error".into(),
            y_label: "error (%)".into(),
            series: vec!["paper".into()],
            groups: vec![("sor".into(), vec![Some(3.0)])],
        };
        let paths = save_bars(&figure, &dir.path().join("sub/bars")).unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            3
        );
        assert!(std::fs::read_to_string(&paths[0])
            .unwrap()
            .contains("paper"));
        assert_eq!(&std::fs::read(&paths[1]).unwrap()[1..4], b"PNG");
    }

    #[test]
    fn a_missing_bar_is_empty_in_the_csv_and_named_in_the_drawing() {
        let dir = tempfile::tempdir().unwrap();
        let mut figure = BarFigure {
            title: "error".into(),
            y_label: "error (%)".into(),
            series: vec!["paper".into(), "windowed".into()],
            groups: vec![("sor".into(), vec![Some(3.0), None])],
        };
        let paths = save_bars(&figure, &dir.path().join("bars")).unwrap();
        let csv = std::fs::read_to_string(&paths[2]).unwrap();
        assert_eq!(csv, "category,paper,windowed\nsor,3,\n");
        let svg = std::fs::read_to_string(&paths[0]).unwrap();
        assert!(svg.contains("none (windowed)"), "{svg}");
        // No value at all, or a non-finite one, is refused.
        figure.groups[0].1 = vec![None, None];
        assert!(save_bars(&figure, &dir.path().join("none")).is_err());
        figure.groups[0].1 = vec![Some(f64::NAN), Some(1.0)];
        assert!(save_bars(&figure, &dir.path().join("nan")).is_err());
    }

    #[test]
    fn refuses_non_positive_values_on_log_axes() {
        let mut f = sample();
        f.main.series[0].points.push((1e6, 0.0));
        assert!(matches!(
            save_figure(&f, Path::new("/nonexistent/x")),
            Err(PlotError::Data { .. })
        ));
    }
}
