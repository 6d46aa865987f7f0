//! The kernel-graph file format (TOML) and its loader (Antonyuk & Mikheev 2022, §5 and §10;
//! docs/models.md §1 "Kernel graph").
//!
//! ```toml
//! name = "vadd_z2"                 # optional, defaults to the file stem
//! description = "c[i] = a[i] + b[i] with the add time"
//! parameters = ["t1"]              # optional names beyond t, T, tau, dt, dT, t_cache, n
//! reads = 2                        # global reads per instance (k), serialized-memory model
//! writes = 1                       # global writes per instance (w)
//!
//! [[nodes]]
//! id = "c"
//! kind = "output"                  # input | output | op | cache
//! label = "c[i]"                   # optional
//!
//! [[arcs]]
//! from = "sum"
//! to = "c"
//! weight = "T"                     # a formula: "t + 2*tau", "t + (2n - 1)*dt", or a number
//! ```
//!
//! The node order is the matrix order: the first node is row and column 1 of Z.

use std::path::Path;

use serde::Deserialize;

use super::error::MaxPlusError;
use super::graph::{GraphBuilder, KernelGraph, NodeKind};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphFile {
    name: Option<String>,
    description: Option<String>,
    #[serde(default)]
    parameters: Vec<String>,
    #[serde(default)]
    reads: u32,
    #[serde(default)]
    writes: u32,
    #[serde(default)]
    nodes: Vec<NodeEntry>,
    #[serde(default)]
    arcs: Vec<ArcEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeEntry {
    id: String,
    kind: NodeKind,
    label: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ArcEntry {
    from: String,
    to: String,
    weight: WeightEntry,
}

/// A weight written as a formula string or as a plain number of seconds.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum WeightEntry {
    Formula(String),
    Seconds(f64),
}

impl WeightEntry {
    fn formula(&self) -> String {
        match self {
            WeightEntry::Formula(text) => text.clone(),
            WeightEntry::Seconds(value) => format!("{value:e}"),
        }
    }
}

impl KernelGraph {
    /// Reads and validates a graph file; errors name the file (and the line for TOML errors).
    pub fn load(path: &Path) -> Result<KernelGraph, MaxPlusError> {
        let text = std::fs::read_to_string(path).map_err(|source| MaxPlusError::Io {
            file: path.display().to_string(),
            source,
        })?;
        Self::from_file_text(path, &text)
    }

    /// Parses and validates the text of the graph file at `path` (read by the caller, e.g.
    /// with the command line's checks on what may be read); errors name the file.
    pub fn from_file_text(path: &Path, text: &str) -> Result<KernelGraph, MaxPlusError> {
        let file = path.display().to_string();
        let stem = path
            .file_stem()
            .map_or_else(|| file.clone(), |stem| stem.to_string_lossy().into_owned());
        Self::from_toml_str(text, &file, &stem)
    }

    /// Parses and validates a graph from TOML text; `file` names the source in errors and
    /// `default_name` is used when the text has no `name`.
    pub fn from_toml_str(
        text: &str,
        file: &str,
        default_name: &str,
    ) -> Result<KernelGraph, MaxPlusError> {
        let parsed: GraphFile =
            toml::from_str(text).map_err(|error| toml_error(text, file, &error))?;
        builder_from_file(parsed, default_name)
            .build()
            .map_err(|error| in_file(file, error))
    }
}

fn builder_from_file(parsed: GraphFile, default_name: &str) -> GraphBuilder {
    let name = parsed.name.unwrap_or_else(|| default_name.to_owned());
    let builder = parsed
        .parameters
        .iter()
        .fold(KernelGraph::builder(&name), |builder, parameter| {
            builder.parameter(parameter)
        })
        .memory_accesses(parsed.reads, parsed.writes);
    let builder = match &parsed.description {
        Some(text) => builder.description(text),
        None => builder,
    };
    let builder = parsed.nodes.iter().fold(builder, |builder, node| {
        builder.node(&node.id, node.kind, node.label.as_deref())
    });
    parsed.arcs.iter().fold(builder, |builder, arc| {
        builder.arc(&arc.from, &arc.to, &arc.weight.formula())
    })
}

/// A TOML error with the file, line and column it points at.
fn toml_error(text: &str, file: &str, error: &toml::de::Error) -> MaxPlusError {
    let offset = error.span().map_or(0, |span| span.start).min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count())
        + 1;
    MaxPlusError::Toml {
        file: file.to_owned(),
        line,
        column,
        message: error.message().trim().to_owned(),
    }
}

/// Prefixes a validation error with the file it came from.
fn in_file(file: &str, error: MaxPlusError) -> MaxPlusError {
    match error {
        MaxPlusError::WeightSyntax { weight, message } => MaxPlusError::WeightSyntax {
            weight,
            message: format!("{message} (in {file})"),
        },
        MaxPlusError::UnknownParameter {
            name,
            context,
            known,
        } => MaxPlusError::UnknownParameter {
            name,
            context: format!("{file}: {context}"),
            known,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VADD: &str = r#"
name = "vadd"
reads = 2
writes = 1

[[nodes]]
id = "c"
kind = "output"

[[nodes]]
id = "sum"
kind = "op"

[[nodes]]
id = "a"
kind = "input"

[[nodes]]
id = "b"
kind = "input"

[[arcs]]
from = "sum"
to = "c"
weight = "T"

[[arcs]]
from = "a"
to = "sum"
weight = "t"

[[arcs]]
from = "b"
to = "sum"
weight = "t"

[[arcs]]
from = "sum"
to = "sum"
weight = "tau"
"#;

    #[test]
    fn a_graph_file_gives_the_papers_z2() {
        let graph = KernelGraph::from_toml_str(VADD, "vadd.toml", "vadd").expect("valid");
        assert_eq!(graph.height(), 3);
        assert_eq!(graph.reads(), 2);
        assert_eq!(graph.description(), None);
        assert_eq!(graph.name(), "vadd");
        assert_eq!(
            graph.kernel_matrix().to_string(),
            "[ε, T, ε, ε]\n[ε, τ, t, t]\n[ε, ε, ε, ε]\n[ε, ε, ε, ε]\n"
        );
    }

    #[test]
    fn toml_errors_name_the_file_and_line() {
        // line 12 of VADD (it starts with an empty line) is `kind = "op"`
        let broken = VADD.replace("kind = \"op\"", "kind = \"operation\"");
        let message = KernelGraph::from_toml_str(&broken, "kernels/graphs/vadd.toml", "vadd")
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("kernels/graphs/vadd.toml:12:"),
            "{message}"
        );
    }

    #[test]
    fn a_missing_field_names_the_file() {
        let message = KernelGraph::from_toml_str("[[nodes]]\nid = \"x\"\n", "g.toml", "g")
            .unwrap_err()
            .to_string();
        assert!(message.starts_with("g.toml:"), "{message}");
        assert!(message.contains("kind"), "{message}");
    }

    #[test]
    fn unknown_parameters_in_files_name_file_arc_and_name() {
        let broken = VADD.replace("weight = \"tau\"", "weight = \"tua\"");
        let message = KernelGraph::from_toml_str(&broken, "vadd.toml", "vadd")
            .unwrap_err()
            .to_string();
        assert!(message.contains("vadd.toml"), "{message}");
        assert!(message.contains("arc 4 (sum → sum)"), "{message}");
        assert!(message.contains("`tua`"), "{message}");
    }

    #[test]
    fn numeric_weights_are_seconds() {
        let text = VADD.replace("weight = \"T\"", "weight = 2.5e-9");
        let graph = KernelGraph::from_toml_str(&text, "vadd.toml", "vadd").expect("valid");
        assert_eq!(graph.arcs()[0].weight.to_string(), "0.0000000025");
    }

    #[test]
    fn a_missing_file_names_the_path() {
        let message = KernelGraph::load(Path::new("/nonexistent/graph.toml"))
            .unwrap_err()
            .to_string();
        assert!(message.starts_with("/nonexistent/graph.toml:"), "{message}");
    }
}
