//! The `calibrated` variant's estimators behind one interface ([`Estimator`]), one per kind of
//! phase, as Extra-P puts its modelers behind one: a phase whose launches do the same work at
//! every size (launch-bound or fixed work), one whose launches cannot fill the device
//! (latency-bound), a transfer, and a kernel phase whose time follows its work (bandwidth- or
//! compute-bound, or below both roofs: the work line in its bytes, flops or work items). Each
//! says which phases it claims from what [`PhaseEvidence`] gathers about one phase; the first
//! in [`ESTIMATORS`] that claims a phase estimates it, and where it cannot (too few sizes, no
//! line), the phase keeps the log-log line (docs/models.md §2.4, step 2).

use super::super::growth::{
    growth_capped, moved_by_own_pattern, rate_flat_to_target, top_move_factor,
};
use super::super::latency::{latency_estimate, Walks};
use super::super::per_launch::per_launch_estimate;
use super::super::per_unit::{per_unit_estimate, Unit, Work};
use super::super::regime::Regime;
use super::super::transfer::transfer_estimate;
use super::super::{is_kernel_phase, CalibratedEstimate, LevelMove, PhaseMedian, SeriesMedians};
use super::{per_move, regime_of, PhaseKinds};
use crate::fit::fractal::FractalFit;
use crate::units::Seconds;

/// What the estimators know about one phase: its fit of the moved window, the window and its
/// moves, the phase kinds, and per size of the window its declared amounts, its medians'
/// noise and, where its launches cannot fill the device, the latency's move.
pub(super) struct PhaseEvidence<'a> {
    /// The phase's name.
    pub(super) name: &'a str,
    /// Its log-log fit of the moved window.
    pub(super) fractal: &'a FractalFit,
    /// The window's medians, unmoved.
    pub(super) window: &'a SeriesMedians,
    /// Each size's move to the target's level.
    pub(super) moves: &'a [LevelMove],
    /// What the window's top says each kernel phase is.
    pub(super) phases: &'a PhaseKinds,
    /// A launch's cost, L.
    pub(super) launch: Seconds,
    /// The target size.
    pub(super) target: f64,
    /// Its bytes at each size, where every size declares some.
    bytes: Option<Vec<f64>>,
    /// Its work items at each size, where every size counts some.
    items: Option<Vec<f64>>,
    /// Its declared flops at each size, where every size declares some.
    flops: Option<Vec<f64>>,
    /// Each median's variance (σ from its 95 % half-width), where every size has one.
    noise: Option<Vec<f64>>,
    /// Its launches at each size.
    counts: Option<Vec<f64>>,
    /// λ(W_target) / λ(W_i) at each size, where its launches cannot fill the device at the
    /// target.
    latency: Option<Vec<f64>>,
}

impl<'a> PhaseEvidence<'a> {
    /// Gather the evidence on the phase `name` fitted as `fractal`.
    pub(super) fn gather(
        name: &'a str,
        fractal: &'a FractalFit,
        window: &'a SeriesMedians,
        moves: &'a [LevelMove],
        phases: &'a PhaseKinds,
        launch: Seconds,
        target: f64,
    ) -> Self {
        let per_size = |value: &dyn Fn(&PhaseMedian) -> Option<f64>| -> Option<Vec<f64>> {
            window
                .points
                .iter()
                .map(|pt| pt.phases.iter().find(|ph| ph.name == name).and_then(value))
                .collect()
        };
        PhaseEvidence {
            name,
            fractal,
            window,
            moves,
            phases,
            launch,
            target,
            bytes: per_size(&|ph| ph.bytes.filter(|&b| b > 0).map(|b| b as f64)),
            items: per_size(&|ph| ph.items.filter(|&i| i > 0).map(|i| i as f64)),
            flops: per_size(&|ph| ph.flops.filter(|&f| f > 0).map(|f| f as f64)),
            noise: per_size(&|ph| {
                ph.ci95_seconds
                    .map(|[lo, hi]| ((hi - lo) / (2.0 * 1.96)).powi(2))
            }),
            counts: per_size(&|ph| Some(ph.count as f64)),
            latency: per_move(window, moves, &|m| {
                m.latency_moves.iter().find(|l| l.0 == name).map(|l| l.1)
            }),
        }
    }

    /// Whether the phase is a kernel's (not a transfer or a host step).
    fn is_kernel(&self) -> bool {
        is_kernel_phase(self.name)
    }

    /// What its work is counted in and how much there is at each size: a kernel phase that is
    /// compute-bound or below both roofs in flops where it declares them (its time follows
    /// its operations, not its traffic: docs/models.md §2.4, "What bounds a phase"), else in
    /// bytes, else in work items.
    fn work(&self) -> Option<(Unit, &[f64])> {
        let by_flops = self.is_kernel()
            && matches!(
                regime_of(self.phases, self.name),
                Some(Regime::ComputeBound | Regime::BelowRoofs)
            );
        match (&self.bytes, &self.items, &self.flops) {
            (_, _, Some(f)) if by_flops => Some((Unit::Flop, f)),
            (Some(b), _, _) => Some((Unit::Byte, b)),
            (None, Some(i), _) => Some((Unit::Item, i)),
            _ => None,
        }
    }

    /// The phase's amount in `unit` at the target as the workload declares it there
    /// ([`SeriesMedians::target_amounts`]); `None` where it does not (then the window's
    /// amounts are extrapolated). Work items are never declared.
    fn declared_at_target(&self, unit: Unit) -> Option<f64> {
        let declared = self
            .window
            .target_amounts
            .iter()
            .find(|a| a.name == self.name)?;
        let amount = match unit {
            Unit::Byte => declared.bytes,
            Unit::Flop => declared.flops,
            Unit::Item => None,
        }?;
        Some(amount as f64)
    }
}

/// One way of estimating a phase at the target.
pub(super) trait Estimator: Sync {
    /// Whether this estimator is the one for the phase (the first that claims it estimates
    /// it, even where it then cannot).
    fn claims(&self, phase: &PhaseEvidence<'_>) -> bool;
    /// The phase's estimate at the target; `None` where the evidence gives none.
    fn estimate(&self, phase: &PhaseEvidence<'_>) -> Option<CalibratedEstimate>;
}

/// The estimators in the order they are asked.
pub(super) const ESTIMATORS: [&dyn Estimator; 4] =
    [&FixedWork, &LatencyBound, &Transfer, &WorkLine];

/// The estimate of the first estimator that claims `phase`; `None` where none does or it
/// cannot estimate it.
pub(super) fn estimate_phase(phase: &PhaseEvidence<'_>) -> Option<CalibratedEstimate> {
    ESTIMATORS
        .iter()
        .find(|e| e.claims(phase))
        .and_then(|e| e.estimate(phase))
}

/// Every launch does the same work at every size: its window's time per launch times the
/// launches at the target ([`per_launch_estimate`]).
struct FixedWork;

impl Estimator for FixedWork {
    fn claims(&self, phase: &PhaseEvidence<'_>) -> bool {
        phase.phases.fixed.iter().any(|f| f == phase.name)
    }

    fn estimate(&self, phase: &PhaseEvidence<'_>) -> Option<CalibratedEstimate> {
        per_launch_estimate(phase.fractal, phase.counts.as_deref()?, phase.target)
    }
}

/// A kernel phase whose launches cannot fill the device at the target: one walk per work item
/// at the latency of the level its data live in ([`latency_estimate`]).
struct LatencyBound;

impl Estimator for LatencyBound {
    fn claims(&self, phase: &PhaseEvidence<'_>) -> bool {
        phase.latency.is_some() && phase.is_kernel()
    }

    fn estimate(&self, phase: &PhaseEvidence<'_>) -> Option<CalibratedEstimate> {
        let walk: Vec<f64> = phase
            .window
            .points
            .iter()
            .map(|pt| {
                pt.phases.iter().find(|ph| ph.name == phase.name).map(|ph| {
                    match (ph.bytes, ph.items) {
                        (Some(b), Some(i)) if b > 0 && i > 0 => b as f64 / i as f64,
                        _ => 1.0,
                    }
                })
            })
            .collect::<Option<_>>()?;
        let walks = Walks {
            counts: phase.counts.as_deref()?,
            bytes_per_item: &walk,
            latency: phase.latency.as_deref()?,
            amounts: phase.bytes.as_deref().zip(phase.items.as_deref()),
        };
        latency_estimate(phase.fractal, &walks, phase.launch, phase.target)
    }
}

/// An upload or a download with its bytes: the calibration's transfer sweep at the target's
/// transfer size ([`transfer_estimate`]).
struct Transfer;

impl Estimator for Transfer {
    fn claims(&self, phase: &PhaseEvidence<'_>) -> bool {
        !phase.is_kernel() && matches!(phase.work(), Some((Unit::Byte, _)))
    }

    fn estimate(&self, phase: &PhaseEvidence<'_>) -> Option<CalibratedEstimate> {
        let (_, bytes) = phase.work()?;
        let costs = per_move(phase.window, phase.moves, &|m| {
            let c = m.transfer_costs.iter().find(|c| c.0 == phase.name)?;
            Some((c.1, c.2))
        })?;
        transfer_estimate(phase.fractal, bytes, &costs, phase.target)
    }
}

/// A kernel phase whose time follows its work: its moved time less launches as a line in its
/// bytes, flops or work items, or, where its cost per unit rises, between saturation and
/// growth ([`per_unit_estimate`]).
struct WorkLine;

impl Estimator for WorkLine {
    fn claims(&self, phase: &PhaseEvidence<'_>) -> bool {
        phase.is_kernel() && phase.work().is_some()
    }

    fn estimate(&self, phase: &PhaseEvidence<'_>) -> Option<CalibratedEstimate> {
        let (unit, amounts) = phase.work()?;
        let (name, moves, phases) = (phase.name, phase.moves, phase.phases);
        // A phase counted in work items was not moved: its cost per item may still rise on to
        // the target, but by no more than all of it as traffic would, from the window's
        // largest size to the target's level; so may a phase whose traffic is most of its time
        // or whose own access pattern the calibration swept.
        // A phase that moved by a sweep of its own pattern at every size stands at the
        // target's level there (step 1): it saturates at its moved costs' median. One counted
        // in work items was moved whole, so nothing lies between and its growth is capped at 1.
        let own_pattern = moved_by_own_pattern(moves, name);
        let moved_whole = unit == Unit::Item && own_pattern;
        let cap = if moved_whole {
            Some(1.0)
        } else {
            growth_capped(phases, moves, name, unit)
                .then(|| top_move_factor(phase.window, moves, name))
                .flatten()
        };
        let work = Work {
            unit,
            amounts,
            noise: phase.noise.as_deref(),
            saturates: phases.compute_bound(name)
                || rate_flat_to_target(moves, name)
                || own_pattern,
            moved_whole,
            launches: phase.counts.as_deref(),
            declared_at_target: phase.declared_at_target(unit),
        };
        per_unit_estimate(phase.fractal, &work, phase.target, cap)
    }
}
