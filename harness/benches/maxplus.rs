//! Evaluating a 1,000-node kernel graph (issue target: under 50 ms): the numeric prediction
//! of every model variant, the exact symbolic formula by longest path, and the graph's Z and
//! height. Run with `cargo bench --bench maxplus`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};

use harness::model::maxplus::random::{chain_graph, random_dag};
use harness::model::maxplus::time::kernel_formula_by_longest_path;
use harness::model::maxplus::{predict, ModelVariant, Parameters};

fn parameters() -> Parameters {
    Parameters::from_pairs(&[
        ("t", 4e-7),
        ("T", 5e-7),
        ("tau", 2e-9),
        ("dt", 1e-10),
        ("dT", 3e-10),
        ("t_cache", 5e-8),
    ])
    .expect("finite values")
}

fn thousand_nodes(c: &mut Criterion) {
    let p = parameters();
    let wide = random_dag(1000, 11);
    let chain = chain_graph(1000);
    c.bench_function("predict all variants, random DAG, 1000 nodes", |b| {
        b.iter(|| {
            for variant in ModelVariant::ALL {
                black_box(predict(black_box(&wide), &p, 1024, 1 << 24, variant).expect("valid"));
            }
        })
    });
    c.bench_function("predict with operations, chain, 1000 nodes", |b| {
        b.iter(|| {
            predict(
                black_box(&chain),
                &p,
                1024,
                1 << 24,
                ModelVariant::WithOperations,
            )
            .expect("valid")
        })
    });
    c.bench_function("symbolic formula, chain, 1000 nodes", |b| {
        b.iter(|| kernel_formula_by_longest_path(black_box(&chain)).expect("valid"))
    });
    c.bench_function("height and kernel matrix, random DAG, 1000 nodes", |b| {
        b.iter(|| {
            black_box(wide.height());
            black_box(wide.kernel_matrix());
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = thousand_nodes
}
criterion_main!(benches);
