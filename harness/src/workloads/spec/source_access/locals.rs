//! A kernel's integer locals, so that a stride or an index held in one is read through it:
//! `uint grid = 2 * GSIZE0; … i += grid` (a grid-stride loop's step), `uint p = base + t * n;
//! … x[p]` (a walk's subscript).
//!
//! Only a local written once, at its declaration, is followed, and its value is what its
//! initialiser says with the locals before it read through. Where that value depends on a
//! variable the kernel changes (a loop counter), it holds only within the loop that declares
//! it: [`Local::varying`] names those variables, and the reader follows such a local only
//! inside a loop over each of them that also holds its declaration.

use super::c_text::{
    is_word, matching, parse_expr, skip_space, split_top, word_positions, writes_at, Ast,
    TYPE_WORDS,
};

/// The most nodes a local's value may have once the locals before it are read through: a
/// chain of locals each doubling the one before stops here instead of growing without bound.
const MAX_NODES: usize = 512;

/// The longest declaration the reader follows, in bytes, and the most declarations of a
/// kernel whose locals it follows: each is a scan of the kernel's body, so a generated source
/// of thousands stays a linear read.
const MAX_DECLARATION: usize = 4096;
const MAX_DECLARATIONS: usize = 1024;

/// A declaration of an integer variable: its name, its initialiser where it has one, and
/// where it stands in the kernel's body.
#[derive(Debug, Clone)]
pub(super) struct Declaration {
    pub name: String,
    pub init: Option<Ast>,
    /// The initialiser as written (a subscript, which [`Ast`] does not hold, among others).
    pub init_text: Option<String>,
    pub at: usize,
}

/// A local the reader follows: its value, read through the locals before it, and the
/// variables the kernel changes that the value depends on.
#[derive(Debug, Clone)]
pub(super) struct Local {
    pub name: String,
    pub value: Ast,
    pub at: usize,
    pub varying: Vec<String>,
}

/// Every declaration of an integer variable in `body`, in order, the declarators of one
/// statement (`uint p = …, q = …;`) each on their own.
pub(super) fn declarations(body: &str) -> Vec<Declaration> {
    let mut starts: Vec<usize> = TYPE_WORDS
        .iter()
        .flat_map(|w| word_positions(body, w))
        .collect();
    starts.sort_unstable();
    let mut found = Vec::new();
    let mut consumed = 0;
    for start in starts {
        if start < consumed {
            continue;
        }
        // The type's words, then the declarators up to the `;` (or the `)` that closes a
        // cast or a parameter list: then it was no declaration).
        let mut at = start;
        loop {
            let rest = &body[at..];
            match TYPE_WORDS
                .iter()
                .find(|w| rest.starts_with(*w) && !rest[w.len()..].starts_with(is_word))
            {
                Some(w) => at = skip_space(body, at + w.len()),
                None => break,
            }
        }
        consumed = at;
        let Some(end) = declaration_end(body, at) else {
            continue;
        };
        consumed = end;
        for declarator in split_top(&body[at..end], ',') {
            let (name, init_text) = match declarator.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
                None => (declarator.trim(), None),
            };
            if !name.is_empty() && name.chars().all(is_word) {
                found.push(Declaration {
                    name: name.to_string(),
                    init: init_text.as_deref().and_then(parse_expr),
                    init_text,
                    at: start,
                });
            }
        }
    }
    found
}

/// The `;` that ends a declaration starting at `at`, where it ends in one before any bracket
/// closes that it did not open.
fn declaration_end(body: &str, at: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in body[at..]
        .char_indices()
        .take_while(|&(i, _)| i < MAX_DECLARATION)
    {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' | '{' | '}' if depth == 0 => return None,
            ')' | ']' => depth -= 1,
            ';' if depth == 0 => return Some(at + i),
            _ => {}
        }
    }
    None
}

/// How often `body` writes `name`: assignments (each declaration's `=` among them) and other
/// changes (`+=`, `++`, its address taken).
pub(super) fn writes(body: &str, name: &str) -> usize {
    word_positions(body, name)
        .filter(|&at| writes_at(body, at, at + name.len()))
        .count()
}

/// The locals of `body` that the reader follows: declared once, with an initialiser, and
/// written nowhere else; each one's value with the locals before it read through.
pub(super) fn locals(body: &str, declared: &[Declaration]) -> Vec<Local> {
    let mut out: Vec<Local> = Vec::new();
    if declared.len() > MAX_DECLARATIONS {
        return out;
    }
    for d in declared {
        let Some(init) = &d.init else { continue };
        if declared.iter().filter(|o| o.name == d.name).count() != 1 || writes(body, &d.name) != 1 {
            continue;
        }
        let mut budget = MAX_NODES;
        let Some(value) = read_through(init, &out, &mut budget) else {
            continue;
        };
        let mut varying = Vec::new();
        identifiers(&value, &mut |n| {
            if !varying.iter().any(|v| v == n) && writes(body, n) > 0 {
                varying.push(n.to_string());
            }
        });
        out.push(Local {
            name: d.name.clone(),
            value,
            at: d.at,
            varying,
        });
    }
    out
}

/// What the local `name` holds as written, where `body` declares it once, with an
/// initialiser, and writes it nowhere else (`uint w = col[e];`).
pub(super) fn written_once<'a>(
    body: &str,
    declared: &'a [Declaration],
    name: &str,
) -> Option<&'a str> {
    if declared.len() > MAX_DECLARATIONS {
        return None;
    }
    let mut found = declared.iter().filter(|d| d.name == name);
    match (found.next(), found.next()) {
        (Some(d), None) if writes(body, name) == 1 => d.init_text.as_deref(),
        _ => None,
    }
}

/// `ast` with the locals `follow` allows read through (none where that would pass the node
/// budget).
pub(super) fn inline(ast: &Ast, locals: &[Local], follow: impl Fn(&Local) -> bool) -> Ast {
    let allowed: Vec<Local> = locals.iter().filter(|l| follow(l)).cloned().collect();
    let mut budget = MAX_NODES;
    read_through(ast, &allowed, &mut budget).unwrap_or_else(|| ast.clone())
}

/// `ast` with each name of `locals` replaced by its value; `None` past the budget.
fn read_through(ast: &Ast, locals: &[Local], budget: &mut usize) -> Option<Ast> {
    *budget = budget.checked_sub(1)?;
    Some(match ast {
        Ast::Ident(n) => match locals.iter().find(|l| &l.name == n) {
            Some(l) => {
                *budget = budget.checked_sub(nodes(&l.value))?;
                l.value.clone()
            }
            None => ast.clone(),
        },
        Ast::Num(_) => ast.clone(),
        Ast::Call(f, args) => Ast::Call(
            f.clone(),
            args.iter()
                .map(|a| read_through(a, locals, budget))
                .collect::<Option<_>>()?,
        ),
        Ast::Neg(a) => Ast::Neg(Box::new(read_through(a, locals, budget)?)),
        Ast::Bin(op, a, b) => Ast::Bin(
            *op,
            Box::new(read_through(a, locals, budget)?),
            Box::new(read_through(b, locals, budget)?),
        ),
    })
}

fn nodes(ast: &Ast) -> usize {
    match ast {
        Ast::Num(_) | Ast::Ident(_) => 1,
        Ast::Call(_, args) => 1 + args.iter().map(nodes).sum::<usize>(),
        Ast::Neg(a) => 1 + nodes(a),
        Ast::Bin(_, a, b) => 1 + nodes(a) + nodes(b),
    }
}

fn identifiers(ast: &Ast, each: &mut impl FnMut(&str)) {
    match ast {
        Ast::Num(_) => {}
        Ast::Ident(n) => each(n),
        Ast::Call(_, args) => args.iter().for_each(|a| identifiers(a, each)),
        Ast::Neg(a) => identifiers(a, each),
        Ast::Bin(_, a, b) => {
            identifiers(a, each);
            identifiers(b, each);
        }
    }
}

/// The step of the one change `body` makes to `var`, where that change is `var += STEP`,
/// `var++` or `++var` and `body` writes `var` nowhere else: a `while` loop's counter.
pub(super) fn only_increment(body: &str, var: &str) -> Option<String> {
    let mut step = None;
    for at in word_positions(body, var) {
        let end = at + var.len();
        if !writes_at(body, at, end) {
            continue;
        }
        if step.is_some() {
            return None;
        }
        let after = body[end..].trim_start();
        let before = body[..at].trim_end();
        step = Some(if after.starts_with("++") || before.ends_with("++") {
            "1".to_string()
        } else {
            let rest = after.strip_prefix("+=")?;
            let close = declaration_end(rest, 0)?;
            rest[..close].to_string()
        });
    }
    step
}

/// Each `while` loop of `body`: its condition's text and the byte just past the `)` that
/// closes it, where the statement it controls starts (after a `do … while`, the `;`).
pub(super) fn while_loops(body: &str) -> Vec<(String, usize)> {
    word_positions(body, "while")
        .filter_map(|at| {
            let open = skip_space(body, at + "while".len());
            if body.as_bytes().get(open) != Some(&b'(') {
                return None;
            }
            let close = matching(body, open)?;
            Some((body[open + 1..close - 1].to_string(), close))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(locals: &[Local]) -> Vec<&str> {
        locals.iter().map(|l| l.name.as_str()).collect()
    }

    #[test]
    fn a_local_written_once_is_followed_with_the_locals_before_it() {
        let body = "uint tid = LID0; uint grid = 2u * width, half = grid / 2; uint i = tid; \
                    while (i < n) { s += a[i]; i += grid; } uint twice = 1; twice = 2; \
                    for (uint t = 0; t < n; t++) { uint p = half + t * n; x[p] = 0; }";
        let declared = declarations(body);
        let all: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(all, ["tid", "grid", "half", "i", "twice", "t", "p"]);
        let locals = locals(body, &declared);
        // i and t change, twice is assigned again.
        assert_eq!(names(&locals), ["tid", "grid", "half", "p"]);
        let half = &locals[2];
        assert_eq!(half.value, parse_expr("2 * width / 2").unwrap());
        assert!(half.varying.is_empty());
        // p holds only inside t's loop.
        assert_eq!(locals[3].varying, ["t"]);
        // A while loop's statement: its counter's one change.
        let step = |statement: &str, var: &str| only_increment(statement, var);
        assert_eq!(
            step("{ s += a[i]; i += grid; }", "i").as_deref(),
            Some(" grid")
        );
        assert_eq!(step("{ ++t; s += a[t]; }", "t").as_deref(), Some("1"));
        assert_eq!(step("{ t++; if (t > 2) t = 0; }", "t"), None);
        assert_eq!(step("{ i -= 4; }", "i"), None);
        // The declaration writes i too: over the whole body, no one change.
        assert_eq!(step(body, "i"), None);
    }

    #[test]
    fn casts_parameters_and_a_chain_of_locals_are_bounded() {
        // A cast is no declaration; neither is a list that a bracket closes.
        assert!(declarations("x = (uint)(n * 2); f(uint a, uint b)").is_empty());
        // Each local twice the one before: past the node budget the chain stops being read.
        let mut body = String::from("uint v0 = n;");
        for k in 1..40 {
            body.push_str(&format!(" uint v{k} = v{} + v{};", k - 1, k - 1));
        }
        let locals = locals(&body, &declarations(&body));
        // Those past the budget are not followed; those after them stop at their name.
        assert!(locals.len() < 40, "{}", locals.len());
        assert!(locals.iter().all(|l| nodes(&l.value) <= MAX_NODES));
        let read = inline(&parse_expr("v39 * v39").unwrap(), &locals, |_| true);
        assert!(nodes(&read) <= MAX_NODES, "{}", nodes(&read));
        // Generated text: type words without end, thousands of declarations, one of them
        // longer than the reader follows. Read, none followed.
        let words = "uint ".repeat(20_000);
        assert!(declarations(&words).is_empty());
        let many: String = (0..5_000).map(|k| format!("uint a{k} = {k}; ")).collect();
        let declared = declarations(&many);
        assert_eq!(declared.len(), 5_000);
        assert!(super::locals(&many, &declared).is_empty());
        assert_eq!(written_once(&many, &declared, "a7"), None);
        let long = format!("uint x = {}1; x", "1 + ".repeat(2_000));
        assert!(declarations(&long).is_empty());
    }
}
