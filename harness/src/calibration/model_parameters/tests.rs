//! Tests of what the models read from a calibration: the parameters in seconds, the line,
//! streaming and hyperplane rates, the memory floor and the levels.

use super::*;
use crate::calibration::test_fixture;

#[test]
fn the_hyperplane_sweeps_spread_is_its_slowest_and_fastest_cube() {
    let mut c = test_fixture();
    let point = crate::bench::hyperplane::HyperplanePoint {
        side: 9,
        sides: vec![7, 9, 11],
        working_set_bytes: 4 * 9 * 9 * 9,
        ascending_gbps: 1.0,
        ascending_ci95_gbps: [0.9, 1.1],
        descending_gbps: 2.0,
        descending_ci95_gbps: [1.8, 2.2],
        outliers: 0,
    };
    c.hyperplanes = Some(HyperplaneSweep {
        points: vec![point],
    });
    // Each side's median sample: 1, 2 and 3 µs upwards; the downward samples of side 11
    // are missing.
    for (n, micros) in [(7, 1.0), (9, 2.0), (11, 3.0)] {
        let times = vec![micros * 1e-6, micros * 0.9e-6, micros * 1.5e-6];
        c.samples
            .insert(sample_key(n, PlaneOrder::Ascending), times.clone());
        if n != 11 {
            c.samples
                .insert(sample_key(n, PlaneOrder::Descending), times);
        }
    }
    let facts = window_facts(&c);
    let rate = |n: usize, micros: f64| {
        8.0 * timed_points(n, PlaneOrder::Ascending) as f64 / (micros * 1e-6)
    };
    let (bytes, [slowest, fastest]) = facts.hyperplanes.ascending_sides[0];
    assert_eq!(bytes, 4 * 9 * 9 * 9);
    let all = [rate(7, 1.0), rate(9, 2.0), rate(11, 3.0)];
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = all.iter().copied().fold(0.0, f64::max);
    assert!((slowest / lo - 1.0).abs() < 1e-12 && (fastest / hi - 1.0).abs() < 1e-12);
    assert_eq!(facts.hyperplanes.ascending, vec![(bytes, 1e9)]);
    // A side without samples: no spread for that order.
    assert!(facts.hyperplanes.descending_sides.is_empty());
    assert_eq!(facts.hyperplanes.descending, vec![(bytes, 2e9)]);
}

#[test]
fn the_streaming_spread_is_the_median_over_the_fastest_tenth_copy_and_triad_pooled() {
    use crate::bench::bandwidth::{BandwidthCurve, BandwidthSweep};
    let mut c = test_fixture();
    let w = 64usize << 20;
    let point = |gbps| crate::calibration::test_stream_point(w, gbps);
    c.bandwidth = Some(BandwidthSweep {
        cache_curves: Vec::new(),
        executors: 2,
        curves: vec![
            BandwidthCurve {
                kernel: StreamKernel::Copy,
                points: vec![point(40.0)],
            },
            BandwidthCurve {
                kernel: StreamKernel::Triad,
                points: vec![point(30.0)],
            },
        ],
        levels: Vec::new(),
    });
    // Copy's 21 samples: 2, 3, …, 22 ms (median 12 ms); triad's the same times × 3.
    // Relative to their medians both are 2/12 … 22/12; pooled, the 10th percentile is
    // 4/12 (rank 0.1 · 41 = 4.1 between 4/12 and 4/12), the median 1: spread 3.
    let copy: Vec<f64> = (2..=22).map(|ms| ms as f64 * 1e-3).collect();
    let triad: Vec<f64> = copy.iter().map(|t| 3.0 * t).collect();
    c.samples
        .insert(format!("bandwidth_copy_s/{w}"), copy.clone());
    c.samples.insert(format!("bandwidth_triad_s/{w}"), triad);
    let facts = window_facts(&c);
    assert_eq!(facts.streaming_spread.len(), 1);
    let (bytes, spread) = facts.streaming_spread[0];
    assert_eq!(bytes, w as u64);
    assert!((spread - 3.0).abs() < 1e-9, "{spread}");
    assert_eq!(facts.streaming_spread_at(96 << 20), Some(spread));
    // Too few samples: no spread.
    c.samples
        .insert(format!("bandwidth_triad_s/{w}"), Vec::new());
    c.samples
        .insert(format!("bandwidth_copy_s/{w}"), copy[..10].to_vec());
    assert!(window_facts(&c).streaming_spread.is_empty());
}

#[test]
fn values_are_converted_to_seconds_and_named() {
    let c = test_fixture();
    let inputs = ModelInputs::from_calibration(&c);
    let p = inputs.parameters(&[]).expect("finite");
    assert_eq!(
        p.get("t").expect("t"),
        c.parameters.read_latency.value * 1e-9
    );
    assert_eq!(
        p.get("dT").expect("dT"),
        c.parameters.write_gap.value * 1e-9
    );
    assert_eq!(p.get("n").expect("n"), c.parameters.executors.value);
    let last_cache = c
        .read_latency
        .levels
        .iter()
        .rfind(|l| l.level != "memory")
        .expect("the host has caches");
    assert_eq!(
        p.get("t_cache").expect("t_cache"),
        last_cache.latency_ns * 1e-9
    );
    assert_eq!(inputs.launch_seconds.0, c.launch_overhead.device_ns * 1e-9);
}

#[test]
fn the_line_rate_is_64_bytes_per_strided_read() {
    let c = test_fixture();
    let strided = c
        .gaps
        .iter()
        .find(|g| g.pattern == Pattern::Strided && g.direction == Direction::Read)
        .expect("the fixture has a strided read sweep");
    let lines = window_facts(&c).lines;
    assert_eq!(lines.len(), strided.sweep.len());
    for (p, (working_set, rate)) in strided.sweep.iter().zip(lines) {
        // One 4-byte read per executor, each in its own line STRIDE_ELEMENTS floats on.
        assert_eq!(working_set, p.executors * u64::from(STRIDE_ELEMENTS) * 4);
        let want = 64.0 * p.executors as f64 / (p.time_ns * 1e-9);
        assert!((rate / want - 1.0).abs() < 1e-12, "{rate} {want}");
    }
}

#[test]
fn the_memory_floor_is_babelstreams_triad_over_its_mean_iteration() {
    let mut c = test_fixture();
    c.babelstream = None;
    assert_eq!(window_facts(&c).memory_floor, None);
    let kernel = |name: &str, average_seconds: f64| crate::bench::babelstream::BabelStreamKernel {
        name: name.into(),
        mbytes_per_sec: 1.0,
        min_seconds: average_seconds / 2.0,
        max_seconds: average_seconds * 2.0,
        average_seconds,
        device_mbytes_per_sec: 1.0,
    };
    c.babelstream = Some(crate::calibration::test_babelstream(vec![
        kernel("Copy", 0.001),
        kernel("Triad", 0.0125),
    ]));
    // Three arrays of 2^25 floats (402,653,184 bytes) in 12.5 ms: 32.2 GB/s.
    let floor = window_facts(&c).memory_floor.expect("a floor");
    assert!((floor - 402_653_184.0 / 0.0125).abs() < 1.0, "{floor}");
    // The same arrays in doubles move twice the bytes in the same time.
    if let Some(bs) = c.babelstream.as_mut() {
        bs.precision = crate::bench::babelstream::Precision::Double;
    }
    let floor = window_facts(&c).memory_floor.expect("a floor");
    assert!(
        (floor - 2.0 * 402_653_184.0 / 0.0125).abs() < 1.0,
        "{floor}"
    );
}

#[test]
fn on_a_gpu_device_memory_streams_at_least_at_babelstreams_rate() {
    use crate::bench::bandwidth::{BandwidthCurve, BandwidthSweep, LevelBandwidth};
    let mut c = test_fixture();
    let point = |mib: usize, gbps: f64| crate::calibration::test_stream_point(mib << 20, gbps);
    let level = |name: &str, lo: usize, hi: usize| LevelBandwidth {
        level: name.into(),
        working_set_bytes: [lo << 20, hi << 20],
        read_gbps: None,
        write_gbps: None,
        copy_gbps: None,
        triad_gbps: None,
        plateau_from_bytes: None,
        passes_in_launch: false,
        spread: Vec::new(),
    };
    // An H200's triad sweep: 7.3 TB/s in the L2, falling to 2.55 past it.
    c.bandwidth = Some(BandwidthSweep {
        cache_curves: Vec::new(),
        executors: 270_336,
        curves: vec![BandwidthCurve {
            kernel: StreamKernel::Triad,
            points: vec![point(32, 7300.0), point(256, 2552.0)],
        }],
        levels: vec![level("L2", 1, 63), level("memory", 64, 256)],
    });
    let kernel = |name: &str, mbps: f64| crate::bench::babelstream::BabelStreamKernel {
        name: name.into(),
        mbytes_per_sec: 0.9 * mbps,
        min_seconds: 1e-4,
        max_seconds: 1e-4,
        average_seconds: 1e-4,
        device_mbytes_per_sec: mbps,
    };
    c.babelstream = Some(crate::calibration::test_babelstream(vec![
        kernel("Copy", 2_509_305.0),
        kernel("Triad", 3_251_398.0),
    ]));
    let gap = |c: &Calibration, mib: u64| {
        ModelInputs::from_calibration(c)
            .streaming_gap(mib << 20, 2, 1)
            .expect("a sweep")
    };
    // A CPU keeps the sweep's rate: there BabelStream is no bound either way.
    c.device.class = crate::backend::DeviceClass::Cpu;
    assert!(ModelInputs::from_calibration(&c)
        .memory_reference
        .is_empty());
    let (name, cpu) = gap(&c, 805);
    assert_eq!(name, "memory");
    assert!((4.0 / cpu.0 / 1e9 - 2552.0).abs() < 1e-6);
    // A GPU's device memory streams at least at BabelStream's device-timed triad, and
    // says so; its L2 keeps the sweep's rate.
    c.device.class = crate::backend::DeviceClass::Gpu;
    let (name, gpu) = gap(&c, 805);
    assert_eq!(name, "memory (BabelStream's triad)");
    assert!((4.0 / gpu.0 / 1e9 - 3251.398).abs() < 1e-6);
    let (name, l2) = gap(&c, 32);
    assert_eq!(name, "L2");
    assert!((4.0 / l2.0 / 1e9 - 7300.0).abs() < 1e-6);
    // Where the sweep is the faster, it stands.
    if let Some(b) = c.babelstream.as_mut() {
        b.kernels = vec![kernel("Triad", 2_000_000.0)];
    }
    assert_eq!(gap(&c, 805), ("memory".to_string(), cpu));
}

#[test]
fn overrides_win() {
    let inputs = ModelInputs::from_calibration(&test_fixture());
    let p = inputs
        .parameters(&[("t".into(), 1.0), ("extra".into(), 2.0)])
        .expect("finite");
    assert_eq!(p.get("t").expect("t"), 1.0);
    assert_eq!(p.get("extra").expect("extra"), 2.0);
}

#[test]
fn bandwidth_is_interpolated_on_log_axes_and_clamped() {
    let p = |kib: usize, gbps: f64| crate::calibration::test_stream_point(kib << 10, gbps);
    let points = [p(16, 100.0), p(64, 25.0)];
    assert_eq!(interpolate(&points, 8.0 * 1024.0), Some(100.0));
    assert_eq!(interpolate(&points, 1e9), Some(25.0));
    // Halfway on log axes between 16 and 64 KiB is 32 KiB: √(100 · 25) = 50.
    let mid = interpolate(&points, 32.0 * 1024.0).expect("inside");
    assert!((mid - 50.0).abs() < 1e-9, "{mid}");
    assert_eq!(interpolate(&[], 1.0), None);
}

#[test]
fn the_levels_are_where_the_rate_steps_and_the_latency_the_chases() {
    use crate::bench::bandwidth::{BandwidthSweep, LevelBandwidth};
    let mut c = test_fixture();
    let row = |name: &str, lo: usize, hi: usize| LevelBandwidth {
        level: name.into(),
        working_set_bytes: [lo, hi],
        read_gbps: None,
        write_gbps: None,
        copy_gbps: None,
        triad_gbps: None,
        plateau_from_bytes: None,
        passes_in_launch: false,
        spread: Vec::new(),
    };
    // The chase's levels of a 2-core EPYC VM: memory from 16 MiB (its pages past the TLB's
    // reach); the streaming rows: memory past twice its 32 MiB L3.
    let chase = window_facts(&c).levels;
    c.bandwidth = Some(BandwidthSweep {
        cache_curves: Vec::new(),
        executors: 2,
        curves: Vec::new(),
        levels: vec![
            row("L2", 64 << 10, (2 << 20) - 1),
            row("L3", 2 << 20, (64 << 20) - 1),
            row("memory", 64 << 20, usize::MAX),
        ],
    });
    let facts = window_facts(&c);
    assert_eq!(facts.level_of(32 << 20), "L3");
    assert_eq!(facts.level_of(64 << 20), "memory");
    assert_eq!(
        facts.latency_levels, chase,
        "the latency keeps the chase's levels"
    );
    let memory = facts
        .latencies
        .iter()
        .find(|l| l.0 == "memory")
        .expect("memory");
    let past_chase = chase[chase.len() - 2].1 + 1;
    assert_eq!(facts.level_of(past_chase), "L3", "{chase:?}");
    assert_eq!(facts.latency_of(past_chase), Some(memory.1));
    // Rows that do not end in device memory (none swept past the caches): the chase's.
    c.bandwidth.as_mut().expect("a sweep").levels.pop();
    assert_eq!(window_facts(&c).levels, chase);
}
