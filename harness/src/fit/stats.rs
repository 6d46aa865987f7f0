//! Summary statistics of repeated timings: the median with a distribution-free 95 %
//! confidence interval, and outliers flagged by the modified Z-score (never dropped).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// z for a two-sided 95 % interval of the normal distribution.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// Scales the median absolute deviation to a standard deviation for normal data
/// (0.6745 = the 75th percentile of the standard normal; Iglewicz & Hoaglin, 1993).
pub const MAD_TO_Z: f64 = 0.6745;

/// A sample whose modified Z-score exceeds this is flagged as an outlier
/// (Iglewicz & Hoaglin's recommended 3.5; hyperfine uses the same rule).
pub const OUTLIER_Z: f64 = 3.5;

/// Errors from the statistics helpers.
#[derive(Debug, Error, PartialEq)]
pub enum StatsError {
    /// No samples at all.
    #[error("no samples")]
    Empty,
    /// A NaN or infinite sample.
    #[error("sample {index} is not a finite number ({value})")]
    NotFinite {
        /// Position of the sample.
        index: usize,
        /// Its value.
        value: f64,
    },
}

/// The median of repeated measurements with its 95 % confidence interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// The median.
    pub median: f64,
    /// 95 % confidence interval of the median `[low, high]`.
    pub ci95: [f64; 2],
    /// The arithmetic mean (reported, not used for decisions).
    pub mean: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Median absolute deviation.
    pub mad: f64,
    /// Samples whose modified Z-score exceeds [`OUTLIER_Z`]; kept in every statistic.
    pub outliers: usize,
}

impl Summary {
    /// Summarise `samples` (any order). Fails on an empty sample or a non-finite value.
    ///
    /// The interval is the distribution-free order-statistic interval for the median: with
    /// n samples sorted, ranks `⌊n/2 − z√n/2⌋` and `⌈1 + n/2 + z√n/2⌉` (the normal
    /// approximation of the Binomial(n, ½) quantiles). Below 6 samples it is `[min, max]`.
    ///
    /// ```
    /// use harness::fit::stats::Summary;
    /// let s = Summary::new(&[3.0, 1.0, 2.0]).unwrap();
    /// assert_eq!(s.median, 2.0);
    /// assert_eq!(s.ci95, [1.0, 3.0]);
    /// ```
    pub fn new(samples: &[f64]) -> Result<Self, StatsError> {
        if samples.is_empty() {
            return Err(StatsError::Empty);
        }
        if let Some((index, &value)) = samples.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(StatsError::NotFinite { index, value });
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = median_of_sorted(&sorted);
        let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
        deviations.sort_by(f64::total_cmp);
        let mad = median_of_sorted(&deviations);
        let outliers = sorted
            .iter()
            .filter(|&&x| modified_z(x, median, mad) > OUTLIER_Z)
            .count();
        Ok(Summary {
            count: sorted.len(),
            median,
            ci95: median_ci95(&sorted),
            mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            mad,
            outliers,
        })
    }

    /// Half the CI's width relative to the median (0.02 = ±2 %); infinite where the
    /// interval covers the median with less than 95 % confidence (under 6 samples, see
    /// [`Summary::ci_coverage`]), so a stop rule that compares it with a target never counts
    /// such an interval as met.
    pub fn relative_half_width(&self) -> f64 {
        if self.median == 0.0 || self.ci_coverage() < 0.95 {
            return f64::INFINITY;
        }
        (self.ci95[1] - self.ci95[0]) / 2.0 / self.median.abs()
    }

    /// The confidence with which `ci95` covers the true median, exactly (from the binomial
    /// distribution of the order statistics, for any continuous distribution of the
    /// samples): at least 95 % from 6 samples on; below that the interval is `[min, max]`,
    /// which covers it with 1 − 2^(1−n): 0 % for one sample, 50 % for two, 93.75 % for five.
    pub fn ci_coverage(&self) -> f64 {
        median_ci_coverage(self.count)
    }
}

/// Modified Z-score `0.6745·|x − median| / MAD`; zero when MAD is zero and x is the median.
pub fn modified_z(x: f64, median: f64, mad: f64) -> f64 {
    let deviation = (x - median).abs();
    if mad == 0.0 {
        return if deviation == 0.0 { 0.0 } else { f64::INFINITY };
    }
    MAD_TO_Z * deviation / mad
}

/// The median of an already sorted, non-empty slice.
pub fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if !n.is_multiple_of(2) {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of an already sorted, non-empty slice, linearly
/// interpolated between order statistics (the rank q·(n − 1), counted from 0).
pub fn quantile_of_sorted(sorted: &[f64], q: f64) -> f64 {
    let rank = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = rank.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo as f64)
}

/// The 1-based ranks of the order statistics that bound the median's interval of `n` samples.
fn median_ci_ranks(n: usize) -> (usize, usize) {
    if n < 6 {
        return (1, n.max(1));
    }
    let nf = n as f64;
    let half = Z_95 * nf.sqrt() / 2.0;
    // Clamped into the sample.
    let lo_rank = ((nf / 2.0 - half).floor() as usize).max(1);
    let hi_rank = ((1.0 + nf / 2.0 + half).ceil() as usize).min(n);
    (lo_rank, hi_rank)
}

fn median_ci95(sorted: &[f64]) -> [f64; 2] {
    let (lo, hi) = median_ci_ranks(sorted.len());
    [sorted[lo - 1], sorted[hi - 1]]
}

/// The exact coverage of the median's interval ([`Summary::ci95`]) for `n` samples: the
/// chance that the order statistics of ranks lo and hi bracket the median,
/// Σ_{k=lo}^{hi−1} C(n, k)/2ⁿ.
pub fn median_ci_coverage(n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let (lo, hi) = median_ci_ranks(n);
    // Binomial(n, ½) probabilities in logs, so that large n neither overflows nor underflows.
    let ln_choose = |k: usize| -> f64 {
        (1..=k)
            .map(|i| ((n - k + i) as f64).ln() - (i as f64).ln())
            .sum()
    };
    let ln_half_n = n as f64 * 0.5f64.ln();
    (lo..hi).map(|k| (ln_choose(k) + ln_half_n).exp()).sum()
}

#[cfg(test)]
mod tests {
    use super::quantile_of_sorted;

    #[test]
    fn a_quantile_interpolates_between_order_statistics() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert_eq!(quantile_of_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_of_sorted(&v, 0.5), 3.0);
        assert_eq!(quantile_of_sorted(&v, 1.0), 5.0);
        assert!((quantile_of_sorted(&v, 0.025) - 1.1).abs() < 1e-12);
        assert_eq!(quantile_of_sorted(&[7.0], 0.3), 7.0);
    }

    use super::*;

    #[test]
    fn the_intervals_coverage_is_exact_and_below_six_samples_under_95_percent() {
        // [min, max] of n samples covers the median with 1 − 2^(1−n).
        assert_eq!(median_ci_coverage(1), 0.0);
        assert!((median_ci_coverage(2) - 0.5).abs() < 1e-12);
        assert!((median_ci_coverage(5) - 0.9375).abs() < 1e-12);
        assert!((median_ci_coverage(6) - 0.96875).abs() < 1e-12);
        // Ranks 40 and 61 of 100: P(40 ≤ B < 61) for B ~ Binomial(100, ½) = 0.9648.
        assert!((median_ci_coverage(100) - 0.9648).abs() < 1e-3);
        for n in 6..400 {
            assert!(median_ci_coverage(n) >= 0.95, "n = {n}");
        }
        let five = Summary::new(&[1.0, 1.0, 1.0, 1.0, 1.0]).unwrap();
        assert_eq!(five.relative_half_width(), f64::INFINITY);
        let six = Summary::new(&[1.0; 6]).unwrap();
        assert_eq!(six.relative_half_width(), 0.0);
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(Summary::new(&[5.0, 1.0, 3.0]).unwrap().median, 3.0);
        assert_eq!(Summary::new(&[4.0, 1.0, 3.0, 2.0]).unwrap().median, 2.5);
    }

    #[test]
    fn ci_of_hundred_samples_uses_ranks_40_and_61() {
        // n = 100: 50 − 1.96·10/2 = 40.2 → rank 40; 1 + 50 + 9.8 = 60.8 → rank 61.
        let samples: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = Summary::new(&samples).unwrap();
        assert_eq!(s.ci95, [40.0, 61.0]);
        assert_eq!(s.median, 50.5);
    }

    #[test]
    fn mad_and_outliers_by_hand() {
        // median 3, deviations [2,1,0,1,97] → MAD 1; 100 has z = 0.6745·97 ≫ 3.5.
        let s = Summary::new(&[1.0, 2.0, 3.0, 4.0, 100.0]).unwrap();
        assert_eq!(s.mad, 1.0);
        assert_eq!(s.outliers, 1);
        assert_eq!(s.count, 5, "outliers are flagged, not dropped");
        assert_eq!(s.max, 100.0);
    }

    #[test]
    fn rejects_empty_and_nan() {
        assert_eq!(Summary::new(&[]), Err(StatsError::Empty));
        assert!(matches!(
            Summary::new(&[1.0, f64::NAN]),
            Err(StatsError::NotFinite { index: 1, .. })
        ));
    }

    #[test]
    fn relative_half_width() {
        let s = Summary::new(&[9.0, 10.0, 10.0, 10.0, 10.0, 11.0]).unwrap();
        assert!((s.relative_half_width() - 0.1).abs() < 1e-12);
    }
}
