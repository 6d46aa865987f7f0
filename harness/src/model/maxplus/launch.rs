//! The launches of one iteration of a kernel, and the max-plus prediction of that
//! iteration: a launch of I instances of s dependent steps each takes s·⌈I/n⌉ rounds of the
//! graph's time (docs/models.md §1), and an iteration is the sum of its launches.

use serde::{Deserialize, Serialize};

use super::error::MaxPlusError;
use super::graph::KernelGraph;
use super::models::{predict, ModelVariant};
use super::parameters::Parameters;
use super::pipelined::{pipelined, LaunchShape, PIPELINED_NAME};
use crate::units::{Parameter, Seconds};

/// How a workload's size maps to the launches of one iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchPlan {
    /// One launch of N instances (vadd, triad).
    Elements,
    /// One launch over the (N − 2)² interior points of an N × N grid (Jacobi).
    Interior2d,
    /// One launch per interior anti-diagonal of an N × N grid (SOR's wavefront).
    AntiDiagonals,
    /// Three line sweeps of an n³ cube: (n − 2)² lines of n − 2 dependent steps each (ADI).
    LineSweeps3d,
}

impl LaunchPlan {
    /// What the plan launches, in words.
    pub fn description(self) -> &'static str {
        match self {
            LaunchPlan::Elements => "N instances in one launch",
            LaunchPlan::Interior2d => "an N×N grid, (N−2)² instances in one launch",
            LaunchPlan::AntiDiagonals => "an N×N grid, one launch per anti-diagonal",
            LaunchPlan::LineSweeps3d => "an N³ cube, 3 sweeps of (N−2)² lines of N−2 steps",
        }
    }

    /// How many launches one iteration at `size` makes (without listing them).
    pub fn launch_count(self, size: usize) -> u64 {
        let n = size as u64;
        match self {
            LaunchPlan::Elements | LaunchPlan::Interior2d => 1,
            LaunchPlan::AntiDiagonals => (2 * n).saturating_sub(5),
            LaunchPlan::LineSweeps3d => 3,
        }
    }

    /// The launches of one iteration at `size`, refused past [`MAX_LAUNCHES`].
    pub fn checked_launches(self, size: usize) -> Result<Vec<LaunchShape>, MaxPlusError> {
        let launches = self.launch_count(size);
        if launches > MAX_LAUNCHES {
            return Err(MaxPlusError::TooManyLaunches {
                size,
                launches,
                max: MAX_LAUNCHES,
            });
        }
        Ok(self.launches(size))
    }

    /// The launches of one iteration at `size`.
    pub fn launches(self, size: usize) -> Vec<LaunchShape> {
        let n = size as u64;
        let inner = n.saturating_sub(2);
        match self {
            LaunchPlan::Elements => vec![shape(n, 1)],
            LaunchPlan::Interior2d => vec![shape(inner * inner, 1)],
            LaunchPlan::AntiDiagonals => (2..=(2 * n).saturating_sub(4))
                .map(|d| {
                    let lo = d.saturating_sub(n - 2).max(1);
                    let hi = (d - 1).min(n - 2);
                    shape(hi + 1 - lo, 1)
                })
                .collect(),
            LaunchPlan::LineSweeps3d => vec![shape(inner * inner, inner); 3],
        }
    }
}

fn shape(instances: u64, steps: u64) -> LaunchShape {
    LaunchShape { instances, steps }
}

/// One model variant's prediction at one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantTime {
    /// `naive`, `with_operations`, `serialized_memory`, `caching`, or `ext_pipelined`.
    pub model: String,
    /// Whether the variant is the paper's (false for our extension).
    pub published: bool,
    /// Per-instance formula (first launch).
    pub formula: String,
    /// Predicted seconds per iteration.
    pub seconds: f64,
}

/// Most launches per iteration the model evaluates: the bound that keeps a prediction's
/// cost small (each launch costs a few integer operations; the critical path is computed
/// once per variant, since the per-instance time does not depend on the instance count).
pub const MAX_LAUNCHES: u64 = 10_000_000;

/// Every variant's prediction of one iteration at `size`.
pub fn predict_iteration(
    graph: &KernelGraph,
    plan: LaunchPlan,
    parameters: &Parameters,
    executors: u64,
    launch: Seconds,
    size: usize,
) -> Result<Vec<VariantTime>, MaxPlusError> {
    let launches = plan.checked_launches(size)?;
    let mut out = Vec::with_capacity(ModelVariant::ALL.len() + 1);
    // Every published variant is rounds × one instance's time, the same for every launch.
    let rounds: f64 = launches
        .iter()
        .map(|l| l.instances.div_ceil(executors.max(1)) as f64 * l.steps as f64)
        .sum();
    for variant in ModelVariant::ALL {
        let one = predict(graph, parameters, executors, 1, variant)?;
        out.push(VariantTime {
            model: variant.name().to_string(),
            published: true,
            formula: one.formula,
            seconds: one.per_instance_seconds * rounds,
        });
    }
    let (seconds, formula) = pipelined_iteration(
        graph,
        &launches,
        parameters,
        executors,
        LaunchCost::fixed(launch),
    )?;
    out.push(VariantTime {
        model: PIPELINED_NAME.to_string(),
        published: false,
        formula,
        seconds,
    });
    Ok(out)
}

/// The name of our per-level extension ([`predict_iteration_at_level`]).
pub const LEVEL_NAME: &str = "ext_level";

/// What one launch costs when launches run back to back: `fixed + per_item · I` for a
/// launch of I work items (the calibration's empty-kernel sequence; on a CPU OpenCL device
/// the per-item part is the work-group loop's own cost, 0.1 ns per item on PoCL). In
/// [`predict_iteration_at_level`] the per-item part overlaps the kernel's own time: a launch
/// costs `fixed + max(per_item · I, body)`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchCost {
    /// The fixed part, seconds per launch.
    pub fixed: Seconds,
    /// The part per launched work item, seconds.
    pub per_item: Seconds,
}

impl LaunchCost {
    /// Only a fixed cost per launch.
    pub fn fixed(launch: Seconds) -> Self {
        LaunchCost {
            fixed: launch,
            per_item: Seconds(0.0),
        }
    }

    /// The cost of one launch of `items` work items, seconds.
    pub fn of(&self, items: u64) -> f64 {
        self.fixed.0 + self.per_item.0 * items as f64
    }
}

/// Our second extension, labelled as such: the pipelined prediction with Δt and ΔT both set
/// to `gap`, the time one executor's 4-byte access takes when the device streams from the
/// memory level the kernel's working set lives in (4 B over that level's measured streaming
/// bandwidth), instead of the single-access Δt of the calibration, and each launch charged
/// L_fixed + max(ℓ·I, its rounds' time) in place of the single empty launch's L + its
/// rounds' time: the work-group loop's ℓ per item (the calibration's back-to-back empty
/// launches) overlaps the traffic rather than adding to it. `level` names where `gap` came
/// from, for the formula.
#[allow(clippy::too_many_arguments)]
pub fn predict_iteration_at_level(
    graph: &KernelGraph,
    plan: LaunchPlan,
    parameters: &Parameters,
    executors: u64,
    launch: LaunchCost,
    size: usize,
    gap: Seconds,
    level: &str,
) -> Result<VariantTime, MaxPlusError> {
    let mut at_level = parameters.clone();
    at_level.set(Parameter::ReadGap.key(), gap.0)?;
    at_level.set(Parameter::WriteGap.key(), gap.0)?;
    let (seconds, formula) = pipelined_iteration(
        graph,
        &plan.checked_launches(size)?,
        &at_level,
        executors,
        launch,
    )?;
    let per_item = if launch.per_item.0 > 0.0 {
        format!(
            "; each launch at least {:.3} ns per work item",
            launch.per_item.as_ns()
        )
    } else {
        String::new()
    };
    Ok(VariantTime {
        model: LEVEL_NAME.to_string(),
        published: false,
        formula: format!(
            "{formula}; Δt = ΔT = 4 B / {level} streaming bandwidth; L = {:.0} ns{per_item}",
            launch.fixed.as_ns()
        ),
        seconds,
    })
}

/// The pipelined extension summed over an iteration's launches, and the first's formula.
fn pipelined_iteration(
    graph: &KernelGraph,
    launches: &[LaunchShape],
    parameters: &Parameters,
    executors: u64,
    launch: LaunchCost,
) -> Result<(f64, String), MaxPlusError> {
    // The first round's time and the round interval do not depend on the launch's shape:
    // computed once, then L + s·(P + (R − 1)·I) summed over the launches.
    let one = pipelined(
        graph,
        parameters,
        executors,
        LaunchShape {
            instances: 1,
            steps: 1,
        },
        launch.fixed,
    )?;
    let seconds = launches
        .iter()
        .map(|l| {
            let rounds = l.instances.div_ceil(executors.max(1));
            let body = l.steps.max(1) as f64
                * (one.first_round_seconds
                    + rounds.saturating_sub(1) as f64 * one.round_interval_seconds);
            // The work-group loop's cost per item runs while the memory system streams:
            // the two overlap, and the launch takes the longer.
            launch.fixed.0 + body.max(launch.per_item.0 * l.instances as f64)
        })
        .sum();
    Ok((seconds, one.formula))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::maxplus::examples::shipped_graph;

    /// Plausible GPU values for the SOR point graph.
    fn sor_parameters() -> Parameters {
        Parameters::from_pairs(&[
            ("t", 4e-7),
            ("T", 5e-7),
            ("tau", 2e-9),
            ("dt", 1e-10),
            ("dT", 3e-10),
            ("t_cache", 5e-8),
        ])
        .expect("finite")
    }

    #[test]
    fn a_huge_iteration_is_refused_and_a_large_one_costs_no_more_than_a_small_one() {
        let g = shipped_graph("sor_point");
        let p = sor_parameters();
        let err = predict_iteration(
            &g,
            LaunchPlan::AntiDiagonals,
            &p,
            64,
            Seconds(1e-6),
            1 << 62,
        )
        .unwrap_err();
        assert!(matches!(err, MaxPlusError::TooManyLaunches { .. }), "{err}");
        let started = std::time::Instant::now();
        let big = predict_iteration(
            &g,
            LaunchPlan::AntiDiagonals,
            &p,
            64,
            Seconds(1e-6),
            1 << 20,
        )
        .expect("predicts");
        assert!(started.elapsed().as_secs_f64() < 5.0);
        // Summing rounds once equals predicting launch by launch.
        let small = predict_iteration(&g, LaunchPlan::AntiDiagonals, &p, 4, Seconds(1e-6), 40)
            .expect("predicts");
        let by_launch: f64 = LaunchPlan::AntiDiagonals
            .launches(40)
            .iter()
            .map(|l| {
                predict(&g, &p, 4, l.instances, ModelVariant::Caching)
                    .unwrap()
                    .total_seconds
            })
            .sum();
        let caching = small.iter().find(|v| v.model == "caching").unwrap();
        assert!((caching.seconds - by_launch).abs() <= 1e-12 * by_launch);
        assert!(big.iter().all(|v| v.seconds.is_finite() && v.seconds > 0.0));
    }

    #[test]
    fn ext_level_charges_each_launch_the_longer_of_its_items_and_its_traffic() {
        let g = shipped_graph("triad");
        let p = sor_parameters();
        let items = 100_000u64;
        let at = |launch: LaunchCost| {
            predict_iteration_at_level(
                &g,
                LaunchPlan::Elements,
                &p,
                4,
                launch,
                items as usize,
                Seconds(1e-9),
                "L3",
            )
            .expect("predicts")
        };
        let fixed = Seconds(5e-7);
        let plain = at(LaunchCost::fixed(fixed));
        let body = plain.seconds - fixed.0;
        assert!(body > 0.0);
        // A work-item loop cheaper than the traffic hides under it: nothing changes.
        let hidden = at(LaunchCost {
            fixed,
            per_item: Seconds(0.5 * body / items as f64),
        });
        assert!((hidden.seconds - plain.seconds).abs() < 1e-15 * plain.seconds);
        // One dearer than the traffic sets the launch's time: L + ℓ·I.
        let per_item = Seconds(2.0 * body / items as f64);
        let loop_bound = at(LaunchCost { fixed, per_item });
        let want = fixed.0 + per_item.0 * items as f64;
        assert!(
            (loop_bound.seconds - want).abs() < 1e-12 * want,
            "{}",
            loop_bound.seconds
        );
        assert!(hidden.formula.contains("L = 500 ns; each launch at least"));
        assert!(!plain.formula.contains("per work item"));
    }

    #[test]
    fn anti_diagonals_cover_the_interior_once() {
        for n in [4usize, 5, 17, 64] {
            let launches = LaunchPlan::AntiDiagonals.launches(n);
            let points: u64 = launches.iter().map(|l| l.instances).sum();
            assert_eq!(points, ((n - 2) * (n - 2)) as u64, "n = {n}");
            assert_eq!(launches.len(), 2 * n - 5, "n = {n}");
        }
        let cube = LaunchPlan::LineSweeps3d.launches(10);
        assert_eq!(cube, vec![shape(64, 8); 3]);
    }

    #[test]
    fn predictions_sum_rounds_over_launches() {
        let g = shipped_graph("triad");
        let p = Parameters::from_pairs(&[
            ("t", 4.0),
            ("T", 5.0),
            ("tau", 1.0),
            ("dt", 0.0),
            ("dT", 0.0),
            ("t_cache", 1.0),
        ])
        .expect("finite");
        let v =
            predict_iteration(&g, LaunchPlan::Elements, &p, 4, Seconds(0.5), 10).expect("predicts");
        let naive = v.iter().find(|x| x.model == "naive").expect("naive");
        // ⌈10/4⌉ = 3 rounds of T + t = 9.
        assert_eq!(naive.seconds, 27.0);
        let ext = v.iter().find(|x| !x.published).expect("extension");
        // Zero intervals: one round of T + τ + t = 10, plus L = 0.5.
        assert_eq!(ext.seconds, 10.5);
        let lines = predict_iteration(
            &shipped_graph("adi_line"),
            LaunchPlan::LineSweeps3d,
            &p,
            1000,
            Seconds(0.0),
            12,
        )
        .expect("predicts");
        let ops = lines
            .iter()
            .find(|x| x.model == "with_operations")
            .expect("variant");
        let one = predict(
            &shipped_graph("adi_line"),
            &p,
            1000,
            100,
            ModelVariant::WithOperations,
        )
        .expect("predicts");
        assert_eq!(ops.seconds, 3.0 * 10.0 * one.total_seconds);
    }
}
