//! Per interval: productive time, total time, efficiency and the losses, as the DVM
//! Predictor reports them, for a prediction or a measured run in one schema; and the
//! comparison of the two.
//!
//! For an interval executed on `P` processors, with processor `p` spending `E_p` inside it:
//! the execution time is `E = max_p E_p`, the total time `P · E`, and
//!
//! `P · E = productive + insufficient parallelism + communication + synchronization + idle`
//!
//! exactly, where productive is the sum of the processors' useful compute (and, in a measured
//! run, the system time nothing else accounts for), insufficient parallelism the duplicated
//! share of replicated work, communication the shadow exchanges and reductions, synchronization
//! the time processors waited at collective operations for the latest to arrive, and idle
//! `Σ_p (E − E_p)`. Efficiency is productive over total.

use serde::{Deserialize, Serialize};

use super::network::Network;

/// The report file's schema name.
pub const CLUSTER_SCHEMA: &str = "harness.cluster/1";

/// What one processor spent inside an interval, seconds (children included).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessorTimes {
    /// Time inside the interval, `E_p`.
    pub execution: f64,
    /// Useful computation (its share of replicated work included).
    pub cpu: f64,
    /// Time inside the interval nothing below accounts for (loop control, timers); 0 in a
    /// prediction.
    pub sys: f64,
    /// The duplicated share of replicated work.
    pub insufficient_parallelism: f64,
    /// Shadow (halo) exchanges.
    pub shadow: f64,
    /// Reductions.
    pub reduction: f64,
    /// Waiting at collective operations for the latest processor.
    pub synchronization: f64,
}

impl ProcessorTimes {
    /// Add another processor-time record component by component.
    pub fn add(&mut self, o: &ProcessorTimes) {
        self.execution += o.execution;
        self.cpu += o.cpu;
        self.sys += o.sys;
        self.insufficient_parallelism += o.insufficient_parallelism;
        self.shadow += o.shadow;
        self.reduction += o.reduction;
        self.synchronization += o.synchronization;
    }

    /// The sum of the components (what `execution` should equal).
    pub fn accounted(&self) -> f64 {
        self.cpu
            + self.sys
            + self.insufficient_parallelism
            + self.shadow
            + self.reduction
            + self.synchronization
    }
}

/// The losses of an interval, seconds summed over processors.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Losses {
    /// Duplicated work: replicated steps cost `T · (P − 1) / P` on each processor.
    pub insufficient_parallelism: f64,
    /// Shadow exchanges plus reductions.
    pub communication: f64,
    /// Shadow exchanges alone.
    pub shadow: f64,
    /// Reductions alone.
    pub reduction: f64,
    /// Waiting for the latest processor at collective operations.
    pub synchronization: f64,
    /// Processors done early: `Σ_p (E − E_p)`.
    pub idle: f64,
}

impl Losses {
    /// Every loss term with its name, in report order.
    pub fn terms(&self) -> [(&'static str, f64); 6] {
        [
            ("insufficient parallelism", self.insufficient_parallelism),
            ("communication", self.communication),
            ("shadow", self.shadow),
            ("reduction", self.reduction),
            ("synchronization", self.synchronization),
            ("idle", self.idle),
        ]
    }

    /// The sum of the independent terms (communication counted once).
    pub fn total(&self) -> f64 {
        self.insufficient_parallelism + self.communication + self.synchronization + self.idle
    }
}

/// One interval of a prediction or a measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IntervalReport {
    /// Position in the report's list (preorder; the root is 0).
    pub id: usize,
    /// Name (`run`, `iteration`, a phase).
    pub name: String,
    /// Names from the root, joined by `/`: how a prediction and a measurement are matched.
    pub path: String,
    /// The enclosing interval.
    pub parent: Option<usize>,
    /// The nested intervals.
    pub children: Vec<usize>,
    /// Times the interval ran (per processor).
    pub executions: u64,
    /// `E = max_p E_p`, seconds.
    pub execution_time: f64,
    /// Useful compute summed over processors, seconds.
    pub productive_cpu: f64,
    /// System time nothing else accounts for, summed over processors (0 in a prediction).
    pub productive_sys: f64,
    /// `P · E`, seconds.
    pub total_time: f64,
    /// Productive over total.
    pub efficiency: f64,
    /// The losses.
    pub losses: Losses,
    /// Shadow exchanges inside the interval (per processor).
    pub shadow_operations: u64,
    /// Reductions inside the interval (per processor).
    pub reduction_operations: u64,
    /// Per processor.
    pub processors: Vec<ProcessorTimes>,
}

impl IntervalReport {
    /// Fill the summary fields from the per-processor times.
    #[allow(clippy::too_many_arguments)]
    pub fn from_processors(
        id: usize,
        name: String,
        path: String,
        parent: Option<usize>,
        children: Vec<usize>,
        executions: u64,
        operations: (u64, u64),
        processors: Vec<ProcessorTimes>,
    ) -> Self {
        let execution_time = processors.iter().map(|p| p.execution).fold(0.0, f64::max);
        let mut sum = ProcessorTimes::default();
        processors.iter().for_each(|p| sum.add(p));
        let total_time = execution_time * processors.len() as f64;
        let losses = Losses {
            insufficient_parallelism: sum.insufficient_parallelism,
            communication: sum.shadow + sum.reduction,
            shadow: sum.shadow,
            reduction: sum.reduction,
            synchronization: sum.synchronization,
            idle: total_time - sum.execution,
        };
        let productive = sum.cpu + sum.sys;
        Self {
            id,
            name,
            path,
            parent,
            children,
            executions,
            execution_time,
            productive_cpu: sum.cpu,
            productive_sys: sum.sys,
            total_time,
            efficiency: if total_time > 0.0 {
                productive / total_time
            } else {
                0.0
            },
            losses,
            shadow_operations: operations.0,
            reduction_operations: operations.1,
            processors,
        }
    }

    /// Productive time: compute plus system time.
    pub fn productive(&self) -> f64 {
        self.productive_cpu + self.productive_sys
    }
}

/// Whether a report is a prediction or a measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportKind {
    /// From `harness predict-cluster`.
    Predicted,
    /// From a real distributed run (`harness mpi-run`).
    Measured,
}

/// A prediction or a measured distributed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterReport {
    /// Always [`CLUSTER_SCHEMA`].
    pub schema: String,
    /// Prediction or measurement.
    pub kind: ReportKind,
    /// Workload name.
    pub workload: String,
    /// Problem size N.
    pub size: usize,
    /// Iterations.
    pub iterations: u64,
    /// The processor grid's extents.
    pub grid: Vec<usize>,
    /// Processors.
    pub processors: usize,
    /// The network the prediction used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Network>,
    /// The run on one processor the prediction starts from (its device and time), or the
    /// measured run's setting.
    pub source: String,
    /// Time of the whole run on the one processor, seconds (for the speed-up), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_processor_seconds: Option<f64>,
    /// Assumptions and caveats, one line each.
    pub notes: Vec<String>,
    /// The intervals in preorder; the root is the whole run.
    pub intervals: Vec<IntervalReport>,
}

impl ClusterReport {
    /// The whole run.
    pub fn root(&self) -> Option<&IntervalReport> {
        self.intervals.first()
    }

    /// The interval at `path`.
    pub fn find(&self, path: &str) -> Option<&IntervalReport> {
        self.intervals.iter().find(|i| i.path == path)
    }
}

/// One quantity, predicted and measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    /// Interval path.
    pub interval: String,
    /// Quantity (`execution time`, a loss term).
    pub quantity: String,
    /// Predicted, seconds.
    pub predicted: f64,
    /// Measured, seconds.
    pub measured: f64,
    /// `(predicted − measured) / measured`, percent (for the execution time), or the
    /// difference as a percentage of the measured interval's total time (for a loss).
    pub error_percent: f64,
    /// The allowed difference, seconds: 15 % of the measured time for an execution time; the
    /// larger of 25 % of the measured term and 5 % of the interval's total time for a loss.
    pub allowed: f64,
    /// `|predicted − measured| ≤ allowed`.
    pub within: bool,
}

/// A prediction set beside a measured run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Workload, size, grid of both (they must agree).
    pub setting: String,
    /// Every compared quantity.
    pub rows: Vec<Compared>,
    /// Intervals present in only one of the two.
    pub unmatched: Vec<String>,
}

/// Compare a prediction with a measured run of the same workload, size, iterations and grid.
pub fn compare(predicted: &ClusterReport, measured: &ClusterReport) -> Result<Comparison, String> {
    let key = |r: &ClusterReport| (r.workload.clone(), r.size, r.iterations, r.grid.clone());
    if key(predicted) != key(measured) {
        return Err(format!(
            "the reports describe different runs: predicted {} N={} × {} on {:?}, measured {} N={} × {} on {:?}",
            predicted.workload, predicted.size, predicted.iterations, predicted.grid,
            measured.workload, measured.size, measured.iterations, measured.grid
        ));
    }
    let mut rows = Vec::new();
    let mut unmatched = Vec::new();
    for m in &measured.intervals {
        let Some(p) = predicted.find(&m.path) else {
            unmatched.push(format!("{} (measured only)", m.path));
            continue;
        };
        let allowed = 0.15 * m.execution_time;
        rows.push(Compared {
            interval: m.path.clone(),
            quantity: "execution time".into(),
            predicted: p.execution_time,
            measured: m.execution_time,
            error_percent: percent(p.execution_time - m.execution_time, m.execution_time),
            allowed,
            within: (p.execution_time - m.execution_time).abs() <= allowed,
        });
        let terms = p.losses.terms().into_iter().zip(m.losses.terms());
        for ((name, pv), (_, mv)) in terms {
            let allowed = (0.25 * mv.abs()).max(0.05 * m.total_time);
            rows.push(Compared {
                interval: m.path.clone(),
                quantity: name.into(),
                predicted: pv,
                measured: mv,
                error_percent: percent(pv - mv, m.total_time),
                allowed,
                within: (pv - mv).abs() <= allowed,
            });
        }
    }
    for p in &predicted.intervals {
        if measured.find(&p.path).is_none() {
            unmatched.push(format!("{} (predicted only)", p.path));
        }
    }
    Ok(Comparison {
        setting: format!(
            "{} N={} × {} iterations on {} processors ({})",
            measured.workload,
            measured.size,
            measured.iterations,
            measured.processors,
            measured
                .grid
                .iter()
                .map(|g| g.to_string())
                .collect::<Vec<_>>()
                .join("x")
        ),
        rows,
        unmatched,
    })
}

fn percent(diff: f64, of: f64) -> f64 {
    if of > 0.0 {
        100.0 * diff / of
    } else {
        0.0
    }
}
