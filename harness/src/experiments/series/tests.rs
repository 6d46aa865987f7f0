//! The series runner's tests: rounds, warm-ups, checks and the interval under six runs.

use std::cell::RefCell;

use super::*;
use crate::backend::host::HostDevice;
use crate::workloads::Verification;

/// A workload that only records which sizes ran, in order, and whether each was checked.
struct Recorder {
    calls: RefCell<Vec<(usize, usize, bool)>>,
}

impl Workload for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        size as u64
    }

    fn run(
        &self,
        _device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        self.calls.borrow_mut().push((size, iterations, verify));
        let seconds = size as f64 * 1e-6;
        Ok(RunResult {
            workload: "recorder".into(),
            size,
            iterations,
            phases: vec![PhaseTiming {
                flops: None,
                threads: None,
                name: "sweep".into(),
                seconds,
                count: 1,
                fraction: 1.0,
                bytes: None,
                items: None,
            }],
            total_seconds: seconds,
            kernel_seconds: seconds,
            verification: verify.then_some(Verification {
                max_abs_error: 0.0,
                max_rel_error: 0.0,
                tolerance: 1e-6,
                passed: true,
                against: None,
            }),
        })
    }
}

#[test]
fn large_sizes_run_inside_the_series_rounds_after_its_sizes() {
    let recorder = Recorder {
        calls: RefCell::new(Vec::new()),
    };
    let (series, beside) = run_series_beside(
        &recorder,
        None,
        &HostDevice::new(),
        &[20, 10],
        &[100],
        1,
        RepeatPlan::fixed(2),
        |_| {},
    )
    .unwrap();
    // Warm-ups (the series' sizes checked, then the large one checked), then two rounds
    // of a, b, T.
    assert_eq!(
        *recorder.calls.borrow(),
        vec![
            (10, 1, true),
            (20, 1, true),
            (100, 1, true),
            (10, 1, false),
            (20, 1, false),
            (100, 1, false),
            (10, 1, false),
            (20, 1, false),
            (100, 1, false),
        ]
    );
    assert_eq!(series.points.len(), 2);
    assert_eq!(beside.len(), 1);
    assert_eq!(beside[0].size, 100);
    assert_eq!(beside[0].total.samples.len(), 2);
    // One launch-cost sample per round.
    let probe = series.launch_probe.expect("the rounds probed launches");
    assert_eq!(probe.sample_fixed_ns.len(), 2);
}

#[test]
fn a_long_warm_up_is_checked_in_a_short_run_first() {
    let recorder = Recorder {
        calls: RefCell::new(Vec::new()),
    };
    run_series_beside(
        &recorder,
        None,
        &HostDevice::new(),
        &[10],
        &[100, 200],
        40,
        RepeatPlan::fixed(1),
        |_| {},
    )
    .unwrap();
    let calls = recorder.calls.borrow();
    // The series' size and the first large size: a checked run of VERIFY_ITERATIONS,
    // then the full warm-up unchecked; the second large size: its warm-up only.
    assert_eq!(
        calls[..5],
        [
            (10, VERIFY_ITERATIONS, true),
            (10, 40, false),
            (100, VERIFY_ITERATIONS, true),
            (100, 40, false),
            (200, 40, false),
        ]
    );
    // Every measured run has the full iterations and no check.
    assert!(calls[5..].iter().all(|&(_, it, v)| it == 40 && !v));
}

#[test]
fn verify_smallest_or_none_checks_fewer_warm_ups_and_says_so() {
    let warm_ups = |checks: Checks| {
        let recorder = Recorder {
            calls: RefCell::new(Vec::new()),
        };
        let (series, _) = run_series_beside(
            &recorder,
            None,
            &HostDevice::new(),
            &[20, 10],
            &[100],
            1,
            RepeatPlan {
                checks,
                ..RepeatPlan::fixed(1)
            },
            |_| {},
        )
        .unwrap();
        let calls = recorder.calls.borrow()[..3].to_vec();
        (calls, series.check_state(), series.verified)
    };
    assert_eq!(
        warm_ups(Checks::Smallest),
        (
            vec![(10, 1, true), (20, 1, false), (100, 1, false)],
            CheckState::SmallestOnly,
            false
        )
    );
    assert_eq!(
        warm_ups(Checks::None),
        (
            vec![(10, 1, false), (20, 1, false), (100, 1, false)],
            CheckState::Off,
            false
        )
    );
    assert_eq!(warm_ups(Checks::All).1, CheckState::Verified);
}

#[test]
fn check_states_round_trip_and_old_unchecked_files_read_as_unchecked() {
    for state in [
        CheckState::Verified,
        CheckState::Unchecked,
        CheckState::SmallestOnly,
        CheckState::Off,
    ] {
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(serde_json::from_str::<CheckState>(&text).unwrap(), state);
    }
    assert_eq!(
        serde_json::to_string(&CheckState::SmallestOnly).unwrap(),
        "\"smallest-only\""
    );
    assert_eq!(
        serde_json::from_str::<CheckState>("\"unchecked\"").unwrap(),
        CheckState::Unchecked
    );
}

#[test]
fn sizes_under_six_runs_are_noted_as_not_95_percent_and_run_again() {
    let recorder = Recorder {
        calls: RefCell::new(Vec::new()),
    };
    let run = |plan: RepeatPlan| {
        run_series_beside(
            &recorder,
            None,
            &HostDevice::new(),
            &[10],
            &[],
            1,
            plan,
            |_| {},
        )
        .unwrap()
        .0
    };
    let two = run(RepeatPlan::fixed(2));
    let note = two.thin_intervals().unwrap();
    assert!(note.contains("N = 10 (2 runs: 50.0 %)"), "{note}");
    // Identical runs meet any interval target, but five runs are no 95 % interval: a
    // sixth round runs before the rule can stop.
    let five = run(RepeatPlan {
        min: 5,
        max: 15,
        ci_target: 0.05,
        checks: Checks::All,
        cold: Some(0),
        eviction: None,
    });
    assert_eq!(five.points[0].total.samples.len(), 6);
    assert_eq!(five.thin_intervals(), None);
}

#[test]
fn cold_runs_follow_each_sizes_own_run_in_the_first_rounds() {
    let recorder = Recorder {
        calls: RefCell::new(Vec::new()),
    };
    let plan = RepeatPlan {
        cold: Some(1),
        eviction: None,
        ..RepeatPlan::fixed(2)
    };
    let (series, beside) = run_series_beside(
        &recorder,
        None,
        &HostDevice::new(),
        &[20, 10],
        &[100],
        1,
        plan,
        |_| {},
    )
    .unwrap();
    // Warm-ups, then round 1 with a cold run after each size's own (none for the large
    // size, which is measured, not moved), then round 2 without.
    assert_eq!(
        recorder.calls.borrow()[3..],
        [
            (10, 1, false),
            (10, 1, false),
            (20, 1, false),
            (20, 1, false),
            (100, 1, false),
            (10, 1, false),
            (20, 1, false),
            (100, 1, false),
        ]
    );
    for p in &series.points {
        let cold = p.phases[0].cold.as_ref().expect("cold times");
        assert_eq!(cold.samples.len(), 1);
        assert_eq!(cold.median_seconds, p.size as f64 * 1e-6);
        assert_eq!(p.phases[0].samples.len(), 2, "cold runs are not repeats");
    }
    assert!(beside[0].phases[0].cold.is_none());
    // The file says who emptied the caches, and reads back.
    let device = HostDevice::new();
    assert_eq!(
        series.cold_eviction,
        Some(Eviction::for_device(device.info()))
    );
    let text = serde_json::to_string(&series).unwrap();
    assert!(text.contains("\"cold_eviction\":\""), "{text}");
    assert_eq!(serde_json::from_str::<Series>(&text).unwrap(), series);
    // They reach the forecast's medians; none without cold runs.
    let medians = series.medians();
    assert_eq!(medians.cold.len(), 2);
    assert_eq!(
        (medians.cold[0].size, medians.cold[0].phase.as_str()),
        (10, "sweep")
    );
    let (warm, _) = run_series_beside(
        &recorder,
        None,
        &HostDevice::new(),
        &[10],
        &[],
        1,
        RepeatPlan::fixed(2),
        |_| {},
    )
    .unwrap();
    assert!(warm.points[0].phases[0].cold.is_none());
    assert!(warm.medians().cold.is_empty());
    assert_eq!(warm.cold_eviction, None);
    assert!(!serde_json::to_string(&warm)
        .unwrap()
        .contains("cold_eviction"));
}

/// [`Recorder`]'s runs as a workload that says what each size uploads, 8 bytes an element.
struct Uploads;

impl Workload for Uploads {
    fn name(&self) -> &str {
        "uploads"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        size as u64
    }

    fn upload_bytes(&self, size: usize) -> Option<u64> {
        Some(8 * size as u64)
    }

    fn run(&self, _: &dyn Device, _: usize, _: usize, _: bool) -> Result<RunResult, WorkloadError> {
        Err(WorkloadError::Invalid("not run".into()))
    }
}

#[test]
fn a_stored_series_without_its_upload_bytes_takes_the_workloads() {
    let recorder = Recorder {
        calls: RefCell::new(Vec::new()),
    };
    let (mut series, _) = run_series_beside(
        &recorder,
        None,
        &HostDevice::new(),
        &[10, 20],
        &[],
        1,
        RepeatPlan::fixed(2),
        |_| {},
    )
    .unwrap();
    // Nothing is missing where no phase is an upload.
    assert!(series.with_upload_bytes(&Uploads).is_none());
    for p in &mut series.points {
        p.phases[0].name = "upload".into();
    }
    // The recorder cannot say what it uploads: nothing to fill.
    assert!(series.with_upload_bytes(&recorder).is_none());
    let filled = series.with_upload_bytes(&Uploads).expect("filled");
    for p in &filled.points {
        assert_eq!(p.phases[0].bytes, Some(8 * p.size as u64));
    }
    // Recorded bytes are kept: nothing is missing then.
    assert!(filled.with_upload_bytes(&Uploads).is_none());
}
