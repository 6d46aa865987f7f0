//! Repetitions until the median is known well enough: warm-up runs, then samples until the
//! 95 % CI half-width of the median is under a target, or a cap on runs or time is hit.

use serde::{Deserialize, Serialize};

use super::BenchError;
use crate::fit::stats::{median_of_sorted, Summary};

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
    /// In [`measure_in_rounds`], the least time each visit spends on discarded runs before
    /// its samples, seconds (0 in calibrations made before 2026-11-26, whose visits discarded
    /// `warmup` runs only). A few launches are not enough on a CPU: on the 2-vCPU AMD EPYC the
    /// bandwidth sweep's triad, two discarded launches a visit, measured 106–146 GB/s from
    /// 2 to 16 MiB, where visits warmed for 1, 2 or 5 ms measured 192–277 GB/s (alike for the
    /// three; at 128 MiB 52–92 GB/s either way, as the memory's rate moved), and the max-plus
    /// validation's triad over 3 MB, run 20 ms at a time, streamed at about 230 GB/s. A kernel
    /// that keeps running gets the warmed rate, and that is the rate a prediction of one
    /// needs.
    #[serde(default)]
    pub visit_warmup_seconds: f64,
    /// In [`measure`] (a quantity measured alone: one point of the serialization sweeps, of
    /// the latency chase, a transfer size, the launch overhead), the least time spent on
    /// discarded runs before its samples, seconds (0 in calibrations made before the evening
    /// of 2026-11-26, which discarded `warmup` runs only). The same lack as the sweep's: on
    /// the 2-vCPU AMD EPYC, with two discarded launches a point, the strided read sweep (the
    /// calibrated variant's line rate) read 106–116 GB/s at 512 KiB, the first point the host
    /// pool splits over both cores, in three full calibrations of three, and 74–126 GB/s from
    /// 768 KiB to 12 MiB in one quick calibration; warmed for 2 ms, 182–204 and 144–219.
    #[serde(default)]
    pub point_warmup_seconds: f64,
}

/// [`SamplingPlan::visit_warmup_seconds`] and [`SamplingPlan::point_warmup_seconds`] of the
/// full and quick plans.
pub const VISIT_WARMUP_SECONDS: f64 = 2e-3;

impl SamplingPlan {
    /// The full plan: ±2 % on the median, 10–200 samples, at most 2 s per quantity.
    pub fn full() -> Self {
        SamplingPlan {
            warmup: 2,
            min_runs: 10,
            max_runs: 200,
            target_relative_ci: 0.02,
            max_seconds: 2.0,
            visit_warmup_seconds: VISIT_WARMUP_SECONDS,
            point_warmup_seconds: VISIT_WARMUP_SECONDS,
        }
    }

    /// The quick plan: ±5 %, 6–12 samples, at most 0.3 s per quantity. A sweep's rounds go
    /// on until every quantity meets its interval or one reaches its cap on samples, and on a
    /// shared machine some working set always misses ±5 %: the cap is what ends most of
    /// them, so 12 (until 2026-11-29, 30; until 2026-12-01, 20) is what keeps `--quick`
    /// under 15 s on two cores (PoCL on the Intel Xeon VM: 16–17 s with 20, 14–15 s with 12;
    /// with 12 samples the median's interval is still an order-statistic 95 % one).
    pub fn quick() -> Self {
        SamplingPlan {
            warmup: 1,
            min_runs: 6,
            max_runs: 12,
            target_relative_ci: 0.05,
            max_seconds: 0.3,
            visit_warmup_seconds: VISIT_WARMUP_SECONDS,
            point_warmup_seconds: VISIT_WARMUP_SECONDS,
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

/// Run `run` under `plan` and summarise: `plan.warmup` discarded runs, and more until
/// `plan.point_warmup_seconds` have passed, then samples until the median's interval is
/// narrow enough, a cap is hit, or doubling the samples no longer narrows the interval
/// ([`DRIFT_NARROWING`]). `name` labels errors.
pub fn measure(
    plan: &SamplingPlan,
    name: &str,
    mut run: impl FnMut() -> Result<f64, BenchError>,
) -> Result<Measured, BenchError> {
    let warming = std::time::Instant::now();
    let mut discarded = 0;
    while discarded < plan.warmup || warming.elapsed().as_secs_f64() < plan.point_warmup_seconds {
        run()?;
        discarded += 1;
    }
    let start = std::time::Instant::now();
    let mut samples = Vec::with_capacity(plan.min_runs);
    let mut converged = false;
    let mut narrowing = Narrowing::default();
    while samples.len() < plan.max_runs {
        samples.push(run()?);
        if samples.len() >= plan.min_runs {
            let summary = Summary::new(&samples).map_err(|source| stats_err(name, source))?;
            let width = summary.relative_half_width();
            if width <= plan.target_relative_ci {
                converged = true;
                break;
            }
            if start.elapsed().as_secs_f64() > plan.max_seconds
                || narrowing.stalled(samples.len(), width)
            {
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

/// Whether a visit of [`measure_in_rounds`] has warmed up after `discarded` runs and
/// `elapsed` seconds: at least one run and `plan.visit_warmup_seconds`, and where the plan
/// sets no warm-up time (calibrations before 2026-11-26), `plan.warmup` runs. A run that alone
/// lasts the warm-up time warms the visit (a working set past the caches is read whole by
/// it); two of them, as before 2026-11-30, spent half of each visit of the random gather's
/// largest working sets, 0.2 s a run on the Intel Xeon VM, on discarded runs.
fn warmed_up(plan: &SamplingPlan, discarded: usize, elapsed: f64) -> bool {
    if plan.visit_warmup_seconds > 0.0 {
        discarded >= 1 && elapsed >= plan.visit_warmup_seconds
    } else {
        discarded >= plan.warmup.max(1)
    }
}

/// The median of `samples`, `None` without any.
fn median_of(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    (!sorted.is_empty()).then(|| median_of_sorted(&sorted))
}

/// Samples each quantity takes per round of [`measure_in_rounds`], at least.
const SAMPLES_PER_ROUND: usize = 2;
/// The most samples one visit of [`measure_in_rounds`] takes ([`samples_per_visit`]).
const MAX_SAMPLES_PER_VISIT: usize = 16;

/// Samples the next visit of a quantity takes in [`measure_in_rounds`]: enough that they last
/// about as long as its warm-up did (`warm` seconds on discarded runs, `sampled` seconds on its
/// `taken` samples), from [`SAMPLES_PER_ROUND`] to [`MAX_SAMPLES_PER_VISIT`]. A visit's
/// warm-up is 2 ms at least, and at working sets whose samples take a few hundred
/// microseconds two samples a visit left most of a sweep's time in warm-ups: on the 2-core
/// EPYC VM the host's bandwidth sweep spent 14.4 s where its samples summed to 2.5 s, the
/// working sets in the cache's step (32 and 64 MiB) drifting too much for ±2 % and sampled to
/// their cap of 200, two at a time. A visit of a few milliseconds is still short against the
/// drift the rounds spread over every quantity (seconds to minutes).
fn samples_per_visit(warm: f64, sampled: f64, taken: usize) -> usize {
    if !(warm > 0.0 && sampled > 0.0 && taken > 0) {
        return SAMPLES_PER_ROUND;
    }
    let per_sample = sampled / taken as f64;
    ((warm / per_sample).ceil().min(MAX_SAMPLES_PER_VISIT as f64) as usize)
        .clamp(SAMPLES_PER_ROUND, MAX_SAMPLES_PER_VISIT)
}
/// Rounds [`measure_in_rounds`] always takes.
const MIN_ROUNDS: usize = 3;

/// Several quantities measured in rounds — every quantity a few samples, then the next, then
/// again from the first (a, b, c, a, b, c, …) — so that a slow spell of a shared machine
/// lands on all of them alike instead of on whichever was being measured, and each
/// quantity's interval shows the drift over the whole measurement, not one moment of it.
/// `run(i)` takes one sample of quantity `i`; each visit starts with discarded runs until
/// it has warmed up (`warmed_up`), since the runs before it were of another quantity, and
/// then takes two samples, or where a warm-up time is set, as many as last about as long as
/// the warm-up (`samples_per_visit`; the first visit two). Rounds continue until every
/// quantity has `plan.min_runs` samples over at least three rounds and its CI target is met,
/// or every quantity still in the rotation is at its cap, `plan.max_runs` samples or, with
/// its minimum of samples, `plan.max_seconds` of its own visits (one that is sits out the
/// rounds left), or `plan.max_seconds` per quantity have passed in all. A quantity
/// whose target is met after those three rounds leaves the rotation (its median is known;
/// more samples would only cost time), so the rounds go on over the noisy ones alone: on a
/// shared CPU, where one noisy working set kept every other one sampling to the cap, this is
/// most of a sweep's time. So does one whose interval no longer narrows as its samples double
/// ([`DRIFT_NARROWING`]): its spread is the machine's drift, and its interval says so.
pub fn measure_in_rounds(
    plan: &SamplingPlan,
    names: &[String],
    run: impl FnMut(usize) -> Result<f64, BenchError>,
) -> Result<Vec<Measured>, BenchError> {
    measure_in_rounds_past_caches(plan, names, &[], run)
}

/// [`measure_in_rounds`], where `past_caches[i]` says that quantity `i`'s working set lies
/// past the device's caches (twice the largest it reports, or more). After its first visit
/// such a quantity takes its samples without discarded runs once a sample of it lasts as
/// long as a visit's warm-up ([`SamplingPlan::visit_warmup_seconds`]): nothing a discarded
/// run brings into the caches survives to the samples, and one sample keeps the device busy
/// as long as the warm-up would. The random gather sweep's largest working sets, 0.1–0.2 s
/// a sample on the 2-core Intel Xeon VM, spent a third of their time so until 2026-12-01.
pub fn measure_in_rounds_past_caches(
    plan: &SamplingPlan,
    names: &[String],
    past_caches: &[bool],
    mut run: impl FnMut(usize) -> Result<f64, BenchError>,
) -> Result<Vec<Measured>, BenchError> {
    let start = std::time::Instant::now();
    let budget = plan.max_seconds * names.len() as f64;
    let mut samples = vec![Vec::new(); names.len()];
    // Whether each quantity has left the rotation: its interval met the target after the
    // rounds every quantity takes.
    let mut settled = vec![false; names.len()];
    let mut per_visit = vec![SAMPLES_PER_ROUND; names.len()];
    let mut narrowing = vec![Narrowing::default(); names.len()];
    // Wall time each quantity's visits took, warm-ups included.
    let mut spent = vec![0.0f64; names.len()];
    let at_cap = |samples: &[f64], spent: f64| {
        samples.len() >= plan.max_runs
            || (samples.len() >= plan.min_runs && spent >= plan.max_seconds)
    };
    let mut rounds = 0;
    loop {
        for (i, samples) in samples.iter_mut().enumerate() {
            // A quantity at its cap of samples, or of time with its minimum of samples, sits
            // out the rounds left.
            if settled[i] || at_cap(samples, spent[i]) {
                continue;
            }
            let visit = std::time::Instant::now();
            let mut discarded = 0;
            let long = plan.visit_warmup_seconds > 0.0
                && median_of(samples).is_some_and(|m| m >= plan.visit_warmup_seconds);
            let unwarmed = past_caches.get(i).copied().unwrap_or(false) && long;
            while !unwarmed && !warmed_up(plan, discarded, visit.elapsed().as_secs_f64()) {
                run(i)?;
                discarded += 1;
            }
            let warm = visit.elapsed().as_secs_f64();
            let sampling = std::time::Instant::now();
            let take = per_visit[i].min(plan.max_runs - samples.len());
            for _ in 0..take {
                samples.push(run(i)?);
            }
            if plan.visit_warmup_seconds > 0.0 {
                per_visit[i] = samples_per_visit(warm, sampling.elapsed().as_secs_f64(), take);
            }
            spent[i] += visit.elapsed().as_secs_f64();
        }
        rounds += 1;
        let summaries = names
            .iter()
            .zip(&samples)
            .map(|(name, s)| Summary::new(s).map_err(|source| stats_err(name, source)))
            .collect::<Result<Vec<_>, _>>()?;
        if rounds >= MIN_ROUNDS {
            for (((settled, s), m), narrowing) in settled
                .iter_mut()
                .zip(&samples)
                .zip(&summaries)
                .zip(&mut narrowing)
            {
                if *settled || s.len() < plan.min_runs {
                    continue;
                }
                let width = m.relative_half_width();
                *settled = width <= plan.target_relative_ci || narrowing.stalled(s.len(), width);
            }
        }
        // Every quantity still in the rotation at its cap (visits of several samples reach it
        // in fewer rounds than those of two), or the time is up.
        let capped = samples
            .iter()
            .zip(&settled)
            .zip(&spent)
            .all(|((s, &done), &t)| done || at_cap(s, t))
            || start.elapsed().as_secs_f64() > budget;
        let enough = rounds >= MIN_ROUNDS && samples.iter().all(|s| s.len() >= plan.min_runs);
        if settled.iter().all(|&s| s) || (enough && capped) {
            return Ok(summaries
                .into_iter()
                .zip(samples)
                .map(|(summary, samples)| Measured {
                    converged: summary.relative_half_width() <= plan.target_relative_ci,
                    summary,
                    samples,
                })
                .collect());
        }
    }
}

/// How far a median's interval must narrow when its samples double for more samples to be
/// worth taking. Under independent noise the 95 % interval of a median narrows as 1/√n, to
/// 0.71 of its width when n doubles; where it stays above this fraction, what spreads the
/// samples is the machine's drift between visits (a shared VM's state over seconds), which
/// more samples of the same quantity cannot average away, so they only cost time: on the
/// 2-vCPU Intel Xeon VM every sweep of a calibration sampled each working set for its 2 s
/// cap without reaching ±2 % (2026-11-30: 247 s on PoCL, 283 s on the host). 0.9 leaves
/// room for the interval's own scatter between two sample counts (its ends are order
/// statistics).
pub const DRIFT_NARROWING: f64 = 0.9;

/// The interval half-widths one quantity's median had as its samples grew, to tell when more
/// samples stop narrowing it ([`DRIFT_NARROWING`]).
#[derive(Debug, Default, Clone)]
struct Narrowing {
    /// (samples, relative half-width) after each check, in order.
    seen: Vec<(usize, f64)>,
}

impl Narrowing {
    /// Record the width at `n` samples and say whether the interval has stalled: it is no
    /// narrower than [`DRIFT_NARROWING`] of its width at half as many samples or fewer.
    fn stalled(&mut self, n: usize, width: f64) -> bool {
        let before = self
            .seen
            .iter()
            .rev()
            .find(|&&(m, _)| 2 * m <= n)
            .map(|&(_, w)| w);
        self.seen.push((n, width));
        match before {
            Some(w0) if w0.is_finite() && width.is_finite() => width > DRIFT_NARROWING * w0,
            _ => false,
        }
    }
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
    fn a_quantity_measured_alone_discards_runs_for_its_warm_up_time_first() {
        // Runs of 1 ms against a 5 ms warm-up: at least five discarded, where the count
        // alone would discard two; none sampled before the warm-up has passed.
        let plan = SamplingPlan {
            point_warmup_seconds: 5e-3,
            ..SamplingPlan::full()
        };
        let start = std::time::Instant::now();
        let mut calls = Vec::new();
        let m = measure(&plan, "x", || {
            std::thread::sleep(std::time::Duration::from_millis(1));
            calls.push(start.elapsed().as_secs_f64());
            Ok(1.0)
        })
        .unwrap();
        let discarded = calls.len() - m.samples.len();
        // Every run that ended inside the warm-up is discarded, however long a loaded
        // machine's 1 ms sleeps take (at least five on an idle one).
        let early = calls.iter().filter(|&&t| t < 5e-3).count();
        assert!(
            discarded >= early.max(2),
            "{discarded} discarded, {early} early"
        );
        assert!(discarded < 50, "{discarded} discarded");
        assert!(calls[discarded] >= 5e-3, "{calls:?}");
        assert_eq!(m.samples.len(), 10);
        // With no warm-up time the count alone decides, as in older calibrations.
        let plan = SamplingPlan {
            point_warmup_seconds: 0.0,
            ..SamplingPlan::full()
        };
        let mut n = 0;
        measure(&plan, "x", || {
            n += 1;
            Ok(1.0)
        })
        .unwrap();
        assert_eq!(n, 2 + 10);
        assert_eq!(
            SamplingPlan::full().point_warmup_seconds,
            VISIT_WARMUP_SECONDS
        );
        assert_eq!(
            SamplingPlan::quick().point_warmup_seconds,
            VISIT_WARMUP_SECONDS
        );
    }

    #[test]
    fn rounds_visit_every_quantity_in_turn_with_a_warm_up_each_time() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut order = Vec::new();
        let plan = SamplingPlan {
            visit_warmup_seconds: 0.0,
            ..SamplingPlan::full()
        };
        let measured = measure_in_rounds(&plan, &names, |i| {
            order.push(i);
            Ok(1.0 + i as f64)
        })
        .unwrap();
        // full: 2 warm-ups and 2 samples per visit; 10 samples each need 5 rounds.
        assert_eq!(order.len(), 5 * 2 * 4);
        assert_eq!(&order[..8], &[0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(&order[8..12], &[0, 0, 0, 0]);
        assert_eq!(measured[0].samples.len(), 10);
        assert_eq!(measured[1].summary.median, 2.0);
        assert!(measured.iter().all(|m| m.converged));
    }

    #[test]
    fn each_visit_discards_runs_for_its_warm_up_time_before_sampling() {
        // Runs of 1 ms against a 5 ms warm-up: at least five discarded a visit, where the
        // count alone would discard two.
        let names = vec!["a".to_string(), "b".to_string()];
        let plan = SamplingPlan {
            max_runs: 2,
            min_runs: 2,
            visit_warmup_seconds: 5e-3,
            ..SamplingPlan::full()
        };
        let mut order = Vec::new();
        let mut ends = Vec::new();
        // Before the first visit starts: a run's end measured from here is at least its
        // time into the visit.
        let start = std::time::Instant::now();
        measure_in_rounds(&plan, &names, |i| {
            std::thread::sleep(std::time::Duration::from_millis(1));
            order.push(i);
            ends.push(start.elapsed().as_secs_f64());
            Ok(1.0)
        })
        .unwrap();
        // The first visit: its discarded runs, then its two samples. A loaded machine
        // stretches each 1 ms sleep (one stretched past 5 ms is a warm-up on its own), so the
        // count of discarded runs is not fixed; what is: they went on for the warm-up time,
        // and a visit discards one run more whenever the runs before it ended early.
        let first_visit = order.iter().take_while(|&&i| i == 0).count();
        let discarded = first_visit - 2;
        assert!(discarded >= 1, "{order:?}");
        assert!(ends[discarded - 1] >= 4.9e-3, "{ends:?}");
        for (run, &end) in ends.iter().enumerate().take(discarded.min(2)) {
            if end < 5e-3 {
                assert!(discarded > run + 1, "{order:?} {ends:?}");
            }
        }
        assert!(first_visit < 5 * 10, "{order:?}");
        assert_eq!(
            SamplingPlan::full().visit_warmup_seconds,
            VISIT_WARMUP_SECONDS
        );
        assert_eq!(
            SamplingPlan::quick().visit_warmup_seconds,
            VISIT_WARMUP_SECONDS
        );
    }

    #[test]
    fn a_visit_samples_about_as_long_as_it_warmed_up() {
        // 2 ms of warm-up, samples of 0.4 ms: five; of 1 ms or more: two; of 10 µs: the most.
        assert_eq!(samples_per_visit(2e-3, 0.8e-3, 2), 5);
        assert_eq!(samples_per_visit(2e-3, 2e-3, 2), 2);
        assert_eq!(samples_per_visit(2e-3, 20e-3, 2), 2);
        assert_eq!(samples_per_visit(2e-3, 20e-6, 2), MAX_SAMPLES_PER_VISIT);
        // Nothing timed: two.
        assert_eq!(samples_per_visit(0.0, 1e-3, 2), SAMPLES_PER_ROUND);
        assert_eq!(samples_per_visit(2e-3, 0.0, 2), SAMPLES_PER_ROUND);
        // In rounds: runs of 0.2 ms against a 20 ms warm-up. The first visit takes two samples,
        // the next as many as the cap allows, so each quantity's ten need three visits at most
        // (two samples a visit would take five; a loaded machine that stretched every sleep
        // to 5 ms would still leave four a visit).
        let names = vec!["a".to_string(), "b".to_string()];
        let plan = SamplingPlan {
            min_runs: 10,
            max_runs: 10,
            visit_warmup_seconds: 20e-3,
            ..SamplingPlan::full()
        };
        let mut order = Vec::new();
        let measured = measure_in_rounds(&plan, &names, |i| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            order.push(i);
            Ok(1.0)
        })
        .unwrap();
        let visits_of_a = order.windows(2).filter(|w| w == &[1, 0]).count() + 1;
        assert!(visits_of_a <= 3, "{visits_of_a} visits");
        assert!(measured.iter().all(|m| m.samples.len() == 10));
    }

    #[test]
    fn a_quantity_past_the_caches_discards_runs_on_its_first_visit_only() {
        let names = vec!["in a cache".to_string(), "past the caches".to_string()];
        // Each "sample" says it took 10 ms, longer than the visit's warm-up of 1 µs; the
        // run itself returns at once, so a visit's warm-up is its one discarded run.
        let plan = SamplingPlan {
            visit_warmup_seconds: 1e-6,
            ..SamplingPlan::quick()
        };
        let mut order = Vec::new();
        let measured = measure_in_rounds_past_caches(&plan, &names, &[false, true], |i| {
            std::thread::sleep(std::time::Duration::from_micros(2));
            order.push(i);
            Ok(0.01)
        })
        .unwrap();
        let runs = |q: usize| order.iter().filter(|&&i| i == q).count();
        let visits = |q: usize| {
            order.windows(2).filter(|w| w[1] == q && w[0] != q).count() + usize::from(order[0] == q)
        };
        // (A visit's samples follow its warm-up's length, which a loaded machine stretches:
        // the counts are taken as they came. A build running beside it made one quantity's
        // twelve samples fit two visits, so the rounds are asserted to interleave, not how
        // many there were.)
        for (q, m) in measured.iter().enumerate() {
            assert!(m.samples.len() >= plan.min_runs);
            assert!(visits(q) >= 2, "{} visits of {q}", visits(q));
        }
        // In a cache: one discarded run a visit. Past the caches: one in all.
        assert_eq!(runs(0), measured[0].samples.len() + visits(0));
        assert_eq!(runs(1), measured[1].samples.len() + 1);
        // A sample shorter than the warm-up keeps its discarded runs.
        let mut order = Vec::new();
        measure_in_rounds_past_caches(&plan, &names[1..], &[true], |i| {
            std::thread::sleep(std::time::Duration::from_micros(2));
            order.push(i);
            Ok(1e-7)
        })
        .unwrap();
        assert!(order.len() >= plan.min_runs + 3, "{} runs", order.len());
    }

    #[test]
    fn a_drifting_quantity_is_sampled_until_the_cap_and_says_so() {
        let names = vec!["steady".to_string(), "drifting".to_string()];
        // No warm-up time: two samples a visit, whatever the runs take.
        let plan = SamplingPlan {
            max_runs: 20,
            visit_warmup_seconds: 0.0,
            ..SamplingPlan::full()
        };
        let mut k = 0u32;
        let measured = measure_in_rounds(&plan, &names, |i| {
            k += 1;
            Ok(if i == 1 && k.is_multiple_of(2) {
                3.0
            } else {
                1.0
            })
        })
        .unwrap();
        assert_eq!(measured[1].samples.len(), 20);
        assert!(!measured[1].converged);
        // The steady one left the rotation once its interval met the target: its minimum
        // of samples, over three rounds or more.
        assert!(measured[0].converged);
        assert_eq!(measured[0].samples.len(), 10);
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

    /// The golden ratio's Kronecker sequence: evenly spread in [0, 1) at every length, and
    /// so is every sequence of its terms at a fixed step (a visit's samples between its
    /// warm-ups), so a median's interval over it narrows as independent noise's does,
    /// without randomness.
    fn spread(k: u32) -> f64 {
        (f64::from(k) * 0.618_033_988_749_895).fract()
    }

    #[test]
    fn samples_that_keep_their_spread_stop_once_doubling_them_no_longer_narrows_it() {
        // Two states a third apart: the interval spans both at every count, as a VM's
        // drift between visits does; with the cap of 200 it stops at twice the minimum.
        let mut k = 0u32;
        let m = measure(&SamplingPlan::full(), "x", || {
            k += 1;
            Ok(if k.is_multiple_of(2) { 1.0 } else { 1.3 })
        })
        .unwrap();
        assert!(!m.converged);
        assert_eq!(m.samples.len(), 20);
        // In rounds: the state changes from visit to visit, as a shared machine's does.
        let names = vec!["drifts".to_string()];
        let plan = SamplingPlan {
            visit_warmup_seconds: 0.0,
            ..SamplingPlan::full()
        };
        let mut visit = 0u32;
        let mut runs = 0u32;
        let measured = measure_in_rounds(&plan, &names, |_| {
            // A visit is two warm-ups and two samples.
            runs += 1;
            if runs.is_multiple_of(4) {
                visit += 1;
            }
            Ok(if visit.is_multiple_of(2) { 1.0 } else { 1.3 })
        })
        .unwrap();
        assert!(!measured[0].converged);
        assert!(
            measured[0].samples.len() <= 22,
            "{}",
            measured[0].samples.len()
        );
    }

    #[test]
    fn samples_whose_spread_narrows_as_they_grow_are_taken_until_the_target() {
        // Evenly spread over ±5 %: the median's interval narrows as 1/√n and meets ±2 % at
        // about 25 samples, past the 20 where the stall is first checked.
        let mut k = 0u32;
        let m = measure(&SamplingPlan::full(), "x", || {
            k += 1;
            Ok(0.95 + 0.1 * spread(k))
        })
        .unwrap();
        assert!(m.converged, "{} samples", m.samples.len());
        assert!(m.samples.len() > 20, "{} samples", m.samples.len());
        let names = vec!["narrows".to_string()];
        let plan = SamplingPlan {
            visit_warmup_seconds: 0.0,
            ..SamplingPlan::full()
        };
        let mut k = 0u32;
        let measured = measure_in_rounds(&plan, &names, |_| {
            k += 1;
            Ok(0.95 + 0.1 * spread(k))
        })
        .unwrap();
        assert!(measured[0].converged, "{}", measured[0].samples.len());
    }

    #[test]
    fn a_slow_quantity_sits_out_once_its_own_visits_took_the_time_cap() {
        // Runs of 2 ms that never agree, against 50 ms a quantity: with its minimum of ten
        // samples it has spent about that long, and sits out long before the stall (20) or
        // the cap on samples (200) would end it; the instant one is not held back by it.
        let names = vec!["fast".to_string(), "slow".to_string()];
        let plan = SamplingPlan {
            max_seconds: 0.05,
            visit_warmup_seconds: 0.0,
            ..SamplingPlan::full()
        };
        let mut k = 0u32;
        let measured = measure_in_rounds(&plan, &names, |i| {
            if i == 0 {
                return Ok(1.0);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
            k += 1;
            Ok(if k.is_multiple_of(2) { 1.0 } else { 3.0 })
        })
        .unwrap();
        let slow = measured[1].samples.len();
        assert!((10..20).contains(&slow), "{slow} samples");
        assert!(!measured[1].converged);
        assert!(measured[0].converged);
        assert_eq!(measured[0].samples.len(), 10);
    }
}
