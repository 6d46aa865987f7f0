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
use harness::workloads::registry::{has_layouts, lookup};
use harness::workloads::series::run_series;
use harness::workloads::Layout;

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
    /// Run a validation workload once at one size and print its phase table.
    ///
    /// Workloads: vadd, triad, jacobi2d, sor, sor-rb, adi. The result is checked against
    /// the host implementation unless --no-verify.
    Run {
        /// The workload's name.
        workload: String,
        /// Problem size N (elements for vadd/triad, grid side for the rest).
        #[arg(long, short = 'n')]
        size: usize,
        /// Iterations.
        #[arg(long, default_value_t = 10)]
        iters: usize,
        /// plain or reordered, for sor and adi (default: reordered).
        #[arg(long)]
        layout: Option<Layout>,
        /// Device: index, backend or part of a name (default: the best found).
        #[arg(long, short, value_name = "SEL")]
        device: Option<DeviceSelector>,
        /// Skip the host comparison (for sizes where the host reference is too slow).
        #[arg(long)]
        no_verify: bool,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run a workload at several small sizes (each repeated) and write the per-phase series
    /// as JSON and CSV beside the device's calibration under calibrations/.
    Series {
        /// The workload's name.
        workload: String,
        /// Sizes, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        sizes: Vec<usize>,
        /// Iterations per run.
        #[arg(long, default_value_t = 10)]
        iters: usize,
        /// Runs per size.
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// plain or reordered, for sor and adi (default: reordered).
        #[arg(long)]
        layout: Option<Layout>,
        /// Device: index, backend or part of a name (default: the best found).
        #[arg(long, short, value_name = "SEL")]
        device: Option<DeviceSelector>,
        /// Folder for the files.
        #[arg(long, value_name = "DIR", default_value = "calibrations")]
        output_dir: PathBuf,
    },
    /// Stepanenko's decomposition of q cores and r accelerators for a process with MIMD
    /// share phi and accelerator speed-up rho: the best number of cores to join to the
    /// accelerators, the speed-ups (proportional, K^D, K^max) and the balancing shares.
    ///
    /// Give phi and rho, or the measured times T1,T_M,T_S (seconds) with --times.
    Balance {
        /// phi, the MIMD fragment's share of T1, in (0, 1).
        #[arg(long, required_unless_present = "times", allow_negative_numbers = true)]
        phi: Option<f64>,
        /// rho, how much faster one accelerator runs the SIMD fragment than one core.
        #[arg(long, required_unless_present = "times", allow_negative_numbers = true)]
        rho: Option<f64>,
        /// T1,T_M,T_S: whole process on one core, MIMD fragment on one core, SIMD fragment
        /// on one accelerator (seconds).
        #[arg(long, value_delimiter = ',', conflicts_with_all = ["phi", "rho"])]
        times: Option<Vec<f64>>,
        /// CPU cores.
        #[arg(long)]
        q: u32,
        /// Accelerators.
        #[arg(long)]
        r: u32,
        /// Also draw K^max, K^D and the proportional split against phi (the paper's Fig. 6)
        /// into this folder.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Predict a large size from a small-scale series (Escobar & Boppana's fractal fit):
    /// per phase and in total the fractal dimension, the prediction with its 95 % prediction
    /// interval, and the polynomial and a·N^c + b baselines on the same points.
    Predict {
        /// A series file written by `harness series`.
        #[arg(long)]
        series: PathBuf,
        /// The size to predict.
        #[arg(long)]
        target: f64,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Validate the fractal prediction: run a small series, predict each large size, run it,
    /// and report the absolute percentage error per phase and in total (mean, median, max);
    /// JSON and CSV beside the calibrations.
    Validate {
        /// A workload name or a spec file.
        workload: String,
        /// The small sizes the fits use, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        small: Vec<usize>,
        /// The large sizes to predict and measure, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        large: Vec<usize>,
        /// Iterations per run.
        #[arg(long, default_value_t = 10)]
        iters: usize,
        /// Runs per size.
        #[arg(long, default_value_t = 5)]
        repeat: usize,
        /// plain or reordered, for sor, adi and line-solve.
        #[arg(long)]
        layout: Option<Layout>,
        /// Device: index, backend or part of a name (default: the best found).
        #[arg(long, short, value_name = "SEL")]
        device: Option<DeviceSelector>,
        /// Folder for the files.
        #[arg(long, value_name = "DIR", default_value = "calibrations")]
        output_dir: PathBuf,
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
        Command::Balance {
            phi,
            rho,
            times,
            q,
            r,
            plot,
            json,
        } => balance_command(phi, rho, times, q, r, plot, json),
        Command::Validate {
            workload,
            small,
            large,
            iters,
            repeat,
            layout,
            device,
            output_dir,
        } => validate_command(
            &workload,
            &small,
            &large,
            iters,
            repeat,
            layout,
            device,
            &output_dir,
        ),
        Command::Predict {
            series,
            target,
            json,
        } => predict_command(&series, target, json),
        Command::Run {
            workload,
            size,
            iters,
            layout,
            device,
            no_verify,
            json,
        } => run_command(&workload, size, iters, layout, device, !no_verify, json),
        Command::Series {
            workload,
            sizes,
            iters,
            repeat,
            layout,
            device,
            output_dir,
        } => series_command(
            &workload,
            &sizes,
            iters,
            repeat,
            layout,
            device,
            &output_dir,
        ),
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

fn pick_device(list: &DeviceList, selector: Option<DeviceSelector>) -> Result<usize> {
    print_notes(list);
    Ok(select(list, &selector.unwrap_or(DeviceSelector::Best))?)
}

fn run_command(
    name: &str,
    size: usize,
    iters: usize,
    layout: Option<Layout>,
    selector: Option<DeviceSelector>,
    verify: bool,
    json: bool,
) -> Result<()> {
    let workload = lookup(name, layout)?;
    let list = discover();
    let index = pick_device(&list, selector)?;
    let device = list.devices[index].as_ref();
    eprintln!(
        "running {name} on device {index}: {} ({})",
        device.info().name,
        device.info().backend
    );
    let result = workload.run(device, size, iters, verify)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", views::run_table(&result));
    }
    Ok(())
}

fn series_command(
    name: &str,
    sizes: &[usize],
    iters: usize,
    repeat: usize,
    layout: Option<Layout>,
    selector: Option<DeviceSelector>,
    output_dir: &std::path::Path,
) -> Result<()> {
    let workload = lookup(name, layout)?;
    let list = discover();
    let index = pick_device(&list, selector)?;
    let device = list.devices[index].as_ref();
    eprintln!(
        "series of {name} on device {index}: {} ({}), sizes {sizes:?}, {repeat} runs each",
        device.info().name,
        device.info().backend
    );
    let layout_name = has_layouts(name).then(|| layout.unwrap_or(Layout::Reordered).to_string());
    let series = run_series(
        workload.as_ref(),
        layout_name,
        device,
        sizes,
        iters,
        repeat,
        |p| eprintln!("{}", views::series_progress(p)),
    )?;
    let stem = series.stem(output_dir);
    let json_path = harness::calibration::with_suffix(&stem, "json");
    let csv_path = harness::calibration::with_suffix(&stem, "csv");
    harness::calibration::write_atomically(
        &json_path,
        serde_json::to_string_pretty(&series)?.as_bytes(),
    )
    .with_context(|| format!("cannot write {}", json_path.display()))?;
    harness::calibration::write_atomically(&csv_path, series.to_csv().as_bytes())
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    println!("wrote {} and {}", json_path.display(), csv_path.display());
    Ok(())
}

fn balance_command(
    phi: Option<f64>,
    rho: Option<f64>,
    times: Option<Vec<f64>>,
    q: u32,
    r: u32,
    plot: Option<PathBuf>,
    json: bool,
) -> Result<()> {
    use harness::model::stepanenko::Hybrid;
    let hybrid = match (times.as_deref(), phi, rho) {
        (Some([t1, tm, ts]), _, _) => Hybrid::from_times(*t1, *tm, *ts, q, r)?,
        (_, Some(phi), Some(rho)) => Hybrid::new(phi, rho, q, r)?,
        (Some(other), _, _) => bail!("--times takes three values T1,T_M,T_S, got {}", other.len()),
        _ => bail!("give --phi and --rho, or --times T1,T_M,T_S"),
    };
    let d = hybrid.decompose();
    if json {
        println!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        print!("{}", views::decomposition_table(&d));
    }
    if let Some(dir) = plot {
        let paths = harness::plot::stepanenko_figure(&hybrid, &dir)?;
        for p in paths {
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(())
}

fn predict_command(path: &std::path::Path, target: f64, json: bool) -> Result<()> {
    let series = harness::workloads::series::Series::load(path)?;
    let forecast = harness::fit::forecast::forecast(&series, target)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&forecast)?);
    } else {
        print!("{}", views::forecast_table(&forecast));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn validate_command(
    name: &str,
    small: &[usize],
    large: &[usize],
    iters: usize,
    repeat: usize,
    layout: Option<Layout>,
    selector: Option<DeviceSelector>,
    output_dir: &std::path::Path,
) -> Result<()> {
    let workload = lookup(name, layout)?;
    let list = discover();
    let index = pick_device(&list, selector)?;
    let device = list.devices[index].as_ref();
    let layout_name = has_layouts(name).then(|| layout.unwrap_or(Layout::Reordered).to_string());
    let v = harness::workloads::validate::validate(
        workload.as_ref(),
        layout_name,
        device,
        small,
        large,
        iters,
        repeat,
        |line| eprintln!("{line}"),
    )?;
    print!("{}", views::validation_table(&v));
    let stem = output_dir.join(format!(
        "{}.validate.{}",
        device.info().slug(),
        workload.name().replace(['/', '.'], "_")
    ));
    let json_path = harness::calibration::with_suffix(&stem, "json");
    let csv_path = harness::calibration::with_suffix(&stem, "csv");
    harness::calibration::write_atomically(
        &json_path,
        serde_json::to_string_pretty(&v)?.as_bytes(),
    )
    .with_context(|| format!("cannot write {}", json_path.display()))?;
    harness::calibration::write_atomically(&csv_path, v.to_csv().as_bytes())
        .with_context(|| format!("cannot write {}", csv_path.display()))?;
    eprintln!("wrote {} and {}", json_path.display(), csv_path.display());
    Ok(())
}
