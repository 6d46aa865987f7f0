//! Tables for the commands: device lists, calibration summaries and comparisons.

use crate::backend::DeviceInfo;
use crate::bench::transpose::TransposeSweep;
use crate::calibration::compare::ParameterComparison;
use crate::calibration::Calibration;
use crate::export::{sig, Table};

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or("-".into(), |v| v.to_string())
}

fn mib(bytes: u64) -> String {
    format!("{}", bytes >> 20)
}

/// The `harness devices` table.
pub fn devices_table(devices: &[&DeviceInfo]) -> String {
    let mut t = Table::new([
        "#",
        "backend",
        "name",
        "vendor",
        "driver",
        "CC",
        "units",
        "threads/unit",
        "clock MHz",
        "memory MiB",
        "L2 KiB",
    ]);
    for (i, d) in devices.iter().enumerate() {
        t.row([
            i.to_string(),
            d.backend.to_string(),
            d.name.clone(),
            d.vendor.clone(),
            d.driver.clone(),
            opt(d.compute_capability.clone()),
            d.compute_units.to_string(),
            opt(d.resident_threads_per_unit),
            opt(d.clock_mhz),
            mib(d.memory_bytes),
            opt(d.l2_bytes.map(|b| b >> 10)),
        ]);
    }
    t.render()
}

/// The parameter table printed after a calibration.
pub fn calibration_summary(c: &Calibration) -> String {
    let mut t = Table::new(["parameter", "value", "unit", "95% CI", "method"]);
    for (parameter, p) in c.parameters.iter() {
        t.row([
            parameter.symbol().to_string(),
            sig(p.value, 4),
            p.unit.clone(),
            format!("[{}, {}]", sig(p.ci95[0], 4), sig(p.ci95[1], 4)),
            p.method.chars().take(60).collect::<String>()
                + if p.method.len() > 60 { "…" } else { "" },
        ]);
    }
    let mut out = format!(
        "{} ({}), harness {} {}, {}{}\n\n",
        c.device.name,
        c.device.backend,
        c.provenance.harness_version,
        c.provenance.git_commit,
        c.provenance.date,
        if c.provenance.quick { ", quick" } else { "" }
    );
    out.push_str(&t.render());
    out.push_str("\nread latency levels\n");
    let mut lv = Table::new(["level", "working set", "latency ns", "95% CI", "cycles"]);
    for l in &c.read_latency.levels {
        lv.row([
            l.level.clone(),
            format!(
                "{}..{} KiB",
                l.working_set_bytes[0] >> 10,
                l.working_set_bytes[1] >> 10
            ),
            sig(l.latency_ns, 4),
            format!("[{}, {}]", sig(l.ci95_ns[0], 4), sig(l.ci95_ns[1], 4)),
            opt(l.cycles.map(|c| sig(c, 4))),
        ]);
    }
    out.push_str(&lv.render());
    out.push_str("\nserialization intervals (Δt read, ΔT write)\n");
    let mut g = Table::new([
        "pattern",
        "access",
        "gap ns",
        "95% CI",
        "GB/s",
        "R²",
        "fit range n",
    ]);
    for f in &c.gaps {
        g.row([
            format!("{:?}", f.pattern).to_lowercase(),
            format!("{:?}", f.direction).to_lowercase(),
            sig(f.gap_ns, 4),
            format!("[{}, {}]", sig(f.ci95_ns[0], 4), sig(f.ci95_ns[1], 4)),
            opt(f.bandwidth_gbps.map(|b| sig(b, 4))),
            format!("{:.4}", f.r_squared),
            format!("{}..{}", f.fit_range[0], f.fit_range[1]),
        ]);
    }
    out.push_str(&g.render());
    out.push_str(&format!(
        "\nexecutors: attributes {}, knee {}\nops: add {} ns, FMA {} ns, FMA throughput {} Gop/s\n\
         launch overhead: {} ns device (one work item), {} ns wall; back to back: {} ns per \
         launch (what predictions use) + {} ns per work item\n",
        opt(c.executors.from_attributes),
        opt(c.executors.from_knee.map(|k| sig(k, 4))),
        sig(c.ops.add_latency_ns, 4),
        sig(c.ops.fma_latency_ns, 4),
        sig(c.ops.fma_ops_per_second * 1e-9, 4),
        sig(c.launch_overhead.device_ns, 4),
        sig(c.launch_overhead.wall_ns, 4),
        opt(c
            .launch_overhead
            .sequence
            .as_ref()
            .map(|s| sig(s.fixed_ns, 4))),
        opt(c
            .launch_overhead
            .sequence
            .as_ref()
            .map(|s| sig(s.per_item_ns, 3))),
    ));
    for tr in &c.transfers {
        out.push_str(&format!(
            "{}: start {} ns + {} ns/byte ({} GB/s, R² {:.4})\n",
            tr.direction,
            sig(tr.start_ns, 4),
            sig(tr.ns_per_byte, 4),
            opt(tr.bandwidth_gbps.map(|b| sig(b, 4))),
            tr.r_squared
        ));
    }
    out.push_str(&bandwidth_tables(c));
    out
}

/// The streaming bandwidth per level, BabelStream's kernels and the caches the device and
/// OS report (empty for calibrations made before they were measured).
fn bandwidth_tables(c: &Calibration) -> String {
    let mut out = String::new();
    let gbps = |v: Option<f64>| opt(v.map(|g| sig(g, 3)));
    if let Some(b) = &c.bandwidth {
        out.push_str(
            "\nstreaming bandwidth per level, GB/s (median over the sweep's working sets)\n",
        );
        let mut t = Table::new(["level", "working sets", "read", "write", "copy", "triad"]);
        for l in &b.levels {
            let high = if l.working_set_bytes[1] == usize::MAX {
                "…".to_string()
            } else {
                format!("{} KiB", l.working_set_bytes[1] >> 10)
            };
            t.row([
                l.level.clone(),
                format!("{}..{high}", l.working_set_bytes[0] >> 10),
                gbps(l.read_gbps),
                gbps(l.write_gbps),
                gbps(l.copy_gbps),
                gbps(l.triad_gbps),
            ]);
        }
        out.push_str(&t.render());
    }
    for sweep in c.transposes.iter().chain(&c.gathers) {
        if let Some(line) = transposes_line(c, sweep) {
            out.push_str(&line);
        }
    }
    if let Some((t, strided)) = one_thread_table(c) {
        out.push_str(
            "\nthe same on one thread, GB/s (every launch on the launching thread alone: what a host twin that is one loop meets)\n",
        );
        out.push_str(&t.render());
        out.push_str(&format!("{strided}\n"));
    }
    if let Some(line) = c.one_thread.as_ref().and_then(stencil_line) {
        out.push_str(&line);
    }
    let one_thread_planes = c.one_thread.as_ref().and_then(|o| o.hyperplanes.as_ref());
    for (sweep, on) in [
        (one_thread_planes, " on one thread"),
        (c.hyperplanes.as_ref(), ""),
    ] {
        if let Some(line) = sweep.and_then(|s| hyperplane_line(s, on)) {
            out.push_str(&line);
        }
    }
    if let Some(bs) = &c.babelstream {
        out.push('\n');
        out.push_str(&babelstream_table(bs));
    }
    if !c.reported_caches.is_empty() {
        let caches: Vec<String> = c
            .reported_caches
            .iter()
            .map(|r| format!("{} {} {} KiB", r.level, r.kind, r.bytes >> 10))
            .collect();
        out.push_str(&format!(
            "\nreported caches ({}): {}\n",
            c.reported_caches[0].source,
            caches.join(", ")
        ));
    }
    let stages = &c.provenance.stage_seconds;
    if !stages.is_empty() {
        let laps: Vec<String> = stages
            .iter()
            .map(|s| format!("{} {:.1} s", s.stage, s.seconds))
            .collect();
        let total: f64 = stages.iter().map(|s| s.seconds).sum();
        out.push_str(&format!("wall time {total:.1} s: {}\n", laps.join(", ")));
    }
    out
}

/// A transposing sweep's median rate within each level of the streaming table, one line;
/// `None` where the calibration has no streaming table.
fn transposes_line(c: &Calibration, sweep: &TransposeSweep) -> Option<String> {
    let levels = &c.bandwidth.as_ref()?.levels;
    let per_level: Vec<String> = levels
        .iter()
        .filter_map(|l| {
            let range = l.working_set_bytes[0]..=l.working_set_bytes[1];
            let mut v: Vec<f64> = sweep
                .points
                .iter()
                .filter(|p| range.contains(&p.working_set_bytes) && p.gbps.is_finite())
                .map(|p| p.gbps)
                .collect();
            v.sort_by(f64::total_cmp);
            (!v.is_empty()).then(|| {
                format!(
                    "{} {}",
                    l.level,
                    sig(crate::fit::stats::median_of_sorted(&v), 3)
                )
            })
        })
        .collect();
    Some(format!(
        "{}, 8 bytes per element{}, GB/s: {}\n",
        sweep.shape.describe(),
        if sweep.one_thread {
            ", on one thread"
        } else {
            ""
        },
        per_level.join(", ")
    ))
}

/// One thread's copy and triad per level beside the device's, and a line on one thread's
/// strided read sweep, where the calibration measured them (the host).
pub fn one_thread_table(c: &Calibration) -> Option<(Table, String)> {
    let one = c.one_thread.as_ref()?;
    let gbps = |v: Option<f64>| opt(v.map(|g| sig(g, 3)));
    let all = |level: &str| {
        c.bandwidth
            .iter()
            .flat_map(|b| &b.levels)
            .find(|l| l.level == level)
    };
    let mut t = Table::new([
        "level",
        "copy",
        "triad",
        "copy, all threads",
        "triad, all threads",
    ]);
    for l in &one.bandwidth.levels {
        t.row([
            l.level.clone(),
            gbps(l.copy_gbps),
            gbps(l.triad_gbps),
            gbps(all(&l.level).and_then(|a| a.copy_gbps)),
            gbps(all(&l.level).and_then(|a| a.triad_gbps)),
        ]);
    }
    let s = &one.strided_read;
    let strided = format!(
        "strided read on one thread: Δt {} ns, 95 % CI [{}, {}] ns, R² {:.4}",
        sig(s.gap_ns, 4),
        sig(s.ci95_ns[0], 4),
        sig(s.ci95_ns[1], 4),
        s.r_squared
    );
    Some((t, strided))
}

/// The stencil sweep's rate at every grid it measured, one line; `None` without the sweep
/// (calibrations before 2026-11-28). Every point, not a median per level: the sweep is there
/// for a band of working sets that the levels do not mark.
fn stencil_line(one: &crate::calibration::OneThread) -> Option<String> {
    let points = &one.stencil.as_ref()?.points;
    if points.is_empty() {
        return None;
    }
    let rates: Vec<String> = points
        .iter()
        .map(|p| format!("{} {}", binary_size(p.working_set_bytes), sig(p.gbps, 3)))
        .collect();
    Some(format!(
        "row stencil on one thread (one colour of red-black SOR in place, 8 bytes per cell; the median of three grids' sides), GB/s by grid: {}\n",
        rates.join(", ")
    ))
}

/// `16.5 KiB`, `1.00 GiB`: a working set in binary units, three significant digits.
fn binary_size(b: usize) -> String {
    if b >= 1 << 30 {
        format!("{} GiB", sig(b as f64 / f64::from(1u32 << 30), 3))
    } else if b >= 1 << 20 {
        format!("{} MiB", sig(b as f64 / f64::from(1u32 << 20), 3))
    } else {
        format!("{} KiB", sig(b as f64 / 1024.0, 3))
    }
}

/// The hyperplane sweep's rates at every cube it measured, upwards/downwards, one line;
/// `on` says where it ran (" on one thread", or "" for the device's own launches); `None`
/// for a sweep with no point.
fn hyperplane_line(sweep: &crate::bench::hyperplane::HyperplaneSweep, on: &str) -> Option<String> {
    let points = &sweep.points;
    if points.is_empty() {
        return None;
    }
    let rates: Vec<String> = points
        .iter()
        .map(|p| {
            format!(
                "{} {}/{}",
                binary_size(p.working_set_bytes),
                sig(p.ascending_gbps, 3),
                sig(p.descending_gbps, 3)
            )
        })
        .collect();
    Some(format!(
        "hyperplane sweep{on} (LU-SSOR's planes i + j + k = h relaxed in place, 8 bytes per point; planes upwards/downwards; the median of three cubes' sides), GB/s by cube: {}\n",
        rates.join(", ")
    ))
}

/// BabelStream's five kernels, as BabelStream prints them, the device-timed rate beside.
pub fn babelstream_table(bs: &crate::bench::babelstream::BabelStream) -> String {
    let mut out = format!(
        "BabelStream's kernels: {} {} per array, {} iterations, verified (max rel. error {:.1e}); host wall time per launch, as BabelStream times\n",
        bs.elements,
        bs.precision.plural(),
        bs.iterations,
        bs.max_rel_error
    );
    let mut t = Table::new([
        "Function",
        "MBytes/sec",
        "Min (sec)",
        "Max",
        "Average",
        "device-timed MBytes/sec",
    ]);
    for k in &bs.kernels {
        t.row([
            k.name.clone(),
            format!("{:.3}", k.mbytes_per_sec),
            format!("{:.5}", k.min_seconds),
            format!("{:.5}", k.max_seconds),
            format!("{:.5}", k.average_seconds),
            format!("{:.3}", k.device_mbytes_per_sec),
        ]);
    }
    out.push_str(&t.render());
    out
}

/// The `--compare` table.
pub fn comparison_table(rows: &[ParameterComparison], before: &str, after: &str) -> String {
    let mut t = Table::new(["parameter", before, after, "unit", "ratio", "CIs overlap"]);
    for r in rows {
        t.row([
            r.symbol.to_string(),
            sig(r.before, 4),
            sig(r.after, 4),
            r.unit.clone(),
            sig(r.ratio, 3),
            if r.cis_overlap { "yes" } else { "NO" }.to_string(),
        ]);
    }
    t.render()
}

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
    if let Some(w) = &v.windowed_total_error {
        out.push_str(&format!(
            "windowed, total: mean {:.1} %, median {:.1} %, max {:.1} %\n",
            w.mean, w.median, w.max
        ));
    }
    for w in &v.windows {
        out.push_str(&window_report(w));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::compare::compare;
    use crate::calibration::test_fixture;
    use crate::workloads::{PhaseTiming, RunResult};

    #[test]
    fn a_window_without_three_sizes_says_no_fit_and_never_fitted_on() {
        use crate::experiments::validate::LargeWindow;
        use crate::fit::window::{Rejection, WindowChoice};
        let window = |accepted: Vec<usize>| LargeWindow {
            size: 2900,
            choice: WindowChoice {
                accepted,
                rejected: vec![Rejection {
                    size: 362,
                    reasons: vec!["its working set lives in L2".into()],
                }],
                target_level: "memory".into(),
                unchecked: Vec::new(),
            },
            note: None,
            level_moves: Vec::new(),
        };
        for accepted in [vec![], vec![768, 1024]] {
            let text = window_report(&window(accepted.clone()));
            assert!(!text.contains("fitted on"), "{text}");
            assert!(
                text.contains(&format!("{} size(s) pass the rules", accepted.len()))
                    && text.contains("no windowed fit"),
                "{text}"
            );
            assert!(!text.contains("[]"), "{text}");
            assert!(
                text.contains("rejected 362: its working set lives in L2"),
                "{text}"
            );
        }
        let text = window_report(&window(vec![768, 1024, 1448]));
        assert!(text.contains("fitted on [768, 1024, 1448]"), "{text}");
    }

    #[test]
    fn the_calibration_summary_shows_one_threads_rates_where_measured() {
        let mut c = test_fixture();
        assert!(!calibration_summary(&c).contains("on one thread"));
        let sweep = crate::bench::bandwidth::BandwidthSweep {
            executors: 2,
            curves: Vec::new(),
            levels: vec![crate::bench::bandwidth::LevelBandwidth {
                level: "L2".into(),
                working_set_bytes: [65536, 4 << 20],
                read_gbps: None,
                write_gbps: None,
                copy_gbps: Some(72.3),
                triad_gbps: Some(84.1),
            }],
        };
        c.one_thread = Some(crate::calibration::OneThread {
            bandwidth: sweep,
            strided_read: c.gaps[0].clone(),
            stencil: None,
            hyperplanes: None,
        });
        let text = calibration_summary(&c);
        assert!(text.contains("the same on one thread, GB/s"), "{text}");
        let row = text
            .lines()
            .find(|l| l.starts_with("L2 ") && l.contains("72.3"))
            .expect("one thread's L2 row");
        assert!(row.contains("84.1"), "{row}");
        assert!(text.contains("strided read on one thread: Δt"), "{text}");
        assert!(!text.contains("row stencil"), "no sweep, no line: {text}");
        let mut one = c.one_thread.clone().expect("one thread");
        one.stencil = Some(crate::bench::stencil::StencilSweep {
            points: [(65usize, 10.8), (16385, 7.07)]
                .into_iter()
                .map(|(n, gbps)| crate::bench::stencil::StencilPoint {
                    side: n,
                    sides: vec![n],
                    working_set_bytes: 4 * n * n,
                    gbps,
                    ci95_gbps: [gbps, gbps],
                    outliers: 0,
                })
                .collect(),
        });
        c.one_thread = Some(one);
        let text = calibration_summary(&c);
        assert!(
            text.contains("GB/s by grid: 16.5 KiB 10.8, 1.00 GiB 7.07"),
            "{text}"
        );
        assert!(
            !text.contains("hyperplane sweep"),
            "no sweep, no line: {text}"
        );
        let mut one = c.one_thread.clone().expect("one thread");
        one.hyperplanes = Some(crate::bench::hyperplane::HyperplaneSweep {
            points: [(161usize, 2.31, 2.17), (647, 0.98, 0.66)]
                .into_iter()
                .map(|(n, up, down)| crate::bench::hyperplane::HyperplanePoint {
                    side: n,
                    sides: vec![n],
                    working_set_bytes: 4 * n * n * n,
                    ascending_gbps: up,
                    ascending_ci95_gbps: [up, up],
                    descending_gbps: down,
                    descending_ci95_gbps: [down, down],
                    outliers: 0,
                })
                .collect(),
        });
        let planes = one.hyperplanes.clone();
        c.one_thread = Some(one);
        let text = calibration_summary(&c);
        assert!(
            text.contains(
                "hyperplane sweep on one thread (LU-SSOR's planes i + j + k = h relaxed in place"
            ),
            "{text}"
        );
        assert!(
            text.contains("GB/s by cube: 15.9 MiB 2.31/2.17, 1.01 GiB 0.980/0.660"),
            "{text}"
        );
        // The device's own sweep (every device but the host) has a line of its own.
        c.one_thread = None;
        c.hyperplanes = planes;
        let text = calibration_summary(&c);
        assert!(
            text.contains("\nhyperplane sweep (LU-SSOR's planes")
                && text.contains("GB/s by cube: 15.9 MiB 2.31/2.17"),
            "{text}"
        );
    }

    #[test]
    fn the_calibration_summary_gives_the_transposing_rate_per_level() {
        use crate::bench::transpose::{TransposePoint, TransposeShape};
        let mut c = test_fixture();
        assert!(!calibration_summary(&c).contains("transposing copy"));
        let level = |name: &str, range: [usize; 2]| crate::bench::bandwidth::LevelBandwidth {
            level: name.into(),
            working_set_bytes: range,
            read_gbps: None,
            write_gbps: None,
            copy_gbps: Some(50.0),
            triad_gbps: None,
        };
        c.bandwidth = Some(crate::bench::bandwidth::BandwidthSweep {
            executors: 2,
            curves: Vec::new(),
            levels: vec![
                level("L3", [0, (64 << 20) - 1]),
                level("memory", [64 << 20, usize::MAX]),
            ],
        });
        let point = |side: usize, gbps: f64| TransposePoint {
            side,
            working_set_bytes: 8 * side * side * side,
            gbps,
            ci95_gbps: [gbps, gbps],
            outliers: 0,
        };
        c.transposes = Some(TransposeSweep {
            shape: TransposeShape::CubeJk,
            one_thread: true,
            // 8.7 MB and 17 MB in the L3, 540 MB in memory.
            points: vec![point(103, 9.0), point(129, 8.0), point(407, 2.0)],
        });
        let text = calibration_summary(&c);
        assert!(
            text.contains(
                "transposing copy (a j,k transpose of a cube, writes a row apart), 8 bytes per \
                 element, on one thread, GB/s: L3 8.50, memory 2.00\n"
            ),
            "{text}"
        );
        assert!(!text.contains("gathering copy"), "{text}");
        // The gathering sweep's line follows, where the calibration has one (the points' side
        // is a square's there; the line reads only their working sets).
        c.gathers = Some(TransposeSweep {
            shape: TransposeShape::SquareGather,
            one_thread: true,
            points: vec![point(103, 7.0), point(407, 1.0)],
        });
        let text = calibration_summary(&c);
        assert!(
            text.contains(
                "gathering copy (a square's transpose, reads a row apart), 8 bytes per element, \
                 on one thread, GB/s: L3 7.00, memory 1.00\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_calibration_summary_names_parameters_by_their_symbols() {
        let c = test_fixture();
        let text = calibration_summary(&c);
        let first_column: Vec<&str> = text
            .lines()
            .skip(4)
            .take(6)
            .map(|l| l.split_whitespace().next().unwrap_or(""))
            .collect();
        assert_eq!(first_column, ["t", "T", "Δt", "ΔT", "τ", "n"], "{text}");
        assert!(text.starts_with(&c.device.name), "{text}");
        assert!(text.contains("read latency levels"), "{text}");
        assert!(text.contains("memory"), "{text}");
    }

    #[test]
    fn the_comparison_flags_intervals_that_do_not_overlap() {
        let before = test_fixture();
        let mut after = test_fixture();
        after.parameters.write_gap.value *= 3.0;
        after.parameters.write_gap.ci95 = after.parameters.write_gap.ci95.map(|v| v * 3.0);
        let text = comparison_table(&compare(&before, &after), "old", "new");
        let line = |symbol: &str| {
            text.lines()
                .find(|l| l.starts_with(symbol))
                .unwrap_or_else(|| panic!("{symbol} row in {text}"))
                .to_string()
        };
        assert!(line("ΔT").trim_end().ends_with("3.00  NO"), "{text}");
        assert!(line("Δt").trim_end().ends_with("1.00  yes"), "{text}");
        assert!(text.lines().next().expect("header").contains("old"));
    }

    #[test]
    fn the_run_table_shows_time_share_and_bandwidth() {
        let run = RunResult {
            workload: "vadd".into(),
            size: 1000,
            iterations: 1,
            phases: vec![
                PhaseTiming {
                    flops: None,
                    threads: None,
                    name: "vadd".into(),
                    seconds: 0.002,
                    count: 10,
                    fraction: 0.75,
                    bytes: Some(12_000_000),
                    items: None,
                },
                PhaseTiming {
                    flops: None,
                    threads: None,
                    name: "upload".into(),
                    seconds: 0.0005,
                    count: 2,
                    fraction: 0.25,
                    bytes: None,
                    items: None,
                },
            ],
            total_seconds: 0.0025,
            kernel_seconds: 0.002,
            verification: None,
        };
        let text = run_table(&run, true);
        let vadd = text
            .lines()
            .find(|l| l.starts_with("vadd") && l.contains('%'))
            .expect("row");
        // 12 MB in 2 ms: 6 GB/s.
        assert!(vadd.contains("2.000") && vadd.contains("75.0 %"), "{text}");
        assert!(vadd.trim_end().ends_with("6.00"), "{text}");
        let upload = text.lines().find(|l| l.starts_with("upload")).expect("row");
        assert!(upload.trim_end().ends_with('-'), "{text}");
        let kernels = text
            .lines()
            .find(|l| l.starts_with("kernels"))
            .expect("row");
        assert!(
            kernels.contains("2.000") && kernels.contains("80.0 %"),
            "{text}"
        );
        assert!(
            text.contains("unchecked: the workload has no check"),
            "{text}"
        );
        assert!(run_table(&run, false).contains("not verified (--no-verify)"));
    }

    #[test]
    fn the_devices_table_numbers_the_devices() {
        let d = DeviceInfo::for_tests();
        let text = devices_table(&[&d, &d]);
        let rows: Vec<&str> = text.lines().skip(2).collect();
        assert_eq!(rows.len(), 2);
        assert!(
            rows[0].starts_with("0  host") && rows[1].starts_with("1  host"),
            "{text}"
        );
        assert!(
            rows[0].contains("test CPU") && rows[0].contains("1024"),
            "{text}"
        );
    }
}
