//! The interval trace of a run on one processor (`harness run … --trace FILE`): what the
//! replay needs, and nothing of the device that took it.
//!
//! Like the DVM Predictor's trace, the run is a tree of intervals: the whole run, each
//! iteration, each phase. Unlike it, the trace is already summarised: an interval's body is
//! the sequence of steps one execution of it performs, each compute step with its mean time
//! per execution, each communication step with what it moves. Collective operations (a
//! shadow exchange, a reduction) appear where the distributed program performs them.

use serde::{Deserialize, Serialize};

use super::ClusterError;

/// The trace file's schema name.
pub const TRACE_SCHEMA: &str = "harness.trace/1";

/// A recorded run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// Always [`TRACE_SCHEMA`].
    pub schema: String,
    /// Workload name (`jacobi2d`, `sor-rb`).
    pub workload: String,
    /// Problem size N (the grid is N × N with a fixed boundary).
    pub size: usize,
    /// Iterations run.
    pub iterations: u64,
    /// The device that ran it, in words.
    pub device: String,
    /// Host threads the run used, where the device is the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// Interior points per dimension of the distributed array.
    pub extents: Vec<usize>,
    /// Bytes per element of the distributed array.
    pub element_bytes: u64,
    /// The spec file the run came from, for a bring-your-own program (its `[distribution]`
    /// gave the steps); `None` for the built-in workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    /// Whether the output was checked against the host reference, and passed.
    pub verified: Option<bool>,
    /// The whole run.
    pub root: TraceInterval,
}

/// An interval: a named, repeated sequence of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceInterval {
    /// Name shown in reports (`run`, `iteration`, a phase name).
    pub name: String,
    /// Executions per execution of the parent (the root: 1).
    pub repeat: u64,
    /// Measured time of one execution on the one processor, seconds.
    pub seconds: f64,
    /// The steps of one execution, in order.
    pub body: Vec<TraceStep>,
}

/// How a compute step's work divides over processors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Work {
    /// Over the distributed array: each processor does its block's share.
    Distributed,
    /// Done whole on every processor (duplicated work: the loss of insufficient parallelism).
    Replicated,
}

/// One step of an interval's body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case", deny_unknown_fields)]
pub enum TraceStep {
    /// A nested interval.
    Interval(TraceInterval),
    /// Computation: a phase of the run, an interval of its own in the report.
    Compute {
        /// Phase name.
        name: String,
        /// Mean time of one execution on the one processor, seconds.
        seconds: f64,
        /// Bytes one execution moves at least, where known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        /// How the work divides.
        work: Work,
        /// Launches one execution is made of (a spec's kernel may be launched several times
        /// per iteration): a block's time from a series, which times one launch, is this
        /// many launches.
        #[serde(default = "one_launch", skip_serializing_if = "is_one_launch")]
        launches: u64,
    },
    /// A shadow (halo) exchange of the distributed array(s).
    Shadow {
        /// Layers exchanged on each side.
        width: u64,
        /// Arrays exchanged at once.
        arrays: u64,
        /// Whether corner (diagonal) neighbours are exchanged too.
        corners: bool,
    },
    /// A reduction (such as SOR's max |change|) of `bytes` over all processors.
    Reduction {
        /// Bytes reduced.
        bytes: u64,
    },
}

/// Most compute and communication steps a replay may perform (per processor): the bound on a
/// prediction's work.
pub const MAX_STEPS: f64 = 1e8;

impl Trace {
    /// Check what the replay relies on: the schema, finite non-negative times, repeats ≥ 1,
    /// extents ≥ 1, and at most [`MAX_STEPS`] steps in all.
    pub fn check(&self) -> Result<(), ClusterError> {
        if self.schema != TRACE_SCHEMA {
            return Err(ClusterError::Trace(format!(
                "schema {:?}, expected {TRACE_SCHEMA:?}",
                self.schema.chars().take(40).collect::<String>()
            )));
        }
        if self.extents.is_empty() || self.extents.contains(&0) || self.element_bytes == 0 {
            return Err(ClusterError::Trace(
                "the array needs extents ≥ 1 and element_bytes ≥ 1".into(),
            ));
        }
        let steps = check_interval(&self.root, 0)?;
        if steps > MAX_STEPS {
            return Err(ClusterError::TooMuchWork(format!(
                "the trace unrolls to {steps:.3e} steps per processor, above the bound of {MAX_STEPS:.0e}"
            )));
        }
        Ok(())
    }
}

fn check_interval(iv: &TraceInterval, depth: usize) -> Result<f64, ClusterError> {
    if depth > 16 {
        return Err(ClusterError::Trace(
            "intervals nested deeper than 16".into(),
        ));
    }
    if iv.repeat == 0 || !(iv.seconds.is_finite() && iv.seconds >= 0.0) {
        return Err(ClusterError::Trace(format!(
            "interval {:?}: repeat must be ≥ 1 and seconds finite and ≥ 0",
            iv.name.chars().take(40).collect::<String>()
        )));
    }
    let mut steps = 0.0;
    for step in &iv.body {
        steps += match step {
            TraceStep::Interval(child) => check_interval(child, depth + 1)?,
            TraceStep::Compute { name, seconds, .. } => {
                if !(seconds.is_finite() && *seconds >= 0.0) {
                    return Err(ClusterError::Trace(format!(
                        "phase {:?}: seconds must be finite and ≥ 0",
                        name.chars().take(40).collect::<String>()
                    )));
                }
                1.0
            }
            TraceStep::Shadow { width, arrays, .. } => {
                if *width == 0 || *arrays == 0 {
                    return Err(ClusterError::Trace(
                        "a shadow exchange needs width ≥ 1 and arrays ≥ 1".into(),
                    ));
                }
                1.0
            }
            TraceStep::Reduction { .. } => 1.0,
        };
    }
    Ok(steps.max(1.0) * iv.repeat as f64)
}

fn one_launch() -> u64 {
    1
}

fn is_one_launch(n: &u64) -> bool {
    *n == 1
}
