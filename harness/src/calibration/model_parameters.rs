//! From a calibration file to the max-plus model's parameter values (docs/models.md §1).
//!
//! The calibration stores nanoseconds under the paper's short names; the model wants seconds.
//! Besides t, T, τ, Δt, ΔT and n it needs:
//! - `t_cache`, the repeat read time of the caching model: the latency of the last cache
//!   level before device memory in the pointer-chase sweep (on a GPU the L2, where a value a
//!   neighbouring executor on another multiprocessor brought in is found);
//! - the launch overhead L of the pipelined extension: the device-timed empty kernel.
//!
//! [`window_facts`] gives the fractal fit's window rules the same calibration's n, L and
//! cache levels.

use serde::Serialize;

use super::Calibration;
use crate::fit::window::DeviceFacts;
use crate::model::maxplus::{MaxPlusError, Parameters};
use crate::units::{Parameter, Seconds};

/// One value handed to the model, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterSource {
    /// The model's name (`t`, `T`, `tau`, `dt`, `dT`, `t_cache`, `n`).
    pub name: String,
    /// Value in seconds (a count for `n`).
    pub value: f64,
    /// Where in the calibration it was taken from (a field path).
    pub source: String,
    /// How the calibration measured it.
    pub method: String,
}

/// The model's values from a calibration, and the launch overhead in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInputs {
    /// Every value with its source, in a fixed order.
    pub sources: Vec<ParameterSource>,
    /// Device-timed launch overhead.
    pub launch_seconds: Seconds,
}

impl ModelInputs {
    /// Read the values from `calibration`.
    pub fn from_calibration(calibration: &Calibration) -> Self {
        let p = &calibration.parameters;
        // The model's order: t, T, τ, Δt, ΔT, n; t_cache after them.
        let mut sources: Vec<ParameterSource> = Parameter::ALL
            .into_iter()
            .filter_map(|parameter| {
                let estimate = p.estimate(parameter)?;
                Some(ParameterSource {
                    name: parameter.key().to_string(),
                    value: p.value(parameter)?,
                    source: format!("parameters.{}", parameter.key()),
                    method: estimate.method.clone(),
                })
            })
            .collect();
        let cached = Parameter::CachedReadLatency.key().to_string();
        sources.push(match last_cache_level(calibration) {
            Some((level, latency_ns)) => ParameterSource {
                name: cached,
                value: Seconds::from_ns(latency_ns).0,
                source: format!("read_latency.levels[{level}]"),
                method: "pointer-chase plateau of the last cache level before device memory".into(),
            },
            None => ParameterSource {
                name: cached,
                value: Seconds::from_ns(p.read_latency.value).0,
                source: "parameters.t".into(),
                method: "no cache level found, so t_cache = t".into(),
            },
        });
        ModelInputs {
            sources,
            launch_seconds: Seconds::from_ns(calibration.launch_overhead.device_ns),
        }
    }

    /// The values as model parameters; `overrides` (name, seconds) replace or add values.
    pub fn parameters(&self, overrides: &[(String, f64)]) -> Result<Parameters, MaxPlusError> {
        let mut parameters = Parameters::new();
        for s in &self.sources {
            parameters.set(&s.name, s.value)?;
        }
        for (name, value) in overrides {
            parameters.set(name, *value)?;
        }
        Ok(parameters)
    }

    /// The executor count n, rounded, at least 1.
    pub fn executors(&self) -> u64 {
        self.sources
            .iter()
            .find(|s| s.name == Parameter::Executors.key())
            .map_or(1, |s| s.value.round().max(1.0) as u64)
    }
}

/// What the fit-window rules need from a calibration ([`crate::fit::window`]): n, the
/// device-timed launch overhead, and each latency level's largest working set.
pub fn window_facts(calibration: &Calibration) -> DeviceFacts {
    DeviceFacts {
        executors: calibration.parameters.executors.value,
        launch_seconds: Seconds::from_ns(calibration.launch_overhead.device_ns),
        levels: calibration
            .read_latency
            .levels
            .iter()
            .map(|l| (l.level.clone(), l.working_set_bytes[1] as u64))
            .collect(),
    }
}

/// The last level named other than `memory`, with its latency in ns.
fn last_cache_level(calibration: &Calibration) -> Option<(String, f64)> {
    calibration
        .read_latency
        .levels
        .iter()
        .rfind(|l| l.level != "memory")
        .map(|l| (l.level.clone(), l.latency_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::test_fixture;

    #[test]
    fn values_are_converted_to_seconds_and_named() {
        let c = test_fixture();
        let inputs = ModelInputs::from_calibration(&c);
        let p = inputs.parameters(&[]).expect("finite");
        assert_eq!(
            p.get("t").expect("t"),
            c.parameters.read_latency.value * 1e-9
        );
        assert_eq!(
            p.get("dT").expect("dT"),
            c.parameters.write_gap.value * 1e-9
        );
        assert_eq!(p.get("n").expect("n"), c.parameters.executors.value);
        let last_cache = c
            .read_latency
            .levels
            .iter()
            .rfind(|l| l.level != "memory")
            .expect("the host has caches");
        assert_eq!(
            p.get("t_cache").expect("t_cache"),
            last_cache.latency_ns * 1e-9
        );
        assert_eq!(inputs.launch_seconds.0, c.launch_overhead.device_ns * 1e-9);
    }

    #[test]
    fn overrides_win() {
        let inputs = ModelInputs::from_calibration(&test_fixture());
        let p = inputs
            .parameters(&[("t".into(), 1.0), ("extra".into(), 2.0)])
            .expect("finite");
        assert_eq!(p.get("t").expect("t"), 1.0);
        assert_eq!(p.get("extra").expect("extra"), 2.0);
    }
}
