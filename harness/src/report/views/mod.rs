//! Tables for the commands: device lists, calibration summaries and comparisons.
//!
//! This file holds the device list and what the tables share; `calibration` holds a
//! calibration's tables and the comparison of two, `runs` a workload run's and a series',
//! `prediction` the fractal prediction's and validation's, `balance` Stepanenko's balance.

mod balance;
mod calibration;
mod prediction;
mod runs;

pub use balance::{decomposition_table, fragments_table, split_runs_table};
pub use calibration::{
    babelstream_table, calibration_summary, comparison_table, one_thread_table,
    rate_comparison_table,
};
pub use prediction::{calibrated_regimes, forecast_table, validation_table, window_report};
pub use runs::{launch_probe_line, run_table, series_progress};

use crate::backend::DeviceInfo;
use crate::export::Table;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::transpose::TransposeSweep;
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
    fn the_calibration_summary_says_where_the_shaped_sweeps_were_left_out() {
        let mut c = test_fixture();
        let says = |c: &crate::calibration::Calibration| {
            calibration_summary(c).contains("`calibrate --shaped-sweeps` measures them")
        };
        c.transposes = None;
        c.gathers = None;
        c.hyperplanes = None;
        if let Some(o) = c.one_thread.as_mut() {
            o.stencil = None;
            o.hyperplanes = None;
        }
        assert_eq!(c.device.class, crate::backend::DeviceClass::Cpu);
        assert!(says(&c), "{}", calibration_summary(&c));
        assert!(calibration_summary(&c).contains("a CPU's full calibration leaves them out"));
        // A GPU's full calibration measures them: a file without them is an old one.
        c.device.class = crate::backend::DeviceClass::Gpu;
        assert!(!says(&c));
        c.provenance.quick = true;
        assert!(calibration_summary(&c).contains("a quick look leaves them out"));
        // With any of them measured, nothing to say.
        c.hyperplanes = Some(crate::calibration::test_hyperplanes(&[(65, 1.0, 1.0)]));
        assert!(!says(&c));
    }

    #[test]
    fn the_calibration_summary_shows_one_threads_rates_where_measured() {
        let mut c = test_fixture();
        assert!(!calibration_summary(&c).contains("on one thread"));
        let sweep = crate::bench::bandwidth::BandwidthSweep {
            cache_curves: Vec::new(),
            executors: 2,
            curves: Vec::new(),
            levels: vec![crate::bench::bandwidth::LevelBandwidth {
                level: "L2".into(),
                working_set_bytes: [65536, 4 << 20],
                read_gbps: None,
                write_gbps: None,
                copy_gbps: Some(72.3),
                triad_gbps: Some(84.1),
                plateau_from_bytes: None,
                passes_in_launch: false,
                spread: Vec::new(),
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
        one.hyperplanes = Some(crate::calibration::test_hyperplanes(&[
            (161, 2.31, 2.17),
            (647, 0.98, 0.66),
        ]));
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

    /// A streaming sweep's rows: an L3 below 64 MiB and device memory past it, each copying
    /// at 50 GB/s.
    fn l3_and_memory_rows() -> crate::bench::bandwidth::BandwidthSweep {
        let level = |name: &str, range: [usize; 2]| crate::bench::bandwidth::LevelBandwidth {
            level: name.into(),
            working_set_bytes: range,
            read_gbps: None,
            write_gbps: None,
            copy_gbps: Some(50.0),
            triad_gbps: None,
            plateau_from_bytes: None,
            passes_in_launch: false,
            spread: Vec::new(),
        };
        crate::bench::bandwidth::BandwidthSweep {
            executors: 2,
            curves: Vec::new(),
            levels: vec![
                level("L3", [0, (64 << 20) - 1]),
                level("memory", [64 << 20, usize::MAX]),
            ],
            cache_curves: Vec::new(),
        }
    }

    #[test]
    fn the_calibration_summary_gives_each_patterns_rate_per_level() {
        use crate::bench::transpose::{TransposePoint, TransposeShape};
        let mut c = test_fixture();
        assert!(!calibration_summary(&c).contains("rate by access pattern"));
        c.bandwidth = Some(l3_and_memory_rows());
        // The row of `pattern`: its sweep's words, then one cell per level.
        let row = |text: &str, pattern: &str| -> Option<Vec<String>> {
            let table = text.split("rate by access pattern").nth(1)?;
            let line = table
                .lines()
                .find(|l| l.split_whitespace().next() == Some(pattern))?;
            Some(line.split_whitespace().map(String::from).collect())
        };
        let text = calibration_summary(&c);
        assert!(row(&text, "transpose").is_none(), "{text}");
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
        let transpose = row(&text, "transpose").expect("a transpose row");
        assert_eq!(
            transpose[1..],
            ["j,k", "transpose,", "one", "thread", "8.50", "2.00"]
        );
        assert!(row(&text, "transpose-read").is_none(), "{text}");
        // The gathering sweep's row follows, where the calibration has one (the points' side
        // is a square's there; the row reads only their working sets).
        c.gathers = Some(TransposeSweep {
            shape: TransposeShape::SquareGather,
            one_thread: true,
            points: vec![point(103, 7.0), point(407, 1.0)],
        });
        let text = calibration_summary(&c);
        let read = row(&text, "transpose-read").expect("a transpose-read row");
        assert_eq!(read[read.len() - 2..], ["7.00", "1.00"]);
        // And the random gather sweep's, the `gather` pattern's; a level it did not reach
        // shows a dash.
        assert!(row(&text, "gather").is_none(), "{text}");
        let gathered = |bytes: usize, gbps: f64| crate::bench::gather::GatherPoint {
            elements: bytes / 12,
            reads: None,
            working_set_bytes: bytes,
            gbps,
            ci95_gbps: [gbps, gbps],
            outliers: 0,
        };
        c.random_gathers = Some(crate::bench::gather::GatherSweep {
            one_thread: false,
            points: vec![gathered(12 << 20, 30.0), gathered(24 << 20, 20.0)],
        });
        let text = calibration_summary(&c);
        let gather = row(&text, "gather").expect("a gather row");
        assert_eq!(gather[1..], ["a[idx[x]]", "25.0", "-"]);
        // Streaming and strided are always there, as every calibration has their sweeps, and
        // the dependent walk's rate is the chase's node per latency of the level of that name.
        assert!(row(&text, "stream").is_some() && row(&text, "strided").is_some());
        let t = c.read_latency.levels.iter().find(|l| l.level == "L3");
        let dependent = row(&text, "dependent").expect("a dependent row");
        assert_eq!(dependent[1..5], ["pointer", "chase,", "128", "B"]);
        match t {
            Some(l) => assert_eq!(
                dependent[7],
                crate::export::sig(128.0 / l.latency_ns, 3),
                "{text}"
            ),
            None => assert_eq!(dependent[7], "-", "{text}"),
        }
        // The hyperplane walks' rows, where the calibration has their sweep (here the
        // device's: 15.9 MiB in the L3, 1 GiB in memory).
        assert!(row(&text, "hyperplane").is_none() && row(&text, "stencil").is_none());
        c.hyperplanes = Some(crate::calibration::test_hyperplanes(&[
            (161, 2.31, 2.17),
            (647, 0.98, 0.66),
        ]));
        let text = calibration_summary(&c);
        let up = row(&text, "hyperplane").expect("a hyperplane row");
        assert_eq!(up[up.len() - 2..], ["2.31", "0.980"], "{text}");
        let down = row(&text, "hyperplane-descending").expect("a descending row");
        assert_eq!(down[down.len() - 2..], ["2.17", "0.660"], "{text}");
    }

    #[test]
    fn a_cpus_rows_say_how_much_of_a_sample_is_the_launch() {
        use crate::bench::bandwidth::{BandwidthCurve, StreamKernel};
        use crate::calibration::test_stream_point as point;
        // PoCL on the 2-core EPYC VM: 2.18 µs at 16 KiB, 2.69 µs at 32 KiB, 1.4 ms at 64 MiB.
        let curves = vec![BandwidthCurve {
            kernel: StreamKernel::Copy,
            points: vec![
                point(16 << 10, 7.5),
                point(32 << 10, 12.2),
                point(128 << 10, 50.5),
                point(64 << 20, 48.0),
            ],
        }];
        let l1 = calibration::launch_share(&curves, [0, (64 << 10) - 1]).expect("two points");
        assert!((l1 - 0.897).abs() < 1e-3, "{l1}");
        let memory = calibration::launch_share(&curves, [64 << 20, usize::MAX]).expect("one");
        assert!(memory < 0.01, "{memory}");
        assert_eq!(
            calibration::launch_share(&curves, [1 << 30, usize::MAX]),
            None
        );
        assert_eq!(
            calibration::launch_share(&curves[..0], [0, usize::MAX]),
            None
        );
        // The column on a CPU, not on a GPU, whose samples cancel the launch (2k − k passes).
        let mut c = test_fixture();
        c.bandwidth = Some(l3_and_memory_rows());
        assert!(calibration_summary(&c).contains("launch ≤"));
        c.device.class = crate::backend::DeviceClass::Gpu;
        assert!(!calibration_summary(&c).contains("launch ≤"));
    }

    #[test]
    fn each_levels_spread_is_shown_where_the_file_records_it() {
        use crate::bench::bandwidth::{RateSpread, StreamKernel};
        let mut c = test_fixture();
        let mut sweep = l3_and_memory_rows();
        c.bandwidth = Some(sweep.clone());
        // A file from before the spread was recorded: no table.
        assert!(!calibration_summary(&c).contains("each level's spread"));
        sweep.levels[1].spread = vec![RateSpread {
            kernel: StreamKernel::Copy,
            gbps: [48.2, f64::INFINITY],
        }];
        c.bandwidth = Some(sweep);
        let text = calibration_summary(&c);
        let table = text.split("each level's spread").nth(1).expect("a table");
        let cells = |start: &str| -> Vec<String> {
            let line = table.lines().find(|l| l.starts_with(start)).expect(start);
            line.split_whitespace().map(String::from).collect()
        };
        assert_eq!(
            cells("memory"),
            ["memory", "-", "-", "48.2–…", "-"],
            "{text}"
        );
        assert_eq!(cells("L3"), ["L3", "-", "-", "-", "-"], "{text}");
    }

    #[test]
    fn cache_rows_measured_with_passes_in_a_launch_are_marked_beside_one_launchs_rate() {
        use crate::bench::bandwidth::{BandwidthCurve, StreamKernel};
        use crate::calibration::test_stream_point as point;
        let mut c = test_fixture();
        let mut sweep = l3_and_memory_rows();
        // The L3 row taken from passes inside a launch, with the sweep's one-launch copies
        // at 4 and 8 MiB beside it.
        sweep.curves = vec![BandwidthCurve {
            kernel: StreamKernel::Copy,
            points: vec![point(4 << 20, 100.0), point(8 << 20, 120.0)],
        }];
        sweep.levels[0].passes_in_launch = true;
        sweep.levels[0].copy_gbps = Some(300.0);
        c.bandwidth = Some(sweep);
        let text = calibration_summary(&c);
        assert!(
            text.contains("copy, one launch") && !text.contains("launch ≤"),
            "{text}"
        );
        let row = |text: &str, start: &str| -> Option<Vec<String>> {
            let table = text.split("streaming bandwidth per level").nth(1)?;
            let line = table.lines().find(|l| l.starts_with(start))?;
            Some(line.split_whitespace().map(String::from).collect())
        };
        let l3 = row(&text, "L3 †").expect("a marked L3 row");
        assert_eq!(l3[l3.len() - 3..], ["300", "-", "110"], "{text}");
        let memory = row(&text, "memory").expect("a memory row");
        assert_eq!(memory.last().map(String::as_str), Some("-"), "{text}");
    }

    #[test]
    fn device_memorys_row_is_put_beside_babelstreams_best_and_mean() {
        let mut c = test_fixture();
        c.bandwidth = Some(l3_and_memory_rows());
        // BabelStream's copy: 62.5 GB/s in its fastest iteration, 50 GB/s in its mean.
        let copy = crate::bench::babelstream::BabelStreamKernel {
            name: "Copy".into(),
            mbytes_per_sec: 62_500.0,
            min_seconds: 0.004,
            max_seconds: 0.006,
            average_seconds: 0.005,
            device_mbytes_per_sec: 62_500.0,
        };
        c.babelstream = Some(crate::calibration::test_babelstream(vec![copy]));
        let text = calibration_summary(&c);
        assert!(
            text.contains("beside BabelStream in this run: copy 50.0 GB/s against BabelStream's mean 50.0 (1.00)\n"),
            "{text}"
        );
        // With the sweep's samples at 64 MiB (spread 3: copy 2…22 ms, triad the same × 3),
        // its fastest tenth is put beside BabelStream's best.
        let w = 64usize << 20;
        let copy: Vec<f64> = (2..=22).map(|ms| ms as f64 * 1e-3).collect();
        let triad: Vec<f64> = copy.iter().map(|t| 3.0 * t).collect();
        c.samples.insert(format!("bandwidth_copy_s/{w}"), copy);
        c.samples.insert(format!("bandwidth_triad_s/{w}"), triad);
        let curve = |kernel| crate::bench::bandwidth::BandwidthCurve {
            kernel,
            points: vec![crate::calibration::test_stream_point(w, 50.0)],
        };
        let sweep = c.bandwidth.as_mut().expect("a sweep");
        sweep.curves = vec![
            curve(crate::bench::bandwidth::StreamKernel::Copy),
            curve(crate::bench::bandwidth::StreamKernel::Triad),
        ];
        let text = calibration_summary(&c);
        assert!(
            text.contains("(1.00), its fastest tenth 150 GB/s against its best 62.5 (2.40)\n"),
            "{text}"
        );
        // Without a device-memory row, no line.
        c.bandwidth.as_mut().expect("a sweep").levels.pop();
        assert!(!calibration_summary(&c).contains("beside BabelStream"));
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
