//! Small-scale run series: a workload at a few sizes, each repeated, summarised per phase
//! (median, 95 % CI, fraction) — the input of the fractal predictor (PAPERS.md §2).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{RunResult, Workload, WorkloadError};
use crate::backend::{Device, DeviceInfo};
use crate::fit::stats::Summary;

/// One phase at one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhasePoint {
    /// Phase name.
    pub name: String,
    /// Median time over the repeats, seconds.
    pub median_seconds: f64,
    /// 95 % CI of the median, seconds.
    pub ci95: [f64; 2],
    /// Median fraction of the run's total.
    pub fraction: f64,
    /// Launches (or transfers) per run.
    pub count: u64,
    /// Every repeat's time, seconds.
    pub samples: Vec<f64>,
}

/// The total of one size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TotalPoint {
    /// Median total, seconds.
    pub median_seconds: f64,
    /// 95 % CI, seconds.
    pub ci95: [f64; 2],
    /// Every repeat's total, seconds.
    pub samples: Vec<f64>,
}

/// One size of the series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Problem size N.
    pub size: usize,
    /// Phases in first-seen order.
    pub phases: Vec<PhasePoint>,
    /// The run's total.
    pub total: TotalPoint,
}

/// A whole series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Workload name.
    pub workload: String,
    /// Layout, where the workload has two.
    pub layout: Option<String>,
    /// The device.
    pub device: DeviceInfo,
    /// Iterations per run.
    pub iterations: usize,
    /// Runs per size.
    pub repeats: usize,
    /// Whether every run was verified against the host.
    pub verified: bool,
    /// The sizes, ascending.
    pub points: Vec<SeriesPoint>,
}

impl Series {
    /// Read a series file; errors name the field.
    pub fn load(path: &Path) -> Result<Self, WorkloadError> {
        read_json(path)
    }

    /// The CSV form: one row per size and phase (and a `total` row per size).
    pub fn to_csv(&self) -> String {
        let mut out = String::from("size,phase,median_s,ci95_low_s,ci95_high_s,fraction,count\n");
        for p in &self.points {
            for ph in &p.phases {
                out.push_str(&format!(
                    "{},{},{},{},{},{},{}\n",
                    p.size,
                    crate::plot::csv_field(&ph.name),
                    ph.median_seconds,
                    ph.ci95[0],
                    ph.ci95[1],
                    ph.fraction,
                    ph.count
                ));
            }
            out.push_str(&format!(
                "{},total,{},{},{},1,1\n",
                p.size, p.total.median_seconds, p.total.ci95[0], p.total.ci95[1]
            ));
        }
        out
    }

    /// `<dir>/<device-slug>.series.<workload>[-<layout>]` (add `.json` / `.csv`).
    pub fn stem(&self, dir: &Path) -> PathBuf {
        let layout = self
            .layout
            .as_ref()
            .map_or(String::new(), |l| format!("-{l}"));
        dir.join(format!(
            "{}.series.{}{layout}",
            self.device.slug(),
            self.workload
        ))
    }
}

/// Read a JSON file written by a command; an error names the file and the field.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, WorkloadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| WorkloadError::Invalid(format!("{}: {e}", path.display())))?;
    let de = &mut serde_json::Deserializer::from_str(&text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        WorkloadError::Invalid(format!(
            "{}: field {}: {}",
            path.display(),
            e.path(),
            e.inner()
        ))
    })
}

fn summary(values: &[f64], what: &str) -> Result<Summary, WorkloadError> {
    Summary::new(values).map_err(|e| WorkloadError::Invalid(format!("{what}: {e}")))
}

/// Summarise the repeats of one size.
pub fn summarise(size: usize, runs: &[RunResult]) -> Result<SeriesPoint, WorkloadError> {
    let first = runs
        .first()
        .ok_or_else(|| WorkloadError::Invalid("a series point needs at least one run".into()))?;
    let mut phases = Vec::new();
    for phase in &first.phases {
        let pick = |r: &RunResult, f: fn(&super::PhaseTiming) -> f64| {
            r.phases
                .iter()
                .find(|p| p.name == phase.name)
                .map_or(0.0, f)
        };
        let samples: Vec<f64> = runs.iter().map(|r| pick(r, |p| p.seconds)).collect();
        let fractions: Vec<f64> = runs.iter().map(|r| pick(r, |p| p.fraction)).collect();
        let s = summary(&samples, &phase.name)?;
        phases.push(PhasePoint {
            name: phase.name.clone(),
            median_seconds: s.median,
            ci95: s.ci95,
            fraction: summary(&fractions, &phase.name)?.median,
            count: phase.count,
            samples,
        });
    }
    let totals: Vec<f64> = runs.iter().map(|r| r.total_seconds).collect();
    let t = summary(&totals, "total")?;
    Ok(SeriesPoint {
        size,
        phases,
        total: TotalPoint {
            median_seconds: t.median,
            ci95: t.ci95,
            samples: totals,
        },
    })
}

/// Run `workload` at each size `repeats` times (the first run of each size verified against
/// the host) and summarise. `progress` is told each finished size.
pub fn run_series(
    workload: &dyn Workload,
    layout: Option<String>,
    device: &dyn Device,
    sizes: &[usize],
    iterations: usize,
    repeats: usize,
    mut progress: impl FnMut(&SeriesPoint),
) -> Result<Series, WorkloadError> {
    if sizes.is_empty() || repeats == 0 {
        return Err(WorkloadError::Invalid(
            "a series needs at least one size and one repeat".into(),
        ));
    }
    let mut sorted = sizes.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    for &size in &sorted {
        super::check_fits(workload, device, size)?;
    }
    let mut points = Vec::with_capacity(sorted.len());
    for &size in &sorted {
        // A warm-up run, verified: compilation and first-touch costs stay out of the series.
        workload.run(device, size, iterations, true)?;
        let runs = (0..repeats)
            .map(|_| workload.run(device, size, iterations, false))
            .collect::<Result<Vec<_>, _>>()?;
        let point = summarise(size, &runs)?;
        progress(&point);
        points.push(point);
    }
    Ok(Series {
        workload: workload.name().to_string(),
        layout,
        device: device.info().clone(),
        iterations,
        repeats,
        verified: true,
        points,
    })
}
