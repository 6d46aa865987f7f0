//! The spec file's structure, parsed with `toml` and validated before anything runs. Every
//! error names the file, the line and the field.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::expr::{parse, Expr};
use crate::backend::Dialect;
use crate::workloads::WorkloadError;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    name: String,
    source: Spanned<String>,
    #[serde(default)]
    buffers: Vec<RawBuffer>,
    launches: Vec<RawLaunch>,
    check: Option<RawCheck>,
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
    Random { lo: f64, hi: f64, seed: Option<u64> },
    Formula(Spanned<String>),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLaunch {
    kernel: Spanned<String>,
    global: Vec<Spanned<String>>,
    local: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    args: Vec<Spanned<String>>,
    #[serde(rename = "loop")]
    host_loop: Option<RawLoop>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoop {
    var: Spanned<String>,
    from: Spanned<String>,
    to: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    buffer: Spanned<String>,
    formula: Spanned<String>,
    tolerance: Option<f64>,
}

/// Element type of a buffer (all four bytes wide).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Element {
    /// 32-bit float.
    F32,
    /// 32-bit unsigned.
    U32,
    /// 32-bit signed.
    I32,
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
    /// A formula of `i` and `N`.
    Formula(Expr),
}

/// A validated buffer.
#[derive(Debug, Clone)]
pub struct BufferSpec {
    /// Name used in args and checks.
    pub name: String,
    /// Element type.
    pub element: Element,
    /// Length as an expression of N.
    pub length: Expr,
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
    Scalar(Element, Expr),
}

/// A validated launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    /// Kernel name.
    pub kernel: String,
    /// Global size per dimension.
    pub global: Vec<Expr>,
    /// Local size per dimension, or the device's choice.
    pub local: Option<Vec<Expr>>,
    /// Arguments.
    pub args: Vec<ArgSpec>,
    /// Host loop: variable name (`k` in expressions), from, to (inclusive).
    pub host_loop: Option<(Expr, Expr)>,
}

/// A validated check.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    /// Index of the checked buffer.
    pub buffer: usize,
    /// Expected value of element i, from the buffers' initial contents.
    pub formula: Expr,
    /// Relative tolerance.
    pub tolerance: f64,
}

/// A loaded, validated spec: a [`Workload`](crate::workloads::Workload).
#[derive(Debug, Clone)]
pub struct SpecWorkload {
    /// The spec's name.
    pub name: String,
    /// The kernel file.
    pub source_path: PathBuf,
    /// Its text.
    pub source_text: String,
    /// Its dialect, from the extension.
    pub dialect: Dialect,
    /// Buffers.
    pub buffers: Vec<BufferSpec>,
    /// One iteration's launches.
    pub launches: Vec<LaunchSpec>,
    /// Optional host check.
    pub check: Option<CheckSpec>,
}

/// Finds a buffer's index by its (spanned) name, naming the field on failure.
type BufferLookup<'a> = dyn Fn(&Spanned<String>, &str) -> Result<usize, WorkloadError> + 'a;

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

    fn expr(&self, s: &Spanned<String>, field: &str) -> Result<Expr, WorkloadError> {
        parse(s.get_ref()).map_err(|e| {
            self.err(
                &s.span(),
                field,
                format!("'{}': column {}: {}", s.get_ref(), e.column, e.message),
            )
        })
    }
}

fn element(ctx: &Ctx<'_>, s: &Spanned<String>, field: &str) -> Result<Element, WorkloadError> {
    match s.get_ref().as_str() {
        "f32" | "float" => Ok(Element::F32),
        "u32" | "uint" => Ok(Element::U32),
        "i32" | "int" => Ok(Element::I32),
        other => Err(ctx.err(
            &s.span(),
            field,
            format!("unknown type '{other}' (use f32, u32 or i32)"),
        )),
    }
}

/// Read and validate a spec file.
pub fn load(path: &Path) -> Result<SpecWorkload, WorkloadError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| WorkloadError::Invalid(format!("{}: {e}", path.display())))?;
    let raw: RawSpec = toml::from_str(&text).map_err(|e| {
        let line = e.span().map_or(1, |s| {
            text[..s.start.min(text.len())].matches('\n').count() + 1
        });
        WorkloadError::Invalid(format!(
            "{}: line {line}: {}",
            path.display(),
            e.message().trim()
        ))
    })?;
    let ctx = Ctx { path, text: &text };
    let source_path = path
        .parent()
        .unwrap_or(Path::new("."))
        .join(raw.source.get_ref());
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
    let source_text = std::fs::read_to_string(&source_path).map_err(|e| {
        ctx.err(
            &raw.source.span(),
            "source",
            format!("{}: {e}", source_path.display()),
        )
    })?;
    let buffers = raw
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| buffer(&ctx, i, b))
        .collect::<Result<Vec<_>, _>>()?;
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
        return Err(WorkloadError::Invalid(format!(
            "{}: launches: at least one launch is needed",
            path.display()
        )));
    }
    let launches = raw
        .launches
        .iter()
        .enumerate()
        .map(|(i, l)| launch(&ctx, i, l, &find))
        .collect::<Result<Vec<_>, _>>()?;
    let check = match &raw.check {
        Some(c) => Some(CheckSpec {
            buffer: find(&c.buffer, "check.buffer")?,
            formula: ctx.expr(&c.formula, "check.formula")?,
            tolerance: c.tolerance.unwrap_or(1e-5),
        }),
        None => None,
    };
    Ok(SpecWorkload {
        name: raw.name,
        source_path,
        source_text,
        dialect,
        buffers,
        launches,
        check,
    })
}

fn buffer(ctx: &Ctx<'_>, i: usize, b: &RawBuffer) -> Result<BufferSpec, WorkloadError> {
    let field = |f: &str| format!("buffers[{i}].{f}");
    let init = match &b.init {
        None => Init::Constant(0.0),
        Some(RawInit::Constant(v)) => Init::Constant(*v),
        Some(RawInit::Random { lo, hi, seed }) => Init::Random {
            lo: *lo,
            hi: *hi,
            seed: seed.unwrap_or(1),
        },
        Some(RawInit::Formula(f)) => Init::Formula(ctx.expr(f, &field("init.formula"))?),
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
        length: ctx.expr(&b.length, &field("length"))?,
        init,
        by_work_item,
    })
}

fn launch(
    ctx: &Ctx<'_>,
    i: usize,
    l: &RawLaunch,
    find: &BufferLookup<'_>,
) -> Result<LaunchSpec, WorkloadError> {
    let field = |f: &str| format!("launches[{i}].{f}");
    if l.global.is_empty() || l.global.len() > 3 {
        return Err(ctx.err(&l.kernel.span(), &field("global"), "give 1, 2 or 3 sizes"));
    }
    if let Some(local) = &l.local {
        if local.len() != l.global.len() {
            return Err(ctx.err(
                &l.kernel.span(),
                &field("local"),
                "needs as many sizes as global",
            ));
        }
    }
    let exprs = |v: &[Spanned<String>], f: &str| {
        v.iter()
            .map(|s| ctx.expr(s, &field(f)))
            .collect::<Result<Vec<_>, _>>()
    };
    let args = l
        .args
        .iter()
        .enumerate()
        .map(|(j, a)| arg(ctx, a, &field(&format!("args[{j}]")), find))
        .collect::<Result<Vec<_>, _>>()?;
    let host_loop = match &l.host_loop {
        Some(lp) => {
            if lp.var.get_ref() != "k" {
                return Err(ctx.err(
                    &lp.var.span(),
                    &field("loop.var"),
                    "the loop variable is called k",
                ));
            }
            Some((
                ctx.expr(&lp.from, &field("loop.from"))?,
                ctx.expr(&lp.to, &field("loop.to"))?,
            ))
        }
        None => None,
    };
    Ok(LaunchSpec {
        kernel: l.kernel.get_ref().clone(),
        global: exprs(&l.global, "global")?,
        local: l.local.as_deref().map(|v| exprs(v, "local")).transpose()?,
        args,
        host_loop,
    })
}

fn arg(
    ctx: &Ctx<'_>,
    a: &Spanned<String>,
    field: &str,
    find: &BufferLookup<'_>,
) -> Result<ArgSpec, WorkloadError> {
    let Some((kind, rest)) = a.get_ref().split_once(':') else {
        return Err(ctx.err(
            &a.span(),
            field,
            format!(
                "'{}': write buf:NAME, f32:EXPR, u32:EXPR or i32:EXPR",
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
        ctx.expr(&rest_spanned, field)?,
    ))
}
