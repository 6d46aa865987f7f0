//! Repetitions until the median is known well enough: warm-up runs, then samples until the
//! 95 % CI half-width of the median is under a target, or a cap on runs or time is hit.

use serde::{Deserialize, Serialize};

use super::BenchError;
use crate::fit::stats::Summary;

/// How many repetitions to take.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingPlan {
    /// Runs discarded before sampling (caches, clocks, JIT).
    pub warmup: usize,
    /// Samples always taken.
    pub min_runs: usize,
    /// Samples never exceeded.
    pub max_runs: usize,
    /// Stop when the CI half-width of the median is below this fraction of it.
    pub target_relative_ci: f64,
    /// Stop sampling one quantity after this many seconds of wall time.
    pub max_seconds: f64,
}

impl SamplingPlan {
    /// The full plan: ±2 % on the median, 10–200 samples, at most 2 s per quantity.
    pub fn full() -> Self {
        SamplingPlan {
            warmup: 2,
            min_runs: 10,
            max_runs: 200,
            target_relative_ci: 0.02,
            max_seconds: 2.0,
        }
    }

    /// The quick plan: ±5 %, 6–30 samples, at most 0.3 s per quantity.
    pub fn quick() -> Self {
        SamplingPlan {
            warmup: 1,
            min_runs: 6,
            max_runs: 30,
            target_relative_ci: 0.05,
            max_seconds: 0.3,
        }
    }
}

/// Samples of one quantity and their summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Median, CI, outliers.
    pub summary: Summary,
    /// Every sample, in the order taken.
    pub samples: Vec<f64>,
    /// Whether the CI target was met before a cap.
    pub converged: bool,
}

/// Run `run` under `plan` and summarise. `name` labels errors.
pub fn measure(
    plan: &SamplingPlan,
    name: &str,
    mut run: impl FnMut() -> Result<f64, BenchError>,
) -> Result<Measured, BenchError> {
    for _ in 0..plan.warmup {
        run()?;
    }
    let start = std::time::Instant::now();
    let mut samples = Vec::with_capacity(plan.min_runs);
    let mut converged = false;
    while samples.len() < plan.max_runs {
        samples.push(run()?);
        if samples.len() >= plan.min_runs {
            let summary = Summary::new(&samples).map_err(|source| stats_err(name, source))?;
            if summary.relative_half_width() <= plan.target_relative_ci {
                converged = true;
                break;
            }
            if start.elapsed().as_secs_f64() > plan.max_seconds {
                break;
            }
        }
    }
    let summary = Summary::new(&samples).map_err(|source| stats_err(name, source))?;
    Ok(Measured {
        summary,
        samples,
        converged,
    })
}

fn stats_err(name: &str, source: crate::fit::stats::StatsError) -> BenchError {
    BenchError::Stats {
        what: name.to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_samples_converge_at_min_runs() {
        let m = measure(&SamplingPlan::full(), "x", || Ok(1.0)).unwrap();
        assert!(m.converged);
        assert_eq!(m.samples.len(), 10);
    }

    #[test]
    fn noisy_samples_stop_at_the_cap() {
        let mut k = 0u32;
        let plan = SamplingPlan {
            max_runs: 20,
            ..SamplingPlan::full()
        };
        let m = measure(&plan, "x", || {
            k += 1;
            Ok(if k.is_multiple_of(2) { 1.0 } else { 3.0 })
        })
        .unwrap();
        assert!(!m.converged);
        assert_eq!(m.samples.len(), 20);
    }
}
