//! Two calibrations side by side, parameter by parameter: how a user spots a driver or clock
//! regression on one GPU, or compares two GPUs.

use serde::Serialize;

use super::Calibration;
use crate::bench::bandwidth::StreamKernel;

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

/// One streaming rate of two calibrations: a level's median for one kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateComparison {
    /// The level, as the streaming table names it (`L1`, …, `memory`).
    pub level: String,
    /// The kernel (`read`, `write`, `copy`, `triad`).
    pub kernel: StreamKernel,
    /// GB/s in the earlier file.
    pub before_gbps: f64,
    /// GB/s in the new file.
    pub after_gbps: f64,
    /// after / before.
    pub ratio: f64,
    /// Whether the two rows' spreads over their working sets overlap (no evidence of a
    /// change); `None` where a file records no spread (written before 2026-12-01, evening).
    pub spreads_overlap: Option<bool>,
    /// Whether both files put the level at the same working sets: where not, the latency
    /// chase found its edges elsewhere, and the two rates are of different working sets.
    pub same_working_sets: bool,
}

/// The streaming rates both files hold, level by level (matched by name) and kernel by
/// kernel, in the new file's order: how a user sees that a level got slower, which every
/// prediction moving a kernel to it inherits.
pub fn compare_rates(before: &Calibration, after: &Calibration) -> Vec<RateComparison> {
    let (Some(b), Some(a)) = (&before.bandwidth, &after.bandwidth) else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for al in &a.levels {
        let Some(bl) = b.levels.iter().find(|l| l.level == al.level) else {
            continue;
        };
        for kernel in StreamKernel::ALL {
            let rate = |l: &crate::bench::bandwidth::LevelBandwidth| match kernel {
                StreamKernel::Read => l.read_gbps,
                StreamKernel::Write => l.write_gbps,
                StreamKernel::Copy => l.copy_gbps,
                StreamKernel::Triad => l.triad_gbps,
            };
            let (Some(bg), Some(ag)) = (rate(bl), rate(al)) else {
                continue;
            };
            let spreads_overlap = match (bl.spread_of(kernel), al.spread_of(kernel)) {
                (Some(bs), Some(asp)) => Some(bs[0] <= asp[1] && asp[0] <= bs[1]),
                _ => None,
            };
            rows.push(RateComparison {
                level: al.level.clone(),
                kernel,
                before_gbps: bg,
                after_gbps: ag,
                ratio: ag / bg,
                spreads_overlap,
                same_working_sets: bl.working_set_bytes == al.working_set_bytes,
            });
        }
    }
    rows
}

/// A clock that moved by more than this fraction between two calibrations is flagged: a
/// boost clock wanders by a few per cent between runs of one card, while a power cap, a
/// clock lock or a throttled card moves it by tens of per cent, and every rate and every
/// time in cycles moves with it.
pub const CLOCK_CHANGE: f64 = 0.05;

/// What the two calibrations ran under, where it differs: the clock (measured on the device
/// where it could be, else the reported maximum), the driver, the runtime that compiles the
/// kernels (an OpenCL platform's version, or CUDA's NVRTC version), the harness that
/// measured, the sampling plan. Each line says what changed and why it matters; none means the conditions
/// match as far as the files say.
pub fn changed_conditions(before: &Calibration, after: &Calibration) -> Vec<String> {
    let mut notes = Vec::new();
    let (b, a) = (&before.read_latency, &after.read_latency);
    if let (Some(bc), Some(ac)) = (b.clock_mhz, a.clock_mhz) {
        if bc > 0.0 && ((ac - bc) / bc).abs() > CLOCK_CHANGE {
            notes.push(format!(
                "the clock differs: {bc:.0} MHz before ({}), {ac:.0} MHz now ({}), {:+.0} %; \
                 rates and times in cycles move with it",
                clock_kind(&b.clock_source),
                clock_kind(&a.clock_source),
                (ac / bc - 1.0) * 100.0
            ));
        }
    }
    if before.device.driver != after.device.driver {
        notes.push(format!(
            "the driver differs: {} before, {} now",
            before.device.driver, after.device.driver
        ));
    }
    if before.device.platform != after.device.platform {
        notes.push(format!(
            "the runtime differs: {} before, {} now (it compiles the kernels: their code may differ)",
            before.device.platform, after.device.platform
        ));
    }
    let (bp, ap) = (&before.provenance, &after.provenance);
    if bp.harness_version != ap.harness_version || bp.git_commit != ap.git_commit {
        notes.push(format!(
            "measured by another harness: {} ({}) before, {} ({}) now",
            bp.harness_version, bp.git_commit, ap.harness_version, ap.git_commit
        ));
    }
    if bp.quick != ap.quick {
        let plan = |q: bool| if q { "--quick" } else { "the full plan" };
        notes.push(format!(
            "sampled differently: {} before, {} now (quick intervals are wider)",
            plan(bp.quick),
            plan(ap.quick)
        ));
    }
    notes
}

/// `measured` or `reported maximum`, from a clock source's description.
fn clock_kind(source: &str) -> &'static str {
    if source.starts_with("measured") {
        "measured"
    } else {
        "reported maximum"
    }
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

    #[test]
    fn streaming_rates_are_compared_level_by_level_with_their_spreads() {
        use crate::bench::bandwidth::{BandwidthSweep, LevelBandwidth, RateSpread};
        let level = |name: &str, copy: f64, spread: Option<[f64; 2]>| LevelBandwidth {
            spread: spread
                .map(|gbps| {
                    vec![RateSpread {
                        kernel: StreamKernel::Copy,
                        gbps,
                    }]
                })
                .unwrap_or_default(),
            ..crate::calibration::test_copy_level(name, [0, usize::MAX], copy)
        };
        let sweep = |levels: Vec<LevelBandwidth>| BandwidthSweep {
            executors: 2,
            curves: Vec::new(),
            levels,
            cache_curves: Vec::new(),
        };
        let mut before = test_fixture();
        let mut after = test_fixture();
        assert!(compare_rates(&before, &after).is_empty() || before.bandwidth.is_some());
        before.bandwidth = Some(sweep(vec![
            level("L3", 60.0, Some([55.0, 66.0])),
            level("memory", 25.0, None),
        ]));
        after.bandwidth = Some(sweep(vec![
            level("L2", 200.0, None),
            level("L3", 40.0, Some([38.0, 45.0])),
            level("memory", 24.0, Some([23.0, 25.0])),
        ]));
        let rows = compare_rates(&before, &after);
        // L2 is in one file only; each row is copy, the one rate both hold.
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            (rows[0].level.as_str(), rows[0].kernel),
            ("L3", StreamKernel::Copy)
        );
        assert!((rows[0].ratio - 40.0 / 60.0).abs() < 1e-12);
        assert_eq!(rows[0].spreads_overlap, Some(false));
        assert!(rows[0].same_working_sets);
        after.bandwidth.as_mut().unwrap().levels[1].working_set_bytes[0] = 4 << 20;
        assert!(!compare_rates(&before, &after)[0].same_working_sets);
        // The earlier file records no spread for memory: nothing to say.
        assert_eq!(rows[1].spreads_overlap, None);
        after.bandwidth.as_mut().unwrap().levels[1].spread[0].gbps = [38.0, 56.0];
        assert_eq!(
            compare_rates(&before, &after)[0].spreads_overlap,
            Some(true)
        );
    }

    #[test]
    fn another_runtime_is_flagged_with_both_versions() {
        let before = test_fixture();
        let mut after = test_fixture();
        after.device.platform = "CUDA, NVRTC 13.1".into();
        let notes = changed_conditions(&before, &after);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("the runtime differs")
                && notes[0].contains(&before.device.platform)
                && notes[0].contains("CUDA, NVRTC 13.1 now"),
            "{}",
            notes[0]
        );
    }

    #[test]
    fn a_moved_clock_a_new_driver_and_another_harness_are_flagged() {
        let before = test_fixture();
        assert!(changed_conditions(&before, &before).is_empty());
        let mut after = test_fixture();
        let clock = before
            .read_latency
            .clock_mhz
            .expect("the fixture has a clock");
        // A boost clock's wander is not flagged; a cap of a fifth is.
        after.read_latency.clock_mhz = Some(clock * (1.0 + CLOCK_CHANGE / 2.0));
        assert!(changed_conditions(&before, &after).is_empty());
        after.read_latency.clock_mhz = Some(clock * 0.8);
        after.device.driver = format!("{}-new", before.device.driver);
        after.provenance.git_commit = "0123456789ab".into();
        after.provenance.quick = !before.provenance.quick;
        let notes = changed_conditions(&before, &after);
        assert_eq!(notes.len(), 4, "{notes:?}");
        assert!(
            notes[0].starts_with("the clock differs") && notes[0].contains("-20 %"),
            "{}",
            notes[0]
        );
        assert!(notes[1].contains("-new now"), "{}", notes[1]);
        assert!(notes[2].contains("0123456789ab"), "{}", notes[2]);
        assert!(notes[3].contains("--quick"), "{}", notes[3]);
    }
}
