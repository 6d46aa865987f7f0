//! Named model parameters and their values (docs/models.md §1: t, T, τ, Δt, ΔT, plus user names).
//!
//! The built-in names are the keys of [`crate::units::Parameter`] (`t`, `T`, `tau`, `dt`,
//! `dT`, `t_cache`, `n`), the same keys the calibration files use; a graph may declare
//! names of its own beside them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::MaxPlusError;
use crate::units::Parameter;

/// Whether `name` is the key of one of the built-in parameters ([`Parameter::ALL`]), which
/// every graph may use without declaring them.
pub fn is_builtin_parameter(name: &str) -> bool {
    Parameter::from_key(name).is_some()
}

/// The name as the paper prints it: `tau` → τ, `dt` → Δt, `dT` → ΔT, others unchanged.
///
/// ```
/// use harness::model::maxplus::parameters::display_name;
/// assert_eq!(display_name("tau"), "τ");
/// assert_eq!(display_name("dT"), "ΔT");
/// assert_eq!(display_name("t1"), "t1");
/// ```
pub fn display_name(name: &str) -> &str {
    Parameter::symbol_of(name)
}

/// Values of the model parameters, in seconds (except `n`, a count), keyed by short name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Parameters {
    values: BTreeMap<String, f64>,
}

impl Parameters {
    /// No values yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Values from (name, value) pairs; a non-finite value is an error naming it.
    pub fn from_pairs(pairs: &[(&str, f64)]) -> Result<Self, MaxPlusError> {
        let mut parameters = Self::new();
        for (name, value) in pairs {
            parameters.set(name, *value)?;
        }
        Ok(parameters)
    }

    /// Sets one value; NaN and infinities are refused.
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), MaxPlusError> {
        if !value.is_finite() || value < 0.0 {
            return Err(MaxPlusError::InvalidParameterValue {
                name: name.to_owned(),
                value,
            });
        }
        self.values.insert(name.to_owned(), value);
        Ok(())
    }

    /// The value of `name`, or an error naming the missing parameter.
    pub fn get(&self, name: &str) -> Result<f64, MaxPlusError> {
        self.values
            .get(name)
            .copied()
            .ok_or_else(|| MaxPlusError::MissingParameterValue {
                name: name.to_owned(),
            })
    }

    /// All (name, value) pairs, sorted by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, f64)> {
        self.values
            .iter()
            .map(|(name, value)| (name.as_str(), *value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_value_names_the_parameter() {
        let parameters = Parameters::from_pairs(&[("t", 1.0)]).expect("finite");
        let message = parameters.get("tau").unwrap_err().to_string();
        assert!(message.contains("`tau`"), "{message}");
    }

    #[test]
    fn non_finite_values_are_refused() {
        assert!(Parameters::from_pairs(&[("t", f64::NAN)]).is_err());
        assert!(Parameters::from_pairs(&[("t", f64::INFINITY)]).is_err());
    }

    #[test]
    fn parameters_round_trip_through_json() {
        let parameters = Parameters::from_pairs(&[("t", 2e-7), ("T", 3e-7)]).expect("finite");
        let json = serde_json::to_string(&parameters).expect("serialisable");
        assert_eq!(json, r#"{"T":3e-7,"t":2e-7}"#);
        let back: Parameters = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, parameters);
    }
}
