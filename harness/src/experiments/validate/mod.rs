//! Validation of the fractal prediction (docs/models.md §2): run the small series, predict each
//! large size, run it, and report the absolute percentage error per phase and in total.
//!
//! Two variants side by side: `paper` (every small size, the paper's fit) and, where the
//! device has a calibration, `windowed` (only the small sizes the calibration accepts for
//! that large size, launch overhead subtracted; [`crate::fit::window`]).
//!
//! Its modules: `sizes` chooses the small sizes, `windowed` and `calibrated` make those
//! two variants' forecasts for one large size; this one runs the validation and holds its
//! rows and summaries.

use serde::{Deserialize, Serialize};

use super::series::{read_json, run_series_beside, RepeatPlan, Series, SeriesPoint};
use crate::backend::Device;
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::forecast::{forecast, CalibratedEstimate, Forecast, LevelMove, Variant};
use crate::fit::stats::median_of_sorted;
use crate::fit::window::{DeviceFacts, WindowChoice};
use crate::workloads::{Workload, WorkloadError};

mod calibrated;
mod sizes;
mod windowed;

pub use calibrated::calibrated_forecast;
pub use sizes::{
    array_size_like_targets, array_size_off_powers_of_two, auto_small_sizes,
    grid_size_like_targets, grid_size_off_powers_of_two, size_facts, smallest_good_size,
    ALIGNED_FROM, ARRAY_ALIGNED_FROM,
};
pub use windowed::windowed_forecast;

/// One phase (or `total`) at one large size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ValidationRow {
    /// The recipe that made the prediction.
    pub variant: Variant,
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
    /// How the `calibrated` variant made this phase's prediction (its method, cost per byte,
    /// bytes at the target, a bracket's two ends); absent for the other variants and in
    /// files written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated: Option<CalibratedEstimate>,
}

/// Error statistics over the rows of one kind. Over no row at all (a variant that predicted
/// no case of a suite) each is NaN, which JSON writes as `null` and which reads back as NaN.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ErrorSummary {
    /// Mean absolute percentage error.
    #[serde(deserialize_with = "nan_where_null")]
    pub mean: f64,
    /// Median.
    #[serde(deserialize_with = "nan_where_null")]
    pub median: f64,
    /// Maximum.
    #[serde(deserialize_with = "nan_where_null")]
    pub max: f64,
}

/// A number whose `null` (JSON's spelling of NaN, as serde writes one) reads back as NaN: a
/// suite in which a variant predicted nothing could not be read again (`harness figures`
/// skipped it).
pub(crate) fn nan_where_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The whole validation.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Validation {
    /// The small series the fits used.
    pub series: Series,
    /// The large sizes measured.
    pub large: Vec<SeriesPoint>,
    /// Every row.
    pub rows: Vec<ValidationRow>,
    /// Errors over the paper variant's `total` rows.
    pub total_error: ErrorSummary,
    /// Errors over every paper-variant row.
    pub all_error: ErrorSummary,
    /// Errors over the windowed variant's `total` rows, where it ran.
    pub windowed_total_error: Option<ErrorSummary>,
    /// The window chosen for each large size, where the device has a calibration.
    pub windows: Vec<LargeWindow>,
    /// Errors over the calibrated variant's `total` rows, where it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibrated_total_error: Option<ErrorSummary>,
    /// The calibrated variant's window and level factors for each large size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calibrated_windows: Vec<LargeWindow>,
    /// Whether the large sizes ran inside the small series' rounds (a, b, c, T, a, b, c, T,
    /// …), so that the machine's drift hit the fitted and the predicted sizes alike; false
    /// in files from before that (the large sizes ran after the whole series).
    #[serde(default)]
    pub large_interleaved: bool,
}

/// The window the calibration chose for one large size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LargeWindow {
    /// The large size.
    pub size: usize,
    /// Accepted and rejected small sizes.
    pub choice: WindowChoice,
    /// Why the variant did not run, or how to make it run better.
    pub note: Option<String>,
    /// The calibrated variant's move of each accepted size to the target's level.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub level_moves: Vec<LevelMove>,
}

/// Mean, median and maximum of `values` (NaN where empty).
pub(crate) fn summary(values: &[f64]) -> ErrorSummary {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    ErrorSummary {
        mean: if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        },
        median: if v.is_empty() {
            f64::NAN
        } else {
            median_of_sorted(&v)
        },
        max: v.last().copied().unwrap_or(f64::NAN),
    }
}

fn row(
    variant: Variant,
    size: usize,
    phase: &str,
    predicted: f64,
    interval: Option<[f64; 2]>,
    measured: f64,
) -> ValidationRow {
    ValidationRow {
        variant,
        size,
        phase: phase.to_string(),
        predicted_seconds: predicted,
        interval,
        measured_seconds: measured,
        abs_percent_error: (predicted - measured).abs() / measured * 100.0,
        calibrated: None,
    }
}

/// The rows of one forecast against one measured point.
fn rows_for(f: &Forecast, point: &SeriesPoint) -> Vec<ValidationRow> {
    let mut rows = Vec::new();
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
            let mut r = row(
                f.variant,
                point.size,
                &p.name,
                p.prediction_seconds(),
                Some(p.interval_seconds()),
                m,
            );
            r.calibrated = p.calibrated.clone();
            rows.push(r);
        }
    }
    if let Some(app) = &f.application {
        rows.push(row(
            f.variant,
            point.size,
            "application",
            app.prediction_seconds,
            None,
            point.total.median_seconds,
        ));
    }
    rows
}

/// Run the small series with each large size inside its rounds (`plan.min` runs each,
/// [`run_series_beside`]), and compare. With
/// `device_facts` (from the device's calibration) the windowed variant runs beside the
/// paper's.
#[allow(clippy::too_many_arguments)]
pub fn validate(
    workload: &dyn Workload,
    layout: Option<String>,
    device: &dyn Device,
    device_facts: Option<&DeviceFacts>,
    small: &[usize],
    large: &[usize],
    iterations: usize,
    plan: RepeatPlan,
    mut progress: impl FnMut(&str),
) -> Result<Validation, WorkloadError> {
    if large.is_empty() {
        return Err(WorkloadError::Invalid(
            "give at least one --large size".into(),
        ));
    }
    let (series, measured) = run_series_beside(
        workload,
        layout,
        device,
        small,
        large,
        iterations,
        plan,
        |p| progress(&format!("small N = {} done", p.size)),
    )?;
    for point in &measured {
        progress(&format!("large N = {} done", point.size));
    }
    assess(workload, series, measured, device_facts, true)
}

/// Every variant's predictions of the `large` points from `series`, against what was
/// measured there: the rows and summaries of a [`Validation`]. Needs no device, so stored
/// measurements can be assessed again (`harness validate-suite --from`). `interleaved`: the
/// large points ran inside the series' rounds ([`Validation::large_interleaved`]).
pub fn assess(
    workload: &dyn Workload,
    series: Series,
    large: Vec<SeriesPoint>,
    device_facts: Option<&DeviceFacts>,
    interleaved: bool,
) -> Result<Validation, WorkloadError> {
    let mut rows = Vec::new();
    let mut windows = Vec::new();
    let mut calibrated_windows = Vec::new();
    let medians = series.medians();
    for point in &large {
        let size = point.size;
        let f =
            forecast(&medians, size as f64).map_err(|e| WorkloadError::Invalid(e.to_string()))?;
        rows.extend(rows_for(&f, point));
        if let Some(d) = device_facts {
            let (window, wf) = windowed_forecast(workload, &series, d, size);
            rows.extend(wf.iter().flat_map(|wf| rows_for(wf, point)));
            windows.push(window);
            let shared = series.shared_rounds(point, interleaved);
            let (window, cf) = calibrated_forecast(workload, &series, d, size, shared);
            rows.extend(cf.iter().flat_map(|cf| rows_for(cf, point)));
            calibrated_windows.push(window);
        }
    }
    let errors = |variant: Variant, total_only: bool| -> Vec<f64> {
        rows.iter()
            .filter(|r| r.variant == variant && (!total_only || r.phase == "total"))
            .map(|r| r.abs_percent_error)
            .collect()
    };
    let windowed_totals = errors(Variant::Windowed, true);
    let calibrated_totals = errors(Variant::Calibrated, true);
    Ok(Validation {
        series,
        large,
        total_error: summary(&errors(Variant::Paper, true)),
        all_error: summary(&errors(Variant::Paper, false)),
        windowed_total_error: (!windowed_totals.is_empty()).then(|| summary(&windowed_totals)),
        windows,
        calibrated_total_error: (!calibrated_totals.is_empty())
            .then(|| summary(&calibrated_totals)),
        calibrated_windows,
        large_interleaved: interleaved,
        rows,
    })
}

impl Validation {
    /// The result's file name without extension, naming what was run so a second validation
    /// does not overwrite the first: `<device>.validate.<workload>[-<layout>].<smallest>-<largest
    /// small>-to-<large sizes>`.
    pub fn file_stem(&self) -> String {
        let s = &self.series;
        let layout = s.layout.as_ref().map_or(String::new(), |l| {
            format!("-{}", crate::export::file_name_part(l))
        });
        let small = match (s.points.first(), s.points.last()) {
            (Some(a), Some(b)) => format!("{}-{}", a.size, b.size),
            _ => "none".into(),
        };
        let large: Vec<String> = self.large.iter().map(|p| p.size.to_string()).collect();
        format!(
            "{}.validate.{}{layout}.{small}-to-{}",
            s.device.slug(),
            crate::export::file_name_part(&s.workload.replace('.', "_")),
            large.join("_")
        )
    }

    /// Read a file written by `harness validate`; errors name the field.
    pub fn load(path: &std::path::Path) -> Result<Self, WorkloadError> {
        read_json(path)
    }
}

impl Exportable for Validation {
    fn kind(&self) -> &'static str {
        "validation"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per variant, large size and phase.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "variant",
            "size",
            "phase",
            "predicted_s",
            "pi_low_s",
            "pi_high_s",
            "measured_s",
            "abs_percent_error",
        ]);
        for r in &self.rows {
            let (lo, hi) = r.interval.map_or((String::new(), String::new()), |i| {
                (i[0].to_string(), i[1].to_string())
            });
            t.row([
                r.variant.to_string(),
                r.size.to_string(),
                r.phase.clone(),
                r.predicted_seconds.to_string(),
                lo,
                hi,
                r.measured_seconds.to_string(),
                r.abs_percent_error.to_string(),
            ]);
        }
        t
    }

    /// The small series' measurements: the data the fits used.
    fn extrap_measurements(&self) -> Option<crate::export::extrap::Measurements> {
        self.series.extrap_measurements()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_summary_over_no_row_reads_back() {
        let none = ErrorSummary {
            mean: f64::NAN,
            median: f64::NAN,
            max: f64::NAN,
        };
        let text = serde_json::to_string(&none).expect("serialises");
        assert_eq!(text, r#"{"mean":null,"median":null,"max":null}"#);
        let back: ErrorSummary = serde_json::from_str(&text).expect("reads back");
        assert!(back.mean.is_nan() && back.median.is_nan() && back.max.is_nan());
        let some: ErrorSummary =
            serde_json::from_str(r#"{"mean":1.5,"median":1.0,"max":3.0}"#).expect("reads");
        assert_eq!((some.mean, some.median, some.max), (1.5, 1.0, 3.0));
    }
}
