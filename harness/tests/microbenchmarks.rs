//! Every microbenchmark on the host and on the OpenCL CPU device (PoCL in CI): positive,
//! finite parameters with intervals, the cache hierarchy in the right order, and files that
//! round-trip.

mod common;

use std::sync::OnceLock;

use harness::backend::{discover, select, BackendKind, DeviceList, DeviceSelector};
use harness::calibration::measure::{calibrate, CalibrateOptions};
use harness::calibration::Calibration;
use harness::fit::window::PlaneOrder;

fn devices() -> &'static std::sync::Mutex<DeviceList> {
    static LIST: OnceLock<std::sync::Mutex<DeviceList>> = OnceLock::new();
    LIST.get_or_init(|| std::sync::Mutex::new(discover()))
}

fn quick_calibration(kind: BackendKind) -> Option<&'static Calibration> {
    static HOST: OnceLock<Calibration> = OnceLock::new();
    static OPENCL: OnceLock<Option<Calibration>> = OnceLock::new();
    // One calibration at a time: two at once on a small CI machine only measure each other.
    let run = || {
        let list = devices().lock().unwrap_or_else(|p| p.into_inner());
        let index = match kind {
            BackendKind::Opencl => common::opencl_device(&list)?,
            _ => select(&list, &DeviceSelector::Backend(kind)).ok()?,
        };
        let options = CalibrateOptions {
            quick: true,
            ..Default::default()
        };
        Some(calibrate(list.devices[index].as_ref(), &options).expect("calibration runs"))
    };
    match kind {
        BackendKind::Host => Some(HOST.get_or_init(|| run().expect("the host is always there"))),
        BackendKind::Opencl => OPENCL.get_or_init(run).as_ref(),
        BackendKind::Cuda => None,
    }
}

fn check_bandwidth(c: &Calibration) {
    let b = c.bandwidth.as_ref().expect("the sweep ran");
    assert_eq!(b.curves.len(), 4);
    for curve in &b.curves {
        assert!(!curve.points.is_empty(), "{:?}", curve.kernel);
        for p in &curve.points {
            assert!(p.gbps > 0.0 && p.gbps.is_finite(), "{p:?}");
        }
    }
    assert_eq!(b.levels.len(), c.read_latency.levels.len());
    // A CPU's private caches (every level below the last cache) again with passes inside a
    // launch: those rows take their rates, the last cache and memory keep the sweep's.
    let private = harness::bench::cache_passes::private_cache_sizes(b);
    if private.is_empty() {
        assert!(b.cache_curves.is_empty() && b.levels.iter().all(|l| !l.passes_in_launch));
    } else {
        assert_eq!(b.cache_curves.len(), 4);
        for p in b.cache_curves.iter().flat_map(|c| &c.points) {
            assert!(private.contains(&p.working_set_bytes), "{p:?}");
            assert!(p.gbps > 0.0 && p.gbps.is_finite() && p.passes >= 1, "{p:?}");
        }
        let n = b.levels.len();
        assert!(
            b.levels[..n - 2].iter().any(|l| l.passes_in_launch),
            "{:?}",
            b.levels
        );
        assert!(
            b.levels[n - 2..].iter().all(|l| !l.passes_in_launch),
            "{:?}",
            b.levels
        );
    }
    let bs = c.babelstream.as_ref().expect("BabelStream's kernels ran");
    let names: Vec<&str> = bs.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ["Copy", "Mul", "Add", "Triad", "Dot"]);
    assert!(bs.max_rel_error < 1e-4);
    assert!(bs
        .kernels
        .iter()
        .all(|k| k.mbytes_per_sec > 0.0 && k.min_seconds <= k.max_seconds));
}

fn check_parameters(c: &Calibration) {
    check_bandwidth(c);
    for (name, p) in c.parameters.iter() {
        assert!(p.value.is_finite(), "{name} = {}", p.value);
        assert!(p.value > 0.0, "{name} = {} on {}", p.value, c.device.name);
        assert!(
            p.ci95[0] <= p.value && p.value <= p.ci95[1],
            "{name}: {:?} vs {}",
            p.ci95,
            p.value
        );
        assert!(!p.method.is_empty() && !p.unit.is_empty());
    }
    assert!(!c.samples.is_empty(), "raw samples are kept");
    assert!(!c.seeds.is_empty(), "ring seeds are recorded");
    // The three a model reads: coalesced read and write, strided read.
    assert_eq!(c.gaps.len(), 3, "serialization sweeps");
    for g in &c.gaps {
        // On a CPU the line may explain little (R² is reported, not required); the fit must
        // still be well formed.
        assert!(g.fit_range[0] < g.fit_range[1]);
        assert!(g.r_squared.is_finite() && g.ci95_ns[0] <= g.gap_ns && g.gap_ns <= g.ci95_ns[1]);
    }
    assert!(c.ops.fma_ops_per_second > 0.0);
    assert!(c.launch_overhead.wall_ns > 0.0);
    assert_eq!(c.transfers.len(), 2);
}

fn check_hierarchy(c: &Calibration) {
    let sweep = &c.read_latency.sweep;
    let l1 = &sweep[0];
    let memory = sweep
        .iter()
        .find(|p| p.working_set_bytes == c.read_latency.memory_working_set_bytes)
        .expect("t's working set is in the sweep");
    assert!(
        l1.latency_ns < memory.latency_ns,
        "L1-sized {} ns should be below memory-sized {} ns",
        l1.latency_ns,
        memory.latency_ns
    );
    assert_eq!(c.read_latency.levels.last().unwrap().level, "memory");
}

#[test]
fn host_parameters_are_positive_with_intervals() {
    check_parameters(quick_calibration(BackendKind::Host).unwrap());
}

#[test]
fn host_l1_latency_is_below_memory_latency() {
    check_hierarchy(quick_calibration(BackendKind::Host).unwrap());
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn opencl_parameters_are_positive_with_intervals() {
    if let Some(c) = quick_calibration(BackendKind::Opencl) {
        check_parameters(c);
    }
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn opencl_l1_latency_is_below_memory_latency() {
    if let Some(c) = quick_calibration(BackendKind::Opencl) {
        check_hierarchy(c);
    }
}

/// A quick look leaves out the sweeps shaped after the built-in workloads (the transposing,
/// gathering and hyperplane sweeps, one thread's stencil and hyperplane sweeps on the host)
/// and keeps the random gather sweep, which any spec may declare.
fn check_quick_leaves_out_the_shaped_sweeps(c: &Calibration) {
    assert!(c.provenance.quick);
    assert!(
        c.transposes.is_none() && c.gathers.is_none(),
        "{:?}",
        c.device.name
    );
    assert!(c.hyperplanes.is_none(), "{:?}", c.device.name);
    if let Some(one) = &c.one_thread {
        assert!(one.stencil.is_none() && one.hyperplanes.is_none());
    }
    let random = c
        .random_gathers
        .as_ref()
        .expect("the random gather sweep ran");
    assert!(!random.points.is_empty());
    // It gathers up to the first working set past twice the largest cache, not beyond (a
    // working set is 12 bytes an element, rounded down).
    if let Some(cache) = c.device.l2_bytes {
        let beyond = random
            .points
            .iter()
            .filter(|p| p.working_set_bytes as u64 + 12 > 2 * cache)
            .count();
        assert!(beyond <= 1, "{random:?}");
    }
    assert!(c
        .provenance
        .stage_seconds
        .iter()
        .all(|s| !s.stage.contains("hyperplane") && !s.stage.contains("transposing")));
}

#[test]
fn a_quick_host_calibration_leaves_out_the_shaped_sweeps() {
    check_quick_leaves_out_the_shaped_sweeps(quick_calibration(BackendKind::Host).unwrap());
}

#[test]
#[cfg_attr(
    no_opencl_runtime,
    ignore = "no OpenCL runtime when the tests were built (apt-get install pocl-opencl-icd)"
)]
fn a_quick_opencl_calibration_leaves_out_the_shaped_sweeps() {
    if let Some(c) = quick_calibration(BackendKind::Opencl) {
        check_quick_leaves_out_the_shaped_sweeps(c);
    }
}

/// The hyperplane sweep, which a full calibration runs (one thread's on the host, the
/// device's own launches elsewhere): every cube's rate positive, inside its interval.
#[test]
fn the_hyperplane_sweep_rates_every_cube_inside_its_interval() {
    on_every_cpu_device(|mut ctx| {
        let sweep = harness::bench::hyperplane::measure_hyperplanes(&mut ctx, &[1 << 20, 4 << 20])
            .expect("the sweep runs");
        assert!(!sweep.points.is_empty());
        for p in &sweep.points {
            for order in [PlaneOrder::Ascending, PlaneOrder::Descending] {
                let [lo, hi] = p.ci95_gbps(order);
                assert!(p.gbps(order) > 0.0 && p.gbps(order).is_finite(), "{p:?}");
                assert!(lo <= p.gbps(order) && p.gbps(order) <= hi, "{p:?}");
            }
        }
    });
}

#[test]
fn calibration_files_round_trip() {
    let c = quick_calibration(BackendKind::Host).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub").join("host.json");
    c.save(&path).unwrap();
    let back = Calibration::load(&path).unwrap();
    assert!(
        back == *c,
        "the file read back differs from the one written"
    );
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
}

#[test]
fn a_garbled_field_is_named() {
    let c = quick_calibration(BackendKind::Host).unwrap();
    let text = c.to_json().replacen(
        "\"dt\": {\n      \"value\": ",
        "\"dt\": {\n      \"value\": \"x\", \"old\": ",
        1,
    );
    let (field, message) = Calibration::from_json(&text).unwrap_err();
    assert_eq!(field, "parameters.dt.value", "{message}");
}

/// BabelStream in doubles (its default; `harness babelstream --double`) on every CPU device:
/// verified against the host's recurrence in doubles, and its rates count 8-byte elements.
#[test]
fn babelstream_runs_in_doubles_and_counts_their_bytes() {
    use harness::bench::babelstream::{measure_babelstream_with, BabelStreamOptions, Precision};
    on_every_cpu_device(|mut ctx| {
        let options = BabelStreamOptions {
            precision: Precision::Double,
            elements: 1 << 16,
        };
        let bs = measure_babelstream_with(&mut ctx, &options).unwrap();
        assert_eq!(bs.precision, Precision::Double);
        assert!(
            bs.elements <= 1 << 16 && bs.elements > 1 << 15,
            "{}",
            bs.elements
        );
        assert!(bs.max_rel_error < 1e-10, "{}", bs.max_rel_error);
        let names: Vec<&str> = bs.kernels.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["Copy", "Mul", "Add", "Triad", "Dot"]);
        // Copy moves two arrays of doubles in its fastest iteration.
        let copy = &bs.kernels[0];
        let bytes = copy.mbytes_per_sec * 1e6 * copy.min_seconds;
        assert!((bytes - 16.0 * bs.elements as f64).abs() < 1.0, "{bytes}");
    });
}

/// The address chase (what GPUs run for t, `p = *p`) walks the same ring as the index chase
/// on every CPU device: it is verified against the host's walk of the indices inside
/// `read_latency_with`, and gives a positive latency at a cache-sized and a larger ring.
#[test]
fn the_address_chase_walks_the_same_ring_as_the_index_chase() {
    use harness::bench::latency::{read_latency_with, Chase};
    on_every_cpu_device(|mut ctx| {
        let name = ctx.device.info().name.clone();
        for bytes in [4 << 10, 4 << 20] {
            let p = read_latency_with(&mut ctx, bytes, Chase::Addresses).unwrap();
            assert!(
                p.latency_ns.is_finite() && p.latency_ns > 0.0,
                "{name}: {bytes}: {}",
                p.latency_ns
            );
        }
    });
}

/// A buffer read back from an offset gives the bytes that lie there, one reaching past the
/// end is refused, and a check read a chunk at a time finds the first wrong element past the
/// first chunk, on every CPU device.
#[test]
fn a_buffer_reads_back_from_an_offset_and_a_chunked_check_finds_the_first_wrong_element() {
    use harness::bench::{first_mismatch, CHECK_CHUNK};
    on_every_cpu_device(|ctx| {
        let name = ctx.device.info().name.clone();
        let n = CHECK_CHUNK + 1000;
        let mut values: Vec<f32> = (0..n).map(|i| (i % 1021) as f32).collect();
        values[CHECK_CHUNK + 17] = -1.0;
        let buf = harness::backend::upload_f32(ctx.device, &values).unwrap();
        let mut out = [0f32; 5];
        ctx.device
            .download_from(
                &buf,
                4 * (CHECK_CHUNK + 15),
                bytemuck::cast_slice_mut(&mut out),
            )
            .unwrap();
        assert_eq!(out, values[CHECK_CHUNK + 15..CHECK_CHUNK + 20], "{name}");
        let past = ctx
            .device
            .download_from(&buf, 4 * (n - 2), bytemuck::cast_slice_mut(&mut out));
        assert!(past.is_err(), "{name}: read past the end");
        let mut scratch = Vec::new();
        let wrong = |i: usize, v: f32| v != (i % 1021) as f32;
        let bad = first_mismatch(ctx.device, &buf, n, &mut scratch, wrong).unwrap();
        assert_eq!(bad, Some(CHECK_CHUNK + 17), "{name}");
        assert_eq!(
            scratch.len(),
            CHECK_CHUNK,
            "{name}: one chunk of host memory"
        );
        let bad = first_mismatch(ctx.device, &buf, CHECK_CHUNK + 17, &mut scratch, wrong);
        assert_eq!(
            bad.unwrap(),
            None,
            "{name}: the elements before it are right"
        );
    });
}

/// Run `check` with a quick benchmark context on the host and, where there is one, on the
/// OpenCL CPU device, one device at a time (holding the device list, as the calibrations do).
fn on_every_cpu_device(check: impl Fn(harness::bench::BenchContext<'_>)) {
    let list = devices().lock().unwrap_or_else(|p| p.into_inner());
    let mut indices = vec![select(&list, &DeviceSelector::Backend(BackendKind::Host)).unwrap()];
    indices.extend(common::opencl_device(&list));
    for index in indices {
        let device = list.devices[index].as_ref();
        check(
            harness::bench::BenchContext::new(
                device,
                harness::bench::sampling::SamplingPlan::quick(),
                true,
            )
            .unwrap(),
        );
    }
}
