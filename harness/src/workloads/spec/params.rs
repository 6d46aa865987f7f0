//! A spec's parameters: the size parameter, which `--size` sets and a series varies (`N`
//! unless the spec's `size` field names another), and named parameters with default
//! expressions of the size and of each other (`NJ = "N"`, `TMAX = 10`), which
//! `--param NAME=VALUE` overrides. Every parameter has a slot in the values array that
//! compiled expressions read ([`super::compiled`]); the size is slot 0 and the named
//! parameters follow in an order where each comes after those it depends on.

use super::compiled::{compile, Code, Scope};
use super::expr::{parse, Expr};

/// The resolved parameters of a spec.
#[derive(Debug, Clone)]
pub struct Params {
    /// The size parameter's name (slot 0).
    pub size_name: String,
    /// The named parameters in evaluation order (slot = position + 1), each with its
    /// default.
    pub named: Vec<(String, Code)>,
}

/// Whether `name` is a valid variable name: a letter or `_`, then letters, digits or `_`.
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Names the harness defines itself, which a parameter or loop variable may not take.
pub const RESERVED: &[&str] = &["iters", "iter", "i"];

fn variables<'a>(e: &'a Expr, out: &mut Vec<&'a str>) {
    match e {
        Expr::Num(_) => {}
        Expr::Var(v) => out.push(v),
        Expr::Neg(a) | Expr::Index(_, a) => variables(a, out),
        Expr::Bin(_, a, b) => {
            variables(a, out);
            variables(b, out);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| variables(a, out)),
    }
}

impl Params {
    /// Resolve `raw` (name, default expression text) with the size parameter `size_name`:
    /// names checked, defaults parsed and compiled, ordered so that each follows the ones
    /// it reads. Errors name the parameter.
    pub fn resolve(size_name: &str, raw: &[(String, String)]) -> Result<Self, String> {
        if !is_identifier(size_name) || RESERVED.contains(&size_name) {
            return Err(format!(
                "size: '{size_name}' cannot name a parameter (letters, digits and _, not iters, iter or i)"
            ));
        }
        let mut parsed = Vec::with_capacity(raw.len());
        for (name, text) in raw {
            if !is_identifier(name) || RESERVED.contains(&name.as_str()) {
                return Err(format!(
                    "params.{name}: not a parameter name (letters, digits and _, not iters, iter or i)"
                ));
            }
            if name == size_name {
                return Err(format!(
                    "params.{name}: {name} is the size parameter, set by --size; leave it out of [params]"
                ));
            }
            let e = parse(text).map_err(|e| {
                format!(
                    "params.{name}: '{text}': column {}: {}",
                    e.column, e.message
                )
            })?;
            parsed.push((name.clone(), e));
        }
        let mut ordered: Vec<(String, Expr)> = Vec::with_capacity(parsed.len());
        while !parsed.is_empty() {
            let ready = parsed.iter().position(|(_, e)| {
                let mut vars = Vec::new();
                variables(e, &mut vars);
                vars.iter().all(|v| {
                    *v == size_name
                        || ordered.iter().any(|(n, _)| n == v)
                        || !parsed.iter().any(|(n, _)| n == v)
                })
            });
            match ready {
                Some(i) => ordered.push(parsed.remove(i)),
                None => {
                    let names: Vec<&str> = parsed.iter().map(|(n, _)| n.as_str()).collect();
                    return Err(format!(
                        "params: {} depend on each other; give one of them a value that does not",
                        names.join(", ")
                    ));
                }
            }
        }
        let mut scope = Scope::new(vec![(size_name.to_string(), 0)]);
        let mut named = Vec::with_capacity(ordered.len());
        for (slot, (name, e)) in ordered.into_iter().enumerate() {
            let code = compile(&e, &scope).map_err(|m| format!("params.{name}: {m}"))?;
            scope = scope.with_var(&name, slot + 1);
            named.push((name, code));
        }
        Ok(Params {
            size_name: size_name.to_string(),
            named,
        })
    }

    /// The scope every expression of the spec sees: the size and the named parameters.
    pub fn scope(&self) -> Scope {
        let mut vars = vec![(self.size_name.clone(), 0)];
        vars.extend(
            self.named
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (n.clone(), i + 1)),
        );
        Scope::new(vars)
    }

    /// Slots taken by the parameters.
    pub fn slots(&self) -> usize {
        self.named.len() + 1
    }

    /// The slot of the named parameter `name`, for `--param NAME=VALUE`; errors say what
    /// the spec has.
    pub fn override_slot(&self, name: &str) -> Result<usize, String> {
        if name == self.size_name {
            return Err(format!(
                "--param {name}: {name} is the spec's size; set it with --size"
            ));
        }
        match self.named.iter().position(|(n, _)| n == name) {
            Some(i) => Ok(i + 1),
            None if self.named.is_empty() => Err(format!(
                "--param {name}: the spec has no parameters besides its size {}",
                self.size_name
            )),
            None => {
                let names: Vec<&str> = self.named.iter().map(|(n, _)| n.as_str()).collect();
                Err(format!(
                    "--param {name}: the spec has no parameter {name} (it has {})",
                    names.join(", ")
                ))
            }
        }
    }

    /// The parameters' values for `size` with `overrides` (slot, value), written into the
    /// first [`Params::slots`] entries of `vars`.
    pub fn fill(
        &self,
        size: usize,
        overrides: &[(usize, f64)],
        vars: &mut [f64],
    ) -> Result<(), String> {
        vars[0] = size as f64;
        for (i, (name, default)) in self.named.iter().enumerate() {
            let slot = i + 1;
            let v = match overrides.iter().rev().find(|(s, _)| *s == slot) {
                Some(&(_, v)) => v,
                None => default.eval(vars, &[])?,
            };
            if !v.is_finite() {
                return Err(format!("parameter {name} evaluates to {v}"));
            }
            vars[slot] = v;
        }
        Ok(())
    }

    /// Each named parameter's value for `size` with `overrides`, for reports.
    pub fn values(
        &self,
        size: usize,
        overrides: &[(usize, f64)],
    ) -> Result<Vec<(String, f64)>, String> {
        let mut vars = vec![0.0; self.slots()];
        self.fill(size, overrides, &mut vars)?;
        Ok(self
            .named
            .iter()
            .enumerate()
            .map(|(i, (n, _))| (n.clone(), vars[i + 1]))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn defaults_follow_their_dependencies_and_overrides_propagate() {
        // Given out of order: NK reads NJ, NJ reads N.
        let p =
            Params::resolve("N", &raw(&[("NK", "NJ + 1"), ("NJ", "2 * N"), ("T", "10")])).unwrap();
        let names: Vec<&str> = p.named.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["NJ", "NK", "T"]);
        let v = p.values(5, &[]).unwrap();
        assert_eq!(
            v,
            vec![("NJ".into(), 10.0), ("NK".into(), 11.0), ("T".into(), 10.0)]
        );
        let nj = p.override_slot("NJ").unwrap();
        let v = p.values(5, &[(nj, 7.0)]).unwrap();
        assert_eq!(
            v[1],
            ("NK".into(), 8.0),
            "an override reaches the parameters that read it"
        );
    }

    #[test]
    fn bad_parameters_are_refused_with_their_name() {
        let e = Params::resolve("N", &raw(&[("A", "B"), ("B", "A + 1")])).unwrap_err();
        assert!(e.contains("A, B depend on each other"), "{e}");
        let e = Params::resolve("N", &raw(&[("A", "M")])).unwrap_err();
        assert!(
            e.contains("params.A") && e.contains("unknown variable 'M'"),
            "{e}"
        );
        assert!(Params::resolve("N", &raw(&[("N", "3")]))
            .unwrap_err()
            .contains("--size"));
        assert!(Params::resolve("N", &raw(&[("iter", "3")])).is_err());
        assert!(Params::resolve("N", &raw(&[("2x", "3")])).is_err());
        assert!(Params::resolve("iters", &[]).is_err());
        let p = Params::resolve("NX", &raw(&[("T", "NX / 2")])).unwrap();
        assert!(p.override_slot("NX").unwrap_err().contains("--size"));
        assert!(p.override_slot("Q").unwrap_err().contains("it has T"));
        assert_eq!(p.values(8, &[]).unwrap()[0].1, 4.0);
    }
}
