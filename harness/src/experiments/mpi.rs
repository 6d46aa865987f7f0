//! The real distributed runs the cluster prediction is checked against (the `mpi` feature):
//! Jacobi 2-D and red-black SOR over MPI ranks, and the ping-pong that measures a network
//! file.
//!
//! Each rank holds one BLOCK of the N × N grid's interior with a one-point shadow edge, fills
//! it from the same initial values as the one-device run, and computes with the same row
//! functions as the host backend (`jacobi_row`, `sor_rb_row`) on one thread. Before every
//! sweep that reads neighbours it exchanges shadow edges with its up to four neighbours
//! (non-blocking sends and receives, then a wait); SOR reduces EPS with an all-reduce max.
//! The final grid is gathered on rank 0 and compared with the sequential reference.
//!
//! Every rank records, on the machine-wide monotonic clock, the time of each phase and the
//! arrival at and exit from every collective operation. Rank 0 splits each operation's time
//! into synchronization (waiting for the latest rank to arrive: `max_r arrival − arrival`)
//! and communication (the rest), which needs one clock for all ranks: the ranks must share a
//! machine, as they do here.

use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::experiments::cluster;
use crate::model::cluster::report::{
    ClusterReport, IntervalReport, ProcessorTimes, ReportKind, CLUSTER_SCHEMA,
};
use crate::model::cluster::{Blocks, Network, NetworkKind, ProcessorGrid, Work};
use crate::units::Seconds;
use crate::workloads::session::compare;
use crate::workloads::stencil::{
    initial_value, jacobi_reference, jacobi_row, sor_rb_row, sor_reference, OMEGA, TOLERANCE,
};

/// Why a distributed run failed.
#[derive(Debug, thiserror::Error)]
pub enum MpiError {
    /// Started without `mpirun`.
    #[error("start it under MPI: mpirun -np 2 harness {0} … (this process is not an MPI rank)")]
    NotLaunched(&'static str),
    /// MPI could not be initialised.
    #[error("MPI could not be initialised (already initialised, or the library failed)")]
    Init,
    /// Bad arguments or a result that does not verify.
    #[error("{0}")]
    Invalid(String),
    /// A model-side refusal (grid, distribution).
    #[error(transparent)]
    Cluster(#[from] crate::model::cluster::ClusterError),
}

/// The rank this process will have, from the launcher's environment (before MPI starts), if
/// it was started by `mpirun` (Open MPI, MPICH, Slurm).
pub fn launcher_rank() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.parse().ok())
}

fn start(command: &'static str) -> Result<mpi::environment::Universe, MpiError> {
    if launcher_rank().is_none() {
        return Err(MpiError::NotLaunched(command));
    }
    mpi::initialize().ok_or(MpiError::Init)
}

/// Seconds on the machine-wide monotonic clock (shared by all processes of one machine).
fn now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// One rank's block with its shadow edge: `(rows + 2) × (cols + 2)`, row-major.
struct Block {
    rows: usize,
    cols: usize,
    /// Global row and column of the block's (0, 0) (a shadow point).
    origin: (usize, usize),
    /// Ranks of the up, down, left and right neighbours.
    neighbours: [Option<usize>; 4],
}

impl Block {
    fn width(&self) -> usize {
        self.cols + 2
    }

    fn fill(&self, n: usize) -> Vec<f32> {
        let w = self.width();
        let mut a = vec![0.0; (self.rows + 2) * w];
        for i in 0..self.rows + 2 {
            for j in 0..w {
                a[i * w + j] = initial_value((self.origin.0 + i) * n + self.origin.1 + j);
            }
        }
        a
    }

    /// The edge sent towards neighbour `d` (0 up, 1 down, 2 left, 3 right).
    fn edge(&self, a: &[f32], d: usize) -> Vec<f32> {
        let w = self.width();
        match d {
            0 => a[w + 1..w + 1 + self.cols].to_vec(),
            1 => a[self.rows * w + 1..self.rows * w + 1 + self.cols].to_vec(),
            2 => (1..=self.rows).map(|i| a[i * w + 1]).collect(),
            _ => (1..=self.rows).map(|i| a[i * w + self.cols]).collect(),
        }
    }

    /// Store the shadow received from neighbour `d`.
    fn store(&self, a: &mut [f32], d: usize, v: &[f32]) {
        let w = self.width();
        match d {
            0 => a[1..1 + self.cols].copy_from_slice(v),
            1 => {
                let r = (self.rows + 1) * w;
                a[r + 1..r + 1 + self.cols].copy_from_slice(v)
            }
            2 => (1..=self.rows).for_each(|i| a[i * w] = v[i - 1]),
            _ => (1..=self.rows).for_each(|i| a[i * w + self.cols + 1] = v[i - 1]),
        }
    }

    /// Exchange shadow edges of `a` with every neighbour.
    fn exchange(&self, world: &SimpleCommunicator, a: &mut [f32]) {
        let sends: Vec<(usize, Vec<f32>)> = (0..4)
            .filter(|&d| self.neighbours[d].is_some())
            .map(|d| (d, self.edge(a, d)))
            .collect();
        let mut recvs: Vec<(usize, Vec<f32>)> = sends
            .iter()
            .map(|(d, v)| (*d, vec![0.0; v.len()]))
            .collect();
        mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(8);
            for (d, buf) in recvs.iter_mut() {
                let from = self.neighbours[*d].expect("neighbour") as i32;
                // What the neighbour sends towards us carries the opposite direction's tag.
                let tag = (*d ^ 1) as i32;
                requests.push(world.process_at_rank(from).immediate_receive_into_with_tag(
                    scope,
                    &mut buf[..],
                    tag,
                ));
            }
            for (d, buf) in &sends {
                let to = self.neighbours[*d].expect("neighbour") as i32;
                requests.push(world.process_at_rank(to).immediate_send_with_tag(
                    scope,
                    &buf[..],
                    *d as i32,
                ));
            }
            for r in requests {
                r.wait();
            }
        });
        for (d, v) in &recvs {
            self.store(a, *d, v);
        }
    }
}

/// What one rank measured.
#[derive(Default)]
struct Timing {
    /// Per phase (in the plan's order) the summed time.
    phases: Vec<f64>,
    /// Sum of the iterations' times.
    iterations: f64,
    /// The whole loop.
    run: f64,
    /// Per collective operation: shadow (1) or reduction (0), arrival, exit.
    ops: Vec<(f64, f64, f64)>,
}

/// Run `workload` (jacobi2d or sor-rb) at `size` for `iterations` on every rank of
/// `mpirun`, over `grid` (default: ranks × 1), verify the gathered result, and return the
/// measured interval report on rank 0 (`None` on the others).
pub fn run_distributed(
    workload: &str,
    size: usize,
    iterations: usize,
    grid: Option<ProcessorGrid>,
) -> Result<Option<ClusterReport>, MpiError> {
    let phases = cluster::phases(workload).ok_or_else(|| {
        MpiError::Invalid(format!(
            "{workload:?} has no distributed version; known: {}",
            cluster::CLUSTER_WORKLOADS.join(", ")
        ))
    })?;
    if !(4..=46_000).contains(&size) || iterations == 0 {
        return Err(MpiError::Invalid(format!(
            "need 4 ≤ N ≤ 46000 and at least one iteration, got N = {size}, {iterations} iterations"
        )));
    }
    let universe = start("mpi-run")?;
    let world = universe.world();
    let (rank, procs) = (world.rank() as usize, world.size() as usize);
    let grid = match grid {
        Some(g) => g,
        None => ProcessorGrid::new(vec![procs])?,
    };
    if grid.count() != procs {
        return Err(MpiError::Invalid(format!(
            "the grid {} has {} processors but mpirun started {procs} ranks",
            grid.name(),
            grid.count()
        )));
    }
    let blocks = Blocks::new(&[size - 2, size - 2], &grid)?;
    let g = blocks.grid().clone();
    let c = g.coords(rank);
    let (rows, cols) = (blocks.block()[0], blocks.block()[1]);
    let at = |di: isize, dj: isize| g.index(&[c[0] as isize + di, c[1] as isize + dj]);
    let block = Block {
        rows,
        cols,
        origin: (c[0] * rows, c[1] * cols),
        neighbours: [at(-1, 0), at(1, 0), at(0, -1), at(0, 1)],
    };
    let w = block.width();
    let mut a = block.fill(size);
    let mut b = a.clone();
    let mut t = Timing {
        phases: vec![0.0; phases.len()],
        ..Default::default()
    };
    world.barrier();
    let run_start = now();
    for _ in 0..iterations {
        let it_start = now();
        if workload == "jacobi2d" {
            let arrive = now();
            block.exchange(&world, &mut a);
            t.ops.push((1.0, arrive, now()));
            let s = now();
            for (i, row) in b.chunks_mut(w).enumerate().take(rows + 1).skip(1) {
                jacobi_row(&a, row, i, w);
            }
            t.phases[0] += now() - s;
            std::mem::swap(&mut a, &mut b);
        } else {
            let s = now();
            let mut eps = 0u32;
            t.phases[0] += now() - s;
            for (k, parity) in [(1usize, 0usize), (2, 1)] {
                let arrive = now();
                block.exchange(&world, &mut a);
                t.ops.push((1.0, arrive, now()));
                let s = now();
                for i in 1..=rows {
                    let gi = block.origin.0 + i;
                    let first = 1 + (gi + block.origin.1 + 1 + parity) % 2;
                    eps = eps.max(sor_rb_row(&mut a, i, w, first, OMEGA));
                }
                t.phases[k] += now() - s;
            }
            let s = now();
            let local = f32::from_bits(eps);
            t.phases[3] += now() - s;
            let mut global = 0.0f32;
            let arrive = now();
            world.all_reduce_into(&local, &mut global, SystemOperation::max());
            t.ops.push((0.0, arrive, now()));
            std::hint::black_box(global);
        }
        t.iterations += now() - it_start;
    }
    t.run = now() - run_start;
    let verified = gather_and_verify(&world, &block, &a, size, workload, iterations)?;
    let mine: Vec<f64> = [t.run, t.iterations]
        .into_iter()
        .chain(t.phases.iter().copied())
        .chain(t.ops.iter().flat_map(|o| [o.0, o.1, o.2]))
        .collect();
    let root = world.process_at_rank(0);
    if rank != 0 {
        root.gather_into(&mine[..]);
        return Ok(None);
    }
    let mut all = vec![0.0f64; mine.len() * procs];
    root.gather_into_root(&mine[..], &mut all[..]);
    let per_rank: Vec<&[f64]> = all.chunks(mine.len()).collect();
    let report = measured_report(workload, size, iterations, &g, &phases, &per_rank, verified);
    Ok(Some(report))
}

/// Gather the blocks on rank 0 and compare with the sequential reference; true when it
/// passes (an error on rank 0 when it does not).
fn gather_and_verify(
    world: &SimpleCommunicator,
    block: &Block,
    a: &[f32],
    n: usize,
    workload: &str,
    iterations: usize,
) -> Result<bool, MpiError> {
    let w = block.width();
    let mut mine = Vec::with_capacity(block.rows * block.cols + 2);
    mine.push(block.origin.0 as f32);
    mine.push(block.origin.1 as f32);
    for i in 1..=block.rows {
        mine.extend_from_slice(&a[i * w + 1..i * w + 1 + block.cols]);
    }
    let root = world.process_at_rank(0);
    if world.rank() != 0 {
        root.gather_into(&mine[..]);
        return Ok(true);
    }
    let mut all = vec![0.0f32; mine.len() * world.size() as usize];
    root.gather_into_root(&mine[..], &mut all[..]);
    let mut got: Vec<f32> = (0..n * n).map(initial_value).collect();
    for part in all.chunks(mine.len()) {
        let (r0, c0) = (part[0] as usize, part[1] as usize);
        for i in 0..block.rows {
            let row = &part[2 + i * block.cols..2 + (i + 1) * block.cols];
            let at = (r0 + 1 + i) * n + c0 + 1;
            got[at..at + block.cols].copy_from_slice(row);
        }
    }
    let want = if workload == "jacobi2d" {
        jacobi_reference(n, iterations)
    } else {
        sor_reference(n, iterations, true).0
    };
    let v = compare(&got, &want, TOLERANCE);
    if !v.passed {
        return Err(MpiError::Invalid(format!(
            "{workload} N = {n}: the distributed result differs from the sequential reference (max rel error {:.3e})",
            v.max_rel_error
        )));
    }
    Ok(true)
}

fn measured_report(
    workload: &str,
    size: usize,
    iterations: usize,
    grid: &ProcessorGrid,
    phases: &[(String, Work)],
    per_rank: &[&[f64]],
    verified: bool,
) -> ClusterReport {
    let procs = per_rank.len();
    let ops_at = 2 + phases.len();
    let op_count = (per_rank[0].len() - ops_at) / 3;
    let latest: Vec<f64> = (0..op_count)
        .map(|k| {
            per_rank
                .iter()
                .map(|r| r[ops_at + 3 * k + 1])
                .fold(f64::MIN, f64::max)
        })
        .collect();
    let share = 1.0 / procs as f64;
    let mut phase_times: Vec<Vec<ProcessorTimes>> = vec![Vec::new(); phases.len()];
    let mut iteration = Vec::new();
    let mut run = Vec::new();
    for r in per_rank {
        let mut it = ProcessorTimes {
            execution: r[1],
            ..Default::default()
        };
        for (k, (_, work)) in phases.iter().enumerate() {
            let t = r[2 + k];
            let mut p = ProcessorTimes {
                execution: t,
                cpu: t,
                ..Default::default()
            };
            if *work == Work::Replicated {
                p.cpu = t * share;
                p.insufficient_parallelism = t * (1.0 - share);
            }
            it.cpu += p.cpu;
            it.insufficient_parallelism += p.insufficient_parallelism;
            phase_times[k].push(p);
        }
        for (k, &latest) in latest.iter().enumerate() {
            let (kind, arrive, exit) = (
                r[ops_at + 3 * k],
                r[ops_at + 3 * k + 1],
                r[ops_at + 3 * k + 2],
            );
            let sync = (latest - arrive).clamp(0.0, exit - arrive);
            it.synchronization += sync;
            if kind > 0.5 {
                it.shadow += exit - arrive - sync;
            } else {
                it.reduction += exit - arrive - sync;
            }
        }
        it.sys = (it.execution - it.accounted()).max(0.0);
        let mut whole = it;
        whole.execution = r[0];
        whole.sys += (r[0] - r[1]).max(0.0);
        iteration.push(it);
        run.push(whole);
    }
    let ops_of_kind = |kind: f64| {
        (0..op_count)
            .filter(|&k| (per_rank[0][ops_at + 3 * k] - kind).abs() < 0.5)
            .count() as u64
    };
    let (sh, red) = (ops_of_kind(1.0), ops_of_kind(0.0));
    let n_phases = phases.len();
    let mut intervals = vec![
        IntervalReport::from_processors(
            0,
            "run".into(),
            "run".into(),
            None,
            vec![1],
            1,
            (sh, red),
            run,
        ),
        IntervalReport::from_processors(
            1,
            "iteration".into(),
            "run/iteration".into(),
            Some(0),
            (2..2 + n_phases).collect(),
            iterations as u64,
            (sh, red),
            iteration,
        ),
    ];
    for (k, ((name, _), times)) in phases.iter().zip(phase_times).enumerate() {
        intervals.push(IntervalReport::from_processors(
            2 + k,
            name.to_string(),
            format!("run/iteration/{name}"),
            Some(1),
            Vec::new(),
            iterations as u64,
            (0, 0),
            times,
        ));
    }
    ClusterReport {
        schema: CLUSTER_SCHEMA.into(),
        kind: ReportKind::Measured,
        workload: workload.into(),
        size,
        iterations: iterations as u64,
        grid: grid.extents().to_vec(),
        processors: procs,
        network: None,
        source: format!(
            "mpirun -np {procs}: {workload} N={size} × {iterations} over {}, one host thread per rank{}",
            grid.name(),
            if verified { ", verified against the sequential reference" } else { "" }
        ),
        one_processor_seconds: None,
        notes: vec![
            "synchronization: per collective operation, the wait from a rank's arrival to the latest rank's arrival (one machine-wide clock); communication: the rest of the operation".into(),
            "system: time inside an interval outside its phases and operations (loop control, timers)".into(),
        ],
        intervals,
    }
}

/// Message sizes of the ping-pong: 0 B, then 4 B to 4 MiB by factors of 4.
fn pingpong_sizes() -> Vec<usize> {
    std::iter::once(0)
        .chain((0..11).map(|k| 4usize << (2 * k)))
        .collect()
}

/// Per size the median over `repeats` of `step` (after two warm-up calls).
fn medians(
    world: &SimpleCommunicator,
    sizes: &[usize],
    repeats: usize,
    mut step: impl FnMut(&mut Vec<u8>, &mut Vec<u8>) -> f64,
) -> Vec<f64> {
    sizes
        .iter()
        .map(|&bytes| {
            let (mut a, mut b) = (vec![0u8; bytes], vec![0u8; bytes]);
            let reps = if bytes >= 1 << 20 {
                repeats.min(20)
            } else {
                repeats
            };
            world.barrier();
            let mut times: Vec<f64> = (0..reps + 2).map(|_| step(&mut a, &mut b)).collect();
            times.drain(..2);
            times.sort_by(f64::total_cmp);
            times[times.len() / 2]
        })
        .collect()
}

/// `T(n) = Ts + n·Tb` fitted to `(n, t)` by least squares on the relative error (weights
/// `1/t²`), so that small and large messages count alike; both kept ≥ 0.
pub fn fit_message_line(sizes: &[usize], times: &[f64]) -> (f64, f64) {
    let (mut sw, mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&n, &t) in sizes.iter().zip(times) {
        if t <= 0.0 {
            continue;
        }
        let (w, x) = (1.0 / (t * t), n as f64);
        sw += w;
        sx += w * x;
        sy += w * t;
        sxx += w * x * x;
        sxy += w * x * t;
    }
    let det = sw * sxx - sx * sx;
    if det <= 0.0 {
        return (sy / sw.max(f64::MIN_POSITIVE), 0.0);
    }
    let tb = ((sw * sxy - sx * sy) / det).max(0.0);
    let ts = ((sy - tb * sx) / sw).max(0.0);
    (ts, tb)
}

/// Measure message times between ranks 0 and 1 and a 4-byte all-reduce over every rank, and
/// fit the network's line. A `transputer` (grid) network is fitted to the simultaneous
/// exchange (both ranks send and receive at once, as in a shadow exchange, where links work
/// in parallel); a `network` (bus) to the one-way ping-pong time. Returns, on rank 0, the
/// network and one line per size.
pub fn pingpong(
    kind: NetworkKind,
    repeats: usize,
    fit: (usize, usize),
) -> Result<Option<(Network, Vec<String>)>, MpiError> {
    let universe = start("mpi-pingpong")?;
    let world = universe.world();
    let (rank, procs) = (world.rank(), world.size());
    if procs < 2 {
        return Err(MpiError::Invalid(
            "the ping-pong needs 2 ranks: mpirun -np 2".into(),
        ));
    }
    let repeats = repeats.clamp(5, 100_000);
    let sizes = pingpong_sizes();
    let one_way = medians(&world, &sizes, repeats, |a, _| {
        let s = now();
        if rank == 0 {
            world.process_at_rank(1).send(&a[..]);
            world.process_at_rank(1).receive_into(&mut a[..]);
        } else if rank == 1 {
            world.process_at_rank(0).receive_into(&mut a[..]);
            world.process_at_rank(0).send(&a[..]);
        }
        (now() - s) / 2.0
    });
    let exchange = medians(&world, &sizes, repeats, |a, b| {
        let s = now();
        if rank < 2 {
            let other = world.process_at_rank(1 - rank);
            mpi::request::scope(|scope| {
                let r = other.immediate_receive_into(scope, &mut b[..]);
                let w = other.immediate_send(scope, &a[..]);
                r.wait();
                w.wait();
            });
        }
        now() - s
    });
    let mut reduce = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        world.barrier();
        let (x, mut y) = (rank as f32, 0.0f32);
        let s = now();
        world.all_reduce_into(&x, &mut y, SystemOperation::max());
        reduce.push(now() - s);
    }
    if rank != 0 {
        return Ok(None);
    }
    reduce.sort_by(f64::total_cmp);
    let fitted = match kind {
        NetworkKind::Grid => &exchange,
        NetworkKind::Bus => &one_way,
    };
    let (fit_sizes, fit_times): (Vec<usize>, Vec<f64>) = sizes
        .iter()
        .zip(fitted)
        .filter(|(&b, _)| fit.0 <= b && b <= fit.1)
        .unzip();
    if fit_sizes.is_empty() {
        return Err(MpiError::Invalid(format!(
            "no message size between {} and {} bytes was measured (0 B, then 4 B to 4 MiB by factors of 4)",
            fit.0, fit.1
        )));
    }
    let (ts, tb) = fit_message_line(&fit_sizes, &fit_times);
    let net = Network::new(kind, Seconds(ts), tb, 1.0, None)?;
    let mut lines = vec![format!(
        "{:>9}  {:>12}  {:>12}  {:>12}  (µs; the line is fitted to the {} from {} to {} bytes)",
        "bytes",
        "one way",
        "exchange",
        "line",
        match kind {
            NetworkKind::Grid => "exchange",
            NetworkKind::Bus => "one-way time",
        },
        fit.0,
        fit.1
    )];
    for (k, &b) in sizes.iter().enumerate() {
        let model = ts + b as f64 * tb;
        lines.push(format!(
            "{b:>9}  {:>12.3}  {:>12.3}  {:>12.3}  ({:+.0} %)",
            one_way[k] * 1e6,
            exchange[k] * 1e6,
            model * 1e6,
            100.0 * (model - fitted[k]) / fitted[k]
        ));
    }
    lines.push(format!(
        "4-byte all-reduce over {procs} ranks: {:.3} µs (median of {repeats})",
        reduce[reduce.len() / 2] * 1e6
    ));
    Ok(Some((net, lines)))
}

/// `harness mpi-pingpong`: measure and write the network file (rank 0).
pub fn pingpong_command(
    output: &std::path::Path,
    kind: NetworkKind,
    repeats: usize,
    fit: (usize, usize),
) -> Result<(), MpiError> {
    if let Some((net, lines)) = pingpong(kind, repeats, fit)? {
        for l in &lines {
            println!("{l}");
        }
        let file = net.to_file(Some(format!(
            "harness mpi-pingpong: a line fitted by relative least squares to the {} medians from {} to {} bytes ({})",
            match kind {
                NetworkKind::Grid => "simultaneous exchange",
                NetworkKind::Bus => "one-way ping-pong",
            },
            fit.0,
            fit.1,
            lines.last().cloned().unwrap_or_default()
        )));
        let text = toml::to_string(&file).map_err(|e| MpiError::Invalid(e.to_string()))?;
        crate::export::write_atomically(output, text.as_bytes())
            .map_err(|e| MpiError::Invalid(format!("writing {}: {e}", output.display())))?;
        println!("wrote {}", output.display());
    }
    Ok(())
}
