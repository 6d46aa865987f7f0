//! The check's validation: a closed-form formula, or a reference run and its tolerance.

use std::path::Path;

use super::{
    load_at_depth, BufferLookup, BufferSpec, CheckSpec, Ctx, Expected, Init, RawCheck, Slots,
};
use crate::backend::DeviceSelector;
use crate::workloads::spec::compiled::Scope;
use crate::workloads::WorkloadError;

pub(super) fn check(
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
