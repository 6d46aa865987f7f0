//! The spec files' small expression language: numbers, the variables `N` (problem size),
//! `i` (element index), `k` (host-loop variable) and `iters`, `+ − * / %`, parentheses,
//! the functions `min max sqrt sin cos abs pow floor choose`, and in checks `name[expr]`, a
//! buffer's initial value at an index. Everything evaluates in f64.

use std::collections::HashMap;

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A number.
    Num(f64),
    /// A variable.
    Var(String),
    /// `-e`.
    Neg(Box<Expr>),
    /// A binary operation.
    Bin(char, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(String, Vec<Expr>),
    /// `buffer[index]`.
    Index(String, Box<Expr>),
}

/// A parse error: what and at which column (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    /// Column in the expression, 1-based.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

const FUNCTIONS: &[(&str, usize)] = &[
    ("min", 2),
    ("max", 2),
    ("pow", 2),
    ("sqrt", 1),
    ("sin", 1),
    ("cos", 1),
    ("abs", 1),
    ("floor", 1),
    ("choose", 2),
];

struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    /// Open nesting levels: parentheses, arguments, indices, unary minus.
    depth: usize,
}

/// The deepest nesting an expression may have (a deeper one would exhaust the stack).
pub const MAX_NESTING: usize = 64;

/// The longest expression accepted, characters (its tree is evaluated recursively).
pub const MAX_LENGTH: usize = 10_000;

/// Parse `text`.
///
/// ```
/// use harness::workloads::spec::expr::{parse, Env};
/// let e = parse("2 * (N + 1) % 5").unwrap();
/// assert_eq!(e.eval(&Env::with_size(6)).unwrap(), 4.0);
/// ```
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    if text.len() > MAX_LENGTH {
        return Err(ParseError {
            column: MAX_LENGTH + 1,
            message: format!(
                "the expression is {} characters long; at most {MAX_LENGTH} are accepted",
                text.len()
            ),
        });
    }
    let mut p = Parser {
        text: text.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let e = p.sum()?;
    p.skip();
    if p.pos < p.text.len() {
        return Err(p.error(format!("unexpected '{}'", p.text[p.pos] as char)));
    }
    Ok(e)
}

impl Parser<'_> {
    fn error(&self, message: String) -> ParseError {
        ParseError {
            column: self.pos + 1,
            message,
        }
    }

    fn skip(&mut self) {
        while self.pos < self.text.len() && self.text[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip();
        self.text.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// One level deeper, refused past [`MAX_NESTING`].
    fn deeper(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(format!("nested more than {MAX_NESTING} levels deep")));
        }
        Ok(())
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        self.deeper()?;
        let mut left = self.product()?;
        while let Some(op @ (b'+' | b'-')) = self.peek() {
            self.pos += 1;
            left = Expr::Bin(op as char, Box::new(left), Box::new(self.product()?));
        }
        self.depth -= 1;
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.unary()?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.peek() {
            self.pos += 1;
            left = Expr::Bin(op as char, Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat(b'-') {
            self.deeper()?;
            let inner = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Neg(Box::new(inner)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some(b'(') => {
                self.pos += 1;
                let e = self.sum()?;
                if !self.eat(b')') {
                    return Err(self.error("expected ')'".into()));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == b'.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.name(),
            Some(c) => Err(self.error(format!("unexpected '{}'", c as char))),
            None => Err(self.error("unexpected end of expression".into())),
        }
    }

    fn number(&mut self) -> Result<Expr, ParseError> {
        let start = self.pos;
        while self.pos < self.text.len()
            && (self.text[self.pos].is_ascii_digit()
                || self.text[self.pos] == b'.'
                || self.text[self.pos] == b'e'
                || ((self.text[self.pos] == b'-' || self.text[self.pos] == b'+')
                    && self.pos > start
                    && self.text[self.pos - 1] == b'e'))
        {
            self.pos += 1;
        }
        let s = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or_default();
        s.parse::<f64>().map(Expr::Num).map_err(|_| ParseError {
            column: start + 1,
            message: format!("bad number '{s}'"),
        })
    }

    fn name(&mut self) -> Result<Expr, ParseError> {
        let start = self.pos;
        while self.pos < self.text.len()
            && (self.text[self.pos].is_ascii_alphanumeric() || self.text[self.pos] == b'_')
        {
            self.pos += 1;
        }
        let name = String::from_utf8_lossy(&self.text[start..self.pos]).into_owned();
        if self.eat(b'(') {
            let Some(&(_, arity)) = FUNCTIONS.iter().find(|(f, _)| *f == name) else {
                return Err(ParseError {
                    column: start + 1,
                    message: format!("unknown function '{name}'"),
                });
            };
            let mut args = vec![self.sum()?];
            while self.eat(b',') {
                args.push(self.sum()?);
            }
            if !self.eat(b')') {
                return Err(self.error("expected ')'".into()));
            }
            if args.len() != arity {
                return Err(ParseError {
                    column: start + 1,
                    message: format!("{name} takes {arity} arguments, got {}", args.len()),
                });
            }
            return Ok(Expr::Call(name, args));
        }
        if self.eat(b'[') {
            let index = self.sum()?;
            if !self.eat(b']') {
                return Err(self.error("expected ']'".into()));
            }
            return Ok(Expr::Index(name, Box::new(index)));
        }
        Ok(Expr::Var(name))
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

/// Values for evaluation: variables and (for checks) buffers' initial contents.
#[derive(Debug, Default, Clone)]
pub struct Env<'a> {
    /// Variables by name.
    pub vars: HashMap<&'static str, f64>,
    /// Buffers by name.
    pub buffers: HashMap<&'a str, &'a [f64]>,
}

impl Env<'_> {
    /// An environment with `N` set.
    pub fn with_size(n: usize) -> Self {
        let mut env = Env::default();
        env.vars.insert("N", n as f64);
        env
    }
}

impl Expr {
    /// Evaluate; an unknown variable or buffer, or an index outside a buffer, is an error.
    pub fn eval(&self, env: &Env<'_>) -> Result<f64, String> {
        Ok(match self {
            Expr::Num(v) => *v,
            Expr::Var(name) => *env
                .vars
                .get(name.as_str())
                .ok_or_else(|| format!("unknown variable '{name}' (known: N, i, k, iters)"))?,
            Expr::Neg(e) => -e.eval(env)?,
            Expr::Bin(op, a, b) => {
                let (x, y) = (a.eval(env)?, b.eval(env)?);
                match op {
                    '+' => x + y,
                    '-' => x - y,
                    '*' => x * y,
                    '/' => x / y,
                    _ => x % y,
                }
            }
            Expr::Call(f, args) => {
                let v: Vec<f64> = args.iter().map(|a| a.eval(env)).collect::<Result<_, _>>()?;
                match f.as_str() {
                    "min" => v[0].min(v[1]),
                    "max" => v[0].max(v[1]),
                    "pow" => v[0].powf(v[1]),
                    "sqrt" => v[0].sqrt(),
                    "sin" => v[0].sin(),
                    "cos" => v[0].cos(),
                    "abs" => v[0].abs(),
                    "choose" => choose(v[0], v[1]),
                    _ => v[0].floor(),
                }
            }
            Expr::Index(name, index) => {
                let data = env
                    .buffers
                    .get(name.as_str())
                    .ok_or_else(|| format!("unknown buffer '{name}'"))?;
                let i = index.eval(env)?;
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

    /// Evaluate to a whole number ≥ 0 (a length or a size).
    pub fn eval_count(&self, env: &Env<'_>) -> Result<u64, String> {
        let v = self.eval(env)?;
        if !(v >= 0.0 && v.fract() == 0.0 && v < 2f64.powi(53)) {
            return Err(format!(
                "evaluates to {v}, not a whole number ≥ 0 (use floor())"
            ));
        }
        Ok(v as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, n: usize) -> f64 {
        parse(text).unwrap().eval(&Env::with_size(n)).unwrap()
    }

    #[test]
    fn precedence_and_functions() {
        assert_eq!(eval("1 + 2 * 3", 0), 7.0);
        assert_eq!(eval("(1 + 2) * 3", 0), 9.0);
        assert_eq!(eval("-N + 2*N", 5), 5.0);
        assert_eq!(eval("N % 4 + 10 / 4", 7), 5.5);
        assert_eq!(
            eval(
                "max(N, 3) + min(1, 2) + pow(2, 3) + floor(2.7) + abs(-1)",
                1
            ),
            15.0
        );
        assert_eq!(eval("1e3 + 2.5e-1", 0), 1000.25);
        assert!((eval("sqrt(N) + sin(0) + cos(0)", 16) - 5.0).abs() < 1e-12);
        assert_eq!(eval("choose(22, 11) + choose(3, 5)", 0), 705_432.0);
        // Bounded cost: a huge k is infinite at once (it used to loop for weeks).
        let started = std::time::Instant::now();
        assert_eq!(eval("choose(1e15, 5e14)", 0), f64::INFINITY);
        assert_eq!(eval("choose(2200, 1101)", 0), f64::INFINITY);
        assert!(eval("choose(2000, 1000)", 0).is_infinite());
        assert!(started.elapsed().as_secs() < 1);
    }

    #[test]
    fn deep_nesting_and_huge_expressions_are_refused_not_a_stack_overflow() {
        let deep = format!("{}1{}", "(".repeat(4_000), ")".repeat(4_000));
        let e = parse(&deep).unwrap_err();
        assert!(e.message.contains("nested more than 64"), "{}", e.message);
        let minus = format!("{}1", "-".repeat(9_000));
        assert!(parse(&minus).unwrap_err().message.contains("nested"));
        assert!(parse(&"1+".repeat(6_000))
            .unwrap_err()
            .message
            .contains("at most"));
        // 60 levels are fine.
        let ok = format!("{}N{}", "(".repeat(60), ")".repeat(60));
        assert_eq!(parse(&ok).unwrap().eval(&Env::with_size(3)).unwrap(), 3.0);
    }

    #[test]
    fn errors_name_the_column() {
        let e = parse("N + * 2").unwrap_err();
        assert_eq!(e.column, 5);
        assert!(parse("foo(1)")
            .unwrap_err()
            .message
            .contains("unknown function"));
        assert!(parse("max(1)").unwrap_err().message.contains("2 arguments"));
        assert!(parse("(N").unwrap_err().message.contains("')'"));
        assert!(parse("N N").unwrap_err().message.contains("unexpected"));
        assert!(parse("M")
            .unwrap()
            .eval(&Env::with_size(1))
            .unwrap_err()
            .contains("unknown variable"));
        assert!(parse("N / 2")
            .unwrap()
            .eval_count(&Env::with_size(3))
            .is_err());
    }

    #[test]
    fn buffer_indexing() {
        let data = [1.0, 2.0, 3.0];
        let mut env = Env::with_size(3);
        env.buffers.insert("x", &data);
        env.vars.insert("i", 2.0);
        assert_eq!(parse("x[i] + x[0]").unwrap().eval(&env).unwrap(), 4.0);
        assert!(parse("x[3]").unwrap().eval(&env).is_err());
    }
}
