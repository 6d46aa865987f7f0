//! Statistics and regressions: pure numerics that know nothing about devices.

pub mod linear;
pub mod stats;
