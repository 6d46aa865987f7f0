//! Symbolic max-plus polynomials over named parameters (Antonyuk & Mikheev 2022, §5–§11;
//! docs/models.md §1).
//!
//! The paper notes (§11) that any combination of max-plus operations on times gives "either a
//! sum of time intervals or a set of such sums". A [`Term`] is one such sum,
//! `constant + Σ count·monomial` (a monomial is a parameter such as `t`, or a product such as
//! `n·dt` for the serialized-memory lags `(n−1)Δt`); a [`Poly`] is the max of a set of terms.
//! ⊕ is the union of the sets, ⊙ adds every pair of terms.
//!
//! Pruning is sound only between terms with identical monomial parts: of those the one with
//! the largest constant survives. Terms whose monomials differ are incomparable for some
//! parameter values and are always kept.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::error::MaxPlusError;
use super::parameters::{display_name, Parameters};
use super::semiring::Semiring;

/// The name that counts executors; it is printed as a factor (`2nΔt`) and grouped as the paper
/// prints lags: `(2n − 1)Δt`.
const EXECUTOR_COUNT: &str = "n";

/// A product of parameter names, e.g. `t` or `n·dt`; the names are kept sorted.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Monomial(Vec<String>);

impl Monomial {
    /// A single parameter.
    pub fn parameter(name: &str) -> Self {
        Monomial(vec![name.to_owned()])
    }

    /// The product of two monomials.
    pub fn times(&self, other: &Monomial) -> Monomial {
        let mut names: Vec<String> = self.0.iter().chain(&other.0).cloned().collect();
        names.sort();
        Monomial(names)
    }

    /// The parameter names in this product, sorted.
    pub fn names(&self) -> &[String] {
        &self.0
    }

    /// The value of the product for the given parameters.
    fn evaluate(&self, parameters: &Parameters) -> Result<f64, MaxPlusError> {
        self.0
            .iter()
            .try_fold(1.0, |product, name| Ok(product * parameters.get(name)?))
    }

    /// This monomial without one factor `n`, if it has exactly one and something else.
    fn without_executor_count(&self) -> Option<Monomial> {
        let count = self.0.iter().filter(|name| *name == EXECUTOR_COUNT).count();
        if count != 1 || self.0.len() < 2 {
            return None;
        }
        let rest = self
            .0
            .iter()
            .filter(|name| *name != EXECUTOR_COUNT)
            .cloned();
        Some(Monomial(rest.collect()))
    }

    /// Position in the paper's printing order T, ΔT, τ, t, t_cache, Δt, then the rest.
    fn print_rank(&self) -> (usize, String) {
        let base = self
            .0
            .iter()
            .find(|name| *name != EXECUTOR_COUNT)
            .or_else(|| self.0.first())
            .cloned()
            .unwrap_or_default();
        let rank = match base.as_str() {
            "T" => 0,
            "dT" => 1,
            "tau" => 2,
            "t" => 3,
            "t_cache" => 4,
            "dt" => 5,
            _ => 6,
        };
        (rank, base)
    }
}

impl fmt::Display for Monomial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts = self.0.iter().filter(|name| *name == EXECUTOR_COUNT);
        let others = self.0.iter().filter(|name| *name != EXECUTOR_COUNT);
        for name in counts.chain(others) {
            write!(f, "{}", display_name(name))?;
        }
        Ok(())
    }
}

/// One sum of times: `constant + Σ count·monomial`, e.g. `T + τ + t` or `2τ`.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    constant: f64,
    counts: BTreeMap<Monomial, i64>,
}

impl Term {
    /// A constant time (the number of seconds).
    pub fn constant(seconds: f64) -> Self {
        Term {
            constant: seconds,
            counts: BTreeMap::new(),
        }
    }

    /// `count·name`, e.g. `Term::scaled("tau", 2)` is 2τ.
    pub fn scaled(name: &str, count: i64) -> Self {
        Term::constant(0.0).plus_monomial(Monomial::parameter(name), count)
    }

    /// One parameter, e.g. `Term::parameter("T")` is T.
    pub fn parameter(name: &str) -> Self {
        Term::scaled(name, 1)
    }

    /// This term plus `count·monomial`; a zero count is dropped.
    pub fn plus_monomial(mut self, monomial: Monomial, count: i64) -> Self {
        let entry = self.counts.entry(monomial).or_insert(0);
        *entry += count;
        self.counts.retain(|_, count| *count != 0);
        self
    }

    /// The max-plus product of two terms: their sum.
    pub fn plus(&self, other: &Term) -> Term {
        other.counts.iter().fold(
            Term {
                constant: self.constant + other.constant,
                counts: self.counts.clone(),
            },
            |sum, (monomial, count)| sum.plus_monomial(monomial.clone(), *count),
        )
    }

    /// The constant part, in seconds.
    pub fn constant_part(&self) -> f64 {
        self.constant
    }

    /// The (monomial, count) pairs, in storage order.
    pub fn monomials(&self) -> impl Iterator<Item = (&Monomial, i64)> {
        self.counts
            .iter()
            .map(|(monomial, count)| (monomial, *count))
    }

    /// The value of the sum for the given parameters; a missing value is an error naming it.
    pub fn evaluate(&self, parameters: &Parameters) -> Result<f64, MaxPlusError> {
        self.counts
            .iter()
            .try_fold(self.constant, |sum, (monomial, count)| {
                Ok(sum + *count as f64 * monomial.evaluate(parameters)?)
            })
    }

    /// The same term with every factor `from` renamed `to` (used for the caching model).
    pub fn renamed(&self, from: &str, to: &str) -> Term {
        self.counts
            .iter()
            .fold(Term::constant(self.constant), |term, (monomial, count)| {
                let mut names: Vec<String> = monomial
                    .0
                    .iter()
                    .map(|name| {
                        if name == from {
                            to.to_owned()
                        } else {
                            name.clone()
                        }
                    })
                    .collect();
                names.sort();
                term.plus_monomial(Monomial(names), *count)
            })
    }

    /// The printable pieces (coefficient and monomial text), in the paper's order, with the
    /// `n` lags grouped as `(2n − 1)Δt`.
    fn printable_pieces(&self) -> Vec<(i64, String)> {
        let mut grouped: BTreeMap<Monomial, (i64, i64)> = BTreeMap::new();
        for (monomial, count) in &self.counts {
            match monomial.without_executor_count() {
                Some(base) => grouped.entry(base).or_default().0 += count,
                None => grouped.entry(monomial.clone()).or_default().1 += count,
            }
        }
        let mut ordered: Vec<_> = grouped.into_iter().collect();
        ordered.sort_by_key(|(monomial, _)| monomial.print_rank());
        ordered
            .into_iter()
            .flat_map(|(base, (per_executor, fixed))| group_pieces(&base, per_executor, fixed))
            .collect()
    }
}

/// Printable pieces for `per_executor·n·base + fixed·base`.
fn group_pieces(base: &Monomial, per_executor: i64, fixed: i64) -> Vec<(i64, String)> {
    let base_text = base.to_string();
    match (per_executor, fixed) {
        (0, fixed) => vec![(fixed, base_text)],
        (per_executor, 0) => vec![(per_executor, format!("n{base_text}"))],
        (per_executor, fixed) => {
            let sign = if fixed < 0 { "−" } else { "+" };
            let lead = match per_executor {
                1 => "n".to_owned(),
                -1 => "−n".to_owned(),
                other => format!("{}n", signed(other)),
            };
            vec![(
                1,
                format!("({lead} {sign} {}){base_text}", fixed.unsigned_abs()),
            )]
        }
    }
}

/// An integer with a proper minus sign.
fn signed(value: i64) -> String {
    if value < 0 {
        format!("−{}", value.unsigned_abs())
    } else {
        value.to_string()
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut pieces: Vec<(bool, String)> = self
            .printable_pieces()
            .into_iter()
            .map(|(count, text)| {
                let magnitude = count.unsigned_abs();
                let body = if magnitude == 1 {
                    text
                } else {
                    format!("{magnitude}{text}")
                };
                (count < 0, body)
            })
            .collect();
        if self.constant != 0.0 || pieces.is_empty() {
            pieces.push((self.constant < 0.0, format!("{}", self.constant.abs())));
        }
        for (index, (negative, body)) in pieces.iter().enumerate() {
            match (index, negative) {
                (0, false) => write!(f, "{body}")?,
                (0, true) => write!(f, "−{body}")?,
                (_, false) => write!(f, " + {body}")?,
                (_, true) => write!(f, " − {body}")?,
            }
        }
        Ok(())
    }
}

/// A max-plus polynomial: the max of a set of [`Term`]s; the empty set is ε.
///
/// ```
/// use harness::model::maxplus::poly::{Poly, Term};
/// use harness::model::maxplus::semiring::Semiring;
/// let read = Poly::from(Term::parameter("t"));
/// let write = Poly::from(Term::parameter("T"));
/// assert_eq!(write.otimes(&read).to_string(), "T + t");
/// assert_eq!(read.oplus(&write).to_string(), "max{T, t}");
/// assert_eq!(Poly::epsilon().to_string(), "ε");
/// ```
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Poly {
    /// Monomial part → the largest constant seen with it.
    terms: BTreeMap<BTreeMap<Monomial, i64>, f64>,
}

impl Poly {
    /// The terms of the max, in a fixed order.
    pub fn terms(&self) -> impl Iterator<Item = Term> + '_ {
        self.terms.iter().map(|(counts, constant)| Term {
            constant: *constant,
            counts: counts.clone(),
        })
    }

    /// How many incomparable terms the max holds (0 for ε).
    pub fn term_count(&self) -> usize {
        self.terms.len()
    }

    /// Adds one term to the max, keeping only the larger constant for equal monomials.
    fn insert(&mut self, term: Term) {
        let constant = self.terms.entry(term.counts).or_insert(term.constant);
        *constant = constant.max(term.constant);
    }

    /// The value for the given parameters: the max over the terms, −∞ for ε.
    pub fn evaluate(&self, parameters: &Parameters) -> Result<f64, MaxPlusError> {
        self.terms().try_fold(f64::NEG_INFINITY, |best, term| {
            Ok(best.max(term.evaluate(parameters)?))
        })
    }

    /// The term that attains the max for these parameters, with its value; `None` for ε.
    pub fn dominant_term(
        &self,
        parameters: &Parameters,
    ) -> Result<Option<(Term, f64)>, MaxPlusError> {
        let mut best: Option<(Term, f64)> = None;
        for term in self.terms() {
            let value = term.evaluate(parameters)?;
            if best
                .as_ref()
                .is_none_or(|(_, best_value)| value > *best_value)
            {
                best = Some((term, value));
            }
        }
        Ok(best)
    }

    /// Every parameter name that appears in a term.
    pub fn parameter_names(&self) -> BTreeSet<String> {
        self.terms
            .keys()
            .flat_map(|counts| counts.keys())
            .flat_map(|monomial| monomial.names().iter().cloned())
            .collect()
    }

    /// The same polynomial with parameter `from` renamed `to` in every term.
    pub fn renamed(&self, from: &str, to: &str) -> Poly {
        self.terms().map(|term| term.renamed(from, to)).collect()
    }
}

impl From<Term> for Poly {
    fn from(term: Term) -> Self {
        let mut poly = Poly::default();
        poly.insert(term);
        poly
    }
}

impl FromIterator<Term> for Poly {
    fn from_iter<I: IntoIterator<Item = Term>>(iter: I) -> Self {
        let mut poly = Poly::default();
        for term in iter {
            poly.insert(term);
        }
        poly
    }
}

impl Semiring for Poly {
    fn epsilon() -> Self {
        Poly::default()
    }

    fn unit() -> Self {
        Poly::from(Term::constant(0.0))
    }

    fn oplus(&self, other: &Self) -> Self {
        self.terms().chain(other.terms()).collect()
    }

    fn otimes(&self, other: &Self) -> Self {
        self.terms()
            .flat_map(|left| other.terms().map(move |right| left.plus(&right)))
            .collect()
    }

    fn is_epsilon(&self) -> bool {
        self.terms.is_empty()
    }
}

impl fmt::Display for Poly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let terms: Vec<String> = self.terms().map(|term| term.to_string()).collect();
        match terms.as_slice() {
            [] => write!(f, "ε"),
            [single] => write!(f, "{single}"),
            several => write!(f, "max{{{}}}", several.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(name: &str) -> Poly {
        Poly::from(Term::parameter(name))
    }

    #[test]
    fn sums_print_in_the_papers_order() {
        let sum = p("t").otimes(&p("tau")).otimes(&p("T"));
        assert_eq!(sum.to_string(), "T + τ + t");
        assert_eq!(p("tau").otimes(&p("tau")).to_string(), "2τ");
        assert_eq!(Poly::unit().to_string(), "0");
    }

    #[test]
    fn executor_lags_print_as_in_the_paper() {
        let n_dt = Term::constant(0.0).plus_monomial(
            Monomial::parameter("n").times(&Monomial::parameter("dt")),
            2,
        );
        let lag = n_dt.plus(&Term::scaled("dt", -1));
        let n_dt_write = Term::constant(0.0)
            .plus_monomial(
                Monomial::parameter("dT").times(&Monomial::parameter("n")),
                1,
            )
            .plus(&Term::scaled("dT", -1));
        let total = Term::parameter("T")
            .plus(&n_dt_write)
            .plus(&Term::parameter("tau"))
            .plus(&Term::parameter("t"))
            .plus(&lag);
        assert_eq!(total.to_string(), "T + (n − 1)ΔT + τ + t + (2n − 1)Δt");
    }

    #[test]
    fn negative_and_constant_parts_print_with_minus_signs() {
        let term = Term::scaled("dt", -1).plus(&Term::constant(-2.5));
        assert_eq!(term.to_string(), "−Δt − 2.5");
    }

    #[test]
    fn equal_monomials_keep_the_larger_constant_and_others_are_kept() {
        let a = Poly::from(Term::parameter("t").plus(&Term::constant(1.0)));
        let b = Poly::from(Term::parameter("t").plus(&Term::constant(3.0)));
        assert_eq!(a.oplus(&b).to_string(), "t + 3");
        let incomparable = p("t").oplus(&p("tau").otimes(&p("tau")));
        assert_eq!(incomparable.term_count(), 2);
    }

    #[test]
    fn evaluation_names_a_missing_parameter() {
        let sum = p("T").otimes(&p("t1"));
        let parameters = Parameters::from_pairs(&[("T", 1.0)]).expect("finite");
        let message = sum.evaluate(&parameters).unwrap_err().to_string();
        assert!(message.contains("`t1`"), "{message}");
    }

    #[test]
    fn evaluation_takes_the_max_and_dominant_term_finds_it() {
        let poly = p("t1").oplus(&p("t2"));
        let parameters = Parameters::from_pairs(&[("t1", 2.0), ("t2", 5.0)]).expect("finite");
        assert_eq!(poly.evaluate(&parameters).expect("known"), 5.0);
        let (term, value) = poly
            .dominant_term(&parameters)
            .expect("known")
            .expect("not ε");
        assert_eq!((term.to_string(), value), ("t2".to_owned(), 5.0));
        assert_eq!(
            Poly::epsilon().evaluate(&parameters).expect("ε"),
            f64::NEG_INFINITY
        );
    }

    fn poly() -> impl Strategy<Value = Poly> {
        let term = (0i64..3, 0i64..3, -2i64..3).prop_map(|(t, tau, constant)| {
            Term::scaled("t", t)
                .plus(&Term::scaled("tau", tau))
                .plus(&Term::constant(constant as f64))
        });
        prop::collection::vec(term, 0..4).prop_map(|terms| terms.into_iter().collect())
    }

    proptest! {
        #[test]
        fn epsilon_is_neutral_for_oplus_and_absorbs_otimes(a in poly()) {
            prop_assert_eq!(a.oplus(&Poly::epsilon()), a.clone());
            prop_assert!(a.otimes(&Poly::epsilon()).is_epsilon());
            prop_assert_eq!(a.otimes(&Poly::unit()), a);
        }

        #[test]
        fn symbolic_operations_agree_with_numeric_ones(a in poly(), b in poly(), t in 0.0f64..10.0, tau in 0.0f64..10.0) {
            let parameters = Parameters::from_pairs(&[("t", t), ("tau", tau)]).expect("finite");
            let value = |poly: &Poly| poly.evaluate(&parameters).expect("known");
            prop_assert_eq!(value(&a.oplus(&b)), value(&a).max(value(&b)));
            let product = value(&a) + value(&b);
            let expected = if product.is_nan() { f64::NEG_INFINITY } else { product };
            prop_assert!((value(&a.otimes(&b)) - expected).abs() < 1e-9 || value(&a.otimes(&b)) == expected);
        }
    }
}
