//! A device's page: its calibration, its fractal validations and suites, its max-plus
//! validations and its measured balance, each with its figures.

use std::fmt::Write as _;

use super::builder::Builder;
use super::{device_name, entries, figures_of, files_section, nav, InlineFigure, Page};
use crate::calibration::Calibration;
use crate::experiments::suite::Suite;
use crate::experiments::validate::Validation;
use crate::export::table::{sig, Table};
use crate::report::catalog::{Catalog, Entry, Stored};
use crate::report::figures::Section;

pub(super) fn device_page(catalog: &Catalog, figures: &[InlineFigure<'_>], device: &str) -> Page {
    let devices = catalog.devices();
    let name = device_name(catalog, device).unwrap_or_else(|| device.to_string());
    let mut b = Builder::new();
    let mine: Vec<&Entry> = entries(catalog, Some(device)).collect();
    let has = |f: fn(&Stored) -> bool| mine.iter().any(|e| f(&e.item));

    // Calibration.
    b.heading(2, "calibration", "Calibration");
    if !has(|s| matches!(s, Stored::Calibration(_))) {
        b.missing(&format!(
            "No calibration is stored for this device: run `harness calibrate --device …` \
             (it writes calibrations/{device}.json)."
        ));
    }
    for e in &mine {
        if let Stored::Calibration(c) = &e.item {
            calibration_section(&mut b, e, c);
            let _ = writeln!(b.body, "<div class=\"grid\">");
            for f in figures_of(figures, &e.path) {
                b.figure(f);
            }
            let _ = writeln!(b.body, "</div>");
        }
    }

    // Fractal predictions.
    b.heading(2, "fractal", "Fractal predictions against measurements");
    let suites: Vec<(&Entry, &Suite)> = mine
        .iter()
        .filter_map(|e| match &e.item {
            Stored::Suite(s) => Some((*e, &**s)),
            _ => None,
        })
        .collect();
    let validations: Vec<(&Entry, &Validation)> = mine
        .iter()
        .filter_map(|e| match &e.item {
            Stored::Validation(v) => Some((*e, &**v)),
            _ => None,
        })
        .collect();
    if suites.is_empty() && validations.is_empty() {
        b.missing(
            "No fractal validation is stored for this device: run `harness validate-suite` \
             or `harness validate <workload> --small … --large …`.",
        );
    }
    for (e, s) in &suites {
        suite_section(&mut b, e, s);
        for f in figures_of(figures, &e.path) {
            b.figure(f);
        }
    }
    if !validations.is_empty() {
        b.table(
            &format!("Every stored validation on {name}: |error| of the run total, %"),
            &validations_table(&validations),
        );
        let _ = writeln!(b.body, "<div class=\"grid\">");
        for f in figures.iter().filter(|f| {
            f.planned.section == Section::Fractal
                && f.planned.sources.len() > 1
                && f.planned.device.as_deref() == Some(device)
        }) {
            b.figure(f);
        }
        let _ = writeln!(b.body, "</div>");
        let _ = writeln!(
            b.body,
            "<details><summary>Each validation's fit and polynomial figures ({})</summary><div class=\"grid\">",
            validations.len()
        );
        for (e, _) in &validations {
            for f in figures_of(figures, &e.path) {
                b.figure(f);
            }
        }
        let _ = writeln!(b.body, "</div></details>");
    }

    // Max-plus.
    b.heading(2, "maxplus", "Max-plus model against measurements");
    if !has(|s| matches!(s, Stored::MaxPlus(_))) {
        b.missing(
            "No max-plus validation is stored for this device: run `harness validate-maxplus \
             kernels/graphs/<graph>.toml --sizes …`.",
        );
    }
    for e in &mine {
        if let Stored::MaxPlus(m) = &e.item {
            let mut t = Table::new(["variant", "published", "median |error| %", "max |error| %"]);
            for v in &m.errors {
                t.row([
                    v.model.clone(),
                    if v.published { "yes" } else { "no (ours)" }.to_string(),
                    sig(v.error.median, 3),
                    sig(v.error.max, 3),
                ]);
            }
            b.table(
                &format!("Max-plus {} on {}: error per variant", m.graph, m.device),
                &t,
            );
            for f in figures_of(figures, &e.path) {
                b.figure(f);
            }
        }
    }

    // Balance.
    b.heading(2, "balance", "CPU + accelerator balancing");
    if !has(|s| matches!(s, Stored::Balance(_))) {
        b.missing(
            "No measured balance is stored for this device: run `harness balance --workload \
             sor --size N --run`.",
        );
    }
    for e in &mine {
        if let Stored::Balance(bal) = &e.item {
            let d = &bal.decomposition;
            let mut t = Table::new(["φ", "ρ", "q", "r", "K^max", "q*", "K^D"]);
            t.row([
                sig(d.phi, 4),
                sig(d.rho, 4),
                d.q.to_string(),
                d.r.to_string(),
                sig(d.k_max, 4),
                d.q_star.to_string(),
                sig(d.k_d, 4),
            ]);
            b.table(&format!("Decomposition from {}", e.relative.display()), &t);
            let mut runs = Table::new(["split", "predicted speed-up", "measured speed-up"]);
            for r in &bal.runs {
                runs.row([r.split.name.clone(), sig(r.predicted, 3), sig(r.speedup, 3)]);
            }
            if !bal.runs.is_empty() {
                b.table("Measured splits", &runs);
            }
            let _ = writeln!(b.body, "<div class=\"grid\">");
            for f in figures_of(figures, &e.path) {
                b.figure(f);
            }
            let _ = writeln!(b.body, "</div>");
        }
    }
    b.heading(2, "cluster", "Cluster prediction");
    b.para(
        "Cluster predictions and the distributed runs they are checked against are not tied \
         to one device; they are on the index page.",
    );
    files_section(&mut b, &mine, &[]);
    b.finish(device, &name, &nav(&devices, catalog))
}

fn calibration_section(b: &mut Builder, e: &Entry, c: &Calibration) {
    let mut fp = Table::new(["property", "value"]);
    if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(&c.device) {
        for (k, v) in map {
            let text = match v {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            fp.row([k, text]);
        }
    }
    fp.row([
        "harness version".into(),
        c.provenance.harness_version.clone(),
    ]);
    fp.row(["git commit".into(), c.provenance.git_commit.clone()]);
    fp.row(["date".into(), c.provenance.date.clone()]);
    fp.row([
        "quick calibration",
        if c.provenance.quick { "yes" } else { "no" },
    ]);
    fp.row(["file".into(), e.relative.display().to_string()]);
    b.table("Fingerprint and provenance", &fp);
    let mut t = Table::new(["symbol", "parameter", "value", "unit", "95 % CI", "method"]);
    for (parameter, p) in c.parameters.iter() {
        t.row([
            parameter.symbol().to_string(),
            parameter.name().to_string(),
            sig(p.value, 4),
            p.unit.clone(),
            format!("[{}, {}]", sig(p.ci95[0], 4), sig(p.ci95[1], 4)),
            p.method.clone(),
        ]);
    }
    b.table("Max-plus model parameters", &t);
    let mut lv = Table::new(["level", "working sets", "latency ns", "95 % CI", "cycles"]);
    for l in &c.read_latency.levels {
        lv.row([
            l.level.clone(),
            format!(
                "{} – {} KiB",
                l.working_set_bytes[0] >> 10,
                l.working_set_bytes[1] >> 10
            ),
            sig(l.latency_ns, 4),
            format!("[{}, {}]", sig(l.ci95_ns[0], 4), sig(l.ci95_ns[1], 4)),
            l.cycles.map_or("–".into(), |c| sig(c, 4)),
        ]);
    }
    b.table("Read latency per level (pointer chase)", &lv);
    if let Some(bw) = &c.bandwidth {
        let mut t = Table::new([
            "level",
            "read GB/s",
            "write GB/s",
            "copy GB/s",
            "triad GB/s",
        ]);
        let g = |v: Option<f64>| v.map_or("–".into(), |v| sig(v, 3));
        for l in &bw.levels {
            let level = match (l.plateau_from_bytes, l.passes_in_launch) {
                (Some(p), _) => format!("{} (plateau from {} MiB)", l.level, p >> 20),
                (None, true) => format!("{} (passes in one launch)", l.level),
                (None, false) => l.level.clone(),
            };
            t.row([
                level,
                g(l.read_gbps),
                g(l.write_gbps),
                g(l.copy_gbps),
                g(l.triad_gbps),
            ]);
        }
        b.table("Streaming bandwidth per level (median of the sweep)", &t);
    }
    if let Some((t, strided)) = crate::report::views::one_thread_table(c) {
        b.table(
            "Streaming bandwidth per level on one thread, GB/s (what a host twin that is one loop meets)",
            &t,
        );
        b.para(&strided);
    }
    if !c.reported_caches.is_empty() {
        let mut t = Table::new(["level", "kind", "bytes", "source"]);
        for r in &c.reported_caches {
            t.row([
                r.level.clone(),
                r.kind.clone(),
                r.bytes.to_string(),
                r.source.clone(),
            ]);
        }
        b.table("Caches the device and the OS report", &t);
    }
    let mut other = Table::new(["quantity", "value"]);
    let lo = &c.launch_overhead;
    other.row([
        "launch overhead, device".into(),
        format!("{} ns", sig(lo.device_ns, 4)),
    ]);
    other.row([
        "launch overhead, wall".into(),
        format!("{} ns", sig(lo.wall_ns, 4)),
    ]);
    if let Some(seq) = &lo.sequence {
        other.row([
            "back-to-back launch (what predictions use)".into(),
            format!("{} ns per launch", sig(seq.fixed_ns, 4)),
        ]);
    }
    for t in &c.transfers {
        other.row([
            format!("{} transfer", t.direction),
            format!(
                "{} ns + {} ns/B{}",
                sig(t.start_ns, 4),
                sig(t.ns_per_byte, 4),
                t.bandwidth_gbps
                    .map_or(String::new(), |g| format!(" ({} GB/s)", sig(g, 3)))
            ),
        ]);
    }
    b.table("Launch and transfer costs", &other);
}

fn suite_section(b: &mut Builder, e: &Entry, s: &Suite) {
    let variants: Vec<String> = s.summary.iter().map(|v| v.variant.to_string()).collect();
    let mut header = vec!["case".to_string(), "N".into(), "measured s".into()];
    for v in &variants {
        header.push(format!("{v} s"));
        header.push(format!("{v} |error| %"));
    }
    let mut t = Table::new(header);
    for c in &s.cases {
        let mut row = vec![
            c.case.clone(),
            c.size.to_string(),
            sig(c.measured_seconds, 4),
        ];
        for v in &s.summary {
            match c.predictions.iter().find(|p| p.variant == v.variant) {
                Some(p) => {
                    row.push(sig(p.predicted_seconds, 4));
                    let holds = match p.interval_holds {
                        Some(false) => "*",
                        _ => "",
                    };
                    row.push(format!("{}{holds}", sig(p.abs_percent_error, 3)));
                }
                None => {
                    row.push("–".into());
                    row.push("–".into());
                }
            }
        }
        t.row(row);
    }
    b.table(
        &format!(
            "Validation suite ({}): every case, every variant (* the 95 % interval misses)",
            e.relative.display()
        ),
        &t,
    );
    let mut sum = Table::new([
        "variant",
        "cases predicted",
        "median |error| %",
        "max |error| %",
        "intervals holding",
        "intervals ≤ 2× wide",
    ]);
    for v in &s.summary {
        sum.row([
            v.variant.to_string(),
            format!("{} of {}", v.predicted, v.cases),
            sig(v.error.median, 3),
            sig(v.error.max, 3),
            format!("{:.0} %", v.interval_holds * 100.0),
            format!("{:.0} %", v.interval_within_2x * 100.0),
        ]);
    }
    b.table("Suite summary per variant", &sum);
}

/// What bounds each kernel phase of a validation's `calibrated` prediction (`phase:
/// regime`, once per phase), or `–` where it recorded none (files written before regimes).
fn regimes(v: &Validation) -> String {
    use crate::fit::forecast::{Regime, Variant};
    let mut seen: Vec<String> = Vec::new();
    for r in v.rows.iter().filter(|r| r.variant == Variant::Calibrated) {
        let Some(regime) = r.calibrated.as_ref().and_then(|c| c.regime) else {
            continue;
        };
        if matches!(regime, Regime::Transfer | Regime::Host) {
            continue;
        }
        let entry = format!("{}: {regime}", r.phase);
        if !seen.contains(&entry) {
            seen.push(entry);
        }
    }
    if seen.is_empty() {
        "–".into()
    } else {
        seen.join(", ")
    }
}

fn validations_table(validations: &[(&Entry, &Validation)]) -> Table {
    let mut t = Table::new([
        "file",
        "workload",
        "small sizes",
        "large sizes",
        "paper median",
        "paper max",
        "windowed median",
        "calibrated median",
        "kernels bound by",
        "check",
    ]);
    let med = |e: Option<&crate::experiments::validate::ErrorSummary>| {
        e.and_then(crate::report::catalog::median)
            .map_or("–".to_string(), |m| sig(m, 3))
    };
    for (e, v) in validations {
        let small: Vec<String> = v.series.points.iter().map(|p| p.size.to_string()).collect();
        let large: Vec<String> = v.large.iter().map(|p| p.size.to_string()).collect();
        t.row([
            e.relative
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            v.series.workload.clone(),
            small.join(", "),
            large.join(", "),
            med(Some(&v.total_error)),
            if v.total_error.max.is_finite() {
                sig(v.total_error.max, 3)
            } else {
                "–".into()
            },
            med(v.windowed_total_error.as_ref()),
            med(v.calibrated_total_error.as_ref()),
            regimes(v),
            v.series.check_state().label().into(),
        ]);
    }
    t
}
