//! The cluster prediction from the command line: a trace from a host run, the prediction
//! with its JSON and HTML, the comparison, and bad input (one error line, exit code 2).

mod common;

use common::{fails_with, harness, one_error_line};

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const NET: &str = "type = \"transputer\"\nstart_time = 2.0\nsend_byte_time = 0.001\n";

/// A trace of `workload` at N = 66 (64 interior points), 4 iterations, on the host.
fn trace(dir: &std::path::Path, workload: &str) -> String {
    let path = dir.join(format!("{workload}.trace.json"));
    let out = harness()
        .args([
            "run", workload, "-n", "66", "--iters", "4", "--device", "host", "--trace",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    path.to_string_lossy().into_owned()
}

#[test]
fn a_host_trace_predicts_a_2x2_grid_with_losses_that_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let net = write(dir.path(), "net.toml", NET);
    for workload in ["jacobi2d", "sor-rb"] {
        let t = trace(dir.path(), workload);
        let stem = dir.path().join(format!("{workload}.2x2"));
        let out = harness()
            .args([
                "predict-cluster",
                "--trace",
                &t,
                "--grid",
                "2x2",
                "--network",
                &net,
                "--json",
                "--output",
            ])
            .arg(&stem)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["processors"], 4);
        let intervals = v["intervals"].as_array().unwrap();
        assert_eq!(intervals[0]["path"], "run");
        assert_eq!(intervals[1]["executions"], 4);
        intervals.iter().for_each(common::assert_losses_add_up);
        // 2 × 2 blocks of 32 × 32 points: the edges are 128 bytes, one hop: Ts + 128·Tb.
        let root = &intervals[0];
        let exchanges = root["shadow_operations"].as_u64().unwrap();
        let per = root["losses"]["shadow"].as_f64().unwrap() / 4.0 / exchanges as f64;
        assert!((per - (2.0e-6 + 128.0 * 1e-9)).abs() < 1e-12, "{per}");
        if workload == "sor-rb" {
            assert_eq!(root["reduction_operations"], 4);
            assert!(root["losses"]["insufficient_parallelism"].as_f64().unwrap() > 0.0);
        }
        let html = std::fs::read_to_string(stem.with_extension("2x2.html")).unwrap();
        assert!(html.contains("<section id=\"interval-2\">"));
        // The JSON written equals the one printed.
        let written: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(stem.with_extension("2x2.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(written, v);
        // A prediction compares with itself exactly, every quantity within bounds.
        let p = stem.with_extension("2x2.json");
        let out = harness()
            .args(["compare-cluster", "--json"])
            .arg(&p)
            .arg(&p)
            .output()
            .unwrap();
        assert!(out.status.success());
        let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(c["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["within"] == true));
    }
}

#[test]
fn bad_grids_networks_and_traces_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let net = write(dir.path(), "net.toml", NET);
    let t = trace(dir.path(), "jacobi2d");
    let args = |grid: &str, net: &str| {
        vec![
            "predict-cluster".to_string(),
            "--trace".into(),
            t.clone(),
            "--grid".into(),
            grid.into(),
            "--network".into(),
            net.into(),
        ]
    };
    let run = |a: Vec<String>, needle: &str| {
        let out = harness().args(&a).output().unwrap();
        let line = one_error_line(&out);
        assert!(line.contains(needle), "{a:?}: {line}");
    };
    run(args("3x1", &net), "does not divide");
    let mut unwritable = args("2", &net);
    unwritable.extend(["--output".to_string(), "/proc/no-such-dir/p".to_string()]);
    run(unwritable, "cannot write into");
    run(args("2x0", &net), "extent");
    run(args("64x64x64x2", &net), "1 to 3");
    let bad = write(
        dir.path(),
        "bad.toml",
        "type = \"bus\"\nstart_time = 1\nsend_byte_time = 1\n",
    );
    run(args("2", &bad), "network");
    let neg = write(
        dir.path(),
        "neg.toml",
        "type = \"network\"\nstart_time = -5\nsend_byte_time = 1\n",
    );
    run(args("2", &neg), "start_time");
    let topo = write(
        dir.path(),
        "topo.toml",
        &format!("{NET}topology = [2, 2]\n"),
    );
    run(args("4", &topo), "disagrees");
    // A trace edited to another workload, and one with a zero repeat.
    let text = std::fs::read_to_string(&t).unwrap();
    let other = write(
        dir.path(),
        "other.json",
        &text.replace("\"jacobi2d\"", "\"vadd\""),
    );
    run(
        vec![
            "predict-cluster".into(),
            "--trace".into(),
            other,
            "--grid".into(),
            "2".into(),
            "--network".into(),
            net.clone(),
        ],
        "no distributed version",
    );
    let zero = write(
        dir.path(),
        "zero.json",
        &text.replacen("\"repeat\": 1", "\"repeat\": 0", 1),
    );
    run(
        vec![
            "predict-cluster".into(),
            "--trace".into(),
            zero,
            "--grid".into(),
            "2".into(),
            "--network".into(),
            net.clone(),
        ],
        "repeat",
    );
    fails_with(
        &[
            "run",
            "vadd",
            "-n",
            "1024",
            "--device",
            "host",
            "--trace",
            "/tmp/never.json",
        ],
        "no distributed version",
    );
    // A spec without a [distribution] is refused before it runs.
    let saxpy = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../kernels/examples/saxpy.toml"
    );
    fails_with(
        &[
            "run",
            saxpy,
            "-n",
            "1024",
            "--device",
            "host",
            "--trace",
            "/tmp/never.json",
        ],
        "no [distribution] table",
    );
}

#[test]
fn reports_of_different_runs_do_not_compare() {
    let dir = tempfile::tempdir().unwrap();
    let net = write(dir.path(), "net.toml", NET);
    let t = trace(dir.path(), "jacobi2d");
    for grid in ["2", "4"] {
        let out = harness()
            .args([
                "predict-cluster",
                "--trace",
                &t,
                "--grid",
                grid,
                "--network",
                &net,
                "--output",
            ])
            .arg(dir.path().join(format!("p{grid}")))
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    let (a, b) = (dir.path().join("p2.json"), dir.path().join("p4.json"));
    let out = harness()
        .arg("compare-cluster")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(one_error_line(&out).contains("different runs"));
}

#[cfg(not(feature = "mpi"))]
#[test]
fn without_the_mpi_feature_the_mpi_commands_say_how_to_get_it() {
    fails_with(&["mpi-run", "jacobi2d", "-n", "66"], "--features mpi");
    fails_with(
        &["mpi-pingpong", "--output", "/tmp/never.toml"],
        "--features mpi",
    );
}

#[test]
fn gpu_attached_processors_pay_the_calibrations_host_link_on_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let t = trace(dir.path(), "jacobi2d");
    let cal = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/stored/host-amd-epyc.json"
    );
    let run = |extra: &[&str]| {
        let out = harness()
            .args(["predict-cluster", "--trace", &t, "--grid", "2", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let alone = run(&["--calibration", cal]);
    assert_eq!(alone["network"]["kind"], "network");
    assert!(alone["notes"].to_string().contains("host link"));
    let shadow = |v: &serde_json::Value| v["intervals"][0]["losses"]["shadow"].as_f64().unwrap();
    assert!(shadow(&alone) > 0.0);
    let net = write(dir.path(), "net.toml", NET);
    let both = run(&["--calibration", cal, "--network", &net]);
    let plain = run(&["--network", &net]);
    assert!(shadow(&both) > shadow(&plain));
    fails_with(
        &["predict-cluster", "--trace", &t, "--grid", "2"],
        "required arguments",
    );
}
