//! The calibration: a device's measured max-plus parameters (docs/models.md §1), each with
//! unit, 95 % CI and method, plus everything behind them (sweeps, fits, raw samples);
//! [`measure`] runs the microbenchmarks that make one.
//!
//! Files are written atomically ([`crate::export::write_atomically`]) and read with errors
//! that name the field that is wrong. The parameters keep the paper's short keys (`t`, `T`,
//! `dt`, `dT`, `tau`, `n`, from [`crate::units::Parameter`]) and nanoseconds, the
//! interchange format the papers' readers expect; [`CalibratedParameters::value`] gives them
//! in the library's units.

pub mod compare;
pub mod lock;
pub mod measure;
pub mod model_parameters;
pub mod patterns;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::backend::DeviceInfo;
use crate::bench::babelstream::BabelStream;
use crate::bench::bandwidth::BandwidthSweep;
use crate::bench::gaps::GapFit;
use crate::bench::gather::GatherSweep;
use crate::bench::hyperplane::HyperplaneSweep;
use crate::bench::latency::{LatencyLevel, LatencyPoint};
use crate::bench::ops::OpTimes;
use crate::bench::pages::PageWalkSweep;
use crate::bench::stencil::StencilSweep;
use crate::bench::transfer::{LaunchOverhead, TransferFit};
use crate::bench::transpose::TransposeSweep;
use crate::bench::SamplingPlan;
use crate::export::write_atomically;
use crate::units::{Parameter, Seconds, Unit};

/// Version of the file layout; bumped when a field changes meaning.
pub const FORMAT_VERSION: u32 = 1;

/// One measured parameter as the file stores it: value, unit, interval and method.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The value, in the file's unit.
    pub value: f64,
    /// Its unit (`ns`, `executors`: [`Unit::file_unit`]).
    pub unit: String,
    /// 95 % confidence interval `[low, high]`.
    pub ci95: [f64; 2],
    /// How it was measured.
    pub method: String,
}

impl Estimate {
    /// A measured time in ns. A time is never negative, but one obtained as a slope or a
    /// difference of two medians can come out below zero when the effect is under the
    /// noise (a quick host run on a loaded machine once fitted Δt = −0.03 ns). Such a value
    /// is stored as 0 and its interval clipped at 0 (an interval that held the true,
    /// non-negative value still holds it), and the method says what was measured, so the
    /// file stays one that [`Calibration::load`] accepts.
    pub fn time_ns(value: f64, ci95: [f64; 2], method: String) -> Estimate {
        let (value, method) = if value < 0.0 {
            (
                0.0,
                format!(
                    "{method}; measured {value:.4} ns (95 % CI {:.4} to {:.4}): below the \
                     noise, stored as 0",
                    ci95[0], ci95[1]
                ),
            )
        } else {
            (value, method)
        };
        Estimate {
            value,
            unit: Unit::Time.file_unit().into(),
            ci95: ci95.map(|v| v.max(0.0)),
            method,
        }
    }
}

/// The max-plus model's measured parameters, stored under the papers' short keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibratedParameters {
    /// Read latency t (device-memory level of the pointer chase).
    #[serde(rename = "t")]
    pub read_latency: Estimate,
    /// Write latency T.
    #[serde(rename = "T")]
    pub write_latency: Estimate,
    /// Read serialization interval Δt (coalesced).
    #[serde(rename = "dt")]
    pub read_gap: Estimate,
    /// Write serialization interval ΔT (coalesced).
    #[serde(rename = "dT")]
    pub write_gap: Estimate,
    /// Operation time τ (dependent fp32 FMA).
    #[serde(rename = "tau")]
    pub op_time: Estimate,
    /// Simultaneous executors n.
    #[serde(rename = "n")]
    pub executors: Estimate,
}

impl CalibratedParameters {
    /// Every value a number a model can take: times finite and not negative, n at least 1;
    /// else the field and what is wrong.
    fn check(&self) -> Result<(), (String, String)> {
        let times = [
            ("t", &self.read_latency),
            ("T", &self.write_latency),
            ("dt", &self.read_gap),
            ("dT", &self.write_gap),
            ("tau", &self.op_time),
        ];
        for (key, e) in times {
            if !e.value.is_finite() || e.value < 0.0 {
                return Err((
                    format!("parameters.{key}.value"),
                    format!("expected a time of 0 or more, got {}", e.value),
                ));
            }
        }
        let n = self.executors.value;
        if !n.is_finite() || n < 1.0 {
            return Err((
                "parameters.n.value".into(),
                format!("expected a count of executors of 1 or more, got {n}"),
            ));
        }
        Ok(())
    }

    /// The estimate of `parameter`, or `None` for one a calibration does not measure
    /// directly (t_cache comes from the latency levels).
    pub fn estimate(&self, parameter: Parameter) -> Option<&Estimate> {
        Some(match parameter {
            Parameter::ReadLatency => &self.read_latency,
            Parameter::WriteLatency => &self.write_latency,
            Parameter::ReadGap => &self.read_gap,
            Parameter::WriteGap => &self.write_gap,
            Parameter::OpTime => &self.op_time,
            Parameter::Executors => &self.executors,
            Parameter::CachedReadLatency => return None,
        })
    }

    /// Every measured parameter with its estimate, in the file's order.
    pub fn iter(&self) -> impl Iterator<Item = (Parameter, &Estimate)> {
        Parameter::MEASURED
            .into_iter()
            .filter_map(|p| self.estimate(p).map(|e| (p, e)))
    }

    /// The value of `parameter` in the library's units: seconds for a time, a count for n.
    pub fn value(&self, parameter: Parameter) -> Option<f64> {
        self.estimate(parameter)
            .map(|e| parameter.unit().from_file(e.value))
    }

    /// The value of a time parameter as [`Seconds`] (`None` for n and t_cache).
    pub fn seconds(&self, parameter: Parameter) -> Option<Seconds> {
        match parameter.unit() {
            Unit::Time => self.value(parameter).map(Seconds),
            Unit::Executors => None,
        }
    }
}

/// Build provenance of the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// Harness version.
    pub harness_version: String,
    /// Git commit the harness was built from, where known; `-dirty` after it where the build
    /// had uncommitted changes to tracked files.
    pub git_commit: String,
    /// When the calibration ran (UTC, RFC 3339).
    pub date: String,
    /// Whether `--quick` was used.
    pub quick: bool,
    /// How PoCL's and rayon's worker threads were placed (`backend/pinning.rs`); absent in
    /// files from before 2026-11-25, when neither was pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_threads: Option<crate::backend::pinning::Pinning>,
    /// Wall time of each stage, in the order they ran (empty in files from before
    /// 2026-11-26).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stage_seconds: Vec<StageTime>,
}

/// The wall time of one stage of a calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageTime {
    /// What ran (`read latency sweep`, `bandwidth sweep`, …).
    pub stage: String,
    /// Seconds it took.
    pub seconds: f64,
}

/// Read latency: the sweep and its levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadLatency {
    /// Every working set measured.
    pub sweep: Vec<LatencyPoint>,
    /// Plateaus (L1, L2, …, memory).
    pub levels: Vec<LatencyLevel>,
    /// Working set at which t was taken, bytes.
    pub memory_working_set_bytes: usize,
    /// Clock used for the cycle conversion, MHz, and where it came from.
    pub clock_mhz: Option<f64>,
    /// `nominal` (reported maximum) or `measured`.
    pub clock_source: String,
}

/// Executors from the device's attributes and from the bandwidth knee.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Executors {
    /// compute units × resident threads per unit.
    pub from_attributes: Option<u64>,
    /// The knee of the coalesced read sweep.
    pub from_knee: Option<f64>,
    /// Its CI from the slope's CI.
    pub knee_ci95: Option<[f64; 2]>,
}

/// A complete calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// File layout version.
    pub format_version: u32,
    /// The device fingerprint.
    pub device: DeviceInfo,
    /// How and when it was made.
    pub provenance: Provenance,
    /// The model's parameters.
    pub parameters: CalibratedParameters,
    /// The pointer-chase sweep and levels.
    pub read_latency: ReadLatency,
    /// Δt and ΔT per pattern.
    pub gaps: Vec<GapFit>,
    /// Executors by both methods.
    pub executors: Executors,
    /// Operation latencies and throughput.
    pub ops: OpTimes,
    /// Empty-kernel overhead.
    pub launch_overhead: LaunchOverhead,
    /// Transfer fits.
    pub transfers: Vec<TransferFit>,
    /// Streaming bandwidth per working set and per latency level (files before it have
    /// none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<BandwidthSweep>,
    /// BabelStream's five kernels at the memory level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub babelstream: Option<BabelStream>,
    /// The cache sizes the device and the OS report, beside the measured levels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reported_caches: Vec<ReportedCache>,
    /// The host's rates on one thread: the copy and triad sweep and the strided read sweep
    /// again, with every launch on the launching thread alone (docs/models.md §2.4, "A
    /// kernel on one thread moves at one thread's rates"). `None` on other devices and in
    /// older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_thread: Option<OneThread>,
    /// The transposing sweep: a j,k transpose's rate per working set (one thread's on the
    /// host), by which a prediction moves the workloads' transposes between memory levels
    /// (docs/models.md §2.4, "Transposes move by the transposing sweep"). `None` in older
    /// files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transposes: Option<TransposeSweep>,
    /// The gathering sweep: a square's transpose, reads gathered a row apart (one thread's
    /// on the host), by which a prediction moves SOR's copy back from its skewed layout
    /// between memory levels (docs/models.md §2.4, "Transposes move by the transposing
    /// sweep"). `None` in files before 2026-11-27's second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gathers: Option<TransposeSweep>,
    /// The gather pattern's sweep: reads at random indices (`b[x] = a[idx[x]] + p`, one
    /// thread's on the host), by which a prediction moves a launch a spec declares
    /// `access = "gather"` between memory levels (docs/models.md §2.4, "What the calibration
    /// supplies"). `None` in files before 2026-11-29.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_gathers: Option<GatherSweep>,
    /// The page walk sweep: a work item's step along a walk that touches more and more pages
    /// (one a step), by which a prediction charges the steps of a launch a spec declares
    /// `walks` what they cost along the target's walks (docs/models.md §2.4, "Walks"). `None`
    /// on the host (it runs no spec) and in files before 2026-12-01.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_walks: Option<PageWalkSweep>,
    /// The hyperplane sweep with the device's own launches, as the workloads' plane kernels
    /// run ([`OneThread::hyperplanes`] is the host's, whose workloads walk their planes on
    /// one thread): by it a prediction moves those kernels between working sets
    /// (docs/models.md §2.4, "A hyperplane sweep moves by the hyperplane sweep"). `None` on
    /// the host and in files before suite run 74 (2026-11-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyperplanes: Option<HyperplaneSweep>,
    /// Each access pattern a launch can declare, under its name, with its sweep's median rate
    /// per level ([`patterns::pattern_rates`], derived from the sweeps above when the file is
    /// written, for scripts: `.patterns[] | select(.pattern == "gather")`). Empty in files
    /// before 2026-11-29's afternoon.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub patterns: Vec<patterns::PatternRates>,
    /// The sampling plan used.
    pub sampling: SamplingPlan,
    /// Seeds of the random permutations, by purpose.
    pub seeds: BTreeMap<String, u64>,
    /// Raw samples in seconds, by quantity.
    pub samples: BTreeMap<String, Vec<f64>>,
}

/// The prefix of [`OneThread`]'s raw samples in [`Calibration::samples`].
pub const ONE_THREAD_SAMPLES: &str = "one_thread/";

/// What one thread of the host meets: most host twins of the validation workloads are one
/// loop on the launching thread (a line solve, a sweep over diagonals), and one core alone
/// streams from each level at its own rate, not at half of two cores' rate. Its raw samples
/// are kept under `one_thread/` in [`Calibration::samples`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OneThread {
    /// The copy and triad sweep over the same working sets as [`Calibration::bandwidth`].
    pub bandwidth: BandwidthSweep,
    /// The strided read sweep of the serialization intervals (each executor reads one
    /// element of its own cache line), as in [`Calibration::gaps`].
    pub strided_read: GapFit,
    /// The row-stencil sweep: one colour of red-black SOR updated in place over a grid per
    /// working set, by which a prediction moves the workloads' one-thread SOR sweeps between
    /// working sets (docs/models.md §2.4, "A stencil moves by the stencil sweep"). `None` in
    /// files before 2026-11-28.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stencil: Option<StencilSweep>,
    /// The hyperplane sweep: cubes relaxed plane by plane as LU-SSOR's sweeps relax them,
    /// upwards and downwards, by which a prediction moves the workloads' one-thread
    /// hyperplane sweeps between working sets (docs/models.md §2.4, "A hyperplane sweep moves
    /// by the hyperplane sweep"). `None` in files before 2026-11-28's evening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyperplanes: Option<HyperplaneSweep>,
}

/// A cache as the device or the OS reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportedCache {
    /// `L1`, `L2`, `L3`, or `last level` where only that is known.
    pub level: String,
    /// `data`, `unified`.
    pub kind: String,
    /// Its size, bytes.
    pub bytes: u64,
    /// Where the number came from.
    pub source: String,
}

/// Errors reading or writing calibration files.
#[derive(Debug, Error)]
pub enum CalibrationError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid calibration.
    #[error("{path}: field {field}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Path of the offending field, e.g. `parameters.dt.value`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl Calibration {
    /// Read and validate a calibration file.
    pub fn load(path: &Path) -> Result<Self, CalibrationError> {
        let text =
            crate::export::read_input_text(path).map_err(|source| CalibrationError::Read {
                path: path.to_path_buf(),
                source,
            })?;
        Self::from_json(&text).map_err(|(field, message)| CalibrationError::Parse {
            path: path.to_path_buf(),
            field,
            message,
        })
    }

    /// Parse from JSON text; the error names the field path and the problem.
    pub fn from_json(text: &str) -> Result<Self, (String, String)> {
        let de = &mut serde_json::Deserializer::from_str(text);
        let calibration: Self = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let field = if field == "." {
                "(top level)".into()
            } else {
                field
            };
            (field, e.into_inner().to_string())
        })?;
        calibration.parameters.check()?;
        Ok(calibration)
    }

    /// Pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a calibration always serialises")
    }

    /// Write to `path` atomically: a temporary file beside it, then a rename.
    pub fn save(&self, path: &Path) -> Result<(), CalibrationError> {
        write_atomically(path, self.to_json().as_bytes()).map_err(|source| {
            CalibrationError::Write {
                path: path.to_path_buf(),
                source,
            }
        })
    }
}

/// `calibrations/<slug>.json` under `dir`.
pub fn default_path(dir: &Path, device: &DeviceInfo) -> PathBuf {
    dir.join(format!("{}.json", device.slug()))
}

/// The calibration the unit tests share: `tests/fixtures/calibration-host.json`, a host
/// calibration with most raw samples left out.
#[cfg(test)]
pub(crate) fn test_fixture() -> Calibration {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/calibration-host.json"
    ));
    Calibration::load(&path).expect("the fixture parses")
}

/// BabelStream's five-kernel run as the unit tests set it: 2^25 floats, 100 iterations,
/// the `kernels` given.
#[cfg(test)]
pub(crate) fn test_babelstream(
    kernels: Vec<crate::bench::babelstream::BabelStreamKernel>,
) -> crate::bench::babelstream::BabelStream {
    crate::bench::babelstream::BabelStream {
        elements: 1 << 25,
        precision: crate::bench::babelstream::Precision::Float,
        iterations: 100,
        executors: 1 << 25,
        kernels,
        max_rel_error: 0.0,
    }
}

/// A hyperplane sweep as the unit tests set it: per (cube side, rate upwards, rate
/// downwards in GB/s), one point of one side, its interval its rate.
#[cfg(test)]
pub(crate) fn test_hyperplanes(points: &[(usize, f64, f64)]) -> HyperplaneSweep {
    HyperplaneSweep {
        points: points
            .iter()
            .map(|&(n, up, down)| crate::bench::hyperplane::HyperplanePoint {
                side: n,
                sides: vec![n],
                working_set_bytes: 4 * n * n * n,
                ascending_gbps: up,
                ascending_ci95_gbps: [up, up],
                descending_gbps: down,
                descending_ci95_gbps: [down, down],
                outliers: 0,
            })
            .collect(),
    }
}

/// A streaming sweep's point as the unit tests set it: `bytes` of working set at `gbps`, its
/// interval its rate, one pass, no outlier.
#[cfg(test)]
pub(crate) fn test_stream_point(
    bytes: usize,
    gbps: f64,
) -> crate::bench::bandwidth::BandwidthPoint {
    crate::bench::bandwidth::BandwidthPoint {
        working_set_bytes: bytes,
        gbps,
        ci95_gbps: [gbps, gbps],
        passes: 1,
        outliers: 0,
    }
}

/// A streaming table's row as the unit tests set it: `level` over `range`, copying at
/// `copy` GB/s, no other rate, no spread.
#[cfg(test)]
pub(crate) fn test_copy_level(
    level: &str,
    range: [usize; 2],
    copy: f64,
) -> crate::bench::bandwidth::LevelBandwidth {
    crate::bench::bandwidth::LevelBandwidth {
        level: level.into(),
        working_set_bytes: range,
        read_gbps: None,
        write_gbps: None,
        copy_gbps: Some(copy),
        triad_gbps: None,
        plateau_from_bytes: None,
        passes_in_launch: false,
        spread: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_below_the_noise_is_stored_as_zero_and_the_file_still_loads() {
        let e = Estimate::time_ns(-0.0334, [-0.09, 0.02], "slope".into());
        assert_eq!(e.value, 0.0);
        assert_eq!(e.ci95, [0.0, 0.02]);
        assert!(
            e.method.starts_with("slope; measured -0.0334 ns"),
            "{}",
            e.method
        );
        let kept = Estimate::time_ns(1.5, [1.0, 2.0], "slope".into());
        assert_eq!(
            (kept.value, kept.ci95, kept.method.as_str()),
            (1.5, [1.0, 2.0], "slope")
        );

        // A file whose Δt was fitted negative: refused as written before, loaded once the
        // measured value goes through `time_ns`.
        let dir = tempfile::tempdir().expect("a temp dir");
        let mut c = test_fixture();
        c.parameters.read_gap.value = -0.0334;
        let path = dir.path().join("c.json");
        std::fs::write(&path, serde_json::to_string(&c).expect("json")).expect("written");
        let err = Calibration::load(&path).expect_err("a negative Δt is refused");
        assert!(err.to_string().contains("parameters.dt.value"), "{err}");
        c.parameters.read_gap = Estimate::time_ns(-0.0334, [-0.09, 0.02], "slope".into());
        std::fs::write(&path, serde_json::to_string(&c).expect("json")).expect("written");
        Calibration::load(&path).expect("stored as 0, it loads");
    }
}
