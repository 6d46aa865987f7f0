//! Choosing the fit window from what the calibration knows (beyond Escobar & Boppana,
//! docs/models.md §2): the paper fits ln T over whatever small sizes were run, which on a GPU puts
//! the window where launch overhead and latency dominate, or in a cache level the large sizes
//! will have left. A size is kept for the `windowed` fit only if
//!
//! 1. **saturated**: its main kernel launches at least as many work items as the device has
//!    simultaneous executors n (the calibrated `n`);
//! 2. **not overhead-dominated**: launches × the calibrated launch overhead L is at most
//!    [`OVERHEAD_LIMIT`] of its time;
//! 3. **in the target's memory level**: its working set lives in the same level of the
//!    calibrated latency sweep (L1, L2, …, memory) as the target size's working set.
//!
//! Every rejected size is listed with all of its reasons; nothing is dropped silently. A
//! target whose own main kernel launches fewer work items than n fills the device no more than
//! its window does: the `calibrated` variant then keeps every unflagged size
//! ([`choose_window_unsaturated`]) and estimates those launches as latency-bound.
//!
//! This file holds the rules and the window they choose; what the calibration says about the
//! device ([`DeviceFacts`]) and the rates read from its sweeps are in `device`.

mod device;

pub use device::{DeviceFacts, HyperplaneRates, OneThreadRates, PlaneOrder};

use serde::{Deserialize, Serialize};

/// The largest share of a size's time the launch overheads may take.
pub const OVERHEAD_LIMIT: f64 = 0.2;

/// The share the `calibrated` variant allows where fewer than three sizes stay under
/// [`OVERHEAD_LIMIT`]: it subtracts launches × L before its fit and adds them back at the
/// target, where their share is smaller (a launch count grows more slowly than the work), so a
/// window whose launches take a quarter of its time still leaves it most of its work to fit;
/// the prediction then says that it leans on L.
pub const RELAXED_OVERHEAD_LIMIT: f64 = 0.5;

/// What the series and the workload say about one size.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SizeFacts {
    /// Problem size N.
    pub size: usize,
    /// Work items in the main kernel's typical launch, where the workload knows them.
    pub parallelism: Option<u64>,
    /// Device bytes the workload uses at this size.
    pub working_set_bytes: u64,
    /// Kernel launches in one run.
    pub launches: u64,
    /// The run's median time, seconds.
    pub seconds: f64,
    /// Why the size is suspect on its own (its time per unit of work spikes against its
    /// neighbours', [`super::jumps`]), if it is.
    pub anomaly: Option<String>,
}

/// A size left out of the windowed fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rejection {
    /// The size.
    pub size: usize,
    /// Every reason, one sentence each.
    pub reasons: Vec<String>,
}

/// The chosen window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WindowChoice {
    /// Sizes kept, ascending.
    pub accepted: Vec<usize>,
    /// Sizes left out, with reasons.
    pub rejected: Vec<Rejection>,
    /// The memory level of the target's working set.
    pub target_level: String,
    /// The rule checks that could not be made (e.g. no parallelism known for a spec).
    pub unchecked: Vec<String>,
}

/// Apply the three rules of the module documentation to `points` for a target whose
/// working set is `target_bytes`.
///
/// ```
/// use harness::fit::window::{choose_window, DeviceFacts, SizeFacts};
/// use harness::units::Seconds;
/// let device = DeviceFacts {
///     executors: 1000.0,
///     launch_seconds: Seconds(5e-6),
///     levels: vec![("L2".into(), 1 << 20), ("memory".into(), u64::MAX)],
///     ..DeviceFacts::default()
/// };
/// let point = |size: usize, seconds: f64| SizeFacts {
///     size,
///     parallelism: Some(size as u64),
///     working_set_bytes: 12 * size as u64,
///     launches: 1,
///     seconds,
///     anomaly: None,
/// };
/// let points = [point(512, 6e-6), point(1 << 16, 1e-4), point(1 << 18, 4e-4)];
/// let choice = choose_window(&points, 12 << 24, &device);
/// assert_eq!(choice.accepted, vec![1 << 18]);
/// assert_eq!(choice.rejected.len(), 2);
/// assert_eq!(choice.rejected[0].reasons.len(), 3); // unsaturated, overhead, cache level
/// ```
pub fn choose_window(
    points: &[SizeFacts],
    target_bytes: u64,
    device: &DeviceFacts,
) -> WindowChoice {
    apply_rules(points, target_bytes, device, true, Some(OVERHEAD_LIMIT))
}

/// Rules 1 and 2 and the flagged sizes, not rule 3: the window of the `calibrated` variant,
/// which moves each size to the target's memory level itself ([`super::forecast::forecast_calibrated`]).
/// `overhead_limit`: rule 2's share, [`OVERHEAD_LIMIT`] or, where that leaves fewer than
/// three sizes, [`RELAXED_OVERHEAD_LIMIT`].
pub fn choose_window_any_level(
    points: &[SizeFacts],
    target_bytes: u64,
    device: &DeviceFacts,
    overhead_limit: f64,
) -> WindowChoice {
    apply_rules(points, target_bytes, device, false, Some(overhead_limit))
}

/// The flagged sizes only, not rules 1–3: the window of the `calibrated` variant for a
/// target whose own main kernel launches fewer work items than the device has executors
/// (`parallelism` below n, as ADI's N² lines on a GPU). Such a target is not saturated either,
/// and its estimate charges each launch L and the walk of one executor, which a window of
/// unsaturated, overhead-heavy sizes measures ([`super::forecast::forecast_calibrated`],
/// docs/models.md §2.4, "Launches that cannot fill the device").
pub fn choose_window_unsaturated(
    points: &[SizeFacts],
    target_bytes: u64,
    device: &DeviceFacts,
) -> WindowChoice {
    apply_rules(points, target_bytes, device, false, None)
}

fn apply_rules(
    points: &[SizeFacts],
    target_bytes: u64,
    device: &DeviceFacts,
    same_level: bool,
    overhead_limit: Option<f64>,
) -> WindowChoice {
    let target_level = device.level_of(target_bytes);
    let mut accepted = Vec::new();
    let mut rejected = Vec::new();
    let mut unchecked = Vec::new();
    for p in points {
        let mut reasons = Vec::new();
        match p.parallelism.filter(|_| overhead_limit.is_some()) {
            Some(items) if (items as f64) < device.executors => reasons.push(format!(
                "{items} work items per launch < n = {:.0} executors: the device is not saturated",
                device.executors
            )),
            Some(_) => {}
            None if overhead_limit.is_none() => {}
            None => {
                if unchecked.is_empty() {
                    unchecked.push(
                        "saturation: the workload does not say how many work items a launch has"
                            .to_string(),
                    );
                }
            }
        }
        let overhead = p.launches as f64 * device.launch_seconds.0;
        let limit = overhead_limit.unwrap_or(f64::INFINITY);
        if p.seconds > 0.0 && overhead > limit * p.seconds {
            reasons.push(format!(
                "{} launches × L = {:.3e} s is {:.0} % of its {:.3e} s: overhead-dominated",
                p.launches,
                overhead,
                100.0 * overhead / p.seconds,
                p.seconds
            ));
        }
        let level = device.level_of(p.working_set_bytes);
        if same_level && level != target_level {
            reasons.push(format!(
                "its working set ({}) lives in {level}, the target's ({}) in {target_level}",
                bytes_text(p.working_set_bytes),
                bytes_text(target_bytes)
            ));
        }
        if let Some(anomaly) = &p.anomaly {
            reasons.push(anomaly.clone());
        }
        if reasons.is_empty() {
            accepted.push(p.size);
        } else {
            rejected.push(Rejection {
                size: p.size,
                reasons,
            });
        }
    }
    WindowChoice {
        accepted,
        rejected,
        target_level,
        unchecked,
    }
}

/// `12.0 MB`-style text.
fn bytes_text(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.1} kB", b / 1e3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Seconds;

    #[test]
    fn the_stencil_rate_follows_a_band_that_the_envelope_would_hide() {
        // The Intel VM's stencil sweep: 10 GB/s to 16 MiB, 4 GB/s at 32 and 64 MiB, 7 GB/s
        // in memory. Between two points the rate is interpolated in log over log working
        // set; beyond the ends it is the end's.
        let points: Vec<(u64, f64)> = [(16u64 << 20, 10e9), (32 << 20, 4e9), (64 << 20, 4e9)]
            .into_iter()
            .chain([(1u64 << 30, 7e9)])
            .collect();
        let one = OneThreadRates {
            streaming: points.clone(),
            stencils: points,
            ..OneThreadRates::default()
        };
        let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
        assert!(close(one.stencil_rate(40 << 20).expect("rate"), 4e9));
        assert!(close(one.stencil_rate(1 << 20).expect("rate"), 10e9));
        assert!(close(one.stencil_rate(4 << 30).expect("rate"), 7e9));
        // Halfway (in log) between 16 and 32 MiB: the geometric mean of the two rates.
        let mid = ((16u64 << 20) as f64 * std::f64::consts::SQRT_2) as u64;
        assert!((one.stencil_rate(mid).expect("rate") / (40e18f64).sqrt() - 1.0).abs() < 1e-6);
        // The streaming rule over the same points rates the band as memory: nothing slower
        // at any larger size.
        assert!(close(one.streaming_rate(40 << 20).expect("rate"), 7e9));
        let none = OneThreadRates::default();
        assert_eq!(none.stencil_rate(1 << 20), None);
        assert_eq!(none.hyperplanes.rate(1 << 20, PlaneOrder::Ascending), None);
    }

    fn device() -> DeviceFacts {
        DeviceFacts {
            executors: 64.0,
            launch_seconds: Seconds(1e-5),
            levels: vec![
                ("L1".into(), 32 << 10),
                ("L2".into(), 1 << 20),
                ("memory".into(), 1 << 30),
            ],
            ..DeviceFacts::default()
        }
    }

    #[test]
    fn a_target_that_cannot_fill_the_device_keeps_every_unflagged_size() {
        // Unsaturated (size < 64 executors) and overhead-dominated (2 launches of 10 µs in
        // 25 µs): refused by the window rules, kept for a target that fills nothing either;
        // a flagged size is left out all the same.
        let mut points = vec![
            point(8, 25e-6),
            point(16, 25e-6),
            point(32, 25e-6),
            point(48, 25e-6),
        ];
        points[3].anomaly = Some("4.1× its neighbours' time per cell".into());
        let d = device();
        assert!(
            choose_window_any_level(&points, 1 << 12, &d, OVERHEAD_LIMIT)
                .accepted
                .is_empty()
        );
        let all = choose_window_unsaturated(&points, 1 << 12, &d);
        assert_eq!(all.accepted, vec![8, 16, 32]);
        assert_eq!(all.rejected.len(), 1);
        assert_eq!(all.rejected[0].reasons.len(), 1, "{:?}", all.rejected[0]);
        assert!(all.unchecked.is_empty());
    }

    #[test]
    fn a_levels_latency_and_the_transfer_sweeps_end_are_read_by_name() {
        let mut d = device();
        assert_eq!(d.latency_of(1 << 16), None);
        d.latencies = vec![
            ("L1".into(), 20e-9),
            ("L2".into(), 140e-9),
            ("memory".into(), 340e-9),
        ];
        assert_eq!(d.latency_of(1 << 10), Some(20e-9));
        assert_eq!(d.latency_of(1 << 16), Some(140e-9));
        assert_eq!(d.latency_of(1 << 40), Some(340e-9));
        assert_eq!(d.transfer_sweep_end("upload"), None);
        d.transfers = vec![(
            "upload".into(),
            vec![(4096.0, 1e-6), (64.0 * 1048576.0, 1e-2)],
        )];
        assert_eq!(d.transfer_sweep_end("upload"), Some(64.0 * 1048576.0));
        assert_eq!(d.transfer_sweep_end("download"), None);
    }

    fn point(size: usize, seconds: f64) -> SizeFacts {
        SizeFacts {
            size,
            parallelism: Some(size as u64),
            working_set_bytes: 8 * size as u64,
            launches: 2,
            seconds,
            anomaly: None,
        }
    }

    #[test]
    fn levels_are_found_by_their_plateaus() {
        let d = device();
        assert_eq!(d.level_of(1000), "L1");
        assert_eq!(d.level_of(32 << 10), "L1");
        assert_eq!(d.level_of((32 << 10) + 1), "L2");
        // Beyond the last measured plateau is still device memory.
        assert_eq!(d.level_of(1 << 40), "memory");
    }

    #[test]
    fn the_relaxed_overhead_limit_keeps_sizes_whose_launches_take_a_third() {
        let d = device();
        // 2 launches × 10 µs against 60 µs: a third of the time.
        let third = |size: usize| SizeFacts {
            seconds: 6e-5,
            working_set_bytes: 1 << 19,
            ..point(size, 1.0)
        };
        let points = [third(1 << 18), third(1 << 19), third(1 << 20)];
        let strict = choose_window_any_level(&points, 1 << 28, &d, OVERHEAD_LIMIT);
        assert!(strict.accepted.is_empty());
        let relaxed = choose_window_any_level(&points, 1 << 28, &d, RELAXED_OVERHEAD_LIMIT);
        // Not the cache rule: the calibrated window takes any level.
        assert_eq!(relaxed.accepted, vec![1 << 18, 1 << 19, 1 << 20]);
        // Launches that take more than half stay out.
        let most = SizeFacts {
            seconds: 3e-5,
            ..third(1 << 18)
        };
        assert!(
            choose_window_any_level(&[most], 1 << 28, &d, RELAXED_OVERHEAD_LIMIT)
                .accepted
                .is_empty()
        );
    }

    #[test]
    fn each_rule_rejects_on_its_own() {
        let d = device();
        let target = 1 << 28;
        // Saturated, cheap launches, in memory: kept.
        let good = point(1 << 18, 1.0);
        // Unsaturated only (working set forced into memory, time large).
        let few = SizeFacts {
            parallelism: Some(10),
            working_set_bytes: 1 << 25,
            ..point(1 << 18, 1.0)
        };
        // Overhead only: 2 launches × 10 µs against 50 µs.
        let overhead = SizeFacts {
            seconds: 5e-5,
            ..point(1 << 18, 1.0)
        };
        // Cache only.
        let cached = SizeFacts {
            working_set_bytes: 1 << 19,
            ..point(1 << 18, 1.0)
        };
        let choice = choose_window(&[good, few, overhead, cached], target, &d);
        assert_eq!(choice.accepted, vec![1 << 18]);
        let reasons: Vec<&str> = choice
            .rejected
            .iter()
            .map(|r| {
                assert_eq!(r.reasons.len(), 1, "{:?}", r.reasons);
                r.reasons[0].as_str()
            })
            .collect();
        assert!(reasons[0].contains("not saturated"), "{}", reasons[0]);
        assert!(reasons[1].contains("40 %"), "{}", reasons[1]);
        assert!(reasons[2].contains("lives in L2"), "{}", reasons[2]);
        assert_eq!(choice.target_level, "memory");
    }

    #[test]
    fn unknown_parallelism_is_reported_not_assumed() {
        let p = SizeFacts {
            parallelism: None,
            ..point(1 << 20, 1.0)
        };
        let choice = choose_window(&[p.clone(), p], 1 << 28, &device());
        assert_eq!(choice.accepted.len(), 2);
        assert_eq!(choice.unchecked.len(), 1);
    }

    #[test]
    fn the_streaming_rate_ignores_one_outlier_and_never_rises_with_the_working_set() {
        let kib = |k: u64| k << 10;
        let d = DeviceFacts {
            // Two kernels: 80 GB/s in cache with one dip (launch costs at 256 KiB), 40 GB/s
            // from 32 MiB, one wild sample at 8 MiB.
            streaming: [
                (kib(128), 80e9, 80e9),
                (kib(256), 14e9, 78e9),
                (kib(512), 79e9, 81e9),
                (kib(8192), 150e9, 75e9),
                (kib(16384), 72e9, 70e9),
                (kib(32768), 41e9, 40e9),
                (kib(65536), 40e9, 39e9),
            ]
            .iter()
            .flat_map(|&(w, a, b)| [(w, a), (w, b)])
            .collect(),
            ..device()
        };
        let at = |w: u64| d.streaming_rate(w).expect("a sweep") / 1e9;
        assert!((at(kib(256)) - 79.0).abs() < 1.5, "{}", at(kib(256)));
        assert!(at(kib(8192)) < 80.0, "{}", at(kib(8192)));
        assert!((at(kib(65536)) - 40.0).abs() < 1.0, "{}", at(kib(65536)));
        // Beyond the sweep: its last value; before it: the envelope's.
        assert_eq!(at(1 << 40), at(kib(65536)));
        assert!(at(1) >= at(kib(128)));
        let mut last = f64::INFINITY;
        for k in 7..17 {
            let r = at(kib(1 << k));
            assert!(r <= last, "rises at {} KiB", 1 << k);
            last = r;
        }
        assert_eq!(device().streaming_rate(1 << 20), None);
    }

    #[test]
    fn the_line_rate_follows_the_strided_sweep_not_the_streaming_one() {
        let mib = |m: u64| m << 20;
        let d = DeviceFacts {
            streaming: vec![(mib(1), 100e9), (mib(64), 40e9)],
            lines: vec![(mib(1), 20e9), (mib(64), 5e9)],
            ..device()
        };
        assert_eq!(d.line_rate(mib(1)), Some(20e9));
        assert_eq!(d.line_rate(mib(64)), Some(5e9));
        assert_eq!(d.streaming_rate(mib(64)), Some(40e9));
        assert_eq!(device().line_rate(mib(1)), None);
    }

    #[test]
    fn a_flagged_size_is_rejected_with_its_reason() {
        let device = DeviceFacts {
            executors: 1.0,
            launch_seconds: Seconds(0.0),
            levels: vec![("memory".into(), u64::MAX)],
            ..DeviceFacts::default()
        };
        let spike = SizeFacts {
            anomaly: Some("N = 64: 4.1× the time per unit of work of N = 56 and 72".into()),
            ..point(64, 1.0)
        };
        let choice = choose_window(&[point(56, 1.0), spike, point(72, 1.0)], 1 << 30, &device);
        assert_eq!(choice.accepted, vec![56, 72]);
        assert_eq!(choice.rejected[0].size, 64);
        assert!(choice.rejected[0].reasons[0].contains("4.1×"));
    }
}
