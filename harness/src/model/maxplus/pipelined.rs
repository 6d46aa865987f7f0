//! **Our extension, not the paper's:** overlapping rounds plus launch overhead.
//!
//! The published models (see [`super::models`]) charge every one of the ⌈N/n⌉ rounds the full
//! latency of one instance, as if a round could start only after the previous one finished.
//! Real devices keep many memory requests in flight, so successive rounds overlap: after the
//! first round, a round costs only the time the memory system needs to serve its accesses,
//! n(kΔt + wΔT) for k reads and w writes per instance — the serialization intervals the
//! calibration measures, summed because reads and writes share one memory bus. Here k counts
//! only the reads that reach memory: a read through a cache node (a value a neighbour
//! already brought in) is served by the cache and costs no memory interval. The paper
//! itself warns that its models ignore the overlap of computation and memory access (its §12, the conclusion).
//!
//! The extension keeps the published serialized-memory time P of one instance (the paper's
//! T + (wn−1)ΔT + τ + t + (kn−1)Δt for vadd) for the first round and adds the overlap term
//! and the calibrated launch overhead L:
//!
//! T_pipelined = L + s·(P + (⌈N/n⌉ − 1)·n(kΔt + wΔT))
//!
//! with s the dependent steps each executor performs in sequence (1 for a map kernel, the
//! line length for an ADI line sweep). It is labelled as an extension everywhere it is shown,
//! and the published variants are never changed by it.

use serde::Serialize;

use super::error::MaxPlusError;
use super::graph::KernelGraph;
use super::models::{count_text, predict, ModelVariant};
use super::parameters::Parameters;
use crate::units::{Parameter, Seconds};

/// The variant's name in tables, files and figures.
pub const PIPELINED_NAME: &str = "ext_pipelined";

/// The shape of one launch: how many instances and how many dependent steps each executor
/// runs one after the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LaunchShape {
    /// Independent instances (one per executor slot) in the launch.
    pub instances: u64,
    /// Dependent steps per instance, run in sequence by one executor (1 for a map kernel).
    pub steps: u64,
}

/// One launch's predicted time under the pipelined extension.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PipelinedPrediction {
    /// The formula, e.g. `L + s·(P + (R − 1)·n(kΔt + wΔT))` with the symbolic P.
    pub formula: String,
    /// P: the first round, seconds (the published serialized-memory time).
    pub first_round_seconds: f64,
    /// n(kΔt + wΔT): each further round, seconds.
    pub round_interval_seconds: f64,
    /// ⌈N/n⌉.
    pub rounds: u64,
    /// The whole launch, seconds.
    pub total_seconds: f64,
}

/// Predicts one launch of `shape` on `executors` executors with launch overhead
/// `launch` (see the module documentation for the formula).
///
/// ```
/// use harness::model::maxplus::examples::vadd_z2;
/// use harness::model::maxplus::pipelined::{pipelined, LaunchShape};
/// use harness::model::maxplus::Parameters;
/// use harness::units::Seconds;
/// let p = Parameters::from_pairs(&[("t", 4.0), ("T", 5.0), ("tau", 1.0), ("dt", 0.5), ("dT", 1.0)])?;
/// let shape = LaunchShape { instances: 10, steps: 1 };
/// let prediction = pipelined(&vadd_z2(), &p, 2, shape, Seconds(3.0))?;
/// // P = T + (2−1)ΔT + τ + t + (2·2−1)Δt = 5 + 1 + 1 + 4 + 1.5 = 12.5;
/// // each further round n(kΔt + wΔT) = 2·(2·0.5 + 1·1) = 4; 5 rounds; L = 3.
/// assert_eq!(prediction.total_seconds, 3.0 + 12.5 + 4.0 * 4.0);
/// # Ok::<(), harness::model::maxplus::MaxPlusError>(())
/// ```
pub fn pipelined(
    graph: &KernelGraph,
    parameters: &Parameters,
    executors: u64,
    shape: LaunchShape,
    launch: Seconds,
) -> Result<PipelinedPrediction, MaxPlusError> {
    let first = predict(
        graph,
        parameters,
        executors,
        shape.instances,
        ModelVariant::SerializedMemory,
    )?;
    let per_executor = f64::from(graph.memory_reads())
        * parameters.get(Parameter::ReadGap.key())?
        + f64::from(graph.writes()) * parameters.get(Parameter::WriteGap.key())?;
    let round_interval_seconds = executors as f64 * per_executor;
    let further = first.rounds.saturating_sub(1) as f64;
    let steps = shape.steps.max(1) as f64;
    Ok(PipelinedPrediction {
        formula: format!(
            "L + s·(P + (R − 1)·n({} + {})), P = {}",
            count_text(graph.memory_reads(), Parameter::ReadGap.symbol()),
            count_text(graph.writes(), Parameter::WriteGap.symbol()),
            first.formula
        ),
        first_round_seconds: first.per_instance_seconds,
        round_interval_seconds,
        rounds: first.rounds,
        total_seconds: launch.0
            + steps * (first.per_instance_seconds + further * round_interval_seconds),
    })
}

#[cfg(test)]
mod tests {
    use super::super::examples::vadd_z2;
    use super::*;

    fn parameters() -> Parameters {
        Parameters::from_pairs(&[
            ("t", 4e-7),
            ("T", 5e-7),
            ("tau", 2e-9),
            ("dt", 1e-11),
            ("dT", 2e-11),
        ])
        .expect("finite")
    }

    #[test]
    fn one_round_is_the_published_serialized_time_plus_launch() {
        let p = parameters();
        let shape = LaunchShape {
            instances: 100,
            steps: 1,
        };
        let published =
            predict(&vadd_z2(), &p, 128, 100, ModelVariant::SerializedMemory).expect("predicts");
        let ext = pipelined(&vadd_z2(), &p, 128, shape, Seconds(1e-6)).expect("predicts");
        assert_eq!(ext.rounds, 1);
        assert!((ext.total_seconds - (1e-6 + published.total_seconds)).abs() < 1e-18);
    }

    #[test]
    fn many_rounds_approach_the_bandwidth_bound() {
        let p = parameters();
        let instances = 1u64 << 30;
        let shape = LaunchShape {
            instances,
            steps: 1,
        };
        let ext = pipelined(&vadd_z2(), &p, 1024, shape, Seconds(0.0)).expect("predicts");
        // N(kΔt + wΔT) = 2^30 · (2e-11 + 2e-11).
        let bound = instances as f64 * 4e-11;
        assert!((ext.total_seconds / bound - 1.0).abs() < 1e-3);
        let published = predict(
            &vadd_z2(),
            &p,
            1024,
            instances,
            ModelVariant::WithOperations,
        )
        .expect("predicts");
        // Latency per round (≈ 0.9 µs × 2^20 rounds) against bandwidth (≈ 43 ms).
        assert!(published.total_seconds > 20.0 * ext.total_seconds);
    }

    #[test]
    fn steps_multiply_the_rounds_but_not_the_launch() {
        let p = parameters();
        let one = LaunchShape {
            instances: 4096,
            steps: 1,
        };
        let ten = LaunchShape { steps: 10, ..one };
        let a = pipelined(&vadd_z2(), &p, 64, one, Seconds(5e-6)).expect("predicts");
        let b = pipelined(&vadd_z2(), &p, 64, ten, Seconds(5e-6)).expect("predicts");
        let work = |x: &PipelinedPrediction| x.total_seconds - 5e-6;
        assert!((work(&b) / work(&a) - 10.0).abs() < 1e-9);
    }

    #[test]
    fn a_missing_interval_is_named() {
        let p = Parameters::from_pairs(&[("t", 1.0), ("T", 1.0), ("tau", 1.0)]).expect("finite");
        let shape = LaunchShape {
            instances: 8,
            steps: 1,
        };
        let err = pipelined(&vadd_z2(), &p, 2, shape, Seconds(0.0))
            .expect_err("the intervals are missing");
        assert!(err.to_string().contains("`dT`"), "{err}");
    }
}
