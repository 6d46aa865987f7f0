//! A calibration's tables: its parameters, its bandwidth per level and the sweeps beside,
//! BabelStream's kernels, and the comparison of two calibrations.

use super::opt;
use crate::calibration::compare::{ParameterComparison, RateComparison};
use crate::calibration::patterns::pattern_rates;
use crate::calibration::Calibration;
use crate::export::{sig, Table};

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

/// Each level's spread per kernel (the hull of its working sets' 95 % intervals), where the
/// calibration recorded one.
fn spread_table(levels: &[crate::bench::bandwidth::LevelBandwidth]) -> String {
    use crate::bench::bandwidth::StreamKernel;
    if levels.iter().all(|l| l.spread.is_empty()) {
        return String::new();
    }
    let mut t = Table::new(vec!["level", "read", "write", "copy", "triad"]);
    for l in levels {
        let mark = if l.passes_in_launch { " †" } else { "" };
        let mut row = vec![format!("{}{mark}", l.level)];
        for kernel in StreamKernel::ALL {
            row.push(opt(l.spread_of(kernel).map(|[lo, hi]| {
                let hi = if hi.is_finite() {
                    sig(hi, 3)
                } else {
                    "…".into()
                };
                format!("{}–{hi}", sig(lo, 3))
            })));
        }
        t.row(row);
    }
    format!(
        "each level's spread, GB/s: the lowest and the highest end of the 95 % intervals of the working sets its row pools (each one's sampling noise and the rate's change across the level)\n{}",
        t.render()
    )
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
        // On a CPU a sample of the sweep is one launch of one pass, whose fixed cost the rate
        // includes; the private caches' rows are k passes inside a launch where measured so.
        let cpu = c.device.class != crate::backend::DeviceClass::Gpu;
        let passes = b.levels.iter().any(|l| l.passes_in_launch);
        let mut header = vec!["level", "working sets", "read", "write", "copy", "triad"];
        if passes {
            header.push("copy, one launch");
        } else if cpu {
            header.push("launch ≤");
        }
        let mut t = Table::new(header);
        for l in &b.levels {
            let high = if l.working_set_bytes[1] == usize::MAX {
                "…".to_string()
            } else {
                format!("{} KiB", l.working_set_bytes[1] >> 10)
            };
            let pooled = l
                .plateau_from_bytes
                .map_or_else(String::new, |p| format!(", pooled from {} KiB", p >> 10));
            let mark = if l.passes_in_launch { " †" } else { "" };
            let mut row = vec![
                format!("{}{mark}", l.level),
                format!("{}..{high}{pooled}", l.working_set_bytes[0] >> 10),
                gbps(l.read_gbps),
                gbps(l.write_gbps),
                gbps(l.copy_gbps),
                gbps(l.triad_gbps),
            ];
            if passes {
                let one = l
                    .passes_in_launch
                    .then(|| {
                        crate::bench::bandwidth::row(&b.curves, &l.level, l.working_set_bytes, 0)
                            .copy_gbps
                    })
                    .flatten();
                row.push(gbps(one));
            } else if cpu {
                let share = launch_share(&b.curves, l.working_set_bytes);
                row.push(opt(share.map(|f| format!("{:.0} %", 100.0 * f))));
            }
            t.row(row);
        }
        out.push_str(&t.render());
        if passes {
            out.push_str(
                "†: k passes inside one launch, one executor per core, each sample 2k passes less k (the launch cancels): the cache's own rate; copy, one launch: what the sweep's one launch of one pass got over the same working sets, launch included, the rate predictions move a kernel by\n",
            );
        } else if cpu {
            out.push_str(
                "launch ≤: at most this share of a sample (one launch of one pass) is the launch's fixed cost: the copy's time at the sweep's smallest working set over its median time in the row; near 100 %, the row is how fast launches go, not the level\n",
            );
        }
        out.push_str(&spread_table(&b.levels));
        if crate::bench::bandwidth::still_stepping(&b.curves) {
            let sizes = crate::bench::bandwidth::streaming_sizes(&b.curves);
            if let [.., before, last] = sizes.as_slice() {
                out.push_str(&format!(
                    "warning: the streaming rate still fell by more than {:.0} % from {} to {} MiB, the sweep's largest working sets: device memory's plateau lies further out, and its row may be faster than memory\n",
                    100.0 * crate::bench::bandwidth::PLATEAU_STEP,
                    before >> 20,
                    last >> 20
                ));
            }
        }
    }
    if let Some(t) = pattern_table(c) {
        out.push_str(
            "\nrate by access pattern, GB/s (the sweep's median per level; the names a spec's `access` takes)\n",
        );
        out.push_str(&t.render());
    }
    if let Some(line) = shaped_sweeps_line(c) {
        out.push_str(&line);
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
    if let Some(line) = c.page_walks.as_ref().and_then(page_walk_line) {
        out.push_str(&line);
    }
    if let Some(bs) = &c.babelstream {
        out.push('\n');
        out.push_str(&babelstream_table(bs));
        if let Some(line) = memory_beside_babelstream(c, bs) {
            out.push_str(&line);
        }
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

/// Each access pattern a spec can name, with the sweep that measures it and that sweep's
/// median rate per level of the streaming table ([`pattern_rates`]); `None` where the
/// calibration has no streaming table.
fn pattern_table(c: &Calibration) -> Option<Table> {
    let levels = &c.bandwidth.as_ref()?.levels;
    let mut header = vec!["pattern".to_string(), "sweep".to_string()];
    header.extend(levels.iter().map(|l| l.level.clone()));
    let mut t = Table::new(header);
    for p in pattern_rates(c) {
        let sweep = if p.one_thread {
            format!("{}, one thread", p.sweep)
        } else {
            p.sweep
        };
        let mut cells = vec![p.pattern, sweep];
        cells.extend(
            p.levels
                .iter()
                .map(|l| l.gbps.map_or_else(|| "-".to_string(), |g| sig(g, 3))),
        );
        t.row(cells);
    }
    Some(t)
}

/// One thread's copy and triad per level beside the device's, and a line on one thread's
/// strided read sweep, where the calibration measured them (the host).
/// Where a CPU's calibration (or a quick look) measured none of the sweeps shaped after the
/// built-in workloads: which they are and how to get them.
fn shaped_sweeps_line(c: &Calibration) -> Option<String> {
    let one_thread = c
        .one_thread
        .as_ref()
        .is_some_and(|o| o.stencil.is_some() || o.hyperplanes.is_some());
    let any = c.transposes.is_some() || c.gathers.is_some() || c.hyperplanes.is_some();
    let gpu = c.device.class == crate::backend::DeviceClass::Gpu;
    if any || one_thread || (gpu && !c.provenance.quick) {
        return None;
    }
    Some(format!(
        "not measured: the sweeps shaped after the built-in workloads (transpose, transpose-read, hyperplane; on the host one thread's stencil): {}; `calibrate --shaped-sweeps` measures them, for series run with `--cold-runs 0`\n",
        if c.provenance.quick {
            "a quick look leaves them out"
        } else {
            "a CPU's full calibration leaves them out, its series' cold runs standing in for them"
        }
    ))
}

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
    let sides = sides_words(points.iter().map(|p| p.sides.len()), "grid");
    Some(format!(
        "row stencil on one thread (one colour of red-black SOR in place, 8 bytes per cell; {sides}), GB/s by grid: {}\n",
        rates.join(", ")
    ))
}

/// How many sides of a `shape` ("grid", "cube") each working set's rate comes from: "the
/// median of three grids' sides", or "one grid's side" (`--quick`).
fn sides_words(counts: impl Iterator<Item = usize>, shape: &str) -> String {
    match counts.max().unwrap_or(1) {
        1 => format!("one {shape}'s side each"),
        3 => format!("the median of three {shape}s' sides"),
        n => format!("the median of up to {n} {shape}s' sides"),
    }
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
    let sides = sides_words(points.iter().map(|p| p.sides.len()), "cube");
    Some(format!(
        "hyperplane sweep{on} (LU-SSOR's planes i + j + k = h relaxed in place, 8 bytes per point; planes upwards/downwards; {sides}), GB/s by cube: {}\n",
        rates.join(", ")
    ))
}

/// The page walk sweep's cost per work item's step at every span it measured, one line, and
/// its aliased curve's on a second where it has one; `None` for a sweep with no point.
fn page_walk_line(sweep: &crate::bench::pages::PageWalkSweep) -> Option<String> {
    if sweep.points.is_empty() {
        return None;
    }
    let curve = |points: &[crate::bench::pages::PageWalkPoint]| {
        points
            .iter()
            .map(|p| format!("{} {}", binary_size(p.span_bytes), sig(p.ns_per_step, 3)))
            .collect::<Vec<String>>()
            .join(", ")
    };
    let mut line = format!(
        "page walk sweep ({} work items, each reading one element a page and a line apart, {} B; what a spec's `walks` are charged), ns per work item's step by span: {}\n",
        sweep.items,
        crate::bench::pages::STRIDE_BYTES,
        curve(&sweep.points)
    );
    if !sweep.aliased.is_empty() {
        line.push_str(&format!(
            "  exactly a page apart (every step in the same cache sets; walks whose stride is a whole number of pages): {}\n",
            curve(&sweep.aliased)
        ));
    }
    Some(line)
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

/// At most how much of a one-launch sample in the working sets `range` is the launch's
/// fixed cost: the copy's time at the sweep's smallest working set (that cost and a few KiB's
/// worth of copying) over its median time in the range; `None` without copy points there.
/// On the 2-core EPYC VM's PoCL a launch of the sweep's 1,024 work items costs about 2 µs
/// whether it copies 16 KiB or 128 KiB, so its L1 and L2 rows are launch rates.
pub(super) fn launch_share(
    curves: &[crate::bench::bandwidth::BandwidthCurve],
    range: [usize; 2],
) -> Option<f64> {
    let copy = curves
        .iter()
        .find(|c| c.kernel == crate::bench::bandwidth::StreamKernel::Copy)?;
    let seconds = |p: &crate::bench::bandwidth::BandwidthPoint| {
        (p.gbps > 0.0 && p.gbps.is_finite()).then(|| p.working_set_bytes as f64 / (p.gbps * 1e9))
    };
    let smallest = copy.points.iter().find_map(seconds)?;
    let mut times: Vec<f64> = copy
        .points
        .iter()
        .filter(|p| (range[0]..=range[1]).contains(&p.working_set_bytes))
        .filter_map(seconds)
        .collect();
    times.sort_by(f64::total_cmp);
    (!times.is_empty()).then(|| (smallest / crate::fit::stats::median_of_sorted(&times)).min(1.0))
}

/// Device memory's streaming row beside BabelStream's copy and triad of the same run, one
/// line, like with like: the row's median over its plateau's working sets against BabelStream's mean
/// iteration, and the rate of the sweep's fastest tenth of samples there (the median of its
/// working sets' spreads, copy and triad pooled, where the file kept its samples) against
/// BabelStream's headline, its fastest iteration; `None` without the row or the kernels.
fn memory_beside_babelstream(
    c: &Calibration,
    bs: &crate::bench::babelstream::BabelStream,
) -> Option<String> {
    let row = c.bandwidth.as_ref()?.levels.last()?;
    if row.level != "memory" {
        return None;
    }
    let pooled_from = row.plateau_from_bytes.unwrap_or(row.working_set_bytes[0]);
    let facts = crate::calibration::model_parameters::window_facts(c);
    let mut spreads: Vec<f64> = facts
        .streaming_spread
        .iter()
        .filter(|p| p.0 >= pooled_from as u64 && p.1.is_finite() && p.1 >= 1.0)
        .map(|p| p.1)
        .collect();
    spreads.sort_by(f64::total_cmp);
    let spread = (!spreads.is_empty()).then(|| crate::fit::stats::median_of_sorted(&spreads));
    let pairs: Vec<String> = [
        ("copy", "Copy", row.copy_gbps),
        ("triad", "Triad", row.triad_gbps),
    ]
    .into_iter()
    .filter_map(|(name, kernel, median)| {
        let median = median?;
        let k = bs.kernels.iter().find(|k| k.name == kernel)?;
        let best = k.mbytes_per_sec * 1e-3;
        let mean = best * k.min_seconds / k.average_seconds;
        if !(best > 0.0 && mean.is_finite() && mean > 0.0) {
            return None;
        }
        let fast = spread.map_or_else(String::new, |f| {
            format!(
                ", its fastest tenth {} GB/s against its best {} ({:.2})",
                sig(median * f, 3),
                sig(best, 3),
                median * f / best
            )
        });
        Some(format!(
            "{name} {} GB/s against BabelStream's mean {} ({:.2}){fast}",
            sig(median, 3),
            sig(mean, 3),
            median / mean,
        ))
    })
    .collect();
    (!pairs.is_empty()).then(|| {
        format!(
            "device memory's row (the sweep's median over its plateau's working sets) beside BabelStream in this run: {}\n",
            pairs.join("; ")
        )
    })
}

/// The `--compare` table of the streaming rates per level (empty where the files share
/// none).
pub fn rate_comparison_table(rows: &[RateComparison], before: &str, after: &str) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut t = Table::new(["level", "kernel", before, after, "ratio", "spreads overlap"]);
    for r in rows {
        let mark = if r.same_working_sets { "" } else { " *" };
        t.row([
            format!("{}{mark}", r.level),
            r.kernel.name().to_string(),
            sig(r.before_gbps, 3),
            sig(r.after_gbps, 3),
            sig(r.ratio, 3),
            match r.spreads_overlap {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
            .to_string(),
        ]);
    }
    let moved = if rows.iter().any(|r| !r.same_working_sets) {
        "*: the two files put this level at other working sets (the latency chase found its edges elsewhere): the rates are of different working sets\n"
    } else {
        ""
    };
    format!(
        "streaming rates per level, GB/s (spreads: the hull of each row's working sets' 95 % intervals)\n{}{moved}",
        t.render()
    )
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

#[cfg(test)]
mod page_walk_tests {
    use super::page_walk_line;
    use crate::bench::pages::{PageWalkPoint, PageWalkSweep};

    fn point(steps: usize, span_bytes: usize, ns: f64) -> PageWalkPoint {
        PageWalkPoint {
            steps,
            span_bytes,
            ns_per_step: ns,
            ci95_ns: [ns, ns],
            outliers: 0,
        }
    }

    #[test]
    fn the_aliased_curve_gets_a_line_of_its_own_where_measured() {
        let mut sweep = PageWalkSweep {
            items: 64,
            points: vec![point(64, 64 * 4160, 0.25), point(4096, 4096 * 4160, 3.0)],
            aliased: Vec::new(),
        };
        let line = page_walk_line(&sweep).expect("a line");
        assert_eq!(line.lines().count(), 1, "{line}");
        assert!(
            line.contains("260 KiB 0.25") && line.contains("3.00"),
            "{line}"
        );
        sweep.aliased = vec![point(1024, 4 << 20, 1.57)];
        let both = page_walk_line(&sweep).expect("two lines");
        let second = both.lines().nth(1).expect("a second line");
        assert!(
            second.contains("exactly a page apart") && second.contains("4.00 MiB 1.57"),
            "{both}"
        );
        sweep.points.clear();
        assert!(page_walk_line(&sweep).is_none());
    }
}
