//! `harness report`: one self-contained HTML page per device (figures inlined as SVG, no
//! script, no network) and an index page that puts the devices side by side and holds the
//! results tied to no device (the cluster prediction). Every table of a page is also written
//! as Markdown and as LaTeX (booktabs) beside it, for pasting into a paper.
//!
//! A section with nothing stored says so and names the command that makes its input; files
//! that could not be read are listed with the reason.
//!
//! This file holds the pages, what both kinds share and the writing of them; `builder` holds
//! a page under construction (its HTML, its tables in Markdown and LaTeX, the escaping and the
//! style), `device_page` and `index_page` the content of each kind of page.

mod builder;
mod device_page;
mod index_page;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::catalog::{Catalog, Entry, Skipped, Stored};
use super::figures::Planned;
use crate::export::table::Table;
use builder::{attr, esc, Builder};
use device_page::device_page;
use index_page::index_page;

/// One page of the report, with its tables in Markdown and LaTeX.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// File name stem (`index`, or the device's slug).
    pub name: String,
    /// The HTML document.
    pub html: String,
    /// Every table of the page, in Markdown, under its caption.
    pub markdown: String,
    /// Every table of the page, as LaTeX booktabs tables.
    pub latex: String,
}

/// A figure ready to inline: its plan and its SVG text (`None`: it could not be drawn).
pub struct InlineFigure<'a> {
    /// The plan.
    pub planned: &'a Planned,
    /// The SVG.
    pub svg: Option<String>,
}

/// Build every page: the index, then one per device in `devices` (sorted slugs).
pub fn pages(catalog: &Catalog, figures: &[InlineFigure<'_>], notes: &[String]) -> Vec<Page> {
    let devices = catalog.devices();
    let mut out = vec![index_page(catalog, figures, notes, &devices)];
    for device in &devices {
        out.push(device_page(catalog, figures, device));
    }
    out
}

fn nav(devices: &[String], catalog: &Catalog) -> String {
    let mut out = String::from("<a href=\"index.html\">all devices</a>");
    for d in devices {
        let name = device_name(catalog, d).unwrap_or_else(|| d.clone());
        let _ = write!(out, "<a href=\"{}.html\">{}</a>", attr(d), esc(&name));
    }
    out
}

/// The device's name as its calibration (or any file of it) gives it.
fn device_name(catalog: &Catalog, slug: &str) -> Option<String> {
    catalog.entries.iter().find_map(|e| {
        if e.device.as_deref() != Some(slug) {
            return None;
        }
        match &e.item {
            Stored::Calibration(c) => Some(format!("{} ({})", c.device.name, c.device.backend)),
            Stored::Validation(v) => Some(format!(
                "{} ({})",
                v.series.device.name, v.series.device.backend
            )),
            Stored::Suite(s) => Some(format!("{} ({})", s.device.name, s.device.backend)),
            _ => None,
        }
    })
}

fn entries<'a>(catalog: &'a Catalog, device: Option<&'a str>) -> impl Iterator<Item = &'a Entry> {
    catalog
        .entries
        .iter()
        .filter(move |e| e.device.as_deref() == device)
}

fn figures_of<'a, 'b>(
    figures: &'b [InlineFigure<'a>],
    source: &'b Path,
) -> impl Iterator<Item = &'b InlineFigure<'a>> {
    figures
        .iter()
        .filter(move |f| f.planned.sources.len() == 1 && f.planned.sources[0] == source)
}

fn files_section(b: &mut Builder, used: &[&Entry], skipped: &[Skipped]) {
    b.heading(2, "files", "Files");
    if used.is_empty() && skipped.is_empty() {
        b.para("No file.");
        return;
    }
    let mut t = Table::new(["file", "kind"]);
    for e in used {
        t.row([e.relative.display().to_string(), e.item.kind().to_string()]);
    }
    if !used.is_empty() {
        b.table("Files this page is made from", &t);
    }
    if !skipped.is_empty() {
        let mut s = Table::new(["file", "why it was skipped"]);
        for k in skipped {
            s.row([k.path.display().to_string(), k.reason.clone()]);
        }
        b.table("Files skipped", &s);
    }
}

/// Write every page as `<dir>/<name>.html`, `.md` and `.tex` as one unit
/// ([`crate::export::write_together`]): every file written first, then renamed into place,
/// the index last, so a page that cannot be written (a full disk) leaves no index linking to
/// it, and nothing is replaced; returns the paths.
pub fn write_pages(pages: &[Page], dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut ordered: Vec<&Page> = pages.iter().filter(|p| p.name != "index").collect();
    ordered.extend(pages.iter().filter(|p| p.name == "index"));
    let mut files: Vec<(PathBuf, &[u8])> = Vec::new();
    for p in ordered {
        for (ext, text) in [("html", &p.html), ("md", &p.markdown), ("tex", &p.latex)] {
            files.push((dir.join(format!("{}.{ext}", p.name)), text.as_bytes()));
        }
    }
    let unit: Vec<(&Path, &[u8])> = files.iter().map(|(p, b)| (p.as_path(), *b)).collect();
    crate::export::write_together(&unit).map_err(|e| {
        std::io::Error::new(
            e.source.kind(),
            format!("{}: {}", e.path.display(), e.source),
        )
    })?;
    Ok(files.into_iter().map(|(p, _)| p).collect())
}
