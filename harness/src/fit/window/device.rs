//! What the calibration says about the device ([`DeviceFacts`]): its executors, launch
//! overhead and memory levels, and the rates read from its sweeps.

use crate::units::Seconds;
use serde::{Deserialize, Serialize};

/// What the calibration says about the device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceFacts {
    /// Simultaneous executors n.
    pub executors: f64,
    /// Device-timed launch overhead L.
    pub launch_seconds: Seconds,
    /// Memory levels where the streaming rate steps, smallest first: name and the largest
    /// working set, bytes (the last level is device memory, unbounded). From the bandwidth
    /// sweep's rows, whose device memory starts past twice the largest cache the device or
    /// its OS reports; in calibrations without those rows, the latency sweep's plateaus.
    pub levels: Vec<(String, u64)>,
    /// The latency sweep's levels, as [`Self::levels`]: where a pointer chase's latency
    /// steps, which may be earlier than the rate (its pages outgrow the TLB's reach before
    /// the working set outgrows the cache). Empty: the same as `levels`.
    pub latency_levels: Vec<(String, u64)>,
    /// The read latency t of each level in `latency_levels` (its plateau's median), seconds,
    /// by name; empty where the calibration has none. A launch too small to fill the device
    /// waits on it ([`DeviceFacts::latency_of`]).
    pub latencies: Vec<(String, f64)>,
    /// The streaming-bandwidth sweep's points (copy and triad pooled): working set, bytes,
    /// and bytes per second; empty where the calibration has no sweep.
    pub streaming: Vec<(u64, f64)>,
    /// Device memory's rate with no cache holding any of the working set, bytes per second:
    /// BabelStream's triad over three arrays of 2^25 floats, from its mean iteration. `None`
    /// where the calibration did not run BabelStream.
    pub memory_floor: Option<f64>,
    /// The device's operation rate, flops per second: two per FMA of the calibration's
    /// device-wide FMA throughput; `None` where it was not measured.
    pub flop_rate: Option<f64>,
    /// The strided read sweep's points (the serialization-interval sweep in which each
    /// executor reads one element of its own cache line): the lines' working set, bytes, and
    /// the rate at which it delivers 64-byte lines so, bytes per second; empty where not
    /// measured.
    pub lines: Vec<(u64, f64)>,
    /// The transposing sweep's points (a j,k transpose of a cube, one thread's on the host):
    /// working set, bytes, and bytes per second (8 per element); empty where not measured.
    pub transposes: Vec<(u64, f64)>,
    /// The gathering sweep's points (a square's transpose, reads a row apart, one thread's
    /// on the host): working set, bytes, and bytes per second (8 per element); empty where
    /// not measured.
    pub gathers: Vec<(u64, f64)>,
    /// The random gather sweep's points (reads at random indices, one thread's on the host):
    /// working set, bytes, and bytes per second (12 per element); empty where not measured.
    pub random_gathers: Vec<(u64, f64)>,
    /// The same points by the bytes of the array they gather from (a third of the working set
    /// up to 48 MiB, most of it past that, where the sweep's reads a launch are capped), and
    /// bytes per second; empty where not measured.
    pub random_gather_arrays: Vec<(u64, f64)>,
    /// The page walk sweep's points: the pages a walk touches (one a step) and the seconds a
    /// work item's step along it costs; empty where not measured.
    pub page_walks: Vec<(u64, f64)>,
    /// The same along walks exactly a page a step, whose steps share a cache's sets (the
    /// sweep's aliased curve); empty where not measured.
    pub aliased_page_walks: Vec<(u64, f64)>,
    /// The calibration's transfer sweeps by phase name (`upload`, `download`): bytes of one
    /// transfer and its median seconds, ascending; empty where not measured.
    pub transfers: Vec<(String, Vec<(f64, f64)>)>,
    /// How much faster than its median the streaming sweep ran in its fastest tenth of
    /// samples, per swept working set (bytes): the median sample time over the 10th
    /// percentile's, copy and triad pooled (each sample taken relative to its own kernel's
    /// median); empty where the calibration kept no samples. On a shared machine the memory
    /// level's rate moves from moment to moment, and a run made later may meet its fast end.
    pub streaming_spread: Vec<(u64, f64)>,
    /// The rates one thread meets, where the calibration measured them (the host): a kernel
    /// that ran on one thread moves between levels at these (docs/models.md §2.4).
    pub one_thread: Option<OneThreadRates>,
    /// The hyperplane sweep with the device's own launches, as the workloads' plane kernels
    /// run (every device but the host, whose workloads walk their planes on one thread:
    /// [`OneThreadRates::hyperplanes`]); empty where not measured.
    pub hyperplanes: HyperplaneRates,
}

/// The order in which a hyperplane sweep visits its planes i + j + k = h (LU-SSOR's sweeps,
/// the calibration's hyperplane sweep).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlaneOrder {
    /// h upwards: LU-SSOR's lower sweep.
    Ascending,
    /// h downwards: its upper sweep.
    Descending,
}

/// The streaming and line sweeps measured with every launch on one thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OneThreadRates {
    /// As [`DeviceFacts::streaming`], on one thread.
    pub streaming: Vec<(u64, f64)>,
    /// As [`DeviceFacts::lines`], on one thread.
    pub lines: Vec<(u64, f64)>,
    /// The row-stencil sweep's points: a grid's bytes and the rate, bytes per second, at
    /// which one colour of red-black SOR updated it in place (empty in calibrations before
    /// 2026-11-28).
    pub stencils: Vec<(u64, f64)>,
    /// The hyperplane sweep on one thread (empty in calibrations before the evening of
    /// 2026-11-28): the host's workloads walk their planes there.
    pub hyperplanes: HyperplaneRates,
}

impl OneThreadRates {
    /// [`DeviceFacts::streaming_rate`]'s rule over one thread's sweep.
    pub fn streaming_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.streaming, bytes)
    }

    /// [`DeviceFacts::line_rate`]'s rule over one thread's strided sweep.
    pub fn line_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.lines, bytes)
    }

    /// The rate at which an in-place five-point sweep updates a grid of `bytes`, bytes per
    /// second, from the stencil sweep ([`Self::stencils`]): interpolated in log rate over log
    /// working set between the two swept grids either side, the end's rate beyond the ends;
    /// `None` without the sweep. Not [`Self::streaming_rate`]'s envelope, which takes the
    /// fastest rate at any larger size: a stencil's cost per byte may rise over a band of
    /// working sets and fall again beyond it, and the band is what the sweep is for
    /// (docs/models.md §2.4, "A stencil moves by the stencil sweep").
    pub fn stencil_rate(&self, bytes: u64) -> Option<f64> {
        interpolated_rate(&self.stencils, bytes)
    }
}

/// A hyperplane sweep's points in each order of its planes: a cube's bytes and the rate,
/// bytes per second (8 per point), at which LU-SSOR's walk relaxed it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HyperplaneRates {
    /// The planes visited upwards.
    pub ascending: Vec<(u64, f64)>,
    /// The planes visited downwards.
    pub descending: Vec<(u64, f64)>,
    /// Each of [`Self::ascending`]'s points' spread over its cubes: the slowest and the
    /// fastest of its sides' rates, bytes per second (the point's rate is their median);
    /// empty where not known.
    pub ascending_sides: Vec<(u64, [f64; 2])>,
    /// As [`Self::ascending_sides`], downwards.
    pub descending_sides: Vec<(u64, [f64; 2])>,
}

impl HyperplaneRates {
    /// The rate at which the walk visiting its planes in `order` relaxes a cube of `bytes`,
    /// bytes per second: interpolated as [`OneThreadRates::stencil_rate`] is, for the same
    /// reason (a walk's cost per point need not rise monotonically with the working set);
    /// `None` without the sweep (docs/models.md §2.4, "A hyperplane sweep moves by the
    /// hyperplane sweep").
    pub fn rate(&self, bytes: u64, order: PlaneOrder) -> Option<f64> {
        match order {
            PlaneOrder::Ascending => interpolated_rate(&self.ascending, bytes),
            PlaneOrder::Descending => interpolated_rate(&self.descending, bytes),
        }
    }

    /// The slowest and the fastest cube's rate at `bytes` ([`Self::ascending_sides`]): each
    /// end interpolated over the points' ends as the rate is over the points; `None` where
    /// the spread is not known.
    pub fn rate_spread(&self, bytes: u64, order: PlaneOrder) -> Option<[f64; 2]> {
        let ci = match order {
            PlaneOrder::Ascending => &self.ascending_sides,
            PlaneOrder::Descending => &self.descending_sides,
        };
        let end = |k: usize| -> Vec<(u64, f64)> { ci.iter().map(|p| (p.0, p.1[k])).collect() };
        Some([
            interpolated_rate(&end(0), bytes)?,
            interpolated_rate(&end(1), bytes)?,
        ])
    }
}

/// The rate at `bytes` over a sweep's (working set, rate) points, interpolated between the
/// nearest points either side (log rate over log working set), the end's beyond the ends;
/// `None` without a positive point.
fn interpolated_rate(points: &[(u64, f64)], bytes: u64) -> Option<f64> {
    let mut usable: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0 > 0 && p.1.is_finite() && p.1 > 0.0)
        .map(|p| ((p.0 as f64).ln(), p.1.ln()))
        .collect();
    usable.sort_by(|a, b| a.0.total_cmp(&b.0));
    let x = (bytes.max(1) as f64).ln();
    let (first, last) = (usable.first()?, usable.last()?);
    if x <= first.0 {
        return Some(first.1.exp());
    }
    if x >= last.0 {
        return Some(last.1.exp());
    }
    let above = usable.iter().position(|p| p.0 >= x)?;
    let (lo, hi) = (usable[above - 1], usable[above]);
    let along = (x - lo.0) / (hi.0 - lo.0);
    Some((lo.1 + along * (hi.1 - lo.1)).exp())
}

/// The first of `levels` (name, largest working set) that reaches `bytes`; the last one
/// past them all.
fn level_in(levels: &[(String, u64)], bytes: u64) -> String {
    let count = levels.len();
    levels
        .iter()
        .enumerate()
        .find(|(i, (_, top))| *i + 1 == count || bytes <= *top)
        .map_or_else(|| "memory".to_string(), |(_, (name, _))| name.clone())
}

impl Default for DeviceFacts {
    /// A device nothing was measured of: one executor, launches that cost nothing, one
    /// memory level (device memory), no sweep, latency, transfer or operation rate. Tests
    /// and examples set what they need over it.
    fn default() -> Self {
        DeviceFacts {
            executors: 1.0,
            launch_seconds: Seconds(0.0),
            levels: vec![("memory".into(), u64::MAX)],
            latency_levels: Vec::new(),
            latencies: Vec::new(),
            streaming: Vec::new(),
            memory_floor: None,
            flop_rate: None,
            lines: Vec::new(),
            transposes: Vec::new(),
            gathers: Vec::new(),
            random_gathers: Vec::new(),
            random_gather_arrays: Vec::new(),
            page_walks: Vec::new(),
            aliased_page_walks: Vec::new(),
            transfers: Vec::new(),
            streaming_spread: Vec::new(),
            one_thread: None,
            hyperplanes: HyperplaneRates::default(),
        }
    }
}

impl DeviceFacts {
    /// Whether the calibration measured any of the sweeps shaped after the built-in
    /// workloads (transposing, gathering, hyperplane, one thread's stencil and hyperplane):
    /// a quick look, and a CPU's full calibration unless asked, measure none.
    pub fn has_shaped_sweeps(&self) -> bool {
        let walks = |h: &HyperplaneRates| !(h.ascending.is_empty() && h.descending.is_empty());
        !self.transposes.is_empty()
            || !self.gathers.is_empty()
            || walks(&self.hyperplanes)
            || self
                .one_thread
                .as_ref()
                .is_some_and(|o| !o.stencils.is_empty() || walks(&o.hyperplanes))
    }

    /// The level a working set of `bytes` lives in: the first of [`Self::levels`] that
    /// reaches it.
    pub fn level_of(&self, bytes: u64) -> String {
        level_in(&self.levels, bytes)
    }

    /// The latency level a working set of `bytes` lives in: the first of
    /// [`Self::latency_levels`] that reaches it ([`Self::level_of`] where there are none).
    /// Its edges are the earliest a sweep sees a level change: a pointer chase's latency
    /// steps as its pages outgrow the TLB's reach, before a stream's rate does.
    pub fn latency_level_of(&self, bytes: u64) -> String {
        if self.latency_levels.is_empty() {
            self.level_of(bytes)
        } else {
            level_in(&self.latency_levels, bytes)
        }
    }

    /// The read latency t at a working set of `bytes`: that of the latency level it lives in
    /// ([`Self::latency_level_of`]), seconds; `None` where the calibration did not measure it.
    pub fn latency_of(&self, bytes: u64) -> Option<f64> {
        let level = self.latency_level_of(bytes);
        self.latencies
            .iter()
            .find(|(name, t)| *name == level && *t > 0.0 && t.is_finite())
            .map(|&(_, t)| t)
    }

    /// The largest transfer, bytes, the calibration's `phase` sweep (`upload` or `download`)
    /// measured; `None` without one. Past it, [`DeviceFacts::transfer_seconds_per_byte`] is
    /// the sweep's last value, not a measurement.
    pub fn transfer_sweep_end(&self, phase: &str) -> Option<f64> {
        let (_, points) = self.transfers.iter().find(|(name, _)| name == phase)?;
        points.iter().map(|p| p.0).reduce(f64::max)
    }

    /// Seconds per byte of one `phase` transfer (`upload` or `download`) of `bytes`: log-log
    /// interpolation in the calibration's transfer sweep, the end's value beyond it; `None`
    /// without one.
    pub fn transfer_seconds_per_byte(&self, phase: &str, bytes: f64) -> Option<f64> {
        let (_, points) = self.transfers.iter().find(|(name, _)| name == phase)?;
        let per_byte: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.0 > 0.0 && p.1 > 0.0)
            .map(|&(b, s)| (b.ln(), (s / b).ln()))
            .collect();
        let (first, last) = (per_byte.first()?, per_byte.last()?);
        let x = bytes.max(1.0).ln().clamp(first.0, last.0);
        let y = per_byte
            .windows(2)
            .find(|w| x <= w[1].0)
            .map_or(last.1, |w| {
                let f = if w[1].0 > w[0].0 {
                    (x - w[0].0) / (w[1].0 - w[0].0)
                } else {
                    0.0
                };
                w[0].1 + f * (w[1].1 - w[0].1)
            });
        Some(y.exp())
    }

    /// The streaming rate R(W), bytes per second, the device sustains with a working set of
    /// `bytes` (docs/models.md §2.4). Each swept size s gets the median of the sweep's points
    /// within a factor of two of it, so one disturbed sample does not move it; R(W) is the
    /// largest of those at W or any larger swept size, because a larger working set never
    /// streams faster: a dip at a small size (launch costs dominating a short sample) must not
    /// make its level look slow. Beyond the sweep's ends the end's value; `None` without a
    /// sweep.
    pub fn streaming_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.streaming, bytes)
    }

    /// The rate at which whole cache lines fetched one per access arrive, bytes per second,
    /// with a working set of `bytes`: [`Self::streaming_rate`]'s rule over the strided sweep
    /// ([`Self::lines`]). What a kernel whose executors each walk a line with a stride
    /// (an ADI sweep) can get where no prefetcher streams for it; `None` without a sweep.
    pub fn line_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.lines, bytes)
    }

    /// The rate a j,k transpose sustains with a working set of `bytes`, bytes per second:
    /// [`Self::streaming_rate`]'s rule over the transposing sweep ([`Self::transposes`]);
    /// `None` without one.
    pub fn transpose_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.transposes, bytes)
    }

    /// The rate a gathering transpose sustains with a working set of `bytes`, bytes per
    /// second: [`Self::streaming_rate`]'s rule over the gathering sweep ([`Self::gathers`]);
    /// `None` without one.
    pub fn gather_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.gathers, bytes)
    }

    /// The rate reads at random indices sustain with a working set of `bytes`, bytes per
    /// second: [`Self::streaming_rate`]'s rule over the random gather sweep
    /// ([`Self::random_gathers`]); `None` without one.
    pub fn random_gather_rate(&self, bytes: u64) -> Option<f64> {
        envelope_rate(&self.random_gathers, bytes)
    }

    /// The random gather sweep's own rate where it gathers from an array of `bytes`,
    /// interpolated between the measured arrays either side ([`Self::random_gather_arrays`]),
    /// with no envelope: what a declared gather from a buffer of `bytes` costs at each size
    /// (docs/models.md §2.4, "Gathers"). The envelope of [`Self::random_gather_rate`] takes
    /// the fastest rate from a working set up, so one fast working set lifts every smaller one
    /// to its rate and hides the step a gathered buffer meets as it outgrows a cache; `None`
    /// without a sweep.
    pub fn random_gather_rate_from(&self, bytes: u64) -> Option<f64> {
        interpolated_rate(&self.random_gather_arrays, bytes)
    }

    /// The page walk sweep's seconds per work item's step along a walk that touches `pages`
    /// pages, interpolated between the walks either side (the end's beyond the ends): what a
    /// step that lands on another page costs as the pages outgrow the TLB's reach
    /// (docs/models.md §2.4, "Walks"); `None` without the sweep.
    pub fn page_walk_step_seconds(&self, pages: u64) -> Option<f64> {
        interpolated_rate(&self.page_walks, pages)
    }

    /// [`Self::page_walk_step_seconds`] along walks whose stride is a whole number of pages,
    /// every step in the same sets of a cache indexed below a page (the sweep's aliased
    /// curve); `None` without it.
    pub fn aliased_page_walk_step_seconds(&self, pages: u64) -> Option<f64> {
        interpolated_rate(&self.aliased_page_walks, pages)
    }

    /// [`Self::streaming_spread`] at a working set of `bytes`: the median of the swept sizes'
    /// spreads within a factor of two of it (the nearest swept size's beyond the sweep's
    /// ends), at least 1; `None` without samples.
    pub fn streaming_spread_at(&self, bytes: u64) -> Option<f64> {
        let usable = || {
            self.streaming_spread
                .iter()
                .filter(|p| p.1.is_finite() && p.1 > 0.0)
        };
        let b = bytes.max(1) as f64;
        let mut near: Vec<f64> = usable()
            .filter(|p| (p.0 as f64) >= b / 2.0 && (p.0 as f64) <= b * 2.0)
            .map(|p| p.1)
            .collect();
        if near.is_empty() {
            let distance = |p: &&(u64, f64)| ((p.0 as f64).ln() - b.ln()).abs();
            near.push(
                usable()
                    .min_by(|x, y| distance(x).total_cmp(&distance(y)))?
                    .1,
            );
        }
        near.sort_by(f64::total_cmp);
        Some(crate::fit::stats::median_of_sorted(&near).max(1.0))
    }
}

/// The rule of [`DeviceFacts::streaming_rate`] over any sweep of (working set, rate) points.
fn envelope_rate(points: &[(u64, f64)], bytes: u64) -> Option<f64> {
    let mut sizes: Vec<u64> = points.iter().map(|p| p.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let hi = *sizes.last()?;
    let at = bytes.min(hi);
    let local = |s: u64| {
        let s = s as f64;
        let mut near: Vec<f64> = points
            .iter()
            .filter(|p| (p.0 as f64) >= s / 2.0 && (p.0 as f64) <= s * 2.0 && p.1 > 0.0)
            .map(|p| p.1)
            .collect();
        near.sort_by(f64::total_cmp);
        (!near.is_empty()).then(|| crate::fit::stats::median_of_sorted(&near))
    };
    sizes
        .iter()
        .filter(|&&s| s >= at)
        .filter_map(|&s| local(s))
        .reduce(f64::max)
}
