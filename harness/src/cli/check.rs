//! `harness check-kernels`: every kernel compiled before any GPU time is spent.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use harness::backend::{discover, BackendKind};
use harness::experiments::check_kernels::{builtin_programs, check_kernels, DEFAULT_ARCHS};
use harness::export::Table;
use harness::workloads::Workload;

/// Arguments of `harness check-kernels`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Spec files whose kernel files are checked too.
    specs: Vec<PathBuf>,
    /// Target architectures for NVRTC, comma-separated (`sm_XY` gives a CUBIN and, with
    /// ptxas, registers and spills; `compute_XY` gives PTX).
    #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_ARCHS.map(String::from))]
    arch: Vec<String>,
    /// Leave out the OpenCL devices.
    #[arg(long)]
    no_opencl: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Write the PTX of each program and architecture here (<program>.<arch>.ptx).
    #[arg(long, value_name = "DIR")]
    ptx_dir: Option<PathBuf>,
    /// Write each program's CUBIN for each sm_XY here, named as the CUDA backend looks for
    /// it: on a GPU machine without NVRTC, HARNESS_CUBIN_DIR=DIR makes it load these.
    #[arg(long, value_name = "DIR")]
    cubin_dir: Option<PathBuf>,
}

/// `harness check-kernels`.
pub fn check_command(args: CheckArgs) -> Result<()> {
    for arch in &args.arch {
        let digits = arch
            .strip_prefix("sm_")
            .or_else(|| arch.strip_prefix("compute_"));
        if !digits.is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_alphanumeric())) {
            bail!("--arch {arch}: expected sm_XY or compute_XY, e.g. sm_90");
        }
    }
    let mut programs = builtin_programs();
    let mut source_notes_ = Vec::new();
    for spec in &args.specs {
        let spec = harness::workloads::spec::load(spec)?;
        source_notes_.extend(spec.source_notes());
        programs.push(spec.program());
    }
    let list = discover();
    let opencl: Vec<&dyn harness::backend::Device> = if args.no_opencl {
        Vec::new()
    } else {
        list.devices
            .iter()
            .filter(|d| d.info().backend == BackendKind::Opencl)
            .map(|d| d.as_ref())
            .collect()
    };
    let report = check_kernels(&programs, &args.arch, &opencl);
    let required = std::env::var_os("HARNESS_REQUIRE_NVRTC").is_some_and(|v| v == "1");
    if let Some(dir) = &args.cubin_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
        for (name, bytes) in report.checks.iter().filter_map(|c| c.cubin.as_ref()) {
            harness::export::write_atomically(&dir.join(name), bytes)?;
        }
    }
    if let Some(dir) = &args.ptx_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
        for c in &report.checks {
            if let Some(ptx) = &c.ptx {
                let arch = c.target.trim_start_matches("nvrtc ");
                let path = dir.join(format!("{}.{arch}.ptx", c.program));
                harness::export::write_atomically(&path, ptx.as_bytes())?;
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        match (&report.nvrtc, &report.nvrtc_missing) {
            (Some(l), _) => println!(
                "NVRTC {} ({})",
                l.version,
                l.dir
                    .as_ref()
                    .map_or("found by the system loader".to_string(), |d| format!(
                        "from {}",
                        d.display()
                    ))
            ),
            (None, Some(why)) => println!("NVRTC: {why}"),
            (None, None) => {}
        }
        println!(
            "ptxas: {}",
            report
                .ptxas
                .as_deref()
                .unwrap_or("not found (registers and spills not read)")
        );
        let mut t = Table::new([
            "program",
            "target",
            "result",
            "kernel",
            "registers",
            "spills",
        ]);
        for c in &report.checks {
            let result = if c.ok { "ok" } else { "FAILED" };
            if c.kernels.is_empty() {
                t.row([
                    c.program.clone(),
                    c.target.clone(),
                    result.to_string(),
                    c.note.clone().unwrap_or_default(),
                    String::new(),
                    String::new(),
                ]);
            }
            for k in &c.kernels {
                t.row([
                    c.program.clone(),
                    c.target.clone(),
                    result.to_string(),
                    k.kernel.clone(),
                    k.registers.to_string(),
                    format!("{} B stored, {} B loaded", k.spill_stores, k.spill_loads),
                ]);
            }
        }
        print!("{}", t.render());
        for c in report.failures() {
            if let Some(log) = &c.log {
                println!("\n{} on {}:\n{}", c.program, c.target, log.trim());
            }
        }
    }
    if let (true, Some(why)) = (required, &report.nvrtc_missing) {
        bail!("HARNESS_REQUIRE_NVRTC=1 but {why}");
    }
    let failed = report.failures();
    if !failed.is_empty() {
        let names: Vec<String> = failed
            .iter()
            .map(|c| format!("{} ({})", c.program, c.target))
            .collect();
        bail!(
            "{} of {} checks failed: {}",
            failed.len(),
            report.checks.len(),
            names.join(", ")
        );
    }
    if report.checks.is_empty() {
        bail!("nothing was checked: no NVRTC and no OpenCL device");
    }
    // What a spec's kernels walk or gather without declaring it: a prediction's matter, after the
    // compile checks (which these notes do not fail).
    for note in source_notes_ {
        crate::say_note(&note);
    }
    Ok(())
}
