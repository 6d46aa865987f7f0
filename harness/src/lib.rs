//! harness: measure GPUs and predict how long parallel programs take on them.
//!
//! The pipeline, one folder per stage, each importing only the stages listed before it
//! (`tests/architecture.rs` checks this):
//!
//! 1. [`units`]: seconds and the max-plus parameter vocabulary;
//! 2. [`fit`] (statistics and regressions) and [`model`] (the papers' analytical models):
//!    pure numerics, numbers in and numbers out;
//! 3. [`export`]: files and formats (atomic writes, JSON, CSV, Markdown, Extra-P);
//! 4. [`backend`]: devices (CUDA, OpenCL, the host) behind one trait;
//! 5. [`bench`](mod@bench) (microbenchmarks) and [`workloads`] (verified kernels);
//! 6. [`calibration`]: a device's measured parameters, the file and its comparison;
//! 7. [`experiments`]: series, validations, predictions and balance runs;
//! 8. [`plot`] (figures), then [`report`] (tables, and the pages that show the figures).

pub mod backend;
pub mod bench;
pub mod calibration;
pub mod experiments;
pub mod export;
pub mod fit;
pub mod model;
pub mod plot;
pub mod report;
pub mod units;
pub mod workloads;
