//! What a kernel's source shows of how its work items reach its buffers, so that a spec
//! whose launch declares neither can be told what to declare (docs/spec-format.md, `walks`
//! and `gathers`):
//!
//! - **walks**: the loops in which each work item steps through a buffer a stride apart (a
//!   column of a column-major matrix, a grid-stride loop): `for` loops whose counter advances
//!   by a constant, a kernel parameter or the launch's width, `while (i < END)` loops whose
//!   statement advances `i` so (`i += grid;`) and changes it nowhere else, and subscripts of
//!   a pointer parameter linear in that counter. Integer locals written once are read
//!   through (`locals.rs`). A stride it cannot put in the kernel's parameters (a work item's
//!   index, a local assigned twice) or one under [`MIN_STRIDE`] elements is no walk it
//!   reports.
//! - **gathers**: reads of a buffer at an index another buffer holds (`x[col[k]]`).
//!
//! A reader, not a compiler: where it does not understand a loop or a subscript it says
//! nothing.

mod c_text;
mod locals;

use super::compiled::Code;

use c_text::{
    is_word, kernel_parts, matching, normalise, numeric_defines, parse_expr, skip_space, split_top,
    statement_end, strip_comments, word_positions, writes_at, Ast, Param, TYPE_WORDS,
};
use locals::{
    declarations, inline, locals, only_increment, while_loops, written_once, Declaration, Local,
};

/// Elements a step must reach, where the stride is a number, for the step to count as a
/// walk: a quarter of a 4 KiB page of floats. Smaller literal strides stay within a few
/// lines (an unrolled row, a vector's components); a stride written as a parameter grows
/// with the problem and always counts.
pub const MIN_STRIDE: f64 = 256.0;

/// A quantity in the kernel's own terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Sym {
    /// A number.
    Num(f64),
    /// The kernel's scalar parameter at this position (from 0).
    Param(usize),
    /// The launch's global size in this dimension.
    Global(usize),
    /// `a + b`.
    Add(Box<Sym>, Box<Sym>),
    /// `a − b`.
    Sub(Box<Sym>, Box<Sym>),
    /// `a · b`.
    Mul(Box<Sym>, Box<Sym>),
    /// `a / b`.
    Div(Box<Sym>, Box<Sym>),
    /// `⌊a⌋`.
    Floor(Box<Sym>),
}

impl Sym {
    fn bin(make: fn(Box<Sym>, Box<Sym>) -> Sym, a: Sym, b: Sym) -> Sym {
        make(Box::new(a), Box::new(b))
    }

    /// The quantity as a spec's compiled expression, each parameter `param(position)` and
    /// each global size `global(dimension)`; `None` where either has none.
    pub fn to_code(
        &self,
        param: &dyn Fn(usize) -> Option<Code>,
        global: &dyn Fn(usize) -> Option<Code>,
    ) -> Option<Code> {
        let two = |a: &Sym, b: &Sym| Some((a.to_code(param, global)?, b.to_code(param, global)?));
        Some(match self {
            Sym::Num(v) => Code::Num(*v),
            Sym::Param(i) => param(*i)?,
            Sym::Global(d) => global(*d)?,
            Sym::Add(a, b) => two(a, b).map(|(a, b)| Code::sum(a, b))?,
            Sym::Sub(a, b) => two(a, b).map(|(a, b)| Code::difference(a, b))?,
            Sym::Mul(a, b) => two(a, b).map(|(a, b)| Code::product(a, b))?,
            Sym::Div(a, b) => two(a, b).map(|(a, b)| Code::quotient(a, b))?,
            Sym::Floor(a) => Code::floor(a.to_code(param, global)?),
        })
    }

    fn neg(a: Sym) -> Sym {
        match a {
            Sym::Num(v) => Sym::Num(-v),
            a => Sym::bin(Sym::Mul, Sym::Num(-1.0), a),
        }
    }

    fn times(a: Sym, b: Sym) -> Sym {
        match (a, b) {
            (Sym::Num(x), Sym::Num(y)) => Sym::Num(x * y),
            (Sym::Num(1.0), b) => b,
            (a, Sym::Num(1.0)) => a,
            // 512 · (width / 256) = 2 · width, as a grid-stride step is often written.
            (Sym::Num(x), Sym::Div(a, d)) | (Sym::Div(a, d), Sym::Num(x)) => match *d {
                Sym::Num(y) if y != 0.0 && (x / y).fract() == 0.0 => {
                    Sym::times(Sym::Num(x / y), *a)
                }
                d => Sym::bin(Sym::Mul, Sym::Num(x), Sym::bin(Sym::Div, *a, d)),
            },
            (a, b) => Sym::bin(Sym::Mul, a, b),
        }
    }

    fn plus(a: Sym, b: Sym) -> Sym {
        match (a, b) {
            (Sym::Num(x), Sym::Num(y)) => Sym::Num(x + y),
            (Sym::Num(0.0), b) => b,
            (a, Sym::Num(0.0)) => a,
            (a, b) => Sym::bin(Sym::Add, a, b),
        }
    }

    fn over(a: Sym, b: Sym) -> Sym {
        match (a, b) {
            (Sym::Num(x), Sym::Num(y)) if y != 0.0 => Sym::Num(x / y),
            (a, Sym::Num(1.0)) => a,
            (a, b) => Sym::bin(Sym::Div, a, b),
        }
    }

    fn floor(a: Sym) -> Sym {
        match a {
            Sym::Num(x) => Sym::Num(x.floor()),
            a => Sym::Floor(Box::new(a)),
        }
    }

    fn minus(a: Sym, b: Sym) -> Sym {
        match (a, b) {
            (Sym::Num(x), Sym::Num(y)) => Sym::Num(x - y),
            (a, Sym::Num(0.0)) => a,
            (a, b) => Sym::bin(Sym::Sub, a, b),
        }
    }
}

/// One walk found in a kernel's source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceWalk {
    /// The walked pointer parameter's position (from 0).
    pub param: usize,
    /// Elements from one step to the next.
    pub stride: Sym,
    /// Steps of one work item's walk (the loop's trip count, times its enclosing loops'),
    /// where the loops' bounds are in the kernel's parameters.
    pub steps: Option<Sym>,
    /// The subscript and its loop as written, for messages.
    pub excerpt: String,
}

/// The walks of kernel `kernel` in `source` (the common dialect, OpenCL C or CUDA), one per
/// walked parameter (its first walking subscript), in the order of the parameters.
pub fn source_walks(source: &str, kernel: &str) -> Vec<SourceWalk> {
    let text = normalise(&strip_comments(source));
    let defines = numeric_defines(&text);
    let Some((params, body)) = kernel_parts(&text, kernel) else {
        return Vec::new();
    };
    let declared = declarations(&body);
    let locals = locals(&body, &declared);
    let loops = counted_loops(&body, &params, &defines, &declared, &locals);
    let mut walks: Vec<SourceWalk> = Vec::new();
    for (at, param, index) in subscripts(&body, &params) {
        if walks.iter().any(|w| w.param == param) {
            continue;
        }
        let Some(index_ast) = parse_expr(&index) else {
            continue;
        };
        // The innermost enclosing loop along whose counter the subscript walks.
        let enclosing: Vec<&CountedLoop> = loops
            .iter()
            .filter(|l| l.body.0 <= at && at < l.body.1)
            .collect();
        // The index read through its locals: those that hold here (a local that depends on
        // a loop's counter, inside that loop, the local's declaration with it).
        let index_ast = inline(&index_ast, &locals, |l| {
            l.varying.iter().all(|v| {
                enclosing
                    .iter()
                    .any(|e| &e.var == v && e.body.0 <= l.at && l.at < e.body.1)
            })
        });
        let mut found = None;
        for l in enclosing.iter().rev() {
            let Ok(Some(coef)) = coefficient(&index_ast, &l.var, &params, &defines) else {
                continue;
            };
            let stride = Sym::times(coef, l.step.clone());
            if matches!(stride, Sym::Num(v) if v.abs() < MIN_STRIDE) {
                continue;
            }
            found = Some((*l, stride));
            break;
        }
        let Some((l, stride)) = found else { continue };
        // The walk repeats once per step of every loop around its own.
        let steps = l.trips.clone().and_then(|own| {
            enclosing
                .iter()
                .filter(|o| o.body.0 < l.body.0)
                .try_fold(own, |acc, o| Some(Sym::times(o.trips.clone()?, acc)))
        });
        walks.push(SourceWalk {
            param,
            stride,
            steps,
            excerpt: format!("{}[{}] in {}", params[param].name, index.trim(), l.header),
        });
    }
    walks.sort_by_key(|w| w.param);
    walks
}

/// A kernel parameter as its signature declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelParam {
    /// Its name.
    pub name: String,
    /// A pointer (a buffer), else a scalar.
    pub pointer: bool,
    /// Declared `const` (a buffer the kernel only reads).
    pub constant: bool,
    /// The spec's element type for its type (`f32`, `f64`, `u32`, `i32`), where one fits.
    pub element: Option<&'static str>,
    /// The declaration as written, without the name.
    pub declaration: String,
}

/// The kernels `source` defines, in order.
pub fn kernel_names(source: &str) -> Vec<String> {
    c_text::kernel_names(&strip_comments(source))
}

/// Kernel `kernel`'s parameters in `source`, where it defines it.
pub fn kernel_params(source: &str, kernel: &str) -> Option<Vec<KernelParam>> {
    let (params, _) = kernel_parts(&strip_comments(source), kernel)?;
    Some(
        params
            .into_iter()
            .map(|p| {
                let words: Vec<&str> = p
                    .declaration
                    .split(|c: char| !is_word(c))
                    .filter(|w| !w.is_empty())
                    .collect();
                let has = |w: &str| words.contains(&w);
                let element = if ["char", "short", "long", "half", "size_t"]
                    .iter()
                    .any(|w| has(w))
                {
                    None
                } else if has("double") {
                    Some("f64")
                } else if has("float") {
                    Some("f32")
                } else if has("uint") || has("unsigned") {
                    Some("u32")
                } else if has("int") {
                    Some("i32")
                } else {
                    None
                };
                KernelParam {
                    constant: has("const"),
                    element,
                    name: p.name,
                    pointer: p.pointer,
                    declaration: p.declaration,
                }
            })
            .collect(),
    )
}

/// The pointer parameters of kernel `kernel` in `source` that it only writes, in order: each
/// mention of one is a subscript assigned with `=` (no compound assignment, increment or
/// address taken, no read, no pointer arithmetic), as an output array's.
pub fn write_only_params(source: &str, kernel: &str) -> Vec<usize> {
    let text = normalise(&strip_comments(source));
    let Some((params, body)) = kernel_parts(&text, kernel) else {
        return Vec::new();
    };
    let assigned_only = |name: &str| {
        let mut mentioned = false;
        for at in word_positions(&body, name) {
            let open = skip_space(&body, at + name.len());
            if body.as_bytes().get(open) != Some(&b'[') {
                return false;
            }
            let Some(close) = matching(&body, open) else {
                return false;
            };
            let after = body[close..].trim_start();
            let plain = after.starts_with('=') && !after.starts_with("==");
            let before = body[..at].trim_end();
            if !plain || before.ends_with('&') || before.ends_with("++") || before.ends_with("--") {
                return false;
            }
            mentioned = true;
        }
        mentioned
    };
    (0..params.len())
        .filter(|&i| params[i].pointer && assigned_only(&params[i].name))
        .collect()
}

/// A read of a buffer at an index another buffer holds (`x[col[k]]`), found in a kernel's
/// source.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceGather {
    /// The gathered pointer parameter's position (from 0).
    pub param: usize,
    /// The position of the pointer parameter whose element is the index.
    pub index_param: usize,
    /// The subscript as written, for messages.
    pub excerpt: String,
}

/// The reads of kernel `kernel` in `source` at indices another of its buffers holds, one per
/// gathered parameter (its first such read), in the order of the parameters. A subscript
/// written to (`x[col[k]] = …`, `+=`, `++`) or whose address is taken (an atomic's operand)
/// is no read. An index held in a local first is followed where the subscript is that local
/// alone or with a number added or taken away (`uint w = col[e]; … d[w]`, `prefix[k - 1]`)
/// and the local is written only where it is declared.
pub fn source_gathers(source: &str, kernel: &str) -> Vec<SourceGather> {
    let text = normalise(&strip_comments(source));
    let Some((params, body)) = kernel_parts(&text, kernel) else {
        return Vec::new();
    };
    let declared = declarations(&body);
    // The index as written, or what the local it names holds.
    let held = |index: &str| -> Option<String> {
        let ast = parse_expr(index)?;
        let name = match &ast {
            Ast::Ident(n) => n,
            Ast::Bin('+' | '-', a, b) => match (a.as_ref(), b.as_ref()) {
                (Ast::Ident(n), Ast::Num(_)) => n,
                _ => return None,
            },
            _ => return None,
        };
        written_once(&body, &declared, name).map(str::to_string)
    };
    let mut gathers: Vec<SourceGather> = Vec::new();
    for (at, param, index) in subscripts(&body, &params) {
        if gathers.iter().any(|g| g.param == param) {
            continue;
        }
        let inner_of = |text: &str| subscripts(text, &params).into_iter().find(|s| s.1 != param);
        let found = match inner_of(&index) {
            // A segment's base plus a counter reads the segment's elements in order.
            Some(_) if segment_scan(&index, &body) => None,
            Some(inner) => Some((inner, String::new())),
            None => held(&index).and_then(|h| {
                let local: String = index.trim().chars().take_while(|&c| is_word(c)).collect();
                Some((inner_of(&h)?, format!(", {local} = {h}")))
            }),
        };
        let Some((inner, via)) = found else {
            continue;
        };
        let open = skip_space(&body, at + params[param].name.len());
        let Some(close) = matching(&body, open) else {
            continue;
        };
        if writes_at(&body, at, close) {
            continue;
        }
        gathers.push(SourceGather {
            param,
            index_param: inner.1,
            excerpt: format!("{}[{}]{via}", params[param].name, index.trim()),
        });
    }
    gathers.sort_by_key(|g| g.param);
    gathers
}

/// Whether a subscript's `index` is another buffer's value plus a variable `body` changes
/// more than once (a loop's counter), `offset[b] + j`: a segment's elements in order, which
/// stream, not a gather.
fn segment_scan(index: &str, body: &str) -> bool {
    let Some(Ast::Bin('+', a, b)) = parse_expr(index) else {
        return false;
    };
    let counter = |x: &Ast| matches!(x, Ast::Ident(n) if locals::writes(body, n) > 1);
    match (a.as_ref(), b.as_ref()) {
        (Ast::Call(..), x) | (x, Ast::Call(..)) => counter(x),
        _ => false,
    }
}

/// A `for` loop whose counter advances by a known step.
#[derive(Debug, Clone)]
struct CountedLoop {
    var: String,
    step: Sym,
    /// Its trip count, where its bounds are known.
    trips: Option<Sym>,
    /// Its body's byte range in the kernel's body.
    body: (usize, usize),
    header: String,
}

/// What the reader knows of a kernel's names: its parameters, the source's numeric
/// `#define`s and the locals it follows.
struct Names<'a> {
    params: &'a [Param],
    defines: &'a [(String, f64)],
    locals: &'a [Local],
}

impl Names<'_> {
    /// `ast` read through the locals that hold everywhere (those that depend on no variable
    /// the kernel changes).
    fn invariant(&self, ast: &Ast) -> Ast {
        inline(ast, self.locals, |l| l.varying.is_empty())
    }

    /// `text` as a quantity of the kernel's parameters, read through those locals.
    fn value_of(&self, text: &str) -> Option<Sym> {
        value(
            &self.invariant(&parse_expr(text)?),
            self.params,
            self.defines,
        )
    }
}

/// Every `for` loop of `body` with a counter that advances by a known step, and every
/// `while (i < END)` loop whose statement advances `i` by one (`i += STEP`, `i++`) and
/// writes it nowhere else.
fn counted_loops(
    body: &str,
    params: &[Param],
    defines: &[(String, f64)],
    declared: &[Declaration],
    locals: &[Local],
) -> Vec<CountedLoop> {
    let names = Names {
        params,
        defines,
        locals,
    };
    let mut loops = Vec::new();
    for (cond, close) in while_loops(body) {
        let start = skip_space(body, close);
        let Some(end) = statement_end(body, start) else {
            continue;
        };
        let var: String = cond
            .trim_start()
            .chars()
            .take_while(|&c| is_word(c))
            .collect();
        if var.is_empty() {
            continue;
        }
        let Some(step) = only_increment(&body[start..end], &var).and_then(|s| names.value_of(&s))
        else {
            continue;
        };
        // Its first value: its one declaration's, where it has one.
        let mut inits = declared.iter().filter(|d| d.name == var);
        let first = match (inits.next(), inits.next()) {
            (Some(d), None) => d.init.as_ref().map(|a| names.invariant(a)),
            _ => None,
        };
        let trips = trip_count(&cond, &var, first.as_ref(), &step, &names);
        loops.push(CountedLoop {
            var,
            step,
            trips,
            body: (start, end),
            header: format!(
                "while ({})",
                cond.split_whitespace().collect::<Vec<_>>().join(" ")
            ),
        });
    }
    for at in word_positions(body, "for") {
        let open = skip_space(body, at + 3);
        if body.as_bytes().get(open) != Some(&b'(') {
            continue;
        }
        let Some(close) = matching(body, open) else {
            continue;
        };
        let header = &body[open + 1..close - 1];
        let start = skip_space(body, close);
        let Some(end) = statement_end(body, start) else {
            continue;
        };
        if let Some(l) = counted(header, &names, (start, end)) {
            loops.push(l);
        }
    }
    loops
}

/// A loop header `init; cond; step` as a counted loop.
fn counted(header: &str, names: &Names, body: (usize, usize)) -> Option<CountedLoop> {
    let parts = split_top(header, ';');
    let [init, cond, inc] = parts[..] else {
        return None;
    };
    let inc: String = inc.chars().filter(|c| !c.is_whitespace()).collect();
    let (var, step_text) = if let Some(v) = inc.strip_suffix("++").or(inc.strip_prefix("++")) {
        (v.to_string(), "1".to_string())
    } else if let Some((v, s)) = inc.split_once("+=") {
        (v.to_string(), s.to_string())
    } else {
        return None;
    };
    if !var.chars().all(is_word) || var.is_empty() {
        return None;
    }
    let step = names.value_of(&step_text)?;
    // The first value: `[type] var = start`, or nothing written (unknown).
    let init = init.trim();
    let mut words = init;
    while let Some(w) = TYPE_WORDS
        .iter()
        .find(|w| words.starts_with(*w) && !words[w.len()..].starts_with(is_word))
    {
        words = words[w.len()..].trim_start();
    }
    let start = words
        .strip_prefix(var.as_str())
        .and_then(|r| r.trim_start().strip_prefix('='))
        .and_then(parse_expr);
    let start = start.map(|a| names.invariant(&a));
    let trips = trip_count(cond, &var, start.as_ref(), &step, names);
    Some(CountedLoop {
        var,
        step,
        trips,
        body,
        header: format!(
            "for ({})",
            header.split_whitespace().collect::<Vec<_>>().join(" ")
        ),
    })
}

/// How many times a loop runs: `(end − start) / step` steps, `⌊end / step⌋` where the
/// start is a work item's own (a grid-stride loop from its index).
fn trip_count(
    cond: &str,
    var: &str,
    start: Option<&Ast>,
    step: &Sym,
    names: &Names,
) -> Option<Sym> {
    let cond = cond.trim();
    let (end, inclusive) = if let Some(r) = cond.strip_prefix(var) {
        let r = r.trim_start();
        if let Some(e) = r.strip_prefix("<=") {
            (e, true)
        } else {
            (r.strip_prefix('<')?, false)
        }
    } else {
        return None;
    };
    if end.contains("&&") || end.contains("||") || end.contains('?') {
        return None;
    }
    let end = names.value_of(end)?;
    let end = if inclusive {
        Sym::plus(end, Sym::Num(1.0))
    } else {
        end
    };
    let known_start = start.and_then(|s| value(s, names.params, names.defines));
    match (known_start, step) {
        (Some(s), Sym::Num(one)) if *one == 1.0 => Some(Sym::minus(end, s)),
        (Some(s), step) => Some(Sym::floor(Sym::over(Sym::minus(end, s), step.clone()))),
        (None, Sym::Num(one)) if *one == 1.0 => None,
        (None, step) => Some(Sym::floor(Sym::over(end, step.clone()))),
    }
}

/// Every subscript of a pointer parameter in `body`: its position, the parameter and the
/// index's text.
fn subscripts(body: &str, params: &[Param]) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    for (p, param) in params.iter().enumerate().filter(|(_, p)| p.pointer) {
        for at in word_positions(body, &param.name) {
            let open = skip_space(body, at + param.name.len());
            if body.as_bytes().get(open) != Some(&b'[') {
                continue;
            }
            if let Some(close) = matching(body, open) {
                found.push((at, p, body[open + 1..close - 1].to_string()));
            }
        }
    }
    found.sort_by_key(|f| f.0);
    found
}

/// An expression as a quantity of the kernel's parameters, where it is one.
fn value(ast: &Ast, params: &[Param], defines: &[(String, f64)]) -> Option<Sym> {
    Some(match ast {
        Ast::Num(v) => Sym::Num(*v),
        Ast::Ident(name) if name == "GSIZE0" => Sym::Global(0),
        Ast::Ident(name) => {
            if let Some(p) = params.iter().position(|p| &p.name == name && !p.pointer) {
                Sym::Param(p)
            } else {
                Sym::Num(defines.iter().find(|d| &d.0 == name)?.1)
            }
        }
        Ast::Call(f, args) if f == "get_global_size" => match args[..] {
            [Ast::Num(d)] => Sym::Global(d as usize),
            _ => return None,
        },
        Ast::Call(..) => return None,
        Ast::Neg(a) => Sym::neg(value(a, params, defines)?),
        Ast::Bin(op, a, b) => {
            let (a, b) = (value(a, params, defines)?, value(b, params, defines)?);
            match op {
                '+' => Sym::plus(a, b),
                '-' => Sym::minus(a, b),
                '*' => Sym::times(a, b),
                '/' => Sym::over(a, b),
                _ => return None,
            }
        }
    })
}

fn mentions(ast: &Ast, var: &str) -> bool {
    match ast {
        Ast::Num(_) => false,
        Ast::Ident(n) => n == var,
        Ast::Call(_, args) => args.iter().any(|a| mentions(a, var)),
        Ast::Neg(a) => mentions(a, var),
        Ast::Bin(_, a, b) => mentions(a, var) || mentions(b, var),
    }
}

/// The coefficient of `var` in `ast`: `Ok(None)` where it does not appear, `Err` where the
/// expression is not linear in it or its coefficient is no quantity of the parameters.
fn coefficient(
    ast: &Ast,
    var: &str,
    params: &[Param],
    defines: &[(String, f64)],
) -> Result<Option<Sym>, ()> {
    let c = |a: &Ast| coefficient(a, var, params, defines);
    match ast {
        Ast::Num(_) => Ok(None),
        Ast::Ident(n) => Ok((n == var).then_some(Sym::Num(1.0))),
        Ast::Call(..) => {
            if mentions(ast, var) {
                Err(())
            } else {
                Ok(None)
            }
        }
        Ast::Neg(a) => Ok(c(a)?.map(Sym::neg)),
        Ast::Bin(op @ ('+' | '-'), a, b) => Ok(match (c(a)?, c(b)?) {
            (None, None) => None,
            (Some(x), None) => Some(x),
            (None, Some(y)) if *op == '+' => Some(y),
            (None, Some(y)) => Some(Sym::neg(y)),
            (Some(x), Some(y)) if *op == '+' => Some(Sym::plus(x, y)),
            (Some(x), Some(y)) => Some(Sym::minus(x, y)),
        }),
        Ast::Bin('*', a, b) => match (c(a)?, c(b)?) {
            (None, None) => Ok(None),
            (Some(x), None) => Ok(Some(Sym::times(x, value(b, params, defines).ok_or(())?))),
            (None, Some(y)) => Ok(Some(Sym::times(value(a, params, defines).ok_or(())?, y))),
            (Some(_), Some(_)) => Err(()),
        },
        Ast::Bin(_, a, b) => {
            if mentions(a, var) || mentions(b, var) {
                Err(())
            } else {
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests;
