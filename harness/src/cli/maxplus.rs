//! `harness maxplus` and `harness validate-maxplus`: the max-plus kernel model (docs/models.md §1)
//! on its own, and against the kernel it describes.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use harness::backend::{discover, DeviceSelector};
use harness::calibration::model_parameters::ModelInputs;
use harness::calibration::{default_path, Calibration};
use harness::experiments::validate_maxplus::{
    kernel_for, level_prediction, validate_maxplus, MaxPlusRunOptions, MIN_KERNEL_SECONDS,
};
use harness::model::maxplus::summary::summarise;
use harness::model::maxplus::{predict_iteration, KernelGraph, LaunchPlan, Parameters};
use harness::report::maxplus::{graph_report, inputs_table, predictions_table, validation_report};
use harness::units::Seconds;

use super::{check_output_dir, pick_device, write_and_say};

/// A size: an integer or `2^k`.
pub fn parse_size(text: &str) -> Result<usize, String> {
    let parsed = match text.split_once('^') {
        Some(("2", k)) => k
            .parse::<u32>()
            .ok()
            .and_then(|k| 1usize.checked_shl(k).filter(|_| k < 63)),
        Some(_) => None,
        None => text.parse::<usize>().ok(),
    };
    match parsed {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!(
            "`{}` is not a size (a positive integer or 2^k)",
            super::shown(text)
        )),
    }
}

/// A target size: a positive number or `2^k`.
pub fn parse_target(text: &str) -> Result<f64, String> {
    if let Ok(size) = parse_size(text) {
        return Ok(size as f64);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 1.0 => Ok(v),
        _ => Err(format!(
            "`{}` is not a size (a number of 1 or more, or 2^k)",
            super::shown(text)
        )),
    }
}

/// A finite number or `2^k`: a spec's parameter, which its `[params]` may set to 0 or less
/// as well (a flag, an offset); what a buffer's length or a launch's size cannot take, the
/// spec's own checks refuse, naming the expression.
pub fn parse_number(text: &str) -> Result<f64, String> {
    if let Ok(size) = parse_size(text) {
        return Ok(size as f64);
    }
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("`{}` is not a number or 2^k", super::shown(text))),
    }
}

/// The graph file at `path`, read only if it is a regular file of sensible size.
fn load_graph(path: &Path) -> Result<KernelGraph> {
    let text =
        harness::export::read_input_text(path).with_context(|| path.display().to_string())?;
    Ok(KernelGraph::from_file_text(path, &text)?)
}

/// The largest value `--set` takes, seconds (a day): larger ones overflow the predictions.
const MAX_SET_SECONDS: f64 = 86_400.0;

/// `NAME=SECONDS`.
pub fn parse_assignment(text: &str) -> Result<(String, f64), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}`: write NAME=SECONDS, e.g. t=4.5e-7"))?;
    let value: f64 = value
        .trim()
        .parse()
        .map_err(|_| format!("`{text}`: `{value}` is not a number"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("`{text}`: a time must be finite and non-negative"));
    }
    if value > MAX_SET_SECONDS {
        return Err(format!(
            "`{text}`: more than {MAX_SET_SECONDS:e} s is no time a kernel step takes"
        ));
    }
    Ok((name.trim().to_string(), value))
}

/// What `harness maxplus` was asked.
#[derive(Args, Debug)]
pub struct MaxplusArgs {
    /// The graph file (TOML).
    pub graph: PathBuf,
    /// Take t, T, τ, Δt, ΔT, n, t_cache and the launch overhead from this calibration.
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Simultaneous executors n (default: the calibration's).
    #[arg(long = "n-exec", value_name = "N")]
    pub n_exec: Option<u64>,
    /// Sizes to predict: integers or 2^k, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    pub sizes: Vec<usize>,
    /// A parameter value in seconds, e.g. --set t=4.5e-7 (repeatable; overrides the
    /// calibration; gives values to a graph's own parameters).
    #[arg(long = "set", value_name = "NAME=SECONDS", value_parser = parse_assignment)]
    pub set: Vec<(String, f64)>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `harness maxplus`.
pub fn maxplus_command(args: MaxplusArgs) -> Result<()> {
    let graph = load_graph(&args.graph)?;
    let summary = summarise(&graph)?;
    let inputs = args
        .calibration
        .as_deref()
        .map(Calibration::load)
        .transpose()?
        // What the table and the JSON show is what the prediction uses: --set included.
        .map(|c| ModelInputs::from_calibration(&c).with_overrides(&args.set));
    let kernel = kernel_for(graph.name()).ok();
    let plan = kernel.map_or(LaunchPlan::Elements, |k| k.plan);
    let mut predictions = Vec::new();
    let mut executors = args.n_exec;
    if !args.sizes.is_empty() {
        let (parameters, launch) = values(&graph, inputs.as_ref(), &args.set)?;
        let n = match args.n_exec.or(inputs.as_ref().map(ModelInputs::executors)) {
            Some(0) => bail!("--n-exec must be at least 1"),
            Some(n) => n,
            None => bail!("give --n-exec, or --calibration for the measured n"),
        };
        executors = Some(n);
        // Our per-level extension too, where the calibration has a bandwidth sweep and the
        // graph names the workload whose working set decides the level.
        let workload = kernel
            .map(|k| harness::workloads::registry::lookup(k.workload, k.layout))
            .transpose()?;
        for &size in &args.sizes {
            let mut variants = predict_iteration(&graph, plan, &parameters, n, launch, size)?;
            if let (Some(kernel), Some(workload), Some(inputs)) =
                (kernel, workload.as_deref(), inputs.as_ref())
            {
                if let Some(level) =
                    level_prediction(&graph, kernel, workload, inputs, &parameters, n, size)
                {
                    variants.push(level?);
                }
            }
            if let Some(v) = variants.iter().find(|v| !v.seconds.is_finite()) {
                bail!(
                    "the {} prediction at N = {size} is not a finite time: the sizes or the parameters are too large",
                    v.model
                );
            }
            predictions.push((size, variants));
        }
    }
    if args.json {
        let out = serde_json::json!({
            "graph": summary,
            "inputs": inputs,
            "executors": executors,
            "launch_plan": plan,
            "predictions": predictions
                .iter()
                .map(|(size, v)| serde_json::json!({"size": size, "variants": v}))
                .collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    print!("{}", graph_report(&summary));
    if let Some(inputs) = &inputs {
        let n = executors.unwrap_or_else(|| inputs.executors());
        print!("\n{}", inputs_table(inputs, n));
    }
    if !predictions.is_empty() {
        println!(
            "\npredicted time per iteration ({}), n = {}:",
            plan.description(),
            executors.unwrap_or(1)
        );
        print!("{}", predictions_table(&predictions));
        println!(
            "* = our extensions, not the paper's models: ext_pipelined overlaps rounds and adds the launch overhead; ext_level also sets Δt = ΔT to the streaming rate where the working set lives"
        );
    }
    Ok(())
}

/// The parameters from the calibration and `--set`, and the launch overhead. A `--set` name
/// must be a model parameter or one the graph uses, and `n` is a count given by `--n-exec`.
fn values(
    graph: &KernelGraph,
    inputs: Option<&ModelInputs>,
    set: &[(String, f64)],
) -> Result<(Parameters, Seconds)> {
    let used = graph.parameter_names();
    for (name, _) in set {
        if name == harness::units::Parameter::Executors.key() {
            bail!("--set n: n is the executor count, not a time: give it with --n-exec N");
        }
        let known = harness::model::maxplus::parameters::is_builtin_parameter(name)
            || name == harness::units::Parameter::CachedReadLatency.key()
            || used.contains(name);
        if !known {
            let mut names: Vec<String> = used.iter().cloned().collect();
            names.sort();
            bail!(
                "--set {name}: the graph uses no parameter {name} (it uses {})",
                names.join(", ")
            );
        }
    }
    match inputs {
        Some(i) => Ok((i.parameters(set)?, i.launch_seconds)),
        None => {
            let mut p = Parameters::new();
            for (name, value) in set {
                p.set(name, *value)?;
            }
            Ok((p, Seconds(0.0)))
        }
    }
}

/// What `harness validate-maxplus` was asked.
#[derive(Args, Debug)]
pub struct ValidateMaxplusArgs {
    /// The graph file: one of kernels/graphs/*.toml.
    pub graph: PathBuf,
    /// Sizes: integers or 2^k, comma-separated.
    #[arg(long, value_delimiter = ',', required = true, value_parser = parse_size)]
    pub sizes: Vec<usize>,
    /// The calibration (default: the device's file under --output-dir).
    #[arg(long, value_name = "FILE")]
    pub calibration: Option<PathBuf>,
    /// Simultaneous executors n (default: the calibration's).
    #[arg(long = "n-exec", value_name = "N")]
    pub n_exec: Option<u64>,
    /// Iterations per run, at least: a size whose kernels would take less than --min-run-ms
    /// per run gets more (from the faster of two warm-up runs), since a run of microseconds
    /// measures what starting the kernel costs as much as the kernel.
    #[arg(long, default_value_t = 10, value_parser = super::at_least_one)]
    pub iters: usize,
    /// The least time one timed run's kernels should take, milliseconds; 0 runs exactly
    /// --iters iterations at every size.
    #[arg(long = "min-run-ms", value_name = "MS", default_value_t = 1e3 * MIN_KERNEL_SECONDS, value_parser = non_negative_ms)]
    pub min_run_ms: f64,
    /// Timed runs per size (after one verified warm-up run).
    #[arg(long, default_value_t = 5, value_parser = super::repeat_count)]
    pub repeat: usize,
    /// Device: index, backend or part of a name (default: the best found).
    #[arg(long, short, value_name = "SEL")]
    pub device: Option<DeviceSelector>,
    /// Folder of the calibrations; the results go beside the calibration.
    #[arg(long, value_name = "DIR", default_value = "calibrations")]
    pub output_dir: PathBuf,
    /// Folder for the figure.
    #[arg(long, value_name = "DIR", default_value = "plots")]
    pub plot_dir: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `harness validate-maxplus`.
pub fn validate_maxplus_command(args: ValidateMaxplusArgs) -> Result<()> {
    let graph = load_graph(&args.graph)?;
    kernel_for(graph.name())?;
    let list = discover();
    let index = pick_device(&list, args.device)?;
    let device = list.devices[index].as_ref();
    let calibration_path = args
        .calibration
        .clone()
        .unwrap_or_else(|| default_path(&args.output_dir, device.info()));
    if !calibration_path.exists() {
        bail!(
            "no calibration for {} at {}: run `harness calibrate --device {index}` first, or give --calibration",
            device.info().name,
            calibration_path.display()
        );
    }
    let calibration = Calibration::load(&calibration_path)?;
    if calibration.device.name != device.info().name {
        eprintln!(
            "note: the calibration is of {}, the kernel runs on {}",
            calibration.device.name,
            device.info().name
        );
    }
    let inputs = ModelInputs::from_calibration(&calibration);
    let executors = match args.n_exec {
        Some(0) => bail!("--n-exec must be at least 1"),
        Some(n) => n,
        None => inputs.executors(),
    };
    eprintln!(
        "validating {} on device {index}: {} (n = {executors}, parameters from {})",
        graph.name(),
        device.info().name,
        calibration_path.display()
    );
    let options = MaxPlusRunOptions {
        inputs,
        executors,
        sizes: args.sizes.clone(),
        iterations: args.iters,
        min_kernel_seconds: args.min_run_ms * 1e-3,
        repeats: args.repeat,
    };
    let stem = calibration_stem(&calibration_path, graph.name());
    // The folders are checked before the measurements, not after them.
    check_output_dir(
        stem.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new(".")),
    )?;
    check_output_dir(&args.plot_dir)?;
    let v = validate_maxplus(&graph, device, &options, |line| eprintln!("{line}"))?;
    if v.rows.is_empty() {
        // A run that measured nothing must not replace a stored result with an empty one.
        bail!(
            "no size could be run (every size was skipped; see the notes above): nothing measured, nothing written"
        );
    }
    write_and_say(&stem, &[], &v)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{}", validation_report(&v));
    }
    if !v.rows.is_empty() {
        let name = format!(
            "{}.maxplus.{}",
            device.info().slug(),
            harness::export::file_name_part(graph.name())
        );
        for p in harness::plot::maxplus_figure::maxplus_figure(&v, &args.plot_dir, &name)? {
            crate::say(&format!("wrote {}", p.display()));
        }
    }
    Ok(())
}

/// A duration in milliseconds, 0 or more and finite.
fn non_negative_ms(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err("must be a finite number of milliseconds, 0 or more".into()),
        Err(_) => Err(format!("`{text}` is not a number")),
    }
}

/// `<calibration without .json>.maxplus.<graph>`, beside the calibration.
fn calibration_stem(calibration: &Path, graph: &str) -> PathBuf {
    let base = calibration.with_extension("");
    let mut name = base.as_os_str().to_owned();
    name.push(format!(
        ".maxplus.{}",
        harness::export::file_name_part(graph)
    ));
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_powers_of_two() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("2^20"), Ok(1 << 20));
        assert!(parse_size("3^2").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("2^99").is_err());
    }

    #[test]
    fn a_parameter_takes_any_finite_number_as_a_spec_default_may() {
        assert_eq!(parse_number("2^4"), Ok(16.0));
        assert_eq!(parse_number("0"), Ok(0.0));
        assert_eq!(parse_number("-3"), Ok(-3.0));
        assert_eq!(parse_number("0.5"), Ok(0.5));
        for bad in ["abc", "inf", "NaN", ""] {
            let err = parse_number(bad).unwrap_err();
            assert!(err.contains("is not a number or 2^k"), "{bad}: {err}");
        }
    }

    #[test]
    fn assignments_need_a_name_and_a_number() {
        assert_eq!(parse_assignment("t=4e-7"), Ok(("t".into(), 4e-7)));
        assert!(parse_assignment("t").is_err());
        assert!(parse_assignment("t=abc").is_err());
        assert!(parse_assignment("t=inf").is_err());
    }
}
