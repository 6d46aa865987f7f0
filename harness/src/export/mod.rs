//! Files and formats: every result the harness writes goes through here, and every file it
//! is given to read ([`read_input`]: regular files only, of bounded size).
//!
//! One [`Exporter`] per format ([`Format`]: JSON, CSV, Markdown, Extra-P text), as
//! hyperfine's `export/` has one per format behind one trait. A result says what it can be
//! written as by implementing [`Exportable`]; [`write_results`] renders every requested
//! format first (so a result that one format cannot take leaves no files) and then writes
//! the files as one unit ([`write_together`]: every temporary written, then the renames),
//! the JSON last, so the JSON's presence means its siblings are complete.
//!
//! This layer knows no device, workload or experiment: it takes tables of text, serialisable
//! values and plain measurements.

pub mod csv;
pub mod extrap;
pub mod file;
pub mod input;
pub mod json;
pub mod latex;
pub mod markdown;
pub mod table;

use std::path::{Path, PathBuf};

use thiserror::Error;

pub use file::{
    check_writable, create_folders, end_now, exit_removing_temporaries, file_name_part,
    keep_on_interrupt, remove_empty_folders, remove_on_interrupt, sweep_stale_temporaries,
    with_suffix, write_atomically, write_together, WriteError,
};
pub use input::{read_input, read_input_text, MAX_READ_BYTES};
pub use json::read_json;
pub use table::{sig, Table};

/// Errors of reading or writing result files.
#[derive(Debug, Error)]
pub enum ExportError {
    /// A file could not be read or parsed; the message names the field.
    #[error("{path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A value could not be serialised.
    #[error("cannot serialise: {0}")]
    Serialize(String),
    /// The result cannot be written in this format.
    #[error("{what} cannot be written as {format}")]
    Unsupported {
        /// The result.
        what: String,
        /// The format.
        format: Format,
    },
    /// The Extra-P writer refused the data.
    #[error(transparent)]
    Extrap(#[from] extrap::ExtrapError),
}

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Format {
    /// Pretty JSON, the whole result (the file other commands read back).
    Json,
    /// Comma-separated rows, one header line.
    Csv,
    /// A Markdown pipe table.
    Markdown,
    /// Extra-P's text input format (series only).
    Extrap,
}

impl Format {
    /// The file suffix after the stem.
    pub fn suffix(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "md",
            Format::Extrap => "extrap.txt",
        }
    }

    /// The exporter of this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Json => Box::new(JsonExporter),
            Format::Csv => Box::new(CsvExporter),
            Format::Markdown => Box::new(MarkdownExporter),
            Format::Extrap => Box::new(ExtrapExporter),
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Markdown => "markdown",
            Format::Extrap => "extrap",
        })
    }
}

/// A result that can be exported: as JSON always, as a table (CSV, Markdown), and as
/// Extra-P measurements where it is a series.
pub trait Exportable {
    /// What it is, for error messages (`series`, `validation`).
    fn kind(&self) -> &'static str;

    /// The whole result as pretty JSON.
    fn to_json(&self) -> Result<String, ExportError>;

    /// Its rows, the CSV and Markdown exporters' input.
    fn table(&self) -> Table;

    /// Its measurements for Extra-P, where it has them.
    fn extrap_measurements(&self) -> Option<extrap::Measurements> {
        None
    }

    /// Its table as CSV text.
    fn to_csv(&self) -> String {
        csv::table_to_csv(&self.table())
    }

    /// Its table as a Markdown pipe table.
    fn to_markdown(&self) -> String {
        markdown::table_to_markdown(&self.table())
    }
}

/// One output format's writer.
pub trait Exporter {
    /// The format it writes.
    fn format(&self) -> Format;

    /// The file's text for `result`.
    fn serialize(&self, result: &dyn Exportable) -> Result<String, ExportError>;
}

/// The JSON exporter.
pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn format(&self) -> Format {
        Format::Json
    }

    fn serialize(&self, result: &dyn Exportable) -> Result<String, ExportError> {
        result.to_json()
    }
}

/// The CSV exporter.
pub struct CsvExporter;

impl Exporter for CsvExporter {
    fn format(&self) -> Format {
        Format::Csv
    }

    fn serialize(&self, result: &dyn Exportable) -> Result<String, ExportError> {
        Ok(result.to_csv())
    }
}

/// The Markdown exporter.
pub struct MarkdownExporter;

impl Exporter for MarkdownExporter {
    fn format(&self) -> Format {
        Format::Markdown
    }

    fn serialize(&self, result: &dyn Exportable) -> Result<String, ExportError> {
        Ok(result.to_markdown())
    }
}

/// The Extra-P text exporter.
pub struct ExtrapExporter;

impl Exporter for ExtrapExporter {
    fn format(&self) -> Format {
        Format::Extrap
    }

    fn serialize(&self, result: &dyn Exportable) -> Result<String, ExportError> {
        let measurements =
            result
                .extrap_measurements()
                .ok_or_else(|| ExportError::Unsupported {
                    what: result.kind().to_string(),
                    format: Format::Extrap,
                })?;
        Ok(extrap::to_extrap(&measurements)?)
    }
}

impl From<WriteError> for ExportError {
    fn from(e: WriteError) -> Self {
        ExportError::Write {
            path: e.path,
            source: e.source,
        }
    }
}

/// Write `result` as `<stem>.<suffix>` in every format of `formats` (JSON always, last).
/// Every text is made before any file is written, and the files are written as one unit
/// ([`write_together`]). Returns the paths written, in order.
pub fn write_results(
    stem: &Path,
    formats: &[Format],
    result: &dyn Exportable,
) -> Result<Vec<PathBuf>, ExportError> {
    write_rendered(&render_results(stem, formats, result)?)
}

/// Write files rendered by [`render_results`] (one result's or several results' joined) as
/// one unit, in order; returns their paths.
pub fn write_rendered(files: &[(PathBuf, String)]) -> Result<Vec<PathBuf>, ExportError> {
    let unit: Vec<(&Path, &[u8])> = files
        .iter()
        .map(|(p, text)| (p.as_path(), text.as_bytes()))
        .collect();
    write_together(&unit)?;
    Ok(files.iter().map(|(p, _)| p.clone()).collect())
}

/// The files `result` is written as, `(path, text)` for `<stem>.<suffix>` in every format of
/// `formats`, the JSON always and last; nothing is written.
pub fn render_results(
    stem: &Path,
    formats: &[Format],
    result: &dyn Exportable,
) -> Result<Vec<(PathBuf, String)>, ExportError> {
    let mut order: Vec<Format> = Vec::new();
    for f in formats.iter().copied().filter(|f| *f != Format::Json) {
        if !order.contains(&f) {
            order.push(f);
        }
    }
    order.push(Format::Json);
    order
        .iter()
        .map(|f| {
            Ok((
                with_suffix(stem, f.suffix()),
                f.exporter().serialize(result)?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Two;

    impl Exportable for Two {
        fn kind(&self) -> &'static str {
            "two"
        }
        fn to_json(&self) -> Result<String, ExportError> {
            json::to_json(&[1, 2])
        }
        fn table(&self) -> Table {
            let mut t = Table::new(["i"]);
            t.row(["1"]);
            t.row(["2"]);
            t
        }
    }

    #[test]
    fn writes_every_format_json_last() {
        let dir = tempfile::tempdir().expect("temp dir");
        let stem = dir.path().join("r.two");
        let paths = write_results(&stem, &[Format::Markdown, Format::Csv], &Two).expect("ok");
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["r.two.md", "r.two.csv", "r.two.json"]);
        assert_eq!(
            std::fs::read_to_string(&paths[1]).expect("csv"),
            "i\n1\n2\n"
        );
    }

    #[test]
    fn an_unsupported_format_writes_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = write_results(&dir.path().join("r"), &[Format::Extrap], &Two)
            .expect_err("no measurements");
        assert_eq!(err.to_string(), "two cannot be written as extrap");
        assert_eq!(std::fs::read_dir(dir.path()).expect("lists").count(), 0);
    }
}
