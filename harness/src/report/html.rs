//! `harness report`: one self-contained HTML page per device (figures inlined as SVG, no
//! script, no network) and an index page that puts the devices side by side and holds the
//! results tied to no device (the cluster prediction). Every table of a page is also written
//! as Markdown and as LaTeX (booktabs) beside it, for pasting into a paper.
//!
//! A section with nothing stored says so and names the command that makes its input; files
//! that could not be read are listed with the reason.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::catalog::{Catalog, Entry, Skipped, Stored};
use super::figures::{Planned, Section};
use crate::calibration::Calibration;
use crate::experiments::suite::Suite;
use crate::experiments::validate::Validation;
use crate::export::latex::table_to_latex;
use crate::export::markdown::table_to_markdown;
use crate::export::table::{sig, Table};
use crate::model::cluster::Comparison;

/// One page of the report, with its tables in Markdown and LaTeX.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// File name stem (`index`, or the device's slug).
    pub name: String,
    /// The HTML document.
    pub html: String,
    /// Every table of the page, in Markdown, under its caption.
    pub markdown: String,
    /// Every table of the page, as LaTeX booktabs tables.
    pub latex: String,
}

/// A figure ready to inline: its plan and its SVG text (`None`: it could not be drawn).
pub struct InlineFigure<'a> {
    /// The plan.
    pub planned: &'a Planned,
    /// The SVG.
    pub svg: Option<String>,
}

/// Build every page: the index, then one per device in `devices` (sorted slugs).
pub fn pages(catalog: &Catalog, figures: &[InlineFigure<'_>], notes: &[String]) -> Vec<Page> {
    let devices = catalog.devices();
    let mut out = vec![index_page(catalog, figures, notes, &devices)];
    for device in &devices {
        out.push(device_page(catalog, figures, device));
    }
    out
}

/// An HTML page under construction, collecting its tables.
struct Builder {
    body: String,
    markdown: String,
    latex: String,
    tables: usize,
}

impl Builder {
    fn new() -> Self {
        Builder {
            body: String::new(),
            markdown: String::new(),
            latex: String::new(),
            tables: 0,
        }
    }

    fn heading(&mut self, level: u8, id: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<h{level} id=\"{}\">{}</h{level}>",
            attr(id),
            esc(text)
        );
    }

    fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", esc(text));
    }

    fn missing(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"missing\">{}</p>", esc(text));
    }

    fn table(&mut self, caption: &str, table: &Table) {
        self.tables += 1;
        let _ = writeln!(
            self.body,
            "<div class=\"scroll\"><table><caption>{}</caption><thead><tr>",
            esc(caption)
        );
        for h in table.header() {
            let _ = write!(self.body, "<th>{}</th>", esc(h));
        }
        self.body.push_str("</tr></thead><tbody>\n");
        for row in table.rows() {
            self.body.push_str("<tr>");
            for i in 0..table.header().len() {
                let cell = row.get(i).map_or("", String::as_str);
                let class = if is_number(cell) { " class=\"n\"" } else { "" };
                let _ = write!(self.body, "<td{class}>{}</td>", esc(cell));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table></div>\n");
        let _ = write!(
            self.markdown,
            "### {}\n\n{}\n",
            crate::export::markdown::inline(caption),
            table_to_markdown(table)
        );
        self.latex.push_str(&table_to_latex(table, caption));
        self.latex.push('\n');
    }

    fn figure(&mut self, f: &InlineFigure<'_>) {
        let Some(svg) = &f.svg else { return };
        let sources: Vec<String> = f
            .planned
            .sources
            .iter()
            .map(|s| s.display().to_string())
            .collect();
        let _ = writeln!(
            self.body,
            "<figure id=\"{}\">{}<figcaption>{} <span class=\"src\">(from {})</span></figcaption></figure>",
            attr(&f.planned.stem.display().to_string()),
            svg_body(svg),
            esc(f.planned.drawing.title()),
            esc(&sources.join(", "))
        );
    }

    fn finish(self, name: &str, title: &str, nav: &str) -> Page {
        let html = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<nav>{nav}</nav>\n\
             <main>\n<h1>{}</h1>\n{}</main>\n</body>\n</html>\n",
            esc(title),
            esc(title),
            self.body
        );
        Page {
            name: name.to_string(),
            html,
            markdown: format!(
                "# {}\n\n{}",
                crate::export::markdown::inline(title),
                self.markdown
            ),
            latex: format!(
                "% {}: tables for a paper (\\usepackage{{booktabs}})\n\n{}",
                crate::export::latex::escape(title),
                self.latex
            ),
        }
    }
}

/// The page's look: readable without the network, no script; wide tables scroll inside
/// their box instead of widening the page.
const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;\
color:#111;background:#fff;line-height:1.45}nav{padding:.6em 1.2em;background:#f2f2f2;\
border-bottom:1px solid #ddd}nav a{margin-right:1em}main{max-width:1180px;margin:0 auto;\
padding:0 1.2em 3em}h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
figure{margin:1em 0;max-width:760px}figure svg{width:100%;height:auto;display:block}\
figcaption{font-size:.9em;color:#333}.src{color:#777;word-break:break-all}\
.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:1em 0;\
font-size:.88em}caption{text-align:left;font-weight:600;padding-bottom:.3em}\
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}thead th{border-bottom:2px solid #555}\
.missing{color:#8a4b00;background:#fff6e6;padding:.4em .7em;border-left:3px solid #e69f00}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:1em}\
.grid figure{max-width:none}details{margin:1em 0}summary{cursor:pointer;font-weight:600}\
code{background:#f4f4f4;padding:0 .25em}";

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn attr(text: &str) -> String {
    esc(text).replace('"', "&quot;")
}

fn is_number(cell: &str) -> bool {
    cell.trim_start_matches(['-', '+', '−'])
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

/// The SVG element of a plotters document (it has no XML prolog, so it inlines as is), with
/// an accessible role.
fn svg_body(svg: &str) -> String {
    svg.replacen("<svg ", "<svg role=\"img\" ", 1)
}

fn nav(devices: &[String], catalog: &Catalog) -> String {
    let mut out = String::from("<a href=\"index.html\">all devices</a>");
    for d in devices {
        let name = device_name(catalog, d).unwrap_or_else(|| d.clone());
        let _ = write!(out, "<a href=\"{}.html\">{}</a>", attr(d), esc(&name));
    }
    out
}

/// The device's name as its calibration (or any file of it) gives it.
fn device_name(catalog: &Catalog, slug: &str) -> Option<String> {
    catalog.entries.iter().find_map(|e| {
        if e.device.as_deref() != Some(slug) {
            return None;
        }
        match &e.item {
            Stored::Calibration(c) => Some(format!("{} ({})", c.device.name, c.device.backend)),
            Stored::Validation(v) => Some(format!(
                "{} ({})",
                v.series.device.name, v.series.device.backend
            )),
            Stored::Suite(s) => Some(format!("{} ({})", s.device.name, s.device.backend)),
            _ => None,
        }
    })
}

fn entries<'a>(catalog: &'a Catalog, device: Option<&'a str>) -> impl Iterator<Item = &'a Entry> {
    catalog
        .entries
        .iter()
        .filter(move |e| e.device.as_deref() == device)
}

fn figures_of<'a, 'b>(
    figures: &'b [InlineFigure<'a>],
    source: &'b Path,
) -> impl Iterator<Item = &'b InlineFigure<'a>> {
    figures
        .iter()
        .filter(move |f| f.planned.sources.len() == 1 && f.planned.sources[0] == source)
}

fn device_page(catalog: &Catalog, figures: &[InlineFigure<'_>], device: &str) -> Page {
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

fn index_page(
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
            t.row([
                l.level.clone(),
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
        "check",
    ]);
    let med = |e: Option<&crate::experiments::validate::ErrorSummary>| {
        e.and_then(super::catalog::median)
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
            v.series.check_state().label().into(),
        ]);
    }
    t
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

fn files_section(b: &mut Builder, used: &[&Entry], skipped: &[Skipped]) {
    b.heading(2, "files", "Files");
    if used.is_empty() && skipped.is_empty() {
        b.para("No file.");
        return;
    }
    let mut t = Table::new(["file", "kind"]);
    for e in used {
        t.row([e.relative.display().to_string(), e.item.kind().to_string()]);
    }
    if !used.is_empty() {
        b.table("Files this page is made from", &t);
    }
    if !skipped.is_empty() {
        let mut s = Table::new(["file", "why it was skipped"]);
        for k in skipped {
            s.row([k.path.display().to_string(), k.reason.clone()]);
        }
        b.table("Files skipped", &s);
    }
}

/// Write every page as `<dir>/<name>.html`, `.md` and `.tex` as one unit
/// ([`crate::export::write_together`]): every file written first, then renamed into place,
/// the index last, so a page that cannot be written (a full disk) leaves no index linking to
/// it, and nothing is replaced; returns the paths.
pub fn write_pages(pages: &[Page], dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut ordered: Vec<&Page> = pages.iter().filter(|p| p.name != "index").collect();
    ordered.extend(pages.iter().filter(|p| p.name == "index"));
    let mut files: Vec<(PathBuf, &[u8])> = Vec::new();
    for p in ordered {
        for (ext, text) in [("html", &p.html), ("md", &p.markdown), ("tex", &p.latex)] {
            files.push((dir.join(format!("{}.{ext}", p.name)), text.as_bytes()));
        }
    }
    let unit: Vec<(&Path, &[u8])> = files.iter().map(|(p, b)| (p.as_path(), *b)).collect();
    crate::export::write_together(&unit).map_err(|e| {
        std::io::Error::new(
            e.source.kind(),
            format!("{}: {}", e.path.display(), e.source),
        )
    })?;
    Ok(files.into_iter().map(|(p, _)| p).collect())
}
