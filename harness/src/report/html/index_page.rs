//! The index page: the devices side by side, the validation suites of every device and the
//! results tied to no device (the balancing model's example, the cluster prediction).

use std::fmt::Write as _;

use super::builder::{attr, esc, Builder};
use super::{device_name, entries, files_section, nav, InlineFigure, Page};
use crate::calibration::Calibration;
use crate::experiments::suite::Suite;
use crate::export::table::{sig, Table};
use crate::model::cluster::Comparison;
use crate::report::catalog::{Catalog, Entry, Stored};
use crate::report::figures::Section;

pub(super) fn index_page(
    catalog: &Catalog,
    figures: &[InlineFigure<'_>],
    notes: &[String],
    devices: &[String],
) -> Page {
    let mut b = Builder::new();
    b.heading(2, "devices", "Devices");
    if devices.is_empty() {
        b.missing("No stored result names a device: run `harness calibrate` first.");
    } else {
        let _ = writeln!(b.body, "<ul>");
        for d in devices {
            let name = device_name(catalog, d).unwrap_or_else(|| d.clone());
            let count = catalog
                .entries
                .iter()
                .filter(|e| e.device.as_deref() == Some(d))
                .count();
            let _ = writeln!(
                b.body,
                "<li><a href=\"{}.html\">{}</a>: {count} result file(s)</li>",
                attr(d),
                esc(&name)
            );
        }
        let _ = writeln!(b.body, "</ul>");
    }
    let calibrations: Vec<(&Entry, &Calibration)> = catalog
        .entries
        .iter()
        .filter_map(|e| match &e.item {
            Stored::Calibration(c) => Some((e, &**c)),
            _ => None,
        })
        .collect();
    if calibrations.len() > 1 {
        b.table(
            "The calibrated parameters side by side (value [95 % CI])",
            &side_by_side(&calibrations),
        );
    }
    let suites: Vec<(&Entry, &Suite)> = catalog
        .entries
        .iter()
        .filter_map(|e| match &e.item {
            Stored::Suite(s) => Some((e, &**s)),
            _ => None,
        })
        .collect();
    if !suites.is_empty() {
        let mut t = Table::new([
            "file",
            "device",
            "variant",
            "cases predicted",
            "median |error| %",
            "max |error| %",
            "intervals holding",
        ]);
        for (e, s) in &suites {
            for v in &s.summary {
                t.row([
                    e.relative.display().to_string(),
                    s.device.name.clone(),
                    v.variant.to_string(),
                    format!("{} of {}", v.predicted, v.cases),
                    sig(v.error.median, 3),
                    sig(v.error.max, 3),
                    format!("{:.0} %", v.interval_holds * 100.0),
                ]);
            }
        }
        b.table("Validation suites, every device", &t);
    }

    b.heading(2, "balance", "Balancing model");
    b.para(
        "Stepanenko's decomposition at the paper's worked example (φ = 0.3, ρ = 5.7, 28 \
         cores, 3 accelerators); each device's page draws it again at its measured φ and ρ \
         with the splits run there.",
    );
    for f in figures
        .iter()
        .filter(|f| f.planned.section == Section::Balance && f.planned.device.is_none())
    {
        b.figure(f);
    }
    b.heading(2, "cluster", "Cluster prediction against distributed runs");
    let comparisons: Vec<(&Entry, &Comparison)> = entries(catalog, None)
        .filter_map(|e| match &e.item {
            Stored::ClusterComparison(c) => Some((e, &**c)),
            _ => None,
        })
        .collect();
    let predictions: Vec<&Entry> = entries(catalog, None)
        .filter(|e| matches!(&e.item, Stored::Cluster(_)))
        .collect();
    if comparisons.is_empty() && predictions.is_empty() {
        b.missing(
            "No cluster prediction is stored: run `harness predict-cluster` (and \
             `scripts/cluster-check.sh` for the measured side).",
        );
    }
    if !comparisons.is_empty() {
        let mut t = Table::new([
            "file",
            "setting",
            "run time error %",
            "quantities within bounds",
        ]);
        for (e, c) in &comparisons {
            let run = c
                .rows
                .iter()
                .find(|r| r.interval == "run" && r.quantity == "execution time");
            let within = c.rows.iter().filter(|r| r.within).count();
            t.row([
                e.relative.display().to_string(),
                c.setting.clone(),
                run.map_or("–".into(), |r| format!("{:+.1}", r.error_percent)),
                format!("{within} of {}", c.rows.len()),
            ]);
        }
        b.table("Predicted against measured distributed runs", &t);
    }
    let _ = writeln!(b.body, "<div class=\"grid\">");
    for f in figures
        .iter()
        .filter(|f| f.planned.section == Section::Cluster)
    {
        b.figure(f);
    }
    let _ = writeln!(b.body, "</div>");
    if !predictions.is_empty() {
        b.para(&format!(
            "{} cluster report(s) are stored; each has its own interval-by-interval HTML page \
             beside its JSON (written by predict-cluster and mpi-run).",
            predictions.len()
        ));
    }
    let unowned: Vec<&Entry> = entries(catalog, None).collect();
    files_section(&mut b, &unowned, &catalog.skipped);
    if !notes.is_empty() {
        b.heading(2, "notes", "Figures not made");
        let _ = writeln!(b.body, "<ul>");
        for n in notes {
            let _ = writeln!(b.body, "<li>{}</li>", esc(n));
        }
        let _ = writeln!(b.body, "</ul>");
    }
    b.finish("index", "harness report", &nav(devices, catalog))
}

fn side_by_side(calibrations: &[(&Entry, &Calibration)]) -> Table {
    let mut header = vec!["parameter".to_string()];
    header.extend(
        calibrations
            .iter()
            .map(|(_, c)| format!("{} ({})", c.device.name, c.device.backend)),
    );
    let mut t = Table::new(header);
    if let Some((_, first)) = calibrations.first() {
        for (parameter, _) in first.parameters.iter() {
            let mut row = vec![format!("{} {}", parameter.symbol(), parameter.name())];
            for (_, c) in calibrations {
                let cell = c.parameters.iter().find(|(p, _)| *p == parameter).map_or(
                    "–".into(),
                    |(_, e)| {
                        format!(
                            "{} {} [{}, {}]",
                            sig(e.value, 3),
                            e.unit,
                            sig(e.ci95[0], 3),
                            sig(e.ci95[1], 3)
                        )
                    },
                );
                row.push(cell);
            }
            t.row(row);
        }
    }
    t
}
