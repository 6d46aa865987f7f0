//! The whole fractal-prediction validation in one run (docs/models.md §2.5): every built-in
//! workload (and any spec given) predicted at 4–8× its small sizes, with the small sizes and
//! the target chosen from the device's calibration, and one table of every variant's error.
//!
//! The target of each case is the smallest size whose working set is at least
//! [`MEMORY_MARGIN`] × the largest cache the calibration knows (measured or reported by the
//! system), so every prediction crosses into device memory; the small sizes are
//! [`auto_small_sizes`] at 4–8× below it.
//!
//! This file holds a case and its planning and running; `targets` holds the choice of a
//! case's target, `iterations` that of its iterations per run, `result` the suite's result
//! and its tables.

mod iterations;
mod result;
mod targets;

pub use iterations::{choose_iterations, plan_iterations, IterationPlan};
pub use result::{CasePrediction, CaseResult, FailedCase, Suite, VariantSummary};
pub use targets::{
    largest_cache_bytes, saturating_target, target_size, target_with_window_in_memory,
};

use serde::{Deserialize, Serialize};

use super::series::RepeatPlan;
use super::validate::{auto_small_sizes, validate, Validation};
use crate::backend::{Device, DeviceClass};
use crate::calibration::Calibration;
use crate::fit::window::DeviceFacts;
use crate::workloads::{Workload, WorkloadError};

/// How many times the largest cache a target's working set is, at least.
pub const MEMORY_MARGIN: u64 = 2;

/// Small sizes per case.
pub const SMALL_SIZES: usize = 5;

/// The least time a run of the smallest small size should take, seconds: a run of a
/// fraction of a millisecond is mostly scheduling noise on a shared machine.
pub const MIN_SMALL_RUN_SECONDS: f64 = 0.02;

/// The most a run of the target should be expected to take, seconds (the suite's budget).
pub const MAX_TARGET_RUN_SECONDS: f64 = 2.0;

/// One case to run: a workload, its target and its small sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteCase {
    /// The workload's name (or spec path).
    pub workload: String,
    /// Its layout, where it has two.
    pub layout: Option<String>,
    /// The size predicted and measured.
    pub target: usize,
    /// The small sizes the fits use.
    pub small: Vec<usize>,
    /// Iterations per run ([`choose_iterations`]).
    pub iterations: usize,
    /// What the size choice noticed (levels crossed, unsaturated sizes).
    pub notes: Vec<String>,
}

impl SuiteCase {
    /// `workload[-layout]`.
    pub fn name(&self) -> String {
        match &self.layout {
            Some(l) => format!("{}-{l}", self.workload),
            None => self.workload.clone(),
        }
    }
}

/// The case for `workload`: its target above the largest cache (and, on a device with many
/// executors, large enough that its small sizes fill it; on a GPU, where device memory
/// affords it, large enough that its small sizes are past the largest cache too), its small
/// sizes below.
pub fn plan_case(
    name: &str,
    layout: Option<String>,
    workload: &dyn Workload,
    calibration: &Calibration,
    facts: &DeviceFacts,
) -> Result<SuiteCase, WorkloadError> {
    let floor = largest_cache_bytes(calibration).max(1 << 20) * MEMORY_MARGIN;
    let cap = calibration.device.memory_bytes / 4;
    let mut target =
        saturating_target(workload, facts.executors, cap, target_size(workload, floor));
    let mut before = None;
    if calibration.device.class == DeviceClass::Gpu {
        let wider = target_with_window_in_memory(workload, facts.executors, floor, cap, target);
        if wider != target {
            before = Some(target);
            target = wider;
        }
    }
    let (small, mut notes) = auto_small_sizes(workload, facts, target, SMALL_SIZES)?;
    if let (Some(before), Some(&first)) = (before, small.first()) {
        notes.push(format!(
            "N = {target} rather than {before}: its smallest small size, N = {first}, already works on {} MiB, past {MEMORY_MARGIN} × the largest cache ({} MiB), so the whole window runs in device memory, as the target does",
            workload.bytes_needed(first) >> 20,
            (floor / MEMORY_MARGIN) >> 20
        ));
    }
    Ok(SuiteCase {
        workload: name.to_string(),
        layout,
        target,
        small,
        iterations: 0,
        notes,
    })
}

/// Run one case: its small series, then its target, `case.iterations` per run.
pub fn run_case(
    case: &SuiteCase,
    workload: &dyn Workload,
    device: &dyn Device,
    facts: &DeviceFacts,
    plan: RepeatPlan,
    progress: impl FnMut(&str),
) -> Result<Validation, WorkloadError> {
    validate(
        workload,
        case.layout.clone(),
        device,
        Some(facts),
        &case.small,
        &[case.target],
        case.iterations.max(1),
        plan,
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::registry::lookup;

    #[test]
    fn targets_leave_the_largest_cache_and_avoid_powers_of_two() {
        let floor = 64 << 20;
        let vadd = lookup("vadd", None).expect("vadd");
        let n = target_size(vadd.as_ref(), floor);
        // 1-D: the odd multiple of 16 just past the floor.
        assert!(n % 32 == 16 && vadd.bytes_needed(n) >= floor, "{n}");
        assert!(vadd.bytes_needed(n - 32) < floor, "{n}");
        for name in ["jacobi2d", "adi", "lu-ssor"] {
            let w = lookup(name, None).expect("workload");
            let n = target_size(w.as_ref(), floor);
            assert!(w.bytes_needed(n) >= floor, "{name}: {n}");
            assert!(n % 8 == 4, "{name}: {n}");
            // Not far above the floor.
            assert!(w.bytes_needed(n) < floor + floor / 3, "{name}: {n}");
        }
    }

    #[test]
    fn on_a_gpu_the_target_grows_until_its_small_sizes_fill_the_device() {
        let h100 = 270_336.0;
        let memory = 80u64 << 30;
        let jacobi = lookup("jacobi2d", None).expect("jacobi2d");
        // Just past twice a 50 MiB L2: 3628, whose smallest small size (453) has 205,209 cells.
        let past_l2 = target_size(jacobi.as_ref(), 100 << 20);
        assert_eq!(past_l2, 3628);
        let n = saturating_target(jacobi.as_ref(), h100, memory / 4, past_l2);
        let smallest = jacobi.parallelism(n / 8).expect("jacobi2d knows its cells") as f64;
        assert!(smallest >= h100, "{n}: {smallest}");
        assert!(n % 8 == 4 && n > past_l2, "{n}");
        // Not far above what saturation needs: 10 % more than the smallest such target.
        let just = jacobi.parallelism((n - 8) / 8).expect("cells") as f64;
        assert!(just < h100 * 1.1, "{n}: {just}");
        // Two CPU executors are filled already; a cap too small keeps the target.
        assert_eq!(
            saturating_target(jacobi.as_ref(), 2.0, memory / 4, past_l2),
            past_l2
        );
        assert_eq!(
            saturating_target(jacobi.as_ref(), h100, 1 << 20, past_l2),
            past_l2
        );
        // A 3-D grid whose launches hold one line per cell of a plane cannot be filled within
        // the cap by growing N: its target stays.
        let adi = lookup("adi", None).expect("adi");
        let t = target_size(adi.as_ref(), 100 << 20);
        let grown = saturating_target(adi.as_ref(), h100, memory / 4, t);
        assert!(adi.bytes_needed(grown) <= memory / 4);
        assert!(
            grown == t || adi.parallelism(grown / 8).is_some_and(|i| i as f64 >= h100),
            "{t} -> {grown}"
        );
    }

    #[test]
    fn iterations_reach_the_run_time_and_the_kernels_share_within_the_targets_budget() {
        // A CPU's vadd at its smallest size: 1.8 ms over 10 iterations, 0.9 ms of kernels.
        // 20 ms needs 112 iterations by the run time (10 by the kernels' share).
        let cpu = plan_iterations(1.8e-3, 0.9e-3, 10, 8.0).expect("a plan");
        assert_eq!((cpu.iterations, cpu.needed), (112, 112));
        // A GPU's vadd with its window in device memory: 16 ms of transfers, 64 µs of kernel
        // per iteration; the share needs 250 iterations, and the target (8× the bytes) still
        // runs 8 × (16 ms + 250 × 64 µs) = 0.26 s.
        let gpu = plan_iterations(16e-3 + 10.0 * 64e-6, 10.0 * 64e-6, 10, 8.0).expect("a plan");
        assert_eq!((gpu.iterations, gpu.needed), (250, 250));
        assert!((gpu.small_kernel_seconds - 0.016).abs() < 1e-9);
        // The target's budget caps it: at 64× the bytes, 2 s allows
        // (2/64 − 16 ms) / 64 µs = 238 iterations.
        let capped = plan_iterations(16e-3 + 10.0 * 64e-6, 10.0 * 64e-6, 10, 64.0).expect("plan");
        assert_eq!((capped.iterations, capped.needed), (238, 250));
        // Never under `least`, and no plan from a probe that took no time.
        assert_eq!(
            plan_iterations(10.0, 9.0, 10, 1.0)
                .expect("plan")
                .iterations,
            10
        );
        assert_eq!(plan_iterations(0.0, 0.0, 10, 1.0), None);
    }

    #[test]
    fn on_a_gpu_the_window_moves_past_the_l2_where_device_memory_affords_it() {
        // The H100 of 2026-11-26: 50 MiB of L2, 80 GB, n = 32,826 from the knee.
        let (n, memory, floor) = (32_826.0, 80u64 << 30, 100u64 << 20);
        for (name, before) in [("vadd", 1usize << 24), ("jacobi2d", 3628), ("sor-rb", 5124)] {
            let w = lookup(name, None).expect("workload");
            let t = target_with_window_in_memory(w.as_ref(), n, floor, memory / 4, before);
            // The smallest small size is past twice the L2 and fills the device; the target
            // fits a quarter of the memory and is no larger than it must be.
            assert!(w.bytes_needed(t / 8) >= floor, "{name}: {t}");
            assert!(w.parallelism(t / 8).is_none_or(|i| i as f64 >= n), "{name}");
            assert!(w.bytes_needed(t) <= memory / 4, "{name}: {t}");
            let step = if name == "vadd" { t - 32 } else { t - 8 };
            assert!(
                w.bytes_needed(step / 8) < floor,
                "{name}: {t} is not the smallest"
            );
        }
        // vadd: the odd multiple of 16 whose eighth holds 100 MiB (12 bytes an element):
        // ⌈104,857,600 / 12 · 8 / 16⌉ = 4,369,067 sixteens.
        let vadd = lookup("vadd", None).expect("vadd");
        assert_eq!(
            target_with_window_in_memory(vadd.as_ref(), n, floor, memory / 4, 1 << 24),
            69_905_072
        );
        // A 3-D grid's window would need 512 × the floor: its target stays; so does a
        // target whose window is in memory already, and any under a cap too small.
        let adi = lookup("adi", None).expect("adi");
        assert_eq!(
            target_with_window_in_memory(adi.as_ref(), n, floor, memory / 4, 236),
            236
        );
        assert_eq!(
            target_with_window_in_memory(vadd.as_ref(), n, floor, memory / 4, 1 << 28),
            1 << 28
        );
        assert_eq!(
            target_with_window_in_memory(vadd.as_ref(), n, floor, 1 << 30, 1 << 24),
            1 << 24
        );
        // SOR's diagonals hold at most N cells: a window in memory (N ≥ 40,000) leaves its
        // small sizes unsaturated, so the target does not grow for nothing.
        let sor = lookup("sor", Some(crate::workloads::Layout::Reordered)).expect("sor");
        assert_eq!(
            target_with_window_in_memory(sor.as_ref(), n, floor, memory / 4, 3628),
            3628
        );
    }
}
