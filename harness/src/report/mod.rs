//! Human-readable output: plain-text tables for the terminal.

pub mod cluster;
pub mod maxplus;
pub mod views;
