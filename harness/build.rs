//! Records the git commit the binary is built from (for calibration files' provenance).
fn main() {
    println!("cargo:rerun-if-changed=../.git/HEAD");
    println!("cargo:rerun-if-changed=../.git/refs");
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    if let Some(commit) = commit {
        println!("cargo:rustc-env=HARNESS_GIT_COMMIT={commit}");
    }
}
