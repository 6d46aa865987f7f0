//! Row-stencil rate: what an in-place five-point sweep meets at each working set.
//!
//! The streaming sweeps ([`super::bandwidth`]) copy one array into another, and their rates
//! fall monotonically from one memory level to the next. A sweep that updates a grid in place
//! from its neighbours (SOR, red-black or by diagonals) reads three rows and writes one back
//! where it read it, and on some machines its cost per byte does not follow the levels: on
//! the Intel Xeon VM of suite runs 66–69 (2 vCPUs, a 480 MiB L3 reported) the host's red-black
//! SOR on one thread cost about 1.7× as much per cell with its grid at 21–64 MiB as at 16 MiB
//! or in memory beyond (3.6, 5.9 and 3.4 ns per cell for two colours at N = 1983, 2358–3967
//! and 15,868, 2026-11-28), a band in which the suite's windows lay, while one thread's copy
//! and triad sweeps fell monotonically over the same sizes (docs/models.md §2.4, "A stencil
//! moves by the stencil sweep"). So the calibration sweeps the stencil itself.
//!
//! For each working set W square grids of odd sides near n ≈ (W/4)^(1/2) are updated by one
//! colour of red-black SOR ([`stencil_point`] at the points with (i + j) % 2 = 0), the
//! workloads' kernel less nothing: the maximum change is reduced as theirs is. W's rate is the
//! median of three sides' ([`SIDE_STEPS`]): one side near a power of two can be a third faster
//! than its neighbours. It counts 8 bytes per interior cell (every line of the grid is read and
//! written back, as the workloads declare for their colours). The working sets are the
//! streaming sweep's (a step of 2): the band above still holds one of them (32 MiB), and
//! points halfway between them from 4 MiB up, measured until 2026-11-30, cost a third of the
//! shaped sweeps' time and moved no stored suite beyond its noise (docs/decisions.md). The
//! sweep runs where the workloads' one-thread
//! twins run: on the host's launching thread alone ([`crate::calibration::OneThread`]). A sample is one launch over
//! the grid the previous launch left. The working sets are measured one after the other, each
//! with all its samples together, not in rounds as the streaming sweep's are: a grid visited
//! after another's starts from the caches the other filled, and a cached grid pays for it (on
//! the same VM a grid of 11 MiB cost 1.41 ns per cell and colour measured in rounds with
//! grids of 8, 16 and 22 MiB, 0.74 ns alone; the workloads' red-black SOR 0.85 ns at N =
//! 1723). Each grid is checked before it is timed: one launch over the starting grid, every
//! point compared with the update computed here; the warm-up launches then bring it back
//! into the caches the check's copies evicted.

use serde::{Deserialize, Serialize};

use super::bandwidth::rate_of;
use super::kernels::stencil_point;
use super::{verify_values, BenchContext, BenchError};
use crate::backend::{download_f32, upload_f32, upload_u32, Arg, Buffer, Launch};

/// The relaxation factor of the sweep's updates (SOR's ω, as the workloads use it).
const OMEGA: f32 = 1.5;

/// One working set of the stencil sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StencilPoint {
    /// The middle grid's side n.
    pub side: usize,
    /// The sides measured ([`SIDE_STEPS`]).
    pub sides: Vec<usize>,
    /// Bytes of the middle grid, 4·n².
    pub working_set_bytes: usize,
    /// The median of the sides' rates, GB/s (each 8 bytes per interior cell over the median
    /// time of one launch).
    pub gbps: f64,
    /// From the lowest end of the sides' 95 % CIs to the highest: how far the rate moves
    /// with the grid's side as well as between samples.
    pub ci95_gbps: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept), over the sides.
    pub outliers: usize,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StencilSweep {
    /// Ascending working sets.
    pub points: Vec<StencilPoint>,
}

/// The odd side whose grid of floats comes closest to `bytes`, at least 5.
pub fn side_for(bytes: usize) -> usize {
    ((bytes as f64 / 4.0).sqrt().round().max(5.0) as usize) | 1
}

/// Point x of the starting grid: a quadratic in x modulo 1021, exact in f32, so that the
/// update moves every point (a linear ramp would be its own fixed point, and a check of a
/// kernel that did nothing would pass).
fn source_value(x: usize) -> f32 {
    ((x * x + 3 * x) % 1021) as f32
}

/// The bytes one launch is counted as moving: 8 per interior cell.
fn bytes_per_launch(n: usize) -> f64 {
    8.0 * ((n - 2) * (n - 2)) as f64
}

/// The sides measured at one working set, relative to the middle one's bytes: a side near a
/// power of two updates faster than its neighbours (on the Intel VM above, with the grid in
/// memory, 0.86–0.87 ns per cell and colour at n = 16,353 and 16,385, 1.29–1.37 ns at every
/// other side from 16,029 to 16,513; the doubling working sets put every other middle side
/// there), so each working set's rate is the median of three sides' (bytes ×0.92, ×1, ×1.08).
pub const SIDE_STEPS: [f64; 3] = [0.92, 1.0, 1.08];

/// The sides' steps a sweep measures: [`SIDE_STEPS`], or with `--quick` the middle side
/// alone (a first look: a third of the grids, each working set's rate from one side, which
/// may sit on a power of two).
pub fn side_steps(quick: bool) -> &'static [f64] {
    if quick {
        &SIDE_STEPS[1..2]
    } else {
        &SIDE_STEPS
    }
}

/// Measure the row stencil at every working set of `sizes` (three grids each,
/// [`SIDE_STEPS`]; one with `--quick`), verify each grid, and return the points in ascending order.
pub fn measure_stencil(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<StencilSweep, BenchError> {
    let mut wanted = sizes.to_vec();
    wanted.sort_unstable();
    wanted.dedup_by_key(|&mut b| side_for(b));
    let mut points = Vec::with_capacity(wanted.len());
    for bytes in wanted {
        let mut rates = Vec::with_capacity(SIDE_STEPS.len());
        let mut sides = Vec::with_capacity(SIDE_STEPS.len());
        let mut outliers = 0;
        for &step in side_steps(ctx.quick) {
            let n = side_for((bytes as f64 * step).round() as usize);
            if sides.contains(&n) {
                continue;
            }
            let m = measure_side(ctx, n)?;
            outliers += m.summary.outliers;
            sides.push(n);
            if let Some(rate) = rate_of(bytes_per_launch(n), &m) {
                rates.push(rate);
            }
        }
        if rates.is_empty() {
            continue;
        }
        rates.sort_by(|a, b| a.0.total_cmp(&b.0));
        let side = side_for(bytes);
        points.push(StencilPoint {
            side,
            sides,
            working_set_bytes: 4 * side * side,
            gbps: rates[rates.len() / 2].0,
            ci95_gbps: [
                rates.iter().map(|r| r.1[0]).fold(f64::INFINITY, f64::min),
                rates.iter().map(|r| r.1[1]).fold(0.0, f64::max),
            ],
            outliers,
        });
    }
    Ok(StencilSweep { points })
}

/// One grid of side n: checked ([`checked_grid`]), then measured on that grid (its samples
/// kept under `stencil_s/<bytes>`; the colour's cost does not depend on the values it finds).
fn measure_side(ctx: &mut BenchContext<'_>, n: usize) -> Result<super::Measured, BenchError> {
    let change = upload_u32(ctx.device, &[0])?;
    let launch = Launch::tiles2(n - 2, n - 2, ctx.group().max(1));
    let a = checked_grid(ctx, n, &change, &launch)?;
    let name = format!("stencil_s/{}", 4 * n * n);
    let m = ctx.measure(&name, || {
        Ok(ctx.launch("bw_stencil", &launch, &args(&a, n, &change))?.0)
    })?;
    drop(a);
    ctx.record(&name, &m);
    Ok(m)
}

/// The kernel's arguments: the red colour (parity 0) of grid `a` of side n.
fn args<'b>(a: &'b Buffer, n: usize, change: &'b Buffer) -> [Arg<'b>; 5] {
    [
        Arg::Buf(a),
        Arg::U32(n as u32),
        Arg::U32(0),
        Arg::F32(OMEGA),
        Arg::Buf(change),
    ]
}

/// The starting grid of side n: [`source_value`] at every cell.
fn starting_grid(n: usize) -> Vec<f32> {
    (0..n * n).map(source_value).collect()
}

/// Relax the red colour of `grid` (side n) here.
fn relax_red(grid: &mut [f32], n: usize) {
    for i in 1..n - 1 {
        for j in 1..n - 1 {
            if (i + j) % 2 == 0 {
                let p = i * n + j;
                // Red points read only black neighbours, which the colour leaves alone.
                grid[p] = stencil_point(
                    grid[p],
                    grid[p - n],
                    grid[p + n],
                    grid[p - 1],
                    grid[p + 1],
                    OMEGA,
                );
            }
        }
    }
}

/// The starting grid of side n uploaded, its red colour relaxed by one launch, and every cell
/// checked against the host's update, within a part in 10⁵ (a device may contract the update
/// into fused multiply-adds); the grid is then the one the sweep times. One upload, one launch
/// and one download per grid.
fn checked_grid(
    ctx: &BenchContext<'_>,
    n: usize,
    change: &Buffer,
    launch: &Launch,
) -> Result<Buffer, BenchError> {
    let mut want = starting_grid(n);
    let a = upload_f32(ctx.device, &want)?;
    ctx.launch("bw_stencil", launch, &args(&a, n, change))?;
    let got = download_f32(ctx.device, &a, n * n)?;
    relax_red(&mut want, n);
    verify_values(&format!("bw_stencil at n = {n}"), &got, &want, |x| {
        format!("({}, {})", x / n, x % n)
    })?;
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_odd_and_near_the_working_set() {
        // 4 · 2049² ≈ 16.8 MB; 2048 would be a power of two.
        assert_eq!(side_for(16 << 20), 2049);
        assert_eq!(side_for(1 << 30), 16385);
        assert_eq!(side_for(0), 5);
        assert!((0..100).map(|k| side_for(1000 * k)).all(|n| n % 2 == 1));
    }

    #[test]
    fn the_host_sweep_updates_in_place_checks_each_grid_and_keeps_three_sides() {
        let device = crate::backend::host::HostDevice::new();
        // The quick plan's samples, the full calibration's sides.
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), false)
            .expect("the host compiles the microbenchmarks");
        let sweep = measure_stencil(&mut ctx, &[64 << 10, 16 << 10]).expect("measured, verified");
        assert_eq!(sweep.points.len(), 2);
        assert_eq!(sweep.points[0].side, 65, "ascending: {:?}", sweep.points);
        for p in &sweep.points {
            assert_eq!(p.sides.len(), 3, "{p:?}");
            assert!(p.sides.contains(&p.side));
            assert_eq!(p.working_set_bytes, 4 * p.side * p.side);
            assert!(p.gbps > 0.0 && p.gbps.is_finite());
            assert!(
                p.ci95_gbps[0] <= p.gbps && p.gbps <= p.ci95_gbps[1],
                "{p:?}"
            );
            for n in &p.sides {
                assert!(ctx
                    .samples
                    .contains_key(&format!("stencil_s/{}", 4 * n * n)));
            }
        }
    }

    #[test]
    fn a_quick_sweep_measures_the_middle_side_at_the_streaming_sizes_alone() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        let sweep = measure_stencil(&mut ctx, &[64 << 10]).expect("measured, verified");
        assert_eq!(sweep.points[0].sides, [sweep.points[0].side]);
        assert_eq!(side_steps(false), SIDE_STEPS);
    }

    #[test]
    fn the_check_expects_every_red_point_moved_and_every_black_one_kept() {
        let n = 9;
        let before = starting_grid(n);
        let mut after = before.clone();
        relax_red(&mut after, n);
        let mut moved = 0;
        for i in 0..n {
            for j in 0..n {
                let p = i * n + j;
                let red = (1..n - 1).contains(&i) && (1..n - 1).contains(&j) && (i + j) % 2 == 0;
                if !red {
                    assert_eq!(after[p], before[p], "({i}, {j}) is not red");
                } else if after[p] != before[p] {
                    moved += 1;
                }
            }
        }
        assert!(moved >= 20, "{moved} of 25 red points moved");
        // Point (1, 1) of n = 9: 1.5 · 0.25 · (up + down + left + right) − 0.5 · itself.
        let v = |x: usize| source_value(x);
        assert_eq!(
            after[n + 1],
            0.375 * (((v(1) + v(2 * n + 1)) + v(n)) + v(n + 2)) - 0.5 * v(n + 1)
        );
    }
}
