//! What a spec's launches declare about themselves beyond what they run: their access
//! patterns (`access = "…"`), collected per kernel for the `calibrated` prediction, and the
//! walks and gathers their kernels' sources make ([`super::source_access`]), in the spec's
//! terms, to say what a launch that declares none might declare.

use super::compiled::Code;
use super::format::{ArgSpec, LaunchSpec, SpecWorkload, Step};
use super::runner::footprint::gather_footprint;
use super::source_access::{source_gathers, source_walks, Sym};
use crate::workloads::Access;

/// A walk a kernel's source makes, in the terms of the kernel's first launch.
#[derive(Debug, Clone)]
pub(super) struct SourceWalkHint {
    /// The kernel.
    pub kernel: String,
    /// The walked buffer's index among the spec's buffers.
    pub buffer: usize,
    /// Elements from one step to the next, from the launch's arguments.
    pub stride: Code,
    /// Steps of one work item's walk, where the loop's bounds are the launch's arguments.
    pub steps: Option<Code>,
    /// The subscript and its loop as written.
    pub excerpt: String,
    /// Whether the kernel's launches declare any `walks`.
    pub declared: bool,
}

/// The walks each kernel's source makes (`source` its text), per kernel in the order its
/// first launch comes, each in that launch's arguments; a walked parameter that is no
/// buffer, or a stride that no argument gives, is left out.
pub(super) fn source_walk_hints(steps: &[Step], source: &str) -> Vec<SourceWalkHint> {
    let all = launches(steps);
    let mut hints = Vec::new();
    for l in first_launches(&all) {
        let declared = all
            .iter()
            .any(|m| m.kernel == l.kernel && !m.walks.is_empty());
        for w in source_walks(source, &l.kernel) {
            let Some(&ArgSpec::Buffer(buffer)) = l.args.get(w.param) else {
                continue;
            };
            let Some(stride) = in_launch(&w.stride, l) else {
                continue;
            };
            hints.push(SourceWalkHint {
                kernel: l.kernel.clone(),
                buffer,
                stride,
                steps: w.steps.as_ref().and_then(|s| in_launch(s, l)),
                excerpt: w.excerpt,
                declared,
            });
        }
    }
    hints
}

/// A quantity of the kernel's parameters in the launch's terms: each parameter its
/// argument's expression, the global size the launch's.
fn in_launch(sym: &Sym, launch: &LaunchSpec) -> Option<Code> {
    sym.to_code(
        &|i| match launch.args.get(i)? {
            ArgSpec::Scalar(_, code) => Some(code.clone()),
            ArgSpec::Buffer(_) => None,
        },
        &|d| launch.global.get(d).cloned(),
    )
}

/// Each kernel's `access`, where one of its launches declares one other than streaming (the
/// most particular, should two launches of one kernel disagree).
pub(super) fn access_patterns(steps: &[Step]) -> Vec<(&str, Access)> {
    let mut patterns: Vec<(&str, Access)> = Vec::new();
    for l in launches(steps) {
        let Some(access) = l.access.filter(|&a| a != Access::Stream) else {
            continue;
        };
        match patterns.iter_mut().find(|p| p.0 == l.kernel) {
            Some(p) => p.1 = p.1.max(access),
            None => patterns.push((&l.kernel, access)),
        }
    }
    patterns
}

/// The kernels none of whose launches declares an `access`, sorted.
pub(super) fn undeclared_access(steps: &[Step]) -> Vec<&str> {
    let all = launches(steps);
    let mut names: Vec<&str> = all
        .iter()
        .filter(|l| {
            !all.iter()
                .any(|m| m.kernel == l.kernel && m.access.is_some())
        })
        .map(|l| l.kernel.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The first of `all`'s launches of each kernel, in their order.
fn first_launches<'a>(all: &[&'a LaunchSpec]) -> Vec<&'a LaunchSpec> {
    let mut first: Vec<&LaunchSpec> = Vec::new();
    for &l in all {
        if !first.iter().any(|f| f.kernel == l.kernel) {
            first.push(l);
        }
    }
    first
}

/// Every launch of `steps`, loop bodies included, in the order they are written.
fn launches(steps: &[Step]) -> Vec<&LaunchSpec> {
    steps
        .iter()
        .flat_map(|s| match s {
            Step::Launch(l) => vec![l],
            Step::Loop(lp) => launches(&lp.body),
        })
        .collect()
}

/// Each variable slot's name in `spec`: the size, the named parameters, `iters`, `iter`,
/// `i` and the host loops' variables.
fn slot_names(spec: &SpecWorkload) -> Vec<String> {
    let mut names = vec![String::new(); spec.slots.total];
    names[0] = spec.params.size_name.clone();
    for (k, (name, _)) in spec.params.named.iter().enumerate() {
        names[k + 1] = name.clone();
    }
    names[spec.slots.iters] = "iters".into();
    names[spec.slots.iter] = "iter".into();
    names[spec.slots.element] = "i".into();
    fn loops(steps: &[Step], names: &mut [String]) {
        for s in steps {
            if let Step::Loop(lp) = s {
                names[lp.slot] = lp.var.clone();
                loops(&lp.body, names);
            }
        }
    }
    loops(&spec.steps, &mut names);
    names
}

/// What the kernels' sources show that their launches do not declare: [`walk_notes`] and
/// [`gather_notes`].
pub(super) fn source_notes(spec: &SpecWorkload) -> Vec<String> {
    let mut notes = walk_notes(spec);
    notes.extend(gather_notes(spec));
    notes
}

/// One sentence per kernel none of whose launches declares `gathers` or `access = "gather"`
/// while its source reads a buffer at indices another holds: which, and the key to add (its
/// count is the launch's, which the source does not give); and one per such read whose
/// indices lie in a band of the buffer ([`band`]), which says to leave it undeclared.
fn gather_notes(spec: &SpecWorkload) -> Vec<String> {
    let all = launches(&spec.steps);
    let mut notes = Vec::new();
    for l in first_launches(&all) {
        let declared = all.iter().any(|m| {
            m.kernel == l.kernel && (!m.gathers.is_empty() || m.access == Some(Access::Gather))
        });
        if declared {
            continue;
        }
        let buffer = |p: usize| match l.args.get(p) {
            Some(&ArgSpec::Buffer(b)) => Some(spec.buffers[b].name.as_str()),
            _ => None,
        };
        let mut found: Vec<(&str, &str, String)> = Vec::new();
        for g in source_gathers(&spec.source_text, &l.kernel) {
            let (Some(b), Some(i)) = (buffer(g.param), buffer(g.index_param)) else {
                continue;
            };
            match band(spec, l, (g.param, g.index_param)) {
                Some(band) => notes.push(format!(
                    "{} reads {b} at the indices {i} holds (`{}`), but they lie in a band: {band}, as a banded matrix's or a regular map's do; such reads stream and come from cache, so leave them undeclared (docs/spec-format.md, `gathers`)",
                    l.kernel, g.excerpt
                )),
                None => found.push((b, i, g.excerpt)),
            }
        }
        if found.is_empty() {
            continue;
        }
        let what: Vec<String> = found
            .iter()
            .map(|(b, i, excerpt)| format!("{b} at the indices {i} holds (`{excerpt}`)"))
            .collect();
        let entries: Vec<String> = found
            .iter()
            .map(|(b, _, _)| format!("{b} = \"…\""))
            .collect();
        notes.push(format!(
            "{} declares no gathers, but reads {}: where those indices scatter over the buffer, each such read may miss every cache at the target, a cost the calibrated prediction charges to declared gathers only (a band's or a stencil's neighbours stream: declare nothing); to declare it: gathers = {{ {} }}, \"…\" the launch's count of such reads (NNZ for a sparse product) (docs/spec-format.md, `gathers`)",
            l.kernel,
            what.join(" and "),
            entries.join(", ")
        ));
    }
    notes
}

/// Sizes at which a gather's indices are looked at, largest first: the first whose index
/// buffer holds at most [`BAND_INDICES`] elements is taken (a band is narrow only against a
/// large buffer).
const BAND_SIZES: [usize; 6] = [1 << 22, 1 << 18, 1 << 14, 1 << 10, 256, 64];

/// The most elements of an index buffer at the size its indices are looked at.
const BAND_INDICES: usize = 1 << 27;

/// Where launch `l` reads its parameter `param` at the indices its parameter `index_param`
/// holds and those indices lie in a band of it (a stretch of 1,024 covers under a tenth of
/// it, at the first of [`BAND_SIZES`] whose buffers can be sized and whose index buffer is
/// not too large): how much of it, in words; `None` where they scatter or cannot be known.
fn band(
    spec: &SpecWorkload,
    l: &LaunchSpec,
    (param, index_param): (usize, usize),
) -> Option<String> {
    let (Some(&ArgSpec::Buffer(gathered)), Some(&ArgSpec::Buffer(index))) =
        (l.args.get(param), l.args.get(index_param))
    else {
        return None;
    };
    for n in BAND_SIZES {
        let Ok(vars) = spec.vars(n, 1) else { continue };
        let Ok(lengths) = spec.lengths(&vars) else {
            continue;
        };
        if lengths[index] > BAND_INDICES {
            continue;
        }
        let Some(bytes) = lengths[gathered].checked_mul(spec.buffers[gathered].element.bytes())
        else {
            continue;
        };
        let bytes = bytes as u64;
        let f = gather_footprint(spec, (gathered, index), &vars, &lengths, bytes)?;
        return (f.saturating_mul(10) < bytes).then(|| {
            format!(
                "at N = {n} a stretch of 1,024 of them covers {:.2} % of it",
                100.0 * f as f64 / bytes as f64
            )
        });
    }
    None
}

/// The sizes at which a walk's steps are tried: a loop that takes one step or none at each
/// of them (a grid-stride loop over a grid that covers its range) is no walk.
const TRIED_SIZES: [usize; 3] = [1_000, 100_000, 10_000_000];

/// Whether a walk of `steps` (where known) takes more than one step at some size tried.
fn steps_more_than_once(spec: &SpecWorkload, steps: Option<&Code>) -> bool {
    let Some(steps) = steps else { return true };
    TRIED_SIZES.iter().any(|&n| {
        spec.vars(n, 1)
            .ok()
            .and_then(|vars| steps.eval(&vars, &[]).ok())
            .is_none_or(|v| v > 1.0)
    })
}

/// One sentence per kernel whose launches declare no `walks` while its source walks a
/// buffer: what it walks, and the `walks` line that would declare it (docs/spec-format.md).
/// A loop that takes at most one step at every size tried says nothing.
fn walk_notes(spec: &SpecWorkload) -> Vec<String> {
    let mut hints = source_walk_hints(&spec.steps, &spec.source_text);
    hints.retain(|h| steps_more_than_once(spec, h.steps.as_ref()));
    let names = slot_names(spec);
    let text = |c: &Code| c.text(&|slot| names.get(slot).cloned().unwrap_or_default());
    let mut notes = Vec::new();
    let mut kernels: Vec<&str> = hints
        .iter()
        .filter(|h| !h.declared)
        .map(|h| h.kernel.as_str())
        .collect();
    kernels.dedup();
    for kernel in kernels {
        let walks: Vec<&SourceWalkHint> = hints.iter().filter(|h| h.kernel == kernel).collect();
        let what: Vec<String> = walks
            .iter()
            .map(|h| format!("{} (`{}`)", spec.buffers[h.buffer].name, h.excerpt))
            .collect();
        let entries: Vec<String> = walks
            .iter()
            .map(|h| {
                format!(
                    "{} = {{ stride = \"{}\", steps = \"{}\" }}",
                    spec.buffers[h.buffer].name,
                    text(&h.stride),
                    h.steps.as_ref().map_or("?".into(), &text)
                )
            })
            .collect();
        let unknown = if walks.iter().any(|h| h.steps.is_none()) {
            " (\"?\": the loop's trip count, which its bounds do not give in the launch's arguments)"
        } else {
            ""
        };
        notes.push(format!(
            "{kernel} declares no walks, but each of its work items walks {}: on a CPU device a step a page or more apart waits on a page walk once the walks' pages outgrow the TLB, a cost the calibrated prediction charges to declared walks only; to declare it: walks = {{ {} }}{unknown} (docs/spec-format.md, `walks`)",
            what.join(" and "),
            entries.join(", ")
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn ports() -> Vec<SpecWorkload> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernels/ports");
        let mut specs: Vec<SpecWorkload> = std::fs::read_dir(&dir)
            .expect("kernels/ports")
            .map(|e| e.expect("an entry").path())
            .filter(|p| {
                p.extension().is_some_and(|e| e == "toml")
                    && !p.to_string_lossy().ends_with("-reference.toml")
            })
            .map(|p| super::super::load(&p).expect("a port loads"))
            .collect();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs
    }

    /// Every port that declares walks declares what its source walks: the same buffers,
    /// and strides and steps (where the reader finds them) that agree at two sizes (the
    /// declarations were written by hand from the kernels).
    #[test]
    fn the_source_walks_of_the_ports_are_what_they_declare() {
        let (mut checked, mut steps_checked) = (0, 0);
        for spec in ports() {
            let hints = source_walk_hints(&spec.steps, &spec.source_text);
            for l in launches(&spec.steps)
                .into_iter()
                .filter(|l| !l.walks.is_empty())
            {
                let found: Vec<&SourceWalkHint> =
                    hints.iter().filter(|h| h.kernel == l.kernel).collect();
                let mut want: Vec<usize> = l.walks.iter().map(|w| w.buffer).collect();
                let mut got: Vec<usize> = found.iter().map(|h| h.buffer).collect();
                want.sort_unstable();
                got.sort_unstable();
                assert_eq!(got, want, "{}: {}", spec.name, l.kernel);
                for size in [96, 1000] {
                    let vars = spec.vars(size, 1).expect("vars");
                    for w in &l.walks {
                        let h = found.iter().find(|h| h.buffer == w.buffer).expect("found");
                        let eval = |c: &Code| c.eval(&vars, &[]).expect("evaluates");
                        assert_eq!(eval(&h.stride), eval(&w.stride), "{} stride", spec.name);
                        checked += 1;
                        // Where the loop's bounds are the kernel's parameters.
                        if let Some(steps) = &h.steps {
                            assert_eq!(eval(steps), eval(&w.steps), "{} steps", spec.name);
                            steps_checked += 1;
                        }
                    }
                }
            }
            assert!(
                hints.iter().all(|h| h.declared
                    == launches(&spec.steps)
                        .iter()
                        .any(|l| l.kernel == h.kernel && !l.walks.is_empty())),
                "{}",
                spec.name
            );
        }
        // sgemm's two walks, gemv-n's one, stream-dot's, gridstride-saxpy's and
        // dense-embedding's two, at two sizes each; dense-embedding's steps are its segments'
        // rows, which its offsets hold, not its parameters.
        assert_eq!((checked, steps_checked), (2 * 9, 2 * 7), "walks checked");
    }

    /// The ports that declare gathers: every read the source shows at indices another
    /// buffer holds is of a buffer they declare (they were written by hand before the
    /// reader), and the reader finds some in each declaring launch (five of the thirteen
    /// hold the index in a local first: `uint w = col[e]; … d[w]`).
    #[test]
    fn the_source_gathers_of_the_ports_are_among_what_they_declare() {
        let mut declaring = 0;
        let mut found_any = 0;
        for spec in ports() {
            for l in launches(&spec.steps)
                .into_iter()
                .filter(|l| !l.gathers.is_empty())
            {
                declaring += 1;
                let declared: Vec<usize> = l.gathers.iter().map(|g| g.0).collect();
                let found: Vec<usize> = source_gathers(&spec.source_text, &l.kernel)
                    .iter()
                    .filter_map(|g| match l.args.get(g.param) {
                        Some(&ArgSpec::Buffer(b)) => Some(b),
                        _ => None,
                    })
                    .collect();
                for b in &found {
                    assert!(
                        declared.contains(b),
                        "{} {}: {} not declared",
                        spec.name,
                        l.kernel,
                        spec.buffers[*b].name
                    );
                }
                found_any += usize::from(!found.is_empty());
            }
            // A spec that declares them gets no gather note.
            assert!(
                gather_notes(&spec).iter().all(|n| !launches(&spec.steps)
                    .iter()
                    .any(|l| !l.gathers.is_empty() && n.starts_with(&format!("{} ", l.kernel)))),
                "{}",
                spec.name
            );
        }
        println!("gathers: the reader found some in {found_any} of {declaring} declaring launches");
        assert_eq!(found_any, declaring, "{found_any} of {declaring}");
    }

    /// Reads at indices that lie in a band (a stencil's matrix, a restriction's map) are
    /// told to stay undeclared; scattered ones (a hashed column order) to be declared.
    #[test]
    fn banded_indices_are_told_apart_from_scattered_ones() {
        let specs = ports();
        let spec = |name: &str| specs.iter().find(|s| s.name == name).expect(name);
        // HPCCG's 27-point matrix, undeclared: its columns lie within two planes of a row.
        let notes = gather_notes(spec("hpccg-sparsemv"));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("lie in a band: at N = ")
                && notes[0].contains("leave them undeclared"),
            "{}",
            notes[0]
        );
        // The same read with random columns over all of x (N = 64 is the size looked at:
        // the first whose 27·N³ column indices number at most 2^27) is told to declare them.
        let mut scattered = spec("hpccg-sparsemv").clone();
        let inds = scattered
            .buffers
            .iter()
            .position(|b| b.name == "inds")
            .expect("a column buffer");
        scattered.buffers[inds].init = super::super::format::Init::Random {
            lo: 0.0,
            hi: (64 * 64 * 64) as f64,
            seed: 1,
        };
        let notes = gather_notes(&scattered);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("to declare it: gathers = {"),
            "{}",
            notes[0]
        );
    }

    /// A grid-stride loop whose grid covers its range (adam: ⌈N / 256⌉ groups) takes one step
    /// a work item and gets no note; over a fixed grid (reduction: 64 groups) it walks.
    #[test]
    fn a_loop_of_one_step_at_every_size_is_no_walk() {
        let specs = ports();
        let spec = |name: &str| specs.iter().find(|s| s.name == name).expect(name);
        let adam = spec("adam");
        let hints = source_walk_hints(&adam.steps, &adam.source_text);
        assert!(!hints.is_empty(), "the reader sees adam's loop");
        assert!(walk_notes(adam).is_empty(), "{:?}", walk_notes(adam));
        let notes = walk_notes(spec("reduction"));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("stride = \"2 * GROUPS * 256\""),
            "{}",
            notes[0]
        );
    }

    /// What the reader says of the ports that declare no walks, printed for the record
    /// (`--nocapture`), and the declaration it suggests parses as a spec's walks would.
    #[test]
    fn the_ports_without_walks_get_a_note_that_parses() {
        for spec in ports() {
            for note in gather_notes(&spec) {
                println!("{}: {note}", spec.name);
                assert!(
                    (note.contains("gathers = { ") && note.contains(" = \"…\""))
                        || note.contains("lie in a band: at N = "),
                    "{note}"
                );
            }
            for note in walk_notes(&spec) {
                println!("{}: {note}", spec.name);
                // The table up to the brace that closes it (a step count may hold brackets).
                let from = note.split("walks = ").nth(1).expect("a declaration");
                let mut depth = 0;
                let end = from
                    .char_indices()
                    .find_map(|(i, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        (depth == 0).then_some(i + 1)
                    })
                    .expect("a closed table");
                let table = &from[..end];
                let parsed: toml::Value =
                    toml::from_str(&format!("walks = {table}")).expect("TOML");
                for (_, w) in parsed["walks"].as_table().expect("a table") {
                    for key in ["stride", "steps"] {
                        let text = w[key].as_str().expect("a string");
                        if text != "?" {
                            crate::workloads::spec::expr::parse(text).expect("an expression");
                        }
                    }
                }
            }
        }
    }
}
