//! Property tests of every parser on mutated real files: whatever the bytes, a parser
//! returns a value or an error, never panics, and (for the model) never predicts a negative
//! or non-finite time from input it accepted. `scripts/fuzz-cli.py` does the same through the
//! binary, counting exit codes, signals and partial files.
//!
//! 1,000 cases per parser (CI runs them with the rest of the tests).

use proptest::prelude::*;

use harness::calibration::Calibration;
use harness::experiments::series::Series;
use harness::experiments::validate::Validation;
use harness::model::cluster::{ClusterReport, Network, Trace};
use harness::model::maxplus::weight::parse_weight;
use harness::model::maxplus::KernelGraph;
use harness::workloads::spec::expr::parse as parse_expression;

fn root(path: &str) -> String {
    format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"))
}

fn seed(path: &str) -> Vec<u8> {
    std::fs::read(root(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A mutation of `data`: truncation, bit flips, an odd number or token spliced in, a
/// deleted span, or deep nesting.
fn mutated(data: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    let n = data.len().max(1);
    let tokens = prop::sample::select(vec![
        "NaN",
        "inf",
        "-inf",
        "1e308",
        "1e309",
        "-1",
        "0",
        "-0",
        "1e-320",
        "99999999999999999999999",
        "\"x\"",
        "[]",
        "{}",
        "null",
        "true",
        "\"\"",
        "2^62",
        "(((((((",
        "]]]]",
        "\u{0}",
        "é",
    ]);
    let d1 = data.clone();
    let d2 = data.clone();
    let d3 = data.clone();
    let d4 = data.clone();
    prop_oneof![
        (0..n).prop_map(move |i| d1[..i.min(d1.len())].to_vec()),
        prop::collection::vec((0..n, 0u8..8), 1..8).prop_map(move |flips| {
            let mut out = d2.clone();
            for (i, bit) in flips {
                if let Some(b) = out.get_mut(i) {
                    *b ^= 1 << bit;
                }
            }
            out
        }),
        (0..n, 0..8usize, tokens).prop_map(move |(i, len, t)| {
            let i = i.min(d3.len());
            let j = (i + len).min(d3.len());
            [&d3[..i], t.as_bytes(), &d3[j..]].concat()
        }),
        (0..n, 0..n, 0..3usize).prop_map(move |(i, j, deep)| {
            let (a, b) = (i.min(j).min(d4.len()), i.max(j).min(d4.len()));
            let nest: &[u8] = match deep {
                0 => b"",
                1 => &[b'['; 3000],
                _ => &[b'('; 3000],
            };
            [&d4[..a], nest, &d4[b..]].concat()
        }),
    ]
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn calibration_json(m in mutated(seed("harness/tests/fixtures/stored/host-amd-epyc.json"))) {
        let _ = Calibration::from_json(&text(&m));
    }

    #[test]
    fn series_and_validation_json(
        s in mutated(seed("harness/tests/fixtures/series-sor-reordered.json")),
        v in mutated(seed("harness/tests/fixtures/stored/host-amd-epyc.suite/host-amd-epyc.validate.jacobi2d.363-726-to-2904.json")),
    ) {
        if let Ok(series) = serde_json::from_str::<Series>(&text(&s)) {
            let _ = harness::fit::forecast::forecast(&series.medians(), 4096.0);
        }
        let _ = serde_json::from_str::<Validation>(&text(&v));
    }

    #[test]
    fn graph_toml_and_weights(m in mutated(seed("kernels/graphs/sor_point.toml")), w in ".{0,200}") {
        if let Ok(g) = KernelGraph::from_toml_str(&text(&m), "fuzz.toml", "fuzz") {
            let _ = harness::model::maxplus::summary::summarise(&g);
        }
        let _ = parse_weight(&w);
    }

    #[test]
    fn spec_toml_and_expressions(m in mutated(seed("kernels/examples/wavefront.toml")), e in "[-+*/%() N0-9a-z.,^]{0,120}") {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(root("kernels/examples/wavefront.cl"), dir.path().join("wavefront.cl")).unwrap();
        let path = dir.path().join("spec.toml");
        std::fs::write(&path, &m).unwrap();
        let _ = harness::workloads::spec::load(&path);
        if let Ok(expr) = parse_expression(&e) {
            let _ = expr.eval(&harness::workloads::spec::expr::Env::with_size(1000));
        }
    }

    #[test]
    fn trace_network_and_cluster_report(
        t in mutated(seed("harness/tests/fixtures/stored/cluster/sor-rb.trace.json")),
        n in mutated(seed("harness/tests/fixtures/stored/cluster/network.toml")),
        r in mutated(seed("harness/tests/fixtures/stored/cluster/sor-rb.2x1.measured-1.json")),
    ) {
        let network = Network::from_toml(&text(&n));
        if let (Ok(trace), Ok(net)) = (serde_json::from_str::<Trace>(&text(&t)), network) {
            let grid = harness::model::cluster::ProcessorGrid::parse("2x2").unwrap();
            if let Ok(report) = harness::experiments::cluster::predict(&trace, &grid, &net, None) {
                let root = report.root().unwrap();
                prop_assert!(root.execution_time.is_finite() && root.execution_time >= 0.0);
            }
        }
        let _ = serde_json::from_str::<ClusterReport>(&text(&r));
    }
}
