//! Validation of the max-plus kernel model (Antonyuk & Mikheev 2022, PAPERS.md §1) on real
//! kernels, which the paper names as future work: run the kernel a graph describes, predict
//! its time with every model variant from the device's calibration, and report the error.
//!
//! Each shipped graph in `kernels/graphs/` describes one instance of one kernel of a
//! workload ([`GRAPH_KERNELS`]). The prediction of an iteration sums its launches: a launch of
//! I instances of s dependent steps each takes s·⌈I/n⌉ rounds of the graph's time. The
//! measured time is the median over repeats of the kernel phases' device time per iteration
//! (other phases, such as EPS resets and transposes, are not what the graph describes).

use serde::Serialize;

use super::registry::lookup;
use super::validate::{summary, ErrorSummary};
use super::{Layout, Workload, WorkloadError};
use crate::backend::Device;
use crate::calibration::model_parameters::ModelInputs;
use crate::fit::stats::Summary;
use crate::model::maxplus::pipelined::{pipelined, LaunchShape, PIPELINED_NAME};
use crate::model::maxplus::{predict, KernelGraph, MaxPlusError, ModelVariant, Parameters};

/// How a workload's size maps to the launches of one iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchPlan {
    /// One launch of N instances (vadd, triad).
    Elements,
    /// One launch over the (N − 2)² interior points of an N × N grid (Jacobi).
    Interior2d,
    /// One launch per interior anti-diagonal of an N × N grid (SOR's wavefront).
    AntiDiagonals,
    /// Three line sweeps of an n³ cube: (n − 2)² lines of n − 2 dependent steps each (ADI).
    LineSweeps3d,
}

impl LaunchPlan {
    /// The launches of one iteration at `size`.
    pub fn launches(self, size: usize) -> Vec<LaunchShape> {
        let n = size as u64;
        let inner = n.saturating_sub(2);
        match self {
            LaunchPlan::Elements => vec![shape(n, 1)],
            LaunchPlan::Interior2d => vec![shape(inner * inner, 1)],
            LaunchPlan::AntiDiagonals => (2..=(2 * n).saturating_sub(4))
                .map(|d| {
                    let lo = d.saturating_sub(n - 2).max(1);
                    let hi = (d - 1).min(n - 2);
                    shape(hi + 1 - lo, 1)
                })
                .collect(),
            LaunchPlan::LineSweeps3d => vec![shape(inner * inner, inner); 3],
        }
    }
}

fn shape(instances: u64, steps: u64) -> LaunchShape {
    LaunchShape { instances, steps }
}

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

/// One model variant's prediction at one size.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VariantTime {
    /// `naive`, `with_operations`, `serialized_memory`, `caching`, or `ext_pipelined`.
    pub model: String,
    /// Whether the variant is the paper's (false for our extension).
    pub published: bool,
    /// Per-instance formula (first launch).
    pub formula: String,
    /// Predicted seconds per iteration.
    pub seconds: f64,
}

/// Every variant's prediction of one iteration at `size`.
pub fn predict_iteration(
    graph: &KernelGraph,
    plan: LaunchPlan,
    parameters: &Parameters,
    executors: u64,
    launch_seconds: f64,
    size: usize,
) -> Result<Vec<VariantTime>, MaxPlusError> {
    let launches = plan.launches(size);
    let mut out = Vec::with_capacity(ModelVariant::ALL.len() + 1);
    for variant in ModelVariant::ALL {
        let mut seconds = 0.0;
        let mut formula = String::new();
        for l in &launches {
            let p = predict(graph, parameters, executors, l.instances, variant)?;
            seconds += p.total_seconds * l.steps as f64;
            if formula.is_empty() {
                formula = p.formula;
            }
        }
        out.push(VariantTime {
            model: variant.name().to_string(),
            published: true,
            formula,
            seconds,
        });
    }
    let mut seconds = 0.0;
    let mut formula = String::new();
    for &l in &launches {
        let p = pipelined(graph, parameters, executors, l, launch_seconds)?;
        seconds += p.total_seconds;
        if formula.is_empty() {
            formula = p.formula;
        }
    }
    out.push(VariantTime {
        model: PIPELINED_NAME.to_string(),
        published: false,
        formula,
        seconds,
    });
    Ok(out)
}

/// One size: measured against every variant.
#[derive(Clone, Debug, Serialize)]
pub struct MaxPlusRow {
    /// Problem size N.
    pub size: usize,
    /// Instances per iteration (summed over launches).
    pub instances: u64,
    /// Launches per iteration.
    pub launches: usize,
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
#[derive(Clone, Debug, Serialize)]
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
    /// Iterations per run.
    pub iterations: usize,
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
    /// Iterations per run.
    pub iterations: usize,
    /// Runs per size (after one verified warm-up run).
    pub repeats: usize,
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
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for &size in &options.sizes {
        if let Err(e) = super::check_fits(workload.as_ref(), device, size) {
            skipped.push(format!("N = {size}: {e}"));
            progress(&format!("N = {size}: skipped ({e})"));
            continue;
        }
        let predictions = predict_iteration(
            graph,
            kernel.plan,
            &parameters,
            options.executors,
            options.inputs.launch_seconds,
            size,
        )
        .map_err(model_error)?;
        let measured = measure(workload.as_ref(), kernel, device, size, options)?;
        let launches = kernel.plan.launches(size);
        let errors = predictions
            .iter()
            .map(|p| (p.seconds - measured.median).abs() / measured.median * 100.0)
            .collect();
        progress(&format!(
            "N = {size}: measured {:.4e} s per iteration",
            measured.median
        ));
        rows.push(MaxPlusRow {
            size,
            instances: launches.iter().map(|l| l.instances * l.steps).sum(),
            launches: launches.len(),
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

/// A verified warm-up run, then `repeats` timed runs; the kernel phases per iteration.
fn measure(
    workload: &dyn Workload,
    kernel: &GraphKernel,
    device: &dyn Device,
    size: usize,
    options: &MaxPlusRunOptions,
) -> Result<Summary, WorkloadError> {
    workload.run(device, size, options.iterations, true)?;
    let mut samples = Vec::with_capacity(options.repeats);
    for _ in 0..options.repeats {
        let run = workload.run(device, size, options.iterations, false)?;
        let seconds: f64 = run
            .phases
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
        samples.push(seconds / options.iterations as f64);
    }
    Summary::new(&samples).map_err(|e| WorkloadError::Invalid(format!("N = {size}: {e}")))
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

impl MaxPlusValidation {
    /// CSV: one row per size and variant.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "graph,size,instances,launches,model,published,predicted_s,measured_s,measured_ci_low_s,measured_ci_high_s,abs_percent_error\n",
        );
        for r in &self.rows {
            for (p, e) in r.predictions.iter().zip(&r.abs_percent_errors) {
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{},{},{},{}\n",
                    self.graph,
                    r.size,
                    r.instances,
                    r.launches,
                    p.model,
                    p.published,
                    p.seconds,
                    r.measured_seconds,
                    r.measured_ci95[0],
                    r.measured_ci95[1],
                    e
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;
    use std::path::PathBuf;

    fn graph(name: &str) -> KernelGraph {
        let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/graphs"))
            .join(format!("{name}.toml"));
        KernelGraph::load(&path).expect("shipped graph loads")
    }

    fn inputs() -> ModelInputs {
        let path = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../calibrations/host-intel-r-xeon-r-processor-2-50ghz.json"
        ));
        let c = crate::calibration::Calibration::load(&path).expect("committed calibration");
        ModelInputs::from_calibration(&c)
    }

    #[test]
    fn every_shipped_graph_has_its_kernel() {
        for k in GRAPH_KERNELS {
            assert_eq!(graph(k.graph).name(), k.graph);
            let workload = lookup(k.workload, k.layout).expect("workload exists");
            assert_eq!(workload.name(), k.workload);
        }
        let err = kernel_for("nope").expect_err("unknown graph");
        assert!(err.to_string().contains("vadd_z1"), "{err}");
    }

    #[test]
    fn anti_diagonals_cover_the_interior_once() {
        for n in [4usize, 5, 17, 64] {
            let launches = LaunchPlan::AntiDiagonals.launches(n);
            let points: u64 = launches.iter().map(|l| l.instances).sum();
            assert_eq!(points, ((n - 2) * (n - 2)) as u64, "n = {n}");
            assert_eq!(launches.len(), 2 * n - 5, "n = {n}");
        }
        let cube = LaunchPlan::LineSweeps3d.launches(10);
        assert_eq!(cube, vec![shape(64, 8); 3]);
    }

    #[test]
    fn predictions_sum_rounds_over_launches() {
        let g = graph("triad");
        let p = Parameters::from_pairs(&[
            ("t", 4.0),
            ("T", 5.0),
            ("tau", 1.0),
            ("dt", 0.0),
            ("dT", 0.0),
            ("t_cache", 1.0),
        ])
        .expect("finite");
        let v = predict_iteration(&g, LaunchPlan::Elements, &p, 4, 0.5, 10).expect("predicts");
        let naive = v.iter().find(|x| x.model == "naive").expect("naive");
        // ⌈10/4⌉ = 3 rounds of T + t = 9.
        assert_eq!(naive.seconds, 27.0);
        let ext = v.iter().find(|x| !x.published).expect("extension");
        // Zero intervals: one round of T + τ + t = 10, plus L = 0.5.
        assert_eq!(ext.seconds, 10.5);
        let lines = predict_iteration(
            &graph("adi_line"),
            LaunchPlan::LineSweeps3d,
            &p,
            1000,
            0.0,
            12,
        )
        .expect("predicts");
        let ops = lines
            .iter()
            .find(|x| x.model == "with_operations")
            .expect("variant");
        let one = predict(
            &graph("adi_line"),
            &p,
            1000,
            100,
            ModelVariant::WithOperations,
        )
        .expect("predicts");
        assert_eq!(ops.seconds, 3.0 * 10.0 * one.total_seconds);
    }

    #[test]
    fn host_run_measures_and_scores_every_variant() {
        let options = MaxPlusRunOptions {
            executors: inputs().executors(),
            inputs: inputs(),
            sizes: vec![1 << 12, 1 << 14],
            iterations: 2,
            repeats: 3,
        };
        let v = validate_maxplus(&graph("triad"), &HostDevice::new(), &options, |_| {})
            .expect("runs on the host");
        assert_eq!(v.rows.len(), 2);
        for r in &v.rows {
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
