//! `predict-cluster`, `compare-cluster`, `mpi-pingpong` and `mpi-run`: the DVM-Predictor-style
//! cluster prediction and the real distributed run it is checked against.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use harness::calibration::Calibration;
use harness::experiments::cluster::{device_hops, load_trace, predict, with_device_hops};
use harness::experiments::series::{read_json, Series};
use harness::export::{with_suffix, write_together};
use harness::model::cluster::report::CLUSTER_SCHEMA;
use harness::model::cluster::{compare, ClusterReport, Network, NetworkKind, ProcessorGrid};
use harness::report::cluster::{cluster_html, cluster_text, comparison_table};

/// Arguments of `harness predict-cluster`.
#[derive(clap::Args, Debug)]
pub struct PredictClusterArgs {
    /// The interval trace of a run on one device (`harness run … --trace FILE`).
    #[arg(long, value_name = "FILE")]
    trace: PathBuf,
    /// The processor grid, e.g. 2x2 or 4 (default: the network file's topology).
    #[arg(long, value_name = "P1xP2")]
    grid: Option<String>,
    /// The network file (TOML with the Predictor's fields: type = "network" | "transputer",
    /// start_time and send_byte_time in µs, power, topology); `harness mpi-pingpong` writes one.
    #[arg(long, value_name = "FILE", required_unless_present = "calibration")]
    network: Option<PathBuf>,
    /// GPU-attached processors: every message also crosses each end's host link (a download
    /// and an upload, from this calibration's transfer fits). Without --network the
    /// processors are GPUs of one host, their messages one at a time through its memory (a
    /// bus whose line is those two crossings).
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    /// Override the network file's power: measured processor's speed over the target's
    /// (2 = each target processor is half as fast, e.g. two ranks sharing a core).
    #[arg(long)]
    power: Option<f64>,
    /// A series of the same workload on the same kind of processor (`harness series`): a
    /// block's compute time is taken from it where it brackets the block's size, instead of
    /// scaling the whole array's time by 1/P.
    #[arg(long, value_name = "FILE")]
    series: Option<PathBuf>,
    /// Write <STEM>.json and <STEM>.html (the interval report).
    #[arg(long, value_name = "STEM")]
    output: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `harness compare-cluster`.
#[derive(clap::Args, Debug)]
pub struct CompareClusterArgs {
    /// A prediction (`harness predict-cluster --output`), its .json.
    predicted: PathBuf,
    /// A measured run (`harness mpi-run --output`), its .json.
    measured: PathBuf,
    /// Write the comparison as <STEM>.json and <STEM>.md.
    #[arg(long, value_name = "STEM")]
    output: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `harness mpi-pingpong`.
#[derive(clap::Args, Debug)]
pub struct MpiPingpongArgs {
    /// The network file to write (TOML).
    #[arg(long, value_name = "FILE")]
    pub output: PathBuf,
    /// The system type the file names: transputer (messages travel at once, as between the
    /// cores of one machine) or network (a bus: one message at a time).
    #[arg(long, default_value = "transputer", value_parser = parse_kind)]
    pub r#type: NetworkKind,
    /// Repeats per message size (the median is kept).
    #[arg(long, default_value_t = 200)]
    pub repeats: usize,
    /// Fit the line to the message sizes in this range only, e.g. 4096..65536 for the
    /// shadow edges of an N ≈ 1000 grid (a line cannot follow the jump where MPI changes
    /// protocol, about 4 KiB on one machine).
    #[arg(long, value_name = "FROM..TO", default_value = "0..4194304", value_parser = parse_range)]
    pub fit: (usize, usize),
}

fn parse_range(s: &str) -> Result<(usize, usize), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected FROM..TO in bytes, got {s:?}"))?;
    let num = |x: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("expected FROM..TO in bytes, got {s:?}"))
    };
    let (a, b) = (num(a)?, num(b)?);
    if a > b {
        return Err(format!("the range {a}..{b} is empty"));
    }
    Ok((a, b))
}

/// Arguments of `harness mpi-run`.
#[derive(clap::Args, Debug)]
pub struct MpiRunArgs {
    /// jacobi2d or sor-rb.
    pub workload: String,
    /// Grid side N (the interior N − 2 must divide by the processor grid).
    #[arg(long, short = 'n')]
    pub size: usize,
    /// Iterations.
    #[arg(long, default_value_t = 100)]
    pub iters: usize,
    /// The processor grid; its size must equal the number of MPI ranks (default: ranks × 1).
    #[arg(long, value_name = "P1xP2")]
    pub grid: Option<String>,
    /// Write the measured interval report as <STEM>.json and <STEM>.html.
    #[arg(long, value_name = "STEM")]
    pub output: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

fn parse_kind(s: &str) -> Result<NetworkKind, String> {
    match s {
        "network" | "bus" => Ok(NetworkKind::Bus),
        "transputer" | "grid" => Ok(NetworkKind::Grid),
        _ => Err(format!("expected network or transputer, got {s:?}")),
    }
}

fn read_text(path: &Path, what: &str) -> Result<String> {
    harness::export::read_input_text(path).with_context(|| format!("{what} {}", path.display()))
}

/// `harness predict-cluster`.
pub fn predict_cluster_command(args: PredictClusterArgs) -> Result<()> {
    if let Some(stem) = &args.output {
        super::check_output_dir(stem.parent().unwrap_or(Path::new(".")))?;
    }
    let trace = load_trace(&args.trace)?;
    let mut notes = Vec::new();
    let mut network = match &args.network {
        Some(path) => Network::from_toml(&read_text(path, "network file")?)
            .with_context(|| format!("{}", path.display()))?,
        None => Network::new(
            NetworkKind::Bus,
            harness::units::Seconds(0.0),
            0.0,
            1.0,
            None,
        )?,
    };
    if let Some(path) = &args.calibration {
        let cal = Calibration::load(path)?;
        let Some((start, per_byte, note)) = device_hops(&cal) else {
            bail!(
                "{}: the calibration has no host↔device transfer fits to cost messages with",
                path.display()
            );
        };
        network = with_device_hops(&network, (start, per_byte))?;
        notes.push(note);
    }
    if let Some(p) = args.power {
        network = network.with_power(p)?;
    }
    let grid = match (&args.grid, &network.topology) {
        (Some(g), Some(t)) => {
            let g = ProcessorGrid::parse(g)?;
            if g.extents() != t.as_slice() {
                bail!(
                    "--grid {} disagrees with the network file's topology {t:?}; give one",
                    g.name()
                );
            }
            g
        }
        (Some(g), None) => ProcessorGrid::parse(g)?,
        (None, Some(t)) => ProcessorGrid::new(t.clone())?,
        (None, None) => bail!("give --grid (e.g. 2x2): the network file names no topology"),
    };
    let series = match &args.series {
        Some(p) => Some(Series::load(p)?.medians()),
        None => None,
    };
    let mut report = predict(&trace, &grid, &network, series.as_ref())?;
    report.notes.extend(notes);
    deliver(&report, args.output.as_deref(), args.json)
}

/// Write the report (when asked) before printing it, as a table or JSON.
fn deliver(report: &ClusterReport, output: Option<&Path>, json: bool) -> Result<()> {
    if let Some(stem) = output {
        write_report(stem, report)?;
    }
    if json {
        println!("{}", serde_json::to_string_pretty(report)?);
    } else {
        print!("{}", cluster_text(report));
    }
    Ok(())
}

/// Write `<stem>.html` then `<stem>.json` (the file other commands read comes last).
pub fn write_report(stem: &Path, report: &ClusterReport) -> Result<()> {
    let html = with_suffix(stem, "html");
    let json = with_suffix(stem, "json");
    let (page, data) = (cluster_html(report), serde_json::to_string_pretty(report)?);
    write_together(&[(&html, page.as_bytes()), (&json, data.as_bytes())])?;
    crate::say(&format!("wrote {} and {}", json.display(), html.display()));
    Ok(())
}

fn load_report(path: &Path) -> Result<ClusterReport> {
    let r: ClusterReport = read_json(path)?;
    if r.schema != CLUSTER_SCHEMA {
        bail!(
            "{}: schema {:?}, expected {CLUSTER_SCHEMA:?}",
            path.display(),
            r.schema.chars().take(40).collect::<String>()
        );
    }
    Ok(r)
}

/// `harness compare-cluster`.
pub fn compare_cluster_command(args: CompareClusterArgs) -> Result<()> {
    let predicted = load_report(&args.predicted)?;
    let measured = load_report(&args.measured)?;
    let c = compare(&predicted, &measured).map_err(anyhow::Error::msg)?;
    if let Some(stem) = &args.output {
        let md = with_suffix(stem, "md");
        let json = with_suffix(stem, "json");
        let table = comparison_table(&c);
        let (text, data) = (
            harness::export::markdown::table_to_markdown(&table),
            serde_json::to_string_pretty(&c)?,
        );
        write_together(&[(&md, text.as_bytes()), (&json, data.as_bytes())])?;
        crate::say(&format!("wrote {} and {}", json.display(), md.display()));
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
        return Ok(());
    }
    println!("{}: predicted against measured\n", c.setting);
    print!("{}", comparison_table(&c).render());
    let missed: Vec<_> = c.rows.iter().filter(|r| !r.within).collect();
    println!(
        "{} of {} quantities within bounds (execution time ±15 %; a loss within 25 % or 5 % of the interval's total, whichever is larger)",
        c.rows.len() - missed.len(),
        c.rows.len()
    );
    for u in &c.unmatched {
        println!("unmatched interval: {u}");
    }
    Ok(())
}

/// `harness mpi-pingpong`.
#[cfg(feature = "mpi")]
pub fn mpi_pingpong_command(args: MpiPingpongArgs) -> Result<()> {
    let result = harness::experiments::mpi::pingpong_command(
        &args.output,
        args.r#type,
        args.repeats,
        args.fit,
    );
    quiet_on_other_ranks(result)
}

/// Every rank meets the same error: only rank 0 (or a process not started by mpirun) says it,
/// so the user reads one line; the others exit with the same code.
#[cfg(feature = "mpi")]
fn quiet_on_other_ranks<T>(result: Result<T, harness::experiments::mpi::MpiError>) -> Result<T> {
    match result {
        Err(_) if harness::experiments::mpi::launcher_rank().is_some_and(|r| r != 0) => {
            // mpirun ends the whole job when a rank exits non-zero: wait a moment so that
            // rank 0, which meets the same error, says it first.
            std::thread::sleep(std::time::Duration::from_millis(500));
            std::process::exit(2)
        }
        other => Ok(other?),
    }
}

/// `harness mpi-pingpong` without the `mpi` feature.
#[cfg(not(feature = "mpi"))]
pub fn mpi_pingpong_command(_: MpiPingpongArgs) -> Result<()> {
    bail!("{NO_MPI}")
}

/// `harness mpi-run`.
#[cfg(feature = "mpi")]
pub fn mpi_run_command(args: MpiRunArgs) -> Result<()> {
    if let Some(stem) = &args.output {
        let folder = stem.parent().unwrap_or(Path::new("."));
        quiet_on_other_ranks(
            super::check_output_dir(folder)
                .map_err(|e| harness::experiments::mpi::MpiError::Invalid(format!("{e:#}"))),
        )?;
    }
    let grid = args.grid.as_deref().map(ProcessorGrid::parse).transpose();
    let grid = quiet_on_other_ranks(grid.map_err(harness::experiments::mpi::MpiError::from))?;
    let report = quiet_on_other_ranks(harness::experiments::mpi::run_distributed(
        &args.workload,
        args.size,
        args.iters,
        grid,
    ))?;
    match report {
        Some(report) => deliver(&report, args.output.as_deref(), args.json),
        None => Ok(()),
    }
}

/// `harness mpi-run` without the `mpi` feature.
#[cfg(not(feature = "mpi"))]
pub fn mpi_run_command(_: MpiRunArgs) -> Result<()> {
    bail!("{NO_MPI}")
}

#[cfg(not(feature = "mpi"))]
const NO_MPI: &str = "this harness was built without MPI: install OpenMPI (apt-get install openmpi-bin libopenmpi-dev) and build with `cargo build --release --features mpi`";
