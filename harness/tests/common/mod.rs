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
