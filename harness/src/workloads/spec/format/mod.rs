//! The spec file's structure, parsed with `toml` and validated before anything runs: every
//! expression compiled against the names its place can see ([`super::compiled`]). Every
//! error names the file, the line and the field.
//!
//! This file holds the file as written (`Raw*`), the error context, the parse and the
//! parameters; `validated` holds the validated spec, `buffers` a buffer's validation,
//! `steps` the launches' and loops', `check` the check's.

mod buffers;
mod check;
mod steps;
mod validated;

pub use validated::{
    ArgSpec, BufferSpec, CheckSpec, Element, Expected, Init, LaunchSpec, LoopSpec, SearchSpec,
    Slots, SpecWorkload, Step, WalkSpec,
};

use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::compiled::{compile, Code, Scope};
use super::expr::parse;
use super::params::Params;
use crate::backend::Dialect;
use crate::workloads::WorkloadError;
use buffers::buffer;
use check::check;
use steps::StepBuilder;

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
    gathers: Option<Spanned<toml::Table>>,
    searches: Option<Spanned<toml::Table>>,
    walks: Option<Spanned<toml::Table>>,
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

/// A spec as a series file stores it: the file it came from, its text, its kernel source
/// and the parameters it ran with, so that the series says what each size's work was, and
/// what the kernel's source shows of its accesses, without the spec file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredSpec {
    /// The spec file as given on the command line.
    pub file: String,
    /// Its text.
    pub text: String,
    /// The kernel file's text, as it ran (absent in files written before 2026-12-02: what a
    /// prediction reads from the source, the notes on undeclared walks and gathers, is then
    /// not there on re-assessment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The `--param` overrides it ran with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<(String, f64)>,
}

impl StoredSpec {
    /// The workload again, from the stored texts alone: buffers, parameters and launches as
    /// they were, and the kernel's source where it was stored (no file is read and the check
    /// is left out, so it can be measured for sizes and work but not run).
    pub fn workload(&self) -> Result<SpecWorkload, WorkloadError> {
        let mut spec = parse_spec(Path::new(&self.file), &self.text, Reading::Stored)?
            .with_params(&self.params)?;
        if let Some(source) = &self.source {
            spec.source_text = source.clone();
        }
        Ok(spec)
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
