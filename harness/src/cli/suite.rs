//! `harness validate-suite`: every workload predicted at 4–8× with every variant, one table.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};
use clap::Args;

use harness::backend::DeviceInfo;
use harness::calibration::model_parameters::window_facts;
use harness::calibration::{default_path, Calibration};
use harness::experiments::suite::{
    choose_iterations, plan_case, run_case, FailedCase, Suite, SuiteCase,
};
use harness::experiments::validate::{assess, Validation};
use harness::export::{write_results, Format};
use harness::workloads::registry::{self, has_layouts, lookup_with, names};
use harness::workloads::Layout;

use super::{check_output_dir, interrupt_flag, pick_device, SeriesOptions};

/// Arguments of `harness validate-suite`.
#[derive(Args, Debug)]
pub struct SuiteArgs {
    /// Workloads (built-in names or spec files), comma-separated (default: every built-in
    /// workload). --iters is the least number of iterations per run: a case whose smallest
    /// size would run under 20 ms gets more, as long as its target's run stays under about 2 s.
    #[arg(long, value_delimiter = ',')]
    workloads: Vec<String>,
    /// The device's calibration (default: calibrations/<device>.json). Needed: the targets,
    /// small sizes and two of the three variants come from it.
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    /// Assess the validations stored in this folder again (no device needed): every
    /// `*.validate.*.json` in it, built-in workloads and spec files alike (a spec's series
    /// carries the spec's text: the file need not exist), with the current predictions and
    /// the calibration. The cases, their measurements unchanged and their predictions new,
    /// are written under <output-dir>/<device>.suite/ beside the summary.
    #[arg(long, value_name = "DIR")]
    from: Option<PathBuf>,
    /// Print the plan (targets and small sizes) and stop.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    runs: SeriesOptions,
}

fn load_calibration(explicit: Option<&Path>, device: &DeviceInfo) -> Result<Calibration> {
    let path = explicit.map_or_else(
        || default_path(Path::new("calibrations"), device),
        Path::to_path_buf,
    );
    if !path.exists() {
        bail!(
            "validate-suite needs the device's calibration: {} does not exist (run `harness calibrate` or give --calibration)",
            path.display()
        );
    }
    Ok(Calibration::load(&path)?)
}

/// `harness validate-suite`.
pub fn suite_command(args: SuiteArgs) -> Result<()> {
    check_output_dir(&args.runs.output_dir)?;
    if let Some(dir) = &args.from {
        return reassess(dir, args.calibration.as_deref(), &args.runs.output_dir);
    }
    let plan = args.runs.plan()?;
    let list = harness::backend::discover();
    let index = pick_device(&list, args.runs.device.clone())?;
    let device = list.devices[index].as_ref();
    let calibration = load_calibration(args.calibration.as_deref(), device.info())?;
    let facts = window_facts(&calibration);
    let chosen: Vec<String> = if args.workloads.is_empty() {
        names().iter().map(|s| s.to_string()).collect()
    } else {
        args.workloads.clone()
    };
    let mut cases = Vec::new();
    for name in &chosen {
        let layout = args.runs.layout.filter(|_| has_layouts(name));
        let workload = lookup_with(name, layout, &args.runs.params)?;
        let layout_name =
            has_layouts(name).then(|| layout.unwrap_or(Layout::Reordered).to_string());
        let case = plan_case(name, layout_name, workload.as_ref(), &calibration, &facts)?;
        eprintln!(
            "{}: N = {} from {:?}{}",
            case.name(),
            case.target,
            case.small,
            if case.notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", case.notes.join("; "))
            }
        );
        cases.push((case, workload));
    }
    if args.dry_run {
        return Ok(());
    }
    let dir = args
        .runs
        .output_dir
        .join(format!("{}.suite", device.info().slug()));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let interrupted = interrupt_flag();
    let mut done: Vec<(SuiteCase, Validation)> = Vec::new();
    let mut failed: Vec<FailedCase> = Vec::new();
    let total = cases.len();
    for (k, (case, workload)) in cases.into_iter().enumerate() {
        if interrupted.load(Ordering::SeqCst) {
            eprintln!(
                "interrupted: the summary covers the {} cases done",
                done.len()
            );
            break;
        }
        let mut case = case;
        // A case that fails (its check, the device) is reported and the suite goes on: the
        // cases after it are as worth measuring, and the end says which failed.
        let measured = choose_iterations(
            &case,
            workload.as_ref(),
            device,
            args.runs.iterations(workload.as_ref()),
        )
        .and_then(|(iterations, note)| {
            case.iterations = iterations;
            case.notes.extend(note);
            eprintln!(
                "[{}/{total}] {} at N = {}, {iterations} iterations per run",
                k + 1,
                case.name(),
                case.target
            );
            run_case(&case, workload.as_ref(), device, &facts, plan, |line| {
                eprintln!("  {line}")
            })
        });
        let v = match measured {
            Ok(v) => v,
            Err(e) => {
                let error = terminal_line(&e.to_string());
                eprintln!(
                    "failed: {}: {error} (going on with the next case)",
                    case.name()
                );
                failed.push(FailedCase {
                    case: case.name(),
                    size: case.target,
                    error,
                });
                continue;
            }
        };
        // Each case is kept as soon as it is measured: an interruption loses at most one.
        write_results(&dir.join(v.file_stem()), &[Format::Json], &v)?;
        done.push((case, v));
    }
    finish(device.info().clone(), &done, failed, &args.runs.output_dir)
}

/// One line of `text`, with nothing in it a terminal would act on.
fn terminal_line(text: &str) -> String {
    harness::export::table::terminal_safe(&text.replace(['\n', '\r', '\t'], " "))
}

/// Write the suite's files and print its tables; an error naming the cases that failed, if
/// any did, once the others are written.
fn finish(
    device: DeviceInfo,
    done: &[(SuiteCase, Validation)],
    failed: Vec<FailedCase>,
    dir: &Path,
) -> Result<()> {
    let failures = || {
        failed
            .iter()
            .map(|f| format!("{} ({})", f.case, f.error))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if done.is_empty() {
        if failed.is_empty() {
            bail!("no case finished: nothing to summarise");
        }
        bail!("no case finished: every case failed: {}", failures());
    }
    let mut suite = Suite::from_validations(device, done);
    suite.failed = failed.clone();
    let stem = dir.join(format!("{}.suite", suite.device.slug()));
    let written = write_results(
        &stem,
        &[Format::Csv, Format::Markdown, Format::Json],
        &suite,
    )?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    crate::say(&format!("wrote {}", names.join(", ")));
    println!("{}", suite.wide_table().render());
    println!("{}", suite.summary_table().render());
    println!("* the 95 % prediction interval misses the measured value");
    for c in &suite.cases {
        for n in &c.notes {
            println!("note: {}: {n}", c.case);
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} cases failed and are in no row above (the summary lists them under `failed`): {}",
            failed.len(),
            failed.len() + done.len(),
            failures()
        );
    }
    Ok(())
}

/// `--from DIR`: the stored validations, assessed again.
fn reassess(dir: &Path, calibration: Option<&Path>, output_dir: &Path) -> Result<()> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into());
            name.contains(".validate.")
                && name.ends_with(".json")
                && !name.ends_with(".series.json")
        })
        .collect();
    files.sort();
    if files.is_empty() {
        bail!("{}: no *.validate.*.json files", dir.display());
    }
    let mut done = Vec::new();
    let mut device = None;
    let mut facts_for = None;
    for file in &files {
        let stored = Validation::load(file)?;
        let info = stored.series.device.clone();
        if facts_for.is_none() {
            facts_for = Some(window_facts(&load_calibration(calibration, &info)?));
        }
        let layout = stored
            .series
            .layout
            .as_deref()
            .map(str::parse::<Layout>)
            .transpose()
            .map_err(anyhow::Error::msg)?;
        let workload =
            registry::stored(&stored.series.workload, layout, stored.series.spec.as_ref())?;
        let v = assess(
            workload.as_ref(),
            stored.series,
            stored.large,
            facts_for.as_ref(),
            stored.large_interleaved,
        )?;
        let case = SuiteCase {
            workload: v.series.workload.clone(),
            layout: v.series.layout.clone(),
            target: v.large.first().map_or(0, |p| p.size),
            small: v.series.points.iter().map(|p| p.size).collect(),
            iterations: v.series.iterations,
            notes: Vec::new(),
        };
        // The measurements with the current predictions, beside the new summary.
        let cases = output_dir.join(format!("{}.suite", info.slug()));
        std::fs::create_dir_all(&cases).with_context(|| format!("creating {}", cases.display()))?;
        write_results(&cases.join(v.file_stem()), &[Format::Json], &v)?;
        device.get_or_insert(info);
        done.push((case, v));
    }
    // The suite's own order (the built-in workloads' order, then specs by file name), not
    // the files' alphabetical one.
    done.sort_by_key(|(case, _)| {
        names()
            .iter()
            .position(|n| *n == case.workload)
            .unwrap_or(usize::MAX)
    });
    let device = device.context("no validation read")?;
    finish(device, &done, Vec::new(), output_dir)
}
