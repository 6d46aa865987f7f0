//! Validation workloads (docs/models.md §4): programs that run on every backend at a given size,
//! verified against the host, with per-phase device timing.
//!
//! A workload is anything that implements [`Workload`]; the built-in ones and the
//! bring-your-own spec files share the [`PhaseRecorder`] and [`RunResult`] types so that
//! `run`, `series` and the predictors treat them alike.

pub mod access;
pub mod adi;
pub mod grid3d;
pub mod line_solve;
pub mod lu_ssor;
pub mod phases;
pub mod registry;
pub mod session;
pub mod sor_batch;
pub mod spec;
pub mod stencil;
pub mod stream;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::backend::{BackendError, Device};
pub use access::Access;
pub use phases::{PhaseRecorder, PhaseTiming};

/// Errors of a workload run.
#[derive(Debug, Error)]
pub enum WorkloadError {
    /// The device failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The device's result disagrees with the host's.
    #[error("{workload} at size {size}: result differs from the host (max abs error {max_abs:e}, max rel error {max_rel:e})")]
    Mismatch {
        /// The workload.
        workload: String,
        /// The size.
        size: usize,
        /// Largest absolute error.
        max_abs: f64,
        /// Largest relative error.
        max_rel: f64,
    },
    /// The buffers do not fit.
    #[error("{workload} at size {size} needs {needed} bytes of device memory but {available} are available")]
    TooLarge {
        /// The workload.
        workload: String,
        /// The size.
        size: usize,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// The arrays and their host copies do not fit the host's available memory.
    #[error("{workload} at size {size} needs about {needed} bytes of host memory ({what}) but {available} are available now (MemAvailable, or less under the process's memory limit)")]
    HostMemory {
        /// The workload.
        workload: String,
        /// The size.
        size: usize,
        /// Bytes needed on the host.
        needed: u64,
        /// What they are.
        what: &'static str,
        /// Bytes the kernel reports available.
        available: u64,
    },
    /// A workload name nobody knows.
    #[error("unknown workload '{name}'; known: {known}")]
    Unknown {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// Anything else the user must fix (bad size, bad layout, bad spec).
    #[error("{0}")]
    Invalid(String),
}

/// How a device result compared with the host reference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// Largest absolute difference.
    pub max_abs_error: f64,
    /// Largest relative difference.
    pub max_rel_error: f64,
    /// Tolerance used (relative).
    pub tolerance: f64,
    /// Whether it passed.
    pub passed: bool,
    /// What the result was compared with, where it was not the host implementation: a
    /// spec's closed-form formula, or its reference run (`gemm-reference.toml on …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub against: Option<String>,
}

/// One run of a workload: its phases, total, and verification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Workload name.
    pub workload: String,
    /// Problem size N.
    pub size: usize,
    /// Iterations run.
    pub iterations: usize,
    /// Per-phase device time, count and fraction.
    pub phases: Vec<PhaseTiming>,
    /// Sum of the phases, seconds.
    pub total_seconds: f64,
    /// Sum of the kernel phases (every phase but transfers and host steps, as
    /// [`crate::fit::forecast::is_kernel_phase`] tells them), seconds: the program's device
    /// time without its uploads and downloads.
    #[serde(default)]
    pub kernel_seconds: f64,
    /// The host comparison, when one was made.
    pub verification: Option<Verification>,
}

/// Bytes of `copies` arrays of 4-byte elements, `size`^`dims` each, plus `extra`: saturating
/// at `u64::MAX`, so that an absurd size is refused by the memory check ([`check_fits`])
/// instead of wrapping round to a small number that passes it.
///
/// ```
/// use harness::workloads::grid_bytes;
/// assert_eq!(grid_bytes(2, 1000, 2, 4), 8_000_004);
/// assert_eq!(grid_bytes(3, usize::MAX / 4, 1, 0), u64::MAX);
/// assert_eq!(grid_bytes(1, 1 << 40, 3, 0), u64::MAX);
/// ```
pub fn grid_bytes(copies: u64, size: usize, dims: u32, extra: u64) -> u64 {
    (size as u64)
        .checked_pow(dims)
        .and_then(|n| n.checked_mul(4 * copies))
        .and_then(|b| b.checked_add(extra))
        .unwrap_or(u64::MAX)
}

/// Array layout of a workload that has two: the plain one, and one reordered for the
/// device's access pattern ("dynamic array reordering", docs/models.md §4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// The program's own layout.
    Plain,
    /// Permuted or skewed so that consecutive executors touch consecutive addresses.
    Reordered,
}

impl std::str::FromStr for Layout {
    type Err = WorkloadError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "plain" => Ok(Layout::Plain),
            "reordered" => Ok(Layout::Reordered),
            other => Err(WorkloadError::Invalid(format!(
                "unknown layout '{other}'; use plain or reordered"
            ))),
        }
    }
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Layout::Plain => "plain",
            Layout::Reordered => "reordered",
        })
    }
}

/// What one kernel declares over a run, without running it ([`Workload::declared_amounts`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredAmounts {
    /// The kernel, as its phase is named.
    pub kernel: String,
    /// Its launches in the run.
    pub launches: u64,
    /// The sum of its launches' `bytes`, where every launch declares them.
    pub bytes: Option<u64>,
    /// The sum of its launches' `flops`, where every launch declares them.
    pub flops: Option<u64>,
    /// The buffers its launches read at indices another array holds (a spec's `gathers`),
    /// with the sum of those reads; empty where none declares any.
    pub gathers: Vec<GatheredReads>,
    /// The buffers its launches binary-search (a spec's `searches`), each as the first
    /// launch that searches it declares; empty where none declares any.
    pub searches: Vec<SearchedBuffer>,
    /// The buffers its launches' work items walk a stride apart (a spec's `walks`), each
    /// with the steps over the run; empty where none declares any.
    pub walks: Vec<WalkedBuffer>,
}

/// One buffer a kernel's work items walk a stride apart ([`DeclaredAmounts::walks`]), as
/// its first launch that walks it declares, with the steps of all its launches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedBuffer {
    /// The buffer's name.
    pub buffer: String,
    /// Bytes from one step to the next.
    pub stride_bytes: u64,
    /// Steps of one work item's walk.
    pub steps: u64,
    /// Work items × steps over the run.
    pub item_steps: u64,
}

/// One buffer a kernel's work items binary-search ([`DeclaredAmounts::searches`]): sorted
/// arrays side by side, each searched from its middle down to one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchedBuffer {
    /// The buffer's name.
    pub buffer: String,
    /// Its size in bytes at the run's size.
    pub bytes: u64,
    /// The sorted arrays it holds (at least 1).
    pub arrays: u64,
    /// Bytes from one key to the next (at least 1).
    pub stride_bytes: u64,
}

/// One buffer a kernel reads at indices another array holds, over a run
/// ([`DeclaredAmounts::gathers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatheredReads {
    /// The buffer's name.
    pub buffer: String,
    /// Its size in bytes at the run's size.
    pub bytes: u64,
    /// The bytes of it a stretch of [`STRETCH_READS`] consecutive reads covers, where the
    /// index buffer's initial contents say (a band's width; at most `bytes`). `None`: not
    /// known, or not asked for ([`Workload::declared_amounts_with_footprints`]). Shown, not
    /// charged (docs/decisions.md, "Gathers looked up at their footprint").
    pub footprint: Option<u64>,
    /// The reads over the run.
    pub reads: u64,
}

/// Consecutive reads whose span of a gathered buffer is its footprint
/// ([`GatheredReads::footprint`]): long enough to cross many rows of a sparse product (27
/// reads a row for a 3-D stencil's matrix), short against any cache's lines.
pub const STRETCH_READS: usize = 1024;

/// A program that can be run at a size on any device.
pub trait Workload {
    /// The command-line name (`sor`, `adi`, …).
    fn name(&self) -> &str;

    /// Device memory needed at `size`, bytes (checked before allocating).
    fn bytes_needed(&self, size: usize) -> u64;

    /// The bytes a run at `size` uploads before its first launch, where the workload can say
    /// without running (a spec: its initialised buffers), so that a stored series that did
    /// not record them still moves its uploads by the transfer sweep; `None` for the
    /// built-ins, which record theirs.
    fn upload_bytes(&self, size: usize) -> Option<u64> {
        let _ = size;
        None
    }

    /// Work items in the main kernel's typical launch at `size`, for the saturation check
    /// of the fit window ([`crate::fit::window`]); `None` where unknown.
    fn parallelism(&self, size: usize) -> Option<u64> {
        let _ = size;
        None
    }

    /// The spec behind a bring-your-own workload, for a series to store (so the series
    /// says each size's work without the file); `None` for the built-in workloads.
    fn stored_spec(&self) -> Option<spec::StoredSpec> {
        None
    }

    /// Iterations to run when the command line gives none (a spec's `iterations`); `None`
    /// for the built-in default.
    fn default_iterations(&self) -> Option<usize> {
        None
    }

    /// The kernel phases that do not stream, each with its access pattern; every other
    /// kernel phase streams. Stencils update a grid in place from its neighbours (SOR's
    /// colours and skewed diagonals) and hyperplane walks relax a cube a plane per launch
    /// (LU-SSOR's sweeps): each moves by the calibration's sweep of its pattern, one
    /// thread's where it ran on one thread, taken at [`Workload::walked_bytes`]. Strided
    /// phases walk a line of the grid with a stride, so that every step of a work-group
    /// fetches cache lines no prefetcher streams (the ADI and line-solve sweeps); transposes
    /// write a stride apart (the `reordered` layouts' `swap j,k`, SOR's `to_skewed`), and
    /// gathering transposes read a stride apart (SOR's `from_skewed`). The `calibrated`
    /// variant moves each by the calibration's sweep of its pattern: the line rate, the
    /// transposing sweep, the gathering sweep (docs/models.md §2.4).
    fn access_patterns(&self) -> Vec<(&str, Access)> {
        Vec::new()
    }

    /// Kernel phases whose access pattern nobody declared (a spec's launches without
    /// `access`): the prediction takes them as streaming and says so.
    fn undeclared_access(&self) -> Vec<&str> {
        Vec::new()
    }

    /// What a spec's kernel sources show that their launches do not declare, one sentence
    /// per kernel and kind with the declaration that would say so: walks (a column, a
    /// grid-stride loop) where none declares `walks`, reads at indices another buffer holds
    /// where none declares `gathers` or `access = "gather"`.
    fn source_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The bytes of the grid a phase declared `stencil` or `hyperplane` walks at `size`, at
    /// which the calibration's sweep of that pattern is read: the whole working set, unless
    /// the phase walks one of several arrays (SOR's skewed copy).
    fn walked_bytes(&self, phase: &str, size: usize) -> u64 {
        let _ = phase;
        self.bytes_needed(size)
    }

    /// What each kernel declares over a run of `iterations` iterations at `size`, found
    /// without running it (a spec's expressions evaluated as its launches would be), so a
    /// prediction takes the target's amounts from the workload instead of extrapolating the
    /// window's; `None` where the workload cannot say (the built-ins, whose amounts are
    /// polynomials of N that the window's own give exactly).
    fn declared_amounts(&self, size: usize, iterations: usize) -> Option<Vec<DeclaredAmounts>> {
        let _ = (size, iterations);
        None
    }

    /// As [`Workload::declared_amounts`], with each declared gather's footprint found where
    /// the index buffer's initial values say ([`GatheredReads::footprint`]): slower, for notes.
    fn declared_amounts_with_footprints(
        &self,
        size: usize,
        iterations: usize,
    ) -> Option<Vec<DeclaredAmounts>> {
        self.declared_amounts(size, iterations)
    }

    /// Why [`Workload::declared_amounts`] has nothing at `size`, where the workload declares
    /// amounts and they cannot be evaluated there (a spec's count that is no whole number at
    /// that size): the prediction then uses none of its declarations, and says so.
    fn declarations_error(&self, size: usize, iterations: usize) -> Option<String> {
        let _ = (size, iterations);
        None
    }

    /// Run `iterations` iterations at `size` on `device`; with `verify`, compare against the
    /// host implementation and fail on a mismatch.
    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError>;
}

/// Refuse a 3-D grid side outside `min..=1600` (beyond it n³ overflows 32-bit indices),
/// then a size that does not fit the device.
pub fn check_cube(
    workload: &dyn Workload,
    device: &dyn Device,
    size: usize,
    min: usize,
) -> Result<(), WorkloadError> {
    if !(min..=1600).contains(&size) {
        return Err(WorkloadError::Invalid(format!(
            "{}: n must lie in {min}..=1600, got {size}",
            workload.name()
        )));
    }
    check_fits(workload, device, size)
}

/// Refuse a size whose buffers do not fit the device, before allocating anything.
pub fn check_fits(
    workload: &dyn Workload,
    device: &dyn Device,
    size: usize,
) -> Result<(), WorkloadError> {
    let needed = workload.bytes_needed(size);
    if needed == u64::MAX {
        return Err(WorkloadError::Invalid(format!(
            "{} at size {size}: its arrays would need more than 2^64 bytes",
            workload.name()
        )));
    }
    let info = device.info();
    let available = info.memory_bytes;
    if available > 0 && needed > available {
        return Err(WorkloadError::TooLarge {
            workload: workload.name().to_string(),
            size,
            needed,
            available,
        });
    }
    // The host keeps copies (initial data, results read back, the reference); a device that
    // shares the host's memory (the host backend, an OpenCL CPU) holds its arrays there too.
    let shares_host = info.backend == crate::backend::BackendKind::Host
        || info.class == crate::backend::DeviceClass::Cpu;
    let copies = needed.saturating_mul(HOST_COPIES);
    let (host_needed, what) = if shares_host {
        (
            needed.saturating_add(copies),
            "the device's arrays in host memory, and the host's copies of them",
        )
    } else {
        (copies, "the host's copies of the device's arrays")
    };
    if let Some(free) = host_available_bytes(host_needed) {
        if host_needed > free {
            return Err(WorkloadError::HostMemory {
                workload: workload.name().to_string(),
                size,
                needed: host_needed,
                what,
                available: free,
            });
        }
    }
    Ok(())
}

/// Copies of a workload's arrays the host may hold at once (initial data, results read back,
/// the reference they are checked against): the memory check's factor.
pub const HOST_COPIES: u64 = 2;

/// The memory this process may still allocate ([`crate::backend::host::available_memory_bytes`]:
/// `MemAvailable`, less under a limit of the process's address space or data), for a use of
/// `needed` bytes: where less is left, the freed large buffers the host backend keeps for
/// later ones are returned to the system first ([`crate::backend::host::release_kept_memory`])
/// and the memory is read again.
pub fn host_available_bytes(needed: u64) -> Option<u64> {
    use crate::backend::host::{available_memory_bytes, release_kept_memory};
    match available_memory_bytes() {
        Some(free) if free >= needed => Some(free),
        _ => {
            release_kept_memory();
            available_memory_bytes()
        }
    }
}

/// The sum of the kernel phases' times, seconds.
pub fn kernel_seconds(phases: &[PhaseTiming]) -> f64 {
    phases
        .iter()
        .filter(|p| crate::fit::forecast::is_kernel_phase(&p.name))
        .map(|p| p.seconds)
        .sum()
}

/// Assemble a run's result from its phases; a failed verification becomes an error.
pub fn finish(
    workload: &str,
    size: usize,
    iterations: usize,
    phases: &PhaseRecorder,
    verification: Option<Verification>,
) -> Result<RunResult, WorkloadError> {
    if let Some(v) = verification.as_ref().filter(|v| !v.passed) {
        return Err(WorkloadError::Mismatch {
            workload: workload.to_string(),
            size,
            max_abs: v.max_abs_error,
            max_rel: v.max_rel_error,
        });
    }
    let (phases, total_seconds) = phases.finish();
    Ok(RunResult {
        workload: workload.to_string(),
        size,
        iterations,
        kernel_seconds: kernel_seconds(&phases),
        phases,
        total_seconds,
        verification,
    })
}
