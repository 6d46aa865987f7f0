//! Validation of the max-plus kernel model (Antonyuk & Mikheev 2022, docs/models.md §1) on real
//! kernels, which the paper names as future work: run the kernel a graph describes, predict
//! its time with every model variant from the device's calibration, and report the error.
//!
//! Each shipped graph in `kernels/graphs/` describes one instance of one kernel of a
//! workload ([`GRAPH_KERNELS`]). The prediction of an iteration sums its launches: a launch of
//! I instances of s dependent steps each takes s·⌈I/n⌉ rounds of the graph's time. The
//! measured time is the median over repeats of the kernel phases' device time per iteration
//! (other phases, such as EPS resets and transposes, are not what the graph describes); the
//! repeats run in rounds over all sizes, as the fractal series do. Each size runs enough
//! iterations for its kernels to take [`MIN_KERNEL_SECONDS`] per run, since what the model
//! predicts is an iteration of a kernel that keeps running, and a run of a few microseconds
//! measures what it costs to start one (the host's worker threads waking, for one) as much.

use serde::{Deserialize, Serialize};

use super::validate::{summary, ErrorSummary};
use crate::backend::Device;
use crate::calibration::model_parameters::ModelInputs;
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::stats::Summary;
use crate::model::maxplus::{
    predict_iteration, predict_iteration_at_level, KernelGraph, LaunchCost, LaunchPlan,
    MaxPlusError, Parameters, VariantTime,
};
use crate::workloads::registry::lookup;
use crate::workloads::{Layout, Workload, WorkloadError};

/// The least time one timed run's kernels should take, seconds, where the options ask for it
/// ([`MaxPlusRunOptions::min_kernel_seconds`]): the validation suite's least run time
/// ([`super::suite::MIN_SMALL_RUN_SECONDS`]). Ten iterations of a triad over 2^16 floats take
/// about 50 µs on the 2-vCPU AMD EPYC, and a run that short measured 12.9 µs per iteration where
/// runs of a thousand iterations measured 2.8–5.8 µs: the workers' wake-up at a run's start,
/// spread over ten iterations.
pub const MIN_KERNEL_SECONDS: f64 = super::suite::MIN_SMALL_RUN_SECONDS;

/// The most iterations one run is given, however short its kernels.
pub const MAX_ITERATIONS: usize = 1_000_000;

/// A shipped graph and the workload kernel it describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct GraphKernel {
    /// The graph's `name`.
    pub graph: &'static str,
    /// The workload that runs the kernel.
    pub workload: &'static str,
    /// Its layout, where it has two.
    pub layout: Option<Layout>,
    /// The phases holding the kernel's launches.
    pub phases: &'static [&'static str],
    /// How a size becomes launches.
    pub plan: LaunchPlan,
}

/// Every graph `validate-maxplus` can run, by the graph's `name`.
pub const GRAPH_KERNELS: [GraphKernel; 7] = [
    kernel("vadd_z1", "vadd", None, &["vadd"], LaunchPlan::Elements),
    kernel("vadd_z2", "vadd", None, &["vadd"], LaunchPlan::Elements),
    kernel("vadd_z3", "vadd", None, &["vadd"], LaunchPlan::Elements),
    kernel("triad", "triad", None, &["triad"], LaunchPlan::Elements),
    kernel(
        "jacobi5",
        "jacobi2d",
        None,
        &["jacobi"],
        LaunchPlan::Interior2d,
    ),
    kernel(
        "sor_point",
        "sor",
        Some(Layout::Reordered),
        &["sor_diag_skewed"],
        LaunchPlan::AntiDiagonals,
    ),
    kernel(
        "adi_line",
        "adi",
        Some(Layout::Reordered),
        &["sweep i", "sweep j", "sweep k"],
        LaunchPlan::LineSweeps3d,
    ),
];

const fn kernel(
    graph: &'static str,
    workload: &'static str,
    layout: Option<Layout>,
    phases: &'static [&'static str],
    plan: LaunchPlan,
) -> GraphKernel {
    GraphKernel {
        graph,
        workload,
        layout,
        phases,
        plan,
    }
}

/// The kernel a graph describes, or an error listing the graphs that have one.
pub fn kernel_for(graph: &str) -> Result<&'static GraphKernel, WorkloadError> {
    GRAPH_KERNELS
        .iter()
        .find(|k| k.graph == graph)
        .ok_or_else(|| {
            let known: Vec<&str> = GRAPH_KERNELS.iter().map(|k| k.graph).collect();
            WorkloadError::Invalid(format!(
                "graph `{graph}` describes no built-in kernel; validate-maxplus runs {}",
                known.join(", ")
            ))
        })
}

/// One size: measured against every variant.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MaxPlusRow {
    /// Problem size N.
    pub size: usize,
    /// Instances per iteration (summed over launches).
    pub instances: u64,
    /// Launches per iteration.
    pub launches: usize,
    /// Iterations per timed run at this size (0 in files written before 2026-11-26, whose
    /// runs all had the validation's `iterations`).
    #[serde(default)]
    pub iterations: usize,
    /// The kernel phases' median device time per iteration, seconds.
    pub measured_seconds: f64,
    /// Its 95 % CI.
    pub measured_ci95: [f64; 2],
    /// Each variant's prediction.
    pub predictions: Vec<VariantTime>,
    /// Each variant's |predicted − measured| / measured × 100, in `predictions` order.
    pub abs_percent_errors: Vec<f64>,
}

/// One variant's error over all sizes.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VariantError {
    /// The variant.
    pub model: String,
    /// Whether it is the paper's.
    pub published: bool,
    /// Mean, median and maximum absolute percentage error.
    pub error: ErrorSummary,
}

/// The whole validation.
#[derive(Clone, Debug, Serialize)]
pub struct MaxPlusValidation {
    /// The graph's name.
    pub graph: String,
    /// The kernel it was run as.
    pub kernel: GraphKernel,
    /// The device's name.
    pub device: String,
    /// The parameter values used, with sources.
    pub inputs: ModelInputs,
    /// The executor count n used.
    pub executors: u64,
    /// Iterations per run at least (each size's own count is in its row).
    pub iterations: usize,
    /// The least time each timed run's kernels were given, seconds (0: every run had
    /// `iterations`).
    pub min_kernel_seconds: f64,
    /// Runs per size.
    pub repeats: usize,
    /// Sizes that were skipped, with the reason.
    pub skipped: Vec<String>,
    /// One row per measured size.
    pub rows: Vec<MaxPlusRow>,
    /// Per-variant error summaries.
    pub errors: Vec<VariantError>,
    /// The variant with the lowest median error.
    pub best: Option<String>,
}

/// What [`validate_maxplus`] needs besides the graph and the device.
#[derive(Clone, Debug)]
pub struct MaxPlusRunOptions {
    /// The calibration's values.
    pub inputs: ModelInputs,
    /// Executors n (from the calibration unless overridden).
    pub executors: u64,
    /// Sizes to run.
    pub sizes: Vec<usize>,
    /// Iterations per run at least.
    pub iterations: usize,
    /// More iterations where a size's kernels would take less than this per run, seconds
    /// (from the faster of two warm-up runs; 0: exactly `iterations`).
    /// [`MIN_KERNEL_SECONDS`] by default.
    pub min_kernel_seconds: f64,
    /// Runs per size (after one verified warm-up run).
    pub repeats: usize,
}

/// Iterations for one size's timed runs: `least`, or more where its kernels take
/// `per_iteration` seconds each and `least` of them would take less than `min_seconds`;
/// never more than [`MAX_ITERATIONS`].
pub fn iterations_for(per_iteration: f64, least: usize, min_seconds: f64) -> usize {
    let least = least.max(1);
    if !(per_iteration > 0.0 && min_seconds > 0.0 && per_iteration.is_finite()) {
        return least;
    }
    // (A float-to-integer cast saturates, and the cap comes first.)
    let wanted = (min_seconds / per_iteration)
        .ceil()
        .min(MAX_ITERATIONS as f64) as usize;
    wanted.max(least)
}

/// Our `ext_level` extension's prediction of one iteration at `size`
/// ([`predict_iteration_at_level`]): Δt = ΔT = 4 B over the streaming rate the calibration
/// measured where the workload's working set lives, each launch at the back-to-back cost;
/// `None` where the calibration has no bandwidth sweep.
pub fn level_prediction(
    graph: &KernelGraph,
    kernel: &GraphKernel,
    workload: &dyn Workload,
    inputs: &ModelInputs,
    parameters: &Parameters,
    executors: u64,
    size: usize,
) -> Option<Result<VariantTime, MaxPlusError>> {
    let (level, gap) = inputs.streaming_gap(
        workload.bytes_needed(size),
        graph.memory_reads(),
        graph.writes(),
    )?;
    Some(predict_iteration_at_level(
        graph,
        kernel.plan,
        parameters,
        executors,
        inputs
            .launch_sequence
            .unwrap_or(LaunchCost::fixed(inputs.launch_seconds)),
        size,
        gap,
        &level,
    ))
}

/// Run the graph's kernel at each size and compare with every variant's prediction. A size
/// that does not fit the device is skipped and listed, not fatal.
pub fn validate_maxplus(
    graph: &KernelGraph,
    device: &dyn Device,
    options: &MaxPlusRunOptions,
    mut progress: impl FnMut(&str),
) -> Result<MaxPlusValidation, WorkloadError> {
    let kernel = kernel_for(graph.name())?;
    if options.sizes.is_empty() || options.repeats == 0 || options.iterations == 0 {
        return Err(WorkloadError::Invalid(
            "give at least one size, one repeat and one iteration".into(),
        ));
    }
    let parameters = options.inputs.parameters(&[]).map_err(model_error)?;
    let workload = lookup(kernel.workload, kernel.layout)?;
    let mut skipped = Vec::new();
    let mut planned = Vec::new();
    for &size in &options.sizes {
        if let Err(e) = crate::workloads::check_fits(workload.as_ref(), device, size) {
            skipped.push(format!("N = {size}: {e}"));
            progress(&format!("N = {size}: skipped ({e})"));
            continue;
        }
        let mut predictions = predict_iteration(
            graph,
            kernel.plan,
            &parameters,
            options.executors,
            options.inputs.launch_seconds,
            size,
        )
        .map_err(model_error)?;
        if let Some(level) = level_prediction(
            graph,
            kernel,
            workload.as_ref(),
            &options.inputs,
            &parameters,
            options.executors,
            size,
        ) {
            predictions.push(level.map_err(model_error)?);
        }
        planned.push((size, predictions));
    }
    let sizes: Vec<usize> = planned.iter().map(|(size, _)| *size).collect();
    let measured = measure(
        workload.as_ref(),
        kernel,
        device,
        &sizes,
        options,
        &mut progress,
    )?;
    let mut rows = Vec::new();
    for ((size, predictions), (measured, iterations)) in planned.into_iter().zip(measured) {
        let launches = kernel.plan.launches(size);
        let errors = predictions
            .iter()
            .map(|p| (p.seconds - measured.median).abs() / measured.median * 100.0)
            .collect();
        progress(&format!(
            "N = {size}: measured {:.4e} s per iteration ({iterations} per run)",
            measured.median
        ));
        rows.push(MaxPlusRow {
            size,
            instances: launches.iter().map(|l| l.instances * l.steps).sum(),
            launches: launches.len(),
            iterations,
            measured_seconds: measured.median,
            measured_ci95: measured.ci95,
            predictions,
            abs_percent_errors: errors,
        });
    }
    let errors = variant_errors(&rows);
    let best = errors
        .iter()
        .filter(|e| e.error.median.is_finite())
        .min_by(|a, b| a.error.median.total_cmp(&b.error.median))
        .map(|e| e.model.clone());
    Ok(MaxPlusValidation {
        graph: graph.name().to_string(),
        kernel: *kernel,
        device: device.info().name.clone(),
        inputs: options.inputs.clone(),
        executors: options.executors,
        iterations: options.iterations,
        min_kernel_seconds: options.min_kernel_seconds,
        repeats: options.repeats,
        skipped,
        rows,
        errors,
        best,
    })
}

fn model_error(e: MaxPlusError) -> WorkloadError {
    WorkloadError::Invalid(e.to_string())
}

/// A verified warm-up run of every size and a second one, the faster of which sets its
/// iterations per run ([`iterations_for`]), then `repeats` rounds that each run every size once (a, b, c, a, b,
/// c, …), so that a slow spell of a shared machine lands on all sizes alike rather than on
/// whichever size was being measured; per size, the kernel phases' time per iteration and the
/// iterations per run.
fn measure(
    workload: &dyn Workload,
    kernel: &GraphKernel,
    device: &dyn Device,
    sizes: &[usize],
    options: &MaxPlusRunOptions,
    progress: &mut impl FnMut(&str),
) -> Result<Vec<(Summary, usize)>, WorkloadError> {
    let least = options.iterations.max(1);
    let mut iterations = Vec::with_capacity(sizes.len());
    for &size in sizes {
        // The verified warm-up pays the cold costs (first touch, the pool's threads waking);
        // a second, warm run times the iterations, and the faster of the two counts, so one
        // slow spell does not leave a size at too few iterations.
        let warm = workload.run(device, size, least, true)?;
        let again = workload.run(device, size, least, false)?;
        let per_iteration = kernel_seconds(kernel, size, &warm.phases)?.min(kernel_seconds(
            kernel,
            size,
            &again.phases,
        )?) / least as f64;
        iterations.push(iterations_for(
            per_iteration,
            least,
            options.min_kernel_seconds,
        ));
    }
    let mut samples = vec![Vec::with_capacity(options.repeats); sizes.len()];
    for round in 1..=options.repeats {
        progress(&format!(
            "round {round} of {} over {} sizes",
            options.repeats,
            sizes.len()
        ));
        for ((&size, &k), samples) in sizes.iter().zip(&iterations).zip(&mut samples) {
            let run = workload.run(device, size, k, false)?;
            samples.push(kernel_seconds(kernel, size, &run.phases)? / k as f64);
        }
    }
    sizes
        .iter()
        .zip(&samples)
        .zip(iterations)
        .map(|((size, samples), k)| {
            Summary::new(samples)
                .map(|s| (s, k))
                .map_err(|e| WorkloadError::Invalid(format!("N = {size}: {e}")))
        })
        .collect()
}

/// The time of a run's phases that hold the graph's kernel, seconds; an error where they
/// recorded none.
fn kernel_seconds(
    kernel: &GraphKernel,
    size: usize,
    phases: &[crate::workloads::PhaseTiming],
) -> Result<f64, WorkloadError> {
    let seconds: f64 = phases
        .iter()
        .filter(|p| kernel.phases.contains(&p.name.as_str()))
        .map(|p| p.seconds)
        .sum();
    if seconds <= 0.0 {
        return Err(WorkloadError::Invalid(format!(
            "{} at N = {size}: no time recorded in phases {:?}",
            kernel.workload, kernel.phases
        )));
    }
    Ok(seconds)
}

fn variant_errors(rows: &[MaxPlusRow]) -> Vec<VariantError> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    first
        .predictions
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let values: Vec<f64> = rows.iter().map(|r| r.abs_percent_errors[i]).collect();
            VariantError {
                model: p.model.clone(),
                published: p.published,
                error: summary(&values),
            }
        })
        .collect()
}

impl Exportable for MaxPlusValidation {
    fn kind(&self) -> &'static str {
        "max-plus validation"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per size and variant.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "graph",
            "size",
            "instances",
            "launches",
            "iterations",
            "model",
            "published",
            "predicted_s",
            "measured_s",
            "measured_ci_low_s",
            "measured_ci_high_s",
            "abs_percent_error",
        ]);
        for r in &self.rows {
            for (p, e) in r.predictions.iter().zip(&r.abs_percent_errors) {
                t.row([
                    self.graph.clone(),
                    r.size.to_string(),
                    r.instances.to_string(),
                    r.launches.to_string(),
                    r.iterations.to_string(),
                    p.model.clone(),
                    p.published.to_string(),
                    p.seconds.to_string(),
                    r.measured_seconds.to_string(),
                    r.measured_ci95[0].to_string(),
                    r.measured_ci95[1].to_string(),
                    e.to_string(),
                ]);
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;
    use crate::model::maxplus::examples::shipped_graph;

    fn inputs() -> ModelInputs {
        ModelInputs::from_calibration(&crate::calibration::test_fixture())
    }

    #[test]
    fn every_shipped_graph_has_its_kernel() {
        for k in GRAPH_KERNELS {
            assert_eq!(shipped_graph(k.graph).name(), k.graph);
            let workload = lookup(k.workload, k.layout).expect("workload exists");
            assert_eq!(workload.name(), k.workload);
        }
        let err = kernel_for("nope").expect_err("unknown graph");
        assert!(err.to_string().contains("vadd_z1"), "{err}");
    }

    #[test]
    fn a_short_kernel_gets_iterations_enough_for_its_least_run_time() {
        // 5 µs per iteration: 20 ms takes 4000 of them.
        assert_eq!(iterations_for(5e-6, 10, 0.02), 4000);
        // A long kernel keeps the least; so does every size with no least run time.
        assert_eq!(iterations_for(0.01, 10, 0.02), 10);
        assert_eq!(iterations_for(5e-6, 10, 0.0), 10);
        // No time measured (or none usable) keeps the least, and never fewer than one.
        assert_eq!(iterations_for(0.0, 3, 0.02), 3);
        assert_eq!(iterations_for(f64::NAN, 0, 0.02), 1);
        // However short, never more than the cap.
        assert_eq!(iterations_for(1e-15, 10, 0.02), MAX_ITERATIONS);
    }

    #[test]
    fn host_run_measures_and_scores_every_variant() {
        let options = MaxPlusRunOptions {
            executors: inputs().executors(),
            inputs: inputs(),
            sizes: vec![1 << 12, 1 << 14],
            iterations: 2,
            min_kernel_seconds: 0.0,
            repeats: 3,
        };
        let v = validate_maxplus(
            &shipped_graph("triad"),
            &HostDevice::new(),
            &options,
            |_| {},
        )
        .expect("runs on the host");
        assert_eq!(v.rows.len(), 2);
        for r in &v.rows {
            assert_eq!(
                r.iterations, 2,
                "no least run time: exactly the iterations asked"
            );
            assert!(r.measured_seconds > 0.0);
            assert_eq!(r.predictions.len(), 5);
            assert!(r.abs_percent_errors.iter().all(|e| e.is_finite()));
        }
        assert_eq!(v.errors.len(), 5);
        assert!(v.best.is_some());
        let csv = v.to_csv();
        assert_eq!(csv.lines().count(), 1 + 2 * 5);
        assert!(csv.contains(",ext_pipelined,false,"));
    }
}
