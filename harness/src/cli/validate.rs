//! `harness validate` and `plot-validations`: the fractal prediction against measurement,
//! and the figures of one validation or of several side by side.

use std::path::PathBuf;

use anyhow::{bail, Result};

use harness::backend::discover;
use harness::calibration::default_path;
use harness::experiments::validate::{validate, Validation};
use harness::export::{render_results, with_suffix, write_rendered, Format};
use harness::report::views;
use harness::workloads::registry::has_layouts;
use harness::workloads::Layout;

use super::series::{device_facts, small_sizes};
use super::{check_output_dir, pick_device, SeriesOptions};

pub(super) fn validate_command(
    name: &str,
    small: &[String],
    large: &[usize],
    runs: &SeriesOptions,
    calibration: Option<PathBuf>,
    plot_dir: &std::path::Path,
) -> Result<()> {
    let (layout, output_dir) = (runs.layout, &runs.output_dir);
    let plan = runs.plan()?;
    let workload = runs.workload(name)?;
    let iters = runs.iterations(workload.as_ref());
    check_output_dir(output_dir)?;
    check_output_dir(plot_dir)?;
    let list = discover();
    let index = pick_device(&list, runs.device.clone())?;
    let device = list.devices[index].as_ref();
    let layout_name = has_layouts(name).then(|| layout.unwrap_or(Layout::Reordered).to_string());
    let facts = device_facts(calibration.as_deref(), output_dir, device.info())?;
    if facts.is_none() {
        eprintln!(
            "note: no calibration at {}: only the paper's variant runs (harness calibrate adds the windowed one)",
            default_path(output_dir, device.info()).display()
        );
    }
    let small = small_sizes(
        small,
        workload.as_ref(),
        large.iter().copied().min(),
        || {
            match &facts {
            Some(f) => Ok(f.clone()),
            None => bail!("--small auto needs the device's calibration (run `harness calibrate` or give --calibration)"),
        }
        },
    )?;
    let v = validate(
        workload.as_ref(),
        layout_name,
        device,
        facts.as_ref(),
        &small,
        large,
        iters,
        plan,
        |line| eprintln!("{line}"),
    )?;
    let stem = output_dir.join(v.file_stem());
    // The small series too, so `predict` and `export-extrap` can take it on its own; all
    // four files as one unit, the validation's JSON last.
    let mut files = render_results(&with_suffix(&stem, "series"), &[Format::Csv], &v.series)?;
    files.extend(render_results(&stem, &[Format::Csv], &v)?);
    let written = write_rendered(&files)?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    crate::say(&format!("wrote {}", names.join(", ")));
    // The figures before the table: a reader that closes standard output early (`| head`)
    // ends the process at the print, and must not cost the figures.
    validation_figures(&v, plot_dir, &stem)?;
    print!("{}", views::validation_table(&v));
    println!("{}", v.series.check_state().describe());
    Ok(())
}

/// The fit and Fig. 1 figures of one validation, named after its result file.
fn validation_figures(v: &Validation, dir: &std::path::Path, stem: &std::path::Path) -> Result<()> {
    use harness::plot::fractal_figures::polynomial_vs_fractal_plot;
    use harness::plot::{render, Drawing};
    use harness::report::figures::validation_fit;
    let base = stem
        .file_name()
        .map_or("validate".into(), |n| n.to_string_lossy().into_owned());
    let target = v.large.iter().map(|l| l.size).max().unwrap_or(1) as f64;
    // Both figures drawn first, then their six files written as one unit: an interruption
    // leaves the old pair or the new one, never a new fit beside an old polynomial figure.
    let fit_stem = dir.join(format!("{base}.fit"));
    let poly_stem = dir.join(format!("{base}.polynomial"));
    let fit = render(&Drawing::Plot(validation_fit(v)?), &fit_stem)?;
    let poly = render(
        &Drawing::Plot(polynomial_vs_fractal_plot(&v.series, None, target)?),
        &poly_stem,
    )?;
    let mut files: Vec<(PathBuf, &[u8])> = Vec::new();
    for (r, stem) in [(&fit, &fit_stem), (&poly, &poly_stem)] {
        files.push((with_suffix(stem, "svg"), r.svg.as_bytes()));
        files.push((with_suffix(stem, "png"), &r.png));
        files.push((with_suffix(stem, "csv"), r.csv.as_bytes()));
    }
    let unit: Vec<(&std::path::Path, &[u8])> =
        files.iter().map(|(p, b)| (p.as_path(), *b)).collect();
    harness::export::write_together(&unit)?;
    for (p, _) in &files {
        crate::say(&format!("wrote {}", p.display()));
    }
    Ok(())
}

/// `harness plot-validations`.
pub(super) fn plot_validations(files: &[PathBuf], dir: &std::path::Path, name: &str) -> Result<()> {
    use harness::plot::fractal_figures::{error_bars_figure, parity_figure};
    // The figures' stem is a name inside --plot-dir, never a path out of it.
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        bail!("--name {name:?} is not a file name: give a name without folders (the figures go into --plot-dir)");
    }
    let validations = files
        .iter()
        .map(|f| Validation::load(f))
        .collect::<Result<Vec<_>, _>>()?;
    for (v, file) in validations.iter().zip(files) {
        validation_figures(v, dir, &file.with_extension(""))?;
    }
    let mut written = parity_figure(&validations, dir, &format!("{name}.parity"))?;
    written.extend(error_bars_figure(
        &validations,
        dir,
        &format!("{name}.errors"),
    )?);
    for p in written {
        crate::say(&format!("wrote {}", p.display()));
    }
    Ok(())
}
