//! Small-scale run series: a workload at a few sizes, each repeated, summarised per phase
//! (median, 95 % CI, fraction) — the input of the fractal predictor (docs/models.md §2).
//! It is written as JSON and CSV (and, on request, Markdown and Extra-P text) through
//! [`crate::export`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::{Device, DeviceInfo};
use crate::export::extrap::{Measurements, PhaseSamples, PointSamples};
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::forecast::{PhaseMedian, SeriesMedians, SizeMedians};
use crate::fit::stats::Summary;
use crate::workloads::{check_fits, PhaseTiming, RunResult, Workload, WorkloadError};

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

    /// The numbers a forecast needs: per size, each phase's median and launches.
    pub fn medians(&self) -> SeriesMedians {
        SeriesMedians {
            workload: self.workload.clone(),
            points: self
                .points
                .iter()
                .map(|p| SizeMedians {
                    size: p.size,
                    phases: p
                        .phases
                        .iter()
                        .map(|ph| PhaseMedian {
                            name: ph.name.clone(),
                            median_seconds: ph.median_seconds,
                            count: ph.count,
                        })
                        .collect(),
                    total_seconds: p.total.median_seconds,
                })
                .collect(),
        }
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
    json::read_json(path).map_err(|e| WorkloadError::Invalid(e.to_string()))
}

impl Exportable for Series {
    fn kind(&self) -> &'static str {
        "series"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per size and phase, and a `total` row per size.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "size",
            "phase",
            "median_s",
            "ci95_low_s",
            "ci95_high_s",
            "fraction",
            "count",
        ]);
        for p in &self.points {
            for ph in &p.phases {
                t.row([
                    p.size.to_string(),
                    ph.name.clone(),
                    ph.median_seconds.to_string(),
                    ph.ci95[0].to_string(),
                    ph.ci95[1].to_string(),
                    ph.fraction.to_string(),
                    ph.count.to_string(),
                ]);
            }
            t.row([
                p.size.to_string(),
                "total".into(),
                p.total.median_seconds.to_string(),
                p.total.ci95[0].to_string(),
                p.total.ci95[1].to_string(),
                "1".into(),
                "1".into(),
            ]);
        }
        t
    }

    fn extrap_measurements(&self) -> Option<Measurements> {
        Some(Measurements {
            points: self
                .points
                .iter()
                .map(|p| PointSamples {
                    size: p.size,
                    phases: p
                        .phases
                        .iter()
                        .map(|ph| PhaseSamples {
                            name: ph.name.clone(),
                            samples: ph.samples.clone(),
                        })
                        .collect(),
                    total: PhaseSamples {
                        name: "total".into(),
                        samples: p.total.samples.clone(),
                    },
                })
                .collect(),
        })
    }
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
        let pick = |r: &RunResult, f: fn(&PhaseTiming) -> f64| {
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
        check_fits(workload, device, size)?;
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
