//! Argument parsing (clap derive) and the commands.
//!
//! This file parses the arguments and dispatches each command to the function that runs it,
//! and holds what several commands share; the submodules hold the commands: `calibrate`
//! (devices, calibrate, babelstream, compare), `run`, `series` (series, export-extrap),
//! `predict`, `validate` (validate, plot-validations), and `balance`, `check`, `cluster`,
//! `maxplus`, `show` and `suite`.

mod balance;
mod calibrate;
mod check;
mod cluster;
mod counts;
mod interrupt;
mod maxplus;
mod predict;
mod run;
mod series;
mod show;
mod suite;
mod validate;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use calibrate::{babelstream_command, calibrate_command, compare_command, devices};
use counts::shorten_quotes;
pub(crate) use counts::{at_least_one, repeat_count, shown, MAX_REPEATS};
use harness::backend::cold::Eviction;
use harness::backend::{select, DeviceList, DeviceSelector};
use harness::bench::babelstream::{BabelStreamOptions, Precision};
use harness::experiments::series::{Checks, RepeatPlan};
use harness::export::{write_results, Exportable, Format};
use harness::workloads::registry::lookup_with;
use harness::workloads::Layout;
pub(crate) use interrupt::{interrupt_flag, was_interrupted};
use predict::predict_command;
use run::run_command;
use series::{export_extrap, series_command};
use validate::{plot_validations, validate_command};

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

/// How a series is run: shared by `series` and `validate`.
#[derive(clap::Args, Debug)]
pub(crate) struct SeriesOptions {
    /// Iterations per run (default: a spec's `iterations`, else 10).
    #[arg(long, value_parser = at_least_one)]
    iters: Option<usize>,
    /// For a spec file: set one of its named parameters, NAME=VALUE (repeat the flag for
    /// several: --param NJ=512 --param TMAX=20). The size parameter is set by the sizes.
    #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
    params: Vec<(String, f64)>,
    /// Runs per size, at least. Sizes run in rounds (a, b, c, a, b, c, …) so drift on a
    /// shared machine hits them alike.
    #[arg(long, default_value_t = 5, value_parser = repeat_count)]
    repeat: usize,
    /// Runs per size, at most (default: 3 × --repeat): after --repeat rounds, a size whose
    /// total's 95 % interval is wider than ±--ci-target runs again, up to this many times.
    #[arg(long, value_name = "N", value_parser = repeat_count)]
    max_repeat: Option<usize>,
    /// The interval to aim for, in percent of the median (half-width).
    #[arg(long, value_name = "PERCENT", default_value_t = 5.0)]
    ci_target: f64,
    /// Which warm-up runs are checked against the workload's reference (each size has one
    /// warm-up run before it is timed); the files record which.
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = Checks::All)]
    verify: Checks,
    /// Cold runs per size, one in each of the first rounds (at most --repeat): the size run
    /// again with its data evicted from the caches once per sweep over its working set, as at
    /// a size past the last cache (on a GPU a kernel empties its L2). The `calibrated`
    /// variant moves each size to a target in device memory by them (docs/models.md §2.4);
    /// 0: none (the rates move it). Default: 3 on a CPU device, none on a GPU, where the
    /// variant has not yet been judged with them.
    #[arg(long, value_name = "N")]
    cold_runs: Option<usize>,
    /// plain or reordered, for sor, adi and line-solve (default: reordered).
    #[arg(long)]
    layout: Option<Layout>,
    /// Device: index, backend or part of a name (default: the best found).
    #[arg(long, short, value_name = "SEL")]
    device: Option<DeviceSelector>,
    /// Folder for the files.
    #[arg(long, value_name = "DIR", default_value = "calibrations")]
    output_dir: PathBuf,
}

impl SeriesOptions {
    /// Iterations per run for `workload`: --iters, else the workload's own default, else 10.
    pub(crate) fn iterations(&self, workload: &dyn harness::workloads::Workload) -> usize {
        self.iters
            .or_else(|| workload.default_iterations())
            .unwrap_or(DEFAULT_ITERATIONS)
    }

    /// The workload called `name` with the flags' layout and parameters.
    pub(crate) fn workload(&self, name: &str) -> Result<Box<dyn harness::workloads::Workload>> {
        Ok(lookup_with(name, self.layout, &self.params)?)
    }

    /// The repeat plan the flags ask for.
    pub(crate) fn plan(&self) -> Result<RepeatPlan> {
        if !(self.ci_target > 0.0 && self.ci_target.is_finite()) {
            bail!(
                "--ci-target must be a positive percentage, got {}",
                self.ci_target
            );
        }
        let max = self.max_repeat.unwrap_or(3 * self.repeat).min(MAX_REPEATS);
        if max < self.repeat {
            bail!(
                "--max-repeat ({max}) must be at least --repeat ({})",
                self.repeat
            );
        }
        Ok(RepeatPlan {
            min: self.repeat,
            max,
            ci_target: self.ci_target / 100.0,
            checks: self.verify,
            cold: self.cold_runs,
            eviction: cold_eviction()?,
        })
    }
}

/// Who empties the caches before a cold run, where `HARNESS_COLD_EVICTION` says (`host`,
/// `device` or `flush`: to compare them on a CPU device, whose caches each reach); else the
/// device's own (docs/measurement.md, step 6).
fn cold_eviction() -> Result<Option<Eviction>> {
    match std::env::var("HARNESS_COLD_EVICTION") {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Ok(v) if v == "host" => Ok(Some(Eviction::Host)),
        Ok(v) if v == "device" => Ok(Some(Eviction::Device)),
        Ok(v) if v == "flush" => Ok(Some(Eviction::Flush)),
        Ok(v) => bail!("HARNESS_COLD_EVICTION takes host, device or flush, got '{v}'"),
        Err(e) => bail!("HARNESS_COLD_EVICTION: {e}"),
    }
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
    /// The output folder is checked before measuring, and one run per device and folder
    /// measures at a time (a second fails at once; the lock is <folder>/.<device>.lock).
    Calibrate(calibrate::CalibrateArgs),
    /// Run a validation workload once at one size and print its phase table.
    ///
    /// Workloads: vadd, triad, jacobi2d, sor, sor-rb, adi, lu-ssor, line-solve — or the path
    /// of a spec file (`.toml`, your own kernels: docs/spec-format.md, examples in
    /// kernels/examples/). The result is checked against the host implementation (a spec:
    /// against its formula or reference run; a spec without a check is reported unchecked)
    /// unless --no-verify. The table shows each phase, the kernels' sum and the total.
    Run {
        /// A built-in workload or a spec file (.toml): see above.
        workload: String,
        /// Problem size N (elements for vadd/triad, grid side for the rest): an integer or
        /// 2^k.
        #[arg(long, short = 'n', value_parser = maxplus::parse_size)]
        size: usize,
        /// Iterations (default: a spec's `iterations`, else 10).
        #[arg(long, value_parser = at_least_one)]
        iters: Option<usize>,
        /// For a spec file: set one of its named parameters, NAME=VALUE (repeat the flag for
        /// several: --param NJ=512 --param TMAX=20); --size sets the size parameter.
        #[arg(long = "param", value_name = "NAME=VALUE", value_parser = parse_param)]
        params: Vec<(String, f64)>,
        /// For a spec file: write every buffer's final contents into DIR (NAME.bin, raw
        /// native-endian elements, and dump.json saying each one's type and length).
        #[arg(long, value_name = "DIR")]
        dump: Option<PathBuf>,
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
        /// Also write the run's interval trace (the run, each iteration, each phase, with the
        /// shadow exchanges and reductions its distributed version performs) for
        /// `predict-cluster`. jacobi2d, sor-rb, and spec files with a [distribution] table
        /// (docs/spec-format.md); on the host, RAYON_NUM_THREADS=1 makes the trace one core's.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
    },
    /// Run a workload at several small sizes (each repeated) and write the per-phase series
    /// as JSON and CSV beside the device's calibration under calibrations/.
    Series {
        /// A built-in workload (vadd, triad, jacobi2d, sor, sor-rb, adi, lu-ssor,
        /// line-solve) or a spec file (.toml; its size parameter is what the sizes vary).
        workload: String,
        /// Sizes: integers or 2^k, comma-separated; or `auto` with --target: five sizes from
        /// the device's calibration at 4–8× below the target (the device saturated, no powers
        /// of two on grids; sizes in another memory level than the target's are reported).
        #[arg(long, value_delimiter = ',', required = true)]
        sizes: Vec<String>,
        /// The size the series is meant to predict, for `--sizes auto`: an integer or 2^k.
        #[arg(long, value_parser = maxplus::parse_size)]
        target: Option<usize>,
        /// The device's calibration, for `--sizes auto` (default: the device's file under
        /// --output-dir).
        #[arg(long, value_name = "FILE")]
        calibration: Option<PathBuf>,
        #[command(flatten)]
        runs: SeriesOptions,
        /// Also write the series in these formats beside the JSON and CSV (comma-separated):
        /// `extrap` writes <stem>.extrap.txt, Extra-P's text input (PARAMETER / POINTS /
        /// METRIC / REGION / DATA, every repetition), to put Extra-P's PMNF models beside our
        /// fit; `markdown` writes <stem>.md, the CSV's rows as a Markdown table.
        #[arg(long, value_enum, value_delimiter = ',')]
        format: Vec<Format>,
    },
    /// Write a first spec for a kernel from its source: each pointer parameter a buffer, each
    /// scalar a parameter named after it in capitals (`n` is the size), the launch's arguments
    /// in order, and "TODO" wherever the source cannot say (lengths, values, the launch's
    /// width, its bytes), which the spec loader refuses by name until answered. The walks and
    /// gathers its source shows come as commented suggestions. To standard output, or to
    /// --output (never over an existing file); save it next to the kernel file.
    ///
    /// Example: harness spec-init kernels/examples/gemm.kern --kernel gemm -o my-gemm.toml
    SpecInit {
        /// The kernel file: the common dialect (.kern), OpenCL C (.cl) or CUDA (.cu).
        source: PathBuf,
        /// The kernel, where the file defines several.
        #[arg(long)]
        kernel: Option<String>,
        /// Write here instead of standard output (refused if it exists).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Write an existing series file in Extra-P's text input format (to standard output, or
    /// to --output).
    ///
    /// Example: harness export-extrap calibrations/<device>.series.sor-reordered.json
    ExportExtrap {
        /// A series file written by `harness series`.
        series: PathBuf,
        /// Write here instead of standard output (atomically).
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Stepanenko's decomposition of q cores and r accelerators for a process with MIMD
    /// share phi and accelerator speed-up rho: the best number of cores to join to the
    /// accelerators, the speed-ups (proportional, K^D, K^max) and the balancing shares.
    ///
    /// Give phi and rho (with --q and --r), or the measured times T1,T_M,T_S with --times,
    /// or let the harness measure them: --workload sor --size N runs a batch of SOR problems
    /// (SIMD fragment: red-black sweeps on the accelerator; MIMD fragment: the convergence
    /// control on a core; see README) with q = the host's cores and r = 1. --run then
    /// executes the recommended split, the proportional split, the accelerator alone and
    /// the cores alone for real and puts the measured speed-ups beside the model's.
    ///
    /// Example: harness balance --workload sor --size 512 --run --plot plots
    Balance(balance::BalanceArgs),
    /// Predict a large size from a small-scale series (Escobar & Boppana's fractal fit):
    /// per phase and in total the fractal dimension, the prediction with its 95 % prediction
    /// interval, and the polynomial and a·N^c + b baselines on the same points.
    Predict {
        /// A series file written by `harness series`.
        #[arg(long)]
        series: PathBuf,
        /// The size to predict: a number or 2^k.
        #[arg(long, value_parser = maxplus::parse_target)]
        target: f64,
        /// The device's calibration: adds the windowed variant (the small sizes that saturate
        /// the device, are not overhead-dominated and share the target's memory level,
        /// launch overhead subtracted) and the calibrated one (every size moved to the
        /// target's level, by the series' cold runs where it has them, and what bounds each
        /// phase). With --json the output is then {"paper": …, "windowed": …, "window": …,
        /// "calibrated": …, "calibrated_window": …}.
        #[arg(long, value_name = "FILE")]
        calibration: Option<PathBuf>,
        /// What to predict: `total` (every phase, transfers included) or `kernels` (the
        /// kernel phases only: the device time without uploads and downloads, which for a
        /// program launched once are mostly first-touch paging).
        #[arg(long, default_value = "total", value_name = "QUANTITY")]
        quantity: harness::experiments::predict::Quantity,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Validate the fractal prediction: run a small series, predict each large size, run it,
    /// and report the absolute percentage error per phase and in total (mean, median, max);
    /// JSON and CSV beside the calibrations.
    ///
    /// Three variants: `paper` (every small size, Escobar & Boppana's fit) and, when the
    /// device has a calibration, `windowed`: only the small sizes that saturate the device (≥ n
    /// work items), are not launch-overhead-dominated, and live in the same memory level as
    /// the large size, with launches × overhead subtracted; and `calibrated`: the saturated
    /// sizes of any level, each moved to the large size's level by the calibrated streaming
    /// and transfer rates (docs/models.md §2.4). Rejected sizes are listed with why.
    Validate {
        /// A workload name or a spec file.
        workload: String,
        /// The small sizes the fits use: integers or 2^k, comma-separated; or `auto`: five
        /// sizes from the device's calibration at 4–8× below the smallest large size (the
        /// device saturated; grid sides 4 more than a multiple of 8, as the targets' are, off
        /// the cache-set conflicts of powers of two; a size in another memory level than the
        /// target's is reported).
        #[arg(long, value_delimiter = ',', required = true)]
        small: Vec<String>,
        /// The large sizes to predict and measure: integers or 2^k, comma-separated.
        #[arg(long, value_delimiter = ',', required = true, value_parser = maxplus::parse_size)]
        large: Vec<usize>,
        #[command(flatten)]
        runs: SeriesOptions,
        /// The device's calibration, for the windowed variant (default: the device's file
        /// under --output-dir; without one only the paper's variant runs).
        #[arg(long, value_name = "FILE")]
        calibration: Option<PathBuf>,
        /// Folder for the figures: the log-log fit of the total with its prediction interval
        /// and the large runs, and the polynomial-against-fractal extrapolation (Fig. 1).
        #[arg(long, value_name = "DIR", default_value = "plots")]
        plot_dir: PathBuf,
    },
    /// Compile every kernel without a GPU: each built-in program (and each spec's kernel file
    /// given) through NVRTC for each --arch, with registers and spills from ptxas where it is
    /// found, and on every OpenCL device. Run it before asking for GPU time.
    ///
    /// NVRTC is looked for by the system loader, then in HARNESS_NVRTC_DIR, CUDA_HOME,
    /// /usr/local/cuda and the Python wheels (`pip install nvidia-cuda-nvrtc`; ptxas comes
    /// with `nvidia-cuda-nvcc`). Exits 2 when a compile fails.
    ///
    /// Example: harness check-kernels --arch sm_80,sm_90 kernels/examples/saxpy.toml
    CheckKernels(check::CheckArgs),
    /// The whole fractal validation in one run: every built-in workload (or those given)
    /// predicted at 4–8× by every variant — `paper`, `windowed` and `calibrated` — with the
    /// target just past the largest cache and the small sizes from the device's calibration.
    ///
    /// Prints one row per case (measured, each variant's prediction and error, `*` where the
    /// 95 % interval misses) and the median and max error per variant. Writes
    /// <output-dir>/<device>.suite.{json,csv,md}, and each case's validation under
    /// <output-dir>/<device>.suite/ as soon as it is measured (Ctrl-C stops after the current
    /// case and still writes the summary). A case that fails (its check, the device) is
    /// reported and the suite goes on; the summary lists it under `failed` and the run ends
    /// with an error (exit 2). --from assesses stored cases again, no device.
    ///
    /// Example: harness validate-suite --device opencl --output-dir results
    ValidateSuite(suite::SuiteArgs),
    /// Regenerate every figure from stored results, no device needed: each calibration's
    /// latency, bandwidth and Δt/ΔT sweeps; each validation's fit and Fig. 1; per device the
    /// parity and error bars of every validation; each suite's errors; each max-plus
    /// validation; each measured balance (Fig. 6 with the measured splits); each cluster
    /// prediction's losses beside its measured runs.
    ///
    /// Each figure is written as SVG, PNG (300 dpi at one column, 8.5 cm) and the CSV of its
    /// data, named after the file it comes from (results/x.json → <out>/results/x.<figure>).
    /// The same files give byte-identical figures. Files that cannot be read and figures
    /// whose data is missing are skipped with a one-line note.
    ///
    /// Example: harness figures --device host-amd-epyc --out plots
    Figures(show::FiguresArgs),
    /// One self-contained HTML page per device (figures inlined as SVG, no script, no network)
    /// and an index comparing the devices: fingerprint and provenance, the calibration with
    /// its intervals and methods, the microbenchmark curves, every fractal prediction and
    /// variant against measurement, the max-plus validation, the balancing and the cluster
    /// prediction. Every table also as Markdown (.md) and LaTeX booktabs (.tex) beside each
    /// page. Sections with nothing stored say what to run.
    ///
    /// Example: harness report --out reports && xdg-open reports/index.html
    Report(show::ReportArgs),
    /// Figures over several `harness validate` results: predicted against measured (parity,
    /// with a ±10 % band) and the error per workload as bars, each for the paper and the
    /// windowed variant; and for each result its log-log fit and Fig. 1 figures.
    ///
    /// Example: harness plot-validations calibrations/*.validate.*.json
    PlotValidations {
        /// Files written by `harness validate` (its .json).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Folder for the figures.
        #[arg(long, value_name = "DIR", default_value = "plots")]
        plot_dir: PathBuf,
        /// Stem of the figure files: <name>.parity and <name>.errors.
        #[arg(long, default_value = "fractal")]
        name: String,
    },
    /// Show a kernel graph's max-plus model (Antonyuk & Mikheev): its nodes, the kernel
    /// matrix Z, the height, the symbolic per-instance time of every model variant, and with
    /// --sizes the predicted times.
    ///
    /// Graphs live in kernels/graphs/ (vadd_z1..z3, triad, jacobi5, sor_point, adi_line);
    /// docs/graph-format.md describes the file. For a graph that describes a built-in kernel,
    /// N means what it means for that workload (elements, grid side, cube side) and the
    /// prediction covers all of one iteration's launches; otherwise N is the instance count.
    ///
    /// Example: harness maxplus kernels/graphs/triad.toml
    ///   --calibration calibrations/<device>.json --sizes 2^20,2^24
    Maxplus(maxplus::MaxplusArgs),
    /// Run the kernel a graph describes at each size, predict it with every max-plus model
    /// variant from the device's calibration, and report predicted against measured with the
    /// error per variant. Writes <calibration>.maxplus.<graph>.{json,csv} beside the
    /// calibration and the figure (time against N, error panel) into --plot-dir.
    ///
    /// Sizes that do not fit the device are skipped and listed.
    ///
    /// Example: harness validate-maxplus kernels/graphs/triad.toml --sizes 2^10,2^14,2^18,2^22
    ValidateMaxplus(maxplus::ValidateMaxplusArgs),
    /// Run BabelStream's five kernels (copy, mul, add, triad, dot) on a device as BabelStream
    /// runs and reports them (2^25 floats, 100 iterations, MB/s from the fastest), verified:
    /// the memory-level part of `calibrate`, alone, to put beside BabelStream's own build.
    ///
    /// The calibration runs floats (BabelStream's --float). BabelStream's own default is
    /// doubles: --double runs those, which is what a GPU needs to keep enough bytes in flight.
    ///
    /// Examples: harness babelstream --device opencl;
    /// harness babelstream --device cuda --double --arraysize 2^27
    Babelstream {
        /// Device: index, backend or part of a name (default: the best found).
        #[arg(long, short, value_name = "SEL")]
        device: Option<DeviceSelector>,
        /// 10 iterations instead of 100 (the device's timer in the first six).
        #[arg(long)]
        quick: bool,
        /// Doubles instead of floats (BabelStream's default precision; its --float is ours).
        #[arg(long)]
        double: bool,
        /// Elements per array, as BabelStream's -s (2^k accepted); fewer where the three
        /// arrays would take more than 3/16 of the device's memory.
        #[arg(long, short = 's', value_name = "N", default_value = "2^25", value_parser = maxplus::parse_size)]
        arraysize: usize,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Predict a run on a grid of processors from a trace taken on one, as the DVM
    /// Predictor does: each processor computes its BLOCK of the grid, exchanges shadow edges
    /// and joins reductions; per interval (the run, each iteration, each phase) the
    /// execution time, efficiency, productive time and the losses (insufficient parallelism,
    /// shadow exchange, reduction, synchronization, idle), which add up to processors × time.
    ///
    /// Example: harness run jacobi2d -n 1026 --iters 200 --device host --trace t.json
    ///          harness mpi-pingpong --output net.toml   (built with --features mpi)
    ///          harness predict-cluster --trace t.json --grid 2x1 --network net.toml --output p
    PredictCluster(cluster::PredictClusterArgs),
    /// Put a prediction beside a measured distributed run: execution time per interval (±15 %)
    /// and every loss term (within 25 % or 5 % of the interval's total, the larger).
    ///
    /// Example: harness compare-cluster p.json m.json
    CompareCluster(cluster::CompareClusterArgs),
    /// Measure the message start time and time per byte between MPI ranks 0 and 1 (a
    /// ping-pong over sizes 0 B to 4 MiB, a line through the medians) and write a network
    /// file for predict-cluster. Needs the `mpi` feature; run as `mpirun -np 2 harness
    /// mpi-pingpong --output net.toml`.
    MpiPingpong(cluster::MpiPingpongArgs),
    /// Run jacobi2d or sor-rb distributed over MPI ranks (one block each, real shadow
    /// exchanges and reductions, host code on one thread per rank), verified against the
    /// sequential reference, and write the measured interval report in the prediction's
    /// schema. Needs the `mpi` feature; run as `mpirun -np 2 harness mpi-run jacobi2d -n 1026`.
    MpiRun(cluster::MpiRunArgs),
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
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind::{
                DisplayHelp, DisplayHelpOnMissingArgumentOrSubcommand, DisplayVersion,
            };
            if matches!(
                e.kind(),
                DisplayHelp | DisplayVersion | DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                e.exit();
            }
            // A usage error: clap's few lines, each cut short if it quotes a huge value, and
            // no control character from an argument reaching the terminal (clap quotes them
            // raw: an escape sequence in a mistyped value would act on the terminal).
            for line in e.render().to_string().lines() {
                let line = harness::export::table::terminal_safe(&line.replace(['\r', '\t'], " "));
                eprintln!("{}", crate::clip(&shorten_quotes(&line)));
            }
            std::process::exit(2);
        }
    };
    interrupt::install();
    kernel_dir_check()?;
    match cli.command {
        Command::Devices { json } => devices(json),
        Command::Maxplus(args) => maxplus::maxplus_command(args),
        Command::ValidateMaxplus(args) => maxplus::validate_maxplus_command(args),
        Command::Calibrate(args) => calibrate_command(args),
        Command::Compare {
            before,
            after,
            json,
        } => compare_command(&before, &after, json),
        Command::Babelstream {
            device,
            quick,
            double,
            arraysize,
            json,
        } => {
            let options = BabelStreamOptions {
                precision: if double {
                    Precision::Double
                } else {
                    Precision::Float
                },
                elements: arraysize,
            };
            babelstream_command(device, quick, &options, json)
        }
        Command::Balance(args) => balance::balance_command(args),
        Command::ValidateSuite(args) => suite::suite_command(args),
        Command::Figures(args) => show::figures_command(args),
        Command::Report(args) => show::report_command(args),
        Command::CheckKernels(args) => check::check_command(args),
        Command::PredictCluster(args) => cluster::predict_cluster_command(args),
        Command::CompareCluster(args) => cluster::compare_cluster_command(args),
        Command::MpiPingpong(args) => cluster::mpi_pingpong_command(args),
        Command::MpiRun(args) => cluster::mpi_run_command(args),
        Command::Validate {
            workload,
            small,
            large,
            runs,
            calibration,
            plot_dir,
        } => validate_command(&workload, &small, &large, &runs, calibration, &plot_dir),
        Command::PlotValidations {
            files,
            plot_dir,
            name,
        } => plot_validations(&files, &plot_dir, &name),
        Command::Predict {
            series,
            target,
            calibration,
            quantity,
            json,
        } => predict_command(&series, target, calibration, quantity, json),
        Command::Run {
            workload,
            size,
            iters,
            params,
            dump,
            layout,
            device,
            no_verify,
            json,
            trace,
        } => run_command(
            &workload,
            RunShape {
                size,
                iters,
                params,
                dump,
            },
            layout,
            device,
            !no_verify,
            json,
            trace.as_deref(),
        ),
        Command::Series {
            workload,
            sizes,
            target,
            calibration,
            runs,
            format,
        } => series_command(&workload, &sizes, target, calibration, &runs, &format),
        Command::ExportExtrap { series, output } => export_extrap(&series, output.as_deref()),
        Command::SpecInit {
            source,
            kernel,
            output,
        } => spec_init(&source, kernel.as_deref(), output.as_deref()),
    }
}

fn print_notes(list: &DeviceList) {
    for note in &list.notes {
        eprintln!("{note}");
    }
}

/// With `HARNESS_KERNEL_DIR` set: a folder that is not there, or a copy in it that cannot be
/// read, is an error (the user meant those kernels to be used); otherwise one line says which
/// built-in programs come from the folder and which from the binary.
fn kernel_dir_check() -> Result<()> {
    let Some(dir) = std::env::var_os("HARNESS_KERNEL_DIR") else {
        return Ok(());
    };
    let dir = PathBuf::from(dir);
    if !dir.is_dir() {
        bail!(
            "HARNESS_KERNEL_DIR={} is not a folder; point it at a copy of kernels/ (or unset it to use the kernels built into the binary)",
            dir.display()
        );
    }
    let programs = harness::experiments::check_kernels::builtin_programs();
    if let Some(why) = programs.iter().find_map(|p| p.kernel_dir_error.as_ref()) {
        bail!("HARNESS_KERNEL_DIR: cannot read {why}");
    }
    let names = |embedded: bool| {
        let names: Vec<&str> = programs
            .iter()
            .filter(|p| p.is_embedded() == embedded)
            .map(|p| p.name.as_ref())
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    eprintln!(
        "note: HARNESS_KERNEL_DIR={}: from there {}; built in (no copy there) {}",
        dir.display(),
        names(false),
        names(true)
    );
    Ok(())
}

pub(crate) fn pick_device(list: &DeviceList, selector: Option<DeviceSelector>) -> Result<usize> {
    print_notes(list);
    Ok(select(list, &selector.unwrap_or(DeviceSelector::Best))?)
}

/// Iterations per run when neither the command line nor the workload says.
const DEFAULT_ITERATIONS: usize = 10;

/// What `run` runs: the size, iterations, a spec's parameters and where to dump its buffers.
struct RunShape {
    size: usize,
    iters: Option<usize>,
    params: Vec<(String, f64)>,
    dump: Option<PathBuf>,
}

/// `--param NAME=VALUE`.
fn parse_param(text: &str) -> Result<(String, f64), String> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(format!("`{text}`: write NAME=VALUE, e.g. NJ=512"));
    };
    let name = name.trim();
    if !harness::workloads::spec::params::is_identifier(name) {
        return Err(format!("`{name}` is not a parameter name"));
    }
    let value = maxplus::parse_number(value.trim()).map_err(|e| format!("{name}: {e}"))?;
    Ok((name.to_string(), value))
}

/// Fail at once when files cannot be written into `dir`, rather than after the
/// measurements (a missing folder is created for the check and removed again).
/// `spec-init`: a first spec for a kernel of `source`.
fn spec_init(
    source: &std::path::Path,
    kernel: Option<&str>,
    output: Option<&std::path::Path>,
) -> Result<()> {
    use harness::workloads::spec::scaffold::{pick_kernel, scaffold};
    let text = harness::export::input::read_input_text(source)
        .with_context(|| format!("cannot read {}", source.display()))?;
    let file = source
        .file_name()
        .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
    let kernel = pick_kernel(&text, kernel).with_context(|| source.display().to_string())?;
    let spec = scaffold(&text, &file, &kernel).with_context(|| source.display().to_string())?;
    match output {
        Some(out) => {
            if out.exists() {
                bail!(
                    "{} exists: spec-init does not write over a file",
                    out.display()
                );
            }
            harness::export::file::write_atomically(out, spec.as_bytes())
                .with_context(|| format!("cannot write {}", out.display()))?;
            crate::say(&format!(
                "wrote {}: answer its TODOs, then `harness run {} --size 1000`",
                out.display(),
                out.display()
            ));
        }
        None => print!("{spec}"),
    }
    Ok(())
}

pub(crate) fn check_output_dir(dir: &std::path::Path) -> Result<()> {
    harness::export::check_writable(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))
}

/// Write a result in its formats (JSON and CSV always) and say which files.
pub(crate) fn write_and_say(
    stem: &std::path::Path,
    formats: &[Format],
    result: &dyn Exportable,
) -> Result<()> {
    let mut all = vec![Format::Csv];
    all.extend_from_slice(formats);
    let written = write_results(stem, &all, result)?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    crate::say(&format!("wrote {}", names.join(", ")));
    Ok(())
}
