//! Read latency t and write latency T by pointer chasing (docs/models.md §1: t, T).
//!
//! **t.** One executor follows a random cyclic permutation of nodes spaced one 128-byte line
//! apart (a random order, [`super::permutation`], linked in a ring), so every step is a
//! dependent load of a new line. Each
//! sample runs the chase for `s` and `2s` steps and takes `(time(2s) − time(s)) / s`, which
//! cancels launch overhead; `s` is at least [`chase_steps`], and enough steps that the
//! shorter chase runs [`MIN_CHASE_SECONDS`]. The working set is swept from 4 KiB up; the
//! curve's plateaus are the cache levels, and t is the device-memory level. On CUDA the
//! chase follows device addresses (`p = *p`, [`Chase::Addresses`]): following 32-bit
//! indices (`j = next[j]`)
//! puts a dependent multiply-add, index to address, of a few cycles before every load, which
//! the first H100 calibration read as 39.6 cycles where address-chasing tools see about 34.
//! A CPU's load scales an index in its addressing mode at no cost, so CPU devices chase
//! indices, and so do OpenCL GPUs: OpenCL 1.2 does not promise that a buffer keeps its device
//! address from one launch to the next (shared virtual memory came with 2.0).
//!
//! **T.** The same chase, but every step first stores to the node it stands on and then
//! issues a device-wide memory fence (`__threadfence()` / `mem_fence`), so the store must be
//! performed at the point of coherence before the next load may issue. T is the extra time
//! per step over the plain chase on the same ring, measured in the same sample.

use serde::{Deserialize, Serialize};

use super::permutation::random_permutation;
use super::{verify, BenchContext, BenchError, Measured, CHECK_CHUNK};
use crate::backend::{download_u32, upload_u32, Arg, BackendKind, Buffer, DeviceInfo, Launch};
use crate::fit::stats::Summary;

/// Bytes between consecutive nodes of the ring: one GPU cache line.
pub const NODE_BYTES: usize = 128;
const NODE_WORDS: usize = NODE_BYTES / 4;
/// Smallest working set of the sweep.
pub const MIN_WORKING_SET: usize = 4 << 10;
/// How much a lone last point of the sweep must rise over the plateau before it to be a
/// level of its own ([`levels`]). A cache-to-memory step is 2.5× or more on the devices
/// measured (37 → 137 ns on the Intel VM's host, GPUs' L2 to HBM about 2.5×); a chase over
/// 4 KiB pages that outgrows the page-walk caches creeps up 1.2–1.6× per doubling at the
/// sweep's end (PoCL on the Intel VM: 512 MiB at 186–205 ns, 1 GiB at 221–305 ns), which
/// split one memory plateau into an `L4` and a one-point `memory` in three of nine runs.
pub const LONE_LAST_POINT_JUMP: f64 = 2.0;

/// One point of the latency sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyPoint {
    /// Working set in bytes.
    pub working_set_bytes: usize,
    /// Median latency per dependent load, ns.
    pub latency_ns: f64,
    /// Its 95 % CI, ns.
    pub ci95_ns: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

/// A plateau of the sweep: one level of the memory hierarchy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LatencyLevel {
    /// `L1`, `L2`, … and `memory` for the last one.
    pub level: String,
    /// Working sets covered, bytes `[first, last]`.
    pub working_set_bytes: [usize; 2],
    /// Median of the plateau's point latencies, ns.
    pub latency_ns: f64,
    /// Range of the plateau points' CIs, ns.
    pub ci95_ns: [f64; 2],
    /// Latency in core clock cycles, where the clock is known.
    pub cycles: Option<f64>,
}

/// The ring's links, one word a node (`succ[node]`, the word index of its successor's first
/// word; the ring itself, `ring_expand`, holds it in the node's first word, 0 elsewhere),
/// and the word index of the node reached after k steps from node 0, for every k: the
/// cycle's own order turned to start at node 0, so that nothing walks the ring (a walk of a
/// ring past the caches waits a memory latency a step).
fn ring_and_order(nodes: usize, seed: u64) -> (Vec<u32>, Vec<u32>) {
    // The nodes in a uniformly random order, each linked to the next and the last to the
    // first: a uniformly random single cycle (each cycle is n of the orders).
    let mut order = random_permutation(nodes, seed);
    let mut succ = vec![0u32; nodes];
    for k in 0..nodes {
        succ[order[k] as usize] = order[(k + 1) % nodes] * NODE_WORDS as u32;
    }
    let zero = order.iter().position(|&node| node == 0).unwrap_or(0);
    order.rotate_left(zero);
    for node in &mut order {
        *node *= NODE_WORDS as u32;
    }
    (succ, order)
}

/// Where a chase of `steps` steps from word index `start` ends, from the ring's links.
fn end_of_walk(succ: &[u32], start: u32, steps: u32) -> u32 {
    (0..steps).fold(start, |j, _| succ[j as usize / NODE_WORDS])
}

/// How the read-latency chase follows its ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chase {
    /// `j = next[j]`, 32-bit word indices: CPU and OpenCL devices, and the write-latency
    /// chases.
    Indices,
    /// `p = *p`, device addresses, no arithmetic between the loads: CUDA devices.
    Addresses,
}

impl Chase {
    /// The read-latency chase for `device`: addresses on CUDA, indices elsewhere.
    pub fn for_device(device: &DeviceInfo) -> Self {
        if device.backend == BackendKind::Cuda {
            Chase::Addresses
        } else {
            Chase::Indices
        }
    }
}

struct Ring {
    /// The working set it was built for.
    bytes: usize,
    next: Buffer,
    /// The ring as addresses ([`Chase::Addresses`]), built on the device from `next`.
    links: Option<Buffer>,
    /// Its links, one word a node ([`ring_and_order`]): the host's whole copy of the ring.
    succ: Vec<u32>,
    /// Word index of the node reached after k steps from node 0, for every k.
    order: Vec<u32>,
    out: Buffer,
}

impl Ring {
    /// Where a chase that is the `k`-th segment of a walk of `segment` steps starts: the
    /// segments follow each other along the ring, so a run never finds the nodes of the
    /// runs before it in a cache, until the walk has gone round a ring too large to be
    /// cached anyway.
    fn start(&self, k: u64, segment: u32) -> u32 {
        let at = (k * u64::from(segment)) % self.order.len() as u64;
        self.order[at as usize]
    }
}

fn upload_ring(ctx: &mut BenchContext<'_>, bytes: usize, chase: Chase) -> Result<Ring, BenchError> {
    let nodes = (bytes / NODE_BYTES).max(2);
    let seed = 0x5eed_0000 + bytes as u64;
    ctx.seeds.insert(format!("ring_{bytes}"), seed);
    let (succ, order) = ring_and_order(nodes, seed);
    let next = ring_on_device(ctx, &succ)?;
    let links = match chase {
        Chase::Indices => None,
        Chase::Addresses => {
            let links = ctx.device.alloc(nodes * NODE_BYTES)?;
            let group = ctx.group().max(1);
            ctx.launch(
                "chase_links",
                &Launch::linear(nodes.div_ceil(group) * group, group),
                &[
                    Arg::Buf(&next),
                    Arg::Buf(&links),
                    Arg::U32(nodes as u32),
                    Arg::U32(NODE_WORDS as u32),
                ],
            )?;
            Some(links)
        }
    };
    Ok(Ring {
        bytes,
        next,
        links,
        out: upload_u32(ctx.device, &[0])?,
        succ,
        order,
    })
}

/// A device buffer holding the ring whose links are `succ` ([`ring_and_order`]), written on
/// the device by `ring_expand` from an upload of the links alone.
fn ring_on_device(ctx: &BenchContext<'_>, succ: &[u32]) -> Result<Buffer, BenchError> {
    let links = upload_u32(ctx.device, succ)?;
    let words = succ.len() * NODE_WORDS;
    let next = ctx.device.alloc(words * 4)?;
    let group = ctx.group().max(1);
    ctx.launch(
        "ring_expand",
        &Launch::linear(words.div_ceil(group) * group, group),
        &[
            Arg::Buf(&links),
            Arg::Buf(&next),
            Arg::U32(words as u32),
            Arg::U32(NODE_WORDS as u32),
        ],
    )?;
    Ok(next)
}

fn chase_time(ctx: &BenchContext<'_>, r: &Ring, start: u32, steps: u32) -> Result<f64, BenchError> {
    let (kernel, ring) = match &r.links {
        Some(links) => ("chase_ptr", links),
        None => ("chase", &r.next),
    };
    let t = ctx.launch(
        kernel,
        &Launch::single(),
        &[
            Arg::Buf(ring),
            Arg::U32(steps),
            Arg::Buf(&r.out),
            Arg::U32(start),
        ],
    )?;
    Ok(t.0)
}

fn verify_chase(ctx: &BenchContext<'_>, r: &Ring, steps: u32) -> Result<(), BenchError> {
    let start = r.start(1, steps);
    chase_time(ctx, r, start, steps)?;
    let got = download_u32(ctx.device, &r.out, 1)?[0];
    let want = end_of_walk(&r.succ, start, steps);
    verify(got == want, "read latency", || {
        format!("chase of {steps} steps ended at {got}, host says {want}")
    })
}

/// Steps per chase: enough that the kernel runs well beyond timer resolution. The same with
/// `--quick`, which takes fewer samples of the same quantity.
pub fn chase_steps() -> u32 {
    1 << 15
}

/// The least time the shorter chase of a read-latency sample runs, so that the difference
/// of the two dwarfs the jitter of a launch's start, as a bandwidth sample's passes do
/// (`bench/bandwidth`, 0.5 ms). With [`chase_steps`] alone, a chase inside the L2 ran 0.1–
/// 0.2 ms, and on the 2-core Intel Xeon VM's PoCL a fifth of the samples at 512 KiB and
/// 1 MiB came out negative in a full calibration (2026-12-02): the 512 KiB point read
/// 1.5 [0.9, 2.6] ns between 4.8 and 6.1, which cut the L2 level short at 512 KiB.
pub const MIN_CHASE_SECONDS: f64 = 500e-6;

/// The most steps [`steps_for`] gives a chase: 4 Mi, 7 ms at the 1.6 ns of a CPU's L1.
const MAX_CHASE_STEPS: u32 = 1 << 22;

/// Steps for the shorter chase of a sample on `r`: [`chase_steps`] times the power of two
/// that makes one chase of them run [`MIN_CHASE_SECONDS`], from one chase of
/// [`chase_steps`] timed (launch included, which errs towards fewer steps); at most
/// [`MAX_CHASE_STEPS`]. Past the caches a chase of [`chase_steps`] already runs milliseconds.
fn steps_for(ctx: &BenchContext<'_>, r: &Ring) -> Result<u32, BenchError> {
    let base = chase_steps();
    let probe = chase_time(ctx, r, r.start(0, base), base)?;
    Ok(scaled_steps(probe))
}

/// [`steps_for`]'s steps where a chase of [`chase_steps`] took `probe` seconds.
fn scaled_steps(probe: f64) -> u32 {
    let factor = if probe > 0.0 && probe.is_finite() {
        (MIN_CHASE_SECONDS / probe)
            .ceil()
            .clamp(1.0, f64::from(MAX_CHASE_STEPS)) as u32
    } else {
        1
    };
    chase_steps()
        .saturating_mul(factor.next_power_of_two())
        .min(MAX_CHASE_STEPS)
}

/// Measure the latency of one working set, chasing as the device asks
/// ([`Chase::for_device`]).
pub fn read_latency_at(
    ctx: &mut BenchContext<'_>,
    bytes: usize,
) -> Result<LatencyPoint, BenchError> {
    read_latency_keeping_ring(ctx, bytes).map(|(p, _)| p)
}

/// A ring the read-latency sweep chased, kept for the write latency at the same working set
/// ([`write_latency_on`]): the same ring (its seed is the working set's), built and uploaded
/// once instead of twice, which past a large last-level cache is a GiB of host memory drawn
/// at random and copied (2.2 s of the write latency's 12 s on the 2-core Intel Xeon VM whose
/// OS reports a 480 MiB L3).
pub struct ChasedRing(Ring);

/// [`read_latency_at`], and the ring it chased.
pub fn read_latency_keeping_ring(
    ctx: &mut BenchContext<'_>,
    bytes: usize,
) -> Result<(LatencyPoint, ChasedRing), BenchError> {
    let chase = Chase::for_device(ctx.device.info());
    let r = upload_ring(ctx, bytes, chase)?;
    let p = read_latency_on(ctx, &r)?;
    Ok((p, ChasedRing(r)))
}

/// Measure the latency of one working set with the given chase.
pub fn read_latency_with(
    ctx: &mut BenchContext<'_>,
    bytes: usize,
    chase: Chase,
) -> Result<LatencyPoint, BenchError> {
    let r = upload_ring(ctx, bytes, chase)?;
    read_latency_on(ctx, &r)
}

/// The read latency of the ring `r`.
fn read_latency_on(ctx: &mut BenchContext<'_>, r: &Ring) -> Result<LatencyPoint, BenchError> {
    let bytes = r.bytes;
    verify_chase(ctx, r, chase_steps())?;
    let steps = steps_for(ctx, r)?;
    let name = format!("read_latency_s/{bytes}");
    // Each sample walks 3s fresh steps: s for the short run, then 2s for the long one.
    let mut sample = 0u64;
    let m = ctx.measure(&name, || {
        sample += 1;
        let short = chase_time(ctx, r, r.start(3 * sample, steps), steps)?;
        let long = chase_time(ctx, r, r.start(3 * sample + 1, steps), 2 * steps)?;
        Ok((long - short) / f64::from(steps))
    })?;
    ctx.record(&name, &m);
    Ok(point(bytes, &m))
}

fn point(bytes: usize, m: &Measured) -> LatencyPoint {
    LatencyPoint {
        working_set_bytes: bytes,
        latency_ns: m.summary.median * 1e9,
        ci95_ns: [m.summary.ci95[0] * 1e9, m.summary.ci95[1] * 1e9],
        outliers: m.summary.outliers,
    }
}

/// The working sets of the sweep: 4 KiB doubling up to `max_bytes`.
pub fn sweep_sizes(max_bytes: usize) -> Vec<usize> {
    let mut sizes = Vec::new();
    let mut s = MIN_WORKING_SET;
    while s <= max_bytes {
        sizes.push(s);
        s *= 2;
    }
    sizes
}

/// Group a sweep into plateaus: a new level starts where latency jumps by more than 30 %
/// over the previous point. Single-point groups between plateaus are transitions and are
/// dropped from the levels (they stay in the sweep), except the last group, which is always
/// the `memory` level. A lone last point that rises less than [`LONE_LAST_POINT_JUMP`] over
/// a plateau of two or more points joins that plateau: it is the chase outgrowing the
/// page-walk caches at the sweep's end, not a new level (see the constant).
pub fn levels(sweep: &[LatencyPoint], clock_mhz: Option<f64>) -> Vec<LatencyLevel> {
    let mut groups: Vec<Vec<&LatencyPoint>> = Vec::new();
    for p in sweep {
        match groups.last_mut() {
            Some(g) if p.latency_ns <= g[g.len() - 1].latency_ns * 1.3 => g.push(p),
            _ => groups.push(vec![p]),
        }
    }
    if let [.., before, last] = groups.as_slice() {
        let creeps = last.len() == 1
            && before.len() >= 2
            && last[0].latency_ns < before[before.len() - 1].latency_ns * LONE_LAST_POINT_JUMP;
        if creeps {
            let lone = groups.pop().expect("two groups or more");
            groups.last_mut().expect("one group left").extend(lone);
        }
    }
    let last = groups.len().saturating_sub(1);
    let kept: Vec<&Vec<&LatencyPoint>> = groups
        .iter()
        .enumerate()
        .filter(|(i, g)| g.len() >= 2 || *i == last)
        .map(|(_, g)| g)
        .collect();
    let count = kept.len();
    kept.into_iter()
        .enumerate()
        .map(|(i, g)| {
            let mut lat: Vec<f64> = g.iter().map(|p| p.latency_ns).collect();
            lat.sort_by(f64::total_cmp);
            let latency_ns = crate::fit::stats::median_of_sorted(&lat);
            LatencyLevel {
                level: if i + 1 == count {
                    "memory".to_string()
                } else {
                    format!("L{}", i + 1)
                },
                working_set_bytes: [g[0].working_set_bytes, g[g.len() - 1].working_set_bytes],
                latency_ns,
                ci95_ns: [
                    g.iter().map(|p| p.ci95_ns[0]).fold(f64::INFINITY, f64::min),
                    g.iter()
                        .map(|p| p.ci95_ns[1])
                        .fold(f64::NEG_INFINITY, f64::max),
                ],
                cycles: clock_mhz.map(|mhz| latency_ns * mhz / 1000.0),
            }
        })
        .collect()
}

/// The working set at which t is read: the smallest swept size at least twice the L2
/// (so nearly every load misses it), or the largest swept size when L2 is unknown.
pub fn memory_working_set(sizes: &[usize], l2_bytes: Option<u64>) -> Option<usize> {
    let largest = sizes.last().copied()?;
    Some(match l2_bytes {
        Some(l2) => sizes
            .iter()
            .copied()
            .find(|&s| s as u64 >= 2 * l2)
            .unwrap_or(largest),
        None => largest,
    })
}

/// Write latency at working set `bytes`: per-step time of the store-and-fence chase minus
/// that of the plain chase, both measured in each sample.
pub fn write_latency_at(ctx: &mut BenchContext<'_>, bytes: usize) -> Result<Measured, BenchError> {
    // Both chases of T follow indices, so their difference is the store and fence alone.
    let r = upload_ring(ctx, bytes, Chase::Indices)?;
    write_latency_with(ctx, &r)
}

/// [`write_latency_at`] on the ring the read-latency sweep chased at the same working set.
/// Both chases of T follow its indices (`next`), which every ring has, whatever the read
/// chase followed.
pub fn write_latency_on(
    ctx: &mut BenchContext<'_>,
    ring: &ChasedRing,
) -> Result<Measured, BenchError> {
    write_latency_with(ctx, &ring.0)
}

fn write_latency_with(ctx: &mut BenchContext<'_>, r: &Ring) -> Result<Measured, BenchError> {
    let bytes = r.bytes;
    // The stores' target, as large as the ring, starting as a copy of its words
    // ([`verify_chase_store`]).
    let sink = ring_on_device(ctx, &r.succ)?;
    let steps = chase_steps();
    verify_chase_store(ctx, r, &sink, steps)?;
    let store_time = |ctx: &BenchContext<'_>, start: u32, s: u32| -> Result<f64, BenchError> {
        Ok(ctx
            .launch(
                "chase_store",
                &Launch::single(),
                &[
                    Arg::Buf(&r.next),
                    Arg::U32(s),
                    Arg::Buf(&sink),
                    Arg::Buf(&r.out),
                    Arg::U32(start),
                ],
            )?
            .0)
    };
    let name = format!("write_latency_s/{bytes}");
    // Each sample walks 6s fresh steps: 2s + s with stores, then 2s + s without.
    let mut sample = 0u64;
    let mut pooled: Vec<f64> = Vec::new();
    // T is a difference of two chases; on a busy CPU one batch of samples may leave it inside
    // the noise (its interval reaching zero). Then more batches are pooled with it, up to
    // WRITE_LATENCY_BATCHES, and a T that never clears zero is an error, not a parameter.
    let mut batch = 0;
    loop {
        batch += 1;
        let m = ctx.measure(&name, || {
            sample += 1;
            let at = |k: u64| r.start(6 * sample + k, steps);
            let store = (store_time(ctx, at(0), 2 * steps)? - store_time(ctx, at(2), steps)?)
                / f64::from(steps);
            let load = (chase_time(ctx, r, at(3), 2 * steps)? - chase_time(ctx, r, at(5), steps)?)
                / f64::from(steps);
            Ok(store - load)
        })?;
        pooled.extend(&m.samples);
        let summary = Summary::new(&pooled).map_err(|source| BenchError::Stats {
            what: name.clone(),
            source,
        })?;
        let resolved = summary.ci95[0] > 0.0;
        if resolved || batch == WRITE_LATENCY_BATCHES {
            if summary.median <= 0.0 {
                return Err(BenchError::Unresolved {
                    what: format!("the write latency T at {bytes} bytes"),
                    detail: format!(
                        "the store-and-fence chase was not slower than the plain chase \
                         (median difference {:.3} ns over {} samples); rerun on a quieter machine",
                        summary.median * 1e9,
                        pooled.len()
                    ),
                });
            }
            let m = Measured {
                converged: m.converged && resolved,
                summary,
                samples: pooled,
            };
            ctx.record(&name, &m);
            return Ok(m);
        }
    }
}

/// Batches of samples the write latency may pool before it is declared unresolved.
const WRITE_LATENCY_BATCHES: usize = 4;

/// Run the store chase once from node 0 and check every word of the sink: the step's number
/// where a step stood (the last step's where the chase went round a ring shorter than it),
/// the sink's starting word everywhere else. The sink starts as a copy of the ring's words
/// (`write_latency_with`), which the host computes from the ring's links, so the check
/// draws no array of the working set's size: where a store landed on a word it should not,
/// the word's step (1 or more) differs from the ring's word there, an index that is 0 or a
/// multiple of the node's words.
fn verify_chase_store(
    ctx: &BenchContext<'_>,
    r: &Ring,
    sink: &Buffer,
    steps: u32,
) -> Result<(), BenchError> {
    ctx.launch(
        "chase_store",
        &Launch::single(),
        &[
            Arg::Buf(&r.next),
            Arg::U32(steps),
            Arg::Buf(sink),
            Arg::Buf(&r.out),
            Arg::U32(0),
        ],
    )?;
    let mut stored: Vec<(u32, u32)> = Vec::with_capacity(steps as usize);
    let mut j = 0u32;
    for s in 0..steps {
        stored.push((j, s));
        j = r.succ[j as usize / NODE_WORDS];
    }
    // By word, the last step first, then one per word.
    stored.sort_unstable_by_key(|&(word, s)| (word, std::cmp::Reverse(s)));
    stored.dedup_by_key(|&mut (word, _)| word);
    let end = download_u32(ctx.device, &r.out, 1)?[0];
    // Read back a chunk at a time through one host array: the sink is as large as the
    // working set (a gigabyte where the memory level is read there), and a fresh host array
    // that large cost seconds of page faults on a VM.
    let mut stores = stored.iter().peekable();
    let words = r.succ.len() * NODE_WORDS;
    let mut chunk = vec![0u32; CHECK_CHUNK.min(words)];
    let mut first_wrong = None;
    let mut start = 0;
    while start < words && first_wrong.is_none() {
        let got = &mut chunk[..CHECK_CHUNK.min(words - start)];
        ctx.device
            .download_from(sink, 4 * start, bytemuck::cast_slice_mut(got))?;
        first_wrong = got
            .iter()
            .enumerate()
            .position(|(k, &g)| {
                let at = start + k;
                let want = match stores.peek() {
                    Some(&&(word, s)) if word as usize == at => {
                        stores.next();
                        s
                    }
                    // The ring's word there, as the sink started.
                    _ if at % NODE_WORDS == 0 => r.succ[at / NODE_WORDS],
                    _ => 0,
                };
                g != want
            })
            .map(|k| (start + k, got[k]));
        start += got.len();
    }
    verify(
        end == j && first_wrong.is_none(),
        "write latency",
        || match first_wrong {
            Some((i, got)) => format!("store chase left word {i} at {got} (expected otherwise)"),
            None => format!("store chase ended at {end} (host {j})"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ring's words from its links (`succ[node]`, the successor's first word): what the
    /// `ring_expand` kernel writes on the device, built here independently of it.
    fn expand(succ: &[u32]) -> Vec<u32> {
        let mut next = vec![0u32; succ.len() * NODE_WORDS];
        for (node, &to) in succ.iter().enumerate() {
            next[node * NODE_WORDS] = to;
        }
        next
    }

    /// A random ring of `nodes` nodes as the chases read it: a node's first word holds its
    /// successor's first word, every other word 0.
    fn ring(nodes: usize, seed: u64) -> Vec<u32> {
        expand(&ring_and_order(nodes, seed).0)
    }

    /// Where a chase of `steps` steps from node 0 ends, along the ring's words.
    fn chase_end(next: &[u32], steps: u32) -> u32 {
        (0..steps).fold(0, |j, _| next[j as usize])
    }

    fn sweep(latencies: &[(usize, f64)]) -> Vec<LatencyPoint> {
        latencies
            .iter()
            .map(|&(kib, ns)| LatencyPoint {
                working_set_bytes: kib << 10,
                latency_ns: ns,
                ci95_ns: [ns * 0.9, ns * 1.1],
                outliers: 0,
            })
            .collect()
    }

    #[test]
    fn plateaus_become_levels_and_the_last_is_memory() {
        // L1 at 1 ns (4–16 KiB), a transition point at 32 KiB, L2 at 10 ns, memory at 100.
        let s = sweep(&[
            (4, 1.0),
            (8, 1.1),
            (16, 1.2),
            (32, 4.0),
            (64, 10.0),
            (128, 10.5),
            (256, 100.0),
            (512, 102.0),
        ]);
        let l = levels(&s, Some(2000.0));
        let names: Vec<&str> = l.iter().map(|l| l.level.as_str()).collect();
        assert_eq!(names, ["L1", "L2", "memory"]);
        assert_eq!(l[0].working_set_bytes, [4 << 10, 16 << 10]);
        assert_eq!(l[0].latency_ns, 1.1);
        assert_eq!(l[1].working_set_bytes, [64 << 10, 128 << 10]);
        assert_eq!(l[1].latency_ns, 10.25);
        // The CI spans the plateau points' intervals.
        assert_eq!(l[2].ci95_ns, [100.0 * 0.9, 102.0 * 1.1]);
        // 101 ns at 2 GHz is 202 cycles.
        assert_eq!(l[2].cycles, Some(101.0 * 2000.0 / 1000.0));
    }

    #[test]
    fn a_lone_last_point_that_creeps_up_joins_the_plateau_before_it() {
        // PoCL on the Intel VM (suite run 56): 16 MiB..512 MiB at 133..198 ns, 1 GiB at 277.
        let s = sweep(&[
            (4, 2.0),
            (8, 2.0),
            (64, 5.7),
            (128, 5.7),
            (4096, 34.0),
            (8192, 36.0),
            (16384, 133.0),
            (65536, 145.0),
            (262144, 158.0),
            (524288, 198.0),
            (1048576, 277.0),
        ]);
        let l = levels(&s, None);
        let names: Vec<&str> = l.iter().map(|l| l.level.as_str()).collect();
        assert_eq!(names, ["L1", "L2", "L3", "memory"]);
        assert_eq!(l[3].working_set_bytes, [16 << 20, 1 << 30]);
        assert_eq!(l[3].latency_ns, 158.0);
        assert_eq!(l[3].ci95_ns[1], 277.0 * 1.1);
        // Twice the plateau's last point or more is a level of its own.
        let mut jump = s.clone();
        jump[10].latency_ns = 2.0 * 198.0;
        let names: Vec<String> = levels(&jump, None).into_iter().map(|l| l.level).collect();
        assert_eq!(names, ["L1", "L2", "L3", "L4", "memory"]);
    }

    #[test]
    fn a_lone_last_point_is_still_memory() {
        let l = levels(&sweep(&[(4, 1.0), (8, 1.0), (16, 50.0)]), None);
        let names: Vec<&str> = l.iter().map(|l| l.level.as_str()).collect();
        assert_eq!(names, ["L1", "memory"]);
        assert_eq!(l[1].cycles, None);
        assert!(levels(&[], None).is_empty());
    }

    #[test]
    fn sweep_sizes_double_from_4_kib() {
        assert_eq!(sweep_sizes(20 << 10), [4 << 10, 8 << 10, 16 << 10]);
        assert!(sweep_sizes(1 << 10).is_empty());
    }

    #[test]
    fn a_short_chase_is_lengthened_by_powers_of_two_to_half_a_millisecond() {
        // 52 µs (L1 on the Intel Xeon VM's PoCL): ×16 to 0.83 ms.
        assert_eq!(scaled_steps(52e-6), 16 * chase_steps());
        // 0.19 ms (its L2): ×4.
        assert_eq!(scaled_steps(190e-6), 4 * chase_steps());
        // Past the caches a chase already runs milliseconds: as it was.
        assert_eq!(scaled_steps(10e-3), chase_steps());
        assert_eq!(scaled_steps(MIN_CHASE_SECONDS), chase_steps());
        // A timer that read almost nothing: capped; no factor from a time that is not one.
        assert_eq!(scaled_steps(1e-12), MAX_CHASE_STEPS);
        assert_eq!(scaled_steps(1e-18), MAX_CHASE_STEPS);
        assert_eq!(scaled_steps(0.0), chase_steps());
        assert_eq!(scaled_steps(f64::NAN), chase_steps());
    }

    #[test]
    fn memory_is_read_at_twice_the_l2() {
        let sizes = sweep_sizes(64 << 20);
        assert_eq!(memory_working_set(&sizes, Some(4 << 20)), Some(8 << 20));
        assert_eq!(memory_working_set(&sizes, Some(1 << 30)), Some(64 << 20));
        assert_eq!(memory_working_set(&sizes, None), Some(64 << 20));
        assert_eq!(memory_working_set(&[], None), None);
    }

    #[test]
    fn the_ring_visits_every_node_once() {
        let next = ring(64, 7);
        let mut seen = [false; 64];
        let mut node = 0usize;
        for _ in 0..64 {
            assert!(!seen[node], "node {node} visited twice");
            seen[node] = true;
            node = next[node * NODE_WORDS] as usize / NODE_WORDS;
        }
        assert_eq!(node, 0, "the ring closes");
        assert_eq!(chase_end(&next, 64), 0);
    }

    #[test]
    fn the_order_is_the_walk_from_node_zero() {
        for (nodes, seed) in [(2, 1), (64, 7), (1000, 3)] {
            let (succ, order) = ring_and_order(nodes, seed);
            let next = ring(nodes, seed);
            assert_eq!(expand(&succ), next);
            let mut j = 0u32;
            for (k, &at) in order.iter().enumerate() {
                assert_eq!(at, j, "step {k} of {nodes}");
                assert_eq!(end_of_walk(&succ, 0, k as u32), j);
                j = next[j as usize];
            }
            assert_eq!(j, 0);
        }
    }

    #[test]
    fn the_store_chase_check_finds_a_word_the_chase_did_not_store() {
        use crate::backend::host::HostDevice;
        use crate::bench::SamplingPlan;
        let device = HostDevice::new();
        let mut ctx = BenchContext::new(&device, SamplingPlan::quick(), true).expect("a context");
        // A ring of 64 nodes (8 KiB) and one of 2, which a chase of many steps goes round
        // again and again: the last step's number stands on each of its two nodes.
        for bytes in [8 << 10, 2 * NODE_BYTES] {
            let r = upload_ring(&mut ctx, bytes, Chase::Indices).expect("a ring");
            let sink = upload_u32(&device, &expand(&r.succ)).expect("a sink");
            verify_chase_store(&ctx, &r, &sink, 1000).expect("the chase stores where it steps");
            // A word no step stands on, changed before the chase: the check sees it.
            let mut wrong = expand(&r.succ);
            wrong[1] = 7;
            let sink = upload_u32(&device, &wrong).expect("a sink");
            let err = verify_chase_store(&ctx, &r, &sink, 1000).expect_err("a stray word");
            assert!(err.to_string().contains("word 1 at 7"), "{err}");
        }
        // A ring of two check chunks and more (read back a chunk at a time): a stray word in
        // the second chunk, past every store of a short chase, is found where it lies.
        let r = upload_ring(&mut ctx, 4 * CHECK_CHUNK + 4 * NODE_BYTES, Chase::Indices)
            .expect("a ring");
        let stray = CHECK_CHUNK + NODE_WORDS + 1;
        let mut wrong = expand(&r.succ);
        wrong[stray] = 7;
        let sink = upload_u32(&device, &wrong).expect("a sink");
        let err = verify_chase_store(&ctx, &r, &sink, 100).expect_err("a stray word");
        assert!(
            err.to_string().contains(&format!("word {stray} at 7")),
            "{err}"
        );
    }

    #[test]
    fn the_write_latency_on_the_read_sweeps_ring_is_that_of_a_ring_built_for_it() {
        use crate::backend::host::HostDevice;
        use crate::bench::SamplingPlan;
        let device = HostDevice::new();
        let mut ctx = BenchContext::new(&device, SamplingPlan::quick(), true).expect("a context");
        let (point, ring) = read_latency_keeping_ring(&mut ctx, 64 << 10).expect("measured");
        assert_eq!(point.working_set_bytes, 64 << 10);
        let kept = write_latency_on(&mut ctx, &ring).expect("measured");
        assert!(kept.summary.median > 0.0);
        assert!(ctx
            .samples
            .contains_key(&format!("write_latency_s/{}", 64 << 10)));
    }
}
