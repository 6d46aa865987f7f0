//! Launch overhead and host↔device transfers (the DVM Predictor's two communication
//! numbers, docs/models.md §5: `time = start_time + bytes × time_per_byte`).
//!
//! Transfer sizes span four orders of magnitude, so the line is fitted by weighted least
//! squares on relative residuals ([`fit_line_relative`]): an ordinary fit would follow the
//! largest transfers alone and leave a meaningless (often negative) start time.

use serde::{Deserialize, Serialize};

use super::{verify, BenchContext, BenchError};
use crate::backend::{Arg, BackendError, Buffer, Device, Launch, Program};
use crate::fit::linear::{fit_line, fit_line_relative};
use crate::fit::stats::median_of_sorted;
use crate::units::Seconds;

/// Cost of launching an empty kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchOverhead {
    /// Device-timed duration of an empty kernel, ns.
    pub device_ns: f64,
    /// Its 95 % CI.
    pub device_ci95_ns: [f64; 2],
    /// Host wall time from launch call to completion, ns (what a program pays per launch).
    pub wall_ns: f64,
    /// Its 95 % CI.
    pub wall_ci95_ns: [f64; 2],
    /// The empty kernel launched back to back, as a workload's launches are, over
    /// [`SEQUENCE_ITEMS`] work items in the device's preferred groups, device-timed: a line
    /// through the medians splits its time into a fixed cost per launch and a cost per work
    /// item (on a CPU runtime, handing out work-groups). Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<LaunchLine>,
}

/// The empty kernel's device time against its work items: `fixed + per_item × items`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchLine {
    /// The intercept, ns: what every launch costs before any work, the L predictions use
    /// (clamped at zero).
    pub fixed_ns: f64,
    /// Its 95 % CI.
    pub fixed_ci95_ns: [f64; 2],
    /// The slope, ns per work item: part of a kernel's work, not of its launch.
    pub per_item_ns: f64,
    /// R² of the line.
    pub r_squared: f64,
    /// `[work items, median ns]` per size.
    pub points: Vec<[f64; 2]>,
}

/// Work items of the back-to-back empty launches (rounded to whole groups).
pub const SEQUENCE_ITEMS: [usize; 4] = [1 << 10, 1 << 12, 1 << 14, 1 << 16];

impl LaunchLine {
    /// The least-squares line through `[work items, ns]` points; `None` where it cannot be
    /// fitted (fewer than three points, all at one size).
    pub fn through(points: Vec<[f64; 2]>) -> Option<LaunchLine> {
        let xs: Vec<f64> = points.iter().map(|p| p[0]).collect();
        let ys: Vec<f64> = points.iter().map(|p| p[1]).collect();
        fit_line(&xs, &ys).ok().map(|line| LaunchLine {
            fixed_ns: line.intercept.max(0.0),
            fixed_ci95_ns: line.intercept_ci95.map(|v| v.max(0.0)),
            per_item_ns: line.slope,
            r_squared: line.r_squared,
            points,
        })
    }
}

/// The back-to-back launches on `device`: [`SEQUENCE_ITEMS`] work items, rounded to whole
/// groups of the device's preferred size.
fn sequence_launches(device: &dyn Device) -> Vec<Launch> {
    let group = device.preferred_group_size().clamp(1, SEQUENCE_ITEMS[0]);
    SEQUENCE_ITEMS
        .iter()
        .map(|&items| Launch::linear((items / group).max(1) * group, group))
        .collect()
}

/// Launches of each size in one [`LaunchProber::sample`].
pub const PROBE_LAUNCHES: usize = 9;

/// The back-to-back launch line measured again beside other work, a few launches at a time:
/// a series takes one sample in each of its rounds, so the launch cost its predictions use
/// is the one the machine charged while the series ran, not the one of a calibration made at
/// another time (on a shared machine the two differ: 240 and 456 ns per launch on PoCL in two
/// calibrations an hour apart, each with a narrow interval).
pub struct LaunchProber<'d> {
    device: &'d dyn Device,
    program: Program,
    sink: Buffer,
    launches: Vec<Launch>,
    rounds: Vec<Vec<f64>>,
}

/// What a [`LaunchProber`] measured: the line through every size's median over all samples,
/// and each sample's own fixed part (how far the launch cost wandered).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchProbe {
    /// The line `fixed + per_item × items` through the medians over the samples; its fixed
    /// part is the L a prediction from the series uses.
    pub line: LaunchLine,
    /// Each sample's fixed part, ns, in the order taken.
    pub sample_fixed_ns: Vec<f64>,
}

impl<'d> LaunchProber<'d> {
    /// Compile the empty kernel for `device` and allocate its argument.
    pub fn new(device: &'d dyn Device) -> Result<Self, BackendError> {
        let program = device.compile(&super::kernels::program())?;
        let sink = device.alloc(4)?;
        Ok(LaunchProber {
            device,
            program,
            sink,
            launches: sequence_launches(device),
            rounds: Vec::new(),
        })
    }

    /// One sample: [`PROBE_LAUNCHES`] back-to-back empty launches at each of
    /// [`SEQUENCE_ITEMS`], device-timed; the median of each size is kept.
    pub fn sample(&mut self) -> Result<(), BackendError> {
        let mut medians = Vec::with_capacity(self.launches.len());
        for launch in &self.launches {
            let mut times = (0..PROBE_LAUNCHES)
                .map(|_| {
                    self.device
                        .launch(&self.program, "empty", launch, &[Arg::Buf(&self.sink)])
                        .map(|t| t.0 * 1e9)
                })
                .collect::<Result<Vec<f64>, _>>()?;
            times.sort_by(f64::total_cmp);
            medians.push(median_of_sorted(&times));
        }
        self.rounds.push(medians);
        Ok(())
    }

    /// The line through the medians of every size over all samples; `None` before any.
    pub fn finish(&self) -> Option<LaunchProbe> {
        let items = |i: usize| self.launches[i].global[0] as f64;
        let sample_fixed_ns = self
            .rounds
            .iter()
            .filter_map(|r| {
                let points = r.iter().enumerate().map(|(i, &t)| [items(i), t]).collect();
                LaunchLine::through(points).map(|l| l.fixed_ns)
            })
            .collect();
        let points = (0..self.launches.len())
            .map(|i| {
                let mut at: Vec<f64> = self.rounds.iter().map(|r| r[i]).collect();
                at.sort_by(f64::total_cmp);
                (!at.is_empty()).then(|| [items(i), median_of_sorted(&at)])
            })
            .collect::<Option<Vec<_>>>()?;
        Some(LaunchProbe {
            line: LaunchLine::through(points)?,
            sample_fixed_ns,
        })
    }
}

impl LaunchOverhead {
    /// The overhead L each launch of a workload pays, seconds: the fixed part of the
    /// back-to-back line where measured, else the single-item empty kernel.
    pub fn per_launch(&self) -> Seconds {
        Seconds::from_ns(
            self.sequence
                .as_ref()
                .map_or(self.device_ns, |s| s.fixed_ns),
        )
    }
}

/// A transfer direction fitted as start time + bytes × time per byte.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferFit {
    /// `host_to_device` or `device_to_host`.
    pub direction: String,
    /// Start time (intercept), ns.
    pub start_ns: f64,
    /// Its 95 % CI.
    pub start_ci95_ns: [f64; 2],
    /// Time per byte (slope), ns.
    pub ns_per_byte: f64,
    /// Its 95 % CI.
    pub ns_per_byte_ci95: [f64; 2],
    /// 1 / time per byte, GB/s; `None` when the slope is not positive.
    pub bandwidth_gbps: Option<f64>,
    /// R² of the fit.
    pub r_squared: f64,
    /// Sizes `[smallest, largest]`, bytes.
    pub fit_range_bytes: [usize; 2],
    /// Median time per size, `[bytes, ns]`.
    pub points: Vec<[f64; 2]>,
}

/// Measure the empty-kernel overhead, device-timed and wall.
pub fn launch_overhead(ctx: &mut BenchContext<'_>) -> Result<LaunchOverhead, BenchError> {
    let sink = ctx.device.alloc(4)?;
    let launch = Launch::single();
    let device = ctx.measure("empty_device_s", || {
        Ok(ctx.launch("empty", &launch, &[Arg::Buf(&sink)])?.0)
    })?;
    ctx.record("empty_device_s", &device);
    let wall = ctx.measure("empty_wall_s", || {
        Ok(ctx
            .device
            .launch_wall(&ctx.program, "empty", &launch, &[Arg::Buf(&sink)])?
            .0)
    })?;
    ctx.record("empty_wall_s", &wall);
    let mut points = Vec::new();
    for wide in sequence_launches(ctx.device) {
        let items = wide.global[0];
        let name = format!("empty_sequence_device_s/{items}");
        let m = ctx.measure(&name, || {
            Ok(ctx.launch("empty", &wide, &[Arg::Buf(&sink)])?.0)
        })?;
        ctx.record(&name, &m);
        points.push([items as f64, m.summary.median * 1e9]);
    }
    let sequence = LaunchLine::through(points);
    let ns = |v: f64| v * 1e9;
    Ok(LaunchOverhead {
        device_ns: ns(device.summary.median),
        device_ci95_ns: device.summary.ci95.map(ns),
        wall_ns: ns(wall.summary.median),
        wall_ci95_ns: wall.summary.ci95.map(ns),
        sequence,
    })
}

/// Transfer sizes: 4 KiB, ×4 apart, up to `reach` bytes and at least to 64 MiB (the same with
/// `--quick`, which takes fewer samples of each), at most half the largest allocation. The
/// calibration passes the streaming sweep's reach, 4× the last-level cache: a prediction's
/// target transfers are that large, and a copy's cost per byte still changes past the cache
/// (until 2026-11-27 the sweep stopped at 64 MiB; on the Intel VM, 260 MiB of L3 as reported,
/// the host copied 64 MiB at 5.3–10.5 GB/s and the suite's 268–550 MB transfers at 10–12,
/// glibc's copy switching to non-temporal stores between the two, and the transfer estimate,
/// which takes the sweep's last point past its end, came out 30–110 % high).
pub fn transfer_sizes(reach: usize, max_alloc: u64) -> Vec<usize> {
    let top = reach.max(64 << 20).min((max_alloc / 2) as usize);
    let mut sizes = Vec::new();
    let mut s = 4usize << 10;
    while s <= top {
        sizes.push(s);
        s *= 4;
    }
    sizes
}

/// Measure and fit both directions, at [`transfer_sizes`] up to `reach` bytes.
pub fn transfers(ctx: &mut BenchContext<'_>, reach: usize) -> Result<Vec<TransferFit>, BenchError> {
    let sizes = transfer_sizes(reach, ctx.device.info().max_alloc_bytes);
    let largest = *sizes.last().unwrap_or(&4096);
    let buf = ctx.device.alloc(largest)?;
    let pattern: Vec<u8> = (0..largest).map(|i| (i * 7 + 3) as u8).collect();
    let mut back = vec![0u8; largest];
    ctx.device.upload(&buf, &pattern)?;
    ctx.device.download(&buf, &mut back)?;
    verify(back == pattern, "transfers", || {
        "data read back differs from data written".into()
    })?;
    let mut up = Vec::new();
    let mut down = Vec::new();
    for &bytes in &sizes {
        let name = format!("host_to_device_s/{bytes}");
        let m = ctx.measure(&name, || Ok(ctx.device.upload(&buf, &pattern[..bytes])?.0))?;
        ctx.record(&name, &m);
        up.push([bytes as f64, m.summary.median * 1e9]);
        let name = format!("device_to_host_s/{bytes}");
        let m = ctx.measure(&name, || {
            Ok(ctx.device.download(&buf, &mut back[..bytes])?.0)
        })?;
        ctx.record(&name, &m);
        down.push([bytes as f64, m.summary.median * 1e9]);
    }
    Ok(vec![
        fit_transfer("host_to_device", up)?,
        fit_transfer("device_to_host", down)?,
    ])
}

fn fit_transfer(direction: &str, points: Vec<[f64; 2]>) -> Result<TransferFit, BenchError> {
    let x: Vec<f64> = points.iter().map(|p| p[0]).collect();
    let y: Vec<f64> = points.iter().map(|p| p[1]).collect();
    let fit = fit_line_relative(&x, &y).map_err(|source| BenchError::Fit {
        what: format!("{direction} transfers"),
        source,
    })?;
    Ok(TransferFit {
        direction: direction.to_string(),
        start_ns: fit.intercept,
        start_ci95_ns: fit.intercept_ci95,
        ns_per_byte: fit.slope,
        ns_per_byte_ci95: fit.slope_ci95,
        bandwidth_gbps: (fit.slope > 0.0).then(|| 1.0 / fit.slope),
        r_squared: fit.r_squared,
        fit_range_bytes: [x[0] as usize, x[x.len() - 1] as usize],
        points,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_go_from_4_kib_by_four_and_respect_the_allocation_limit() {
        let sizes = transfer_sizes(0, 1 << 40);
        assert_eq!(sizes.first(), Some(&(4 << 10)));
        assert_eq!(sizes.last(), Some(&(64 << 20)));
        assert!(sizes.windows(2).all(|w| w[1] == 4 * w[0]));
        // Up to the reach asked for (the streaming sweep's, 4× the last-level cache), past
        // 64 MiB where it is larger, by the same steps.
        assert_eq!(transfer_sizes(1 << 30, 1 << 40).last(), Some(&(1 << 30)));
        assert_eq!(transfer_sizes(200 << 20, 1 << 40).last(), Some(&(64 << 20)));
        // At most half the largest allocation.
        assert_eq!(transfer_sizes(1 << 30, 1 << 20).last(), Some(&(256 << 10)));
        assert_eq!(transfer_sizes(1 << 30, 1 << 29).last(), Some(&(256 << 20)));
    }

    #[test]
    fn the_fit_recovers_start_time_and_bandwidth() {
        // 2 µs to start, 0.1 ns per byte (10 GB/s), over four orders of magnitude.
        let points: Vec<[f64; 2]> = transfer_sizes(0, 1 << 40)
            .into_iter()
            .map(|b| [b as f64, 2000.0 + 0.1 * b as f64])
            .collect();
        let fit = fit_transfer("host_to_device", points).expect("fits");
        assert!((fit.start_ns - 2000.0).abs() < 1e-6, "{}", fit.start_ns);
        assert!((fit.ns_per_byte - 0.1).abs() < 1e-12, "{}", fit.ns_per_byte);
        let gbps = fit.bandwidth_gbps.expect("positive slope");
        assert!((gbps - 10.0).abs() < 1e-9, "{gbps}");
        assert!(fit.r_squared > 0.999_999);
        assert_eq!(fit.fit_range_bytes, [4 << 10, 64 << 20]);
        assert!(fit.start_ci95_ns[0] <= fit.start_ns && fit.start_ns <= fit.start_ci95_ns[1]);
    }

    #[test]
    fn the_prober_keeps_one_line_per_sample_and_fits_their_medians() {
        let host = crate::backend::host::HostDevice::new();
        let mut prober = LaunchProber::new(&host).expect("compiles");
        assert_eq!(prober.finish(), None, "no sample, no probe");
        for _ in 0..3 {
            prober.sample().expect("launches");
        }
        let probe = prober.finish().expect("a probe");
        assert_eq!(probe.sample_fixed_ns.len(), 3);
        let items: Vec<f64> = probe.line.points.iter().map(|p| p[0]).collect();
        let want: Vec<f64> = sequence_launches(&host)
            .iter()
            .map(|l| l.global[0] as f64)
            .collect();
        assert_eq!(items.len(), SEQUENCE_ITEMS.len());
        assert_eq!(items, want);
        assert!(probe.line.points.iter().all(|p| p[1] >= 0.0));
        assert!(probe.line.fixed_ns >= 0.0);
    }

    #[test]
    fn a_line_through_the_probes_medians_recovers_fixed_and_per_item_costs() {
        let points: Vec<[f64; 2]> = SEQUENCE_ITEMS
            .iter()
            .map(|&i| [i as f64, 240.0 + 0.09 * i as f64])
            .collect();
        let line = LaunchLine::through(points).expect("a line");
        assert!((line.fixed_ns - 240.0).abs() < 1e-6, "{}", line.fixed_ns);
        assert!(
            (line.per_item_ns - 0.09).abs() < 1e-9,
            "{}",
            line.per_item_ns
        );
        assert_eq!(LaunchLine::through(vec![[1.0, 2.0]]), None);
    }

    #[test]
    fn a_falling_line_has_no_bandwidth() {
        let points = vec![[1e3, 5e3], [1e4, 4e3], [1e5, 3e3]];
        let fit = fit_transfer("device_to_host", points).expect("fits");
        assert!(fit.ns_per_byte < 0.0);
        assert_eq!(fit.bandwidth_gbps, None);
    }
}
