//! `harness run`: one workload at one size, its phase table, and a spec's buffers dumped.

use anyhow::{bail, Context, Result};

use harness::backend::{discover, DeviceSelector};
use harness::export::write_atomically;
use harness::report::views;
use harness::workloads::registry::lookup_with;
use harness::workloads::Layout;

use super::{check_output_dir, pick_device, RunShape, DEFAULT_ITERATIONS};

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
    crate::say(&format!(
        "wrote {} buffers into {}",
        buffers.len(),
        dir.display()
    ));
    Ok(())
}

pub(super) fn run_command(
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
        crate::say(&format!("wrote the trace {}", path.display()));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print!("{}", views::run_table(&result, verify));
    }
    // What a kernel's source walks or gathers undeclared: what to declare.
    for note in workload.source_notes() {
        crate::say_note(&note);
    }
    Ok(())
}
