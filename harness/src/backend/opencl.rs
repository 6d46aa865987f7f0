//! The OpenCL backend: `opencl3` over the ICD loader, loaded at run time; kernels timed with
//! profiling events.
//!
//! Container images often ship the NVIDIA driver without registering its OpenCL ICD. Before
//! the loader is first touched, [`register_nvidia_icd`] checks for that case and registers
//! `libnvidia-opencl.so.1` for this process through `OCL_ICD_FILENAMES`.

use std::collections::HashMap;
use std::sync::Mutex;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device as ClDevice, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_GPU};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program as ClProgramObject;
use opencl3::types::{cl_device_id, cl_mem, CL_BLOCKING};

use super::{
    Arg, BackendError, BackendKind, Buffer, BufferInner, Device, DeviceClass, DeviceInfo, Launch,
    Program, ProgramInner, ProgramSource, Seconds,
};

const API: &str = "OpenCL";

/// Serialises platform discovery and program builds: the ICD loader's first-call
/// initialisation and some drivers' compilers (PoCL's) are not safe to enter from several
/// threads at once, and both are rare, slow calls where a lock costs nothing.
static DRIVER_LOCK: Mutex<()> = Mutex::new(());

/// An OpenCL buffer.
pub struct ClMemory {
    buffer: Mutex<ClBuffer<u8>>,
    handle: cl_mem,
}

// SAFETY: `cl_mem` handles are thread-safe OpenCL objects; the buffer itself sits behind a
// mutex for the transfers that need `&mut`.
unsafe impl Send for ClMemory {}
// SAFETY: as above.
unsafe impl Sync for ClMemory {}

/// A built OpenCL program and its kernel objects, created on first use.
pub struct ClProgram {
    program: ClProgramObject,
    kernels: Mutex<HashMap<String, Kernel>>,
}

/// One OpenCL device with its own context and profiling queue.
pub struct OpenClDevice {
    info: DeviceInfo,
    context: Context,
    queue: CommandQueue,
}

fn api_err(call: &str, e: impl std::fmt::Display) -> BackendError {
    BackendError::Api {
        api: API,
        call: call.to_string(),
        detail: e.to_string(),
    }
}

/// Register the NVIDIA OpenCL ICD for this process when the CUDA driver is installed but no
/// ICD file names it. Returns the line to tell the user, if it did anything.
///
/// Must run before any other OpenCL call: the loader reads `OCL_ICD_FILENAMES` once.
pub fn register_nvidia_icd(cuda_driver_present: bool) -> Option<String> {
    if !cuda_driver_present || std::env::var_os("OCL_ICD_FILENAMES").is_some() {
        return None;
    }
    let vendors = std::path::Path::new("/etc/OpenCL/vendors");
    let mut others = Vec::new();
    if let Ok(entries) = std::fs::read_dir(vendors) {
        for entry in entries.flatten() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let lib = text.trim().to_string();
            if lib.contains("nvidia") {
                return None;
            }
            if !lib.is_empty() {
                others.push(lib);
            }
        }
    }
    // SAFETY: only probes whether the library can be loaded; its initialisers are the
    // vendor's own and run as they would under the ICD loader.
    let loadable = unsafe { libloading::Library::new("libnvidia-opencl.so.1") }.is_ok();
    if !loadable {
        return None;
    }
    let mut list = vec!["libnvidia-opencl.so.1".to_string()];
    list.extend(others);
    // Called at start-up before any thread is spawned, so changing the environment is sound.
    std::env::set_var("OCL_ICD_FILENAMES", list.join(":"));
    Some(
        "note: the NVIDIA OpenCL ICD was not registered; using libnvidia-opencl.so.1 for this run"
            .to_string(),
    )
}

/// Every OpenCL device on every platform; an empty list when no runtime is installed.
pub fn devices() -> Result<Vec<OpenClDevice>, BackendError> {
    if !cl3::is_opencl_runtime_available() {
        return Err(BackendError::Unavailable {
            api: API,
            reason: "no libOpenCL.so.1 (install an ICD loader and a driver, e.g. pocl-opencl-icd)"
                .into(),
        });
    }
    let _guard = DRIVER_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let platforms =
        opencl3::platform::get_platforms().map_err(|e| api_err("clGetPlatformIDs", e))?;
    let mut out = Vec::new();
    for platform in platforms {
        let platform_name = platform.name().unwrap_or_default();
        let platform_version = platform.version().unwrap_or_default();
        let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        for id in ids {
            out.push(OpenClDevice::new(id, &platform_name, &platform_version)?);
        }
    }
    Ok(out)
}

impl OpenClDevice {
    fn new(id: cl_device_id, platform: &str, platform_version: &str) -> Result<Self, BackendError> {
        let device = ClDevice::new(id);
        let info = describe(&device, platform, platform_version);
        let context = Context::from_device(&device).map_err(|e| api_err("clCreateContext", e))?;
        let queue =
            CommandQueue::create_default_with_properties(&context, CL_QUEUE_PROFILING_ENABLE, 0)
                .map_err(|e| api_err("clCreateCommandQueueWithProperties", e))?;
        Ok(OpenClDevice {
            info,
            context,
            queue,
        })
    }

    fn event_seconds(event: &Event, call: &str) -> Result<Seconds, BackendError> {
        event.wait().map_err(|e| api_err(call, e))?;
        let start = event
            .profiling_command_start()
            .map_err(|e| api_err("clGetEventProfilingInfo", e))?;
        let end = event
            .profiling_command_end()
            .map_err(|e| api_err("clGetEventProfilingInfo", e))?;
        Ok(Seconds(end.saturating_sub(start) as f64 * 1e-9))
    }
}

fn describe(device: &ClDevice, platform: &str, platform_version: &str) -> DeviceInfo {
    let is_gpu = device
        .dev_type()
        .map(|t| t & CL_DEVICE_TYPE_GPU != 0)
        .unwrap_or(false);
    let vendor = device.vendor().unwrap_or_default();
    let nv_cc = match (
        device.compute_capability_major_nv(),
        device.compute_capability_minor_nv(),
    ) {
        (Ok(major), Ok(minor)) => Some((major, minor)),
        _ => None,
    };
    let resident = match nv_cc {
        Some((major, minor)) => Some(nvidia_resident_threads(major, minor)),
        None if !is_gpu => Some(1),
        None => None,
    };
    let cache = device.global_mem_cache_size().ok().filter(|&b| b > 0);
    DeviceInfo {
        backend: BackendKind::Opencl,
        class: if is_gpu {
            DeviceClass::Gpu
        } else {
            DeviceClass::Cpu
        },
        name: device
            .name()
            .unwrap_or_else(|_| "unnamed OpenCL device".into()),
        vendor,
        driver: device.driver_version().unwrap_or_default(),
        platform: format!("{platform} ({platform_version})"),
        compute_capability: nv_cc.map(|(a, b)| format!("{a}.{b}")),
        compute_units: device.max_compute_units().unwrap_or(1),
        resident_threads_per_unit: resident,
        max_group_size: device.max_work_group_size().unwrap_or(1),
        clock_mhz: device.max_clock_frequency().ok().filter(|&c| c > 0),
        memory_clock_mhz: None,
        memory_bytes: device.global_mem_size().unwrap_or(0),
        max_alloc_bytes: device.max_mem_alloc_size().unwrap_or(0),
        l2_bytes: cache,
        ecc: device.error_correction_support().ok(),
    }
}

/// Resident threads per multiprocessor for an NVIDIA compute capability (CUDA programming
/// guide, "Technical Specifications per Compute Capability").
pub fn nvidia_resident_threads(major: u32, minor: u32) -> u32 {
    match (major, minor) {
        (7, 5) => 1024,
        (8, 6) | (8, 7) | (8, 9) => 1536,
        (12, _) => 1536,
        _ => 2048,
    }
}

fn cl_memory(buf: &Buffer) -> Result<&ClMemory, BackendError> {
    match &buf.inner {
        BufferInner::Opencl(mem) => Ok(mem),
        _ => Err(BackendError::BadArguments {
            kernel: "transfer".into(),
            detail: "a buffer of another backend was passed".into(),
        }),
    }
}

impl Device for OpenClDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, BackendError> {
        if bytes as u64 > self.info.max_alloc_bytes {
            return Err(BackendError::OutOfMemory {
                what: "one buffer".into(),
                needed: bytes as u64,
                available: self.info.max_alloc_bytes,
            });
        }
        // SAFETY: no host pointer is passed; the size is non-zero after `max(1)`.
        let buffer = unsafe {
            ClBuffer::<u8>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                bytes.max(1),
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| api_err("clCreateBuffer", e))?;
        // Back the buffer now, untimed: a CPU runtime maps its memory lazily, and the first
        // timed upload or kernel would pay the page faults (the same on every device: the
        // buffer starts as zeros).
        let mut buffer = buffer;
        // SAFETY: the fill covers the buffer's own size with a one-byte pattern; it is waited
        // for before the buffer is used.
        let fill = unsafe {
            self.queue
                .enqueue_fill_buffer(&mut buffer, &[0u8], 0, bytes.max(1), &[])
        }
        .map_err(|e| api_err("clEnqueueFillBuffer", e))?;
        fill.wait().map_err(|e| api_err("clWaitForEvents", e))?;
        let handle = buffer.get();
        Ok(Buffer {
            bytes,
            inner: BufferInner::Opencl(ClMemory {
                buffer: Mutex::new(buffer),
                handle,
            }),
        })
    }

    fn upload(&self, buf: &Buffer, data: &[u8]) -> Result<Seconds, BackendError> {
        let mem = cl_memory(buf)?;
        check_len(buf, data.len())?;
        let mut buffer = mem.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: a blocking write of `data`, which outlives the call; the length was checked.
        let event = unsafe {
            self.queue
                .enqueue_write_buffer(&mut buffer, CL_BLOCKING, 0, data, &[])
        }
        .map_err(|e| api_err("clEnqueueWriteBuffer", e))?;
        Self::event_seconds(&event, "clEnqueueWriteBuffer")
    }

    fn download_from(
        &self,
        buf: &Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<Seconds, BackendError> {
        let mem = cl_memory(buf)?;
        check_len(buf, offset.saturating_add(out.len()))?;
        let buffer = mem.buffer.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: a blocking read into `out`; offset and length were checked.
        let event = unsafe {
            self.queue
                .enqueue_read_buffer(&buffer, CL_BLOCKING, offset, out, &[])
        }
        .map_err(|e| api_err("clEnqueueReadBuffer", e))?;
        Self::event_seconds(&event, "clEnqueueReadBuffer")
    }

    fn compile(&self, source: &ProgramSource) -> Result<Program, BackendError> {
        let text = source
            .opencl_source()
            .ok_or_else(|| BackendError::Compile {
                program: source.name.to_string(),
                device: self.info.name.clone(),
                log: "the program is written in CUDA C; run it on a CUDA device".into(),
            })?;
        let _guard = DRIVER_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let program = ClProgramObject::create_and_build_from_source(
            &self.context,
            &text,
            &source.opencl_options(),
        )
        .map_err(|log| BackendError::Compile {
            program: source.name.to_string(),
            device: self.info.name.clone(),
            log,
        })?;
        Ok(Program {
            name: source.name.to_string(),
            inner: ProgramInner::Opencl(ClProgram {
                program,
                kernels: Mutex::new(HashMap::new()),
            }),
        })
    }

    fn launch(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BackendError> {
        let ProgramInner::Opencl(cl) = &program.inner else {
            return Err(BackendError::BadArguments {
                kernel: kernel.into(),
                detail: "program was compiled for another backend".into(),
            });
        };
        let mut kernels = cl.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if !kernels.contains_key(kernel) {
            let k =
                Kernel::create(&cl.program, kernel).map_err(|_| BackendError::NoSuchKernel {
                    program: program.name.clone(),
                    kernel: kernel.to_string(),
                })?;
            kernels.insert(kernel.to_string(), k);
        }
        let k = &kernels[kernel];
        for (i, arg) in args.iter().enumerate() {
            set_arg(k, i as u32, arg).map_err(|e| BackendError::BadArguments {
                kernel: kernel.into(),
                detail: format!("argument {i}: {e}"),
            })?;
        }
        let global = launch.padded_global();
        // SAFETY: the kernel's arguments were all set above; the size arrays have `dims`
        // valid entries and outlive the call.
        let event = unsafe {
            self.queue.enqueue_nd_range_kernel(
                k.get(),
                launch.dims as u32,
                std::ptr::null(),
                global.as_ptr(),
                launch.local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| api_err(&format!("clEnqueueNDRangeKernel({kernel})"), e))?;
        Self::event_seconds(&event, kernel)
    }

    fn flush_from_caches(&self, buf: &Buffer) -> Result<bool, BackendError> {
        // A GPU's caches are its own; only a CPU device's memory is the host's.
        if self.info.class != DeviceClass::Cpu || buf.len_bytes() == 0 {
            return Ok(false);
        }
        let mem = cl_memory(buf)?;
        let buffer = mem.buffer.lock().unwrap_or_else(|p| p.into_inner());
        let mut mapped: cl_mem = std::ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer for reading; the pointer is used only
        // until the unmap below, which is waited for.
        unsafe {
            self.queue
                .enqueue_map_buffer(
                    &buffer,
                    CL_BLOCKING,
                    opencl3::memory::CL_MAP_READ,
                    0,
                    buf.len_bytes(),
                    &mut mapped,
                    &[],
                )
                .map_err(|e| api_err("clEnqueueMapBuffer", e))?;
        }
        // SAFETY: the mapping covers the buffer's bytes until it is unmapped.
        let flushed = unsafe { super::flush_lines(mapped as *const u8, buf.len_bytes()) };
        // SAFETY: the pointer the map returned, unmapped once.
        unsafe {
            self.queue
                .enqueue_unmap_mem_object(buffer.get(), mapped, &[])
                .map_err(|e| api_err("clEnqueueUnmapMemObject", e))?;
        }
        self.queue.finish().map_err(|e| api_err("clFinish", e))?;
        Ok(flushed)
    }

    fn preferred_group_size(&self) -> usize {
        match self.info.class {
            DeviceClass::Gpu => self.info.max_group_size.clamp(1, 256),
            DeviceClass::Cpu => self.info.max_group_size.clamp(1, 64),
        }
    }
}

fn check_len(buf: &Buffer, len: usize) -> Result<(), BackendError> {
    if len > buf.len_bytes() {
        return Err(BackendError::BadArguments {
            kernel: "transfer".into(),
            detail: format!("{len} bytes do not fit a buffer of {}", buf.len_bytes()),
        });
    }
    Ok(())
}

fn set_arg(k: &Kernel, index: u32, arg: &Arg<'_>) -> Result<(), String> {
    // SAFETY: each value is a plain scalar or a live cl_mem handle of this context.
    let result = unsafe {
        match arg {
            Arg::Buf(buf) => {
                let mem = cl_memory(buf).map_err(|e| e.to_string())?;
                k.set_arg(index, &mem.handle)
            }
            Arg::U32(v) => k.set_arg(index, v),
            Arg::F32(v) => k.set_arg(index, v),
            Arg::U64(v) => k.set_arg(index, v),
            Arg::F64(v) => k.set_arg(index, v),
        }
    };
    result.map_err(|e| e.to_string())
}
