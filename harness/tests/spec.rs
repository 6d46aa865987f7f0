//! Bring-your-own workloads: the shipped examples parse and run verified on the OpenCL CPU
//! device; broken specs name the field and line.

mod common;

use std::path::{Path, PathBuf};

use harness::backend::discover;
use harness::workloads::spec::load;
use harness::workloads::{Workload, WorkloadError};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/examples")
}

#[test]
fn shipped_examples_parse() {
    let saxpy = load(&examples().join("saxpy.toml")).unwrap();
    assert_eq!(saxpy.name, "saxpy");
    assert_eq!(saxpy.buffers.len(), 2);
    assert!(saxpy.check.is_some());
    let wave = load(&examples().join("wavefront.toml")).unwrap();
    assert!(wave.launches[0].host_loop.is_some());
    assert_eq!(wave.bytes_needed(12), 4 * 144);
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
    for (file, size, iters) in [("saxpy.toml", 10_000, 3), ("wavefront.toml", 12, 1)] {
        let w = load(&examples().join(file)).unwrap();
        let r = w.run(device, size, iters, true).unwrap();
        assert!(r.verification.unwrap().passed, "{file}");
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
    let m = broken("type = \"f32\"", "type = \"f64\"");
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
        .unwrap_err();
    assert!(matches!(err, WorkloadError::Mismatch { .. }), "{err}");
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
