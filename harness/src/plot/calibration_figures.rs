//! Figures of a stored calibration: what the microbenchmarks measured, drawn from the
//! calibration file alone (no device needed).
//!
//! - [`latency_figure`]: the pointer-chase sweep (latency t per dependent load against the
//!   working set, log-log, with each point's 95 % CI), the plateaus found in it as levels, and
//!   the cache sizes the device or the OS reports;
//! - [`bandwidth_figure`]: the streaming bandwidth of read, write, copy and triad against the
//!   working set, with the same reported cache sizes;
//! - [`gaps_figure`]: the serialization sweeps behind Δt and ΔT: kernel time against the
//!   executors launched, per access pattern (medians with their CIs), with the fitted line
//!   `intercept + Δ·n` over its fit range, dashed, in the same colour.

use super::{Figure, Mark, Panel, PlotError, Series};
use crate::calibration::Calibration;

/// The short device name used in titles.
fn device(c: &Calibration) -> String {
    super::maxplus_figure::short(&c.device.name)
}

/// Vertical dotted lines at the reported cache sizes, spanning `[low, high]` on the y axis:
/// one series per level, all with one label (so one style and one legend entry).
fn reported_caches(c: &Calibration, low: f64, high: f64) -> Vec<Series> {
    let reported: Vec<_> = c.reported_caches.iter().filter(|r| r.bytes > 0).collect();
    let Some(first) = reported.first() else {
        return Vec::new();
    };
    let source = first.source.split_whitespace().next().unwrap_or("the OS");
    let sizes: Vec<String> = reported
        .iter()
        .map(|r| format!("{} {}", r.level, kib(r.bytes)))
        .collect();
    let label = format!("reported by {source}: {}", sizes.join(", "));
    reported
        .iter()
        .map(|r| {
            let x = r.bytes as f64 / 1024.0;
            Series::new(label.clone(), vec![(x, low), (x, high)], Mark::Dotted)
        })
        .collect()
}

/// `bytes` as KiB or MiB for a label.
fn kib(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// The y range `[low, high]` of a set of positive values, for reference lines.
fn span(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    lo.is_finite().then_some((lo, hi))
}

/// The read-latency sweep with its levels; an error when the sweep is empty.
pub fn latency_figure(c: &Calibration) -> Result<Figure, PlotError> {
    let title = format!("Read latency t by working set, {}", device(c));
    let sweep = &c.read_latency.sweep;
    let chase = Series::measured(
        "pointer chase (median, 95 % CI)",
        Mark::Points,
        sweep.iter().filter(|p| p.latency_ns > 0.0).map(|p| {
            let x = p.working_set_bytes as f64 / 1024.0;
            (x, p.latency_ns, p.ci95_ns[0], p.ci95_ns[1])
        }),
    );
    if chase.points.is_empty() {
        return Err(PlotError::Data {
            figure: title,
            message: "the calibration has no latency sweep".into(),
        });
    }
    let mut series = vec![chase];
    let last = sweep
        .last()
        .map_or(1.0, |p| p.working_set_bytes as f64 / 1024.0);
    for level in c.read_latency.levels.iter().filter(|l| l.latency_ns > 0.0) {
        let from = level.working_set_bytes[0] as f64 / 1024.0;
        let to = (level.working_set_bytes[1] as f64 / 1024.0)
            .max(from)
            .min(last);
        let to = if level.level == "memory" { last } else { to };
        series.push(Series::new(
            format!("{} plateau {} ns", level.level, sig(level.latency_ns)),
            vec![(from, level.latency_ns), (to.max(from), level.latency_ns)],
            Mark::Line,
        ));
    }
    if let Some((lo, hi)) = span(sweep.iter().map(|p| p.latency_ns)) {
        series.extend(reported_caches(c, lo, hi));
    }
    Ok(Figure {
        title,
        main: Panel {
            x_label: "working set (KiB)".into(),
            y_label: "latency per load (ns)".into(),
            log_x: true,
            log_y: true,
            series,
        },
        lower: None,
    })
}

/// The streaming-bandwidth sweep; `None` when the calibration has none (an older file).
pub fn bandwidth_figure(c: &Calibration) -> Option<Result<Figure, PlotError>> {
    let sweep = c.bandwidth.as_ref()?;
    let title = format!("Streaming bandwidth by working set, {}", device(c));
    // One thread's copy and triad (the host), dashed beside the device's.
    let alone = c.one_thread.iter().flat_map(|o| &o.bandwidth.curves);
    let mut series: Vec<Series> = sweep
        .curves
        .iter()
        .map(|curve| (curve, ""))
        .chain(alone.map(|curve| (curve, ", one thread")))
        .map(|(curve, which)| {
            let mut s = Series::measured(
                format!("{}{which}", curve.kernel.name()),
                Mark::Line,
                curve.points.iter().filter(|p| p.gbps > 0.0).map(|p| {
                    let x = p.working_set_bytes as f64 / 1024.0;
                    (x, p.gbps, p.ci95_gbps[0], p.ci95_gbps[1])
                }),
            );
            if !which.is_empty() {
                s.mark = Mark::Dashed;
            }
            s
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    // The transposing sweeps (docs/models.md §2.4), points only: a j,k transpose's rate and
    // a gathering transpose's.
    for t in c.transposes.iter().chain(&c.gathers) {
        let label = if t.one_thread {
            format!("{}, one thread", t.shape.label())
        } else {
            t.shape.label().to_string()
        };
        let points = Series::measured(
            label,
            Mark::Points,
            t.points.iter().filter(|p| p.gbps > 0.0).map(|p| {
                let x = p.working_set_bytes as f64 / 1024.0;
                (x, p.gbps, p.ci95_gbps[0], p.ci95_gbps[1])
            }),
        );
        if !points.points.is_empty() {
            series.push(points);
        }
    }
    // The random gather sweep (the `gather` pattern), points only.
    if let Some(g) = c.random_gathers.as_ref() {
        let label = if g.one_thread {
            "random gather, one thread"
        } else {
            "random gather"
        };
        let points = Series::measured(
            label.to_string(),
            Mark::Points,
            g.points.iter().filter(|p| p.gbps > 0.0).map(|p| {
                let x = p.working_set_bytes as f64 / 1024.0;
                (x, p.gbps, p.ci95_gbps[0], p.ci95_gbps[1])
            }),
        );
        if !points.points.is_empty() {
            series.push(points);
        }
    }
    // The row-stencil sweep on one thread (docs/models.md §2.4), points only.
    if let Some(s) = c.one_thread.as_ref().and_then(|o| o.stencil.as_ref()) {
        let points = Series::measured(
            "row stencil, one thread".to_string(),
            Mark::Points,
            s.points.iter().filter(|p| p.gbps > 0.0).map(|p| {
                let x = p.working_set_bytes as f64 / 1024.0;
                (x, p.gbps, p.ci95_gbps[0], p.ci95_gbps[1])
            }),
        );
        if !points.points.is_empty() {
            series.push(points);
        }
    }
    if series.is_empty() {
        return Some(Err(PlotError::Data {
            figure: title,
            message: "the bandwidth sweep has no point".into(),
        }));
    }
    let values = sweep
        .curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.gbps));
    if let Some((lo, hi)) = span(values) {
        series.extend(reported_caches(c, lo, hi));
    }
    Some(Ok(Figure {
        title,
        main: Panel {
            x_label: "working set (KiB)".into(),
            y_label: "bandwidth (GB/s)".into(),
            log_x: true,
            log_y: true,
            series,
        },
        lower: None,
    }))
}

/// The serialization sweeps behind Δt (reads) and ΔT (writes): time against executors per
/// pattern, with each fitted line over its fit range; an error when there is no sweep.
pub fn gaps_figure(c: &Calibration) -> Result<Figure, PlotError> {
    let title = format!("Serialization intervals Δt, ΔT, {}", device(c));
    let mut series = Vec::new();
    for fit in &c.gaps {
        let name = format!("{:?} {:?}", fit.pattern, fit.direction).to_lowercase();
        // The points and their fitted line share one label: one colour, one legend entry.
        let label = format!(
            "{name}: Δ = {} ns, R² {:.3}",
            sig(fit.gap_ns),
            fit.r_squared
        );
        let measured = Series::measured(
            label.clone(),
            Mark::Points,
            fit.sweep
                .iter()
                .filter(|p| p.executors > 0 && p.time_ns > 0.0)
                .map(|p| (p.executors as f64, p.time_ns, p.ci95_ns[0], p.ci95_ns[1])),
        );
        if measured.points.is_empty() {
            continue;
        }
        series.push(measured);
        let [from, to] = fit.fit_range;
        let line: Vec<(f64, f64)> = [from, to]
            .iter()
            .map(|&n| (n as f64, fit.intercept_ns + fit.gap_ns * n as f64))
            .filter(|&(n, t)| n > 0.0 && t > 0.0)
            .collect();
        if line.len() == 2 {
            series.push(Series::new(label, line, Mark::Dashed));
        }
    }
    if series.is_empty() {
        return Err(PlotError::Data {
            figure: title,
            message: "the calibration has no serialization sweep".into(),
        });
    }
    Ok(Figure {
        title,
        main: Panel {
            x_label: "executors launched n".into(),
            y_label: "kernel time (ns)".into(),
            log_x: true,
            log_y: true,
            series,
        },
        lower: None,
    })
}

fn sig(v: f64) -> String {
    crate::export::table::sig(v, 3)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibration::OneThread;

    #[test]
    fn the_bandwidth_figure_draws_one_threads_curves_beside_the_devices() {
        use crate::bench::bandwidth::{
            BandwidthCurve, BandwidthPoint, BandwidthSweep, StreamKernel,
        };
        let sweep = |kernels: &[StreamKernel], gbps: f64| BandwidthSweep {
            cache_curves: Vec::new(),
            executors: 2,
            curves: kernels
                .iter()
                .map(|&kernel| BandwidthCurve {
                    kernel,
                    points: [1 << 16, 1 << 20, 1 << 26]
                        .into_iter()
                        .map(|bytes| BandwidthPoint {
                            working_set_bytes: bytes,
                            gbps,
                            ci95_gbps: [0.9 * gbps, 1.1 * gbps],
                            passes: 1,
                            outliers: 0,
                        })
                        .collect(),
                })
                .collect(),
            levels: Vec::new(),
        };
        let mut c = crate::calibration::test_fixture();
        c.bandwidth = Some(sweep(&StreamKernel::ALL, 100.0));
        let labels = |c: &Calibration| -> Vec<(String, Mark)> {
            bandwidth_figure(c)
                .expect("a sweep")
                .expect("a figure")
                .main
                .series
                .iter()
                .map(|s| (s.label.clone(), s.mark))
                .collect()
        };
        let before = labels(&c);
        assert!(before.iter().all(|(l, _)| !l.contains("one thread")));
        c.one_thread = Some(OneThread {
            bandwidth: sweep(&[StreamKernel::Copy, StreamKernel::Triad], 40.0),
            strided_read: c.gaps[0].clone(),
            stencil: None,
            hyperplanes: None,
        });
        let after = labels(&c);
        assert_eq!(after.len(), before.len() + 2);
        for kernel in ["copy", "triad"] {
            let label = format!("{kernel}, one thread");
            assert!(after.contains(&(label, Mark::Dashed)), "{after:?}");
        }
        c.transposes = Some(crate::bench::transpose::TransposeSweep {
            shape: crate::bench::transpose::TransposeShape::CubeJk,
            one_thread: true,
            points: vec![crate::bench::transpose::TransposePoint {
                side: 103,
                working_set_bytes: 8 * 103 * 103 * 103,
                gbps: 9.9,
                ci95_gbps: [9.8, 10.0],
                outliers: 0,
            }],
        });
        let with = labels(&c);
        assert_eq!(with.len(), after.len() + 1);
        assert!(with.contains(&("j,k transpose, one thread".into(), Mark::Points)));
        if let Some(one) = c.one_thread.as_mut() {
            one.stencil = Some(crate::bench::stencil::StencilSweep {
                points: vec![crate::bench::stencil::StencilPoint {
                    side: 2897,
                    sides: vec![2779, 2897, 3011],
                    working_set_bytes: 4 * 2897 * 2897,
                    gbps: 4.05,
                    ci95_gbps: [3.9, 4.2],
                    outliers: 0,
                }],
            });
        }
        let stencil = labels(&c);
        assert_eq!(stencil.len(), with.len() + 1);
        assert!(stencil.contains(&("row stencil, one thread".into(), Mark::Points)));
        c.gathers = c.transposes.clone().map(|mut g| {
            g.shape = crate::bench::transpose::TransposeShape::SquareGather;
            g
        });
        let both = labels(&c);
        assert_eq!(both.len(), stencil.len() + 1);
        assert!(both.contains(&("gathering transpose, one thread".into(), Mark::Points)));
    }
}
