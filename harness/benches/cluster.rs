//! Predicting a 64 × 64 grid of processors over 1,000 iterations of red-black SOR (issue
//! target: under a second): the replay of every processor's clock through every phase,
//! shadow exchange and reduction. Run with `cargo bench --bench cluster`.

use criterion::{black_box, criterion_group, criterion_main, Criterion};

use harness::model::cluster::trace::TRACE_SCHEMA;
use harness::model::cluster::{
    replay, Blocks, ComputeScale, Network, NetworkKind, ProcessorGrid, ReplayOptions, Trace,
    TraceInterval, TraceStep, Work,
};
use harness::units::Seconds;

fn sor_trace(iterations: u64) -> Trace {
    let compute = |name: &str, seconds: f64, work: Work| TraceStep::Compute {
        name: name.into(),
        seconds,
        bytes: None,
        work,
        launches: 1,
    };
    let shadow = TraceStep::Shadow {
        width: 1,
        arrays: 1,
        corners: false,
    };
    Trace {
        schema: TRACE_SCHEMA.into(),
        workload: "sor-rb".into(),
        size: 8194,
        iterations,
        device: "synthetic".into(),
        threads: None,
        extents: vec![8192, 8192],
        element_bytes: 4,
        spec: None,
        verified: None,
        root: TraceInterval {
            name: "run".into(),
            repeat: 1,
            seconds: 0.0,
            body: vec![TraceStep::Interval(TraceInterval {
                name: "iteration".into(),
                repeat: iterations,
                seconds: 0.0,
                body: vec![
                    compute("zero_u32", 1e-6, Work::Replicated),
                    shadow.clone(),
                    compute("sor_rb red", 0.1, Work::Distributed),
                    shadow,
                    compute("sor_rb black", 0.1, Work::Distributed),
                    compute("download eps", 1e-6, Work::Replicated),
                    TraceStep::Reduction { bytes: 4 },
                ],
            })],
        },
    }
}

fn grid_64x64(c: &mut Criterion) {
    let trace = sor_trace(1000);
    let grid = ProcessorGrid::parse("64x64").expect("grid");
    let options = ReplayOptions {
        network: Network::new(NetworkKind::Grid, Seconds(2e-6), 1e-10, 1.0, None).expect("net"),
        blocks: Blocks::new(&trace.extents, &grid).expect("divides"),
        scale: ComputeScale::linear(grid.count()),
    };
    let mut group = c.benchmark_group("cluster");
    group.sample_size(10);
    group.bench_function("replay sor-rb, 64x64 processors, 1000 iterations", |b| {
        b.iter(|| black_box(replay(black_box(&trace), &options).expect("replays")))
    });
    group.finish();
}

criterion_group!(benches, grid_64x64);
criterion_main!(benches);
