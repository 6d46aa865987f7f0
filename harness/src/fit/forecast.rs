//! A run-time forecast from a small-scale series (PAPERS.md §2): per phase and for the whole
//! run, the paper's fractal fit with its prediction interval, beside the baselines fitted
//! to the same points (polynomials of degree 1–4, a·N^c + b), and the window warnings.

use serde::Serialize;

use super::baselines::{fit_power_offset, polynomial_baselines, PowerOffsetOptions};
use super::fit_error::FitError;
use super::fractal::{fit_power_law, fit_power_law_with_offset, window_warnings, FractalFit};
use super::phases::{predict_application, AppPrediction, PhaseOptions, PhaseSeries};
use crate::workloads::series::Series;

/// One phase's (or the total's) forecast.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseForecast {
    /// Phase name, or `total`.
    pub name: String,
    /// The paper's fit.
    pub fractal: FractalFit,
    /// a·N^c + b, where it could be fitted.
    pub power_offset_seconds: Option<f64>,
    /// Polynomial predictions by degree `[degree, seconds]`.
    pub polynomial_seconds: Vec<(usize, f64)>,
    /// Warnings about the window.
    pub warnings: Vec<String>,
}

/// The whole forecast.
#[derive(Debug, Clone, Serialize)]
pub struct Forecast {
    /// `paper` (every size, the paper's fit) or `windowed` (the sizes the calibration
    /// accepts, launch overhead subtracted; see [`super::window`]).
    pub variant: String,
    /// Workload.
    pub workload: String,
    /// Target size.
    pub target: f64,
    /// Per phase, then `total`.
    pub phases: Vec<PhaseForecast>,
    /// The paper's whole-application prediction from the selected phases' fractions.
    pub application: Option<AppPrediction>,
    /// Why the application prediction is missing, if it is.
    pub application_error: Option<String>,
    /// Phases left out of the fits, each with why (no time at some sizes).
    pub skipped_phases: Vec<String>,
}

fn forecast_one(
    name: &str,
    sizes: &[f64],
    times: &[f64],
    offsets: Option<&[f64]>,
    target: f64,
) -> Result<PhaseForecast, FitError> {
    let mut notes = Vec::new();
    let fractal = match offsets {
        Some(o) if o.iter().any(|&x| x > 0.0) => fit_power_law_with_offset(sizes, times, o, target)
            .or_else(|e| {
                notes.push(format!(
                    "launch overhead not subtracted ({e}); the paper's fit is used"
                ));
                fit_power_law(sizes, times, target)
            })?,
        _ => fit_power_law(sizes, times, target)?,
    };
    let power_offset_seconds =
        fit_power_offset(sizes, times, target, &PowerOffsetOptions::default())
            .ok()
            .map(|f| f.prediction_seconds);
    let polynomial_seconds = polynomial_baselines(sizes, times, target)
        .map(|fits| {
            fits.iter()
                .map(|f| (f.degree, f.prediction_seconds))
                .collect()
        })
        .unwrap_or_default();
    let mut warnings = window_warnings(&fractal, None);
    warnings.extend(notes);
    Ok(PhaseForecast {
        name: name.to_string(),
        fractal,
        power_offset_seconds,
        polynomial_seconds,
        warnings,
    })
}

/// Forecast every phase and the total of `series` at `target` by the paper's method.
pub fn forecast(series: &Series, target: f64) -> Result<Forecast, FitError> {
    forecast_variant(series, target, None)
}

/// Whether a phase is a kernel (it pays the launch overhead), not a transfer or host step.
pub fn is_kernel_phase(name: &str) -> bool {
    !matches!(name, "upload" | "download") && !name.starts_with("host:")
}

/// The `windowed` forecast: only the series points whose sizes are in `accepted`, and each
/// phase's time less its launches × `launch_seconds` before the log-log fit (added back,
/// extrapolated, at the target).
pub fn forecast_windowed(
    series: &Series,
    target: f64,
    accepted: &[usize],
    launch_seconds: f64,
) -> Result<Forecast, FitError> {
    let mut window = series.clone();
    window.points.retain(|p| accepted.contains(&p.size));
    forecast_variant(&window, target, Some(launch_seconds))
}

fn forecast_variant(
    series: &Series,
    target: f64,
    launch_seconds: Option<f64>,
) -> Result<Forecast, FitError> {
    let sizes: Vec<f64> = series.points.iter().map(|p| p.size as f64).collect();
    let mut names: Vec<String> = Vec::new();
    for p in &series.points {
        for ph in &p.phases {
            if !names.contains(&ph.name) {
                names.push(ph.name.clone());
            }
        }
    }
    let times_of = |name: &str| -> Vec<f64> {
        series
            .points
            .iter()
            .map(|p| {
                p.phases
                    .iter()
                    .find(|ph| ph.name == name)
                    .map_or(0.0, |ph| ph.median_seconds)
            })
            .collect()
    };
    let mut phases = Vec::new();
    let mut phase_columns = Vec::new();
    let mut skipped_phases = Vec::new();
    let offsets_of = |name: &str| -> Vec<f64> {
        let launch = launch_seconds.unwrap_or(0.0);
        series
            .points
            .iter()
            .map(|p| {
                p.phases
                    .iter()
                    .filter(|ph| (name == "total" || ph.name == name) && is_kernel_phase(&ph.name))
                    .map(|ph| ph.count as f64 * launch)
                    .sum()
            })
            .collect()
    };
    let offsets = |name: &str| launch_seconds.map(|_| offsets_of(name));
    for name in &names {
        let times = times_of(name);
        let missing: Vec<String> = series
            .points
            .iter()
            .zip(&times)
            .filter(|(_, &t)| t <= 0.0)
            .map(|(p, _)| p.size.to_string())
            .collect();
        if !missing.is_empty() {
            skipped_phases.push(format!(
                "{name}: no time at N = {}, not fitted",
                missing.join(", ")
            ));
        } else {
            phases.push(forecast_one(
                name,
                &sizes,
                &times,
                offsets(name).as_deref(),
                target,
            )?);
            phase_columns.push((name.clone(), times));
        }
    }
    let totals: Vec<f64> = series
        .points
        .iter()
        .map(|p| p.total.median_seconds)
        .collect();
    phases.push(forecast_one(
        "total",
        &sizes,
        &totals,
        offsets("total").as_deref(),
        target,
    )?);
    // The phases cover the whole run, so the application total is the sum of the phase
    // medians (the median of the totals differs from it by sampling noise and would leave
    // a negative "rest").
    let phase_sums: Vec<f64> = (0..sizes.len())
        .map(|i| phase_columns.iter().map(|(_, t)| t[i]).sum())
        .collect();
    let app = predict_application(
        &PhaseSeries::new(sizes, phase_columns).with_totals(phase_sums),
        target,
        &PhaseOptions::default(),
    );
    let (application, application_error) = match app {
        Ok(a) => (Some(a), None),
        Err(e) => (None, Some(e.to_string())),
    };
    Ok(Forecast {
        variant: if launch_seconds.is_some() {
            "windowed"
        } else {
            "paper"
        }
        .to_string(),
        workload: series.workload.clone(),
        target,
        phases,
        application,
        application_error,
        skipped_phases,
    })
}
