//! How a series is exported ([`crate::export`]): JSON as stored, a CSV (and Markdown) table of
//! one row per size and phase with the phase's cold runs, and the samples Extra-P reads.

use super::{ColdTimes, Series};
use crate::export::extrap::{Measurements, PhaseSamples, PointSamples};
use crate::export::{json, ExportError, Exportable, Table};

impl Exportable for Series {
    fn kind(&self) -> &'static str {
        "series"
    }

    fn to_json(&self) -> Result<String, ExportError> {
        json::to_json(self)
    }

    /// One row per size and phase, and a `total` row per size; a phase's cold runs, where it
    /// has some, in the last four columns (their median, the ends of its interval as
    /// [`ColdTimes::ci95`] gives them, and how many), empty elsewhere.
    fn table(&self) -> Table {
        let mut t = Table::new([
            "size",
            "phase",
            "median_s",
            "ci95_low_s",
            "ci95_high_s",
            "fraction",
            "count",
            "min_s",
            "runs",
            "cold_median_s",
            "cold_low_s",
            "cold_high_s",
            "cold_runs",
        ]);
        let cold_cells = |c: Option<&ColdTimes>| -> [String; 4] {
            c.map_or(Default::default(), |c| {
                [
                    c.median_seconds.to_string(),
                    c.ci95[0].to_string(),
                    c.ci95[1].to_string(),
                    c.samples.len().to_string(),
                ]
            })
        };
        for p in &self.points {
            for ph in &p.phases {
                let [cold, cold_low, cold_high, cold_runs] = cold_cells(ph.cold.as_ref());
                t.row([
                    p.size.to_string(),
                    ph.name.clone(),
                    ph.median_seconds.to_string(),
                    ph.ci95[0].to_string(),
                    ph.ci95[1].to_string(),
                    ph.fraction.to_string(),
                    ph.count.to_string(),
                    ph.min_seconds.map_or(String::new(), |m| m.to_string()),
                    ph.samples.len().to_string(),
                    cold,
                    cold_low,
                    cold_high,
                    cold_runs,
                ]);
            }
            let [cold, cold_low, cold_high, cold_runs] = cold_cells(None);
            t.row([
                p.size.to_string(),
                "total".into(),
                p.total.median_seconds.to_string(),
                p.total.ci95[0].to_string(),
                p.total.ci95[1].to_string(),
                "1".into(),
                "1".into(),
                p.total.min_seconds.map_or(String::new(), |m| m.to_string()),
                p.total.samples.len().to_string(),
                cold,
                cold_low,
                cold_high,
                cold_runs,
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
