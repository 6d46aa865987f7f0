//! `harness series` and `export-extrap`: a workload timed over sizes, the sizes chosen from
//! the calibration, and a series written for Extra-P.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use harness::backend::discover;
use harness::calibration::{default_path, Calibration};
use harness::experiments::predict::calibration_path;
use harness::experiments::series::{run_series, Series};
use harness::experiments::validate::{auto_small_sizes, Validation};
use harness::export::{write_atomically, Format};
use harness::report::views;
use harness::workloads::registry::has_layouts;
use harness::workloads::Layout;

use super::{check_output_dir, maxplus, pick_device, write_and_say, SeriesOptions};

pub(super) fn series_command(
    name: &str,
    sizes: &[String],
    target: Option<usize>,
    calibration: Option<PathBuf>,
    runs: &SeriesOptions,
    formats: &[Format],
) -> Result<()> {
    let (layout, output_dir) = (runs.layout, &runs.output_dir);
    let plan = runs.plan()?;
    let workload = runs.workload(name)?;
    let iters = runs.iterations(workload.as_ref());
    check_output_dir(output_dir)?;
    let list = discover();
    let index = pick_device(&list, runs.device.clone())?;
    let device = list.devices[index].as_ref();
    let facts = || {
        match device_facts(calibration.as_deref(), output_dir, device.info())? {
        Some(f) => Ok(f),
        None => bail!(
            "--sizes auto needs the device's calibration: {} does not exist (run `harness calibrate` or give --calibration)",
            default_path(output_dir, device.info()).display()
        ),
    }
    };
    let sizes = &small_sizes(sizes, workload.as_ref(), target, facts)?;
    eprintln!(
        "series of {name} on device {index}: {} ({}), sizes {sizes:?}, {}–{} runs each (to ±{} %)",
        device.info().name,
        device.info().backend,
        plan.min,
        plan.max,
        runs.ci_target
    );
    let layout_name = has_layouts(name).then(|| layout.unwrap_or(Layout::Reordered).to_string());
    let series = run_series(
        workload.as_ref(),
        layout_name,
        device,
        sizes,
        iters,
        plan,
        |p| eprintln!("{}", views::series_progress(p)),
    )?;
    for jump in &series.flagged {
        eprintln!("flagged {} (left out of the windowed fit)", jump.reason());
    }
    if let Some(line) = views::launch_probe_line(&series) {
        eprintln!("{line}");
    }
    eprintln!("{}", series.check_state().describe());
    if let Some(note) = series.thin_intervals() {
        eprintln!("{note}");
    }
    write_and_say(&series.stem(output_dir), formats, &series)
}

/// What the fit windows and the calibrated variant need from the device's calibration (the
/// explicit file, or the device's file under `dir`); `None` where there is none.
pub(super) fn device_facts(
    explicit: Option<&std::path::Path>,
    dir: &std::path::Path,
    device: &harness::backend::DeviceInfo,
) -> Result<Option<harness::fit::window::DeviceFacts>> {
    calibration_path(explicit, dir, device)
        .map(|path| {
            let calibration = Calibration::load(&path)?;
            if calibration.device.name != device.name || calibration.device.backend != device.backend
            {
                eprintln!(
                    "note: the calibration is of {} ({}), the run is on {} ({}): its launch cost, memory levels and n are that device's",
                    calibration.device.name, calibration.device.backend, device.name, device.backend
                );
            }
            Ok(harness::calibration::model_parameters::window_facts(
                &calibration,
            ))
        })
        .transpose()
}

/// Sizes from the command line: integers or 2^k, or `auto`: five sizes at 4–8× below
/// `target` from the device's calibration (`facts`, asked for only then), with the notes on
/// standard error.
pub(super) fn small_sizes(
    spec: &[String],
    workload: &dyn harness::workloads::Workload,
    target: Option<usize>,
    facts: impl FnOnce() -> Result<harness::fit::window::DeviceFacts>,
) -> Result<Vec<usize>> {
    if spec != ["auto"] {
        return spec
            .iter()
            .map(|s| maxplus::parse_size(s).map_err(anyhow::Error::msg))
            .collect();
    }
    let Some(target) = target else {
        bail!("`auto` sizes need the size to predict: give --target N");
    };
    let (sizes, notes) = auto_small_sizes(workload, &facts()?, target, 5)?;
    eprintln!("sizes from the calibration: {sizes:?}");
    for note in notes {
        eprintln!("note: {note}");
    }
    Ok(sizes)
}

/// `harness export-extrap`.
pub(super) fn export_extrap(
    path: &std::path::Path,
    output: Option<&std::path::Path>,
) -> Result<()> {
    // A validation holds the series its fits used; a series file is one.
    let series = match Series::load(path) {
        Ok(series) => series,
        Err(series_error) => match Validation::load(path) {
            Ok(v) => v.series,
            Err(_) => return Err(series_error.into()),
        },
    };
    let text = Format::Extrap
        .exporter()
        .serialize(&series)
        .with_context(|| format!("{} cannot be exported", path.display()))?;
    match output {
        Some(out) => {
            write_atomically(out, text.as_bytes())
                .with_context(|| format!("cannot write {}", out.display()))?;
            crate::say(&format!("wrote {}", out.display()));
        }
        None => print!("{text}"),
    }
    Ok(())
}
