//! `harness validate-suite`: the plan, a real (small) run on the host, and the reassessment of
//! its stored cases without a device.

mod common;

use common::{harness, one_error_line};

fn fixture() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/calibration-host.json"
    )
    .to_string()
}

#[test]
fn the_plan_puts_every_target_past_the_largest_cache() {
    let out = harness()
        .args([
            "validate-suite",
            "--device",
            "host",
            "--calibration",
            &fixture(),
            "--dry-run",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for name in harness::workloads::registry::names() {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(name) && l.contains("N = ")),
            "{name} missing: {stderr}"
        );
    }
}

#[test]
fn a_specs_parameters_reach_the_plan_and_a_built_ins_are_refused() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/ports/sgemm.toml");
    let plan = |extra: &[&str]| {
        let out = harness()
            .args(["validate-suite", "--device", "host", "--calibration"])
            .arg(fixture())
            .args(["--workloads", spec, "--dry-run"])
            .args(extra)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.contains("N = "))
            .unwrap()
            .to_string();
        line
    };
    // With K fixed small, the same working set needs a larger N: the target moves.
    assert_ne!(plan(&[]), plan(&["--param", "K=16"]));
    let out = harness()
        .args(["validate-suite", "--device", "host", "--calibration"])
        .arg(fixture())
        .args(["--workloads", "vadd", "--param", "K=16", "--dry-run"])
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("--param"), "{out:?}");
}

#[test]
fn without_a_calibration_it_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args(["validate-suite", "--device", "host"])
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("harness calibrate"));
    let out = harness()
        .current_dir(dir.path())
        .args(["validate-suite", "--from", "nowhere"])
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("nowhere"));
}

#[test]
fn a_suite_runs_writes_each_case_and_reassesses_the_same_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "validate-suite",
            "--workloads",
            "vadd",
            "--device",
            "host",
            "--calibration",
            &fixture(),
            "--repeat",
            "3",
            "--max-repeat",
            "3",
            "--output-dir",
            "out",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let table = String::from_utf8_lossy(&out.stdout);
    for variant in ["paper", "windowed", "calibrated"] {
        assert!(
            table.lines().any(|l| l.starts_with(variant)),
            "{variant}: {table}"
        );
    }
    let files: Vec<String> = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let stem = files
        .iter()
        .find(|f| f.ends_with(".suite.json"))
        .expect("suite json")
        .trim_end_matches(".json")
        .to_string();
    for ext in ["csv", "md"] {
        assert!(files.contains(&format!("{stem}.{ext}")), "{files:?}");
    }
    let first: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("out").join(format!("{stem}.json"))).unwrap(),
    )
    .unwrap();
    let cases = first["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 1);
    // Every variant that predicted reports its error against the one measured total.
    let measured = cases[0]["measured_seconds"].as_f64().unwrap();
    assert!(measured > 0.0);
    for p in cases[0]["predictions"].as_array().unwrap() {
        let predicted = p["predicted_seconds"].as_f64().unwrap();
        let error = p["abs_percent_error"].as_f64().unwrap();
        assert!((error - (predicted - measured).abs() / measured * 100.0).abs() < 1e-6);
    }
    // Each calibrated row says how it was made; the other variants' rows do not.
    let case_dir = dir.path().join("out").join(&stem);
    let case_file = std::fs::read_dir(&case_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".json"))
        .expect("the case's validation");
    let case: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case_file).unwrap()).unwrap();
    let rows = case["rows"].as_array().expect("rows");
    let mut explained = 0;
    for r in rows {
        let how = &r["calibrated"];
        if r["variant"] == "calibrated" && r["phase"] != "application" {
            assert!(how["method"].is_string(), "{r}");
            assert_eq!(how["prediction_seconds"], r["predicted_seconds"], "{r}");
            explained += 1;
        } else {
            assert!(how.is_null(), "{r}");
        }
    }
    assert!(explained >= 2, "{rows:?}");
    // The case's validation is kept, and assessed again without a device it gives the
    // same numbers.
    let again = harness()
        .current_dir(dir.path())
        .args([
            "validate-suite",
            "--from",
            &format!("out/{stem}"),
            "--calibration",
            &fixture(),
            "--output-dir",
            "again",
        ])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let second: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("again").join(format!("{stem}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(
        first["cases"][0]["predictions"],
        second["cases"][0]["predictions"]
    );
    assert_eq!(first["summary"], second["summary"]);
}

#[test]
fn stored_cases_are_assessed_again_in_the_suites_order() {
    // A stored host suite, whose file names sort adi, jacobi2d, line-solve, …
    let run =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/suite-host-intel");
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "validate-suite",
            "--from",
            &run.join("host-intel-r-xeon-r-processor.suite")
                .to_string_lossy(),
            "--calibration",
            &run.join("host-intel-r-xeon-r-processor.json")
                .to_string_lossy(),
            "--output-dir",
            "again",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let suite: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.path()
                .join("again/host-intel-r-xeon-r-processor.suite.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let order: Vec<&str> = suite["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| c["case"].as_str().expect("a case"))
        .collect();
    assert_eq!(
        order,
        [
            "vadd",
            "triad",
            "jacobi2d",
            "sor-reordered",
            "sor-rb",
            "adi-reordered",
            "lu-ssor",
            "line-solve-reordered"
        ]
    );
}

#[test]
fn a_suite_in_which_a_variant_predicted_nothing_reads_back() {
    // A stored PoCL suite of four cases, none of which the windowed variant predicted, so
    // its errors and shares are NaN, written as `null`.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/suite-none-predicted.json");
    let suite: harness::experiments::suite::Suite =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).expect("reads back");
    let windowed = suite
        .summary
        .iter()
        .find(|v| v.predicted == 0)
        .expect("a variant that predicted nothing");
    assert!(windowed.error.median.is_nan() && windowed.interval_holds.is_nan());
    assert!(suite
        .summary
        .iter()
        .any(|v| v.predicted == 4 && v.interval_holds == 1.0));
}

#[test]
fn a_stored_spec_validation_is_assessed_again_without_its_spec_file() {
    // A saxpy spec validated on PoCL; the series carries the spec's text, so neither the spec
    // file nor its kernel is read (the stored path names no file in the test's folder).
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args(["validate-suite", "--from"])
        .arg(fixtures.join("spec-suite"))
        .arg("--calibration")
        .arg(fixtures.join("stored/opencl-pthread-skylake-avx512-amd-epyc.json"))
        .args(["--output-dir", "again"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let suite: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.path()
                .join("again/opencl-pthread-haswell-amd-epyc.suite.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(suite["cases"][0]["case"], "saxpy");
    let calibrated = suite["summary"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["variant"] == "calibrated")
        .unwrap();
    assert_eq!(calibrated["predicted"], 1, "{suite}");
}

#[test]
fn a_case_that_fails_is_listed_and_the_suite_goes_on() {
    // The host runs no spec: that case fails when it is run, and vadd after it still runs.
    let dir = tempfile::tempdir().unwrap();
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/ports/triad.toml");
    let out = harness()
        .current_dir(dir.path())
        .args(["validate-suite", "--device", "host", "--calibration"])
        .arg(fixture())
        .args(["--workloads", &format!("{spec},vadd")])
        .args(["--repeat", "3", "--max-repeat", "3", "--cold-runs", "0"])
        .args(["--output-dir", "out"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let error = one_error_line(&out);
    assert!(
        error.contains("1 of 2 cases failed") && error.contains("triad"),
        "{error}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("going on with the next case"), "{stderr}");
    let json = std::fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".suite.json"))
        .expect("the summary is written");
    let suite: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    let cases = suite["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 1);
    assert_eq!(cases[0]["case"], "vadd");
    let failed = suite["failed"].as_array().expect("failed cases");
    assert_eq!(failed.len(), 1);
    assert!(failed[0]["case"].as_str().unwrap().ends_with("triad.toml"));
    assert!(failed[0]["error"].as_str().unwrap().contains("OpenCL"));
}
