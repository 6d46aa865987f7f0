//! `harness maxplus` and `harness validate-maxplus`: the paper's formulas on the shipped
//! graphs, predictions from a calibration, a host validation run, and one clear error line
//! for bad graphs.

use std::path::PathBuf;

mod common;

use common::{harness, one_error_line as error_line};

fn repo(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
}

const HOST_CALIBRATION: &str = "harness/tests/fixtures/calibration-host.json";

#[test]
fn maxplus_prints_the_papers_z2_formulas() {
    let out = harness()
        .args(["maxplus"])
        .arg(repo("kernels/graphs/vadd_z2.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("height k = 3"), "{text}");
    assert!(
        text.contains("⟨1_o, Z^⊙3 ⊙ 1_i⟩ (paper, literally) = T + τ + t"),
        "{text}"
    );
    assert!(
        text.contains("T + τ + t + (2n − 1)Δt + (n − 1)ΔT"),
        "{text}"
    );
    assert!(text.contains("ext_pipelined (extension)"), "{text}");
}

#[test]
fn maxplus_predicts_from_a_calibration_as_json() {
    let out = harness()
        .args(["maxplus"])
        .arg(repo("kernels/graphs/triad.toml"))
        .arg("--calibration")
        .arg(repo(HOST_CALIBRATION))
        .args(["--sizes", "2^10,4096", "--n-exec", "4", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["executors"], 4);
    let predictions = json["predictions"].as_array().unwrap();
    assert_eq!(predictions.len(), 2);
    assert_eq!(predictions[0]["size"], 1024);
    let variants = predictions[0]["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 5);
    // ⌈1024/4⌉ = 256 rounds of T + t with the calibration's values.
    let calibration: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo(HOST_CALIBRATION)).unwrap()).unwrap();
    let t = calibration["parameters"]["t"]["value"].as_f64().unwrap() * 1e-9;
    let big_t = calibration["parameters"]["T"]["value"].as_f64().unwrap() * 1e-9;
    let naive = variants[0]["seconds"].as_f64().unwrap();
    assert!(
        (naive / (256.0 * (t + big_t)) - 1.0).abs() < 1e-9,
        "{naive}"
    );
}

#[test]
fn maxplus_predicts_ext_level_where_the_calibration_has_a_bandwidth_sweep() {
    let out = harness()
        .args(["maxplus"])
        .arg(repo("kernels/graphs/triad.toml"))
        .arg("--calibration")
        .arg(repo("harness/tests/fixtures/stored/host-amd-epyc.json"))
        .args(["--sizes", "2^16,2^26", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let level = |i: usize| {
        json["predictions"][i]["variants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["model"] == "ext_level")
            .cloned()
            .expect("an ext_level prediction")
    };
    let (small, large) = (level(0), level(1));
    assert_eq!(small["published"], false);
    // 2^16 elements (768 KiB) stream from the L2, 2^26 from memory, and the formula says so.
    let formula = |v: &serde_json::Value| v["formula"].as_str().unwrap().to_string();
    assert!(
        formula(&small).contains("4 B / L2 streaming bandwidth"),
        "{small}"
    );
    assert!(
        formula(&large).contains("4 B / memory streaming bandwidth"),
        "{large}"
    );
    let (s, l) = (
        small["seconds"].as_f64().unwrap(),
        large["seconds"].as_f64().unwrap(),
    );
    assert!(s > 0.0 && l > 100.0 * s, "{s} {l}");
}

#[test]
fn sizes_without_values_and_bad_graphs_are_one_line() {
    let out = harness()
        .args(["maxplus"])
        .arg(repo("kernels/graphs/triad.toml"))
        .args(["--sizes", "1000"])
        .output()
        .unwrap();
    assert!(error_line(&out).contains("--calibration"));

    let dir = tempfile::tempdir().unwrap();
    let cyclic = dir.path().join("cycle.toml");
    std::fs::write(
        &cyclic,
        r#"
[[nodes]]
id = "o"
kind = "output"
[[nodes]]
id = "a"
kind = "op"
[[nodes]]
id = "b"
kind = "op"
[[nodes]]
id = "i"
kind = "input"
[[arcs]]
from = "i"
to = "a"
weight = "t"
[[arcs]]
from = "a"
to = "b"
weight = "tau"
[[arcs]]
from = "b"
to = "a"
weight = "tau"
[[arcs]]
from = "b"
to = "o"
weight = "T"
"#,
    )
    .unwrap();
    let out = harness().arg("maxplus").arg(&cyclic).output().unwrap();
    let line = error_line(&out);
    assert!(line.contains("cycle"), "{line}");

    let unknown = dir.path().join("unknown.toml");
    std::fs::write(
        &unknown,
        "[[nodes]]\nid = \"o\"\nkind = \"output\"\n[[nodes]]\nid = \"i\"\nkind = \"input\"\n[[arcs]]\nfrom = \"i\"\nto = \"o\"\nweight = \"t + q\"\n",
    )
    .unwrap();
    let out = harness().arg("maxplus").arg(&unknown).output().unwrap();
    assert!(error_line(&out).contains("`q`"));

    let mine = dir.path().join("mine.toml");
    std::fs::write(
        &mine,
        "[[nodes]]\nid = \"o\"\nkind = \"output\"\n[[nodes]]\nid = \"i\"\nkind = \"input\"\n[[arcs]]\nfrom = \"i\"\nto = \"o\"\nweight = \"t + T\"\n",
    )
    .unwrap();
    let out = harness()
        .args(["validate-maxplus", "--sizes", "64"])
        .arg(&mine)
        .output()
        .unwrap();
    assert!(error_line(&out).contains("describes no built-in kernel"));

    let out = harness()
        .args(["validate-maxplus", "--sizes", "64", "--min-run-ms=-1"])
        .arg(repo("kernels/graphs/triad.toml"))
        .output()
        .unwrap();
    assert!(error_line(&out).contains("--min-run-ms"), "{out:?}");
}

#[test]
fn validate_maxplus_on_the_host_writes_results_beside_the_calibration() {
    let dir = tempfile::tempdir().unwrap();
    let calibration = dir.path().join("host.json");
    std::fs::copy(repo(HOST_CALIBRATION), &calibration).unwrap();
    let plots = dir.path().join("plots");
    let out = harness()
        .args(["validate-maxplus"])
        .arg(repo("kernels/graphs/triad.toml"))
        .args([
            "--sizes",
            "2^12,2^14",
            "--device",
            "host",
            "--iters",
            "2",
            "--repeat",
            "3",
            "--min-run-ms",
            "1",
        ])
        .arg("--calibration")
        .arg(&calibration)
        .arg("--plot-dir")
        .arg(&plots)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("lowest median error"), "{text}");
    let json = dir.path().join("host.maxplus.triad.json");
    let csv = dir.path().join("host.maxplus.triad.csv");
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    assert_eq!(result["rows"].as_array().unwrap().len(), 2);
    assert_eq!(result["min_kernel_seconds"].as_f64(), Some(1e-3));
    // Two iterations of a triad over 2^12 floats take microseconds, not a millisecond: the
    // size gets more, from its warm-up run.
    for row in result["rows"].as_array().unwrap() {
        assert!(row["iterations"].as_u64().unwrap() > 2, "{row}");
    }
    assert_eq!(
        std::fs::read_to_string(csv).unwrap().lines().count(),
        1 + 2 * 5
    );
    let figures: Vec<_> = std::fs::read_dir(&plots).unwrap().collect();
    assert_eq!(figures.len(), 3, "svg, png and csv");
}

#[test]
fn a_dense_300_node_graph_is_summarised_in_seconds_and_says_what_it_skipped() {
    let mut text = String::from(
        "name = \"dense\"\nreads = 1\nwrites = 1\n\n[[nodes]]\nid = \"in\"\nkind = \"input\"\n\n",
    );
    let n = 300;
    for i in 0..n {
        text += &format!("[[nodes]]\nid = \"o{i}\"\nkind = \"op\"\n\n");
    }
    text += "[[nodes]]\nid = \"out\"\nkind = \"output\"\n\n[[arcs]]\nfrom = \"in\"\nto = \"o0\"\nweight = \"t\"\n\n";
    for i in 0..n {
        for j in i + 1..n {
            text += &format!("[[arcs]]\nfrom = \"o{i}\"\nto = \"o{j}\"\nweight = \"tau\"\n\n");
        }
    }
    text += &format!(
        "[[arcs]]\nfrom = \"o{}\"\nto = \"out\"\nweight = \"T\"\n",
        n - 1
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dense.toml");
    std::fs::write(&path, text).unwrap();
    let started = std::time::Instant::now();
    let out = harness()
        .arg("maxplus")
        .arg(&path)
        .args(["--n-exec", "64", "--sizes", "2^20", "--json"])
        .args([
            "--set", "t=4e-7", "--set", "T=5e-7", "--set", "tau=1e-9", "--set", "dt=1e-10",
            "--set", "dT=1e-10",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["graph"]["paper_formula"]
        .as_str()
        .unwrap()
        .contains("not computed"));
    assert!(v["graph"]["formulas"][0]["formula"]
        .as_str()
        .unwrap()
        .contains("not derived"));
    // The numeric prediction is there: the critical path t + 299·τ + T per round.
    let s = v["predictions"][0]["variants"][1]["seconds"]
        .as_f64()
        .unwrap();
    let rounds = (1u64 << 20) as f64 / 64.0;
    assert!(
        (s - rounds * (4e-7 + 299.0 * 1e-9 + 5e-7)).abs() < 1e-9 * s,
        "{s}"
    );
}
