//! Argument parsing (clap derive) and the commands.

mod balance;
mod check;
mod cluster;
mod counts;
mod interrupt;
mod maxplus;
mod show;
mod suite;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};

use counts::shorten_quotes;
pub(crate) use counts::{at_least_one, repeat_count, shown, MAX_REPEATS};
use harness::backend::{discover, select, DeviceList, DeviceSelector};
use harness::bench::babelstream::{measure_babelstream_with, BabelStreamOptions, Precision};
use harness::bench::{BenchContext, SamplingPlan};
use harness::calibration::measure::{calibrate, CalibrateOptions};
use harness::calibration::{compare::compare, default_path, Calibration};
use harness::experiments::predict::{calibration_path, predict};
use harness::experiments::series::{run_series, Checks, RepeatPlan, Series};
use harness::experiments::validate::{auto_small_sizes, validate, Validation};
use harness::export::{
    render_results, with_suffix, write_atomically, write_rendered, write_results, Exportable,
    Format,
};
use harness::report::views;
use harness::workloads::registry::{has_layouts, lookup_with};
use harness::workloads::Layout;
pub(crate) use interrupt::interrupt_flag;

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
        })
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
    Calibrate {
        /// Device: an index from `harness devices`, a backend (cuda, opencl, host) or part
        /// of a name. Default: the best device found.
        #[arg(long, short, value_name = "SEL")]
        device: Option<DeviceSelector>,
        /// Fewer samples of the same quantities at the same sizes: a first look, with wider
        /// intervals.
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
        /// launch overhead subtracted). With --json the output is then
        /// {"paper": …, "windowed": …, "window": …}.
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
        /// device saturated, no powers of two on grids; a size in another memory level than
        /// the target's is reported).
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
    /// case and still writes the summary). --from assesses stored cases again, no device.
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
        /// 20 iterations instead of 100.
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
            // A usage error: clap's few lines, each cut short if it quotes a huge value.
            for line in e.render().to_string().lines() {
                eprintln!("{}", crate::clip(&shorten_quotes(line)));
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

fn devices(json: bool) -> Result<()> {
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

fn calibrate_command(
    selector: Option<DeviceSelector>,
    quick: bool,
    json: bool,
    compare_with: Option<PathBuf>,
    output_dir: PathBuf,
    output: Option<PathBuf>,
) -> Result<()> {
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

fn babelstream_command(
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

/// Write a spec's buffers into `dir`: `NAME.bin` each (raw, native byte order) and
/// `dump.json` describing them; every file atomically.
fn write_dump(
    dir: &std::path::Path,
    buffers: &[harness::workloads::spec::DumpedBuffer],
) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut index = Vec::with_capacity(buffers.len());
    for b in buffers {
        // Spec buffer names are identifiers; the file name is made safe regardless.
        let file = format!("{}.bin", harness::export::file_name_part(&b.name));
        let path = dir.join(&file);
        write_atomically(&path, &b.bytes).with_context(|| format!("writing {}", path.display()))?;
        index.push(serde_json::json!({
            "name": b.name,
            "type": b.element,
            "length": b.length,
            "file": file,
            "byte_order": if cfg!(target_endian = "little") { "little" } else { "big" },
        }));
    }
    let path = dir.join("dump.json");
    write_atomically(
        &path,
        serde_json::to_string_pretty(&serde_json::json!({ "buffers": index }))?.as_bytes(),
    )
    .with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {} buffers into {}", buffers.len(), dir.display());
    Ok(())
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
    let value = maxplus::parse_positive(value.trim()).map_err(|e| format!("{name}: {e}"))?;
    Ok((name.to_string(), value))
}

fn run_command(
    name: &str,
    shape: RunShape,
    layout: Option<Layout>,
    selector: Option<DeviceSelector>,
    verify: bool,
    json: bool,
    trace: Option<&std::path::Path>,
) -> Result<()> {
    let RunShape {
        size,
        iters,
        params,
        dump,
    } = shape;
    let workload = lookup_with(name, layout, &params)?;
    let is_spec = name.ends_with(".toml");
    if trace.is_some()
        && !is_spec
        && !harness::experiments::cluster::CLUSTER_WORKLOADS.contains(&name)
    {
        bail!("{}", harness::experiments::cluster::unsupported(name));
    }
    // A spec's trace follows its [distribution]: refuse before running if it has none.
    let traced_spec = match (trace, is_spec) {
        (Some(_), true) => {
            let spec =
                harness::workloads::spec::load(std::path::Path::new(name))?.with_params(&params)?;
            if spec.distribution.is_none() {
                bail!(
                    "{name} has no [distribution] table: --trace needs to know how the program \
                     runs distributed (docs/spec-format.md, \"Distribution\")"
                );
            }
            Some(spec)
        }
        _ => None,
    };
    let spec = match &dump {
        Some(dir) => {
            if !name.ends_with(".toml") {
                bail!("--dump applies to spec files; {name} is a built-in workload");
            }
            check_output_dir(dir)?;
            Some(harness::workloads::spec::load(std::path::Path::new(name))?.with_params(&params)?)
        }
        None => None,
    };
    let iters = iters
        .or_else(|| workload.default_iterations())
        .unwrap_or(DEFAULT_ITERATIONS);
    let list = discover();
    let index = pick_device(&list, selector)?;
    let device = list.devices[index].as_ref();
    eprintln!(
        "running {name} on device {index}: {} ({})",
        device.info().name,
        device.info().backend
    );
    let result = match (&spec, &dump) {
        (Some(spec), Some(dir)) => {
            let (result, buffers) = spec.run_and_dump(device, size, iters, verify)?;
            write_dump(dir, &buffers)?;
            result
        }
        _ => workload.run(device, size, iters, verify)?,
    };
    if let Some(path) = trace {
        let threads = (device.info().backend == harness::backend::BackendKind::Host)
            .then(rayon::current_num_threads);
        let t = match &traced_spec {
            Some(spec) => harness::experiments::cluster::trace_of_spec(
                &result,
                spec,
                &device.info().name,
                threads,
            )?,
            None => harness::experiments::cluster::trace_of(&result, &device.info().name, threads)?,
        };
        write_atomically(path, serde_json::to_string_pretty(&t)?.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
        eprintln!("wrote the trace {}", path.display());
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", views::run_table(&result, verify));
    }
    Ok(())
}

fn series_command(
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
fn device_facts(
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

/// Fail at once when files cannot be written into `dir`, rather than after the
/// measurements (a missing folder is created for the check and removed again).
pub(crate) fn check_output_dir(dir: &std::path::Path) -> Result<()> {
    harness::export::check_writable(dir)
        .with_context(|| format!("cannot write into {}", dir.display()))
}

/// Sizes from the command line: integers or 2^k, or `auto`: five sizes at 4–8× below
/// `target` from the device's calibration (`facts`, asked for only then), with the notes on
/// standard error.
fn small_sizes(
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
    eprintln!("wrote {}", names.join(", "));
    Ok(())
}

/// `harness export-extrap`.
fn export_extrap(path: &std::path::Path, output: Option<&std::path::Path>) -> Result<()> {
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
            eprintln!("wrote {}", out.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}

fn predict_command(
    path: &std::path::Path,
    target: f64,
    calibration: Option<PathBuf>,
    quantity: harness::experiments::predict::Quantity,
    json: bool,
) -> Result<()> {
    let series = Series::load(path)?;
    let calibration = calibration.map(|c| Calibration::load(&c)).transpose()?;
    if let Some(c) = &calibration {
        // Its launch cost, levels and n are another device's: say so, as validate-maxplus does.
        if c.device.name != series.device.name || c.device.backend != series.device.backend {
            eprintln!(
                "note: the calibration is of {} ({}), the series was measured on {} ({}): its launch cost, memory levels and n are that device's",
                c.device.name, c.device.backend, series.device.name, series.device.backend
            );
        }
    }
    let prediction = predict(&series, target, calibration.as_ref(), quantity)?;
    if !json {
        println!(
            "predicting the {} of {} at N = {target}",
            match quantity {
                harness::experiments::predict::Quantity::Total => "total (every phase)",
                harness::experiments::predict::Quantity::Kernels =>
                    "kernels (the kernel phases, without transfers)",
            },
            series.workload
        );
    }
    let Some(windowed) = prediction.windowed else {
        if json {
            println!("{}", serde_json::to_string_pretty(&prediction.paper)?);
        } else {
            print!("{}", views::forecast_table(&prediction.paper));
        }
        return Ok(());
    };
    if json {
        let out = serde_json::json!({
            "paper": prediction.paper,
            "windowed": windowed.forecast,
            "window": windowed.window,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!("paper variant (every size):");
    print!("{}", views::forecast_table(&prediction.paper));
    match &windowed.forecast {
        Some(w) => {
            println!(
                "\nwindowed variant (sizes {:?}):",
                windowed.window.choice.accepted
            );
            print!("{}", views::forecast_table(w));
        }
        None => println!("\nwindowed variant: none"),
    }
    print!("{}", views::window_report(&windowed.window));
    Ok(())
}

fn validate_command(
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
    eprintln!("wrote {}", names.join(", "));
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
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// `harness plot-validations`.
fn plot_validations(files: &[PathBuf], dir: &std::path::Path, name: &str) -> Result<()> {
    use harness::plot::fractal_figures::{error_bars_figure, parity_figure};
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
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
