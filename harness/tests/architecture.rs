//! The layout is the architecture: every stage of the library imports only the stages below
//! it, and no two modules import each other, directly or through others.
//!
//! This reads the sources (`crate::…` paths and `super::…` paths in code, not in comments) and
//! checks the layer table of `src/lib.rs`. A new top-level module must be added to [`LAYERS`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library's stages, lowest first; a module may import only modules of a lower layer.
const LAYERS: &[(&str, u32)] = &[
    ("units", 0),
    ("fit", 1),
    ("model", 1),
    ("export", 2),
    ("backend", 3),
    ("bench", 4),
    ("workloads", 4),
    ("calibration", 5),
    ("experiments", 6),
    ("plot", 7),
    ("report", 8),
];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, l)| *l)
}

fn src() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src is readable") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` → `["a", "b"]`, `src/a/mod.rs` → `["a"]`.
fn module_path(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src()).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" {
        parts.push(stem);
    }
    parts
}

/// The code of a file without comments and string literals (so doc links and messages are
/// not read as imports).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every path a file refers to, as absolute module paths (`["fit", "stats", "Summary"]`),
/// with `use a::{b, c::d}` groups expanded.
fn referenced_paths(code: &str, here: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_alphanumeric() || bytes[i - 1] == '_');
        let rest: String = bytes[i..bytes.len().min(i + 7)].iter().collect();
        let (base, skip) = if starts_word && rest.starts_with("crate::") {
            (Vec::new(), 7)
        } else if starts_word && rest.starts_with("super::") {
            // `super` of a file's module: its parent (for mod.rs files the module itself is
            // the folder, so `here` already ends at the folder).
            let mut base = here.to_vec();
            let mut j = i;
            while bytes[j..].iter().collect::<String>().starts_with("super::") {
                base.pop();
                j += 7;
            }
            out.extend(expand(&bytes, j, base));
            i = j;
            continue;
        } else {
            i += 1;
            continue;
        };
        out.extend(expand(&bytes, i + skip, base));
        i += skip;
    }
    out
}

/// Read a path (or a brace group) starting at `at`, prefixed by `base`.
fn expand(chars: &[char], at: usize, base: Vec<String>) -> Vec<Vec<String>> {
    let mut i = at;
    let mut path = base;
    loop {
        if chars.get(i) == Some(&'{') {
            let mut depth = 0;
            let mut item = String::new();
            let mut items = Vec::new();
            for &c in &chars[i..] {
                match c {
                    '{' => {
                        depth += 1;
                        if depth > 1 {
                            item.push(c);
                        }
                    }
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            items.push(std::mem::take(&mut item));
                            break;
                        }
                        item.push(c);
                    }
                    ',' if depth == 1 => items.push(std::mem::take(&mut item)),
                    _ => item.push(c),
                }
            }
            let mut out = Vec::new();
            for item in items {
                let item: Vec<char> = item.trim().chars().collect();
                if item.is_empty() {
                    continue;
                }
                out.extend(expand(&item, 0, path.clone()));
            }
            return out;
        }
        let ident: String = chars[i..]
            .iter()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        i += ident.chars().count();
        if ident != "self" {
            path.push(ident);
        }
        if chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':') {
            i += 2;
        } else {
            break;
        }
    }
    vec![path]
}

struct Crate {
    /// Module path of each file.
    files: BTreeMap<PathBuf, Vec<String>>,
    /// Every module path that is a file.
    modules: BTreeSet<Vec<String>>,
}

fn read_crate() -> Crate {
    let mut paths = Vec::new();
    rust_files(&src(), &mut paths);
    let files: BTreeMap<PathBuf, Vec<String>> = paths
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(src()).expect("under src");
            // The binary (main.rs, cli/) sits above the library and may use all of it.
            !(rel.starts_with("cli") || rel == Path::new("main.rs") || rel == Path::new("lib.rs"))
        })
        .map(|p| {
            let m = module_path(&p);
            (p, m)
        })
        .collect();
    let modules = files.values().cloned().collect();
    Crate { files, modules }
}

/// The longest prefix of `path` that is a module (a referenced item lives in that module).
fn owning_module(path: &[String], modules: &BTreeSet<Vec<String>>) -> Vec<String> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
        .unwrap_or_else(|| path[..1.min(path.len())].to_vec())
}

/// Module → modules it imports (at most two levels deep, `fit::stats`), parents and their
/// own descendants left out (a folder re-exporting its children is not a dependency).
fn edges(c: &Crate) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (file, here) in &c.files {
        let text = std::fs::read_to_string(file).expect("source is readable");
        let code = code_only(&text);
        // Unit tests may reach anywhere below; only the code proper is layered.
        let code = code.split("#[cfg(test)]").next().unwrap_or_default();
        let from: Vec<String> = here.iter().take(2).cloned().collect();
        for path in referenced_paths(code, here) {
            if path.is_empty() || layer(&path[0]).is_none() {
                continue;
            }
            let to: Vec<String> = owning_module(&path, &c.modules)
                .into_iter()
                .take(2)
                .collect();
            if to == from || to.starts_with(&from) || from.starts_with(&to) {
                continue;
            }
            graph.entry(from.clone()).or_default().insert(to);
        }
    }
    graph
}

#[test]
fn every_stage_imports_only_lower_stages() {
    let c = read_crate();
    assert!(c.files.len() > 50, "read {} files", c.files.len());
    let mut wrong = Vec::new();
    for (from, tos) in edges(&c) {
        let from_layer = layer(&from[0]).unwrap_or_else(|| {
            panic!("top-level module `{}` is not in LAYERS", from[0]);
        });
        for to in tos {
            let to_layer = layer(&to[0]).expect("filtered");
            if to[0] != from[0] && to_layer >= from_layer {
                wrong.push(format!("{} → {}", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports from a stage to one not below it:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_module_imports_itself_through_others() {
    let c = read_crate();
    let graph = edges(&c);
    // Depth-first search for a cycle, reporting it.
    fn visit(
        node: &Vec<String>,
        graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        stack: &mut Vec<Vec<String>>,
        done: &mut BTreeSet<Vec<String>>,
    ) -> Option<Vec<Vec<String>>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            return Some(stack[at..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, &graph, &mut Vec::new(), &mut done) {
            let names: Vec<String> = cycle.iter().map(|n| n.join("::")).collect();
            panic!("import loop: {} → {}", names.join(" → "), names[0]);
        }
    }
}

#[test]
fn the_checker_reads_groups_and_super_paths() {
    let here = vec!["workloads".to_string(), "adi".to_string()];
    let code = code_only(
        "use crate::{backend::{Arg, Device}, fit::stats};\n// crate::plot::x\nuse super::grid3d::sweep;\nlet s = \"crate::report\";",
    );
    let paths: Vec<String> = referenced_paths(&code, &here)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "backend::Arg",
            "backend::Device",
            "fit::stats",
            "workloads::grid3d::sweep"
        ]
    );
}
