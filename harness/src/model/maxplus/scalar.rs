//! Numeric scalars of R_max = R ∪ {ε = −∞} (Antonyuk & Mikheev 2022, §4; docs/models.md §1).

use std::fmt;

use super::error::MaxPlusError;
use super::semiring::Semiring;

/// An element of R_max: a finite real number or ε = −∞.
///
/// a ⊕ b = max(a, b) and a ⊙ b = a + b (paper §4). NaN and +∞ cannot be built.
///
/// ```
/// use harness::model::maxplus::scalar::MaxPlus;
/// use harness::model::maxplus::semiring::Semiring;
/// let a = MaxPlus::new(2.0).expect("finite");
/// let b = MaxPlus::new(3.0).expect("finite");
/// assert_eq!(a.otimes(&b).value(), 5.0);
/// assert_eq!(a.oplus(&b).value(), 3.0);
/// assert!(a.otimes(&MaxPlus::EPSILON).is_epsilon());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct MaxPlus(f64);

impl MaxPlus {
    /// ε = −∞: "no arc" in a kernel matrix.
    pub const EPSILON: MaxPlus = MaxPlus(f64::NEG_INFINITY);

    /// e = 0, the unit of ⊙.
    pub const UNIT: MaxPlus = MaxPlus(0.0);

    /// A scalar from a number; −∞ gives ε, NaN and +∞ are refused.
    pub fn new(value: f64) -> Result<Self, MaxPlusError> {
        if value.is_nan() || value == f64::INFINITY {
            return Err(MaxPlusError::InvalidScalar { value });
        }
        Ok(MaxPlus(value))
    }

    /// The number itself (−∞ for ε).
    pub fn value(self) -> f64 {
        self.0
    }
}

impl Semiring for MaxPlus {
    fn epsilon() -> Self {
        MaxPlus::EPSILON
    }

    fn unit() -> Self {
        MaxPlus::UNIT
    }

    fn oplus(&self, other: &Self) -> Self {
        MaxPlus(self.0.max(other.0))
    }

    fn otimes(&self, other: &Self) -> Self {
        if self.is_epsilon() || other.is_epsilon() {
            MaxPlus::EPSILON
        } else {
            MaxPlus(self.0 + other.0)
        }
    }

    fn is_epsilon(&self) -> bool {
        self.0 == f64::NEG_INFINITY
    }
}

impl fmt::Display for MaxPlus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_epsilon() {
            write!(f, "ε")
        } else {
            write!(f, "{}", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn scalar() -> impl Strategy<Value = MaxPlus> {
        prop_oneof![
            1 => Just(MaxPlus::EPSILON),
            4 => (-1.0e6f64..1.0e6).prop_map(MaxPlus),
        ]
    }

    #[test]
    fn nan_and_plus_infinity_are_refused() {
        assert!(MaxPlus::new(f64::NAN).is_err());
        assert!(MaxPlus::new(f64::INFINITY).is_err());
        assert!(MaxPlus::new(f64::NEG_INFINITY).is_ok_and(|x| x.is_epsilon()));
    }

    #[test]
    fn epsilon_displays_as_the_paper_writes_it() {
        assert_eq!(MaxPlus::EPSILON.to_string(), "ε");
        assert_eq!(MaxPlus(2.5).to_string(), "2.5");
    }

    proptest! {
        #[test]
        fn epsilon_is_neutral_for_oplus(a in scalar()) {
            prop_assert_eq!(a.oplus(&MaxPlus::EPSILON), a);
            prop_assert_eq!(MaxPlus::EPSILON.oplus(&a), a);
        }

        #[test]
        fn epsilon_absorbs_otimes(a in scalar()) {
            prop_assert!(a.otimes(&MaxPlus::EPSILON).is_epsilon());
            prop_assert!(MaxPlus::EPSILON.otimes(&a).is_epsilon());
        }

        #[test]
        fn zero_is_the_unit_of_otimes(a in scalar()) {
            prop_assert_eq!(a.otimes(&MaxPlus::UNIT), a);
        }

        #[test]
        fn otimes_distributes_over_oplus(a in scalar(), b in scalar(), c in scalar()) {
            let left = a.otimes(&b.oplus(&c));
            let right = a.otimes(&b).oplus(&a.otimes(&c));
            prop_assert_eq!(left, right);
        }
    }
}
