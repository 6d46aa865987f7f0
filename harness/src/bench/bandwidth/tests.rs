//! Unit tests of the streaming sweep's rows, plateau and pass counts.

use super::*;

#[test]
fn device_memorys_row_starts_past_twice_the_largest_reported_cache() {
    let curves = vec![BandwidthCurve {
        kernel: StreamKernel::Copy,
        points: [
            (4, 50.0),
            (8, 53.0),
            (16, 45.0),
            (32, 21.0),
            (64, 19.4),
            (128, 19.0),
        ]
        .map(|(mib, gbps)| point(mib << 10, gbps))
        .to_vec(),
    }];
    // The chase's memory level from 4 MiB (TLB reach), an L3 of 32 MiB reported.
    let levels = [
        level("L3", 512 << 10, 2 << 20),
        level("memory", 4 << 20, 128 << 20),
    ];
    let chase = by_level(&curves, &levels);
    assert_eq!(chase[1].copy_gbps, Some((45.0 + 21.0) / 2.0), "pooled");
    let past = by_level_past_caches(&curves, &levels, Some(32 << 20));
    assert_eq!(past[1].working_set_bytes[0], 64 << 20);
    assert_eq!(past[1].copy_gbps, Some(19.2));
    assert_eq!(past[0].copy_gbps, Some(47.5), "the cache keeps its band");
    assert_eq!(past[1].plateau_from_bytes, None, "no step past 64 MiB");
    // No cache reported, or a sweep that never reaches past it: the chase's levels, the
    // memory row pooling its plateau past the last step (45 → 21 GB/s at 32 MiB).
    for cache in [None, Some(1 << 30)] {
        let rows = by_level_past_caches(&curves, &levels, cache);
        assert_eq!(rows[0], chase[0]);
        assert_eq!(rows[1].working_set_bytes, chase[1].working_set_bytes);
        assert_eq!(rows[1].plateau_from_bytes, Some(32 << 20));
        assert_eq!(rows[1].copy_gbps, Some(19.4));
    }
}

fn copy_and_triad(points_mib: &[(usize, f64)]) -> Vec<BandwidthCurve> {
    [StreamKernel::Copy, StreamKernel::Triad]
        .map(|kernel| BandwidthCurve {
            kernel,
            points: points_mib
                .iter()
                .map(|&(mib, g)| point(mib << 10, g))
                .collect(),
        })
        .to_vec()
}

#[test]
fn device_memorys_row_pools_the_plateau_past_the_last_step() {
    // The 2-core EPYC VM's PoCL, copy, 2026-11-29: an L3 of 32 MiB reported, and 64 MiB
    // still a quarter faster than memory.
    let full = [
        (16, 155.0),
        (32, 144.0),
        (64, 99.0),
        (128, 75.0),
        (256, 72.0),
        (512, 71.0),
    ];
    let levels = [
        level("L3", 2 << 20, 2 << 20),
        level("memory", 4 << 20, 512 << 20),
    ];
    let curves = copy_and_triad(&full);
    assert!(!still_stepping(&curves));
    assert_eq!(plateau_start(&curves, 64 << 20), Some(128 << 20));
    let rows = by_level_past_caches(&curves, &levels, Some(32 << 20));
    assert_eq!(
        rows[1].working_set_bytes,
        [64 << 20, usize::MAX],
        "the level's edge stays"
    );
    assert_eq!(rows[1].plateau_from_bytes, Some(128 << 20));
    assert_eq!(rows[1].copy_gbps, Some(72.0));
    assert_eq!(rows[1].triad_gbps, Some(72.0));
    // Ended at 128 MiB, the sweep was still stepping: it doubles on.
    assert!(still_stepping(&copy_and_triad(&full[..4])));
    assert_eq!(
        plateau_start(&copy_and_triad(&full[..4]), 64 << 20),
        Some(128 << 20)
    );
    // A fall within the noise is no step.
    let noisy = copy_and_triad(&[(64, 80.0), (128, 74.0), (256, 76.0)]);
    assert!(!still_stepping(&noisy));
    assert_eq!(plateau_start(&noisy, 64 << 20), Some(64 << 20));
    assert_eq!(plateau_start(&noisy, 1 << 30), None);
}

fn level(name: &str, first: usize, last: usize) -> LatencyLevel {
    LatencyLevel {
        level: name.into(),
        working_set_bytes: [first, last],
        latency_ns: 1.0,
        ci95_ns: [1.0, 1.0],
        cycles: None,
    }
}

fn point(kib: usize, gbps: f64) -> BandwidthPoint {
    BandwidthPoint {
        working_set_bytes: kib << 10,
        gbps,
        ci95_gbps: [gbps, gbps],
        passes: 1,
        outliers: 0,
    }
}

#[test]
fn points_are_grouped_by_the_latency_levels() {
    let curves = vec![BandwidthCurve {
        kernel: StreamKernel::Copy,
        points: vec![
            point(16, 100.0),
            point(32, 90.0),
            point(64, 40.0),
            point(1024, 10.0),
        ],
    }];
    // L1 to 16 KiB, a transition at 32 KiB, memory from 64 KiB.
    let levels = [
        level("L1", 4 << 10, 16 << 10),
        level("memory", 64 << 10, 64 << 10),
    ];
    let by = by_level(&curves, &levels);
    assert_eq!(by[0].copy_gbps, Some(95.0), "the transition counts to L1");
    assert_eq!(by[1].copy_gbps, Some(25.0));
    assert_eq!(by[0].working_set_bytes, [0, (64 << 10) - 1]);
    assert_eq!(by[1].working_set_bytes, [64 << 10, usize::MAX]);
    assert_eq!(by[0].read_gbps, None);
}

#[test]
fn passes_move_at_least_8_mib_and_sizes_double() {
    assert_eq!(passes_for(16 << 10), 512);
    assert_eq!(passes_for(64 << 20), 1);
    assert_eq!(passes_for(1), MAX_PASSES);
    assert_eq!(sweep_sizes(100 << 10), [16 << 10, 32 << 10, 64 << 10]);
}

#[test]
fn an_unbounded_interval_is_written_and_read_back() {
    let p = BandwidthPoint {
        ci95_gbps: [12483.0, f64::INFINITY],
        ..point(8 << 10, 32768.0)
    };
    let json = serde_json::to_string(&p).unwrap();
    assert!(json.contains("null"), "{json}");
    let back: BandwidthPoint = serde_json::from_str(&json).unwrap();
    assert_eq!(back.ci95_gbps, [12483.0, f64::INFINITY]);
    assert_eq!(back.gbps, 32768.0);
}

#[test]
fn a_gpu_sample_runs_long_enough_for_its_difference_to_beat_the_jitter() {
    // 8 MiB in L2 at 8 TB/s: a pass takes 1 µs (one pass 6 µs with the launch, two 7 µs),
    // so k = 500 passes, where the byte rule alone gave 1.
    assert_eq!(passes_for(8 << 20), 1);
    assert!((500..=501).contains(&passes_for_probe(8 << 20, 6e-6, 7e-6)));
    // Noise hid the difference: the one-pass time (launch included) sets k.
    assert!((50..=51).contains(&passes_for_probe(8 << 20, 10e-6, 9e-6)));
    // A slow pass keeps the byte rule's k; a vanishing one is capped.
    assert_eq!(passes_for_probe(16 << 10, 1e-3, 2e-3), 512);
    assert_eq!(passes_for_probe(1 << 30, 0.0, 0.0), MAX_PASSES);
}

#[test]
fn every_working_set_walks_the_first_elements_of_its_kernels_shared_arrays() {
    let device = crate::backend::host::HostDevice::new();
    let ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
        .expect("the host compiles the microbenchmarks");
    let kernel = StreamKernel::Copy;
    let pattern = pattern(4096);
    // Copy's two arrays at a working set of 32 KiB: 4096 floats each.
    let bufs = upload_arrays(&ctx, kernel, &[8192, 32768], &pattern).expect("uploaded");
    assert!(bufs.iter().all(|b| b.len_bytes() == 4 * 4096));
    assert_eq!(bufs.len(), 2);
    // Two working sets on the same arrays, each checked after its own passes, read back
    // through one host array.
    let mut scratch = Vec::new();
    for n in [1024, 4096] {
        let a = arrays_on(&ctx, &bufs, kernel, n, 64, 16).expect("fits");
        check(&ctx, kernel, &a, 3, &mut scratch)
            .expect("the copy of the first n elements verifies");
    }
    assert_eq!(
        std::rc::Rc::strong_count(&bufs),
        1,
        "the points let go of them"
    );
    // A point larger than its arrays is refused, not walked past their end.
    assert_eq!(
        scratch.len(),
        4096,
        "one chunk, as long as the larger point"
    );
    let err = arrays_on(&ctx, &bufs, kernel, 4097, 64, 16)
        .err()
        .expect("refused");
    assert!(err.to_string().contains("walks past its arrays"), "{err}");
}

#[test]
fn a_rows_spread_is_the_hull_of_its_pooled_working_sets_intervals() {
    let with_ci = |mib: usize, gbps: f64, ci: [f64; 2]| BandwidthPoint {
        ci95_gbps: ci,
        ..point(mib << 10, gbps)
    };
    let curves = vec![BandwidthCurve {
        kernel: StreamKernel::Copy,
        points: vec![
            with_ci(64, 99.0, [95.0, 104.0]),
            with_ci(128, 75.0, [73.0, 80.0]),
            with_ci(256, 72.0, [70.5, 73.0]),
            with_ci(512, 71.0, [69.0, 74.5]),
        ],
    }];
    // Pooled from 128 MiB: the 64 MiB working set, still stepping down, is left out.
    let r = row(&curves, "memory", [64 << 20, usize::MAX], 128 << 20);
    assert_eq!(r.copy_gbps, Some(72.0));
    assert_eq!(r.spread_of(StreamKernel::Copy), Some([69.0, 80.0]));
    assert_eq!(
        r.spread_of(StreamKernel::Read),
        None,
        "no read points, no spread"
    );
    // Every working set of the range: the step's interval too.
    let all = row(&curves, "memory", [64 << 20, usize::MAX], 64 << 20);
    assert_eq!(all.spread_of(StreamKernel::Copy), Some([69.0, 104.0]));
    // An unbounded upper end stays unbounded, and is written and read back as such.
    let open = vec![BandwidthCurve {
        kernel: StreamKernel::Copy,
        points: vec![with_ci(1, 300.0, [250.0, f64::INFINITY])],
    }];
    let r = row(&open, "L1", [0, 4 << 20], 0);
    assert_eq!(
        r.spread_of(StreamKernel::Copy),
        Some([250.0, f64::INFINITY])
    );
    let back: LevelBandwidth = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
    assert_eq!(back, r);
    // A file written before the spread was recorded reads back without one.
    let mut old = serde_json::to_value(&r).unwrap();
    old.as_object_mut().unwrap().remove("spread");
    let old: LevelBandwidth = serde_json::from_value(old).unwrap();
    assert!(old.spread.is_empty());
}
