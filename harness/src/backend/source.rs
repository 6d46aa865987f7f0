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
    /// Where `text` came from: `embedded`, a file path, or why a `HARNESS_KERNEL_DIR` copy
    /// was not used.
    pub origin: Cow<'static, str>,
    /// Extra compiler options: OpenCL build options (a `-cl-std=` among them replaces the
    /// default `-cl-std=CL1.2`), or NVRTC options for CUDA. Empty for the built-in programs.
    pub options: Vec<String>,
    /// The kernels its callers launch, where they are known apart from the host twins (a
    /// spec's launches); `harness check-kernels` looks for each among the compiled entry
    /// points ([`ProgramSource::expected_kernels`]).
    pub launched: Vec<String>,
    /// Why a `HARNESS_KERNEL_DIR` copy that exists could not be read (the embedded source is
    /// used in its place); `None` where there is no such variable, no copy, or it was read.
    /// The command line refuses to run with one.
    pub kernel_dir_error: Option<String>,
}

impl ProgramSource {
    /// A program from an embedded source, `path` being its place under `kernels/`
    /// (`workloads/stream.kern`) and its name the file name; `HARNESS_KERNEL_DIR/<path>`
    /// replaces it if that variable is set. A copy that cannot be read is not used, and
    /// [`ProgramSource::origin`] says why (`harness check-kernels --json` shows it).
    pub fn embedded(
        path: &'static str,
        text: &'static str,
        host: &'static [(&'static str, HostKernel)],
    ) -> Self {
        let name = path.rsplit('/').next().unwrap_or(path);
        let mut kernel_dir_error = None;
        let (text, origin) = match std::env::var_os("HARNESS_KERNEL_DIR") {
            None => (Cow::Borrowed(text), Cow::Borrowed("embedded")),
            Some(dir) => {
                let file = std::path::Path::new(&dir).join(path);
                match crate::export::read_input_text(&file) {
                    Ok(t) => (Cow::Owned(t), Cow::Owned(file.display().to_string())),
                    Err(e) => {
                        if e.kind() != std::io::ErrorKind::NotFound {
                            kernel_dir_error = Some(format!("{}: {e}", file.display()));
                        }
                        (
                            Cow::Borrowed(text),
                            Cow::Owned(format!("embedded ({} not used: {e})", file.display())),
                        )
                    }
                }
            }
        };
        ProgramSource {
            name: Cow::Borrowed(name),
            text,
            host,
            dialect: Dialect::Common,
            origin,
            options: Vec::new(),
            launched: Vec::new(),
            kernel_dir_error,
        }
    }

    /// Whether the text is the source built into the binary (no `HARNESS_KERNEL_DIR` copy
    /// was read, and it is not a spec's file).
    pub fn is_embedded(&self) -> bool {
        self.origin.starts_with("embedded")
    }

    /// The kernels that must be entry points of the compiled program: [`Self::launched`]
    /// where given, else the host twins' names.
    pub fn expected_kernels(&self) -> Vec<&str> {
        if self.launched.is_empty() {
            self.host.iter().map(|(name, _)| *name).collect()
        } else {
            self.launched.iter().map(String::as_str).collect()
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

    /// The OpenCL build options: `-cl-std=CL1.2` unless the program's options name a
    /// standard, then the program's options.
    pub fn opencl_options(&self) -> String {
        let mut all = Vec::new();
        if !self.options.iter().any(|o| o.starts_with("-cl-std=")) {
            all.push("-cl-std=CL1.2".to_string());
        }
        all.extend(self.options.iter().cloned());
        all.join(" ")
    }
}
