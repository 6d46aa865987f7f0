//! The cluster prediction shown: a terminal table per interval, the comparison with a
//! measured run, and one self-contained HTML page holding the interval tree, each interval's
//! section linking to its children and back to its parent, as the DVM Predictor's report does.

use crate::export::{sig, Table};
use crate::model::cluster::report::{ClusterReport, Comparison, IntervalReport, ReportKind};

fn depth(r: &ClusterReport, i: &IntervalReport) -> usize {
    let mut d = 0;
    let mut at = i.parent;
    while let Some(p) = at {
        d += 1;
        at = r.intervals.get(p).and_then(|x| x.parent);
    }
    d
}

fn pct(part: f64, of: f64) -> String {
    if of > 0.0 {
        format!("{:.1} %", 100.0 * part / of)
    } else {
        "–".into()
    }
}

/// Per interval: executions, execution time, efficiency, and productive time and each loss
/// as a share of the total time (`P × execution time`).
pub fn cluster_table(r: &ClusterReport) -> Table {
    let mut t = Table::new([
        "interval",
        "runs",
        "time ms",
        "total ms",
        "efficiency",
        "productive",
        "insuff. par.",
        "shadow",
        "reduction",
        "sync",
        "idle",
    ]);
    for i in &r.intervals {
        t.row([
            format!("{}{}", "  ".repeat(depth(r, i)), i.name),
            i.executions.to_string(),
            sig(i.execution_time * 1e3, 4),
            sig(i.total_time * 1e3, 4),
            format!("{:.3}", i.efficiency),
            pct(i.productive(), i.total_time),
            pct(i.losses.insufficient_parallelism, i.total_time),
            pct(i.losses.shadow, i.total_time),
            pct(i.losses.reduction, i.total_time),
            pct(i.losses.synchronization, i.total_time),
            pct(i.losses.idle, i.total_time),
        ]);
    }
    t
}

/// The report as terminal text: a heading, the table, the notes.
pub fn cluster_text(r: &ClusterReport) -> String {
    let what = match r.kind {
        ReportKind::Predicted => "predicted",
        ReportKind::Measured => "measured",
    };
    let mut out = format!(
        "{} N = {}, {} iterations on {} processors ({}), {what}\nfrom: {}\n",
        r.workload,
        r.size,
        r.iterations,
        r.processors,
        grid_name(&r.grid),
        r.source
    );
    if let (Some(one), Some(root)) = (r.one_processor_seconds, r.root()) {
        if root.execution_time > 0.0 {
            out += &format!(
                "one processor: {} ms; speed-up {:.2} on {} processors\n",
                sig(one * 1e3, 4),
                one / root.execution_time,
                r.processors
            );
        }
    }
    out += "\n";
    out += &cluster_table(r).render();
    for n in &r.notes {
        out += &format!("note: {n}\n");
    }
    out
}

fn grid_name(g: &[usize]) -> String {
    g.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// A comparison as a table: per interval and quantity, predicted, measured, the error and
/// whether it is within the allowed difference.
pub fn comparison_table(c: &Comparison) -> Table {
    let mut t = Table::new([
        "interval",
        "quantity",
        "predicted ms",
        "measured ms",
        "error",
        "allowed ms",
        "within",
    ]);
    for row in &c.rows {
        t.row([
            row.interval.clone(),
            row.quantity.clone(),
            sig(row.predicted * 1e3, 4),
            sig(row.measured * 1e3, 4),
            format!("{:+.1} %", row.error_percent),
            sig(row.allowed * 1e3, 3),
            if row.within { "yes" } else { "NO" }.into(),
        ]);
    }
    t
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// One self-contained HTML page (no scripts, no network): a summary, then one section per
/// interval with its characteristics, its per-processor times, links to its sub-intervals and
/// back to its parent and to the top.
pub fn cluster_html(r: &ClusterReport) -> String {
    let title = format!(
        "{} N = {} on {} processors ({}) — {}",
        r.workload,
        r.size,
        r.processors,
        grid_name(&r.grid),
        match r.kind {
            ReportKind::Predicted => "predicted",
            ReportKind::Measured => "measured",
        }
    );
    let mut h = String::new();
    h += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
    h += &format!("<title>{}</title>\n", esc(&title));
    h += "<style>body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em}\
          table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #999;padding:.2em .5em;text-align:right}\
          th{background:#eee}td:first-child,th:first-child{text-align:left}section{border-top:2px solid #444;margin-top:1.5em}\
          nav a{margin-right:1em}</style>\n</head><body>\n";
    h += &format!("<h1 id=\"top\">{}</h1>\n", esc(&title));
    h += &format!("<p>From: {}</p>\n", esc(&r.source));
    if let Some(n) = &r.network {
        h += &format!(
            "<p>Network: {} (start time {:.3} µs, {:.5} µs per byte, power {})</p>\n",
            n.kind.file_name(),
            n.start.0 * 1e6,
            n.byte_time * 1e6,
            n.power
        );
    }
    if !r.notes.is_empty() {
        h += "<ul>\n";
        for n in &r.notes {
            h += &format!("<li>{}</li>\n", esc(n));
        }
        h += "</ul>\n";
    }
    h += "<h2>Intervals</h2>\n<ul>\n";
    for i in &r.intervals {
        h += &format!(
            "<li style=\"margin-left:{}em\"><a href=\"#interval-{}\">{}</a>: {} ms, efficiency {:.3}</li>\n",
            2 * depth(r, i),
            i.id,
            esc(&i.name),
            sig(i.execution_time * 1e3, 4),
            i.efficiency
        );
    }
    h += "</ul>\n";
    for i in &r.intervals {
        h += &format!(
            "<section id=\"interval-{}\">\n<h2>{}</h2>\n<p>Path: {} · executions: {} · shadow exchanges: {} · reductions: {}</p>\n",
            i.id,
            esc(&i.name),
            esc(&i.path),
            i.executions,
            i.shadow_operations,
            i.reduction_operations
        );
        h += "<table><tr><th>characteristic</th><th>ms</th><th>of total</th></tr>\n";
        let rows: [(&str, f64); 11] = [
            ("execution time", i.execution_time),
            ("total time (processors × execution)", i.total_time),
            ("productive: compute", i.productive_cpu),
            ("productive: system", i.productive_sys),
            (
                "insufficient parallelism",
                i.losses.insufficient_parallelism,
            ),
            ("communication", i.losses.communication),
            ("— shadow exchange", i.losses.shadow),
            ("— reduction", i.losses.reduction),
            ("synchronization", i.losses.synchronization),
            ("idle", i.losses.idle),
            ("all losses", i.losses.total()),
        ];
        for (name, v) in rows {
            h += &format!(
                "<tr><td>{name}</td><td>{}</td><td>{}</td></tr>\n",
                sig(v * 1e3, 4),
                pct(v, i.total_time)
            );
        }
        h += &format!(
            "<tr><td>efficiency</td><td colspan=\"2\">{:.3}</td></tr>\n</table>\n",
            i.efficiency
        );
        h += "<table><tr><th>processor</th><th>execution ms</th><th>compute</th><th>system</th><th>insuff. par.</th><th>shadow</th><th>reduction</th><th>sync</th></tr>\n";
        for (p, t) in i.processors.iter().enumerate() {
            h += &format!(
                "<tr><td>{p}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                sig(t.execution * 1e3, 4),
                sig(t.cpu * 1e3, 4),
                sig(t.sys * 1e3, 4),
                sig(t.insufficient_parallelism * 1e3, 4),
                sig(t.shadow * 1e3, 4),
                sig(t.reduction * 1e3, 4),
                sig(t.synchronization * 1e3, 4)
            );
        }
        h += "</table>\n<nav>";
        if !i.children.is_empty() {
            h += "Sub-intervals: ";
            for &c in &i.children {
                if let Some(ci) = r.intervals.get(c) {
                    h += &format!("<a href=\"#interval-{c}\">{}</a>", esc(&ci.name));
                }
            }
        }
        if let Some(p) = i.parent {
            h += &format!("<a href=\"#interval-{p}\">up to the enclosing interval</a>");
        }
        h += "<a href=\"#top\">top</a></nav>\n</section>\n";
    }
    h += "</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cluster::report::{ProcessorTimes, CLUSTER_SCHEMA};

    fn report() -> ClusterReport {
        let t = ProcessorTimes {
            execution: 2.0,
            cpu: 1.5,
            shadow: 0.5,
            ..Default::default()
        };
        let root = IntervalReport::from_processors(
            0,
            "run".into(),
            "run".into(),
            None,
            vec![1],
            1,
            (1, 0),
            vec![t, t],
        );
        let child = IntervalReport::from_processors(
            1,
            "a<b".into(),
            "run/a<b".into(),
            Some(0),
            vec![],
            1,
            (0, 0),
            vec![t, t],
        );
        ClusterReport {
            schema: CLUSTER_SCHEMA.into(),
            kind: ReportKind::Predicted,
            workload: "jacobi2d".into(),
            size: 10,
            iterations: 1,
            grid: vec![2],
            processors: 2,
            network: None,
            source: "hand".into(),
            one_processor_seconds: Some(3.0),
            notes: vec!["n".into()],
            intervals: vec![root, child],
        }
    }

    #[test]
    fn every_link_of_the_html_page_resolves_and_text_is_escaped() {
        let html = cluster_html(&report());
        let ids: Vec<&str> = html
            .split("id=\"")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        let links: Vec<&str> = html
            .split("href=\"#")
            .skip(1)
            .map(|s| &s[..s.find('"').unwrap()])
            .collect();
        assert!(links.len() >= 5, "{links:?}");
        for l in links {
            assert!(ids.contains(&l), "link #{l} has no target");
        }
        assert!(html.contains("a&lt;b") && !html.contains("a<b"));
        assert!(!html.contains("<script"));
        let text = cluster_text(&report());
        assert!(text.contains("speed-up 1.50"), "{text}");
    }
}
