//! Two calibrations side by side, parameter by parameter: how a user spots a driver or clock
//! regression on one GPU, or compares two GPUs.

use serde::Serialize;

use super::Calibration;

/// One parameter of two calibrations.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterComparison {
    /// The short key (`t`, `T`, `dt`, …).
    pub name: String,
    /// The symbol as the paper prints it (`Δt`, `τ`, …).
    #[serde(skip)]
    pub symbol: &'static str,
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

/// Compare `before` with `after`.
pub fn compare(before: &Calibration, after: &Calibration) -> Vec<ParameterComparison> {
    before
        .parameters
        .iter()
        .zip(after.parameters.iter())
        .map(|((parameter, b), (_, a))| ParameterComparison {
            name: parameter.key().to_string(),
            symbol: parameter.symbol(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::test_fixture;

    #[test]
    fn every_measured_parameter_in_the_file_order_with_ratio_and_overlap() {
        let before = test_fixture();
        let mut after = test_fixture();
        after.parameters.read_gap.value *= 2.0;
        after.parameters.read_gap.ci95 = after.parameters.read_gap.ci95.map(|v| v * 2.0);
        let rows = compare(&before, &after);
        let keys: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(keys, ["t", "T", "dt", "dT", "tau", "n"]);
        let symbols: Vec<&str> = rows.iter().map(|r| r.symbol).collect();
        assert_eq!(symbols, ["t", "T", "Δt", "ΔT", "τ", "n"]);
        for r in &rows {
            if r.name == "dt" {
                assert_eq!(r.ratio, 2.0);
                assert_eq!(r.unit, "ns");
            } else {
                assert_eq!(r.ratio, 1.0, "{}", r.name);
                assert!(r.cis_overlap, "{}", r.name);
            }
        }
    }

    #[test]
    fn overlap_is_decided_by_the_intervals() {
        let before = test_fixture();
        let mut after = test_fixture();
        let width = before.parameters.op_time.ci95[1] - before.parameters.op_time.ci95[0];
        // Just touching: still overlapping; one width beyond: not.
        after.parameters.op_time.ci95 = [
            before.parameters.op_time.ci95[1],
            before.parameters.op_time.ci95[1] + width,
        ];
        let tau = |rows: &[ParameterComparison]| {
            rows.iter()
                .find(|r| r.name == "tau")
                .expect("tau")
                .cis_overlap
        };
        assert!(tau(&compare(&before, &after)));
        after.parameters.op_time.ci95 = after.parameters.op_time.ci95.map(|v| v + 2.0 * width);
        assert!(!tau(&compare(&before, &after)));
    }
}
