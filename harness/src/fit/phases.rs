//! Phase selection and whole-application prediction, steps 1 and 3 of Escobar & Boppana's
//! method (IEEE HPCC 2018, §III-A and §III-C; docs/models.md §2).
//!
//! 1. From a few profiled small runs, each phase's (function's, kernel's) share of the run
//!    time; keep the phases that together hold most of the time at the largest size, largest
//!    first (the paper found > 70 % in one or two phases for most applications), and find the
//!    size n from which those shares are stable.
//! 2. Fit each selected phase by the fractal model ([`super::fractal`]) and predict its time
//!    T_pj at the target n_L.
//! 3. Extrapolate each selected phase's share f_pj to n_L as well, the rest of the time being
//!    f_0 so that `f_0 + Σ_j f_pj = 1`, and predict the application as
//!    `T_app = Σ_j T_pj(n_L) / Σ_j f_pj(n_L)` (§III-C).
//!
//! The paper says "regression" for the shares without giving its form. Here each share is
//! extrapolated relative to the rest: `ln(f_pj / f_0)` against `ln n` by the same fractal
//! fit (f_pj/f_0 = T_pj/T_rest, a ratio of times), and back-transformed by
//! `f_pj = ρ_j / (1 + Σ_i ρ_i)`, `f_0 = 1 / (1 + Σ_i ρ_i)`. Every share stays in (0, 1) and
//! they sum to 1 — the paper's normalisation is built in — and when every phase and the rest
//! follow power laws the prediction is exact: `T_app = T_rest + Σ_j T_pj`.

use serde::{Deserialize, Serialize};

use super::fit_error::FitError;
use super::fractal::{fit_power_law, validate_series, FractalFit, MIN_POINTS};

/// Default share of the total time that the selected phases must hold at the largest size
/// (the paper's "more than 70 % in most applications", §III-A).
pub const DEFAULT_THRESHOLD: f64 = 0.70;

/// Default stability criterion: the shares are stable from the first size after which every
/// selected phase's share changes by less than 0.05 (five percentage points) between each
/// pair of consecutive sizes. The paper reads this off a plot (its Fig. 3); 5 points is
/// about the scatter of its figures once flat.
pub const DEFAULT_STABILITY_TOLERANCE: f64 = 0.05;

/// The rest of the time (total minus the selected phases) counts as zero when it is below
/// this fraction of the total, and a total below the sum of the phases by less than this
/// fraction is taken as rounding.
pub const REST_ZERO_TOLERANCE: f64 = 1e-9;

/// Per-size, per-phase times of an application, as read from a profiler (nvprof, TAU, or the
/// harness's own kernel timers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSeries {
    /// The input sizes n_i, distinct, in any order.
    pub sizes: Vec<f64>,
    /// Each phase's name and its time at each size, seconds, in the order of `sizes`.
    pub phases: Vec<(String, Vec<f64>)>,
    /// The whole application's time at each size, seconds; `None` when the phases are the
    /// whole application (the total is then their sum).
    pub totals_seconds: Option<Vec<f64>>,
}

/// Settings of phase selection and prediction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseOptions {
    /// Share of the total at the largest size the selected phases must reach, in (0, 1];
    /// default [`DEFAULT_THRESHOLD`].
    pub threshold: f64,
    /// Largest change of a selected phase's share between consecutive sizes that still counts
    /// as stable, in (0, 1); default [`DEFAULT_STABILITY_TOLERANCE`].
    pub stability_tolerance: f64,
    /// Fit only the sizes from the stable one on (the paper's procedure: find n, then fit the
    /// runs beyond it); when false, fit every size. Default true.
    pub fit_stable_sizes_only: bool,
}

impl Default for PhaseOptions {
    fn default() -> Self {
        PhaseOptions {
            threshold: DEFAULT_THRESHOLD,
            stability_tolerance: DEFAULT_STABILITY_TOLERANCE,
            fit_stable_sizes_only: true,
        }
    }
}

/// One phase chosen by [`select_phases`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectedPhase {
    /// The phase's name.
    pub name: String,
    /// Its share of the total at the largest size.
    pub fraction_at_largest: f64,
    /// Its share at every size, sizes ascending.
    pub fractions: Vec<f64>,
}

/// The phases that hold most of the time, and where their shares become stable (§III-A).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhaseSelection {
    /// The threshold asked for.
    pub threshold: f64,
    /// The selected phases, largest share first.
    pub selected: Vec<SelectedPhase>,
    /// Their combined share at the largest size.
    pub covered_fraction: f64,
    /// False when even every phase with time falls short of the threshold.
    pub threshold_reached: bool,
    /// The sizes, ascending.
    pub sizes: Vec<f64>,
    /// Index into `sizes` (ascending) from which the shares are stable.
    pub stable_from_index: usize,
    /// The size n from which the shares are stable.
    pub stable_from_size: f64,
}

/// One selected phase's prediction at the target.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PhasePrediction {
    /// The phase's name.
    pub name: String,
    /// The fractal fit of its time; `prediction_seconds` is T_pj(n_L).
    pub time: FractalFit,
    /// The fractal fit of its time relative to the rest, `T_pj/T_rest = f_pj/f_0`; `None`
    /// when the selected phases are the whole application.
    pub share_fit: Option<FractalFit>,
    /// Its predicted share f_pj at n_L.
    pub fraction_at_target: f64,
}

/// Whole-application prediction (§III-C).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AppPrediction {
    /// The target size n_L.
    pub target: f64,
    /// Which phases, and from which size the shares are stable.
    pub selection: PhaseSelection,
    /// The sizes fitted, ascending.
    pub fitted_sizes: Vec<f64>,
    /// Per selected phase, largest first.
    pub phases: Vec<PhasePrediction>,
    /// `Σ_j T_pj(n_L)`, seconds.
    pub selected_time_seconds: f64,
    /// `Σ_j f_pj(n_L)`.
    pub selected_fraction_at_target: f64,
    /// `f_0(n_L) = 1 − Σ_j f_pj(n_L)`, the share of everything else.
    pub rest_fraction_at_target: f64,
    /// `T_app = Σ_j T_pj(n_L) / Σ_j f_pj(n_L)`, seconds.
    pub prediction_seconds: f64,
    /// True when n_L lies inside the fitted sizes.
    pub interpolation: bool,
    /// Remarks for the reader.
    pub notes: Vec<String>,
}

impl PhaseSeries {
    /// A series whose phases are the whole application.
    pub fn new(sizes: Vec<f64>, phases: Vec<(String, Vec<f64>)>) -> Self {
        PhaseSeries {
            sizes,
            phases,
            totals_seconds: None,
        }
    }

    /// The same series with the application's measured totals, so that time outside every
    /// profiled phase is accounted for.
    pub fn with_totals(mut self, totals_seconds: Vec<f64>) -> Self {
        self.totals_seconds = Some(totals_seconds);
        self
    }

    /// The total time at each size (the given totals, or the sum of the phases), after
    /// checking the series: sizes positive, finite and distinct; at least one phase, names
    /// distinct; phase times finite and non-negative; totals positive and not below the sum
    /// of the phases.
    pub fn totals(&self) -> Result<Vec<f64>, FitError> {
        let k = self.sizes.len();
        if self.phases.is_empty() {
            return Err(FitError::NoPhases);
        }
        for (p, (name, times)) in self.phases.iter().enumerate() {
            if self.phases[..p].iter().any(|(other, _)| other == name) {
                return Err(FitError::DuplicatePhase(name.clone()));
            }
            let what = format!("phase {name:?}");
            if times.len() != k {
                return Err(FitError::LengthMismatch {
                    what,
                    expected: k,
                    got: times.len(),
                });
            }
            for (i, &t) in times.iter().enumerate() {
                if !t.is_finite() {
                    return Err(FitError::NotFinite {
                        what,
                        index: i,
                        value: t,
                    });
                }
                if t < 0.0 {
                    return Err(FitError::Negative {
                        what,
                        index: i,
                        value: t,
                    });
                }
            }
        }
        let sums: Vec<f64> = (0..k)
            .map(|i| self.phases.iter().map(|(_, t)| t[i]).sum())
            .collect();
        let totals = match &self.totals_seconds {
            None => sums.clone(),
            Some(t) => t.clone(),
        };
        validate_series(&self.sizes, &totals, 1, "a phase series")?;
        if let Some((i, &t)) = totals.iter().enumerate().find(|(_, &t)| t <= 0.0) {
            return Err(FitError::NotPositive {
                what: "totals".into(),
                index: i,
                value: t,
            });
        }
        for i in 0..k {
            if totals[i] < sums[i] * (1.0 - REST_ZERO_TOLERANCE) {
                return Err(FitError::TotalBelowPhases {
                    size: self.sizes[i],
                    total: totals[i],
                    phases: sums[i],
                });
            }
        }
        Ok(totals)
    }

    /// Each phase's share of the total at each size, `f_pj(n_i) = T_pj(n_i) / T(n_i)`, in the
    /// order of `sizes`.
    pub fn fractions(&self) -> Result<Vec<(String, Vec<f64>)>, FitError> {
        let totals = self.totals()?;
        Ok(self
            .phases
            .iter()
            .map(|(name, t)| {
                let f = t.iter().zip(&totals).map(|(a, b)| a / b).collect();
                (name.clone(), f)
            })
            .collect())
    }

    /// The same series with sizes ascending (validated).
    fn sorted(&self) -> Result<(PhaseSeries, Vec<f64>), FitError> {
        let totals = self.totals()?;
        let mut order: Vec<usize> = (0..self.sizes.len()).collect();
        order.sort_by(|&i, &j| self.sizes[i].total_cmp(&self.sizes[j]));
        let pick = |v: &[f64]| order.iter().map(|&i| v[i]).collect::<Vec<f64>>();
        let sorted = PhaseSeries {
            sizes: pick(&self.sizes),
            phases: self
                .phases
                .iter()
                .map(|(n, t)| (n.clone(), pick(t)))
                .collect(),
            totals_seconds: self.totals_seconds.as_deref().map(pick),
        };
        Ok((sorted, pick(&totals)))
    }
}

fn check_options(options: &PhaseOptions) -> Result<(), FitError> {
    if !(options.threshold > 0.0 && options.threshold <= 1.0) {
        return Err(FitError::BadSetting {
            name: "threshold".into(),
            value: options.threshold,
            expected: "a share in (0, 1]".into(),
        });
    }
    if !(options.stability_tolerance > 0.0 && options.stability_tolerance < 1.0) {
        return Err(FitError::BadSetting {
            name: "stability_tolerance".into(),
            value: options.stability_tolerance,
            expected: "a change of share in (0, 1)".into(),
        });
    }
    Ok(())
}

/// The paper's phase selection (§III-A): at the largest size, take phases largest first
/// until their shares sum to at least `options.threshold`; then the stable point, the
/// smallest index s (sizes ascending) such that for every i ≥ s and every selected phase j,
/// `|f_pj(n_{i+1}) − f_pj(n_i)| < options.stability_tolerance`. The last size is always
/// "stable", so s ≤ k − 1. If every phase with time together falls short of the threshold,
/// all of them are selected and `threshold_reached` is false.
pub fn select_phases(
    series: &PhaseSeries,
    options: &PhaseOptions,
) -> Result<PhaseSelection, FitError> {
    check_options(options)?;
    let (sorted, _) = series.sorted()?;
    let fractions = sorted.fractions()?;
    let last = sorted.sizes.len() - 1;
    let mut order: Vec<usize> = (0..fractions.len())
        .filter(|&p| fractions[p].1[last] > 0.0)
        .collect();
    // Stable sort: equal shares keep the order the phases were given in.
    order.sort_by(|&p, &q| fractions[q].1[last].total_cmp(&fractions[p].1[last]));
    let mut selected = Vec::new();
    let mut covered = 0.0;
    for p in order {
        if covered >= options.threshold {
            break;
        }
        covered += fractions[p].1[last];
        selected.push(SelectedPhase {
            name: fractions[p].0.clone(),
            fraction_at_largest: fractions[p].1[last],
            fractions: fractions[p].1.clone(),
        });
    }
    let mut stable = last;
    while stable > 0
        && selected.iter().all(|s| {
            (s.fractions[stable] - s.fractions[stable - 1]).abs() < options.stability_tolerance
        })
    {
        stable -= 1;
    }
    Ok(PhaseSelection {
        threshold: options.threshold,
        threshold_reached: covered >= options.threshold,
        covered_fraction: covered,
        selected,
        stable_from_index: stable,
        stable_from_size: sorted.sizes[stable],
        sizes: sorted.sizes,
    })
}

/// Shares at the target from each phase's predicted ratio to the rest, `ρ_j = f_pj/f_0`:
/// `f_pj = ρ_j / (1 + Σ_i ρ_i)` and `f_0 = 1 / (1 + Σ_i ρ_i)`. Returns `(f_p, f_0)`.
///
/// ```
/// use harness::fit::phases::shares_from_ratios;
/// // ρ = (3, 1): 1 + 3 + 1 = 5, so f_p = (0.6, 0.2) and f_0 = 0.2.
/// let (f, f0) = shares_from_ratios(&[3.0, 1.0]);
/// assert_eq!((f, f0), (vec![0.6, 0.2], 0.2));
/// ```
pub fn shares_from_ratios(ratios: &[f64]) -> (Vec<f64>, f64) {
    let denominator = 1.0 + ratios.iter().sum::<f64>();
    (
        ratios.iter().map(|r| r / denominator).collect(),
        1.0 / denominator,
    )
}

/// The paper's whole-application formula (§III-C): `T_app = Σ_j T_pj / Σ_j f_pj`, the
/// selected phases' predicted times scaled up by the share they are predicted to hold.
///
/// ```
/// use harness::fit::phases::application_time;
/// // Two phases of 6 s and 2 s holding 60 % and 20 %: 8 s / 0.8 = 10 s.
/// assert!((application_time(&[6.0, 2.0], &[0.6, 0.2]) - 10.0).abs() < 1e-12);
/// ```
pub fn application_time(phase_times: &[f64], phase_fractions: &[f64]) -> f64 {
    phase_times.iter().sum::<f64>() / phase_fractions.iter().sum::<f64>()
}

/// Predicts the whole application at n_L (§III-A to §III-C): selects the phases
/// ([`select_phases`]), fits each selected phase's time by [`fit_power_law`] over the stable
/// sizes (or all, see [`PhaseOptions::fit_stable_sizes_only`]), extrapolates each share
/// relative to the rest (module docs) and returns `T_app = Σ_j T_pj(n_L) / Σ_j f_pj(n_L)`.
///
/// When the selected phases are the whole time at every size (no totals and every phase
/// selected, or totals equal to their sum), `f_0 = 0`, the shares at n_L are the predicted
/// times' own proportions and `T_app = Σ_j T_pj(n_L)`. A rest that is zero at some sizes but
/// not others is refused ([`FitError::RestVanishes`]). A phase with zero time at a fitted
/// size cannot be fitted on log axes and is refused, naming it ([`FitError::Phase`]).
pub fn predict_application(
    series: &PhaseSeries,
    target: f64,
    options: &PhaseOptions,
) -> Result<AppPrediction, FitError> {
    if !(target.is_finite() && target > 0.0) {
        return Err(FitError::BadTarget(target));
    }
    let selection = select_phases(series, options)?;
    let (sorted, totals) = series.sorted()?;
    let first = if options.fit_stable_sizes_only {
        selection.stable_from_index
    } else {
        0
    };
    let sizes = &sorted.sizes[first..];
    if sizes.len() < MIN_POINTS {
        return Err(FitError::TooFewPoints {
            model: format!(
                "the phase fits from the size where the shares become stable (n = {}; \
                 run more sizes beyond it)",
                selection.stable_from_size
            ),
            needed: MIN_POINTS,
            got: sizes.len(),
        });
    }
    let phase_times: Vec<&[f64]> = selection
        .selected
        .iter()
        .map(|s| {
            sorted
                .phases
                .iter()
                .find(|(n, _)| *n == s.name)
                .map(|(_, t)| &t[first..])
                .expect("selected phases come from this series")
        })
        .collect();
    let in_phase = |name: &str, e: FitError| FitError::Phase {
        phase: name.to_string(),
        source: Box::new(e),
    };
    let mut time_fits = Vec::with_capacity(phase_times.len());
    for (s, t) in selection.selected.iter().zip(&phase_times) {
        time_fits.push(fit_power_law(sizes, t, target).map_err(|e| in_phase(&s.name, e))?);
    }
    let predicted: Vec<f64> = time_fits.iter().map(|f| f.prediction_seconds).collect();

    // The time outside the selected phases at each fitted size.
    let rest: Vec<f64> = (0..sizes.len())
        .map(|i| {
            let r = totals[first + i] - phase_times.iter().map(|t| t[i]).sum::<f64>();
            if r <= REST_ZERO_TOLERANCE * totals[first + i] {
                0.0
            } else {
                r
            }
        })
        .collect();
    let mut notes = Vec::new();
    if !selection.threshold_reached {
        notes.push(format!(
            "the phases hold only {:.1} % of the time at the largest size, below the {:.0} % \
             asked for; every phase was selected",
            100.0 * selection.covered_fraction,
            100.0 * selection.threshold
        ));
    }
    let (share_fits, shares, rest_share) = if rest.iter().all(|&r| r == 0.0) {
        notes.push(
            "the selected phases hold the whole time: no rest to extrapolate, T_app = Σ T_pj"
                .to_string(),
        );
        let sum: f64 = predicted.iter().sum();
        let shares = predicted.iter().map(|t| t / sum).collect();
        (vec![None; predicted.len()], shares, 0.0)
    } else {
        if let Some(i) = rest.iter().position(|&r| r == 0.0) {
            return Err(FitError::RestVanishes { size: sizes[i] });
        }
        let mut fits = Vec::with_capacity(phase_times.len());
        for (s, t) in selection.selected.iter().zip(&phase_times) {
            let ratio: Vec<f64> = t.iter().zip(&rest).map(|(a, r)| a / r).collect();
            fits.push(fit_power_law(sizes, &ratio, target).map_err(|e| in_phase(&s.name, e))?);
        }
        let ratios: Vec<f64> = fits.iter().map(|f| f.prediction_seconds).collect();
        let (shares, rest_share) = shares_from_ratios(&ratios);
        (fits.into_iter().map(Some).collect(), shares, rest_share)
    };

    let prediction = application_time(&predicted, &shares);
    let interpolation = target >= sizes[0] && target <= sizes[sizes.len() - 1];
    if interpolation {
        notes.push(format!(
            "target {target} lies inside the fitted sizes: this is an interpolation"
        ));
    }
    let phases = selection
        .selected
        .iter()
        .zip(time_fits)
        .zip(share_fits)
        .zip(&shares)
        .map(|(((s, time), share_fit), &f)| PhasePrediction {
            name: s.name.clone(),
            time,
            share_fit,
            fraction_at_target: f,
        })
        .collect();
    Ok(AppPrediction {
        target,
        fitted_sizes: sizes.to_vec(),
        phases,
        selected_time_seconds: predicted.iter().sum(),
        selected_fraction_at_target: shares.iter().sum(),
        rest_fraction_at_target: rest_share,
        prediction_seconds: prediction,
        interpolation,
        notes,
        selection,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn rel(a: f64, b: f64) -> f64 {
        ((a - b) / b).abs()
    }

    /// Sizes 1, 2, 4; phase A = n², phase B = n, the rest 1 s: totals 3, 7, 21.
    fn two_phases_plus_rest() -> PhaseSeries {
        PhaseSeries::new(
            vec![4.0, 1.0, 2.0], // deliberately unsorted
            vec![
                ("B".into(), vec![4.0, 1.0, 2.0]),
                ("A".into(), vec![16.0, 1.0, 4.0]),
            ],
        )
        .with_totals(vec![21.0, 3.0, 7.0])
    }

    fn all_sizes(threshold: f64) -> PhaseOptions {
        PhaseOptions {
            threshold,
            fit_stable_sizes_only: false,
            ..PhaseOptions::default()
        }
    }

    #[test]
    fn fraction_normalisation_by_hand() {
        // Shares: n = 1: A 1/3, B 1/3, rest 1/3; n = 2: 4/7, 2/7, 1/7; n = 4: 16/21, 4/21,
        // 1/21 (A 0.7619, B 0.1905, rest 0.0476).
        // Threshold 0.9: A alone holds 0.762 < 0.9, A + B 20/21 = 0.952 ≥ 0.9: both.
        // Stability (tolerance 0.05): A moves 4/7 − 1/3 = 5/21 = 0.238 and
        // 16/21 − 4/7 = 4/21 = 0.190, so the shares are stable only from the last size.
        // At n_L = 8: T_A = 64, T_B = 8 (exact power laws); ratios to the rest
        // A/rest = n² → 64, B/rest = n → 8; f_A = 64/73, f_B = 8/73, f_0 = 1/73;
        // T_app = (64 + 8) / (72/73) = 73 = 64 + 8 + 1, the true total.
        let series = two_phases_plus_rest();
        let fractions = series.fractions().unwrap();
        assert_eq!(fractions[1].0, "A");
        assert!((fractions[1].1[0] - 16.0 / 21.0).abs() < 1e-15);
        let sel = select_phases(&series, &all_sizes(0.9)).unwrap();
        let names: Vec<&str> = sel.selected.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["A", "B"]);
        assert!((sel.covered_fraction - 20.0 / 21.0).abs() < 1e-15);
        assert!(sel.threshold_reached);
        assert_eq!(sel.sizes, [1.0, 2.0, 4.0]);
        assert_eq!((sel.stable_from_index, sel.stable_from_size), (2, 4.0));
        assert!((sel.selected[0].fractions[1] - 4.0 / 7.0).abs() < 1e-15);

        let app = predict_application(&series, 8.0, &all_sizes(0.9)).unwrap();
        assert!((app.phases[0].time.prediction_seconds - 64.0).abs() < 1e-9);
        assert!((app.phases[1].time.prediction_seconds - 8.0).abs() < 1e-9);
        assert!((app.phases[0].fraction_at_target - 64.0 / 73.0).abs() < 1e-12);
        assert!((app.phases[1].fraction_at_target - 8.0 / 73.0).abs() < 1e-12);
        assert!((app.rest_fraction_at_target - 1.0 / 73.0).abs() < 1e-12);
        assert!((app.selected_time_seconds - 72.0).abs() < 1e-9);
        assert!((app.prediction_seconds - 73.0).abs() < 1e-9);
        assert!(!app.interpolation);
        assert_eq!(app.fitted_sizes, [1.0, 2.0, 4.0]);

        // The paper's procedure refuses: only the last size is stable.
        let e = predict_application(&series, 8.0, &PhaseOptions::default()).unwrap_err();
        assert!(matches!(e, FitError::TooFewPoints { got: 1, .. }), "{e}");
    }

    #[test]
    fn one_phase_selected_rest_absorbs_the_other() {
        // Threshold 0.7: A alone (0.762). The rest n + 1 is no power law, so T_app is
        // approximate: truth at 64 is 64² + 64 + 1 = 4161.
        let sizes = vec![1.0, 2.0, 4.0, 8.0, 16.0];
        let a: Vec<f64> = sizes.iter().map(|n| n * n).collect();
        let b: Vec<f64> = sizes.clone();
        let totals: Vec<f64> = sizes.iter().map(|n| n * n + n + 1.0).collect();
        let series =
            PhaseSeries::new(sizes, vec![("A".into(), a), ("B".into(), b)]).with_totals(totals);
        let app = predict_application(&series, 64.0, &all_sizes(0.7)).unwrap();
        assert_eq!(app.phases.len(), 1);
        assert!((app.phases[0].time.prediction_seconds - 4096.0).abs() < 1e-6);
        assert!(
            rel(app.prediction_seconds, 4161.0) < 0.01,
            "{}",
            app.prediction_seconds
        );
        let f = app.phases[0].fraction_at_target + app.rest_fraction_at_target;
        assert!((f - 1.0).abs() < 1e-12);
    }

    #[test]
    fn stable_point_and_default_procedure() {
        // Totals n²; A's share 0.30, 0.50, 0.60, 0.62, 0.63, 0.635 (steps 0.2, 0.1, 0.02,
        // 0.01, 0.005) and B's 0.10, 0.15, 0.17, 0.18, 0.18, 0.18 (steps 0.05, 0.02, 0.01,
        // 0, 0): every step is below 0.05 from index 2 (size 3) on. At the largest size A
        // holds 0.635 < 0.7 and A + B 0.815: both selected.
        let sizes: Vec<f64> = (1..=6).map(f64::from).collect();
        let fa = [0.30, 0.50, 0.60, 0.62, 0.63, 0.635];
        let fb = [0.10, 0.15, 0.17, 0.18, 0.18, 0.18];
        let totals: Vec<f64> = sizes.iter().map(|n| n * n).collect();
        let a: Vec<f64> = totals.iter().zip(fa).map(|(t, f)| t * f).collect();
        let b: Vec<f64> = totals.iter().zip(fb).map(|(t, f)| t * f).collect();
        let series =
            PhaseSeries::new(sizes, vec![("A".into(), a), ("B".into(), b)]).with_totals(totals);
        let sel = select_phases(&series, &PhaseOptions::default()).unwrap();
        assert_eq!(sel.selected.len(), 2);
        assert!((sel.covered_fraction - 0.815).abs() < 1e-12);
        assert_eq!((sel.stable_from_index, sel.stable_from_size), (2, 3.0));
        let app = predict_application(&series, 60.0, &PhaseOptions::default()).unwrap();
        assert_eq!(app.fitted_sizes, [3.0, 4.0, 5.0, 6.0]);
        let total_share = app.selected_fraction_at_target + app.rest_fraction_at_target;
        assert!((total_share - 1.0).abs() < 1e-12);
        // Had the shares stayed at 0.635 and 0.18, T_app would be 60² = 3600; they still
        // drift up inside the window (A: 0.60 → 0.635), so A's time and its ratio to the
        // rest extrapolate higher (about 3880). T_app stays above the phases' own sum.
        assert!(app.prediction_seconds > app.selected_time_seconds);
        assert!(
            rel(app.prediction_seconds, 3600.0) < 0.1,
            "{}",
            app.prediction_seconds
        );
        // A tolerance of 0.15 admits the 0.1 step too.
        let loose = PhaseOptions {
            stability_tolerance: 0.15,
            ..PhaseOptions::default()
        };
        assert_eq!(select_phases(&series, &loose).unwrap().stable_from_index, 1);
    }

    #[test]
    fn phases_that_are_the_whole_time() {
        // No totals, both phases selected (threshold 1): T_app = T_A + T_B exactly.
        let sizes = vec![1.0, 2.0, 4.0];
        let series = PhaseSeries::new(
            sizes,
            vec![
                ("A".into(), vec![1.0, 8.0, 64.0]),
                ("B".into(), vec![2.0, 4.0, 8.0]),
            ],
        );
        let app = predict_application(&series, 8.0, &all_sizes(1.0)).unwrap();
        assert!((app.prediction_seconds - (512.0 + 16.0)).abs() < 1e-9);
        assert_eq!(app.rest_fraction_at_target, 0.0);
        assert!(app.phases.iter().all(|p| p.share_fit.is_none()));
        assert!((app.phases[0].fraction_at_target - 512.0 / 528.0).abs() < 1e-12);
    }

    #[test]
    fn threshold_out_of_reach_selects_everything() {
        let series = PhaseSeries::new(vec![1.0, 2.0, 4.0], vec![("A".into(), vec![1.0, 2.0, 4.0])])
            .with_totals(vec![4.0, 8.0, 16.0]);
        let app = predict_application(&series, 8.0, &all_sizes(0.7)).unwrap();
        assert!(!app.selection.threshold_reached);
        assert!(
            app.notes.iter().any(|n| n.contains("25.0 %")),
            "{:?}",
            app.notes
        );
        assert!((app.prediction_seconds - 32.0).abs() < 1e-9);
    }

    #[test]
    fn refusals() {
        let good = two_phases_plus_rest();
        let opts = all_sizes(0.9);
        let mut s = good.clone();
        s.phases.clear();
        assert_eq!(select_phases(&s, &opts), Err(FitError::NoPhases));
        let mut s = good.clone();
        s.phases[1].0 = "B".into();
        assert_eq!(
            select_phases(&s, &opts),
            Err(FitError::DuplicatePhase("B".into()))
        );
        let mut s = good.clone();
        s.totals_seconds = Some(vec![21.0, 3.0, 5.0]);
        assert!(matches!(
            select_phases(&s, &opts),
            Err(FitError::TotalBelowPhases { size, .. }) if size == 2.0
        ));
        let mut s = good.clone();
        s.phases[0].1[1] = -1.0;
        assert!(matches!(
            select_phases(&s, &opts),
            Err(FitError::Negative { .. })
        ));
        let mut s = good.clone();
        s.phases[0].1[1] = f64::NAN;
        assert!(matches!(
            select_phases(&s, &opts),
            Err(FitError::NotFinite { .. })
        ));
        let mut s = good.clone();
        s.sizes[2] = 4.0;
        assert!(matches!(
            select_phases(&s, &opts),
            Err(FitError::DuplicateSize { .. })
        ));
        let mut s = good.clone();
        s.phases[0].1.pop();
        assert!(matches!(
            select_phases(&s, &opts),
            Err(FitError::LengthMismatch { .. })
        ));
        for bad in [0.0, 1.5, f64::NAN] {
            assert!(matches!(
                select_phases(&good, &all_sizes(bad)),
                Err(FitError::BadSetting { .. })
            ));
        }
        assert!(matches!(
            predict_application(&good, -1.0, &opts),
            Err(FitError::BadTarget(_))
        ));
        // A zero phase time at a fitted size names the phase.
        let mut s = good.clone();
        s.phases[0].1[1] = 0.0;
        s.totals_seconds = Some(vec![21.0, 2.0, 7.0]);
        let e = predict_application(&s, 8.0, &opts).unwrap_err();
        assert!(
            matches!(&e, FitError::Phase { phase, .. } if phase == "B"),
            "{e}"
        );
        assert!(e.to_string().starts_with("phase \"B\": times[0]"), "{e}");
        // The rest is zero at one size only.
        let mut s = good.clone();
        s.totals_seconds = Some(vec![21.0, 2.0, 7.0]);
        assert_eq!(
            predict_application(&s, 8.0, &opts).unwrap_err(),
            FitError::RestVanishes { size: 1.0 }
        );
    }

    #[test]
    fn interpolation_is_flagged() {
        let app = predict_application(&two_phases_plus_rest(), 3.0, &all_sizes(0.9)).unwrap();
        assert!(app.interpolation);
        assert!(app.notes.iter().any(|n| n.contains("interpolation")));
        // Exact power laws interpolate exactly: 9 + 3 + 1.
        assert!((app.prediction_seconds - 13.0).abs() < 1e-9);
    }

    proptest! {
        #[test]
        fn power_law_parts_give_the_exact_total(
            ca in 0.5f64..3.0,
            cb in 0.5f64..3.0,
            c0 in 0.0f64..1.0,
            aa in 0.1f64..10.0,
            ab in 0.1f64..10.0,
            a0 in 0.1f64..10.0,
        ) {
            let sizes: Vec<f64> = vec![10.0, 20.0, 40.0, 80.0, 160.0];
            let part = |a: f64, c: f64| sizes.iter().map(|n| a * n.powf(c)).collect::<Vec<_>>();
            let (ta, tb, t0) = (part(aa, ca), part(ab, cb), part(a0, c0));
            let totals: Vec<f64> = (0..5).map(|i| ta[i] + tb[i] + t0[i]).collect();
            let series = PhaseSeries::new(sizes.clone(), vec![("A".into(), ta), ("B".into(), tb)])
                .with_totals(totals);
            let target = 5000.0;
            let truth = aa * f64::powf(target, ca) + ab * f64::powf(target, cb) + a0 * f64::powf(target, c0);
            let app = predict_application(&series, target, &all_sizes(1.0)).unwrap();
            prop_assert!(rel(app.prediction_seconds, truth) < 1e-8);
            let sum = app.selected_fraction_at_target + app.rest_fraction_at_target;
            prop_assert!((sum - 1.0).abs() < 1e-12);
            prop_assert!(app.phases.iter().all(|p| p.fraction_at_target > 0.0 && p.fraction_at_target < 1.0));
        }
    }
}
