//! Gathering bandwidth: the rate a read at random indices meets at each working set.
//!
//! The streaming sweep ([`super::bandwidth`]) reads neighbours together and the transposing
//! sweeps ([`super::transpose`]) read a fixed stride apart; a hash table's or a tree's probes
//! and a neighbour list's positions read where an index array says. Each such read fetches a line of its own, wherever it lies, and once the array
//! outgrows a level every read waits on the next one. A spec declares such a launch with
//! `access = "gather"`, and a prediction then moves it between memory levels by this sweep's
//! rates (docs/models.md §2.4).
//!
//! For each working set W an array `a` of n floats is read as `b[x] = a[idx[x]] + p` for x
//! below m, `idx` holding m distinct indices below n in a random order and `b` m floats, one
//! executor per element. Up to [`MAX_READS`] elements a launch, m = n ≈ W/12 and `idx` is a
//! permutation of 0..n − 1 drawn at random: every element of `a` read once. Past it a launch
//! reads m = [`MAX_READS`] elements, and `a` takes the rest of the working set, n ≈ (W − 8·m)/4:
//! the working set stays what the caches see, and a launch's time stops growing with it. Its
//! indices are then one at a random place in each of m equal stretches of `a`, in a random
//! order, and each launch shifts them all by another multiple of 16 (modulo n) so that it
//! reads other lines than the launch before; where `a` outgrows a cache, a launch then misses
//! it as one that read all of `a` would. The rate counts 12 bytes per element read: the
//! index, the gathered value and the value written. A sample is one launch over data the
//! previous launch left warm; the working sets are measured in rounds, as the streaming
//! sweep's are. On the host the twin is one loop on the launching thread, as the transposing
//! sweeps' are. Each working set's output is checked against the host after its measurement,
//! on a launch with no shift.
//!
//! Reading every element of a working set past the caches took most of a calibration's gather
//! time where the OS reports a large last-level cache: on a 2-vCPU Intel Xeon VM whose OS
//! reports 480 MiB, a launch over 1 GiB read 89 million elements at 1 GB/s, a second each,
//! and the gathered third of the working set, 341 MiB, lay under the reported cache.
//!
//! The permutations below [`MAX_READS`] come from one drawn for the largest such set (its
//! seed in the file's `seeds` under every working set's `gather_index_<n>`), and each smaller
//! one takes its entries below n in their order: a uniformly random order of 0..n − 1 as
//! well, at the cost of one pass over it instead of a shuffle of its own.

use serde::{Deserialize, Serialize};

use super::bandwidth::rate_of;
use super::permutation::random_permutation;
use super::{verify, BenchContext, BenchError};
use crate::backend::{upload_f32, upload_u32, Arg, Buffer, Launch};

/// Bytes an element counts: its index, the value gathered and the value written.
pub const BYTES_PER_ELEMENT: usize = 12;

/// The value added on every sample (and on the check's run).
const ADDED: f32 = 1.0;

/// The most elements one launch reads: 4 Mi, 48 MiB of working set; a launch past the caches
/// then takes tens of milliseconds on a 2-core CPU, far past its fixed cost, and a GPU still
/// runs millions of work items.
pub const MAX_READS: usize = 1 << 22;

/// Elements a launch's shift moves the indices by, times the launch's number (modulo n): a
/// multiple of 16 floats (64-byte lines), so that each launch reads the same offsets within
/// other lines.
const SHIFT_STEP: usize = 16 * 40_503;

/// One working set of the gathering sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatherPoint {
    /// Elements n of the gathered array `a` (and of `idx` and `b` where `reads` is n).
    pub elements: usize,
    /// Elements m each launch reads, at most [`MAX_READS`]; absent in files written before
    /// 2026-12-01, which read every element ([`Self::reads`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<usize>,
    /// Bytes of the three arrays, 4·n + 8·m.
    pub working_set_bytes: usize,
    /// Median rate, GB/s (12 bytes per element read over the median time of one launch).
    pub gbps: f64,
    /// Its 95 % CI.
    pub ci95_gbps: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

impl GatherPoint {
    /// Elements m each launch reads.
    pub fn reads(&self) -> usize {
        self.reads.unwrap_or(self.elements)
    }

    /// Bytes of the gathered array `a`.
    pub fn gathered_bytes(&self) -> usize {
        4 * self.elements
    }
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

/// The elements n of the gathered array and m read a launch at a working set of `bytes`
/// (4·n + 8·m of them): n = m ≥ 1024 up to [`MAX_READS`], then m = [`MAX_READS`].
pub fn elements_for(bytes: usize) -> (usize, usize) {
    let n = (bytes / BYTES_PER_ELEMENT).max(1024);
    if n <= MAX_READS {
        (n, n)
    } else {
        ((bytes - 8 * MAX_READS) / 4, MAX_READS)
    }
}

/// m distinct indices below n, one at a random place in each of m equal stretches of
/// 0..n − 1, in a random order (the stretches' order a permutation drawn from `seed`).
fn spread_sample(n: usize, m: usize, seed: u64) -> Vec<u32> {
    use rand::{Rng, SeedableRng};
    let stretch = n / m.max(1);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    random_permutation(m, seed)
        .into_iter()
        .map(|k| (k as usize * stretch + rng.gen_range(0..stretch.max(1))) as u32)
        .collect()
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

/// One working set's arrays: n elements gathered from, m read a launch, the indices on the
/// device and on the host (for the check), and the output.
struct GatherSet {
    n: usize,
    m: usize,
    idx: Buffer,
    host_idx: Vec<u32>,
    out: Buffer,
}

/// Measure the gathering read at every working set of `sizes` (one set of arrays per
/// distinct element count), verify each, and return the points in ascending order.
pub fn measure_gathers(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<GatherSweep, BenchError> {
    let mut counts: Vec<(usize, usize)> = sizes.iter().map(|&b| elements_for(b)).collect();
    counts.sort_unstable();
    counts.dedup();
    let group = ctx.group().max(1);
    let largest = counts.last().map_or(0, |c| c.0);
    let largest_whole = counts
        .iter()
        .filter(|(n, m)| n == m)
        .map(|c| c.0)
        .max()
        .unwrap_or(0);
    let seed = 0x6a7e_0000 + largest as u64;
    // The source is read-only and each set's indices stay below its n, so one source serves
    // every set: a set gathers from its first n elements.
    let source = upload_f32(
        ctx.device,
        &(0..largest.max(1)).map(source_value).collect::<Vec<f32>>(),
    )?;
    // The sets that read every element take their permutations from the largest one's (the
    // same entries, in the same order, as from the drawn permutation, in one pass over the
    // sets together instead of one over the largest per set).
    let drawn = permutation(largest_whole, seed);
    let mut sets: Vec<GatherSet> = Vec::with_capacity(counts.len());
    let mut larger: Option<Vec<u32>> = None;
    for &(n, m) in counts.iter().rev() {
        ctx.seeds.insert(format!("gather_index_{n}"), seed);
        let host_idx = if m < n {
            spread_sample(n, m, seed)
        } else {
            let idx = below(larger.as_ref().unwrap_or(&drawn), n);
            larger = Some(idx.clone());
            idx
        };
        let idx = upload_u32(ctx.device, &host_idx)?;
        let out = ctx.device.alloc(m * 4)?;
        sets.push(GatherSet {
            n,
            m,
            idx,
            host_idx,
            out,
        });
    }
    sets.reverse();
    let bytes = |s: &GatherSet| 4 * s.n + 8 * s.m;
    let names: Vec<String> = sets
        .iter()
        .map(|s| format!("gather_index_s/{}", bytes(s)))
        .collect();
    let past: Vec<bool> = sets.iter().map(|s| ctx.past_caches(bytes(s))).collect();
    let launch = |ctx: &BenchContext<'_>, s: &GatherSet, shift: usize| {
        let args = [
            Arg::Buf(&source),
            Arg::Buf(&s.idx),
            Arg::Buf(&s.out),
            Arg::U32(s.m as u32),
            Arg::U32(s.n as u32),
            Arg::U32(shift as u32),
            Arg::F32(ADDED),
        ];
        ctx.launch("bw_gather_index", &Launch::linear(s.m, group), &args)
    };
    // Launches so far per set: a set that reads part of `a` shifts each launch's indices.
    let mut launches = vec![0usize; sets.len()];
    let measured = ctx.measure_in_rounds_past_caches(&names, &past, |k| {
        let s = &sets[k];
        let shift = if s.m < s.n {
            launches[k] += 1;
            (launches[k] * SHIFT_STEP) % s.n
        } else {
            0
        };
        Ok(launch(ctx, s, shift)?.0)
    })?;
    let mut points = Vec::with_capacity(sets.len());
    // One host array for every set's check.
    let mut out = vec![0f32; sets.iter().map(|s| s.m).max().unwrap_or(0)];
    for ((name, m), s) in names.iter().zip(&measured).zip(&sets) {
        ctx.record(name, m);
        if s.m < s.n {
            launch(ctx, s, 0)?;
        }
        let out = &mut out[..s.m];
        ctx.device.download(&s.out, bytemuck::cast_slice_mut(out))?;
        let bad = (0..s.m).find(|&x| out[x] != source_value(s.host_idx[x] as usize) + ADDED);
        verify(
            bad.is_none(),
            &format!("bw_gather_index at n = {}, m = {}", s.n, s.m),
            || format!("element {bad:?} is not the source at its index plus {ADDED}"),
        )?;
        let Some((gbps, ci95_gbps)) = rate_of((BYTES_PER_ELEMENT * s.m) as f64, m) else {
            continue;
        };
        points.push(GatherPoint {
            elements: s.n,
            reads: Some(s.m),
            working_set_bytes: bytes(s),
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
    fn past_the_cap_a_launch_reads_a_fixed_count_and_the_gathered_array_takes_the_rest() {
        assert_eq!(elements_for(12 << 10), (1 << 10, 1 << 10));
        assert_eq!(elements_for(12 * MAX_READS), (MAX_READS, MAX_READS));
        for bytes in [12 * MAX_READS + 64, 64 << 20, 1 << 30] {
            let (n, m) = elements_for(bytes);
            assert_eq!(m, MAX_READS);
            assert!(n > m, "{bytes}");
            assert!(
                4 * n + 8 * m <= bytes && 4 * n + 8 * m + 4 > bytes,
                "{bytes}"
            );
        }
    }

    #[test]
    fn a_spread_sample_takes_one_index_from_each_stretch_in_a_random_order() {
        let (n, m) = (100_003, 1000);
        let s = spread_sample(n, m, 9);
        assert_eq!(s.len(), m);
        let stretch = n / m;
        let mut stretches: Vec<usize> = s.iter().map(|&i| i as usize / stretch).collect();
        assert!(s.iter().all(|&i| (i as usize) < m * stretch));
        assert_ne!(stretches, (0..m).collect::<Vec<_>>(), "shuffled");
        stretches.sort_unstable();
        assert_eq!(stretches, (0..m).collect::<Vec<_>>(), "one from each");
        assert_eq!(s, spread_sample(n, m, 9));
        assert_ne!(s, spread_sample(n, m, 10));
    }

    #[test]
    fn the_host_sweep_past_the_cap_reads_part_of_the_array_and_checks_it() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        let bytes = 12 * MAX_READS + (16 << 20);
        let sweep = measure_gathers(&mut ctx, &[bytes]).expect("measured, verified");
        let p = &sweep.points[0];
        assert_eq!(p.reads(), MAX_READS);
        assert_eq!(p.elements, (bytes - 8 * MAX_READS) / 4);
        assert_eq!(p.working_set_bytes, 4 * p.elements + 8 * MAX_READS);
        assert_eq!(p.gathered_bytes(), 4 * p.elements);
        assert!(p.gbps > 0.0 && p.gbps.is_finite(), "{p:?}");
    }

    #[test]
    fn a_point_written_before_the_cap_read_every_element() {
        let old = r#"{"elements": 1000, "working_set_bytes": 12000, "gbps": 1.0,
            "ci95_gbps": [1.0, 1.0], "outliers": 0}"#;
        let p: GatherPoint = serde_json::from_str(old).expect("an old file reads");
        assert_eq!((p.reads(), p.gathered_bytes()), (1000, 4000));
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
