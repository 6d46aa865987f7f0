//! Stepanenko's balance: the decomposition, the measured fragments and the split runs.

use crate::export::{sig, Table};

/// The `harness balance` decomposition table (docs/models.md §3).
pub fn decomposition_table(d: &crate::model::stepanenko::Decomposition) -> String {
    let h = &d.hybrid;
    let mut t = Table::new(["quantity", "value", "meaning"]);
    let mut row = |a: &str, b: String, c: &str| t.row([a.to_string(), b, c.to_string()]);
    row("phi", sig(h.phi, 4), "MIMD share of T1");
    row(
        "rho",
        sig(h.rho, 4),
        "accelerator speed-up of the SIMD fragment",
    );
    row("q, r", format!("{}, {}", h.q, h.r), "cores, accelerators");
    row(
        "K proportional",
        sig(d.k_proportional, 4),
        "cores split evenly among the accelerators",
    );
    row("nu*", sig(d.nu_continuous, 4), "continuous optimum of q*/q");
    if d.k_max_attainable {
        row("K^max", sig(d.k_max, 4), "speed-up at nu*");
    } else {
        row(
            "K^max",
            format!("{} (out of reach)", sig(d.k_max, 4)),
            "speed-up at nu*, which needs more than the q cores there are (nu* > 1): K^D at q* is the best reachable",
        );
    }
    row(
        "q*",
        d.q_star.to_string(),
        "best whole number of cores joined to accelerators",
    );
    row(
        "d",
        sig(d.cores_per_accelerator, 4),
        "cores per accelerator (q*/r)",
    );
    row("K^D", sig(d.k_d, 4), "speed-up at q*");
    row(
        "q* (multiple of r)",
        format!(
            "{} (K^D {})",
            d.q_star_multiple_of_r,
            sig(d.k_d_multiple_of_r, 4)
        ),
        "best q* that splits evenly",
    );
    row(
        "homogeneous core",
        format!("{} of the work", sig(d.shares.homogeneous_core_work, 4)),
        "each of the q - q* lone cores",
    );
    row(
        "hybrid group",
        format!("{} of the work", sig(d.shares.hybrid_group_work, 4)),
        "each of the r groups",
    );
    row(
        "hybrid core",
        format!("{} T1", sig(d.shares.hybrid_core_time, 4)),
        "time per core in a group (division)",
    );
    row(
        "accelerator",
        format!("{} T1", sig(d.shares.accelerator_time, 4)),
        "time per accelerator (division)",
    );
    let mut out = t.render();
    if d.joining_all_cores_slows_down {
        out.push_str(&format!(
            "warning: q = {} > r·rho = {}: joining all cores to the accelerators (the proportional split) is slower than the cores alone\n",
            h.q,
            sig(f64::from(h.r) * h.rho, 4)
        ));
    }
    out
}

/// The measured fragments of a hybrid program and the φ, ρ they give.
pub fn fragments_table(f: &crate::experiments::balance::FragmentTimes, q: u32, r: u32) -> String {
    let mut t = Table::new(["time", "median s", "95% CI", "what"]);
    let ci =
        |s: &crate::fit::stats::Summary| format!("[{}, {}]", sig(s.ci95[0], 3), sig(s.ci95[1], 3));
    t.row([
        "T1".to_string(),
        sig(f.t1.median, 4),
        ci(&f.t1),
        "the whole batch on one core".to_string(),
    ]);
    t.row([
        "T_M".to_string(),
        sig(f.t_mimd.median, 4),
        ci(&f.t_mimd),
        "MIMD fragments (convergence control) on one core".to_string(),
    ]);
    t.row([
        "T_S".to_string(),
        sig(f.t_simd.median, 4),
        ci(&f.t_simd),
        "SIMD fragments (sweeps) on the accelerator, transfers included".to_string(),
    ]);
    let phi = f.t_mimd.median / f.t1.median;
    let rho = (1.0 - phi) * f.t1.median / f.t_simd.median;
    format!(
        "{}phi = T_M/T1 = {phi:.4}, rho = (1 - phi)·T1/T_S = {rho:.3}; q = {q} cores, r = {r} accelerator(s); device results verified (max rel. error {:.1e})\n\n",
        t.render(),
        f.max_rel_error
    )
}

/// Measured against predicted speed-up per split.
pub fn split_runs_table(runs: &[crate::experiments::balance::SplitRun]) -> String {
    let mut t = Table::new([
        "split",
        "cores alone",
        "problems/core",
        "hybrid cores",
        "hybrid problems",
        "wall s",
        "paired T1 s",
        "measured K",
        "predicted K",
        "measured/predicted",
    ]);
    for r in runs {
        t.row(r.split.cells().into_iter().chain([
            sig(r.seconds.median, 4),
            sig(r.paired_t1.median, 4),
            format!("{:.2}", r.speedup),
            format!("{:.2}", r.predicted),
            format!("{:.2}", r.speedup / r.predicted),
        ]));
    }
    t.render()
}
