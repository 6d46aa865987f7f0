//! What a spec's launches declare about themselves beyond what they run: their access
//! patterns (`access = "…"`), collected per kernel for the `calibrated` prediction.

use super::format::{LaunchSpec, Step};
use crate::workloads::Access;

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
