//! Every figure that can be drawn from a [`Catalog`]: which figures, from which file, named
//! how, in which section of a report. `harness figures` writes them; `harness report` inlines
//! them. A figure whose data is missing is left out with a one-line note.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::catalog::{Catalog, Entry, Stored, StoredBalance};
use crate::experiments::validate::Validation;
use crate::fit::forecast::Variant;
use crate::model::cluster::report::ReportKind;
use crate::model::cluster::ClusterReport;
use crate::model::stepanenko::Hybrid;
use crate::plot::calibration_figures::{bandwidth_figure, gaps_figure, latency_figure};
use crate::plot::fractal_figures::{
    error_bars_plot, fit_plot, parity_plot, polynomial_vs_fractal_plot,
};
use crate::plot::maxplus_figure::maxplus_plot;
use crate::plot::model_figures::{balance_plot, cluster_losses_plot, MeasuredSplit};
use crate::plot::{BarFigure, Drawing, Mark, PlotError, Rendered, Series};

/// The part of a report a figure belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Section {
    /// Microbenchmark curves of a calibration.
    Calibration,
    /// Fractal predictions against measurements.
    Fractal,
    /// The max-plus model against measurements.
    MaxPlus,
    /// Stepanenko's balancing.
    Balance,
    /// The cluster prediction.
    Cluster,
}

/// One figure to draw.
#[derive(Debug, Clone)]
pub struct Planned {
    /// Output name without extension, relative to the output folder.
    pub stem: PathBuf,
    /// The device it belongs to, if any.
    pub device: Option<String>,
    /// Where a report shows it.
    pub section: Section,
    /// The file(s) it is drawn from.
    pub sources: Vec<PathBuf>,
    /// The figure.
    pub drawing: Drawing,
}

/// The figures of `catalog`, in a fixed order, and a note for each figure that could not be
/// made.
pub fn plan(catalog: &Catalog) -> (Vec<Planned>, Vec<String>) {
    let mut planned = Vec::new();
    let mut notes = Vec::new();
    // Files a figure is drawn from besides its entry's: (the figure's stem, the file).
    let mut extra_sources: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut add = |entry: &Entry,
                   suffix: &str,
                   section: Section,
                   drawing: Result<Drawing, PlotError>| match drawing {
        Ok(drawing) => planned.push(Planned {
            stem: stem(entry, suffix),
            device: entry.device.clone(),
            section,
            sources: vec![entry.path.clone()],
            drawing,
        }),
        Err(e) => notes.push(format!(
            "no {suffix} figure from {}: {e}",
            entry.path.display()
        )),
    };
    for entry in &catalog.entries {
        match &entry.item {
            Stored::Calibration(c) => {
                add(
                    entry,
                    "latency",
                    Section::Calibration,
                    latency_figure(c).map(Drawing::Plot),
                );
                let bandwidth = bandwidth_figure(c).unwrap_or_else(|| {
                    Err(PlotError::Data {
                        figure: "bandwidth".into(),
                        message: "the calibration has no bandwidth sweep (made before the \
                                  sweep existed; calibrate again)"
                            .into(),
                    })
                });
                add(
                    entry,
                    "bandwidth",
                    Section::Calibration,
                    bandwidth.map(Drawing::Plot),
                );
                add(
                    entry,
                    "gaps",
                    Section::Calibration,
                    gaps_figure(c).map(Drawing::Plot),
                );
            }
            Stored::Validation(v) => {
                add(
                    entry,
                    "fit",
                    Section::Fractal,
                    validation_fit(v).map(Drawing::Plot),
                );
                let target = target(v);
                add(
                    entry,
                    "polynomial",
                    Section::Fractal,
                    polynomial_vs_fractal_plot(&v.series, None, target).map(Drawing::Plot),
                );
            }
            Stored::Suite(s) => {
                let csv = entry
                    .path
                    .with_file_name(format!("extrap-suite-{}.csv", s.device.slug()));
                let extrap = read_extrap_errors(&csv);
                if extrap.is_some() {
                    extra_sources.push((stem(entry, "errors"), csv));
                }
                add(
                    entry,
                    "errors",
                    Section::Fractal,
                    suite_bars(s, extrap.as_deref()).map(Drawing::Bars),
                )
            }
            Stored::MaxPlus(m) => add(
                entry,
                "figure",
                Section::MaxPlus,
                maxplus_plot(&m.graph, &m.device, m.kernel.plan, &m.rows).map(Drawing::Plot),
            ),
            Stored::Balance(b) => {
                add(
                    entry,
                    "model",
                    Section::Balance,
                    balance_model(b).map(Drawing::Plot),
                );
                if !b.runs.is_empty() {
                    add(
                        entry,
                        "splits",
                        Section::Balance,
                        Ok(Drawing::Bars(balance_splits(b))),
                    );
                }
            }
            Stored::Cluster(r) if r.kind == ReportKind::Predicted => {
                let measured = measured_runs(catalog, r);
                let labelled: Vec<(String, &ClusterReport)> =
                    measured.iter().map(|(p, m)| (run_label(p), *m)).collect();
                add(
                    entry,
                    "losses",
                    Section::Cluster,
                    cluster_losses_plot(r, &labelled).map(Drawing::Bars),
                );
            }
            _ => {}
        }
    }
    for (figure_stem, file) in extra_sources {
        if let Some(p) = planned.iter_mut().find(|p| p.stem == figure_stem) {
            p.sources.push(file);
        }
    }
    // The decomposition paper's worked example (φ = 0.3, ρ = 5.7, 28 cores, 3 accelerators):
    // its Fig. 6, the reference every measured balance is read against.
    let example = Hybrid::new(0.3, 5.7, 28, 3)
        .map_err(|e| e.to_string())
        .and_then(|h| balance_plot(&h, &[]).map_err(|e| e.to_string()));
    match example {
        Ok(mut figure) => {
            figure.title = "Fig. 6, paper's example: q = 28, r = 3, ρ = 5.7".into();
            planned.push(Planned {
                stem: PathBuf::from("stepanenko-worked-example"),
                device: None,
                section: Section::Balance,
                sources: Vec::new(),
                drawing: Drawing::Plot(figure),
            });
        }
        Err(e) => notes.push(format!("no worked-example figure: {e}")),
    }
    // Per device, every validation's total on one parity plot and one bar chart.
    for device in catalog.devices() {
        let validations: Vec<&Entry> = catalog
            .entries
            .iter()
            .filter(|e| e.device.as_deref() == Some(device.as_str()))
            .filter(|e| matches!(e.item, Stored::Validation(_)))
            .collect();
        if validations.is_empty() {
            continue;
        }
        let vs: Vec<Validation> = validations
            .iter()
            .filter_map(|e| match &e.item {
                Stored::Validation(v) => Some((**v).clone()),
                _ => None,
            })
            .collect();
        let sources: Vec<PathBuf> = validations.iter().map(|e| e.path.clone()).collect();
        for (suffix, drawing) in [
            ("fractal.parity", parity_plot(&vs).map(Drawing::Plot)),
            ("fractal.errors", error_bars_plot(&vs).map(Drawing::Bars)),
        ] {
            match drawing {
                Ok(drawing) => planned.push(Planned {
                    stem: PathBuf::from(format!("{device}.{suffix}")),
                    device: Some(device.clone()),
                    section: Section::Fractal,
                    sources: sources.clone(),
                    drawing,
                }),
                Err(e) => notes.push(format!("no {suffix} figure for {device}: {e}")),
            }
        }
    }
    (planned, notes)
}

/// Draw every planned figure (in parallel); each result in `planned`'s order.
pub fn render_all(planned: &[Planned]) -> Vec<Result<Rendered, PlotError>> {
    planned
        .par_iter()
        .map(|p| crate::plot::render(&p.drawing, &p.stem))
        .collect()
}

/// The output stem of `entry`'s figure `suffix`: its path relative to the scanned folder's
/// parent, without `.json`.
fn stem(entry: &Entry, suffix: &str) -> PathBuf {
    let rel = entry.relative.with_extension("");
    let name = rel
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    rel.with_file_name(format!("{name}.{suffix}"))
}

/// A measured run's legend label: the last part of its file name (`x.2x1.measured-2.json` →
/// `measured-2`).
fn run_label(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    stem.rsplit('.').next().unwrap_or(&stem).to_string()
}

/// The largest measured size of a validation: where its fits are drawn to.
fn target(v: &Validation) -> f64 {
    v.large.iter().map(|p| p.size).max().unwrap_or(1) as f64
}

/// The fit figure of a validation's total, with every variant's prediction at the large
/// sizes beside the paper's line (ours told apart by marker and label) and their errors below.
pub fn validation_fit(v: &Validation) -> Result<crate::plot::Figure, PlotError> {
    let large: Vec<(usize, f64)> = v
        .large
        .iter()
        .map(|p| (p.size, p.total.median_seconds))
        .collect();
    let mut figure = fit_plot(&v.series, &large, None, target(v))?;
    for variant in Variant::ALL {
        if variant == Variant::Paper {
            continue;
        }
        let rows: Vec<_> = v
            .rows
            .iter()
            .filter(|r| r.variant == variant && r.phase == "total")
            .filter(|r| r.predicted_seconds.is_finite() && r.predicted_seconds > 0.0)
            .collect();
        if rows.is_empty() {
            continue;
        }
        let label = format!("{variant} prediction (ours, 95 % PI)");
        figure.main.series.push(
            Series::new(
                label.clone(),
                rows.iter()
                    .map(|r| (r.size as f64, r.predicted_seconds))
                    .collect(),
                Mark::Points,
            )
            .with_intervals(
                rows.iter()
                    .filter_map(|r| r.interval.map(|i| (r.size as f64, i[0], i[1])))
                    .collect(),
            ),
        );
        if let Some(lower) = figure.lower.as_mut() {
            lower.series.push(
                Series::new(
                    format!("{variant} error"),
                    rows.iter()
                        .map(|r| {
                            (
                                r.size as f64,
                                (r.predicted_seconds - r.measured_seconds) / r.measured_seconds
                                    * 100.0,
                            )
                        })
                        .collect(),
                    Mark::Points,
                )
                .in_legend(label),
            );
        }
    }
    Ok(figure)
}

/// Extra-P's |error| per case, `(case, N, percent)`, from the CSV that
/// `scripts/extrap-compare.sh` writes beside a suite (`extrap-suite-<device>.csv`, columns
/// `case`, `size` and `extrap_err_pct`); `None` where there is no such file or it has no such
/// columns.
fn read_extrap_errors(csv: &Path) -> Option<Vec<(String, usize, f64)>> {
    let text = crate::export::read_input_text(csv).ok()?;
    let mut lines = text.lines();
    let header = split_csv_line(lines.next()?);
    let column = |name: &str| header.iter().position(|h| h.trim() == name);
    let (case, size, error) = (column("case")?, column("size")?, column("extrap_err_pct")?);
    let rows: Vec<(String, usize, f64)> = lines
        .filter_map(|line| {
            let fields = split_csv_line(line);
            Some((
                fields.get(case)?.clone(),
                fields.get(size)?.trim().parse().ok()?,
                fields.get(error)?.trim().parse().ok()?,
            ))
        })
        .collect();
    (!rows.is_empty()).then_some(rows)
}

/// The fields of one CSV line, double quotes (and `""` within them) honoured.
fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().expect("one field").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

/// A suite's |error| per case and variant, with Extra-P's beside them where `extrap` has
/// them (`(case, N, percent)`, fitted to the same medians).
fn suite_bars(
    s: &crate::experiments::suite::Suite,
    extrap: Option<&[(String, usize, f64)]>,
) -> Result<BarFigure, PlotError> {
    let variants: Vec<Variant> = Variant::ALL
        .into_iter()
        .filter(|v| {
            s.cases
                .iter()
                .any(|c| c.predictions.iter().any(|p| p.variant == *v))
        })
        .collect();
    let title = format!(
        "Validation suite, {}",
        crate::plot::maxplus_figure::short(&s.device.name)
    );
    if variants.is_empty() {
        return Err(PlotError::Data {
            figure: title,
            message: "no case has a prediction".into(),
        });
    }
    // A variant that made no prediction for a case has no value there (drawn as "none").
    let groups = s
        .cases
        .iter()
        .map(|c| {
            let mut values: Vec<Option<f64>> = variants
                .iter()
                .map(|v| {
                    c.predictions
                        .iter()
                        .find(|p| p.variant == *v)
                        .map(|p| p.abs_percent_error)
                })
                .collect();
            if let Some(rows) = extrap {
                values.push(
                    rows.iter()
                        .find(|(case, size, _)| *case == c.case && *size == c.size)
                        .map(|r| r.2),
                );
            }
            (format!("{} N={}", c.case, c.size), values)
        })
        .collect();
    let mut series: Vec<String> = variants
        .iter()
        .map(|v| match v {
            Variant::Calibrated => format!("{v} (ours)"),
            _ => v.to_string(),
        })
        .collect();
    if extrap.is_some() {
        series.push("Extra-P (same medians)".into());
    }
    Ok(BarFigure {
        title,
        y_label: "abs. error of the run total (%)".into(),
        series,
        groups,
    })
}

fn balance_model(b: &StoredBalance) -> Result<crate::plot::Figure, PlotError> {
    let d = &b.decomposition;
    let hybrid = Hybrid::new(d.phi, d.rho, d.q, d.r).map_err(|e| PlotError::Data {
        figure: "balance".into(),
        message: format!("the stored phi, rho, q, r are not a model input: {e}"),
    })?;
    let runs: Vec<MeasuredSplit> = b
        .runs
        .iter()
        .map(|r| MeasuredSplit {
            name: r.split.name.clone(),
            predicted: r.predicted,
            measured: r.speedup,
        })
        .collect();
    balance_plot(&hybrid, &runs)
}

fn balance_splits(b: &StoredBalance) -> BarFigure {
    crate::plot::splits_figure(
        "Speed-up over one core per split".into(),
        b.runs
            .iter()
            .map(|r| (r.split.name.clone(), r.predicted, r.speedup)),
    )
}

/// The measured runs of the same workload, size, iterations and grid as `predicted`.
fn measured_runs<'a>(
    catalog: &'a Catalog,
    predicted: &ClusterReport,
) -> Vec<(&'a Path, &'a ClusterReport)> {
    catalog
        .entries
        .iter()
        .filter_map(|e| match &e.item {
            Stored::Cluster(m)
                if m.kind == ReportKind::Measured
                    && m.workload == predicted.workload
                    && m.size == predicted.size
                    && m.iterations == predicted.iterations
                    && m.grid == predicted.grid =>
            {
                Some((e.path.as_path(), &**m))
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_honour_quotes() {
        assert_eq!(split_csv_line(r#"a,"b, c",d"#), ["a", "b, c", "d"]);
        assert_eq!(split_csv_line(r#""say ""hi""",2"#), [r#"say "hi""#, "2"]);
        assert_eq!(split_csv_line("x,,y"), ["x", "", "y"]);
    }

    #[test]
    fn the_suite_figure_puts_extrap_beside_the_variants_case_by_case() {
        let stored = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/stored/host-amd-epyc.suite.json"
        );
        let suite: crate::experiments::suite::Suite =
            serde_json::from_str(&std::fs::read_to_string(stored).unwrap()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("extrap-suite-host.csv");
        // Out of order, a model with a comma in quotes, a case of another size, no header
        // columns beyond those needed.
        std::fs::write(
            &csv,
            "extrap_model,size,case,extrap_err_pct\n\
             \"a, b\",8388608,triad,10.5\n\
             x,4096,vadd,99\n\
             x,8388608,vadd,129.5\n",
        )
        .unwrap();
        let rows = read_extrap_errors(&csv).expect("rows");
        assert_eq!(rows.len(), 3);
        let figure = suite_bars(&suite, Some(&rows)).unwrap();
        assert_eq!(figure.series.last().unwrap(), "Extra-P (same medians)");
        assert!(figure.series.contains(&"calibrated (ours)".to_string()));
        let bar = |case: &str| {
            figure
                .groups
                .iter()
                .find(|(label, _)| label.starts_with(&format!("{case} N=")))
                .map(|(_, v)| *v.last().unwrap())
                .unwrap()
        };
        // A case Extra-P has no row for has no value, not a bar of 0.
        assert_eq!(
            (bar("vadd"), bar("triad"), bar("jacobi2d")),
            (Some(129.5), Some(10.5), None)
        );
        // Nor has a variant that made no prediction (`windowed` on most cases).
        let windowed = figure.series.iter().position(|s| s == "windowed").unwrap();
        assert!(figure.groups.iter().any(|(_, v)| v[windowed].is_none()));
        // Without the CSV there is no Extra-P series.
        let plain = suite_bars(&suite, None).unwrap();
        assert_eq!(plain.series.len() + 1, figure.series.len());
        assert!(read_extrap_errors(&dir.path().join("missing.csv")).is_none());
    }
}
