//! Publication figures of the fractal run-time prediction (Escobar & Boppana, "Fractal-based
//! performance prediction of parallel CPU and GPU applications", IEEE HPCC 2018;
//! docs/models.md §2):
//!
//! - [`fit_figure`]: a series' medians on log-log axes, the fitted `T = a·N^c` extrapolated to
//!   the target with its 95 % prediction interval, the measured large sizes, and below them
//!   the prediction's percentage error;
//! - [`polynomial_vs_fractal_figure`]: the paper's Fig. 1, polynomials of degree 1–4 fitted to
//!   the same points and extrapolated beside the fractal line, on linear axes so that a
//!   polynomial that turns negative shows as such;
//! - [`parity_figure`]: predicted against measured total time, one series per workload;
//! - [`error_bars_figure`]: the median and maximum error of the total per workload.
//!
//! The fits are those of [`crate::fit::fractal`] and [`crate::fit::baselines`]; nothing is
//! refitted here by other means.
//!
//! This file holds what the figures share (their labels, the workload's label, the error of
//! bad data); `fits` draws one series' fits ([`fit_figure`], [`polynomial_vs_fractal_figure`])
//! and `accuracy` the predictions against the measurements of the validations
//! ([`parity_figure`], [`error_bars_figure`]).

mod accuracy;
mod fits;

pub use accuracy::{error_bars_figure, error_bars_plot, parity_figure, parity_plot};
pub use fits::{fit_figure, fit_plot, polynomial_vs_fractal_figure, polynomial_vs_fractal_plot};

use super::PlotError;
use crate::experiments::series::Series as RunSeries;
use crate::fit::forecast::Variant;

/// The name of the run's total, in a series and in
/// [`Validation`](crate::experiments::validate::Validation) rows.
const TOTAL: &str = "total";

/// The paper's variant (the one
/// [`Validation::total_error`](crate::experiments::validate::Validation::total_error) covers)
/// and ours.
const PAPER: Variant = Variant::Paper;
const WINDOWED: Variant = Variant::Windowed;

const X_LABEL: &str = "problem size N";
const Y_LABEL: &str = "time (s)";

/// Label of the measured small-size points.
const SMALL_LABEL: &str = "series runs (median, 95 % CI)";
/// Label of the measured large-size points.
const LARGE_LABEL: &str = "large runs (measured median)";
/// Labels of the prediction band.
const PI_LOW_LABEL: &str = "95 % prediction interval (low)";
const PI_HIGH_LABEL: &str = "95 % prediction interval (high)";
/// The legend entry of both bounds.
const PI_LABEL: &str = "95 % prediction interval";

fn data(title: &str, message: String) -> PlotError {
    PlotError::Data {
        figure: title.to_string(),
        message,
    }
}

/// `workload` or `workload-layout`, as in the series' file name.
fn workload_label(series: &RunSeries) -> String {
    match &series.layout {
        Some(layout) => format!("{}-{layout}", series.workload),
        None => series.workload.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::DeviceInfo;
    use crate::experiments::series::{PhasePoint, SeriesPoint, TotalPoint};
    use crate::experiments::validate::{ErrorSummary, Validation, ValidationRow};
    use std::path::{Path, PathBuf};

    const SIZES: [usize; 5] = [1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18];
    const KERNEL_SHARE: f64 = 0.8;

    fn truth(n: f64) -> f64 {
        2e-9 * n.powf(1.5)
    }

    fn device() -> DeviceInfo {
        DeviceInfo::for_tests()
    }

    /// Median and [min, max] of three samples.
    fn summary3(samples: &[f64]) -> (f64, [f64; 2]) {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        (s[1], [s[0], s[2]])
    }

    fn phase(name: &str, share: f64, totals: &[f64]) -> PhasePoint {
        let samples: Vec<f64> = totals.iter().map(|t| t * share).collect();
        let (median, ci95) = summary3(&samples);
        PhasePoint {
            flops: None,
            threads: None,
            cold: None,
            name: name.into(),
            median_seconds: median,
            ci95,
            fraction: share,
            count: 1,
            min_seconds: None,
            samples,
            bytes: None,
            items: None,
        }
    }

    /// T = 2e-9·N^1.5 at 5 sizes, 3 repeats each, with a deterministic ±2 % jitter; the
    /// total split 80/20 into `kernel` and `upload`.
    fn series(workload: &str) -> RunSeries {
        let points = SIZES
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                let totals: Vec<f64> = (0..3)
                    .map(|r| truth(size as f64) * (1.0 + 0.02 * ((3 * i + 7 * r) as f64).sin()))
                    .collect();
                let (median, ci95) = summary3(&totals);
                SeriesPoint {
                    size,
                    phases: vec![
                        phase("upload", 1.0 - KERNEL_SHARE, &totals),
                        phase("kernel", KERNEL_SHARE, &totals),
                    ],
                    total: TotalPoint {
                        median_seconds: median,
                        ci95,
                        min_seconds: None,
                        samples: totals,
                    },
                    kernels: None,
                }
            })
            .collect();
        RunSeries {
            workload: workload.into(),
            layout: None,
            device: device(),
            iterations: 10,
            repeats: 3,
            max_repeats: None,
            ci_target: None,
            verified: true,
            check: Default::default(),
            spec: None,
            points,
            flagged: Vec::new(),
            launch_probe: None,
            worker_threads: None,
            cold_eviction: None,
        }
    }

    fn row(
        variant: Variant,
        size: usize,
        phase: &str,
        predicted: f64,
        measured: f64,
    ) -> ValidationRow {
        ValidationRow {
            variant,
            size,
            phase: phase.into(),
            predicted_seconds: predicted,
            interval: Some([predicted * 0.9, predicted * 1.1]),
            measured_seconds: measured,
            abs_percent_error: (predicted - measured).abs() / measured * 100.0,
            calibrated: None,
        }
    }

    fn validation(workload: &str, errors: [f64; 2]) -> Validation {
        let large = [1usize << 20, 1 << 21];
        let mut rows = Vec::new();
        for (&size, e) in large.iter().zip(errors) {
            let measured = truth(size as f64);
            rows.push(row(
                PAPER,
                size,
                TOTAL,
                measured * (1.0 + e / 100.0),
                measured,
            ));
            rows.push(row(PAPER, size, "kernel", measured * 0.8, measured * 0.8));
            rows.push(row(WINDOWED, size, TOTAL, measured * 1.5, measured));
        }
        let total_errors: Vec<f64> = errors.iter().map(|e| e.abs()).collect();
        let stats = |v: &[f64]| {
            let mut s = v.to_vec();
            s.sort_by(f64::total_cmp);
            ErrorSummary {
                mean: s.iter().sum::<f64>() / s.len() as f64,
                median: (s[0] + s[s.len() - 1]) / 2.0,
                max: s[s.len() - 1],
            }
        };
        Validation {
            series: series(workload),
            large: Vec::new(),
            total_error: stats(&total_errors),
            all_error: stats(&total_errors),
            windowed_total_error: None,
            windows: Vec::new(),
            calibrated_total_error: None,
            calibrated_windows: Vec::new(),
            large_interleaved: true,
            rows,
        }
    }

    /// SVG, PNG and CSV written and non-empty; returns the CSV.
    fn written(paths: &[PathBuf], dir: &Path, name: &str) -> String {
        assert_eq!(paths.len(), 3, "{paths:?}");
        for ext in ["svg", "png", "csv"] {
            let p = dir.join(format!("{name}.{ext}"));
            assert!(paths.contains(&p), "{} not returned", p.display());
            assert!(std::fs::metadata(&p).unwrap().len() > 0, "{}", p.display());
        }
        std::fs::read_to_string(dir.join(format!("{name}.csv"))).unwrap()
    }

    /// The `y` of `label` at `x` in a figure CSV (`panel,series,x,y,low,high`).
    fn csv_y(csv: &str, panel: &str, label_prefix: &str, x: f64) -> f64 {
        csv.lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| {
                f.len() == 6
                    && f[0] == panel
                    && f[1].starts_with(label_prefix)
                    && f[2].parse::<f64>().unwrap() == x
            })
            .unwrap_or_else(|| panic!("no {panel} row '{label_prefix}' at {x} in\n{csv}"))[3]
            .parse()
            .unwrap()
    }

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    #[test]
    fn fit_figure_of_the_total_with_large_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let s = series("triad");
        let large = [
            (1usize << 20, truth(1048576.0) * 1.03),
            (1 << 21, truth(2097152.0) * 0.97),
        ];
        let paths = fit_figure(&s, &large, None, 4.0 * 1048576.0, dir.path(), "fit").unwrap();
        let csv = written(&paths, dir.path(), "fit");
        for label in [
            "main,fractal fit a*N^c (c = 1.",
            &format!("main,{PI_LOW_LABEL},"),
            &format!("main,{PI_HIGH_LABEL},"),
            &format!("main,\"{SMALL_LABEL}\","),
            &format!("main,{LARGE_LABEL},"),
            "lower,error at the large sizes,",
            "lower,zero error,",
        ] {
            assert!(csv.contains(label), "no '{label}' in\n{csv}");
        }
        let c: f64 = csv.split("(c = ").nth(1).unwrap()[..5].parse().unwrap();
        assert!((c - 1.5).abs() < 0.02, "c = {c}");
        let largest = SIZES[4] as f64;
        let fitted = csv_y(&csv, "main", "fractal fit", largest);
        assert!(
            rel(fitted, truth(largest)) < 0.05,
            "{fitted} vs {}",
            truth(largest)
        );
        // The band contains the line, and reaches the target.
        let target = 4.0 * 1048576.0;
        let at_target = csv_y(&csv, "main", "fractal fit", target);
        assert!(csv_y(&csv, "main", PI_LOW_LABEL, target) < at_target);
        assert!(csv_y(&csv, "main", PI_HIGH_LABEL, target) > at_target);
        // The error at 2^20 is the prediction's against the 3 % high measurement.
        let e = csv_y(&csv, "lower", "error at the large sizes", 1048576.0);
        assert!((e + 3.0).abs() < 3.0, "error {e} %");
    }

    #[test]
    fn fit_figure_of_a_phase_without_large_sizes() {
        let dir = tempfile::tempdir().unwrap();
        let s = series("triad");
        let paths = fit_figure(&s, &[], Some("kernel"), 1e6, dir.path(), "kernel").unwrap();
        let csv = written(&paths, dir.path(), "kernel");
        assert!(
            !csv.contains("\nlower,") && !csv.contains(LARGE_LABEL),
            "{csv}"
        );
        let largest = SIZES[4] as f64;
        let fitted = csv_y(&csv, "main", "fractal fit", largest);
        assert!(rel(fitted, KERNEL_SHARE * truth(largest)) < 0.05);
    }

    #[test]
    fn a_missing_phase_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let s = series("triad");
        for result in [
            fit_figure(&s, &[], Some("nope"), 1e6, dir.path(), "a"),
            polynomial_vs_fractal_figure(&s, Some("nope"), 1e6, dir.path(), "b"),
        ] {
            match result {
                Err(PlotError::Data { message, .. }) => {
                    assert!(message.contains("'nope'"), "{message}");
                    assert!(message.contains("kernel"), "{message}");
                }
                other => panic!("expected a data error, got {other:?}"),
            }
        }
        // A phase missing at one size only names that size.
        let mut s = series("triad");
        s.points[2].phases.retain(|p| p.name != "kernel");
        let e = fit_figure(&s, &[], Some("kernel"), 1e6, dir.path(), "c").unwrap_err();
        assert!(e.to_string().contains(&format!("N = {}", SIZES[2])), "{e}");
        // Nothing was written.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // A bad target is refused, not drawn.
        let e = fit_figure(&series("t"), &[], None, 0.0, dir.path(), "d").unwrap_err();
        assert!(e.to_string().contains("target"), "{e}");
    }

    #[test]
    fn polynomial_vs_fractal_draws_every_degree() {
        let dir = tempfile::tempdir().unwrap();
        let s = series("triad");
        let paths = polynomial_vs_fractal_figure(&s, None, 1e6, dir.path(), "fig1").unwrap();
        let csv = written(&paths, dir.path(), "fig1");
        for label in [
            "main,fractal fit a*N^c (c = 1.",
            "main,degree-1 polynomial,",
            "main,degree-2 polynomial,",
            "main,degree-3 polynomial,",
            "main,degree-4 polynomial,",
            &format!("main,\"{SMALL_LABEL}\","),
        ] {
            assert!(csv.contains(label), "no '{label}' in\n{csv}");
        }
        let largest = SIZES[4] as f64;
        let fitted = csv_y(&csv, "main", "fractal fit", largest);
        assert!(rel(fitted, truth(largest)) < 0.05);
        // Both curves reach the target.
        csv_y(&csv, "main", "degree-4 polynomial", 1e6);
        csv_y(&csv, "main", "fractal fit", 1e6);
    }

    #[test]
    fn parity_uses_the_paper_totals_per_workload() {
        let dir = tempfile::tempdir().unwrap();
        let vs = [
            validation("triad", [3.0, -5.0]),
            validation("jacobi2d", [12.0, 8.0]),
        ];
        let paths = parity_figure(&vs, dir.path(), "parity").unwrap();
        let csv = written(&paths, dir.path(), "parity");
        for label in [
            "main,triad (paper),",
            "main,jacobi2d (paper),",
            "main,triad (windowed),",
            "main,y = x,",
        ] {
            assert!(csv.contains(label), "no '{label}' in\n{csv}");
        }
        assert!(
            csv.contains("y = 0.9x") && csv.contains("y = 1.1x"),
            "{csv}"
        );
        // Two large sizes each per variant: the kernel rows are left out.
        assert_eq!(csv.matches("main,triad (paper),").count(), 2, "{csv}");
        assert_eq!(csv.matches("main,triad (windowed),").count(), 2, "{csv}");
        let m = truth(1048576.0);
        assert!((csv_y(&csv, "main", "triad (paper)", m * 1.03) - m).abs() < 1e-15);
        let e = parity_figure(&[], dir.path(), "none").unwrap_err();
        assert!(matches!(e, PlotError::Data { .. }), "{e}");
    }

    #[test]
    fn error_bars_show_median_and_max_of_the_total() {
        let dir = tempfile::tempdir().unwrap();
        let vs = [
            validation("triad", [3.0, -5.0]),
            validation("jacobi2d", [12.0, 8.0]),
        ];
        let paths = error_bars_figure(&vs, dir.path(), "errors").unwrap();
        let csv = written(&paths, dir.path(), "errors");
        assert!(csv.starts_with("category,median,maximum\n"), "{csv}");
        assert!(
            csv.contains("triad (paper),4,5\n") && csv.contains("jacobi2d (paper),10,12\n"),
            "{csv}"
        );
        assert!(error_bars_figure(&[], dir.path(), "none").is_err());
        let mut empty = validation("adi", [1.0, 2.0]);
        empty.total_error.median = f64::NAN;
        let e = error_bars_figure(&[empty], dir.path(), "nan").unwrap_err();
        assert!(e.to_string().contains("adi"), "{e}");
    }
}
