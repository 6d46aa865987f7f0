//! `scripts/gpu-evidence.sh`, the one call a GPU session makes, run on its CPU path so that a
//! typo cannot waste GPU time: a missing device is named before anything runs, every step is
//! listed in the summary, and the budget stops it.

use std::process::Command;

fn script() -> Command {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut c = Command::new("bash");
    c.current_dir(root)
        .arg("scripts/gpu-evidence.sh")
        .env("HARNESS_BIN", env!("CARGO_BIN_EXE_harness"));
    c
}

#[test]
fn a_missing_device_is_named_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = script()
        .args(["--device", "cuda", "--budget", "5", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no cuda device found"));
    let out = script().args(["--budget", "soon"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime (install pocl-opencl-icd): the CPU half runs on PoCL"
)]
fn the_cpu_half_runs_within_its_budget_and_lists_every_step() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let out = script()
        .args(["--device", "opencl", "--budget", "20", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The budget holds, give or take the last step's clean stop.
    assert!(
        started.elapsed().as_secs() < 20 + 15,
        "{:?}",
        started.elapsed()
    );
    let summary = std::fs::read_to_string(dir.path().join("summary.tsv")).unwrap();
    let steps: Vec<&str> = summary.lines().skip(1).collect();
    for name in [
        "check-kernels",
        "calibrate-quick",
        "calibrate",
        "ports-held-out",
        "ports-held-out-2",
        "ports-held-out-3",
        "ports-held-out-4",
        "babelstream",
        "babelstream-fp64",
        "validate-suite",
        "balance-sor",
        "dvmh-adi",
        "dvmh-sor",
        "validate-suite-sorrb",
        "ports-held-out-5",
        "ports-held-out-6",
        "ports-held-out-7",
        "ports-held-out-8",
        "ports-held-out-9",
        "ports-held-out-11",
        "ports-held-out-12",
        "ports-held-out-13",
        "ports-development",
        "ports-development-2",
        "ports-development-3",
        "ports-development-4",
    ] {
        assert!(
            steps.iter().any(|l| l.split('\t').next() == Some(name)),
            "{name} missing: {summary}"
        );
    }
    // The first step ran; 20 s cannot hold them all, so the last ones say why they did not.
    assert!(steps[0].starts_with("check-kernels\t"), "{summary}");
    assert!(
        steps.last().is_some_and(|l| l.contains("\tskipped\t")),
        "{summary}"
    );
    assert!(dir.path().join("devices.txt").exists());
    assert!(dir.path().join("check-kernels.txt").exists());
}
