//! Each access pattern a spec or a built-in workload can declare (`access = "…"`), with the
//! calibration's sweep that measures it and that sweep's median rate per level of the
//! streaming table: the calibration file records them under the patterns' names
//! ([`super::Calibration::patterns`]), and `calibrate` prints them as one table.

use serde::{Deserialize, Serialize};

use super::Calibration;

/// One access pattern's rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternRates {
    /// The name a spec's `access` takes (`stream`, `stencil`, `gather`, …).
    pub pattern: String,
    /// The sweep that measures it, in words.
    pub sweep: String,
    /// Whether the sweep ran on one thread alone (the host's sweeps of the patterns its
    /// workloads run on one thread).
    pub one_thread: bool,
    /// Per level of the streaming table, in its order: the sweep's median rate over the
    /// level's working sets, GB/s (`None` where it measured none there).
    pub levels: Vec<PatternLevel>,
}

/// One level's rate of a pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternLevel {
    /// The level's name, as the streaming table names it.
    pub level: String,
    /// The median rate, GB/s.
    pub gbps: Option<f64>,
}

/// The patterns whose sweeps `c` holds, in the order of `Access::NAMES` (a pattern without
/// a sweep in the file is left out; `dependent`, the pointer chase's 128-byte node per read
/// latency, is there wherever the chase is); empty without a streaming table.
pub fn pattern_rates(c: &Calibration) -> Vec<PatternRates> {
    let Some(levels) = c.bandwidth.as_ref().map(|b| &b.levels) else {
        return Vec::new();
    };
    let facts = super::model_parameters::window_facts(c);
    let per_level = |points: &[(u64, f64)]| -> Vec<PatternLevel> {
        levels
            .iter()
            .map(|l| {
                let range = l.working_set_bytes[0] as u64..=l.working_set_bytes[1] as u64;
                let mut v: Vec<f64> = points
                    .iter()
                    .filter(|p| range.contains(&p.0) && p.1.is_finite())
                    .map(|p| p.1 * 1e-9)
                    .collect();
                v.sort_by(f64::total_cmp);
                PatternLevel {
                    level: l.level.clone(),
                    gbps: (!v.is_empty()).then(|| crate::fit::stats::median_of_sorted(&v)),
                }
            })
            .collect()
    };
    let row = |pattern: &str, sweep: &str, one_thread: bool, points: &[(u64, f64)]| PatternRates {
        pattern: pattern.into(),
        sweep: sweep.into(),
        one_thread,
        levels: per_level(points),
    };
    let one = facts.one_thread.as_ref();
    let mut rows = vec![row("stream", "copy and triad", false, &facts.streaming)];
    if let Some(o) = one.filter(|o| !o.stencils.is_empty()) {
        rows.push(row(
            "stencil",
            "red-black colour in place",
            true,
            &o.stencils,
        ));
    }
    // The hyperplane sweep where it ran: one thread's on the host, the device's elsewhere.
    let planes = one.map_or(&facts.hyperplanes, |o| &o.hyperplanes);
    for (name, sweep, points) in [
        ("hyperplane", "LU-SSOR's planes upwards", &planes.ascending),
        (
            "hyperplane-descending",
            "LU-SSOR's planes downwards",
            &planes.descending,
        ),
    ] {
        if !points.is_empty() {
            rows.push(row(name, sweep, one.is_some(), points));
        }
    }
    rows.push(row(
        "strided",
        "strided read, a line each",
        false,
        &facts.lines,
    ));
    if let Some(t) = &c.transposes {
        rows.push(row(
            "transpose",
            "j,k transpose",
            t.one_thread,
            &facts.transposes,
        ));
    }
    if let Some(g) = &c.gathers {
        rows.push(row(
            "transpose-read",
            "gathering transpose",
            g.one_thread,
            &facts.gathers,
        ));
    }
    if let Some(g) = &c.random_gathers {
        rows.push(row(
            "gather",
            "a[idx[x]]",
            g.one_thread,
            &facts.random_gathers,
        ));
    }
    // A dependent walk's rate is the pointer chase's: one node per read latency of the level
    // of the same name.
    let node = crate::bench::latency::NODE_BYTES as f64;
    rows.push(PatternRates {
        pattern: "dependent".into(),
        sweep: format!("pointer chase, {node} B a step"),
        one_thread: false,
        levels: levels
            .iter()
            .map(|l| PatternLevel {
                level: l.level.clone(),
                gbps: facts
                    .latencies
                    .iter()
                    .find(|(name, t)| *name == l.level && *t > 0.0)
                    .map(|(_, t)| node / t * 1e-9),
            })
            .collect(),
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::Access;

    #[test]
    fn the_patterns_are_named_as_a_spec_names_them_in_its_order() {
        use crate::bench::bandwidth::{
            BandwidthCurve, BandwidthSweep, LevelBandwidth, StreamKernel,
        };
        let mut c = crate::calibration::test_fixture();
        assert!(
            pattern_rates(&c).is_empty(),
            "no streaming table, no patterns"
        );
        let point = |mib: usize, gbps: f64| crate::calibration::test_stream_point(mib << 20, gbps);
        let curve = |kernel| BandwidthCurve {
            kernel,
            points: vec![
                point(8, 120.0),
                point(16, 100.0),
                point(128, 40.0),
                point(256, 30.0),
            ],
        };
        let level = |name: &str, range: [usize; 2]| LevelBandwidth {
            level: name.into(),
            working_set_bytes: range,
            read_gbps: None,
            write_gbps: None,
            copy_gbps: None,
            triad_gbps: None,
            plateau_from_bytes: None,
            passes_in_launch: false,
            spread: Vec::new(),
        };
        c.bandwidth = Some(BandwidthSweep {
            cache_curves: Vec::new(),
            executors: 2,
            curves: vec![curve(StreamKernel::Copy), curve(StreamKernel::Triad)],
            levels: vec![
                level("L3", [0, (64 << 20) - 1]),
                level("memory", [64 << 20, usize::MAX]),
            ],
        });
        let rates = pattern_rates(&c);
        let parsed: Vec<Access> = rates
            .iter()
            .map(|r| Access::parse(&r.pattern).expect("a spec's name"))
            .collect();
        assert!(parsed.windows(2).all(|w| w[0] < w[1]), "{parsed:?}");
        assert_eq!(rates[0].pattern, "stream");
        assert_eq!(rates[rates.len() - 1].pattern, "dependent");
        let levels = &c.bandwidth.as_ref().expect("a sweep").levels;
        for r in &rates {
            let names: Vec<&str> = r.levels.iter().map(|l| l.level.as_str()).collect();
            let want: Vec<&str> = levels.iter().map(|l| l.level.as_str()).collect();
            assert_eq!(names, want, "{}", r.pattern);
        }
        // The stream row is the streaming sweep's median per level.
        let facts = crate::calibration::model_parameters::window_facts(&c);
        let first = &levels[levels.len() - 1];
        let mut v: Vec<f64> = facts
            .streaming
            .iter()
            .filter(|p| p.0 >= first.working_set_bytes[0] as u64)
            .map(|p| p.1 * 1e-9)
            .collect();
        v.sort_by(f64::total_cmp);
        let memory = rates[0].levels.last().expect("a level").gbps;
        assert_eq!(
            memory,
            (!v.is_empty()).then(|| crate::fit::stats::median_of_sorted(&v))
        );
        assert_eq!(memory, Some(35.0), "the median of 40 and 30 GB/s");
    }
}
