//! Analytical models from the papers.
