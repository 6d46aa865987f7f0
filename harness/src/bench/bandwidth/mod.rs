//! Streaming bandwidth: what a kernel that moves many elements per executor actually gets
//! from each memory level, and BabelStream's five kernels at the memory level.
//!
//! Δt (docs/models.md §1) is the interval between single reads of different executors;
//! kernels that stream several elements per executor see the bandwidth instead, and that is
//! what a prediction of a memory-bound kernel needs per level.
//!
//! **The sweep.** For each working set (all arrays a kernel touches) from 16 KiB up to the
//! latency sweep's largest, four kernels — read (`Σ a`), write (`a = p`), copy (`b = a + p`)
//! and triad (`a = b + q·c`) — walk their arrays with the stride of the whole launch, so every
//! pass is coalesced (GPUs), or stream one contiguous block each (CPUs). On a GPU one wave of
//! executors runs (all resident at once, so every pass walks the whole working set) and loads
//! go through the L2 alone (a kernel launched again cannot count on its multiprocessor's L1
//! either); the L1's own bandwidth is therefore not measured there. On a GPU a sample is
//! the time of 2k passes minus that of k passes (k chosen from a probe of one and two passes
//! so that k passes move at least 8 MiB and run at least 0.5 ms), which cancels the launch
//! overhead; on a CPU, where an executor's later passes would
//! find its block in its core's cache, a sample is one launch of one pass over data the
//! previous launch left warm (what a kernel of that size gets, launch cost included). The
//! working sets are measured in rounds (a few samples of each, then again from the smallest)
//! so that drift of a shared machine reaches every point and its interval, each visit warmed
//! for [`VISIT_WARMUP_SECONDS`](super::sampling::VISIT_WARMUP_SECONDS) before its samples (a
//! rate a kernel keeps, not the first launches' after another working set). The bandwidth is
//! the bytes moved over the median. Each kernel's output is checked against the
//! host after its measurement. The points are then grouped by the latency sweep's levels,
//! device memory's row pooling the plateau past the curve's last step ([`plateau_start`]).
//!
//! BabelStream's five kernels at the memory level are in [`super::babelstream`].

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::latency::LatencyLevel;
use super::{first_mismatch, verify, BenchContext, BenchError};
use crate::backend::{download_f32, Arg, Buffer, Launch};

/// The smallest working set of the sweep.
pub const MIN_WORKING_SET: usize = 16 << 10;
/// Bytes k passes must move at least, so that the 2k − k difference dwarfs timer noise.
const MIN_BYTES_PER_SAMPLE: usize = 8 << 20;
/// The triad's scalar (BabelStream's).
const SCALAR: f32 = 0.4;
/// The most passes per sample.
const MAX_PASSES: u32 = 4096;

/// One of the sweep's kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StreamKernel {
    /// `Σ a[i]`: one array read.
    Read,
    /// `a[i] = p`: one array written.
    Write,
    /// `b[i] = a[i] + p`: one read, one written.
    Copy,
    /// `a[i] = b[i] + q·c[i]`: two read, one written.
    Triad,
}

impl StreamKernel {
    /// Every kernel, in report order.
    pub const ALL: [StreamKernel; 4] = [
        StreamKernel::Read,
        StreamKernel::Write,
        StreamKernel::Copy,
        StreamKernel::Triad,
    ];

    /// Arrays the kernel touches (its working set is this many arrays of n floats).
    pub fn arrays(self) -> usize {
        match self {
            StreamKernel::Read | StreamKernel::Write => 1,
            StreamKernel::Copy => 2,
            StreamKernel::Triad => 3,
        }
    }

    /// The name in files and tables.
    pub fn name(self) -> &'static str {
        match self {
            StreamKernel::Read => "read",
            StreamKernel::Write => "write",
            StreamKernel::Copy => "copy",
            StreamKernel::Triad => "triad",
        }
    }
}

/// One working set of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthPoint {
    /// Bytes of all the arrays the kernel touches.
    pub working_set_bytes: usize,
    /// Median bandwidth, GB/s (10^9 bytes per second, counting each element read or written
    /// once, as STREAM counts).
    pub gbps: f64,
    /// Its 95 % CI. The upper end is unbounded (written as `null`) where the time's interval
    /// reaches zero.
    #[serde(deserialize_with = "unbounded_where_null")]
    pub ci95_gbps: [f64; 2],
    /// k: passes in the shorter run of each sample (1 where a sample is one launch).
    pub passes: u32,
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

/// An interval whose `null` ends (JSON's spelling of an infinite number, as serde writes
/// one) read back as unbounded. The first H100 calibration wrote such an upper end and could
/// not be read again.
fn unbounded_where_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let [low, high] = <[Option<f64>; 2]>::deserialize(d)?;
    Ok([low.unwrap_or(f64::INFINITY), high.unwrap_or(f64::INFINITY)])
}

/// One kernel's sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthCurve {
    /// The kernel.
    pub kernel: StreamKernel,
    /// Ascending working sets.
    pub points: Vec<BandwidthPoint>,
}

/// The streaming bandwidth of one latency level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelBandwidth {
    /// `L1`, `L2`, … or `memory`, as the latency sweep named it.
    pub level: String,
    /// The level's working sets, bytes `[first, last]` (the last level has no upper bound).
    pub working_set_bytes: [usize; 2],
    /// Median over the sweep points in the level, GB/s, per kernel (`None`: no point there).
    pub read_gbps: Option<f64>,
    /// Write.
    pub write_gbps: Option<f64>,
    /// Copy.
    pub copy_gbps: Option<f64>,
    /// Triad.
    pub triad_gbps: Option<f64>,
    /// Device memory's row only: the first working set its medians pool, where that is past
    /// the row's first ([`plateau_start`]: the working sets between still step down from the
    /// cache). Absent in files from before 2026-11-29, whose rows pool every working set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plateau_from_bytes: Option<usize>,
    /// Whether the row's rates come from k passes inside one launch (a CPU's private caches,
    /// [`super::cache_passes`]) rather than the sweep's samples. Absent (false) in files written
    /// before it was added (2026-11-29), whose cache rows are one launch of one pass each.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub passes_in_launch: bool,
    /// Per kernel, the hull of the 95 % intervals of the working sets the row pools: where
    /// the level's rate lay at any one of them, the sampling noise of each and the spread
    /// between them both inside. Absent in files written before 2026-12-01 (evening).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread: Vec<RateSpread>,
}

/// One kernel's spread over a level's working sets ([`LevelBandwidth::spread`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateSpread {
    /// The kernel.
    pub kernel: StreamKernel,
    /// The lowest lower end and the highest upper end of the working sets' 95 % intervals,
    /// GB/s; the upper end unbounded (`null`) where one interval's is.
    #[serde(deserialize_with = "unbounded_where_null")]
    pub gbps: [f64; 2],
}

impl LevelBandwidth {
    /// `kernel`'s spread over the row's working sets, where measured.
    pub fn spread_of(&self, kernel: StreamKernel) -> Option<[f64; 2]> {
        self.spread
            .iter()
            .find(|s| s.kernel == kernel)
            .map(|s| s.gbps)
    }
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BandwidthSweep {
    /// Executors launched (each walks the arrays with this stride).
    pub executors: usize,
    /// Per kernel.
    pub curves: Vec<BandwidthCurve>,
    /// Per latency level.
    pub levels: Vec<LevelBandwidth>,
    /// CPU devices: the working sets of the private caches measured again with k passes
    /// inside one launch, one executor per core ([`super::cache_passes`]); their level rows
    /// take these rates. `curves` stays what one launch of one pass gets, the rate predictions
    /// move a kernel by. Empty on a GPU and in older files.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cache_curves: Vec<BandwidthCurve>,
}

/// Whether executors stream contiguous blocks (CPU cores and their prefetchers) rather than
/// striding by the launch (GPUs): the kernels' `blocked` argument.
pub(crate) fn blocked(ctx: &BenchContext<'_>) -> u32 {
    u32::from(ctx.device.info().class != crate::backend::DeviceClass::Gpu)
}

/// Executors for the streaming kernels: on a GPU as many as it holds resident at once (one
/// wave); on a CPU eight work-groups per core, so the cores share the work evenly.
///
/// One wave, because an executor runs all its passes before it retires: with four waves (the
/// first H100 calibrations), the resident quarter re-read a quarter of the working set pass
/// after pass, so a 128 MiB working set streamed from the 50 MiB L2 at 12 TB/s. With every
/// executor resident, each pass walks the whole working set.
fn executors(ctx: &BenchContext<'_>, elements: usize) -> usize {
    let info = ctx.device.info();
    let units = info.compute_units.max(1) as usize;
    let group = ctx.group().max(1);
    let wanted = if blocked(ctx) == 1 {
        // Eight work-groups per core, so an OpenCL CPU runtime spreads them over every core.
        units * 8 * group
    } else {
        units
            * info
                .resident_threads_per_unit
                .map_or(group * 8, |t| t as usize)
    };
    wanted.min(elements).div_ceil(group).max(1) * group
}

/// The working sets of the sweep: 16 KiB doubling up to `max_bytes`.
pub fn sweep_sizes(max_bytes: usize) -> Vec<usize> {
    std::iter::successors(Some(MIN_WORKING_SET), |s| s.checked_mul(2))
        .take_while(|&s| s <= max_bytes)
        .collect()
}

/// k for a working set: enough passes to move [`MIN_BYTES_PER_SAMPLE`].
fn passes_for(bytes_per_pass: usize) -> u32 {
    (MIN_BYTES_PER_SAMPLE.div_ceil(bytes_per_pass.max(1)) as u32).clamp(1, MAX_PASSES)
}

/// How long k passes must run at least, so that the 2k − k difference dwarfs the jitter of
/// a launch's start and of the device's timer (microseconds on a GPU).
const MIN_SECONDS_PER_SAMPLE: f64 = 500e-6;

/// k for a working set from a probe: `one` and `two` are the times of one launch of one and
/// of two passes. A pass takes `two − one` (or `one` where noise hides the difference, which
/// overstates it and so errs towards fewer passes); k is enough passes to move
/// [`MIN_BYTES_PER_SAMPLE`] and to run [`MIN_SECONDS_PER_SAMPLE`]. Moving 8 MiB takes a
/// microsecond from an H100's L2, which made the 2k − k difference mostly jitter there
/// (52 TB/s copy at an 8 MiB working set in the first H100 calibration).
fn passes_for_probe(bytes_per_pass: usize, one: f64, two: f64) -> u32 {
    let pass = if two > one { two - one } else { one };
    let by_time = if pass > 0.0 && pass.is_finite() {
        (MIN_SECONDS_PER_SAMPLE / pass)
            .ceil()
            .min(f64::from(MAX_PASSES)) as u32
    } else {
        MAX_PASSES
    };
    passes_for(bytes_per_pass).max(by_time).clamp(1, MAX_PASSES)
}

/// The arrays of one kernel's sweep point, filled with small integers so sums are exact:
/// element i of array k holds [`initial`]`(i, k)`. The point walks the first n elements of
/// arrays its kernel's other points share ([`upload_arrays`]).
pub(super) struct Arrays {
    pub(super) n: usize,
    bufs: Rc<[Buffer]>,
    partial: Buffer,
    executors: usize,
    group: usize,
}

/// Element i of array k's initial value: small integers, so that sums are exact.
fn initial(i: usize, k: usize) -> f32 {
    ((i + k) & 7) as f32
}

/// The initial values of every array of up to `elements` floats: array k is
/// `pattern[k..k + n]`, since [`initial`] depends on i + k alone. One is built for a whole
/// sweep instead of one per array (its arrays reach hundreds of MB).
pub(super) fn pattern(elements: usize) -> Vec<f32> {
    (0..elements + 2).map(|j| initial(j, 0)).collect()
}

/// Every array `kernel` walks at the largest of the working sets `sizes` (bytes), uploaded
/// from `pattern` ([`pattern`] of at least that many floats and two): once for a sweep, whose
/// smaller working sets walk their first elements. Until 2026-12-01 each working set had
/// arrays of its own, and the sweep faulted in and copied twice its largest set's bytes per
/// kernel, a second of a 2-core VM's quick calibration.
pub(super) fn upload_arrays(
    ctx: &BenchContext<'_>,
    kernel: StreamKernel,
    sizes: &[usize],
    pattern: &[f32],
) -> Result<Rc<[Buffer]>, BenchError> {
    let bufs = alloc_arrays(ctx, &[kernel], sizes)?;
    fill_arrays(ctx, &bufs, kernel, sizes, pattern)?;
    Ok(bufs)
}

/// The arrays every kernel of `kernels` walks at the largest of the working sets `sizes`,
/// allocated once for them all: array k as long as the longest array k of any of them (a
/// read's one array holds the whole working set, a triad's three a third each). Each kernel
/// then writes its values over them ([`fill_arrays`]). Fresh memory costs a page fault per
/// 4 KiB on first touch, 2 µs each on a 2-core VM: four kernels' own arrays at 1 GiB (a
/// working set twice a 480 MiB cache) faulted 4 GiB in, shared ones 1.8 GiB.
pub(super) fn alloc_arrays(
    ctx: &BenchContext<'_>,
    kernels: &[StreamKernel],
    sizes: &[usize],
) -> Result<Rc<[Buffer]>, BenchError> {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let count = kernels.iter().map(|k| k.arrays()).max().unwrap_or(0);
    (0..count)
        .map(|a| {
            let n = kernels
                .iter()
                .filter(|k| k.arrays() > a)
                .map(|&k| elements(k, largest))
                .max()
                .unwrap_or(0)
                .max(1);
            Ok(ctx.device.alloc(4 * n)?)
        })
        .collect()
}

/// Write `kernel`'s initial values over the first arrays of `bufs` ([`alloc_arrays`]), as
/// many elements as it walks at the largest working set of `sizes`.
pub(super) fn fill_arrays(
    ctx: &BenchContext<'_>,
    bufs: &[Buffer],
    kernel: StreamKernel,
    sizes: &[usize],
    pattern: &[f32],
) -> Result<(), BenchError> {
    let n = sizes
        .iter()
        .map(|&b| elements(kernel, b))
        .max()
        .unwrap_or(0)
        .max(1);
    for (k, buf) in bufs.iter().take(kernel.arrays()).enumerate() {
        ctx.device
            .upload(buf, bytemuck::cast_slice(&pattern[k..k + n]))?;
    }
    Ok(())
}

/// The first n floats of each of the arrays `kernel` walks in `bufs` ([`upload_arrays`]) as
/// one sweep point, to be walked by `executors` executors in work-groups of `group`.
pub(super) fn arrays_on(
    ctx: &BenchContext<'_>,
    bufs: &Rc<[Buffer]>,
    kernel: StreamKernel,
    n: usize,
    executors: usize,
    group: usize,
) -> Result<Arrays, BenchError> {
    let fits = bufs.len() >= kernel.arrays()
        && bufs
            .iter()
            .take(kernel.arrays())
            .all(|b| b.len_bytes() >= 4 * n);
    verify(fits, "bandwidth arrays", || {
        format!("a point of {n} floats walks past its arrays")
    })?;
    let partial = ctx.device.alloc(executors * 4)?;
    Ok(Arrays {
        n,
        bufs: Rc::clone(bufs),
        partial,
        executors,
        group,
    })
}

/// The elements per array of `kernel` at a working set of `bytes`.
pub(super) fn elements(kernel: StreamKernel, bytes: usize) -> usize {
    bytes / (4 * kernel.arrays())
}

pub(super) fn run(
    ctx: &BenchContext<'_>,
    kernel: StreamKernel,
    a: &Arrays,
    passes: u32,
) -> Result<f64, BenchError> {
    let launch = Launch::linear(a.executors, a.group);
    let n = a.n as u32;
    let blocked = Arg::U32(blocked(ctx));
    let t = match kernel {
        StreamKernel::Read => ctx.launch(
            "bw_read",
            &launch,
            &[
                Arg::Buf(&a.bufs[0]),
                Arg::U32(n),
                Arg::U32(passes),
                blocked,
                Arg::Buf(&a.partial),
            ],
        )?,
        StreamKernel::Write => ctx.launch(
            "bw_write",
            &launch,
            &[Arg::Buf(&a.bufs[0]), Arg::U32(n), Arg::U32(passes), blocked],
        )?,
        StreamKernel::Copy => ctx.launch(
            "bw_copy",
            &launch,
            &[
                Arg::Buf(&a.bufs[0]),
                Arg::Buf(&a.bufs[1]),
                Arg::U32(n),
                Arg::U32(passes),
                blocked,
            ],
        )?,
        StreamKernel::Triad => ctx.launch(
            "bw_triad",
            &launch,
            &[
                Arg::Buf(&a.bufs[0]),
                Arg::Buf(&a.bufs[1]),
                Arg::Buf(&a.bufs[2]),
                Arg::F32(SCALAR),
                Arg::U32(n),
                Arg::U32(passes),
                blocked,
            ],
        )?,
    };
    Ok(t.0)
}

/// Run `passes` passes once more and compare the output with the host's, read back a chunk
/// at a time through `scratch` ([`first_mismatch`]).
fn check(
    ctx: &BenchContext<'_>,
    kernel: StreamKernel,
    a: &Arrays,
    passes: u32,
    scratch: &mut Vec<f32>,
) -> Result<(), BenchError> {
    run(ctx, kernel, a, passes)?;
    let last = (passes - 1) as f32;
    let what = format!("bandwidth {} at {} floats", kernel.name(), a.n);
    let (device, n) = (ctx.device, a.n);
    let bad = match kernel {
        StreamKernel::Read => {
            let partial = download_f32(device, &a.partial, a.executors)?;
            let got: f64 = partial.iter().map(|&p| f64::from(p)).sum();
            // The sum of i & 7 over i < n: 28 for every eight, then 0 + 1 + … + (r − 1).
            let r = (a.n % 8) as f64;
            let once = (a.n / 8) as f64 * 28.0 + r * (r - 1.0) / 2.0;
            let want = f64::from(passes) * once;
            return verify(got == want, &what, || format!("sum {got}, expected {want}"));
        }
        StreamKernel::Write => first_mismatch(device, &a.bufs[0], n, scratch, |_, v| v != last)?,
        StreamKernel::Copy => first_mismatch(device, &a.bufs[1], n, scratch, |i, v| {
            v != initial(i, 0) + last
        })?,
        StreamKernel::Triad => {
            let q = SCALAR + last;
            let want = |i: usize| initial(i, 1) + q * initial(i, 2);
            let close = |got: f32, want: f32| (got - want).abs() <= 1e-5 * want.abs().max(1.0);
            first_mismatch(device, &a.bufs[0], n, scratch, |i, v| !close(v, want(i)))?
        }
    };
    verify(bad.is_none(), &what, || format!("element {bad:?} differs"))
}

/// Measure every kernel at every working set of `sizes`, verify each, and group the points
/// by the latency `levels`.
pub fn measure_bandwidth(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
    levels: &[LatencyLevel],
) -> Result<BandwidthSweep, BenchError> {
    measure_bandwidth_of(ctx, &StreamKernel::ALL, sizes, levels)
}

/// [`measure_bandwidth`] for `kernels` alone.
pub fn measure_bandwidth_of(
    ctx: &mut BenchContext<'_>,
    kernels: &[StreamKernel],
    sizes: &[usize],
    levels: &[LatencyLevel],
) -> Result<BandwidthSweep, BenchError> {
    let mut curves = Vec::new();
    let mut launched = 0;
    // Strided (GPU): all executors sweep the array together, pass after pass, so 2k − k
    // passes cancel the launch overhead. Blocked (CPU): each executor would run its passes
    // over its own block, which then sits in its core's cache, so a sample is one launch of
    // one pass, over data the previous launch left warm.
    let difference = blocked(ctx) == 0;
    let pattern = pattern(sizes.iter().max().map_or(0, |&bytes| bytes / 4));
    let bufs = alloc_arrays(ctx, kernels, sizes)?;
    let mut scratch = Vec::new();
    for &kernel in kernels {
        // Every working set's arrays at once, measured in rounds over the working sets: on a
        // shared machine the rate a cache level delivers drifts by a third within a minute,
        // and a point measured in one burst of milliseconds would carry that moment's rate.
        let mut sets = Vec::new();
        fill_arrays(ctx, &bufs, kernel, sizes, &pattern)?;
        for &bytes in sizes {
            let n = elements(kernel, bytes);
            if n == 0 {
                continue;
            }
            let a = arrays_on(ctx, &bufs, kernel, n, executors(ctx, n), ctx.group())?;
            launched = a.executors;
            let k = if difference {
                // The probe's first launch also warms the arrays and the kernel.
                run(ctx, kernel, &a, 1)?;
                let one = run(ctx, kernel, &a, 1)?;
                let two = run(ctx, kernel, &a, 2)?;
                passes_for_probe(n * 4 * kernel.arrays(), one, two)
            } else {
                1
            };
            sets.push((bytes, a, k));
        }
        curves.push(measure_sets(
            ctx,
            kernel,
            &sets,
            "bandwidth",
            difference,
            &mut scratch,
        )?);
    }
    let levels = by_level(&curves, levels);
    Ok(BandwidthSweep {
        executors: launched,
        curves,
        levels,
        cache_curves: Vec::new(),
    })
}

/// One kernel's curve over `sets` (each a working set's bytes, its arrays and k), measured in
/// rounds under the names `<prefix>_<kernel>_s/<bytes>`, each checked: a sample is one run of
/// k passes, or with `difference` the time of 2k passes less that of k. The checks read back
/// through `scratch` ([`check`]).
pub(super) fn measure_sets(
    ctx: &mut BenchContext<'_>,
    kernel: StreamKernel,
    sets: &[(usize, Arrays, u32)],
    prefix: &str,
    difference: bool,
    scratch: &mut Vec<f32>,
) -> Result<BandwidthCurve, BenchError> {
    let names: Vec<String> = sets
        .iter()
        .map(|(bytes, _, _)| format!("{prefix}_{}_s/{bytes}", kernel.name()))
        .collect();
    let past: Vec<bool> = sets
        .iter()
        .map(|(bytes, ..)| ctx.past_caches(*bytes))
        .collect();
    let measured = ctx.measure_in_rounds_past_caches(&names, &past, |i| {
        let (_, a, k) = &sets[i];
        let short = run(ctx, kernel, a, *k)?;
        if !difference {
            return Ok(short);
        }
        let long = run(ctx, kernel, a, 2 * k)?;
        Ok(long - short)
    })?;
    let mut points = Vec::new();
    for ((name, m), (bytes, a, k)) in names.iter().zip(&measured).zip(sets) {
        ctx.record(name, m);
        check(ctx, kernel, a, *k, scratch)?;
        let moved = (a.n * 4 * kernel.arrays()) as f64 * f64::from(*k);
        let Some((gbps, ci95_gbps)) = rate_of(moved, m) else {
            // The difference vanished in the noise: no bandwidth can be read here.
            continue;
        };
        points.push(BandwidthPoint {
            working_set_bytes: *bytes,
            gbps,
            ci95_gbps,
            passes: *k,
            outliers: m.summary.outliers,
        });
    }
    Ok(BandwidthCurve { kernel, points })
}

/// `bytes` over a measured time: the median's rate in GB/s and its 95 % interval (the time's
/// interval reversed; an end at zero time is unbounded), or `None` where the median is not
/// above zero (a difference of two times that vanished in the noise).
pub(crate) fn rate_of(bytes: f64, m: &super::Measured) -> Option<(f64, [f64; 2])> {
    let gbps = |seconds: f64| {
        if seconds > 0.0 {
            bytes / seconds * 1e-9
        } else {
            f64::INFINITY
        }
    };
    (m.summary.median > 0.0).then(|| {
        (
            gbps(m.summary.median),
            [gbps(m.summary.ci95[1]), gbps(m.summary.ci95[0])],
        )
    })
}

/// The median bandwidth of each kernel within each latency level: from the level's first
/// working set up to the next level's first (a transition between plateaus counts to the
/// level below it; the last level, device memory, is unbounded).
pub fn by_level(curves: &[BandwidthCurve], levels: &[LatencyLevel]) -> Vec<LevelBandwidth> {
    levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let low = if i == 0 { 0 } else { l.working_set_bytes[0] };
            let high = levels
                .get(i + 1)
                .map_or(usize::MAX, |next| next.working_set_bytes[0] - 1);
            row(curves, &l.level, [low, high], low)
        })
        .collect()
}

/// One row: the level's working sets `range` and each kernel's median over the points from
/// `pooled_from` to the range's end (the summary's one-launch rate beside a cache row measured
/// with passes is the sweep's curves' row).
pub(crate) fn row(
    curves: &[BandwidthCurve],
    level: &str,
    range: [usize; 2],
    pooled_from: usize,
) -> LevelBandwidth {
    let pooled = |kernel: StreamKernel| {
        curves
            .iter()
            .filter(move |c| c.kernel == kernel)
            .flat_map(|c| &c.points)
            .filter(move |p| {
                (pooled_from.max(range[0])..=range[1]).contains(&p.working_set_bytes)
                    && p.gbps.is_finite()
            })
    };
    let median_of = |kernel: StreamKernel| {
        let mut v: Vec<f64> = pooled(kernel).map(|p| p.gbps).collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| crate::fit::stats::median_of_sorted(&v))
    };
    let spread = StreamKernel::ALL
        .into_iter()
        .filter_map(|kernel| {
            let hull = pooled(kernel).fold(None, |hull: Option<[f64; 2]>, p| {
                let [lo, hi] = p.ci95_gbps;
                Some(hull.map_or([lo, hi], |[a, b]| [a.min(lo), b.max(hi)]))
            })?;
            Some(RateSpread { kernel, gbps: hull })
        })
        .collect();
    LevelBandwidth {
        level: level.to_string(),
        working_set_bytes: range,
        read_gbps: median_of(StreamKernel::Read),
        write_gbps: median_of(StreamKernel::Write),
        copy_gbps: median_of(StreamKernel::Copy),
        triad_gbps: median_of(StreamKernel::Triad),
        plateau_from_bytes: (pooled_from > range[0]).then_some(pooled_from),
        passes_in_launch: false,
        spread,
    }
}

/// A fall of more than this fraction in the streaming rate from one swept working set to the
/// next (twice as large) is a step between levels, not noise: the full plan pins each point
/// within ±2 % and the rounds spread a shared machine's drift over all of them, while a
/// cache's edge costs a stream a quarter to a half of its rate (copy on the 2-core EPYC VM's
/// PoCL, 2026-11-29: −24 % from 64 to 128 MiB, then −4, −1 and −1 % to 1 GiB).
pub const PLATEAU_STEP: f64 = 0.10;

/// Whether the streaming rate falls by a step ([`PLATEAU_STEP`]) from `before` to `after`.
fn is_step(before: f64, after: f64) -> bool {
    after < (1.0 - PLATEAU_STEP) * before
}

/// The working sets the copy and triad curves swept (the streaming rate's), ascending, each
/// once.
pub fn streaming_sizes(curves: &[BandwidthCurve]) -> Vec<usize> {
    let mut sizes: Vec<usize> = curves
        .iter()
        .filter(|c| matches!(c.kernel, StreamKernel::Copy | StreamKernel::Triad))
        .flat_map(|c| c.points.iter().map(|p| p.working_set_bytes))
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// The streaming rate at each swept working set, ascending: copy and triad pooled (their
/// mean where both were measured there), the rate the model moves streaming phases by.
fn streaming_points(curves: &[BandwidthCurve]) -> Vec<(usize, f64)> {
    streaming_sizes(curves)
        .into_iter()
        .filter_map(|bytes| {
            let rates: Vec<f64> = curves
                .iter()
                .filter(|c| matches!(c.kernel, StreamKernel::Copy | StreamKernel::Triad))
                .flat_map(|c| &c.points)
                .filter(|p| p.working_set_bytes == bytes && p.gbps.is_finite() && p.gbps > 0.0)
                .map(|p| p.gbps)
                .collect();
            (!rates.is_empty()).then(|| (bytes, rates.iter().sum::<f64>() / rates.len() as f64))
        })
        .collect()
}

/// Whether the streaming rate still fell by a step ([`PLATEAU_STEP`]) between the sweep's
/// last two working sets: device memory's plateau lies further out, as where a VM's caches
/// are larger than it reports.
pub fn still_stepping(curves: &[BandwidthCurve]) -> bool {
    match streaming_points(curves).as_slice() {
        [.., (_, before), (_, last)] => is_step(*before, *last),
        _ => false,
    }
}

/// The first working set of the sweep's last plateau at or past `from`: the one after the
/// last step ([`PLATEAU_STEP`]) among the working sets from `from` on, or the first of them
/// where none steps; `None` where the sweep has no working set there.
pub fn plateau_start(curves: &[BandwidthCurve], from: usize) -> Option<usize> {
    let points: Vec<(usize, f64)> = streaming_points(curves)
        .into_iter()
        .filter(|p| p.0 >= from)
        .collect();
    let last_step = points.windows(2).rposition(|w| is_step(w[0].1, w[1].1));
    points.get(last_step.map_or(0, |j| j + 1)).map(|p| p.0)
}

/// [`by_level`] with device memory's row starting past twice `largest_cache` (bytes, the
/// largest cache the device or its OS reports) where that is later than the latency levels
/// say and the sweep reaches it. A pointer chase leaves its last cache level where its pages
/// outgrow the TLB's reach (4 MiB on a 2-core EPYC VM whose L3 is 32 MiB), while a stream's
/// rate steps where its working set outgrows the cache itself: the working sets between
/// belong to the cache's row, and device memory's rate is its plateau past the cache, not a
/// median that pools working sets the cache still holds. Its medians pool the working sets
/// from the last step on ([`plateau_start`]): a cache larger than reported (a VM's host) or
/// one that lets go gradually still lifts the first working sets past twice its size.
pub fn by_level_past_caches(
    curves: &[BandwidthCurve],
    levels: &[LatencyLevel],
    largest_cache: Option<u64>,
) -> Vec<LevelBandwidth> {
    let mut levels = levels.to_vec();
    let reached = curves
        .iter()
        .flat_map(|c| &c.points)
        .map(|p| p.working_set_bytes)
        .max()
        .unwrap_or(0);
    if let (Some(cache), [.., before, last]) = (largest_cache, levels.as_mut_slice()) {
        let past = usize::try_from(cache.saturating_mul(2)).unwrap_or(usize::MAX);
        if last.level == "memory" && past > last.working_set_bytes[0] && reached >= past {
            last.working_set_bytes[0] = past.max(before.working_set_bytes[0] + 1);
        }
    }
    let mut rows = by_level(curves, &levels);
    if let Some(memory) = rows.last_mut().filter(|r| r.level == "memory") {
        if let Some(from) = plateau_start(curves, memory.working_set_bytes[0]) {
            *memory = row(curves, "memory", memory.working_set_bytes, from);
        }
    }
    rows
}

#[cfg(test)]
mod tests;
