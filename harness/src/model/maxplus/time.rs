//! The time of one kernel instance, ⟨1_o, Z^⊙k ⊙ 1_i⟩ (Antonyuk & Mikheev 2022, §6 and §8;
//! docs/models.md §1 "Time of one kernel instance").
//!
//! Three routes, for three purposes:
//!
//! - [`paper_kernel_time`] computes the paper's expression literally: Z^⊙k with k the graph
//!   height. It is exact for the paper's examples, but a power of Z counts only paths of
//!   *exactly* k arcs: a shorter input → output path is dropped unless a self-loop on it pads
//!   it, and then the loop is counted more than once (see the tests; reported as a slip).
//! - [`kernel_formula_by_matrix`] keeps the matrix form but makes it exact: every self-loop is
//!   unfolded into an arc through a new node (the paper's own alternative in §8, "additional
//!   arcs for operations"), and ⟨1_o, (I ⊕ Z')^⊙k' ⊙ 1_i⟩ then takes every path of at most k'
//!   arcs. Cubic in the node count: for small graphs.
//! - [`kernel_formula_by_longest_path`] and [`kernel_time_seconds`] get the same value as a
//!   longest path over the DAG in topological order, each self-loop counted once where the
//!   path passes its node: linear in nodes plus arcs, for graphs of any size.

use super::error::MaxPlusError;
use super::graph::{Arc, KernelGraph, Node, NodeKind};
use super::matrix::{inner_product, Matrix};
use super::parameters::Parameters;
use super::poly::{Poly, Term};
use super::semiring::Semiring;

/// Most term-by-arc steps the symbolic longest path may take (about a second): past it, a
/// dense graph's incomparable terms would take minutes, and the formula is refused
/// ([`MaxPlusError::FormulaTooLarge`]); numeric predictions use [`critical_path`], linear in
/// nodes plus arcs, and are not limited.
pub const MAX_FORMULA_WORK: u64 = 500_000;

/// Graphs with at most this many nodes use the matrix route in [`kernel_formula`]; larger
/// ones the longest path (the matrix route costs O(nodes³ · log height) polynomial products).
pub const MATRIX_ROUTE_MAX_NODES: usize = 24;

/// The paper's expression taken literally: ⟨1_o, Z^⊙k ⊙ 1_i⟩ with k = [`KernelGraph::height`].
///
/// Gives T + t for Z1 (k = 2) and T + τ + t for Z2 (k = 3).
pub fn paper_kernel_time(graph: &KernelGraph) -> Result<Poly, MaxPlusError> {
    let z = graph.kernel_matrix();
    let reached = z
        .power(graph.height())?
        .otimes(&Matrix::column(graph.input_vector()))?;
    inner_product(&graph.output_vector(), &reached.column_entries())
}

/// The exact symbolic time by matrix powers: self-loops unfolded into arcs, then
/// ⟨1_o, (I ⊕ Z')^⊙k' ⊙ 1_i⟩ with k' the height of the loop-free graph.
pub fn kernel_formula_by_matrix(graph: &KernelGraph) -> Result<Poly, MaxPlusError> {
    let unfolded = unfold_self_loops(graph)?;
    let z = unfolded.kernel_matrix();
    let size = z.rows();
    let stay_or_step = Matrix::identity(size).oplus(&z)?;
    let reached = stay_or_step
        .power(unfolded.height())?
        .otimes(&Matrix::column(unfolded.input_vector()))?;
    let time = inner_product(&unfolded.output_vector(), &reached.column_entries())?;
    non_empty(graph, time)
}

/// The exact symbolic time as a longest path: each node's ready time is the max over its
/// incoming arcs of (source time ⊙ arc), then ⊙ its own loop once; inputs are ready at 0.
///
/// Linear in nodes plus arcs times the number of terms; on wide graphs with many different
/// weights the incomparable terms can multiply, so for large graphs prefer the numeric
/// [`kernel_time_seconds`] and the one-term [`critical_path`].
pub fn kernel_formula_by_longest_path(graph: &KernelGraph) -> Result<Poly, MaxPlusError> {
    let loops = graph.self_loops();
    let incoming = incoming_arcs(graph);
    let mut ready = vec![Poly::epsilon(); graph.nodes().len()];
    let mut work = 0u64;
    for &node in &graph.topological_order {
        let arrival = if graph.nodes()[node].kind == NodeKind::Input {
            Poly::unit()
        } else {
            let mut best = Poly::epsilon();
            for arc in &incoming[node] {
                work += ready[arc.from].term_count() as u64 + 1;
                if work > MAX_FORMULA_WORK {
                    return Err(MaxPlusError::FormulaTooLarge {
                        arcs: graph.arcs().len(),
                        max: MAX_FORMULA_WORK,
                    });
                }
                best = best.oplus(&ready[arc.from].otimes(&arc.weight));
            }
            best
        };
        ready[node] = if loops[node].is_epsilon() {
            arrival
        } else {
            arrival.otimes(&loops[node])
        };
    }
    let time = graph
        .nodes()
        .iter()
        .zip(&ready)
        .filter(|(node, _)| node.kind == NodeKind::Output)
        .fold(Poly::epsilon(), |best, (_, time)| best.oplus(time));
    non_empty(graph, time)
}

/// The exact symbolic time, by the matrix route for small graphs and the longest path
/// otherwise (both give the same polynomial).
pub fn kernel_formula(graph: &KernelGraph) -> Result<Poly, MaxPlusError> {
    if graph.nodes().len() <= MATRIX_ROUTE_MAX_NODES {
        kernel_formula_by_matrix(graph)
    } else {
        kernel_formula_by_longest_path(graph)
    }
}

/// The time of one instance in seconds, by the longest path: O(nodes + arcs).
pub fn kernel_time_seconds(
    graph: &KernelGraph,
    parameters: &Parameters,
) -> Result<f64, MaxPlusError> {
    Ok(critical_path(graph, parameters)?.seconds)
}

/// The path that decides the kernel time for given parameter values.
#[derive(Clone, Debug, PartialEq)]
pub struct CriticalPath {
    /// Node indices from an input to an output.
    pub nodes: Vec<usize>,
    /// The sum of times along it (the dominant term of ⟨1_o, Z^⊙k ⊙ 1_i⟩), e.g. T + τ + t.
    pub formula: Term,
    /// Its value in seconds.
    pub seconds: f64,
}

/// Numeric longest path with the arcs that attain it; an error if no output is reachable.
pub fn critical_path(
    graph: &KernelGraph,
    parameters: &Parameters,
) -> Result<CriticalPath, MaxPlusError> {
    let arc_values = evaluate_arcs(graph, parameters)?;
    let loop_values = loop_values(graph, &arc_values);
    let incoming = incoming_arc_indices(graph);
    let count = graph.nodes().len();
    let mut ready = vec![f64::NEG_INFINITY; count];
    let mut best_arc: Vec<Option<usize>> = vec![None; count];
    for &node in &graph.topological_order {
        let mut arrival = if graph.nodes()[node].kind == NodeKind::Input {
            0.0
        } else {
            f64::NEG_INFINITY
        };
        for &arc in &incoming[node] {
            let candidate = ready[graph.arcs()[arc].from] + arc_values[arc];
            if candidate > arrival {
                arrival = candidate;
                best_arc[node] = Some(arc);
            }
        }
        ready[node] = arrival + loop_values[node].map_or(0.0, |(_, value)| value);
    }
    let end = best_output(graph, &ready).ok_or_else(|| MaxPlusError::NoPath {
        graph: graph.name().to_owned(),
    })?;
    let nodes = walk_back(graph, &best_arc, end);
    let formula = path_formula(graph, parameters, &nodes, &best_arc, &loop_values)?;
    Ok(CriticalPath {
        nodes,
        formula,
        seconds: ready[end],
    })
}

/// Every arc's weight evaluated; a missing parameter value is an error naming it.
fn evaluate_arcs(graph: &KernelGraph, parameters: &Parameters) -> Result<Vec<f64>, MaxPlusError> {
    graph
        .arcs()
        .iter()
        .map(|arc| arc.weight.evaluate(parameters))
        .collect()
}

/// For each node, the index and value of its largest self-loop, if any.
fn loop_values(graph: &KernelGraph, arc_values: &[f64]) -> Vec<Option<(usize, f64)>> {
    let mut loops: Vec<Option<(usize, f64)>> = vec![None; graph.nodes().len()];
    for (index, arc) in graph.arcs().iter().enumerate() {
        if arc.from == arc.to && loops[arc.to].is_none_or(|(_, value)| arc_values[index] > value) {
            loops[arc.to] = Some((index, arc_values[index]));
        }
    }
    loops
}

fn incoming_arc_indices(graph: &KernelGraph) -> Vec<Vec<usize>> {
    let mut incoming = vec![Vec::new(); graph.nodes().len()];
    for (index, arc) in graph.arcs().iter().enumerate() {
        if arc.from != arc.to {
            incoming[arc.to].push(index);
        }
    }
    incoming
}

fn incoming_arcs(graph: &KernelGraph) -> Vec<Vec<&Arc>> {
    let mut incoming = vec![Vec::new(); graph.nodes().len()];
    for arc in graph.arcs().iter().filter(|arc| arc.from != arc.to) {
        incoming[arc.to].push(arc);
    }
    incoming
}

/// The output node with the latest finite ready time.
fn best_output(graph: &KernelGraph, ready: &[f64]) -> Option<usize> {
    (0..graph.nodes().len())
        .filter(|&node| graph.nodes()[node].kind == NodeKind::Output && ready[node].is_finite())
        .max_by(|&a, &b| ready[a].total_cmp(&ready[b]))
}

/// Follows the best incoming arcs back from `end` to an input.
fn walk_back(graph: &KernelGraph, best_arc: &[Option<usize>], end: usize) -> Vec<usize> {
    let mut nodes = vec![end];
    let mut node = end;
    while let Some(arc) = best_arc[node] {
        node = graph.arcs()[arc].from;
        nodes.push(node);
    }
    nodes.reverse();
    nodes
}

/// The symbolic sum along a path: the dominant term of every arc and loop on it.
fn path_formula(
    graph: &KernelGraph,
    parameters: &Parameters,
    nodes: &[usize],
    best_arc: &[Option<usize>],
    loops: &[Option<(usize, f64)>],
) -> Result<Term, MaxPlusError> {
    let mut formula = Term::constant(0.0);
    for &node in nodes {
        let arcs_here = best_arc[node]
            .into_iter()
            .chain(loops[node].map(|(arc, _)| arc));
        for arc in arcs_here {
            if let Some((term, _)) = graph.arcs()[arc].weight.dominant_term(parameters)? {
                formula = formula.plus(&term);
            }
        }
    }
    Ok(formula)
}

fn non_empty(graph: &KernelGraph, time: Poly) -> Result<Poly, MaxPlusError> {
    if time.is_epsilon() {
        Err(MaxPlusError::NoPath {
            graph: graph.name().to_owned(),
        })
    } else {
        Ok(time)
    }
}

/// The graph with every self-loop v → v (weight τ) replaced by a new node v′ that takes v's
/// outgoing arcs and an arc v → v′ of weight τ (paper §8, second way of counting operations).
fn unfold_self_loops(graph: &KernelGraph) -> Result<KernelGraph, MaxPlusError> {
    let loops = graph.self_loops();
    let mut parts = graph.to_parts();
    let mut done_node = (0..parts.nodes.len()).collect::<Vec<_>>();
    for (node, weight) in loops.iter().enumerate() {
        if weight.is_epsilon() {
            continue;
        }
        let original = &parts.nodes[node];
        let unfolded = parts.nodes.len();
        parts.nodes.push(Node {
            id: format!("{}′", original.id),
            kind: original.kind,
            label: original.label.clone(),
        });
        parts.nodes[node].kind = NodeKind::Op;
        done_node[node] = unfolded;
        parts.arcs.push(Arc {
            from: node,
            to: unfolded,
            weight: weight.clone(),
        });
    }
    let original_arcs = graph.arcs().len();
    parts.arcs = parts
        .arcs
        .into_iter()
        .enumerate()
        .filter(|(_, arc)| arc.from != arc.to)
        .map(|(index, mut arc)| {
            if index < original_arcs {
                arc.from = done_node[arc.from];
            }
            arc
        })
        .collect();
    KernelGraph::from_parts(parts)
}

#[cfg(test)]
mod tests {
    use super::super::examples::{table1_parallel, table1_series, vadd_z1, vadd_z2};
    use super::super::graph::NodeKind;
    use super::super::random::random_dag;
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Parameters {
        Parameters::from_pairs(&[
            ("t", 4e-7),
            ("T", 5e-7),
            ("tau", 1e-9),
            ("dt", 1e-10),
            ("dT", 2e-10),
            ("t_cache", 3e-8),
            ("n", 8.0),
        ])
        .expect("finite")
    }

    #[test]
    fn z1_squared_gives_t_plus_t() {
        let graph = vadd_z1();
        assert_eq!(graph.height(), 2);
        assert_eq!(
            paper_kernel_time(&graph).expect("square").to_string(),
            "T + t"
        );
    }

    #[test]
    fn z1_squared_is_the_printed_matrix() {
        let z = vadd_z1().kernel_matrix();
        assert_eq!(
            z.power(2).expect("square").to_string(),
            "[ε, ε, T + t, T + t]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n"
        );
    }

    #[test]
    fn z2_cubed_gives_t_plus_tau_plus_t() {
        let graph = vadd_z2();
        assert_eq!(graph.height(), 3);
        assert_eq!(
            paper_kernel_time(&graph).expect("square").to_string(),
            "T + τ + t"
        );
    }

    #[test]
    fn z2_powers_are_the_printed_matrices() {
        let z = vadd_z2().kernel_matrix();
        assert_eq!(
            z.power(2).expect("square").to_string(),
            "[ε, T + τ, T + t, T + t]\n[ε, 2τ, τ + t, τ + t]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n"
        );
        let cube = z.power(3).expect("square");
        assert_eq!(
            cube.to_string(),
            "[ε, T + 2τ, T + τ + t, T + τ + t]\n[ε, 3τ, 2τ + t, 2τ + t]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n"
        );
    }

    #[test]
    fn table1_fragments() {
        let parallel = table1_parallel();
        assert_eq!(parallel.height(), 1);
        assert_eq!(
            paper_kernel_time(&parallel).expect("square").to_string(),
            "max{t1, t2}"
        );
        let series = table1_series();
        assert_eq!(series.height(), 2);
        assert_eq!(
            series.kernel_matrix().power(2).expect("square").to_string(),
            "[ε, ε, t1 + t2]\n[ε, ε, ε]\n[ε, ε, ε]\n"
        );
        assert_eq!(
            paper_kernel_time(&series).expect("square").to_string(),
            "t1 + t2"
        );
    }

    #[test]
    fn all_routes_agree_on_the_paper_examples() {
        for graph in [vadd_z1(), vadd_z2(), table1_parallel(), table1_series()] {
            let paper = paper_kernel_time(&graph).expect("square");
            assert_eq!(
                kernel_formula_by_matrix(&graph).expect("path"),
                paper,
                "{}",
                graph.name()
            );
            assert_eq!(
                kernel_formula_by_longest_path(&graph).expect("path"),
                paper,
                "{}",
                graph.name()
            );
        }
    }

    #[test]
    fn the_critical_path_of_z2_is_the_papers_formula() {
        let path = critical_path(&vadd_z2(), &sample()).expect("reachable");
        assert_eq!(path.formula.to_string(), "T + τ + t");
        assert!((path.seconds - (5e-7 + 1e-9 + 4e-7)).abs() < 1e-18);
        assert_eq!(path.nodes.first().copied(), Some(2));
        assert_eq!(path.nodes.last().copied(), Some(0));
    }

    /// Paper slip: Z^⊙k counts paths of exactly k arcs, so a shorter path is lost.
    #[test]
    fn a_literal_power_drops_a_shorter_but_slower_path() {
        let graph = KernelGraph::builder("uneven")
            .node("out", NodeKind::Output, None)
            .node("mid", NodeKind::Op, None)
            .node("a", NodeKind::Input, None)
            .node("b", NodeKind::Input, None)
            .arc("a", "out", "T + 2*t")
            .arc("b", "mid", "t")
            .arc("mid", "out", "T")
            .build()
            .expect("valid");
        assert_eq!(
            paper_kernel_time(&graph).expect("square").to_string(),
            "T + t"
        );
        assert_eq!(
            kernel_formula(&graph).expect("path").to_string(),
            "max{T + t, T + 2t}"
        );
    }

    /// Paper slip: a self-loop can pad a short path and is then counted more than once.
    #[test]
    fn a_literal_power_repeats_a_loop_on_a_short_branch() {
        // triad written as two operations: b → add(τ) is two arcs shorter than c → mul(τ) → add.
        let graph = KernelGraph::builder("triad_two_ops")
            .node("a", NodeKind::Output, None)
            .node("add", NodeKind::Op, None)
            .node("mul", NodeKind::Op, None)
            .node("b", NodeKind::Input, None)
            .node("c", NodeKind::Input, None)
            .arc("c", "mul", "t")
            .arc("mul", "mul", "tau")
            .arc("mul", "add", "0")
            .arc("b", "add", "t")
            .arc("add", "add", "tau")
            .arc("add", "a", "T")
            .build()
            .expect("valid");
        assert_eq!(graph.height(), 5);
        // the b branch is padded with two extra turns of add's loop: 3τ where the truth is 2τ
        assert_eq!(
            paper_kernel_time(&graph).expect("square").to_string(),
            "max{T + 2τ + t, T + 3τ + t}"
        );
        assert_eq!(
            kernel_formula(&graph).expect("path").to_string(),
            "max{T + τ + t, T + 2τ + t}"
        );
    }

    #[test]
    fn no_reachable_output_is_an_error() {
        let graph = KernelGraph::builder("cut")
            .node("in", NodeKind::Input, None)
            .node("orphan", NodeKind::Op, None)
            .node("out", NodeKind::Output, None)
            .arc("orphan", "out", "T")
            .build()
            .expect("valid");
        assert!(kernel_formula(&graph)
            .unwrap_err()
            .to_string()
            .contains("no output"));
        assert!(kernel_time_seconds(&graph, &sample()).is_err());
    }

    #[test]
    fn a_thousand_node_graph_is_fast() {
        let graph = random_dag(1000, 7);
        let parameters = sample();
        let start = std::time::Instant::now();
        let seconds = kernel_time_seconds(&graph, &parameters).expect("reachable");
        let elapsed = start.elapsed();
        assert!(seconds.is_finite() && seconds > 0.0);
        assert!(elapsed.as_millis() < 50, "took {elapsed:?}");
    }

    /// A layered DAG: inputs in layer 0, outputs in the last layer, arcs between neighbouring
    /// layers only, every node fed from the layer before; optionally τ loops on every node of
    /// one middle layer. Every input → output path then has the same length, where the paper's
    /// literal expression is exact.
    fn layered(
        widths: &[usize],
        arcs: &[(usize, usize, usize)],
        loop_layer: Option<usize>,
    ) -> KernelGraph {
        let names = ["t", "T", "tau", "dt", "dT"];
        let id = |layer: usize, slot: usize| format!("n{layer}_{slot}");
        let mut builder = KernelGraph::builder("layered");
        for (layer, &width) in widths.iter().enumerate() {
            let kind = match layer {
                0 => NodeKind::Input,
                l if l + 1 == widths.len() => NodeKind::Output,
                _ => NodeKind::Op,
            };
            for slot in 0..width {
                builder = builder.node(&id(layer, slot), kind, None);
                if layer > 0 {
                    let source = (slot + layer) % widths[layer - 1];
                    builder = builder.arc(
                        &id(layer - 1, source),
                        &id(layer, slot),
                        names[(slot + layer) % 5],
                    );
                }
                if loop_layer == Some(layer) && kind == NodeKind::Op {
                    builder = builder.arc(&id(layer, slot), &id(layer, slot), names[slot % 5]);
                }
            }
        }
        for &(layer, from, to) in arcs {
            let layer = 1 + layer % (widths.len() - 1);
            let (from, to) = (from % widths[layer - 1], to % widths[layer]);
            builder = builder.arc(&id(layer - 1, from), &id(layer, to), names[(from + to) % 5]);
        }
        builder.build().expect("layered graphs are valid")
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn matrix_and_longest_path_agree_on_random_small_dags(nodes in 2usize..10, seed in any::<u64>()) {
            let graph = random_dag(nodes, seed);
            let by_matrix = kernel_formula_by_matrix(&graph);
            let by_path = kernel_formula_by_longest_path(&graph);
            match (by_matrix, by_path) {
                (Ok(a), Ok(b)) => {
                    prop_assert_eq!(&a, &b);
                    let numeric = kernel_time_seconds(&graph, &sample()).expect("reachable");
                    let symbolic = a.evaluate(&sample()).expect("known");
                    prop_assert!((numeric - symbolic).abs() <= 1e-12 * symbolic.abs().max(1e-9));
                }
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "routes disagree: {:?} vs {:?}", a, b),
            }
        }

        #[test]
        fn the_literal_formula_is_exact_on_balanced_graphs(
            widths in prop::collection::vec(1usize..4, 3..6),
            arcs in prop::collection::vec((0usize..8, 0usize..4, 0usize..4), 0..8),
            loops in any::<bool>(),
        ) {
            let loop_layer = loops.then_some(1);
            let graph = layered(&widths, &arcs, loop_layer);
            let paper = paper_kernel_time(&graph).expect("square");
            prop_assert_eq!(paper, kernel_formula_by_longest_path(&graph).expect("path"));
        }
    }
}
