//! Records the git commit the binary is built from (for calibration files' provenance), and
//! whether an OpenCL runtime is installed: without one the OpenCL tests are marked ignored
//! (`cfg(no_opencl_runtime)`), so the test summary shows that they did not run.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_opencl_runtime)");
    println!("cargo:rerun-if-changed=/etc/OpenCL/vendors");
    println!("cargo:rerun-if-env-changed=OCL_ICD_VENDORS");
    println!("cargo:rerun-if-env-changed=OCL_ICD_FILENAMES");
    let vendors = std::env::var_os("OCL_ICD_VENDORS").unwrap_or("/etc/OpenCL/vendors".into());
    let has_icd = std::fs::read_dir(vendors).is_ok_and(|dir| {
        dir.filter_map(Result::ok)
            .any(|e| e.path().extension().is_some_and(|x| x == "icd"))
    }) || std::env::var_os("OCL_ICD_FILENAMES").is_some_and(|f| !f.is_empty());
    if !has_icd {
        println!("cargo:rustc-cfg=no_opencl_runtime");
    }
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
