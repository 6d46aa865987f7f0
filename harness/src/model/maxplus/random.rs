//! Random and long kernel graphs for benchmarks and property tests (a harness tool, not a
//! paper formula; it exercises docs/models.md §1 "Kernel graph" at sizes the paper never reaches).

use super::graph::{KernelGraph, NodeKind};

/// The weights random arcs draw from.
const ARC_WEIGHTS: [&str; 6] = ["t", "T", "tau", "2*tau", "t + dt", "0"];

/// A small deterministic generator (SplitMix64) so that a seed always gives the same graph.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in 0..bound (bound > 0).
    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// A random kernel DAG with `node_count` nodes (at least 2), the same for the same `seed`.
///
/// The first tenth of the nodes (at least one) are inputs, the last tenth (at least one)
/// outputs, the rest operations. Every non-input node gets one to three arcs from earlier
/// non-output nodes, so every node is reachable from an input; about a third of the
/// operations get a τ self-loop. Arc weights are drawn from t, T, τ, 2τ, t + Δt and 0.
pub fn random_dag(node_count: usize, seed: u64) -> KernelGraph {
    let count = node_count.max(2);
    let inputs = (count / 10).max(1);
    let outputs = (count / 10).max(1).min(count - inputs);
    let first_output = count - outputs;
    let mut random = SplitMix64(seed);
    let id = |node: usize| format!("v{node}");
    let mut builder = KernelGraph::builder(&format!("random_dag_{count}_{seed}"));
    for node in 0..count {
        let kind = if node < inputs {
            NodeKind::Input
        } else if node >= first_output {
            NodeKind::Output
        } else {
            NodeKind::Op
        };
        builder = builder.node(&id(node), kind, None);
        if kind == NodeKind::Input {
            continue;
        }
        let sources = node.min(first_output);
        for _ in 0..=random.below(3) {
            let from = random.below(sources);
            builder = builder.arc(
                &id(from),
                &id(node),
                ARC_WEIGHTS[random.below(ARC_WEIGHTS.len())],
            );
        }
        if kind == NodeKind::Op && random.below(3) == 0 {
            builder = builder.arc(&id(node), &id(node), "tau");
        }
    }
    builder
        .memory_accesses(2, 1)
        .build()
        .expect("random_dag only adds arcs from earlier non-output nodes to later non-input nodes")
}

/// A chain input → op → … → op → output of `node_count` nodes (at least 2): every arc t,
/// every operation with a τ self-loop.
pub fn chain_graph(node_count: usize) -> KernelGraph {
    let count = node_count.max(2);
    let id = |node: usize| format!("v{node}");
    let mut builder =
        KernelGraph::builder(&format!("chain_{count}")).node(&id(0), NodeKind::Input, None);
    for node in 1..count {
        let kind = if node + 1 == count {
            NodeKind::Output
        } else {
            NodeKind::Op
        };
        builder = builder
            .node(&id(node), kind, None)
            .arc(&id(node - 1), &id(node), "t");
        if kind == NodeKind::Op {
            builder = builder.arc(&id(node), &id(node), "tau");
        }
    }
    builder
        .memory_accesses(1, 1)
        .build()
        .expect("a chain is a valid graph")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_graph() {
        assert_eq!(random_dag(50, 3), random_dag(50, 3));
        assert_ne!(random_dag(50, 3), random_dag(50, 4));
    }

    #[test]
    fn tiny_sizes_still_give_an_input_and_an_output() {
        for size in 0..4 {
            let graph = random_dag(size, 1);
            assert!(graph
                .nodes()
                .iter()
                .any(|node| node.kind == NodeKind::Input));
            assert!(graph
                .nodes()
                .iter()
                .any(|node| node.kind == NodeKind::Output));
        }
    }

    #[test]
    fn a_chain_has_one_stage_per_node_and_loop() {
        // 10 nodes, 8 loops: 10 + 8 stages, height 17.
        assert_eq!(chain_graph(10).height(), 17);
    }
}
