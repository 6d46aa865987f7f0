//! The CUDA backend: the driver API and NVRTC through `cudarc`, both loaded at run time.
//!
//! `cudarc` is built with dynamic loading and its CUDA 13.0 bindings, whose library search
//! covers `libcuda.so.1` and both `libnvrtc.so.13` and `libnvrtc.so.12`; the binary therefore
//! builds without a CUDA toolkit and runs wherever an NVIDIA driver is installed. We check
//! that the libraries load before touching any `cudarc` call, because a missing library
//! would otherwise panic inside `cudarc`.

use std::sync::{Arc, Mutex};

use super::nvrtc;
use super::{
    Arg, BackendError, BackendKind, Buffer, BufferInner, Device, DeviceClass, DeviceInfo, Launch,
    Program, ProgramInner, ProgramSource, Seconds,
};
use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};

const API: &str = "CUDA";

/// Device memory: the owning slice (for transfers) and its raw address (for launches).
pub struct CudaMemory {
    slice: Mutex<CudaSlice<u8>>,
    address: u64,
}

/// A module loaded from NVRTC's output, with the kernels looked up so far (once each).
pub struct CudaProgram {
    module: Arc<CudaModule>,
    functions: Mutex<std::collections::HashMap<String, CudaFunction>>,
}

/// The largest grid in y and z (x may reach 2^31 − 1).
const MAX_GRID_YZ: usize = 65_535;

/// One CUDA device: its primary context and a stream.
pub struct CudaDevice {
    info: DeviceInfo,
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
}

fn api_err(call: &str, e: impl std::fmt::Debug) -> BackendError {
    BackendError::Api {
        api: API,
        call: call.to_string(),
        detail: format!("{e:?}"),
    }
}

/// Whether the CUDA driver library can be loaded (without panicking when it cannot).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the candidate library names.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Every CUDA device; an `Unavailable` error when there is no driver.
pub fn devices() -> Result<Vec<CudaDevice>, BackendError> {
    if !driver_present() {
        return Err(BackendError::Unavailable {
            api: API,
            reason: "no NVIDIA driver library (libcuda.so.1) found".into(),
        });
    }
    cudarc::driver::result::init().map_err(|e| api_err("cuInit", e))?;
    let count = CudaContext::device_count().map_err(|e| api_err("cuDeviceGetCount", e))?;
    (0..count.max(0) as usize).map(CudaDevice::new).collect()
}

impl CudaDevice {
    fn new(ordinal: usize) -> Result<Self, BackendError> {
        let context = CudaContext::new(ordinal).map_err(|e| api_err("cuCtxCreate", e))?;
        let stream = context.default_stream();
        let info = describe(&context)?;
        Ok(CudaDevice {
            info,
            context,
            stream,
        })
    }

    fn timed<F>(&self, call: &str, work: F) -> Result<Seconds, BackendError>
    where
        F: FnOnce(&Arc<CudaStream>) -> Result<(), BackendError>,
    {
        let start = self
            .context
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| api_err("cuEventCreate", e))?;
        let end = self
            .context
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| api_err("cuEventCreate", e))?;
        start
            .record(&self.stream)
            .map_err(|e| api_err("cuEventRecord", e))?;
        work(&self.stream)?;
        end.record(&self.stream)
            .map_err(|e| api_err("cuEventRecord", e))?;
        end.synchronize().map_err(|e| api_err(call, e))?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(|e| api_err("cuEventElapsedTime", e))?;
        Ok(Seconds(f64::from(ms) * 1e-3))
    }
}

fn attribute(ctx: &CudaContext, attr: Attr) -> Option<i32> {
    ctx.attribute(attr).ok()
}

fn describe(ctx: &Arc<CudaContext>) -> Result<DeviceInfo, BackendError> {
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| api_err("cuDeviceGetAttribute", e))?;
    let memory = ctx
        .total_mem()
        .map_err(|e| api_err("cuDeviceTotalMem", e))? as u64;
    let mut driver_version = 0i32;
    // SAFETY: writes one integer through a valid pointer; the driver is loaded.
    let driver = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) };
    let driver = if driver == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!(
            "CUDA driver API {}.{}",
            driver_version / 1000,
            (driver_version % 1000) / 10
        )
    } else {
        "unknown".into()
    };
    let units = attribute(ctx, Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(1);
    Ok(DeviceInfo {
        backend: BackendKind::Cuda,
        class: DeviceClass::Gpu,
        name: ctx.name().unwrap_or_else(|_| "CUDA device".into()),
        vendor: "NVIDIA Corporation".into(),
        driver,
        // NVRTC's version where it compiles the kernels, so that a calibration says which
        // compiler built them (`calibrate --compare` flags a change).
        platform: match nvrtc::locate() {
            Ok(found) => format!("CUDA, NVRTC {}", found.version),
            Err(_) => "CUDA (NVRTC missing)".into(),
        },
        compute_capability: Some(format!("{major}.{minor}")),
        compute_units: units.max(1) as u32,
        resident_threads_per_unit: attribute(
            ctx,
            Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        )
        .map(|v| v as u32),
        max_group_size: attribute(ctx, Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .unwrap_or(1024) as usize,
        clock_mhz: attribute(ctx, Attr::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
            .filter(|&k| k > 0)
            .map(|khz| (khz / 1000) as u32),
        memory_clock_mhz: attribute(ctx, Attr::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
            .filter(|&k| k > 0)
            .map(|khz| (khz / 1000) as u32),
        memory_bytes: memory,
        max_alloc_bytes: memory,
        l2_bytes: attribute(ctx, Attr::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)
            .filter(|&b| b > 0)
            .map(|b| b as u64),
        ecc: attribute(ctx, Attr::CU_DEVICE_ATTRIBUTE_ECC_ENABLED).map(|v| v != 0),
    })
}

fn cuda_memory(buf: &Buffer) -> Result<&CudaMemory, BackendError> {
    match &buf.inner {
        BufferInner::Cuda(mem) => Ok(mem),
        _ => Err(BackendError::BadArguments {
            kernel: "transfer".into(),
            detail: "a buffer of another backend was passed".into(),
        }),
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

impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn alloc(&self, bytes: usize) -> Result<Buffer, BackendError> {
        // Buffers are freed asynchronously on the stream (cuMemFreeAsync): until it has run,
        // their memory still counts as used, and a size that fits could be refused.
        self.stream
            .synchronize()
            .map_err(|e| api_err("cuStreamSynchronize", e))?;
        let (free, _total) = self
            .context
            .mem_get_info()
            .map_err(|e| api_err("cuMemGetInfo", e))?;
        if bytes > free {
            return Err(BackendError::OutOfMemory {
                what: "one buffer".into(),
                needed: bytes as u64,
                available: free as u64,
            });
        }
        let slice = self
            .stream
            .alloc_zeros::<u8>(bytes.max(1))
            .map_err(|e| api_err("cuMemAlloc", e))?;
        let address = {
            let (ptr, _sync) = slice.device_ptr(&self.stream);
            ptr
        };
        Ok(Buffer {
            bytes,
            inner: BufferInner::Cuda(CudaMemory {
                slice: Mutex::new(slice),
                address,
            }),
        })
    }

    fn upload(&self, buf: &Buffer, data: &[u8]) -> Result<Seconds, BackendError> {
        let mem = cuda_memory(buf)?;
        check_len(buf, data.len())?;
        let mut slice = mem.slice.lock().unwrap_or_else(|p| p.into_inner());
        self.timed("cuMemcpyHtoD", |stream| {
            let mut view = slice.slice_mut(0..data.len());
            stream
                .memcpy_htod(data, &mut view)
                .map_err(|e| api_err("cuMemcpyHtoD", e))
        })
    }

    fn download_from(
        &self,
        buf: &Buffer,
        offset: usize,
        out: &mut [u8],
    ) -> Result<Seconds, BackendError> {
        let mem = cuda_memory(buf)?;
        let end = offset.saturating_add(out.len());
        check_len(buf, end)?;
        let slice = mem.slice.lock().unwrap_or_else(|p| p.into_inner());
        self.timed("cuMemcpyDtoH", |stream| {
            let view = slice.slice(offset..end);
            stream
                .memcpy_dtoh(&view, out)
                .map_err(|e| api_err("cuMemcpyDtoH", e))
        })
    }

    fn compile(&self, source: &ProgramSource) -> Result<Program, BackendError> {
        let text = source.cuda_source().ok_or_else(|| BackendError::Compile {
            program: source.name.to_string(),
            device: self.info.name.clone(),
            log: "the program is written in OpenCL C; run it on an OpenCL device".into(),
        })?;
        // The device's own architecture: NVRTC makes the CUBIN, so the driver never JITs a
        // PTX whose version it may not know (a newer NVRTC than the driver).
        let arch = self.info.compute_capability.as_deref().map_or_else(
            || "sm_90".to_string(),
            |cc| format!("sm_{}", cc.replace('.', "")),
        );
        let image = match nvrtc::locate() {
            Ok(_) => {
                let compiled =
                    nvrtc::compile(&text, &source.name, &arch, &source.options).map_err(|e| match e {
                        BackendError::Compile { program, log, .. } => BackendError::Compile {
                            program,
                            device: format!("{} ({arch})", self.info.name),
                            log,
                        },
                        other => other,
                    })?;
                compiled
                    .cubin
                    .unwrap_or_else(|| compiled.ptx.clone().into_bytes())
            }
            Err(missing) => precompiled(&source.name, &arch, &text).ok_or_else(|| {
                BackendError::Unavailable {
                    api: "NVRTC",
                    reason: format!(
                        "{missing}; nor is {} in HARNESS_CUBIN_DIR (make it on any machine with `harness check-kernels --arch {arch} --cubin-dir DIR`)",
                        nvrtc::cubin_file_name(&source.name, &arch, &text)
                    ),
                }
            })?,
        };
        let module = self
            .context
            .load_module(cudarc::nvrtc::Ptx::from_binary(image))
            .map_err(|e| api_err("cuModuleLoadData", e))?;
        Ok(Program {
            name: source.name.to_string(),
            inner: ProgramInner::Cuda(CudaProgram {
                module,
                functions: Mutex::new(std::collections::HashMap::new()),
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
        let prepared = self.prepare(program, kernel, launch, args)?;
        self.timed(kernel, |stream| prepared.issue(stream, kernel))
    }

    /// The launch and one synchronisation of the stream, timed by the host: no events are
    /// created or recorded for it, so the time is what a program pays per launch that it
    /// waits for.
    fn launch_wall(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<Seconds, BackendError> {
        let start = std::time::Instant::now();
        let prepared = self.prepare(program, kernel, launch, args)?;
        prepared.issue(&self.stream, kernel)?;
        self.stream
            .synchronize()
            .map_err(|e| api_err(&format!("cuStreamSynchronize after {kernel}"), e))?;
        Ok(Seconds(start.elapsed().as_secs_f64()))
    }

    fn running_clock_mhz(&self) -> Result<Option<f64>, BackendError> {
        let program = self.compile(&clock_probe_program())?;
        let out = self.alloc(3 * 8)?;
        self.launch(
            &program,
            "clock_probe",
            &Launch::single(),
            &[Arg::Buf(&out), Arg::U32(1 << 20)],
        )?;
        let mut bytes = [0u8; 24];
        self.download(&out, &mut bytes)?;
        let word = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[i * 8..i * 8 + 8]);
            u64::from_ne_bytes(w)
        };
        let (cycles, ns) = (word(0), word(1));
        Ok((ns > 0).then(|| cycles as f64 / ns as f64 * 1000.0))
    }
}

/// The clock probe (`kernels/cuda/clock_probe.cu`): the SM clock while a kernel runs. It is
/// written with the common dialect's macros but uses CUDA-only intrinsics, so it is handed
/// on as CUDA C with the prelude already in it.
pub fn clock_probe_program() -> ProgramSource {
    let common = ProgramSource::embedded(
        "cuda/clock_probe.cu",
        include_str!("../../../kernels/cuda/clock_probe.cu"),
        &[],
    );
    ProgramSource {
        text: std::borrow::Cow::Owned(common.cuda_source().unwrap_or_default()),
        dialect: super::source::Dialect::Cuda,
        ..common
    }
}

enum KernelValue {
    U32(u32),
    F32(f32),
    U64(u64),
    F64(f64),
}

fn kernel_values(args: &[Arg<'_>]) -> Result<Vec<KernelValue>, BackendError> {
    args.iter()
        .map(|arg| {
            Ok(match arg {
                Arg::Buf(buf) => KernelValue::U64(cuda_memory(buf)?.address),
                Arg::U32(v) => KernelValue::U32(*v),
                Arg::F32(v) => KernelValue::F32(*v),
                Arg::U64(v) => KernelValue::U64(*v),
                Arg::F64(v) => KernelValue::F64(*v),
            })
        })
        .collect()
}

/// The CUBIN `harness check-kernels --cubin-dir` made of exactly this source for `arch`, from
/// `HARNESS_CUBIN_DIR`, for a GPU machine without NVRTC.
fn precompiled(program: &str, arch: &str, text: &str) -> Option<Vec<u8>> {
    let dir = std::env::var_os("HARNESS_CUBIN_DIR")?;
    std::fs::read(std::path::Path::new(&dir).join(nvrtc::cubin_file_name(program, arch, text))).ok()
}

/// A launch ready to be issued: the function, its argument values and its geometry.
struct PreparedLaunch {
    function: CudaFunction,
    values: Vec<KernelValue>,
    config: LaunchConfig,
}

impl PreparedLaunch {
    /// Put the launch on `stream` (no waiting).
    fn issue(&self, stream: &Arc<CudaStream>, kernel: &str) -> Result<(), BackendError> {
        let mut builder = stream.launch_builder(&self.function);
        for value in &self.values {
            match value {
                KernelValue::U32(v) => builder.arg(v),
                KernelValue::F32(v) => builder.arg(v),
                KernelValue::U64(v) => builder.arg(v),
                KernelValue::F64(v) => builder.arg(v),
            };
        }
        // SAFETY: the argument list mirrors the kernel's signature (the kernel sources and
        // their callers are checked together by the test suite on every backend).
        unsafe { builder.launch(self.config) }
            .map(|_| ())
            .map_err(|e| api_err(&format!("cuLaunchKernel({kernel})"), e))
    }
}

impl CudaDevice {
    /// The function, argument values and grid of one launch, the grid checked against
    /// CUDA's limits.
    fn prepare(
        &self,
        program: &Program,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<PreparedLaunch, BackendError> {
        let ProgramInner::Cuda(cuda) = &program.inner else {
            return Err(BackendError::BadArguments {
                kernel: kernel.into(),
                detail: "program was compiled for another backend".into(),
            });
        };
        let function = self.function(cuda, &program.name, kernel)?;
        let values = kernel_values(args)?;
        let global = launch.padded_global();
        let grid: Vec<usize> = (0..3).map(|d| global[d] / launch.local[d].max(1)).collect();
        if grid[1] > MAX_GRID_YZ || grid[2] > MAX_GRID_YZ || grid[0] > i32::MAX as usize {
            return Err(BackendError::BadArguments {
                kernel: kernel.into(),
                detail: format!(
                    "a grid of {} × {} × {} blocks exceeds CUDA's limits (x < 2^31, y and z ≤ {MAX_GRID_YZ}); use larger blocks or fold the index space into x",
                    grid[0], grid[1], grid[2]
                ),
            });
        }
        let dim = |d: usize| grid[d] as u32;
        let config = LaunchConfig {
            grid_dim: (dim(0), dim(1), dim(2)),
            block_dim: (
                launch.local[0] as u32,
                launch.local[1] as u32,
                launch.local[2] as u32,
            ),
            shared_mem_bytes: 0,
        };
        Ok(PreparedLaunch {
            function,
            values,
            config,
        })
    }

    /// The kernel `name` of `program`, looked up once and kept. A missing kernel is named as
    /// such (with the usual cause for a `.cu` file); any other driver error is passed on as
    /// it is, so a fault left by an earlier kernel is not reported as a missing one.
    fn function(
        &self,
        program: &CudaProgram,
        program_name: &str,
        name: &str,
    ) -> Result<CudaFunction, BackendError> {
        let mut cache = program.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = cache.get(name) {
            return Ok(f.clone());
        }
        if name.contains('\0') {
            return Err(BackendError::BadArguments {
                kernel: name.escape_default().to_string(),
                detail: "a kernel name cannot contain a NUL byte".into(),
            });
        }
        let f = program.module.load_function(name).map_err(|e| {
            if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND {
                BackendError::NoSuchKernel {
                    program: program_name.to_string(),
                    kernel: if program_name.ends_with(".cu") {
                        format!("{name} (a kernel in a .cu file must be declared extern \"C\", or its name is mangled)")
                    } else {
                        name.to_string()
                    },
                }
            } else {
                api_err(&format!("cuModuleGetFunction({name})"), e)
            }
        })?;
        cache.insert(name.to_string(), f.clone());
        Ok(f)
    }
}
