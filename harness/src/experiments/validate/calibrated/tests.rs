//! Tests of the calibrated variant: the launch cost measured beside the series, the window's
//! relaxed and launch-bound rules, and each phase's move to the target's level (transposes,
//! gathers, latency-bound walks, one thread's rates, the stencil and hyperplane sweeps and their
//! bounds).

use super::*;
use crate::experiments::series::RepeatPlan;
use crate::fit::forecast::CalibratedMethod;
use crate::fit::window::HyperplaneRates;
use crate::workloads::stream::{Stream, StreamKind};

#[test]
fn the_launch_cost_measured_beside_the_series_replaces_the_calibrations() {
    let host = crate::backend::host::HostDevice::new();
    let vadd = Stream(StreamKind::Vadd);
    let sizes = [1 << 12, 1 << 13, 1 << 14];
    let mut series = crate::experiments::series::run_series(
        &vadd,
        None,
        &host,
        &sizes,
        2,
        RepeatPlan::fixed(3),
        |_| {},
    )
    .expect("series");
    let probe = series
        .launch_probe
        .clone()
        .expect("the rounds probed launches");
    assert_eq!(probe.sample_fixed_ns.len(), 3);
    assert_eq!(probe.line.points.len(), 4);
    assert!(probe.line.fixed_ns >= 0.0 && probe.line.fixed_ns < 1e6);
    let facts = DeviceFacts {
        executors: 1.0,
        launch_seconds: Seconds(1e-9),
        levels: vec![("memory".into(), 1 << 30)],
        ..DeviceFacts::default()
    };
    let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
    assert!(forecast.is_some(), "{:?}", window.note);
    assert_eq!(window.choice.accepted, sizes);
    // Launches that cost 1 ms each beside the series take every small size's time: the
    // window rejects them all, whatever the calibration said.
    series.launch_probe.as_mut().expect("probe").line.fixed_ns = 1e6;
    let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
    assert!(forecast.is_none());
    assert!(window.choice.accepted.is_empty());
    let note = window.note.expect("a note");
    assert!(
        note.contains("launches cost 1.00e6 ns each beside the series, 1.00 ns in the calibration"),
        "{note}"
    );
    // Launches that take 35 % of every size's time (its total made so, 1 ns a launch):
    // under the 20 % rule no size, under the relaxed 50 % every size, and the note says so.
    series.launch_probe.as_mut().expect("probe").line.fixed_ns = 1.0;
    let untouched = series.clone();
    for p in &mut series.points {
        let launches: u64 = p
            .phases
            .iter()
            .filter(|ph| is_kernel_phase(&ph.name))
            .map(|ph| ph.count)
            .sum();
        p.total.median_seconds = launches as f64 * 1e-9 / 0.35;
    }
    let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
    assert!(forecast.is_some(), "{:?}", window.note);
    assert_eq!(window.choice.accepted, sizes);
    let note = window.note.expect("a note");
    assert!(note.contains("only 0 small size(s) keep launches × L under 20 % of their time: sizes up to 50 % are used"), "{note}");
    // Launches that take 60 %: launch-bound, every size still used, and the note says
    // the estimate leans on L.
    for p in &mut series.points {
        p.total.median_seconds *= 0.35 / 0.6;
    }
    let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
    assert!(forecast.is_some(), "{:?}", window.note);
    assert_eq!(window.choice.accepted, sizes);
    let note = window.note.expect("a note");
    assert!(
        note.contains("launch-bound") && note.contains("leans on L"),
        "{note}"
    );
    // Launches that cost more than a size's whole time contradict it: no prediction.
    for p in &mut series.points {
        p.total.median_seconds *= 0.6 / 1.2;
    }
    let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
    assert!(forecast.is_none() && window.choice.accepted.is_empty());
    series = untouched;
    // Without a probe (an older series) the calibration's L stays.
    series.launch_probe = None;
    let (window, forecast) = calibrated_forecast(&vadd, &series, &facts, 1 << 16, None);
    assert!(forecast.is_some(), "{:?}", window.note);
}

/// The built-in workload `name` and its series on the host at `sizes` (2 iterations, 3
/// runs a size).
fn host_series(name: &str, sizes: &[usize]) -> (Box<dyn Workload>, Series) {
    let host = crate::backend::host::HostDevice::new();
    let workload = crate::workloads::registry::lookup(name, None).expect("built in");
    let series = crate::experiments::series::run_series(
        workload.as_ref(),
        None,
        &host,
        sizes,
        2,
        RepeatPlan::fixed(3),
        |_| {},
    )
    .expect("series");
    (workload, series)
}

/// A device with an L2 to 1 MiB and memory past it, whose sweeps (streaming, lines, the
/// cube's `transposes` and, where given, the square's `gathers`) each measured 1 KiB,
/// 1 MiB and 1 GiB at the rates given, bytes per second.
fn swept_facts(transposes: [f64; 3], gathers: Option<[f64; 3]>) -> DeviceFacts {
    let sweep = |rates: [f64; 3]| -> Vec<(u64, f64)> {
        [1 << 10, 1 << 20, 1 << 30].into_iter().zip(rates).collect()
    };
    DeviceFacts {
        transposes: sweep(transposes),
        gathers: gathers.map_or_else(Vec::new, sweep),
        executors: 1.0,
        launch_seconds: Seconds(1e-9),
        levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
        streaming: sweep([100e9, 80e9, 40e9]),
        lines: sweep([60e9, 30e9, 15e9]),
        ..DeviceFacts::default()
    }
}

#[test]
fn the_transposes_move_by_the_transposing_sweep_and_the_sweeps_by_the_line_rate() {
    let sizes = [10, 12, 14];
    let (adi, series) = host_series("adi", &sizes);
    let mut facts = swept_facts([16e9, 8e9, 2e9], None);
    let target = 420;
    let at = |rates: &dyn Fn(u64) -> Option<f64>, size: usize| {
        let here = rates(adi.bytes_needed(size)).expect("a rate");
        (
            here,
            here / rates(adi.bytes_needed(target)).expect("a rate"),
        )
    };
    let (window, _) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
    assert_eq!(window.level_moves.len(), sizes.len());
    for m in &window.level_moves {
        let pair = |name: &str| {
            let l = m.line_moves.iter().find(|l| l.0 == name).expect(name);
            (l.1, l.2)
        };
        assert_eq!(pair("swap j,k"), at(&|b| facts.transpose_rate(b), m.size));
        assert_eq!(pair("sweep j"), at(&|b| facts.line_rate(b), m.size));
        assert!(
            pair("swap j,k").1 > pair("sweep j").1,
            "the sweep falls further"
        );
    }
    // Without a transposing sweep (calibrations before it) the transposes keep the line
    // rate, and a layout without transposes has none to move.
    facts.transposes.clear();
    let (window, _) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
    let m = &window.level_moves[0];
    let swap = m
        .line_moves
        .iter()
        .find(|l| l.0 == "swap j,k")
        .expect("swap");
    assert_eq!((swap.1, swap.2), at(&|b| facts.line_rate(b), m.size));
    let plain = crate::workloads::registry::lookup("adi", Some(crate::workloads::Layout::Plain))
        .expect("plain");
    assert!(plain
        .access_patterns()
        .iter()
        .all(|p| p.1 < crate::workloads::Access::Transpose));
}

#[test]
fn sors_copy_back_moves_by_the_gathering_sweep_and_its_copy_in_by_the_cubes() {
    let sizes = [20, 24, 28];
    let (sor, series) = host_series("sor", &sizes);
    let mut facts = swept_facts([16e9, 8e9, 4e9], Some([16e9, 6e9, 1e9]));
    let target = 8000;
    let at = |rates: &dyn Fn(u64) -> Option<f64>, size: usize| {
        let here = rates(sor.bytes_needed(size)).expect("a rate");
        let there = rates(sor.bytes_needed(target)).expect("a rate");
        (here, here / there)
    };
    let pair = |m: &LevelMove, name: &str| {
        let l = m.line_moves.iter().find(|l| l.0 == name).expect(name);
        (l.1, l.2)
    };
    let (window, _) = calibrated_forecast(sor.as_ref(), &series, &facts, target, None);
    assert_eq!(window.level_moves.len(), sizes.len());
    for m in &window.level_moves {
        let back = pair(m, "from_skewed");
        assert_eq!(back, at(&|b| facts.gather_rate(b), m.size));
        assert_eq!(
            pair(m, "to_skewed"),
            at(&|b| facts.transpose_rate(b), m.size)
        );
        assert!(back.1 > 4.0, "the gathering sweep falls further: {back:?}");
    }
    // Without a gathering sweep (calibrations before it) the copy back keeps the cube's.
    facts.gathers.clear();
    let (window, _) = calibrated_forecast(sor.as_ref(), &series, &facts, target, None);
    let m = &window.level_moves[0];
    assert_eq!(
        pair(m, "from_skewed"),
        at(&|b| facts.transpose_rate(b), m.size)
    );
    assert!(
        crate::workloads::registry::lookup("sor", Some(crate::workloads::Layout::Plain))
            .expect("plain")
            .access_patterns()
            .is_empty()
    );
}

#[test]
fn a_target_that_cannot_fill_the_device_is_predicted_from_its_walks() {
    // ADI on a device of 3000 executors: no size's sweeps, the target's neither (38² lines
    // at N = 40), fill it; the target's transposes (40³ items) do.
    let sizes = [10, 12, 14];
    let (adi, series) = host_series("adi", &sizes);
    let mut facts = DeviceFacts {
        executors: 3000.0,
        launch_seconds: Seconds(1e-9),
        levels: vec![("L2".into(), 1 << 15), ("memory".into(), 1 << 30)],
        latencies: vec![("L2".into(), 100e-9), ("memory".into(), 300e-9)],
        ..DeviceFacts::default()
    };
    let target = 40;
    let (window, forecast) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
    let note = window.note.clone().expect("a note");
    assert!(note.contains("cannot fill the device either"), "{note}");
    assert_eq!(window.choice.accepted, sizes.to_vec());
    let forecast = forecast.expect("a forecast");
    for m in &window.level_moves {
        let named: Vec<&str> = m.latency_moves.iter().map(|l| l.0.as_str()).collect();
        // The sweeps, not the one-item reset (a fixed-work phase) nor the transposes.
        assert_eq!(named, ["sweep i", "sweep j", "sweep k"], "{named:?}");
        let ratio = 300e-9 / facts.latency_of(adi.bytes_needed(m.size)).expect("t");
        assert!(m.latency_moves.iter().all(|l| l.1 == ratio));
    }
    for phase in ["sweep i", "sweep j", "sweep k"] {
        let c = forecast
            .phases
            .iter()
            .find(|p| p.name == phase)
            .and_then(|p| p.calibrated.as_ref())
            .expect("an estimate");
        assert_eq!(c.method, CalibratedMethod::LatencyBound, "{phase}");
    }
    // A device the target fills keeps the window rules: too few sizes, no forecast.
    facts.executors = 10.0;
    let (window, forecast) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
    assert!(window
        .level_moves
        .iter()
        .all(|m| m.latency_moves.is_empty()));
    assert!(forecast.is_some() || window.note.is_some());
    // Without the latencies nothing is moved by them.
    facts.executors = 3000.0;
    facts.latencies.clear();
    let (window, _) = calibrated_forecast(adi.as_ref(), &series, &facts, target, None);
    assert!(window
        .level_moves
        .iter()
        .all(|m| m.latency_moves.is_empty()));
}

#[test]
fn a_phase_that_ran_on_one_thread_moves_at_one_threads_rates() {
    let (sor_rb, series) = host_series("sor-rb", &[40, 48, 56]);
    let sweep = |rates: [f64; 4]| -> Vec<(u64, f64)> {
        [1 << 10, 1 << 16, 1 << 20, 1 << 30]
            .into_iter()
            .zip(rates)
            .collect()
    };
    let mut facts = DeviceFacts {
        one_thread: Some(crate::fit::window::OneThreadRates {
            streaming: sweep([40e9, 40e9, 30e9, 10e9]),
            lines: sweep([20e9, 20e9, 5e9, 2e9]),
            ..Default::default()
        }),
        executors: 1.0,
        launch_seconds: Seconds(1e-9),
        levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
        streaming: sweep([100e9, 100e9, 80e9, 50e9]),
        ..DeviceFacts::default()
    };
    let target = 224;
    let (window, _) = calibrated_forecast(sor_rb.as_ref(), &series, &facts, target, None);
    let one = facts.one_thread.clone().expect("one thread");
    let at_target = one
        .streaming_rate(sor_rb.bytes_needed(target))
        .expect("a rate");
    let kernels: Vec<&str> = series.points[0]
        .phases
        .iter()
        .filter(|ph| is_kernel_phase(&ph.name))
        .map(|ph| ph.name.as_str())
        .collect();
    assert!(!window.level_moves.is_empty());
    for m in &window.level_moves {
        let here = one
            .streaming_rate(sor_rb.bytes_needed(m.size))
            .expect("a rate");
        let own: Vec<&str> = m.own_rates.iter().map(|o| o.0.as_str()).collect();
        assert_eq!(own, kernels, "every kernel phase ran on one thread");
        for o in &m.own_rates {
            assert_eq!((o.1, o.2), (here, here / at_target));
        }
        // The device's own rate stays beside them, for the phases that ran on all.
        assert_eq!(
            m.rate,
            facts
                .streaming_rate(sor_rb.bytes_needed(m.size))
                .expect("rate")
        );
    }
    let note = window.note.expect("a note");
    assert!(
        note.contains("ran on one thread: moved at one thread's rates (30.0 GB/s"),
        "{note}"
    );
    // With a stencil sweep the colours move by it, at the grid's 4·N² bytes (sor-rb's
    // working set adds 4 bytes), as sweeps of their own pattern; `zero_u32` keeps one
    // thread's streaming rate.
    let stencils = sweep([30e9, 20e9, 8e9, 12e9]);
    let stencil = crate::fit::window::OneThreadRates {
        stencils,
        ..one.clone()
    };
    facts.one_thread = Some(stencil.clone());
    let (window, _) = calibrated_forecast(sor_rb.as_ref(), &series, &facts, target, None);
    let grid = |n: usize| 4 * (n * n) as u64;
    let colours = ["sor_rb red", "sor_rb black"];
    for m in &window.level_moves {
        let here = stencil.stencil_rate(grid(m.size)).expect("a rate");
        let there = stencil.stencil_rate(grid(target)).expect("a rate");
        for o in &m.own_rates {
            if colours.contains(&o.0.as_str()) {
                assert_eq!((o.1, o.2), (here, here / there), "{o:?}");
            } else {
                assert_eq!(o.0, "zero_u32");
                assert_ne!(o.1, here);
            }
        }
        assert_eq!(m.own_patterns, colours);
    }
    // A calibration without one thread's sweep moves them at the device's rates.
    facts.one_thread = None;
    let (window, _) = calibrated_forecast(sor_rb.as_ref(), &series, &facts, target, None);
    assert!(window.level_moves.iter().all(|m| m.own_rates.is_empty()));
}

#[test]
fn lu_ssors_sweeps_move_by_the_hyperplane_sweep_in_their_own_order() {
    use crate::fit::window::PlaneOrder;
    let (lu, series) = host_series("lu-ssor", &[10, 12, 14]);
    let sweep = |rates: [f64; 4]| -> Vec<(u64, f64)> {
        [1 << 10, 1 << 14, 1 << 20, 1 << 30]
            .into_iter()
            .zip(rates)
            .collect()
    };
    let one = crate::fit::window::OneThreadRates {
        streaming: sweep([40e9, 40e9, 30e9, 10e9]),
        hyperplanes: HyperplaneRates {
            ascending: sweep([4e9, 3e9, 2e9, 1e9]),
            descending: sweep([4e9, 3e9, 1.5e9, 0.5e9]),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut facts = DeviceFacts {
        one_thread: Some(one.clone()),
        executors: 1.0,
        launch_seconds: Seconds(1e-9),
        levels: vec![("L2".into(), 1 << 20), ("memory".into(), 1 << 30)],
        streaming: sweep([100e9, 100e9, 80e9, 50e9]),
        ..DeviceFacts::default()
    };
    let target = 400;
    let (window, _) = calibrated_forecast(lu.as_ref(), &series, &facts, target, None);
    assert!(!window.level_moves.is_empty());
    let cube = |n: usize| 4 * (n * n * n) as u64;
    for m in &window.level_moves {
        for (phase, order) in [
            ("ssor lower", PlaneOrder::Ascending),
            ("ssor upper", PlaneOrder::Descending),
        ] {
            let here = one.hyperplanes.rate(cube(m.size), order).expect("a rate");
            let there = one.hyperplanes.rate(cube(target), order).expect("a rate");
            let own = m.own_rates.iter().find(|o| o.0 == phase).expect(phase);
            assert_eq!((own.1, own.2), (here, here / there), "{own:?}");
        }
        assert_eq!(m.own_patterns, ["ssor lower", "ssor upper"]);
    }
    // Without the sweep (calibrations before it) they move at one thread's streaming
    // rate, as before, and are no patterns of their own.
    facts.one_thread = Some(crate::fit::window::OneThreadRates {
        hyperplanes: HyperplaneRates::default(),
        ..one.clone()
    });
    let (window, _) = calibrated_forecast(lu.as_ref(), &series, &facts, target, None);
    for m in &window.level_moves {
        assert!(m.own_patterns.is_empty(), "{m:?}");
        let here = one.streaming_rate(lu.bytes_needed(m.size)).expect("a rate");
        assert!(m.own_rates.iter().all(|o| o.1 == here), "{m:?}");
    }
    // Where the sweeps were the device's own launches (not one thread's), they move by
    // the device's own hyperplane sweep, not one thread's.
    let mut launched = series.clone();
    for ph in launched.points.iter_mut().flat_map(|p| &mut p.phases) {
        ph.threads = None;
    }
    facts.one_thread = Some(one.clone());
    facts.hyperplanes = HyperplaneRates {
        ascending: sweep([8e9, 8e9, 6e9, 4e9]),
        descending: sweep([8e9, 8e9, 5e9, 2e9]),
        ..Default::default()
    };
    let (window, _) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
    assert!(!window.level_moves.is_empty());
    for m in &window.level_moves {
        for (phase, order) in [
            ("ssor lower", PlaneOrder::Ascending),
            ("ssor upper", PlaneOrder::Descending),
        ] {
            let rates = &facts.hyperplanes;
            let here = rates.rate(cube(m.size), order).expect("a rate");
            let there = rates.rate(cube(target), order).expect("a rate");
            let own = m.own_rates.iter().find(|o| o.0 == phase).expect(phase);
            assert_eq!((own.1, own.2), (here, here / there), "{own:?}");
        }
        assert_eq!(m.own_patterns, ["ssor lower", "ssor upper"]);
    }
    // The moves at the ends of the sweep's intervals: this size's fastest rate over the
    // target's slowest, and the reverse; the estimate stays, its interval reaches them.
    let (_, without) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
    let ci = |rates: &[(u64, f64)]| -> Vec<(u64, [f64; 2])> {
        rates
            .iter()
            .map(|&(b, r)| (b, [0.9 * r, 1.1 * r]))
            .collect()
    };
    facts.hyperplanes.ascending_sides = ci(&facts.hyperplanes.ascending);
    facts.hyperplanes.descending_sides = ci(&facts.hyperplanes.descending);
    let (window, with) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
    let note = window.note.clone().unwrap_or_default();
    assert!(
        note.contains("ssor lower and ssor upper moved by the hyperplane sweep"),
        "{note}"
    );
    for slow in [true, false] {
        let bounded = at_plane_bounds(
            &window.level_moves,
            lu.as_ref(),
            &launched,
            &facts,
            target,
            slow,
        );
        assert_eq!(bounded.len(), window.level_moves.len());
        for (b, m) in bounded.iter().zip(&window.level_moves) {
            for (own, was) in b.own_rates.iter().zip(&m.own_rates) {
                let ratio = if slow { 1.0 / 0.9 } else { 1.0 / 1.1 };
                assert!((own.2 / was.2 - ratio).abs() < 1e-9, "{own:?} {was:?}");
            }
        }
    }
    let phase = |f: &Option<Forecast>| {
        let f = f.as_ref().expect("a forecast");
        let p = f
            .phases
            .iter()
            .find(|p| p.name == "ssor upper")
            .expect("the phase");
        p.calibrated.clone().expect("calibrated")
    };
    let (narrow, wide) = (phase(&without), phase(&with));
    assert_eq!(narrow.prediction_seconds, wide.prediction_seconds);
    // (The lower end may sit at 0 either way: the series' sizes are tiny and noisy.)
    assert!(
        wide.interval_seconds[0] <= narrow.interval_seconds[0]
            && wide.interval_seconds[1] > narrow.interval_seconds[1],
        "{narrow:?} {wide:?}"
    );
    // Without the spread (one thread's sweep has none here), no bounds.
    facts.hyperplanes.ascending_sides.clear();
    facts.hyperplanes.descending_sides.clear();
    assert!(at_plane_bounds(
        &window.level_moves,
        lu.as_ref(),
        &launched,
        &facts,
        target,
        true
    )
    .is_empty());
    // With neither sweep, no own pattern.
    facts.hyperplanes = HyperplaneRates::default();
    let (window, _) = calibrated_forecast(lu.as_ref(), &launched, &facts, target, None);
    assert!(window.level_moves.iter().all(|m| m.own_patterns.is_empty()));
}

/// A workload whose phases are another's, declared `access` as given (as a spec's launches
/// declare theirs), and whose declarations cannot be evaluated at `unevaluable_at` (as a
/// hand-edited stored spec's may not).
struct Declared<'a> {
    inner: &'a dyn Workload,
    patterns: Vec<(&'static str, crate::workloads::Access)>,
    unevaluable_at: Option<usize>,
}

impl Workload for Declared<'_> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        self.inner.bytes_needed(size)
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        self.inner.parallelism(size)
    }

    fn access_patterns(&self) -> Vec<(&str, crate::workloads::Access)> {
        self.patterns.clone()
    }

    fn declarations_error(&self, size: usize, _iterations: usize) -> Option<String> {
        (Some(size) == self.unevaluable_at).then(|| "walks.x.steps evaluates to 2.5".into())
    }

    fn run(
        &self,
        device: &dyn crate::backend::Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<crate::workloads::RunResult, crate::workloads::WorkloadError> {
        self.inner.run(device, size, iterations, verify)
    }
}

#[test]
fn a_declared_gather_moves_by_the_random_gather_sweep_else_by_the_line_rate() {
    let sizes = [1 << 12, 1 << 13, 1 << 14];
    let (triad, series) = host_series("triad", &sizes);
    let gathering = Declared {
        inner: triad.as_ref(),
        patterns: vec![("triad", crate::workloads::Access::Gather)],
        unevaluable_at: None,
    };
    let mut facts = swept_facts([16e9, 8e9, 4e9], Some([16e9, 6e9, 1e9]));
    facts.random_gathers = [1 << 10, 1 << 20, 1 << 30]
        .into_iter()
        .zip([20e9, 5e9, 0.5e9])
        .collect();
    let target = 1 << 26;
    let at = |rates: &dyn Fn(u64) -> Option<f64>, size: usize| {
        let here = rates(triad.bytes_needed(size)).expect("a rate");
        let there = rates(triad.bytes_needed(target)).expect("a rate");
        (here, here / there)
    };
    let moved = |facts: &DeviceFacts| {
        let (window, _) = calibrated_forecast(&gathering, &series, facts, target, None);
        assert_eq!(window.level_moves.len(), sizes.len());
        window
            .level_moves
            .iter()
            .map(|m| {
                let l = m.line_moves.iter().find(|l| l.0 == "triad").expect("triad");
                (m.size, (l.1, l.2), m.own_patterns.contains(&"triad".into()))
            })
            .collect::<Vec<_>>()
    };
    for (size, pair, own) in moved(&facts) {
        assert_eq!(pair, at(&|b| facts.random_gather_rate(b), size));
        assert!(own, "the sweep is the pattern's own");
    }
    // Not the gathering transpose's sweep, and without a random gather sweep (calibrations
    // before it) the line rate, which is not the pattern's own.
    facts.random_gathers.clear();
    for (size, pair, own) in moved(&facts) {
        assert_eq!(pair, at(&|b| facts.line_rate(b), size));
        assert!(!own);
    }
}

#[test]
fn a_dependent_walk_moves_by_the_read_latency_and_is_latency_bound() {
    use crate::fit::forecast::Regime;
    let sizes = [1 << 12, 1 << 13, 1 << 14];
    let (triad, series) = host_series("triad", &sizes);
    let walking = Declared {
        inner: triad.as_ref(),
        patterns: vec![("triad", crate::workloads::Access::Dependent)],
        unevaluable_at: None,
    };
    // The window's sizes live in the L2 (20 ns a step), the target in memory (100 ns).
    let mut facts = swept_facts([16e9, 8e9, 4e9], None);
    facts.latencies = vec![("L2".into(), 20e-9), ("memory".into(), 100e-9)];
    let target = 1 << 26;
    let (window, forecast) = calibrated_forecast(&walking, &series, &facts, target, None);
    assert_eq!(window.level_moves.len(), sizes.len());
    let node = crate::bench::latency::NODE_BYTES as f64;
    for m in &window.level_moves {
        let l = m.line_moves.iter().find(|l| l.0 == "triad").expect("triad");
        assert_eq!((l.1, l.2), (node / 20e-9, 100e-9 / 20e-9), "{m:?}");
        assert_eq!(m.dependent, ["triad"]);
    }
    let phase = forecast
        .expect("a forecast")
        .phases
        .into_iter()
        .find(|p| p.name == "triad")
        .expect("triad");
    let regime = phase.calibrated.and_then(|c| c.regime);
    assert_eq!(regime, Some(Regime::LatencyBound));
    // Streaming, the same phase is not.
    let (window, forecast) = calibrated_forecast(triad.as_ref(), &series, &facts, target, None);
    assert!(window.level_moves.iter().all(|m| m.dependent.is_empty()));
    let phase = forecast
        .expect("a forecast")
        .phases
        .into_iter()
        .find(|p| p.name == "triad");
    assert_ne!(
        phase.and_then(|p| p.calibrated).and_then(|c| c.regime),
        Some(Regime::LatencyBound)
    );
}

#[test]
fn a_declared_stencil_moves_by_the_stencil_sweep_where_it_ran_on_one_thread() {
    let sizes = [1 << 12, 1 << 13, 1 << 14];
    let (triad, series) = host_series("triad", &sizes);
    let stencil = Declared {
        inner: triad.as_ref(),
        patterns: vec![("triad", crate::workloads::Access::Stencil)],
        unevaluable_at: None,
    };
    let stencils: Vec<(u64, f64)> = [1 << 10, 1 << 20, 1 << 30]
        .into_iter()
        .zip([14e9, 12e9, 3e9])
        .collect();
    let mut facts = swept_facts([16e9, 8e9, 4e9], None);
    facts.one_thread = Some(crate::fit::window::OneThreadRates {
        streaming: facts.streaming.clone(),
        stencils,
        ..Default::default()
    });
    let target = 1 << 26;
    // Run on one thread, it moves by one thread's stencil sweep at its grid's bytes.
    let mut alone = series.clone();
    for ph in alone.points.iter_mut().flat_map(|p| &mut p.phases) {
        ph.threads = Some(1);
    }
    let one = facts.one_thread.clone().expect("one thread");
    let (window, _) = calibrated_forecast(&stencil, &alone, &facts, target, None);
    assert_eq!(window.level_moves.len(), sizes.len());
    for m in &window.level_moves {
        let here = one
            .stencil_rate(triad.bytes_needed(m.size))
            .expect("a rate");
        let there = one
            .stencil_rate(triad.bytes_needed(target))
            .expect("a rate");
        let own = m.own_rates.iter().find(|o| o.0 == "triad").expect("triad");
        assert_eq!((own.1, own.2), (here, here / there), "{own:?}");
        assert_eq!(m.own_patterns, ["triad"]);
    }
    assert!(!window.note.unwrap_or_default().contains("declares stencil"));
    // With the device's own launches there is no stencil sweep: it streams, and the note
    // says so.
    let mut launched = series.clone();
    for ph in launched.points.iter_mut().flat_map(|p| &mut p.phases) {
        ph.threads = None;
    }
    let (window, _) = calibrated_forecast(&stencil, &launched, &facts, target, None);
    assert!(window.level_moves.iter().all(|m| m.own_patterns.is_empty()));
    let note = window.note.expect("a note");
    assert!(
        note.contains("triad declares stencil, which this calibration did not sweep where it ran"),
        "{note}"
    );
    // A calibration with no shaped sweep at all (a CPU's full calibration unless asked)
    // says how to get one.
    let mut bare = facts.clone();
    bare.transposes.clear();
    bare.gathers.clear();
    bare.hyperplanes = Default::default();
    bare.one_thread = Some(crate::fit::window::OneThreadRates {
        streaming: facts.streaming.clone(),
        ..Default::default()
    });
    assert!(!bare.has_shaped_sweeps() && facts.has_shaped_sweeps());
    let (window, _) = calibrated_forecast(&stencil, &alone, &bare, target, None);
    let note = window.note.expect("a note");
    assert!(
        note.contains(
            "triad declares stencil, which this calibration did not sweep (`calibrate --shaped-sweeps` measures it)"
        ),
        "{note}"
    );
}

#[test]
fn declarations_that_cannot_be_evaluated_are_named_in_the_notes() {
    let sizes = [1 << 12, 1 << 13, 1 << 14];
    let (triad, series) = host_series("triad", &sizes);
    let facts = swept_facts([16e9, 8e9, 4e9], None);
    let target = 1 << 26;
    let says = |at: usize| {
        let w = Declared {
            inner: triad.as_ref(),
            patterns: Vec::new(),
            unevaluable_at: Some(at),
        };
        let (window, _) = calibrated_forecast(&w, &series, &facts, target, None);
        window
            .note
            .filter(|n| n.contains("declarations could not be evaluated"))
    };
    let note = says(target).expect("the target's size is read");
    assert!(
        note.contains(&format!("N = {target}")) && note.contains("2.5"),
        "{note}"
    );
    assert!(says(3).is_none(), "a size the prediction does not read");
}
