//! The CUDA path without a GPU: every built-in kernel through NVRTC (and ptxas where present),
//! as `harness check-kernels` does. Marked ignored where NVRTC is not installed
//! (`pip install nvidia-cuda-nvrtc nvidia-cuda-nvcc`); CI installs it and sets
//! `HARNESS_REQUIRE_NVRTC=1`, under which these tests always run.

mod common;

use common::harness;

/// `harness check-kernels --arch sm_90 --no-opencl <flag> DIR` into a fresh folder.
fn check_kernels_into(flag: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = harness()
        .args(["check-kernels", "--arch", "sm_90", "--no-opencl", flag])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn every_builtin_kernel_compiles_for_ampere_and_hopper() {
    let out = harness()
        .args([
            "check-kernels",
            "--arch",
            "sm_80,sm_90",
            "--no-opencl",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["nvrtc"]["version"].is_string(), "{report}");
    let checks = report["checks"].as_array().unwrap();
    // Seven programs (the cold runs' eviction kernel among them), two architectures.
    assert_eq!(checks.len(), 14, "{report}");
    assert!(checks.iter().all(|c| c["ok"] == true), "{report}");
    // The shipped CUDA and common-dialect examples compile too.
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/examples/");
    let specs: Vec<String> = ["saxpy-cuda", "gemm", "lu", "fdtd2d", "conv2d"]
        .iter()
        .map(|s| format!("{examples}{s}.toml"))
        .collect();
    let out = harness()
        .args(["check-kernels", "--arch", "sm_90", "--no-opencl", "--json"])
        .args(&specs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let with_spec: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(with_spec["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["program"] == "saxpy.cu" && c["ok"] == true));
    for program in ["gemm.kern", "lu.kern", "fdtd2d.kern", "conv2d.kern"] {
        assert!(
            with_spec["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["program"] == program && c["ok"] == true),
            "{program}: {with_spec}"
        );
    }
    if report["ptxas"].is_string() {
        let kernels: Vec<&serde_json::Value> = checks
            .iter()
            .flat_map(|c| c["kernels"].as_array().unwrap().iter())
            .collect();
        assert!(kernels.len() >= 2 * 23, "{} kernels", kernels.len());
        for k in kernels {
            assert_eq!(k["spill_stores"], 0, "{k}");
            assert!(k["registers"].as_u64().unwrap() <= 64, "{k}");
        }
    }
}

/// The sm_90 PTX body of each named entry of the microbenchmark program, as NVRTC emits it.
fn microbench_entries(entries: &[&'static str]) -> Vec<(&'static str, String)> {
    let dir = check_kernels_into("--ptx-dir");
    let ptx = std::fs::read_to_string(dir.path().join("microbench.kern.sm_90.ptx")).unwrap();
    entries
        .iter()
        .map(|&entry| {
            let start = ptx.find(entry).unwrap_or_else(|| panic!("{entry} missing"));
            let body = &ptx[start..];
            (entry, body[..body.find("\n}").unwrap()].to_string())
        })
        .collect()
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn the_read_latency_chase_uses_the_ordinary_global_load() {
    for (entry, body) in microbench_entries(&[".entry chase(", ".entry chase_store("]) {
        assert!(body.contains("ld.global.u32"), "{entry}: {body}");
        assert!(
            !body.contains("ld.global.nc"),
            "{entry} reads through the read-only path"
        );
    }
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn the_bandwidth_sweep_loads_through_the_l2_alone() {
    for (entry, body) in
        microbench_entries(&[".entry bw_read(", ".entry bw_copy(", ".entry bw_triad("])
    {
        assert!(body.contains("ld.global.cg.f32"), "{entry}: {body}");
        for cached in ["ld.global.f32", "ld.global.nc.f32"] {
            assert!(
                !body.contains(cached),
                "{entry} has a load that may hit the L1"
            );
        }
    }
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn a_nul_byte_or_a_syntax_error_is_a_clear_error() {
    use harness::backend::nvrtc::compile;
    let e = compile(
        "extern \"C\" __global__ void k() {}\0",
        "nul.cu",
        "sm_90",
        &[],
    )
    .expect_err("a NUL byte");
    assert!(e.to_string().contains("NUL byte"), "{e}");
    let e = compile(
        "extern \"C\" __global__ void k() { oops }",
        "bad.cu",
        "sm_90",
        &[],
    )
    .expect_err("a syntax error");
    assert!(e.to_string().contains("bad.cu"), "{e}");
    let ok = compile("extern \"C\" __global__ void k() {}", "ok.cu", "sm_90", &[]).unwrap();
    assert!(ok.cubin.is_some_and(|c| !c.is_empty()));
    assert!(ok.ptx.contains(".entry k"));
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn cubins_for_a_gpu_machine_without_nvrtc_are_named_after_their_source() {
    let dir = check_kernels_into("--cubin-dir");
    let program = harness::workloads::stream::program();
    let text = program.cuda_source().unwrap();
    let name = harness::backend::nvrtc::cubin_file_name(&program.name, "sm_90", &text);
    let cubin = std::fs::read(dir.path().join(&name)).expect("the stream program's CUBIN");
    // An ELF image, as the driver's cuModuleLoadData takes it.
    assert_eq!(&cubin[..4], b"\x7fELF");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 7);
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn a_cuda_kernel_without_extern_c_fails_the_check_with_the_fix() {
    let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/examples/");
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(format!("{examples}saxpy-cuda.toml")).unwrap();
    std::fs::write(dir.path().join("saxpy-cuda.toml"), spec).unwrap();
    let source = std::fs::read_to_string(format!("{examples}saxpy.cu")).unwrap();
    let mangled = source.replace("extern \"C\" __global__", "__global__");
    assert_ne!(
        mangled, source,
        "the example declares its kernel extern \"C\""
    );
    std::fs::write(dir.path().join("saxpy.cu"), mangled).unwrap();
    let out = harness()
        .args(["check-kernels", "--arch", "sm_90", "--no-opencl"])
        .arg(dir.path().join("saxpy-cuda.toml"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("compiled as the C++ name _Z5saxpy") && stdout.contains("extern \"C\""),
        "{stdout}"
    );
    // The seven built-in programs still pass: only the spec's program failed.
    assert!(
        stderr.contains("1 of 8 checks failed: saxpy.cu (nvrtc sm_90)"),
        "{stderr}"
    );
}
