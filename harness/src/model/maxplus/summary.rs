//! Everything `harness maxplus` shows about a graph before any number: its nodes, Z, the
//! height, the paper's literal ⟨1_o, Z^⊙k ⊙ 1_i⟩ and the symbolic time of every model.

use serde::Serialize;

use super::error::MaxPlusError;
use super::graph::KernelGraph;
use super::models::{count_text, ModelVariant};
use super::pipelined::PIPELINED_NAME;
use super::time::{kernel_formula, paper_kernel_time};
use crate::units::Parameter;

/// One node as listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeRow {
    /// Its id (the row and column of Z, in this order).
    pub id: String,
    /// input, output, op or cache.
    pub kind: String,
    /// Free text, where given.
    pub label: Option<String>,
}

/// A model's per-instance time as a formula.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NamedFormula {
    /// The variant's name.
    pub model: String,
    /// Whether the variant is the paper's.
    pub published: bool,
    /// The formula (a max of sums where no single path dominates symbolically).
    pub formula: String,
}

/// The symbolic description of a graph.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GraphSummary {
    /// The graph's name.
    pub name: String,
    /// Its description.
    pub description: Option<String>,
    /// The nodes, in matrix order.
    pub nodes: Vec<NodeRow>,
    /// Global reads k and writes w per instance.
    pub reads: u32,
    /// Global writes per instance.
    pub writes: u32,
    /// The height k with the paper's self-loop rule.
    pub height: usize,
    /// The kernel matrix Z, one bracketed row per line (z_ij = arc j → i).
    pub matrix: String,
    /// ⟨1_o, Z^⊙k ⊙ 1_i⟩ taken literally (paper §6); see [`super::time`] for where it can
    /// differ from the exact time.
    pub paper_formula: String,
    /// Each model's per-instance time.
    pub formulas: Vec<NamedFormula>,
}

/// Largest graph whose literal Z^k (the paper's expression) the summary computes: the
/// matrix power costs O(nodes³ · log height) polynomial products.
pub const PAPER_FORMULA_MAX_NODES: usize = 64;

/// Describe `graph` symbolically.
///
/// ```
/// use harness::model::maxplus::examples::vadd_z2;
/// use harness::model::maxplus::summary::summarise;
/// let s = summarise(&vadd_z2())?;
/// assert_eq!(s.height, 3);
/// assert_eq!(s.paper_formula, "T + τ + t");
/// assert_eq!(s.formulas[0].formula, "T + t");
/// # Ok::<(), harness::model::maxplus::MaxPlusError>(())
/// ```
pub fn summarise(graph: &KernelGraph) -> Result<GraphSummary, MaxPlusError> {
    // A graph too dense for the exact formula is still summarised and predicted (the
    // prediction takes the numeric critical path); its formulas say why they are missing.
    let kernel_formula = |g: &KernelGraph| match kernel_formula(g) {
        Err(e @ MaxPlusError::FormulaTooLarge { .. }) => Ok(format!("(not derived: {e})")),
        other => other.map(|p| p.to_string()),
    };
    let full = kernel_formula(graph)?;
    let lag = format!(
        "{} + {}",
        lag_text(graph.reads(), Parameter::ReadGap.symbol()),
        lag_text(graph.writes(), Parameter::WriteGap.symbol())
    );
    let formulas = ModelVariant::ALL
        .into_iter()
        .map(|variant| {
            let formula = match variant {
                ModelVariant::Naive => kernel_formula(&graph.without_self_loops())?,
                ModelVariant::WithOperations => full.clone(),
                ModelVariant::SerializedMemory => format!("{full} + {lag}"),
                ModelVariant::Caching => kernel_formula(&graph.with_cached_reads())?,
            };
            Ok(NamedFormula {
                model: variant.name().to_string(),
                published: true,
                formula,
            })
        })
        .chain(std::iter::once(Ok(NamedFormula {
            model: PIPELINED_NAME.to_string(),
            published: false,
            formula: format!(
                "L + s·(P + (⌈N/n⌉ − 1)·n({} + {})), P = serialized_memory",
                count_text(graph.memory_reads(), Parameter::ReadGap.symbol()),
                count_text(graph.writes(), Parameter::WriteGap.symbol())
            ),
        })))
        .collect::<Result<Vec<_>, MaxPlusError>>()?;
    Ok(GraphSummary {
        name: graph.name().to_string(),
        description: graph.description().map(str::to_string),
        nodes: graph
            .nodes()
            .iter()
            .map(|n| NodeRow {
                id: n.id.clone(),
                kind: n.kind.to_string(),
                label: n.label.clone(),
            })
            .collect(),
        reads: graph.reads(),
        writes: graph.writes(),
        height: graph.height(),
        matrix: graph.kernel_matrix().to_string(),
        paper_formula: if graph.nodes().len() <= PAPER_FORMULA_MAX_NODES {
            paper_kernel_time(graph)?.to_string()
        } else {
            format!(
                "(not computed: Z^k over {} nodes costs O(nodes³) polynomial products; shown for graphs of at most {PAPER_FORMULA_MAX_NODES} nodes)",
                graph.nodes().len()
            )
        },
        formulas,
    })
}

/// `(kn − 1)Δt`, or `0·Δt` for no accesses.
fn lag_text(accesses: u32, interval: &str) -> String {
    match accesses {
        0 => format!("0·{interval}"),
        1 => format!("(n − 1){interval}"),
        k => format!("({k}n − 1){interval}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::examples::{vadd_z1, vadd_z2};
    use super::*;

    #[test]
    fn vadd_z2_formulas_are_the_papers() {
        let s = summarise(&vadd_z2()).expect("summarises");
        let by_name = |name: &str| {
            s.formulas
                .iter()
                .find(|f| f.model == name)
                .map(|f| f.formula.clone())
                .expect("variant present")
        };
        assert_eq!(by_name("naive"), "T + t");
        assert_eq!(by_name("with_operations"), "T + τ + t");
        assert_eq!(
            by_name("serialized_memory"),
            "T + τ + t + (2n − 1)Δt + (n − 1)ΔT"
        );
        assert!(!s.formulas.last().expect("extension").published);
        assert_eq!(s.matrix.lines().count(), s.nodes.len());
    }

    #[test]
    fn z1_has_height_two() {
        let s = summarise(&vadd_z1()).expect("summarises");
        assert_eq!(s.height, 2);
        assert_eq!(s.paper_formula, "T + t");
    }
}
