//! Analytical models from the papers: pure functions of numbers.

pub mod cluster;
pub mod maxplus;
pub mod stepanenko;
