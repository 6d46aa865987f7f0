//! `harness figures` and `harness report`: everything shown, regenerated from stored results,
//! no device needed.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use harness::plot::write_rendered;
use harness::report::catalog::Catalog;
use harness::report::figures::{plan, render_all, Planned};
use harness::report::html::{pages, write_pages, InlineFigure};

use super::check_output_dir;

/// Where stored results are read from, and which device's.
#[derive(Args, Debug)]
pub struct Sources {
    /// Folders (searched recursively) or files of stored results; repeatable. The default is
    /// calibrations/, where calibrate, series and validate write; give --from results (or any
    /// folder) for results written elsewhere, e.g. by validate-suite --output-dir results.
    #[arg(long, value_name = "DIR", default_values = ["calibrations"])]
    from: Vec<PathBuf>,
    /// Only this device's results (its slug, as calibration files are named, e.g.
    /// host-amd-epyc); results tied to no device are kept.
    #[arg(long, value_name = "SLUG")]
    device: Option<String>,
}

impl Sources {
    /// Scan the folders; print each skipped file on standard error.
    fn catalog(&self) -> Result<Catalog> {
        let missing: Vec<String> = self
            .from
            .iter()
            .filter(|d| !d.exists())
            .map(|d| d.display().to_string())
            .collect();
        if missing.len() == self.from.len() {
            anyhow::bail!(
                "nothing to read: {} do(es) not exist (give --from with a folder of results)",
                missing.join(", ")
            );
        }
        for m in &missing {
            crate::say(&format!("note: {m} does not exist; left out"));
        }
        let present: Vec<PathBuf> = self.from.iter().filter(|d| d.exists()).cloned().collect();
        let mut catalog = Catalog::scan(&present);
        if let Some(device) = &self.device {
            catalog = catalog.restrict(device).map_err(anyhow::Error::msg)?;
        }
        for s in &catalog.skipped {
            crate::say(&format!("skipped {}: {}", s.path.display(), s.reason));
        }
        Ok(catalog)
    }
}

/// Arguments of `harness figures`.
#[derive(Args, Debug)]
pub struct FiguresArgs {
    #[command(flatten)]
    sources: Sources,
    /// Folder for the figures (created if needed).
    #[arg(long, value_name = "DIR", default_value = "plots")]
    out: PathBuf,
}

/// Arguments of `harness report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    sources: Sources,
    /// Folder for the pages (created if needed).
    #[arg(long, value_name = "DIR", default_value = "reports")]
    out: PathBuf,
}

/// `harness figures`.
pub fn figures_command(args: FiguresArgs) -> Result<()> {
    let catalog = args.sources.catalog()?;
    let (planned, notes) = plan(&catalog);
    for n in &notes {
        crate::say(&format!("note: {n}"));
    }
    check_output_dir(&args.out)?;
    eprintln!("drawing {} figures …", planned.len());
    let rendered = render_all(&planned);
    let mut written = 0;
    let mut failed = 0;
    for (p, r) in planned.iter().zip(rendered) {
        match r {
            Ok(r) => {
                let stem = args.out.join(&p.stem);
                if let Some(parent) = stem.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                write_rendered(&r, &stem)?;
                written += 1;
            }
            Err(e) => {
                failed += 1;
                crate::say(&format!("note: no figure {}: {e}", p.stem.display()));
            }
        }
    }
    crate::say_out(&format!(
        "wrote {written} figures (SVG, PNG and CSV each) under {}; {} file(s) skipped, {} \
         figure(s) left out",
        args.out.display(),
        catalog.skipped.len(),
        notes.len() + failed
    ));
    Ok(())
}

/// `harness report`.
pub fn report_command(args: ReportArgs) -> Result<()> {
    let catalog = args.sources.catalog()?;
    let (planned, mut notes) = plan(&catalog);
    check_output_dir(&args.out)?;
    let svgs = svg_only(&planned, &mut notes);
    let inline: Vec<InlineFigure<'_>> = planned
        .iter()
        .zip(svgs)
        .map(|(planned, svg)| InlineFigure { planned, svg })
        .collect();
    let pages = pages(&catalog, &inline, &notes);
    let written = write_pages(&pages, &args.out)
        .with_context(|| format!("cannot write into {}", args.out.display()))?;
    for p in written
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
    {
        crate::say_out(&format!("wrote {}", p.display()));
    }
    println!(
        "{} page(s) with {} figures, and each page's tables as .md and .tex beside it",
        pages.len(),
        inline.iter().filter(|f| f.svg.is_some()).count()
    );
    Ok(())
}

/// Each planned figure's SVG (a report needs no PNG); a failure becomes a note.
fn svg_only(planned: &[Planned], notes: &mut Vec<String>) -> Vec<Option<String>> {
    use rayon::prelude::*;
    let svgs: Vec<_> = planned
        .par_iter()
        .map(|p| harness::plot::render_svg(&p.drawing, &p.stem))
        .collect();
    svgs.into_iter()
        .zip(planned)
        .map(|(r, p)| match r {
            Ok(svg) => Some(svg),
            Err(e) => {
                notes.push(format!("no figure {}: {e}", p.stem.display()));
                None
            }
        })
        .collect()
}
