//! What the command-line test files share: the binary and the one-error-line contract.

#![allow(dead_code)]

use assert_cmd::Command;

/// The `harness` binary built for the tests.
pub fn harness() -> Command {
    Command::cargo_bin("harness").unwrap()
}

/// The single `error:` line of a failed run; fails the test on a panic, on more than one
/// error line, or on an exit code other than 2.
pub fn one_error_line(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert_eq!(output.status.code(), Some(2), "stderr: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    errors[0].to_string()
}

/// Run `harness args…` and expect one error line containing `needle`.
pub fn fails_with(args: &[&str], needle: &str) {
    let out = harness().args(args).output().unwrap();
    let line = one_error_line(&out);
    assert!(line.contains(needle), "{args:?}: {line}");
}

/// The OpenCL device's index in `list`, or `None` (with a note on standard error) where
/// there is none. With `HARNESS_REQUIRE_OPENCL=1` (CI sets it, since it installs PoCL) a
/// missing device fails the test instead, so CI can never pass by not running it. Tests that
/// use this carry `#[cfg_attr(no_opencl_runtime, ignore = ...)]`, so on a machine without an
/// OpenCL runtime the summary counts them as ignored.
pub fn opencl_device(list: &harness::backend::DeviceList) -> Option<usize> {
    use harness::backend::{select, BackendKind, DeviceSelector};
    match select(list, &DeviceSelector::Backend(BackendKind::Opencl)) {
        Ok(index) => Some(index),
        Err(e) => {
            assert!(
                std::env::var("HARNESS_REQUIRE_OPENCL").as_deref() != Ok("1"),
                "HARNESS_REQUIRE_OPENCL=1 but there is no OpenCL device: {e}"
            );
            eprintln!("skipped: no OpenCL device (CI installs PoCL so this runs there)");
            None
        }
    }
}

/// Assert that an interval of a cluster report (JSON) adds up: processors × time equals
/// productive time plus every independent loss.
pub fn assert_losses_add_up(interval: &serde_json::Value) {
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    let l = &interval["losses"];
    let sum = f(&interval["productive_cpu"])
        + f(&interval["productive_sys"])
        + [
            "insufficient_parallelism",
            "communication",
            "synchronization",
            "idle",
        ]
        .iter()
        .map(|k| f(&l[*k]))
        .sum::<f64>();
    let total = f(&interval["total_time"]);
    assert!(
        (sum - total).abs() <= 1e-9 * total.max(1e-12),
        "{sum} vs {total}: {interval}"
    );
}
