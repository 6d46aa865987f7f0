//! Workloads by their command-line names.

use super::adi::Adi;
use super::line_solve::LineSolve;
use super::lu_ssor::LuSsor;
use super::stencil::{Jacobi2d, Sor, SorRedBlack};
use super::stream::{Stream, StreamKind};
use super::{Layout, Workload, WorkloadError};

/// The built-in workloads' names.
pub fn names() -> &'static [&'static str] {
    &[
        "vadd",
        "triad",
        "jacobi2d",
        "sor",
        "sor-rb",
        "adi",
        "lu-ssor",
        "line-solve",
    ]
}

/// The workload a stored series was measured with, from the series alone: a spec's stored
/// text where the series carries one (the spec file and its kernel need not exist any more;
/// the workload can be measured for sizes and work but not run), else the built-in workload
/// of that name and layout.
pub fn stored(
    name: &str,
    layout: Option<Layout>,
    spec: Option<&super::spec::StoredSpec>,
) -> Result<Box<dyn Workload>, WorkloadError> {
    match spec {
        Some(spec) => Ok(Box::new(spec.workload()?)),
        None => lookup(name, layout),
    }
}

/// Whether a workload has a plain and a reordered layout.
pub fn has_layouts(name: &str) -> bool {
    matches!(name, "sor" | "adi" | "line-solve")
}

/// The workload called `name` (or the spec file `name` when it ends in `.toml`); `layout` applies where it has two (the default is the
/// reordered one, the faster on GPUs). A layout given for a workload without layouts is an
/// error, so nobody believes they measured something they did not.
pub fn lookup(name: &str, layout: Option<Layout>) -> Result<Box<dyn Workload>, WorkloadError> {
    lookup_with(name, layout, &[])
}

/// [`lookup`] with a spec's `--param NAME=VALUE` overrides; parameters given for a built-in
/// workload are an error.
pub fn lookup_with(
    name: &str,
    layout: Option<Layout>,
    params: &[(String, f64)],
) -> Result<Box<dyn Workload>, WorkloadError> {
    if name.ends_with(".toml") {
        if layout.is_some() {
            return Err(WorkloadError::Invalid(format!(
                "{name}: --layout applies to built-in workloads only"
            )));
        }
        return Ok(Box::new(
            super::spec::load(std::path::Path::new(name))?.with_params(params)?,
        ));
    }
    if let Some((p, _)) = params.first() {
        return Err(WorkloadError::Invalid(format!(
            "--param {p}: parameters belong to spec files; {name} is a built-in workload sized by --size"
        )));
    }
    if layout.is_some() && !has_layouts(name) && names().contains(&name) {
        return Err(WorkloadError::Invalid(format!(
            "{name} has one layout; --layout applies to sor, adi and line-solve"
        )));
    }
    let layout = layout.unwrap_or(Layout::Reordered);
    Ok(match name {
        "vadd" => Box::new(Stream(StreamKind::Vadd)),
        "triad" => Box::new(Stream(StreamKind::Triad)),
        "jacobi2d" => Box::new(Jacobi2d),
        "sor" => Box::new(Sor(layout)),
        "sor-rb" => Box::new(SorRedBlack),
        "adi" => Box::new(Adi(layout)),
        "lu-ssor" => Box::new(LuSsor),
        "line-solve" => Box::new(LineSolve(layout)),
        _ => {
            return Err(WorkloadError::Unknown {
                name: name.to_string(),
                known: names().join(", "),
            })
        }
    })
}
