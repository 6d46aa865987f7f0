//! harness: measure GPUs and predict how long parallel programs take on them.
//!
//! The pipeline, one folder per stage: [`backend`] (devices) → [`bench`](mod@bench) (microbenchmarks
//! that measure the max-plus model's parameters) → [`fit`] (statistics and regressions) →
//! [`model`] (the papers' analytical models) → [`calibration`] and [`report`] (files and
//! tables).

pub mod backend;
pub mod bench;
pub mod calibration;
pub mod fit;
pub mod model;
pub mod plot;
pub mod report;
pub mod workloads;
