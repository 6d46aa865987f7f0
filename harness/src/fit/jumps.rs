//! Sizes slow (or fast) for a reason no power law knows: a size whose time per unit of work
//! stands out from both of its neighbours'. On CPUs and GPUs a power-of-two grid side can
//! map every row to the same cache sets (a cache-set conflict), and one such size bends a
//! log-log fit; the window rules leave it out with this finding as the reason.
//!
//! Only a spike counts: a size more than [`JUMP_RATIO`] times slower per unit of work than
//! *both* neighbours (or that many times faster than both). A step into a slower memory level
//! raises the per-unit time from one size on and is not a spike, so it is not flagged.

use serde::{Deserialize, Serialize};

/// How far a size's time per unit of work must stand from both neighbours' to be flagged.
pub const JUMP_RATIO: f64 = 2.0;

/// A flagged size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Jump {
    /// The size N.
    pub size: usize,
    /// Its time per unit of work over the geometric mean of its neighbours'.
    pub ratio: f64,
    /// The neighbouring sizes it was compared with.
    pub neighbours: [usize; 2],
}

impl Jump {
    /// One sentence saying what was found, for tables and window reports.
    ///
    /// ```
    /// use harness::fit::jumps::Jump;
    /// let j = Jump { size: 64, ratio: 4.1, neighbours: [56, 72] };
    /// assert_eq!(
    ///     j.reason(),
    ///     "N = 64: 4.1× the time per unit of work of N = 56 and 72 (cache-set conflict?)"
    /// );
    /// ```
    pub fn reason(&self) -> String {
        let what = if self.ratio >= 1.0 {
            format!("{:.1}×", self.ratio)
        } else {
            format!("1/{:.1}", 1.0 / self.ratio)
        };
        format!(
            "N = {}: {what} the time per unit of work of N = {} and {}{}",
            self.size,
            self.neighbours[0],
            self.neighbours[1],
            if self.ratio >= 1.0 {
                " (cache-set conflict?)"
            } else {
                ""
            }
        )
    }
}

/// The spikes among `points` (size, seconds, units of work), taken in ascending size. A
/// point without a positive time or work is never flagged and never a neighbour.
///
/// ```
/// use harness::fit::jumps::per_unit_jumps;
/// // Linear work, one size 4× slower per unit than its neighbours.
/// let points = [(48, 48.0, 48.0), (56, 56.0, 56.0), (64, 256.0, 64.0), (72, 72.0, 72.0)];
/// let jumps = per_unit_jumps(&points, 2.0);
/// assert_eq!(jumps.len(), 1);
/// assert_eq!(jumps[0].size, 64);
/// assert!((jumps[0].ratio - 4.0).abs() < 1e-12);
/// ```
pub fn per_unit_jumps(points: &[(usize, f64, f64)], ratio: f64) -> Vec<Jump> {
    let mut valid: Vec<(usize, f64)> = points
        .iter()
        .filter(|(_, t, w)| *t > 0.0 && *w > 0.0 && t.is_finite() && w.is_finite())
        .map(|&(n, t, w)| (n, t / w))
        .collect();
    valid.sort_by_key(|p| p.0);
    valid
        .windows(3)
        .filter_map(|w| {
            let (before, here, after) = (w[0].1, w[1].1, w[2].1);
            let (up, down) = (here / before, here / after);
            let spike = (up > ratio && down > ratio) || (up < 1.0 / ratio && down < 1.0 / ratio);
            spike.then(|| Jump {
                size: w[1].0,
                ratio: here / (before * after).sqrt(),
                neighbours: [w[0].0, w[2].0],
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_into_a_slower_level_is_not_a_spike() {
        // Per-unit time 1, 1, 3, 3, 3: a new memory level from N = 3 on.
        let points: Vec<(usize, f64, f64)> = [1.0, 1.0, 3.0, 3.0, 3.0]
            .iter()
            .enumerate()
            .map(|(i, &u)| (i + 1, u * (i + 1) as f64, (i + 1) as f64))
            .collect();
        assert!(per_unit_jumps(&points, JUMP_RATIO).is_empty());
    }

    #[test]
    fn fast_spikes_are_found_and_ends_are_never_flagged() {
        let points = [
            (10, 100.0, 1.0),
            (20, 100.0, 1.0),
            (30, 10.0, 1.0),
            (40, 100.0, 1.0),
            (50, 900.0, 1.0),
        ];
        let jumps = per_unit_jumps(&points, 2.0);
        assert_eq!(jumps.len(), 1, "{jumps:?}");
        assert_eq!((jumps[0].size, jumps[0].neighbours), (30, [20, 40]));
        assert!((jumps[0].ratio - 0.1).abs() < 1e-12);
        assert!(
            jumps[0].reason().contains("1/10.0"),
            "{}",
            jumps[0].reason()
        );
    }

    #[test]
    fn unordered_and_invalid_points_are_handled() {
        let points = [
            (72, 72.0, 72.0),
            (64, 256.0, 64.0),
            (60, 0.0, 60.0),
            (56, 56.0, 56.0),
        ];
        let jumps = per_unit_jumps(&points, 2.0);
        assert_eq!(jumps.len(), 1);
        assert_eq!(jumps[0].neighbours, [56, 72]);
        assert!(per_unit_jumps(&[], 2.0).is_empty());
    }
}
