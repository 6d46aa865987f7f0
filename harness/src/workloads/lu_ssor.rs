//! `lu-ssor`: the SSOR sweeps of NPB LU over 3-D hyperplanes i + j + k = const
//! (docs/models.md §4), scalar.
//!
//! Each point relaxes towards the mean of its six neighbours,
//! `a = ω/6·Σ neighbours + (1 − ω)·a`; the lower sweep visits the planes upwards (so the
//! i−1, j−1, k−1 neighbours are new), the upper sweep downwards. Every point of a plane is
//! independent: one launch per plane, 2·(3n − 8) launches per iteration. How it differs from
//! NPB LU: NPB relaxes a 5-component state with 5×5 block matrices (blts/buts) and forms the
//! right-hand side (rhs) and the Jacobians each iteration; here the unknown is a scalar and
//! the matrix the 7-point Laplacian, so the sweeps' dependency structure and launch pattern
//! are LU's, the arithmetic per point is ~1/25 of it.

use super::session::{compare, Session};
use super::{check_cube, finish, Access, RunResult, Workload, WorkloadError};
use crate::backend::host_planes::relax_point as relax;
use crate::backend::{Arg, Device};
use crate::fit::window::PlaneOrder;

/// The relaxation factor ω.
pub const OMEGA: f32 = 1.2;
/// Agreement with the host, relative to the largest value (device compilers may fuse).
pub const TOLERANCE: f64 = 1e-4;

fn weights() -> (f32, f32) {
    (OMEGA / 6.0, 1.0 - OMEGA)
}

/// Lower then upper sweep in lexicographic order on the host: the reference.
pub fn reference(n: usize, iterations: usize) -> Vec<f32> {
    let mut a = super::grid3d::initial(n);
    let (w6, keep) = weights();
    let interior = || {
        (1..n - 1).flat_map(move |i| {
            (1..n - 1).flat_map(move |j| (1..n - 1).map(move |k| (i * n + j) * n + k))
        })
    };
    for _ in 0..iterations {
        for p in interior().collect::<Vec<_>>() {
            relax(&mut a, n, p, w6, keep);
        }
        for p in interior().collect::<Vec<_>>().into_iter().rev() {
            relax(&mut a, n, p, w6, keep);
        }
    }
    a
}

/// The floating-point operations of one plane point: five adds of the six neighbours, two
/// multiplies and the add of the two.
const PLANE_POINT_FLOPS: u64 = 8;

/// The interior points (i, j, k in 1..n − 1) of the plane i + j + k = h.
fn plane_points(n: usize, h: usize) -> u64 {
    let m = n.saturating_sub(2);
    // (j, k) in 1..=m with j + k = s: s − 1 pairs up to m + 1, 2m + 1 − s beyond.
    let pairs = |s: usize| s.saturating_sub(1).min((2 * m + 1).saturating_sub(s)) as u64;
    (1..=m.min(h)).map(|i| pairs(h - i)).sum()
}

/// LU-style SSOR on hyperplanes.
#[derive(Debug, Clone, Copy)]
pub struct LuSsor;

impl Workload for LuSsor {
    fn name(&self) -> &str {
        "lu-ssor"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        super::grid_bytes(1, size, 3, 0)
    }

    /// Hyperplane walks: the lower sweep visits the planes upwards, the upper downwards.
    fn access_patterns(&self) -> Vec<(&str, Access)> {
        vec![
            ("ssor lower", Access::Hyperplane(PlaneOrder::Ascending)),
            ("ssor upper", Access::Hyperplane(PlaneOrder::Descending)),
        ]
    }

    /// The mean hyperplane: (n − 2)³ points over 3n − 8 planes.
    fn parallelism(&self, size: usize) -> Option<u64> {
        let inner = size.saturating_sub(2) as u64;
        Some(inner.pow(3) / (3 * size as u64).saturating_sub(8).max(1))
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        check_cube(self, device, size, 3)?;
        let n = size;
        let mut s = Session::new(device, &super::grid3d::program())?;
        let a = s.upload_f32(&super::grid3d::initial(n))?;
        let launch = s.grid2(n - 2, n - 2);
        let (w6, keep) = weights();
        let planes: Vec<usize> = (3..=3 * (n - 2)).collect();
        for _ in 0..iterations {
            for (phase, order) in [("ssor lower", false), ("ssor upper", true)] {
                let ordered: Box<dyn Iterator<Item = &usize>> = if order {
                    Box::new(planes.iter().rev())
                } else {
                    Box::new(planes.iter())
                };
                for &h in ordered {
                    s.launch_declared(
                        phase,
                        "ssor_plane",
                        &launch,
                        &[
                            Arg::Buf(&a),
                            Arg::U32(n as u32),
                            Arg::U32(h as u32),
                            Arg::F32(w6),
                            Arg::F32(keep),
                        ],
                        None,
                        Some(PLANE_POINT_FLOPS * plane_points(n, h)),
                    )?;
                }
            }
        }
        let got = s.download_f32(&a, n * n * n)?;
        let verification = verify.then(|| compare(&got, &reference(n, iterations), TOLERANCE));
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_planes_hold_every_interior_point_once() {
        for n in [3usize, 4, 7, 12] {
            let m = (n - 2) as u64;
            let counted: u64 = (3..=3 * (n - 2)).map(|h| plane_points(n, h)).sum();
            assert_eq!(counted, m * m * m, "n = {n}");
            // Brute force for one plane.
            let h = (3 * (n - 2) + 3) / 2;
            let brute = (1..n - 1)
                .flat_map(|i| (1..n - 1).flat_map(move |j| (1..n - 1).map(move |k| i + j + k)))
                .filter(|&s| s == h)
                .count() as u64;
            assert_eq!(plane_points(n, h), brute, "n = {n}, h = {h}");
        }
        assert_eq!(plane_points(7, 2), 0);
    }
    use crate::backend::host::HostDevice;
    use crate::backend::{download_f32, upload_f32, Launch};
    use crate::workloads::grid3d::{initial, program};

    #[test]
    fn the_tiled_plane_twin_gives_the_lexicographic_sweeps_bit_for_bit() {
        // The host twin walks each plane in tiles of rows (workloads/grid3d.rs); the plane's
        // points are independent, so any order must give the reference's numbers exactly.
        // n = 13: planes whose rows start at k = 1 and planes whose rows start further in,
        // and tiles cut short by the grid's last rows.
        let n = 13;
        let dev = HostDevice::new();
        let program = dev.compile(&program()).unwrap();
        let a = upload_f32(&dev, &initial(n)).unwrap();
        let (w6, keep) = weights();
        let planes: Vec<usize> = (3..=3 * (n - 2)).collect();
        for h in planes.iter().chain(planes.iter().rev()) {
            let args = [
                Arg::Buf(&a),
                Arg::U32(n as u32),
                Arg::U32(*h as u32),
                Arg::F32(w6),
                Arg::F32(keep),
            ];
            dev.launch(&program, "ssor_plane", &Launch::single(), &args)
                .unwrap();
        }
        let got = download_f32(&dev, &a, n * n * n).unwrap();
        let want = reference(n, 1);
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want));
    }
}
