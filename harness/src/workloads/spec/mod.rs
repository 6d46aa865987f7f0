//! Bring-your-own kernels: a workload spec file (TOML) names a kernel file, its parameters,
//! its buffers and their initial data, the steps of one iteration (launches, and host loops
//! over sequences of launches) and an optional check (a closed-form formula, or a reference
//! run compared with a tolerance) and, for the cluster prediction, how it runs distributed
//! over processors, so a user can run and series their own kernels without writing Rust. The format is documented in `docs/spec-format.md`; `kernels/examples/`
//! holds examples.

pub mod compiled;
mod declared;
pub mod distribution;
pub mod expr;
mod format;
pub mod params;
mod runner;
pub mod scaffold;
pub mod source_access;

pub use format::{
    load, ArgSpec, BufferSpec, CheckSpec, Element, Expected, Init, LaunchSpec, LoopSpec, Slots,
    SpecWorkload, Step, StoredSpec, MAX_LOOP_DEPTH,
};
pub use runner::{DumpedBuffer, MAX_LOOP_LAUNCHES};
