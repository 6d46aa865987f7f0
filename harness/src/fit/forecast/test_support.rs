//! Test helpers that the forecast's modules share: small synthetic series (a kernel with a
//! launch overhead, a 1 ms phase, one phase of given work and bytes, lu-ssor's sweeps,
//! sor-rb's colour with a hump at the top of its window) and the level moves they are
//! forecast with.

use super::{
    forecast_calibrated, CalibratedEstimate, Forecast, LevelMove, PhaseMedian, SeriesMedians,
    SizeMedians,
};
use crate::fit::drift::SharedRounds;
use crate::units::Seconds;

pub(super) const LAUNCH: f64 = 1e-5;
pub(super) const LAUNCHES: u64 = 100;

/// 100 launches of overhead L plus 1e-9·N² of work.
pub(super) fn time(n: f64) -> f64 {
    LAUNCHES as f64 * LAUNCH + 1e-9 * n * n
}

pub(super) fn point(size: usize, with_upload: bool) -> SizeMedians {
    let t = time(size as f64);
    let mut phases = vec![PhaseMedian {
        flops: None,
        name: "kernel".into(),
        median_seconds: t,
        count: LAUNCHES,
        bytes: None,
        items: None,
        ci95_seconds: None,
    }];
    if with_upload {
        phases.push(PhaseMedian {
            flops: None,
            name: "upload".into(),
            median_seconds: 1e-6,
            count: 1,
            bytes: None,
            items: None,
            ci95_seconds: None,
        });
    }
    SizeMedians {
        size,
        phases,
        total_seconds: t,
    }
}

pub(super) fn series(points: Vec<SizeMedians>) -> SeriesMedians {
    SeriesMedians {
        workload: "synthetic".into(),
        points,
        drift: None,
        drift_shared: None,
        cold: Vec::new(),
        target_amounts: Vec::new(),
    }
}

/// One kernel phase `k` at N = 100, 200 and 400 (one launch, no launch cost) taking 1 ms
/// per run, moving `bytes` and running `items` work items per 100 of N: the same share of
/// its time in traffic at each size (work that did not grow with N would be per-launch
/// work, [`CalibratedMethod::PerLaunch`]).
pub(super) fn one_ms_series(bytes: u64, items: Option<u64>) -> SeriesMedians {
    series(
        [100, 200, 400]
            .map(|size| {
                let per = size as u64 / 100;
                SizeMedians {
                    size,
                    phases: vec![PhaseMedian {
                        flops: None,
                        name: "k".into(),
                        median_seconds: 1e-3 * per as f64,
                        count: 1,
                        bytes: Some(bytes * per),
                        items: items.map(|i| i * per),
                        ci95_seconds: None,
                    }],
                    total_seconds: 1e-3 * per as f64,
                }
            })
            .to_vec(),
    )
}

/// One kernel phase `k` with no launch overhead: `work(n)` seconds moving `bytes(n)`, in
/// the target's own level (g = 1, so nothing moves).
pub(super) fn one_phase(
    sizes: &[usize],
    work: impl Fn(f64) -> f64,
    bytes: impl Fn(f64) -> f64,
) -> Forecast {
    one_phase_noisy(sizes, work, bytes, 0.0, None)
}

/// [`one_phase`] with each median's 95 % interval ±`noise` (relative) and the series'
/// round-to-round `drift` (with the rounds the target shared, if it did).
pub(super) fn one_phase_noisy(
    sizes: &[usize],
    work: impl Fn(f64) -> f64,
    bytes: impl Fn(f64) -> f64,
    noise: f64,
    drift: Option<(f64, Option<SharedRounds>)>,
) -> Forecast {
    one_phase_at(sizes, work, bytes, noise, drift, None, false)
}

/// [`one_phase_noisy`] with the level streaming at `rate` (bytes per second) at every
/// size and no move between levels; [`unmoved`]'s rate where `None`. A `strided` phase
/// walks lines at that rate.
pub(super) fn one_phase_at(
    sizes: &[usize],
    work: impl Fn(f64) -> f64,
    bytes: impl Fn(f64) -> f64,
    noise: f64,
    drift: Option<(f64, Option<SharedRounds>)>,
    rate: Option<f64>,
    strided: bool,
) -> Forecast {
    let mut s = series(
        sizes
            .iter()
            .map(|&n| SizeMedians {
                size: n,
                phases: vec![PhaseMedian {
                    flops: None,
                    name: "k".into(),
                    median_seconds: work(n as f64),
                    count: 1,
                    bytes: Some(bytes(n as f64).round() as u64),
                    items: None,
                    ci95_seconds: (noise > 0.0).then(|| {
                        let w = work(n as f64);
                        [w * (1.0 - noise), w * (1.0 + noise)]
                    }),
                }],
                total_seconds: work(n as f64),
            })
            .collect(),
    );
    s.drift = drift.map(|(d, _)| d);
    s.drift_shared = drift.and_then(|(_, shared)| shared);
    let moves: Vec<LevelMove> = unmoved(sizes)
        .into_iter()
        .map(|m| LevelMove {
            rate: rate.unwrap_or(m.rate),
            line_moves: if strided {
                vec![("k".into(), rate.unwrap_or(m.rate), 1.0)]
            } else {
                Vec::new()
            },
            ..m
        })
        .collect();
    forecast_calibrated(&s, 3200.0, &moves, Seconds(0.0)).expect("fits")
}

/// Level moves that leave every size as measured (a rate so high no traffic slows).
pub(super) fn unmoved(sizes: &[usize]) -> Vec<LevelMove> {
    sizes
        .iter()
        .map(|&size| LevelMove {
            size,
            rate: 1e12,
            factor: 1.0,
            ..Default::default()
        })
        .collect()
}

/// lu-ssor-like sweeps at N = 34 … 65 that declare no bytes but count their points,
/// (N − 2)³·15 per run, at 1.4 ns per point plus 30 µs per run.
pub(super) const LU_SIZES: [usize; 5] = [34, 38, 46, 54, 65];

pub(super) fn lu_items(n: f64) -> f64 {
    (n - 2.0).powi(3) * 15.0
}

pub(super) fn lu_work(n: f64) -> f64 {
    1.4e-9 * lu_items(n) + 30e-6
}

pub(super) fn lu_sweeps() -> SeriesMedians {
    series(
        LU_SIZES
            .iter()
            .map(|&n| SizeMedians {
                size: n,
                phases: vec![PhaseMedian {
                    flops: None,
                    name: "ssor lower".into(),
                    median_seconds: lu_work(n as f64),
                    count: 15 * (3 * n as u64 - 8),
                    bytes: None,
                    items: Some(lu_items(n as f64) as u64),
                    ci95_seconds: None,
                }],
                total_seconds: lu_work(n as f64),
            })
            .collect(),
    )
}

/// Every size moved by the same g, at 4 GB/s, no other rates.
pub(super) fn lu_moves(sizes: &[usize], factor: f64) -> Vec<LevelMove> {
    sizes
        .iter()
        .map(|&size| LevelMove {
            size,
            rate: 4e9,
            factor,
            ..Default::default()
        })
        .collect()
}

/// Host sor-rb on the Intel VM (suite run 62, one colour): 10 launches a run, 8 bytes per
/// cell a launch, one thread, 1.00–1.02 ns per cell a launch at N = 1459…2454 and 1.14 at
/// 2919, the top of the window: the rise is ten times the medians' noise (±0.5 %).
/// `own_rate` is one thread's streaming rate at every size, `launches` the launches a run
/// at size N, `strided` whether the phase walks lines.
pub(super) fn hump(own_rate: f64, launches: fn(usize) -> u64, strided: bool) -> CalibratedEstimate {
    hump_at(own_rate, launches, strided, 1.0, false)
}

/// [`hump`] with every size moved by `factor` and `in_level` whether each lies in the
/// target's memory level.
pub(super) fn hump_at(
    own_rate: f64,
    launches: fn(usize) -> u64,
    strided: bool,
    factor: f64,
    in_level: bool,
) -> CalibratedEstimate {
    hump_swept(own_rate, launches, strided, factor, in_level, false)
}

/// [`hump_at`], the strided phase's rate a sweep of its own pattern where `patterned`.
pub(super) fn hump_swept(
    own_rate: f64,
    launches: fn(usize) -> u64,
    strided: bool,
    factor: f64,
    in_level: bool,
    patterned: bool,
) -> CalibratedEstimate {
    let sizes = [1459usize, 1735, 2068, 2454, 2919];
    let cost = [1.01e-9, 1.00e-9, 1.00e-9, 1.02e-9, 1.14e-9];
    let s = series(
        sizes
            .iter()
            .zip(cost)
            .map(|(&n, c)| {
                let cells = (n * n) as f64 * 10.0;
                let t = c * cells;
                SizeMedians {
                    size: n,
                    phases: vec![PhaseMedian {
                        flops: None,
                        name: "sor_rb red".into(),
                        median_seconds: t,
                        count: launches(n),
                        bytes: Some(8 * 10 * (n * n) as u64),
                        items: None,
                        ci95_seconds: Some([0.995 * t, 1.005 * t]),
                    }],
                    total_seconds: t,
                }
            })
            .collect(),
    );
    let rate = ("sor_rb red".to_string(), own_rate, factor);
    let moves: Vec<LevelMove> = sizes
        .iter()
        .map(|&size| LevelMove {
            size,
            rate: 4.0 * own_rate,
            factor,
            own_rates: if strided { vec![] } else { vec![rate.clone()] },
            line_moves: if strided { vec![rate.clone()] } else { vec![] },
            own_patterns: if patterned {
                vec![rate.0.clone()]
            } else {
                vec![]
            },
            in_target_level: in_level,
            ..Default::default()
        })
        .collect();
    let f = forecast_calibrated(&s, 11676.0, &moves, Seconds(0.0)).expect("fits");
    let p = f
        .phases
        .iter()
        .find(|p| p.name == "sor_rb red")
        .expect("phase");
    p.calibrated.clone().expect("calibrated")
}

/// A move for each of `sizes` that moves nothing by rates (no sweep), with `latency`
/// (λ(W_target)/λ(W_i)) for the phase `sweep` and `transfer_costs` for `upload`.
pub(super) fn latency_moves(
    sizes: &[usize],
    latency: f64,
    costs: Vec<(String, f64, bool)>,
) -> Vec<LevelMove> {
    sizes
        .iter()
        .map(|&size| LevelMove {
            size,
            rate: 0.0,
            factor: 1.0,
            transfer_costs: costs.clone(),
            latency_moves: vec![("sweep".into(), latency)],
            ..Default::default()
        })
        .collect()
}

/// The calibrated estimate of the phase `name`.
pub(super) fn estimate_of(f: &Forecast, name: &str) -> CalibratedEstimate {
    f.phases
        .iter()
        .find(|p| p.name == name)
        .and_then(|p| p.calibrated.clone())
        .expect("an estimate")
}
