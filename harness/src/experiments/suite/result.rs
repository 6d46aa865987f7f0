//! The suite's result: each case's predictions, the summary per variant, and its tables.

use serde::{Deserialize, Serialize};

use super::SuiteCase;
use crate::backend::DeviceInfo;
use crate::experiments::validate::{summary, ErrorSummary, Validation};
use crate::export::{json, ExportError, Exportable, Table};
use crate::fit::drift::drift_allowance;
use crate::fit::forecast::Variant;

/// One variant's prediction of one case's total.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CasePrediction {
    /// The recipe.
    pub variant: Variant,
    /// Predicted seconds.
    pub predicted_seconds: f64,
    /// 95 % prediction interval.
    pub interval: Option<[f64; 2]>,
    /// |predicted − measured| / measured × 100.
    pub abs_percent_error: f64,
    /// Whether the interval holds the measured median.
    pub interval_holds: Option<bool>,
}

/// One case's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    /// `workload[-layout]`.
    pub case: String,
    /// The size predicted.
    pub size: usize,
    /// The small sizes fitted.
    pub small: Vec<usize>,
    /// Iterations per run.
    pub iterations: usize,
    /// Measured median total, seconds.
    pub measured_seconds: f64,
    /// How far the machine's speed wandered from round to round of the small series, in per
    /// cent (one standard deviation of the rounds' common factor,
    /// [`crate::fit::drift::round_drift`]); the calibrated interval allows 1.96× it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_percent: Option<f64>,
    /// One per variant that made a prediction, in [`Variant::ALL`]'s order.
    pub predictions: Vec<CasePrediction>,
    /// Why a variant made none, and what the choice of sizes noticed.
    pub notes: Vec<String>,
}

/// One variant over the whole suite.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VariantSummary {
    /// The recipe.
    pub variant: Variant,
    /// Cases it predicted, of all cases.
    pub predicted: usize,
    /// Cases in the suite.
    pub cases: usize,
    /// Errors over the cases it predicted, percent.
    pub error: ErrorSummary,
    /// Share of its intervals that hold the measured value (NaN, `null` in JSON, where it
    /// predicted no case).
    #[serde(deserialize_with = "crate::experiments::validate::nan_where_null")]
    pub interval_holds: f64,
    /// Share of its intervals no wider than 2× (high ÷ low).
    #[serde(deserialize_with = "crate::experiments::validate::nan_where_null")]
    pub interval_within_2x: f64,
}

/// The suite's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Suite {
    /// The device.
    pub device: DeviceInfo,
    /// Every case.
    pub cases: Vec<CaseResult>,
    /// Per variant.
    pub summary: Vec<VariantSummary>,
    /// The cases that ended in an error (a failed check, a device error) and are in no row
    /// above: the run went on with the next case.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<FailedCase>,
}

/// A case that ended in an error instead of a validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedCase {
    /// `workload[-layout]`.
    pub case: String,
    /// The size it was to predict.
    pub size: usize,
    /// What went wrong, one line.
    pub error: String,
}

impl Suite {
    /// The suite's table from each case's validation (the `total` rows).
    pub fn from_validations(device: DeviceInfo, validations: &[(SuiteCase, Validation)]) -> Self {
        let cases: Vec<CaseResult> = validations
            .iter()
            .map(|(case, v)| {
                let measured = v.large.first().map_or(f64::NAN, |p| p.total.median_seconds);
                let predictions = Variant::ALL
                    .iter()
                    .filter_map(|&variant| {
                        let r = v
                            .rows
                            .iter()
                            .find(|r| r.variant == variant && r.phase == "total")?;
                        Some(CasePrediction {
                            variant,
                            predicted_seconds: r.predicted_seconds,
                            interval: r.interval,
                            abs_percent_error: r.abs_percent_error,
                            interval_holds: r.interval.map(|[lo, hi]| {
                                lo <= r.measured_seconds && r.measured_seconds <= hi
                            }),
                        })
                    })
                    .collect();
                let drift = v.series.drift();
                let mut notes = case.notes.clone();
                if !v.large_interleaved {
                    notes.push(
                        "the target ran after the whole small series, not inside its rounds: a machine that changed speed between the two shifts every prediction".into(),
                    );
                }
                if let Some(d) = drift {
                    let shared = v
                        .large
                        .first()
                        .and_then(|t| v.series.shared_rounds(t, v.large_interleaved));
                    notes.push(format!(
                        "the machine drifted ±{:.1} % (1 sd) from round to round of the small sizes; the calibrated interval allows ±{:.1} % for it{}",
                        100.0 * d,
                        196.0 * drift_allowance(d, shared),
                        if shared.is_some() {
                            " (the target ran in the same rounds: the medians' share of the drift)"
                        } else {
                            ""
                        }
                    ));
                }
                for (label, windows) in [
                    (Variant::Windowed, &v.windows),
                    (Variant::Calibrated, &v.calibrated_windows),
                ] {
                    notes.extend(
                        windows
                            .iter()
                            .filter_map(|w| w.note.as_ref())
                            .map(|n| format!("{label}: {n}")),
                    );
                }
                CaseResult {
                    case: case.name(),
                    size: case.target,
                    small: v.series.points.iter().map(|p| p.size).collect(),
                    iterations: v.series.iterations,
                    measured_seconds: measured,
                    drift_percent: drift.map(|d| 100.0 * d),
                    predictions,
                    notes,
                }
            })
            .collect();
        let summary = Variant::ALL
            .iter()
            .map(|&variant| {
                let made: Vec<&CasePrediction> = cases
                    .iter()
                    .flat_map(|c| c.predictions.iter().filter(|p| p.variant == variant))
                    .collect();
                let errors: Vec<f64> = made.iter().map(|p| p.abs_percent_error).collect();
                let intervals: Vec<[f64; 2]> = made.iter().filter_map(|p| p.interval).collect();
                let share = |count: usize| {
                    if intervals.is_empty() {
                        f64::NAN
                    } else {
                        count as f64 / intervals.len() as f64
                    }
                };
                VariantSummary {
                    variant,
                    predicted: made.len(),
                    cases: cases.len(),
                    error: summary(&errors),
                    interval_holds: share(
                        made.iter()
                            .filter(|p| p.interval_holds == Some(true))
                            .count(),
                    ),
                    interval_within_2x: share(
                        intervals.iter().filter(|[lo, hi]| *hi <= 2.0 * *lo).count(),
                    ),
                }
            })
            .collect();
        Suite {
            device,
            cases,
            summary,
            failed: Vec::new(),
        }
    }

    /// The per-variant summary as a table: predicted cases, median and max error, interval
    /// coverage.
    pub fn summary_table(&self) -> Table {
        let mut t = Table::new([
            "variant",
            "predicted",
            "median_err_pct",
            "max_err_pct",
            "interval_holds_pct",
            "interval_within_2x_pct",
        ]);
        for s in &self.summary {
            t.row([
                s.variant.to_string(),
                format!("{}/{}", s.predicted, s.cases),
                pct(s.error.median),
                pct(s.error.max),
                pct(100.0 * s.interval_holds),
                pct(100.0 * s.interval_within_2x),
            ]);
        }
        t
    }

    /// One row per case: measured, and each variant's prediction with its error.
    pub fn wide_table(&self) -> Table {
        let mut header = vec![
            "case".to_string(),
            "N".into(),
            "iters".into(),
            "measured_s".into(),
        ];
        for v in Variant::ALL {
            header.push(format!("{v}_s"));
            header.push(format!("{v}_err_pct"));
        }
        let mut t = Table::new(header);
        for c in &self.cases {
            let mut row = vec![
                c.case.clone(),
                c.size.to_string(),
                c.iterations.to_string(),
                crate::export::table::sig(c.measured_seconds, 4),
            ];
            for v in Variant::ALL {
                match c.predictions.iter().find(|p| p.variant == v) {
                    Some(p) => {
                        let holds = if p.interval_holds == Some(true) {
                            ""
                        } else {
                            "*"
                        };
                        row.push(crate::export::table::sig(p.predicted_seconds, 4));
                        row.push(format!("{}{holds}", pct(p.abs_percent_error)));
                    }
                    None => {
                        row.push("-".into());
                        row.push("-".into());
                    }
                }
            }
            t.row(row);
        }
        t
    }
}

fn pct(value: f64) -> String {
    if value.is_finite() {
        format!("{value:.1}")
    } else {
        "-".into()
    }
}

impl Exportable for Suite {
    fn kind(&self) -> &'static str {
        "validation suite"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per case and variant.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "case",
            "size",
            "measured_s",
            "variant",
            "predicted_s",
            "pi_low_s",
            "pi_high_s",
            "abs_percent_error",
            "interval_holds",
        ]);
        for c in &self.cases {
            for p in &c.predictions {
                let (lo, hi) = p.interval.map_or((String::new(), String::new()), |i| {
                    (i[0].to_string(), i[1].to_string())
                });
                t.row([
                    c.case.clone(),
                    c.size.to_string(),
                    c.measured_seconds.to_string(),
                    p.variant.to_string(),
                    p.predicted_seconds.to_string(),
                    lo,
                    hi,
                    p.abs_percent_error.to_string(),
                    p.interval_holds.map_or(String::new(), |h| h.to_string()),
                ]);
            }
        }
        t
    }

    /// The wide table, then the summary.
    fn to_markdown(&self) -> String {
        format!(
            "{}\n`*`: the 95 % prediction interval misses the measured value.\n\n{}",
            crate::export::markdown::table_to_markdown(&self.wide_table()),
            crate::export::markdown::table_to_markdown(&self.summary_table())
        )
    }
}
