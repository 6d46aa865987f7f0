//! Compile every kernel before asking for GPU time (`harness check-kernels`): each built-in
//! program (and each spec's kernel file) through NVRTC for each target architecture, with the
//! registers and spills `ptxas` reports where it is at hand, and through every OpenCL device
//! found. Each program must export every kernel its callers launch (a spec's launches, a
//! built-in program's host twins): a `.cu` kernel without `extern "C"` compiles under its C++
//! name, which the GPU would not find, so the check fails it and says why. Needs no GPU.

use serde::Serialize;

use crate::backend::nvrtc::{self, KernelResources, NvrtcLibrary};
use crate::backend::{Device, ProgramSource};

/// The architectures checked by default: A100, H100/H200.
pub const DEFAULT_ARCHS: [&str; 2] = ["sm_80", "sm_90"];

/// One program on one compiler.
#[derive(Debug, Clone, Serialize)]
pub struct ProgramCheck {
    /// The program's name.
    pub program: String,
    /// Where its source came from ([`ProgramSource::origin`]).
    pub origin: String,
    /// `nvrtc sm_90`, or `opencl <device>`.
    pub target: String,
    /// Whether it compiled.
    pub ok: bool,
    /// The compiler's error or warnings, where it printed any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// Per kernel, from `ptxas -v` (NVRTC targets with ptxas only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<KernelResources>,
    /// What could not be checked (no ptxas, a program in another language).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The PTX NVRTC made (NVRTC targets), for `--ptx-dir`.
    #[serde(skip)]
    pub ptx: Option<String>,
    /// The CUBIN (`sm_XY` targets) and the file name the CUDA backend looks for it under
    /// ([`nvrtc::cubin_file_name`]), for `--cubin-dir`.
    #[serde(skip)]
    pub cubin: Option<(String, Vec<u8>)>,
}

/// The whole check.
#[derive(Debug, Clone, Serialize)]
pub struct KernelReport {
    /// NVRTC, where found.
    pub nvrtc: Option<NvrtcLibrary>,
    /// Why not, where not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvrtc_missing: Option<String>,
    /// The `ptxas` used for registers and spills, where found.
    pub ptxas: Option<String>,
    /// Every program on every compiler.
    pub checks: Vec<ProgramCheck>,
}

impl ProgramCheck {
    /// A check of `program` on `target` with nothing compiled yet: passed (`ok`) or failed
    /// with `log`, with `note`; the callers add kernels, PTX and CUBIN.
    fn of(
        program: &ProgramSource,
        target: String,
        ok: bool,
        log: Option<String>,
        note: Option<&str>,
    ) -> Self {
        ProgramCheck {
            program: program.name.to_string(),
            origin: program.origin.to_string(),
            target,
            ok,
            log,
            kernels: Vec::new(),
            note: note.map(str::to_string),
            ptx: None,
            cubin: None,
        }
    }
}

impl KernelReport {
    /// The checks that failed.
    pub fn failures(&self) -> Vec<&ProgramCheck> {
        self.checks.iter().filter(|c| !c.ok).collect()
    }
}

/// The built-in programs: the microbenchmarks, the three workload programs, the cold runs'
/// eviction kernel and the clock probe.
pub fn builtin_programs() -> Vec<ProgramSource> {
    vec![
        crate::bench::kernels::program(),
        crate::bench::kernels::fp64_program(),
        crate::workloads::stream::program(),
        crate::workloads::stencil::program(),
        crate::workloads::grid3d::program(),
        crate::backend::cold::program(),
        crate::backend::cuda::clock_probe_program(),
    ]
}

/// Compile `programs` for each of `archs` through NVRTC and on each of `opencl`.
pub fn check_kernels(
    programs: &[ProgramSource],
    archs: &[String],
    opencl: &[&dyn Device],
) -> KernelReport {
    let located = nvrtc::locate();
    let ptxas = nvrtc::find_ptxas();
    let mut checks = Vec::new();
    if located.is_ok() {
        for program in programs {
            for arch in archs {
                checks.push(check_nvrtc(program, arch, ptxas.as_deref()));
            }
        }
    }
    for device in opencl {
        for program in programs {
            let target = format!("opencl {}", device.info().name);
            if program.opencl_source().is_none() {
                checks.push(ProgramCheck::of(
                    program,
                    target,
                    true,
                    None,
                    Some("written in CUDA C: not an OpenCL program"),
                ));
                continue;
            }
            let result = device.compile(program);
            checks.push(ProgramCheck::of(
                program,
                target,
                result.is_ok(),
                result.err().map(|e| e.to_string()),
                None,
            ));
        }
    }
    let (nvrtc, nvrtc_missing) = match located {
        Ok(l) => (Some(l), None),
        Err(e) => (None, Some(e.to_string())),
    };
    KernelReport {
        nvrtc,
        nvrtc_missing,
        ptxas: ptxas.map(|p| p.display().to_string()),
        checks,
    }
}

fn check_nvrtc(
    program: &ProgramSource,
    arch: &str,
    ptxas: Option<&std::path::Path>,
) -> ProgramCheck {
    let target = format!("nvrtc {arch}");
    let Some(text) = program.cuda_source() else {
        return ProgramCheck::of(
            program,
            target,
            true,
            None,
            Some("written in OpenCL C: not a CUDA program"),
        );
    };
    match nvrtc::compile(&text, &program.name, arch, &program.options) {
        Err(e) => ProgramCheck::of(program, target, false, Some(e.to_string()), None),
        Ok(compiled) => {
            // A kernel the callers launch but the module does not export (a `.cu` kernel
            // without `extern "C"`, a misspelt name) fails here, not on the GPU.
            let entries = nvrtc::ptx_entries(&compiled.ptx);
            let missing: Vec<String> = program
                .expected_kernels()
                .into_iter()
                .filter(|k| !entries.iter().any(|e| e == k))
                .map(|k| nvrtc::missing_entry(k, &entries))
                .collect();
            if !missing.is_empty() {
                return ProgramCheck {
                    ptx: Some(compiled.ptx),
                    ..ProgramCheck::of(program, target, false, Some(missing.join("; ")), None)
                };
            }
            let (kernels, note, ok) = match ptxas {
                None => (
                    Vec::new(),
                    Some("ptxas not found: registers and spills not read".to_string()),
                    true,
                ),
                Some(p) => match nvrtc::ptxas_resources(p, &compiled.ptx, arch) {
                    Ok(k) => (k, None, true),
                    Err(e) => (Vec::new(), Some(format!("ptxas refused it: {e}")), false),
                },
            };
            let log = (!compiled.log.trim().is_empty()).then(|| compiled.log.trim().to_string());
            ProgramCheck {
                kernels,
                note,
                cubin: compiled
                    .cubin
                    .map(|c| (nvrtc::cubin_file_name(&program.name, arch, &text), c)),
                ptx: Some(compiled.ptx),
                ..ProgramCheck::of(program, target, ok, log, None)
            }
        }
    }
}
