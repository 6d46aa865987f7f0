//! Validation of the fractal prediction (PAPERS.md §2): run the small series, predict each
//! large size, run it, and report the absolute percentage error per phase and in total.

use serde::Serialize;

use super::series::{run_series, summarise, Series, SeriesPoint};
use super::{Workload, WorkloadError};
use crate::backend::Device;
use crate::fit::forecast::forecast;
use crate::fit::stats::median_of_sorted;

/// One phase (or `total`) at one large size.
#[derive(Debug, Clone, Serialize)]
pub struct ValidationRow {
    /// Large size.
    pub size: usize,
    /// Phase name, or `total` (the fractal fit of the totals), or `application` (the
    /// paper's step-3 prediction from the phases' fractions).
    pub phase: String,
    /// Predicted seconds.
    pub predicted_seconds: f64,
    /// Its 95 % prediction interval, where there is one.
    pub interval: Option<[f64; 2]>,
    /// Measured median seconds.
    pub measured_seconds: f64,
    /// |predicted − measured| / measured × 100.
    pub abs_percent_error: f64,
}

/// Error statistics over the rows of one kind.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorSummary {
    /// Mean absolute percentage error.
    pub mean: f64,
    /// Median.
    pub median: f64,
    /// Maximum.
    pub max: f64,
}

/// The whole validation.
#[derive(Debug, Clone, Serialize)]
pub struct Validation {
    /// The small series the fits used.
    pub series: Series,
    /// The large sizes measured.
    pub large: Vec<SeriesPoint>,
    /// Every row.
    pub rows: Vec<ValidationRow>,
    /// Errors over the `total` rows.
    pub total_error: ErrorSummary,
    /// Errors over every row.
    pub all_error: ErrorSummary,
}

fn summary(values: &[f64]) -> ErrorSummary {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    ErrorSummary {
        mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
        median: if v.is_empty() {
            f64::NAN
        } else {
            median_of_sorted(&v)
        },
        max: v.last().copied().unwrap_or(f64::NAN),
    }
}

fn row(
    size: usize,
    phase: &str,
    predicted: f64,
    interval: Option<[f64; 2]>,
    measured: f64,
) -> ValidationRow {
    ValidationRow {
        size,
        phase: phase.to_string(),
        predicted_seconds: predicted,
        interval,
        measured_seconds: measured,
        abs_percent_error: (predicted - measured).abs() / measured * 100.0,
    }
}

/// Run the small series, then each large size `repeats` times, and compare.
#[allow(clippy::too_many_arguments)]
pub fn validate(
    workload: &dyn Workload,
    layout: Option<String>,
    device: &dyn Device,
    small: &[usize],
    large: &[usize],
    iterations: usize,
    repeats: usize,
    mut progress: impl FnMut(&str),
) -> Result<Validation, WorkloadError> {
    if large.is_empty() {
        return Err(WorkloadError::Invalid(
            "give at least one --large size".into(),
        ));
    }
    for &size in large {
        super::check_fits(workload, device, size)?;
    }
    let series = run_series(workload, layout, device, small, iterations, repeats, |p| {
        progress(&format!("small N = {} done", p.size))
    })?;
    let mut rows = Vec::new();
    let mut measured = Vec::new();
    for &size in large {
        let f =
            forecast(&series, size as f64).map_err(|e| WorkloadError::Invalid(e.to_string()))?;
        workload.run(device, size, iterations, false)?;
        let runs = (0..repeats.max(1))
            .map(|_| workload.run(device, size, iterations, false))
            .collect::<Result<Vec<_>, _>>()?;
        let point = summarise(size, &runs)?;
        for p in &f.phases {
            let m = if p.name == "total" {
                Some(point.total.median_seconds)
            } else {
                point
                    .phases
                    .iter()
                    .find(|ph| ph.name == p.name)
                    .map(|ph| ph.median_seconds)
            };
            if let Some(m) = m.filter(|&m| m > 0.0) {
                rows.push(row(
                    size,
                    &p.name,
                    p.fractal.prediction_seconds,
                    Some(p.fractal.prediction_interval_seconds),
                    m,
                ));
            }
        }
        if let Some(app) = &f.application {
            rows.push(row(
                size,
                "application",
                app.prediction_seconds,
                None,
                point.total.median_seconds,
            ));
        }
        progress(&format!("large N = {size} done"));
        measured.push(point);
    }
    let totals: Vec<f64> = rows
        .iter()
        .filter(|r| r.phase == "total")
        .map(|r| r.abs_percent_error)
        .collect();
    let all: Vec<f64> = rows.iter().map(|r| r.abs_percent_error).collect();
    Ok(Validation {
        series,
        large: measured,
        total_error: summary(&totals),
        all_error: summary(&all),
        rows,
    })
}

impl Validation {
    /// CSV: one row per size and phase.
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "size,phase,predicted_s,pi_low_s,pi_high_s,measured_s,abs_percent_error\n",
        );
        for r in &self.rows {
            let (lo, hi) = r.interval.map_or((String::new(), String::new()), |i| {
                (i[0].to_string(), i[1].to_string())
            });
            out.push_str(&format!(
                "{},{},{},{lo},{hi},{},{}\n",
                r.size,
                crate::plot::csv_field(&r.phase),
                r.predicted_seconds,
                r.measured_seconds,
                r.abs_percent_error
            ));
        }
        out
    }
}
