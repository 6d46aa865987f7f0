//! Analytical models from the papers: pure functions of numbers.

pub mod maxplus;
pub mod stepanenko;
