//! The one error type of the max-plus model (Antonyuk & Mikheev 2022, docs/models.md §1).
//!
//! Every message names the thing a user must fix: the file and line, the node, the arc,
//! the parameter or the matrix entry.

use thiserror::Error;

/// Everything that can go wrong while building, reading or evaluating a max-plus model.
#[derive(Debug, Error)]
pub enum MaxPlusError {
    /// A scalar was NaN or +∞; R_max holds the reals and ε = −∞ only.
    #[error("{value} is not an element of R_max (only finite numbers and ε = −∞ are)")]
    InvalidScalar {
        /// The rejected value.
        value: f64,
    },

    /// A matrix was built from rows of unequal length.
    #[error("matrix row {row} has {len} entries, but row 1 has {expected}: a matrix must be rectangular")]
    RaggedRows {
        /// The offending row, counted from 1 as in the paper.
        row: usize,
        /// Its length.
        len: usize,
        /// The length of the first row.
        expected: usize,
    },

    /// Two matrices whose shapes do not fit the operation.
    #[error(
        "cannot compute {operation} of a {}×{} matrix and a {}×{} matrix",
        left.0, left.1, right.0, right.1
    )]
    ShapeMismatch {
        /// "⊕", "⊙" or "⟨·,·⟩".
        operation: &'static str,
        /// (rows, columns) of the left operand.
        left: (usize, usize),
        /// (rows, columns) of the right operand.
        right: (usize, usize),
    },

    /// A power or identity-based operation needs a square matrix.
    #[error("a max-plus power needs a square matrix, this one is {rows}×{cols}")]
    NotSquare {
        /// Row count.
        rows: usize,
        /// Column count.
        cols: usize,
    },

    /// An index outside the matrix.
    #[error("entry ({row}, {col}) is outside a {rows}×{cols} matrix (indices count from 1)")]
    IndexOutOfRange {
        /// Requested row, from 1.
        row: usize,
        /// Requested column, from 1.
        col: usize,
        /// Row count.
        rows: usize,
        /// Column count.
        cols: usize,
    },

    /// An arc weight formula could not be parsed.
    #[error("weight \"{weight}\": {message}")]
    WeightSyntax {
        /// The formula as written.
        weight: String,
        /// What is wrong with it.
        message: String,
    },

    /// A weight names a parameter that is neither built in nor declared.
    #[error("{context}: unknown parameter `{name}` (known: {known}; declare others in `parameters = [...]`)")]
    UnknownParameter {
        /// The unknown name.
        name: String,
        /// Where it was found, e.g. "arc 3 (sum → c)".
        context: String,
        /// The names that are allowed there, comma separated.
        known: String,
    },

    /// A formula was evaluated without a value for one of its parameters.
    #[error("no value given for parameter `{name}`")]
    MissingParameterValue {
        /// The parameter without a value.
        name: String,
    },

    /// A parameter value that is not a finite, non-negative number (every parameter is a
    /// time or a count).
    #[error("parameter `{name}` = {value} is not a finite, non-negative number")]
    InvalidParameterValue {
        /// The parameter.
        name: String,
        /// Its value.
        value: f64,
    },

    /// Two nodes share an id.
    #[error("graph `{graph}`: node id `{id}` is used twice")]
    DuplicateNode {
        /// The graph's name.
        graph: String,
        /// The repeated id.
        id: String,
    },

    /// An arc names a node that does not exist.
    #[error("graph `{graph}`: arc {arc} ({from} → {to}) names unknown node `{missing}`")]
    UnknownNode {
        /// The graph's name.
        graph: String,
        /// The arc's position in the file, from 1.
        arc: usize,
        /// The arc's source as written.
        from: String,
        /// The arc's destination as written.
        to: String,
        /// The id that matches no node.
        missing: String,
    },

    /// The graph has a cycle longer than a self-loop.
    #[error("graph `{graph}`: node `{node}` lies on a cycle; only self-loops (operation times) are allowed")]
    Cycle {
        /// The graph's name.
        graph: String,
        /// A node on the cycle.
        node: String,
    },

    /// An arc enters an input node (inputs only give data, docs/models.md §1).
    #[error("graph `{graph}`: input node `{node}` has an incoming arc from `{from}`; inputs are only read")]
    ArcIntoInput {
        /// The graph's name.
        graph: String,
        /// The input node.
        node: String,
        /// The arc's source.
        from: String,
    },

    /// An arc leaves an output node (outputs only receive data, docs/models.md §1).
    #[error("graph `{graph}`: output node `{node}` has an outgoing arc to `{to}`; outputs are only written")]
    ArcFromOutput {
        /// The graph's name.
        graph: String,
        /// The output node.
        node: String,
        /// The arc's destination.
        to: String,
    },

    /// A graph without input or without output nodes has no kernel time.
    #[error("graph `{graph}` has no {kind} node")]
    MissingKind {
        /// The graph's name.
        graph: String,
        /// "input" or "output".
        kind: &'static str,
    },

    /// No output can be reached from an input: the time ⟨1_o, Z^⊙k ⊙ 1_i⟩ is ε.
    #[error(
        "graph `{graph}`: no output node is reachable from an input node, the kernel time is ε"
    )]
    NoPath {
        /// The graph's name.
        graph: String,
    },

    /// A prediction for zero executors.
    #[error("the number of simultaneous executors n must be at least 1")]
    ZeroExecutors,

    /// A TOML graph file that does not parse or has the wrong fields.
    #[error("{file}:{line}:{column}: {message}")]
    Toml {
        /// The file (or source name).
        file: String,
        /// Line, from 1.
        line: usize,
        /// Column, from 1.
        column: usize,
        /// The parser's message.
        message: String,
    },

    /// A graph whose exact symbolic formula costs more than the bound.
    #[error("the graph's exact formula is too large to derive ({arcs} arcs; more than {max} term steps): numeric predictions still use its critical path")]
    FormulaTooLarge {
        /// Arcs of the graph.
        arcs: usize,
        /// The bound on term steps.
        max: u64,
    },

    /// An iteration with more launches than the model evaluates.
    #[error("N = {size} gives {launches} launches per iteration; the model evaluates at most {max} (choose a smaller N)")]
    TooManyLaunches {
        /// The size.
        size: usize,
        /// Launches it would take.
        launches: u64,
        /// The bound.
        max: u64,
    },

    /// A graph file that cannot be read.
    #[error("{file}: {source}")]
    Io {
        /// The file.
        file: String,
        /// The operating-system error.
        #[source]
        source: std::io::Error,
    },
}
