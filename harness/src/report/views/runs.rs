//! A workload run's phase table and a series' progress and launch cost.

use super::opt;
use crate::export::{sig, Table};

/// The phase table of one workload run, like a profiler's summary.
/// `verify_asked`: whether the run was asked to check its result (a run that was, but holds
/// no verification, ran a spec without a check: it says "unchecked").
pub fn run_table(r: &crate::workloads::RunResult, verify_asked: bool) -> String {
    let mut t = Table::new(["phase", "time ms", "count", "fraction", "GB/s"]);
    for p in &r.phases {
        t.row([
            p.name.clone(),
            sig(p.seconds * 1e3, 4),
            p.count.to_string(),
            format!("{:.1} %", p.fraction * 100.0),
            opt(p.gbps().map(|g| sig(g, 3))),
        ]);
    }
    if r.kernel_seconds > 0.0 && r.kernel_seconds < r.total_seconds {
        t.row([
            "kernels".to_string(),
            sig(r.kernel_seconds * 1e3, 4),
            String::new(),
            format!("{:.1} %", r.kernel_seconds / r.total_seconds * 100.0),
            String::new(),
        ]);
    }
    t.row([
        "total".to_string(),
        sig(r.total_seconds * 1e3, 4),
        String::new(),
        "100.0 %".to_string(),
        String::new(),
    ]);
    let check = match &r.verification {
        Some(v) => format!(
            "verified against {}: max abs error {:.3e}, max rel error {:.3e} (tolerance {:.0e})",
            v.against.as_deref().unwrap_or("the host"),
            v.max_abs_error,
            v.max_rel_error,
            v.tolerance
        ),
        None if verify_asked => {
            "unchecked: the workload has no check (a spec without [check]), so nothing verified the result".to_string()
        }
        None => "not verified (--no-verify)".to_string(),
    };
    format!(
        "{} at N = {}, {} iterations\n\n{}\n{check}\n",
        r.workload,
        r.size,
        r.iterations,
        t.render()
    )
}

/// One line per size of a series as it completes.
pub fn series_progress(p: &crate::experiments::series::SeriesPoint) -> String {
    format!(
        "N = {}: total {} ms [{}, {}], min {} ms, {} runs",
        p.size,
        sig(p.total.median_seconds * 1e3, 4),
        sig(p.total.ci95[0] * 1e3, 4),
        sig(p.total.ci95[1] * 1e3, 4),
        p.total
            .min_seconds
            .map_or("-".to_string(), |m| sig(m * 1e3, 4)),
        p.total.samples.len()
    )
}

/// The launch cost a series measured in its rounds, in one line; `None` without a probe.
pub fn launch_probe_line(series: &crate::experiments::series::Series) -> Option<String> {
    let probe = series.launch_probe.as_ref()?;
    let samples = &probe.sample_fixed_ns;
    let spread = match (
        samples.iter().copied().reduce(f64::min),
        samples.iter().copied().reduce(f64::max),
    ) {
        (Some(lo), Some(hi)) => format!(
            " ({} samples, {}–{} ns each)",
            samples.len(),
            sig(lo, 3),
            sig(hi, 3)
        ),
        _ => String::new(),
    };
    Some(format!(
        "launch cost beside the series: {} ns per launch + {} ns per work item{spread}",
        sig(probe.line.fixed_ns, 3),
        sig(probe.line.per_item_ns, 2),
    ))
}
