//! The validated spec: its buffers, launches, loops and check, each expression compiled.

use std::path::PathBuf;

use crate::backend::{DeviceSelector, Dialect};
use crate::workloads::spec::compiled::Code;
use crate::workloads::spec::params::Params;
use crate::workloads::Access;

/// Element type of a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// 32-bit float.
    F32,
    /// 64-bit float (`double`).
    F64,
    /// 32-bit unsigned.
    U32,
    /// 32-bit signed.
    I32,
}

impl Element {
    /// Bytes per element.
    pub fn bytes(self) -> usize {
        match self {
            Element::F64 => 8,
            _ => 4,
        }
    }

    /// The name used in spec files.
    pub fn name(self) -> &'static str {
        match self {
            Element::F32 => "f32",
            Element::F64 => "f64",
            Element::U32 => "u32",
            Element::I32 => "i32",
        }
    }
}

/// Initial contents of a buffer.
#[derive(Debug, Clone)]
pub enum Init {
    /// Every element the same.
    Constant(f64),
    /// Uniform in [lo, hi), seeded.
    Random {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
        /// Seed.
        seed: u64,
    },
    /// A formula of the element index `i` and the parameters.
    Formula(Code),
    /// Nothing uploaded: the device buffer is allocated (and backed) but its contents are
    /// whatever the kernels write (`init = "none"`).
    Uninitialised,
}

/// A validated buffer.
#[derive(Debug, Clone)]
pub struct BufferSpec {
    /// Name used in args and checks.
    pub name: String,
    /// Element type.
    pub element: Element,
    /// Length as an expression of the parameters.
    pub length: Code,
    /// Initial data.
    pub init: Init,
    /// Whether kernels index the buffer by work item (the default: every launch passing it
    /// must have at most `length` work items), or keep within it their own way (`indexing =
    /// "own"`, e.g. a reduction cell: then the user guarantees the bounds).
    pub by_work_item: bool,
}

/// A validated kernel argument.
#[derive(Debug, Clone)]
pub enum ArgSpec {
    /// A buffer by index into the buffer list.
    Buffer(usize),
    /// A scalar of a type, as an expression.
    Scalar(Element, Code),
}

/// A validated launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// Kernel name.
    pub kernel: String,
    /// Global size per dimension (a launch with a zero size is skipped).
    pub global: Vec<Code>,
    /// Local size per dimension, or the device's choice.
    pub local: Option<Vec<Code>>,
    /// Arguments.
    pub args: Vec<ArgSpec>,
    /// Bytes the launch moves (each element read or written counted once), where the spec
    /// says: the phase's GB/s, and what the calibrated prediction moves between memory
    /// levels.
    pub bytes: Option<Code>,
    /// Floating-point operations the launch runs (an FMA counts two), where the spec says
    /// (`flops = "…"`): with the calibration's operation rate, what tells a compute-bound
    /// launch from one that waits on memory latency.
    pub flops: Option<Code>,
    /// How it reads and writes its buffers, where the spec says (`access = "…"`).
    pub access: Option<Access>,
    /// The buffers it reads at indices another array holds, each with its number of such
    /// reads (`gathers = { x = "NNZ" }`): the `calibrated` prediction moves those reads by
    /// the calibration's random gather sweep at the buffer's size.
    pub gathers: Vec<(usize, Code)>,
    /// The buffers its work items binary-search (`searches = { a = "1" }`): the
    /// `calibrated` prediction moves each search by the random gather sweep at the tree's
    /// footprint level by level.
    pub searches: Vec<SearchSpec>,
    /// The buffers each of its work items walks a stride apart (`walks = { A = { stride =
    /// "M", steps = "K" } }`): the `calibrated` prediction charges each step what the page
    /// walk sweep says a step costs along the target's walks.
    pub walks: Vec<WalkSpec>,
}

/// One buffer a launch's work items walk (a spec's `walks`): each work item reads `steps`
/// elements `stride` elements apart, as a column of a column-major matrix.
#[derive(Debug, Clone)]
pub struct WalkSpec {
    /// The buffer's index among the spec's buffers.
    pub buffer: usize,
    /// Elements from one step to the next.
    pub stride: Code,
    /// Steps of one work item's walk.
    pub steps: Code,
}

/// One buffer a launch binary-searches (a spec's `searches`).
#[derive(Debug, Clone)]
pub struct SearchSpec {
    /// The buffer's index among the spec's buffers.
    pub buffer: usize,
    /// How many sorted arrays it holds side by side, each searched on its own.
    pub arrays: Code,
    /// Elements from one key to the next (a key inside a record of several fields).
    pub stride: Code,
}

/// A host loop: `var` from `from` to `to` inclusive in steps of `step`, running `body` in
/// order at each value.
#[derive(Debug, Clone)]
pub struct LoopSpec {
    /// The loop variable's name.
    pub var: String,
    /// Its slot in the values array.
    pub slot: usize,
    /// First value.
    pub from: Code,
    /// Last value (inclusive).
    pub to: Code,
    /// Step (non-zero; negative counts down).
    pub step: Code,
    /// The steps run at each value.
    pub body: Vec<Step>,
}

/// One step of an iteration.
#[derive(Debug, Clone)]
pub enum Step {
    /// One launch.
    Launch(LaunchSpec),
    /// A host loop over a sequence of steps.
    Loop(LoopSpec),
}

/// Where a check's expected values come from.
#[derive(Debug, Clone)]
pub enum Expected {
    /// A closed-form formula of `i`, the parameters, `iters` and buffers' initial contents.
    Formula(Code),
    /// Another run: this spec (`reference = "self"`) or a reference spec, on the device
    /// `device` (the measured one when `None`); its buffer of the same name is compared.
    Reference {
        /// The reference program; `None` for this spec itself.
        spec: Option<Box<SpecWorkload>>,
        /// The reference device, if not the measured one.
        device: Option<DeviceSelector>,
    },
}

/// A validated check.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    /// Index of the checked buffer.
    pub buffer: usize,
    /// The expected values.
    pub expected: Expected,
    /// Relative tolerance.
    pub tolerance: f64,
}

/// The fixed slots after the parameters' in the values array.
#[derive(Debug, Clone, Copy)]
pub struct Slots {
    /// `iters`, the number of iterations.
    pub iters: usize,
    /// `iter`, the current iteration, from 0.
    pub iter: usize,
    /// `i`, the element index in init and check formulas.
    pub element: usize,
    /// Total slots, loop variables included.
    pub total: usize,
}

/// A loaded, validated spec: a [`Workload`](crate::workloads::Workload).
#[derive(Debug, Clone)]
pub struct SpecWorkload {
    /// The spec's name.
    pub name: String,
    /// The spec file.
    pub path: PathBuf,
    /// The kernel file.
    pub source_path: PathBuf,
    /// Its text.
    pub source_text: String,
    /// Its dialect, from the extension.
    pub dialect: Dialect,
    /// Extra compiler options (OpenCL build options, or NVRTC options for CUDA).
    pub build_options: Vec<String>,
    /// Iterations when the command line gives none.
    pub default_iterations: Option<usize>,
    /// The size parameter and the named parameters.
    pub params: Params,
    /// Buffers.
    pub buffers: Vec<BufferSpec>,
    /// One iteration's steps.
    pub steps: Vec<Step>,
    /// Optional check.
    pub check: Option<CheckSpec>,
    /// The values array's layout.
    pub slots: Slots,
    /// `--param` overrides: (slot, value).
    pub overrides: Vec<(usize, f64)>,
    /// The spec file's text, for [`StoredSpec`](super::StoredSpec).
    pub text: String,
    /// How the program runs BLOCK-distributed, for the cluster prediction (`[distribution]`).
    pub distribution: Option<crate::workloads::spec::distribution::Distribution>,
}
