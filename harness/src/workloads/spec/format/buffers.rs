//! A buffer's validation: its name, type, length, initial contents and indexing.

use super::{element, BufferSpec, Ctx, Init, RawBuffer, RawInit};
use crate::workloads::spec::compiled::Scope;
use crate::workloads::spec::params::is_identifier;
use crate::workloads::WorkloadError;

pub(super) fn buffer(
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
