//! The third-party kernel ports in kernels/ports/ (the development and held-out sets of the
//! prediction work, kernels/ports/SPLIT.md): each parses, declares its bytes, runs verified on
//! the OpenCL CPU device at a small size, and compiles through NVRTC for Ampere and Hopper.

mod common;

use std::path::{Path, PathBuf};

use common::harness;
use harness::workloads::spec::{load, Step};
use harness::workloads::Workload;

/// Whether every launch under `steps` says how many bytes it moves.
fn all_declare_bytes(steps: &[Step]) -> bool {
    steps.iter().all(|s| match s {
        Step::Launch(l) => l.bytes.is_some(),
        Step::Loop(l) => all_declare_bytes(&l.body),
    })
}

fn ports() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/ports")
}

/// Each port, the size it is checked at here (small: seconds on PoCL) and its half.
const PORTS: &[(&str, u64)] = &[
    ("triad", 1000),
    ("backprop", 100),
    ("reduction", 1000),
    ("stencil3d", 32),
    ("hotspot", 64),
    ("mg-restrict", 16),
    ("ft-transpose", 64),
    ("sp-xsolve", 32),
    ("spmv-csr", 1000),
    ("md", 512),
    ("sgemm", 64),
    ("mri-q", 256),
    ("sp-zsolve", 32),
    ("btree-search", 1000),
    ("nw", 64),
    ("pathfinder", 100),
    // The second batch (SPLIT.md, "The second batch").
    ("srad", 64),
    ("stencil2d", 64),
    ("scan", 10007),
    ("lbm", 12),
    ("kmeans", 5000),
    ("lavamd", 2),
    ("histo", 128),
    ("gaussian", 64),
    // The third batch (SPLIT.md, "The third batch").
    ("hotspot3d", 32),
    ("mg-resid", 16),
    ("cfd", 1000),
    ("spmv-ell", 1000),
    ("ep", 256),
    ("md5hash", 1000),
    ("lud", 64),
    ("radix-sort", 10007),
    // The fourth batch (SPLIT.md, "The fourth batch").
    ("mg-psinv", 16),
    ("minighost", 16),
    ("bfs", 1001),
    ("is-rank", 10007),
    ("tpacf", 515),
    ("cutcp", 16),
    ("dwt2d", 67),
    ("nn", 1001),
    // The fifth batch (SPLIT.md, "The fifth batch").
    ("sp-rhs", 16),
    ("tealeaf3d", 16),
    ("tealeaf2d", 67),
    ("clover-viscosity", 67),
    ("tealeaf-ur", 67),
    ("clover-idealgas", 67),
    ("hpcg-spmv", 8),
    ("xsbench", 1001),
    // The sixth batch (SPLIT.md, "The sixth batch").
    ("mg-interp", 17),
    ("hpgmg-jacobi", 16),
    ("clover-accelerate", 67),
    ("clover-pdv", 67),
    ("pagerank", 1001),
    ("hpccg-sparsemv", 8),
    ("sad", 48),
    ("rsbench", 16),
    // The seventh batch (SPLIT.md, "The seventh batch"), one pair.
    ("spmv-jds", 1001),
    ("cg-spmv", 1001),
    // The eighth batch (SPLIT.md, "The eighth batch"), two pairs.
    ("spmv-csr-vector", 1001),
    ("sell-spmv", 1001),
    ("color-max", 1001),
    ("sssp-relax", 1001),
    // The ninth batch (SPLIT.md, "The ninth batch"), its held-out half the last reserve.
    ("clover-flux", 67),
    ("tealeaf-jacobi", 67),
    ("tealeaf3d-jacobi", 17),
    ("minighost-27pt", 17),
    ("btree-range", 1001),
    ("bsearch", 1001),
    ("bc-backtrack", 1001),
    ("mis", 1001),
    // The tenth batch (SPLIT.md, "The tenth batch"), its held-out half the reserve.
    ("tealeaf-residual", 67),
    ("clover-reset", 67),
    ("laplace3d", 17),
    ("fdtd3d", 17),
    ("merge-path", 1001),
    ("histo-range", 1001),
    ("transpose-tiled", 67),
    ("transpose-naive", 67),
    // The eleventh batch (SPLIT.md, "The eleventh batch"), one held-out kernel.
    ("gemv-n", 1001),
    // The thirteenth batch (SPLIT.md, "The thirteenth batch"), two held-out grid-stride kernels
    // (the twelfth adds no kernel).
    ("stream-dot", 135_169),
    ("gridstride-saxpy", 1001),
    // The fourteenth batch (SPLIT.md, "The fourteenth batch"), two held-out row kernels.
    ("softmax", 1001),
    ("layernorm", 1001),
    // The fifteenth batch (SPLIT.md, "The fifteenth batch"), two held-out memory-bound kernels.
    ("adam", 1001),
    ("dense-embedding", 33),
    // The sixteenth batch (SPLIT.md, "The sixteenth batch"), its held-out half the reserve
    // for a walks rule.
    ("black-scholes", 100_000),
    ("histogram256", 100_000),
    ("quasirandom", 100_000),
    ("mersenne-twister", 300),
    // The seventeenth batch (SPLIT.md, "The seventeenth batch"), its held-out half the
    // reserve for a rule on cold runs.
    ("lulesh-energy", 1001),
    ("minighost-2d9pt", 512),
    ("star3d2r", 17),
    ("hpcg-restriction", 16),
    ("lulesh-pressure", 1001),
    ("tealeaf-cheby", 256),
    ("box3d1r", 17),
    ("minife-matvec", 17),
];

/// The names in a list of SPLIT.md ("- **Development (8):** `a`, `b`, …").
fn split_names(split: &str, heading: &str) -> Vec<String> {
    let start = split.find(heading).unwrap_or_else(|| panic!("{heading}"));
    let rest = &split[start..];
    // The item ends at the next item or at the blank line after the list.
    let end = ["\n- ", "\n\n"]
        .iter()
        .filter_map(|m| rest[2..].find(m))
        .min()
        .map_or(rest.len(), |e| e + 2);
    rest[..end]
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

#[test]
fn every_port_parses_declares_its_bytes_and_is_in_one_half_of_the_split() {
    let split = std::fs::read_to_string(ports().join("SPLIT.md")).unwrap();
    let mut dev = split_names(&split, "**Development (8):**");
    let mut held = split_names(&split, "**Held-out (8):**");
    assert_eq!((dev.len(), held.len()), (8, 8), "{dev:?} {held:?}");
    // The later batches, four a half each.
    for batch in 2..=6 {
        let d = split_names(&split, &format!("**Development {batch} (4):**"));
        let h = split_names(&split, &format!("**Held-out {batch} (4):**"));
        assert_eq!((d.len(), h.len()), (4, 4), "batch {batch}: {d:?} {h:?}");
        dev.extend(d);
        held.extend(h);
    }
    // The seventh, one pair; the eighth, two; the ninth and tenth, four; the sixteenth, two;
    // the seventeenth, four.
    for (batch, count) in [(7, 1), (8, 2), (9, 4), (10, 4), (16, 2), (17, 4)] {
        let d = split_names(&split, &format!("**Development {batch} ({count}):**"));
        let h = split_names(&split, &format!("**Held-out {batch} ({count}):**"));
        assert_eq!(
            (d.len(), h.len()),
            (count, count),
            "batch {batch}: {d:?} {h:?}"
        );
        dev.extend(d);
        held.extend(h);
    }
    // The batches of held-out kernels only: the eleventh, one for the walks rule (its
    // development kernel is sgemm); the thirteenth, two grid-stride kernels that judge
    // spec-format's advice; the fourteenth and fifteenth, two row kernels and two
    // memory-bound kernels of machine learning (the twelfth adds no kernel).
    for (batch, count) in [(11, 1), (13, 2), (14, 2), (15, 2)] {
        let h = split_names(&split, &format!("**Held-out {batch} ({count}):**"));
        assert_eq!(h.len(), count, "batch {batch}: {h:?}");
        held.extend(h);
    }
    for (name, size) in PORTS {
        let spec =
            load(&ports().join(format!("{name}.toml"))).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            all_declare_bytes(&spec.steps),
            "{name}: a launch without bytes"
        );
        assert!(spec.bytes_needed(*size as usize) > 0, "{name}");
        assert!(spec.check.is_some(), "{name}: every port checks its result");
        let n = name.to_string();
        assert!(
            dev.contains(&n) != held.contains(&n),
            "{name} must be in exactly one half"
        );
    }
    assert_eq!(PORTS.len(), dev.len() + held.len());
}

#[test]
fn the_held_out_half_declares_no_access_and_the_transpose_declares_its_own() {
    // The held-out half was frozen before `access` existed: declaring one now would tune it.
    use harness::workloads::Access;
    let split = std::fs::read_to_string(ports().join("SPLIT.md")).unwrap();
    let patterns = |name: &str| {
        let spec = load(&ports().join(format!("{name}.toml"))).unwrap();
        spec.access_patterns()
            .into_iter()
            .map(|(k, a)| (k.to_string(), a))
            .collect::<Vec<_>>()
    };
    for name in split_names(&split, "**Held-out (8):**") {
        assert!(patterns(&name).is_empty(), "{name}");
        let spec = load(&ports().join(format!("{name}.toml"))).unwrap();
        assert!(!spec.undeclared_access().is_empty(), "{name}");
    }
    assert_eq!(
        patterns("ft-transpose"),
        [("transpose_c".to_string(), Access::Transpose)]
    );
    // sp-zsolve's work items each walk a z line, but neighbours read neighbouring floats at
    // every step (coalesced), which "strided" (one cache line per work item per step) is not.
    assert!(patterns("sp-zsolve").is_empty());
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn every_port_runs_verified_on_opencl() {
    let list = harness::backend::discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    for (name, size) in PORTS {
        let w = load(&ports().join(format!("{name}.toml"))).unwrap();
        let r = w
            .run(device, *size as usize, 2, true)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let v = r
            .verification
            .unwrap_or_else(|| panic!("{name}: no check ran"));
        assert!(v.passed, "{name}: {v:?}");
    }
}

#[test]
#[cfg_attr(
    no_nvrtc,
    ignore = "NVRTC not installed (pip install nvidia-cuda-nvrtc)"
)]
fn every_port_compiles_for_ampere_and_hopper() {
    let specs: Vec<PathBuf> = PORTS
        .iter()
        .map(|(name, _)| ports().join(format!("{name}.toml")))
        .collect();
    let out = harness()
        .args([
            "check-kernels",
            "--arch",
            "sm_80,sm_90",
            "--no-opencl",
            "--json",
        ])
        .args(&specs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = report["checks"].as_array().unwrap();
    for (name, _) in PORTS {
        let program = format!("{name}.kern");
        assert!(
            checks
                .iter()
                .any(|c| c["program"] == program.as_str() && c["ok"] == true),
            "{program}: {report}"
        );
    }
    assert!(checks.iter().all(|c| c["ok"] == true), "{report}");
}

/// `scripts/ports-baseline.sh`, which the GPU session's script runs for one half: `--half`
/// plans exactly that half's kernels, and a wrong half or a missing calibration is one error
/// line and exit code 2 before anything runs.
#[test]
fn the_baseline_script_plans_one_half_and_refuses_bad_options() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let calibration = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ports/opencl-pthread-skylake-avx512-amd-epyc.json");
    let script = |args: &[&str]| {
        std::process::Command::new("bash")
            .current_dir(&root)
            .arg("scripts/ports-baseline.sh")
            .args(args)
            .arg(env!("CARGO_BIN_EXE_harness"))
            .output()
            .unwrap()
    };
    let cal = calibration.to_str().unwrap();
    let out = script(&[
        "--dry-run",
        "--half",
        "held-out",
        "--device",
        "host",
        "--verify",
        "smallest",
        "--calibration",
        cal,
    ]);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let split = std::fs::read_to_string(ports().join("SPLIT.md")).unwrap();
    let held_out = split_names(&split, "**Held-out (8):**");
    assert_eq!(held_out.len(), 8, "{held_out:?}");
    for name in held_out {
        assert!(
            text.contains(&format!("kernels/ports/{name}.toml: N = ")),
            "{name} not planned: {text}"
        );
    }
    let later = (2..=6).flat_map(|batch| {
        ["Development", "Held-out"]
            .map(|half| split_names(&split, &format!("**{half} {batch} (4):**")))
            .concat()
    });
    for name in split_names(&split, "**Development (8):**")
        .into_iter()
        .chain(later)
    {
        assert!(
            !text.contains(&format!("kernels/ports/{name}.toml")),
            "{name} planned: {text}"
        );
    }
    // tpacf (the fourth batch's held-out half) is named as not run, never planned.
    let out = script(&["--dry-run", "--half", "held-out-4", "--calibration", cal]);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("tpacf: not run"), "{text}");
    assert!(!text.contains("kernels/ports/tpacf.toml"), "{text}");
    for name in ["mg-psinv", "bfs", "dwt2d"] {
        assert!(
            text.contains(&format!("kernels/ports/{name}.toml: N = ")),
            "{text}"
        );
    }
    // Every half by default (the tenth batch's held-out one, a reserve until 2026-12-02, too)
    // but the reserves, the sixteenth's and seventeenth's held-out halves, which run only
    // when named; the eleventh and the thirteenth to fifteenth have a held-out half only,
    // and the twelfth is one kernel at fixed sizes, not a half the script plans.
    let out = script(&["--dry-run", "--calibration", cal]);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for half in [
        "**Development 5 (4):**",
        "**Held-out 5 (4):**",
        "**Development 6 (4):**",
        "**Held-out 6 (4):**",
        "**Development 7 (1):**",
        "**Held-out 7 (1):**",
        "**Development 8 (2):**",
        "**Held-out 8 (2):**",
        "**Development 9 (4):**",
        "**Held-out 9 (4):**",
        "**Development 10 (4):**",
        "**Held-out 10 (4):**",
        "**Held-out 11 (1):**",
        "**Held-out 13 (2):**",
        "**Held-out 14 (2):**",
        "**Held-out 15 (2):**",
        "**Development 16 (2):**",
        "**Development 17 (4):**",
    ] {
        let names = split_names(&split, half);
        assert!(!names.is_empty(), "{half}");
        for name in names {
            assert!(
                text.contains(&format!("kernels/ports/{name}.toml: N = ")),
                "{text}"
            );
        }
    }
    for reserve in ["**Held-out 16 (2):**", "**Held-out 17 (4):**"] {
        for name in split_names(&split, reserve) {
            assert!(
                !text.contains(&format!("kernels/ports/{name}.toml")),
                "{text}"
            );
        }
    }
    let out = script(&["--dry-run", "--half", "held-out-17", "--calibration", cal]);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    for name in split_names(&split, "**Held-out 17 (4):**") {
        assert!(
            text.contains(&format!("kernels/ports/{name}.toml: N = ")),
            "{text}"
        );
    }
    for bad in [
        vec!["--half", "both"],
        vec!["--half", "held-out-12"],
        vec!["--half", "held-out-18"],
        vec!["--half", "development-11"],
        vec!["--verify", "some"],
        vec!["--calibration", "/nonexistent/calibration.json"],
    ] {
        let out = script(&bad);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{bad:?}: {stderr}");
    }
}
