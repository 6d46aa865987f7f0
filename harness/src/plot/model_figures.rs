//! Figures of the two system models, from stored results:
//!
//! - [`balance_plot`]: Stepanenko's Fig. 6 for the measured φ and ρ — the attainable speed-up
//!   K^max, the speed-up K^D at the best whole number of joined cores and the proportional
//!   split's, against φ — with the speed-ups measured for each split run drawn at the
//!   measured φ;
//! - [`cluster_losses_plot`]: the DVM-Predictor-style loss breakdown of a distributed run,
//!   the prediction beside each measured run.

use super::{BarFigure, Figure, Mark, Panel, PlotError, Series};
use crate::model::cluster::report::ClusterReport;
use crate::model::stepanenko::Hybrid;

/// One split run of a measured balance: its name, the model's and the measured speed-up.
#[derive(Debug, Clone, PartialEq)]
pub struct MeasuredSplit {
    /// The split's name.
    pub name: String,
    /// The model's speed-up for it.
    pub predicted: f64,
    /// The measured speed-up (T1 ÷ wall time).
    pub measured: f64,
}

/// Stepanenko's Fig. 6 at the measured ρ, q, r with the measured splits at the measured φ.
pub fn balance_plot(hybrid: &Hybrid, runs: &[MeasuredSplit]) -> Result<Figure, PlotError> {
    let title = format!(
        "Speed-up against phi (q = {}, r = {}, rho = {})",
        hybrid.q,
        hybrid.r,
        crate::export::table::sig(hybrid.rho, 3)
    );
    let phis: Vec<f64> = (1..40).map(|k| f64::from(k) * 0.025).collect();
    let curve = |f: fn(&crate::model::stepanenko::Decomposition) -> f64| {
        phis.iter()
            .filter_map(|&phi| Hybrid::new(phi, hybrid.rho, hybrid.q, hybrid.r).ok())
            .map(|h| (h.phi, f(&h.decompose())))
            .collect::<Vec<_>>()
    };
    let mut series = vec![
        Series::new("K^max (model)", curve(|d| d.k_max), Mark::Line),
        Series::new(
            "K^D at best integer q* (model)",
            curve(|d| d.k_d),
            Mark::Dashed,
        ),
        Series::new(
            "proportional split (model)",
            curve(|d| d.k_proportional),
            Mark::Dotted,
        ),
    ];
    for run in runs.iter().filter(|r| r.measured.is_finite()) {
        series.push(Series::new(
            format!(
                "{}: measured (model {})",
                run.name,
                crate::export::table::sig(run.predicted, 3)
            ),
            vec![(hybrid.phi, run.measured)],
            Mark::Points,
        ));
    }
    Ok(Figure {
        title,
        main: Panel {
            x_label: "phi, MIMD share of T1".into(),
            y_label: "speed-up over one core".into(),
            log_x: false,
            log_y: false,
            series,
        },
        lower: None,
    })
}

/// The whole run's loss terms, milliseconds summed over processors: the prediction and each
/// measured run (`(label, report)`) as bars per term; the predicted productive time is in
/// the axis label (it would dwarf the losses as a bar).
pub fn cluster_losses_plot(
    predicted: &ClusterReport,
    measured: &[(String, &ClusterReport)],
) -> Result<BarFigure, PlotError> {
    let grid = predicted
        .grid
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join("×");
    let mut title = format!(
        "Losses: {} N = {} on {grid}",
        predicted.workload, predicted.size
    );
    let Some(root) = predicted.root() else {
        return Err(PlotError::Data {
            figure: title,
            message: "the prediction has no interval".into(),
        });
    };
    let mut reports: Vec<(String, &ClusterReport)> = vec![("predicted".into(), predicted)];
    reports.extend(measured.iter().cloned());
    let roots: Vec<_> = reports.iter().filter_map(|(_, r)| r.root()).collect();
    let names: Vec<String> = root
        .losses
        .terms()
        .iter()
        .map(|(n, _)| (*n).to_string())
        .collect();
    let groups = names
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let values = roots
                .iter()
                .map(|r| Some(1e3 * r.losses.terms()[k].1))
                .collect();
            (name.clone(), values)
        })
        .collect();
    title.push_str(&format!(
        " (productive {} ms)",
        crate::export::table::sig(1e3 * root.productive(), 3)
    ));
    Ok(BarFigure {
        title,
        y_label: "summed over processors (ms)".into(),
        series: reports.into_iter().map(|(label, _)| label).collect(),
        groups,
    })
}
