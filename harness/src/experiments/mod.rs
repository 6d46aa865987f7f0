//! Experiments: the stage above the pipeline that puts kernels, fits, models and calibrations
//! together — a small-scale series, the fractal validation, the prediction from a stored
//! series, the max-plus validation and Stepanenko's measured balance.
//!
//! Each experiment takes a device (or a stored result), runs what it needs, and returns a
//! result that the report, plot and export stages show; the command line only parses
//! arguments and calls these functions.

pub mod balance;
pub mod check_kernels;
pub mod cluster;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod predict;
pub mod series;
pub mod suite;
pub mod validate;
pub mod validate_maxplus;
