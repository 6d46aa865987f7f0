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
        levels: calibration
            .read_latency
            .levels
            .iter()
            .map(|l| (l.level.clone(), l.working_set_bytes[1] as u64))
            .collect(),
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
        random_gathers: calibration
            .random_gathers
            .as_ref()
            .map_or_else(Vec::new, |g| {
                g.points
                    .iter()
                    .map(|p| (p.working_set_bytes as u64, p.gbps * 1e9))
                    .collect()
            }),
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
    let mut sizes: Vec<u64> = calibration
        .bandwidth
        .iter()
        .flat_map(|b| &b.curves)
        .filter(|c| matches!(c.kernel, StreamKernel::Copy | StreamKernel::Triad))
        .flat_map(|c| &c.points)
        .map(|p| p.working_set_bytes as u64)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .into_iter()
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
mod tests {
    use super::*;
    use crate::calibration::test_fixture;

    #[test]
    fn the_hyperplane_sweeps_spread_is_its_slowest_and_fastest_cube() {
        let mut c = test_fixture();
        let point = crate::bench::hyperplane::HyperplanePoint {
            side: 9,
            sides: vec![7, 9, 11],
            working_set_bytes: 4 * 9 * 9 * 9,
            ascending_gbps: 1.0,
            ascending_ci95_gbps: [0.9, 1.1],
            descending_gbps: 2.0,
            descending_ci95_gbps: [1.8, 2.2],
            outliers: 0,
        };
        c.hyperplanes = Some(HyperplaneSweep {
            points: vec![point],
        });
        // Each side's median sample: 1, 2 and 3 µs upwards; the downward samples of side 11
        // are missing.
        for (n, micros) in [(7, 1.0), (9, 2.0), (11, 3.0)] {
            let times = vec![micros * 1e-6, micros * 0.9e-6, micros * 1.5e-6];
            c.samples
                .insert(sample_key(n, PlaneOrder::Ascending), times.clone());
            if n != 11 {
                c.samples
                    .insert(sample_key(n, PlaneOrder::Descending), times);
            }
        }
        let facts = window_facts(&c);
        let rate = |n: usize, micros: f64| {
            8.0 * timed_points(n, PlaneOrder::Ascending) as f64 / (micros * 1e-6)
        };
        let (bytes, [slowest, fastest]) = facts.hyperplanes.ascending_sides[0];
        assert_eq!(bytes, 4 * 9 * 9 * 9);
        let all = [rate(7, 1.0), rate(9, 2.0), rate(11, 3.0)];
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(0.0, f64::max);
        assert!((slowest / lo - 1.0).abs() < 1e-12 && (fastest / hi - 1.0).abs() < 1e-12);
        assert_eq!(facts.hyperplanes.ascending, vec![(bytes, 1e9)]);
        // A side without samples: no spread for that order.
        assert!(facts.hyperplanes.descending_sides.is_empty());
        assert_eq!(facts.hyperplanes.descending, vec![(bytes, 2e9)]);
    }

    #[test]
    fn the_streaming_spread_is_the_median_over_the_fastest_tenth_copy_and_triad_pooled() {
        use crate::bench::bandwidth::{BandwidthCurve, BandwidthPoint, BandwidthSweep};
        let mut c = test_fixture();
        let w = 64usize << 20;
        let point = |gbps| BandwidthPoint {
            working_set_bytes: w,
            gbps,
            ci95_gbps: [gbps, gbps],
            passes: 1,
            outliers: 0,
        };
        c.bandwidth = Some(BandwidthSweep {
            executors: 2,
            curves: vec![
                BandwidthCurve {
                    kernel: StreamKernel::Copy,
                    points: vec![point(40.0)],
                },
                BandwidthCurve {
                    kernel: StreamKernel::Triad,
                    points: vec![point(30.0)],
                },
            ],
            levels: Vec::new(),
        });
        // Copy's 21 samples: 2, 3, …, 22 ms (median 12 ms); triad's the same times × 3.
        // Relative to their medians both are 2/12 … 22/12; pooled, the 10th percentile is
        // 4/12 (rank 0.1 · 41 = 4.1 between 4/12 and 4/12), the median 1: spread 3.
        let copy: Vec<f64> = (2..=22).map(|ms| ms as f64 * 1e-3).collect();
        let triad: Vec<f64> = copy.iter().map(|t| 3.0 * t).collect();
        c.samples
            .insert(format!("bandwidth_copy_s/{w}"), copy.clone());
        c.samples.insert(format!("bandwidth_triad_s/{w}"), triad);
        let facts = window_facts(&c);
        assert_eq!(facts.streaming_spread.len(), 1);
        let (bytes, spread) = facts.streaming_spread[0];
        assert_eq!(bytes, w as u64);
        assert!((spread - 3.0).abs() < 1e-9, "{spread}");
        assert_eq!(facts.streaming_spread_at(96 << 20), Some(spread));
        // Too few samples: no spread.
        c.samples
            .insert(format!("bandwidth_triad_s/{w}"), Vec::new());
        c.samples
            .insert(format!("bandwidth_copy_s/{w}"), copy[..10].to_vec());
        assert!(window_facts(&c).streaming_spread.is_empty());
    }

    #[test]
    fn values_are_converted_to_seconds_and_named() {
        let c = test_fixture();
        let inputs = ModelInputs::from_calibration(&c);
        let p = inputs.parameters(&[]).expect("finite");
        assert_eq!(
            p.get("t").expect("t"),
            c.parameters.read_latency.value * 1e-9
        );
        assert_eq!(
            p.get("dT").expect("dT"),
            c.parameters.write_gap.value * 1e-9
        );
        assert_eq!(p.get("n").expect("n"), c.parameters.executors.value);
        let last_cache = c
            .read_latency
            .levels
            .iter()
            .rfind(|l| l.level != "memory")
            .expect("the host has caches");
        assert_eq!(
            p.get("t_cache").expect("t_cache"),
            last_cache.latency_ns * 1e-9
        );
        assert_eq!(inputs.launch_seconds.0, c.launch_overhead.device_ns * 1e-9);
    }

    #[test]
    fn the_line_rate_is_64_bytes_per_strided_read() {
        let c = test_fixture();
        let strided = c
            .gaps
            .iter()
            .find(|g| g.pattern == Pattern::Strided && g.direction == Direction::Read)
            .expect("the fixture has a strided read sweep");
        let lines = window_facts(&c).lines;
        assert_eq!(lines.len(), strided.sweep.len());
        for (p, (working_set, rate)) in strided.sweep.iter().zip(lines) {
            // One 4-byte read per executor, each in its own line STRIDE_ELEMENTS floats on.
            assert_eq!(working_set, p.executors * u64::from(STRIDE_ELEMENTS) * 4);
            let want = 64.0 * p.executors as f64 / (p.time_ns * 1e-9);
            assert!((rate / want - 1.0).abs() < 1e-12, "{rate} {want}");
        }
    }

    #[test]
    fn the_memory_floor_is_babelstreams_triad_over_its_mean_iteration() {
        let mut c = test_fixture();
        c.babelstream = None;
        assert_eq!(window_facts(&c).memory_floor, None);
        let kernel =
            |name: &str, average_seconds: f64| crate::bench::babelstream::BabelStreamKernel {
                name: name.into(),
                mbytes_per_sec: 1.0,
                min_seconds: average_seconds / 2.0,
                max_seconds: average_seconds * 2.0,
                average_seconds,
                device_mbytes_per_sec: 1.0,
            };
        c.babelstream = Some(crate::bench::babelstream::BabelStream {
            elements: 1 << 25,
            precision: crate::bench::babelstream::Precision::Float,
            iterations: 100,
            executors: 1 << 25,
            kernels: vec![kernel("Copy", 0.001), kernel("Triad", 0.0125)],
            max_rel_error: 0.0,
        });
        // Three arrays of 2^25 floats (402,653,184 bytes) in 12.5 ms: 32.2 GB/s.
        let floor = window_facts(&c).memory_floor.expect("a floor");
        assert!((floor - 402_653_184.0 / 0.0125).abs() < 1.0, "{floor}");
        // The same arrays in doubles move twice the bytes in the same time.
        if let Some(bs) = c.babelstream.as_mut() {
            bs.precision = crate::bench::babelstream::Precision::Double;
        }
        let floor = window_facts(&c).memory_floor.expect("a floor");
        assert!(
            (floor - 2.0 * 402_653_184.0 / 0.0125).abs() < 1.0,
            "{floor}"
        );
    }

    #[test]
    fn on_a_gpu_device_memory_streams_at_least_at_babelstreams_rate() {
        use crate::bench::bandwidth::{BandwidthCurve, BandwidthSweep, LevelBandwidth};
        let mut c = test_fixture();
        let point = |mib: usize, gbps: f64| BandwidthPoint {
            working_set_bytes: mib << 20,
            gbps,
            ci95_gbps: [gbps, gbps],
            passes: 1,
            outliers: 0,
        };
        let level = |name: &str, lo: usize, hi: usize| LevelBandwidth {
            level: name.into(),
            working_set_bytes: [lo << 20, hi << 20],
            read_gbps: None,
            write_gbps: None,
            copy_gbps: None,
            triad_gbps: None,
        };
        // An H200's triad sweep: 7.3 TB/s in the L2, falling to 2.55 past it.
        c.bandwidth = Some(BandwidthSweep {
            executors: 270_336,
            curves: vec![BandwidthCurve {
                kernel: StreamKernel::Triad,
                points: vec![point(32, 7300.0), point(256, 2552.0)],
            }],
            levels: vec![level("L2", 1, 63), level("memory", 64, 256)],
        });
        let kernel = |name: &str, mbps: f64| crate::bench::babelstream::BabelStreamKernel {
            name: name.into(),
            mbytes_per_sec: 0.9 * mbps,
            min_seconds: 1e-4,
            max_seconds: 1e-4,
            average_seconds: 1e-4,
            device_mbytes_per_sec: mbps,
        };
        c.babelstream = Some(crate::bench::babelstream::BabelStream {
            elements: 1 << 25,
            precision: crate::bench::babelstream::Precision::Float,
            iterations: 100,
            executors: 1 << 25,
            kernels: vec![kernel("Copy", 2_509_305.0), kernel("Triad", 3_251_398.0)],
            max_rel_error: 0.0,
        });
        let gap = |c: &Calibration, mib: u64| {
            ModelInputs::from_calibration(c)
                .streaming_gap(mib << 20, 2, 1)
                .expect("a sweep")
        };
        // A CPU keeps the sweep's rate: there BabelStream is no bound either way.
        c.device.class = crate::backend::DeviceClass::Cpu;
        assert!(ModelInputs::from_calibration(&c)
            .memory_reference
            .is_empty());
        let (name, cpu) = gap(&c, 805);
        assert_eq!(name, "memory");
        assert!((4.0 / cpu.0 / 1e9 - 2552.0).abs() < 1e-6);
        // A GPU's device memory streams at least at BabelStream's device-timed triad, and
        // says so; its L2 keeps the sweep's rate.
        c.device.class = crate::backend::DeviceClass::Gpu;
        let (name, gpu) = gap(&c, 805);
        assert_eq!(name, "memory (BabelStream's triad)");
        assert!((4.0 / gpu.0 / 1e9 - 3251.398).abs() < 1e-6);
        let (name, l2) = gap(&c, 32);
        assert_eq!(name, "L2");
        assert!((4.0 / l2.0 / 1e9 - 7300.0).abs() < 1e-6);
        // Where the sweep is the faster, it stands.
        if let Some(b) = c.babelstream.as_mut() {
            b.kernels = vec![kernel("Triad", 2_000_000.0)];
        }
        assert_eq!(gap(&c, 805), ("memory".to_string(), cpu));
    }

    #[test]
    fn overrides_win() {
        let inputs = ModelInputs::from_calibration(&test_fixture());
        let p = inputs
            .parameters(&[("t".into(), 1.0), ("extra".into(), 2.0)])
            .expect("finite");
        assert_eq!(p.get("t").expect("t"), 1.0);
        assert_eq!(p.get("extra").expect("extra"), 2.0);
    }

    #[test]
    fn bandwidth_is_interpolated_on_log_axes_and_clamped() {
        let p = |kib: usize, gbps: f64| BandwidthPoint {
            working_set_bytes: kib << 10,
            gbps,
            ci95_gbps: [gbps, gbps],
            passes: 1,
            outliers: 0,
        };
        let points = [p(16, 100.0), p(64, 25.0)];
        assert_eq!(interpolate(&points, 8.0 * 1024.0), Some(100.0));
        assert_eq!(interpolate(&points, 1e9), Some(25.0));
        // Halfway on log axes between 16 and 64 KiB is 32 KiB: √(100 · 25) = 50.
        let mid = interpolate(&points, 32.0 * 1024.0).expect("inside");
        assert!((mid - 50.0).abs() < 1e-9, "{mid}");
        assert_eq!(interpolate(&[], 1.0), None);
    }
}
