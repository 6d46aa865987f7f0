//! Human-readable output: plain-text tables for the terminal.

pub mod table;
pub mod views;
