//! One launch: its shape (global and local sizes), its scalar arguments, and running it.

use super::invalid;
use crate::backend::{Arg, Buffer, Launch};
use crate::workloads::session::Session;
use crate::workloads::spec::compiled::Code;
use crate::workloads::spec::format::{ArgSpec, Element, LaunchSpec, SpecWorkload};
use crate::workloads::WorkloadError;

/// The largest power of two ≤ `preferred` that divides `global`, so no executor is padded.
fn dividing_group(global: usize, preferred: usize) -> usize {
    let mut l = preferred.max(1).next_power_of_two();
    while l > 1 && (l > preferred || !global.is_multiple_of(l)) {
        l /= 2;
    }
    l
}

/// The launch's shape, or `None` when a global size is 0 (the launch is skipped: nothing
/// to do, and nothing counted).
pub(super) fn shape(
    spec: &SpecWorkload,
    l: &LaunchSpec,
    vars: &[f64],
    preferred: usize,
) -> Result<Option<Launch>, WorkloadError> {
    let eval = |e: &Code, what: &str| {
        e.eval_count(vars)
            .map(|v| v as usize)
            .map_err(|m| invalid(spec, format!("kernel {} {what}: {m}", l.kernel)))
    };
    let mut launch = Launch {
        dims: l.global.len(),
        global: [1; 3],
        local: [1; 3],
    };
    for (d, g) in l.global.iter().enumerate() {
        launch.global[d] = eval(g, "global size")?;
        if launch.global[d] == 0 {
            return Ok(None);
        }
    }
    match &l.local {
        Some(local) => {
            for (d, v) in local.iter().enumerate() {
                let n = eval(v, "local size")?;
                if n == 0 {
                    return Err(invalid(
                        spec,
                        format!("kernel {}: a local size of 0", l.kernel),
                    ));
                }
                launch.local[d] = n;
            }
        }
        None => {
            let per_dim = match launch.dims {
                1 => preferred,
                2 => (preferred as f64).sqrt() as usize,
                _ => (preferred as f64).cbrt() as usize,
            };
            for d in 0..launch.dims {
                launch.local[d] = dividing_group(launch.global[d], per_dim);
            }
        }
    }
    Ok(Some(launch))
}

fn scalar(
    spec: &SpecWorkload,
    element: Element,
    value: f64,
    kernel: &str,
) -> Result<Arg<'static>, WorkloadError> {
    Ok(match element {
        Element::F32 => Arg::F32(value as f32),
        Element::F64 => Arg::F64(value),
        Element::I32
            if value.fract() == 0.0
                && value >= f64::from(i32::MIN)
                && value <= f64::from(i32::MAX) =>
        {
            Arg::U32((value as i32) as u32)
        }
        Element::U32 if value.fract() == 0.0 && value >= 0.0 && value <= f64::from(u32::MAX) => {
            Arg::U32(value as u32)
        }
        _ => {
            return Err(invalid(
                spec,
                format!("kernel {kernel}: argument {value} does not fit its integer type"),
            ))
        }
    })
}

pub(super) fn launch_once(
    s: &mut Session<'_>,
    spec: &SpecWorkload,
    l: &LaunchSpec,
    buffers: &[Buffer],
    vars: &[f64],
) -> Result<(), WorkloadError> {
    let Some(launch) = shape(spec, l, vars, s.device.preferred_group_size())? else {
        return Ok(());
    };
    let mut args = Vec::with_capacity(l.args.len());
    for a in &l.args {
        args.push(match a {
            ArgSpec::Buffer(i) => Arg::Buf(&buffers[*i]),
            ArgSpec::Scalar(element, e) => {
                let v = e
                    .eval(vars, &[])
                    .map_err(|m| invalid(spec, format!("kernel {}: {m}", l.kernel)))?;
                scalar(spec, *element, v, &l.kernel)?
            }
        });
    }
    let count = |code: &Option<Code>, what: &str| {
        code.as_ref()
            .map(|c| {
                c.eval_count(vars)
                    .map_err(|m| invalid(spec, format!("kernel {} {what}: {m}", l.kernel)))
            })
            .transpose()
    };
    let bytes = count(&l.bytes, "bytes")?;
    let flops = count(&l.flops, "flops")?;
    super::amounts::check_declared_counts(spec, l, vars)?;
    s.launch_declared(&l.kernel, &l.kernel, &launch, &args, bytes, flops)
}
