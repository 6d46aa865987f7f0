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

impl Code {
    /// Evaluate with `vars` (by slot) and `buffers` (initial contents, by position); an
    /// index outside its buffer is an error.
    pub fn eval(&self, vars: &[f64], buffers: &[&[f64]]) -> Result<f64, String> {
        Ok(match self {
            Code::Num(v) => *v,
            Code::Var(slot) => vars[*slot],
            Code::Neg(e) => -e.eval(vars, buffers)?,
            Code::Bin(OpCode(op), a, b) => {
                let (x, y) = (a.eval(vars, buffers)?, b.eval(vars, buffers)?);
                match op {
                    Op::Add => x + y,
                    Op::Sub => x - y,
                    Op::Mul => x * y,
                    Op::Div => x / y,
                    Op::Rem => x % y,
                }
            }
            Code::Call1(FuncCode(f), a) => {
                let x = a.eval(vars, buffers)?;
                match f {
                    Func::Sqrt => x.sqrt(),
                    Func::Sin => x.sin(),
                    Func::Cos => x.cos(),
                    Func::Abs => x.abs(),
                    _ => x.floor(),
                }
            }
            Code::Call2(FuncCode(f), a, b) => {
                let (x, y) = (a.eval(vars, buffers)?, b.eval(vars, buffers)?);
                match f {
                    Func::Min => x.min(y),
                    Func::Max => x.max(y),
                    Func::Pow => x.powf(y),
                    _ => choose(x, y),
                }
            }
            Code::Index(buffer, name, index) => {
                let data = buffers[*buffer];
                let i = index.eval(vars, buffers)?;
                if i < 0.0 || i.fract() != 0.0 || i as usize >= data.len() {
                    return Err(format!(
                        "{name}[{i}] is outside the buffer (length {})",
                        data.len()
                    ));
                }
                data[i as usize]
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
