//! Stepanenko's decomposition measured and run (docs/models.md §3): the MIMD and SIMD fragments
//! of the SOR batch ([`crate::workloads::sor_batch`]) timed on one core and on an
//! accelerator (φ, ρ), then a split of the batch run on host threads and the accelerator at
//! once.

use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Instant;

use serde::Serialize;

use crate::backend::Device;
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::stats::Summary;
use crate::model::stepanenko::{Decomposition, Hybrid};
use crate::workloads::session::compare;
use crate::workloads::sor_batch::{Accelerator, SorBatch};
use crate::workloads::WorkloadError;

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
                let v = compare(got, want, crate::workloads::stencil::TOLERANCE);
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
    /// Its name and shape as table cells: name, homogeneous cores, problems per core,
    /// hybrid cores, hybrid problems.
    pub fn cells(&self) -> [String; 5] {
        [
            self.name.clone(),
            self.homogeneous_cores.to_string(),
            self.problems_per_core.to_string(),
            self.hybrid_cores.to_string(),
            self.hybrid_problems.to_string(),
        ]
    }

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

/// A measured balance: the fragments, the model's decomposition from them, and the splits
/// run (empty without `--run`).
#[derive(Debug, Serialize)]
pub struct MeasuredBalance {
    /// T1, T_M and T_S with their intervals.
    pub fragments: FragmentTimes,
    /// The model's decomposition from the measured φ and ρ.
    pub decomposition: Decomposition,
    /// Each split run, measured against the model's speed-up.
    pub runs: Vec<SplitRun>,
}

/// Measure the batch's fragments on one core and on `device`, decompose q cores and r
/// accelerators by the model, and with `run` execute the splits (one accelerator only).
/// `progress` is told each split as it starts.
pub fn measure_balance(
    batch: SorBatch,
    device: &dyn Device,
    q: u32,
    r: u32,
    run: bool,
    repeat: usize,
    mut progress: impl FnMut(&str),
) -> Result<MeasuredBalance, WorkloadError> {
    if run && r != 1 {
        return Err(WorkloadError::Invalid(
            "--run drives one accelerator; give --r 1 (or leave it out)".into(),
        ));
    }
    let fragments = measure_fragments(batch, device, repeat)?;
    let hybrid = Hybrid::from_times(
        fragments.t1.median,
        fragments.t_mimd.median,
        fragments.t_simd.median,
        q,
        r,
    )
    .map_err(|e| WorkloadError::Invalid(e.to_string()))?;
    let decomposition = hybrid.decompose();
    let runs = if run {
        run_splits(batch, device, &decomposition, repeat, &mut progress)?
    } else {
        Vec::new()
    };
    Ok(MeasuredBalance {
        fragments,
        decomposition,
        runs,
    })
}

/// The splits `--run` executes, with the model's speed-up for each: the recommended split,
/// the proportional one (when it differs), the accelerator with one core, the cores alone.
fn run_splits(
    batch: SorBatch,
    device: &dyn Device,
    d: &Decomposition,
    repeat: usize,
    progress: &mut impl FnMut(&str),
) -> Result<Vec<SplitRun>, WorkloadError> {
    let h = &d.hybrid;
    let q = h.q as usize;
    let q_star = d.q_star as usize;
    let recommended = format!("recommended (q* = {q_star})");
    let mut splits = vec![(
        Split::balanced(
            &recommended,
            batch.grids,
            q - q_star,
            d.shares.homogeneous_core_work,
            q_star,
        ),
        d.k_d,
    )];
    if q_star != q {
        splits.push((
            Split::balanced("proportional", batch.grids, 0, 0.0, q),
            d.k_proportional,
        ));
    }
    splits.push((
        Split::balanced("accelerator + 1 core", batch.grids, 0, 0.0, 1),
        h.k_11(),
    ));
    splits.push((
        Split::balanced("cores alone", batch.grids, q, 0.0, 0),
        q as f64,
    ));
    let mut runs = Vec::new();
    for (split, predicted) in splits {
        progress(&format!("running split: {}", split.name));
        runs.push(run_split(batch, device, &split, predicted, repeat)?);
    }
    Ok(runs)
}

impl Exportable for MeasuredBalance {
    fn kind(&self) -> &'static str {
        "balance"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per split run.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "split",
            "homogeneous_cores",
            "problems_per_core",
            "hybrid_cores",
            "hybrid_problems",
            "seconds",
            "ci_low",
            "ci_high",
            "paired_t1_seconds",
            "measured_speedup",
            "predicted_speedup",
        ]);
        for r in &self.runs {
            t.row(r.split.cells().into_iter().chain([
                r.seconds.median.to_string(),
                r.seconds.ci95[0].to_string(),
                r.seconds.ci95[1].to_string(),
                r.paired_t1.median.to_string(),
                r.speedup.to_string(),
                r.predicted.to_string(),
            ]));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;
    use crate::workloads::stencil::TOLERANCE;

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
}
