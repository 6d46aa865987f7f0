//! The paper's example graphs, built in code (Antonyuk & Mikheev 2022, Fig. 1, Fig. 3,
//! Table 1; docs/models.md §1 "Worked example").
//!
//! Node order follows the paper: for the vector add, 1 = `c[i]`, 2 = the sum, 3 = `a[i]`,
//! 4 = `b[i]`; t = global read time, T = global write time, τ = the add.

use super::graph::{GraphBuilder, KernelGraph, NodeKind};

fn vadd_nodes(name: &str) -> GraphBuilder {
    KernelGraph::builder(name)
        .node("c", NodeKind::Output, Some("c[i]"))
        .node("sum", NodeKind::Op, Some("a[i] + b[i]"))
        .node("a", NodeKind::Input, Some("a[i]"))
        .node("b", NodeKind::Input, Some("b[i]"))
        .arc("sum", "c", "T")
        .arc("a", "sum", "t")
        .arc("b", "sum", "t")
        .memory_accesses(2, 1)
}

/// Z1 (Fig. 1): the vector add without the add time; height 2, ⟨1_o, Z1^⊙2 ⊙ 1_i⟩ = T + t.
pub fn vadd_z1() -> KernelGraph {
    vadd_nodes("vadd_z1")
        .build()
        .expect("the paper's Z1 is a valid graph")
}

/// Z2 (Fig. 3): Z1 with the add time τ as a self-loop on the sum; height 3,
/// ⟨1_o, Z2^⊙3 ⊙ 1_i⟩ = T + τ + t.
pub fn vadd_z2() -> KernelGraph {
    vadd_nodes("vadd_z2")
        .arc("sum", "sum", "tau")
        .build()
        .expect("the paper's Z2 is a valid graph")
}

/// Table 1, first row: input 3 feeds outputs 1 and 2 through arcs t1 and t2; k = 1,
/// time max{t1, t2}.
pub fn table1_parallel() -> KernelGraph {
    KernelGraph::builder("table1_parallel")
        .parameter("t1")
        .parameter("t2")
        .node("1", NodeKind::Output, None)
        .node("2", NodeKind::Output, None)
        .node("3", NodeKind::Input, None)
        .arc("3", "1", "t1")
        .arc("3", "2", "t2")
        .build()
        .expect("Table 1's parallel fragment is a valid graph")
}

/// Table 1, second row: 3 → 2 → 1 with arcs t2 then t1; k = 2, time t1 + t2.
pub fn table1_series() -> KernelGraph {
    KernelGraph::builder("table1_series")
        .parameter("t1")
        .parameter("t2")
        .node("1", NodeKind::Output, None)
        .node("2", NodeKind::Op, None)
        .node("3", NodeKind::Input, None)
        .arc("2", "1", "t1")
        .arc("3", "2", "t2")
        .build()
        .expect("Table 1's series fragment is a valid graph")
}

/// A graph shipped in `kernels/graphs/`, for tests.
#[cfg(test)]
pub(crate) fn shipped_graph(name: &str) -> KernelGraph {
    let path = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../kernels/graphs"))
        .join(format!("{name}.toml"));
    KernelGraph::load(&path).expect("shipped graph loads")
}
