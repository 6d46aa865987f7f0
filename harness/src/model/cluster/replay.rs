//! The replay: every processor of the grid executes the trace's steps on its own clock.
//!
//! - A distributed compute step costs each processor its block's share: the one-processor
//!   time times the phase's [`ComputeScale`] factor (`1/P` when nothing better is known; from
//!   the series' fit at the block's size when it is, since a block may sit in another cache
//!   level than the whole array), times the network's `power`.
//! - A replicated step costs every processor the whole time; `(P − 1)/P` of it is the loss of
//!   insufficient parallelism.
//! - A shadow exchange or a reduction first aligns every clock to the latest (the wait is
//!   synchronization), then advances every clock by the operation's time
//!   ([`transfer_time`], [`reduction_time`]).
//!
//! The cost is one pass over the unrolled steps per processor, bounded by the trace check.

use super::cost::{reduction_time, transfer_time};
use super::network::Network;
use super::report::{ClusterReport, IntervalReport, ProcessorTimes, ReportKind, CLUSTER_SCHEMA};
use super::topology::Blocks;
use super::trace::{Trace, TraceInterval, TraceStep, Work};
use super::ClusterError;

/// Per distributed phase, the time of one block over the time of the whole array.
#[derive(Debug, Clone, PartialEq)]
pub struct ComputeScale {
    /// Phases with a factor of their own (from a series).
    pub phases: Vec<(String, f64)>,
    /// The factor of every other distributed phase (`1/P`: linear in the work).
    pub default: f64,
}

impl ComputeScale {
    /// Linear in the work: every distributed phase takes `1/P` of its time.
    pub fn linear(processors: usize) -> Self {
        Self {
            phases: Vec::new(),
            default: 1.0 / processors as f64,
        }
    }

    fn factor(&self, phase: &str) -> f64 {
        self.phases
            .iter()
            .find(|(name, ..)| name == phase)
            .map_or(self.default, |p| p.1)
    }
}

/// What the replay is told besides the trace.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The target system.
    pub network: Network,
    /// The distribution.
    pub blocks: Blocks,
    /// How compute time scales to a block.
    pub scale: ComputeScale,
}

enum Op {
    Child(usize),
    Compute {
        node: usize,
        seconds: f64,
        work: Work,
    },
    Collective {
        cost: f64,
        shadow: bool,
    },
}

struct Node {
    name: String,
    path: String,
    parent: Option<usize>,
    children: Vec<usize>,
    repeat: u64,
    ops: Vec<Op>,
    executions: u64,
    operations: (u64, u64),
    own: Vec<ProcessorTimes>,
}

impl Node {
    fn new(name: &str, path: String, parent: Option<usize>, repeat: u64, procs: usize) -> Self {
        Self {
            name: name.to_string(),
            path,
            parent,
            children: Vec::new(),
            repeat,
            ops: Vec::new(),
            executions: 0,
            operations: (0, 0),
            own: vec![ProcessorTimes::default(); procs],
        }
    }
}

/// Predict the trace's run on the grid of `options.blocks`.
pub fn replay(trace: &Trace, options: &ReplayOptions) -> Result<ClusterReport, ClusterError> {
    trace.check()?;
    let blocks = &options.blocks;
    let grid = blocks.grid();
    let procs = grid.count();
    let net = &options.network;
    let mut nodes = Vec::new();
    build(&trace.root, None, "", trace, options, &mut nodes);
    let mut clocks = vec![0.0f64; procs];
    run(0, &mut nodes, &mut clocks, procs, net.power);
    // Integrate: every interval's components include its children's.
    let mut totals: Vec<Vec<ProcessorTimes>> = nodes.iter().map(|n| n.own.clone()).collect();
    for id in (0..nodes.len()).rev() {
        if let Some(parent) = nodes[id].parent {
            let child = totals[id].clone();
            for (acc, c) in totals[parent].iter_mut().zip(&child) {
                let execution = acc.execution;
                acc.add(c);
                acc.execution = execution;
            }
        }
    }
    let intervals = nodes
        .iter()
        .enumerate()
        .map(|(id, n)| {
            IntervalReport::from_processors(
                id,
                n.name.clone(),
                n.path.clone(),
                n.parent,
                n.children.clone(),
                n.executions,
                subtree_operations(&nodes, id),
                totals[id].clone(),
            )
        })
        .collect();
    Ok(ClusterReport {
        schema: CLUSTER_SCHEMA.into(),
        kind: ReportKind::Predicted,
        workload: trace.workload.clone(),
        size: trace.size,
        iterations: trace.iterations,
        grid: grid.extents().to_vec(),
        processors: procs,
        network: Some(net.clone()),
        source: format!(
            "trace of {} N={} × {} on {}{}",
            trace.workload,
            trace.size,
            trace.iterations,
            trace.device,
            trace
                .threads
                .map_or(String::new(), |t| format!(" ({t} threads)"))
        ),
        one_processor_seconds: Some(trace.root.seconds * trace.root.repeat as f64),
        notes: Vec::new(),
        intervals,
    })
}

fn subtree_operations(nodes: &[Node], id: usize) -> (u64, u64) {
    nodes[id]
        .children
        .iter()
        .fold(nodes[id].operations, |acc, &c| {
            let o = subtree_operations(nodes, c);
            (acc.0 + o.0, acc.1 + o.1)
        })
}

/// Lay the trace out as nodes (preorder) with their ops; communication costs computed once.
fn build(
    iv: &TraceInterval,
    parent: Option<usize>,
    prefix: &str,
    trace: &Trace,
    options: &ReplayOptions,
    nodes: &mut Vec<Node>,
) -> usize {
    let procs = options.blocks.grid().count();
    let id = nodes.len();
    let path = if prefix.is_empty() {
        iv.name.clone()
    } else {
        format!("{prefix}/{}", iv.name)
    };
    nodes.push(Node::new(&iv.name, path.clone(), parent, iv.repeat, procs));
    let mut ops = Vec::new();
    for step in &iv.body {
        match step {
            TraceStep::Interval(child) => {
                let c = build(child, Some(id), &path, trace, options, nodes);
                nodes[id].children.push(c);
                ops.push(Op::Child(c));
            }
            TraceStep::Compute {
                name,
                seconds,
                work,
                ..
            } => {
                let c = nodes.len();
                nodes.push(Node::new(
                    name,
                    format!("{path}/{name}"),
                    Some(id),
                    1,
                    procs,
                ));
                nodes[id].children.push(c);
                let seconds = match work {
                    Work::Distributed => seconds * options.scale.factor(name),
                    Work::Replicated => *seconds,
                };
                ops.push(Op::Compute {
                    node: c,
                    seconds,
                    work: *work,
                });
            }
            TraceStep::Shadow {
                width,
                arrays,
                corners,
            } => {
                let transfers =
                    options
                        .blocks
                        .shadow_transfers(*width, *arrays, trace.element_bytes, *corners);
                let cost = transfer_time(&options.network, options.blocks.grid(), &transfers).0;
                ops.push(Op::Collective { cost, shadow: true });
            }
            TraceStep::Reduction { bytes } => {
                let cost = reduction_time(&options.network, options.blocks.grid(), *bytes).0;
                ops.push(Op::Collective {
                    cost,
                    shadow: false,
                });
            }
        }
    }
    nodes[id].ops = ops;
    id
}

fn run(id: usize, nodes: &mut [Node], clocks: &mut [f64], procs: usize, power: f64) {
    let repeat = nodes[id].repeat;
    let ops = std::mem::take(&mut nodes[id].ops);
    let share = 1.0 / procs as f64;
    for _ in 0..repeat {
        let entry = clocks.to_vec();
        nodes[id].executions += 1;
        for op in &ops {
            match *op {
                Op::Child(c) => run(c, nodes, clocks, procs, power),
                Op::Compute {
                    node,
                    seconds,
                    work,
                } => {
                    let t = seconds * power;
                    let n = &mut nodes[node];
                    n.executions += 1;
                    for (clock, acc) in clocks.iter_mut().zip(n.own.iter_mut()) {
                        *clock += t;
                        acc.execution += t;
                        match work {
                            Work::Distributed => acc.cpu += t,
                            Work::Replicated => {
                                acc.cpu += t * share;
                                acc.insufficient_parallelism += t * (1.0 - share);
                            }
                        }
                    }
                }
                Op::Collective { cost, shadow } => {
                    let latest = clocks.iter().copied().fold(f64::MIN, f64::max);
                    let n = &mut nodes[id];
                    if shadow {
                        n.operations.0 += 1;
                    } else {
                        n.operations.1 += 1;
                    }
                    for (clock, acc) in clocks.iter_mut().zip(n.own.iter_mut()) {
                        acc.synchronization += latest - *clock;
                        *clock = latest + cost;
                        if shadow {
                            acc.shadow += cost;
                        } else {
                            acc.reduction += cost;
                        }
                    }
                }
            }
        }
        for (acc, (now, then)) in nodes[id].own.iter_mut().zip(clocks.iter().zip(&entry)) {
            acc.execution += now - then;
        }
    }
    nodes[id].ops = ops;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cluster::network::NetworkKind;
    use crate::model::cluster::topology::ProcessorGrid;
    use crate::model::cluster::trace::TRACE_SCHEMA;
    use crate::units::Seconds;

    fn trace(body: Vec<TraceStep>, iterations: u64) -> Trace {
        Trace {
            schema: TRACE_SCHEMA.into(),
            workload: "test".into(),
            size: 10,
            iterations,
            device: "hand".into(),
            threads: None,
            extents: vec![8, 8],
            element_bytes: 4,
            spec: None,
            verified: None,
            root: TraceInterval {
                name: "run".into(),
                repeat: 1,
                seconds: 9.0,
                body: vec![TraceStep::Interval(TraceInterval {
                    name: "iteration".into(),
                    repeat: iterations,
                    seconds: 3.0,
                    body,
                })],
            },
        }
    }

    fn compute(name: &str, seconds: f64, work: Work) -> TraceStep {
        TraceStep::Compute {
            name: name.into(),
            seconds,
            bytes: None,
            work,
            launches: 1,
        }
    }

    fn options(grid: &str, kind: NetworkKind, ts: f64, power: f64) -> ReplayOptions {
        let grid = ProcessorGrid::parse(grid).unwrap();
        ReplayOptions {
            network: Network::new(kind, Seconds(ts), 0.0, power, None).unwrap(),
            blocks: Blocks::new(&[8, 8], &grid).unwrap(),
            scale: ComputeScale::linear(grid.count()),
        }
    }

    #[test]
    fn two_processors_with_losses_known_by_construction() {
        let body = vec![
            compute("a", 2.0, Work::Distributed),
            compute("b", 1.0, Work::Replicated),
            TraceStep::Shadow {
                width: 1,
                arrays: 1,
                corners: false,
            },
            TraceStep::Reduction { bytes: 4 },
        ];
        // Bus, Ts = 0.5, Tb = 0: the exchange is 2 messages (1.0), the reduction 2N − 2 = 2
        // messages (1.0). Per iteration and processor: a 1.0, b 1.0 (0.5 of it duplicated),
        // exchange 1.0, reduction 1.0: 4.0; three iterations: 12.
        let r = replay(&trace(body, 3), &options("2", NetworkKind::Bus, 0.5, 1.0)).unwrap();
        let root = r.root().unwrap();
        assert_eq!(root.execution_time, 12.0);
        assert_eq!(root.total_time, 24.0);
        assert_eq!(root.productive_cpu, 9.0);
        assert_eq!(root.losses.insufficient_parallelism, 3.0);
        assert_eq!(root.losses.shadow, 6.0);
        assert_eq!(root.losses.reduction, 6.0);
        assert_eq!(root.losses.synchronization, 0.0);
        assert_eq!(root.losses.idle, 0.0);
        assert_eq!((root.shadow_operations, root.reduction_operations), (3, 3));
        assert!((root.efficiency - 9.0 / 24.0).abs() < 1e-12);
        let a = r.find("run/iteration/a").unwrap();
        assert_eq!(
            (a.executions, a.execution_time, a.productive_cpu),
            (3, 3.0, 6.0)
        );
        let it = r.find("run/iteration").unwrap();
        assert_eq!(it.children.len(), 2);
        assert_eq!(r.one_processor_seconds, Some(9.0));
        for i in &r.intervals {
            let sum = i.productive() + i.losses.total();
            assert!(
                (sum - i.total_time).abs() < 1e-9,
                "{}: {sum} vs {}",
                i.path,
                i.total_time
            );
        }
    }

    #[test]
    fn power_scales_compute_and_a_grid_costs_the_farthest_message() {
        let body = vec![
            compute("a", 4.0, Work::Distributed),
            TraceStep::Shadow {
                width: 1,
                arrays: 1,
                corners: true,
            },
        ];
        // 2 × 2 grid, power 2: a costs 4/4 · 2 = 2; the corner messages travel 2 hops with
        // Tb = 0: 2 · Ts = 2 (pipelining cannot help a 4-byte message much: 1 byte packets
        // cost 4 + 1 stages of Ts).
        let r = replay(
            &trace(body, 1),
            &options("2x2", NetworkKind::Grid, 1.0, 2.0),
        )
        .unwrap();
        let root = r.root().unwrap();
        assert_eq!(r.find("run/iteration/a").unwrap().execution_time, 2.0);
        assert_eq!(root.losses.shadow, 4.0 * 2.0);
        assert_eq!(root.execution_time, 4.0);
    }

    #[test]
    fn a_big_grid_and_many_iterations_stay_cheap_and_bad_traces_are_refused() {
        let body = vec![
            compute("a", 1e-3, Work::Distributed),
            TraceStep::Shadow {
                width: 1,
                arrays: 1,
                corners: false,
            },
        ];
        let mut t = trace(body, 1000);
        t.extents = vec![64 * 4, 64 * 4];
        let grid = ProcessorGrid::parse("64x64").unwrap();
        let o = ReplayOptions {
            network: Network::new(NetworkKind::Grid, Seconds(1e-6), 1e-9, 1.0, None).unwrap(),
            blocks: Blocks::new(&t.extents, &grid).unwrap(),
            scale: ComputeScale::linear(grid.count()),
        };
        let r = replay(&t, &o).unwrap();
        assert_eq!(r.processors, 4096);
        t.root.repeat = 0;
        assert!(replay(&t, &o).is_err());
        t.root.repeat = 1_000_000_000;
        assert!(matches!(replay(&t, &o), Err(ClusterError::TooMuchWork(_))));
    }
}
