//! How far a kernel phase's rising cost per unit may be carried on from the window to the
//! target, and when a rise is taken as saturation instead (docs/models.md §2.4, "Bracket"
//! and "Saturated"): the cap g_top from the calibrated rates ([`top_move_factor`],
//! [`growth_capped`]), and the phases whose rise the calibration says is not a slower level
//! still to come ([`moved_by_own_pattern`], [`rate_flat_to_target`]).

use super::calibrated::{PhaseKinds, COMPUTE_BOUND_SHARE};
use super::per_unit::Unit;
use super::{LevelMove, SeriesMedians};

/// g at the window's largest size for the phase `name`: how much more slowly the target's
/// level streams than that size's, at the rate the phase moves by (its line rate where it is
/// strided, one thread's where it ran on one, else the device's); at least 1. `None` without
/// a move for that size or a measured rate.
pub(super) fn top_move_factor(
    window: &SeriesMedians,
    moves: &[LevelMove],
    name: &str,
) -> Option<f64> {
    let largest = window.points.iter().map(|p| p.size).max()?;
    let m = moves.iter().find(|m| m.size == largest)?;
    let (rate, factor) = m.rate_of(name);
    (rate > 0.0 && factor.is_finite()).then_some(factor.max(1.0))
}

/// Whether the growth of the phase `name`'s cost from the window's largest size to the
/// target is capped at g_top ([`top_move_factor`]), as if all of its cost were traffic
/// slowing by the calibrated ratio of the two levels' rates (docs/models.md §2.4,
/// "Bracket"): a phase counted in work items (step 1 did not move it), a phase that moved
/// its bytes at half its level's rate or more at the window's top (its time is its
/// traffic's: [`COMPUTE_BOUND_SHARE`]), and one that moves by a sweep of its own access
/// pattern ([`LevelMove::own_patterns`]). A compute-bound phase's cost can rise by more (its
/// compute per byte grows, as PoCL's SOR diagonals' with the launches' work did).
pub(super) fn growth_capped(
    phases: &PhaseKinds,
    moves: &[LevelMove],
    name: &str,
    unit: Unit,
) -> bool {
    unit == Unit::Item
        || phases
            .share(name)
            .is_some_and(|share| share >= COMPUTE_BOUND_SHARE)
        || moves
            .iter()
            .any(|m| m.own_patterns.iter().any(|p| p == name))
}

/// Whether every size of the window moved the phase `name` by a sweep of its own access
/// pattern ([`LevelMove::own_patterns`]).
pub(super) fn moved_by_own_pattern(moves: &[LevelMove], name: &str) -> bool {
    !moves.is_empty()
        && moves
            .iter()
            .all(|m| m.own_patterns.iter().any(|p| p == name))
}

/// The largest move factor g_i (the rate at a size's working set over the rate at the
/// target's) at which the calibration counts a size's rate the target's own.
const FLAT_FACTOR: f64 = 1.1;

/// Whether every size of the window lies in the target's memory level and the calibration
/// rates the phase `name` there within 10 % of the target ([`FLAT_FACTOR`]): g_i ≤ 1.1 at
/// every size, by the rate the phase moves at (its line, transposing or one thread's rate,
/// or the streaming rate). A rise in such a phase's cost per byte across the window is then
/// nothing the calibration knows to carry on to the target (no level lies between them), and
/// it is estimated as saturating at the window's median cost, as a compute-bound phase's is
/// (docs/models.md §2.4, "Saturated"). Suite run 66 (a VM new to the suite): the host's vadd
/// ran at 34.4 → 32.4 GB/s over 200–340 MB and 26.2 at 400 MB, the window's top, then 30.7 at
/// the target's 1.6 GB; carried on, the rise put vadd at +36 %.
pub(super) fn rate_flat_to_target(moves: &[LevelMove], name: &str) -> bool {
    !moves.is_empty()
        && moves
            .iter()
            .all(|m| m.in_target_level && m.rate_of(name).1 <= FLAT_FACTOR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::forecast::test_support::*;
    use crate::fit::forecast::{forecast_calibrated, CalibratedMethod, PhaseMedian, SizeMedians};
    use crate::units::Seconds;

    /// lu-ssor's lower sweep over [`LU_SIZES`], one launch a run, `cost[i]` seconds per
    /// point, no bytes declared.
    fn lu_lower_at(cost: &[f64]) -> SeriesMedians {
        series(
            LU_SIZES
                .iter()
                .zip(cost)
                .map(|(&n, c)| {
                    let t = c * lu_items(n as f64);
                    SizeMedians {
                        size: n,
                        phases: vec![PhaseMedian {
                            flops: None,
                            name: "ssor lower".into(),
                            median_seconds: t,
                            count: 1,
                            bytes: None,
                            items: Some(lu_items(n as f64) as u64),
                            ci95_seconds: None,
                        }],
                        total_seconds: t,
                    }
                })
                .collect(),
        )
    }

    #[test]
    fn a_rise_in_cost_per_item_grows_no_faster_than_all_traffic_would() {
        // The sweeps' cost per item jumps at the window's top size, from 1.4 to 2.4 ns, as
        // lu-ssor's did on the Intel VM of run 48 (its top size past the L2): the cost per
        // item rises across the window, and grown along its top three sizes it would reach
        // far past what the target's level can charge. The target's level streams 1.5×
        // slower than the top size's (g = 1.5): even all of its work as traffic would cost
        // 1.5 × 2.4 ns an item there, so the growth is capped at that.
        let cost = |n: usize| if n == 65 { 2.4e-9 } else { 1.4e-9 };
        let s = lu_lower_at(&LU_SIZES.map(cost));
        let estimate = |factor: f64| {
            forecast_calibrated(&s, 260.0, &lu_moves(&LU_SIZES, factor), Seconds(0.0))
                .expect("fits")
                .phases[0]
                .calibrated
                .clone()
                .expect("calibrated")
        };
        let items = lu_items(260.0);
        let uncapped = estimate(1e9);
        let capped = estimate(1.5);
        assert_eq!(capped.method, CalibratedMethod::Bracket);
        let [saturated, growth] = capped.bracket_seconds.expect("a bracket");
        // Saturation: the largest size's cost per item moved halfway along the cap, between
        // no move (all compute) and g = 1.5 (all traffic).
        assert!(
            (saturated / (1.25 * 2.4e-9 * items) - 1.0).abs() < 1e-9,
            "{saturated}"
        );
        assert!(
            (growth / (1.5 * 2.4e-9 * items) - 1.0).abs() < 1e-9,
            "{growth}"
        );
        assert!((capped.prediction_seconds / (saturated * growth).sqrt() - 1.0).abs() < 1e-9);
        let [_, free] = uncapped.bracket_seconds.expect("a bracket");
        assert!(free > 2.0 * growth, "{free} against {growth}");
    }

    #[test]
    fn a_phase_in_items_that_its_own_patterns_sweep_moves_moves_whole_and_saturates() {
        // lu-ssor's lower sweep on one thread, 1.0 → 1.4 ns per point across the window
        // (its cube from L2 into L3), and a hyperplane sweep that rates each size's cube
        // g_i times as fast as the target's: every size moves whole, to 2.9 … 3.1 ns per point
        // (the sweep is the kernel's own walk, so all of its time moves), and the estimate is
        // their median, 3.0 ns, at the target's points.
        let window = [1.0e-9, 1.1e-9, 1.2e-9, 1.3e-9, 1.4e-9];
        let moved = [2.9e-9, 2.95e-9, 3.0e-9, 3.05e-9, 3.1e-9];
        let s = lu_lower_at(&window);
        let moves = |own: bool| -> Vec<LevelMove> {
            LU_SIZES
                .iter()
                .zip(window.iter().zip(moved))
                .map(|(&size, (c, m))| LevelMove {
                    size,
                    rate: 4e9,
                    factor: 1.5,
                    own_rates: vec![("ssor lower".into(), 2e9, m / c)],
                    own_patterns: if own {
                        vec!["ssor lower".into()]
                    } else {
                        Vec::new()
                    },
                    ..Default::default()
                })
                .collect()
        };
        let items = lu_items(260.0);
        let estimate = |own: bool| {
            forecast_calibrated(&s, 260.0, &moves(own), Seconds(0.0))
                .expect("fits")
                .phases[0]
                .calibrated
                .clone()
                .expect("calibrated")
        };
        let c = estimate(true);
        assert_eq!(c.method, CalibratedMethod::Saturated);
        assert!(
            (c.prediction_seconds / (3.0e-9 * items) - 1.0).abs() < 1e-9,
            "{c:?}"
        );
        let [saturated, growth] = c.bracket_seconds.expect("a bracket");
        assert!((saturated / (3.0e-9 * items) - 1.0).abs() < 1e-9);
        // Nothing lies between the moved sizes and the target: growth is capped at the
        // largest size's moved cost (g = 1).
        assert!((growth / (3.1e-9 * items) - 1.0).abs() < 1e-9, "{growth}");
        assert!(c.interval_seconds[0] <= saturated && growth <= c.interval_seconds[1]);
        // The same rates as one thread's streaming rates, no sweep of its own: the phase is
        // not moved (nothing says how much of it is traffic), and its bracket is capped by
        // the top size's g (2.2), below what the walk's own sweep measured.
        let plain = estimate(false);
        assert_eq!(plain.method, CalibratedMethod::Bracket);
        assert!(
            plain.prediction_seconds < 0.9 * c.prediction_seconds,
            "{plain:?}"
        );
    }

    #[test]
    fn a_compute_bound_phases_rise_at_the_top_of_the_window_is_saturation() {
        // At 25 GB/s (one thread in the L3) the top size moved its bytes at 8 / 1.14 ns =
        // 7.0 GB/s, 28 % of the rate: compute-bound, so the rise is not the level's and the
        // estimate is saturation at the window's median cost per byte (1.01 ns per cell a
        // launch), the interval reaching the growth (the target ran at 1.04).
        let fixed = |_: usize| 10;
        let c = hump(25e9, fixed, false);
        assert_eq!(c.method, CalibratedMethod::Saturated, "{c:?}");
        let share = c.share_of_rate.expect("e_top");
        assert!((share - 8.0 / (1.14 * 25.0)).abs() < 1e-9, "{share}");
        let [saturated, growth] = c.bracket_seconds.expect("bracket");
        let cells = 11676.0f64.powi(2) * 10.0;
        assert!((saturated / (1.01e-9 * cells) - 1.0).abs() < 1e-9, "{c:?}");
        assert!((c.prediction_seconds / saturated - 1.0).abs() < 1e-12);
        assert!(growth > 1.3 * saturated && c.interval_seconds[1] >= growth);
        // At 12 GB/s the same time is 58 % of the level's rate: bandwidth-bound, and the rise
        // may be the level's; the estimate is the bracket's.
        let streaming = hump(12e9, fixed, false);
        assert_eq!(streaming.method, CalibratedMethod::Bracket, "{streaming:?}");
        let [s, g] = streaming.bracket_seconds.expect("bracket");
        assert!((streaming.prediction_seconds / (s * g).sqrt() - 1.0).abs() < 1e-12);
        // Launches that grow with N (one per diagonal) can cost more as each holds more work,
        // and a strided walk waits on its level's latency: both stay brackets.
        let diagonals = |n: usize| 2 * n as u64;
        assert_eq!(
            hump(25e9, diagonals, false).method,
            CalibratedMethod::Bracket
        );
        assert_eq!(hump(25e9, fixed, true).method, CalibratedMethod::Bracket);
    }

    #[test]
    fn a_rise_carried_on_is_capped_by_the_levels_rates_where_traffic_is_the_time() {
        // The streaming hump (58 % of 12 GB/s at the top: its time is its traffic's) out of
        // the target's level, which streams 1.2× slower: its cost per byte can rise from the
        // top's, moved to the target's level, by at most 1.2, as if all of it were traffic;
        // carried on at the power of N it rises at over the top three sizes (0.38) it would
        // be ~1.6× the top's. The compute-bound hump (28 % of 25 GB/s) is not capped: its
        // compute per byte may grow; unless it moves by a sweep of its own access pattern.
        let fixed = |_: usize| 10;
        let cells = 11676.0f64.powi(2) * 10.0;
        // The top's moved cost: halfway between the roofline (nothing: e·g < 1) and one
        // after the other, w·e·g·(1 − 1/g) = w·e·(g − 1); strided, one after the other.
        let top = |rate: f64, half: f64| {
            let e = 8.0 / (1.14 * rate * 1e-9);
            1.14e-9 * (1.0 + half * e * 0.2) * cells
        };
        let g = 1.2;
        let [_, growth] = hump_at(12e9, fixed, false, g, false)
            .bracket_seconds
            .expect("bracket");
        assert!(
            (growth / (g * top(12e9, 0.5)) - 1.0).abs() < 1e-9,
            "{growth}"
        );
        let [_, free] = hump_at(25e9, fixed, true, g, false)
            .bracket_seconds
            .expect("bracket");
        assert!(free > 1.3 * g * top(25e9, 1.0), "{free}");
        let swept = hump_swept(25e9, fixed, true, g, false, true);
        let [_, capped] = swept.bracket_seconds.expect("bracket");
        assert!(
            (capped / (g * top(25e9, 1.0)) - 1.0).abs() < 1e-9,
            "{swept:?}"
        );
    }

    /// One colour of sor-rb over `sizes`, ten launches a run, `cost[i]` seconds per cell and
    /// launch, 8 bytes per cell, each median known to ±0.5 %.
    fn colour_series(sizes: &[usize], cost: &[f64]) -> SeriesMedians {
        series(
            sizes
                .iter()
                .zip(cost)
                .map(|(&n, c)| {
                    let t = c * (n * n) as f64 * 10.0;
                    SizeMedians {
                        size: n,
                        phases: vec![PhaseMedian {
                            flops: None,
                            name: "sor_rb red".into(),
                            median_seconds: t,
                            count: 10,
                            bytes: Some(8 * 10 * (n * n) as u64),
                            items: None,
                            ci95_seconds: Some([0.995 * t, 1.005 * t]),
                        }],
                        total_seconds: t,
                    }
                })
                .collect(),
        )
    }

    #[test]
    fn a_band_its_own_patterns_sweep_shows_is_moved_out_of_the_window() {
        // Host sor-rb on the Intel VM of runs 66–69: a colour cost 1.0 ns per cell a launch
        // with the grid below the band and 2.0 in it (the window's top four sizes), and the
        // stencil sweep, the phase's own pattern, ran as much slower there (g = ½ against the
        // target's rate, the phase's share of it 1: e·g = ½). Each band size shrinks by
        // w·min(e, 1)·(1 − g) to the target's 1.0 ns; the estimate is the target's cost, where
        // without the sweep the band is carried on.
        let sizes = [1983usize, 2358, 2805, 3336, 3967];
        let cost = [1.0e-9, 2.0e-9, 2.0e-9, 2.0e-9, 2.0e-9];
        let s = colour_series(&sizes, &cost);
        let moves = |patterned: bool| -> Vec<LevelMove> {
            sizes
                .iter()
                .zip(cost)
                .map(|(&size, c)| {
                    // The sweep's rate at this size is the phase's own (8 bytes per cell).
                    let rate = 8.0 / c;
                    let own = ("sor_rb red".to_string(), rate, rate / (8.0 / 1.0e-9));
                    LevelMove {
                        size,
                        rate: 4.0 * rate,
                        factor: 1.0,
                        own_rates: vec![own.clone()],
                        own_patterns: if patterned { vec![own.0] } else { vec![] },
                        ..Default::default()
                    }
                })
                .collect()
        };
        let target = 15868usize;
        let truth = 1.0e-9 * (target * target) as f64 * 10.0;
        let estimate = |patterned: bool| {
            let f = forecast_calibrated(&s, target as f64, &moves(patterned), Seconds(0.0))
                .expect("fits");
            f.phases[0].calibrated.clone().expect("calibrated")
        };
        let swept = estimate(true);
        assert!(
            (swept.prediction_seconds / truth - 1.0).abs() < 0.01,
            "{swept:?}"
        );
        let [lo, hi] = swept.interval_seconds;
        assert!(lo <= truth && truth <= hi, "{swept:?}");
        let carried = estimate(false);
        assert!(carried.prediction_seconds > 1.5 * truth, "{carried:?}");
    }

    #[test]
    fn a_band_the_sweep_places_above_a_window_size_is_the_windows_median_not_its_top() {
        // Host sor-rb on the Intel VM of run 71: a colour cost 1.0 ns per cell a launch below
        // the band and 2.2 in it at the window's top two sizes, where the stencil sweep put
        // the band above the fourth (g = 1 there, ½ at the fifth). Moved by the sweep, the
        // sizes cost 1.0, 1.0, 1.0, 2.2 and 1.2 ns: every one of them stands at the target's
        // level, so the estimate is their median, the target's 1.0 ns, and not the top two's
        // mean carried on (+70 %).
        let sizes = [1983usize, 2358, 2805, 3336, 3967];
        let cost = [1.0e-9, 1.0e-9, 1.0e-9, 2.2e-9, 2.2e-9];
        let sweep = [1.0e-9, 1.0e-9, 1.0e-9, 1.0e-9, 2.0e-9];
        let s = colour_series(&sizes, &cost);
        let moves: Vec<LevelMove> = sizes
            .iter()
            .zip(sweep)
            .map(|(&size, c)| {
                let rate = 8.0 / c;
                let own = ("sor_rb red".to_string(), rate, rate / (8.0 / 1.0e-9));
                LevelMove {
                    size,
                    rate: 4.0 * rate,
                    factor: 1.0,
                    own_rates: vec![own.clone()],
                    own_patterns: vec![own.0],
                    ..Default::default()
                }
            })
            .collect();
        let target = 15868usize;
        let truth = 1.0e-9 * (target * target) as f64 * 10.0;
        let c = forecast_calibrated(&s, target as f64, &moves, Seconds(0.0))
            .expect("fits")
            .phases[0]
            .calibrated
            .clone()
            .expect("calibrated");
        assert_eq!(c.method, CalibratedMethod::Saturated);
        assert!((c.prediction_seconds / truth - 1.0).abs() < 0.01, "{c:?}");
        let [lo, hi] = c.interval_seconds;
        assert!(lo <= truth && truth <= hi, "{c:?}");
        // The bracket above it still reaches the top size's moved cost.
        let [_, growth] = c.bracket_seconds.expect("a bracket");
        assert!(growth > 1.1 * truth, "{c:?}");
    }

    #[test]
    fn a_rise_where_the_calibration_rates_every_size_as_the_target_is_saturation() {
        // The streaming case above (58 % of the rate, a bracket out of the level) with every
        // size in the target's level and rated within 10 % of it: no level lies between the
        // window and the target, so the rise is not carried on; the estimate is the window's
        // median cost, the interval still reaching the growth. Suite run 66's host vadd.
        let fixed = |_: usize| 10;
        let cells = 11676.0f64.powi(2) * 10.0;
        for strided in [false, true] {
            let c = hump_at(12e9, fixed, strided, 1.05, true);
            assert_eq!(c.method, CalibratedMethod::Saturated, "{c:?}");
            let [saturated, growth] = c.bracket_seconds.expect("bracket");
            // Moved by 1.05 (the target's traffic charged at each size, e·g > 1 where e is
            // 0.58) the costs keep their order; the median is N = 2068's. The growth, of a
            // phase whose time is its traffic, is capped at 1.05× the top's moved cost.
            assert!(
                saturated > 1.0e-9 * cells && saturated < 1.1e-9 * cells,
                "{c:?}"
            );
            assert!((c.prediction_seconds / saturated - 1.0).abs() < 1e-12);
            assert!(c.interval_seconds[1] >= growth && growth > 1.15 * saturated);
        }
        // In the level but rated 20 % slower at the target, or rated alike but in another
        // level: the rise may be the level's, and the estimate stays the bracket's.
        assert_eq!(
            hump_at(12e9, fixed, false, 1.2, true).method,
            CalibratedMethod::Bracket
        );
        assert_eq!(
            hump_at(12e9, fixed, false, 1.05, false).method,
            CalibratedMethod::Bracket
        );
    }
}
