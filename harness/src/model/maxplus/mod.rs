//! The max-plus model of a GPU kernel (Antonyuk & Mikheev 2022, "A parallel program model for
//! execution time estimation"; docs/models.md §1).
//!
//! A kernel is a graph whose nodes are data states and whose arcs carry the time to move or
//! transform data. Its kernel matrix Z (z_ij = time of arc j → i, ε = −∞ without an arc)
//! gives the time of one instance as ⟨1_o, Z^⊙k ⊙ 1_i⟩ in the algebra R_max (⊕ = max,
//! ⊙ = +), with k the graph height; N instances on n executors take ⌈N/n⌉ rounds.
//!
//! The layout follows the paper:
//! - [`semiring`], [`scalar`], [`poly`]: R_max numbers (§4) and symbolic times such as
//!   `T + τ + t` (§11: every result is a sum of times or a max of such sums);
//! - [`matrix`]: ⊕, ⊙, powers, I_n and the modified Kronecker product (§4, §7);
//! - [`graph`], [`graph_file`], [`weight`]: the kernel graph, its TOML file, Z, 1_i, 1_o and the
//!   height with self-loops (§5, §6, §8);
//! - [`time`]: ⟨1_o, Z^⊙k ⊙ 1_i⟩ by matrix powers and, for large graphs, by longest path;
//! - [`collapse`]: series/parallel compound nodes (§11, Table 1);
//! - [`models`]: the naive, with-operations, serialized-memory and caching predictions (§7–§9);
//! - [`pipelined`]: our labelled extension (overlapping rounds and launch overhead);
//! - [`launch`]: how a kernel's size becomes launches, and the prediction of one iteration;
//! - [`examples`], [`random`]: the paper's graphs and benchmark graphs.
//!
//! Everything here is pure: numbers and graphs in, numbers and formulas out (only
//! [`KernelGraph::load`] reads a file).

pub mod collapse;
pub mod error;
pub mod examples;
pub mod graph;
pub mod graph_file;
pub mod launch;
pub mod matrix;
pub mod models;
pub mod parameters;
pub mod pipelined;
pub mod poly;
pub mod random;
pub mod scalar;
pub mod semiring;
pub mod summary;
pub mod time;
pub mod weight;

pub use error::MaxPlusError;
pub use graph::{KernelGraph, NodeKind};
pub use launch::{
    predict_iteration, predict_iteration_at_level, LaunchCost, LaunchPlan, VariantTime,
};
pub use matrix::Matrix;
pub use models::{predict, ModelVariant, Prediction};
pub use parameters::Parameters;
pub use poly::{Poly, Term};
pub use scalar::MaxPlus;
pub use semiring::Semiring;
