//! The CPU + accelerator program of Stepanenko's decomposition (docs/models.md §3): a batch of
//! independent SOR problems, its fragments on one core and on an accelerator. The
//! measurement of φ and ρ and the splits are in `experiments::balance`.
//!
//! **The program, `sor`:** a batch of independent 2-D SOR problems (grid side N), each
//! processed as the paper's process is, one fragment after the other:
//! - **SIMD fragment** — `sweeps` red-black SOR sweeps over the grid (Listing 1's update,
//!   red then black points): data-parallel, the part an accelerator runs (the `sor_rb`
//!   kernel) and one core runs sequentially;
//! - **MIMD fragment** — the convergence control: the residual max|4u − Σ neighbours| of
//!   the swept grid and the decision whether it converged, sequential host code with a
//!   data-dependent branch, run on a core only.
//!
//! T1 is the batch on one host core; T_M the MIMD fragments alone on one core; T_S the SIMD
//! fragments on the accelerator, including each grid's upload and download (a real split
//! pays them). Division mode: the batch's grids are the work divided between the parts.
//! The device's results are checked against the core's, grid by grid.

use serde::Serialize;

use super::session::Session;
use super::stencil::{initial_grid, program, sor_point, sor_rb_half_sweep, OMEGA};
use super::WorkloadError;
use crate::backend::Device;

/// The SOR batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SorBatch {
    /// Grid side N.
    pub size: usize,
    /// Independent problems in the batch.
    pub grids: usize,
    /// Red-black sweeps per problem (the SIMD fragment).
    pub sweeps: usize,
}

/// The most problems one batch may hold.
pub const MAX_GRIDS: usize = 1 << 20;

/// The most red-black sweeps per problem.
pub const MAX_SWEEPS: usize = 1 << 20;

/// Residual below which a problem counts as converged (the MIMD fragment's decision).
pub const CONVERGED: f32 = 1e-3;

impl SorBatch {
    /// Checks the sizes: 4 ≤ N ≤ 16384, 1 to [`MAX_GRIDS`] grids that fit in the host's
    /// memory, 1 to [`MAX_SWEEPS`] sweeps.
    pub fn new(size: usize, grids: usize, sweeps: usize) -> Result<Self, WorkloadError> {
        if !(4..=16_384).contains(&size) || grids == 0 || sweeps == 0 {
            return Err(WorkloadError::Invalid(format!(
                "the SOR batch needs 4 ≤ N ≤ 16384, at least one grid and one sweep (got N = {size}, {grids} grids, {sweeps} sweeps)"
            )));
        }
        // The batch's grids are all held at once (on the host, and again as results).
        let bytes = (size as u64 * size as u64 * 4)
            .saturating_mul(grids as u64)
            .saturating_mul(2);
        let available = super::host_available_bytes(bytes).unwrap_or(u64::MAX);
        if grids > MAX_GRIDS || bytes > available {
            return Err(WorkloadError::Invalid(format!(
                "the SOR batch of {grids} grids of {size}×{size} needs {bytes} bytes of host memory; at most {MAX_GRIDS} grids, within the {available} bytes available"
            )));
        }
        if sweeps > MAX_SWEEPS {
            return Err(WorkloadError::Invalid(format!(
                "{sweeps} sweeps per problem: at most {MAX_SWEEPS}"
            )));
        }
        Ok(SorBatch {
            size,
            grids,
            sweeps,
        })
    }

    /// Problem `index` of the batch: the SOR start grid, shifted so the problems differ.
    pub fn grid(&self, index: usize) -> Vec<f32> {
        let shift = index as f32 * 1e-3;
        initial_grid(self.size)
            .into_iter()
            .map(|v| v + shift)
            .collect()
    }

    /// The SIMD fragment on one core: `sweeps` red-black sweeps, sequentially.
    pub fn sweep_on_core(&self, grid: &mut [f32]) {
        let n = self.size;
        for _ in 0..self.sweeps {
            for parity in 0..2 {
                for i in 1..n - 1 {
                    let first = 1 + (i + 1 + parity) % 2;
                    for j in (first..n - 1).step_by(2) {
                        let p = i * n + j;
                        grid[p] = sor_point(
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
    }

    /// The MIMD fragment: the residual max|4u − Σ neighbours| and whether it converged.
    pub fn convergence_control(&self, grid: &[f32]) -> (f32, bool) {
        let n = self.size;
        let mut residual = 0.0f32;
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let p = i * n + j;
                let r = 4.0 * grid[p] - grid[p - n] - grid[p + n] - grid[p - 1] - grid[p + 1];
                if r.abs() > residual {
                    residual = r.abs();
                }
            }
        }
        (residual, residual < CONVERGED)
    }
}

/// The accelerator's side: the compiled `sor_rb` kernel and its buffers.
pub struct Accelerator<'d> {
    session: Session<'d>,
    batch: SorBatch,
}

impl<'d> Accelerator<'d> {
    /// Compile the stencil program (not timed).
    pub fn new(device: &'d dyn Device, batch: SorBatch) -> Result<Self, WorkloadError> {
        super::check_fits(&super::stencil::SorRedBlack, device, batch.size)?;
        Ok(Accelerator {
            session: Session::new(device, &program())?,
            batch,
        })
    }

    /// The SIMD fragment of one problem: upload, sweeps, download.
    pub fn sweep(&mut self, grid: &mut Vec<f32>) -> Result<(), WorkloadError> {
        let n = self.batch.size;
        let s = &mut self.session;
        let a = s.upload_f32(grid)?;
        let eps = s.scratch(4)?;
        let launch = s.grid2(n - 2, n - 2);
        for _ in 0..self.batch.sweeps {
            for parity in [0u32, 1] {
                sor_rb_half_sweep(s, "sor_rb", &launch, &a, n, parity, &eps)?;
            }
        }
        *grid = s.download_f32(&a, n * n)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::stencil::sor_reference;

    #[test]
    fn the_core_sweep_is_the_red_black_reference() {
        let batch = SorBatch::new(17, 1, 3).expect("valid");
        let mut grid = batch.grid(0);
        batch.sweep_on_core(&mut grid);
        let (want, _) = sor_reference(17, 3, true);
        assert_eq!(grid, want);
    }

    #[test]
    fn convergence_control_sees_a_flat_grid_as_converged() {
        let batch = SorBatch::new(8, 1, 1).expect("valid");
        assert_eq!(batch.convergence_control(&vec![2.0; 64]), (0.0, true));
        let mut bumpy = vec![0.0; 64];
        bumpy[3 * 8 + 3] = 1.0;
        let (residual, converged) = batch.convergence_control(&bumpy);
        assert_eq!(residual, 4.0);
        assert!(!converged);
    }

    #[test]
    fn bad_batches_are_refused() {
        assert!(SorBatch::new(3, 1, 1).is_err());
        assert!(SorBatch::new(16, 0, 1).is_err());
        assert!(SorBatch::new(16, 1, 0).is_err());
    }
}
