//! How much a shared machine drifts while a series runs (docs/models.md §2.4).
//!
//! A series runs its sizes in rounds (a, b, c, a, b, c, …), so a slow spell of the machine
//! (another tenant, a frequency change) slows every size of one round alike. Each round's
//! common factor — the mean over the sizes of log(run time / the size's median) — is the
//! machine's state during that round; their spread says how far the machine's speed wanders
//! from one stretch of time to the next. A prediction checked against a run made at another
//! time than the window's must allow for all of that wander, one whose target ran inside the
//! window's rounds only for how far the medians can sit from the rounds' common state
//! ([`drift_allowance`]); the prediction interval of a fit through the medians does not see
//! it (five medians can sit on a line to 0.1 % while whole rounds differ by 20 %).

/// The sample standard deviation of the rounds' common log factor, as a relative spread
/// (0.05: a round runs about 5 % faster or slower than the typical one).
///
/// `rounds[i]` holds size i's run times in the order they ran (`samples` of a series point,
/// round r at index r); `medians[i]` its median. Only the rounds every size completed are
/// used (sizes that needed more runs for their interval ran extra rounds alone). `None` with
/// fewer than three common rounds, a size without runs, or a non-positive time.
pub fn round_drift(rounds: &[&[f64]], medians: &[f64]) -> Option<f64> {
    if rounds.is_empty() || rounds.len() != medians.len() {
        return None;
    }
    let common = rounds.iter().map(|r| r.len()).min()?;
    if common < 3 {
        return None;
    }
    let valid = |x: f64| x.is_finite() && x > 0.0;
    if !medians.iter().all(|&m| valid(m)) || !rounds.iter().all(|r| r.iter().all(|&x| valid(x))) {
        return None;
    }
    let factors: Vec<f64> = (0..common)
        .map(|r| {
            rounds
                .iter()
                .zip(medians)
                .map(|(runs, m)| (runs[r] / m).ln())
                .sum::<f64>()
                / rounds.len() as f64
        })
        .collect();
    let mean = factors.iter().sum::<f64>() / common as f64;
    let var = factors.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / (common - 1) as f64;
    Some(var.sqrt())
}

/// How a prediction's target was measured relative to the window's rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedRounds {
    /// Rounds every window size ran.
    pub window: usize,
    /// Runs of the target, one per round, inside the same rounds.
    pub target: usize,
}

/// The relative spread a prediction's interval must allow for a round-to-round drift `d`
/// (one standard deviation, [`round_drift`]).
///
/// When the target ran at another time than the window (`shared` is `None`), the machine may
/// be in any of its states for either: the whole `d`. When the target ran inside the window's
/// rounds, a round's slow spell slows both alike, and what is left is how far each median
/// over its rounds can sit from the rounds' common state: at most, as if the two medians were
/// independent, 1.25·d·√(1/R_window + 1/R_target) (1.25/√R: the spread of a median of R
/// samples over that of one sample, for normal data). The window's medians share their
/// rounds, so the window counts as one median whatever its number of sizes.
pub fn drift_allowance(d: f64, shared: Option<SharedRounds>) -> f64 {
    match shared {
        Some(r) if r.window > 0 && r.target > 0 => {
            let (w, t) = (r.window as f64, r.target as f64);
            (1.25 * d * (1.0 / w + 1.0 / t).sqrt()).min(d)
        }
        _ => d,
    }
}

/// Widen a 95 % interval `[lo, hi]` around `estimate` by a relative drift `d` (one standard
/// deviation, [`round_drift`]): each side's half-width and 1.96·d·estimate are added in
/// quadrature, `hi' = e + √((hi − e)² + (1.96·d·e)²)`, and likewise below (never under 0).
pub fn widen_for_drift(estimate: f64, interval: [f64; 2], d: f64) -> [f64; 2] {
    let extra = 1.96 * d * estimate;
    let lo = (estimate - interval[0]).max(0.0);
    let hi = (interval[1] - estimate).max(0.0);
    [
        (estimate - lo.hypot(extra)).max(0.0),
        estimate + hi.hypot(extra),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_that_slows_every_size_is_drift() {
        // Three sizes, five rounds; round 2 runs 20 % slow at every size, the others at the
        // median. The common factors are 0, 0, ln 1.2, 0, 0, and d their sample sd.
        let base = [1.0, 2.0, 4.0];
        let rounds: Vec<Vec<f64>> = base.iter().map(|&b| vec![b, b, 1.2 * b, b, b]).collect();
        let refs: Vec<&[f64]> = rounds.iter().map(|r| r.as_slice()).collect();
        let d = round_drift(&refs, &base).unwrap();
        let f = 1.2f64.ln();
        let mean = f / 5.0;
        let want = (((4.0 * mean * mean) + (f - mean).powi(2)) / 4.0).sqrt();
        assert!((d - want).abs() < 1e-12, "{d} vs {want}");
    }

    #[test]
    fn noise_that_cancels_across_sizes_is_not_drift() {
        // Size 0 slow in round 1 where size 1 is fast by the same factor: no common factor.
        let rounds = [vec![1.0, 1.1, 1.0, 1.0], vec![2.0, 2.0 / 1.1, 2.0, 2.0]];
        let refs: Vec<&[f64]> = rounds.iter().map(|r| r.as_slice()).collect();
        assert!(round_drift(&refs, &[1.0, 2.0]).unwrap() < 1e-12);
    }

    #[test]
    fn only_the_rounds_every_size_ran_count() {
        // Size 1 ran two extra rounds (wildly off); they are ignored.
        let rounds = [vec![1.0, 1.0, 1.0], vec![2.0, 2.0, 2.0, 9.0, 0.1]];
        let refs: Vec<&[f64]> = rounds.iter().map(|r| r.as_slice()).collect();
        assert_eq!(round_drift(&refs, &[1.0, 2.0]), Some(0.0));
    }

    #[test]
    fn too_few_rounds_or_bad_times_give_nothing() {
        let two = [vec![1.0, 1.0]];
        let refs: Vec<&[f64]> = two.iter().map(|r| r.as_slice()).collect();
        assert_eq!(round_drift(&refs, &[1.0]), None);
        let bad = [vec![1.0, 0.0, 1.0]];
        let refs: Vec<&[f64]> = bad.iter().map(|r| r.as_slice()).collect();
        assert_eq!(round_drift(&refs, &[1.0]), None);
        assert_eq!(round_drift(&[], &[]), None);
    }

    #[test]
    fn a_target_inside_the_rounds_allows_for_the_medians_spread_only() {
        // Another time: all of it.
        assert_eq!(drift_allowance(0.2, None), 0.2);
        // Five rounds each: 1.25 · 0.2 · √(2/5).
        let shared = SharedRounds {
            window: 5,
            target: 5,
        };
        let want = 1.25 * 0.2 * (0.4f64).sqrt();
        assert!((drift_allowance(0.2, Some(shared)) - want).abs() < 1e-12);
        // Never more than the whole drift (R = 1 or 2), and nothing from no rounds.
        let one = SharedRounds {
            window: 1,
            target: 1,
        };
        assert_eq!(drift_allowance(0.2, Some(one)), 0.2);
        let none = SharedRounds {
            window: 0,
            target: 5,
        };
        assert_eq!(drift_allowance(0.2, Some(none)), 0.2);
    }

    #[test]
    fn drift_widens_each_side_in_quadrature() {
        // e = 10, [7, 14]; d = 0.1 → 1.96: sides √(3² + 1.96²) and √(4² + 1.96²).
        let [lo, hi] = widen_for_drift(10.0, [7.0, 14.0], 0.1);
        assert!((lo - (10.0 - 3.0f64.hypot(1.96))).abs() < 1e-12);
        assert!((hi - (10.0 + 4.0f64.hypot(1.96))).abs() < 1e-12);
        // No drift: unchanged; a huge drift never goes below zero.
        assert_eq!(widen_for_drift(10.0, [7.0, 14.0], 0.0), [7.0, 14.0]);
        assert_eq!(widen_for_drift(10.0, [7.0, 14.0], 5.0)[0], 0.0);
    }
}
