//! The binary's contract: tables and JSON, and one clear error line with exit code 2 for
//! bad input, never a panic or a partial file.

use predicates::prelude::*;

mod common;

use common::{harness, one_error_line};

#[test]
fn devices_lists_the_host_as_table_and_json() {
    harness()
        .arg("devices")
        .assert()
        .success()
        .stdout(predicate::str::contains("host"));
    let out = harness().args(["devices", "--json"]).output().unwrap();
    assert!(out.status.success());
    let list: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let backends: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["backend"].as_str().unwrap())
        .collect();
    assert!(backends.contains(&"host"));
}

#[test]
fn help_teaches_the_commands() {
    harness()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("calibrate").and(predicate::str::contains("devices")));
    harness()
        .args(["calibrate", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--quick").and(predicate::str::contains("--compare")));
}

#[test]
fn unknown_device_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args(["calibrate", "--device", "no-such-gpu-xyz", "--quick"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_error_line(&out).contains("no-such-gpu-xyz"));
    assert!(
        !dir.path().join("calibrations").exists(),
        "no file left behind"
    );
}

#[test]
fn missing_and_garbled_calibration_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args(["compare", "missing.json", "missing.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_error_line(&out).contains("missing.json"));

    std::fs::write(dir.path().join("bad.json"), "{\"format_version\": \"one\"}").unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "calibrate",
            "--device",
            "host",
            "--quick",
            "--compare",
            "bad.json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_error_line(&out);
    assert!(
        line.contains("bad.json") && line.contains("format_version"),
        "{line}"
    );
    assert!(
        !dir.path().join("calibrations").exists(),
        "refused before measuring"
    );
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_kernel_that_fails_to_compile_shows_the_log() {
    if common::opencl_device(&harness::backend::discover()).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("microbench.kern"),
        "KERNEL empty(GLOBAL uint* sink) { this is not C; }\n",
    )
    .unwrap();
    let out = harness()
        .current_dir(dir.path())
        .env("HARNESS_KERNEL_DIR", dir.path())
        .args(["calibrate", "--device", "opencl", "--quick"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("failed to compile"), "{stderr}");
    assert!(
        stderr.contains("microbench.kern"),
        "the compiler's log names the file: {stderr}"
    );
    assert!(!stderr.contains("panicked"));
    assert!(!dir.path().join("calibrations").exists(), "no partial file");
}

#[test]
fn quick_host_calibration_writes_the_file_and_compares() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "calibrate",
            "--device",
            "host",
            "--quick",
            "--json",
            "-o",
            "first.json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for key in ["t", "T", "dt", "dT", "tau", "n"] {
        let p = &printed["parameters"][key];
        assert!(p["value"].is_number(), "{key}");
        assert!(p["unit"].is_string() && p["method"].is_string(), "{key}");
        assert_eq!(p["ci95"].as_array().unwrap().len(), 2, "{key}");
    }
    let written = std::fs::read_to_string(dir.path().join("first.json")).unwrap();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&written).unwrap(),
        printed
    );
    harness()
        .current_dir(dir.path())
        .args(["compare", "first.json", "first.json"])
        .assert()
        .success()
        .stdout(predicate::str::contains("ratio").and(predicate::str::contains("yes")));
}

#[test]
fn balance_prints_the_decomposition_and_refuses_bad_phi() {
    let out = harness()
        .args([
            "balance", "--phi", "0.3", "--rho", "5.7", "--q", "28", "--r", "3", "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["q_star"], 6);
    let out = harness()
        .args([
            "balance",
            "--times",
            "22.98,7.05,2.82",
            "--q",
            "28",
            "--r",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("K^max"));
    for args in [
        ["--phi", "1.5", "--rho", "5.7", "--q", "28", "--r", "3"],
        ["--phi", "0.3", "--rho", "-1", "--q", "28", "--r", "3"],
        ["--phi", "0.3", "--rho", "5.7", "--q", "0", "--r", "3"],
        ["--phi", "0.3", "--rho", "5.7", "--q", "28", "--r", "0"],
    ] {
        let out = harness().arg("balance").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_error_line(&out);
    }
}

#[test]
fn balance_measures_the_sor_batch_and_runs_the_splits_on_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "balance",
            "--workload",
            "sor",
            "--size",
            "24",
            "--grids",
            "6",
            "--sweeps",
            "2",
            "--device",
            "host",
            "--q",
            "2",
            "--run",
            "--repeat",
            "1",
            "--json",
            "--plot",
            "plots",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let phi = m["decomposition"]["phi"].as_f64().unwrap();
    assert!(phi > 0.0 && phi < 1.0, "{phi}");
    let runs = m["runs"].as_array().unwrap();
    assert!(runs.len() >= 3, "{runs:?}");
    for r in runs {
        assert!(r["speedup"].as_f64().unwrap() > 0.0);
    }
    let written: Vec<String> = std::fs::read_dir(dir.path().join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        written.iter().any(|f| f.ends_with(".balance.sor-24.png")),
        "{written:?}"
    );
    assert!(dir.path().join("calibrations").read_dir().unwrap().count() >= 2);

    for args in [
        vec!["--workload", "adi", "--size", "24"],
        vec!["--workload", "sor"],
        vec!["--workload", "sor", "--size", "2"],
        vec!["--workload", "sor", "--size", "24", "--r", "2", "--run"],
        vec!["--phi", "0.3", "--rho", "5.7"],
    ] {
        let out = harness()
            .current_dir(dir.path())
            .arg("balance")
            .args(&args)
            .args(["--device", "host"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_error_line(&out);
    }
}

#[test]
fn sizes_and_targets_take_powers_of_two_and_series_export_every_format() {
    let dir = tempfile::tempdir().unwrap();
    harness()
        .current_dir(dir.path())
        .args([
            "run", "vadd", "--size", "2^12", "--iters", "1", "--device", "host",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("vadd at N = 4096"));
    harness()
        .current_dir(dir.path())
        .args([
            "series",
            "vadd",
            "--sizes",
            "2^12,2^13,2^14",
            "--repeat",
            "3",
            "--device",
            "host",
            "--format",
            "extrap,markdown",
        ])
        .assert()
        .success();
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(dir.path().join("calibrations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let with = |suffix: &str| {
        files
            .iter()
            .find(|p| p.to_string_lossy().ends_with(suffix))
            .unwrap_or_else(|| panic!("no {suffix} in {files:?}"))
            .clone()
    };
    let json = with(".series.vadd.json");
    for suffix in [
        ".series.vadd.csv",
        ".series.vadd.md",
        ".series.vadd.extrap.txt",
    ] {
        with(suffix);
    }
    let markdown = std::fs::read_to_string(with(".md")).unwrap();
    assert!(markdown.starts_with("| size | phase |"), "{markdown}");
    harness()
        .args([
            "predict",
            "--series",
            json.to_str().unwrap(),
            "--target",
            "2^16",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("65536"));
    let out = harness()
        .args([
            "predict",
            "--series",
            json.to_str().unwrap(),
            "--target",
            "2^x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("2^k"));
}

#[test]
fn auto_small_sizes_need_a_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "validate", "triad", "--small", "auto", "--large", "2^20", "--device", "host",
        ])
        .output()
        .unwrap();
    let line = one_error_line(&out);
    assert!(
        line.contains("--small auto needs the device's calibration"),
        "{line}"
    );
    let out = harness()
        .current_dir(dir.path())
        .args([
            "validate", "triad", "--small", "auto,5", "--large", "2^20", "--device", "host",
        ])
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("`auto` is not a size"));
}

#[test]
fn a_series_takes_its_sizes_from_the_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/calibration-host.json"
    );
    let out = harness()
        .current_dir(dir.path())
        .args(["series", "vadd", "--sizes", "auto", "--device", "host"])
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("--target"));
    let out = harness()
        .current_dir(dir.path())
        .args([
            "series",
            "vadd",
            "--sizes",
            "auto",
            "--target",
            "2^16",
            "--device",
            "host",
            "--calibration",
            fixture,
            "--iters",
            "1",
            "--repeat",
            "3",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // 4–8× below 2^16: from 2^13 to 2^14.
    assert!(
        stderr.contains("sizes from the calibration: [8192,") && stderr.contains("16384]"),
        "{stderr}"
    );
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime (install pocl-opencl-icd)"
)]
fn kernel_dir_copies_are_found_in_their_subfolders_and_a_missing_one_is_said() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workloads")).unwrap();
    std::fs::write(
        dir.path().join("workloads/stream.kern"),
        "KERNEL vadd(GLOBAL float* a) { not C at all }\n",
    )
    .unwrap();
    let out = harness()
        .env("HARNESS_KERNEL_DIR", dir.path())
        .args(["check-kernels", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    let stream = checks
        .iter()
        .find(|c| {
            c["program"] == "stream.kern" && c["target"].as_str().unwrap().starts_with("opencl")
        })
        .expect("stream.kern checked on OpenCL");
    assert_eq!(stream["ok"], false, "{stream}");
    assert!(stream["origin"]
        .as_str()
        .unwrap()
        .ends_with("workloads/stream.kern"));
    // No copy of the stencil program there: the embedded one is used, and the report says so.
    let stencil = checks
        .iter()
        .find(|c| c["program"] == "stencil.kern")
        .unwrap();
    assert!(
        stencil["origin"].as_str().unwrap().contains("not used"),
        "{stencil}"
    );
}

#[test]
fn nonsense_counts_selectors_and_parameters_are_refused() {
    common::fails_with(
        &["run", "vadd", "--size", "1024", "--iters", "0"],
        "at least 1",
    );
    common::fails_with(
        &["series", "vadd", "--sizes", "64,128,256", "--iters", "0"],
        "at least 1",
    );
    common::fails_with(
        &["run", "vadd", "--size", "1024", "--device", ""],
        "empty device selector",
    );
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/graphs/triad.toml");
    for (set, needle) in [
        ("t=-1", "non-negative"),
        ("n=0", "--n-exec"),
        ("zzz=1", "no parameter zzz"),
    ] {
        common::fails_with(
            &[
                "maxplus", graph, "--n-exec", "4", "--sizes", "1024", "--set", set,
            ],
            needle,
        );
    }
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["devices"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close our end of stdout at once: the harness's writes meet a closed pipe.
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(status.code(), Some(101), "{stderr}");
}

#[test]
fn absurd_sizes_are_refused_not_wrapped() {
    // 12 · N wraps to 8 bytes in 64-bit arithmetic; 2^62 elements, to 0.
    for size in ["2^62", "1537228672809129302"] {
        common::fails_with(
            &["run", "vadd", "--size", size, "--device", "host"],
            "more than 2^64 bytes",
        );
    }
    common::fails_with(
        &[
            "series",
            "triad",
            "--sizes",
            "1024,2^62",
            "--device",
            "host",
        ],
        "more than 2^64 bytes",
    );
}
