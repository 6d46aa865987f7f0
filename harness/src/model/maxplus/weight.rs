//! Parsing arc-weight formulas such as `"t + 2*tau"` or `"t + (2n - 1)*dt"` into a [`Term`]
//! (the arc times z_ij of Antonyuk & Mikheev 2022, §5; docs/models.md §1).
//!
//! Grammar (whitespace is free, `·` may be left out between factors):
//!
//! ```text
//! sum     = product { ("+" | "-") product }
//! product = factor { ["*"] factor }
//! factor  = number | name | "(" sum ")" | "-" factor
//! name    = letter { letter | digit | "_" }   also τ, Δt, ΔT for tau, dt, dT
//! ```
//!
//! Coefficients of parameters must be integers (2τ, (2n − 1)Δt); constants are seconds.

use super::error::MaxPlusError;
use super::poly::Term;
use crate::units::Parameter;

/// Parses one arc weight into a sum of times.
///
/// ```
/// use harness::model::maxplus::weight::parse_weight;
/// let term = parse_weight("t + 2*tau").expect("valid");
/// assert_eq!(term.to_string(), "2τ + t");
/// assert!(parse_weight("t +").is_err());
/// ```
pub fn parse_weight(text: &str) -> Result<Term, MaxPlusError> {
    let tokens = tokenize(text)?;
    let mut parser = Parser {
        text,
        tokens,
        position: 0,
        depth: 0,
    };
    let term = parser.sum()?;
    match parser.peek() {
        None => Ok(term),
        Some(token) => Err(parser.error(&format!("unexpected {token:?} after the formula"))),
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Number(f64),
    Name(String),
    Plus,
    Minus,
    Star,
    Open,
    Close,
}

/// Splits the formula into tokens, mapping the paper's symbols to the file's names.
fn tokenize(text: &str) -> Result<Vec<Token>, MaxPlusError> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' | '\t' | '·' => {
                chars.next();
            }
            '+' => push_and_skip(&mut tokens, &mut chars, Token::Plus),
            '-' | '−' => push_and_skip(&mut tokens, &mut chars, Token::Minus),
            '*' => push_and_skip(&mut tokens, &mut chars, Token::Star),
            '(' => push_and_skip(&mut tokens, &mut chars, Token::Open),
            ')' => push_and_skip(&mut tokens, &mut chars, Token::Close),
            'τ' => push_and_skip(
                &mut tokens,
                &mut chars,
                Token::Name(Parameter::OpTime.key().to_owned()),
            ),
            'Δ' => {
                chars.next();
                match chars.next() {
                    Some('t') => tokens.push(Token::Name(Parameter::ReadGap.key().to_owned())),
                    Some('T') => tokens.push(Token::Name(Parameter::WriteGap.key().to_owned())),
                    _ => return Err(syntax(text, "Δ must be followed by t or T")),
                }
            }
            c if c.is_ascii_digit() || c == '.' => tokens.push(number(text, &mut chars)?),
            c if c.is_ascii_alphabetic() || c == '_' => tokens.push(name(&mut chars)),
            other => return Err(syntax(text, &format!("unexpected character '{other}'"))),
        }
    }
    Ok(tokens)
}

fn push_and_skip(
    tokens: &mut Vec<Token>,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    token: Token,
) {
    chars.next();
    tokens.push(token);
}

/// Reads a decimal number, with an optional exponent such as `1e-9`.
fn number(
    text: &str,
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
) -> Result<Token, MaxPlusError> {
    let mut literal = String::new();
    while let Some(&c) = chars.peek() {
        let after_exponent = literal.ends_with(['e', 'E']);
        if c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || (after_exponent && c == '-') {
            literal.push(c);
            chars.next();
        } else {
            break;
        }
    }
    literal
        .parse::<f64>()
        .map(Token::Number)
        .map_err(|_| syntax(text, &format!("'{literal}' is not a number")))
}

/// Reads a parameter name.
fn name(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Token {
    let mut name = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
            chars.next();
        } else {
            break;
        }
    }
    Token::Name(name)
}

/// A syntax error quoting at most the first 80 characters of the weight.
fn syntax(text: &str, message: &str) -> MaxPlusError {
    let weight = if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text.to_owned()
    };
    MaxPlusError::WeightSyntax {
        weight,
        message: message.to_owned(),
    }
}

/// A recursive-descent parser over the tokens.
struct Parser<'a> {
    text: &'a str,
    tokens: Vec<Token>,
    position: usize,
    /// Open nesting levels: parentheses and unary minus.
    depth: usize,
}

/// The deepest nesting a weight may have (a deeper one would exhaust the stack).
pub const MAX_NESTING: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.position)
    }

    fn next(&mut self) -> Option<Token> {
        let token = self.tokens.get(self.position).cloned();
        self.position += 1;
        token
    }

    fn error(&self, message: &str) -> MaxPlusError {
        syntax(self.text, message)
    }

    /// One level deeper, refused past [`MAX_NESTING`].
    fn deeper(&mut self) -> Result<(), MaxPlusError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.error(&format!("nested more than {MAX_NESTING} levels deep")));
        }
        Ok(())
    }

    fn sum(&mut self) -> Result<Term, MaxPlusError> {
        self.deeper()?;
        let total = self.sum_inner();
        self.depth -= 1;
        total
    }

    fn sum_inner(&mut self) -> Result<Term, MaxPlusError> {
        let mut total = self.product()?;
        while let Some(sign) = self.peek().cloned() {
            match sign {
                Token::Plus => {
                    self.next();
                    total = total.plus(&self.product()?);
                }
                Token::Minus => {
                    self.next();
                    total = total.plus(&negate(&self.product()?));
                }
                _ => break,
            }
        }
        Ok(total)
    }

    fn product(&mut self) -> Result<Term, MaxPlusError> {
        let mut result = self.factor()?;
        loop {
            match self.peek() {
                Some(Token::Star) => {
                    self.next();
                }
                Some(Token::Number(_) | Token::Name(_) | Token::Open) => {}
                _ => return Ok(result),
            }
            let right = self.factor()?;
            result = multiply(self.text, &result, &right)?;
        }
    }

    fn factor(&mut self) -> Result<Term, MaxPlusError> {
        match self.next() {
            Some(Token::Number(value)) => Ok(Term::constant(value)),
            Some(Token::Name(name)) => Ok(Term::parameter(&name)),
            Some(Token::Minus) => {
                self.deeper()?;
                let inner = self.factor();
                self.depth -= 1;
                Ok(negate(&inner?))
            }
            Some(Token::Open) => {
                let inner = self.sum()?;
                match self.next() {
                    Some(Token::Close) => Ok(inner),
                    _ => Err(self.error("missing ')'")),
                }
            }
            Some(token) => {
                Err(self.error(&format!("expected a number or a name, found {token:?}")))
            }
            None => Err(self.error("the formula ends where a number or a name was expected")),
        }
    }
}

fn negate(term: &Term) -> Term {
    scale(term, -1)
}

/// `count · term`, with an integer count.
fn scale(term: &Term, count: i64) -> Term {
    term.monomials().fold(
        Term::constant(term.constant_part() * count as f64),
        |sum, (monomial, existing)| sum.plus_monomial(monomial.clone(), existing * count),
    )
}

/// The product of two sums, expanded; parameter coefficients must stay integers.
fn multiply(text: &str, left: &Term, right: &Term) -> Result<Term, MaxPlusError> {
    let mut product = Term::constant(left.constant_part() * right.constant_part());
    for (monomial, count) in right.monomials() {
        let factor = integer(text, left.constant_part(), monomial)?;
        product = product.plus_monomial(monomial.clone(), factor * count);
    }
    for (monomial, count) in left.monomials() {
        let factor = integer(text, right.constant_part(), monomial)?;
        product = product.plus_monomial(monomial.clone(), factor * count);
        for (other, other_count) in right.monomials() {
            product = product.plus_monomial(monomial.times(other), count * other_count);
        }
    }
    Ok(product)
}

/// A constant used as the coefficient of `monomial`, which must be a whole number.
fn integer(text: &str, value: f64, monomial: &super::poly::Monomial) -> Result<i64, MaxPlusError> {
    let rounded = value.round();
    if rounded == value && rounded.abs() < 1e15 {
        Ok(rounded as i64)
    } else {
        Err(syntax(
            text,
            &format!("the coefficient {value} of `{monomial}` must be a whole number"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::super::parameters::Parameters;
    use super::*;

    #[test]
    fn deep_nesting_is_refused_and_the_echo_is_short() {
        let deep = format!("{}t{}", "(".repeat(7_000), ")".repeat(7_000));
        let e = parse_weight(&deep).unwrap_err().to_string();
        assert!(
            e.contains("nested more than 64"),
            "{}",
            &e[..200.min(e.len())]
        );
        assert!(
            e.chars().count() < 300,
            "the error echoes {} characters",
            e.len()
        );
        let minus = format!("{}t", "-".repeat(7_000));
        assert!(parse_weight(&minus)
            .unwrap_err()
            .to_string()
            .contains("nested"));
        let ok = format!("{}t + tau{}", "(".repeat(60), ")".repeat(60));
        assert!(parse_weight(&ok).is_ok());
    }

    fn shown(text: &str) -> String {
        parse_weight(text).expect("valid formula").to_string()
    }

    #[test]
    fn simple_sums_and_coefficients() {
        assert_eq!(shown("T"), "T");
        assert_eq!(shown("t + 2*tau"), "2τ + t");
        assert_eq!(shown("2tau + t"), "2τ + t");
        assert_eq!(shown("τ + Δt"), "τ + Δt");
        assert_eq!(shown("0"), "0");
        assert_eq!(shown("1.5e-9"), "0.0000000015");
    }

    #[test]
    fn executor_lags_expand_and_print_grouped() {
        assert_eq!(shown("t + (2n - 1)*dt"), "t + (2n − 1)Δt");
        assert_eq!(shown("T + (n-1)*dT"), "T + (n − 1)ΔT");
        let parameters =
            Parameters::from_pairs(&[("t", 10.0), ("dt", 1.0), ("n", 4.0)]).expect("finite");
        let term = parse_weight("t + (2n - 1)*dt").expect("valid");
        assert_eq!(term.evaluate(&parameters).expect("known"), 17.0);
    }

    #[test]
    fn errors_quote_the_formula() {
        for bad in ["t +", "(t", "t $ T", "0.5*t", "t T)", "Δx"] {
            let message = parse_weight(bad).unwrap_err().to_string();
            assert!(message.contains(bad), "{bad}: {message}");
        }
    }
}
