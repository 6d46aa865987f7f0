//! The kernel graph, its kernel matrix Z and its height (Antonyuk & Mikheev 2022, §5, §6, §8;
//! docs/models.md §1 "Kernel graph", "Height procedure").
//!
//! Nodes are data states (inputs, intermediate results, outputs); an arc j → i carries the time
//! to move or transform data, z_ij (column = source, row = destination). A self-loop on a node
//! is the time τ of the operation done there (paper §8). Every other cycle is an error.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde::{Deserialize, Serialize};

use super::error::MaxPlusError;
use super::matrix::Matrix;
use super::parameters::is_builtin_parameter;
use super::poly::Poly;
use super::semiring::Semiring;
use super::weight::parse_weight;
use crate::units::Parameter;

/// What a node of the kernel graph holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Data read from global memory; 0 in the input vector 1_i.
    Input,
    /// Data written to global memory; 0 in the output vector 1_o.
    Output,
    /// An intermediate result or an operation (its time is a self-loop).
    Op,
    /// A cached copy of data; in the caching model the arcs leaving it use `t_cache`.
    Cache,
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            NodeKind::Input => "input",
            NodeKind::Output => "output",
            NodeKind::Op => "op",
            NodeKind::Cache => "cache",
        };
        write!(f, "{name}")
    }
}

/// One node: a data state of the kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Unique id, used by the arcs.
    pub id: String,
    /// Input, output, operation or cache.
    pub kind: NodeKind,
    /// Free text for people, e.g. `c[i]`.
    pub label: Option<String>,
}

/// One arc j → i with its time z_ij; `from == to` is a self-loop (an operation time).
#[derive(Clone, Debug, PartialEq)]
pub struct Arc {
    /// Source node index (the column of Z).
    pub from: usize,
    /// Destination node index (the row of Z).
    pub to: usize,
    /// The time, a max of sums of parameters.
    pub weight: Poly,
}

/// A validated kernel graph: unique ids, known parameters, no cycle but self-loops, inputs
/// without incoming arcs, outputs without outgoing arcs, at least one of each.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelGraph {
    pub(super) name: String,
    pub(super) description: Option<String>,
    pub(super) nodes: Vec<Node>,
    pub(super) arcs: Vec<Arc>,
    /// Global reads per instance (k in the serialized-memory lag (kn − 1)Δt).
    pub(super) reads: u32,
    /// Global writes per instance (w in the serialized-memory lag (wn − 1)ΔT).
    pub(super) writes: u32,
    /// Parameter names the graph declares beyond the built-in ones.
    pub(super) declared_parameters: Vec<String>,
    /// Node indices in an order where every non-loop arc goes forward.
    pub(super) topological_order: Vec<usize>,
}

/// The parts of a graph before validation.
#[derive(Clone, Debug, Default)]
pub(super) struct GraphParts {
    pub name: String,
    pub description: Option<String>,
    pub nodes: Vec<Node>,
    pub arcs: Vec<Arc>,
    pub reads: u32,
    pub writes: u32,
    pub declared_parameters: Vec<String>,
}

impl KernelGraph {
    /// A builder for a graph named `name`.
    pub fn builder(name: &str) -> GraphBuilder {
        GraphBuilder {
            parts: GraphParts {
                name: name.to_owned(),
                ..GraphParts::default()
            },
            arcs: Vec::new(),
        }
    }

    /// Validates the parts and computes the topological order.
    pub(super) fn from_parts(parts: GraphParts) -> Result<Self, MaxPlusError> {
        check_unique_ids(&parts)?;
        check_parameters(&parts)?;
        check_kinds(&parts)?;
        let topological_order = topological_order(&parts)?;
        Ok(KernelGraph {
            name: parts.name,
            description: parts.description,
            nodes: parts.nodes,
            arcs: parts.arcs,
            reads: parts.reads,
            writes: parts.writes,
            declared_parameters: parts.declared_parameters,
            topological_order,
        })
    }

    /// The parts, to build a changed copy.
    pub(super) fn to_parts(&self) -> GraphParts {
        GraphParts {
            name: self.name.clone(),
            description: self.description.clone(),
            nodes: self.nodes.clone(),
            arcs: self.arcs.clone(),
            reads: self.reads,
            writes: self.writes,
            declared_parameters: self.declared_parameters.clone(),
        }
    }

    /// The graph's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the kernel computes, for people.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// The nodes, in matrix order (node i is row and column i of Z).
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The arcs, in file order.
    pub fn arcs(&self) -> &[Arc] {
        &self.arcs
    }

    /// Global reads per instance (k).
    pub fn reads(&self) -> u32 {
        self.reads
    }

    /// Global writes per instance (w).
    pub fn writes(&self) -> u32 {
        self.writes
    }

    /// The index of the node with this id.
    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|node| node.id == id)
    }

    /// The kernel matrix Z: z_ij = weight of arc j → i, ε without an arc; parallel arcs are
    /// combined with ⊕ (paper §5, Table 1).
    pub fn kernel_matrix(&self) -> Matrix<Poly> {
        let size = self.nodes.len();
        let mut z = Matrix::epsilon(size, size);
        for arc in &self.arcs {
            let combined = z
                .get(arc.to, arc.from)
                .map_or_else(|| arc.weight.clone(), |old: &Poly| old.oplus(&arc.weight));
            z.set(arc.to, arc.from, combined)
                .expect("arc indices were validated against the node count");
        }
        z
    }

    /// The input vector 1_i: 0 at input nodes, ε elsewhere (paper §6).
    pub fn input_vector(&self) -> Vec<Poly> {
        self.kind_vector(NodeKind::Input)
    }

    /// The output vector 1_o: 0 at output nodes, ε elsewhere (paper §6).
    pub fn output_vector(&self) -> Vec<Poly> {
        self.kind_vector(NodeKind::Output)
    }

    fn kind_vector(&self, kind: NodeKind) -> Vec<Poly> {
        self.nodes
            .iter()
            .map(|node| {
                if node.kind == kind {
                    Poly::unit()
                } else {
                    Poly::epsilon()
                }
            })
            .collect()
    }

    /// The combined self-loop weight of each node (ε where there is none).
    pub fn self_loops(&self) -> Vec<Poly> {
        let mut loops = vec![Poly::epsilon(); self.nodes.len()];
        for arc in self.arcs.iter().filter(|arc| arc.from == arc.to) {
            loops[arc.to] = loops[arc.to].oplus(&arc.weight);
        }
        loops
    }

    /// The same graph without self-loops: the "naive" model that neglects operation times
    /// (paper §5–§7).
    pub fn without_self_loops(&self) -> KernelGraph {
        let mut graph = self.clone();
        graph.arcs.retain(|arc| arc.from != arc.to);
        graph
    }

    /// The same graph where `t` becomes `t_cache` on every arc leaving a cache node: the
    /// caching model's rule (paper §9: repeat reads take a second, smaller read time).
    pub fn with_cached_reads(&self) -> KernelGraph {
        let mut graph = self.clone();
        for arc in &mut graph.arcs {
            if graph.nodes[arc.from].kind == NodeKind::Cache && arc.from != arc.to {
                arc.weight = arc.weight.renamed(
                    Parameter::ReadLatency.key(),
                    Parameter::CachedReadLatency.key(),
                );
            }
        }
        graph
    }

    /// Reads served by a cache (arcs leaving a cache node, loops aside): of the graph's
    /// `reads`, these do not reach device memory.
    pub fn cached_reads(&self) -> u32 {
        let count = self
            .arcs
            .iter()
            .filter(|arc| self.nodes[arc.from].kind == NodeKind::Cache && arc.from != arc.to)
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// Reads that reach device memory: `reads` less [`Self::cached_reads`].
    pub fn memory_reads(&self) -> u32 {
        self.reads.saturating_sub(self.cached_reads())
    }

    /// The graph height k (paper §6 and §8): stages of the striking procedure minus one.
    ///
    /// At each stage, if some remaining nodes have no incoming arc but their own loop, those
    /// loops are deleted (one stage); otherwise every node without incoming arcs is struck
    /// with its outgoing arcs (one stage). Loops are thereby counted exactly once.
    pub fn height(&self) -> usize {
        let mut pending_in = vec![0usize; self.nodes.len()];
        let mut has_loop = vec![false; self.nodes.len()];
        let mut successors = vec![Vec::new(); self.nodes.len()];
        for arc in &self.arcs {
            if arc.from == arc.to {
                has_loop[arc.to] = true;
            } else {
                pending_in[arc.to] += 1;
                successors[arc.from].push(arc.to);
            }
        }
        let mut ready: Vec<usize> = (0..self.nodes.len())
            .filter(|&node| pending_in[node] == 0)
            .collect();
        let mut stages: usize = 0;
        while !ready.is_empty() {
            stages += 1;
            if ready.iter().any(|&node| has_loop[node]) {
                ready.iter().for_each(|&node| has_loop[node] = false);
                continue;
            }
            let mut next = Vec::new();
            for node in ready {
                for &successor in &successors[node] {
                    pending_in[successor] -= 1;
                    if pending_in[successor] == 0 {
                        next.push(successor);
                    }
                }
            }
            ready = next;
        }
        stages.saturating_sub(1)
    }

    /// All parameter names the graph's weights use.
    pub fn parameter_names(&self) -> BTreeSet<String> {
        self.arcs
            .iter()
            .flat_map(|arc| arc.weight.parameter_names())
            .collect()
    }
}

/// Collects nodes and arcs, then validates them all at once in [`GraphBuilder::build`].
#[derive(Clone, Debug)]
pub struct GraphBuilder {
    parts: GraphParts,
    /// (from id, to id, weight formula) in insertion order.
    arcs: Vec<(String, String, String)>,
}

impl GraphBuilder {
    /// Sets the free-text description.
    pub fn description(mut self, text: &str) -> Self {
        self.parts.description = Some(text.to_owned());
        self
    }

    /// Adds a node.
    pub fn node(mut self, id: &str, kind: NodeKind, label: Option<&str>) -> Self {
        self.parts.nodes.push(Node {
            id: id.to_owned(),
            kind,
            label: label.map(str::to_owned),
        });
        self
    }

    /// Adds an arc `from → to` whose time is the formula `weight`, e.g. `"t + 2*tau"`.
    pub fn arc(mut self, from: &str, to: &str, weight: &str) -> Self {
        self.arcs
            .push((from.to_owned(), to.to_owned(), weight.to_owned()));
        self
    }

    /// Allows a parameter name beyond the built-in ones (`t1`, `t_shared`, ...).
    pub fn parameter(mut self, name: &str) -> Self {
        self.parts.declared_parameters.push(name.to_owned());
        self
    }

    /// Sets the global reads (k) and writes (w) per instance for the serialized-memory model.
    pub fn memory_accesses(mut self, reads: u32, writes: u32) -> Self {
        self.parts.reads = reads;
        self.parts.writes = writes;
        self
    }

    /// Resolves node ids, parses the weights and validates the graph.
    pub fn build(mut self) -> Result<KernelGraph, MaxPlusError> {
        check_unique_ids(&self.parts)?;
        let index: HashMap<&str, usize> = self
            .parts
            .nodes
            .iter()
            .enumerate()
            .map(|(position, node)| (node.id.as_str(), position))
            .collect();
        let mut arcs = Vec::with_capacity(self.arcs.len());
        for (position, (from, to, weight)) in self.arcs.iter().enumerate() {
            let lookup = |id: &str| {
                index
                    .get(id)
                    .copied()
                    .ok_or_else(|| MaxPlusError::UnknownNode {
                        graph: self.parts.name.clone(),
                        arc: position + 1,
                        from: from.clone(),
                        to: to.clone(),
                        missing: id.to_owned(),
                    })
            };
            arcs.push(Arc {
                from: lookup(from)?,
                to: lookup(to)?,
                weight: Poly::from(parse_weight(weight)?),
            });
        }
        self.parts.arcs = arcs;
        KernelGraph::from_parts(self.parts)
    }
}

fn check_unique_ids(parts: &GraphParts) -> Result<(), MaxPlusError> {
    let mut seen = BTreeSet::new();
    for node in &parts.nodes {
        if !seen.insert(node.id.as_str()) {
            return Err(MaxPlusError::DuplicateNode {
                graph: parts.name.clone(),
                id: node.id.clone(),
            });
        }
    }
    Ok(())
}

/// Every parameter must be built in or declared; the error names the arc.
fn check_parameters(parts: &GraphParts) -> Result<(), MaxPlusError> {
    let declared: BTreeSet<&str> = parts
        .declared_parameters
        .iter()
        .map(String::as_str)
        .collect();
    for (position, arc) in parts.arcs.iter().enumerate() {
        let unknown = arc
            .weight
            .parameter_names()
            .into_iter()
            .find(|name| !is_builtin_parameter(name) && !declared.contains(name.as_str()));
        if let Some(name) = unknown {
            let known: Vec<&str> = Parameter::ALL
                .iter()
                .map(|p| p.key())
                .chain(declared.iter().copied())
                .collect();
            return Err(MaxPlusError::UnknownParameter {
                name,
                context: format!(
                    "graph `{}`: arc {} ({} → {})",
                    parts.name,
                    position + 1,
                    parts.nodes[arc.from].id,
                    parts.nodes[arc.to].id
                ),
                known: known.join(", "),
            });
        }
    }
    Ok(())
}

/// Inputs are only read, outputs only written, and both must exist (paper §5).
fn check_kinds(parts: &GraphParts) -> Result<(), MaxPlusError> {
    for arc in &parts.arcs {
        let (from, to) = (&parts.nodes[arc.from], &parts.nodes[arc.to]);
        if to.kind == NodeKind::Input {
            return Err(MaxPlusError::ArcIntoInput {
                graph: parts.name.clone(),
                node: to.id.clone(),
                from: from.id.clone(),
            });
        }
        if from.kind == NodeKind::Output {
            return Err(MaxPlusError::ArcFromOutput {
                graph: parts.name.clone(),
                node: from.id.clone(),
                to: to.id.clone(),
            });
        }
    }
    for (kind, word) in [(NodeKind::Input, "input"), (NodeKind::Output, "output")] {
        if !parts.nodes.iter().any(|node| node.kind == kind) {
            return Err(MaxPlusError::MissingKind {
                graph: parts.name.clone(),
                kind: word,
            });
        }
    }
    Ok(())
}

/// Kahn's algorithm ignoring self-loops; a leftover node means a real cycle, and walking back
/// along leftover arcs finds a node that lies on it.
fn topological_order(parts: &GraphParts) -> Result<Vec<usize>, MaxPlusError> {
    let count = parts.nodes.len();
    let mut pending_in = vec![0usize; count];
    let mut successors = vec![Vec::new(); count];
    let mut predecessors = vec![Vec::new(); count];
    for arc in parts.arcs.iter().filter(|arc| arc.from != arc.to) {
        pending_in[arc.to] += 1;
        successors[arc.from].push(arc.to);
        predecessors[arc.to].push(arc.from);
    }
    let mut order: Vec<usize> = (0..count).filter(|&node| pending_in[node] == 0).collect();
    let mut next = 0;
    while next < order.len() {
        for &successor in &successors[order[next]] {
            pending_in[successor] -= 1;
            if pending_in[successor] == 0 {
                order.push(successor);
            }
        }
        next += 1;
    }
    if order.len() == count {
        return Ok(order);
    }
    let start = (0..count)
        .find(|&node| pending_in[node] > 0)
        .expect("fewer ordered nodes than nodes means one still waits");
    Err(MaxPlusError::Cycle {
        graph: parts.name.clone(),
        node: parts.nodes[node_on_cycle(start, &pending_in, &predecessors)]
            .id
            .clone(),
    })
}

/// Walks back from a node Kahn could not order until a node repeats: that node is on a cycle.
fn node_on_cycle(start: usize, pending_in: &[usize], predecessors: &[Vec<usize>]) -> usize {
    let mut visited = vec![false; pending_in.len()];
    let mut node = start;
    while !visited[node] {
        visited[node] = true;
        node = predecessors[node]
            .iter()
            .copied()
            .find(|&previous| pending_in[previous] > 0)
            .expect("an unordered node has an unordered predecessor");
    }
    node
}

#[cfg(test)]
mod tests {
    use super::super::examples::{vadd_z1, vadd_z2};
    use super::*;

    #[test]
    fn z1_is_the_papers_matrix_with_height_2() {
        let graph = vadd_z1();
        assert_eq!(
            graph.kernel_matrix().to_string(),
            "[ε, T, ε, ε]\n[ε, ε, t, t]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n"
        );
        assert_eq!(graph.height(), 2);
    }

    #[test]
    fn z2_has_tau_on_the_diagonal_and_height_3() {
        let graph = vadd_z2();
        assert_eq!(
            graph.kernel_matrix().to_string(),
            "[ε, T, ε, ε]\n[ε, τ, t, t]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n"
        );
        assert_eq!(graph.height(), 3);
        assert_eq!(graph.without_self_loops().height(), 2);
    }

    #[test]
    fn a_cycle_names_a_node_on_it() {
        let error = KernelGraph::builder("loopy")
            .node("in", NodeKind::Input, None)
            .node("x", NodeKind::Op, None)
            .node("y", NodeKind::Op, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "x", "t")
            .arc("x", "y", "tau")
            .arc("y", "x", "tau")
            .arc("y", "out", "T")
            .build()
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("node `x` lies on a cycle")
                || error.contains("node `y` lies on a cycle"),
            "{error}"
        );
    }

    #[test]
    fn an_unknown_parameter_names_the_arc_and_the_name() {
        let error = KernelGraph::builder("typo")
            .node("in", NodeKind::Input, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "out", "t + taux")
            .build()
            .unwrap_err()
            .to_string();
        assert!(error.contains("arc 1 (in → out)"), "{error}");
        assert!(error.contains("`taux`"), "{error}");
    }

    #[test]
    fn declared_parameters_are_accepted() {
        let graph = KernelGraph::builder("fragment")
            .parameter("t1")
            .node("in", NodeKind::Input, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "out", "t1")
            .build();
        assert!(graph.is_ok());
    }

    #[test]
    fn unknown_and_duplicate_nodes_are_named() {
        let unknown = KernelGraph::builder("g")
            .node("in", NodeKind::Input, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "middle", "t")
            .build()
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("unknown node `middle`"), "{unknown}");
        let duplicate = KernelGraph::builder("g")
            .node("in", NodeKind::Input, None)
            .node("in", NodeKind::Output, None)
            .build()
            .unwrap_err()
            .to_string();
        assert!(duplicate.contains("`in` is used twice"), "{duplicate}");
    }

    #[test]
    fn inputs_are_only_read_and_outputs_only_written() {
        let into_input = KernelGraph::builder("g")
            .node("in", NodeKind::Input, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "in", "tau")
            .arc("in", "out", "t")
            .build()
            .unwrap_err()
            .to_string();
        assert!(into_input.contains("input node `in`"), "{into_input}");
        let no_output = KernelGraph::builder("g")
            .node("in", NodeKind::Input, None)
            .build()
            .unwrap_err()
            .to_string();
        assert!(no_output.contains("no output node"), "{no_output}");
    }

    #[test]
    fn chained_operations_count_each_loop_once_in_the_height() {
        // in → a(τ) → b(τ) → out: strike in, loop a, strike a, loop b, strike b, strike out.
        let graph = KernelGraph::builder("chain")
            .node("in", NodeKind::Input, None)
            .node("a", NodeKind::Op, None)
            .node("b", NodeKind::Op, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "a", "t")
            .arc("a", "a", "tau")
            .arc("a", "b", "0")
            .arc("b", "b", "tau")
            .arc("b", "out", "T")
            .build()
            .expect("valid");
        assert_eq!(graph.height(), 5);
    }

    #[test]
    fn the_caching_rule_renames_reads_leaving_cache_nodes() {
        let graph = KernelGraph::builder("cached")
            .node("in", NodeKind::Input, None)
            .node("copy", NodeKind::Cache, None)
            .node("out", NodeKind::Output, None)
            .arc("in", "copy", "0")
            .arc("copy", "out", "t + T")
            .build()
            .expect("valid")
            .with_cached_reads();
        assert_eq!(graph.arcs()[1].weight.to_string(), "T + t_cache");
        assert_eq!(graph.arcs()[0].weight.to_string(), "0");
    }
}
