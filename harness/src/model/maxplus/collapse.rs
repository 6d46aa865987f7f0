//! Lowering the detail of a kernel graph by compound nodes (Antonyuk & Mikheev 2022, §11 and
//! Table 1; docs/models.md §1 "Series/parallel sub-graphs can be collapsed").
//!
//! Two rules, applied until neither fits:
//! - parallel: arcs with the same source and destination become one arc whose weight is the ⊕
//!   of theirs (Table 1, first row: max{t1, t2});
//! - series: an operation node with exactly one incoming and one outgoing arc (besides its
//!   self-loop) is removed, and its two arcs become one whose weight is
//!   w_in ⊙ τ ⊙ w_out (Table 1, second row: t1 + t2).
//!
//! Inputs, outputs and cache nodes are never removed: they carry meaning for the models (the
//! caching model changes the arcs that leave cache nodes). The kernel time (longest path, each
//! self-loop once) is unchanged by collapsing.

use std::collections::BTreeMap;

use super::error::MaxPlusError;
use super::graph::{Arc, KernelGraph, NodeKind};
use super::poly::Poly;
use super::semiring::Semiring;

/// The graph with parallel arcs merged and simple series chains of operations collapsed.
pub fn collapse_series_parallel(graph: &KernelGraph) -> Result<KernelGraph, MaxPlusError> {
    let mut parts = graph.to_parts();
    let mut removed = vec![false; parts.nodes.len()];
    loop {
        parts.arcs = merge_parallel(&parts.arcs);
        let Some(node) = series_candidate(&parts.nodes, &parts.arcs, &removed) else {
            break;
        };
        parts.arcs = bypass(&parts.arcs, node);
        removed[node] = true;
    }
    let (nodes, arcs) = drop_removed(parts.nodes, parts.arcs, &removed);
    parts.nodes = nodes;
    parts.arcs = arcs;
    KernelGraph::from_parts(parts)
}

/// One arc per (source, destination), weights combined with ⊕; first-seen order is kept.
fn merge_parallel(arcs: &[Arc]) -> Vec<Arc> {
    let mut merged: Vec<Arc> = Vec::with_capacity(arcs.len());
    let mut position: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for arc in arcs {
        match position.get(&(arc.from, arc.to)) {
            Some(&index) => merged[index].weight = merged[index].weight.oplus(&arc.weight),
            None => {
                position.insert((arc.from, arc.to), merged.len());
                merged.push(arc.clone());
            }
        }
    }
    merged
}

/// An operation node with exactly one non-loop arc in and one out.
fn series_candidate(nodes: &[super::graph::Node], arcs: &[Arc], removed: &[bool]) -> Option<usize> {
    let mut incoming = vec![0usize; nodes.len()];
    let mut outgoing = vec![0usize; nodes.len()];
    for arc in arcs.iter().filter(|arc| arc.from != arc.to) {
        incoming[arc.to] += 1;
        outgoing[arc.from] += 1;
    }
    (0..nodes.len()).find(|&node| {
        !removed[node]
            && nodes[node].kind == NodeKind::Op
            && incoming[node] == 1
            && outgoing[node] == 1
    })
}

/// Replaces u → v (→ v) → x by one arc u → x of weight w_in ⊙ loop ⊙ w_out.
fn bypass(arcs: &[Arc], node: usize) -> Vec<Arc> {
    let find = |test: &dyn Fn(&Arc) -> bool| arcs.iter().find(|arc| test(arc)).cloned();
    let into =
        find(&|arc| arc.to == node && arc.from != node).expect("the candidate has an incoming arc");
    let out =
        find(&|arc| arc.from == node && arc.to != node).expect("the candidate has an outgoing arc");
    let loop_weight = arcs
        .iter()
        .filter(|arc| arc.from == node && arc.to == node)
        .fold(Poly::unit(), |weight, arc| weight.otimes(&arc.weight));
    let combined = Arc {
        from: into.from,
        to: out.to,
        weight: into.weight.otimes(&loop_weight).otimes(&out.weight),
    };
    arcs.iter()
        .filter(|arc| arc.from != node && arc.to != node)
        .cloned()
        .chain(std::iter::once(combined))
        .collect()
}

/// Removes the collapsed nodes and renumbers the arcs.
fn drop_removed(
    nodes: Vec<super::graph::Node>,
    arcs: Vec<Arc>,
    removed: &[bool],
) -> (Vec<super::graph::Node>, Vec<Arc>) {
    let mut new_index = vec![usize::MAX; nodes.len()];
    let kept: Vec<_> = nodes
        .into_iter()
        .enumerate()
        .filter(|(index, _)| !removed[*index])
        .enumerate()
        .map(|(new, (old, node))| {
            new_index[old] = new;
            node
        })
        .collect();
    let arcs = arcs
        .into_iter()
        .map(|arc| Arc {
            from: new_index[arc.from],
            to: new_index[arc.to],
            weight: arc.weight,
        })
        .collect();
    (kept, arcs)
}

#[cfg(test)]
mod tests {
    use super::super::examples::{table1_series, vadd_z2};
    use super::super::random::{chain_graph, random_dag};
    use super::super::time::{kernel_formula, kernel_formula_by_longest_path, paper_kernel_time};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn two_arcs_in_series_become_t1_plus_t2() {
        let collapsed = collapse_series_parallel(&table1_series()).expect("valid");
        assert_eq!(collapsed.nodes().len(), 2);
        assert_eq!(collapsed.height(), 1);
        assert_eq!(
            paper_kernel_time(&collapsed).expect("square").to_string(),
            "t1 + t2"
        );
    }

    #[test]
    fn two_parallel_arcs_into_one_output_become_their_max() {
        let graph = KernelGraph::builder("parallel")
            .parameter("t1")
            .parameter("t2")
            .node("out", NodeKind::Output, None)
            .node("in", NodeKind::Input, None)
            .arc("in", "out", "t1")
            .arc("in", "out", "t2")
            .build()
            .expect("valid");
        let collapsed = collapse_series_parallel(&graph).expect("valid");
        assert_eq!(collapsed.arcs().len(), 1);
        assert_eq!(collapsed.arcs()[0].weight.to_string(), "max{t1, t2}");
        assert_eq!(
            paper_kernel_time(&collapsed).expect("square").to_string(),
            "max{t1, t2}"
        );
    }

    #[test]
    fn the_vadd_sum_is_kept_because_two_arcs_enter_it() {
        let collapsed = collapse_series_parallel(&vadd_z2()).expect("valid");
        assert_eq!(collapsed.nodes().len(), 4);
        assert_eq!(
            kernel_formula(&collapsed).expect("path").to_string(),
            "T + τ + t"
        );
    }

    #[test]
    fn a_chain_collapses_to_one_arc() {
        let chain = chain_graph(6);
        let collapsed = collapse_series_parallel(&chain).expect("valid");
        assert_eq!(collapsed.nodes().len(), 2);
        assert_eq!(collapsed.arcs()[0].weight.to_string(), "4τ + 5t");
        assert_eq!(
            kernel_formula(&collapsed).expect("path"),
            kernel_formula(&chain).expect("path")
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn collapsing_keeps_the_kernel_time(nodes in 2usize..14, seed in any::<u64>()) {
            let graph = random_dag(nodes, seed);
            let collapsed = collapse_series_parallel(&graph).expect("valid");
            prop_assert!(collapsed.nodes().len() <= graph.nodes().len());
            prop_assert_eq!(
                kernel_formula_by_longest_path(&collapsed).ok(),
                kernel_formula_by_longest_path(&graph).ok()
            );
        }
    }
}
