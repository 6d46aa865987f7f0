//! Records the git commit the binary is built from (for calibration files' provenance), and
//! whether an OpenCL runtime and NVRTC are installed: without one the OpenCL tests, without the
//! other the CUDA compile tests are marked ignored (`cfg(no_opencl_runtime)`, `cfg(no_nvrtc)`),
//! so the test summary shows that they did not run. With `HARNESS_REQUIRE_NVRTC=1` the CUDA
//! tests always run (and fail where NVRTC is missing). Likewise the report's browser test
//! needs Chromium (`cfg(no_chromium)`; `HARNESS_REQUIRE_CHROMIUM=1` makes it run regardless).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(no_opencl_runtime)");
    println!("cargo::rustc-check-cfg=cfg(no_nvrtc)");
    println!("cargo::rustc-check-cfg=cfg(no_chromium)");
    println!("cargo:rerun-if-env-changed=HARNESS_REQUIRE_CHROMIUM");
    println!("cargo:rerun-if-env-changed=PATH");
    let chromium_required = std::env::var_os("HARNESS_REQUIRE_CHROMIUM").is_some_and(|v| v == "1");
    if !chromium_required && chromium().is_none() {
        println!("cargo:rustc-cfg=no_chromium");
    }
    for var in [
        "HARNESS_REQUIRE_NVRTC",
        "HARNESS_NVRTC_DIR",
        "CUDA_HOME",
        "CUDA_PATH",
        "VIRTUAL_ENV",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let required = std::env::var_os("HARNESS_REQUIRE_NVRTC").is_some_and(|v| v == "1");
    if !required && !nvrtc_installed() {
        println!("cargo:rustc-cfg=no_nvrtc");
    }
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
    // The commit, marked `-dirty` where tracked files differ from it (a calibration made by
    // a build with uncommitted changes must not claim the commit's code): so this runs again
    // when the commit, the index or any source the binary is built from changes.
    for path in [
        "../.git/HEAD",
        "../.git/refs",
        "../.git/index",
        "src",
        "../kernels",
    ] {
        println!("cargo:rerun-if-changed={path}");
    }
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) {
        let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
            .is_some_and(|changes| !changes.is_empty());
        let suffix = if dirty { "-dirty" } else { "" };
        println!("cargo:rustc-env=HARNESS_GIT_COMMIT={commit}{suffix}");
    }
}

/// Whether a `libnvrtc.so.13`/`.12` is where the harness looks (`backend::nvrtc::search_dirs`,
/// in short) or known to the system loader.
fn nvrtc_installed() -> bool {
    use std::path::{Path, PathBuf};
    let has = |dir: &Path| {
        ["libnvrtc.so.13", "libnvrtc.so.12"]
            .iter()
            .any(|n| dir.join(n).exists())
    };
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(d) = std::env::var_os("HARNESS_NVRTC_DIR") {
        dirs.push(d.into());
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(Path::new(&root).join("lib64"));
        }
    }
    dirs.push("/usr/local/cuda/lib64".into());
    let mut prefixes: Vec<PathBuf> = vec!["/usr/local".into(), "/usr".into()];
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        prefixes.push(v.into());
    }
    if let Some(h) = std::env::var_os("HOME") {
        prefixes.push(Path::new(&h).join(".local"));
    }
    for prefix in prefixes {
        for python in std::fs::read_dir(prefix.join("lib"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if python.file_name().to_string_lossy().starts_with("python3") {
                for packages in ["site-packages", "dist-packages"] {
                    dirs.push(python.path().join(packages).join("nvidia/cu13/lib"));
                    dirs.push(python.path().join(packages).join("nvidia/cuda_nvrtc/lib"));
                }
            }
        }
    }
    dirs.iter().any(|d| has(d))
        || std::process::Command::new("ldconfig")
            .arg("-p")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("libnvrtc.so.1"))
}

/// The first Chromium on the PATH (Debian's `chromium`, or `chromium-browser`,
/// `google-chrome`).
fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).find_map(|dir| {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .map(|n| dir.join(n))
            .find(|p| p.is_file())
    })
}
