//! A whole calibration: every microbenchmark in turn, assembled into a [`Calibration`].

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use indicatif::{ProgressBar, ProgressStyle};

use super::{
    CalibratedParameters, Calibration, Estimate, Executors, OneThread, Provenance, ReadLatency,
    ReportedCache, StageTime, FORMAT_VERSION, ONE_THREAD_SAMPLES,
};
use crate::backend::{host_pool, BackendKind, Device, DeviceClass};
use crate::bench::babelstream::measure_babelstream;
use crate::bench::bandwidth::{
    by_level_past_caches, measure_bandwidth, measure_bandwidth_of, still_stepping,
    sweep_sizes as bandwidth_sizes, StreamKernel,
};
use crate::bench::cache_passes::{measure_cache_passes, private_cache_sizes, with_cache_rows};
use crate::bench::gaps::{measure_gap, Direction, GapFit};
use crate::bench::gather::measure_gathers;
use crate::bench::hyperplane::measure_hyperplanes;
use crate::bench::kernels::Pattern;
use crate::bench::latency::{
    levels, memory_working_set, read_latency_at, read_latency_keeping_ring, sweep_sizes,
    write_latency_at, write_latency_on, Chase,
};
use crate::bench::ops::measure_ops;
use crate::bench::pages::{aliased_steps_swept, measure_page_walks, steps_swept};
use crate::bench::stencil::measure_stencil;
use crate::bench::transfer::{launch_overhead, transfers};
use crate::bench::transpose::{measure_transposes, TransposeShape};
use crate::bench::{BenchContext, BenchError, SamplingPlan};
use crate::units::Unit;

/// How to run a calibration.
#[derive(Debug, Clone, Default)]
pub struct CalibrateOptions {
    /// A quick look: fewer samples (wider intervals), no workload-shaped sweeps.
    pub quick: bool,
    /// Measure the sweeps shaped after the built-in workloads on a CPU device too (a GPU
    /// always measures them outside a quick look): for series run without cold runs.
    pub shaped_sweeps: bool,
    /// Show a progress bar on standard error.
    pub progress: bool,
    /// Set from a Ctrl-C handler to stop between measurements.
    pub interrupted: Arc<AtomicBool>,
}

/// The largest working set of the latency sweep: four times the last-level cache rounded up
/// to a power of two, so that the doubling sweeps reach it (64 MiB when its size is unknown),
/// at least 64 MiB, at most 1 GiB and half the largest allocation.
pub fn max_working_set(device: &dyn Device) -> usize {
    let info = device.info();
    let want = info
        .l2_bytes
        .map_or(64 << 20, |l2| (4 * l2).next_power_of_two());
    want.clamp(64 << 20, 1 << 30)
        .min(info.max_alloc_bytes / 2)
        .max(1 << 20) as usize
}

/// The largest working set the streaming sweep may double to while its rate still steps
/// down (a full calibration's extension of the sweep): 1 GiB, within the largest allocation
/// and an eighth of the device's memory.
pub fn stepping_cap(device: &dyn Device) -> usize {
    let info = device.info();
    let cap = (1u64 << 30)
        .min(info.max_alloc_bytes)
        .min(info.memory_bytes / 8);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// Double the streaming sweep's working set past its end while the rate still falls by a
/// step between its last two ([`still_stepping`]), up to [`stepping_cap`]: device memory's
/// row is the plateau past the caches, and where a cache is larger than the device or its
/// OS reports (a VM's host), the sweep's reach of 4× the reported cache ends inside the
/// step. Each doubling measures the sweep's last working set again in the same rounds as
/// the new one, so that a shared machine's drift between the sweep and its extension (its
/// memory rate moved from 37 to 67 GB/s within a minute on the 2-core EPYC VM) is not read
/// as a step or as the plateau. The added working sets take the quick plan's samples (±5 %,
/// at most 0.3 s a quantity): enough to tell a step of
/// [`PLATEAU_STEP`](crate::bench::bandwidth::PLATEAU_STEP) from the plateau, at a second or
/// two per doubling where the full plan's 2 s a kernel would spend eight.
fn extend_while_stepping(
    ctx: &mut BenchContext<'_>,
    bandwidth: &mut crate::bench::bandwidth::BandwidthSweep,
    levels: &[crate::bench::latency::LatencyLevel],
) -> Result<(), BenchError> {
    let cap = stepping_cap(ctx.device);
    let mut last = bandwidth
        .curves
        .iter()
        .flat_map(|c| &c.points)
        .map(|p| p.working_set_bytes)
        .max()
        .unwrap_or(0);
    let plan = std::mem::replace(&mut ctx.plan, SamplingPlan::quick());
    let mut measured = Ok(());
    while still_stepping(&bandwidth.curves) && last > 0 && last.saturating_mul(2) <= cap {
        let more = match measure_bandwidth(ctx, &[last, 2 * last], levels) {
            Ok(more) => more,
            Err(e) => {
                measured = Err(e);
                break;
            }
        };
        for extra in more.curves {
            match bandwidth
                .curves
                .iter_mut()
                .find(|c| c.kernel == extra.kernel)
            {
                Some(curve) => {
                    curve.points.retain(|p| p.working_set_bytes < last);
                    curve.points.extend(extra.points);
                }
                None => bandwidth.curves.push(extra),
            }
        }
        last *= 2;
    }
    ctx.plan = plan;
    measured
}

/// Whether a calibration measures the sweeps shaped after the built-in workloads (a cube's
/// transpose, a square's gathering transpose, the hyperplane walks, and on the host one
/// thread's stencil and hyperplane sweeps). Only the phases that declare those patterns read
/// them, and without them such a phase moves by the line or the streaming rate (the
/// validation's notes say so). A quick look leaves them out. So does a CPU device unless
/// asked (`--shaped-sweeps`): its series make cold runs by default, which measure at each
/// small size what these sweeps stood in for; re-assessed without them, the stored suites
/// with cold runs lost no more than 2 points in any case and gained 36 in one
/// (docs/decisions.md), and they took over half of a CPU calibration's time. A GPU's series
/// make no cold runs unless asked, so a GPU measures them. The random gather sweep, a
/// pattern any spec may declare, is not one of them.
pub fn measures_shaped_sweeps(class: DeviceClass, options: &CalibrateOptions) -> bool {
    !options.quick && (class == DeviceClass::Gpu || options.shaped_sweeps)
}

/// The working sets of the random gather sweep and of one thread's streaming sweep on the
/// host: the streaming sweep's, or in a quick look those up to the first that lies past the
/// caches (`past_caches`), which then also bounds the transfers. Their larger sets cost most
/// of their time (one thread gathering all of 256 MiB took a third of a second a launch, 2.5
/// of a quick look's 17 s on the 2-core Intel Xeon VM, before the gather sweep's reads were
/// capped; building and streaming the arrays still grows with the set), and a quick look's
/// device memory is then that one set's rate: a target past it reads it (the sweep's end).
fn quick_sizes(sizes: &[usize], quick: bool, past_caches: impl Fn(usize) -> bool) -> Vec<usize> {
    match sizes.iter().position(|&b| past_caches(b)) {
        Some(first) if quick => sizes[..=first].to_vec(),
        _ => sizes.to_vec(),
    }
}

/// Run every microbenchmark on `device`.
pub fn calibrate(
    device: &dyn Device,
    options: &CalibrateOptions,
) -> Result<Calibration, BenchError> {
    let plan = if options.quick {
        SamplingPlan::quick()
    } else {
        SamplingPlan::full()
    };
    let mut ctx = BenchContext::new(device, plan.clone(), options.quick)?;
    ctx.interrupted = options.interrupted.clone();
    // The working sets the sweeps reach, 4× the last-level cache: the latency, transfer and
    // streaming sweeps all go as far.
    let reach = max_working_set(device);
    let shaped = measures_shaped_sweeps(device.info().class, options);
    let sizes = sweep_sizes(reach);
    if options.progress {
        ctx.progress = ProgressBar::new(estimated_steps(&ctx, sizes.len(), reach, shaped));
        ctx.progress.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}",
            )
            .expect("the template is valid"),
        );
    }
    let mut stages = StageClock::start();
    let clock_at_start = device.running_clock_mhz()?;
    let overhead = launch_overhead(&mut ctx)?;
    stages.lap("launch overhead");
    // T is read at the memory working set, on the ring the sweep chased there (built once).
    let memory_ws = memory_working_set(&sizes, device.info().l2_bytes).unwrap_or(sizes[0]);
    let mut sweep = Vec::with_capacity(sizes.len());
    let mut memory_ring = None;
    for &bytes in &sizes {
        if bytes == memory_ws {
            let (point, ring) = read_latency_keeping_ring(&mut ctx, bytes)?;
            sweep.push(point);
            memory_ring = Some(ring);
        } else {
            sweep.push(read_latency_at(&mut ctx, bytes)?);
        }
    }
    stages.lap("read latency sweep");
    let clock_at_end = device.running_clock_mhz()?;
    let info = device.info();
    let (clock, clock_source) = clock_reading(clock_at_start, clock_at_end, info.clock_mhz);
    let t_point = sweep
        .iter()
        .find(|p| p.working_set_bytes == memory_ws)
        .cloned()
        .unwrap_or_else(|| sweep[sweep.len() - 1].clone());
    let write = match memory_ring.take() {
        Some(ring) => write_latency_on(&mut ctx, &ring)?,
        None => write_latency_at(&mut ctx, memory_ws)?,
    };
    stages.lap("write latency");
    let mut gaps = Vec::new();
    for (pattern, direction) in GAP_SWEEPS {
        gaps.push(measure_gap(&mut ctx, pattern, direction)?);
    }
    stages.lap("serialization sweeps");
    let ops = measure_ops(&mut ctx)?;
    stages.lap("operations");
    let streaming_sizes = bandwidth_sizes(reach);
    let paced = quick_sizes(&streaming_sizes, options.quick, |b| ctx.past_caches(b));
    let transfer_reach = match paced.last() {
        Some(&last) if options.quick => last,
        _ => reach,
    };
    let transfer_fits = transfers(&mut ctx, transfer_reach)?;
    stages.lap("transfers");
    let latency_levels = levels(&sweep, clock);
    let mut bandwidth = measure_bandwidth(&mut ctx, &streaming_sizes, &latency_levels)?;
    // Not in a quick look, whose 15 s a doubling's arrays alone would break: its summary
    // warns where the rate still stepped.
    if !options.quick {
        extend_while_stepping(&mut ctx, &mut bandwidth, &latency_levels)?;
    }
    // Device memory's row past the caches the device or its OS reports, not from the
    // chase's TLB edge.
    let largest_cache = reported_caches(info).iter().map(|c| c.bytes).max();
    bandwidth.levels = by_level_past_caches(&bandwidth.curves, &latency_levels, largest_cache);
    stages.lap("bandwidth sweep");
    // A GPU's sweep already cancels the launch with passes inside it; a CPU's takes one launch
    // a sample, which the private caches' few KiB cannot outweigh.
    if info.class != DeviceClass::Gpu {
        let sizes = private_cache_sizes(&bandwidth);
        if !sizes.is_empty() {
            let curves = measure_cache_passes(&mut ctx, &sizes)?;
            with_cache_rows(&mut bandwidth, curves);
            stages.lap("cache passes");
        }
    }
    let transposes = if shaped {
        let swept = measure_transposes(&mut ctx, &streaming_sizes, TransposeShape::CubeJk)?;
        stages.lap("transposing sweep");
        let gathering =
            measure_transposes(&mut ctx, &streaming_sizes, TransposeShape::SquareGather)?;
        stages.lap("gathering sweep");
        Some((swept, gathering))
    } else {
        None
    };
    let random_gathers = measure_gathers(&mut ctx, &paced)?;
    stages.lap("random gather sweep");
    // Only specs declare walks, and the host runs none.
    let page_walks = if info.backend == BackendKind::Host {
        None
    } else {
        let swept = measure_page_walks(&mut ctx, &steps_swept(), &aliased_steps_swept())?;
        stages.lap("page walk sweep");
        Some(swept)
    };
    // The host's workloads walk their planes on one thread: its sweep is one thread's.
    let hyperplanes = if info.backend == BackendKind::Host || !shaped {
        None
    } else {
        let swept = measure_hyperplanes(&mut ctx, &streaming_sizes)?;
        stages.lap("hyperplane sweep");
        Some(swept)
    };
    let babelstream = measure_babelstream(&mut ctx)?;
    stages.lap("BabelStream");
    let one_thread = if info.backend == BackendKind::Host {
        Some(one_thread(
            &mut ctx,
            &paced,
            &latency_levels,
            shaped,
            &mut stages,
        )?)
    } else {
        None
    };
    ctx.progress.finish_and_clear();

    let coalesced = |d: Direction| {
        gaps.iter()
            .find(|g| g.pattern == Pattern::Coalesced && g.direction == d)
            .expect("the coalesced sweeps always run")
    };
    let executors = Executors {
        from_attributes: info.resident_executors(),
        from_knee: coalesced(Direction::Read).knee_executors,
        knee_ci95: coalesced(Direction::Read).knee_ci95,
    };
    let parameters = CalibratedParameters {
        read_latency: Estimate::time_ns(
            t_point.latency_ns,
            t_point.ci95_ns,
            format!(
                "pointer chase, one executor, random ring of 128-byte nodes, working set {} bytes, \
                 following {}; per-step time from (time(2s) - time(s)) / s; median and \
                 order-statistic 95 % CI",
                memory_ws,
                match Chase::for_device(info) {
                    Chase::Addresses => "device addresses",
                    Chase::Indices => "32-bit indices",
                }
            ),
        ),
        write_latency: Estimate::time_ns(
            write.summary.median * 1e9,
            write.summary.ci95.map(|v| v * 1e9),
            format!(
                "pointer chase with a store and a device-wide fence per step, minus the plain chase \
                 on the same ring (working set {memory_ws} bytes); median and 95 % CI of the difference"
            ),
        ),
        read_gap: gap_parameter(coalesced(Direction::Read)),
        write_gap: gap_parameter(coalesced(Direction::Write)),
        op_time: Estimate::time_ns(
            ops.fma_latency_ns,
            ops.fma_ci95_ns,
            "dependent chain of fp32 FMAs in one executor, (time(2k) - time(k)) per operation"
                .into(),
        ),
        executors: executors_parameter(&executors, info.class),
    };
    let mut calibration = Calibration {
        format_version: FORMAT_VERSION,
        device: info.clone(),
        provenance: Provenance {
            harness_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: option_env!("HARNESS_GIT_COMMIT")
                .unwrap_or("unknown")
                .into(),
            date: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            quick: options.quick,
            worker_threads: crate::backend::pinning::pinning().cloned(),
            stage_seconds: stages.laps,
        },
        parameters,
        read_latency: ReadLatency {
            levels: latency_levels,
            sweep,
            memory_working_set_bytes: memory_ws,
            clock_mhz: clock,
            clock_source,
        },
        gaps,
        executors,
        ops,
        launch_overhead: overhead,
        transfers: transfer_fits,
        bandwidth: Some(bandwidth),
        babelstream: Some(babelstream),
        reported_caches: reported_caches(info),
        one_thread,
        gathers: transposes.as_ref().map(|t| t.1.clone()),
        transposes: transposes.map(|t| t.0),
        random_gathers: Some(random_gathers),
        page_walks,
        hyperplanes,
        patterns: Vec::new(),
        sampling: plan,
        seeds: ctx.seeds,
        samples: ctx.samples,
    };
    calibration.patterns = super::patterns::pattern_rates(&calibration);
    Ok(calibration)
}

/// The host's copy and triad sweep and its strided read sweep once more, every launch on the
/// launching thread alone ([`host_pool::solo`]): the rates a host twin that is one loop meets
/// (docs/models.md §2.4), with the stencil and hyperplane sweeps where `shaped` (not in a
/// quick look). Their raw samples go under `one_thread/`, beside the two-core ones; each
/// sweep is a stage of its own on `stages`.
fn one_thread(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
    levels: &[crate::bench::latency::LatencyLevel],
    shaped: bool,
    stages: &mut StageClock,
) -> Result<OneThread, BenchError> {
    let both = std::mem::take(&mut ctx.samples);
    let measured = host_pool::solo(|| -> Result<OneThread, BenchError> {
        let bandwidth = measure_bandwidth_of(
            ctx,
            &[StreamKernel::Copy, StreamKernel::Triad],
            sizes,
            levels,
        )?;
        let strided_read = measure_gap(ctx, Pattern::Strided, Direction::Read)?;
        stages.lap("one thread's streaming and strided sweeps");
        if !shaped {
            return Ok(OneThread {
                bandwidth,
                strided_read,
                stencil: None,
                hyperplanes: None,
            });
        }
        let stencil = measure_stencil(ctx, sizes)?;
        stages.lap("one thread's stencil sweep");
        let hyperplanes = measure_hyperplanes(ctx, sizes)?;
        stages.lap("one thread's hyperplane sweep");
        Ok(OneThread {
            bandwidth,
            strided_read,
            stencil: Some(stencil),
            hyperplanes: Some(hyperplanes),
        })
    });
    let alone = std::mem::replace(&mut ctx.samples, both);
    ctx.samples.extend(
        alone
            .into_iter()
            .map(|(key, samples)| (format!("{ONE_THREAD_SAMPLES}{key}"), samples)),
    );
    measured
}

/// Wall time per stage of a calibration, so that a slow one shows where its time went.
struct StageClock {
    laps: Vec<StageTime>,
    since: std::time::Instant,
}

impl StageClock {
    /// A clock whose first stage starts now.
    fn start() -> Self {
        StageClock {
            laps: Vec::new(),
            since: std::time::Instant::now(),
        }
    }

    /// Close the stage that ran since the last lap (or since the clock started).
    fn lap(&mut self, stage: &str) {
        let now = std::time::Instant::now();
        self.laps.push(StageTime {
            stage: stage.into(),
            seconds: (now - self.since).as_secs_f64(),
        });
        self.since = now;
    }
}

/// The clock for cycle conversions: the mean of the readings taken on the device during the
/// run where the backend has a cycle counter, otherwise the nominal clock.
fn clock_reading(
    start: Option<f64>,
    end: Option<f64>,
    nominal: Option<u32>,
) -> (Option<f64>, String) {
    match (start, end) {
        (Some(a), Some(b)) => (
            Some((a + b) / 2.0),
            format!("measured on the device during the run: {a:.0} MHz before the latency sweep, {b:.0} MHz after it"),
        ),
        _ => match nominal {
            Some(mhz) => (
                Some(f64::from(mhz)),
                "nominal (the reported maximum; this backend cannot read the running clock)".into(),
            ),
            None => (None, "unknown".into()),
        },
    }
}

/// The serialization sweeps a calibration runs: those a model reads (the coalesced read and
/// write give Δt, ΔT and n, the strided read the line rate). The random and strided-write
/// sweeps, which no model reads and the figures only drew, are no longer run (until
/// 2026-11-29 a full calibration ran them: 11 of the host's 12.5 s of serialization sweeps);
/// files that hold them still show them.
const GAP_SWEEPS: [(Pattern, Direction); 3] = [
    (Pattern::Coalesced, Direction::Read),
    (Pattern::Coalesced, Direction::Write),
    (Pattern::Strided, Direction::Read),
];

/// The quantities a calibration records (one step of its progress bar each), counted from
/// the same sizes the stages sweep.
fn estimated_steps(
    ctx: &BenchContext<'_>,
    latency_sizes: usize,
    reach: usize,
    shaped: bool,
) -> u64 {
    let gap_points = |p: Pattern| crate::bench::gaps::executor_counts(ctx, p).len();
    let gaps: usize = GAP_SWEEPS.iter().map(|&(p, _)| gap_points(p)).sum();
    let transfers =
        2 * crate::bench::transfer::transfer_sizes(reach, ctx.device.info().max_alloc_bytes).len();
    let streaming = bandwidth_sizes(reach);
    // On a CPU the private caches again with passes inside a launch: about the working sets
    // up to 1 MiB.
    let cached = if ctx.device.info().class == DeviceClass::Gpu {
        0
    } else {
        streaming.iter().filter(|&&s| s <= 1 << 20).count()
    };
    let bandwidth = StreamKernel::ALL.len() * (streaming.len() + cached);
    // Each side of the shaped sweeps' working sets: the stencil once, the hyperplane walk in
    // both orders; none where they are not measured.
    let sides = if shaped {
        crate::bench::stencil::side_steps(false).len()
    } else {
        0
    };
    let shaped_steps = streaming.len() * sides;
    let host = ctx.device.info().backend == BackendKind::Host;
    // On the host, one thread's copy, triad, strided read, stencil and hyperplane sweeps;
    // elsewhere the device's hyperplane sweep and the page walk sweep.
    let after = if host {
        2 * streaming.len() + gap_points(Pattern::Strided) + 3 * shaped_steps
    } else {
        2 * shaped_steps + steps_swept().len()
    };
    // The transposing and gathering sweeps (where shaped sweeps run) and the random gather
    // sweep.
    let swept = if shaped { 3 } else { 1 } * streaming.len();
    // Launch overhead and its sequence, the latency sweep, the write latency, the gaps, the
    // three operation chains, transfers, the streaming sweep, the three sweeps above,
    // BabelStream.
    (2 + latency_sizes + 1 + gaps + 3 + transfers + bandwidth + swept + 1 + after) as u64
}

fn gap_parameter(g: &GapFit) -> Estimate {
    let what = match g.direction {
        Direction::Read => "read",
        Direction::Write => "write",
    };
    Estimate::time_ns(
        g.gap_ns,
        g.ci95_ns,
        format!(
            "slope of kernel time against n executors, one coalesced {what} each, least squares \
             over n = {}..{} (R² = {:.4}); Student-t 95 % CI",
            g.fit_range[0], g.fit_range[1], g.r_squared
        ),
    )
}

/// n: on a GPU the measured knee (the device's attributes beside it); on a CPU the
/// attributes (cores), because there the knee only marks where the thread pool's fork-join
/// cost stops dominating, not a count of simultaneous executors.
fn executors_parameter(e: &Executors, class: DeviceClass) -> Estimate {
    let knee = if class == DeviceClass::Gpu {
        e.from_knee
    } else {
        None
    };
    match (knee, e.knee_ci95) {
        (Some(knee), ci) => Estimate {
            value: knee,
            unit: Unit::Executors.file_unit().into(),
            ci95: ci.unwrap_or([knee, knee]),
            method: format!(
                "knee of the coalesced read sweep (where the fitted line meets the flat part); \
                 the device's attributes give {}",
                e.from_attributes
                    .map_or("nothing".to_string(), |a| a.to_string())
            ),
        },
        (None, _) => {
            let a = e.from_attributes.unwrap_or(1) as f64;
            Estimate {
                value: a,
                unit: Unit::Executors.file_unit().into(),
                ci95: [a, a],
                method: format!(
                    "compute units × resident threads per unit (device attributes); knee of the \
                     coalesced read sweep: {}",
                    e.from_knee.map_or("none found".to_string(), |k| format!(
                        "{k:.0} (on a CPU it marks the thread pool's start-up cost, not executors)"
                    ))
                ),
            }
        }
    }
}

/// The cache sizes the device and the OS report, beside the measured plateaus: the host's
/// from sysfs (`/sys/devices/system/cpu/cpu0/cache/index*/`), others' from the device's
/// last-level attribute (OpenCL's `CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`, CUDA's L2 size).
pub fn reported_caches(info: &crate::backend::DeviceInfo) -> Vec<ReportedCache> {
    let mut caches = Vec::new();
    if info.backend == crate::backend::BackendKind::Host
        || info.class == crate::backend::DeviceClass::Cpu
    {
        caches = sysfs_caches(std::path::Path::new("/sys/devices/system/cpu/cpu0/cache"));
    }
    if caches.is_empty() {
        if let Some(bytes) = info.l2_bytes {
            caches.push(ReportedCache {
                level: "last level".into(),
                kind: "unified".into(),
                bytes,
                source: "device attribute".into(),
            });
        }
    }
    caches
}

/// Parse a sysfs cache folder (`index0/level`, `type`, `size` such as `48K`).
fn sysfs_caches(dir: &std::path::Path) -> Vec<ReportedCache> {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let mut caches: Vec<ReportedCache> = (0..8)
        .filter_map(|i| {
            let d = dir.join(format!("index{i}"));
            let level = read(d.join("level"))?;
            let kind = read(d.join("type"))?;
            let size = read(d.join("size"))?;
            let size = size.trim();
            let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit())?);
            let scale = match unit {
                "K" => 1u64 << 10,
                "M" => 1 << 20,
                "G" => 1 << 30,
                _ => return None,
            };
            Some(ReportedCache {
                level: format!("L{}", level.trim()),
                kind: kind.trim().to_lowercase(),
                bytes: digits.parse::<u64>().ok()? * scale,
                source: "sysfs (per core or per sharing group)".into(),
            })
        })
        .filter(|c| c.kind != "instruction")
        .collect();
    caches.sort_by(|a, b| a.level.cmp(&b.level));
    caches
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::host::HostDevice;

    #[test]
    fn the_host_calibration_measures_one_threads_rates_too() {
        let device = HostDevice::new();
        let mut ctx = BenchContext::new(&device, SamplingPlan::quick(), true).expect("a context");
        ctx.samples
            .insert("bandwidth_copy_s/65536".into(), vec![1.0]);
        let mut stages = StageClock::start();
        let one =
            one_thread(&mut ctx, &[64 << 10, 1 << 20], &[], true, &mut stages).expect("measured");
        // Copy and triad at every working set, verified, at a finite rate.
        let kernels: Vec<StreamKernel> = one.bandwidth.curves.iter().map(|c| c.kernel).collect();
        assert_eq!(kernels, vec![StreamKernel::Copy, StreamKernel::Triad]);
        for c in &one.bandwidth.curves {
            assert_eq!(c.points.len(), 2, "{c:?}");
            assert!(c.points.iter().all(|p| p.gbps.is_finite() && p.gbps > 0.0));
        }
        assert_eq!(one.strided_read.pattern, Pattern::Strided);
        assert_eq!(one.strided_read.direction, Direction::Read);
        assert!(!one.strided_read.sweep.is_empty());
        // Its samples sit under their own prefix; the two-core ones are left as they were.
        assert_eq!(ctx.samples["bandwidth_copy_s/65536"], vec![1.0]);
        let alone = |k: &str| {
            ctx.samples
                .contains_key(&format!("{ONE_THREAD_SAMPLES}{k}"))
        };
        assert!(alone("bandwidth_copy_s/65536") && alone("bandwidth_triad_s/1048576"));
        assert!(ctx
            .samples
            .keys()
            .any(|k| k.starts_with(&format!("{ONE_THREAD_SAMPLES}read_strided_s/"))));
        // The model reads them back as one thread's rates.
        let mut calibration = crate::calibration::test_fixture();
        calibration.one_thread = Some(one);
        let facts = crate::calibration::model_parameters::window_facts(&calibration);
        let rates = facts.one_thread.expect("one thread's rates");
        assert_eq!(rates.streaming.len(), 4);
        assert!(rates.streaming_rate(1 << 20).is_some_and(|r| r > 0.0));
        assert!(rates.line_rate(1 << 20).is_some_and(|r| r > 0.0));
        // Each of its three sweeps is a stage of the calibration's wall time.
        let laps: Vec<&str> = stages.laps.iter().map(|l| l.stage.as_str()).collect();
        assert_eq!(
            laps,
            [
                "one thread's streaming and strided sweeps",
                "one thread's stencil sweep",
                "one thread's hyperplane sweep"
            ]
        );
        // A quick look stops after the first.
        let mut stages = StageClock::start();
        let quick = one_thread(&mut ctx, &[64 << 10], &[], false, &mut stages).expect("measured");
        assert!(quick.stencil.is_none() && quick.hyperplanes.is_none());
        assert_eq!(stages.laps.len(), 1, "{:?}", stages.laps.len());
    }

    #[test]
    fn a_quick_look_gathers_up_to_the_first_working_set_past_the_caches() {
        let sizes = [16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20];
        let past = |b: usize| b >= 96 << 20;
        assert_eq!(quick_sizes(&sizes, true, past), sizes[..4].to_vec());
        assert_eq!(quick_sizes(&sizes, false, past), sizes.to_vec());
        // A device that reports no cache keeps every set.
        assert_eq!(quick_sizes(&sizes, true, |_| false), sizes.to_vec());
    }

    #[test]
    fn a_cpu_measures_the_shaped_sweeps_only_when_asked_and_a_quick_look_never() {
        let options = |quick, shaped_sweeps| CalibrateOptions {
            quick,
            shaped_sweeps,
            ..Default::default()
        };
        // (class, --quick, --shaped-sweeps, measured)
        for (class, quick, asked, want) in [
            (DeviceClass::Gpu, false, false, true),
            (DeviceClass::Gpu, true, false, false),
            (DeviceClass::Cpu, false, false, false),
            (DeviceClass::Cpu, false, true, true),
            (DeviceClass::Cpu, true, true, false),
        ] {
            let got = measures_shaped_sweeps(class, &options(quick, asked));
            assert_eq!(got, want, "{class:?}, quick {quick}, asked {asked}");
        }
    }
}
