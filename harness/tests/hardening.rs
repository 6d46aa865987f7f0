//! The adversarial probe of issue 60, at the command line: paths that are not plain files,
//! names that would lead out of the folder asked for, counts and limits that used to abort,
//! and numbers that must not be printed as right. Every bad input gives one error line and
//! exit code 2, no panic, no signal and no partial file.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::one_error_line;

fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/examples")
}

fn graph(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kernels/graphs")
        .join(name)
}

/// Run `cmd` to its end, failing the test (and killing it) past `limit`: a hang is a
/// failure, not a stuck test run.
fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("waits").is_some() {
            return child.wait_with_output().expect("collects");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collects");
            panic!(
                "still running after {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn run(cmd: &mut Command) -> Output {
    output_within(cmd, Duration::from_secs(120))
}

/// Every file under `dir`, relative to it, sorted.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

// 1. Never rename over a device, a FIFO or a symlink.

#[test]
fn an_output_symlink_is_followed_and_stays_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.txt");
    std::fs::write(&real, "old").unwrap();
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = run(harness()
        .arg("export-extrap")
        .arg(fixture("series-sor-reordered.json"))
        .arg("-o")
        .arg(&link));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_ne!(std::fs::read_to_string(&real).unwrap(), "old");
    assert_eq!(files_under(dir.path()), ["link.txt", "real.txt"]);
}

#[test]
fn an_output_fifo_is_never_replaced_and_without_a_reader_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.txt");
    mkfifo(&fifo);
    let out = output_within(
        harness()
            .arg("export-extrap")
            .arg(fixture("series-sor-reordered.json"))
            .arg("-o")
            .arg(&fifo),
        Duration::from_secs(30),
    );
    let line = one_error_line(&out);
    assert!(line.contains("nothing reads"), "{line}");
    assert!(is_fifo(&fifo), "the FIFO was replaced");
    assert_eq!(files_under(dir.path()), ["out.txt"]);
}

// 2, 3. Names from a spec are file-name parts and identifiers.

fn saxpy_with(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    std::fs::copy(examples().join("saxpy.cl"), dir.join("saxpy.cl")).unwrap();
    let text = std::fs::read_to_string(examples().join("saxpy.toml")).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text);
    let path = dir.join("spec.toml");
    std::fs::write(&path, edited).unwrap();
    path
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_spec_name_cannot_lead_out_of_the_output_folder() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("a/b/c");
    std::fs::create_dir_all(&work).unwrap();
    let spec = saxpy_with(&work, |t| {
        t.replace("name = \"saxpy\"", "name = \"x/../../../../escaped\"")
    });
    let out_dir = work.join("out");
    let out = run(harness()
        .current_dir(&work)
        .arg("series")
        .arg(&spec)
        .args(["--sizes", "1024,2048", "--repeat", "1", "--iters", "1"])
        .args(["--device", "opencl", "--output-dir"])
        .arg(&out_dir));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let files = files_under(root.path());
    assert!(
        files.iter().all(|f| f.starts_with("a/b/c/")),
        "written outside: {files:?}; {out:?}"
    );
    assert!(
        files
            .iter()
            .any(|f| f.starts_with("a/b/c/out/") && f.ends_with(".json")),
        "{files:?}"
    );
    assert!(!files
        .iter()
        .any(|f| f.contains("escaped") && !f.starts_with("a/b/c/out/")));
}

#[test]
fn a_buffer_name_must_be_an_identifier() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("w");
    std::fs::create_dir(&work).unwrap();
    for evil in ["../../x", "/abs/x", "a b"] {
        let spec = saxpy_with(&work, |t| {
            t.replace("name = \"y\"", &format!("name = \"{evil}\""))
                .replace("buf:y", &format!("buf:{evil}"))
                .replace("buffer = \"y\"", &format!("buffer = \"{evil}\""))
        });
        let out = run(harness()
            .current_dir(&work)
            .arg("run")
            .arg(&spec)
            .args(["--size", "1024", "--iters", "1", "--dump", "dump"]));
        let line = one_error_line(&out);
        assert!(line.contains("buffer name"), "{evil}: {line}");
    }
    let files = files_under(root.path());
    assert!(!files.iter().any(|f| f.ends_with(".bin")), "{files:?}");
}

// 4, 5. A device name cannot put a live line into the report's LaTeX or HTML into its
// Markdown.

#[test]
fn a_device_name_reaches_no_live_latex_line_and_no_markdown_html() {
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from");
    std::fs::create_dir(&from).unwrap();
    let text = std::fs::read_to_string(fixture("calibration-host.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    let name = value["device"]["name"].as_str().unwrap().to_string();
    value["device"]["name"] = serde_json::Value::String(format!(
        "{name}\r\\immediate\\write18{{id}}\n\\input{{/etc/passwd}}<script>alert(1)</script>"
    ));
    std::fs::write(
        from.join("evil.json"),
        serde_json::to_string(&value).unwrap(),
    )
    .unwrap();
    let out_dir = dir.path().join("report");
    let out = run(harness()
        .arg("report")
        .arg("--from")
        .arg(&from)
        .arg("--out")
        .arg(&out_dir));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let files = files_under(&out_dir);
    let tex: Vec<&String> = files.iter().filter(|f| f.ends_with(".tex")).collect();
    let md: Vec<&String> = files.iter().filter(|f| f.ends_with(".md")).collect();
    assert!(!tex.is_empty() && !md.is_empty(), "{files:?}");
    for f in tex {
        let text = std::fs::read_to_string(out_dir.join(f)).unwrap();
        assert!(!text.contains('\r'), "{f}: a CR ends a TeX line");
        for line in text.lines() {
            let live = line.split('%').next().unwrap_or("");
            assert!(
                !live.contains("\\input{") && !live.contains("\\immediate"),
                "{f}: {line}"
            );
        }
    }
    for f in md {
        let text = std::fs::read_to_string(out_dir.join(f)).unwrap();
        assert!(!text.contains("<script>"), "{f}");
        assert!(!text.contains('\r'), "{f}");
        assert!(!text.lines().any(|l| l.starts_with("\\input")), "{f}");
    }
}

// 7. The work items of the padding (the global size rounded up to whole groups) have room.

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn work_items_of_the_padding_never_write_past_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    // The kernel has no index check: every work item of the padded launch writes, 1024 of
    // them into a buffer of 2 (heap corruption, SIGABRT or SIGSEGV on PoCL before).
    std::fs::write(
        dir.path().join("k.cl"),
        "__kernel void fill(__global float* y) { y[get_global_id(0)] = 1.0f; }\n",
    )
    .unwrap();
    let spec = dir.path().join("spec.toml");
    std::fs::write(
        &spec,
        "name = \"pad\"\nsource = \"k.cl\"\n[[buffers]]\nname = \"y\"\ntype = \"f32\"\nlength = \"N\"\n[[launches]]\nkernel = \"fill\"\nglobal = [\"N\"]\nlocal = [\"1024\"]\nargs = [\"buf:y\"]\n",
    )
    .unwrap();
    let dump = dir.path().join("dump");
    let out = run(harness()
        .arg("run")
        .arg(&spec)
        .args([
            "--size", "2", "--iters", "3", "--device", "opencl", "--dump",
        ])
        .arg(&dump));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let y = std::fs::read(dump.join("y.bin")).unwrap();
    assert_eq!(
        y.len(),
        8,
        "the dump holds the buffer's length, not its room"
    );
    assert_eq!(f32::from_ne_bytes(y[4..8].try_into().unwrap()), 1.0);
}

// 9. Inputs are read only from regular files.

#[test]
fn a_fifo_or_a_device_given_as_input_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("a.json");
    mkfifo(&fifo);
    let zero = dir.path().join("b.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for input in [&fifo, &zero] {
        let out = output_within(
            harness()
                .arg("compare")
                .arg(input)
                .arg(fixture("calibration-host.json")),
            Duration::from_secs(30),
        );
        let line = one_error_line(&out);
        assert!(line.contains("not a regular file"), "{line}");
    }
    // A folder of results holding them: the report is made without waiting on either.
    let out = output_within(
        harness()
            .arg("report")
            .arg("--from")
            .arg(dir.path())
            .arg("--out")
            .arg(dir.path().join("report")),
        Duration::from_secs(60),
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
    assert!(is_fifo(&fifo));
}

// 10, 11. Counts are checked before anything is allocated; a failed allocation is an error.

#[test]
fn huge_counts_are_refused_before_any_allocation() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        vec![
            "validate-maxplus",
            "G",
            "--sizes",
            "1024",
            "--repeat",
            "1099511627776",
        ],
        vec![
            "validate-maxplus",
            "G",
            "--sizes",
            "1024",
            "--repeat",
            "2^64",
        ],
        vec![
            "balance",
            "--workload",
            "sor",
            "--size",
            "64",
            "--grids",
            "2^40",
            "--device",
            "host",
        ],
        vec![
            "balance",
            "--workload",
            "sor",
            "--size",
            "64",
            "--grids",
            "18446744073709551615",
            "--device",
            "host",
        ],
        vec![
            "series", "vadd", "--sizes", "1024", "--repeat", "2^40", "--device", "host",
        ],
    ] {
        let out = run(harness().current_dir(dir.path()).args(&args));
        let line = one_error_line(&out);
        assert!(line.contains("is more than"), "{args:?}: {line}");
    }
}

#[test]
fn an_allocation_past_the_process_limit_is_one_error_line() {
    // 1 GiB of address space: vadd at 2^25 floats needs more with the host's copies.
    let out = run(Command::new("sh").arg("-c").arg(format!(
        "ulimit -v 1048576 && exec '{}' run vadd --size 2^25 --iters 1 --device host",
        env!("CARGO_BIN_EXE_harness")
    )));
    let line = one_error_line(&out);
    assert!(line.contains("memory") || line.contains("bytes"), "{line}");
}

// 12. A file-size limit makes a failed write, not a killed process and a left temporary.

#[test]
fn a_file_size_limit_fails_the_write_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(Command::new("sh").arg("-c").arg(format!(
        "ulimit -f 1 && exec '{}' export-extrap '{}' -o '{}'",
        env!("CARGO_BIN_EXE_harness"),
        fixture("series-sor-reordered.json").display(),
        dir.path().join("out.txt").display()
    )));
    one_error_line(&out);
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
}

#[test]
fn a_closed_standard_output_does_not_cost_the_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = harness()
        .current_dir(dir.path())
        .args([
            "validate",
            "vadd",
            "--small",
            "2^12,2^13,2^14",
            "--large",
            "2^15",
        ])
        .args(["--repeat", "3", "--iters", "2", "--device", "host"])
        .args(["--output-dir", "out", "--plot-dir", "plots"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader goes away at once (`validate … | true`).
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let plots = files_under(&dir.path().join("plots"));
    for suffix in [".fit.svg", ".polynomial.svg"] {
        assert!(
            plots.iter().any(|f| f.ends_with(suffix)),
            "no {suffix}: {plots:?}; {stderr}"
        );
    }
}

#[test]
fn sigterm_and_sighup_end_a_run_as_ctrl_c_does() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let dir = tempfile::tempdir().unwrap();
        let mut child = harness()
            .current_dir(dir.path())
            .args(["run", "vadd", "--size", "2^20", "--iters", "1000000"])
            .args(["--device", "host"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: a signal to the child this test started.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(60), "still running");
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(130), "signal {signal}: {status:?}");
        assert!(
            !files_under(dir.path()).iter().any(|f| f.ends_with(".tmp")),
            "{:?}",
            files_under(dir.path())
        );
    }
}

// 13. A run that measured nothing writes nothing.

#[test]
fn a_validation_that_measured_nothing_keeps_the_stored_result() {
    let dir = tempfile::tempdir().unwrap();
    let calibration = dir.path().join("host.json");
    std::fs::copy(fixture("calibration-host.json"), &calibration).unwrap();
    let stored = dir.path().join("host.maxplus.triad.json");
    std::fs::write(&stored, "{\"kept\": true}").unwrap();
    let out = run(harness()
        .current_dir(dir.path())
        .arg("validate-maxplus")
        .arg(graph("triad.toml"))
        .args(["--sizes", "2^62", "--device", "host", "--calibration"])
        .arg(&calibration)
        .arg("--plot-dir")
        .arg(dir.path().join("plots")));
    let line = one_error_line(&out);
    assert!(line.contains("nothing"), "{line}");
    assert_eq!(
        std::fs::read_to_string(&stored).unwrap(),
        "{\"kept\": true}"
    );
}

// 14. A calibration's destination is checked before the measuring.

#[test]
fn a_folder_where_the_calibration_goes_is_refused_before_measuring() {
    use harness::backend::{discover, select, BackendKind, DeviceSelector};
    let list = discover();
    let index = select(&list, &DeviceSelector::Backend(BackendKind::Host)).unwrap();
    let slug = list.devices[index].info().slug();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(format!("{slug}.json/inside"))).unwrap();
    let started = Instant::now();
    let out = run(harness().current_dir(dir.path()).args([
        "calibrate",
        "--quick",
        "--device",
        "host",
        "--output-dir",
        ".",
    ]));
    let line = one_error_line(&out);
    assert!(line.contains("is a folder"), "{line}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "it measured first"
    );
}

// 15. The index is written after the pages it links to.

#[test]
fn a_page_that_cannot_be_written_leaves_no_index() {
    let calibration =
        harness::calibration::Calibration::load(&fixture("calibration-host.json")).unwrap();
    let slug = calibration.device.slug();
    let dir = tempfile::tempdir().unwrap();
    let from = dir.path().join("from");
    std::fs::create_dir(&from).unwrap();
    std::fs::copy(fixture("calibration-host.json"), from.join("c.json")).unwrap();
    let out_dir = dir.path().join("report");
    // A folder where the device's page goes: that page cannot be written.
    std::fs::create_dir_all(out_dir.join(format!("{slug}.html/x"))).unwrap();
    let out = run(harness()
        .arg("report")
        .arg("--from")
        .arg(&from)
        .arg("--out")
        .arg(&out_dir));
    one_error_line(&out);
    assert!(
        !out_dir.join("index.html").exists(),
        "{:?}",
        files_under(&out_dir)
    );
}

// 17. A speed-up out of reach is not printed as one to expect.

#[test]
fn an_unattainable_k_max_says_so_in_the_table() {
    let out = run(harness().args([
        "balance", "--phi", "0.3", "--rho", "1000", "--q", "4", "--r", "1",
    ]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("K^max")).unwrap();
    assert!(line.contains("out of reach"), "{line}");
}

// 19. No infinite or negative time is printed as a prediction.

#[test]
fn absurd_times_are_refused_not_predicted_as_infinite() {
    let out = run(harness()
        .arg("maxplus")
        .arg(graph("triad.toml"))
        .args(["--set", "t=1e308", "--sizes", "1024", "--n-exec", "4"]));
    one_error_line(&out);
    let out = run(harness()
        .arg("maxplus")
        .arg(graph("triad.toml"))
        .args(["--set", "t=-5e-9", "--sizes", "1024", "--n-exec", "4"]));
    one_error_line(&out);

    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("net.toml");
    std::fs::write(
        &net,
        "type = \"network\"\nstart_time = 75\nsend_byte_time = 0.2\n",
    )
    .unwrap();
    let trace = dir.path().join("trace.json");
    let out = run(harness()
        .current_dir(dir.path())
        .args([
            "run", "jacobi2d", "-n", "34", "--iters", "2", "--device", "host",
        ])
        .arg("--trace")
        .arg(&trace));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run(harness()
        .arg("predict-cluster")
        .arg("--trace")
        .arg(&trace)
        .arg("--network")
        .arg(&net)
        .args(["--grid", "2", "--power", "1e308"]));
    let line = one_error_line(&out);
    assert!(line.contains("power"), "{line}");
    assert!(line.chars().count() < 200, "{line}");

    let text = std::fs::read_to_string(fixture("calibration-host.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["parameters"]["T"]["value"] = serde_json::json!(-5.0);
    let negative = dir.path().join("negative.json");
    std::fs::write(&negative, serde_json::to_string(&value).unwrap()).unwrap();
    let out = run(harness()
        .arg("compare")
        .arg(fixture("calibration-host.json"))
        .arg(&negative));
    let line = one_error_line(&out);
    assert!(line.contains("parameters.T.value"), "{line}");
}

// 20. What is shown as the parameters is what the prediction used.

#[test]
fn a_set_value_is_the_one_shown_and_used() {
    let out = run(harness()
        .arg("maxplus")
        .arg(graph("triad.toml"))
        .arg("--calibration")
        .arg(fixture("calibration-host.json"))
        .args(["--set", "t=2e-7", "--sizes", "1024", "--json"]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = json["inputs"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "t")
        .unwrap()
        .clone();
    assert_eq!(t["value"].as_f64(), Some(2e-7), "{t}");
    assert_eq!(t["source"], "--set", "{t}");
    let out = run(harness()
        .arg("maxplus")
        .arg(graph("triad.toml"))
        .arg("--calibration")
        .arg(fixture("calibration-host.json"))
        .args(["--set", "t=2e-7"]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--set"), "{text}");
}

// 21. Another device's calibration is used only with a word.

#[test]
fn another_devices_calibration_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("calibration-host.json")).unwrap();
    let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
    value["device"]["name"] = serde_json::Value::String("Some Other GPU".into());
    let other = dir.path().join("other.json");
    std::fs::write(&other, serde_json::to_string(&value).unwrap()).unwrap();
    let out = run(harness()
        .arg("predict")
        .arg("--series")
        .arg(fixture("series-sor-reordered.json"))
        .args(["--target", "2^12", "--calibration"])
        .arg(&other));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Some Other GPU"), "{stderr}");
}

// 23. Messages say what is wrong, alike for alike flags.

#[test]
fn counts_and_sizes_are_read_alike_and_messages_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(harness().current_dir(dir.path()).args([
        "run", "vadd", "--size", "1024", "--iters", " 16", "--device", "host",
    ]));
    one_error_line(&out);
    let out = run(harness().current_dir(dir.path()).args([
        "series", "vadd", "--sizes", "1024", "--repeat", "2^64", "--device", "host",
    ]));
    let line = one_error_line(&out);
    assert!(line.contains("more than"), "{line}");
    // A size to predict is at least 1.
    let out = run(harness()
        .current_dir(dir.path())
        .arg("predict")
        .arg("--series")
        .arg(fixture("series-sor-reordered.json"))
        .args(["--target", "0.5"]));
    let line = one_error_line(&out);
    assert!(line.contains("1 or more"), "{line}");
    let out = run(harness().current_dir(dir.path()).args([
        "run",
        "vadd",
        "--size",
        &"9".repeat(400),
        "--device",
        "host",
    ]));
    let line = one_error_line(&out);
    assert!(line.chars().count() < 300, "{line}");
    // A file where a folder is asked for.
    let file = dir.path().join("plain");
    std::fs::write(&file, "x").unwrap();
    let out = run(harness()
        .current_dir(dir.path())
        .args(["series", "vadd", "--sizes", "1024", "--repeat", "1"])
        .args(["--device", "host", "--output-dir"])
        .arg(&file));
    let line = one_error_line(&out);
    assert!(line.contains("not a folder"), "{line}");
}

#[test]
fn a_usage_error_puts_no_control_character_on_the_terminal() {
    // clap quotes a bad value or an unknown flag as given: an escape sequence in it would
    // reach the terminal.
    for args in [
        vec!["run", "vadd", "--size", "\x1b]0;owned\x07\x1b[31m12"],
        vec!["run", "vadd", "--\x1b[31mbogus"],
        vec!["\x1b[2Jrun"],
    ] {
        let out = run(harness().args(&args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with("error:"), "{stderr}");
        assert!(
            !stderr.contains(|c: char| c.is_control() && c != '\n'),
            "{stderr:?}"
        );
    }
}

#[test]
fn a_figure_name_cannot_lead_out_of_the_plot_folder() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("a/b");
    std::fs::create_dir_all(&inner).unwrap();
    let validation = fixture("spec-suite")
        .join("opencl-pthread-skylake-avx512-amd-epyc.validate.saxpy.16384-262144-to-1048576.json");
    for name in ["../../escaped", "/tmp/escaped", "..", ""] {
        let out = run(harness()
            .current_dir(&inner)
            .args(["plot-validations"])
            .arg(&validation)
            .args(["--plot-dir", "pl", "--name", name]));
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        assert!(one_error_line(&out).contains("--name"), "{name:?}");
    }
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
}

#[test]
fn a_written_files_name_puts_no_control_character_on_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(harness()
        .current_dir(dir.path())
        .arg("export-extrap")
        .arg(fixture("series-sor-reordered.json"))
        .args(["-o", "out\x1b[31m"]));
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("wrote out?[31m"), "{stderr:?}");
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
}

#[test]
fn a_max_plus_file_whose_rows_disagree_is_no_figure_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("stored/host-amd-epyc.maxplus.triad.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let errors = v["rows"][0]["abs_percent_errors"].as_array_mut().unwrap();
    errors.pop();
    let file = dir.path().join("host-amd-epyc.maxplus.triad.json");
    std::fs::write(&file, serde_json::to_string(&v).unwrap()).unwrap();
    let out = run(harness()
        .current_dir(dir.path())
        .args(["figures", "--from"])
        .arg(&file)
        .args(["--out", "f"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(2),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stderr.contains("errors where the first size has"),
        "{stderr}"
    );
}
