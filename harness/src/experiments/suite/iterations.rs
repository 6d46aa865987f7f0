//! Iterations per run: enough for the smallest size's run and its kernels' share, within the
//! target's budget.

use super::{SuiteCase, MAX_TARGET_RUN_SECONDS, MIN_SMALL_RUN_SECONDS};
use crate::backend::Device;
use crate::workloads::{Workload, WorkloadError};

/// Iterations per run for `case`: at least `least`; more where the smallest small size would
/// run under [`MIN_SMALL_RUN_SECONDS`] or its kernels take less time than its transfers, as
/// long as the target's run, estimated from one probe run of the smallest size as
/// proportional to the working set, stays under [`MAX_TARGET_RUN_SECONDS`]
/// ([`plan_iterations`]). Returns the count and a note where the budget limited it.
pub fn choose_iterations(
    case: &SuiteCase,
    workload: &dyn Workload,
    device: &dyn Device,
    least: usize,
) -> Result<(usize, Option<String>), WorkloadError> {
    let least = least.max(1);
    let smallest = *case
        .small
        .first()
        .ok_or_else(|| WorkloadError::Invalid("a case needs small sizes".into()))?;
    let probe = workload.run(device, smallest, least, false)?;
    let growth =
        workload.bytes_needed(case.target) as f64 / workload.bytes_needed(smallest).max(1) as f64;
    let Some(plan) = plan_iterations(probe.total_seconds, probe.kernel_seconds, least, growth)
    else {
        return Ok((least, None));
    };
    let note = (plan.needed > plan.iterations).then(|| {
        format!(
            "{} iterations: N = {smallest} runs {:.1} ms, its kernels {:.1} ms of it, under the {:.0} ms and the kernels' share aimed for, because the target's runs would pass {MAX_TARGET_RUN_SECONDS} s",
            plan.iterations,
            plan.small_run_seconds * 1e3,
            plan.small_kernel_seconds * 1e3,
            MIN_SMALL_RUN_SECONDS * 1e3
        )
    });
    Ok((plan.iterations, note))
}

/// What [`plan_iterations`] chose.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IterationPlan {
    /// Iterations per run.
    pub iterations: usize,
    /// What the smallest size needed: its run at least [`MIN_SMALL_RUN_SECONDS`] and its
    /// kernels at least as long as the rest of its run (transfers, host steps).
    pub needed: usize,
    /// The smallest size's run at `iterations`, seconds (estimated).
    pub small_run_seconds: f64,
    /// Its kernels' share of that run, seconds.
    pub small_kernel_seconds: f64,
}

/// Iterations per run from a probe of the smallest size: `total` seconds over `least`
/// iterations, `kernel` of them in kernels (the rest, transfers and host steps, is paid once
/// per run), the target's working set `growth` times the smallest's. A run of k iterations
/// takes `rest + k·kernel/least`, the target's `growth` times that. At least `least`; more
/// until the smallest size's run reaches [`MIN_SMALL_RUN_SECONDS`] (counted, as before
/// 2026-11-26, as k·total/least) and its kernels take as long as its transfers; never so
/// many that the target's run passes [`MAX_TARGET_RUN_SECONDS`]. The second rule matters on a
/// GPU, where a window in device memory uploads hundreds of megabytes for microseconds of
/// kernel per iteration, and a total made of transfers would test the transfer estimate, not
/// the kernels'. `None` for a probe without a positive time.
pub fn plan_iterations(
    total: f64,
    kernel: f64,
    least: usize,
    growth: f64,
) -> Option<IterationPlan> {
    let least = least.max(1);
    let l = least as f64;
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    let per_iteration = total / l;
    let kernel = if kernel.is_finite() {
        kernel.clamp(0.0, total)
    } else {
        0.0
    };
    let rest = total - kernel;
    let kernel_per_iteration = kernel / l;
    let by_time = (MIN_SMALL_RUN_SECONDS / per_iteration).ceil() as usize;
    let (by_share, allowed) = if kernel_per_iteration > 0.0 {
        (
            // (Less a hair, so that an exact ratio is not pushed up by its rounding.)
            (rest / kernel_per_iteration - 1e-9).ceil() as usize,
            ((MAX_TARGET_RUN_SECONDS / growth - rest) / kernel_per_iteration).floor() as usize,
        )
    } else {
        (
            0,
            (MAX_TARGET_RUN_SECONDS / (per_iteration * growth)).floor() as usize,
        )
    };
    let needed = by_time.max(by_share);
    let iterations = needed.min(allowed).max(least);
    let k = iterations as f64;
    Some(IterationPlan {
        iterations,
        needed,
        small_run_seconds: rest + k * kernel_per_iteration,
        small_kernel_seconds: k * kernel_per_iteration,
    })
}
