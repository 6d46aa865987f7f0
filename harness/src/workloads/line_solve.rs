//! `line-solve`: BT/SP-style line solves (docs/models.md §4): per iteration a tridiagonal solve
//! (−1, 4, −1) by the Thomas algorithm along every line of the n³ grid, along i, then j, then
//! k, one executor per line, in place.
//!
//! How it differs from NPB BT and SP: they solve block-tridiagonal (BT: 5×5 blocks) or
//! scalar pentadiagonal (SP) systems whose coefficients change per point; here the
//! coefficients are constant, so the pivots are computed once on the host and shared by all
//! lines. The access pattern is theirs: in the `plain` layout the k lines are strided; the
//! `reordered` layout swaps the j and k axes around the k solve, as for ADI.

use super::grid3d::{line_patterns, solve_all};
use super::session::{compare, Session};
use super::{check_cube, finish, Access, Layout, RunResult, Workload, WorkloadError};
use crate::backend::{Arg, Buffer, Device};

/// Agreement with the host, relative to the largest value.
pub const TOLERANCE: f64 = 1e-5;

/// The pivots' reciprocals: m_0 = 4, m_t = 4 − 1/m_{t−1}.
pub fn inverse_pivots(n: usize) -> Vec<f32> {
    let mut inv = Vec::with_capacity(n);
    let mut m = 4.0f32;
    for _ in 0..n {
        let r = 1.0 / m;
        inv.push(r);
        m = 4.0 - r;
    }
    inv
}

/// The three solves per iteration on the host: the reference.
pub fn reference(n: usize, iterations: usize) -> Vec<f32> {
    let mut a = super::grid3d::initial(n);
    let inv = inverse_pivots(n);
    for _ in 0..iterations {
        solve_all(&mut a, &inv, [n * n, 1, n]);
        solve_all(&mut a, &inv, [n, 1, n * n]);
        solve_all(&mut a, &inv, [1, n, n * n]);
    }
    a
}

/// Line solves along each axis, plain or reordered.
#[derive(Debug, Clone, Copy)]
pub struct LineSolve(pub Layout);

impl Workload for LineSolve {
    /// The three solves, and in the `reordered` layout the transposes too (as for ADI).
    fn access_patterns(&self) -> Vec<(&str, Access)> {
        line_patterns(["solve i", "solve j", "solve k"], self.0)
    }

    fn name(&self) -> &str {
        "line-solve"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        let copies = if self.0 == Layout::Reordered { 2 } else { 1 };
        super::grid_bytes(copies, size, 3, (size as u64).saturating_mul(4))
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        Some((size * size) as u64)
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        check_cube(self, device, size, 2)?;
        let n = size;
        let mut s = Session::new(device, &super::grid3d::program())?;
        let a = s.upload_f32(&super::grid3d::initial(n))?;
        let inv = s.upload_f32(&inverse_pivots(n))?;
        let swapped = match self.0 {
            Layout::Reordered => Some(s.scratch(n * n * n * 4)?),
            Layout::Plain => None,
        };
        let (nn, n1) = ((n * n) as u32, n as u32);
        for _ in 0..iterations {
            solve(&mut s, "solve i", &a, &inv, n, [nn, 1, n1])?;
            solve(&mut s, "solve j", &a, &inv, n, [n1, 1, nn])?;
            match &swapped {
                None => solve(&mut s, "solve k", &a, &inv, n, [1, n1, nn])?,
                Some(b) => {
                    super::grid3d::swap_jk(&mut s, &a, b, n)?;
                    solve(&mut s, "solve k", b, &inv, n, [n1, 1, nn])?;
                    super::grid3d::swap_jk(&mut s, b, &a, n)?;
                }
            }
        }
        let got = s.download_f32(&a, n * n * n)?;
        let verification = verify.then(|| compare(&got, &reference(n, iterations), TOLERANCE));
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}

fn solve(
    s: &mut Session<'_>,
    phase: &str,
    a: &Buffer,
    inv: &Buffer,
    n: usize,
    strides: [u32; 3],
) -> Result<(), WorkloadError> {
    let launch = s.grid2(n, n);
    // Per point: an add and a multiply forward, a multiply and an add back.
    s.launch_declared(
        phase,
        "line_solve",
        &launch,
        &[
            Arg::Buf(a),
            Arg::Buf(inv),
            Arg::U32(n as u32),
            Arg::U32(strides[0]),
            Arg::U32(strides[1]),
            Arg::U32(strides[2]),
        ],
        Some(8 * (n * n * n) as u64),
        Some(4 * (n * n * n) as u64),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::grid3d::solve_line;

    #[test]
    fn thomas_solves_the_system() {
        // (−1, 4, −1) x = d: check the residual of one solved line.
        let n = 9;
        let d: Vec<f32> = (0..n).map(|t| (t as f32 * 0.37).sin()).collect();
        let mut x = d.clone();
        solve_line(&mut x, &inverse_pivots(n), 0, 1);
        for t in 0..n {
            let left = if t > 0 { x[t - 1] } else { 0.0 };
            let right = if t + 1 < n { x[t + 1] } else { 0.0 };
            assert!((4.0 * x[t] - left - right - d[t]).abs() < 1e-5, "row {t}");
        }
    }
}
