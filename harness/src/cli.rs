//! Argument parsing (clap derive) and the commands.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use harness::backend::{discover, select, DeviceList, DeviceSelector};
use harness::bench::calibrate::{calibrate, CalibrateOptions};
use harness::calibration::{compare::compare, default_path, Calibration};
use harness::report::views;

/// Measure GPUs and predict how long parallel programs take on them.
///
/// Start with `harness devices`, then `harness calibrate` to measure the best device found
/// (CUDA, then an OpenCL GPU, then an OpenCL CPU, then the host).
#[derive(Parser, Debug)]
#[command(name = "harness", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List every device of every backend (CUDA, OpenCL, host), numbered for --device.
    Devices {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Measure the max-plus model's parameters (t, T, Δt, ΔT, τ, n) on a device and write
    /// calibrations/<device>.json.
    ///
    /// Each parameter gets its median, 95 % CI and method; the file also holds the latency
    /// sweep and cache levels, the per-pattern Δt/ΔT fits, launch overhead, transfer fits and
    /// every raw sample. The file is written atomically; Ctrl-C stops without leaving one.
    Calibrate {
        /// Device: an index from `harness devices`, a backend (cuda, opencl, host) or part
        /// of a name. Default: the best device found.
        #[arg(long, short, value_name = "SEL")]
        device: Option<DeviceSelector>,
        /// Fewer sizes and repetitions: a first look in seconds, with wider intervals.
        #[arg(long)]
        quick: bool,
        /// Print the calibration file to standard output instead of the summary table.
        #[arg(long)]
        json: bool,
        /// Put an earlier calibration beside this one, parameter by parameter.
        #[arg(long, value_name = "FILE")]
        compare: Option<PathBuf>,
        /// Folder for the calibration file.
        #[arg(long, value_name = "DIR", default_value = "calibrations")]
        output_dir: PathBuf,
        /// Write to this file instead of <output-dir>/<device-slug>.json.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Compare two calibration files parameter by parameter (ratio, CI overlap).
    Compare {
        /// The earlier calibration.
        before: PathBuf,
        /// The later calibration.
        after: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// Parse arguments and run the command.
pub fn run() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Devices { json } => devices(json),
        Command::Calibrate {
            device,
            quick,
            json,
            compare,
            output_dir,
            output,
        } => calibrate_command(device, quick, json, compare, output_dir, output),
        Command::Compare {
            before,
            after,
            json,
        } => compare_command(&before, &after, json),
    }
}

fn print_notes(list: &DeviceList) {
    for note in &list.notes {
        eprintln!("{note}");
    }
}

fn devices(json: bool) -> Result<()> {
    let list = discover();
    let infos: Vec<_> = list.devices.iter().map(|d| d.info()).collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
    } else {
        print_notes(&list);
        print!("{}", views::devices_table(&infos));
    }
    Ok(())
}

fn interrupt_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    let handler_flag = flag.clone();
    // A second Ctrl-C ends the process at once; the first lets the current measurement end.
    let _ = ctrlc::set_handler(move || {
        if handler_flag.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
        eprintln!(
            "\ninterrupted: stopping after the current measurement (Ctrl-C again to quit now)"
        );
    });
    flag
}

fn calibrate_command(
    selector: Option<DeviceSelector>,
    quick: bool,
    json: bool,
    compare_with: Option<PathBuf>,
    output_dir: PathBuf,
    output: Option<PathBuf>,
) -> Result<()> {
    // Read the comparison file first: a bad path should fail before minutes of measuring.
    let before = compare_with.as_deref().map(Calibration::load).transpose()?;
    let list = discover();
    print_notes(&list);
    let index = select(&list, &selector.unwrap_or(DeviceSelector::Best))?;
    let device = list.devices[index].as_ref();
    eprintln!(
        "calibrating device {index}: {} ({}){}",
        device.info().name,
        device.info().backend,
        if quick { ", quick" } else { "" }
    );
    let options = CalibrateOptions {
        quick,
        progress: !json,
        interrupted: interrupt_flag(),
    };
    let calibration = calibrate(device, &options).with_context(|| {
        format!(
            "calibration of {} failed; no file written",
            device.info().name
        )
    })?;
    let path = output.unwrap_or_else(|| default_path(&output_dir, device.info()));
    calibration.save(&path)?;
    if json {
        println!("{}", calibration.to_json());
    } else {
        print!("{}", views::calibration_summary(&calibration));
        eprintln!("wrote {}", path.display());
    }
    if let (Some(before), Some(before_path)) = (before, compare_with) {
        let rows = compare(&before, &calibration);
        let table = views::comparison_table(&rows, &before_path.display().to_string(), "new");
        if json {
            eprint!("{table}");
        } else {
            print!("\n{table}");
        }
    }
    Ok(())
}

fn compare_command(before: &std::path::Path, after: &std::path::Path, json: bool) -> Result<()> {
    let b = Calibration::load(before)?;
    let a = Calibration::load(after)?;
    if b.device.name != a.device.name && !json {
        eprintln!(
            "note: comparing different devices ({} and {})",
            b.device.name, a.device.name
        );
    }
    let rows = compare(&b, &a);
    if json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!(
            "{}",
            views::comparison_table(
                &rows,
                &before.display().to_string(),
                &after.display().to_string()
            )
        );
    }
    if rows.is_empty() {
        bail!("no parameters to compare");
    }
    Ok(())
}
