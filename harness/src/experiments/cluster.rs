//! The experiments around the cluster model (`model::cluster`): the interval trace of a run
//! on one device, the compute scale of a block from a stored series, and the prediction.
//!
//! The workloads the cluster model knows are those whose distributed version the harness
//! also runs on MPI: Jacobi 2-D and red-black SOR, their N × N grids BLOCK-distributed by
//! interior points, with a one-layer shadow exchange before every sweep that reads
//! neighbours and, for SOR, a 4-byte max reduction of EPS per iteration.

use crate::calibration::Calibration;
use crate::fit::forecast::SeriesMedians;
use crate::model::cluster::trace::TRACE_SCHEMA;
use crate::model::cluster::{
    replay, Blocks, ClusterError, ClusterReport, ComputeScale, Network, ProcessorGrid,
    ReplayOptions, Trace, TraceInterval, TraceStep, Work,
};
use crate::units::Seconds;
use crate::workloads::spec::distribution::DistributedStep;
use crate::workloads::spec::SpecWorkload;
use crate::workloads::stencil::READ_EPS;
use crate::workloads::{RunResult, WorkloadError};

/// Workloads with a distributed version.
pub const CLUSTER_WORKLOADS: [&str; 2] = ["jacobi2d", "sor-rb"];

/// One step of a workload's iteration as its distributed version performs it.
enum PlanStep {
    Phase(String, Work),
    Shadow {
        width: u64,
        arrays: u64,
        corners: bool,
    },
    Reduction(u64),
}

/// A one-point shadow of one array, as the built-in grids exchange before a sweep.
const EDGE: PlanStep = PlanStep::Shadow {
    width: 1,
    arrays: 1,
    corners: false,
};

fn plan(workload: &str) -> Option<Vec<PlanStep>> {
    use PlanStep::*;
    match workload {
        "jacobi2d" => Some(vec![EDGE, Phase("jacobi".into(), Work::Distributed)]),
        "sor-rb" => Some(vec![
            Phase("zero_u32".into(), Work::Replicated),
            EDGE,
            Phase("sor_rb red".into(), Work::Distributed),
            EDGE,
            Phase("sor_rb black".into(), Work::Distributed),
            Phase(READ_EPS.into(), Work::Replicated),
            Reduction(4),
        ]),
        _ => None,
    }
}

/// The compute phases of one iteration of `workload`'s distributed version, in order, with
/// how each divides over processors (`None` for a workload without one). The trace and the
/// MPI run both take their phases from here.
pub fn phases(workload: &str) -> Option<Vec<(String, Work)>> {
    Some(
        plan(workload)?
            .into_iter()
            .filter_map(|step| match step {
                PlanStep::Phase(name, work) => Some((name, work)),
                _ => None,
            })
            .collect(),
    )
}

/// The error for a workload with no distributed version.
pub fn unsupported(workload: &str) -> ClusterError {
    ClusterError::Trace(format!(
        "{workload:?} has no distributed version; the cluster model knows {}",
        CLUSTER_WORKLOADS.join(", ")
    ))
}

/// The interval trace of `run` (a run of a cluster workload on one device): the run, each
/// iteration, and in each iteration the phases with their mean time per execution and the
/// shadow exchanges and reductions the distributed version performs. Uploads and the final
/// download are setup, outside the trace.
pub fn trace_of(
    run: &RunResult,
    device: &str,
    threads: Option<usize>,
) -> Result<Trace, ClusterError> {
    let steps = plan(&run.workload).ok_or_else(|| unsupported(&run.workload))?;
    let interior = run.size.saturating_sub(2);
    let layout = Layout {
        extents: vec![interior, interior],
        element_bytes: 4,
        spec: None,
    };
    build_trace(run, steps, layout, device, threads, true)
}

/// The trace of a run of a spec with a `[distribution]` (`harness run SPEC --trace`): its
/// iteration as the distribution describes it, each kernel step carrying the time of all of
/// that kernel's launches in one iteration. An error when the spec has no distribution.
pub fn trace_of_spec(
    run: &RunResult,
    spec: &SpecWorkload,
    device: &str,
    threads: Option<usize>,
) -> Result<Trace, ClusterError> {
    let (Some(d), Some(extents)) = (
        &spec.distribution,
        spec.distributed_extents(run.size)
            .map_err(|e| ClusterError::Trace(e.to_string()))?,
    ) else {
        return Err(ClusterError::Trace(format!(
            "{} has no [distribution] table: the cluster model needs to know how the program \
             runs distributed (docs/spec-format.md, \"Distribution\")",
            spec.path.display()
        )));
    };
    let steps = d
        .steps
        .iter()
        .map(|s| match s {
            DistributedStep::Kernel { kernel, work } => PlanStep::Phase(kernel.clone(), *work),
            DistributedStep::Shadow {
                width,
                arrays,
                corners,
            } => PlanStep::Shadow {
                width: *width as u64,
                arrays: *arrays as u64,
                corners: *corners,
            },
            DistributedStep::Reduction { bytes } => PlanStep::Reduction(*bytes),
        })
        .collect();
    let layout = Layout {
        extents,
        element_bytes: d.element_bytes,
        spec: Some(spec.path.display().to_string()),
    };
    build_trace(run, steps, layout, device, threads, false)
}

/// The distributed array of a trace, and the spec it comes from.
struct Layout {
    extents: Vec<usize>,
    element_bytes: u64,
    spec: Option<String>,
}

/// The trace of `run` following `steps`; `once_each`: every phase must run once per
/// iteration (the built-in programs), else any whole number of times (a spec's loops).
fn build_trace(
    run: &RunResult,
    steps: Vec<PlanStep>,
    layout: Layout,
    device: &str,
    threads: Option<usize>,
    once_each: bool,
) -> Result<Trace, ClusterError> {
    let iterations = run.iterations as u64;
    let mut body = Vec::new();
    let mut per_iteration = 0.0;
    for step in steps {
        body.push(match step {
            PlanStep::Phase(name, work) => {
                let phase = run.phases.iter().find(|p| p.name == name).ok_or_else(|| {
                    ClusterError::Trace(format!("the run has no phase {name:?}"))
                })?;
                if once_each && phase.count != iterations {
                    return Err(ClusterError::Trace(format!(
                        "phase {name:?} ran {} times in {iterations} iterations; expected once each",
                        phase.count
                    )));
                }
                let seconds = phase.seconds / iterations as f64;
                per_iteration += seconds;
                TraceStep::Compute {
                    name,
                    seconds,
                    bytes: phase.bytes.map(|b| b / iterations),
                    work,
                    launches: (phase.count / iterations.max(1)).max(1),
                }
            }
            PlanStep::Shadow {
                width,
                arrays,
                corners,
            } => TraceStep::Shadow {
                width,
                arrays,
                corners,
            },
            PlanStep::Reduction(bytes) => TraceStep::Reduction { bytes },
        });
    }
    Ok(Trace {
        schema: TRACE_SCHEMA.into(),
        workload: run.workload.clone(),
        size: run.size,
        iterations,
        device: device.into(),
        threads,
        extents: layout.extents,
        element_bytes: layout.element_bytes,
        spec: layout.spec,
        verified: run.verification.as_ref().map(|v| v.passed),
        root: TraceInterval {
            name: "run".into(),
            repeat: 1,
            seconds: per_iteration * iterations as f64,
            body: vec![TraceStep::Interval(TraceInterval {
                name: "iteration".into(),
                repeat: iterations,
                seconds: per_iteration,
                body,
            })],
        },
    })
}

/// The problem size whose distributed array is one block: the block's points per dimension
/// (`points^(1/d)`) plus what the size adds to the extents (`N − extent`: 2 for the built-in
/// grids, whose boundary is not distributed).
pub fn block_size_equivalent(blocks: &Blocks, trace: &Trace) -> f64 {
    let dims = trace.extents.len().max(1) as f64;
    let mean_extent = trace.extents.iter().map(|&e| e as f64).sum::<f64>() / dims;
    let offset = (trace.size as f64 - mean_extent).max(0.0);
    (blocks.block_points() as f64).powf(1.0 / dims) + offset
}

/// Per distributed phase, a block's time over the whole array's: from `series` (the same
/// workload on the same kind of processor) where it measured the phase at sizes around the
/// block's equivalent size (log-log interpolation between the two nearest), else `1/P`.
/// Returns the scale and one note per phase saying which.
pub fn compute_scale(
    trace: &Trace,
    blocks: &Blocks,
    series: Option<&SeriesMedians>,
) -> Result<(ComputeScale, Vec<String>), ClusterError> {
    let procs = blocks.grid().count();
    let mut scale = ComputeScale::linear(procs);
    let mut notes = Vec::new();
    if let Some(s) = series {
        if s.workload != trace.workload {
            return Err(ClusterError::Trace(format!(
                "the series is of {:?}, the trace of {:?}",
                s.workload, trace.workload
            )));
        }
    }
    let n_block = block_size_equivalent(blocks, trace);
    for (name, seconds, launches) in distributed_phases(&trace.root) {
        let from_series = series.and_then(|s| interpolate(s, &name, n_block));
        match from_series {
            Some((per_launch, lo, hi)) if seconds > 0.0 => {
                let local = per_launch * launches as f64;
                let factor = local / seconds;
                notes.push(format!(
                    "{name}: a block (N ≈ {n_block:.0}) takes {:.3} ms per execution, interpolated in the series between N = {lo} and {hi}: {:.3} of the whole array's time (linear would be {:.3})",
                    local * 1e3,
                    factor,
                    1.0 / procs as f64
                ));
                scale.phases.push((name, factor));
            }
            _ => notes.push(format!(
                "{name}: a block's time is 1/{procs} of the whole array's ({})",
                if series.is_some() {
                    format!("the series does not bracket the block's N ≈ {n_block:.0}")
                } else {
                    "give --series to take cache levels into account".into()
                }
            )),
        }
    }
    Ok((scale, notes))
}

/// Every distributed compute step: its name, its time per execution and its launches per
/// execution.
fn distributed_phases(iv: &TraceInterval) -> Vec<(String, f64, u64)> {
    let mut out = Vec::new();
    for step in &iv.body {
        match step {
            TraceStep::Interval(child) => out.extend(distributed_phases(child)),
            TraceStep::Compute {
                name,
                seconds,
                work: Work::Distributed,
                launches,
                ..
            } => out.push((name.clone(), *seconds, *launches)),
            _ => {}
        }
    }
    out
}

/// The phase's time per execution at size `n`, log-log interpolated between the two series
/// sizes around it, with those sizes.
fn interpolate(series: &SeriesMedians, phase: &str, n: f64) -> Option<(f64, usize, usize)> {
    let mut points: Vec<(usize, f64)> = series
        .points
        .iter()
        .filter_map(|p| {
            let ph = p.phases.iter().find(|ph| ph.name == phase)?;
            (ph.count > 0 && ph.median_seconds > 0.0)
                .then(|| (p.size, ph.median_seconds / ph.count as f64))
        })
        .collect();
    points.sort_by_key(|p| p.0);
    let pair = points
        .windows(2)
        .find(|w| w[0].0 as f64 <= n && n <= w[1].0 as f64)?;
    let (a, b) = (pair[0], pair[1]);
    if a.0 == b.0 {
        return Some((a.1, a.0, b.0));
    }
    let x = (n.ln() - (a.0 as f64).ln()) / ((b.0 as f64).ln() - (a.0 as f64).ln());
    Some(((a.1.ln() + x * (b.1.ln() - a.1.ln())).exp(), a.0, b.0))
}

/// Predict the trace on `grid` over `network`, taking block times from `series` where it can.
pub fn predict(
    trace: &Trace,
    grid: &ProcessorGrid,
    network: &Network,
    series: Option<&SeriesMedians>,
) -> Result<ClusterReport, ClusterError> {
    trace.check()?;
    if trace.spec.is_none() && !CLUSTER_WORKLOADS.contains(&trace.workload.as_str()) {
        return Err(unsupported(&trace.workload));
    }
    let blocks = Blocks::new(&trace.extents, grid)?;
    let (scale, mut notes) = compute_scale(trace, &blocks, series)?;
    let options = ReplayOptions {
        network: network.clone(),
        blocks,
        scale,
    };
    let mut report = replay(trace, &options)?;
    if network.power != 1.0 {
        notes.push(format!(
            "power {}: every compute time is multiplied by it (a target processor {} as fast as the measured one)",
            network.power,
            if network.power > 1.0 { format!("1/{}", network.power) } else { format!("{}×", 1.0 / network.power) }
        ));
    }
    report.notes.extend(notes);
    Ok(report)
}

/// A message between two GPU-attached processors also crosses each one's host link: a
/// download at the sender and an upload at the receiver. From the calibration's transfer
/// fits (`device_to_host`, `host_to_device`), the start time and time per byte those two
/// crossings add to every message, and a line saying so; `None` without both fits.
pub fn device_hops(calibration: &Calibration) -> Option<(Seconds, f64, String)> {
    let fit = |d: &str| calibration.transfers.iter().find(|t| t.direction == d);
    let (down, up) = (fit("device_to_host")?, fit("host_to_device")?);
    let start = Seconds((down.start_ns + up.start_ns).max(0.0) * 1e-9);
    let per_byte = (down.ns_per_byte + up.ns_per_byte).max(0.0) * 1e-9;
    let note = format!(
        "each message also crosses the device's host link twice (download + upload, from the calibration of {}): +{:.3} µs and +{:.3e} µs per byte",
        calibration.device.name,
        start.0 * 1e6,
        per_byte * 1e6
    );
    Some((start, per_byte, note))
}

/// `network` with the device hops of [`device_hops`] added to its message line.
pub fn with_device_hops(network: &Network, hops: (Seconds, f64)) -> Result<Network, ClusterError> {
    Network::new(
        network.kind,
        Seconds(network.start.0 + hops.0 .0),
        network.byte_time + hops.1,
        network.power,
        network.topology.clone(),
    )
}

/// Load a trace file and check it.
pub fn load_trace(path: &std::path::Path) -> Result<Trace, WorkloadError> {
    let trace: Trace = crate::experiments::series::read_json(path)?;
    trace
        .check()
        .map_err(|e| WorkloadError::Invalid(format!("{}: {e}", path.display())))?;
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::{PhaseMedian, SizeMedians};
    use crate::workloads::phases::PhaseTiming;

    fn run(workload: &str, phases: &[(&str, f64, u64)]) -> RunResult {
        RunResult {
            workload: workload.into(),
            size: 130,
            iterations: 10,
            phases: phases
                .iter()
                .map(|&(name, seconds, count)| PhaseTiming {
                    flops: None,
                    threads: None,
                    name: name.into(),
                    seconds,
                    count,
                    fraction: 0.0,
                    bytes: None,
                    items: None,
                })
                .collect(),
            total_seconds: phases.iter().map(|p| p.1).sum(),
            kernel_seconds: 0.0,
            verification: None,
        }
    }

    #[test]
    fn a_trace_holds_the_distributed_programs_steps_and_setup_stays_out() {
        let r = run(
            "jacobi2d",
            &[
                ("upload", 5.0, 2),
                ("jacobi", 1.0, 10),
                ("download", 3.0, 1),
            ],
        );
        let t = trace_of(&r, "hand", Some(1)).unwrap();
        assert_eq!(t.extents, vec![128, 128]);
        assert_eq!(t.root.seconds, 1.0);
        let TraceStep::Interval(it) = &t.root.body[0] else {
            panic!("an iteration interval")
        };
        assert_eq!(it.repeat, 10);
        assert!(matches!(it.body[0], TraceStep::Shadow { width: 1, .. }));
        assert!(
            matches!(&it.body[1], TraceStep::Compute { seconds, .. } if (*seconds - 0.1).abs() < 1e-15)
        );
        assert!(trace_of(&run("vadd", &[]), "hand", None).is_err());
        // A phase that ran another number of times than the iterations is refused.
        let odd = run("jacobi2d", &[("jacobi", 1.0, 11)]);
        assert!(trace_of(&odd, "hand", None)
            .unwrap_err()
            .to_string()
            .contains("11 times"));
    }

    #[test]
    fn a_blocks_time_comes_from_the_series_where_it_brackets_the_block() {
        let r = run("jacobi2d", &[("jacobi", 1.0, 10)]);
        let mut t = trace_of(&r, "hand", None).unwrap();
        t.size = 1026;
        t.extents = vec![1024, 1024];
        // Series: 0.01 s per sweep at N = 514 and 0.04 s at N = 1026 (per run of 2 sweeps).
        let series = SeriesMedians {
            workload: "jacobi2d".into(),
            points: [(514usize, 0.02), (1026, 0.08)]
                .iter()
                .map(|&(size, median)| SizeMedians {
                    size,
                    phases: vec![PhaseMedian {
                        flops: None,
                        name: "jacobi".into(),
                        median_seconds: median,
                        count: 2,
                        bytes: None,
                        items: None,
                        ci95_seconds: None,
                    }],
                    total_seconds: median,
                })
                .collect(),
            drift: None,
            drift_shared: None,
            cold: Vec::new(),
            target_amounts: Vec::new(),
        };
        // 2 × 2 blocks of 512 × 512: N ≈ 514 exactly, 0.01 s against the trace's 0.1 s.
        let blocks = Blocks::new(&t.extents, &ProcessorGrid::parse("2x2").unwrap()).unwrap();
        let (scale, notes) = compute_scale(&t, &blocks, Some(&series)).unwrap();
        assert!((scale.phases[0].1 - 0.1).abs() < 1e-12, "{scale:?}");
        assert!(notes[0].contains("interpolated"), "{notes:?}");
        // 4 × 4 blocks (N ≈ 258) lie below the series: 1/16, said so.
        let small = Blocks::new(&t.extents, &ProcessorGrid::parse("4x4").unwrap()).unwrap();
        let (scale, notes) = compute_scale(&t, &small, Some(&series)).unwrap();
        assert!(scale.phases.is_empty() && scale.default == 1.0 / 16.0);
        assert!(notes[0].contains("does not bracket"), "{notes:?}");
        // Between the sizes: log-log interpolation (N = 2^9.5 + 2 … geometric mean of times).
        let (mid, lo, hi) = interpolate(&series, "jacobi", (514.0f64 * 1026.0).sqrt()).unwrap();
        assert_eq!((lo, hi), (514, 1026));
        assert!((mid - (0.01f64 * 0.04).sqrt()).abs() < 1e-12);
        let other = SeriesMedians {
            workload: "sor-rb".into(),
            ..series
        };
        assert!(compute_scale(&t, &blocks, Some(&other)).is_err());
    }
}
