//! A spec's `[distribution]`: how its program would run BLOCK-distributed over a grid of
//! processors, which is what the cluster prediction (`harness run SPEC --trace`, then
//! `predict-cluster`) needs to know and a kernel file cannot say: the distributed array's
//! extents, and one iteration as a sequence of the spec's kernels (each distributed over the
//! blocks or replicated on every processor), shadow-edge exchanges and reductions.
//!
//! ```toml
//! [distribution]
//! extents = ["NX", "NY"]        # points per dimension of the distributed array (1 to 3)
//! element_bytes = 4             # per point of each exchanged array (default 4)
//! steps = [
//!   { shadow = 1 },             # exchange a 1-point edge of one array
//!   { kernel = "fdtd_ey" },     # every launch of this kernel in the iteration, distributed
//!   { kernel = "fdtd_ex" },
//!   { shadow = 1, arrays = 2 },
//!   { kernel = "fdtd_hz" },
//!   { reduction = 4 },          # e.g. a residual's max: 4 bytes reduced over processors
//! ]
//! ```

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::compiled::{Code, Scope};
use crate::model::cluster::Work;
use crate::workloads::WorkloadError;

/// The most dimensions a distributed array may have.
pub const MAX_DIMS: usize = 3;

/// `[distribution]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawDistribution {
    extents: Vec<Spanned<String>>,
    #[serde(default)]
    element_bytes: Option<Spanned<i64>>,
    steps: Vec<Spanned<RawStep>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    kernel: Option<String>,
    work: Option<String>,
    shadow: Option<i64>,
    arrays: Option<i64>,
    corners: Option<bool>,
    reduction: Option<i64>,
}

/// One step of a distributed iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum DistributedStep {
    /// Every launch of `kernel` in the iteration, its work divided over the blocks or
    /// repeated on every processor.
    Kernel {
        /// The kernel's name (the run's phase).
        kernel: String,
        /// How its work divides.
        work: Work,
    },
    /// A shadow-edge exchange with every neighbour.
    Shadow {
        /// Edge width, points.
        width: usize,
        /// Arrays exchanged.
        arrays: usize,
        /// Whether diagonal neighbours are exchanged too.
        corners: bool,
    },
    /// A reduction over every processor of `bytes` bytes.
    Reduction {
        /// Bytes reduced.
        bytes: u64,
    },
}

/// A spec's distribution, compiled.
#[derive(Debug, Clone)]
pub struct Distribution {
    /// Points per dimension of the distributed array, expressions of the parameters.
    pub extents: Vec<Code>,
    /// Bytes per point of an exchanged array.
    pub element_bytes: u64,
    /// One iteration.
    pub steps: Vec<DistributedStep>,
}

/// How a parse error is reported: `(span, field, message)`.
pub(super) type Fail<'a> = &'a dyn Fn(&Range<usize>, &str, String) -> WorkloadError;

/// How an expression is parsed and compiled: `(text, field, scope)`.
pub(super) type Compile<'a> =
    &'a dyn Fn(&Spanned<String>, &str, &Scope) -> Result<Code, WorkloadError>;

/// Compile `raw` against the parameters' `scope`; `kernels` are the kernels the spec launches
/// (each must appear in exactly one kernel step); `code` parses and compiles an expression.
pub(super) fn compile(
    raw: &RawDistribution,
    scope: &Scope,
    kernels: &[String],
    fail: Fail<'_>,
    code: Compile<'_>,
) -> Result<Distribution, WorkloadError> {
    let dims = raw.extents.len();
    if !(1..=MAX_DIMS).contains(&dims) {
        let span = raw.extents.first().map_or(0..0, |e| e.span());
        return Err(fail(
            &span,
            "distribution.extents",
            format!("{dims} extents; the distributed array has 1 to {MAX_DIMS} dimensions"),
        ));
    }
    let extents = raw
        .extents
        .iter()
        .enumerate()
        .map(|(i, e)| code(e, &format!("distribution.extents[{i}]"), scope))
        .collect::<Result<Vec<_>, _>>()?;
    let element_bytes = match &raw.element_bytes {
        None => 4,
        Some(b) if (1..=64).contains(b.get_ref()) => *b.get_ref() as u64,
        Some(b) => {
            return Err(fail(
                &b.span(),
                "distribution.element_bytes",
                format!(
                    "{} is not a size of an element (1 to 64 bytes)",
                    b.get_ref()
                ),
            ))
        }
    };
    let mut steps = Vec::with_capacity(raw.steps.len());
    for (i, s) in raw.steps.iter().enumerate() {
        let field = format!("distribution.steps[{i}]");
        let span = s.span();
        let step = s.get_ref();
        let kinds = [
            step.kernel.is_some(),
            step.shadow.is_some(),
            step.reduction.is_some(),
        ];
        if kinds.iter().filter(|k| **k).count() != 1 {
            return Err(fail(
                &span,
                &field,
                "a step is one of { kernel = \"…\" }, { shadow = WIDTH } or { reduction = BYTES }"
                    .into(),
            ));
        }
        let misplaced = |what: &str, set: bool, allowed: bool| -> Result<(), _> {
            if set && !allowed {
                Err(fail(
                    &span,
                    &field,
                    format!("'{what}' does not belong to this step"),
                ))
            } else {
                Ok(())
            }
        };
        misplaced("work", step.work.is_some(), step.kernel.is_some())?;
        misplaced("arrays", step.arrays.is_some(), step.shadow.is_some())?;
        misplaced("corners", step.corners.is_some(), step.shadow.is_some())?;
        steps.push(if let Some(kernel) = &step.kernel {
            if !kernels.contains(kernel) {
                return Err(fail(
                    &span,
                    &field,
                    format!(
                        "the spec launches no kernel '{kernel}' (it launches {})",
                        kernels.join(", ")
                    ),
                ));
            }
            let work = match step.work.as_deref() {
                None | Some("distributed") => Work::Distributed,
                Some("replicated") => Work::Replicated,
                Some(other) => {
                    return Err(fail(
                        &span,
                        &field,
                        format!("work = '{other}': it is 'distributed' or 'replicated'"),
                    ))
                }
            };
            DistributedStep::Kernel {
                kernel: kernel.clone(),
                work,
            }
        } else if let Some(width) = step.shadow {
            let arrays = step.arrays.unwrap_or(1);
            if !(1..=16).contains(&width) || !(1..=64).contains(&arrays) {
                return Err(fail(
                    &span,
                    &field,
                    format!(
                        "shadow = {width}, arrays = {arrays}: an edge is 1 to 16 points wide, of 1 to 64 arrays"
                    ),
                ));
            }
            DistributedStep::Shadow {
                width: width as usize,
                arrays: arrays as usize,
                corners: step.corners.unwrap_or(false),
            }
        } else {
            let bytes = step.reduction.unwrap_or(0);
            if !(1..=1 << 30).contains(&bytes) {
                return Err(fail(
                    &span,
                    &field,
                    format!("reduction = {bytes}: the bytes reduced are 1 to 2^30"),
                ));
            }
            DistributedStep::Reduction {
                bytes: bytes as u64,
            }
        });
    }
    for kernel in kernels {
        let placed = steps
            .iter()
            .filter(|s| matches!(s, DistributedStep::Kernel { kernel: k, .. } if k == kernel))
            .count();
        if placed != 1 {
            let span = raw.steps.first().map_or(0..0, |s| s.span());
            return Err(fail(
                &span,
                "distribution.steps",
                format!(
                    "kernel '{kernel}' is placed {placed} times; every kernel the spec launches is placed once"
                ),
            ));
        }
    }
    Ok(Distribution {
        extents,
        element_bytes,
        steps,
    })
}

impl Distribution {
    /// The extents at the parameter values `vars`: each a whole number of at least 1.
    pub fn extents_at(&self, vars: &[f64]) -> Result<Vec<usize>, String> {
        self.extents
            .iter()
            .enumerate()
            .map(|(i, e)| match e.eval_count(vars) {
                Ok(0) => Err(format!("distribution.extents[{i}] is 0 at this size")),
                Ok(n) => usize::try_from(n).map_err(|_| format!("extent {n} is too large")),
                Err(m) => Err(format!("distribution.extents[{i}]: {m}")),
            })
            .collect()
    }
}
