//! Hyperplane-sweep rate: what a wavefront walk over a cube meets at each working set.
//!
//! LU-SSOR's sweeps (NPB LU's SSOR on hyperplanes) relax the points of one hyperplane
//! i + j + k = h of an n³ grid at a time, each towards its six neighbours, the planes in
//! turn upwards (the lower sweep) and downwards (the upper). A plane's points lie one per row
//! of the grid that the plane crosses, a row apart, so the walk reads whole lines for one
//! point each and keeps them only while the next planes come back to them; its cost per point
//! follows no streaming, strided or latency sweep. On the Intel Xeon VM of suite runs 66–71
//! (2 vCPUs) the host's lu-ssor on one thread cost 2.2–2.4 times as much per point at
//! N = 636 (1 GiB) as at 159 (16 MiB) in its lower sweep and 3.1–3.6 times in its upper,
//! while one thread's copy rate fell 1.8-fold between the two; on the Intel VM of runs 48–65
//! 1.45 and 1.95 times from N = 129 to 516, at the same 2.0-fold fall of the copy rate
//! (docs/models.md §2.4, "A hyperplane sweep moves by the hyperplane sweep"). So the
//! calibration sweeps the walk itself.
//!
//! For each working set W cubes of odd sides near n ≈ (W/4)^(1/3) are relaxed plane by plane
//! by [`crate::backend::host_planes::relax_plane`], the host twin of the workloads' planes, in both
//! orders. A sample is [`GROUPS`] groups of planes spread evenly over the sweep, each
//! [`WARM_PLANES`] planes untimed (the lines the next planes reuse come in) and then
//! [`TIMED_PLANES`] timed (a sample sums the groups, so its cap on samples is the plan's over
//! [`GROUPS`]: `BenchContext::measure_summed`); the rate is 8 bytes per point timed (each point's value read and
//! written back) over the median sample. Sampled so, the VM above gave 8.1–8.5 and 11.5–12.0
//! ns per point at N = 636 (ascending, descending) where whole sweeps gave 8.0 and 12.3
//! (2026-11-28); with two warm planes, 12–13 ascending. W's rate is the median of three
//! sides' (bytes ×0.92, ×1, ×1.08, as [`super::stencil::SIDE_STEPS`]). The sweep runs where
//! the workloads' one-thread twins run: on the host's launching thread alone
//! ([`crate::calibration::OneThread`]). Each cube is checked before it is timed: its middle
//! plane relaxed by one launch, every point compared with the update computed here; both
//! orders then time that cube.

use serde::{Deserialize, Serialize};

use super::bandwidth::rate_of;
use super::stencil::SIDE_STEPS;
use super::{verify_values, BenchContext, BenchError};
use crate::backend::host_planes::{plane_row, relax_point};
use crate::backend::{download_f32, upload_f32, Arg, Buffer, Launch};
use crate::fit::window::PlaneOrder;

/// The relaxation factor ω of the sweep's updates (LU-SSOR's).
const OMEGA: f32 = 1.2;

/// The weights of an update: ω/6 on the neighbours' sum, 1 − ω on the point itself.
fn weights() -> (f32, f32) {
    (OMEGA / 6.0, 1.0 - OMEGA)
}

/// Groups of planes a sample times, spread evenly from the sweep's first plane to its last.
pub const GROUPS: usize = 4;
/// Planes relaxed untimed at the head of each group.
pub const WARM_PLANES: usize = 8;
/// Planes timed in each group.
pub const TIMED_PLANES: usize = 8;

/// One working set of the hyperplane sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HyperplanePoint {
    /// The middle cube's side n.
    pub side: usize,
    /// The sides measured ([`cube_sides`]).
    pub sides: Vec<usize>,
    /// Bytes of the middle cube, 4·n³.
    pub working_set_bytes: usize,
    /// The median of the sides' rates with the planes visited upwards, GB/s (8 bytes per
    /// point timed over the median sample).
    pub ascending_gbps: f64,
    /// From the lowest end of the sides' 95 % CIs to the highest, upwards.
    pub ascending_ci95_gbps: [f64; 2],
    /// As [`Self::ascending_gbps`], the planes visited downwards.
    pub descending_gbps: f64,
    /// As [`Self::ascending_ci95_gbps`], downwards.
    pub descending_ci95_gbps: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept), over the sides and orders.
    pub outliers: usize,
}

impl HyperplanePoint {
    /// The rate in `order`, GB/s.
    pub fn gbps(&self, order: PlaneOrder) -> f64 {
        match order {
            PlaneOrder::Ascending => self.ascending_gbps,
            PlaneOrder::Descending => self.descending_gbps,
        }
    }

    /// The rate's 95 % interval in `order`, GB/s.
    pub fn ci95_gbps(&self, order: PlaneOrder) -> [f64; 2] {
        match order {
            PlaneOrder::Ascending => self.ascending_ci95_gbps,
            PlaneOrder::Descending => self.descending_ci95_gbps,
        }
    }
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HyperplaneSweep {
    /// Ascending working sets.
    pub points: Vec<HyperplanePoint>,
}

/// The odd side whose cube of floats comes closest to `bytes`, at least 5.
pub fn cube_side_for(bytes: usize) -> usize {
    ((bytes as f64 / 4.0).cbrt().round().max(5.0) as usize) | 1
}

/// The three odd sides measured at a working set of `bytes`: the middle one
/// ([`cube_side_for`]) and one either side, as far as the stencil sweep's ±8 % in bytes
/// ([`SIDE_STEPS`]) moves a cube's side (±2.6 %), and at least 2; none below 5.
pub fn cube_sides(bytes: usize) -> Vec<usize> {
    let n = cube_side_for(bytes);
    let spread = SIDE_STEPS[2].cbrt() - 1.0;
    let step = 2 * ((n as f64 * spread / 2.0).round() as usize).max(1);
    [n.saturating_sub(step), n, n + step]
        .into_iter()
        .filter(|&side| side >= 5)
        .collect()
}

/// The interior points of plane h of an n³ grid.
fn plane_points(n: usize, h: usize) -> usize {
    (1..n - 1)
        .filter_map(|j| plane_row(n, h, j))
        .map(|(lo, hi)| hi - lo + 1)
        .sum()
}

/// The planes one sample relaxes, in `order`: per group, the untimed planes and the timed
/// ones ([`GROUPS`], [`WARM_PLANES`], [`TIMED_PLANES`]); a sweep with no more planes than
/// the groups hold is one group, every plane timed.
pub fn plane_groups(n: usize, order: PlaneOrder) -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut planes: Vec<usize> = (3..=3 * (n - 2)).collect();
    if order == PlaneOrder::Descending {
        planes.reverse();
    }
    let per = WARM_PLANES + TIMED_PLANES;
    if planes.len() <= GROUPS * per {
        return vec![(Vec::new(), planes)];
    }
    (0..GROUPS)
        .map(|g| {
            let start = (planes.len() - per) * g / (GROUPS - 1);
            let warm = planes[start..start + WARM_PLANES].to_vec();
            let timed = planes[start + WARM_PLANES..start + per].to_vec();
            (warm, timed)
        })
        .collect()
}

/// The points one sample times on a cube of side n in `order` ([`plane_groups`]).
pub fn timed_points(n: usize, order: PlaneOrder) -> usize {
    plane_groups(n, order)
        .iter()
        .flat_map(|g| &g.1)
        .map(|&h| plane_points(n, h))
        .sum()
}

/// The key of a cube's raw samples (seconds per sample) in the calibration's samples:
/// `hyperplane_s/<order>/<bytes>`.
pub fn sample_key(n: usize, order: PlaneOrder) -> String {
    let order = match order {
        PlaneOrder::Ascending => "ascending",
        PlaneOrder::Descending => "descending",
    };
    format!("hyperplane_s/{order}/{}", 4 * n * n * n)
}

/// Point x of the starting cube: a quadratic in x modulo 1021, exact in f32, so that every
/// update moves its point.
fn source_value(x: usize) -> f32 {
    ((x.wrapping_mul(x).wrapping_add(3 * x)) % 1021) as f32
}

/// Measure the hyperplane walk at every working set of `sizes` (three cubes each, both
/// orders), verify each cube, and return the points in ascending order.
pub fn measure_hyperplanes(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
) -> Result<HyperplaneSweep, BenchError> {
    let mut wanted = sizes.to_vec();
    wanted.sort_unstable();
    wanted.dedup_by_key(|&mut b| cube_side_for(b));
    let mut points = Vec::with_capacity(wanted.len());
    for bytes in wanted {
        let mut rates = [Vec::new(), Vec::new()];
        let mut sides = Vec::with_capacity(SIDE_STEPS.len());
        let mut outliers = 0;
        let measured_sides = if ctx.quick {
            vec![cube_side_for(bytes)]
        } else {
            cube_sides(bytes)
        };
        for n in measured_sides {
            sides.push(n);
            let cube = checked_cube(ctx, n)?;
            for (slot, order) in [PlaneOrder::Ascending, PlaneOrder::Descending]
                .into_iter()
                .enumerate()
            {
                let (m, timed) = measure_cube(ctx, &cube, n, order)?;
                outliers += m.summary.outliers;
                if let Some(rate) = rate_of(8.0 * timed as f64, &m) {
                    rates[slot].push(rate);
                }
            }
        }
        if rates.iter().any(Vec::is_empty) {
            continue;
        }
        let [ascending, descending] = rates.map(|mut r| {
            r.sort_by(|a, b| a.0.total_cmp(&b.0));
            let lo = r.iter().map(|x| x.1[0]).fold(f64::INFINITY, f64::min);
            let hi = r.iter().map(|x| x.1[1]).fold(0.0, f64::max);
            (r[r.len() / 2].0, [lo, hi])
        });
        let side = cube_side_for(bytes);
        points.push(HyperplanePoint {
            side,
            sides,
            working_set_bytes: 4 * side * side * side,
            ascending_gbps: ascending.0,
            ascending_ci95_gbps: ascending.1,
            descending_gbps: descending.0,
            descending_ci95_gbps: descending.1,
            outliers,
        });
    }
    Ok(HyperplaneSweep { points })
}

/// Cube `a` of side n walked in `order`: measured (its samples kept under
/// `hyperplane_s/<order>/<bytes>`), and the points one sample times. The walk's cost does not
/// depend on the values it finds, so both orders time the one checked cube.
fn measure_cube(
    ctx: &mut BenchContext<'_>,
    a: &Buffer,
    n: usize,
    order: PlaneOrder,
) -> Result<(super::Measured, usize), BenchError> {
    let launch = plane_launch(ctx, n);
    let groups = plane_groups(n, order);
    let timed = timed_points(n, order);
    let name = sample_key(n, order);
    let m = ctx.measure_summed(&name, GROUPS, || {
        let mut seconds = 0.0;
        for (warm, timed) in &groups {
            for &h in warm {
                ctx.launch("bw_plane", &launch, &args(a, n, h))?;
            }
            for &h in timed {
                seconds += ctx.launch("bw_plane", &launch, &args(a, n, h))?.0;
            }
        }
        Ok(seconds)
    })?;
    ctx.record(&name, &m);
    Ok((m, timed))
}

/// The kernel's arguments: plane h of cube `a` of side n.
fn args(a: &Buffer, n: usize, h: usize) -> [Arg<'_>; 5] {
    let (w6, keep) = weights();
    [
        Arg::Buf(a),
        Arg::U32(n as u32),
        Arg::U32(h as u32),
        Arg::F32(w6),
        Arg::F32(keep),
    ]
}

/// The launch over one plane of a cube of side n: a work item per (i, j) of the interior.
fn plane_launch(ctx: &BenchContext<'_>, n: usize) -> Launch {
    Launch::tiles2(n - 2, n - 2, ctx.group().max(1))
}

/// The middle plane of a cube of side n.
fn middle_plane(n: usize) -> usize {
    3 * (n - 2) / 2 + 1
}

/// The starting cube of side n: [`source_value`] at every point.
fn starting_cube(n: usize) -> Vec<f32> {
    (0..n * n * n).map(source_value).collect()
}

/// Relax the middle plane of `cube` (side n) here, point by point in lexicographic order
/// (the plane's points read only the planes either side, which it leaves alone).
fn relax_middle_plane(cube: &mut [f32], n: usize) {
    let (w6, keep) = weights();
    let h = middle_plane(n);
    for i in 1..n - 1 {
        for j in 1..n - 1 {
            if let Some(k) = h.checked_sub(i + j).filter(|k| (1..n - 1).contains(k)) {
                relax_point(cube, n, (i * n + j) * n + k, w6, keep);
            }
        }
    }
}

/// The starting cube of side n uploaded, its middle plane relaxed by one launch, and every
/// point checked against the update computed here, within a part in 10⁵ (a device may
/// contract the update into fused multiply-adds); the cube is then the one the sweep times.
/// One upload, one launch and one download per cube: the check costs the sweep's largest
/// working sets a copy of the cube, not a second cube built from scratch.
fn checked_cube(ctx: &BenchContext<'_>, n: usize) -> Result<Buffer, BenchError> {
    let mut want = starting_cube(n);
    let a = upload_f32(ctx.device, &want)?;
    ctx.launch(
        "bw_plane",
        &plane_launch(ctx, n),
        &args(&a, n, middle_plane(n)),
    )?;
    let got = download_f32(ctx.device, &a, n * n * n)?;
    relax_middle_plane(&mut want, n);
    verify_values(&format!("bw_plane at n = {n}"), &got, &want, |x| {
        format!("({}, {}, {})", x / (n * n), x / n % n, x % n)
    })?;
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_odd_and_near_the_working_set() {
        // 4 · 161³ ≈ 16.7 MB; 4 · 645³ ≈ 1.07 GB.
        assert_eq!(cube_side_for(16 << 20), 161);
        assert_eq!(cube_side_for(1 << 30), 645);
        assert_eq!(cube_side_for(0), 5);
        assert!((0..100)
            .map(|k| cube_side_for(10_000 * k))
            .all(|n| n % 2 == 1));
        // Three distinct odd sides, ±2.6 % about the middle one, at least 2 apart.
        assert_eq!(cube_sides(1 << 30), [629, 645, 661]);
        assert_eq!(cube_sides(64 << 10), [23, 25, 27]);
        assert_eq!(cube_sides(0), [5, 7]);
    }

    #[test]
    fn the_groups_spread_over_the_sweep_in_its_order_and_time_the_planes_after_their_warm_up() {
        // n = 101: planes 3..=297, 295 of them, more than the groups hold.
        let n = 101;
        let up = plane_groups(n, PlaneOrder::Ascending);
        assert_eq!(up.len(), GROUPS);
        assert_eq!(up[0].0[0], 3, "the first group starts at the first plane");
        assert_eq!(
            *up[GROUPS - 1].1.last().unwrap(),
            297,
            "the last ends at the last"
        );
        for (warm, timed) in &up {
            assert_eq!((warm.len(), timed.len()), (WARM_PLANES, TIMED_PLANES));
            assert_eq!(
                timed[0],
                warm[WARM_PLANES - 1] + 1,
                "the timed planes follow"
            );
        }
        let down = plane_groups(n, PlaneOrder::Descending);
        assert_eq!(down[0].0[0], 297, "downwards from the last plane");
        assert!(down[0].1.windows(2).all(|w| w[1] + 1 == w[0]));
        // A small cube is one group, every plane timed, in order.
        let small = plane_groups(9, PlaneOrder::Descending);
        assert_eq!(small, vec![(Vec::new(), (3..=21).rev().collect())]);
    }

    #[test]
    fn the_planes_points_add_up_to_the_interior() {
        for n in [5, 9, 12] {
            let all: usize = (3..=3 * (n - 2)).map(|h| plane_points(n, h)).sum();
            assert_eq!(all, (n - 2).pow(3), "n = {n}");
        }
    }

    #[test]
    fn the_check_expects_the_middle_plane_moved_and_every_other_point_kept() {
        let n = 9;
        let before = starting_cube(n);
        let mut after = before.clone();
        relax_middle_plane(&mut after, n);
        let h = middle_plane(n);
        let mut moved = 0;
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let p = (i * n + j) * n + k;
                    let inside = [i, j, k].iter().all(|c| (1..n - 1).contains(c));
                    if !(inside && i + j + k == h) {
                        assert_eq!(after[p], before[p], "({i}, {j}, {k}) is off the plane");
                    } else if after[p] != before[p] {
                        moved += 1;
                    }
                }
            }
        }
        assert_eq!(moved, plane_points(n, h), "every point of plane {h} moved");
    }

    #[test]
    fn the_host_sweep_measures_both_orders_checks_each_cube_and_keeps_three_sides() {
        let device = crate::backend::host::HostDevice::new();
        // The quick plan's samples, the full calibration's sides (`--quick` measures the
        // middle one alone).
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), false)
            .expect("the host compiles the microbenchmarks");
        let sweep =
            measure_hyperplanes(&mut ctx, &[1 << 20, 64 << 10]).expect("measured, verified");
        assert_eq!(sweep.points.len(), 2);
        assert_eq!(sweep.points[0].side, 25, "ascending: {:?}", sweep.points);
        for p in &sweep.points {
            assert_eq!(p.sides.len(), 3, "{p:?}");
            assert!(p.sides.contains(&p.side));
            assert_eq!(p.working_set_bytes, 4 * p.side.pow(3));
            for order in [PlaneOrder::Ascending, PlaneOrder::Descending] {
                assert!(p.gbps(order) > 0.0 && p.gbps(order).is_finite(), "{p:?}");
            }
            assert!(p.ascending_ci95_gbps[0] <= p.ascending_gbps);
            assert!(p.descending_gbps <= p.descending_ci95_gbps[1]);
            for n in &p.sides {
                for order in ["ascending", "descending"] {
                    let key = format!("hyperplane_s/{order}/{}", 4 * n.pow(3));
                    assert!(ctx.samples.contains_key(&key), "{key}");
                }
            }
        }
    }

    #[test]
    fn a_quick_sweep_measures_the_middle_cube_alone() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        let sweep = measure_hyperplanes(&mut ctx, &[64 << 10]).expect("measured, verified");
        assert_eq!(sweep.points[0].sides, [sweep.points[0].side]);
    }
}
