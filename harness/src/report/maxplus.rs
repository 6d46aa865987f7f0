//! Tables for `harness maxplus` and `harness validate-maxplus`.

use crate::calibration::model_parameters::ModelInputs;
use crate::experiments::validate_maxplus::MaxPlusValidation;
use crate::export::{sig, Table};
use crate::model::maxplus::parameters::display_name;
use crate::model::maxplus::summary::GraphSummary;
use crate::model::maxplus::VariantTime;

/// The graph: nodes, Z, height and every model's formula.
pub fn graph_report(s: &GraphSummary) -> String {
    let mut out = format!("graph {}", s.name);
    if let Some(d) = &s.description {
        out.push_str(&format!(": {d}"));
    }
    out.push_str(&format!(
        "\n{} global read(s), {} write(s) per instance; height k = {}\n\n",
        s.reads, s.writes, s.height
    ));
    let mut nodes = Table::new(["#", "node", "kind", "label"]);
    for (i, n) in s.nodes.iter().enumerate() {
        nodes.row([
            (i + 1).to_string(),
            n.id.clone(),
            n.kind.clone(),
            n.label.clone().unwrap_or_default(),
        ]);
    }
    out.push_str(&nodes.render());
    out.push_str("\nkernel matrix Z (row i, column j: time of arc j → i; ε = no arc):\n");
    out.push_str(&s.matrix);
    out.push_str(&format!(
        "\n⟨1_o, Z^⊙{} ⊙ 1_i⟩ (paper, literally) = {}\n\n",
        s.height, s.paper_formula
    ));
    let mut formulas = Table::new(["model", "per-instance time"]);
    for f in &s.formulas {
        let name = if f.published {
            f.model.clone()
        } else {
            format!("{} (extension)", f.model)
        };
        formulas.row([name, f.formula.clone()]);
    }
    out.push_str(&formulas.render());
    out
}

/// The values a calibration gives the model, with their sources.
pub fn inputs_table(inputs: &ModelInputs, executors: u64) -> String {
    let mut t = Table::new(["parameter", "value", "from"]);
    for s in &inputs.sources {
        let value = if s.name == "n" {
            format!("{executors}")
        } else {
            format!("{} ns", sig(s.value * 1e9, 4))
        };
        t.row([display_name(&s.name).to_string(), value, s.source.clone()]);
    }
    t.row([
        "L".to_string(),
        format!("{} ns", sig(inputs.launch_seconds.as_ns(), 4)),
        "launch_overhead.device_ns (extension only)".to_string(),
    ]);
    t.render()
}

/// Predicted seconds per size, one column per model.
pub fn predictions_table(rows: &[(usize, Vec<VariantTime>)]) -> String {
    let Some((_, first)) = rows.first() else {
        return String::new();
    };
    let mut t = Table::new(std::iter::once("N".to_string()).chain(first.iter().map(column)));
    for (size, variants) in rows {
        t.row(std::iter::once(size.to_string()).chain(variants.iter().map(|v| sig(v.seconds, 4))));
    }
    t.render()
}

fn column(v: &VariantTime) -> String {
    if v.published {
        format!("{} s", v.model)
    } else {
        format!("{}* s", v.model)
    }
}

/// Measured against every variant, then the error summary per variant.
pub fn validation_report(v: &MaxPlusValidation) -> String {
    let Some(first) = v.rows.first() else {
        return format!("no size could be measured: {}\n", v.skipped.join("; "));
    };
    let header = [
        "N".to_string(),
        "iters".to_string(),
        "measured s".to_string(),
    ]
    .into_iter()
    .chain(first.predictions.iter().map(|p| {
        let star = if p.published { "" } else { "*" };
        format!("{}{star} (err %)", p.model)
    }));
    let mut t = Table::new(header);
    for r in &v.rows {
        let iterations = if r.iterations > 0 {
            r.iterations
        } else {
            v.iterations
        };
        let cells = [
            r.size.to_string(),
            iterations.to_string(),
            sig(r.measured_seconds, 4),
        ]
        .into_iter()
        .chain(
            r.predictions
                .iter()
                .zip(&r.abs_percent_errors)
                .map(|(p, e)| format!("{} ({e:.0})", sig(p.seconds, 3))),
        );
        t.row(cells);
    }
    let mut errors = Table::new(["model", "kind", "mean %", "median %", "max %"]);
    for e in &v.errors {
        errors.row([
            e.model.clone(),
            if e.published { "paper" } else { "extension" }.to_string(),
            format!("{:.1}", e.error.mean),
            format!("{:.1}", e.error.median),
            format!("{:.1}", e.error.max),
        ]);
    }
    let mut out = format!(
        "{}\n{}* = our extension, not the paper's model\n",
        t.render(),
        errors.render()
    );
    if let Some(best) = &v.best {
        out.push_str(&format!("lowest median error: {best}\n"));
    }
    for s in &v.skipped {
        out.push_str(&format!("skipped {s}\n"));
    }
    out
}
