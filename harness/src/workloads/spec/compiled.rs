//! Expressions compiled once against the names a place in the spec can see: every variable
//! becomes a slot in one array of values and every buffer read an index into the list of
//! buffers, so that evaluating an initial-data or check formula for each of millions of
//! elements costs a walk over a small tree with no name lookups. A name the place cannot
//! see is refused when the spec is loaded, naming exactly the names it can see.

use super::expr::Expr;

/// The names visible at one place of a spec, each with its slot in the values array.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    vars: Vec<(String, usize)>,
    buffers: Vec<(String, usize)>,
}

impl Scope {
    /// A scope seeing `vars` (name, slot) and no buffers.
    pub fn new(vars: Vec<(String, usize)>) -> Self {
        Scope {
            vars,
            buffers: Vec::new(),
        }
    }

    /// This scope with one more variable.
    pub fn with_var(&self, name: &str, slot: usize) -> Self {
        let mut s = self.clone();
        s.vars.push((name.to_string(), slot));
        s
    }

    /// This scope with buffer reads `name[index]` allowed for the given (name, buffer index)
    /// pairs.
    pub fn with_buffers(&self, buffers: Vec<(String, usize)>) -> Self {
        let mut s = self.clone();
        s.buffers = buffers;
        s
    }

    /// The slot of a visible variable.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.vars.iter().rev().find(|(n, _)| n == name).map(|p| p.1)
    }

    /// The visible variables' names, in order, for messages.
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.vars.iter().map(|(n, _)| n.as_str()).collect();
        names.join(", ")
    }
}

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// A built-in function.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Func {
    Min,
    Max,
    Pow,
    Sqrt,
    Sin,
    Cos,
    Abs,
    Floor,
    Choose,
}

/// A compiled expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Code {
    /// A number.
    Num(f64),
    /// A variable's slot.
    Var(usize),
    /// `-e`.
    Neg(Box<Code>),
    /// A binary operation.
    Bin(OpCode, Box<Code>, Box<Code>),
    /// A function of one argument.
    Call1(FuncCode, Box<Code>),
    /// A function of two arguments.
    Call2(FuncCode, Box<Code>, Box<Code>),
    /// A buffer's initial value at an index: the buffer's position, its name for messages.
    Index(usize, String, Box<Code>),
}

/// A compiled binary operator (opaque).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpCode(Op);

/// A compiled function (opaque).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FuncCode(Func);

/// Compile `expr` against `scope`; an unknown variable or buffer is an error naming what
/// the scope sees.
///
/// ```
/// use harness::workloads::spec::compiled::{compile, Scope};
/// use harness::workloads::spec::expr::parse;
/// let scope = Scope::new(vec![("N".into(), 0), ("k".into(), 1)]);
/// let code = compile(&parse("N * k + 1").unwrap(), &scope).unwrap();
/// assert_eq!(code.eval(&[3.0, 4.0], &[]).unwrap(), 13.0);
/// assert!(compile(&parse("j").unwrap(), &scope).unwrap_err().contains("known here: N, k"));
/// ```
pub fn compile(expr: &Expr, scope: &Scope) -> Result<Code, String> {
    Ok(match expr {
        Expr::Num(v) => Code::Num(*v),
        Expr::Var(name) => {
            Code::Var(scope.slot(name).ok_or_else(|| {
                format!("unknown variable '{name}' (known here: {})", scope.names())
            })?)
        }
        Expr::Neg(e) => Code::Neg(Box::new(compile(e, scope)?)),
        Expr::Bin(op, a, b) => {
            let op = match op {
                '+' => Op::Add,
                '-' => Op::Sub,
                '*' => Op::Mul,
                '/' => Op::Div,
                _ => Op::Rem,
            };
            Code::Bin(
                OpCode(op),
                Box::new(compile(a, scope)?),
                Box::new(compile(b, scope)?),
            )
        }
        Expr::Call(f, args) => {
            let func = match f.as_str() {
                "min" => Func::Min,
                "max" => Func::Max,
                "pow" => Func::Pow,
                "sqrt" => Func::Sqrt,
                "sin" => Func::Sin,
                "cos" => Func::Cos,
                "abs" => Func::Abs,
                "choose" => Func::Choose,
                _ => Func::Floor,
            };
            let mut compiled = args
                .iter()
                .map(|a| compile(a, scope))
                .collect::<Result<Vec<_>, _>>()?;
            match compiled.len() {
                1 => Code::Call1(FuncCode(func), Box::new(compiled.remove(0))),
                _ => {
                    let b = compiled.remove(1);
                    Code::Call2(FuncCode(func), Box::new(compiled.remove(0)), Box::new(b))
                }
            }
        }
        Expr::Index(name, index) => {
            let Some(&(_, buffer)) = scope.buffers.iter().find(|(n, _)| n == name) else {
                return Err(if scope.buffers.is_empty() {
                    format!("'{name}[…]' reads a buffer, which only a check formula may do")
                } else {
                    let known: Vec<&str> = scope.buffers.iter().map(|b| b.0.as_str()).collect();
                    format!(
                        "unknown buffer '{name}' (buffers with initial contents: {})",
                        known.join(", ")
                    )
                });
            };
            Code::Index(buffer, name.clone(), Box::new(compile(index, scope)?))
        }
    })
}

/// A function's name as a spec writes it.
fn func_name(f: Func) -> &'static str {
    match f {
        Func::Min => "min",
        Func::Max => "max",
        Func::Pow => "pow",
        Func::Sqrt => "sqrt",
        Func::Sin => "sin",
        Func::Cos => "cos",
        Func::Abs => "abs",
        Func::Floor => "floor",
        Func::Choose => "choose",
    }
}

/// The binomial coefficient C(n, k) by the product formula (0 outside 0 ≤ k ≤ n). Each of
/// the min(k, n − k) factors is at least 2, so past 1024 of them the value is beyond any
/// f64: infinity at once, not a loop of 10^14 steps.
fn choose(n: f64, k: f64) -> f64 {
    if k.is_nan() || n.is_nan() || k < 0.0 || k > n {
        return 0.0;
    }
    let k = k.min(n - k);
    if k > 1100.0 {
        return f64::INFINITY;
    }
    let k = k as u64;
    (1..=k).fold(1.0, |acc, j| acc * (n - k as f64 + j as f64) / j as f64)
}

/// Elements one batch of [`Code::eval_range`] evaluates together: its scratch arrays stay in
/// the core's first cache level, a few KiB each.
const BATCH: usize = 256;

/// Where one batch of [`Code::eval_range`] evaluates: the variables, the element's slot, the
/// first element's index, the buffers.
struct Batch<'a> {
    vars: &'a [f64],
    slot: usize,
    first: usize,
    buffers: &'a [&'a [f64]],
}

/// What one part of an expression is over a batch.
enum Values {
    /// The same value for every element: the part does not read the element's slot.
    One(f64),
    /// One value per element, in the batch's array.
    Many,
}

/// A function of two operands over a batch: the first into `out`, the second into a scratch
/// array from `pool`, combined element by element in that order (`f(a, b)`, as
/// [`Code::eval`] combines them).
fn pair(
    at: &Batch<'_>,
    out: &mut [f64],
    pool: &mut Vec<Vec<f64>>,
    a: &Code,
    b: &Code,
    f: impl Fn(f64, f64) -> f64,
) -> Result<Values, String> {
    let first = a.batch(at, out, pool)?;
    let mut scratch = pool.pop().unwrap_or_default();
    scratch.resize(out.len(), 0.0);
    let second = b.batch(at, &mut scratch, pool);
    let combined = second.map(|second| match (first, second) {
        (Values::One(x), Values::One(y)) => Values::One(f(x, y)),
        (Values::Many, Values::One(y)) => {
            out.iter_mut().for_each(|v| *v = f(*v, y));
            Values::Many
        }
        (Values::One(x), Values::Many) => {
            out.iter_mut()
                .zip(&scratch)
                .for_each(|(v, &y)| *v = f(x, y));
            Values::Many
        }
        (Values::Many, Values::Many) => {
            out.iter_mut()
                .zip(&scratch)
                .for_each(|(v, &y)| *v = f(*v, y));
            Values::Many
        }
    });
    pool.push(scratch);
    combined
}

/// A buffer's initial value at index `i`; an index that is no whole number inside the buffer
/// is an error naming it.
fn read(data: &[f64], name: &str, i: f64) -> Result<f64, String> {
    if i < 0.0 || i.fract() != 0.0 || i as usize >= data.len() {
        return Err(format!(
            "{name}[{i}] is outside the buffer (length {})",
            data.len()
        ));
    }
    Ok(data[i as usize])
}

impl Op {
    fn apply(self, x: f64, y: f64) -> f64 {
        match self {
            Op::Add => x + y,
            Op::Sub => x - y,
            Op::Mul => x * y,
            Op::Div => x / y,
            Op::Rem => remainder(x, y),
        }
    }
}

/// The largest magnitude below which every f64 is exactly an `i64` and back (2^53).
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// `x % y` (the remainder with x's sign, `fmod`), bit for bit, by integer division where both
/// are whole numbers of magnitude below 2^53: index formulas are mostly such remainders
/// (`i % N`), and the f64 remainder's generic routine took a quarter of an initial-data
/// formula's time.
fn remainder(x: f64, y: f64) -> f64 {
    let whole = |v: f64| v.abs() < EXACT_INTEGERS && v as i64 as f64 == v;
    if x != 0.0 && y != 0.0 && whole(x) && whole(y) {
        let r = (x as i64) % (y as i64);
        if r == 0 {
            0.0f64.copysign(x)
        } else {
            r as f64
        }
    } else {
        x % y
    }
}

/// `x.floor()`, bit for bit, through a conversion to `i64` where |x| is below 2^53 and not
/// zero (a library call otherwise on x86-64's baseline, a sixth of a formula's time).
fn floor(x: f64) -> f64 {
    if x != 0.0 && x.abs() < EXACT_INTEGERS {
        let t = x as i64 as f64;
        if t > x {
            t - 1.0
        } else {
            t
        }
    } else {
        x.floor()
    }
}

impl Func {
    /// A function of one argument (every other is `floor`).
    fn apply1(self, x: f64) -> f64 {
        match self {
            Func::Sqrt => x.sqrt(),
            Func::Sin => x.sin(),
            Func::Cos => x.cos(),
            Func::Abs => x.abs(),
            _ => floor(x),
        }
    }

    /// A function of two arguments (every other is `choose`).
    fn apply2(self, x: f64, y: f64) -> f64 {
        match self {
            Func::Min => x.min(y),
            Func::Max => x.max(y),
            Func::Pow => x.powf(y),
            _ => choose(x, y),
        }
    }
}

impl Code {
    /// Evaluate with `vars` (by slot) and `buffers` (initial contents, by position); an
    /// index outside its buffer is an error.
    pub fn eval(&self, vars: &[f64], buffers: &[&[f64]]) -> Result<f64, String> {
        Ok(match self {
            Code::Num(v) => *v,
            Code::Var(slot) => vars[*slot],
            Code::Neg(e) => -e.eval(vars, buffers)?,
            Code::Bin(OpCode(op), a, b) => op.apply(a.eval(vars, buffers)?, b.eval(vars, buffers)?),
            Code::Call1(FuncCode(f), a) => f.apply1(a.eval(vars, buffers)?),
            Code::Call2(FuncCode(f), a, b) => {
                f.apply2(a.eval(vars, buffers)?, b.eval(vars, buffers)?)
            }
            Code::Index(buffer, name, index) => {
                read(buffers[*buffer], name, index.eval(vars, buffers)?)?
            }
        })
    }

    /// Evaluate for each element index `first`, `first + 1`, … of variable slot `slot` (the
    /// other variables as in `vars`), one value into each place of `out`: the values
    /// [`Code::eval`] gives element by element, bit for bit, but each node visited once per
    /// batch of 256 elements instead of once per element, and a part that does not read
    /// `slot` evaluated once per batch. An initial-data or check formula over hundreds of
    /// millions of elements took most of a validation's wall time element by element (the
    /// ports' md: its neighbour list's formula, 201 M elements a run at its target).
    ///
    /// ```
    /// use harness::workloads::spec::compiled::{compile, Scope};
    /// use harness::workloads::spec::expr::parse;
    /// let scope = Scope::new(vec![("N".into(), 0), ("i".into(), 1)]);
    /// let code = compile(&parse("i % N + N").unwrap(), &scope).unwrap();
    /// let mut out = [0.0; 4];
    /// code.eval_range(&[3.0, 0.0], 1, 2, &[], &mut out).unwrap();
    /// assert_eq!(out, [5.0, 3.0, 4.0, 5.0]);
    /// ```
    pub fn eval_range(
        &self,
        vars: &[f64],
        slot: usize,
        first: usize,
        buffers: &[&[f64]],
        out: &mut [f64],
    ) -> Result<(), String> {
        let mut pool = Vec::new();
        for (c, batch) in out.chunks_mut(BATCH).enumerate() {
            let at = Batch {
                vars,
                slot,
                first: first + c * BATCH,
                buffers,
            };
            if let Values::One(v) = self.batch(&at, batch, &mut pool)? {
                batch.fill(v);
            }
        }
        Ok(())
    }

    /// One batch of [`Code::eval_range`]: the values in `out`, or one value for all of them
    /// where this part does not read the element's slot (`out` then unused). `pool` keeps the
    /// scratch arrays of the second operands between batches.
    fn batch(
        &self,
        at: &Batch<'_>,
        out: &mut [f64],
        pool: &mut Vec<Vec<f64>>,
    ) -> Result<Values, String> {
        Ok(match self {
            Code::Num(v) => Values::One(*v),
            Code::Var(s) if *s == at.slot => {
                for (k, v) in out.iter_mut().enumerate() {
                    *v = (at.first + k) as f64;
                }
                Values::Many
            }
            Code::Var(s) => Values::One(at.vars[*s]),
            Code::Neg(e) => match e.batch(at, out, pool)? {
                Values::One(x) => Values::One(-x),
                Values::Many => {
                    out.iter_mut().for_each(|v| *v = -*v);
                    Values::Many
                }
            },
            Code::Call1(FuncCode(f), e) => match e.batch(at, out, pool)? {
                Values::One(x) => Values::One(f.apply1(x)),
                Values::Many => {
                    out.iter_mut().for_each(|v| *v = f.apply1(*v));
                    Values::Many
                }
            },
            Code::Bin(OpCode(op), a, b) => pair(at, out, pool, a, b, |x, y| op.apply(x, y))?,
            Code::Call2(FuncCode(f), a, b) => pair(at, out, pool, a, b, |x, y| f.apply2(x, y))?,
            Code::Index(buffer, name, index) => {
                let data = at.buffers[*buffer];
                match index.batch(at, out, pool)? {
                    Values::One(i) => Values::One(read(data, name, i)?),
                    Values::Many => {
                        for v in out.iter_mut() {
                            *v = read(data, name, *v)?;
                        }
                        Values::Many
                    }
                }
            }
        })
    }

    /// Evaluate to a whole number ≥ 0 (a length, a size or a count).
    pub fn eval_count(&self, vars: &[f64]) -> Result<u64, String> {
        let v = self.eval(vars, &[])?;
        if !(v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(53)) {
            return Err(format!(
                "evaluates to {v}, not a whole number ≥ 0 (use floor())"
            ));
        }
        Ok(v as u64)
    }

    /// `a · b`.
    pub fn product(a: Code, b: Code) -> Code {
        Code::Bin(OpCode(Op::Mul), Box::new(a), Box::new(b))
    }

    /// `a + b`.
    pub fn sum(a: Code, b: Code) -> Code {
        Code::Bin(OpCode(Op::Add), Box::new(a), Box::new(b))
    }

    /// `a − b`.
    pub fn difference(a: Code, b: Code) -> Code {
        Code::Bin(OpCode(Op::Sub), Box::new(a), Box::new(b))
    }

    /// `a / b`.
    pub fn quotient(a: Code, b: Code) -> Code {
        Code::Bin(OpCode(Op::Div), Box::new(a), Box::new(b))
    }

    /// `floor(a)`.
    pub fn floor(a: Code) -> Code {
        Code::Call1(FuncCode(Func::Floor), Box::new(a))
    }

    /// The expression written out as a spec would write it, each variable by `name(slot)`,
    /// with no more parentheses than its operators need.
    ///
    /// ```
    /// use harness::workloads::spec::compiled::{compile, Scope};
    /// use harness::workloads::spec::expr::parse;
    /// let scope = Scope::new(vec![("N".into(), 0), ("G".into(), 1)]);
    /// let code = compile(&parse("floor((N - 1) / (G * 256)) - (N - G)").unwrap(), &scope).unwrap();
    /// let names = ["N", "G"];
    /// assert_eq!(code.text(&|s| names[s].to_string()), "floor((N - 1) / (G * 256)) - (N - G)");
    /// ```
    pub fn text(&self, name: &dyn Fn(usize) -> String) -> String {
        self.text_in(name, 0)
    }

    /// The text, in parentheses where its operator binds less than `context`.
    fn text_in(&self, name: &dyn Fn(usize) -> String, context: u8) -> String {
        let (prec, text) = match self {
            Code::Num(v) if v.fract() == 0.0 && v.abs() < 1e15 => (3, format!("{}", *v as i64)),
            Code::Num(v) => (3, format!("{v}")),
            Code::Var(slot) => (3, name(*slot)),
            Code::Neg(e) => (3, format!("-{}", e.text_in(name, 3))),
            Code::Bin(OpCode(op), a, b) => {
                let (prec, symbol) = match op {
                    Op::Add => (1, "+"),
                    Op::Sub => (1, "-"),
                    Op::Mul => (2, "*"),
                    Op::Div => (2, "/"),
                    Op::Rem => (2, "%"),
                };
                // The right operand of − / % groups: a − (b + c) keeps its parentheses.
                let right = if matches!(op, Op::Add | Op::Mul) {
                    prec
                } else {
                    prec + 1
                };
                let text = format!(
                    "{} {symbol} {}",
                    a.text_in(name, prec),
                    b.text_in(name, right)
                );
                (prec, text)
            }
            Code::Call1(FuncCode(f), a) => (3, format!("{}({})", func_name(*f), a.text(name))),
            Code::Call2(FuncCode(f), a, b) => (
                3,
                format!("{}({}, {})", func_name(*f), a.text(name), b.text(name)),
            ),
            Code::Index(_, buffer, i) => (3, format!("{buffer}[{}]", i.text(name))),
        };
        if prec < context {
            format!("({text})")
        } else {
            text
        }
    }

    /// Whether the expression reads variable `slot`.
    pub fn reads(&self, slot: usize) -> bool {
        match self {
            Code::Num(_) => false,
            Code::Var(s) => *s == slot,
            Code::Neg(e) | Code::Call1(_, e) | Code::Index(_, _, e) => e.reads(slot),
            Code::Bin(_, a, b) | Code::Call2(_, a, b) => a.reads(slot) || b.reads(slot),
        }
    }

    /// Whether the expression reads buffer `index`'s initial contents.
    pub fn reads_buffer(&self, index: usize) -> bool {
        match self {
            Code::Num(_) | Code::Var(_) => false,
            Code::Index(b, _, e) => *b == index || e.reads_buffer(index),
            Code::Neg(e) | Code::Call1(_, e) => e.reads_buffer(index),
            Code::Bin(_, a, b) | Code::Call2(_, a, b) => {
                a.reads_buffer(index) || b.reads_buffer(index)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::spec::expr::{parse, Env};

    #[test]
    fn compiled_and_interpreted_agree() {
        let scope = Scope::new(vec![("N".into(), 0), ("i".into(), 1)]);
        for text in [
            "1 + 2 * 3 - N % 4",
            "max(N, 3) + min(1, 2) + pow(2, 3) + floor(2.7) + abs(-1)",
            "sqrt(N) + sin(i) + cos(i) - -i / 3",
            "choose(N, i)",
        ] {
            let e = parse(text).unwrap();
            let mut env = Env::with_size(9);
            env.vars.insert("i", 4.0);
            let code = compile(&e, &scope).unwrap();
            assert_eq!(
                code.eval(&[9.0, 4.0], &[]).unwrap(),
                e.eval(&env).unwrap(),
                "{text}"
            );
        }
    }

    #[test]
    fn a_range_evaluates_as_its_elements_do_bit_for_bit() {
        let scope =
            Scope::new(vec![("N".into(), 0), ("i".into(), 1)]).with_buffers(vec![("x".into(), 0)]);
        let x: Vec<f64> = (0..1000).map(|k| f64::from(k) * 0.37 - 11.0).collect();
        for text in [
            "i",
            "N * 2 + 1",
            "-i / 3 + sqrt(i) * sin(i * 1.3) - cos(N)",
            "max(0, 1 - i % 4) * ((floor(i / 4) % 16) * 1.5 + 0.2 * sin(floor(i / 4) * 1.3))",
            "min(1, max(0, 26 - floor(i / N))) * ((i % N + 300 * N) % N) + (1 - min(1, floor(i / N))) * ((7 * (i % N) + 997 * floor(i / N) + 13) % N)",
            "pow(1.0001, i) + abs(N - i) + choose(N, i % 7)",
            "x[i % 1000] * x[3] - x[floor(i / 7) % 1000]",
            "(i + (N + (i * (N - (i / (N + 1))))))",
        ] {
            let code = compile(&parse(text).unwrap(), &scope).unwrap();
            // A start and a length that are no multiples of a batch.
            let (first, len) = (37, 3 * BATCH + 11);
            let mut out = vec![f64::NAN; len];
            code.eval_range(&[57.0, -1.0], 1, first, &[&x], &mut out)
                .unwrap();
            for (k, got) in out.iter().enumerate() {
                let want = code
                    .eval(&[57.0, (first + k) as f64], &[&x])
                    .unwrap();
                assert_eq!(got.to_bits(), want.to_bits(), "{text} at {}", first + k);
            }
        }
        // An index outside its buffer is the same error.
        let code = compile(&parse("x[i]").unwrap(), &scope).unwrap();
        let mut out = vec![0.0; 20];
        let err = code
            .eval_range(&[0.0, 0.0], 1, 990, &[&x], &mut out)
            .unwrap_err();
        let want = code.eval(&[0.0, 1000.0], &[&x]).unwrap_err();
        assert_eq!(err, want);
    }

    #[test]
    fn the_fast_remainder_and_floor_are_the_library_ones_bit_for_bit() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.0,
            -4.0,
            7.0,
            -7.0,
            1e15 + 1.0,
            -(1e15 + 3.0),
            EXACT_INTEGERS - 1.0,
            EXACT_INTEGERS,
            -EXACT_INTEGERS,
            1e300,
            3.75,
            -3.75,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        values.extend((-40..40).map(|k| f64::from(k) * 0.25));
        for &x in &values {
            assert_eq!(floor(x).to_bits(), x.floor().to_bits(), "floor({x})");
            for &y in &values {
                let (got, want) = (remainder(x, y), x % y);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{x} % {y}: {got} against {want}"
                );
            }
        }
    }

    #[test]
    fn scopes_and_buffers() {
        let scope = Scope::new(vec![("N".into(), 0)]);
        let err = compile(&parse("x[0]").unwrap(), &scope).unwrap_err();
        assert!(err.contains("only a check formula"), "{err}");
        let check = scope.with_var("i", 1).with_buffers(vec![("x".into(), 0)]);
        let code = compile(&parse("x[i] + x[0]").unwrap(), &check).unwrap();
        let data = [1.0, 2.0, 3.0];
        assert_eq!(code.eval(&[3.0, 2.0], &[&data]).unwrap(), 4.0);
        assert!(code
            .eval(&[3.0, 3.0], &[&data])
            .unwrap_err()
            .contains("outside"));
        let err = compile(&parse("y[i]").unwrap(), &check).unwrap_err();
        assert!(
            err.contains("unknown buffer 'y'") && err.contains(": x"),
            "{err}"
        );
        assert!(code.reads(1) && !code.reads(0));
        assert!(code.reads_buffer(0) && !code.reads_buffer(1));
        let inner = scope.with_var("k", 1).with_var("k", 2);
        assert_eq!(compile(&parse("k").unwrap(), &inner).unwrap(), Code::Var(2));
    }
}
