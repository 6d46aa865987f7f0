//! Publication figures with `plotters`: every figure is written as SVG and PNG, with the CSV
//! of the data behind it beside them.
//!
//! The figures are data-driven: a [`Figure`] holds series of points on (optionally log)
//! axes, an optional lower panel (e.g. the error per model), and is rendered at a size that
//! stays readable printed one column wide (fonts 16–20 px on an 800 × 600 canvas). Text is
//! drawn with the bundled DejaVu Sans, so figures look the same on any machine.

mod bars;
pub mod fractal_figures;
pub mod maxplus_figure;
mod render;

use std::path::{Path, PathBuf};

use plotters::prelude::IntoDrawingArea;
use thiserror::Error;

use crate::export::csv::csv_field;
pub use bars::{balance_figure, save_bars, BarFigure};

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
}

impl Series {
    /// A series without intervals.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>, mark: Mark) -> Self {
        Series {
            label: label.into(),
            points,
            mark,
            intervals: Vec::new(),
        }
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
    render::check(figure)?;
    create_parent(stem)?;
    let svg = crate::export::with_suffix(stem, "svg");
    let png = crate::export::with_suffix(stem, "png");
    let csv = crate::export::with_suffix(stem, "csv");
    render::draw_svg(figure, &svg)?;
    render::draw_png(figure, &png)?;
    write_csv(&csv, &figure_csv(figure))?;
    Ok(vec![svg, png, csv])
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

fn render_bars_svg(figure: &BarFigure, path: &Path) -> Result<(), PlotError> {
    render::ensure_font();
    let root = plotters::prelude::SVGBackend::new(path, render::SIZE).into_drawing_area();
    finish(bars::draw_bars(figure, &root), root.present(), path)
}

fn render_bars_png(figure: &BarFigure, path: &Path) -> Result<(), PlotError> {
    render::ensure_font();
    let root = plotters::prelude::BitMapBackend::new(path, render::SIZE).into_drawing_area();
    finish(bars::draw_bars(figure, &root), root.present(), path)
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

/// Create the folder a figure goes into.
fn create_parent(stem: &Path) -> Result<(), PlotError> {
    match stem.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
            path: dir.to_path_buf(),
            source,
        }),
        None => Ok(()),
    }
}

fn write_csv(path: &Path, text: &str) -> Result<(), PlotError> {
    crate::export::write_atomically(path, text.as_bytes()).map_err(|source| PlotError::Io {
        path: path.to_path_buf(),
        source,
    })
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
    fn refuses_non_positive_values_on_log_axes() {
        let mut f = sample();
        f.main.series[0].points.push((1e6, 0.0));
        assert!(matches!(
            save_figure(&f, Path::new("/nonexistent/x")),
            Err(PlotError::Data { .. })
        ));
    }
}
