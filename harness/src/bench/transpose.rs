//! Transposing bandwidth: the rate a j,k transpose of an n³ cube meets at each working set.
//!
//! The streaming sweep ([`super::bandwidth`]) reads and writes contiguously, and the strided
//! sweep of the serialization intervals ([`super::gaps`]) fetches one line per executor; a
//! transpose does neither. It reads along k and writes n elements apart, so its writes miss
//! a line at a time where no prefetcher follows them, and the step from one memory level to
//! the next costs it more than either sweep says: on an Intel Xeon VM a one-thread j,k
//! transpose cost 0.8 ns per element with its 8.7 MB in the last-level cache and 3.6 ns with
//! 560 MB in memory (4.4×), where one thread's streaming rate fell by 2.0× and its line rate
//! by 1.8× (suite run 51, docs/models.md §2.4). A prediction moves a transposing phase between
//! levels by this sweep's rates.
//!
//! **The sweep.** For each working set W of the streaming sweep, a cube of side
//! n ≈ (W/8)^(1/3), made odd (a power-of-two side would put every line of a column in the
//! same cache sets, a conflict the workloads' odd-sized grids avoid), is transposed by
//! `b(i, k, j) = a(i, j, k) + p`, one executor per element (a 3-D launch, as the workloads'
//! `swap_jk`); on the host the twin is one loop on the launching thread, as the workloads'
//! transposes are, so its rates are one thread's. A sample is one launch over data the
//! previous launch left warm; the working sets are measured in rounds, as the streaming
//! sweep's are. The rate counts 8 bytes per element (its read and its write), as the
//! workloads declare for their transposes. Each working set's output is checked against the
//! host after its measurement.

use serde::{Deserialize, Serialize};

use super::bandwidth::rate_of;
use super::{verify, BenchContext, BenchError};
use crate::backend::{download_f32, upload_f32, Arg, Launch};

/// One working set of the transposing sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransposePoint {
    /// The cube's side n.
    pub side: usize,
    /// Bytes of both cubes, 8·n³.
    pub working_set_bytes: usize,
    /// Median rate, GB/s (8 bytes per element over the median time of one launch).
    pub gbps: f64,
    /// Its 95 % CI.
    pub ci95_gbps: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransposeSweep {
    /// Whether every launch ran on one thread (the host's twin), so the rates are one
    /// thread's.
    pub one_thread: bool,
    /// Ascending working sets.
    pub points: Vec<TransposePoint>,
}

/// The odd cube side whose two cubes come closest to `bytes`, at least 3.
pub fn side_for(bytes: usize) -> usize {
    let n = (bytes as f64 / 8.0).cbrt().round().max(3.0) as usize;
    n | 1
}

/// Element x of the source cube: distinct over any 1021 neighbours and exact in f32, so a
/// misplaced element shows.
fn source_value(x: usize) -> f32 {
    (x % 1021) as f32
}

/// The value added on every sample (and on the check's run).
const ADDED: f32 = 1.0;

/// Measure the transposing copy at every working set of `sizes` (one cube per distinct side),
/// verify each, and return the points in ascending order.
pub fn measure_transposes(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<TransposeSweep, BenchError> {
    let mut sides: Vec<usize> = sizes.iter().map(|&b| side_for(b)).collect();
    sides.dedup();
    let group = ctx.group().max(1);
    let mut cubes = Vec::with_capacity(sides.len());
    for &n in &sides {
        let elements = n * n * n;
        let source: Vec<f32> = (0..elements).map(source_value).collect();
        let a = upload_f32(ctx.device, &source)?;
        let b = ctx.device.alloc(elements * 4)?;
        let launch = Launch {
            dims: 3,
            global: [n, n, n],
            local: [group.min(n.next_power_of_two()), 1, 1],
        };
        cubes.push((n, a, b, launch));
    }
    let names: Vec<String> = cubes
        .iter()
        .map(|(n, ..)| format!("transpose_s/{}", 8 * n * n * n))
        .collect();
    let measured = ctx.measure_in_rounds(&names, |i| {
        let (n, a, b, launch) = &cubes[i];
        let args = [
            Arg::Buf(a),
            Arg::Buf(b),
            Arg::U32(*n as u32),
            Arg::F32(ADDED),
        ];
        Ok(ctx.launch("bw_transpose", launch, &args)?.0)
    })?;
    let mut points = Vec::with_capacity(cubes.len());
    for ((name, m), (n, _, b, _)) in names.iter().zip(&measured).zip(&cubes) {
        ctx.record(name, m);
        check(ctx, *n, b)?;
        let Some((gbps, ci95_gbps)) = rate_of(8.0 * (n * n * n) as f64, m) else {
            continue;
        };
        points.push(TransposePoint {
            side: *n,
            working_set_bytes: 8 * n * n * n,
            gbps,
            ci95_gbps,
            outliers: m.summary.outliers,
        });
    }
    Ok(TransposeSweep {
        one_thread: ctx.device.info().backend == crate::backend::BackendKind::Host,
        points,
    })
}

/// The last sample's output against the host: b(i, k, j) = a(i, j, k) + 1.
fn check(ctx: &BenchContext<'_>, n: usize, b: &crate::backend::Buffer) -> Result<(), BenchError> {
    let out = download_f32(ctx.device, b, n * n * n)?;
    let bad = (0..n)
        .flat_map(|i| (0..n).flat_map(move |j| (0..n).map(move |k| (i, j, k))))
        .find(|&(i, j, k)| out[(i * n + k) * n + j] != source_value((i * n + j) * n + k) + ADDED);
    verify(bad.is_none(), &format!("transpose at n = {n}"), || {
        format!("element (i, j, k) = {bad:?} is not the source's plus {ADDED}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_odd_and_near_the_working_set() {
        assert_eq!(side_for(16 << 10), 13);
        // 8 · 103³ = 8.7 MB, ADI's window top on the Intel VM; 512 would be a power of two.
        assert_eq!(side_for(8_741_816), 103);
        assert_eq!(side_for(1 << 30), 513);
        assert_eq!(side_for(0), 3);
    }

    #[test]
    fn the_host_sweep_transposes_and_is_one_threads() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        let sweep = measure_transposes(&mut ctx, &[16 << 10, 64 << 10]).expect("measured");
        assert!(sweep.one_thread);
        assert_eq!(sweep.points.len(), 2);
        assert_eq!(sweep.points[0].side, 13);
        assert!(sweep
            .points
            .iter()
            .all(|p| p.gbps > 0.0 && p.gbps.is_finite()));
        assert!(ctx.samples.contains_key("transpose_s/17576"));
    }
}
