//! The stored results a figure or a report is made from: every `.json` file under the given
//! folders, recognised by its content (not its name), loaded, and tied to the device it was
//! measured on. Files that are corrupt, partial, of an old format or of a kind nothing is
//! drawn from are listed with the reason, never fatal.
//!
//! The scan is deterministic: folders are walked in sorted order, so the same files give the
//! same catalogue, the same figures and the same report.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Deserialize;

use crate::calibration::Calibration;
use crate::experiments::suite::Suite;
use crate::experiments::validate::{ErrorSummary, Validation};
use crate::experiments::validate_maxplus::{MaxPlusRow, VariantError};
use crate::model::cluster::report::CLUSTER_SCHEMA;
use crate::model::cluster::{ClusterReport, Comparison};
use crate::model::maxplus::LaunchPlan;

/// Folders deeper than this below a scanned folder are not entered.
const MAX_DEPTH: usize = 6;

/// A stored max-plus validation, as its JSON holds it (the fields figures and tables use).
#[derive(Debug, Clone, Deserialize)]
pub struct StoredMaxPlus {
    /// The graph's name.
    pub graph: String,
    /// The device's name.
    pub device: String,
    /// The kernel it ran as: how a size became launches.
    pub kernel: StoredKernel,
    /// One row per measured size.
    pub rows: Vec<MaxPlusRow>,
    /// Per-variant error summaries.
    pub errors: Vec<VariantError>,
}

/// The part of a max-plus validation's kernel the figure needs.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredKernel {
    /// How a size maps to launches.
    pub plan: LaunchPlan,
}

/// A stored measured balance (`harness balance --workload sor --run`): the model's inputs and
/// each split run.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredBalance {
    /// φ, ρ, q, r and the model's speed-ups.
    pub decomposition: StoredDecomposition,
    /// The splits run.
    pub runs: Vec<StoredSplitRun>,
}

/// The part of a decomposition the figure and the table need.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredDecomposition {
    /// φ = T_M / T1.
    pub phi: f64,
    /// ρ = (1 − φ)·T1 / T_S.
    pub rho: f64,
    /// Cores.
    pub q: u32,
    /// Accelerators.
    pub r: u32,
    /// K^max.
    pub k_max: f64,
    /// The best whole number of joined cores.
    pub q_star: u32,
    /// K^D at q*.
    pub k_d: f64,
}

/// One split run.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredSplitRun {
    /// The split.
    pub split: StoredSplit,
    /// Measured speed-up.
    pub speedup: f64,
    /// The model's.
    pub predicted: f64,
}

/// A split's name.
#[derive(Debug, Clone, Deserialize)]
pub struct StoredSplit {
    /// What it is.
    pub name: String,
}

/// What a stored file holds.
#[derive(Debug, Clone)]
pub enum Stored {
    /// A device calibration.
    Calibration(Box<Calibration>),
    /// A fractal validation (`harness validate`).
    Validation(Box<Validation>),
    /// A validation suite (`harness validate-suite`).
    Suite(Box<Suite>),
    /// A max-plus validation (`harness validate-maxplus`).
    MaxPlus(Box<StoredMaxPlus>),
    /// A measured balance.
    Balance(Box<StoredBalance>),
    /// A cluster prediction or a measured distributed run.
    Cluster(Box<ClusterReport>),
    /// A prediction beside a measured distributed run.
    ClusterComparison(Box<Comparison>),
    /// A result nothing is drawn from (a series, a trace, …): its kind.
    Input(&'static str),
}

impl Stored {
    /// The kind, for notes.
    pub fn kind(&self) -> &'static str {
        match self {
            Stored::Calibration(_) => "calibration",
            Stored::Validation(_) => "validation",
            Stored::Suite(_) => "validation suite",
            Stored::MaxPlus(_) => "max-plus validation",
            Stored::Balance(_) => "balance",
            Stored::Cluster(_) => "cluster report",
            Stored::ClusterComparison(_) => "cluster comparison",
            Stored::Input(kind) => kind,
        }
    }
}

/// One loaded file.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The file.
    pub path: PathBuf,
    /// Its path below the scanned folder's parent (`results/x.json` for `results`): how
    /// figures made from it are named.
    pub relative: PathBuf,
    /// The device it was measured on (its slug, as calibration files are named), where the
    /// file says or its name shows it.
    pub device: Option<String>,
    /// Its content.
    pub item: Stored,
}

/// A file left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The file.
    pub path: PathBuf,
    /// Why, in one line.
    pub reason: String,
}

/// Every stored result found.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The loaded files, in path order.
    pub entries: Vec<Entry>,
    /// The files left out.
    pub skipped: Vec<Skipped>,
}

impl Catalog {
    /// Scan `dirs` (each a folder or one file) for `.json` results.
    pub fn scan(dirs: &[PathBuf]) -> Catalog {
        let mut files: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut catalog = Catalog::default();
        for dir in dirs {
            let base = PathBuf::from(dir.file_name().unwrap_or_default());
            if dir.is_file() {
                files.push((dir.clone(), base));
                continue;
            }
            let mut found = Vec::new();
            if let Err(e) = walk(dir, 0, &mut found) {
                catalog.skipped.push(Skipped {
                    path: dir.clone(),
                    reason: format!("cannot read the folder: {e}"),
                });
            }
            for f in found {
                let rel = base.join(f.strip_prefix(dir).unwrap_or(&f));
                files.push((f, rel));
            }
        }
        files.sort();
        files.dedup_by(|a, b| a.0 == b.0);
        let mut entries: Vec<(PathBuf, PathBuf, Result<Stored, String>)> = files
            .into_par_iter()
            .map(|(f, rel)| {
                let item = load(&f);
                (f, rel, item)
            })
            .collect();
        // Device slugs named by calibrations, so other files can be tied to them by name.
        let slugs: Vec<String> = entries
            .iter()
            .filter_map(|(_, _, item)| match item {
                Ok(Stored::Calibration(c)) => Some(c.device.slug()),
                _ => None,
            })
            .collect();
        for (path, relative, item) in entries.drain(..) {
            match item {
                Ok(item) => {
                    let device = device_of(&item, &path, &slugs);
                    catalog.entries.push(Entry {
                        path,
                        relative,
                        device,
                        item,
                    });
                }
                Err(reason) => catalog.skipped.push(Skipped { path, reason }),
            }
        }
        catalog
    }

    /// The device slugs present, sorted.
    pub fn devices(&self) -> Vec<String> {
        let mut d: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| e.device.clone())
            .collect();
        d.sort();
        d.dedup();
        d
    }

    /// Keep only `device`'s files and those of no device; an error names the devices known.
    pub fn restrict(mut self, device: &str) -> Result<Catalog, String> {
        let known = self.devices();
        if !known.iter().any(|d| d == device) {
            return Err(format!(
                "no stored result is from device '{device}' (known: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        }
        self.entries
            .retain(|e| e.device.as_deref().is_none_or(|d| d == device));
        Ok(self)
    }
}

fn walk(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut items: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    items.sort();
    for path in items {
        if path.is_dir() {
            if depth < MAX_DEPTH {
                // An unreadable subfolder is not worth failing the scan for.
                let _ = walk(&path, depth + 1, files);
            }
        } else if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    Ok(())
}

/// Recognise and load one file.
fn load(path: &Path) -> Result<Stored, String> {
    let text = crate::export::read_input_text(path).map_err(|e| format!("cannot read it: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("not valid JSON ({e})"))?;
    let Some(object) = value.as_object() else {
        return Err("not a result file (the JSON is not an object)".into());
    };
    let has = |k: &str| object.contains_key(k);
    let parse = |what: &str| -> String { format!("a {what} this version cannot read") };
    fn typed<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T, String> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de)
            .map_err(|e| format!("{what} ({}: {})", e.path(), e.inner()))
    }
    if has("format_version") && has("parameters") {
        return Calibration::from_json(&text)
            .map(|c| Stored::Calibration(Box::new(c)))
            .map_err(|(_, message)| format!("{}: {message}", parse("calibration")));
    }
    if has("series") && has("rows") && has("large") {
        return typed(&text, &parse("validation")).map(|v| Stored::Validation(Box::new(v)));
    }
    if has("cases") && has("summary") && has("device") {
        return typed(&text, &parse("validation suite")).map(|s| Stored::Suite(Box::new(s)));
    }
    if has("graph") && has("kernel") && has("rows") {
        return typed(&text, &parse("max-plus validation")).map(|m| Stored::MaxPlus(Box::new(m)));
    }
    if has("fragments") && has("decomposition") {
        return typed(&text, &parse("balance")).map(|b| Stored::Balance(Box::new(b)));
    }
    if object.get("schema").and_then(|s| s.as_str()) == Some(CLUSTER_SCHEMA) && has("intervals") {
        return typed(&text, &parse("cluster report")).map(|r| Stored::Cluster(Box::new(r)));
    }
    if has("setting") && has("rows") && has("unmatched") {
        return typed(&text, &parse("cluster comparison"))
            .map(|c| Stored::ClusterComparison(Box::new(c)));
    }
    if has("workload") && has("points") {
        return Ok(Stored::Input("series"));
    }
    if has("schema") && has("extents") {
        return Ok(Stored::Input("trace"));
    }
    Err("not a result file the report knows".into())
}

/// The device slug of a stored result: from its content where it names a device, else from
/// its file name when that starts with a calibration's slug (`<slug>.balance.…`).
fn device_of(item: &Stored, path: &Path, slugs: &[String]) -> Option<String> {
    match item {
        Stored::Calibration(c) => return Some(c.device.slug()),
        Stored::Validation(v) => return Some(v.series.device.slug()),
        Stored::Suite(s) => return Some(s.device.slug()),
        _ => {}
    }
    let name = path.file_name()?.to_string_lossy();
    let prefix = name.split('.').next()?;
    slugs.iter().find(|s| *s == prefix).cloned()
}

/// The median of an error summary, for tables (`None` when there is none).
pub fn median(e: &ErrorSummary) -> Option<f64> {
    e.median.is_finite().then_some(e.median)
}
