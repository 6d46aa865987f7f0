//! From a calibration file to the max-plus model's parameter values (docs/models.md §1).
//!
//! The calibration stores nanoseconds under the paper's short names; the model wants seconds.
//! Besides t, T, τ, Δt, ΔT and n it needs:
//! - `t_cache`, the repeat read time of the caching model: the latency of the last cache
//!   level before device memory in the pointer-chase sweep (on a GPU the L2, where a value a
//!   neighbouring executor on another multiprocessor brought in is found);
//! - the launch overhead L of the pipelined extension: the device-timed empty kernel.
//!
//! [`window_facts`] gives the fractal fit's window rules the same calibration's n, L and
//! cache levels.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Calibration;
use crate::bench::bandwidth::{
    BandwidthCurve, BandwidthPoint, BandwidthSweep, LevelBandwidth, StreamKernel,
};
use crate::bench::gaps::{Direction, GapFit};
use crate::bench::gather::GatherPoint;
use crate::bench::hyperplane::{sample_key, timed_points, HyperplanePoint, HyperplaneSweep};
use crate::bench::kernels::{Pattern, STRIDE_ELEMENTS};
use crate::bench::stencil::StencilSweep;
use crate::bench::transpose::TransposeSweep;
use crate::fit::window::{DeviceFacts, HyperplaneRates, OneThreadRates, PlaneOrder};
use crate::model::maxplus::{LaunchCost, MaxPlusError, Parameters};
use crate::units::{Parameter, Seconds};

/// One value handed to the model, with where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParameterSource {
    /// The model's name (`t`, `T`, `tau`, `dt`, `dT`, `t_cache`, `n`).
    pub name: String,
    /// Value in seconds (a count for `n`).
    pub value: f64,
    /// Where in the calibration it was taken from (a field path).
    pub source: String,
    /// How the calibration measured it.
    pub method: String,
}

/// The model's values from a calibration, and the launch overhead in seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInputs {
    /// Every value with its source, in a fixed order.
    pub sources: Vec<ParameterSource>,
    /// Device-timed launch overhead.
    pub launch_seconds: Seconds,
    /// What a launch costs in a back-to-back sequence (`launch_overhead.sequence`): the fixed
    /// part and the part per launched work item (the empty kernel's line over 2^10 … 2^16
    /// items), where the calibration measured it. Our `ext_level` extension charges it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_sequence: Option<LaunchCost>,
    /// Streaming bandwidth per memory level, where the calibration measured it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub level_bandwidths: Vec<LevelBandwidth>,
    /// The streaming-bandwidth sweep per kernel, for the bandwidth at a given working set.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub bandwidth_curves: Vec<BandwidthCurve>,
    /// On a GPU: BabelStream's copy and triad in the same calibration, device-timed, GB/s.
    /// Device memory's streaming rate is held to at least these ([`Self::streaming_gap`]):
    /// the sweep's one wave of executors streamed an H200's device memory at 2.06–2.55 TB/s
    /// (copy, triad at 256 MiB) where BabelStream's floats ran at 2.51–3.25 and the max-plus
    /// graphs at 3.3. Empty on a CPU, where BabelStream is the slower of the two about as
    /// often as the faster.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory_reference: Vec<(StreamKernel, f64)>,
}

impl ModelInputs {
    /// Read the values from `calibration`.
    pub fn from_calibration(calibration: &Calibration) -> Self {
        let p = &calibration.parameters;
        // The model's order: t, T, τ, Δt, ΔT, n; t_cache after them.
        let mut sources: Vec<ParameterSource> = Parameter::ALL
            .into_iter()
            .filter_map(|parameter| {
                let estimate = p.estimate(parameter)?;
                Some(ParameterSource {
                    name: parameter.key().to_string(),
                    value: p.value(parameter)?,
                    source: format!("parameters.{}", parameter.key()),
                    method: estimate.method.clone(),
                })
            })
            .collect();
        let cached = Parameter::CachedReadLatency.key().to_string();
        sources.push(match last_cache_level(calibration) {
            Some((level, latency_ns)) => ParameterSource {
                name: cached,
                value: Seconds::from_ns(latency_ns).0,
                source: format!("read_latency.levels[{level}]"),
                method: "pointer-chase plateau of the last cache level before device memory".into(),
            },
            None => ParameterSource {
                name: cached,
                value: Seconds::from_ns(p.read_latency.value).0,
                source: "parameters.t".into(),
                method: "no cache level found, so t_cache = t".into(),
            },
        });
        ModelInputs {
            sources,
            launch_seconds: Seconds::from_ns(calibration.launch_overhead.device_ns),
            launch_sequence: calibration
                .launch_overhead
                .sequence
                .as_ref()
                .map(|q| LaunchCost {
                    fixed: Seconds::from_ns(q.fixed_ns.max(0.0)),
                    per_item: Seconds::from_ns(q.per_item_ns.max(0.0)),
                }),
            level_bandwidths: calibration
                .bandwidth
                .as_ref()
                .map_or(Vec::new(), |b| b.levels.clone()),
            bandwidth_curves: calibration
                .bandwidth
                .as_ref()
                .map_or(Vec::new(), |b| b.curves.clone()),
            memory_reference: memory_reference(calibration),
        }
    }

    /// The same inputs with `overrides` (`--set NAME=SECONDS`) in place of the calibration's
    /// values, each saying it came from the command line, so what is shown is what is used.
    pub fn with_overrides(mut self, overrides: &[(String, f64)]) -> Self {
        // n is a count given by --n-exec, never a --set time.
        for (name, value) in overrides.iter().filter(|(n, _)| n != "n") {
            let given = ParameterSource {
                name: name.clone(),
                value: *value,
                source: "--set".into(),
                method: "given on the command line".into(),
            };
            match self.sources.iter_mut().find(|s| &s.name == name) {
                Some(s) => *s = given,
                None => self.sources.push(given),
            }
        }
        self
    }

    /// The values as model parameters; `overrides` (name, seconds) replace or add values.
    pub fn parameters(&self, overrides: &[(String, f64)]) -> Result<Parameters, MaxPlusError> {
        let mut parameters = Parameters::new();
        for s in &self.sources {
            parameters.set(&s.name, s.value)?;
        }
        for (name, value) in overrides {
            parameters.set(name, *value)?;
        }
        Ok(parameters)
    }

    /// The time one executor's 4-byte access takes when the device streams a working set of
    /// `bytes`: 4 B over the streaming bandwidth the calibration's sweep measured at that
    /// working set (log-log interpolation between its points, clamped at its ends) for the
    /// kernel whose access mix is closest to `reads`:`writes` (read 1:0, write 0:1, copy 1:1,
    /// triad 2:1), with the name of the latency level the working set lives in; `None`
    /// without a bandwidth sweep.
    pub fn streaming_gap(&self, bytes: u64, reads: u32, writes: u32) -> Option<(String, Seconds)> {
        let share = |r: f64, w: f64| if r + w > 0.0 { r / (r + w) } else { 0.5 };
        let wanted = share(f64::from(reads), f64::from(writes));
        let mix = |k: StreamKernel| match k {
            StreamKernel::Read => share(1.0, 0.0),
            StreamKernel::Write => share(0.0, 1.0),
            StreamKernel::Copy => share(1.0, 1.0),
            StreamKernel::Triad => share(2.0, 1.0),
        };
        let curve = self
            .bandwidth_curves
            .iter()
            .filter(|c| !c.points.is_empty())
            .min_by(|a, b| {
                (mix(a.kernel) - wanted)
                    .abs()
                    .total_cmp(&(mix(b.kernel) - wanted).abs())
            })?;
        let swept = interpolate(&curve.points, bytes as f64)?;
        let level = self
            .level_bandwidths
            .iter()
            .find(|l| {
                (l.working_set_bytes[0] as u64..=l.working_set_bytes[1] as u64).contains(&bytes)
            })
            .map_or_else(|| "memory".to_string(), |l| l.level.clone());
        // In device memory, at least BabelStream's rate for the same kernel (GPUs only).
        let reference = self
            .memory_reference
            .iter()
            .find(|(k, _)| *k == curve.kernel)
            .map(|&(_, r)| r)
            .filter(|&r| level == "memory" && r > swept);
        Some(match reference {
            Some(r) => (
                format!("{level} (BabelStream's {})", curve.kernel.name()),
                Seconds(4.0 / (r * 1e9)),
            ),
            None => (level, Seconds(4.0 / (swept * 1e9))),
        })
    }

    /// The executor count n, rounded, at least 1.
    pub fn executors(&self) -> u64 {
        self.sources
            .iter()
            .find(|s| s.name == Parameter::Executors.key())
            .map_or(1, |s| s.value.round().max(1.0) as u64)
    }
}

/// BabelStream's copy and triad rates (device-timed, GB/s) on a GPU, for
/// [`ModelInputs::memory_reference`]; empty on a CPU or without BabelStream.
fn memory_reference(calibration: &Calibration) -> Vec<(StreamKernel, f64)> {
    if calibration.device.class != crate::backend::DeviceClass::Gpu {
        return Vec::new();
    }
    let Some(b) = &calibration.babelstream else {
        return Vec::new();
    };
    [(StreamKernel::Copy, "copy"), (StreamKernel::Triad, "triad")]
        .into_iter()
        .filter_map(|(kernel, name)| {
            let k = b
                .kernels
                .iter()
                .find(|k| k.name.eq_ignore_ascii_case(name))?;
            let mbps = if k.device_mbytes_per_sec > 0.0 {
                k.device_mbytes_per_sec
            } else {
                k.mbytes_per_sec
            };
            (mbps.is_finite() && mbps > 0.0).then_some((kernel, mbps * 1e-3))
        })
        .collect()
}

/// The latency sweep's levels: name and the largest working set of its plateau.
fn chase_levels(calibration: &Calibration) -> Vec<(String, u64)> {
    calibration
        .read_latency
        .levels
        .iter()
        .map(|l| (l.level.clone(), l.working_set_bytes[1] as u64))
        .collect()
}

/// The bandwidth sweep's levels (`BandwidthSweep::levels`): name and the largest working
/// set of each row, device memory unbounded; `None` without a sweep, or where its rows do
/// not end in device memory.
fn rate_levels(calibration: &Calibration) -> Option<Vec<(String, u64)>> {
    let rows = &calibration.bandwidth.as_ref()?.levels;
    if rows.last()?.level != "memory" {
        return None;
    }
    Some(
        rows.iter()
            .map(|l| (l.level.clone(), l.working_set_bytes[1] as u64))
            .collect(),
    )
}

/// A stencil sweep's points: a grid's bytes and its rate, bytes per second (none without
/// the sweep).
fn stencil_points(sweep: Option<&StencilSweep>) -> Vec<(u64, f64)> {
    sweep.map_or_else(Vec::new, |s| {
        s.points
            .iter()
            .map(|p| (p.working_set_bytes as u64, p.gbps * 1e9))
            .collect()
    })
}

/// What the fit-window rules and the calibrated variant need from a calibration
/// ([`crate::fit::window`]): n, the launch overhead a workload's launch pays (the saturated
/// empty launch where measured), each latency level's largest working set and its read
/// latency t, the streaming sweep and the transfer sweeps.
pub fn window_facts(calibration: &Calibration) -> DeviceFacts {
    DeviceFacts {
        executors: calibration.parameters.executors.value,
        launch_seconds: calibration.launch_overhead.per_launch(),
        levels: rate_levels(calibration).unwrap_or_else(|| chase_levels(calibration)),
        latency_levels: chase_levels(calibration),
        latencies: calibration
            .read_latency
            .levels
            .iter()
            .map(|l| (l.level.clone(), l.latency_ns * 1e-9))
            .collect(),
        streaming: calibration
            .bandwidth
            .as_ref()
            .map_or_else(Vec::new, streaming_points),
        lines: calibration
            .gaps
            .iter()
            .filter(|g| g.pattern == Pattern::Strided && g.direction == Direction::Read)
            .flat_map(line_points)
            .collect(),
        one_thread: calibration.one_thread.as_ref().map(|o| OneThreadRates {
            streaming: streaming_points(&o.bandwidth),
            lines: line_points(&o.strided_read),
            stencils: stencil_points(o.stencil.as_ref()),
            hyperplanes: hyperplane_rates(
                o.hyperplanes.as_ref(),
                &calibration.samples,
                super::ONE_THREAD_SAMPLES,
            ),
        }),
        transposes: sweep_points(calibration.transposes.as_ref()),
        gathers: sweep_points(calibration.gathers.as_ref()),
        random_gathers: gather_points(calibration, |p| p.working_set_bytes),
        random_gather_arrays: gather_points(calibration, GatherPoint::gathered_bytes),
        page_walks: walk_points(calibration, |w| &w.points),
        aliased_page_walks: walk_points(calibration, |w| &w.aliased),
        hyperplanes: hyperplane_rates(calibration.hyperplanes.as_ref(), &calibration.samples, ""),
        flop_rate: Some(2.0 * calibration.ops.fma_ops_per_second)
            .filter(|r| r.is_finite() && *r > 0.0),
        memory_floor: calibration.babelstream.as_ref().and_then(|b| {
            let triad = b.kernels.iter().find(|k| k.name == "Triad")?;
            (triad.average_seconds > 0.0).then(|| b.triad_bytes() / triad.average_seconds)
        }),
        transfers: calibration
            .transfers
            .iter()
            .filter_map(|t| {
                let phase = match t.direction.as_str() {
                    "host_to_device" => "upload",
                    "device_to_host" => "download",
                    _ => return None,
                };
                let points = t.points.iter().map(|p| (p[0], p[1] * 1e-9)).collect();
                Some((phase.to_string(), points))
            })
            .collect(),
        streaming_spread: streaming_spread(calibration),
    }
}

/// The copy and triad points of a bandwidth sweep: working set, bytes, and bytes per second
/// ([`DeviceFacts::streaming`]).
fn streaming_points(sweep: &BandwidthSweep) -> Vec<(u64, f64)> {
    sweep
        .curves
        .iter()
        .filter(|c| matches!(c.kernel, StreamKernel::Copy | StreamKernel::Triad))
        .flat_map(|c| &c.points)
        .map(|p| (p.working_set_bytes as u64, p.gbps * 1e9))
        .collect()
}

/// The random gather sweep's points as (`bytes` of each, bytes per second): by working set
/// ([`DeviceFacts::random_gathers`]) or by gathered array
/// A page walk sweep's curve (`curve` of it) as (pages a walk touches, seconds a step);
/// empty without the sweep.
fn walk_points(
    calibration: &Calibration,
    curve: impl Fn(&crate::bench::pages::PageWalkSweep) -> &Vec<crate::bench::pages::PageWalkPoint>,
) -> Vec<(u64, f64)> {
    calibration.page_walks.as_ref().map_or_else(Vec::new, |w| {
        curve(w)
            .iter()
            .map(|p| (p.steps as u64, p.ns_per_step * 1e-9))
            .collect()
    })
}

/// ([`DeviceFacts::random_gather_arrays`]); none without the sweep.
fn gather_points(
    calibration: &Calibration,
    bytes: impl Fn(&GatherPoint) -> usize,
) -> Vec<(u64, f64)> {
    calibration
        .random_gathers
        .as_ref()
        .map_or_else(Vec::new, |g| {
            g.points
                .iter()
                .map(|p| (bytes(p) as u64, p.gbps * 1e9))
                .collect()
        })
}

/// A transposing sweep's points: working set, bytes, and bytes per second; none without one
/// ([`DeviceFacts::transposes`], [`DeviceFacts::gathers`]).
fn sweep_points(sweep: Option<&TransposeSweep>) -> Vec<(u64, f64)> {
    sweep.map_or_else(Vec::new, |t| {
        t.points
            .iter()
            .map(|p| (p.working_set_bytes as u64, p.gbps * 1e9))
            .collect()
    })
}

/// A strided read sweep as the rate at which 64-byte lines arrive: the lines' working set
/// (n executors × one line each), bytes, and bytes per second ([`DeviceFacts::lines`]).
fn line_points(strided_read: &GapFit) -> Vec<(u64, f64)> {
    strided_read
        .sweep
        .iter()
        .filter(|p| p.time_ns > 0.0)
        .map(|p| {
            let n = p.executors as f64;
            let working_set = p.executors * u64::from(STRIDE_ELEMENTS) * 4;
            (working_set, 64.0 * n / (p.time_ns * 1e-9))
        })
        .collect()
}

/// Per swept working set, how much faster than its median the streaming sweep's copy and
/// triad samples ran in their fastest tenth: each sample's time over its own kernel's median
/// time at that size, pooled, and the pool's median over its 10th percentile
/// ([`DeviceFacts::streaming_spread`]). The 10th, not the 2.5th: one sample is one launch of
/// milliseconds, a target's time the median of runs of a second or more, whose rate moves
/// less (docs/models.md §2.4, "The fast end of the memory's rate"). Sizes with fewer than 20
/// samples are left out.
fn streaming_spread(calibration: &Calibration) -> Vec<(u64, f64)> {
    let sizes = calibration.bandwidth.as_ref().map_or_else(Vec::new, |b| {
        crate::bench::bandwidth::streaming_sizes(&b.curves)
    });
    sizes
        .into_iter()
        .map(|bytes| bytes as u64)
        .filter_map(|bytes| {
            let mut pooled = Vec::new();
            for kernel in [StreamKernel::Copy, StreamKernel::Triad] {
                let key = format!("bandwidth_{}_s/{bytes}", kernel.name());
                let Some(samples) = calibration.samples.get(&key) else {
                    continue;
                };
                let mut sorted: Vec<f64> = samples
                    .iter()
                    .copied()
                    .filter(|t| t.is_finite() && *t > 0.0)
                    .collect();
                sorted.sort_by(f64::total_cmp);
                if sorted.is_empty() {
                    continue;
                }
                let median = crate::fit::stats::median_of_sorted(&sorted);
                pooled.extend(sorted.iter().map(|t| t / median));
            }
            if pooled.len() < 20 {
                return None;
            }
            pooled.sort_by(f64::total_cmp);
            let fast = crate::fit::stats::quantile_of_sorted(&pooled, 0.1);
            let median = crate::fit::stats::median_of_sorted(&pooled);
            (fast > 0.0).then(|| (bytes, median / fast))
        })
        .collect()
}

/// The sweep's bandwidth at working set `bytes`: log-log interpolation between the points
/// around it, the end point's value beyond either end.
fn interpolate(points: &[BandwidthPoint], bytes: f64) -> Option<f64> {
    let first = points.first()?;
    let last = points.last()?;
    if bytes <= first.working_set_bytes as f64 {
        return Some(first.gbps);
    }
    if bytes >= last.working_set_bytes as f64 {
        return Some(last.gbps);
    }
    let w = points
        .windows(2)
        .find(|w| bytes <= w[1].working_set_bytes as f64)?;
    let (x0, x1) = (
        (w[0].working_set_bytes as f64).ln(),
        (w[1].working_set_bytes as f64).ln(),
    );
    let f = (bytes.ln() - x0) / (x1 - x0);
    Some((w[0].gbps.ln() + f * (w[1].gbps.ln() - w[0].gbps.ln())).exp())
}

/// The last level named other than `memory`, with its latency in ns.
fn last_cache_level(calibration: &Calibration) -> Option<(String, f64)> {
    calibration
        .read_latency
        .levels
        .iter()
        .rfind(|l| l.level != "memory")
        .map(|l| (l.level.clone(), l.latency_ns))
}

/// A hyperplane sweep's points in each order: each cube's bytes and its rate, bytes per
/// second, and its sides' spread ([`side_spread`]) where the raw samples are kept under
/// `prefix` in `samples`; empty without the sweep.
fn hyperplane_rates(
    sweep: Option<&HyperplaneSweep>,
    samples: &BTreeMap<String, Vec<f64>>,
    prefix: &str,
) -> HyperplaneRates {
    let points = |order: PlaneOrder| {
        sweep.map_or_else(Vec::new, |s| {
            s.points
                .iter()
                .map(|p| (p.working_set_bytes as u64, p.gbps(order) * 1e9))
                .collect()
        })
    };
    let sides = |order: PlaneOrder| {
        sweep.map_or_else(Vec::new, |s| {
            s.points
                .iter()
                .filter_map(|p| {
                    let spread = side_spread(p, order, samples, prefix)?;
                    Some((p.working_set_bytes as u64, spread))
                })
                .collect()
        })
    };
    HyperplaneRates {
        ascending: points(PlaneOrder::Ascending),
        descending: points(PlaneOrder::Descending),
        ascending_sides: sides(PlaneOrder::Ascending),
        descending_sides: sides(PlaneOrder::Descending),
    }
}

/// The slowest and the fastest of a hyperplane point's sides' rates in `order`, bytes per
/// second: 8 bytes per point one sample times over the median of the side's raw samples (as
/// the sweep rated it); `None` where a side's samples are missing.
fn side_spread(
    point: &HyperplanePoint,
    order: PlaneOrder,
    samples: &BTreeMap<String, Vec<f64>>,
    prefix: &str,
) -> Option<[f64; 2]> {
    let mut rates = Vec::with_capacity(point.sides.len());
    for &n in &point.sides {
        let mut times: Vec<f64> = samples
            .get(&format!("{prefix}{}", sample_key(n, order)))?
            .iter()
            .copied()
            .filter(|t| t.is_finite() && *t > 0.0)
            .collect();
        if times.is_empty() {
            return None;
        }
        times.sort_by(f64::total_cmp);
        let median = crate::fit::stats::median_of_sorted(&times);
        rates.push(8.0 * timed_points(n, order) as f64 / median);
    }
    let slowest = rates.iter().copied().reduce(f64::min)?;
    let fastest = rates.iter().copied().reduce(f64::max)?;
    Some([slowest, fastest])
}

#[cfg(test)]
mod tests;
