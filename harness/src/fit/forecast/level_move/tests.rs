//! The moves of step 1: rates, cold runs, searches, gathers and walks.

use super::*;
use crate::fit::forecast::test_support::*;
use crate::fit::forecast::{forecast_calibrated, ColdMedian, Variant};

/// Cold runs of the kernel phase at every size of `s`, each three times its warm median.
fn three_times_as_slow_cold(s: &SeriesMedians) -> Vec<ColdMedian> {
    s.points
        .iter()
        .map(|p| ColdMedian {
            size: p.size,
            phase: "kernel".into(),
            seconds: 3.0 * p.phases[0].median_seconds,
        })
        .collect()
}

#[test]
fn a_declared_search_moves_its_work_whole_by_its_factor_not_by_cold_runs() {
    let sizes = [64, 128, 256];
    let s = series(sizes.map(|n| point(n, false)).to_vec());
    let mut cold = s.clone();
    cold.cold = three_times_as_slow_cold(&s);
    let moves: Vec<LevelMove> = sizes
        .map(|size| LevelMove {
            size,
            rate: 1e10,
            factor: 2.0,
            target_in_memory: true,
            search_factors: vec![("kernel".into(), 1.5)],
            ..Default::default()
        })
        .to_vec();
    let moved = move_to_target_level(
        &cold,
        &moves,
        Seconds(LAUNCH),
        Overlap::Half,
        MoveKinds::default(),
    );
    for (p, m) in s.points.iter().zip(&moved.points) {
        let (t, k) = (p.phases[0].median_seconds, p.phases[0].count as f64);
        let expected = k * LAUNCH + (t - k * LAUNCH) * 1.5;
        assert!(
            (m.phases[0].median_seconds - expected).abs() < 1e-15,
            "{m:?}"
        );
        assert!((m.total_seconds - p.total_seconds - (expected - t)).abs() < 1e-12);
    }
}

#[test]
fn declared_gathers_move_after_the_rates_and_the_cold_runs() {
    const RATE: f64 = 1e10;
    let sizes = [64, 128, 256];
    let s = series(sizes.map(|n| point(n, false)).to_vec());
    let extra = |n: usize| 1e-7 * n as f64;
    let moves = |gathers: bool, target_in_memory: bool| -> Vec<LevelMove> {
        sizes
            .map(|size| LevelMove {
                size,
                rate: RATE,
                factor: 2.0,
                target_in_memory,
                gather_seconds: if gathers {
                    vec![("kernel".into(), extra(size)), ("other".into(), 1.0)]
                } else {
                    Vec::new()
                },
                ..Default::default()
            })
            .to_vec()
    };
    let moved = |s: &SeriesMedians, m: &[LevelMove]| -> Vec<(f64, f64)> {
        move_to_target_level(s, m, Seconds(LAUNCH), Overlap::Half, MoveKinds::default())
            .points
            .iter()
            .map(|p| (p.phases[0].median_seconds, p.total_seconds))
            .collect()
    };
    // By the rates (no bytes declared: not moved), then the gathers' seconds on top.
    let plain = moved(&s, &moves(false, false));
    let with = moved(&s, &moves(true, false));
    for ((n, p), w) in sizes.iter().zip(&plain).zip(&with) {
        assert!((w.0 - p.0 - extra(*n)).abs() < 1e-15, "{n}: {p:?} {w:?}");
        assert!((w.1 - p.1 - extra(*n)).abs() < 1e-15, "{n}: {p:?} {w:?}");
    }
    // Moved by cold runs three times as slow: the gathers still add theirs.
    let mut cold = s.clone();
    cold.cold = three_times_as_slow_cold(&s);
    let with = moved(&cold, &moves(true, true));
    for ((n, p), w) in sizes.iter().zip(&s.points).zip(&with) {
        let expected = 3.0 * p.phases[0].median_seconds + extra(*n);
        assert!((w.0 - expected).abs() < 1e-15, "{n}: {w:?}");
    }
    // With what the gathers cost at the target's buffer known (there, here + extra), the
    // estimate is unchanged and the overlapped bound takes the longer of the moved time and
    // the gathers' time there (gather_overlap.rs).
    let there = |n: usize| 4.0 * extra(n);
    let known: Vec<LevelMove> = moves(true, true)
        .into_iter()
        .map(|m| LevelMove {
            gather_target_seconds: vec![("kernel".into(), there(m.size))],
            ..m
        })
        .collect();
    assert_eq!(moved(&cold, &known), with);
    let full = move_to_target_level(
        &cold,
        &known,
        Seconds(LAUNCH),
        Overlap::Full,
        MoveKinds::default(),
    );
    let plain_full = move_to_target_level(
        &cold,
        &moves(false, true),
        Seconds(LAUNCH),
        Overlap::Full,
        MoveKinds::default(),
    );
    for ((n, f), p) in sizes.iter().zip(&full.points).zip(&plain_full.points) {
        let t = p.phases[0].median_seconds;
        let (more, there) = (extra(*n), there(*n));
        let expected = t.max(there.min(t * there / (there - more)));
        let got = f.phases[0].median_seconds;
        assert!((got - expected).abs() < 1e-15, "{n}: {got} {expected}");
        assert!(got < t + more, "{n}: {got}");
    }
}

#[test]
fn a_kernel_faster_than_the_sweep_in_the_targets_own_level_keeps_its_rate() {
    const RATE: f64 = 1e12;
    // Every size streams 1.3× faster than the sweep says its level does (e = 1.3), as
    // vadd did in an H200's device memory; the sweep rates the target the same (g = 1).
    let streaming = |n: usize| {
        let mut p = point(n, false);
        let work = time(n as f64) - LAUNCHES as f64 * LAUNCH;
        p.phases[0].bytes = Some((1.3 * work * RATE).round() as u64);
        p
    };
    let s = series([64, 128, 256, 512].map(streaming).to_vec());
    let kernel = |in_target_level: bool| {
        let moves = [64, 128, 256, 512].map(|size| LevelMove {
            size,
            rate: RATE,
            factor: 1.0,
            in_target_level,
            ..Default::default()
        });
        forecast_calibrated(&s, 4096.0, &moves, Seconds(LAUNCH))
            .expect("fits")
            .phases
            .iter()
            .find(|p| p.name == "kernel")
            .and_then(|p| p.calibrated.clone())
            .expect("a calibrated kernel estimate")
            .prediction_seconds
    };
    let launches = LAUNCHES as f64 * LAUNCH;
    let work = time(4096.0) - launches;
    // In the target's level the window measured that level's rate: the extrapolation
    // stands. From another level the target cannot beat the sweep's rate there: the
    // traffic takes its bytes over that rate, 1.3× the work.
    assert!((kernel(true) / time(4096.0) - 1.0).abs() < 1e-6);
    let floored = launches + 1.3 * work;
    assert!(
        (kernel(false) / floored - 1.0).abs() < 1e-3,
        "{} against {floored}",
        kernel(false)
    );
}

#[test]
fn a_size_with_cold_runs_is_moved_to_their_time_where_the_target_is_in_memory() {
    const RATE: f64 = 1e12;
    // Each size streams at half the sweep's rate (e = 0.5), and its cold runs took three
    // times its warm time: its data from device memory, all of its time followed them.
    let sizes = [64, 128, 256, 512];
    let with_bytes = |n: usize| {
        let mut p = point(n, false);
        let work = time(n as f64) - LAUNCHES as f64 * LAUNCH;
        p.phases[0].bytes = Some((0.5 * work * RATE).round() as u64);
        p
    };
    let mut s = series(sizes.map(with_bytes).to_vec());
    s.cold = three_times_as_slow_cold(&s);
    let estimate = |in_memory: bool, cold: bool| {
        let mut s = s.clone();
        if !cold {
            s.cold.clear();
        }
        let moves = sizes.map(|size| LevelMove {
            size,
            rate: RATE,
            factor: 2.0,
            target_in_memory: in_memory,
            ..Default::default()
        });
        let f = forecast_calibrated(&s, 4096.0, &moves, Seconds(LAUNCH)).expect("fits");
        estimate_of(&f, "kernel")
    };
    let by_rates = estimate(true, false);
    let measured = estimate(true, true);
    // The cold runs set the point: three times every size, as the target.
    assert!(
        (measured.prediction_seconds / (3.0 * time(4096.0)) - 1.0).abs() < 1e-3,
        "{} against {}",
        measured.prediction_seconds,
        3.0 * time(4096.0)
    );
    // The rates' move (halfway at e·g = 1: 1.25×) stays inside the interval.
    assert!(by_rates.prediction_seconds < measured.prediction_seconds);
    assert!(measured.interval_seconds[0] <= by_rates.prediction_seconds);
    // A target in a cache: the cold runs measured another level, and the rates move it.
    let in_cache = estimate(false, true);
    assert_eq!(in_cache.prediction_seconds, by_rates.prediction_seconds);
}

#[test]
fn the_calibrated_variant_moves_each_size_to_the_targets_level() {
    const RATE: f64 = 1e12;
    // Sizes 64 and 128 ran in a cache twice as fast as the target's level (g = 2); 256
    // and 512 in the target's level. Moved, every point lies on the target level's curve.
    let cached = |n: usize| {
        let mut p = point(n, true);
        let work = time(n as f64) - LAUNCHES as f64 * LAUNCH;
        p.phases[0].median_seconds = LAUNCHES as f64 * LAUNCH + work / 2.0;
        // Exactly the bytes the level streams in that time (e = 1): all of the work is
        // streaming, and at the target's rate it takes twice as long.
        p.phases[0].bytes = Some((work / 2.0 * RATE).round() as u64);
        p.total_seconds = p.phases[0].median_seconds;
        p
    };
    let s = series(vec![
        cached(64),
        cached(128),
        point(256, false),
        point(512, false),
    ]);
    let moves = |g: f64| {
        [(64, g), (128, g), (256, 1.0), (512, 1.0)].map(|(size, factor)| LevelMove {
            size,
            rate: RATE,
            factor,
            ..Default::default()
        })
    };
    let target = 4096.0;
    let f = forecast_calibrated(&s, target, &moves(2.0), Seconds(LAUNCH)).expect("fits");
    assert_eq!(f.variant, Variant::Calibrated);
    let total = f.phases.iter().find(|p| p.name == "total").expect("total");
    assert!(
        (total.fractal.c - 2.0).abs() < 1e-6,
        "c = {}",
        total.fractal.c
    );
    assert!((total.fractal.prediction_seconds / time(target) - 1.0).abs() < 1e-6);
    // The upload is a transfer: not moved (and missing at two sizes, so not fitted).
    assert_eq!(f.skipped_phases.len(), 1);
    // Without the factors the same points bend the fit.
    let wrong = forecast_calibrated(&s, target, &moves(1.0), Seconds(LAUNCH)).expect("fits");
    // A phase that does not say what it moves is not moved either.
    let mut silent = s.clone();
    for p in &mut silent.points {
        p.phases[0].bytes = None;
    }
    let kept = forecast_calibrated(&silent, target, &moves(2.0), Seconds(LAUNCH)).expect("fits");
    let total = kept
        .phases
        .iter()
        .find(|p| p.name == "total")
        .expect("total");
    let unmoved = wrong
        .phases
        .iter()
        .find(|p| p.name == "total")
        .expect("total");
    assert_eq!(
        total.fractal.prediction_seconds,
        unmoved.fractal.prediction_seconds
    );
    let total = wrong
        .phases
        .iter()
        .find(|p| p.name == "total")
        .expect("total");
    assert!((total.fractal.prediction_seconds / time(target) - 1.0).abs() > 0.1);
}

/// The calibrated total at N = 800 per 100 of N (so the 1 ms per run of `one_ms_series`
/// comes back as 1 ms where nothing moves) of a series at N = 100, 200 and 400 whose sizes
/// all streamed at 4 GB/s in a level twice as fast as the target's (g = 2), with no launch
/// cost; and its interval.
fn total_at_half_speed(s: &SeriesMedians) -> (f64, [f64; 2]) {
    let moves = [100, 200, 400].map(|size| LevelMove {
        size,
        rate: 4e9,
        factor: 2.0,
        ..Default::default()
    });
    let f = forecast_calibrated(s, 800.0, &moves, Seconds(0.0)).expect("fits");
    let total = f
        .phases
        .into_iter()
        .find(|p| p.name == "total")
        .expect("total");
    let [lo, hi] = total.interval_seconds();
    (total.prediction_seconds() / 8.0, [lo / 8.0, hi / 8.0])
}

#[test]
fn a_roofline_time_does_not_carry_the_windows_noise() {
    // Medians known to ±30 %, moved to a level half as fast (g = 2). 8 MB per run at the
    // sweep's 4 GB/s is 2 ms, twice the run's 1 ms (e = 2): at the target's 2 GB/s the
    // traffic takes 4 ms whatever the window measured, so the medians' noise does not
    // follow it (it used to be scaled with the median, to ±1.2 ms).
    let moved = |bytes: u64| {
        let mut s = one_ms_series(bytes, None);
        for p in &mut s.points {
            let m = p.phases[0].median_seconds;
            p.phases[0].ci95_seconds = Some([0.7 * m, 1.3 * m]);
        }
        let moves = [100, 200, 400].map(|size| LevelMove {
            size,
            rate: 4e9,
            factor: 2.0,
            ..Default::default()
        });
        let w = move_to_target_level(
            &s,
            &moves,
            Seconds(0.0),
            Overlap::Half,
            MoveKinds::default(),
        );
        let k = &w.points[0].phases[0];
        (k.median_seconds, k.ci95_seconds.expect("an interval"))
    };
    let (median, [lo, hi]) = moved(8_000_000);
    assert!((median - 4e-3).abs() < 1e-12, "{median}");
    assert!((hi - lo).abs() < 1e-12, "[{lo}, {hi}]");
    // A compute-bound phase (80 kB: e = 0.02) keeps its time but for half its traffic's
    // growth (0.01 ms), and its noise.
    let (median, [lo, hi]) = moved(80_000);
    assert!((median - 1.01e-3).abs() < 1e-12, "{median}");
    assert!((hi - lo - 0.6e-3).abs() < 1e-9, "[{lo}, {hi}]");
}

#[test]
fn a_strided_phase_moves_by_the_line_rate() {
    // 80 kB per run: at the streaming sweep's 4 GB/s (g = 2) its traffic is 2 % of the
    // 1 ms and it keeps its time but for 0.01 ms (halfway between the bounds); declared
    // strided, its lines arrive at 0.4 GB/s in the window's level (0.2 ms) and 20 times
    // slower at the target's, 4 ms: overlapped the run takes 4 ms (+3 ms), one after the
    // other 4.8 ms (+3.8 ms), and a strided phase's estimate is the latter, since each
    // step of its walk waits for its line (docs/models.md §2.4).
    let s = one_ms_series(80_000, None);
    let moved = |line_moves: Vec<(String, f64, f64)>, overlap: Overlap| {
        let moves = [100, 200, 400].map(|size| LevelMove {
            size,
            rate: 4e9,
            factor: 2.0,
            line_moves: line_moves.clone(),
            ..Default::default()
        });
        move_to_target_level(&s, &moves, Seconds(0.0), overlap, MoveKinds::default()).points[0]
            .phases[0]
            .median_seconds
    };
    let strided = || vec![("k".to_string(), 0.4e9, 20.0)];
    assert!((moved(Vec::new(), Overlap::Half) - 1.01e-3).abs() < 1e-12);
    assert!((moved(strided(), Overlap::Half) - 4.8e-3).abs() < 1e-12);
    // The interval still reaches the overlapped bound.
    assert!((moved(strided(), Overlap::Full) - 4.0e-3).abs() < 1e-12);
    // Another phase's line move leaves this one alone.
    let other = vec![("other".to_string(), 0.4e9, 20.0)];
    assert!((moved(other, Overlap::Half) - 1.01e-3).abs() < 1e-12);
}

#[test]
fn a_phase_on_one_thread_moves_at_its_own_rates() {
    // 80 kB per run of 1 ms. At the device's rates (4 GB/s, g = 2) its traffic is 2 % of
    // its time and it moves by 0.01 ms; it ran on one thread, which streamed at 1 GB/s
    // in the window's level and meets the target's 4 times slower: e = 0.08, e·g = 0.32,
    // one after the other +0.24 ms, overlapped +0, halfway +0.12 ms.
    let s = one_ms_series(80_000, None);
    let moved = |own_rates: Vec<(String, f64, f64)>,
                 line_moves: Vec<(String, f64, f64)>,
                 overlap: Overlap| {
        let moves = [100, 200, 400].map(|size| LevelMove {
            size,
            rate: 4e9,
            factor: 2.0,
            line_moves: line_moves.clone(),
            own_rates: own_rates.clone(),
            ..Default::default()
        });
        move_to_target_level(&s, &moves, Seconds(0.0), overlap, MoveKinds::default()).points[0]
            .phases[0]
            .median_seconds
    };
    let alone = || vec![("k".to_string(), 1e9, 4.0)];
    assert!((moved(Vec::new(), Vec::new(), Overlap::Half) - 1.01e-3).abs() < 1e-12);
    assert!((moved(alone(), Vec::new(), Overlap::Half) - 1.12e-3).abs() < 1e-12);
    assert!((moved(alone(), Vec::new(), Overlap::None) - 1.24e-3).abs() < 1e-12);
    assert!((moved(alone(), Vec::new(), Overlap::Full) - 1.0e-3).abs() < 1e-12);
    // Another phase's own rates leave this one alone.
    let other = vec![("other".to_string(), 1e9, 4.0)];
    assert!((moved(other, Vec::new(), Overlap::Half) - 1.01e-3).abs() < 1e-12);
    // A strided phase takes its line move, which for one thread carries one thread's
    // line rates, and its estimate stays the serial bound.
    let line = vec![("k".to_string(), 0.4e9, 20.0)];
    assert!((moved(alone(), line, Overlap::Half) - 4.8e-3).abs() < 1e-12);
}

#[test]
fn without_a_measured_rate_no_size_moves() {
    // A calibration without a bandwidth sweep gives rate 0 and factor 1: the sizes keep
    // their times (they used to become infinite: bytes over a rate of 0).
    let s = one_ms_series(8_000_000, None);
    let moves = [100, 200, 400].map(|size| LevelMove {
        size,
        rate: 0.0,
        factor: 1.0,
        ..Default::default()
    });
    let f = forecast_calibrated(&s, 800.0, &moves, Seconds(0.0)).expect("fits");
    let total = f.phases.iter().find(|p| p.name == "total").expect("total");
    assert!(
        (total.prediction_seconds() - 8e-3).abs() < 1e-9,
        "{total:?}"
    );
}

#[test]
fn a_kernel_faster_than_its_work_items_launch_cost_is_still_moved() {
    // 1 ms per run streaming 8 MB, at twice the sweep's 4 GB/s there (e = 2): at the
    // target's 2 GB/s the traffic takes 4 ms. Its 2·10⁷ work items at PoCL's 0.1 ns
    // would "cost" 2 ms on their own — more than the run took: the per-item cost overlaps
    // the traffic (as in ext_level), so it is never taken out before the move (taken out,
    // it left no work to move and the size kept its 1 ms).
    let s = one_ms_series(8_000_000, Some(20_000_000));
    let (at, [lo, hi]) = total_at_half_speed(&s);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(
        close(at, 4e-3) && close(lo, 4e-3) && close(hi, 4e-3),
        "{at} {lo} {hi}"
    );
}

#[test]
fn a_kernel_slows_only_where_its_traffic_outgrows_its_time() {
    // 1 ms of work (no launches) moving 1 MB at a level rate of 4 GB/s: its traffic takes
    // 0.25 ms (e = 0.25), 0.5 ms in a level half as fast (g = 2): still within 1 ms.
    let s = one_ms_series(1_000_000, None);
    // Fully overlapped it keeps its 1 ms; one after the other its traffic grows by
    // 0.25 ms. The phase is under the bandwidth roof (e < ½) and its cost per byte does
    // not rise: it saturates, and its compute hides the slower traffic, so the estimate
    // is the roofline's. It declares no flops, so nothing says its time is compute and
    // not traffic at a quarter of the sweep's rate: the interval reaches all of it moved
    // by g, 2 ms (docs/models.md §2.4, "The interval").
    let total_of = total_at_half_speed;
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    let (at, [lo, hi]) = total_of(&s);
    assert!(
        close(at, 1e-3) && close(lo, 1e-3) && close(hi, 2e-3),
        "{at} {lo} {hi}"
    );
    // Declaring flops that say its time is compute (below both roofs with no operation
    // rate to compare them to) keeps the interval at the one-after-the-other bound.
    let mut computing = s.clone();
    for p in &mut computing.points {
        p.phases[0].flops = Some(1_000 * p.size as u64);
    }
    let (_, [lo, hi]) = total_of(&computing);
    assert!(close(lo, 1e-3) && close(hi, 1.25e-3), "{lo} {hi}");
    // Moving 3 MB (e = 0.75): 1.5 ms of traffic at the target's level overlapped, 1 ms +
    // 0.75 ms one after the other, and 2 ms if all of its time is traffic short of the
    // sweep's rate.
    let mut heavy = s.clone();
    for p in &mut heavy.points {
        p.phases[0].bytes = Some(30_000 * p.size as u64);
    }
    let (at, [lo, hi]) = total_of(&heavy);
    assert!(close(at, 1.625e-3) && close(lo, 1.5e-3) && close(hi, 2e-3));
    // Moving 10 MB in 1 ms, faster than the sweep's 4 GB/s there (e = 2.5): at the
    // target's 2 GB/s the traffic takes 5 ms, not the 2 ms a capped share would give,
    // however compute and traffic combine.
    let mut fast = s.clone();
    for p in &mut fast.points {
        p.phases[0].bytes = Some(100_000 * p.size as u64);
    }
    let (at, [lo, hi]) = total_of(&fast);
    assert!(close(at, 5e-3) && close(lo, 5e-3) && close(hi, 5e-3));
}
