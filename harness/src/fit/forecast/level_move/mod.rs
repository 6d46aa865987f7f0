//! Moving a small size to the target's memory level (docs/models.md §2.4, step 1): what the
//! calibration says about each size ([`LevelMove`]: the streaming, line, one-thread and
//! transfer rates at its working set against the target's), how a kernel's compute and
//! traffic combine when its traffic slows down ([`Overlap`]), and the move itself
//! ([`move_to_target_level`]), which gives each phase the time it would take at the
//! target's level.

use serde::{Deserialize, Serialize};

use super::gather_overlap::with_gathers;
use super::{is_kernel_phase, SeriesMedians};
use crate::units::Seconds;

/// How one small size's times move to the target's memory level (the default moves nothing:
/// no rate, no factor, no phase of its own).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LevelMove {
    /// The small size.
    pub size: usize,
    /// R(W_i): the calibrated streaming rate at its working set, bytes per second (0 where
    /// the calibration has no sweep; the factor is then 1).
    pub rate: f64,
    /// g_i = R(W_i) / R(W_target), for kernel phases.
    pub factor: f64,
    /// For each transfer phase (`upload`, `download`): the calibrated seconds per byte of a
    /// transfer as large as the target's over that of this size's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfer_factors: Vec<(String, f64)>,
    /// For each transfer phase: the calibrated seconds per byte of a transfer as large as the
    /// target's, and whether this size's own transfer is larger than the largest the
    /// calibration's sweep measured (the sweep then says nothing of its cost that the size's
    /// own time does not say better): [`CalibratedMethod::Transfer`].
    ///
    /// [`CalibratedMethod::Transfer`]: super::CalibratedMethod::Transfer
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfer_costs: Vec<(String, f64, bool)>,
    /// For each kernel phase the workload declares strided or a transpose (its
    /// `access_patterns`): the calibrated line rate at this size's working set, bytes per
    /// second, and its ratio to the line rate at the target's, used in place of `rate` and
    /// `factor`. For a transpose the pair is the calibration's transposing sweep's instead
    /// (a gathering transpose's the gathering sweep's), where it has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub line_moves: Vec<(String, f64, f64)>,
    /// The phases among [`Self::line_moves`] and [`Self::own_rates`] whose rate is a sweep of
    /// their own access pattern (the calibration's transposing, gathering, stencil or
    /// hyperplane sweep): how much slower the target's level is for them the calibration
    /// measured with a kernel that does what they do, which bounds how far their cost can
    /// still rise, and a phase moved so at every size saturates at its moved costs' median
    /// (docs/models.md §2.4, "Saturated").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_patterns: Vec<String>,
    /// For each other kernel phase that ran on one thread at this size (a host twin that is
    /// one loop): one thread's streaming rate at this size's working set, bytes per second,
    /// and its ratio to one thread's rate at the target's, used in place of `rate` and
    /// `factor` (docs/models.md §2.4, "A kernel on one thread moves at one thread's rates").
    /// A strided phase on one thread takes one thread's line rates in `line_moves` instead.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub own_rates: Vec<(String, f64, f64)>,
    /// Whether this size's working set lies in the target's memory level. Where it does and
    /// the sweep rates the target no slower (g_i ≤ 1), the kernel's own rate is a measurement
    /// of that level: one that streamed faster than the sweep (e_i > 1) is not slowed to the
    /// sweep's rate at the target (docs/models.md §2.4, "A window in the target's level").
    #[serde(default)]
    pub in_target_level: bool,
    /// Whether the target's working set lies in device memory, the level a series' cold runs
    /// measure each size at ([`super::SeriesMedians::cold`]): where they did, a kernel
    /// phase's point estimate is moved to its cold time instead of by rates.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub target_in_memory: bool,
    /// For each kernel phase whose launches at the target have fewer work items than the
    /// device has executors (a target that cannot fill the device, as ADI's N² lines on a
    /// GPU): the calibrated read latency of the target's level over that of this size's,
    /// λ(W_target) / λ(W_i). Such a phase is not moved by rates: it is estimated as
    /// latency-bound ([`CalibratedMethod::LatencyBound`]).
    ///
    /// [`CalibratedMethod::LatencyBound`]: super::CalibratedMethod::LatencyBound
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_moves: Vec<(String, f64)>,
    /// The kernel phases that declare their accesses `dependent` (each waits on the one
    /// before: a pointer chase, a tree walk): their pair in [`Self::line_moves`] is the read
    /// latency's, one chase node per latency at this size and λ(W_target) / λ(W_i), and they
    /// count as latency-bound ([`super::Regime::LatencyBound`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dependent: Vec<String>,
    /// The calibrated read latency of the target's level over that of this size's,
    /// λ(W_target) / λ(W_i), where the calibration measured both: how much slower a phase
    /// whose accesses wait on the latency one after the other may run at the target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_factor: Option<f64>,
    /// The calibrated operation rate, flops per second (two per FMA of the device-wide FMA
    /// throughput), where measured: a phase that declares its flops is compute-bound when it
    /// runs them at half this rate or more ([`super::Regime`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flop_rate: Option<f64>,
    /// For each kernel phase that declares reads of a buffer at indices another array holds
    /// (a spec's `gathers`): the seconds those reads take more at the target than at this
    /// size, this size's reads × the random gather sweep's cost per read at the target's
    /// buffer over that at this size's. A sparse product's gathered vector that fits a
    /// cache at every small size and outgrows it at the target is what no other rate sees;
    /// the seconds are added to the phase's moved time, and with
    /// [`Self::gather_target_seconds`] the overlapped bound takes the gathers hiding behind
    /// the rest instead (docs/models.md §2.4, "Gathers").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gather_seconds: Vec<(String, f64)>,
    /// For the same phases: the seconds this size's declared gathers take at the target's
    /// buffers, this size's reads × the random gather sweep's cost per read there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gather_target_seconds: Vec<(String, f64)>,
    /// For each kernel phase that declares walks (a spec's `walks`): the seconds its work
    /// items' steps take more at the target than at this size, the steps × the page walk
    /// sweep's cost per step at the pages the target's walks touch over that at this size's
    /// (docs/models.md §2.4, "Walks"). A walk whose
    /// pages outgrow the TLB's reach only at the target is what no window sees; the seconds
    /// are added to the phase's moved time as the gathers' are.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub walk_seconds: Vec<(String, f64)>,
    /// For each kernel phase that declares binary searches (a spec's `searches`): how much
    /// longer one search takes in the target's sorted arrays than in this size's, by the
    /// random gather sweep step by step over the tree's footprint. Such a phase's work is
    /// moved whole by it, instead of by its cold runs or a rate (docs/models.md §2.4,
    /// "Searches").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub search_factors: Vec<(String, f64)>,
}

impl LevelMove {
    /// The rate the phase `name` moves by at this size and its factor, `(R(W_i), g_i)`: its
    /// own line or one thread's rate where it has one ([`Self::line_moves`],
    /// [`Self::own_rates`]), the streaming rate's otherwise.
    pub(super) fn rate_of(&self, name: &str) -> (f64, f64) {
        self.line_moves
            .iter()
            .chain(&self.own_rates)
            .find(|l| l.0 == name)
            .map_or((self.rate, self.factor), |l| (l.1, l.2))
    }
}

/// How a kernel's compute and memory traffic combine when its traffic slows down
/// (docs/models.md §2.4): fully overlapped (a roofline, the longer of the two), not at all
/// (one after the other), or halfway, the point estimate (for a strided phase, one after
/// the other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Overlap {
    Full,
    None,
    Half,
    /// One after the other, and a kernel phase that declares no bytes taken as all traffic
    /// (e = 1): the bound for the phases whose move between levels nothing measured; so are
    /// the phases in [`MoveKinds::maybe_traffic`] (e ≥ 1).
    AllTraffic,
}

/// The largest share of its measured time that a compute-bound, saturating phase's traffic
/// may take at the target's rate, `e_i·g_i`, for its compute to hide that traffic (step 1 at
/// the roofline, docs/models.md §2.4, "Saturated"): a quarter below the ridge point
/// (e·g = 1), where a kernel's overlap is not complete. PoCL's vadd in AMD suite run 1
/// (e_top 0.49, e·g 0.85) ran as one after the other: −3.9 % halfway, −21.8 % at the
/// roofline.
const HIDDEN_SHARE: f64 = 0.75;

/// Which phases [`move_to_target_level`] moves otherwise than any phase, by what they
/// measurably are (docs/models.md §2.4, "What bounds a phase").
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct MoveKinds<'a> {
    /// Every launch does the same work at every size: not moved.
    pub fixed: &'a [String],
    /// Compute-bound and saturating: the roofline (full overlap) where `overlap` is the
    /// halfway point estimate and their traffic at the target's rate takes at most
    /// [`HIDDEN_SHARE`] of their time.
    pub overlapped: &'a [String],
    /// Bandwidth-bound, or under the bandwidth roof with no flops to say that their time is
    /// compute: all of it may be traffic that runs short of the sweep's rate at every level,
    /// and [`Overlap::AllTraffic`] moves all of it by the streaming rate's g_i.
    pub maybe_traffic: &'a [String],
}

/// The points of `series` whose sizes are in `moves`, each phase's time moved to the
/// target's memory level (docs/models.md §2.4); the phases in `kinds` as it says.
pub(super) fn move_to_target_level(
    series: &SeriesMedians,
    moves: &[LevelMove],
    launch: Seconds,
    overlap: Overlap,
    kinds: MoveKinds,
) -> SeriesMedians {
    let MoveKinds {
        fixed,
        overlapped,
        maybe_traffic,
    } = kinds;
    let mut window = series.clone();
    window.points.retain_mut(|p| {
        let Some(m) = moves.iter().find(|m| m.size == p.size) else {
            return false;
        };
        let mut moved = 0.0;
        for ph in p.phases.iter_mut().filter(|ph| !fixed.contains(&ph.name)) {
            if let Some((_, g)) = m.transfer_factors.iter().find(|t| t.0 == ph.name) {
                let extra = ph.median_seconds * (g - 1.0);
                moved += extra;
                ph.median_seconds += extra;
                ph.ci95_seconds = ph.ci95_seconds.map(|c| c.map(|v| v * g));
                continue;
            }
            if !is_kernel_phase(&ph.name) || m.latency_moves.iter().any(|l| l.0 == ph.name) {
                continue;
            }
            // Measured at the target's level: the size's cold runs, its data from device
            // memory once per sweep, as at the target. The point estimate takes their time
            // (never below the warm one: a cold run that came out faster is noise); the
            // bounds keep the rates' moves, so the interval still reaches what the
            // calibration says the level costs (docs/models.md §2.4, "Step 1").
            let cold = series
                .cold
                .iter()
                .find(|c| c.size == p.size && c.phase == ph.name)
                .filter(|c| m.target_in_memory && overlap == Overlap::Half && c.seconds > 0.0);
            // The declared gathers' extra cost at the target's buffer and the declared walks'
            // along the target's walks, added to the moved time.
            let extra = |declared: &[(String, f64)]| {
                declared
                    .iter()
                    .find(|g| g.0 == ph.name)
                    .map_or(0.0, |g| g.1.max(0.0))
            };
            // A search's declared gathers and walks add their extra.
            let gathers = extra(&m.gather_seconds) + extra(&m.walk_seconds);
            // The moved time `t` with the declared gathers at the target's buffers, halfway
            // between their extra added and their overlapping the rest (the point estimate),
            // or at either end (the interval's bounds); the walks' extra added.
            let (more, there) = (extra(&m.gather_seconds), extra(&m.gather_target_seconds));
            let with_gathers =
                |t: f64| with_gathers(t, more, there, overlap) + extra(&m.walk_seconds);
            // A declared search: each of the size's searches at what one costs in the
            // target's tree, its work moved whole (the launches' fixed cost stays).
            if let Some(&(_, f)) = m.search_factors.iter().find(|s| s.0 == ph.name) {
                let fixed = ph.count as f64 * launch.0;
                let at_target = |t: f64| fixed.min(t) + (t - fixed).max(0.0) * f + gathers;
                let median = at_target(ph.median_seconds);
                moved += median - ph.median_seconds;
                ph.median_seconds = median;
                ph.ci95_seconds = ph.ci95_seconds.map(|c| c.map(at_target));
                continue;
            }
            if let Some(c) = cold {
                let ratio = (c.seconds / ph.median_seconds).max(1.0);
                if ratio.is_finite() {
                    let median = with_gathers(ph.median_seconds * ratio);
                    moved += median - ph.median_seconds;
                    ph.median_seconds = median;
                    ph.ci95_seconds = ph.ci95_seconds.map(|c| c.map(|v| with_gathers(v * ratio)));
                    continue;
                }
            }
            // The time a measured time `t` becomes at the target's level.
            let at_target = |t: f64| -> f64 {
                let work = t - ph.count as f64 * launch.0;
                if work <= 0.0 {
                    return t;
                }
                // e_i·g_i: the traffic's time at the target's rate over the work's time; no
                // share where no rate was measured (a calibration without a sweep).
                // A strided phase's traffic moves at the line rate, any other's at the
                // streaming rate.
                let line = m.line_moves.iter().find(|l| l.0 == ph.name);
                let own = m.own_rates.iter().find(|l| l.0 == ph.name);
                let (rate, factor) = line.or(own).map_or((m.rate, m.factor), |l| (l.1, l.2));
                let own_pattern = m.own_patterns.contains(&ph.name);
                // A phase that declares no bytes but moves by a sweep of its own access
                // pattern (a hyperplane sweep) moves whole: the sweep's time is all of its
                // (docs/models.md §2.4, "A hyperplane sweep moves by the hyperplane sweep").
                let unknown = if (overlap == Overlap::AllTraffic || own_pattern) && rate > 0.0 {
                    1.0
                } else {
                    0.0
                };
                let e = ph
                    .bytes
                    .filter(|_| rate > 0.0)
                    .map_or(unknown, |b| b as f64 / (work * rate));
                // In the target's own level, where the sweep sees the target no slower than
                // this size (g ≤ 1), the kernel's rate is that level's for it: the sweep's
                // rate there is no floor (an H200's float sweep streamed 2.57 TB/s in device
                // memory, vadd 3.33 TB/s at the same working sets).
                let e = if m.in_target_level && factor <= 1.0 {
                    e.min(1.0)
                } else {
                    e
                };
                // All of a phase's time taken as traffic moved by the streaming rate: traffic
                // that runs short of the sweep's rate (too few accesses in flight) runs as
                // far short of it at every level, so it moves by g_i whole (e_i ≥ 1, one
                // after the other).
                let all_traffic = overlap == Overlap::AllTraffic
                    && line.is_none()
                    && !own_pattern
                    && maybe_traffic.contains(&ph.name);
                let e = if all_traffic { e.max(1.0) } else { e };
                // A phase that moves by a sweep of its own access pattern, where that sweep
                // rates the target faster than this size (g_i < 1): the part of its time
                // the pattern accounts for, e_i of it (at most all), shrinks as the sweep's
                // did, `T' = T − w·min(e_i, 1)·(1 − g_i)`. A faster level does not speed up
                // a kernel in general (its time may be its compute), but this sweep does
                // what the phase does (docs/models.md §2.4, "A stencil moves by the stencil
                // sweep").
                if own_pattern && factor < 1.0 {
                    return t - work * e.min(1.0) * (1.0 - factor);
                }
                let share = e * factor;
                let roofline = work * (share.max(1.0) - 1.0);
                // One after the other: the traffic's own time grows by g; never less than
                // the roofline (a kernel that streamed faster than the sweep, e > 1).
                let serial = (work * share * (1.0 - 1.0 / factor.max(1.0))).max(roofline);
                t + match overlap {
                    Overlap::Full => roofline,
                    Overlap::None | Overlap::AllTraffic => serial,
                    // A strided phase's executors each wait for one line per step of their
                    // walk, which no prefetcher streams: nothing overlaps the slower lines,
                    // so its estimate is the serial bound (docs/models.md §2.4).
                    // So is a phase's that moves by a sweep of its own pattern: the sweep's
                    // time is its traffic's and its compute's together.
                    Overlap::Half if line.is_some() || own_pattern => serial,
                    // A compute-bound phase that saturates: its compute hides its traffic
                    // while the traffic at the target's rate fits well inside it
                    // (e·g ≤ HIDDEN_SHARE); nearer the ridge it moves halfway as any phase.
                    Overlap::Half if share <= HIDDEN_SHARE && overlapped.contains(&ph.name) => 0.0,
                    Overlap::Half => 0.5 * (roofline + serial),
                }
            };
            let at_target = |t: f64| with_gathers(at_target(t));
            let median = at_target(ph.median_seconds);
            moved += median - ph.median_seconds;
            ph.median_seconds = median;
            // The median's interval moves as its ends do: a roofline's time, the bytes over
            // the target's rate, does not depend on the measured time, so the repeats' noise
            // does not follow it (until 2026-11-25 the interval was scaled in proportion, and
            // a streaming kernel's noisy medians in the cache widened the target's interval).
            ph.ci95_seconds = ph.ci95_seconds.map(|c| c.map(at_target));
        }
        p.total_seconds += moved;
        true
    });
    window
}

#[cfg(test)]
mod tests;
