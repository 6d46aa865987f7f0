//! Microbenchmarks that measure the max-plus model's parameters (docs/models.md §1) on a device:
//! read and write latency (t, T), serialization intervals (Δt, ΔT), operation time (τ),
//! simultaneous executors (n), launch overhead and transfers.
//!
//! Every benchmark checks its kernel's output against the host twin before believing a time.

pub mod babelstream;
pub mod bandwidth;
pub mod cache_passes;
pub mod gaps;
pub mod gather;
pub mod hyperplane;
pub mod kernels;
pub mod latency;
pub mod ops;
pub mod pages;
pub mod permutation;
pub mod sampling;
pub mod stencil;
pub mod transfer;
pub mod transpose;

use std::collections::BTreeMap;

use indicatif::ProgressBar;
use thiserror::Error;

use crate::backend::{Arg, BackendError, Buffer, Device, Launch, Program};
use crate::fit::linear::LinearFitError;
use crate::fit::stats::StatsError;
use crate::units::Seconds;
pub use sampling::{Measured, SamplingPlan};

/// Errors of a benchmark run.
#[derive(Debug, Error)]
pub enum BenchError {
    /// The device failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A kernel's output disagrees with the host twin.
    #[error("verification failed in {benchmark}: {detail}")]
    Mismatch {
        /// The benchmark.
        benchmark: String,
        /// What differed.
        detail: String,
    },
    /// A statistic could not be formed.
    #[error("statistics for {what}: {source}")]
    Stats {
        /// What was measured.
        what: String,
        /// Why.
        source: StatsError,
    },
    /// A fit could not be formed.
    #[error("fit for {what}: {source}")]
    Fit {
        /// What was fitted.
        what: String,
        /// Why.
        source: LinearFitError,
    },
    /// A difference of two timings stayed within the noise, so the quantity is unresolved.
    #[error("{what} could not be resolved from the noise: {detail}")]
    Unresolved {
        /// What was measured.
        what: String,
        /// The numbers that show it.
        detail: String,
    },
    /// The user interrupted the run.
    #[error("interrupted")]
    Interrupted,
}

/// Everything a benchmark needs: the device, the compiled program, the sampling plan, the
/// progress bar and the raw samples it records.
pub struct BenchContext<'d> {
    /// The device under test.
    pub device: &'d dyn Device,
    /// The compiled microbenchmark program.
    pub program: Program,
    /// How many repetitions to take.
    pub plan: SamplingPlan,
    /// Fewer samples (the quick plan); the quantities and sizes stay the same.
    pub quick: bool,
    /// Progress display (hidden when not on a terminal).
    pub progress: ProgressBar,
    /// Raw samples by name, for the calibration file.
    pub samples: BTreeMap<String, Vec<f64>>,
    /// Seeds used for random permutations, by purpose.
    pub seeds: BTreeMap<String, u64>,
    /// Set by Ctrl-C; checked between measurements.
    pub interrupted: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The fewest samples [`BenchContext::measure_summed`] takes: six is the fewest whose order
/// statistics bound a median with 95 % confidence.
pub const MIN_SUMMED_SAMPLES: usize = 6;

impl<'d> BenchContext<'d> {
    /// Compile the microbenchmark program for `device`.
    pub fn new(
        device: &'d dyn Device,
        plan: SamplingPlan,
        quick: bool,
    ) -> Result<Self, BenchError> {
        let program = device.compile(&kernels::program())?;
        Ok(BenchContext {
            device,
            program,
            plan,
            quick,
            progress: ProgressBar::hidden(),
            samples: BTreeMap::new(),
            seeds: BTreeMap::new(),
            interrupted: Default::default(),
        })
    }

    /// Launch a kernel of the microbenchmark program; device-timed.
    pub fn launch(
        &self,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BenchError> {
        self.check_interrupted()?;
        Ok(self.device.launch(&self.program, kernel, launch, args)?)
    }

    /// Run a kernel of `program` once and time it by the host's wall clock alone, as
    /// BabelStream does ([`crate::backend::Device::launch_wall`]).
    pub fn launch_wall_in(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BenchError> {
        self.check_interrupted()?;
        Ok(self.device.launch_wall(program, kernel, launch, args)?)
    }

    /// `Err(Interrupted)` once Ctrl-C has been pressed: each launch checks it first.
    fn check_interrupted(&self) -> Result<(), BenchError> {
        if self.interrupted.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(BenchError::Interrupted);
        }
        Ok(())
    }

    /// Run a kernel of `program` twice and time it both ways: (device-timed duration, host
    /// wall time). The wall time is taken as BabelStream takes it, from before the launch
    /// call to after a synchronisation, with no events created or recorded in between
    /// ([`crate::backend::Device::launch_wall`]); the device time comes from a second launch
    /// timed by the device. Until 2026-11-26 one launch gave both, and the wall time then
    /// included creating, recording and waiting on the device's events: on the H100 our
    /// copy of 2 GiB read 2822 GB/s by the wall clock and 2909 by the device, BabelStream's
    /// own 2981 by the wall clock. The kernel must give the same result when run twice in a
    /// row (BabelStream's five do: each writes what it reads from other arrays).
    pub fn launch_timed_both_in(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<(Seconds, Seconds), BenchError> {
        let wall = self.launch_wall_in(program, kernel, launch, args)?;
        let device = self.device.launch(program, kernel, launch, args)?;
        Ok((device, wall))
    }

    /// Measure `run` under the plan; `name` labels the progress line and errors.
    pub fn measure(
        &self,
        name: &str,
        run: impl FnMut() -> Result<f64, BenchError>,
    ) -> Result<Measured, BenchError> {
        self.progress.set_message(name.to_string());
        sampling::measure(&self.plan, name, run)
    }

    /// [`Self::measure`] for a quantity whose every sample already sums `parts` independent
    /// timings (the hyperplane walk's groups of planes): its cap on samples is the plan's
    /// divided by `parts` (at least the plan's minimum), so that it times as many parts as
    /// the plan's cap would take single timings. Such a sample varies less than one timing,
    /// and where it still misses the target, more of them cost `parts` launches each. For
    /// the same reason its minimum is the plan's over `parts`, but never under
    /// [`MIN_SUMMED_SAMPLES`].
    pub fn measure_summed(
        &self,
        name: &str,
        parts: usize,
        run: impl FnMut() -> Result<f64, BenchError>,
    ) -> Result<Measured, BenchError> {
        self.progress.set_message(name.to_string());
        let min_runs = (self.plan.min_runs / parts.max(1))
            .max(MIN_SUMMED_SAMPLES)
            .min(self.plan.min_runs);
        let plan = SamplingPlan {
            max_runs: (self.plan.max_runs / parts.max(1)).max(self.plan.min_runs),
            min_runs,
            ..self.plan.clone()
        };
        sampling::measure(&plan, name, run)
    }

    /// Measure several quantities in rounds ([`sampling::measure_in_rounds`]); `run(i)`
    /// takes one sample of `names[i]`.
    pub fn measure_in_rounds(
        &self,
        names: &[String],
        run: impl FnMut(usize) -> Result<f64, BenchError>,
    ) -> Result<Vec<Measured>, BenchError> {
        if let Some(first) = names.first() {
            self.progress.set_message(format!("{first} … in rounds"));
        }
        sampling::measure_in_rounds(&self.plan, names, run)
    }

    /// [`Self::measure_in_rounds`], the quantities whose working sets `past_caches` marks
    /// sampled without discarded runs after their first visit
    /// ([`sampling::measure_in_rounds_past_caches`]).
    pub fn measure_in_rounds_past_caches(
        &self,
        names: &[String],
        past_caches: &[bool],
        run: impl FnMut(usize) -> Result<f64, BenchError>,
    ) -> Result<Vec<Measured>, BenchError> {
        if let Some(first) = names.first() {
            self.progress.set_message(format!("{first} … in rounds"));
        }
        sampling::measure_in_rounds_past_caches(&self.plan, names, past_caches, run)
    }

    /// Whether a working set of `bytes` lies past the device's caches: twice the largest
    /// cache the device reports, or more (never where it reports none).
    pub fn past_caches(&self, bytes: usize) -> bool {
        self.device
            .info()
            .l2_bytes
            .is_some_and(|c| bytes as u64 >= c.saturating_mul(2))
    }

    /// Keep the raw samples of `measured` under `name` for the calibration file.
    pub fn record(&mut self, name: &str, measured: &Measured) {
        self.samples
            .insert(name.to_string(), measured.samples.clone());
        self.progress.inc(1);
    }

    /// A work-group size for 1-D launches on this device.
    pub fn group(&self) -> usize {
        self.device.preferred_group_size()
    }
}

/// Fail with a mismatch unless every value of `got` lies within a part in 10⁵ of `want`'s
/// (a device may contract an update into fused multiply-adds); the first that does not is
/// named by `point` (its index as coordinates) with both values.
pub fn verify_values(
    benchmark: &str,
    got: &[f32],
    want: &[f32],
    point: impl Fn(usize) -> String,
) -> Result<(), BenchError> {
    let bad = (0..want.len().min(got.len()))
        .find(|&x| (got[x] - want[x]).abs() > 1e-5 * want[x].abs().max(1.0));
    verify(bad.is_none() && got.len() == want.len(), benchmark, || {
        let x = bad.unwrap_or(0);
        format!(
            "point {} is {}, the update gives {}",
            point(x),
            got.get(x).copied().unwrap_or(f32::NAN),
            want.get(x).copied().unwrap_or(f32::NAN)
        )
    })
}

/// Floats a check reads back at a time ([`first_mismatch`]): 16 MiB.
pub const CHECK_CHUNK: usize = 1 << 22;

/// The first of the first `n` floats of `buf` for which `wrong(i, value)` holds, read back
/// [`CHECK_CHUNK`] floats at a time into `scratch` (grown to a chunk once): a sweep's checks
/// of arrays up to a gigabyte then reuse one small host array instead of faulting in a fresh
/// one as large as the array (a second per gigabyte on a 2-core VM). Each chunk is first
/// counted without stopping, which vectorises, and searched only where something is wrong.
pub fn first_mismatch(
    device: &dyn Device,
    buf: &Buffer,
    n: usize,
    scratch: &mut Vec<f32>,
    wrong: impl Fn(usize, f32) -> bool,
) -> Result<Option<usize>, BenchError> {
    if scratch.len() < CHECK_CHUNK.min(n) {
        scratch.resize(CHECK_CHUNK.min(n), 0.0);
    }
    let mut start = 0;
    while start < n {
        let len = CHECK_CHUNK.min(n - start);
        let out = &mut scratch[..len];
        device.download_from(buf, 4 * start, bytemuck::cast_slice_mut(out))?;
        let bad = out
            .iter()
            .enumerate()
            .filter(|&(j, &v)| wrong(start + j, v))
            .count();
        if bad > 0 {
            let j = out
                .iter()
                .enumerate()
                .position(|(j, &v)| wrong(start + j, v));
            return Ok(j.map(|j| start + j));
        }
        start += len;
    }
    Ok(None)
}

/// Fail with a mismatch unless `ok`.
pub fn verify(
    ok: bool,
    benchmark: &str,
    detail: impl FnOnce() -> String,
) -> Result<(), BenchError> {
    if ok {
        Ok(())
    } else {
        Err(BenchError::Mismatch {
            benchmark: benchmark.to_string(),
            detail: detail(),
        })
    }
}
