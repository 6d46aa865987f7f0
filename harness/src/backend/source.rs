//! Kernel sources in the common dialect, and the preludes that turn them into CUDA or OpenCL C.
//!
//! A kernel file in `kernels/` uses `KERNEL`, `GLOBAL`, `GID0`, `FENCE_GLOBAL()`, `FMA(…)` and
//! the other macros of `kernels/prelude/`; each GPU backend prepends its own prelude. The
//! sources are embedded in the binary so it runs from anywhere; `HARNESS_KERNEL_DIR` points
//! the harness at another copy of `kernels/` (to try a changed kernel without rebuilding).

use std::borrow::Cow;

use super::HostKernel;

/// The CUDA prelude (`kernels/prelude/cuda.h`).
pub const CUDA_PRELUDE: &str = include_str!("../../../kernels/prelude/cuda.h");
/// The OpenCL prelude (`kernels/prelude/opencl.h`).
pub const OPENCL_PRELUDE: &str = include_str!("../../../kernels/prelude/opencl.h");

/// The language a kernel source is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The common dialect of `kernels/prelude/` (runs on CUDA and OpenCL).
    Common,
    /// Plain OpenCL C (OpenCL devices only).
    OpenCl,
    /// Plain CUDA C (CUDA devices only).
    Cuda,
}

/// A program: one kernel source and the host twins of its kernels.
#[derive(Clone)]
pub struct ProgramSource {
    /// A short name, normally the file name under `kernels/`.
    pub name: Cow<'static, str>,
    /// The source text in the common dialect (without prelude).
    pub text: Cow<'static, str>,
    /// Native Rust twins for the host backend, by kernel name.
    pub host: &'static [(&'static str, HostKernel)],
    /// The language of `text`.
    pub dialect: Dialect,
}

impl ProgramSource {
    /// A program from an embedded source; `HARNESS_KERNEL_DIR/<name>` replaces it if set.
    pub fn embedded(
        name: &'static str,
        text: &'static str,
        host: &'static [(&'static str, HostKernel)],
    ) -> Self {
        let text = std::env::var_os("HARNESS_KERNEL_DIR")
            .and_then(|dir| std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok())
            .map_or(Cow::Borrowed(text), Cow::Owned);
        ProgramSource {
            name: Cow::Borrowed(name),
            text,
            host,
            dialect: Dialect::Common,
        }
    }

    /// The full CUDA source: prelude (for the common dialect), then the kernels; `None` for
    /// a program written in OpenCL C.
    pub fn cuda_source(&self) -> Option<String> {
        match self.dialect {
            Dialect::Common => Some(format!(
                "{CUDA_PRELUDE}\n#line 1 \"{}\"\n{}",
                self.name, self.text
            )),
            Dialect::Cuda => Some(self.text.to_string()),
            Dialect::OpenCl => None,
        }
    }

    /// The full OpenCL C source: prelude (for the common dialect), then the kernels; `None`
    /// for a program written in CUDA C.
    pub fn opencl_source(&self) -> Option<String> {
        match self.dialect {
            Dialect::Common => Some(format!(
                "{OPENCL_PRELUDE}\n#line 1 \"{}\"\n{}",
                self.name, self.text
            )),
            Dialect::OpenCl => Some(self.text.to_string()),
            Dialect::Cuda => None,
        }
    }
}
