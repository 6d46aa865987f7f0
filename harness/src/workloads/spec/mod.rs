//! Bring-your-own kernels: a workload spec file (TOML) names a kernel file, its buffers,
//! their initial data, the launches of one iteration and an optional host check, so a user
//! can run and series their own kernels without writing Rust. The format is documented in
//! `docs/spec-format.md`; `kernels/examples/` holds two examples.

pub mod expr;
mod format;
mod runner;

pub use format::{load, SpecWorkload};
