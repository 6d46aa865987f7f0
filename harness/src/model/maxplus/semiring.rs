//! The algebraic interface shared by numeric and symbolic matrix entries
//! (Antonyuk & Mikheev 2022, §4; docs/models.md §1 "Algebra R_max").

use std::fmt::{Debug, Display};

/// An idempotent semiring in the max-plus sense: ⊕ = max, ⊙ = +.
///
/// Laws every implementation keeps (checked by property tests):
/// ε ⊕ a = a, ε ⊙ a = ε, e ⊙ a = a, with e the unit of ⊙ (the number 0).
pub trait Semiring: Clone + PartialEq + Debug + Display {
    /// ε = −∞, the neutral element of ⊕ and the absorbing element of ⊙.
    fn epsilon() -> Self;

    /// e = 0, the neutral element of ⊙.
    fn unit() -> Self;

    /// a ⊕ b = max(a, b).
    fn oplus(&self, other: &Self) -> Self;

    /// a ⊙ b = a + b.
    fn otimes(&self, other: &Self) -> Self;

    /// Whether this is ε (no arc, no path).
    fn is_epsilon(&self) -> bool;
}
