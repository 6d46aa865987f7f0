//! `harness devices`, `calibrate`, `babelstream` and `compare`: the devices, their
//! measurement and the comparison of two calibrations.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use harness::backend::{discover, select, DeviceSelector};
use harness::bench::babelstream::{measure_babelstream_with, BabelStreamOptions};
use harness::bench::{BenchContext, SamplingPlan};
use harness::calibration::measure::{calibrate, CalibrateOptions};
use harness::calibration::{
    compare::{changed_conditions, compare, compare_rates},
    default_path, Calibration,
};
use harness::report::views;

use super::{check_output_dir, interrupt_flag, pick_device, print_notes};

pub(super) fn devices(json: bool) -> Result<()> {
    let list = discover();
    let infos: Vec<_> = list.devices.iter().map(|d| d.info()).collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
    } else {
        print_notes(&list);
        print!("{}", views::devices_table(&infos));
        match harness::backend::nvrtc::locate() {
            Ok(l) => println!(
                "NVRTC {} ({}): CUDA kernels compile here",
                l.version,
                l.dir
                    .as_ref()
                    .map_or("system loader".to_string(), |d| d.display().to_string())
            ),
            Err(e) => println!("{e}"),
        }
    }
    Ok(())
}

/// Save `calibration` at `path`; where that fails (a full disk), save it in the temporary
/// folder, or as a last resort print it, and fail saying where the measurement went.
fn save_or_rescue(
    calibration: &Calibration,
    path: &std::path::Path,
    device: &harness::backend::DeviceInfo,
) -> Result<()> {
    let Err(e) = calibration.save(path) else {
        return Ok(());
    };
    let rescue = std::env::temp_dir().join(format!(
        "harness-calibration-{}-{}.json",
        device.slug(),
        std::process::id()
    ));
    if calibration.save(&rescue).is_ok() {
        bail!(
            "{e}; the measurement is kept in {} (move it to {} once there is room)",
            rescue.display(),
            path.display()
        );
    }
    println!("{}", calibration.to_json());
    bail!("{e}; it could not be saved elsewhere either, so it is printed on standard output");
}

/// The options of `harness calibrate`.
#[derive(clap::Args, Debug)]
pub struct CalibrateArgs {
    /// Device: an index from `harness devices`, a backend (cuda, opencl, host) or part
    /// of a name. Default: the best device found.
    #[arg(long, short, value_name = "SEL")]
    pub device: Option<DeviceSelector>,
    /// A first look: fewer samples at the same sizes, with wider intervals, and none of
    /// the sweeps shaped after the built-in workloads (transposing, gathering,
    /// hyperplane; one thread's stencil and hyperplane sweeps on the host). Phases that
    /// declare those patterns then move by the line or streaming rate.
    #[arg(long)]
    pub quick: bool,
    /// On a CPU device, measure the sweeps shaped after the built-in workloads too
    /// (transposing, gathering, hyperplane; one thread's stencil and hyperplane sweeps on
    /// the host), which a CPU's full calibration leaves out: its series' cold runs measure
    /// what they stood in for. Ask for them to validate with `--cold-runs 0`. A GPU
    /// always measures them, except with --quick.
    #[arg(long, conflicts_with = "quick")]
    pub shaped_sweeps: bool,
    /// Print the calibration file to standard output instead of the summary table.
    #[arg(long)]
    pub json: bool,
    /// Put an earlier calibration beside this one, parameter by parameter.
    #[arg(long, value_name = "FILE")]
    pub compare: Option<PathBuf>,
    /// Folder for the calibration file.
    #[arg(long, value_name = "DIR", default_value = "calibrations")]
    pub output_dir: PathBuf,
    /// Write to this file instead of <output-dir>/<device-slug>.json.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub(super) fn calibrate_command(args: CalibrateArgs) -> Result<()> {
    let CalibrateArgs {
        device: selector,
        quick,
        shaped_sweeps,
        json,
        compare: compare_with,
        output_dir,
        output,
    } = args;
    // Read the comparison file and check the output first: a bad path should fail before
    // minutes of measuring.
    let before = compare_with.as_deref().map(Calibration::load).transpose()?;
    let folder = match &output {
        Some(file) => {
            if file.is_dir() {
                bail!("--output {} is a folder; give a file", file.display());
            }
            file.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."))
                .to_path_buf()
        }
        None => output_dir.clone(),
    };
    check_output_dir(&folder)?;
    let list = discover();
    print_notes(&list);
    let index = select(&list, &selector.unwrap_or(DeviceSelector::Best))?;
    let device = list.devices[index].as_ref();
    // The file's own place too: a folder there would throw the measurement away at the end.
    let path = output
        .clone()
        .unwrap_or_else(|| default_path(&output_dir, device.info()));
    if path.is_dir() {
        bail!(
            "{} is a folder where the calibration file goes: move it away, or give --output FILE",
            path.display()
        );
    }
    // From here the first Ctrl-C lets the run end normally (no file, the lock removed).
    let interrupted = interrupt_flag();
    // One run per device: a second would measure while this one does.
    let _lock = harness::calibration::lock::lock_device(&folder, device.info())?;
    eprintln!(
        "calibrating device {index}: {} ({}){}",
        device.info().name,
        device.info().backend,
        if quick { ", quick" } else { "" }
    );
    let options = CalibrateOptions {
        quick,
        shaped_sweeps,
        progress: !json,
        interrupted,
    };
    let calibration = calibrate(device, &options).with_context(|| {
        format!(
            "calibration of {} failed; no file written",
            device.info().name
        )
    })?;
    save_or_rescue(&calibration, &path, device.info())?;
    if json {
        println!("{}", calibration.to_json());
    } else {
        print!("{}", views::calibration_summary(&calibration));
        crate::say(&format!("wrote {}", path.display()));
    }
    if let (Some(before), Some(before_path)) = (before, compare_with) {
        let rows = compare(&before, &calibration);
        let earlier = before_path.display().to_string();
        let mut table = views::comparison_table(&rows, &earlier, "new");
        table.push_str(&views::rate_comparison_table(
            &compare_rates(&before, &calibration),
            &earlier,
            "new",
        ));
        if json {
            eprint!("{table}");
        } else {
            print!("\n{table}");
        }
        say_conditions(&before, &calibration);
    }
    Ok(())
}

pub(super) fn babelstream_command(
    selector: Option<DeviceSelector>,
    quick: bool,
    options: &BabelStreamOptions,
    json: bool,
) -> Result<()> {
    let list = discover();
    let index = pick_device(&list, selector)?;
    let device = list.devices[index].as_ref();
    eprintln!(
        "BabelStream's kernels on device {index}: {} ({})",
        device.info().name,
        device.info().backend
    );
    let plan = if quick {
        SamplingPlan::quick()
    } else {
        SamplingPlan::full()
    };
    let mut ctx = BenchContext::new(device, plan, quick)?;
    ctx.interrupted = interrupt_flag();
    let result = measure_babelstream_with(&mut ctx, options)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", views::babelstream_table(&result));
    }
    Ok(())
}

pub(super) fn compare_command(
    before: &std::path::Path,
    after: &std::path::Path,
    json: bool,
) -> Result<()> {
    let b = Calibration::load(before)?;
    let a = Calibration::load(after)?;
    if b.device.name != a.device.name && !json {
        eprintln!(
            "note: comparing different devices ({} and {})",
            b.device.name, a.device.name
        );
    }
    let rows = compare(&b, &a);
    let rates = compare_rates(&b, &a);
    say_conditions(&b, &a);
    if json {
        let both = serde_json::json!({ "parameters": rows, "rates": rates });
        println!("{}", serde_json::to_string_pretty(&both)?);
    } else {
        let (earlier, later) = (before.display().to_string(), after.display().to_string());
        print!(
            "{}{}",
            views::comparison_table(&rows, &earlier, &later),
            views::rate_comparison_table(&rates, &earlier, &later)
        );
    }
    if rows.is_empty() {
        bail!("no parameters to compare");
    }
    Ok(())
}

/// A note on standard error for each condition the two calibrations ran under that differs
/// (clock, driver, harness, sampling plan): a ratio in the table may be that, not the device.
fn say_conditions(before: &Calibration, after: &Calibration) {
    for note in changed_conditions(before, after) {
        crate::say(&format!("note: {note}"));
    }
}
