//! Devices that run kernels: CUDA, OpenCL and the host, behind one [`Device`] trait.
//!
//! Every kernel is written once in `kernels/` in a small common dialect (see
//! [`source`]): the CUDA and OpenCL backends prepend their own prelude of macros and compile
//! it at run time (NVRTC, `clBuildProgram`); the host backend runs a native Rust twin of the
//! same kernel, registered beside the source in a [`ProgramSource`]. Each launch returns the
//! device-side time (CUDA events, OpenCL profiling events, a monotonic clock on the host).
//!
//! Nothing outside this module sees a raw handle or `unsafe`.

pub mod affinity;
pub mod cold;
pub mod cuda;
mod discovery;
pub mod heap;
pub mod host;
#[cfg(target_os = "linux")]
mod host_mapping;
pub mod host_planes;
pub mod host_pool;
pub mod host_stream;
mod memory;
pub mod nvrtc;
pub mod opencl;
pub mod pinning;
pub mod source;

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

pub use discovery::{discover, select, DeviceList, DeviceSelector};
pub use host::{HostArgs, HostKernel};
pub use source::{Dialect, ProgramSource};

use crate::units::Seconds;

/// Which API drives a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// NVIDIA CUDA through the driver API (cudarc) and NVRTC.
    Cuda,
    /// OpenCL through the ICD loader (opencl3).
    Opencl,
    /// Native Rust on the host's CPU threads.
    Host,
}

impl fmt::Display for BackendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendKind::Cuda => "cuda",
            BackendKind::Opencl => "opencl",
            BackendKind::Host => "host",
        })
    }
}

/// Broad class of a device, used to rank devices when none is selected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceClass {
    /// A GPU (or other accelerator).
    Gpu,
    /// A CPU.
    Cpu,
}

/// What a device says about itself; fields a backend cannot read are `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// The backend driving the device.
    pub backend: BackendKind,
    /// GPU or CPU.
    pub class: DeviceClass,
    /// The device's name, as the driver reports it.
    pub name: String,
    /// The vendor's name.
    pub vendor: String,
    /// Driver version string.
    pub driver: String,
    /// Platform (OpenCL) or API version string.
    pub platform: String,
    /// Compute capability `major.minor` (CUDA only).
    pub compute_capability: Option<String>,
    /// Multiprocessors (CUDA) or compute units (OpenCL) or logical cores (host).
    pub compute_units: u32,
    /// Threads that can be resident on one compute unit, where the API tells.
    pub resident_threads_per_unit: Option<u32>,
    /// Largest work-group (block) size.
    pub max_group_size: usize,
    /// Core clock in MHz, as reported (the nominal maximum).
    pub clock_mhz: Option<u32>,
    /// Memory clock in MHz, where known.
    pub memory_clock_mhz: Option<u32>,
    /// Global memory in bytes.
    pub memory_bytes: u64,
    /// Largest single allocation in bytes.
    pub max_alloc_bytes: u64,
    /// Last-level cache (L2 on a GPU) size in bytes, where known.
    pub l2_bytes: Option<u64>,
    /// ECC enabled, where readable.
    pub ecc: Option<bool>,
}

#[cfg(test)]
impl DeviceInfo {
    /// A fixed CPU description for tests that need a device in a file but no device.
    pub(crate) fn for_tests() -> Self {
        DeviceInfo {
            backend: BackendKind::Host,
            class: DeviceClass::Cpu,
            name: "test CPU".into(),
            vendor: "test".into(),
            driver: "test".into(),
            platform: "x86_64".into(),
            compute_capability: None,
            compute_units: 4,
            resident_threads_per_unit: Some(1),
            max_group_size: 1024,
            clock_mhz: None,
            memory_clock_mhz: None,
            memory_bytes: 1 << 30,
            max_alloc_bytes: 1 << 29,
            l2_bytes: None,
            ecc: None,
        }
    }
}

impl DeviceInfo {
    /// `compute_units × resident_threads_per_unit`: the executors that can run at once
    /// according to the device's attributes (the paper's n, §1), where known.
    pub fn resident_executors(&self) -> Option<u64> {
        self.resident_threads_per_unit
            .map(|t| u64::from(t) * u64::from(self.compute_units))
    }

    /// A file-name-safe slug of the backend and device name, e.g. `cuda-nvidia-h100-80gb-hbm3`.
    pub fn slug(&self) -> String {
        let mut slug = format!("{}-", self.backend);
        let mut last_dash = true;
        for c in self.name.chars() {
            if c.is_ascii_alphanumeric() {
                slug.push(c.to_ascii_lowercase());
                last_dash = false;
            } else if !last_dash {
                slug.push('-');
                last_dash = true;
            }
        }
        // A device name of hundreds of characters still makes valid file names.
        let mut end = slug.len().min(crate::export::file::MAX_NAME_PART);
        while !slug.is_char_boundary(end) {
            end -= 1;
        }
        slug[..end].trim_end_matches('-').to_string()
    }
}

/// Errors raised by the backends.
#[derive(Debug, Error)]
pub enum BackendError {
    /// The API's runtime library is not installed.
    #[error("{api} is not available: {reason}")]
    Unavailable {
        /// The API (CUDA, OpenCL).
        api: &'static str,
        /// Why.
        reason: String,
    },
    /// A call into the API failed.
    #[error("{api} call {call} failed: {detail}")]
    Api {
        /// The API.
        api: &'static str,
        /// What was being done.
        call: String,
        /// The API's error.
        detail: String,
    },
    /// A kernel failed to compile; `log` holds the compiler's output.
    #[error("kernel program {program} failed to compile for {device}:\n{log}")]
    Compile {
        /// The program's name.
        program: String,
        /// The device.
        device: String,
        /// The compiler's log.
        log: String,
    },
    /// A kernel name not present in the program.
    #[error("program {program} has no kernel {kernel}")]
    NoSuchKernel {
        /// The program's name.
        program: String,
        /// The kernel asked for.
        kernel: String,
    },
    /// A buffer that does not fit on the device.
    #[error("{what} needs {needed} bytes but the device offers {available}")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },
    /// Arguments that do not match what the kernel expects, or a buffer of the wrong size.
    #[error("bad kernel arguments for {kernel}: {detail}")]
    BadArguments {
        /// The kernel.
        kernel: String,
        /// What is wrong.
        detail: String,
    },
    /// The device selector matched nothing.
    #[error("no device matches '{selector}'; run `harness devices` to list them")]
    NoSuchDevice {
        /// The selector given.
        selector: String,
    },
}

/// An argument to a kernel launch.
#[derive(Debug, Clone, Copy)]
pub enum Arg<'a> {
    /// A device buffer.
    Buf(&'a Buffer),
    /// A 32-bit unsigned scalar.
    U32(u32),
    /// A 32-bit float scalar.
    F32(f32),
    /// A 64-bit unsigned scalar.
    U64(u64),
    /// A 64-bit float scalar (`double`).
    F64(f64),
}

/// The shape of a launch: `dims` dimensions of global and local (work-group) size.
///
/// Global sizes are rounded up to a multiple of the local size by the backend; every kernel
/// guards its index against the real extent it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Launch {
    /// Number of dimensions in use (1 to 3).
    pub dims: usize,
    /// Global size per dimension (executors).
    pub global: [usize; 3],
    /// Work-group size per dimension.
    pub local: [usize; 3],
}

impl Launch {
    /// A one-dimensional launch of `global` executors in groups of `local`.
    pub fn linear(global: usize, local: usize) -> Self {
        Launch {
            dims: 1,
            global: [global.max(1), 1, 1],
            local: [local.max(1), 1, 1],
        }
    }

    /// A three-dimensional launch over an `n³` cube in rows of work-items along the first
    /// axis, as wide as `group` (the device's preferred work-group size) or the next power of
    /// two above n, whichever is smaller: how the workloads launch their 3-D kernels.
    pub fn cube(n: usize, group: usize) -> Self {
        Launch {
            dims: 3,
            global: [n, n, n],
            local: [group.min(n.next_power_of_two()).max(1), 1, 1],
        }
    }

    /// A two-dimensional launch over `x × y` executors (x fastest) in the tiles the
    /// workloads' 2-D grids use on a device whose preferred work-group size is `group`:
    /// 32 × 8 from 256 up, 16 wide below that, one row below 16. A tile's rows share the
    /// cache lines of a column, so a kernel that reads (or writes) down the columns uses
    /// each line for as many elements as the tile has rows.
    pub fn tiles2(x: usize, y: usize, group: usize) -> Self {
        let (lx, ly) = if group >= 256 {
            (32, 8)
        } else if group >= 16 {
            (16, group / 16)
        } else {
            (group, 1)
        };
        Launch {
            dims: 2,
            global: [x.max(1), y.max(1), 1],
            local: [lx.max(1), ly.max(1), 1],
        }
    }

    /// A single executor.
    pub fn single() -> Self {
        Launch::linear(1, 1)
    }

    /// Global size rounded up to whole work-groups, per dimension.
    pub fn padded_global(&self) -> [usize; 3] {
        let mut g = [1; 3];
        for (d, slot) in g.iter_mut().enumerate().take(self.dims) {
            *slot = self.global[d].div_ceil(self.local[d]) * self.local[d];
        }
        g
    }

    /// Total executors launched (before padding).
    pub fn executors(&self) -> usize {
        self.global[..self.dims].iter().product()
    }
}

/// A buffer in a device's memory. Created by [`Device::alloc`].
pub struct Buffer {
    bytes: usize,
    pub(crate) inner: BufferInner,
}

pub(crate) enum BufferInner {
    Host(host::HostMemory),
    Opencl(opencl::ClMemory),
    Cuda(cuda::CudaMemory),
}

impl Buffer {
    /// Size in bytes.
    pub fn len_bytes(&self) -> usize {
        self.bytes
    }
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Buffer({} bytes)", self.bytes)
    }
}

/// A compiled program: a set of kernels ready to launch on one device.
pub struct Program {
    name: String,
    pub(crate) inner: ProgramInner,
}

pub(crate) enum ProgramInner {
    Host(&'static [(&'static str, HostKernel)]),
    Opencl(opencl::ClProgram),
    Cuda(cuda::CudaProgram),
}

impl Program {
    /// The program's name (its source file).
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// One device of one backend.
pub trait Device: Send + Sync {
    /// What the device says about itself.
    fn info(&self) -> &DeviceInfo;

    /// Allocate `bytes` of device memory (contents unspecified).
    fn alloc(&self, bytes: usize) -> Result<Buffer, BackendError>;

    /// Copy `data` into `buf` (same length or shorter), returning the device-timed duration.
    fn upload(&self, buf: &Buffer, data: &[u8]) -> Result<Seconds, BackendError>;

    /// Copy `out.len()` bytes of `buf` from byte `offset` on into `out`, returning the
    /// device-timed duration: a large buffer read back a piece at a time through one small
    /// host array, whose pages are already there (a fresh host array of a gigabyte costs a
    /// second of page faults on a 2-core VM).
    fn download_from(
        &self,
        buf: &Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<Seconds, BackendError>;

    /// Copy `buf` into `out` (same length or shorter), returning the device-timed duration.
    fn download(&self, buf: &Buffer, out: &mut [u8]) -> Result<Seconds, BackendError> {
        self.download_from(buf, 0, out)
    }

    /// Compile a program for this device (the host backend uses the native twins).
    fn compile(&self, source: &ProgramSource) -> Result<Program, BackendError>;

    /// Launch one kernel and wait for it; returns the device-timed kernel duration.
    fn launch(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BackendError>;

    /// Launch one kernel and wait for it; returns the host's wall time from before the launch
    /// call to after completion (what a program pays per launch, overhead included).
    fn launch_wall(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BackendError> {
        let start = std::time::Instant::now();
        self.launch(program, kernel, launch, args)?;
        Ok(Seconds(start.elapsed().as_secs_f64()))
    }

    /// How many threads the last [`Device::launch`] made on this thread ran on, where the
    /// backend can tell: the host pool's parties that ran a part of it (1 for a twin that is
    /// one loop on the launching thread). `None` where the device schedules its own threads
    /// (OpenCL, CUDA).
    fn last_launch_threads(&self) -> Option<usize> {
        None
    }

    /// Told before a workload's launch that moves `bytes` (its declared bytes, else four per
    /// work item): nothing on a device, and [`cold::ColdCaches`] empties the caches when
    /// the launches since it last did have moved a working set (an error where its
    /// eviction kernel fails).
    fn before_launch(&self, _bytes: u64) -> Result<(), BackendError> {
        Ok(())
    }

    /// Write back and drop every line of `buf` from the caches, so that the next launch finds
    /// it in device memory: `Ok(true)` where the device did (a CPU device, whose memory and
    /// caches are the host's), `Ok(false)` where it cannot (a GPU, whose caches the host does
    /// not reach).
    fn flush_from_caches(&self, _buf: &Buffer) -> Result<bool, BackendError> {
        Ok(false)
    }

    /// A work-group size suited to this device for simple 1-D kernels.
    fn preferred_group_size(&self) -> usize {
        self.info().max_group_size.clamp(1, 256)
    }

    /// The core clock actually running, MHz, read on the device during a short busy kernel;
    /// `None` where the API offers no cycle counter (OpenCL, host).
    fn running_clock_mhz(&self) -> Result<Option<f64>, BackendError> {
        Ok(None)
    }
}

/// Write back and drop from every cache level the 64-byte lines of `len` bytes from `ptr`
/// (`clflush` each, then a fence): `false` off x86-64, where nothing was flushed.
///
/// # Safety
/// `ptr .. ptr + len` must be mapped memory for the whole call.
pub unsafe fn flush_lines(ptr: *const u8, len: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_clflush, _mm_mfence};
        let start = ptr as usize & !63;
        let end = ptr as usize + len;
        let mut line = start;
        while line < end {
            // SAFETY: the caller keeps the range mapped; `clflush` needs SSE2, which every
            // x86-64 processor has.
            unsafe { _mm_clflush(line as *const u8) };
            line += 64;
        }
        // SAFETY: a fence has no operands.
        unsafe { _mm_mfence() };
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (ptr, len);
        false
    }
}

/// Write `values` into a fresh buffer.
pub fn upload_u32(dev: &dyn Device, values: &[u32]) -> Result<Buffer, BackendError> {
    let buf = dev.alloc(std::mem::size_of_val(values))?;
    dev.upload(&buf, bytemuck::cast_slice(values))?;
    Ok(buf)
}

/// Write `values` into a fresh buffer.
pub fn upload_f32(dev: &dyn Device, values: &[f32]) -> Result<Buffer, BackendError> {
    let buf = dev.alloc(std::mem::size_of_val(values))?;
    dev.upload(&buf, bytemuck::cast_slice(values))?;
    Ok(buf)
}

/// Read `count` u32 values back from `buf`.
pub fn download_u32(
    dev: &dyn Device,
    buf: &Buffer,
    count: usize,
) -> Result<Vec<u32>, BackendError> {
    let mut values = vec![0u32; count];
    dev.download(buf, bytemuck::cast_slice_mut(&mut values))?;
    Ok(values)
}

/// Read `count` f32 values back from `buf`.
pub fn download_f32(
    dev: &dyn Device,
    buf: &Buffer,
    count: usize,
) -> Result<Vec<f32>, BackendError> {
    let mut values = vec![0f32; count];
    dev.download(buf, bytemuck::cast_slice_mut(&mut values))?;
    Ok(values)
}

/// Fault in every page of `slice` by writing one element per 4 KiB back to itself, so that
/// later timed writes into freshly allocated memory measure the copy or the kernel, not the
/// operating system mapping pages. Volatile, so the stores are not optimised away.
pub fn touch_pages<T: Copy>(slice: &mut [T]) {
    let step = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for x in slice.iter_mut().step_by(step) {
        let value = *x;
        // SAFETY: `x` is a valid, aligned, exclusive reference into `slice`.
        unsafe { std::ptr::write_volatile(x, value) };
    }
}
