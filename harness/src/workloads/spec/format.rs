//! The spec file's structure, parsed with `toml` and validated before anything runs: every
//! expression compiled against the names its place can see ([`super::compiled`]). Every
//! error names the file, the line and the field.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::compiled::{compile, Code, Scope};
use super::expr::parse;
use super::params::{is_identifier, Params, RESERVED};
use crate::backend::{DeviceSelector, Dialect};
use crate::workloads::{Access, WorkloadError};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: String,
    source: Spanned<String>,
    #[serde(default)]
    build_options: Option<Spanned<String>>,
    #[serde(default)]
    iterations: Option<Spanned<i64>>,
    #[serde(default)]
    size: Option<Spanned<String>>,
    #[serde(default)]
    params: Option<Spanned<toml::Table>>,
    #[serde(default)]
    buffers: Vec<RawBuffer>,
    launches: Vec<RawStep>,
    check: Option<RawCheck>,
    #[serde(default)]
    distribution: Option<super::distribution::RawDistribution>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBuffer {
    name: Spanned<String>,
    #[serde(rename = "type")]
    element: Spanned<String>,
    length: Spanned<String>,
    #[serde(default)]
    init: Option<RawInit>,
    #[serde(default)]
    indexing: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "lowercase")]
enum RawInit {
    Constant(f64),
    Random {
        lo: f64,
        hi: f64,
        seed: Option<u64>,
    },
    Formula(Spanned<String>),
    #[serde(rename = "none")]
    Uninitialised,
}

/// One entry of `launches` (or of a loop's `body`): a launch, a launch repeated by a loop
/// (the old form), or a loop over a body of entries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    kernel: Option<Spanned<String>>,
    global: Option<Vec<Spanned<String>>>,
    local: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    #[serde(rename = "loop")]
    host_loop: Option<RawLoop>,
    body: Option<Vec<RawStep>>,
    bytes: Option<Spanned<String>>,
    flops: Option<Spanned<String>>,
    access: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoop {
    var: Spanned<String>,
    from: Spanned<String>,
    to: Spanned<String>,
    step: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    buffer: Spanned<String>,
    formula: Option<Spanned<String>>,
    reference: Option<Spanned<String>>,
    device: Option<Spanned<String>>,
    tolerance: Option<f64>,
}

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
    /// The spec file's text, for [`StoredSpec`].
    pub text: String,
    /// How the program runs BLOCK-distributed, for the cluster prediction (`[distribution]`).
    pub distribution: Option<super::distribution::Distribution>,
}

/// Finds a buffer's index by its (spanned) name, naming the field on failure.
type BufferLookup<'a> = dyn Fn(&Spanned<String>, &str) -> Result<usize, WorkloadError> + 'a;

/// The deepest nesting of loops a spec may have.
pub const MAX_LOOP_DEPTH: usize = 16;

struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn err(
        &self,
        span: &Range<usize>,
        field: &str,
        message: impl std::fmt::Display,
    ) -> WorkloadError {
        WorkloadError::Invalid(format!(
            "{}: line {}: {field}: {message}",
            self.path.display(),
            self.line(span)
        ))
    }

    fn err_no_line(&self, field: &str, message: impl std::fmt::Display) -> WorkloadError {
        WorkloadError::Invalid(format!("{}: {field}: {message}", self.path.display()))
    }

    /// Parse and compile `s` against `scope`.
    fn code(&self, s: &Spanned<String>, field: &str, scope: &Scope) -> Result<Code, WorkloadError> {
        let e = parse(s.get_ref()).map_err(|e| {
            self.err(
                &s.span(),
                field,
                format!("'{}': column {}: {}", s.get_ref(), e.column, e.message),
            )
        })?;
        compile(&e, scope)
            .map_err(|m| self.err(&s.span(), field, format!("'{}': {m}", s.get_ref())))
    }
}

fn element(ctx: &Ctx<'_>, s: &Spanned<String>, field: &str) -> Result<Element, WorkloadError> {
    match s.get_ref().as_str() {
        "f32" | "float" => Ok(Element::F32),
        "f64" | "double" => Ok(Element::F64),
        "u32" | "uint" => Ok(Element::U32),
        "i32" | "int" => Ok(Element::I32),
        other => Err(ctx.err(
            &s.span(),
            field,
            format!(
                "unknown type '{}' (use f32, f64, u32 or i32)",
                other.chars().take(40).collect::<String>()
            ),
        )),
    }
}

/// Read and validate a spec file.
pub fn load(path: &Path) -> Result<SpecWorkload, WorkloadError> {
    load_at_depth(path, 0)
}

/// A spec as a series file stores it: the file it came from, its text, and the parameters
/// it ran with, so that the series says what each size's work was without the spec file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredSpec {
    /// The spec file as given on the command line.
    pub file: String,
    /// Its text.
    pub text: String,
    /// The `--param` overrides it ran with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<(String, f64)>,
}

impl StoredSpec {
    /// The workload again, from the stored text alone: buffers, parameters and launches as
    /// they were (the kernel file is not read and the check is left out, so it can be
    /// measured for sizes and work but not run).
    pub fn workload(&self) -> Result<SpecWorkload, WorkloadError> {
        parse_spec(Path::new(&self.file), &self.text, Reading::Stored)?.with_params(&self.params)
    }
}

/// How much of the file system a parse may read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reading {
    /// The kernel file and, at depth 0, a reference spec.
    Files {
        /// 0 for the spec given, 1 for its reference.
        depth: usize,
    },
    /// Nothing: a spec stored in a series.
    Stored,
}

fn load_at_depth(path: &Path, depth: usize) -> Result<SpecWorkload, WorkloadError> {
    let text = crate::export::read_input_text(path)
        .map_err(|e| WorkloadError::Invalid(format!("{}: {e}", path.display())))?;
    parse_spec(path, &text, Reading::Files { depth })
}

fn parse_spec(path: &Path, text: &str, reading: Reading) -> Result<SpecWorkload, WorkloadError> {
    let raw: RawSpec = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        WorkloadError::Invalid(format!(
            "{}: line {line}: {}",
            path.display(),
            e.message().trim()
        ))
    })?;
    let ctx = Ctx { path, text };
    let dir = path.parent().unwrap_or(Path::new("."));
    let source_path = dir.join(raw.source.get_ref());
    let dialect = match source_path.extension().and_then(|e| e.to_str()) {
        Some("cl") => Dialect::OpenCl,
        Some("cu") => Dialect::Cuda,
        Some("kern") => Dialect::Common,
        _ => {
            return Err(ctx.err(
                &raw.source.span(),
                "source",
                "the kernel file must end in .cl, .cu or .kern",
            ))
        }
    };
    let source_text = match reading {
        Reading::Stored => String::new(),
        Reading::Files { .. } => crate::export::read_input_text(&source_path).map_err(|e| {
            ctx.err(
                &raw.source.span(),
                "source",
                format!("{}: {e}", source_path.display()),
            )
        })?,
    };
    let params = parameters(&ctx, &raw)?;
    let base = params.scope();
    let p = params.slots();
    let mut slots = Slots {
        iters: p,
        iter: p + 1,
        element: p + 2,
        total: p + 3,
    };
    let buffers = raw
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| buffer(&ctx, i, b, &base, slots.element))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(dup) = buffers
        .iter()
        .enumerate()
        .find(|(i, b)| buffers[..*i].iter().any(|o| o.name == b.name))
    {
        return Err(ctx.err(
            &raw.buffers[dup.0].name.span(),
            &format!("buffers[{}].name", dup.0),
            format!("a second buffer called '{}'", dup.1.name),
        ));
    }
    let find = |name: &Spanned<String>, field: &str| {
        buffers
            .iter()
            .position(|b| &b.name == name.get_ref())
            .ok_or_else(|| {
                ctx.err(
                    &name.span(),
                    field,
                    format!("unknown buffer '{}'", name.get_ref()),
                )
            })
    };
    if raw.launches.is_empty() {
        return Err(ctx.err_no_line("launches", "at least one launch is needed"));
    }
    let run_scope = base
        .with_var("iters", slots.iters)
        .with_var("iter", slots.iter);
    let mut builder = StepBuilder {
        ctx: &ctx,
        find: &find,
        slots: &mut slots,
    };
    let steps = builder.steps(&raw.launches, "launches", &run_scope, 0)?;
    let distribution = match &raw.distribution {
        None => None,
        Some(d) => {
            let fail =
                |span: &Range<usize>, field: &str, message: String| ctx.err(span, field, message);
            let code = |e: &Spanned<String>, field: &str, scope: &Scope| ctx.code(e, field, scope);
            Some(super::distribution::compile(
                d,
                &base,
                &kernel_names(&steps),
                &fail,
                &code,
            )?)
        }
    };
    let check = match (&raw.check, reading) {
        (Some(c), Reading::Files { depth }) => {
            Some(check(&ctx, c, &buffers, &base, &slots, &find, depth)?)
        }
        _ => None,
    };
    let build_options = raw
        .build_options
        .as_ref()
        .map(|o| o.get_ref().split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let default_iterations = match &raw.iterations {
        None => None,
        Some(n) if *n.get_ref() >= 1 && *n.get_ref() <= 1_000_000_000 => {
            Some(*n.get_ref() as usize)
        }
        Some(n) => {
            return Err(ctx.err(
                &n.span(),
                "iterations",
                format!("{} is not a number of iterations (1 or more)", n.get_ref()),
            ))
        }
    };
    Ok(SpecWorkload {
        name: raw.name,
        path: path.to_path_buf(),
        source_path,
        source_text,
        dialect,
        build_options,
        default_iterations,
        params,
        buffers,
        steps,
        check,
        slots,
        overrides: Vec::new(),
        text: text.to_string(),
        distribution,
    })
}

/// The kernels `steps` launch, each once, in the order they first appear.
pub(super) fn kernel_names(steps: &[Step]) -> Vec<String> {
    fn walk(steps: &[Step], out: &mut Vec<String>) {
        for s in steps {
            match s {
                Step::Launch(l) => {
                    if !out.contains(&l.kernel) {
                        out.push(l.kernel.clone());
                    }
                }
                Step::Loop(l) => walk(&l.body, out),
            }
        }
    }
    let mut out = Vec::new();
    walk(steps, &mut out);
    out
}

fn parameters(ctx: &Ctx<'_>, raw: &RawSpec) -> Result<Params, WorkloadError> {
    let size_name = raw
        .size
        .as_ref()
        .map_or("N".to_string(), |s| s.get_ref().clone());
    let mut pairs = Vec::new();
    if let Some(table) = &raw.params {
        for (name, value) in table.get_ref() {
            let text = match value {
                toml::Value::Integer(v) => v.to_string(),
                toml::Value::Float(v) => v.to_string(),
                toml::Value::String(s) => s.clone(),
                other => {
                    return Err(ctx.err(
                        &table.span(),
                        &format!("params.{name}"),
                        format!(
                            "a {} where a number or an expression string goes",
                            other.type_str()
                        ),
                    ))
                }
            };
            pairs.push((name.clone(), text));
        }
    }
    Params::resolve(&size_name, &pairs).map_err(|m| {
        let span = match (&raw.params, &raw.size) {
            (Some(t), _) if !m.starts_with("size:") => t.span(),
            (_, Some(s)) => s.span(),
            (Some(t), None) => t.span(),
            (None, None) => 0..0,
        };
        let (field, message) = m.split_once(": ").unwrap_or(("params", &m));
        ctx.err(&span, field, message)
    })
}

fn buffer(
    ctx: &Ctx<'_>,
    i: usize,
    b: &RawBuffer,
    scope: &Scope,
    element_slot: usize,
) -> Result<BufferSpec, WorkloadError> {
    let field = |f: &str| format!("buffers[{i}].{f}");
    if !is_identifier(b.name.get_ref()) {
        return Err(ctx.err(
            &b.name.span(),
            &field("name"),
            format!(
                "{:?} is not a buffer name: a letter or _, then letters, digits or _",
                b.name.get_ref().chars().take(40).collect::<String>()
            ),
        ));
    }
    let init = match &b.init {
        None => Init::Constant(0.0),
        Some(RawInit::Constant(v)) => Init::Constant(*v),
        Some(RawInit::Random { lo, hi, seed }) => Init::Random {
            lo: *lo,
            hi: *hi,
            seed: seed.unwrap_or(1),
        },
        Some(RawInit::Formula(f)) => Init::Formula(ctx.code(
            f,
            &field("init.formula"),
            &scope.with_var("i", element_slot),
        )?),
        Some(RawInit::Uninitialised) => Init::Uninitialised,
    };
    let by_work_item = match &b.indexing {
        None => true,
        Some(v) => match v.get_ref().as_str() {
            "work-item" => true,
            "own" => false,
            other => {
                return Err(ctx.err(
                    &v.span(),
                    &field("indexing"),
                    format!(
                        "unknown indexing {:?} (use \"work-item\" or \"own\")",
                        other.chars().take(40).collect::<String>()
                    ),
                ))
            }
        },
    };
    Ok(BufferSpec {
        name: b.name.get_ref().clone(),
        element: element(ctx, &b.element, &field("type"))?,
        length: ctx.code(&b.length, &field("length"), scope)?,
        init,
        by_work_item,
    })
}

struct StepBuilder<'a, 'b> {
    ctx: &'a Ctx<'b>,
    find: &'a BufferLookup<'a>,
    slots: &'a mut Slots,
}

impl StepBuilder<'_, '_> {
    fn steps(
        &mut self,
        raw: &[RawStep],
        path: &str,
        scope: &Scope,
        depth: usize,
    ) -> Result<Vec<Step>, WorkloadError> {
        raw.iter()
            .enumerate()
            .map(|(i, s)| self.step(s, &format!("{path}[{i}]"), scope, depth))
            .collect()
    }

    fn step(
        &mut self,
        s: &RawStep,
        path: &str,
        scope: &Scope,
        depth: usize,
    ) -> Result<Step, WorkloadError> {
        let ctx = self.ctx;
        let field = |f: &str| format!("{path}.{f}");
        if let Some(body) = &s.body {
            let Some(lp) = &s.host_loop else {
                return Err(ctx.err_no_line(
                    &field("body"),
                    "a body belongs to a loop: add loop = { var = \"k\", from = \"…\", to = \"…\" }",
                ));
            };
            if let Some(k) = &s.kernel {
                return Err(ctx.err(
                    &k.span(),
                    &field("kernel"),
                    "a loop with a body holds its launches in the body; move the kernel into a body entry",
                ));
            }
            if s.global.is_some()
                || s.local.is_some()
                || !s.args.is_empty()
                || s.bytes.is_some()
                || s.flops.is_some()
                || s.access.is_some()
            {
                return Err(ctx.err(
                    &lp.var.span(),
                    path,
                    "a loop with a body takes no global, local, args, bytes, flops or access of its own",
                ));
            }
            if body.is_empty() {
                return Err(ctx.err(&lp.var.span(), &field("body"), "an empty body"));
            }
            return self.host_loop(lp, path, scope, depth, |b, inner| {
                b.steps(body, &field("body"), inner, depth + 1)
            });
        }
        let launch_scope = scope.clone();
        match &s.host_loop {
            None => Ok(Step::Launch(self.launch(s, path, &launch_scope)?)),
            Some(lp) => self.host_loop(lp, path, scope, depth, |b, inner| {
                Ok(vec![Step::Launch(b.launch(s, path, inner)?)])
            }),
        }
    }

    fn host_loop(
        &mut self,
        lp: &RawLoop,
        path: &str,
        scope: &Scope,
        depth: usize,
        body: impl FnOnce(&mut Self, &Scope) -> Result<Vec<Step>, WorkloadError>,
    ) -> Result<Step, WorkloadError> {
        let ctx = self.ctx;
        let field = |f: &str| format!("{path}.loop.{f}");
        if depth >= MAX_LOOP_DEPTH {
            return Err(ctx.err(
                &lp.var.span(),
                &field("var"),
                format!("loops nested more than {MAX_LOOP_DEPTH} deep"),
            ));
        }
        let var = lp.var.get_ref();
        if !is_identifier(var) {
            return Err(ctx.err(
                &lp.var.span(),
                &field("var"),
                format!(
                    "'{}' is not a variable name (a letter or _, then letters, digits or _)",
                    var.chars().take(40).collect::<String>()
                ),
            ));
        }
        if scope.slot(var).is_some() || RESERVED.contains(&var.as_str()) {
            return Err(ctx.err(
                &lp.var.span(),
                &field("var"),
                format!(
                    "'{var}' is already a name here ({}); pick another",
                    scope.names()
                ),
            ));
        }
        let from = ctx.code(&lp.from, &field("from"), scope)?;
        let to = ctx.code(&lp.to, &field("to"), scope)?;
        let step = match &lp.step {
            Some(s) => ctx.code(s, &field("step"), scope)?,
            None => Code::Num(1.0),
        };
        let slot = self.slots.total;
        self.slots.total += 1;
        let inner = scope.with_var(var, slot);
        let body = body(self, &inner)?;
        Ok(Step::Loop(LoopSpec {
            var: var.clone(),
            slot,
            from,
            to,
            step,
            body,
        }))
    }

    fn launch(
        &mut self,
        l: &RawStep,
        path: &str,
        scope: &Scope,
    ) -> Result<LaunchSpec, WorkloadError> {
        let ctx = self.ctx;
        let field = |f: &str| format!("{path}.{f}");
        let Some(kernel) = &l.kernel else {
            let message = "missing: a launch names its kernel (or, for a loop over several launches, give loop and body)";
            let near = l
                .global
                .iter()
                .chain(l.local.iter())
                .flatten()
                .chain(l.args.iter())
                .next();
            return Err(match near {
                Some(s) => ctx.err(&s.span(), &field("kernel"), message),
                None => ctx.err_no_line(&field("kernel"), message),
            });
        };
        if !is_identifier(kernel.get_ref()) {
            return Err(ctx.err(
                &kernel.span(),
                &field("kernel"),
                format!(
                    "{:?} is not a kernel name: letters, digits and _, not starting with a digit, as in the kernel file",
                    kernel.get_ref()
                ),
            ));
        }
        let Some(global) = &l.global else {
            return Err(ctx.err(
                &kernel.span(),
                &field("global"),
                "missing: give 1, 2 or 3 sizes",
            ));
        };
        if global.is_empty() || global.len() > 3 {
            return Err(ctx.err(&kernel.span(), &field("global"), "give 1, 2 or 3 sizes"));
        }
        if let Some(local) = &l.local {
            if local.len() != global.len() {
                return Err(ctx.err(
                    &kernel.span(),
                    &field("local"),
                    "needs as many sizes as global",
                ));
            }
        }
        let codes = |v: &[Spanned<String>], f: &str| {
            v.iter()
                .map(|s| ctx.code(s, &field(f), scope))
                .collect::<Result<Vec<_>, _>>()
        };
        let args = l
            .args
            .iter()
            .enumerate()
            .map(|(j, a)| arg(ctx, a, &field(&format!("args[{j}]")), self.find, scope))
            .collect::<Result<Vec<_>, _>>()?;
        let access = l
            .access
            .as_ref()
            .map(|a| {
                Access::parse(a.get_ref()).ok_or_else(|| {
                    ctx.err(
                        &a.span(),
                        &field("access"),
                        format!(
                            "{:?} is not an access pattern: one of {}",
                            a.get_ref().chars().take(40).collect::<String>(),
                            Access::NAMES.join(", ")
                        ),
                    )
                })
            })
            .transpose()?;
        Ok(LaunchSpec {
            kernel: kernel.get_ref().clone(),
            global: codes(global, "global")?,
            local: l.local.as_deref().map(|v| codes(v, "local")).transpose()?,
            args,
            bytes: l
                .bytes
                .as_ref()
                .map(|b| ctx.code(b, &field("bytes"), scope))
                .transpose()?,
            flops: l
                .flops
                .as_ref()
                .map(|f| ctx.code(f, &field("flops"), scope))
                .transpose()?,
            access,
        })
    }
}

fn check(
    ctx: &Ctx<'_>,
    c: &RawCheck,
    buffers: &[BufferSpec],
    base: &Scope,
    slots: &Slots,
    find: &BufferLookup<'_>,
    depth: usize,
) -> Result<CheckSpec, WorkloadError> {
    let buffer = find(&c.buffer, "check.buffer")?;
    let tolerance = c.tolerance.unwrap_or(1e-5);
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(ctx.err(
            &c.buffer.span(),
            "check.tolerance",
            format!("{tolerance} is not a tolerance (a number ≥ 0)"),
        ));
    }
    let expected = match (&c.formula, &c.reference) {
        (Some(f), None) => {
            if let Some(d) = &c.device {
                return Err(ctx.err(
                    &d.span(),
                    "check.device",
                    "a device runs a reference; a formula check needs none",
                ));
            }
            let with_initial: Vec<(String, usize)> = buffers
                .iter()
                .enumerate()
                .filter(|(_, b)| !matches!(b.init, Init::Uninitialised))
                .map(|(i, b)| (b.name.clone(), i))
                .collect();
            let scope = base
                .with_var("iters", slots.iters)
                .with_var("i", slots.element)
                .with_buffers(with_initial);
            Expected::Formula(ctx.code(f, "check.formula", &scope)?)
        }
        (None, Some(r)) => {
            let device = c
                .device
                .as_ref()
                .map(|d| {
                    d.get_ref()
                        .parse::<DeviceSelector>()
                        .map_err(|m| ctx.err(&d.span(), "check.device", m))
                })
                .transpose()?;
            let spec = if r.get_ref() == "self" {
                if device.is_none() {
                    return Err(ctx.err(
                        &r.span(),
                        "check.reference",
                        "\"self\" runs this spec again on another device: name it with device = \"host-cl\", \"opencl\", … (on the same device the run would be compared with itself)",
                    ));
                }
                None
            } else {
                if depth > 0 {
                    return Err(ctx.err(
                        &r.span(),
                        "check.reference",
                        "a reference spec's own reference is not followed; reference specs are checked by their formula or not at all",
                    ));
                }
                let dir = ctx.path.parent().unwrap_or(Path::new("."));
                let other = load_at_depth(&dir.join(r.get_ref()), depth + 1).map_err(|e| {
                    ctx.err(&r.span(), "check.reference", e.to_string())
                })?;
                let name = &buffers[buffer].name;
                match other.buffers.iter().find(|b| &b.name == name) {
                    Some(b) if b.element == buffers[buffer].element => {}
                    Some(b) => {
                        return Err(ctx.err(
                            &r.span(),
                            "check.reference",
                            format!(
                                "the reference's buffer {name} is {}, this spec's is {}",
                                b.element.name(),
                                buffers[buffer].element.name()
                            ),
                        ))
                    }
                    None => {
                        return Err(ctx.err(
                            &r.span(),
                            "check.reference",
                            format!("the reference spec has no buffer called {name}"),
                        ))
                    }
                }
                Some(Box::new(other))
            };
            Expected::Reference { spec, device }
        }
        (Some(f), Some(_)) => {
            return Err(ctx.err(
                &f.span(),
                "check",
                "give a formula or a reference, not both",
            ))
        }
        (None, None) => {
            return Err(ctx.err(
                &c.buffer.span(),
                "check",
                "say what to expect: formula = \"…\" (closed form) or reference = \"self\" | \"other.toml\"",
            ))
        }
    };
    Ok(CheckSpec {
        buffer,
        expected,
        tolerance,
    })
}

fn arg(
    ctx: &Ctx<'_>,
    a: &Spanned<String>,
    field: &str,
    find: &BufferLookup<'_>,
    scope: &Scope,
) -> Result<ArgSpec, WorkloadError> {
    let Some((kind, rest)) = a.get_ref().split_once(':') else {
        return Err(ctx.err(
            &a.span(),
            field,
            format!(
                "'{}': write buf:NAME, f32:EXPR, f64:EXPR, u32:EXPR or i32:EXPR",
                a.get_ref()
            ),
        ));
    };
    let rest_spanned = Spanned::new(a.span(), rest.trim().to_string());
    if kind.trim() == "buf" {
        return Ok(ArgSpec::Buffer(find(&rest_spanned, field)?));
    }
    let kind_spanned = Spanned::new(a.span(), kind.trim().to_string());
    Ok(ArgSpec::Scalar(
        element(ctx, &kind_spanned, field)?,
        ctx.code(&rest_spanned, field, scope)?,
    ))
}
