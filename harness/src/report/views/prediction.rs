//! The fractal prediction's table, the validation's and the window chosen for a target.

use super::opt;
use crate::export::{sig, Table};

/// The `harness predict` table: per phase the fractal dimension, the prediction and its
/// interval, and the baselines' predictions.
pub fn forecast_table(f: &crate::fit::forecast::Forecast) -> String {
    let mut t = Table::new([
        "phase",
        "m (dim.)",
        "R²",
        "predicted s",
        "95% PI",
        "a·N^c+b s",
        "poly 1..4 s",
    ]);
    let mut warnings = Vec::new();
    for p in &f.phases {
        let polys: Vec<String> = p
            .polynomial_seconds
            .iter()
            .map(|(_, v)| sig(*v, 3))
            .collect();
        t.row([
            p.name.clone(),
            sig(p.fractal.fractal_dimension, 3),
            format!("{:.4}", p.fractal.r_squared),
            sig(p.prediction_seconds(), 4),
            format!(
                "[{}, {}]",
                sig(p.interval_seconds()[0], 3),
                sig(p.interval_seconds()[1], 3)
            ),
            opt(p.power_offset_seconds.map(|v| sig(v, 4))),
            if polys.is_empty() {
                "-".into()
            } else {
                polys.join(" / ")
            },
        ]);
        for w in p.warnings.iter().chain(&p.fractal.notes) {
            warnings.push(format!("{}: {w}", p.name));
        }
    }
    let mut out = format!(
        "{} at N = {} (fractal fit, {} variant)\n\n{}",
        f.workload,
        f.target,
        f.variant,
        t.render()
    );
    match (&f.application, &f.application_error) {
        (Some(a), _) => out.push_str(&format!(
            "\nwhole application (selected phases' fractions normalised, docs/models.md §2 step 3): {} s\n",
            sig(a.prediction_seconds, 4)
        )),
        (None, Some(e)) => out.push_str(&format!("\nwhole application: not predicted ({e})\n")),
        _ => {}
    }
    for w in warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    for skipped in &f.skipped_phases {
        out.push_str(&format!("skipped: {skipped}\n"));
    }
    out
}

/// What each phase of a `calibrated` forecast is bound by and which estimate it took, with
/// the shares of each roof it reached at the window's largest size (docs/models.md §2.4,
/// "What bounds a phase"); empty for a forecast without calibrated estimates.
pub fn calibrated_regimes(f: &crate::fit::forecast::Forecast) -> String {
    let mut t = Table::new([
        "phase",
        "bound by",
        "estimate",
        "share of rate",
        "share of flop/s",
    ]);
    let mut any = false;
    for p in &f.phases {
        let Some(c) = &p.calibrated else { continue };
        let Some(regime) = c.regime else { continue };
        any = true;
        let share = |v: Option<f64>| opt(v.map(|s| format!("{:.0} %", 100.0 * s)));
        t.row([
            p.name.clone(),
            regime.to_string(),
            serde_json::to_value(c.method)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            share(c.share_of_rate),
            share(c.share_of_flops),
        ]);
    }
    if any {
        t.render()
    } else {
        String::new()
    }
}

/// The `harness validate` table: predicted against measured per size and phase.
pub fn validation_table(v: &crate::experiments::validate::Validation) -> String {
    let mut t = Table::new([
        "N",
        "variant",
        "phase",
        "predicted s",
        "95% PI",
        "measured s",
        "abs. error %",
        "bound by",
    ]);
    for r in &v.rows {
        t.row([
            r.size.to_string(),
            r.variant.to_string(),
            r.phase.clone(),
            sig(r.predicted_seconds, 4),
            r.interval.map_or("-".to_string(), |i| {
                format!("[{}, {}]", sig(i[0], 3), sig(i[1], 3))
            }),
            sig(r.measured_seconds, 4),
            format!("{:.1}", r.abs_percent_error),
            r.calibrated
                .as_ref()
                .and_then(|c| c.regime)
                .map_or("-".to_string(), |g| g.to_string()),
        ]);
    }
    let mut out = format!(
        "{}\npaper, total: mean {:.1} %, median {:.1} %, max {:.1} %; all rows: mean {:.1} %, median {:.1} %, max {:.1} %\n",
        t.render(),
        v.total_error.mean,
        v.total_error.median,
        v.total_error.max,
        v.all_error.mean,
        v.all_error.median,
        v.all_error.max
    );
    for (name, e) in [
        ("windowed", &v.windowed_total_error),
        ("calibrated", &v.calibrated_total_error),
    ] {
        if let Some(e) = e {
            out.push_str(&format!(
                "{name}, total: mean {:.1} %, median {:.1} %, max {:.1} %\n",
                e.mean, e.median, e.max
            ));
        }
    }
    for w in &v.windows {
        out.push_str(&window_report(w));
    }
    // How the calibrated variant moved the sizes (cold runs, access patterns, the bounds
    // its interval reaches).
    for w in &v.calibrated_windows {
        if let Some(note) = &w.note {
            out.push_str(&format!(
                "calibrated for N = {}: {note}
",
                w.size
            ));
        }
    }
    out
}

/// The window chosen for one target: the sizes fitted, each rejected size with its reasons.
pub fn window_report(w: &crate::experiments::validate::LargeWindow) -> String {
    let accepted = &w.choice.accepted;
    let mut out = if accepted.len() >= 3 {
        format!(
            "window for N = {} (its working set lives in {}): fitted on {accepted:?}\n",
            w.size, w.choice.target_level
        )
    } else {
        format!(
            "window for N = {} (its working set lives in {}): {} size(s) pass the rules{}, 3 are needed: no windowed fit\n",
            w.size,
            w.choice.target_level,
            accepted.len(),
            if accepted.is_empty() { String::new() } else { format!(" ({accepted:?})") }
        )
    };
    for r in &w.choice.rejected {
        out.push_str(&format!(
            "  rejected {}: {}\n",
            r.size,
            r.reasons.join("; ")
        ));
    }
    for u in &w.choice.unchecked {
        out.push_str(&format!("  not checked: {u}\n"));
    }
    if let Some(note) = &w.note {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}
