//! Everything shown, from the reference set (reference/) (issue target: figures and report together
//! under 10 s on the 2-core machine): the catalogue scan, every figure drawn as SVG, PNG and
//! CSV in memory, and every report page built. Writing the files is left out (it is the
//! same bytes either way). Run with `cargo bench --bench report`.

use std::path::{Path, PathBuf};

use criterion::{black_box, criterion_group, criterion_main, Criterion};

use harness::report::catalog::Catalog;
use harness::report::figures::{plan, render_all};
use harness::report::html::{pages, InlineFigure};

fn reference() -> Vec<PathBuf> {
    vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../reference")]
}

fn figures_and_report(c: &mut Criterion) {
    let dirs = reference();
    let mut group = c.benchmark_group("show");
    group.sample_size(10);
    group.bench_function("figures: scan, draw SVG + PNG + CSV", |b| {
        b.iter(|| {
            let catalog = Catalog::scan(black_box(&dirs));
            let (planned, _) = plan(&catalog);
            let rendered = render_all(&planned);
            assert!(rendered.iter().all(Result::is_ok));
            rendered.len()
        })
    });
    group.bench_function("report: scan, draw SVG, build pages", |b| {
        b.iter(|| {
            let catalog = Catalog::scan(black_box(&dirs));
            let (planned, notes) = plan(&catalog);
            let inline: Vec<InlineFigure<'_>> = planned
                .iter()
                .map(|p| InlineFigure {
                    planned: p,
                    svg: harness::plot::render_svg(&p.drawing, &p.stem).ok(),
                })
                .collect();
            pages(&catalog, &inline, &notes).len()
        })
    });
    group.finish();
}

criterion_group!(benches, figures_and_report);
criterion_main!(benches);
