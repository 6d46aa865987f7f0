//! What a spec's kernels declare over a run, found by walking its steps as a run would but
//! launching nothing ([`declared_amounts`]).

use super::footprint::{gather_footprint, index_buffer};
use super::launch::shape;
use super::{invalid, SpecWorkload};
use crate::workloads::spec::compiled::Code;
use crate::workloads::spec::format::LaunchSpec;
use crate::workloads::{
    DeclaredAmounts, GatheredReads, SearchedBuffer, WalkedBuffer, WorkloadError,
};

/// One count launch `l` declares for a buffer (`what`: `walks.A.steps`, say) at `v`: a whole
/// number ≥ 0, or an error that names the kernel and the key.
fn declared_count(
    spec: &SpecWorkload,
    l: &LaunchSpec,
    what: &str,
    c: &Code,
    v: &[f64],
) -> Result<u64, WorkloadError> {
    c.eval_count(v)
        .map_err(|e| invalid(spec, format!("{}: {what}: {e}", l.kernel)))
}

/// Evaluate every count launch `l` declares besides its bytes and flops (gathers' reads,
/// searches' arrays and strides, walks' strides and steps) at `v`, so that one that is no
/// whole number fails the run that meets it with the key's name, as a `bytes` that is none
/// does. Only the prediction reads them, and it cannot report an error: unchecked, such a
/// declaration vanished from the prediction without a word.
pub(super) fn check_declared_counts(
    spec: &SpecWorkload,
    l: &LaunchSpec,
    v: &[f64],
) -> Result<(), WorkloadError> {
    for (buffer, reads) in &l.gathers {
        let name = &spec.buffers[*buffer].name;
        declared_count(spec, l, &format!("gathers.{name}"), reads, v)?;
    }
    for s in &l.searches {
        let name = &spec.buffers[s.buffer].name;
        declared_count(spec, l, &format!("searches.{name}.arrays"), &s.arrays, v)?;
        declared_count(spec, l, &format!("searches.{name}.stride"), &s.stride, v)?;
    }
    for w in &l.walks {
        let name = &spec.buffers[w.buffer].name;
        declared_count(spec, l, &format!("walks.{name}.stride"), &w.stride, v)?;
        declared_count(spec, l, &format!("walks.{name}.steps"), &w.steps, v)?;
    }
    Ok(())
}

/// Each kernel's launches over `iterations` iterations at `size`, with the sums of their
/// declared `bytes` and `flops` (`None` where a launch of it declares none), in the order
/// the kernels first launch. A launch with an empty global size is skipped, as a run skips
/// it. With `footprints`, each declared gather's footprint is found from its index buffer
/// (`footprint::gather_footprint`), which evaluates part of that buffer.
pub(super) fn declared_amounts(
    spec: &SpecWorkload,
    size: usize,
    iterations: usize,
    footprints: bool,
) -> Result<Vec<DeclaredAmounts>, WorkloadError> {
    let mut vars = spec.vars(size, iterations)?;
    let lengths = spec.lengths(&vars)?;
    let mut out: Vec<DeclaredAmounts> = Vec::new();
    for iter in 0..iterations {
        vars[spec.slots.iter] = iter as f64;
        let mut count = 0.0;
        let mut work = vars.clone();
        spec.walk(&spec.steps, &mut work, &mut count, &mut |l, v| {
            let Some(launch) = shape(spec, l, v, 1)? else {
                return Ok(());
            };
            let amount = |code: &Option<crate::workloads::spec::compiled::Code>| {
                code.as_ref().and_then(|c| c.eval_count(v).ok())
            };
            let (bytes, flops) = (amount(&l.bytes), amount(&l.flops));
            let a = match out.iter().position(|a| a.kernel == l.kernel) {
                Some(i) => {
                    let a = &mut out[i];
                    a.launches += 1;
                    a.bytes = a.bytes.zip(bytes).map(|(x, y)| x.saturating_add(y));
                    a.flops = a.flops.zip(flops).map(|(x, y)| x.saturating_add(y));
                    a
                }
                None => {
                    out.push(DeclaredAmounts {
                        kernel: l.kernel.clone(),
                        launches: 1,
                        bytes,
                        flops,
                        gathers: Vec::new(),
                        searches: Vec::new(),
                        walks: Vec::new(),
                    });
                    out.last_mut().expect("just pushed")
                }
            };
            for (buffer, reads) in &l.gathers {
                let b = &spec.buffers[*buffer];
                let reads = declared_count(spec, l, &format!("gathers.{}", b.name), reads, v)?;
                match a.gathers.iter_mut().find(|g| g.buffer == b.name) {
                    Some(g) => g.reads = g.reads.saturating_add(reads),
                    None => {
                        let bytes = (lengths[*buffer] * b.element.bytes()) as u64;
                        a.gathers.push(GatheredReads {
                            buffer: b.name.clone(),
                            bytes,
                            footprint: footprints
                                .then(|| index_buffer(spec, l, *buffer))
                                .flatten()
                                .and_then(|index| {
                                    gather_footprint(spec, (*buffer, index), v, &lengths, bytes)
                                }),
                            reads,
                        })
                    }
                }
            }
            for s in &l.searches {
                let b = &spec.buffers[s.buffer];
                if a.searches.iter().any(|d| d.buffer == b.name) {
                    continue;
                }
                let count = |c: &Code, key: &str| {
                    declared_count(spec, l, &format!("searches.{}.{key}", b.name), c, v)
                        .map(|n| n.max(1))
                };
                a.searches.push(SearchedBuffer {
                    buffer: b.name.clone(),
                    bytes: (lengths[s.buffer] * b.element.bytes()) as u64,
                    arrays: count(&s.arrays, "arrays")?,
                    stride_bytes: count(&s.stride, "stride")? * b.element.bytes() as u64,
                });
            }
            let items: usize = launch.global[..launch.dims].iter().product();
            for w in &l.walks {
                let b = &spec.buffers[w.buffer];
                let count = |c: &Code, key: &str| {
                    declared_count(spec, l, &format!("walks.{}.{key}", b.name), c, v)
                };
                let steps = count(&w.steps, "steps")?;
                let item_steps = (items as u64).saturating_mul(steps);
                match a.walks.iter_mut().find(|d| d.buffer == b.name) {
                    Some(d) => d.item_steps = d.item_steps.saturating_add(item_steps),
                    None => a.walks.push(WalkedBuffer {
                        buffer: b.name.clone(),
                        stride_bytes: count(&w.stride, "stride")? * b.element.bytes() as u64,
                        steps,
                        item_steps,
                    }),
                }
            }
            Ok(())
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::workloads::spec::{load, SpecWorkload};
    use crate::workloads::Workload;
    use std::path::Path;

    fn port(name: &str) -> SpecWorkload {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../kernels/ports")
            .join(format!("{name}.toml"));
        load(&path).expect("the port loads")
    }

    #[test]
    fn a_loop_of_launches_sums_its_declared_bytes_and_flops_per_kernel() {
        // cutcp: one launch per z plane of R = ⌈N/8⌉ regions, each declaring
        // 896·(R + 6)² + 2048·R² bytes; its flops are no polynomial of N.
        let spec = port("cutcp");
        for (n, iters) in [(30usize, 1usize), (244, 1), (61, 2)] {
            let amounts = spec.declared_amounts(n, iters).expect("amounts");
            assert_eq!(amounts.len(), 1, "{amounts:?}");
            let r = n.div_ceil(8) as u64;
            let a = &amounts[0];
            assert_eq!(a.kernel, "cutcp_lattice");
            assert_eq!(a.launches, r * iters as u64);
            let bytes = 896 * (r + 6) * (r + 6) + 2048 * r * r;
            assert_eq!(a.bytes, Some(bytes * r * iters as u64));
            assert!(a.flops.is_some_and(|f| f > 0));
        }
    }

    #[test]
    fn the_uploads_are_the_initialised_buffers_bytes() {
        // cg-spmv uploads rowstr (N + 1 u32), colidx (NNZ u32), a (NNZ f64) and p (N f64);
        // q has no initial data and is not uploaded.
        let spec = port("cg-spmv");
        for n in [9usize, 1000, 706_896] {
            let nnz = (n * 24 + 36 * (n / 9) + (n % 9) * (n % 9).saturating_sub(1) / 2) as u64;
            let n = n as u64;
            let want = 4 * (n + 1) + 4 * nnz + 8 * nnz + 8 * n;
            assert_eq!(spec.upload_bytes(n as usize), Some(want), "N = {n}");
        }
    }

    #[test]
    fn a_gathers_footprint_is_its_band_or_nearly_its_whole_buffer() {
        let footprint = |name: &str, n: usize, buffer: &str| {
            let amounts = port(name)
                .declared_amounts_with_footprints(n, 1)
                .expect("amounts");
            let g = amounts
                .iter()
                .flat_map(|a| &a.gathers)
                .find(|g| g.buffer == buffer)
                .expect("a declared gather")
                .clone();
            (g.footprint.expect("a footprint"), g.bytes)
        };
        // hpcg-restriction reads the fine grid at every other point of its rows, in order:
        // 1,024 coarse points a stretch, whole rows of N = 100 coarse points, so about ten
        // coarse rows, twenty fine rows of 200 floats (16 KB) of a 32 MB grid.
        let (f, bytes) = footprint("hpcg-restriction", 100, "rf");
        assert_eq!(bytes, 4 * 200 * 200 * 200);
        assert!((15_000..17_000).contains(&f), "restriction footprint {f}");
        // miniFE's 27-point matrix over a 69³ node grid reads x within two planes of each
        // row (2·69² + a few rows of floats, 38 KB) of a 1.3 MB vector.
        let (f, bytes) = footprint("minife-matvec", 68, "x");
        assert_eq!(bytes, 4 * 69 * 69 * 69);
        assert!((38_000..42_000).contains(&f), "miniFE footprint {f}");
        // NPB CG's columns are a hash: a stretch lands all over p.
        let (f, bytes) = footprint("cg-spmv", 47_120, "p");
        assert!(f * 10 > 9 * bytes, "CG footprint {f} of {bytes}");
    }

    #[test]
    fn a_kernel_with_a_launch_that_declares_no_flops_has_none() {
        // triad declares its bytes and no flops.
        let spec = port("triad");
        let amounts = spec.declared_amounts(1000, 3).expect("amounts");
        assert!(amounts
            .iter()
            .all(|a| a.flops.is_none() && a.bytes.is_some()));
        assert!(amounts.iter().all(|a| a.launches % 3 == 0));
    }
}
