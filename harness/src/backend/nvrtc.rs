//! NVRTC without a GPU: find the library, compile a program for a target architecture, and
//! read each kernel's registers and spills from `ptxas` where it is at hand.
//!
//! Compilation needs neither a driver nor a device, so every CUDA kernel can be checked on a
//! machine without a GPU (`harness check-kernels`), and the CUDA backend compiles to the
//! device's own architecture (`sm_XY`, a CUBIN the driver loads as it is) instead of PTX the
//! driver must JIT — a PTX from a newer NVRTC than the driver is refused ("Unsupported
//! .version"), a CUBIN is not.
//!
//! `cudarc` opens `libnvrtc.so.13` (or `.12`) by bare name, which finds only what the loader's
//! path knows. [`locate`] also looks in `HARNESS_NVRTC_DIR`, `CUDA_HOME`/`CUDA_PATH`,
//! `/usr/local/cuda` and the Python wheels' `nvidia/cu13/lib` and `nvidia/cuda_nvrtc/lib`
//! (under `$VIRTUAL_ENV`, `~/.local`, `/usr/local` and `/usr`), and loads what it finds by
//! full path first (with its builtins library), so the bare-name load then finds it in the
//! process.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use super::BackendError;

/// Where NVRTC was found and its version.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvrtcLibrary {
    /// The folder it was loaded from, or `None` where the system loader found it by name.
    pub dir: Option<PathBuf>,
    /// `major.minor`.
    pub version: String,
}

/// The folders searched for `libnvrtc.so.*` after the system loader's path, in order.
pub fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("HARNESS_NVRTC_DIR") {
        dirs.push(PathBuf::from(d));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(Path::new(&root).join("lib64"));
            dirs.push(Path::new(&root).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    let mut prefixes: Vec<PathBuf> = Vec::new();
    if let Some(v) = std::env::var_os("VIRTUAL_ENV") {
        prefixes.push(v.into());
    }
    if let Some(home) = std::env::var_os("HOME") {
        prefixes.push(Path::new(&home).join(".local"));
    }
    prefixes.push("/usr/local".into());
    prefixes.push("/usr".into());
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else {
            continue;
        };
        let mut pythons: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("python3"))
            })
            .collect();
        pythons.sort();
        for python in pythons {
            for packages in ["site-packages", "dist-packages"] {
                for wheel in ["nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib"] {
                    dirs.push(python.join(packages).join(wheel));
                }
            }
        }
    }
    dirs
}

/// Where `ptxas` is: on `PATH`, under `CUDA_HOME`/`CUDA_PATH`, `/usr/local/cuda`, or beside
/// an NVRTC found in a wheel (`nvidia/cu13/bin`).
pub fn find_ptxas() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            candidates.push(Path::new(&root).join("bin"));
        }
    }
    candidates.push("/usr/local/cuda/bin".into());
    candidates.extend(
        search_dirs()
            .into_iter()
            .filter_map(|d| d.parent().map(|p| p.join("bin"))),
    );
    candidates
        .into_iter()
        .map(|d| d.join("ptxas"))
        .find(|p| p.is_file())
}

/// Find and load NVRTC once per process; the error says where it looked.
pub fn locate() -> Result<NvrtcLibrary, BackendError> {
    static FOUND: OnceLock<Result<NvrtcLibrary, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            // SAFETY: only tries to dlopen the candidate library names.
            let dir = if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                None
            } else {
                let dirs = search_dirs();
                let found = dirs.iter().find_map(|d| preload(d).then(|| d.clone()));
                match found {
                    Some(d) => Some(d),
                    None => {
                        let looked: Vec<String> =
                            dirs.iter().map(|d| d.display().to_string()).collect();
                        return Err(format!(
                            "libnvrtc.so.13 (or .12) not found by the system loader nor in {}; \
                             install it (`pip install nvidia-cuda-nvrtc`) or set HARNESS_NVRTC_DIR",
                            looked.join(", ")
                        ));
                    }
                }
            };
            let (mut major, mut minor) = (0, 0);
            // SAFETY: NVRTC is loaded (checked above); the pointers are valid for the call.
            let version = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
            if version != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("nvrtcVersion failed: {version:?}"));
            }
            Ok(NvrtcLibrary {
                dir,
                version: format!("{major}.{minor}"),
            })
        })
        .clone()
        .map_err(|reason| BackendError::Unavailable {
            api: "NVRTC",
            reason,
        })
}

/// Load `dir`'s NVRTC (builtins first, which NVRTC opens by bare name) and keep it loaded for
/// the process, so that `cudarc`'s load by bare name finds it; whether it worked.
fn preload(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("libnvrtc") && !n.contains(".alt."))
        .collect();
    names.sort();
    let builtins = names.iter().find(|n| n.starts_with("libnvrtc-builtins.so"));
    let main = names
        .iter()
        .find(|n| n.as_str() == "libnvrtc.so.13" || n.as_str() == "libnvrtc.so.12");
    let Some(main) = main else {
        return false;
    };
    for name in builtins.into_iter().chain([main]) {
        // SAFETY: loading NVRTC's own libraries runs only their initialisers.
        match unsafe { libloading::Library::new(dir.join(name)) } {
            Ok(lib) => std::mem::forget(lib),
            Err(_) => return false,
        }
    }
    // SAFETY: only tries to dlopen the candidate library names (now already loaded).
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The file a precompiled CUBIN of `text` (a program's full CUDA source, named `program`)
/// for `arch` is kept in: `<program>.<arch>.<hash>.cubin`, the hash (FNV-1a, 64 bits) of the
/// source, so a CUBIN of another version of the kernels is never loaded in its place.
pub fn cubin_file_name(program: &str, arch: &str, text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{program}.{arch}.{hash:016x}.cubin")
}

/// What NVRTC made of one program for one architecture.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The architecture: `sm_XY` (a CUBIN, with the PTX beside it) or `compute_XY` (PTX).
    pub arch: String,
    /// The PTX text.
    pub ptx: String,
    /// The CUBIN, for an `sm_XY` target.
    pub cubin: Option<Vec<u8>>,
    /// NVRTC's log (warnings), possibly empty.
    pub log: String,
}

/// Compile the CUDA source `text` (named `name` in messages) for `arch` (`sm_90`,
/// `compute_90`), with `-default-device` and `options`. Needs no device. A NUL byte in the
/// source or an option is refused with a clear error instead of a panic.
pub fn compile(
    text: &str,
    name: &str,
    arch: &str,
    options: &[String],
) -> Result<Compiled, BackendError> {
    locate()?;
    let fail = |log: String| BackendError::Compile {
        program: name.to_string(),
        device: arch.to_string(),
        log,
    };
    let nul = |what: &str| {
        fail(format!(
            "{what} contains a NUL byte, which NVRTC cannot take"
        ))
    };
    let src = CString::new(text).map_err(|_| nul("the source"))?;
    let file = CString::new(name).map_err(|_| nul("the program name"))?;
    let mut all = vec![
        format!("--gpu-architecture={arch}"),
        "-default-device".to_string(),
    ];
    all.extend(options.iter().cloned());
    if all.iter().any(|o| o.contains('\0')) {
        return Err(nul("an option"));
    }
    let program = cudarc::nvrtc::result::create_program(&src, Some(file.as_c_str()))
        .map_err(|e| fail(format!("nvrtcCreateProgram: {e:?}")))?;
    let guard = Guard(program);
    // SAFETY: `program` was created above and is destroyed only by `guard`.
    let compiled = unsafe { cudarc::nvrtc::result::compile_program(program, &all) };
    // SAFETY: as above.
    let log = unsafe { cudarc::nvrtc::result::get_program_log(program) }
        .map(|raw| text_of(&raw))
        .unwrap_or_default();
    if let Err(e) = compiled {
        return Err(fail(if log.trim().is_empty() {
            format!("{e:?}")
        } else {
            log
        }));
    }
    // SAFETY: as above; the program compiled.
    let ptx = unsafe { cudarc::nvrtc::result::get_ptx(program) }
        .map(|raw| text_of(&raw))
        .map_err(|e| fail(format!("nvrtcGetPTX: {e:?}")))?;
    let cubin = if arch.starts_with("sm_") {
        let mut size = 0usize;
        // SAFETY: as above; `size` is a valid out-pointer.
        let status = unsafe { cudarc::nvrtc::sys::nvrtcGetCUBINSize(program, &mut size) };
        if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(fail(format!("nvrtcGetCUBINSize: {status:?}")));
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: `bytes` holds `size` bytes, as NVRTC asked.
        let status =
            unsafe { cudarc::nvrtc::sys::nvrtcGetCUBIN(program, bytes.as_mut_ptr().cast()) };
        if status != cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(fail(format!("nvrtcGetCUBIN: {status:?}")));
        }
        Some(bytes)
    } else {
        None
    };
    drop(guard);
    Ok(Compiled {
        arch: arch.to_string(),
        ptx,
        cubin,
        log,
    })
}

/// Destroys the NVRTC program when dropped.
struct Guard(cudarc::nvrtc::sys::nvrtcProgram);

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: the program was created by `create_program` and is destroyed once, here.
        let _ = unsafe { cudarc::nvrtc::result::destroy_program(self.0) };
    }
}

/// A NUL-terminated buffer from NVRTC as text.
fn text_of(raw: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = raw.iter().map(|&c| c as u8).collect();
    CStr::from_bytes_until_nul(&bytes)
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned())
}

/// One kernel's resources as `ptxas -v` reports them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelResources {
    /// The kernel (entry function).
    pub kernel: String,
    /// Registers per thread.
    pub registers: u32,
    /// Bytes of spill stores.
    pub spill_stores: u32,
    /// Bytes of spill loads.
    pub spill_loads: u32,
}

/// Assemble `ptx` for `arch` (`sm_90`) with `ptxas -v` and read each kernel's registers and
/// spills; the error carries ptxas's message.
pub fn ptxas_resources(
    ptxas: &Path,
    ptx: &str,
    arch: &str,
) -> Result<Vec<KernelResources>, String> {
    let dir = std::env::temp_dir().join(format!("harness-ptxas-{}", std::process::id()));
    let file = dir.join(format!("{arch}.ptx"));
    crate::export::write_atomically(&file, ptx.as_bytes())
        .map_err(|e| format!("{}: {e}", file.display()))?;
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg("-v")
        .arg("-o")
        .arg(dir.join(format!("{arch}.cubin")))
        .arg(&file)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out = out.map_err(|e| format!("{}: {e}", ptxas.display()))?;
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(text.trim().to_string());
    }
    Ok(parse_ptxas(&text))
}

/// The kernels of a `ptxas -v` report.
pub fn parse_ptxas(text: &str) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    let number_before = |line: &str, word: &str| -> Option<u32> {
        let i = line.find(word)?;
        line[..i].split_whitespace().last()?.parse().ok()
    };
    for line in text.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            kernels.push(KernelResources {
                kernel: name,
                registers: 0,
                spill_stores: 0,
                spill_loads: 0,
            });
        } else if let Some(k) = kernels.last_mut() {
            if let Some(v) = number_before(line, "bytes spill stores") {
                k.spill_stores = v;
            }
            if let Some(v) = number_before(line, "bytes spill loads") {
                k.spill_loads = v;
            }
            if let Some(v) = number_before(line, "registers") {
                k.registers = v;
            }
        }
    }
    kernels
}

/// The entry points (`.entry name(`) of a PTX module, in order.
pub fn ptx_entries(ptx: &str) -> Vec<String> {
    ptx.split(".entry")
        .skip(1)
        .filter_map(|rest| {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// Why `kernel` is not among `entries`, in one sentence: a C++ (mangled) entry of that name
/// says how to fix it (`extern "C"`); otherwise the entries are listed.
pub fn missing_entry(kernel: &str, entries: &[String]) -> String {
    // The Itanium C++ ABI writes a function `name` as `_Z<length><name><parameters>`.
    let mangled = format!("_Z{}{kernel}", kernel.len());
    if let Some(found) = entries.iter().find(|e| e.starts_with(&mangled)) {
        format!(
            "kernel {kernel} is compiled as the C++ name {found}: declare it extern \"C\" __global__ so the harness can find it by its name"
        )
    } else if entries.is_empty() {
        format!("kernel {kernel} is not in the program, which has no kernels")
    } else {
        format!(
            "kernel {kernel} is not in the program; its kernels are {}",
            entries.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ptxas_report_gives_each_kernels_registers_and_spills() {
        let report = "\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'adi_sweep' for 'sm_90'
ptxas info    : Function properties for adi_sweep
    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 400 bytes cmem[0]
ptxas info    : Compiling entry function 'vadd' for 'sm_90'
ptxas info    : Function properties for vadd
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers, 380 bytes cmem[0]
";
        let k = parse_ptxas(report);
        assert_eq!(k.len(), 2);
        assert_eq!(
            (
                k[0].kernel.as_str(),
                k[0].registers,
                k[0].spill_stores,
                k[0].spill_loads
            ),
            ("adi_sweep", 32, 8, 12)
        );
        assert_eq!((k[1].kernel.as_str(), k[1].registers), ("vadd", 8));
    }

    #[test]
    fn a_cubin_is_named_after_its_exact_source() {
        let a = cubin_file_name("stream.kern", "sm_90", "kernel a");
        assert!(a.starts_with("stream.kern.sm_90.") && a.ends_with(".cubin"));
        assert_ne!(a, cubin_file_name("stream.kern", "sm_90", "kernel b"));
        assert_ne!(a, cubin_file_name("stream.kern", "sm_80", "kernel a"));
        assert_eq!(a, cubin_file_name("stream.kern", "sm_90", "kernel a"));
        // FNV-1a of the empty text is its offset basis.
        assert_eq!(
            cubin_file_name("p", "sm_90", ""),
            "p.sm_90.cbf29ce484222325.cubin"
        );
    }

    #[test]
    fn the_search_covers_the_python_wheels_and_an_explicit_folder() {
        let dirs = search_dirs();
        assert!(dirs.iter().any(|d| d.ends_with("usr/local/cuda/lib64")));
        // Every python3.* under /usr/local/lib or /usr/lib is searched for the wheels.
        for prefix in ["/usr/local/lib", "/usr/lib"] {
            let pythons = std::fs::read_dir(prefix).into_iter().flatten().flatten();
            for p in pythons.filter(|e| e.file_name().to_string_lossy().starts_with("python3")) {
                let wheel = p.path().join("site-packages/nvidia/cu13/lib");
                assert!(dirs.contains(&wheel), "{} not searched", wheel.display());
            }
        }
    }

    #[test]
    fn entries_are_read_from_the_ptx_and_a_mangled_kernel_is_named() {
        let ptx = "//\n.version 9.0\n.visible .entry bw_triad(\n\t.param .u64 a\n)\n{\n}\n\
                   .visible .entry _Z5saxpyPfS_f(\n)\n.func helper()\n";
        let entries = ptx_entries(ptx);
        assert_eq!(entries, ["bw_triad", "_Z5saxpyPfS_f"]);
        let why = missing_entry("saxpy", &entries);
        assert!(
            why.contains("_Z5saxpyPfS_f") && why.contains("extern \"C\""),
            "{why}"
        );
        // The length is part of a mangled name: `sax` is not `_Z5saxpy…`.
        let why = missing_entry("sax", &entries);
        assert!(
            why.contains("its kernels are bw_triad, _Z5saxpyPfS_f"),
            "{why}"
        );
        assert!(missing_entry("x", &[]).contains("no kernels"));
    }
}
