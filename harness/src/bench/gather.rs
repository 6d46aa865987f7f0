//! Gathering bandwidth: the rate a read at random indices meets at each working set.
//!
//! The streaming sweep ([`super::bandwidth`]) reads neighbours together and the transposing
//! sweeps ([`super::transpose`]) read a fixed stride apart; a hash table's or a tree's probes
//! and a neighbour list's positions read where an index array says. Each such read fetches a line of its own, wherever it lies, and once the array
//! outgrows a level every read waits on the next one. A spec declares such a launch with
//! `access = "gather"`, and a prediction then moves it between memory levels by this sweep's
//! rates (docs/models.md §2.4).
//!
//! For each working set W an array `a` of n floats, an index array `idx` holding a permutation
//! of 0..n − 1 drawn at random, and an output `b` of n floats
//! (12·n bytes, n ≈ W/12) are read as `b[x] = a[idx[x]] + p`, one executor per element. The
//! rate counts 12 bytes per element: the index, the gathered value and the value written. A
//! sample is one launch over data the previous launch left warm; the working sets are measured
//! in rounds, as the streaming sweep's are. On the host the twin is one loop on the launching
//! thread, as the transposing sweeps' are. Each working set's output is checked against the
//! host after its measurement.
//!
//! One permutation is drawn, the largest working set's (its seed in the file's `seeds` under
//! every working set's `gather_index_<n>`), and each smaller one takes its entries below n in
//! their order: a uniformly random order of 0..n − 1 as well, at the cost of one pass over it
//! instead of a shuffle of its own, whose random swaps over a large array cost 80 ns each on
//! the 2-core Intel Xeon VM (1.8 s of the sweep's 5.6 s, the largest alone half of it).

use serde::{Deserialize, Serialize};

use super::bandwidth::rate_of;
use super::permutation::random_permutation;
use super::{verify, BenchContext, BenchError};
use crate::backend::{upload_f32, upload_u32, Arg, Buffer, Launch};

/// Bytes an element counts: its index, the value gathered and the value written.
pub const BYTES_PER_ELEMENT: usize = 12;

/// The value added on every sample (and on the check's run).
const ADDED: f32 = 1.0;

/// One working set of the gathering sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatherPoint {
    /// Elements n of each array.
    pub elements: usize,
    /// Bytes of the three arrays, 12·n.
    pub working_set_bytes: usize,
    /// Median rate, GB/s (12 bytes per element over the median time of one launch).
    pub gbps: f64,
    /// Its 95 % CI.
    pub ci95_gbps: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatherSweep {
    /// Whether every launch ran on one thread (the host's twin), so the rates are one
    /// thread's.
    pub one_thread: bool,
    /// Ascending working sets.
    pub points: Vec<GatherPoint>,
}

/// Element x of the source: distinct over any 1021 neighbours and exact in f32, so a value
/// read from the wrong place shows.
fn source_value(x: usize) -> f32 {
    (x % 1021) as f32
}

/// The elements of each array at a working set of `bytes`, at least 1024.
pub fn elements_for(bytes: usize) -> usize {
    (bytes / BYTES_PER_ELEMENT).max(1024)
}

/// A permutation of 0..n − 1 drawn from `seed`.
fn permutation(n: usize, seed: u64) -> Vec<u32> {
    random_permutation(n, seed)
}

/// The entries of `permutation` below `n`, in their order: a permutation of 0..n − 1, as
/// random as `permutation` is.
fn below(permutation: &[u32], n: usize) -> Vec<u32> {
    permutation
        .iter()
        .copied()
        .filter(|&v| (v as usize) < n)
        .collect()
}

/// Measure the gathering read at every working set of `sizes` (one set of arrays per
/// distinct element count), verify each, and return the points in ascending order.
pub fn measure_gathers(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<GatherSweep, BenchError> {
    let mut counts: Vec<usize> = sizes.iter().map(|&b| elements_for(b)).collect();
    counts.sort_unstable();
    counts.dedup();
    let group = ctx.group().max(1);
    let mut arrays: Vec<(usize, Buffer, Buffer, Vec<u32>)> = Vec::with_capacity(counts.len());
    let largest = counts.last().copied().unwrap_or(0);
    let seed = 0x6a7e_0000 + largest as u64;
    // Each set's indices from the next larger one's (the same entries, in the same order, as
    // from the drawn permutation, in one pass over the sets together instead of one over the
    // largest per set). The source is read-only and each set's indices stay below its n, so
    // one source serves every set: a set gathers from its first n elements.
    let source = upload_f32(
        ctx.device,
        &(0..largest.max(1)).map(source_value).collect::<Vec<f32>>(),
    )?;
    let drawn = permutation(largest, seed);
    for &n in counts.iter().rev() {
        ctx.seeds.insert(format!("gather_index_{n}"), seed);
        let idx = below(arrays.last().map_or(&drawn, |(.., larger)| larger), n);
        let i = upload_u32(ctx.device, &idx)?;
        let b = ctx.device.alloc(n * 4)?;
        arrays.push((n, i, b, idx));
    }
    arrays.reverse();
    let names: Vec<String> = arrays
        .iter()
        .map(|(n, ..)| format!("gather_index_s/{}", BYTES_PER_ELEMENT * n))
        .collect();
    let past: Vec<bool> = arrays
        .iter()
        .map(|(n, ..)| ctx.past_caches(BYTES_PER_ELEMENT * n))
        .collect();
    let measured = ctx.measure_in_rounds_past_caches(&names, &past, |k| {
        let (n, i, b, _) = &arrays[k];
        let args = [
            Arg::Buf(&source),
            Arg::Buf(i),
            Arg::Buf(b),
            Arg::U32(*n as u32),
            Arg::F32(ADDED),
        ];
        Ok(ctx
            .launch("bw_gather_index", &Launch::linear(*n, group), &args)?
            .0)
    })?;
    let mut points = Vec::with_capacity(arrays.len());
    // One host array for every set's check.
    let mut out = vec![0f32; largest];
    for ((name, m), (n, _, b, idx)) in names.iter().zip(&measured).zip(&arrays) {
        ctx.record(name, m);
        let out = &mut out[..*n];
        ctx.device.download(b, bytemuck::cast_slice_mut(out))?;
        let bad = (0..*n).find(|&x| out[x] != source_value(idx[x] as usize) + ADDED);
        verify(
            bad.is_none(),
            &format!("bw_gather_index at n = {n}"),
            || format!("element {bad:?} is not the source at its index plus {ADDED}"),
        )?;
        let Some((gbps, ci95_gbps)) = rate_of((BYTES_PER_ELEMENT * n) as f64, m) else {
            continue;
        };
        points.push(GatherPoint {
            elements: *n,
            working_set_bytes: BYTES_PER_ELEMENT * n,
            gbps,
            ci95_gbps,
            outliers: m.summary.outliers,
        });
    }
    Ok(GatherSweep {
        one_thread: ctx.device.info().backend == crate::backend::BackendKind::Host,
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_indices_are_a_permutation_fixed_by_the_seed() {
        let p = permutation(1000, 7);
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..1000).collect::<Vec<u32>>());
        assert_eq!(p, permutation(1000, 7));
        assert_ne!(p, permutation(1000, 8));
        assert_ne!(p, sorted, "shuffled");
    }

    #[test]
    fn a_smaller_working_set_takes_the_drawn_entries_below_its_size_in_order() {
        let p = permutation(1000, 7);
        let q = below(&p, 300);
        let mut sorted = q.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..300).collect::<Vec<u32>>());
        assert_ne!(q, sorted, "still shuffled");
        let first = p.iter().position(|&v| v < 300).unwrap();
        assert_eq!(q[0], p[first]);
        assert_eq!(below(&p, 1000), p);
        assert_eq!(below(&below(&p, 600), 300), q, "taken from a larger set's");
    }

    #[test]
    fn the_host_sweep_gathers_checks_each_working_set_and_counts_12_bytes_an_element() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        let sweep = measure_gathers(&mut ctx, &[1 << 20, 64 << 10]).expect("measured, verified");
        assert!(sweep.one_thread);
        assert_eq!(sweep.points.len(), 2);
        assert_eq!(sweep.points[0].elements, (64 << 10) / 12);
        for p in &sweep.points {
            assert_eq!(p.working_set_bytes, 12 * p.elements);
            assert!(p.gbps > 0.0 && p.gbps.is_finite(), "{p:?}");
            assert!(
                p.ci95_gbps[0] <= p.gbps && p.gbps <= p.ci95_gbps[1],
                "{p:?}"
            );
            let key = format!("gather_index_s/{}", p.working_set_bytes);
            assert!(ctx.samples.contains_key(&key), "{key}");
            assert!(ctx
                .seeds
                .contains_key(&format!("gather_index_{}", p.elements)));
        }
    }
}
