//! The `calibrated` forecast's tests: moves, intervals, compute-bound saturation, and what
//! declared flops change.

use super::*;
use crate::fit::drift::SharedRounds;
use crate::fit::forecast::test_support::*;
use crate::fit::forecast::{ColdMedian, TargetAmounts};

#[test]
fn the_interval_reaches_the_time_at_a_slower_rate_in_memory_and_the_estimate_stays() {
    const RATE: f64 = 1e12;
    // Every size streams at exactly the target level's rate (e = 1, g = 1).
    let streaming = |n: usize| {
        let mut p = point(n, false);
        let work = time(n as f64) - LAUNCHES as f64 * LAUNCH;
        p.phases[0].bytes = Some((work * RATE).round() as u64);
        p
    };
    let s = series([64, 128, 256, 512].map(streaming).to_vec());
    let moves = |factor: f64| {
        [64, 128, 256, 512].map(|size| LevelMove {
            size,
            rate: RATE,
            factor,
            ..Default::default()
        })
    };
    let target = 4096.0;
    let kernel = |f: &Forecast| {
        f.phases
            .iter()
            .find(|p| p.name == "kernel")
            .and_then(|p| p.calibrated.clone())
            .expect("a calibrated kernel estimate")
    };
    let plain = forecast_calibrated(&s, target, &moves(1.0), Seconds(LAUNCH)).expect("fits");
    let none =
        forecast_calibrated_bounded(&s, target, &moves(1.0), &[], Seconds(LAUNCH)).expect("fits");
    assert_eq!(kernel(&plain), kernel(&none));
    // Device memory 1.5× slower than the sweep said: the streaming work takes 1.5× as
    // long there; the interval reaches that, the estimate does not move.
    let bounded =
        forecast_calibrated_bounded(&s, target, &moves(1.0), &[&moves(1.5)], Seconds(LAUNCH))
            .expect("fits");
    let (p, b) = (kernel(&plain), kernel(&bounded));
    assert_eq!(p.prediction_seconds, b.prediction_seconds);
    let launches = LAUNCHES as f64 * LAUNCH;
    let slow = launches + 1.5 * (time(target) - launches);
    assert!(p.interval_seconds[1] < slow, "{:?}", p.interval_seconds);
    assert!(
        b.interval_seconds[1] >= slow * (1.0 - 1e-6),
        "{:?} should reach {slow}",
        b.interval_seconds
    );
    assert_eq!(b.interval_seconds[0], p.interval_seconds[0]);
    // A target level 2× slower than the window's, and as the calibration's fastest
    // samples ran, 1.25× faster than its median (g = 1.6): the lower end reaches the time
    // at that rate, the estimate and the upper end stay.
    let two = kernel(&forecast_calibrated(&s, target, &moves(2.0), Seconds(LAUNCH)).expect("fits"));
    let f = kernel(
        &forecast_calibrated_bounded(&s, target, &moves(2.0), &[&moves(1.6)], Seconds(LAUNCH))
            .expect("fits"),
    );
    let fast = launches + 1.6 * (time(target) - launches);
    assert_eq!(f.prediction_seconds, two.prediction_seconds);
    assert!(two.interval_seconds[0] > fast, "{:?}", two.interval_seconds);
    assert!(
        f.interval_seconds[0] <= fast * (1.0 + 1e-6),
        "{:?} should reach {fast}",
        f.interval_seconds
    );
    assert_eq!(f.interval_seconds[1], two.interval_seconds[1]);
}

#[test]
fn the_interval_reaches_one_after_the_other_at_the_slower_rate() {
    // A phase whose traffic is 2 % of its time at the window's rate (80 kB per ms at
    // 4 GB/s), the target's level 2× slower than the window's, and device memory with no
    // cache's help 8× slower: the interval reaches the slower rate with the traffic taken
    // one after the other (+0.14 ms per ms), not only halfway (+0.07 ms). It declares flops,
    // which say its time is compute: the all-traffic bound of a phase whose bytes alone
    // cannot say so does not apply.
    let mut s = one_ms_series(80_000, None);
    for p in &mut s.points {
        p.phases[0].flops = Some(1_000 * p.size as u64);
    }
    let moves = |factor: f64| {
        [100, 200, 400].map(|size| LevelMove {
            size,
            rate: 4e9,
            factor,
            ..Default::default()
        })
    };
    let upper = |f: &Forecast| {
        f.phases
            .iter()
            .find(|p| p.name == "k")
            .and_then(|p| p.calibrated.as_ref())
            .expect("a calibrated estimate")
            .interval_seconds[1]
    };
    let target = 800.0;
    let fit = |others: &[&[LevelMove]]| {
        forecast_calibrated_bounded(&s, target, &moves(2.0), others, Seconds(0.0)).expect("fits")
    };
    // At N = 800, 8 ms of work: one after the other at the floor 8 ms · 1.14, halfway
    // 8 ms · 1.07 (what the interval reached until 2026-11-26).
    let serial_at_floor = upper(
        &forecast_calibrated_bounded(&s, target, &moves(8.0), &[], Seconds(0.0)).expect("fits"),
    );
    assert!(
        (serial_at_floor - 8e-3 * 1.14).abs() < 1e-9,
        "{serial_at_floor}"
    );
    let bounded = upper(&fit(&[&moves(8.0)]));
    assert!(
        bounded >= serial_at_floor * (1.0 - 1e-9),
        "{bounded} should reach {serial_at_floor}"
    );
    assert!(bounded > upper(&fit(&[])));
}

#[test]
fn a_phase_without_bytes_keeps_its_estimate_and_its_interval_reaches_all_traffic() {
    // The same sweeps, their window in a level that streams twice as fast as the
    // target's (g = 2): nothing says how much of their work is traffic, so the estimate
    // does not move, and the interval reaches the time if all of it were (×2).
    let s = lu_sweeps();
    let sizes = LU_SIZES;
    let work = lu_work;
    let at = |factor: f64| {
        let moves = lu_moves(&sizes, factor);
        let f = forecast_calibrated(&s, 260.0, &moves, Seconds(0.0)).expect("fits");
        let c = f.phases[0].calibrated.clone().expect("calibrated");
        (c.prediction_seconds, c.interval_seconds)
    };
    let truth = work(260.0);
    let (same, [_, hi_same]) = at(1.0);
    let (moved, [lo, hi]) = at(2.0);
    assert!((same / truth - 1.0).abs() < 1e-6 && (moved / truth - 1.0).abs() < 1e-6);
    assert!(hi_same < 1.01 * truth, "{hi_same}");
    assert!(
        lo <= truth && (hi / (2.0 * truth) - 1.0).abs() < 1e-3,
        "[{lo}, {hi}]"
    );
}

#[test]
fn a_target_inside_the_rounds_widens_by_the_medians_share_of_the_drift() {
    let work = |n: f64| 1e-9 * 8.0 * n * n + 20e-6;
    let sizes = [100, 141, 200, 283, 400];
    let bytes = |n: f64| 8.0 * n * n;
    let upper = |f: &Forecast| {
        let total = f.phases.iter().find(|p| p.name == "total").expect("total");
        (total.prediction_seconds(), total.interval_seconds()[1])
    };
    let (exact, hi0) = upper(&one_phase(&sizes, work, bytes));
    let (apart, far) = upper(&one_phase_noisy(
        &sizes,
        work,
        bytes,
        0.0,
        Some((0.10, None)),
    ));
    let shared = SharedRounds {
        window: 8,
        target: 8,
    };
    let (inside, near) = upper(&one_phase_noisy(
        &sizes,
        work,
        bytes,
        0.0,
        Some((0.10, Some(shared))),
    ));
    assert_eq!(exact, apart, "the estimate does not move");
    assert_eq!(exact, inside, "the estimate does not move");
    // Apart in time: 1.96 · 10 %. Inside eight shared rounds: 1.96 · 1.25 · 10 % · √(2/8)
    // = 1.96 · 6.25 %, each in quadrature with the line's own (near zero) half-width.
    let side = |d: f64| ((1.96 * d * exact).powi(2) + (hi0 - exact).powi(2)).sqrt();
    assert!(((far - exact) - side(0.10)).abs() < 1e-12 * exact);
    assert!(((near - exact) - side(0.0625)).abs() < 1e-12 * exact);
}

#[test]
fn a_compute_bound_phase_that_saturates_hides_the_slower_levels_traffic() {
    // The compute-bound hump (28 % of one thread's 25 GB/s at the top) out of the
    // target's level, which streams 1.6× slower: the traffic at the target's rate still
    // fits well inside the compute (e·g ≈ 0.5 ≤ ¾), so each size costs what it measured (the
    // roofline) and the estimate is the window's median cost, 1.01 ns per cell a launch.
    // Halfway to one after the other it would have been ~10 % more: host sor-rb in Intel
    // suite runs 48–65, −0.4 … +21 % (median +11.5 %) so, median +0.6 % now.
    let fixed = |_: usize| 10;
    let cells = 11676.0f64.powi(2) * 10.0;
    let c = hump_at(25e9, fixed, false, 1.6, false);
    assert_eq!(c.method, CalibratedMethod::Saturated, "{c:?}");
    assert!(
        (c.prediction_seconds / (1.01e-9 * cells) - 1.0).abs() < 1e-9,
        "{c:?}"
    );
    // The interval still reaches one after the other: every size's cost plus its
    // traffic's slowdown, w·e·(g − 1), e = 8 / (1.01 · 25) at the median size.
    let serial = 1.01e-9 * (1.0 + 8.0 / (1.01 * 25.0) * 0.6);
    assert!(c.interval_seconds[1] > serial * cells, "{c:?}");
    // A phase that streams (58 % of 12 GB/s) keeps the halfway point estimate.
    let streaming = hump_at(12e9, fixed, false, 1.6, false);
    assert_ne!(
        streaming.method,
        CalibratedMethod::Saturated,
        "{streaming:?}"
    );
    // Near the ridge (g = 2.8: e·g ≈ 0.89 > ¾ at the median size) the compute no longer
    // hides the traffic: halfway again, above the window's median cost.
    let ridge = hump_at(25e9, fixed, false, 2.8, false);
    assert_eq!(ridge.method, CalibratedMethod::Saturated, "{ridge:?}");
    assert!(
        ridge.prediction_seconds > 1.1 * 1.01e-9 * cells,
        "{ridge:?}"
    );
}

/// One kernel phase at N = 100, 200, 400 taking 1 ms per 100 of N, moving 1 MB and
/// running `flops` per 100 of N, rated at 10 GB/s and 10 Gflop/s at every size (e = 0.1),
/// the target's level answering 3× slower than the window's: its `calibrated` estimate.
fn with_flops(flops: Option<u64>) -> CalibratedEstimate {
    with_flops_declared(flops, None)
}

/// [`with_flops`], the workload declaring `at_target` (bytes, flops) at N = 800.
fn with_flops_declared(
    flops: Option<u64>,
    at_target: Option<(Option<u64>, Option<u64>)>,
) -> CalibratedEstimate {
    let mut s = one_ms_series(1_000_000, None);
    for p in &mut s.points {
        p.phases[0].flops = flops.map(|f| f * p.size as u64 / 100);
    }
    s.target_amounts = at_target
        .map(|(bytes, flops)| TargetAmounts {
            name: "k".into(),
            bytes,
            flops,
        })
        .into_iter()
        .collect();
    let moves: Vec<LevelMove> = [100, 200, 400]
        .map(|size| LevelMove {
            size,
            rate: 1e10,
            factor: 1.0,
            latency_factor: Some(3.0),
            flop_rate: Some(1e10),
            ..LevelMove::default()
        })
        .into();
    let f = forecast_calibrated(&s, 800.0, &moves, Seconds(0.0)).expect("fits");
    estimate_of(&f, "k")
}

#[test]
fn declared_flops_tell_compute_bound_from_below_both_roofs() {
    // 8 Mflop in 1 ms at 10 Gflop/s: 80 % of the operation rate.
    let compute = with_flops(Some(8_000_000));
    assert_eq!(compute.regime, Some(Regime::ComputeBound), "{compute:?}");
    assert!((compute.share_of_flops.unwrap() - 0.8).abs() < 1e-9);
    assert!((compute.share_of_rate.unwrap() - 0.1).abs() < 1e-9);
    // 1 Mflop: 10 % of each roof. Below both: the interval reaches the target level's
    // latency over the window's, 3×; the estimate stays.
    let below = with_flops(Some(1_000_000));
    assert_eq!(below.regime, Some(Regime::BelowRoofs), "{below:?}");
    assert!(below.interval_seconds[1] >= 3.0 * below.prediction_seconds * (1.0 - 1e-12));
    // No flops: under the bandwidth roof, nothing more said; the interval is the
    // estimator's own.
    let bytes_only = with_flops(None);
    assert_eq!(bytes_only.regime, Some(Regime::UnderBandwidth));
    assert_eq!(bytes_only.share_of_flops, None);
    assert!(bytes_only.interval_seconds[1] < 3.0 * bytes_only.prediction_seconds);
    // Work in proportion to bytes and flops alike: the same estimate in either unit.
    for other in [&below, &compute] {
        let ratio = other.prediction_seconds / bytes_only.prediction_seconds;
        assert!((ratio - 1.0).abs() < 1e-9, "{other:?}");
    }
    assert!(below.seconds_per_flop.is_some() && bytes_only.seconds_per_byte.is_some());
}

#[test]
fn the_flops_the_workload_declares_at_the_target_replace_the_windows_extrapolation() {
    // Compute-bound, 8 Mflop per 100 of N in the window: 64 Mflop at N = 800 on the
    // window's line. A spec whose flops are no polynomial of N (a count of regions ⌈N/8⌉,
    // a clipped cover) may declare another amount there: half of it, 32 Mflop.
    let line = with_flops_declared(Some(8_000_000), None);
    let declared = with_flops_declared(Some(8_000_000), Some((None, Some(32_000_000))));
    let near = |x: Option<f64>, want: f64| x.is_some_and(|x| (x / want - 1.0).abs() < 1e-9);
    assert!(near(line.flops_at_target, 64e6), "{line:?}");
    assert_eq!(declared.flops_at_target, Some(32e6));
    assert_eq!(declared.regime, Some(Regime::ComputeBound));
    let ratio = declared.prediction_seconds / line.prediction_seconds;
    assert!((ratio - 0.5).abs() < 1e-9, "{declared:?} against {line:?}");
    // Declared bytes do not stand in for flops: a phase counted in flops keeps the line.
    let bytes_only = with_flops_declared(Some(8_000_000), Some((Some(1), None)));
    assert!(near(bytes_only.flops_at_target, 64e6), "{bytes_only:?}");
    assert_eq!(bytes_only.prediction_seconds, line.prediction_seconds);
}

#[test]
fn a_phase_below_both_roofs_is_counted_in_its_flops() {
    // A matrix product's shape: 1e-12·N³ s, 8·N² bytes, 2·N³ flops at N = 100, 200, 400,
    // rated at 1 TB/s and 10 Tflop/s (2 % and 20 % at the top): below both roofs.
    let at = |declare_flops: bool| {
        let s = series(
            [100usize, 200, 400]
                .map(|size| {
                    let n = size as f64;
                    let t = 1e-12 * n.powi(3);
                    SizeMedians {
                        size,
                        phases: vec![PhaseMedian {
                            name: "mm".into(),
                            median_seconds: t,
                            count: 1,
                            bytes: Some(8 * (size * size) as u64),
                            items: Some((size * size) as u64),
                            flops: declare_flops.then_some(2 * (size as u64).pow(3)),
                            ci95_seconds: None,
                        }],
                        total_seconds: t,
                    }
                })
                .to_vec(),
        );
        let moves: Vec<LevelMove> = [100, 200, 400]
            .map(|size| LevelMove {
                size,
                rate: 1e12,
                factor: 1.0,
                flop_rate: Some(1e13),
                ..LevelMove::default()
            })
            .into();
        let f = forecast_calibrated(&s, 800.0, &moves, Seconds(0.0)).expect("fits");
        estimate_of(&f, "mm")
    };
    let truth = 1e-12 * 800f64.powi(3);
    let flops = at(true);
    assert_eq!(flops.regime, Some(Regime::BelowRoofs));
    assert!(
        (flops.prediction_seconds / truth - 1.0).abs() < 1e-6,
        "{flops:?}"
    );
    assert!(flops
        .flops_at_target
        .is_some_and(|f| (f / (2.0 * 800f64.powi(3)) - 1.0).abs() < 1e-9));
    // Counted in bytes (N² for N³ of work), the same phase saturates far below.
    let bytes = at(false);
    assert_eq!(bytes.regime, Some(Regime::UnderBandwidth));
    assert!(bytes.prediction_seconds < 0.5 * truth, "{bytes:?}");
}

/// [`with_flops`]'s compute-bound phase (80 % of the operation rate), the target in device
/// memory and each size's cold runs taking `cold` times its warm time: its estimate.
fn compute_bound_with_cold(cold: [f64; 3]) -> CalibratedEstimate {
    let mut s = one_ms_series(1_000_000, None);
    for p in &mut s.points {
        p.phases[0].flops = Some(8_000_000 * p.size as u64 / 100);
    }
    s.cold = s
        .points
        .iter()
        .zip(cold)
        .map(|(p, k)| ColdMedian {
            size: p.size,
            phase: "k".into(),
            seconds: k * p.phases[0].median_seconds,
        })
        .collect();
    let moves: Vec<LevelMove> = [100, 200, 400]
        .map(|size| LevelMove {
            size,
            rate: 1e10,
            factor: 3.0,
            target_in_memory: true,
            flop_rate: Some(1e10),
            ..LevelMove::default()
        })
        .into();
    estimate_of(
        &forecast_calibrated(&s, 800.0, &moves, Seconds(0.0)).expect("fits"),
        "k",
    )
}

#[test]
fn a_phase_that_waits_on_memory_at_the_target_is_not_compute_bound() {
    // Its cold runs cost 1.2, 1.5 and 1.8 times its warm time: at the target's level its
    // compute still takes most of its time, so the rise across the window is estimated as
    // saturating, at the moved costs' median (1.5 ms per 100 of N: 12 ms at N = 800).
    let hides = compute_bound_with_cold([1.2, 1.5, 1.8]);
    assert_eq!(hides.method, CalibratedMethod::Saturated, "{hides:?}");
    assert!(
        (hides.prediction_seconds / 12e-3 - 1.0).abs() < 1e-9,
        "{hides:?}"
    );
    // 1.5, 2 and 2.5 times: at the window's top the wait on memory is half of its time at
    // the target's level, so it is not compute-bound there and the rise is that wait still
    // growing: the estimate reaches past the moved costs' median (2 ms per 100 of N).
    let waits = compute_bound_with_cold([1.5, 2.0, 2.5]);
    assert!(
        waits.prediction_seconds > 1.1 * 16e-3,
        "{waits:?} against the median's 16 ms"
    );
    // The regime shown is still what its own level measured.
    assert_eq!(waits.regime, Some(Regime::ComputeBound));
}
