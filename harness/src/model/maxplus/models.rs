//! Run-time predictions for N instances on n simultaneous executors (Antonyuk & Mikheev 2022,
//! §7–§9; docs/models.md §1 "Finite executors", "Caching").
//!
//! N instances take ⌈N/n⌉ rounds; each round takes the time of one (the slowest) instance:
//!
//! | variant | per instance | paper |
//! |---|---|---|
//! | [`ModelVariant::Naive`] | ⟨1_o, Z^⊙k ⊙ 1_i⟩ of the graph without self-loops (vadd: T + t) | §7 |
//! | [`ModelVariant::WithOperations`] | ⟨1_o, Z^⊙k ⊙ 1_i⟩ of the full graph (vadd: T + τ + t) | §8 |
//! | [`ModelVariant::SerializedMemory`] | the full graph ⊙ (kn − 1)Δt ⊙ (wn − 1)ΔT | §9 |
//! | [`ModelVariant::Caching`] | the full graph, `t` → `t_cache` on arcs leaving cache nodes | §9 |
//!
//! Serialized memory: the slowest executor of a round gets its last of k reads after
//! t + (kn − 1)Δt and its last of w writes lands after T + (wn − 1)ΔT (paper §9 and its
//! footnote 5; with k = 2, w = 1 this is the paper's T + (n − 1)ΔT + τ + t + (2n − 1)Δt). We
//! add both lags to the graph's time, which assumes the critical path runs through the last
//! read and the last write, as in the paper's Z3. A graph with no reads (k = 0) or no writes
//! (w = 0) gets no lag for them.
//!
//! Caching: the paper's simplest form gives repeat reads a second, smaller time. Our rule:
//! an arc that leaves a `cache` node reads a value a neighbour instance already brought in,
//! so in the caching variant its `t` becomes `t_cache`; in the other variants it costs `t`.
//!
//! "The graph's time" is the exact longest path (each self-loop once), which equals the
//! paper's ⟨1_o, Z^⊙k ⊙ 1_i⟩ on its examples; see [`super::time`] for where they differ.
//! The parameter `n` is set to the executor count before evaluating, so a graph may carry
//! the lags itself (kernels/graphs/vadd_z3.toml): use it with `WithOperations`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::error::MaxPlusError;
use super::graph::KernelGraph;
use super::parameters::Parameters;
use super::poly::Term;
use super::time::critical_path;
use crate::units::Parameter;

/// Which of the paper's models to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelVariant {
    /// Memory transfers only, operation times neglected: ⌈N/n⌉(T + t) for vadd (§7).
    Naive,
    /// With the operation times (self-loops): ⌈N/n⌉(T + τ + t) for vadd (§8).
    WithOperations,
    /// With serialized global memory: ⌈N/n⌉(T + (wn−1)ΔT + τ + t + (kn−1)Δt) (§9).
    SerializedMemory,
    /// With operations, repeat reads from cache nodes at `t_cache` (§9, caching).
    Caching,
}

impl ModelVariant {
    /// All variants, from the simplest.
    pub const ALL: [ModelVariant; 4] = [
        ModelVariant::Naive,
        ModelVariant::WithOperations,
        ModelVariant::SerializedMemory,
        ModelVariant::Caching,
    ];

    /// The short name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ModelVariant::Naive => "naive",
            ModelVariant::WithOperations => "with_operations",
            ModelVariant::SerializedMemory => "serialized_memory",
            ModelVariant::Caching => "caching",
        }
    }
}

impl fmt::Display for ModelVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl FromStr for ModelVariant {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ModelVariant::ALL
            .into_iter()
            .find(|variant| variant.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = ModelVariant::ALL.iter().map(|v| v.name()).collect();
                format!("unknown model `{text}` (known: {})", names.join(", "))
            })
    }
}

/// A predicted run time.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// The model used.
    pub model: ModelVariant,
    /// The per-instance time as the paper writes it, e.g. `T + τ + t`: the sum of times along
    /// the critical path, i.e. the term of ⟨1_o, Z^⊙k ⊙ 1_i⟩ that is largest for these
    /// parameters (plus the serialization lags).
    pub formula: String,
    /// The per-instance time for the given parameters.
    pub per_instance_seconds: f64,
    /// ⌈N/n⌉.
    pub rounds: u64,
    /// ⌈N/n⌉ · per-instance time.
    pub total_seconds: f64,
}

/// Predicts the time of `instances` kernel instances on `executors` simultaneous executors.
///
/// ```
/// use harness::model::maxplus::examples::vadd_z2;
/// use harness::model::maxplus::models::{predict, ModelVariant};
/// use harness::model::maxplus::parameters::Parameters;
/// let parameters = Parameters::from_pairs(&[("t", 4.0), ("T", 5.0), ("tau", 1.0)])?;
/// let prediction = predict(&vadd_z2(), &parameters, 4, 10, ModelVariant::WithOperations)?;
/// assert_eq!(prediction.formula, "T + τ + t");
/// assert_eq!(prediction.rounds, 3);
/// assert_eq!(prediction.total_seconds, 30.0);
/// # Ok::<(), harness::model::maxplus::MaxPlusError>(())
/// ```
pub fn predict(
    graph: &KernelGraph,
    parameters: &Parameters,
    executors: u64,
    instances: u64,
    variant: ModelVariant,
) -> Result<Prediction, MaxPlusError> {
    if executors == 0 {
        return Err(MaxPlusError::ZeroExecutors);
    }
    let mut parameters = parameters.clone();
    parameters.set("n", executors as f64)?;
    let model_graph = match variant {
        ModelVariant::Naive => graph.without_self_loops(),
        ModelVariant::WithOperations | ModelVariant::SerializedMemory => graph.clone(),
        ModelVariant::Caching => graph.with_cached_reads(),
    };
    let lag = match variant {
        ModelVariant::SerializedMemory => {
            serialization_lag(graph.reads(), graph.writes(), executors)
        }
        _ => Term::constant(0.0),
    };
    let path = critical_path(&model_graph, &parameters)?;
    let formula = path.formula.plus(&lag);
    let per_instance_seconds = path.seconds + lag.evaluate(&parameters)?;
    let rounds = instances.div_ceil(executors);
    Ok(Prediction {
        model: variant,
        formula: formula.to_string(),
        per_instance_seconds,
        rounds,
        total_seconds: rounds as f64 * per_instance_seconds,
    })
}

/// The lags of the slowest executor: (kn − 1)Δt + (wn − 1)ΔT (paper §9, footnote 5).
pub fn serialization_lag(reads: u32, writes: u32, executors: u64) -> Term {
    let count = |accesses: u32| {
        if accesses == 0 {
            0
        } else {
            let executors = i64::try_from(executors).unwrap_or(i64::MAX);
            i64::from(accesses)
                .saturating_mul(executors)
                .saturating_sub(1)
        }
    };
    Term::scaled(Parameter::ReadGap.key(), count(reads))
        .plus(&Term::scaled(Parameter::WriteGap.key(), count(writes)))
}

/// `kΔt`, `Δt` for k = 1.
pub(super) fn count_text(count: u32, interval: &str) -> String {
    match count {
        1 => interval.to_string(),
        k => format!("{k}{interval}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::examples::vadd_z2;
    use super::super::random::{chain_graph, random_dag};
    use super::*;
    use std::path::PathBuf;

    fn sample() -> Parameters {
        Parameters::from_pairs(&[
            ("t", 4e-7),
            ("T", 5e-7),
            ("tau", 2e-9),
            ("dt", 1e-10),
            ("dT", 3e-10),
            ("t_cache", 5e-8),
        ])
        .expect("finite")
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
    }

    fn graphs_dir() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/graphs"))
    }

    fn load(name: &str) -> KernelGraph {
        KernelGraph::load(&graphs_dir().join(name)).expect("shipped graphs are valid")
    }

    #[test]
    fn the_papers_three_models_for_vadd() {
        let (t, big_t, tau, dt, big_dt) = (4e-7, 5e-7, 2e-9, 1e-10, 3e-10);
        let (n, instances) = (32u64, 1000u64);
        let rounds = 32.0; // ⌈1000/32⌉
        let graph = vadd_z2();
        let naive = predict(&graph, &sample(), n, instances, ModelVariant::Naive).expect("valid");
        assert_eq!(naive.formula, "T + t");
        assert!(close(naive.total_seconds, rounds * (big_t + t)));
        let with_ops = predict(
            &graph,
            &sample(),
            n,
            instances,
            ModelVariant::WithOperations,
        )
        .expect("valid");
        assert_eq!(with_ops.formula, "T + τ + t");
        assert_eq!(with_ops.rounds, 32);
        assert!(close(with_ops.total_seconds, rounds * (big_t + tau + t)));
        let serialized = predict(
            &graph,
            &sample(),
            n,
            instances,
            ModelVariant::SerializedMemory,
        )
        .expect("valid");
        assert_eq!(serialized.formula, "T + 31ΔT + τ + t + 63Δt");
        let paper = big_t + 31.0 * big_dt + tau + t + 63.0 * dt;
        assert!(close(serialized.total_seconds, rounds * paper));
    }

    #[test]
    fn the_z3_file_carries_the_lags_itself() {
        let z3 = load("vadd_z3.toml");
        let with_lags =
            predict(&z3, &sample(), 32, 1000, ModelVariant::WithOperations).expect("valid");
        assert_eq!(with_lags.formula, "T + (n − 1)ΔT + τ + t + (2n − 1)Δt");
        let from_z2 = predict(
            &load("vadd_z2.toml"),
            &sample(),
            32,
            1000,
            ModelVariant::SerializedMemory,
        )
        .expect("valid");
        assert!(close(with_lags.total_seconds, from_z2.total_seconds));
    }

    #[test]
    fn caching_uses_the_repeat_read_time_on_arcs_from_cache_nodes() {
        let graph = load("jacobi5.toml");
        let plain = predict(&graph, &sample(), 1, 1, ModelVariant::WithOperations).expect("valid");
        let cached = predict(&graph, &sample(), 1, 1, ModelVariant::Caching).expect("valid");
        // the first-touch centre read still decides: reads overlap in this model
        assert_eq!(plain.formula, "T + 5τ + t");
        assert_eq!(cached.formula, "T + 5τ + t");
        // a cache slower than memory, only to see the rule act on the neighbour reads
        let mut slow_cache = sample();
        slow_cache.set("t_cache", 1e-6).expect("finite");
        let cached = predict(&graph, &slow_cache, 1, 1, ModelVariant::Caching).expect("valid");
        assert_eq!(cached.formula, "T + 5τ + t_cache");
        let plain =
            predict(&graph, &slow_cache, 1, 1, ModelVariant::WithOperations).expect("valid");
        assert_eq!(plain.formula, "T + 5τ + t");
    }

    #[test]
    fn every_shipped_graph_gives_a_finite_positive_time() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(graphs_dir())
            .expect("kernels/graphs exists")
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 7, "{files:?}");
        for file in files {
            let graph = KernelGraph::load(&file).unwrap_or_else(|error| panic!("{error}"));
            for variant in ModelVariant::ALL {
                let prediction = predict(&graph, &sample(), 128, 1 << 20, variant)
                    .unwrap_or_else(|error| panic!("{}: {error}", file.display()));
                assert!(
                    prediction.total_seconds.is_finite() && prediction.total_seconds > 0.0,
                    "{}: {variant}: {prediction:?}",
                    file.display()
                );
            }
        }
    }

    #[test]
    fn zero_executors_and_zero_instances() {
        let graph = vadd_z2();
        assert!(predict(&graph, &sample(), 0, 10, ModelVariant::Naive).is_err());
        let none = predict(&graph, &sample(), 8, 0, ModelVariant::Naive).expect("valid");
        assert_eq!((none.rounds, none.total_seconds), (0, 0.0));
    }

    #[test]
    fn a_missing_parameter_value_is_named() {
        let parameters = Parameters::from_pairs(&[("t", 1.0), ("T", 1.0)]).expect("finite");
        let message = predict(&vadd_z2(), &parameters, 1, 1, ModelVariant::WithOperations)
            .unwrap_err()
            .to_string();
        assert!(message.contains("`tau`"), "{message}");
    }

    /// Correctness on 1000-node graphs; their speed (< 50 ms) is `benches/maxplus.rs`.
    #[test]
    fn large_graphs_predict() {
        let chain = predict(
            &chain_graph(1000),
            &sample(),
            64,
            4096,
            ModelVariant::WithOperations,
        )
        .expect("valid");
        assert_eq!(chain.formula, "998τ + 999t");
        let wide = predict(
            &random_dag(1000, 11),
            &sample(),
            64,
            4096,
            ModelVariant::SerializedMemory,
        )
        .expect("valid");
        assert!(wide.total_seconds > 0.0);
    }

    #[test]
    fn variants_round_trip_through_their_names_and_json() {
        for variant in ModelVariant::ALL {
            assert_eq!(variant.name().parse::<ModelVariant>(), Ok(variant));
        }
        assert!("fast"
            .parse::<ModelVariant>()
            .unwrap_err()
            .contains("naive"));
        let prediction = predict(&vadd_z2(), &sample(), 2, 4, ModelVariant::Naive).expect("valid");
        let json = serde_json::to_value(&prediction).expect("serialisable");
        assert_eq!(json["model"], "naive");
        assert_eq!(json["formula"], "T + t");
        assert_eq!(json["rounds"], 2);
    }
}
