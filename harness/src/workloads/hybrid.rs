//! A CPU + accelerator program for Stepanenko's decomposition (PAPERS.md §3): measure its
//! MIMD and SIMD fragments (φ, ρ), then run a split of it on host threads and an
//! accelerator at once.
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

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use super::session::{compare, Session};
use super::stencil::{initial_grid, program, sor_point, sor_rb_half_sweep, OMEGA, TOLERANCE};
use super::WorkloadError;
use crate::backend::Device;
use crate::fit::stats::Summary;

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

/// Residual below which a problem counts as converged (the MIMD fragment's decision).
pub const CONVERGED: f32 = 1e-3;

impl SorBatch {
    /// Check the sizes: N ≥ 4, at least one grid and one sweep.
    pub fn new(size: usize, grids: usize, sweeps: usize) -> Result<Self, WorkloadError> {
        if !(4..=16_384).contains(&size) || grids == 0 || sweeps == 0 {
            return Err(WorkloadError::Invalid(format!(
                "the SOR batch needs 4 ≤ N ≤ 16384, at least one grid and one sweep (got N = {size}, {grids} grids, {sweeps} sweeps)"
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

/// The measured fragments and what follows from them.
#[derive(Debug, Clone, Serialize)]
pub struct FragmentTimes {
    /// The batch measured.
    pub batch: SorBatch,
    /// T1, the whole batch on one core: median and 95 % CI, seconds.
    pub t1: Summary,
    /// T_M, the MIMD fragments on one core.
    pub t_mimd: Summary,
    /// T_S, the SIMD fragments on the accelerator, transfers included.
    pub t_simd: Summary,
    /// The largest relative difference between the accelerator's and the core's grids.
    pub max_rel_error: f64,
    /// How many problems the convergence control found converged (same on both sides).
    pub converged: usize,
}

/// One pass of the batch on the calling thread (one core): (total, MIMD part) seconds and
/// the swept grids.
fn batch_on_core(batch: &SorBatch) -> (f64, f64, Vec<Vec<f32>>) {
    let start = Instant::now();
    let mut mimd = 0.0;
    let mut grids = Vec::with_capacity(batch.grids);
    for g in 0..batch.grids {
        let mut grid = batch.grid(g);
        batch.sweep_on_core(&mut grid);
        let m = Instant::now();
        std::hint::black_box(batch.convergence_control(&grid));
        mimd += m.elapsed().as_secs_f64();
        grids.push(grid);
    }
    (start.elapsed().as_secs_f64(), mimd, grids)
}

fn summary(samples: &[f64], what: &str) -> Result<Summary, WorkloadError> {
    Summary::new(samples).map_err(|e| WorkloadError::Invalid(format!("{what}: {e}")))
}

/// Measure T1, T_M and T_S `repeats` times each (after a warm-up) and verify the device.
pub fn measure_fragments(
    batch: SorBatch,
    device: &dyn Device,
    repeats: usize,
) -> Result<FragmentTimes, WorkloadError> {
    let repeats = repeats.max(1);
    let mut accelerator = Accelerator::new(device, batch)?;
    let (_, _, reference) = batch_on_core(&batch);
    let (mut t1, mut tm, mut ts) = (Vec::new(), Vec::new(), Vec::new());
    let mut max_rel_error = 0.0f64;
    let mut converged = 0;
    for repeat in 0..=repeats {
        let (total, mimd, _) = batch_on_core(&batch);
        let start = Instant::now();
        let mut swept = Vec::with_capacity(batch.grids);
        for g in 0..batch.grids {
            let mut grid = batch.grid(g);
            accelerator.sweep(&mut grid)?;
            swept.push(grid);
        }
        let simd = start.elapsed().as_secs_f64();
        if repeat == 0 {
            // The warm-up pass is the verified one.
            for (got, want) in swept.iter().zip(&reference) {
                let v = compare(got, want, TOLERANCE);
                max_rel_error = max_rel_error.max(v.max_rel_error);
                if !v.passed {
                    return Err(WorkloadError::Mismatch {
                        workload: "sor batch".into(),
                        size: batch.size,
                        max_abs: v.max_abs_error,
                        max_rel: v.max_rel_error,
                    });
                }
                let (core_converged, device_converged) = (
                    batch.convergence_control(want).1,
                    batch.convergence_control(got).1,
                );
                converged += usize::from(core_converged && device_converged);
            }
            continue;
        }
        t1.push(total);
        tm.push(mimd);
        ts.push(simd);
    }
    Ok(FragmentTimes {
        batch,
        t1: summary(&t1, "T1")?,
        t_mimd: summary(&tm, "T_M")?,
        t_simd: summary(&ts, "T_S")?,
        max_rel_error,
        converged,
    })
}

/// A split of the batch over host threads and the accelerator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Split {
    /// What it is (`recommended q* = 1`, `proportional`, `accelerator alone`, `cores alone`).
    pub name: String,
    /// Cores working alone, each on whole problems.
    pub homogeneous_cores: usize,
    /// Problems per homogeneous core.
    pub problems_per_core: usize,
    /// Cores joined to the accelerator (they run the MIMD fragments of its problems).
    pub hybrid_cores: usize,
    /// Problems the hybrid group processes.
    pub hybrid_problems: usize,
}

impl Split {
    /// A split of `grids` problems: each of `homogeneous_cores` cores gets `share_per_core`
    /// of them (a fraction of the batch, rounded), the hybrid group of `hybrid_cores` cores
    /// and the accelerator the rest.
    pub fn balanced(
        name: &str,
        grids: usize,
        homogeneous_cores: usize,
        share_per_core: f64,
        hybrid_cores: usize,
    ) -> Split {
        let per_core = if hybrid_cores == 0 {
            grids.div_ceil(homogeneous_cores.max(1))
        } else {
            ((grids as f64 * share_per_core).round() as usize).min(grids / homogeneous_cores.max(1))
        };
        let on_cores = (per_core * homogeneous_cores).min(grids);
        Split {
            name: name.to_string(),
            homogeneous_cores,
            problems_per_core: per_core,
            hybrid_cores,
            hybrid_problems: if hybrid_cores == 0 {
                0
            } else {
                grids - on_cores
            },
        }
    }
}

/// One split run for real.
#[derive(Debug, Clone, Serialize)]
pub struct SplitRun {
    /// The split.
    pub split: Split,
    /// Wall time of the whole batch, seconds (over the repeats).
    pub seconds: Summary,
    /// T1 measured right before each repeat (paired, so slow drifts of the machine cancel).
    pub paired_t1: Summary,
    /// The median over the repeats of T1 / wall time.
    pub speedup: f64,
    /// The model's speed-up for this split.
    pub predicted: f64,
}

/// Run `split` `repeats` times: homogeneous threads and the hybrid group (one thread driving
/// the accelerator, its cores running the MIMD fragments as the swept grids arrive), all at
/// once. Every problem is processed exactly once. Each repeat is paired with a fresh T1 on
/// one core just before it; the speed-up is the median of the paired ratios.
pub fn run_split(
    batch: SorBatch,
    device: &dyn Device,
    split: &Split,
    predicted: f64,
    repeats: usize,
) -> Result<SplitRun, WorkloadError> {
    let mut walls = Vec::new();
    let mut t1s = Vec::new();
    let mut ratios = Vec::new();
    for _ in 0..repeats.max(1) {
        let (t1, _, _) = batch_on_core(&batch);
        let wall = run_split_once(batch, device, split)?;
        walls.push(wall);
        t1s.push(t1);
        ratios.push(t1 / wall);
    }
    Ok(SplitRun {
        split: split.clone(),
        seconds: summary(&walls, &split.name)?,
        paired_t1: summary(&t1s, "T1")?,
        speedup: summary(&ratios, &split.name)?.median,
        predicted,
    })
}

fn run_split_once(
    batch: SorBatch,
    device: &dyn Device,
    split: &Split,
) -> Result<f64, WorkloadError> {
    let covered = split.homogeneous_cores * split.problems_per_core + split.hybrid_problems;
    if covered < batch.grids {
        return Err(WorkloadError::Invalid(format!(
            "split `{}` covers {covered} of {} problems",
            split.name, batch.grids
        )));
    }
    // Compile before the clock starts, as T_S was measured.
    let mut accelerator = (split.hybrid_problems > 0)
        .then(|| Accelerator::new(device, batch))
        .transpose()?;
    let first_hybrid = batch.grids - split.hybrid_problems;
    let (send, receive) = mpsc::channel::<Vec<f32>>();
    let receive = Mutex::new(receive);
    let start = Instant::now();
    std::thread::scope(|scope| -> Result<(), WorkloadError> {
        // Owned here, so an early error return drops it and the MIMD workers stop.
        let send = send;
        for core in 0..split.homogeneous_cores {
            let lo = (core * split.problems_per_core).min(first_hybrid);
            let hi = ((core + 1) * split.problems_per_core).min(first_hybrid);
            scope.spawn(move || {
                for g in lo..hi {
                    let mut grid = batch.grid(g);
                    batch.sweep_on_core(&mut grid);
                    std::hint::black_box(batch.convergence_control(&grid));
                }
            });
        }
        let Some(accelerator) = accelerator.as_mut() else {
            return Ok(());
        };
        for _ in 0..split.hybrid_cores.max(1) {
            let receive = &receive;
            scope.spawn(move || loop {
                let next = receive.lock().map(|r| r.recv());
                match next {
                    Ok(Ok(grid)) => {
                        std::hint::black_box(batch.convergence_control(&grid));
                    }
                    _ => break,
                }
            });
        }
        for g in first_hybrid..batch.grids {
            let mut grid = batch.grid(g);
            accelerator.sweep(&mut grid)?;
            if send.send(grid).is_err() {
                break;
            }
        }
        Ok(())
    })?;
    Ok(start.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;
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
    fn fragments_on_the_host_device_are_verified_and_consistent() {
        let batch = SorBatch::new(48, 6, 4).expect("valid");
        let f = measure_fragments(batch, &HostDevice::new(), 3).expect("runs");
        assert!(f.max_rel_error <= TOLERANCE);
        assert!(f.t_mimd.median > 0.0 && f.t_mimd.median < f.t1.median);
        assert!(f.t_simd.median > 0.0);
    }

    #[test]
    fn splits_cover_every_problem_once() {
        let s = Split::balanced("x", 10, 3, 0.25, 1);
        assert_eq!(s.problems_per_core, 3);
        assert_eq!(s.hybrid_problems, 1);
        let alone = Split::balanced("cores", 10, 4, 0.0, 0);
        assert_eq!(alone.problems_per_core, 3);
        assert_eq!(alone.hybrid_problems, 0);
        let all_hybrid = Split::balanced("acc", 10, 0, 0.0, 1);
        assert_eq!(all_hybrid.hybrid_problems, 10);
        let batch = SorBatch::new(16, 10, 2).expect("valid");
        for split in [s, alone, all_hybrid] {
            let run = run_split(batch, &HostDevice::new(), &split, 1.0, 1).expect("runs");
            assert!(run.seconds.median > 0.0);
        }
    }

    #[test]
    fn bad_batches_are_refused() {
        assert!(SorBatch::new(3, 1, 1).is_err());
        assert!(SorBatch::new(16, 0, 1).is_err());
        assert!(SorBatch::new(16, 1, 0).is_err());
    }
}
