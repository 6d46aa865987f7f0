//! Human-readable output: plain-text tables for the terminal, and the figures and HTML
//! report made from stored results.

pub mod catalog;
pub mod cluster;
pub mod figures;
pub mod html;
pub mod maxplus;
pub mod views;
