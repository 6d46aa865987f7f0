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
//! Every rejected size is listed with all of its reasons; nothing is dropped silently.

use crate::units::Seconds;
use serde::{Deserialize, Serialize};

/// The largest share of a size's time the launch overheads may take.
pub const OVERHEAD_LIMIT: f64 = 0.2;

/// What the calibration says about the device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceFacts {
    /// Simultaneous executors n.
    pub executors: f64,
    /// Device-timed launch overhead L.
    pub launch_seconds: Seconds,
    /// Memory levels from the latency sweep, smallest first: name and the largest working
    /// set, bytes, measured on its plateau (the last level is device memory, unbounded).
    pub levels: Vec<(String, u64)>,
}

impl DeviceFacts {
    /// The level a working set of `bytes` lives in: the first whose plateau reaches it.
    pub fn level_of(&self, bytes: u64) -> String {
        let count = self.levels.len();
        self.levels
            .iter()
            .enumerate()
            .find(|(i, (_, top))| *i + 1 == count || bytes <= *top)
            .map_or_else(|| "memory".to_string(), |(_, (name, _))| name.clone())
    }
}

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
    let target_level = device.level_of(target_bytes);
    let mut accepted = Vec::new();
    let mut rejected = Vec::new();
    let mut unchecked = Vec::new();
    for p in points {
        let mut reasons = Vec::new();
        match p.parallelism {
            Some(items) if (items as f64) < device.executors => reasons.push(format!(
                "{items} work items per launch < n = {} executors: the device is not saturated",
                device.executors
            )),
            Some(_) => {}
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
        if p.seconds > 0.0 && overhead > OVERHEAD_LIMIT * p.seconds {
            reasons.push(format!(
                "{} launches × L = {:.3e} s is {:.0} % of its {:.3e} s: overhead-dominated",
                p.launches,
                overhead,
                100.0 * overhead / p.seconds,
                p.seconds
            ));
        }
        let level = device.level_of(p.working_set_bytes);
        if level != target_level {
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

    fn device() -> DeviceFacts {
        DeviceFacts {
            executors: 64.0,
            launch_seconds: Seconds(1e-5),
            levels: vec![
                ("L1".into(), 32 << 10),
                ("L2".into(), 1 << 20),
                ("memory".into(), 1 << 30),
            ],
        }
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
    fn a_flagged_size_is_rejected_with_its_reason() {
        let device = DeviceFacts {
            executors: 1.0,
            launch_seconds: Seconds(0.0),
            levels: vec![("memory".into(), u64::MAX)],
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
