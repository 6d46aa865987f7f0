//! Cluster prediction in the manner of the DVM performance Predictor (Keldysh Institute,
//! "The DVM performance Predictor"): a program measured on one processor is replayed on a
//! grid of processors, each holding one BLOCK of the distributed array, and the time of every
//! interval is split into productive time and losses.
//!
//! Pure: numbers in, numbers out. The pieces, in pipeline order:
//! - [`network`]: the target system (bus or grid, start time, time per byte, power ratio);
//! - [`topology`]: the processor grid, the block each processor holds and the bytes a shadow
//!   (halo) exchange moves between each pair of processors;
//! - [`cost`]: the time of a set of messages, of a reduction, with message pipelining on a grid;
//! - [`trace`]: the interval tree a one-processor run records;
//! - [`mod@replay`]: the simulation over every processor, with clock alignment at collectives;
//! - [`report`]: per interval the productive time, total time, efficiency and losses, and the
//!   comparison of a prediction with a measured run.
//!
//! `docs/cluster.md` gives the formulas and where our reading of the Predictor departs from it.

pub mod cost;
pub mod network;
pub mod replay;
pub mod report;
pub mod topology;
pub mod trace;

pub use cost::{message_time, pipelined_time, reduction_time, transfer_time};
pub use network::{Network, NetworkKind};
pub use replay::{replay, ComputeScale, ReplayOptions};
pub use report::{compare, ClusterReport, Comparison, IntervalReport, Losses, ProcessorTimes};
pub use topology::{Blocks, ProcessorGrid, Transfers};
pub use trace::{Trace, TraceInterval, TraceStep, Work};

/// Why a cluster model input is refused.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ClusterError {
    /// A processor grid that is empty, has a zero extent or is too large.
    #[error("processor grid: {0}")]
    Grid(String),
    /// A grid that does not divide the distributed array into equal blocks.
    #[error("{0}")]
    Distribution(String),
    /// A network description with a missing, negative or non-finite value.
    #[error("network: {0}")]
    Network(String),
    /// A trace that does not describe a run the model can replay.
    #[error("trace: {0}")]
    Trace(String),
    /// A prediction that would cost more work than the stated bound.
    #[error("{0}")]
    TooMuchWork(String),
}
