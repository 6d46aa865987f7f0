//! How a kernel phase reads and writes its buffers: a built-in workload declares it in code
//! (`Workload::access_patterns`), a spec on each launch (`access = "…"`). The `calibrated`
//! prediction uses it to choose the calibration's rate that moves the phase's time between
//! memory levels (docs/models.md §2.4, "What the calibration supplies"). A phase that
//! declares nothing is taken as streaming; for a spec's launches the prediction's notes say so.

use crate::fit::window::PlaneOrder;

/// A launch's access pattern, from the least to the most particular. A stencil or a
/// hyperplane walk moves by the calibration's sweep of its pattern where it has one (for
/// where the phase ran: on one thread or with the device's launches), else as streaming;
/// each pattern from `Strided` on moves by the line rate where the calibration has no sweep
/// of its own, and a transpose-read by the transposing sweep where it has no gathering one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Neighbouring work items touch neighbouring elements; every element once: the
    /// calibration's streaming rate.
    Stream,
    /// Updates a grid in place from its neighbours, rows either side (a five-point
    /// relaxation, a red-black colour): the calibration's stencil sweep, one colour of
    /// red-black SOR over a grid as large as the phase's, where it has one.
    Stencil,
    /// Relaxes a cube in place one hyperplane i + j + k = h per launch, in the given order
    /// (LU-SSOR's sweeps, a wavefront): the calibration's hyperplane sweep in that order,
    /// taken at the phase's cube, where it has one.
    Hyperplane(PlaneOrder),
    /// Each work item walks its own line of a grid with a stride (a line solve along an
    /// axis that is not the fastest): a cache line per step that no prefetcher brings, so the
    /// calibration's strided line rate, and its time at the target as one step after the other.
    Strided,
    /// A transpose that reads in order and writes a stride apart: the calibration's
    /// transposing sweep where it has one, else the line rate.
    Transpose,
    /// A transpose that reads a stride apart and writes in order: the calibration's gathering
    /// sweep where it has one, else the transposing sweep, else the line rate.
    TransposeRead,
    /// Reads at indices another array holds, spread over most of the working set (a hash or
    /// tree probe): a line per read wherever it lies, so the calibration's random gather
    /// sweep at the launch's working set where it has one, else the line rate. A small
    /// gathered array inside a large streamed one (a sparse product's `x`) mostly stays in
    /// cache: such a launch streams, and declares its gathered reads with `gathers`
    /// ([`crate::workloads::GatheredReads`]).
    Gather,
    /// Each access waits on the one before (a pointer chase, a tree walk, a linked list):
    /// the calibration's pointer chase, one node per read latency of the level the working
    /// set lives in, so the phase moves by the latency's ratio and counts as latency-bound.
    Dependent,
}

impl Access {
    /// The names a spec writes, in the order of [`Access`].
    pub const NAMES: [&'static str; 9] = [
        "stream",
        "stencil",
        "hyperplane",
        "hyperplane-descending",
        "strided",
        "transpose",
        "transpose-read",
        "gather",
        "dependent",
    ];

    /// The pattern a spec names, or `None` for a name that is not one.
    pub fn parse(name: &str) -> Option<Access> {
        match name {
            "stream" => Some(Access::Stream),
            "stencil" => Some(Access::Stencil),
            "hyperplane" => Some(Access::Hyperplane(PlaneOrder::Ascending)),
            "hyperplane-descending" => Some(Access::Hyperplane(PlaneOrder::Descending)),
            "strided" => Some(Access::Strided),
            "transpose" => Some(Access::Transpose),
            "transpose-read" => Some(Access::TransposeRead),
            "gather" => Some(Access::Gather),
            "dependent" => Some(Access::Dependent),
            _ => None,
        }
    }

    /// The name a spec writes for this pattern ([`Self::NAMES`]).
    pub fn name(self) -> &'static str {
        match self {
            Access::Stream => "stream",
            Access::Stencil => "stencil",
            Access::Hyperplane(PlaneOrder::Ascending) => "hyperplane",
            Access::Hyperplane(PlaneOrder::Descending) => "hyperplane-descending",
            Access::Strided => "strided",
            Access::Transpose => "transpose",
            Access::TransposeRead => "transpose-read",
            Access::Gather => "gather",
            Access::Dependent => "dependent",
        }
    }

    /// Whether a phase with this pattern moves by a sweep taken at its own grid's bytes
    /// (the stencil and hyperplane sweeps), read where it ran: one thread's sweep or the
    /// device's.
    pub fn is_grid_walk(self) -> bool {
        matches!(self, Access::Stencil | Access::Hyperplane(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_to_its_pattern_in_order() {
        let parsed: Vec<Access> = Access::NAMES
            .iter()
            .map(|n| Access::parse(n).unwrap())
            .collect();
        assert!(parsed.windows(2).all(|w| w[0] < w[1]), "{parsed:?}");
        assert!(parsed.iter().zip(Access::NAMES).all(|(a, n)| a.name() == n));
        assert_eq!(Access::parse("scatter"), None);
        assert_eq!(Access::parse("Stream"), None);
    }
}
