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
fn run_help_names_every_workload_and_spec_files() {
    let out = harness().args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for name in harness::workloads::registry::names() {
        assert!(
            help.contains(name),
            "run --help does not mention {name}: {help}"
        );
    }
    assert!(
        help.contains("spec file") && help.contains("--param"),
        "{help}"
    );
}

#[test]
fn spec_flags_are_refused_where_they_do_not_apply() {
    let spec = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/examples/gemm.toml");
    for (args, needle) in [
        (
            vec![
                "run", "vadd", "--size", "1000", "--param", "NK=3", "--device", "host",
            ],
            "parameters belong to spec files",
        ),
        (
            vec!["run", "vadd", "--size", "1000", "--param", "NK"],
            "NAME=VALUE",
        ),
        (
            vec!["run", spec, "--size", "64", "--param", "NK=many"],
            "NK: `many` is not a number or 2^k",
        ),
        (
            vec![
                "run", spec, "--size", "64", "--param", "NQ=3", "--device", "host",
            ],
            "no parameter NQ (it has NI, NJ, NK)",
        ),
        (
            vec![
                "run", "vadd", "--size", "1000", "--dump", "d", "--device", "host",
            ],
            "--dump applies to spec files",
        ),
    ] {
        common::fails_with(&args, needle);
    }
}

#[test]
fn shaped_sweeps_in_a_quick_look_are_refused_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args([
            "calibrate",
            "--device",
            "host",
            "--quick",
            "--shaped-sweeps",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot be used with"), "{err}");
    assert!(!dir.path().join("calibrations").exists());
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
        .stdout(
            predicate::str::contains("ratio")
                .and(predicate::str::contains("yes"))
                .and(predicate::str::contains("streaming rates per level"))
                .and(predicate::str::contains("spreads overlap")),
        );
    // For scripts: the parameters and the streaming rates, each row compared with itself.
    let out = harness()
        .current_dir(dir.path())
        .args(["compare", "first.json", "first.json", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let both: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!both["parameters"].as_array().unwrap().is_empty());
    let rates = both["rates"].as_array().unwrap();
    assert!(!rates.is_empty(), "{both}");
    for r in rates {
        assert_eq!(r["ratio"], 1.0, "{r}");
        assert_eq!(r["spreads_overlap"], true, "{r}");
        assert_eq!(r["same_working_sets"], true, "{r}");
    }
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
    // What a run killed during a write leaves (no process can have PID 2^22 + 1): swept.
    let host: String = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
        .take(64)
        .collect();
    let host = if host.is_empty() {
        "localhost".into()
    } else {
        host
    };
    let stale = dir.path().join(format!(
        "calibrations/.x.series.vadd.json.harness-{host}-4194305-1.tmp"
    ));
    std::fs::create_dir(dir.path().join("calibrations")).unwrap();
    std::fs::write(&stale, "{\"partial").unwrap();
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
    assert!(!stale.exists(), "the stale temporary is swept");
    assert!(
        !files.iter().any(|p| p.to_string_lossy().ends_with(".tmp")),
        "{files:?}"
    );
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
    // 4–8× below 2^16, odd multiples of 16: from 2^13 + 16 to 2^14 − 16; and a warning
    // that the target, a multiple of 1024, may alias in the caches.
    assert!(
        stderr.contains("sizes from the calibration: [8208,") && stderr.contains("16368]"),
        "{stderr}"
    );
    assert!(stderr.contains("multiple of 1024"), "{stderr}");
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
fn a_kernel_dir_that_is_missing_or_unreadable_is_refused_and_one_in_use_is_said() {
    let missing = harness()
        .env("HARNESS_KERNEL_DIR", "/no/such/kernels")
        .arg("devices")
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(
        stderr.contains("/no/such/kernels is not a folder"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // A copy that is there but cannot be read (a folder where the file should be).
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workloads/stream.kern")).unwrap();
    let unreadable = harness()
        .env("HARNESS_KERNEL_DIR", dir.path())
        .arg("devices")
        .output()
        .unwrap();
    assert_eq!(unreadable.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unreadable.stderr);
    assert!(
        stderr.contains("cannot read") && stderr.contains("workloads/stream.kern"),
        "{stderr}"
    );
    // One readable copy: used, and the note says which programs came from where.
    std::fs::remove_dir(dir.path().join("workloads/stream.kern")).unwrap();
    std::fs::write(
        dir.path().join("workloads/stream.kern"),
        include_str!("../../kernels/workloads/stream.kern"),
    )
    .unwrap();
    let used = harness()
        .env("HARNESS_KERNEL_DIR", dir.path())
        .arg("devices")
        .output()
        .unwrap();
    assert!(used.status.success());
    let stderr = String::from_utf8_lossy(&used.stderr);
    assert!(
        stderr.contains(
            "from there stream.kern; built in (no copy there) microbench.kern, babelstream_fp64.kern, stencil.kern"
        ),
        "{stderr}"
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

#[test]
fn an_unwritable_output_is_refused_before_any_measurement() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plain"), "a file").unwrap();
    let under_a_file = dir.path().join("plain/sub");
    let under = under_a_file.to_str().unwrap();
    let calibration = dir.path().join("cal.json");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/calibration-host.json"
        ),
        &calibration,
    )
    .unwrap();
    let graph = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/graphs/triad.toml");
    let cases: [&[&str]; 8] = [
        &[
            "calibrate",
            "--device",
            "host",
            "--quick",
            "--output-dir",
            "/proc/forbidden-dir",
        ],
        &[
            "calibrate",
            "--device",
            "host",
            "--quick",
            "--output",
            "/proc/forbidden-dir",
        ],
        &[
            "calibrate",
            "--device",
            "host",
            "--quick",
            "--output-dir",
            under,
        ],
        &[
            "series",
            "vadd",
            "--sizes",
            "2^12",
            "--device",
            "host",
            "--output-dir",
            under,
        ],
        &[
            "validate",
            "vadd",
            "--small",
            "2^12",
            "--large",
            "2^14",
            "--device",
            "host",
            "--plot-dir",
            under,
        ],
        &["validate-suite", "--device", "host", "--output-dir", under],
        &[
            "balance",
            "--workload",
            "sor",
            "--size",
            "64",
            "--device",
            "host",
            "--output-dir",
            under,
        ],
        &[
            "validate-maxplus",
            graph,
            "--sizes",
            "2^10",
            "--device",
            "host",
            "--calibration",
            calibration.to_str().unwrap(),
            "--plot-dir",
            under,
        ],
    ];
    for args in cases {
        let out = harness()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        let line = one_error_line(&out);
        assert!(line.contains("cannot write into"), "{args:?}: {line}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !["calibrating", "series of", "measuring", "N = "]
                .iter()
                .any(|s| stderr.contains(s)),
            "{args:?} measured first: {stderr}"
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        ["cal.json", "plain"],
        "the checks leave nothing behind"
    );
}

#[test]
fn a_second_calibrate_on_the_device_fails_at_once() {
    use harness::backend::{discover, select, BackendKind, DeviceSelector};
    let dir = tempfile::tempdir().unwrap();
    let list = discover();
    let host = select(&list, &DeviceSelector::Backend(BackendKind::Host)).unwrap();
    let info = list.devices[host].info().clone();
    // This test is the other run: it holds the host's lock in the default output folder.
    let held =
        harness::calibration::lock::lock_device(&dir.path().join("calibrations"), &info).unwrap();
    let out = harness()
        .current_dir(dir.path())
        .args(["calibrate", "--device", "host", "--quick"])
        .output()
        .unwrap();
    let line = one_error_line(&out);
    assert_eq!(
        line,
        format!(
            "error: another calibrate run (pid {}) holds the lock on {}: calibrations/.{}.lock",
            std::process::id(),
            info.name,
            info.slug()
        )
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("calibrating"));
    assert!(held.path().exists());
    drop(held);
    assert!(
        !dir.path().join("calibrations").exists(),
        "the lock and its folder are gone"
    );
}

/// Start `harness args…` in `dir`, wait for a line of standard error starting with `ready`,
/// send SIGINT and return the exit code and the rest of standard error.
fn interrupt_when(dir: &std::path::Path, args: &[&str], ready: &str) -> (Option<i32>, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("harness"))
        .current_dir(dir)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "ended early: {seen}"
        );
        seen.push_str(&line);
        if line.starts_with(ready) {
            break;
        }
    }
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: sends SIGINT to our own child, which has not been waited for yet.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    stderr.read_to_string(&mut seen).unwrap();
    (child.wait().unwrap().code(), seen)
}

fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir)
        .iter()
        .map(|p| p.strip_prefix(dir).unwrap().display().to_string())
        .collect();
    names.sort();
    names
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn ctrl_c_ends_a_series_at_once_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = interrupt_when(
        dir.path(),
        &[
            "series",
            "vadd",
            "--sizes",
            "2^20,2^21",
            "--repeat",
            "10000",
            "--device",
            "host",
        ],
        "series of",
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn ctrl_c_stops_a_calibration_and_leaves_no_file_and_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stderr) = interrupt_when(
        dir.path(),
        &["calibrate", "--device", "host", "--quick"],
        "calibrating device",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn error_lines_quote_a_short_excerpt_of_huge_input() {
    let huge = "9".repeat(100_000);
    for args in [
        vec!["run", "vadd", "--size", huge.as_str()],
        vec!["run", huge.as_str(), "--size", "10"],
        vec!["run", "vadd", "--size", "10", "--device", huge.as_str()],
    ] {
        let out = harness().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.lines().all(|l| l.chars().count() <= 400),
            "{}",
            &stderr[..200.min(stderr.len())]
        );
        assert!(
            stderr.contains("cut:"),
            "{}",
            &stderr[..200.min(stderr.len())]
        );
    }
}

#[test]
fn a_series_records_how_the_worker_threads_were_pinned() {
    let series = |pin: Option<&str>| -> serde_json::Value {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = harness();
        cmd.current_dir(dir.path())
            .env_remove("POCL_AFFINITY")
            .env_remove("RAYON_NUM_THREADS")
            .env_remove("HARNESS_PIN");
        if let Some(v) = pin {
            cmd.env("HARNESS_PIN", v);
        }
        cmd.args([
            "series",
            "vadd",
            "--sizes",
            "2^12,2^13,2^14",
            "--repeat",
            "3",
            "--iters",
            "1",
            "--device",
            "host",
        ])
        .assert()
        .success();
        let file = std::fs::read_dir(dir.path().join("calibrations"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".series.vadd.json"))
            .expect("a series file");
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
    };
    // By default: PoCL told to pin its workers, rayon's threads one per CPU.
    let pinned = series(None);
    let threads = &pinned["worker_threads"];
    assert_eq!(threads["pocl_affinity"], "1", "{threads}");
    let cpus = threads["rayon_cpus"].as_array().expect("a list");
    assert!(!cpus.is_empty(), "{threads}");
    // The host kernels' pool: as many parties as rayon threads.
    assert_eq!(
        threads["host_pool_cpus"], threads["rayon_cpus"],
        "{threads}"
    );
    // HARNESS_PIN=0 leaves all three as they were, and says so.
    let unpinned = series(Some("0"));
    let threads = &unpinned["worker_threads"];
    assert_eq!(threads["pocl_affinity"], "unset", "{threads}");
    assert_eq!(threads["rayon_cpus"], serde_json::json!([]), "{threads}");
    assert_eq!(
        threads["host_pool_cpus"],
        serde_json::json!([]),
        "{threads}"
    );
}

/// `spec-init` writes a first spec for a kernel, names the kernels when the file has several,
/// and never writes over a file: each refusal one error line and exit code 2.
#[test]
fn spec_init_writes_a_first_spec_and_refuses_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let gemm =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/examples/gemm.kern");
    let out = harness()
        .args(["spec-init", gemm.to_str().unwrap(), "--kernel", "gemm"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("kernel = \"gemm\"") && text.contains("# walks = { b = "),
        "{text}"
    );
    let target = dir.path().join("gemm.toml");
    std::fs::write(&target, "keep me").unwrap();
    for (args, needle) in [
        (vec![], "name one with --kernel (gemm, gemm_reference)"),
        (vec!["--kernel", "gem"], "no kernel 'gem'"),
        (
            vec!["--kernel", "gemm", "-o", target.to_str().unwrap()],
            "does not write over a file",
        ),
    ] {
        let mut all = vec!["spec-init", gemm.to_str().unwrap()];
        all.extend(args);
        let out = harness().args(&all).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        let line = one_error_line(&out);
        assert!(line.contains(needle), "{line}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
}
