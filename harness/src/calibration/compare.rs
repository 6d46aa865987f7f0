//! Two calibrations side by side, parameter by parameter: how a user spots a driver or clock
//! regression on one GPU, or compares two GPUs.

use serde::Serialize;

use super::{Calibration, Parameter};

/// One parameter of two calibrations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterComparison {
    /// The short name (`t`, `T`, `dt`, …).
    pub name: String,
    /// Unit.
    pub unit: String,
    /// Value in the earlier file.
    pub before: f64,
    /// Its CI.
    pub before_ci95: [f64; 2],
    /// Value in the new file.
    pub after: f64,
    /// Its CI.
    pub after_ci95: [f64; 2],
    /// after / before.
    pub ratio: f64,
    /// Whether the two CIs overlap (no evidence of a change).
    pub cis_overlap: bool,
}

/// The six parameters of a calibration with their short names.
pub fn named_parameters(c: &Calibration) -> [(&'static str, &Parameter); 6] {
    let p = &c.parameters;
    [
        ("t", &p.t),
        ("T", &p.big_t),
        ("dt", &p.dt),
        ("dT", &p.big_dt),
        ("tau", &p.tau),
        ("n", &p.n),
    ]
}

/// Compare `before` with `after`.
pub fn compare(before: &Calibration, after: &Calibration) -> Vec<ParameterComparison> {
    named_parameters(before)
        .into_iter()
        .zip(named_parameters(after))
        .map(|((name, b), (_, a))| ParameterComparison {
            name: name.to_string(),
            unit: a.unit.clone(),
            before: b.value,
            before_ci95: b.ci95,
            after: a.value,
            after_ci95: a.ci95,
            ratio: a.value / b.value,
            cis_overlap: b.ci95[0] <= a.ci95[1] && a.ci95[0] <= b.ci95[1],
        })
        .collect()
}
