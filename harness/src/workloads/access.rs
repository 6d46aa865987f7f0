//! How a kernel phase reads and writes its buffers: a built-in workload declares it in code
//! (`Workload::access_patterns`), a spec on each launch (`access = "…"`). The `calibrated`
//! prediction uses it to choose the calibration's rate that moves the phase's time between
//! memory levels (docs/models.md §2.4, "What the calibration supplies"). A phase that
//! declares nothing is taken as streaming; for a spec's launches the prediction's notes say so.

/// A launch's access pattern, from the least to the most particular: each pattern is also
/// the ones before it (a transpose is strided), as the built-in workloads declare theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Neighbouring work items touch neighbouring elements; every element once: the
    /// calibration's streaming rate.
    Stream,
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
}

impl Access {
    /// The names a spec writes, in the order of [`Access`].
    pub const NAMES: [&'static str; 4] = ["stream", "strided", "transpose", "transpose-read"];

    /// The pattern a spec names, or `None` for a name that is not one.
    pub fn parse(name: &str) -> Option<Access> {
        match name {
            "stream" => Some(Access::Stream),
            "strided" => Some(Access::Strided),
            "transpose" => Some(Access::Transpose),
            "transpose-read" => Some(Access::TransposeRead),
            _ => None,
        }
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
        assert_eq!(Access::parse("gather"), None);
        assert_eq!(Access::parse("Stream"), None);
    }
}
