//! Statistics and regressions: pure numerics that know nothing about devices.

pub mod baselines;
pub mod drift;
pub mod fit_error;
pub mod forecast;
pub mod fractal;
pub mod jumps;
pub mod linear;
pub mod model_error;
pub mod phases;
pub mod stats;
pub mod window;
