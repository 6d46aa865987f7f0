//! What bounds a kernel phase, classified from measurements (docs/models.md §2.4, "What
//! bounds a phase"): at the window's largest size, the share of its time its launches take,
//! the share of its memory level's streaming rate at which it moved its declared bytes, and
//! the share of the calibrated operation rate at which it ran its declared flops. The
//! regime is reported with each `calibrated` estimate, so a user sees which equation made it
//! and on what evidence.

use serde::{Deserialize, Serialize};

/// The share of a roof (launches × L of the time, the level's streaming rate, the
/// calibrated operation rate) from which a phase counts as bound by it: half. A phase that
/// reaches half of a roof spends most of its time on that resource in any overlap of the
/// others; one under half of every roof waits on something no rate measures.
pub const BOUND_SHARE: f64 = 0.5;

/// What bounds a phase at the window's largest size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Regime {
    /// Its launches' fixed cost takes at least half of its time (launches × L ≥ ½ T).
    LaunchBound,
    /// Every launch does the same work at every size: its time is per launch.
    FixedWork,
    /// It moves its declared bytes at half its level's streaming rate or more.
    BandwidthBound,
    /// It runs its declared flops at half the calibrated operation rate or more.
    ComputeBound,
    /// Its launches cannot fill the device at the target (fewer work items than
    /// executors), or it declares its accesses `dependent` (a pointer chase, a tree walk):
    /// each executor's walk waits on the memory's latency, one access after the other.
    LatencyBound,
    /// It declares its flops and reaches half of neither rate: it waits on something no
    /// calibrated rate measures (the memory's latency in a dependent chain or a stride no
    /// prefetcher follows, synchronisation, or code slower than the calibration's kernels).
    BelowRoofs,
    /// It moves its declared bytes at under half its level's rate and declares no flops:
    /// compute-bound or below both roofs, which bytes alone cannot tell apart.
    UnderBandwidth,
    /// It declares neither bytes nor flops: no rate says what bounds it.
    Undeclared,
    /// A host-to-device or device-to-host copy.
    Transfer,
    /// A step on the host.
    Host,
}

impl Regime {
    /// The name in files and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Regime::LaunchBound => "launch-bound",
            Regime::FixedWork => "fixed-work",
            Regime::BandwidthBound => "bandwidth-bound",
            Regime::ComputeBound => "compute-bound",
            Regime::LatencyBound => "latency-bound",
            Regime::BelowRoofs => "below-roofs",
            Regime::UnderBandwidth => "under-bandwidth",
            Regime::Undeclared => "undeclared",
            Regime::Transfer => "transfer",
            Regime::Host => "host",
        }
    }
}

impl std::fmt::Display for Regime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a kernel phase measured at the window's largest size, for [`classify`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoofShares {
    /// Launches × L over its measured time.
    pub launches: f64,
    /// Bytes over (time less launches) × its level's streaming rate, where it declares bytes.
    pub bytes: Option<f64>,
    /// Flops over (time less launches) × the calibrated operation rate, where it declares
    /// flops and the calibration measured the rate.
    pub flops: Option<f64>,
    /// Each access waits on the one before: its launches cannot fill the device at the
    /// target (fewer work items than executors), or it declares its accesses `dependent`.
    pub waits_on_latency: bool,
    /// Every launch does the same work at every size of the window.
    pub fixed_work: bool,
    /// It declares its flops (whether or not the calibration has a rate to compare them to).
    pub declares_flops: bool,
}

/// The regime of a kernel phase from its shares of each roof: launch-bound first (its
/// launches take half its time whatever it does inside them), then fixed work, a launch too
/// small to fill the device, then the larger of its shares of the two rates where one
/// reaches [`BOUND_SHARE`], else below both roofs where it declares flops and under the
/// bandwidth roof where it only declares bytes.
pub fn classify(s: &RoofShares) -> Regime {
    if s.launches >= BOUND_SHARE {
        return Regime::LaunchBound;
    }
    if s.fixed_work {
        return Regime::FixedWork;
    }
    if s.waits_on_latency {
        return Regime::LatencyBound;
    }
    let bytes = s.bytes.filter(|e| e.is_finite());
    let flops = s.flops.filter(|f| f.is_finite());
    match (bytes, flops) {
        (Some(e), Some(f)) if e.max(f) >= BOUND_SHARE => {
            if f > e {
                Regime::ComputeBound
            } else {
                Regime::BandwidthBound
            }
        }
        (Some(e), _) if e >= BOUND_SHARE => Regime::BandwidthBound,
        (_, Some(f)) if f >= BOUND_SHARE => Regime::ComputeBound,
        _ if s.declares_flops => Regime::BelowRoofs,
        (Some(_), None) => Regime::UnderBandwidth,
        _ => Regime::Undeclared,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(bytes: Option<f64>, flops: Option<f64>) -> RoofShares {
        RoofShares {
            launches: 0.1,
            bytes,
            flops,
            declares_flops: flops.is_some(),
            ..RoofShares::default()
        }
    }

    #[test]
    fn a_phase_is_bound_by_the_roof_it_reaches_half_of() {
        assert_eq!(classify(&shares(Some(0.8), None)), Regime::BandwidthBound);
        assert_eq!(
            classify(&shares(Some(0.1), Some(0.7))),
            Regime::ComputeBound
        );
        assert_eq!(
            classify(&shares(Some(0.6), Some(0.7))),
            Regime::ComputeBound
        );
        assert_eq!(
            classify(&shares(Some(0.9), Some(0.7))),
            Regime::BandwidthBound
        );
        assert_eq!(classify(&shares(None, Some(0.5))), Regime::ComputeBound);
    }

    #[test]
    fn under_half_of_every_roof_is_below_roofs_only_where_flops_say_so() {
        // A Parboil-style SGEMM on PoCL: 2 % of the streaming rate, 11 % of the FMA rate.
        assert_eq!(
            classify(&shares(Some(0.02), Some(0.11))),
            Regime::BelowRoofs
        );
        assert_eq!(classify(&shares(Some(0.02), None)), Regime::UnderBandwidth);
        assert_eq!(classify(&shares(None, None)), Regime::Undeclared);
        // Declared flops without a calibrated rate: no roof it reaches.
        let mut s = shares(Some(0.02), None);
        s.declares_flops = true;
        assert_eq!(classify(&s), Regime::BelowRoofs);
    }

    #[test]
    fn launches_fixed_work_and_unfilled_launches_come_first() {
        let mut s = shares(Some(0.9), Some(0.9));
        s.waits_on_latency = true;
        assert_eq!(classify(&s), Regime::LatencyBound);
        s.fixed_work = true;
        assert_eq!(classify(&s), Regime::FixedWork);
        s.launches = 0.5;
        assert_eq!(classify(&s), Regime::LaunchBound);
    }

    #[test]
    fn names_are_kebab_case_in_files_and_tables() {
        assert_eq!(
            serde_json::to_string(&Regime::UnderBandwidth).unwrap(),
            "\"under-bandwidth\""
        );
        assert_eq!(Regime::LatencyBound.to_string(), "latency-bound");
    }
}
