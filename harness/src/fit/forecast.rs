//! A run-time forecast from a small-scale series (docs/models.md §2): per phase and for the whole
//! run, the paper's fractal fit with its prediction interval, beside the baselines fitted
//! to the same points (polynomials of degree 1–4, a·N^c + b), and the window warnings.

use serde::{Deserialize, Serialize};

use super::baselines::{fit_power_offset, polynomial_baselines, PowerOffsetOptions};
use super::fit_error::FitError;
use super::fractal::{fit_power_law, fit_power_law_with_offset, window_warnings, FractalFit};
use super::phases::{predict_application, AppPrediction, PhaseOptions, PhaseSeries};
use crate::units::Seconds;

/// One phase's median at one size, and how many launches (or transfers) it made.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseMedian {
    /// Phase name.
    pub name: String,
    /// Median time over the repeats, seconds.
    pub median_seconds: f64,
    /// Launches (or transfers) per run.
    pub count: u64,
    /// Bytes moved per run, where known.
    pub bytes: Option<u64>,
}

/// One size of a series as the forecast sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeMedians {
    /// Problem size N.
    pub size: usize,
    /// The phases, in the run's order.
    pub phases: Vec<PhaseMedian>,
    /// Median of the run's total, seconds.
    pub total_seconds: f64,
}

/// A small-scale series reduced to the numbers a forecast needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SeriesMedians {
    /// What was measured (a workload's name), carried into the forecast.
    pub workload: String,
    /// The sizes.
    pub points: Vec<SizeMedians>,
}

/// Which prediction recipe made a forecast.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The paper's recipe: every small size, a plain log-log fit.
    Paper,
    /// Ours: only the sizes the calibration accepts, launch overhead subtracted before the
    /// fit and added back at the target ([`super::window`]).
    Windowed,
    /// Ours: the saturated sizes of any memory level, each one's kernel time moved to the
    /// target's level by the ratio of the calibrated streaming rates, then as `windowed`
    /// ([`forecast_calibrated`]).
    Calibrated,
}

impl Variant {
    /// Every variant, in the order tables show them.
    pub const ALL: [Variant; 3] = [Variant::Paper, Variant::Windowed, Variant::Calibrated];

    /// The name in files and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Variant::Paper => "paper",
            Variant::Windowed => "windowed",
            Variant::Calibrated => "calibrated",
        }
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

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
    /// The recipe that made it.
    pub variant: Variant,
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
pub fn forecast(series: &SeriesMedians, target: f64) -> Result<Forecast, FitError> {
    forecast_variant(series, target, None, Variant::Paper)
}

/// Whether a phase is a kernel (it pays the launch overhead), not a transfer (`upload`,
/// `download`, `download …` such as SOR's `download eps`) or a host step (`host:…`).
pub fn is_kernel_phase(name: &str) -> bool {
    !matches!(name, "upload" | "download")
        && !name.starts_with("download ")
        && !name.starts_with("host:")
}

/// The `windowed` forecast: only the series points whose sizes are in `accepted`, and each
/// phase's time less its launches × `launch` before the log-log fit (added back,
/// extrapolated, at the target).
pub fn forecast_windowed(
    series: &SeriesMedians,
    target: f64,
    accepted: &[usize],
    launch: Seconds,
) -> Result<Forecast, FitError> {
    let mut window = series.clone();
    window.points.retain(|p| accepted.contains(&p.size));
    forecast_variant(&window, target, Some(launch), Variant::Windowed)
}

/// How one small size's times move to the target's memory level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LevelMove {
    /// The small size.
    pub size: usize,
    /// R(W_i): the calibrated streaming rate at its working set, bytes per second (0 where
    /// the calibration has no sweep; the factor is then 1).
    pub rate: f64,
    /// g_i = R(W_i) / R(W_target), for kernel phases.
    pub factor: f64,
    /// For each transfer phase (`upload`, `download`): the calibrated seconds per byte of a
    /// transfer as large as the target's over that of this size's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transfer_factors: Vec<(String, f64)>,
}

/// The `calibrated` forecast (docs/models.md §2.4): the points whose sizes are in `moves`,
/// each kernel phase's work (its time less its launches × `launch`) moved to the target's
/// memory level as a roofline would: the kernel takes the longer of its measured work and the
/// time its memory traffic takes at the target level's streaming rate:
///
/// `w_i = T_i − k_i·L`, `T'_i = k_i·L + max(w_i, B_i / R(W_target))`
///
/// (written with the stored factors, `B_i / R(W_target) = w_i · e_i · g_i` with
/// `e_i = B_i / (w_i · R(W_i))` and `g_i = R(W_i) / R(W_target)`), where B_i is the phase's
/// bytes moved (a phase that does not say does not move, as in `windowed`). e_i is not capped
/// at 1: a kernel that streams faster than the sweep did at its working set still cannot
/// stream faster at the target than the target level's rate. A transfer
/// phase moves by its [`LevelMove::transfer_factors`] (the calibrated transfer sweep's time
/// per byte at the target's transfer size over that at this size's); host steps do not move.
/// Then the log-log fit and extrapolation of the windowed variant. A kernel whose traffic fits
/// in its time even at the target's rate (compute- or latency-bound) keeps its time.
pub fn forecast_calibrated(
    series: &SeriesMedians,
    target: f64,
    moves: &[LevelMove],
    launch: Seconds,
) -> Result<Forecast, FitError> {
    let mut window = series.clone();
    window.points.retain_mut(|p| {
        let Some(m) = moves.iter().find(|m| m.size == p.size) else {
            return false;
        };
        let mut moved = 0.0;
        for ph in p.phases.iter_mut() {
            if let Some((_, g)) = m.transfer_factors.iter().find(|t| t.0 == ph.name) {
                let extra = ph.median_seconds * (g - 1.0);
                moved += extra;
                ph.median_seconds += extra;
                continue;
            }
            if !is_kernel_phase(&ph.name) {
                continue;
            }
            let offset = ph.count as f64 * launch.0;
            let work = ph.median_seconds - offset;
            if work > 0.0 {
                let share = ph.bytes.map_or(0.0, |b| b as f64 / (work * m.rate));
                let extra = work * ((share * m.factor).max(1.0) - 1.0);
                moved += extra;
                ph.median_seconds += extra;
            }
        }
        p.total_seconds += moved;
        true
    });
    forecast_variant(&window, target, Some(launch), Variant::Calibrated)
}

fn forecast_variant(
    series: &SeriesMedians,
    target: f64,
    launch: Option<Seconds>,
    variant: Variant,
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
    // Launches × overhead per point, for the windowed variant (`total`: every kernel phase).
    let offsets = |name: &str| -> Option<Vec<f64>> {
        let launch = launch?.0;
        Some(
            series
                .points
                .iter()
                .map(|p| {
                    p.phases
                        .iter()
                        .filter(|ph| {
                            (name == "total" || ph.name == name) && is_kernel_phase(&ph.name)
                        })
                        .map(|ph| ph.count as f64 * launch)
                        .sum()
                })
                .collect(),
        )
    };
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
    let totals: Vec<f64> = series.points.iter().map(|p| p.total_seconds).collect();
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
        variant,
        workload: series.workload.clone(),
        target,
        phases,
        application,
        application_error,
        skipped_phases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAUNCH: f64 = 1e-5;
    const LAUNCHES: u64 = 100;

    /// 100 launches of overhead L plus 1e-9·N² of work.
    fn time(n: f64) -> f64 {
        LAUNCHES as f64 * LAUNCH + 1e-9 * n * n
    }

    fn point(size: usize, with_upload: bool) -> SizeMedians {
        let t = time(size as f64);
        let mut phases = vec![PhaseMedian {
            name: "kernel".into(),
            median_seconds: t,
            count: LAUNCHES,
            bytes: None,
        }];
        if with_upload {
            phases.push(PhaseMedian {
                name: "upload".into(),
                median_seconds: 1e-6,
                count: 1,
                bytes: None,
            });
        }
        SizeMedians {
            size,
            phases,
            total_seconds: t,
        }
    }

    fn series(points: Vec<SizeMedians>) -> SeriesMedians {
        SeriesMedians {
            workload: "synthetic".into(),
            points,
        }
    }

    #[test]
    fn the_windowed_variant_removes_the_launch_overhead() {
        let s = series([64, 128, 256, 512].map(|n| point(n, false)).to_vec());
        let target = 4096.0;
        let paper = forecast(&s, target).expect("fits");
        let windowed =
            forecast_windowed(&s, target, &[64, 128, 256, 512], Seconds(LAUNCH)).expect("fits");
        assert_eq!(
            (paper.variant, windowed.variant),
            (Variant::Paper, Variant::Windowed)
        );
        let kernel = |f: &Forecast| {
            f.phases
                .iter()
                .find(|p| p.name == "kernel")
                .expect("kernel phase")
                .fractal
                .clone()
        };
        let (p, w) = (kernel(&paper), kernel(&windowed));
        // With the constant removed the exponent is the work's, 2, and the prediction exact.
        assert!((w.c - 2.0).abs() < 1e-9, "c = {}", w.c);
        assert!((w.prediction_seconds / time(target) - 1.0).abs() < 1e-9);
        // The paper's fit sees a flatter curve and misses.
        assert!(p.c < 1.9, "c = {}", p.c);
        assert!((p.prediction_seconds / time(target) - 1.0).abs() > 0.05);
    }

    #[test]
    fn the_window_keeps_only_the_accepted_sizes() {
        let s = series([64, 128, 256, 512, 1024].map(|n| point(n, false)).to_vec());
        let w = forecast_windowed(&s, 8192.0, &[256, 512, 1024], Seconds(LAUNCH)).expect("fits");
        let total = w.phases.iter().find(|p| p.name == "total").expect("total");
        assert_eq!(total.fractal.sizes, vec![256.0, 512.0, 1024.0]);
        assert!(forecast_windowed(&s, 8192.0, &[512, 1024], Seconds(LAUNCH)).is_err());
    }

    #[test]
    fn the_calibrated_variant_moves_each_size_to_the_targets_level() {
        const RATE: f64 = 1e12;
        // Sizes 64 and 128 ran in a cache twice as fast as the target's level (g = 2); 256
        // and 512 in the target's level. Moved, every point lies on the target level's curve.
        let cached = |n: usize| {
            let mut p = point(n, true);
            let work = time(n as f64) - LAUNCHES as f64 * LAUNCH;
            p.phases[0].median_seconds = LAUNCHES as f64 * LAUNCH + work / 2.0;
            // Exactly the bytes the level streams in that time (e = 1): all of the work is
            // streaming, and at the target's rate it takes twice as long.
            p.phases[0].bytes = Some((work / 2.0 * RATE).round() as u64);
            p.total_seconds = p.phases[0].median_seconds;
            p
        };
        let s = series(vec![
            cached(64),
            cached(128),
            point(256, false),
            point(512, false),
        ]);
        let moves = |g: f64| {
            [(64, g), (128, g), (256, 1.0), (512, 1.0)].map(|(size, factor)| LevelMove {
                size,
                rate: RATE,
                factor,
                transfer_factors: Vec::new(),
            })
        };
        let target = 4096.0;
        let f = forecast_calibrated(&s, target, &moves(2.0), Seconds(LAUNCH)).expect("fits");
        assert_eq!(f.variant, Variant::Calibrated);
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        assert!(
            (total.fractal.c - 2.0).abs() < 1e-6,
            "c = {}",
            total.fractal.c
        );
        assert!((total.fractal.prediction_seconds / time(target) - 1.0).abs() < 1e-6);
        // The upload is a transfer: not moved (and missing at two sizes, so not fitted).
        assert_eq!(f.skipped_phases.len(), 1);
        // Without the factors the same points bend the fit.
        let wrong = forecast_calibrated(&s, target, &moves(1.0), Seconds(LAUNCH)).expect("fits");
        // A phase that does not say what it moves is not moved either.
        let mut silent = s.clone();
        for p in &mut silent.points {
            p.phases[0].bytes = None;
        }
        let kept =
            forecast_calibrated(&silent, target, &moves(2.0), Seconds(LAUNCH)).expect("fits");
        let total = kept
            .phases
            .iter()
            .find(|p| p.name == "total")
            .expect("total");
        let unmoved = wrong
            .phases
            .iter()
            .find(|p| p.name == "total")
            .expect("total");
        assert_eq!(
            total.fractal.prediction_seconds,
            unmoved.fractal.prediction_seconds
        );
        let total = wrong
            .phases
            .iter()
            .find(|p| p.name == "total")
            .expect("total");
        assert!((total.fractal.prediction_seconds / time(target) - 1.0).abs() > 0.1);
    }

    #[test]
    fn a_kernel_slows_only_where_its_traffic_outgrows_its_time() {
        // 1 ms of work (no launches) moving 1 MB at a level rate of 4 GB/s: its traffic takes
        // 0.25 ms (e = 0.25), 0.5 ms in a level half as fast (g = 2): still within 1 ms.
        let p = SizeMedians {
            size: 100,
            phases: vec![PhaseMedian {
                name: "k".into(),
                median_seconds: 1e-3,
                count: 1,
                bytes: Some(1_000_000),
            }],
            total_seconds: 1e-3,
        };
        let s = series(vec![
            p.clone(),
            SizeMedians {
                size: 200,
                ..p.clone()
            },
            SizeMedians { size: 400, ..p },
        ]);
        let moves = [100, 200, 400].map(|size| LevelMove {
            size,
            rate: 4e9,
            factor: 2.0,
            transfer_factors: Vec::new(),
        });
        let f = forecast_calibrated(&s, 800.0, &moves, Seconds(0.0)).expect("fits");
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        assert!((total.fractal.prediction_seconds - 1e-3).abs() < 1e-12);
        // Moving 3 MB (e = 0.75): 1.5 ms of traffic at the target's level.
        let mut heavy = s.clone();
        for p in &mut heavy.points {
            p.phases[0].bytes = Some(3_000_000);
        }
        let f = forecast_calibrated(&heavy, 800.0, &moves, Seconds(0.0)).expect("fits");
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        assert!((total.fractal.prediction_seconds - 1.5e-3).abs() < 1e-12);
        // Moving 10 MB in 1 ms, faster than the sweep's 4 GB/s there (e = 2.5): at the
        // target's 2 GB/s the traffic takes 5 ms, not the 2 ms a capped share would give.
        let mut fast = s.clone();
        for p in &mut fast.points {
            p.phases[0].bytes = Some(10_000_000);
        }
        let f = forecast_calibrated(&fast, 800.0, &moves, Seconds(0.0)).expect("fits");
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        assert!((total.fractal.prediction_seconds - 5e-3).abs() < 1e-12);
    }

    #[test]
    fn a_phase_missing_at_a_size_is_reported_not_dropped_silently() {
        let s = series(vec![point(64, true), point(128, false), point(256, true)]);
        let f = forecast(&s, 1024.0).expect("fits");
        assert!(f.phases.iter().all(|p| p.name != "upload"));
        assert_eq!(
            f.skipped_phases,
            vec!["upload: no time at N = 128, not fitted"]
        );
    }
}
