//! Parsing every spec shipped in `kernels/examples/` (issue target: under 10 ms each), and
//! initialising a large buffer from a formula, which the compiled expressions make cheap
//! (the interpreted version took 18.5 s for an 8192² grid). Run with
//! `cargo bench --bench spec`.

use std::path::Path;

use criterion::{black_box, criterion_group, criterion_main, Criterion};

use harness::workloads::spec::compiled::{compile, Scope};
use harness::workloads::spec::expr::parse;
use harness::workloads::spec::load;

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/examples")
}

fn parsing(c: &mut Criterion) {
    let mut files: Vec<_> = std::fs::read_dir(examples())
        .expect("kernels/examples")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        c.bench_function(&format!("parse {name}"), |b| {
            b.iter(|| load(black_box(&file)).expect("a shipped spec parses"))
        });
    }
}

fn formula(c: &mut Criterion) {
    // fdtd2d's initial data, one million elements (an 1024² grid).
    let scope = Scope::new(vec![("NX".into(), 0), ("NY".into(), 1), ("i".into(), 2)]);
    let code = compile(&parse("floor(i / NY) * (i % NY + 1) / NX").unwrap(), &scope).unwrap();
    c.bench_function("formula over 1024² elements", |b| {
        b.iter(|| {
            let mut vars = [1024.0, 1024.0, 0.0];
            let mut sum = 0.0;
            for i in 0..1024 * 1024 {
                vars[2] = i as f64;
                sum += code.eval(&vars, &[]).unwrap();
            }
            black_box(sum)
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = parsing, formula
}
criterion_main!(benches);
