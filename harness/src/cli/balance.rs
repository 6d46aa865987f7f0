//! `harness balance`: Stepanenko's model alone, from measured fragments, and run for real.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use harness::backend::{discover, DeviceSelector};
use harness::experiments::balance::measure_balance;
use harness::model::stepanenko::{Decomposition, Hybrid};
use harness::plot::{balance_figure, save_bars};
use harness::report::views;
use harness::workloads::sor_batch::SorBatch;

use super::{check_output_dir, pick_device, write_and_say};

/// What `harness balance` was asked.
#[derive(Args, Debug)]
pub struct BalanceArgs {
    /// phi, the MIMD fragment's share of T1, in (0, 1).
    #[arg(long, allow_negative_numbers = true, conflicts_with_all = ["times", "workload"])]
    phi: Option<f64>,
    /// rho, how much faster one accelerator runs the SIMD fragment than one core.
    #[arg(long, allow_negative_numbers = true, conflicts_with_all = ["times", "workload"])]
    rho: Option<f64>,
    /// T1,T_M,T_S: whole process on one core, MIMD fragment on one core, SIMD fragment
    /// on one accelerator (seconds).
    #[arg(long, value_delimiter = ',', conflicts_with = "workload")]
    times: Option<Vec<f64>>,
    /// Measure phi and rho on this program (only `sor`: a batch of SOR problems).
    #[arg(long)]
    workload: Option<String>,
    /// Grid side N of each problem (with --workload).
    #[arg(long, short = 'n', requires = "workload")]
    size: Option<usize>,
    /// Problems in the batch (with --workload).
    #[arg(long, default_value_t = 32, value_parser = super::repeat_count)]
    grids: usize,
    /// Red-black sweeps per problem, the SIMD fragment (with --workload).
    #[arg(long, default_value_t = 10, value_parser = super::repeat_count)]
    sweeps: usize,
    /// Timed repeats of each measurement and split.
    #[arg(long, default_value_t = 3, value_parser = super::repeat_count)]
    repeat: usize,
    /// The accelerator: index, backend or part of a name (default: the best found).
    #[arg(long, short, value_name = "SEL")]
    device: Option<DeviceSelector>,
    /// CPU cores (default with --workload: the host's).
    #[arg(long)]
    q: Option<u32>,
    /// Accelerators (default with --workload: 1).
    #[arg(long)]
    r: Option<u32>,
    /// Run the recommended split, the proportional split, the accelerator alone and the
    /// cores alone for real (with --workload).
    #[arg(long, requires = "workload")]
    run: bool,
    /// Draw the paper's Fig. 6 (and with --run the measured-against-predicted bars) here.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Folder for the measured result (JSON and CSV).
    #[arg(long, value_name = "DIR", default_value = "calibrations")]
    output_dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `harness balance`.
pub fn balance_command(args: BalanceArgs) -> Result<()> {
    if args.workload.is_some() {
        return measured_balance(&args);
    }
    let (Some(q), Some(r)) = (args.q, args.r) else {
        bail!("give --q and --r (cores and accelerators), or --workload to detect them");
    };
    let hybrid = match (args.times.as_deref(), args.phi, args.rho) {
        (Some([t1, tm, ts]), _, _) => Hybrid::from_times(*t1, *tm, *ts, q, r)?,
        (Some(other), _, _) => bail!("--times takes three values T1,T_M,T_S, got {}", other.len()),
        (None, Some(phi), Some(rho)) => Hybrid::new(phi, rho, q, r)?,
        _ => bail!("give --phi and --rho, --times T1,T_M,T_S, or --workload sor --size N"),
    };
    show(&hybrid.decompose(), args.json)?;
    plot_fig6(&hybrid, args.plot.as_ref())
}

fn show(d: &Decomposition, json: bool) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(d)?);
    } else {
        print!("{}", views::decomposition_table(d));
    }
    Ok(())
}

fn plot_fig6(hybrid: &Hybrid, dir: Option<&PathBuf>) -> Result<()> {
    if let Some(dir) = dir {
        for p in harness::plot::stepanenko_figure(hybrid, dir)? {
            crate::say(&format!("wrote {}", p.display()));
        }
    }
    Ok(())
}

fn measured_balance(args: &BalanceArgs) -> Result<()> {
    let name = args.workload.as_deref().unwrap_or_default();
    if name != "sor" {
        bail!("--workload {name}: the measured split is defined for `sor` (a batch of SOR problems) only");
    }
    let Some(size) = args.size else {
        bail!("--workload sor needs --size N (the grid side)");
    };
    let batch = SorBatch::new(size, args.grids, args.sweeps)?;
    let q = match args.q {
        Some(q) => q,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let r = args.r.unwrap_or(1);
    // The folders are checked before the measurements, not after them.
    check_output_dir(&args.output_dir)?;
    if let Some(dir) = &args.plot {
        check_output_dir(dir)?;
    }
    let list = discover();
    let index = pick_device(&list, args.device.clone())?;
    let device = list.devices[index].as_ref();
    eprintln!(
        "measuring the SOR batch (N = {size}, {} problems, {} sweeps) on one core and on device {index}: {}",
        batch.grids,
        batch.sweeps,
        device.info().name
    );
    let measured = measure_balance(batch, device, q, r, args.run, args.repeat, |line| {
        eprintln!("{line}")
    })?;
    let stem = args
        .output_dir
        .join(format!("{}.balance.sor-{size}", device.info().slug()));
    write_and_say(&stem, &[], &measured)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&measured)?);
    } else {
        print!("{}", views::fragments_table(&measured.fragments, q, r));
        print!("{}", views::decomposition_table(&measured.decomposition));
        if !measured.runs.is_empty() {
            print!("\n{}", views::split_runs_table(&measured.runs));
        }
    }
    plot_fig6(&measured.decomposition.hybrid, args.plot.as_ref())?;
    if let (Some(dir), false) = (&args.plot, measured.runs.is_empty()) {
        let stem = dir.join(format!("{}.balance.sor-{size}", device.info().slug()));
        for p in save_bars(&balance_figure(&measured, size), &stem)? {
            crate::say(&format!("wrote {}", p.display()));
        }
    }
    Ok(())
}
