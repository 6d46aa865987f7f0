//! Snapshots of every exported format (insta, as hyperfine's `src/export/tests.rs`): the
//! calibration JSON, a series as JSON, CSV, Markdown and Extra-P text, a validation as CSV
//! and Markdown, and the comparison of two calibrations. A change to any of them shows up
//! as a diff to review (`cargo insta review`), never silently.

use std::path::PathBuf;

use harness::calibration::{compare::compare, Calibration};
use harness::experiments::series::{PhasePoint, Series, SeriesPoint, TotalPoint};
use harness::experiments::validate::{ErrorSummary, Validation, ValidationRow};
use harness::export::{Exportable, Format};
use harness::fit::forecast::Variant;

fn fixture() -> Calibration {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/calibration-host.json"
    ));
    Calibration::load(&path).expect("the fixture parses")
}

/// Three sizes, two phases, three repeats (the sweep with three cold runs besides), exact
/// binary fractions so every format is stable.
fn series() -> Series {
    let phase = |name: &str, t: f64, count: u64| PhasePoint {
        flops: None,
        threads: None,
        cold: (name == "sweep").then(|| harness::experiments::series::ColdTimes {
            median_seconds: t * 2.0,
            ci95: [t * 1.5, t * 2.5],
            samples: vec![t * 2.0, t * 1.5, t * 2.5],
        }),
        name: name.into(),
        median_seconds: t,
        ci95: [t * 0.75, t * 1.25],
        fraction: if name == "sweep" { 0.875 } else { 0.125 },
        count,
        min_seconds: Some(t * 0.75),
        samples: vec![t, t * 1.25, t * 0.75],
        bytes: None,
        items: None,
    };
    let point = |size: usize, t: f64| SeriesPoint {
        size,
        phases: vec![phase("sweep", t, 10), phase("upload, a", t / 8.0, 1)],
        total: TotalPoint {
            median_seconds: t * 1.125,
            ci95: [t, t * 1.5],
            min_seconds: Some(t),
            samples: vec![t * 1.125, t * 1.5, t],
        },
        kernels: None,
    };
    Series {
        workload: "sor".into(),
        layout: Some("reordered".into()),
        device: fixture().device,
        iterations: 10,
        repeats: 3,
        max_repeats: None,
        ci_target: None,
        verified: true,
        check: Default::default(),
        spec: None,
        points: vec![point(64, 0.5), point(128, 2.0), point(256, 8.0)],
        flagged: Vec::new(),
        launch_probe: None,
        worker_threads: None,
        cold_eviction: None,
    }
}

fn validation() -> Validation {
    let row = |variant, size, phase: &str, predicted: f64, measured: f64| ValidationRow {
        variant,
        size,
        phase: phase.into(),
        predicted_seconds: predicted,
        interval: (phase == "total").then_some([predicted / 2.0, predicted * 2.0]),
        measured_seconds: measured,
        abs_percent_error: (predicted - measured).abs() / measured * 100.0,
        calibrated: None,
    };
    let errors = ErrorSummary {
        mean: 12.5,
        median: 12.5,
        max: 25.0,
    };
    Validation {
        series: series(),
        large: Vec::new(),
        rows: vec![
            row(Variant::Paper, 1024, "total", 160.0, 128.0),
            row(Variant::Paper, 1024, "sweep", 96.0, 128.0),
            row(Variant::Windowed, 1024, "total", 136.0, 128.0),
        ],
        total_error: errors.clone(),
        all_error: errors,
        windowed_total_error: None,
        windows: Vec::new(),
        calibrated_total_error: None,
        calibrated_windows: Vec::new(),
        large_interleaved: true,
    }
}

fn export(format: Format, result: &dyn Exportable) -> String {
    format.exporter().serialize(result).expect("exports")
}

#[test]
fn calibration_json() {
    insta::assert_snapshot!(fixture().to_json());
}

#[test]
fn series_json() {
    insta::assert_snapshot!(export(Format::Json, &series()));
}

#[test]
fn series_csv() {
    insta::assert_snapshot!(export(Format::Csv, &series()));
}

#[test]
fn series_markdown() {
    insta::assert_snapshot!(export(Format::Markdown, &series()));
}

#[test]
fn series_extrap() {
    insta::assert_snapshot!(export(Format::Extrap, &series()));
}

#[test]
fn validation_csv() {
    insta::assert_snapshot!(export(Format::Csv, &validation()));
}

#[test]
fn validation_markdown() {
    insta::assert_snapshot!(export(Format::Markdown, &validation()));
}

#[test]
fn calibration_comparison_json() {
    let before = fixture();
    let mut after = fixture();
    after.parameters.read_gap.value *= 2.0;
    after.parameters.read_gap.ci95 = after.parameters.read_gap.ci95.map(|v| v * 2.0);
    let rows = compare(&before, &after);
    insta::assert_snapshot!(serde_json::to_string_pretty(&rows).expect("serialises"));
}
