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

/// A program: one kernel source in the common dialect and the host twins of its kernels.
#[derive(Clone)]
pub struct ProgramSource {
    /// A short name, normally the file name under `kernels/`.
    pub name: &'static str,
    /// The source text in the common dialect (without prelude).
    pub text: Cow<'static, str>,
    /// Native Rust twins for the host backend, by kernel name.
    pub host: &'static [(&'static str, HostKernel)],
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
        ProgramSource { name, text, host }
    }

    /// The full CUDA source: prelude, then the kernels.
    pub fn cuda_source(&self) -> String {
        format!("{CUDA_PRELUDE}\n#line 1 \"{}\"\n{}", self.name, self.text)
    }

    /// The full OpenCL C source: prelude, then the kernels.
    pub fn opencl_source(&self) -> String {
        format!("{OPENCL_PRELUDE}\n#line 1 \"{}\"\n{}", self.name, self.text)
    }
}
