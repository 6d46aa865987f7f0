//! The footprint of a launch's declared gathers: how much of the gathered buffer a stretch of
//! its reads covers, found from the index buffer's initial contents (docs/models.md §2.4,
//! step 1, "Gathers").
//!
//! A sparse product over a random matrix reads its vector anywhere: a stretch of reads spans
//! the whole vector, and each read pays what a gather from that many bytes costs. A banded
//! matrix (a stencil's operator) or a restriction's map reads it within a band that moves
//! along with the work items, so what its reads cost follows the band's bytes, not the
//! vector's. The index buffer says which: its indices in storage order, the order a kernel
//! reading its own run of them meets them.

use super::super::format::{ArgSpec, Init, LaunchSpec, SpecWorkload};
use super::super::source_access::source_gathers;
use super::{random_values, FORMULA_CHUNK};
use crate::workloads::STRETCH_READS;

/// Stretches measured, spread evenly over the index buffer (overlapping where it is short).
const STRETCHES: usize = 64;

/// The buffer launch `l`'s kernel reads buffer `gathered` (indices into the spec's buffers)
/// through, as `x[idx[…]]` in its source; `None` where the source shows no such read.
pub(super) fn index_buffer(spec: &SpecWorkload, l: &LaunchSpec, gathered: usize) -> Option<usize> {
    let buffer_at = |p: usize| match l.args.get(p) {
        Some(&ArgSpec::Buffer(b)) => Some(b),
        _ => None,
    };
    source_gathers(&spec.source_text, &l.kernel)
        .into_iter()
        .find(|g| buffer_at(g.param) == Some(gathered))
        .and_then(|g| buffer_at(g.index_param))
}

/// The bytes of buffer `gathered` that a stretch of [`STRETCH_READS`] consecutive indices
/// of buffer `index` covers (both indices into the spec's buffers, `lengths` their lengths
/// at `vars`), as the median over [`STRETCHES`] stretches spread evenly over `index`, at
/// most `bytes` (`gathered`'s). `None` where `index` is written by the kernels
/// (`init = "none"`) or its initial values cannot be evaluated: the reads may land anywhere.
pub(in crate::workloads::spec) fn gather_footprint(
    spec: &SpecWorkload,
    (gathered, index): (usize, usize),
    vars: &[f64],
    lengths: &[usize],
    bytes: u64,
) -> Option<u64> {
    let len = lengths[index];
    let stretch = STRETCH_READS.min(len);
    // Stretches spread evenly over the buffer: its start may be a grid's boundary plane.
    let starts: Vec<usize> = (0..STRETCHES)
        .map(|k| k * (len - stretch) / STRETCHES.saturating_sub(1).max(1))
        .collect();
    let init = &spec.buffers[index].init;
    // Independent draws: the first stretches are like any others.
    let drawn = match init {
        Init::Random { lo, hi, seed } => {
            random_values(*lo, *hi, *seed, stretch * STRETCHES, FORMULA_CHUNK)
        }
        _ => Vec::new(),
    };
    let mut spans = Vec::with_capacity(STRETCHES);
    for (k, &first) in starts.iter().enumerate() {
        let values = match init {
            Init::Uninitialised => return None,
            Init::Constant(v) => vec![*v; stretch],
            Init::Random { .. } => drawn[k * stretch..(k + 1) * stretch].to_vec(),
            Init::Formula(f) => {
                let mut out = vec![0.0; stretch];
                f.eval_range(vars, spec.slots.element, first, &[], &mut out)
                    .ok()?;
                out
            }
        };
        spans.push(span(&values)?);
    }
    let element = spec.buffers[gathered].element.bytes() as u64;
    spans.sort_unstable();
    let median = spans[spans.len() / 2];
    Some(median.saturating_mul(element).min(bytes))
}

/// The elements one stretch of indices covers, max − min + 1; `None` where it is empty or
/// one is no number.
fn span(indices: &[f64]) -> Option<u64> {
    let (lo, hi) =
        indices
            .iter()
            .try_fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                v.is_finite()
                    .then(|| (lo.min(v.floor()), hi.max(v.floor())))
            })?;
    (lo <= hi).then(|| (hi - lo) as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_band_spans_its_width_and_scattered_indices_the_whole_range() {
        // A 7-point band over rows of 100: each row reads i − 100, i − 10, i − 1, i, i + 1,
        // i + 10, i + 100: 1,024 reads cross about 146 rows, a span of about 346 elements.
        let band: Vec<f64> = (1_000..1_147)
            .flat_map(|r: i64| [-100, -10, -1, 0, 1, 10, 100].map(|d| (r + d) as f64))
            .take(1024)
            .collect();
        let width = span(&band).expect("span");
        assert!((340..=350).contains(&width), "band span {width}");
        // A hash over 1,000,000 elements: a stretch lands everywhere.
        let scattered: Vec<f64> = (0..1024u64)
            .map(|i| ((i * 40_503 + (i * i) % 65_521) % 1_000_000) as f64)
            .collect();
        let width = span(&scattered).expect("span");
        assert!(width > 990_000, "scattered span {width}");
        // Every other element of a row, in order: a stretch spans twice its reads.
        let strided: Vec<f64> = (0..1024).map(|i| 2.0 * i as f64).collect();
        assert_eq!(span(&strided), Some(2 * 1023 + 1));
        assert_eq!(span(&[]), None);
        assert_eq!(span(&[1.0, f64::NAN]), None);
    }
}
