//! The `calibrated` variant (docs/models.md §2.4): for one large size, the window of small
//! sizes, each moved to the large size's memory level by the calibration's rates (streaming,
//! lines, transposes, gathers, stencils, hyperplanes, one thread's, latencies), the interval's
//! bounds at the ends of those rates' spread, and the forecast from them.

mod gathers;
mod searches;
mod walks;

use super::sizes::size_facts;
use super::LargeWindow;
use crate::experiments::series::{Series, SeriesPoint};
use crate::export::table::sig;
use crate::fit::drift::SharedRounds;
use crate::fit::forecast::{
    amount_at_target, forecast_calibrated_bounded, is_kernel_phase, Forecast, LevelMove,
    TargetAmounts,
};
use crate::fit::model_error::{widen_for_model_error, MODEL_ERROR};
use crate::fit::window::{
    choose_window_any_level, choose_window_unsaturated, DeviceFacts, PlaneOrder, OVERHEAD_LIMIT,
    RELAXED_OVERHEAD_LIMIT,
};
use crate::units::Seconds;
use crate::workloads::{Access, Workload};

/// What `workload` declares for each kernel phase at the target `large`, where its
/// declarations give exactly what the series recorded at every size of it (launches, bytes,
/// flops): the forecast then takes the target's amounts from them instead of extrapolating
/// the window's (docs/models.md §2.4, "The amounts at the target"). Empty where the workload
/// cannot say (the built-ins) or says otherwise than the series recorded (a series run with
/// other parameters, or by a version that declared less).
fn declared_target_amounts(
    workload: &dyn Workload,
    series: &Series,
    large: usize,
) -> Vec<TargetAmounts> {
    let Some(at_target) = workload.declared_amounts(large, series.iterations) else {
        return Vec::new();
    };
    let reproduced = series.points.iter().all(|p| {
        let Some(declared) = workload.declared_amounts(p.size, series.iterations) else {
            return false;
        };
        declared.iter().all(|d| {
            p.phases.iter().any(|ph| {
                ph.name == d.kernel
                    && ph.count == d.launches
                    && ph.bytes == d.bytes
                    && ph.flops == d.flops
            })
        })
    });
    if !reproduced {
        return Vec::new();
    }
    at_target
        .into_iter()
        .map(|d| TargetAmounts {
            name: d.kernel,
            bytes: d.bytes,
            flops: d.flops,
        })
        .collect()
}

/// The notes for declared grid walks the calibration has no sweep for (`unswept`): a
/// stencil sweep runs on the host's one thread alone, so a stencil elsewhere has none; a
/// CPU's calibration that left every workload-shaped sweep out (its full calibration unless
/// asked, or a quick look) says how to get them where one would apply.
fn unswept_notes(series: &Series, device: &DeviceFacts, unswept: &[(&str, Access)]) -> Vec<String> {
    let alone: Vec<&str> = series.points.iter().flat_map(one_thread_phases).collect();
    let left_out =
        series.device.class == crate::backend::DeviceClass::Cpu && !device.has_shaped_sweeps();
    let hint = "which this calibration did not sweep (`calibrate --shaped-sweeps` measures it)";
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for &(name, access) in unswept {
        let pattern = if access.name().starts_with("stencil") {
            "stencil"
        } else if access.name().starts_with("hyperplane") {
            "hyperplane"
        } else {
            continue;
        };
        let why = match pattern {
            "stencil" if left_out && alone.contains(&name) => hint,
            "stencil" => "which this calibration did not sweep where it ran (the stencil sweep runs on one thread alone)",
            _ if left_out => hint,
            _ => "which this calibration did not sweep where it ran",
        };
        match groups.iter_mut().find(|g| g.0 == pattern && g.1 == why) {
            Some(g) => g.2.push(name),
            None => groups.push((pattern, why, vec![name])),
        }
    }
    groups
        .into_iter()
        .map(|(pattern, why, names)| {
            format!(
                "{} declare{} {pattern}, {why}: moved as streaming",
                names.join(", "),
                if names.len() == 1 { "s" } else { "" }
            )
        })
        .collect()
}

/// The kernel phases of `point` whose every launch ran on one thread (a host twin that is one
/// loop): they move between levels at one thread's rates (docs/models.md §2.4).
fn one_thread_phases(point: &SeriesPoint) -> impl Iterator<Item = &str> {
    point
        .phases
        .iter()
        .filter(|ph| ph.threads == Some(1) && is_kernel_phase(&ph.name))
        .map(|ph| ph.name.as_str())
}

/// The kernel phases of `series` whose launches at `target` have fewer work items than the
/// device's `executors`: each one's work items per launch over the series' sizes, taken to
/// the target as its bytes are ([`amount_at_target`]). A phase that does not count its work
/// items at every size, or runs the same items per launch at every size, is left out.
fn unfilled_phases(series: &Series, target: usize, executors: f64) -> Vec<String> {
    let Some(first) = series.points.first() else {
        return Vec::new();
    };
    first
        .phases
        .iter()
        .filter(|ph| is_kernel_phase(&ph.name))
        .filter(|ph| {
            let per_launch: Option<Vec<(f64, f64)>> = series
                .points
                .iter()
                .map(|p| {
                    let q = p.phases.iter().find(|q| q.name == ph.name)?;
                    let items = q.items.filter(|&i| i > 0 && q.count > 0)?;
                    Some((p.size as f64, items as f64 / q.count as f64))
                })
                .collect();
            // A phase whose launches run the same items at every size (a one-item reset) is
            // a fixed-work phase, estimated per launch.
            per_launch.is_some_and(|v| {
                let (sizes, items): (Vec<f64>, Vec<f64>) = v.into_iter().unzip();
                items.iter().any(|&i| i != items[0])
                    && amount_at_target(&sizes, &items, target as f64)
                        .is_some_and(|at| at < executors)
            })
        })
        .map(|ph| ph.name.clone())
        .collect()
}

/// `moves` with the target's level streaming at `rate` (bytes per second) instead of
/// `measured`: each size's g = R(W_i) / rate; a size without a rate stays unmoved. A phase
/// that moves at one thread's rates has its g scaled by the same ratio, `measured / rate`
/// (one thread's own floor and fast end are not measured).
fn at_target_rate(moves: &[LevelMove], rate: f64, measured: f64) -> Vec<LevelMove> {
    moves
        .iter()
        .map(|m| LevelMove {
            factor: if m.rate > 0.0 { m.rate / rate } else { 1.0 },
            own_rates: m
                .own_rates
                .iter()
                .map(|(name, r, g)| (name.clone(), *r, g * measured / rate))
                .collect(),
            ..m.clone()
        })
        .collect()
}

/// The rate of the sweep of a grid walk's pattern (`stencil`, `hyperplane`) at a grid of
/// `bytes`: one thread's sweep where the phase ran on one thread, the device's otherwise
/// (the calibration sweeps the stencil on one thread alone, where the workloads' stencils
/// run); `None` for another pattern or where the calibration lacks the sweep.
fn walk_rate(device: &DeviceFacts, access: Access, one_thread: bool, bytes: u64) -> Option<f64> {
    let one = device.one_thread.as_ref();
    match access {
        Access::Stencil if one_thread => one?.stencil_rate(bytes),
        Access::Hyperplane(order) => {
            let rates = if one_thread {
                &one?.hyperplanes
            } else {
                &device.hyperplanes
            };
            rates.rate(bytes, order)
        }
        _ => None,
    }
}

/// The hyperplane walks among `workload`'s phases, each with the order of its planes.
fn hyperplane_phases(workload: &dyn Workload) -> Vec<(&str, PlaneOrder)> {
    workload
        .access_patterns()
        .into_iter()
        .filter_map(|(name, access)| match access {
            Access::Hyperplane(order) => Some((name, order)),
            _ => None,
        })
        .collect()
}

/// `moves` with each hyperplane phase's g_i taken to the slowest (`slow`) or the fastest of
/// the cubes its hyperplane sweep measured at the target's cube
/// ([`HyperplaneRates::rate_spread`]) instead of their median, the sweep one thread's or the
/// device's as the phase ran: the target's cube is none of them, and may run as any. Each
/// size's own rate stays the median: the estimate takes the median over the window's sizes,
/// and a side near a power of two (one of three at 8 MiB ran at half its neighbours' rate on
/// one Intel VM) is the window's own sizes' no more than the target's. Empty where no
/// phase's sweep has the spread (docs/models.md §2.4, "A hyperplane sweep moves by the
/// hyperplane sweep").
fn at_plane_bounds(
    moves: &[LevelMove],
    workload: &dyn Workload,
    series: &Series,
    device: &DeviceFacts,
    large: usize,
    slow: bool,
) -> Vec<LevelMove> {
    let walks = hyperplane_phases(workload);
    let mut changed = false;
    let bounded = moves
        .iter()
        .map(|m| {
            let alone: Vec<&str> = series
                .points
                .iter()
                .filter(|p| p.size == m.size)
                .flat_map(one_thread_phases)
                .collect();
            let mut m = m.clone();
            for own in &mut m.own_rates {
                let Some(&(name, order)) = walks.iter().find(|p| p.0 == own.0) else {
                    continue;
                };
                let rates = if alone.contains(&own.0.as_str()) {
                    device.one_thread.as_ref().map(|o| &o.hyperplanes)
                } else {
                    Some(&device.hyperplanes)
                };
                let Some([slowest, fastest]) =
                    rates.and_then(|r| r.rate_spread(workload.walked_bytes(name, large), order))
                else {
                    continue;
                };
                own.2 = own.1 / if slow { slowest } else { fastest };
                changed = true;
            }
            m
        })
        .collect();
    if changed {
        bounded
    } else {
        Vec::new()
    }
}

/// The calibrated forecast for one large size (docs/models.md §2.4): every saturated,
/// unflagged, not overhead-dominated small size (launches × L at most [`OVERHEAD_LIMIT`] of
/// its time, or [`RELAXED_OVERHEAD_LIMIT`] where fewer than three sizes pass that, with a
/// note), moved to the large size's memory level by the calibrated streaming rates; where
/// fewer than three pass and the large size's own main kernel cannot fill the device either,
/// every unflagged size, its unfilled phases estimated as latency-bound (with a note); or a
/// note saying why there is none.
///
/// `shared`: the rounds the target ran in with the window, where it ran inside them
/// ([`run_series_beside`]); its interval then allows for less of the machine's drift.
///
/// Where the series measured the launch cost in its own rounds ([`Series::launch_probe`]),
/// that L replaces the calibration's, in the window's rules and in the forecast alike: it is
/// what the launches cost while the window ran.
///
/// [`run_series_beside`]: crate::experiments::series::run_series_beside
pub fn calibrated_forecast(
    workload: &dyn Workload,
    series: &Series,
    device: &DeviceFacts,
    large: usize,
    shared: Option<SharedRounds>,
) -> (LargeWindow, Option<Forecast>) {
    let mut notes = Vec::new();
    // A stored spec series without its uploads' bytes: the spec says them.
    let filled = series.with_upload_bytes(workload);
    let series = filled.as_ref().unwrap_or(series);
    let probed;
    let device = match &series.launch_probe {
        Some(probe) => {
            let beside = Seconds::from_ns(probe.line.fixed_ns);
            let ratio = beside.0 / device.launch_seconds.0;
            if !(0.8..=1.25).contains(&ratio) {
                notes.push(format!(
                    "launches cost {} ns each beside the series, {} ns in the calibration: the series' own cost is used",
                    sig(beside.as_ns(), 3),
                    sig(device.launch_seconds.as_ns(), 3)
                ));
            }
            probed = DeviceFacts {
                launch_seconds: beside,
                ..device.clone()
            };
            &probed
        }
        None => device,
    };
    let facts = size_facts(workload, series);
    let target_bytes = workload.bytes_needed(large);
    let mut choice = choose_window_any_level(&facts, target_bytes, device, OVERHEAD_LIMIT);
    if choice.accepted.len() < 3 {
        let relaxed = choose_window_any_level(&facts, target_bytes, device, RELAXED_OVERHEAD_LIMIT);
        if relaxed.accepted.len() >= 3 {
            notes.push(format!(
                "only {} small size(s) keep launches × L under {:.0} % of their time: sizes up to {:.0} % are used, so the estimate leans on L",
                choice.accepted.len(),
                100.0 * OVERHEAD_LIMIT,
                100.0 * RELAXED_OVERHEAD_LIMIT
            ));
            choice = relaxed;
        }
    }
    // A target whose own main kernel cannot fill the device (ADI's N² lines on a GPU's
    // 270,336 executors) has no saturated size below it: the window is every unflagged size,
    // and the phases that do not fill the device at the target are estimated as
    // latency-bound (docs/models.md §2.4, "Launches that cannot fill the device").
    let target_latency = device.latency_of(target_bytes);
    let unfilled_target = workload
        .parallelism(large)
        .is_some_and(|items| (items as f64) < device.executors);
    let unfilled = if choice.accepted.len() < 3 && unfilled_target {
        let all = choose_window_unsaturated(&facts, target_bytes, device);
        let phases = unfilled_phases(series, large, device.executors);
        if all.accepted.len() >= 3 && !phases.is_empty() && target_latency.is_some() {
            notes.push(format!(
                "the target's launches cannot fill the device either ({} work items per launch < n = {:.0}): every unflagged size is used, and {} estimated as latency-bound",
                workload.parallelism(large).unwrap_or(0),
                device.executors,
                phases.join(", ")
            ));
            choice = all;
            phases
        } else {
            Vec::new()
        }
    } else {
        Vec::new()
    };
    // Launch-bound: a workload whose every small size spends over half of its time in its
    // launches' fixed cost (many short launches: a wavefront's diagonals, a dynamic
    // programme's rows) still has a prediction, launches × L plus its work's extrapolation;
    // the window is every saturated, unflagged size whose launches cost less than its whole
    // time (more, and L contradicts the measurement), and the note says the estimate leans
    // on L (docs/models.md §2.4, "The window").
    if choice.accepted.len() < 3 && unfilled.is_empty() {
        let all = choose_window_any_level(&facts, target_bytes, device, 1.0);
        if all.accepted.len() >= 3 {
            notes.push(format!(
                "launch-bound: {} of the small sizes keep launches × L under {:.0} % of their time, so every size whose launches take less than all of it is used; the estimate is the target's launches × L plus its work's extrapolation, and leans on L",
                choice.accepted.len(),
                100.0 * RELAXED_OVERHEAD_LIMIT
            ));
            choice = all;
        }
    }
    let target_rate = device.streaming_rate(target_bytes);
    let target_level = device.level_of(target_bytes);
    let level_moves: Vec<LevelMove> = choice
        .accepted
        .iter()
        .map(|&size| {
            let working_set = workload.bytes_needed(size);
            let (rate, factor) = target_rate
                .zip(device.streaming_rate(working_set))
                .map_or((0.0, 1.0), |(t, r)| (r, r / t));
            // A transfer grows with the working set: one of b bytes here is one of
            // b · W_target / W_i bytes at the target.
            let grows = target_bytes as f64 / working_set.max(1) as f64;
            // Per transfer phase: the sweep's seconds per byte at this size's transfer and at
            // the target's, and whether this size's is past the sweep's largest.
            let transfers: Vec<(String, f64, f64, bool)> = series
                .points
                .iter()
                .find(|p| p.size == size)
                .into_iter()
                .flat_map(|p| &p.phases)
                .filter_map(|ph| {
                    let one = ph.bytes? as f64 / ph.count.max(1) as f64;
                    let here = device.transfer_seconds_per_byte(&ph.name, one)?;
                    let there = device.transfer_seconds_per_byte(&ph.name, one * grows)?;
                    let end = device.transfer_sweep_end(&ph.name)?;
                    Some((ph.name.clone(), here, there, one > end))
                })
                .collect();
            let transfer_factors = transfers
                .iter()
                .map(|(name, here, there, _)| (name.clone(), there / here))
                .collect();
            let transfer_costs = transfers
                .into_iter()
                .map(|(name, _, there, past)| (name, there, past))
                .collect();
            // The kernel phases that ran on one thread at this size move at one thread's
            // rates, where the calibration measured them.
            let alone: Vec<&str> = series
                .points
                .iter()
                .filter(|p| p.size == size)
                .flat_map(one_thread_phases)
                .collect();
            let one = device.one_thread.as_ref();
            let pair = |rate: &dyn Fn(u64) -> Option<f64>| {
                rate(target_bytes)
                    .zip(rate(working_set))
                    .map(|(t, r)| (r, r / t))
            };
            let one_stream = one.and_then(|o| pair(&|b| o.streaming_rate(b)));
            let one_line = one.and_then(|o| pair(&|b| o.line_rate(b)));
            let two_line = pair(&|b| device.line_rate(b));
            // The phases the workload declares strided move by the line rate; its transposes
            // by the transposing sweep's, where the calibration has one (the host's sweep is
            // one thread's, as the workloads' transposes run there), those that gather a
            // stride apart by the gathering sweep's, where it has that, and those that read
            // at random indices by the random gather sweep's.
            let patterns = workload.access_patterns();
            let strided: Vec<&str> = patterns
                .iter()
                .filter(|p| p.1 >= Access::Strided)
                .map(|p| p.0)
                .collect();
            let transposing = pair(&|b| device.transpose_rate(b));
            let gathering = pair(&|b| device.gather_rate(b));
            let random_gathering = pair(&|b| device.random_gather_rate(b));
            // A dependent walk moves by the read latency: one chase node per latency here,
            // and the latency's ratio at the target.
            let chasing = target_latency
                .zip(device.latency_of(working_set))
                .filter(|&(t, here)| t > 0.0 && here > 0.0)
                .map(|(t, here)| (crate::bench::latency::NODE_BYTES as f64 / here, t / here));
            let mut dependent = Vec::new();
            let mut own_patterns = Vec::new();
            let line_moves = patterns
                .iter()
                .filter(|p| p.1 >= Access::Strided)
                .filter_map(|&(name, access)| {
                    let line = one_line.filter(|_| alone.contains(&name)).or(two_line);
                    let pattern = match access {
                        Access::Transpose => transposing,
                        Access::TransposeRead => gathering.or(transposing),
                        Access::Gather => random_gathering,
                        Access::Dependent => {
                            dependent.push(name.to_string());
                            chasing
                        }
                        Access::Stream
                        | Access::Stencil
                        | Access::Hyperplane(_)
                        | Access::Strided => None,
                    };
                    if pattern.is_some() {
                        own_patterns.push(name.to_string());
                    }
                    let (r, g) = pattern.or(line)?;
                    Some((name.to_string(), r, g))
                })
                .collect();
            // The phases that walk a grid in place (a stencil, a hyperplane walk) move by the
            // calibration's sweep of their pattern, taken at their grid's bytes: one thread's
            // where they ran on one thread, the device's where they were its own launches;
            // the other phases on one thread by one thread's streaming rate.
            let walk = |name: &str, one_thread: bool| {
                let access = patterns.iter().find(|p| p.0 == name)?.1;
                let rate = |n: usize| {
                    walk_rate(device, access, one_thread, workload.walked_bytes(name, n))
                };
                rate(large).zip(rate(size)).map(|(t, r)| (r, r / t))
            };
            let mut own_rates: Vec<(String, f64, f64)> = alone
                .iter()
                .filter(|name| !strided.contains(name))
                .filter_map(|&name| {
                    let own = walk(name, true);
                    if own.is_some() {
                        own_patterns.push(name.to_string());
                    }
                    let (r, g) = own.or(one_stream)?;
                    Some((name.to_string(), r, g))
                })
                .collect();
            for &(name, access) in &patterns {
                if !access.is_grid_walk() || alone.contains(&name) {
                    continue;
                }
                if let Some((r, g)) = walk(name, false) {
                    own_patterns.push(name.to_string());
                    own_rates.push((name.to_string(), r, g));
                }
            }
            let latency_moves = target_latency
                .zip(device.latency_of(working_set))
                .map(|(t, here)| {
                    unfilled
                        .iter()
                        .map(|name| (name.clone(), t / here))
                        .collect()
                })
                .unwrap_or_default();
            LevelMove {
                latency_factor: target_latency
                    .zip(device.latency_of(working_set))
                    .map(|(t, here)| t / here)
                    .filter(|f| f.is_finite() && *f > 0.0),
                flop_rate: device.flop_rate,
                gather_seconds: gathers::gather_seconds(
                    workload,
                    series.iterations,
                    device,
                    size,
                    large,
                ),
                gather_target_seconds: gathers::gather_target_seconds(
                    workload,
                    series.iterations,
                    device,
                    size,
                    large,
                ),
                walk_seconds: walks::walk_seconds(workload, series.iterations, device, size, large),
                search_factors: searches::search_factors(
                    workload,
                    series.iterations,
                    device,
                    size,
                    large,
                ),
                latency_moves,
                transfer_costs,
                size,
                rate,
                factor,
                transfer_factors,
                line_moves,
                own_patterns,
                own_rates,
                dependent,
                in_target_level: target_rate.is_some()
                    && device.level_of(working_set) == target_level,
                target_in_memory: target_rate.is_some()
                    && device.levels.len() > 1
                    && device.levels.last().is_some_and(|l| l.0 == target_level),
            }
        })
        .collect();
    if target_rate.is_none() {
        notes.push(
            "the calibration has no bandwidth sweep: no size is moved between levels".to_string(),
        );
    }
    if let Some(note) = choice
        .accepted
        .iter()
        .max()
        .and_then(|&top| gathers::gathers_note(workload, series.iterations, device, top, large))
    {
        notes.push(note);
    }
    if let Some(note) =
        choice.accepted.iter().max().and_then(|&top| {
            searches::searches_note(workload, series.iterations, device, top, large)
        })
    {
        notes.push(note);
    }
    if let Some(note) = choice
        .accepted
        .iter()
        .max()
        .and_then(|&top| walks::walks_note(workload, series.iterations, device, top, large))
    {
        notes.push(note);
    }
    if let Some(one) = &device.one_thread {
        let mut alone: Vec<&str> = series
            .points
            .iter()
            .filter(|p| choice.accepted.contains(&p.size))
            .flat_map(one_thread_phases)
            .collect();
        alone.sort_unstable();
        alone.dedup();
        if let (false, Some(rate)) = (alone.is_empty(), one.streaming_rate(target_bytes)) {
            notes.push(format!(
                "{} ran on one thread: moved at one thread's rates ({} GB/s streaming at the target's working set)",
                alone.join(", "),
                sig(rate * 1e-9, 3)
            ));
        }
    }
    // A declared grid walk whose sweep the calibration lacks for where the phase ran (the
    // stencil sweep runs on one thread alone; calibrations before the sweeps) streams.
    let unswept: Vec<(&str, Access)> = workload
        .access_patterns()
        .into_iter()
        .filter(|&(name, access)| {
            access.is_grid_walk()
                && !level_moves
                    .iter()
                    .any(|m| m.own_patterns.iter().any(|p| p == name))
        })
        .collect();
    if !choice.accepted.is_empty() {
        notes.extend(unswept_notes(series, device, &unswept));
    }
    // The kernel phases whose cold runs move every accepted size (a target in device
    // memory): measured there, not moved by the rates.
    let mut cold: Vec<&str> = series
        .points
        .iter()
        .filter(|p| choice.accepted.contains(&p.size))
        .flat_map(|p| &p.phases)
        .filter(|ph| ph.cold.is_some() && is_kernel_phase(&ph.name))
        .map(|ph| ph.name.as_str())
        .collect();
    cold.sort_unstable();
    cold.dedup();
    // A declared search moves by its own sweep, not by its cold runs.
    cold.retain(|&name| {
        !level_moves
            .iter()
            .any(|m| m.search_factors.iter().any(|s| s.0 == name))
    });
    cold.retain(|&name| {
        series
            .points
            .iter()
            .filter(|p| choice.accepted.contains(&p.size))
            .all(|p| {
                p.phases
                    .iter()
                    .any(|ph| ph.name == name && ph.cold.is_some())
            })
    });
    if level_moves.iter().any(|m| m.target_in_memory) && !cold.is_empty() {
        notes.push(format!(
            "{}: each size moved to the target's level (device memory) by its cold runs, its data evicted from the caches once per sweep; the rates' moves bound the interval",
            cold.join(", ")
        ));
    } else {
        cold.clear();
    }
    let undeclared: Vec<&str> = workload
        .undeclared_access()
        .into_iter()
        .filter(|name| !cold.contains(name))
        .collect();
    if !undeclared.is_empty() {
        notes.push(format!(
            "{} declare{} no access pattern: moved between levels as streaming (a launch may say access = \"stencil\", \"strided\", \"transpose\", \"transpose-read\", \"gather\" or \"dependent\")",
            undeclared.join(", "),
            if undeclared.len() == 1 { "s" } else { "" }
        ));
    }
    notes.extend(workload.source_notes());
    // A declaration that cannot be evaluated at a size the prediction reads (a stored spec
    // edited by hand; a live run fails on it instead) drops all of them: say so.
    let read_at = choice
        .accepted
        .iter()
        .copied()
        .chain(std::iter::once(large));
    if let Some((size, why)) = read_at
        .filter_map(|n| Some((n, workload.declarations_error(n, series.iterations)?)))
        .next()
    {
        notes.push(format!(
            "the spec's declarations could not be evaluated at N = {size} ({why}): the prediction used none of them (bytes, flops, gathers, walks, searches)"
        ));
    }
    // In device memory the rate also depends on how much of the working set a cache still
    // holds, which on a shared machine changes from minute to minute; with none, it is
    // BabelStream's. The interval reaches the time at that rate.
    let in_memory =
        device.levels.len() > 1 && target_level == device.levels[device.levels.len() - 1].0;
    let slower: Vec<LevelMove> = match (target_rate, device.memory_floor) {
        (Some(rate), Some(floor)) if in_memory && floor > 0.0 && floor < rate => {
            notes.push(format!(
                "device memory streams at {} GB/s with no cache's help (BabelStream) and {} GB/s in the sweep at the target's working set: the interval reaches the slower",
                sig(floor * 1e-9, 3),
                sig(rate * 1e-9, 3)
            ));
            at_target_rate(&level_moves, floor, rate)
        }
        _ => Vec::new(),
    };
    // The memory level's rate also moved from sample to sample of the calibration's own
    // sweep (on the 2-vCPU VM, by 5–60 % between its median and its fastest tenth): a target
    // that runs at another moment may meet the fast end of that spread. The interval reaches
    // the time at the rate of the sweep's fastest tenth of samples.
    let faster: Vec<LevelMove> = match (target_rate, device.streaming_spread_at(target_bytes)) {
        (Some(rate), Some(spread)) if in_memory && spread > 1.0 => {
            notes.push(format!(
                "the sweep's fastest tenth of samples at the target's working set ran {} % above its median: the interval reaches the time at that rate",
                sig((spread - 1.0) * 100.0, 2)
            ));
            at_target_rate(&level_moves, rate * spread, rate)
        }
        _ => Vec::new(),
    };
    // The hyperplane sweep's rate at the target is the median of its cubes': the interval
    // reaches the moves at the slowest and the fastest of them too.
    let planes_slow = at_plane_bounds(&level_moves, workload, series, device, large, true);
    let planes_fast = at_plane_bounds(&level_moves, workload, series, device, large, false);
    if !planes_slow.is_empty() {
        let names: Vec<&str> = hyperplane_phases(workload).iter().map(|p| p.0).collect();
        notes.push(format!(
            "{} moved by the hyperplane sweep: the interval also reaches the moves at its slowest and fastest cube's rate at the target's working set",
            names.join(" and ")
        ));
    }
    let forecast = if choice.accepted.len() < 3 {
        notes.push(format!(
            "only {} small size(s) are saturated and not overhead-dominated, 3 are needed",
            choice.accepted.len()
        ));
        None
    } else {
        let mut medians = series.medians();
        medians.drift_shared = shared;
        medians.target_amounts = declared_target_amounts(workload, series, large);
        match forecast_calibrated_bounded(
            &medians,
            large as f64,
            &level_moves,
            &[&slower, &faster, &planes_slow, &planes_fast],
            device.launch_seconds,
        ) {
            Ok(mut f) => {
                // The model's own error, which none of the interval's other parts allows
                // for (docs/models.md §2.4, "The model's error").
                for c in f.phases.iter_mut().filter_map(|p| p.calibrated.as_mut()) {
                    c.interval_seconds = widen_for_model_error(
                        c.prediction_seconds,
                        c.interval_seconds,
                        MODEL_ERROR,
                    );
                }
                notes.push(format!(
                    "each calibrated interval includes the model's own error, ×/÷ {} in quadrature, measured on the development ports",
                    sig(MODEL_ERROR.exp(), 3)
                ));
                Some(f)
            }
            Err(e) => {
                notes.push(format!("the calibrated fit failed: {e}"));
                None
            }
        }
    };
    (
        LargeWindow {
            size: large,
            choice,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            level_moves,
        },
        forecast,
    )
}

#[cfg(test)]
mod tests;

/// A spec written with its kernel source (`k.cl`) into a temporary folder and loaded, for
/// the declarations' tests; the folder lives as long as the first value.
#[cfg(test)]
fn spec_in_temp(
    spec: &str,
    kernel: &str,
) -> (tempfile::TempDir, crate::workloads::spec::SpecWorkload) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("k.cl"), kernel).expect("kernel written");
    let path = dir.path().join("spec.toml");
    std::fs::write(&path, spec).expect("spec written");
    let loaded = crate::workloads::spec::load(&path).expect("the spec loads");
    (dir, loaded)
}
