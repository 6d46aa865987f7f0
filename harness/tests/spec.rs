//! Bring-your-own workloads: the shipped examples parse and run verified on the OpenCL CPU
//! device; broken specs name the field and line.

mod common;

use std::path::{Path, PathBuf};

use harness::backend::discover;
use harness::workloads::spec::{load, Step};
use harness::workloads::{Workload, WorkloadError};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/examples")
}

/// Every spec shipped in kernels/examples/.
const SHIPPED: &[&str] = &[
    "saxpy.toml",
    "saxpy-cuda.toml",
    "wavefront.toml",
    "gemm.toml",
    "gemm-reference.toml",
    "lu.toml",
    "lu-reference.toml",
    "fdtd2d.toml",
    "fdtd2d-reference.toml",
    "conv2d.toml",
    "conv2d-reference.toml",
];

#[test]
fn shipped_examples_parse() {
    for file in SHIPPED {
        load(&examples().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    }
    let saxpy = load(&examples().join("saxpy.toml")).unwrap();
    assert_eq!(saxpy.name, "saxpy");
    assert_eq!(saxpy.buffers.len(), 2);
    assert!(saxpy.check.is_some());
    let wave = load(&examples().join("wavefront.toml")).unwrap();
    assert!(matches!(wave.steps[0], Step::Loop(_)));
    assert_eq!(wave.bytes_needed(12), 4 * 144);
    let gemm = load(&examples().join("gemm.toml"))
        .unwrap()
        .with_params(&[("NK".into(), 8.0)])
        .unwrap();
    assert_eq!(gemm.bytes_needed(16), 4 * (16 * 8 + 8 * 16 + 16 * 16));
    assert_eq!(gemm.default_iterations(), Some(1));
    let lu = load(&examples().join("lu.toml")).unwrap();
    let Step::Loop(lp) = &lu.steps[0] else {
        panic!("lu's first step is a loop")
    };
    assert_eq!(lp.body.len(), 2, "a loop over a sequence of two launches");
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn shipped_examples_run_verified_on_opencl() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    for (file, size, iters, params) in [
        ("saxpy.toml", 10_000, 3, vec![]),
        ("wavefront.toml", 12, 1, vec![]),
        ("gemm.toml", 40, 1, vec![("NK".to_string(), 24.0)]),
        ("lu.toml", 48, 1, vec![]),
        ("fdtd2d.toml", 33, 5, vec![("NY".to_string(), 20.0)]),
        ("conv2d.toml", 50, 2, vec![("NJ".to_string(), 70.0)]),
    ] {
        let w = load(&examples().join(file))
            .unwrap()
            .with_params(&params)
            .unwrap();
        let r = w.run(device, size, iters, true).unwrap();
        // The upload records the bytes the spec says it uploads (the transfer sweep moves
        // them in a prediction).
        let upload = r.phases.iter().find(|p| p.name == "upload");
        assert_eq!(
            upload.and_then(|p| p.bytes),
            w.upload_bytes(size).filter(|&b| b > 0),
            "{file}"
        );
        let v = r.verification.unwrap();
        assert!(v.passed, "{file}");
        if file != "saxpy.toml" && file != "wavefront.toml" {
            assert!(
                v.against
                    .as_deref()
                    .unwrap_or("")
                    .contains("-reference.toml on"),
                "{file}: {v:?}"
            );
        }
    }
}

fn broken(replace: &str, with: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join("saxpy.cl"), dir.path().join("saxpy.cl")).unwrap();
    let text = std::fs::read_to_string(examples().join("saxpy.toml")).unwrap();
    assert!(text.contains(replace), "{replace}");
    let path = dir.path().join("spec.toml");
    std::fs::write(&path, text.replacen(replace, with, 1)).unwrap();
    match load(&path) {
        Err(WorkloadError::Invalid(message)) => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn broken_specs_name_the_field_and_line() {
    let m = broken("kernel = \"saxpy\"\n", "");
    assert!(m.contains("line") && m.contains("kernel"), "{m}");
    let m = broken("type = \"f32\"", "type = \"f16\"");
    assert!(
        m.contains("line 8") && m.contains("buffers[0].type") && m.contains("f64"),
        "{m}"
    );
    let m = broken("\"buf:y\"", "\"buf:z\"");
    assert!(
        m.contains("launches[0].args[1]") && m.contains("unknown buffer 'z'"),
        "{m}"
    );
    let m = broken("length = \"N\"", "length = \"N +* 2\"");
    assert!(
        m.contains("buffers[0].length") && m.contains("column"),
        "{m}"
    );
    let m = broken("source = \"saxpy.cl\"", "source = \"missing.cl\"");
    assert!(m.contains("source") && m.contains("missing.cl"), "{m}");
    let m = broken("tolerance = 1e-5", "tolerance = \"small\"");
    assert!(m.contains("line"), "{m}");
    let m = broken(
        "kernel = \"saxpy\"\n",
        "kernel = \"saxpy\"\naccess = \"scatter\"\n",
    );
    assert!(
        m.contains("launches[0].access")
            && m.contains("stream, stencil, hyperplane, hyperplane-descending, strided, transpose"),
        "{m}"
    );
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_wrong_check_is_a_mismatch() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join("saxpy.cl"), dir.path().join("saxpy.cl")).unwrap();
    let text = std::fs::read_to_string(examples().join("saxpy.toml"))
        .unwrap()
        .replace("y[i] + iters * 2.5 * x[i]", "y[i] + iters * 2.4 * x[i]");
    let path = dir.path().join("wrong.toml");
    std::fs::write(&path, text).unwrap();
    let w = load(&path).unwrap();
    let err = w
        .run(list.devices[index].as_ref(), 1000, 1, true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("check failed at size 1000"), "{err}");
    assert!(!err.contains("inf or NaN"), "{err}");
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn buffers_shorter_than_the_launch_are_refused_before_the_kernel_runs() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(examples().join("saxpy.cl"), dir.path().join("saxpy.cl")).unwrap();
    let text = std::fs::read_to_string(examples().join("saxpy.toml")).unwrap();
    let spec = |length: &str, extra: &str| {
        let path = dir.path().join("short.toml");
        let t = text.replacen(
            "length = \"N\"\ninit = { random",
            &format!("length = \"{length}\"\n{extra}init = {{ random"),
            1,
        );
        assert_ne!(t, text);
        std::fs::write(&path, t).unwrap();
        load(&path)
    };
    for (length, needle) in [
        ("N - 1", "999 elements"),
        ("1", "1 elements"),
        ("0", "at least one element"),
    ] {
        let err = spec(length, "")
            .unwrap()
            .run(device, 1000, 1, true)
            .unwrap_err();
        assert!(err.to_string().contains(needle), "{length}: {err}");
    }
    // `indexing = "own"` hands the bound to the user (here kept: the buffer is N long).
    let own = spec("N", "indexing = \"own\"\n").unwrap();
    assert!(own.run(device, 1000, 1, true).is_ok());
    let bad = spec("N", "indexing = \"sometimes\"\n").unwrap_err();
    assert!(bad.to_string().contains("indexing"), "{bad}");
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_host_loop_past_the_bound_is_refused_not_run_for_ever() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for f in ["wavefront.cl", "wavefront.toml"] {
        std::fs::copy(examples().join(f), dir.path().join(f)).unwrap();
    }
    let path = dir.path().join("wavefront.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("to = \"2 * N - 3\"", "to = \"1e30\"")).unwrap();
    let started = std::time::Instant::now();
    let err = load(&path)
        .unwrap()
        .run(list.devices[index].as_ref(), 12, 1, true)
        .unwrap_err();
    assert!(err.to_string().contains("at most"), "{err}");
    assert!(started.elapsed().as_secs() < 10);
}

/// A spec `spec` (TOML) beside a kernel file `kernel_name` holding `kernel`, in a fresh
/// folder; returns the folder (kept alive by the caller) and the spec's path.
fn temp_spec(kernel_name: &str, kernel: &str, spec: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(kernel_name), kernel).unwrap();
    let path = dir.path().join("spec.toml");
    std::fs::write(&path, spec).unwrap();
    (dir, path)
}

const SAXPY: &str = "__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {\n    uint i = get_global_id(0);\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n";

fn saxpy_spec(steps: &str, check: &str) -> String {
    format!(
        "name = \"t\"\nsource = \"k.cl\"\n[[buffers]]\nname = \"x\"\ntype = \"f32\"\nlength = \"N\"\ninit = {{ formula = \"i % 5\" }}\n[[buffers]]\nname = \"y\"\ntype = \"f32\"\nlength = \"N\"\ninit = {{ constant = 1 }}\n{steps}\n{check}"
    )
}

fn load_error(steps: &str, check: &str) -> String {
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(steps, check));
    load(&path).unwrap_err().to_string()
}

#[test]
fn loop_variables_are_scoped_and_errors_list_only_the_names_in_scope() {
    // A launch after a loop cannot see the loop's variable.
    let m = load_error(
        "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:1\", \"u32:N\"]\nloop = { var = \"k\", from = \"1\", to = \"3\" }\n[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:k\", \"u32:N\"]",
        "",
    );
    assert!(
        m.contains("launches[1].args[2]") && m.contains("unknown variable 'k'"),
        "{m}"
    );
    assert!(m.contains("known here: N, iters, iter)"), "{m}");
    // A loop variable may not hide another name.
    let m = load_error(
        "[[launches]]\nloop = { var = \"N\", from = \"1\", to = \"3\" }\n[[launches.body]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:1\", \"u32:N\"]",
        "",
    );
    assert!(m.contains("already a name here"), "{m}");
    // A body without a loop, a loop body with a kernel of its own, an entry with neither.
    let m = load_error(
        "[[launches]]\n[[launches.body]]\nkernel = \"saxpy\"\nglobal = [\"N\"]",
        "",
    );
    assert!(
        m.contains("launches[0].body") && m.contains("belongs to a loop"),
        "{m}"
    );
    let m = load_error(
        "[[launches]]\nkernel = \"saxpy\"\nloop = { var = \"k\", from = \"1\", to = \"3\" }\n[[launches.body]]\nkernel = \"saxpy\"\nglobal = [\"N\"]",
        "",
    );
    assert!(m.contains("move the kernel into a body entry"), "{m}");
    // Buffer reads only in checks; a check says what it expects.
    let m = load_error("[[launches]]\nkernel = \"saxpy\"\nglobal = [\"x[0]\"]", "");
    assert!(m.contains("only a check formula"), "{m}");
    let m = load_error(
        "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]",
        "[check]\nbuffer = \"y\"",
    );
    assert!(
        m.contains("formula = ") && m.contains("reference = "),
        "{m}"
    );
    let m = load_error(
        "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]",
        "[check]\nbuffer = \"y\"\nreference = \"self\"",
    );
    assert!(m.contains("compared with itself"), "{m}");
}

#[test]
fn parameters_are_named_and_set_from_outside() {
    let spec = saxpy_spec(
        "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"M\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:A\", \"u32:M\"]",
        "",
    )
    .replace("length = \"N\"", "length = \"M\"")
    .replacen("name = \"t\"\n", "name = \"t\"\nsize = \"M\"\n", 1)
        + "\n[params]\nA = 2.5\n";
    let (_dir, path) = temp_spec("k.cl", SAXPY, &spec);
    let w = load(&path).unwrap();
    assert_eq!(w.bytes_needed(100), 800, "--size sets M");
    assert_eq!(
        w.parameter_values(100).unwrap(),
        vec![("A".to_string(), 2.5)]
    );
    let w = w.with_params(&[("A".into(), 4.0)]).unwrap();
    assert_eq!(
        w.parameter_values(100).unwrap(),
        vec![("A".to_string(), 4.0)]
    );
    let e = w
        .clone()
        .with_params(&[("B".into(), 1.0)])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no parameter B (it has A)"), "{e}");
    let e = w.with_params(&[("M".into(), 1.0)]).unwrap_err().to_string();
    assert!(e.contains("--size"), "{e}");
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn nested_loops_with_steps_zero_sizes_and_the_iteration_index_run_as_written() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    // Outer a = 0..2 (3 trips); inner b = 0, 3, 6 and c = 4, 2, 0: 3 · (3 + 3) = 18 launches
    // of y += 2.5·x; plus one launch of size k − k (skipped, not counted) per outer trip.
    let steps = "[[launches]]\nloop = { var = \"a\", from = \"0\", to = \"2\" }\n\
        [[launches.body]]\nloop = { var = \"b\", from = \"0\", to = \"7\", step = \"3\" }\n\
        [[launches.body.body]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\n\
        [[launches.body]]\nloop = { var = \"c\", from = \"4\", to = \"0\", step = \"-2\" }\n\
        [[launches.body.body]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\n\
        [[launches.body]]\nkernel = \"saxpy\"\nglobal = [\"a - a\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:100\", \"u32:N\"]";
    let (_dir, path) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(
            steps,
            "[check]\nbuffer = \"y\"\nformula = \"y[i] + iters * 18 * 2.5 * x[i]\"",
        ),
    );
    let r = load(&path).unwrap().run(device, 1000, 2, true).unwrap();
    assert!(r.verification.as_ref().unwrap().passed);
    let saxpy = r.phases.iter().find(|p| p.name == "saxpy").unwrap();
    assert_eq!(
        saxpy.count, 36,
        "18 launches per iteration, the empty ones skipped"
    );
    // The iteration index: y += iter·x over iterations 0..iters−1.
    let steps = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:iter\", \"u32:N\"]";
    let (_dir, path) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(
            steps,
            "[check]\nbuffer = \"y\"\nformula = \"y[i] + iters * (iters - 1) / 2 * x[i]\"",
        ),
    );
    let r = load(&path).unwrap().run(device, 1000, 4, true).unwrap();
    assert!(r.verification.unwrap().passed);
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn doubles_build_options_and_a_failing_reference() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    // f64 buffer and scalar, FACTOR from the build options; the tolerance is beyond f32.
    let kernel = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n__kernel void scale(__global double* x, double a) { x[get_global_id(0)] *= FACTOR * a; }\n";
    let spec = "name = \"d\"\nsource = \"k.cl\"\nbuild_options = \"-DFACTOR=2.0\"\n[[buffers]]\nname = \"x\"\ntype = \"f64\"\nlength = \"N\"\ninit = { formula = \"i + 0.1\" }\n[[launches]]\nkernel = \"scale\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"f64:0.5000000001\"]\n[check]\nbuffer = \"x\"\nformula = \"x[i] * pow(1.0000000002, iters)\"\ntolerance = 1e-15\n";
    let (_dir, path) = temp_spec("k.cl", kernel, spec);
    let w = load(&path).unwrap();
    assert_eq!(w.bytes_needed(10), 80);
    let v = w.run(device, 1000, 3, true).unwrap().verification.unwrap();
    assert!(v.passed && v.max_rel_error < 1e-15, "{v:?}");
    // Expecting the values unscaled (what an f32 path would give, 0.5000000001 rounding to
    // 0.5) fails: the check sees the difference at 6e-10.
    let (_dir2, path2) = temp_spec(
        "k.cl",
        kernel,
        &spec.replace("x[i] * pow(1.0000000002, iters)", "x[i]"),
    );
    assert!(load(&path2).unwrap().run(device, 1000, 3, true).is_err());
    // A GEMM whose beta differs from its reference's fails the reference check.
    let dir = tempfile::tempdir().unwrap();
    for f in ["gemm.kern", "gemm.toml", "gemm-reference.toml"] {
        std::fs::copy(examples().join(f), dir.path().join(f)).unwrap();
    }
    let main = dir.path().join("gemm.toml");
    let text = std::fs::read_to_string(&main).unwrap();
    std::fs::write(&main, text.replace("\"f32:1.2\"", "\"f32:1.3\"")).unwrap();
    let err = load(&main)
        .unwrap()
        .run(device, 24, 1, true)
        .unwrap_err()
        .to_string();
    assert!(err.contains("check failed"), "{err}");
    // A result that overflows names the likely cause.
    let steps = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:3e38\", \"u32:N\"]";
    let (_dir, path) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(steps, "[check]\nbuffer = \"y\"\nformula = \"y[i]\""),
    );
    let err = load(&path)
        .unwrap()
        .run(device, 100, 3, true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("inf or NaN") && err.contains("--iters 1"),
        "{err}"
    );
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_spec_series_is_honest_about_its_check_and_describes_itself() {
    use harness::calibration::Calibration;
    use harness::experiments::predict::{predict, Quantity};
    use harness::experiments::series::{run_series, CheckState, RepeatPlan, Series};

    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    let steps = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]";
    let sizes = [20_000, 40_000, 80_000];
    // Without a check: unchecked, not verified.
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(steps, ""));
    let w = load(&path).unwrap();
    let s = run_series(&w, None, device, &sizes, 2, RepeatPlan::fixed(2), |_| {}).unwrap();
    assert_eq!(s.check, CheckState::Unchecked);
    assert!(!s.verified);
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.contains("\"check\":\"unchecked\""), "{json}");
    // With one: verified, and the file says so by leaving `check` out.
    let (_dir2, path2) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(
            steps,
            "[check]\nbuffer = \"y\"\nformula = \"1 + iters * 2.5 * x[i]\"",
        ),
    );
    let w = load(&path2).unwrap();
    let s = run_series(&w, None, device, &sizes, 2, RepeatPlan::fixed(2), |_| {}).unwrap();
    assert!(s.verified && s.check == CheckState::Verified);
    // Each point has its kernels' time beside the total, the kernels a part of it.
    for p in &s.points {
        let k = p.kernels.as_ref().expect("kernels");
        assert!(k.median_seconds > 0.0 && k.median_seconds < p.total.median_seconds);
    }
    // The series carries its spec: read back with the spec file gone, the windowed variant
    // still knows each size's bytes, for the total and for the kernels.
    let keep = tempfile::tempdir().unwrap();
    let file = keep.path().join("series.json");
    std::fs::write(&file, serde_json::to_string(&s).unwrap()).unwrap();
    drop(_dir2);
    assert!(!path2.exists(), "the spec file is gone");
    let back = Series::load(&file).unwrap();
    assert_eq!(
        back.spec
            .as_ref()
            .unwrap()
            .workload()
            .unwrap()
            .bytes_needed(1000),
        8000
    );
    let calibration = Calibration::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/stored/opencl-pthread-skylake-avx512-amd-epyc.json"),
    )
    .unwrap();
    for quantity in [Quantity::Total, Quantity::Kernels] {
        let p = predict(&back, 320_000.0, Some(&calibration), quantity).unwrap();
        assert!(p.windowed.is_some(), "{quantity:?}");
        // The calibrated variant too, from the stored spec alone; each kernel phase it
        // estimates says what bounds it.
        let calibrated = p.calibrated.as_ref().expect("a calibrated window");
        if let Some(f) = &calibrated.forecast {
            let saxpy = f
                .phases
                .iter()
                .find(|ph| ph.name == "saxpy")
                .expect("saxpy");
            assert!(
                saxpy
                    .calibrated
                    .as_ref()
                    .is_some_and(|c| c.regime.is_some()),
                "{saxpy:?}"
            );
        }
        assert!(
            p.paper.phases.iter().any(|f| f.name == quantity.row()),
            "{quantity:?}"
        );
    }
    let kernels = back.kernels_only();
    assert!(kernels
        .points
        .iter()
        .all(|p| p.phases.iter().all(|ph| ph.name == "saxpy")));
}

#[test]
fn declared_flops_reach_every_phase_record_and_a_bad_one_is_named() {
    use harness::experiments::series::{run_series, RepeatPlan};

    let err = load_error(
        "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\nflops = \"2 * M\"",
        "",
    );
    assert!(err.contains("flops"), "{err}");
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    let steps = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\nbytes = \"12 * N\"\nflops = \"2 * N\"";
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(steps, ""));
    let w = load(&path).unwrap();
    let s = run_series(
        &w,
        None,
        device,
        &[1000, 3000],
        1,
        RepeatPlan::fixed(1),
        |_| {},
    )
    .unwrap();
    for p in &s.points {
        let k = p
            .phases
            .iter()
            .find(|ph| ph.name == "saxpy")
            .expect("saxpy");
        assert_eq!(k.flops, Some(2 * p.size as u64 * k.count), "{k:?}");
        assert_eq!(k.bytes, Some(12 * p.size as u64 * k.count), "{k:?}");
    }
    let json = serde_json::to_string(&s).unwrap();
    assert!(json.contains("\"flops\":"), "{json}");
}

#[test]
fn declared_searches_take_arrays_and_a_stride_and_a_wrong_one_is_named() {
    let launch = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\nbytes = \"12 * N\"";
    for (searches, wanted) in [
        ("{ z = \"1\" }", "unknown buffer 'z'"),
        ("{ x = 3 }", "in quotes"),
        ("{ x = { arrays = 2 } }", "in quotes"),
        ("{ x = { rows = \"2\" } }", "unknown key"),
        ("{ x = \"M\" }", "M"),
        ("{}", "empty"),
    ] {
        let err = load_error(&format!("{launch}\nsearches = {searches}"), "");
        assert!(
            err.contains("launches[0].searches") && err.contains(wanted),
            "{searches}: {err}"
        );
    }
    let no_arg = launch.replace("\"buf:x\", ", "");
    let err = load_error(&format!("{no_arg}\nsearches = {{ x = \"1\" }}"), "");
    assert!(err.contains("does not pass buffer 'x'"), "{err}");
    let err = load_error(
        "[[launches]]\nloop = { var = \"k\", from = \"1\", to = \"2\" }\nsearches = { x = \"1\" }\nbody = [{ kernel = \"saxpy\", global = [\"N\"], args = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"] }]",
        "",
    );
    assert!(err.contains("searches or walks of its own"), "{err}");
    // x (N floats) as two arrays of records of two floats: the amounts give its bytes, its
    // arrays and the bytes from one key to the next.
    let steps = format!("{launch}\nsearches = {{ x = {{ arrays = \"2\", stride = \"2\" }} }}");
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(&steps, ""));
    let w = load(&path).unwrap();
    let s = &w.declared_amounts(1000, 1).expect("amounts")[0].searches;
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(
        (
            s[0].buffer.as_str(),
            s[0].bytes,
            s[0].arrays,
            s[0].stride_bytes
        ),
        ("x", 4000, 2, 8)
    );
}

#[test]
fn declared_walks_take_a_stride_and_steps_and_a_wrong_one_is_named() {
    let launch = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\nbytes = \"12 * N\"";
    for (walks, wanted) in [
        (
            "{ z = { stride = \"N\", steps = \"4\" } }",
            "unknown buffer 'z'",
        ),
        ("{ x = \"N\" }", "give each walked buffer a table"),
        ("{ x = { stride = \"N\" } }", "walks.x.steps"),
        ("{ x = { stride = 4, steps = \"4\" } }", "in quotes"),
        (
            "{ x = { stride = \"N\", steps = \"4\", rows = \"2\" } }",
            "unknown key",
        ),
        ("{ x = { stride = \"M\", steps = \"4\" } }", "M"),
        ("{}", "empty"),
    ] {
        let err = load_error(&format!("{launch}\nwalks = {walks}"), "");
        assert!(
            err.contains("launches[0].walks") && err.contains(wanted),
            "{walks}: {err}"
        );
    }
    let no_arg = launch.replace("\"buf:x\", ", "");
    let err = load_error(
        &format!("{no_arg}\nwalks = {{ x = {{ stride = \"N\", steps = \"4\" }} }}"),
        "",
    );
    assert!(err.contains("does not pass buffer 'x'"), "{err}");
    // Two launches of N work items a run, each walking x 4 steps N/8 floats apart: the
    // amounts give the stride in bytes, the steps, and the work items' steps summed.
    let walked = format!("{launch}\nwalks = {{ x = {{ stride = \"N / 8\", steps = \"4\" }} }}");
    let (_dir, path) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(&format!("{walked}\n{walked}"), ""),
    );
    let w = load(&path).unwrap();
    let amounts = w.declared_amounts(1000, 3).expect("amounts");
    let walks = &amounts[0].walks;
    assert_eq!(walks.len(), 1, "{walks:?}");
    assert_eq!(
        (
            walks[0].buffer.as_str(),
            walks[0].stride_bytes,
            walks[0].steps,
            walks[0].item_steps
        ),
        ("x", 500, 4, 3 * 2 * 1000 * 4)
    );
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_declared_count_that_is_no_whole_number_fails_the_run_that_meets_it() {
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    let launch = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\nbytes = \"12 * N\"";
    // N / 8 steps: whole at N = 1000, 125.125 at N = 1001. The prediction alone reads a
    // walk's steps; the run checks them so that a bad one is named, not silently dropped.
    for (key, decl) in [
        (
            "walks.x.steps",
            "walks = { x = { stride = \"N\", steps = \"N / 8\" } }",
        ),
        ("gathers.x", "gathers = { x = \"N / 8\" }"),
        (
            "searches.x.arrays",
            "searches = { x = { arrays = \"N / 8\", stride = \"8\" } }",
        ),
    ] {
        let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(&format!("{launch}\n{decl}"), ""));
        let w = load(&path).unwrap();
        // What a prediction from stored files meets instead of a run: the reason, by size.
        assert_eq!(w.declarations_error(1000, 1), None, "{key}");
        let why = w.declarations_error(1001, 1).expect("not whole at 1001");
        assert!(
            why.contains(key) && why.contains("not a whole number"),
            "{key}: {why}"
        );
        assert!(w.run(device, 1000, 1, false).is_ok(), "{key}");
        let err = w.run(device, 1001, 1, false).unwrap_err().to_string();
        assert!(
            err.contains(&format!("saxpy: {key}")) && err.contains("not a whole number"),
            "{key}: {err}"
        );
    }
}

#[test]
fn declared_gathers_are_counted_per_kernel_and_a_wrong_one_is_named() {
    let launch = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"]\nbytes = \"12 * N\"";
    let err = load_error(&format!("{launch}\ngathers = {{ z = \"N\" }}"), "");
    assert!(
        err.contains("launches[0].gathers.z") && err.contains("unknown buffer 'z'"),
        "{err}"
    );
    let err = load_error(&format!("{launch}\ngathers = {{ x = 3 }}"), "");
    assert!(
        err.contains("launches[0].gathers.x") && err.contains("in quotes"),
        "{err}"
    );
    let err = load_error(&format!("{launch}\ngathers = {{ x = \"2 * M\" }}"), "");
    assert!(
        err.contains("launches[0].gathers.x") && err.contains("M"),
        "{err}"
    );
    let no_arg = launch.replace("\"buf:x\", ", "");
    let err = load_error(&format!("{no_arg}\ngathers = {{ x = \"N\" }}"), "");
    assert!(
        err.contains("launches[0].gathers.x") && err.contains("does not pass buffer 'x'"),
        "{err}"
    );
    let err = load_error(&format!("{launch}\ngathers = {{}}"), "");
    assert!(err.contains("gathers") && err.contains("empty"), "{err}");
    let err = load_error(
        "[[launches]]\nloop = { var = \"k\", from = \"1\", to = \"2\" }\ngathers = { x = \"N\" }\nbody = [{ kernel = \"saxpy\", global = [\"N\"], args = [\"buf:x\", \"buf:y\", \"f32:2.5\", \"u32:N\"] }]",
        "",
    );
    assert!(
        err.contains("gathers, searches or walks of its own"),
        "{err}"
    );

    // Two launches of the kernel per iteration, each gathering 3·N reads of x: the amounts
    // sum them over the run and give x's bytes at the size.
    let steps =
        format!("{launch}\ngathers = {{ x = \"3 * N\" }}\n{launch}\ngathers = {{ x = \"3 * N\" }}");
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(&steps, ""));
    let w = load(&path).unwrap();
    let amounts = w.declared_amounts(1000, 2).expect("amounts");
    assert_eq!(amounts.len(), 1, "{amounts:?}");
    let g = &amounts[0].gathers;
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(g[0].buffer, "x");
    assert_eq!(g[0].bytes, 4000);
    assert_eq!(g[0].reads, 2 * 2 * 3000);
    // A launch without the declaration gathers nothing.
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(launch, ""));
    let plain = load(&path)
        .unwrap()
        .declared_amounts(1000, 1)
        .expect("amounts");
    assert!(plain.iter().all(|a| a.gathers.is_empty()), "{plain:?}");
}

#[test]
fn a_distribution_places_every_kernel_once_and_says_what_is_wrong() {
    let launch = "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:1\", \"u32:N\"]";
    let with = |distribution: &str| format!("{launch}\n[distribution]\n{distribution}");
    let (_dir, path) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(
            &with("extents = [\"N\"]\nsteps = [{ shadow = 1 }, { kernel = \"saxpy\" }, { reduction = 4 }]"),
            "",
        ),
    );
    let spec = load(&path).unwrap();
    assert_eq!(spec.distributed_extents(1000).unwrap(), Some(vec![1000]));
    let d = spec.distribution.as_ref().unwrap();
    assert_eq!(d.element_bytes, 4);
    assert_eq!(d.steps.len(), 3);
    for (distribution, needle) in [
        (
            "extents = [\"N\"]\nsteps = [{ kernel = \"other\" }]",
            "launches no kernel 'other'",
        ),
        (
            "extents = [\"N\"]\nsteps = [{ shadow = 1 }]",
            "kernel 'saxpy' is placed 0 times",
        ),
        (
            "extents = [\"N\"]\nsteps = [{ kernel = \"saxpy\" }, { kernel = \"saxpy\" }]",
            "placed 2 times",
        ),
        (
            "extents = [\"N\"]\nsteps = [{ kernel = \"saxpy\", shadow = 1 }]",
            "a step is one of",
        ),
        (
            "extents = [\"N\"]\nsteps = [{ kernel = \"saxpy\", work = \"halved\" }]",
            "'distributed' or 'replicated'",
        ),
        (
            "extents = [\"N\"]\nsteps = [{ kernel = \"saxpy\", arrays = 2 }]",
            "'arrays' does not belong",
        ),
        (
            "extents = [\"N\", \"N\", \"N\", \"N\"]\nsteps = [{ kernel = \"saxpy\" }]",
            "1 to 3 dimensions",
        ),
        (
            "extents = [\"M\"]\nsteps = [{ kernel = \"saxpy\" }]",
            "distribution.extents[0]",
        ),
        (
            "extents = [\"N\"]\nsteps = [{ kernel = \"saxpy\" }]\nblocks = 2",
            "unknown field",
        ),
    ] {
        let m = load_error(&with(distribution), "");
        assert!(m.contains(needle), "{distribution}: {m}");
    }
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_spec_with_a_distribution_is_traced_and_predicted_on_a_grid() {
    use harness::experiments::cluster::{predict, trace_of_spec};
    use harness::model::cluster::{Network, NetworkKind, ProcessorGrid, TraceStep};
    use harness::units::Seconds;
    let list = discover();
    let Some(index) = common::opencl_device(&list) else {
        return;
    };
    let device = list.devices[index].as_ref();
    // Three launches of saxpy per iteration, in a loop: the trace's step carries all three.
    let steps = "[[launches]]\nloop = { var = \"k\", from = \"1\", to = \"3\" }\n\
        [[launches.body]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:1\", \"u32:N\"]\n\
        [distribution]\nextents = [\"N\"]\nsteps = [{ shadow = 1 }, { kernel = \"saxpy\" }, { reduction = 8 }]";
    let (_dir, path) = temp_spec("k.cl", SAXPY, &saxpy_spec(steps, ""));
    let spec = load(&path).unwrap();
    let run = spec.run(device, 1 << 16, 4, false).unwrap();
    let trace = trace_of_spec(&run, &spec, "test", None).unwrap();
    assert_eq!(trace.extents, vec![1 << 16]);
    assert_eq!(trace.spec.as_deref(), Some(path.to_str().unwrap()));
    let TraceStep::Interval(iteration) = &trace.root.body[0] else {
        panic!("no iteration interval");
    };
    assert_eq!(iteration.repeat, 4);
    assert!(matches!(
        &iteration.body[1],
        TraceStep::Compute { name, launches: 3, .. } if name == "saxpy"
    ));
    assert!(matches!(
        iteration.body[2],
        TraceStep::Reduction { bytes: 8 }
    ));
    // A fast network, so that the split of the work shows whatever the run took.
    let network = Network::new(NetworkKind::Bus, Seconds(1e-9), 1e-13, 1.0, None).unwrap();
    let grid = ProcessorGrid::parse("4").unwrap();
    let report = predict(&trace, &grid, &network, None).unwrap();
    let root = report.root().unwrap();
    // Four processors share the distributed work; the exchanges and the reduction cost time.
    assert!(
        root.execution_time < trace.root.seconds / 2.0,
        "{} s on 4 against {} s on one: {report:?}",
        root.execution_time,
        trace.root.seconds
    );
    assert!(root.losses.shadow > 0.0 && root.losses.reduction > 0.0);
    // A spec without a distribution cannot be traced.
    let (_dir2, plain) = temp_spec(
        "k.cl",
        SAXPY,
        &saxpy_spec(
            "[[launches]]\nkernel = \"saxpy\"\nglobal = [\"N\"]\nargs = [\"buf:x\", \"buf:y\", \"f32:1\", \"u32:N\"]",
            "",
        ),
    );
    let plain = load(&plain).unwrap();
    let e = trace_of_spec(&run, &plain, "test", None).unwrap_err();
    assert!(e.to_string().contains("no [distribution]"), "{e}");
}

/// `run` on a spec whose kernel walks a buffer a stride apart without declaring it says so
/// on standard error, with the `walks` line to add; once the line is added, it says nothing.
#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn run_names_the_walks_a_spec_kernel_makes_undeclared() {
    let list = discover();
    if common::opencl_device(&list).is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for file in ["gemm.toml", "gemm.kern", "gemm-reference.toml"] {
        std::fs::copy(examples().join(file), dir.path().join(file)).unwrap();
    }
    let spec = dir.path().join("gemm.toml");
    let run = || {
        let out = common::harness()
            .args([
                "run",
                spec.to_str().unwrap(),
                "-n",
                "40",
                "--device",
                "opencl",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        // The note is wrapped for the terminal: read it as one line.
        let stderr = String::from_utf8(out.stderr).unwrap();
        stderr.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let stderr = run();
    let want = "walks = { B = { stride = \"NJ\", steps = \"NK\" } }";
    assert!(
        stderr.contains("note: gemm declares no walks") && stderr.contains(want),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&spec).unwrap();
    let declared = text.replacen("args = [", &format!("{want}\nargs = ["), 1);
    assert_ne!(declared, text);
    std::fs::write(&spec, declared).unwrap();
    let stderr = run();
    assert!(!stderr.contains("declares no walks"), "{stderr}");
}

/// A series stores the kernel's source beside its spec, so what a prediction reads from the
/// source (here the note on black-scholes' undeclared grid-stride walks) is there again when
/// the stored case is re-assessed with the files gone; a series written before the source was
/// stored still loads, without it.
#[test]
fn a_stored_spec_keeps_its_kernel_source_for_re_assessment() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/ports/black-scholes.toml");
    let live = load(&path).unwrap();
    let notes = live.source_notes();
    assert!(
        notes.iter().any(|n| n.contains("walks")),
        "the reader names the walks: {notes:?}"
    );
    let stored = live.stored_spec().expect("a spec stores itself");
    let json = serde_json::to_string(&stored).unwrap();
    let back: harness::workloads::spec::StoredSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back.workload().unwrap().source_notes(), notes);
    // Written before 2026-12-02: no source, no notes, the same work.
    let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
    old.as_object_mut().unwrap().remove("source");
    let old: harness::workloads::spec::StoredSpec = serde_json::from_value(old).unwrap();
    let without = old.workload().unwrap();
    assert!(without.source_notes().is_empty());
    assert_eq!(without.bytes_needed(1 << 20), live.bytes_needed(1 << 20));
}
