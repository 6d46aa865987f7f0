//! The microbenchmark program (`kernels/microbench.kern`) and the native twins of its kernels.

use crate::backend::host_planes::relax_plane_args;
use crate::backend::host_pool::{
    for_each_mut, for_each_mut_of, map_ranges, map_ranges_of, LINE_F32,
};
use crate::backend::host_stream::{add_into, lane_dot, lane_sum, triad_into, STREAM_CHUNK};
use crate::backend::{HostArgs, HostKernel, Launch, ProgramSource};

/// Stride of the strided pattern, in 4-byte elements (one 128-byte line per executor).
pub const STRIDE_ELEMENTS: u32 = 32;
/// Odd multiplier of the random pattern; a bijection modulo any power of two.
pub const RANDOM_MULTIPLIER: u32 = 2_654_435_761;

/// Access patterns of the Δt/ΔT kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    /// Executor i touches element i.
    Coalesced,
    /// Executor i touches element 32·i (its own 128-byte line).
    Strided,
    /// Executor i touches element (i·2654435761) mod 2^k: a scattered bijection.
    Random,
}

impl Pattern {
    /// Every pattern, in report order.
    pub const ALL: [Pattern; 3] = [Pattern::Coalesced, Pattern::Strided, Pattern::Random];

    /// The kernel's `pattern` argument.
    pub fn code(self) -> u32 {
        match self {
            Pattern::Coalesced => 0,
            Pattern::Strided => 1,
            Pattern::Random => 2,
        }
    }

    /// Elements a buffer needs for `n` executors, and the mask passed to the kernel.
    pub fn extent(self, n: u32) -> (usize, u32) {
        match self {
            Pattern::Coalesced => (n as usize, 0),
            Pattern::Strided => (n as usize * STRIDE_ELEMENTS as usize, 0),
            Pattern::Random => {
                let size = n.next_power_of_two();
                (size as usize, size - 1)
            }
        }
    }

    /// The element executor `i` touches (the kernel's `TOUCH_INDEX`).
    pub fn index(self, i: u32, mask: u32) -> u32 {
        match self {
            Pattern::Coalesced => i,
            Pattern::Strided => i.wrapping_mul(STRIDE_ELEMENTS),
            Pattern::Random => i.wrapping_mul(RANDOM_MULTIPLIER) & mask,
        }
    }
}

/// Multiplicative inverse of an odd number modulo 2^32 (Newton's iteration).
fn inverse_mod_2_32(a: u32) -> u32 {
    let mut x = a;
    for _ in 0..5 {
        x = x.wrapping_mul(2u32.wrapping_sub(a.wrapping_mul(x)));
    }
    x
}

/// The microbenchmark program with its host twins.
pub fn program() -> ProgramSource {
    ProgramSource::embedded(
        "microbench.kern",
        include_str!("../../../kernels/microbench.kern"),
        HOST_TWINS,
    )
}

/// BabelStream's kernels on doubles (`kernels/babelstream_fp64.kern`) with their host twins:
/// a program of its own, so that a device without double precision loses these alone.
pub fn fp64_program() -> ProgramSource {
    ProgramSource::embedded(
        "babelstream_fp64.kern",
        include_str!("../../../kernels/babelstream_fp64.kern"),
        FP64_TWINS,
    )
}

const FP64_TWINS: &[(&str, HostKernel)] = &[
    ("bs64_copy", host_bs64_copy),
    ("bs64_mul", host_bs64_mul),
    ("bs64_add", host_bs64_add),
    ("bs64_triad", host_bs64_triad),
    ("bs64_dot", host_bs64_dot),
];

/// Doubles per 64-byte cache line: the blocks the host pool hands out for them.
const LINE_F64: usize = 8;

const HOST_TWINS: &[(&str, HostKernel)] = &[
    ("empty", host_empty),
    ("chase", host_chase),
    ("chase_store", host_chase_store),
    ("chase_links", host_chase_links),
    ("ring_expand", host_ring_expand),
    ("chase_ptr", host_chase_ptr),
    ("read_one", host_read_one),
    ("write_one", host_write_one),
    ("add_chain", host_add_chain),
    ("fma_chain", host_fma_chain),
    ("fma_throughput", host_fma_throughput),
    ("bw_read", host_bw_read),
    ("bw_write", host_bw_write),
    ("bw_copy", host_bw_copy),
    ("bw_triad", host_bw_triad),
    ("bw_transpose", host_bw_transpose),
    ("bw_gather", host_bw_gather),
    ("bw_gather_index", host_bw_gather_index),
    ("page_walk", super::pages::host_page_walk),
    ("bw_stencil", host_bw_stencil),
    ("bw_plane", host_bw_plane),
    ("bs_copy", host_bs_copy),
    ("bs_mul", host_bs_mul),
    ("bs_add", host_bs_add),
    ("bs_triad", host_bs_triad),
    ("bs_dot", host_bs_dot),
];

fn host_empty(_: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    Ok(())
}

fn follow(next: &[u32], j: u32) -> Result<u32, String> {
    next.get(j as usize)
        .copied()
        .ok_or_else(|| format!("ring link {j} points outside the buffer"))
}

fn host_chase(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let next = a.slice::<u32>(0)?;
    let steps = a.u32(1)?;
    let out = a.slice_mut::<u32>(2)?;
    let mut j = a.u32(3)?;
    for _ in 0..steps {
        j = follow(next, j)?;
    }
    out[0] = j;
    Ok(())
}

/// The ring's words from its links: a node's first word its successor, every other 0.
fn host_ring_expand(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let succ = a.slice::<u32>(0)?;
    let words = a.u32(2)? as usize;
    let node_words = (a.u32(3)? as usize).max(1);
    let next = a.first_mut::<u32>(1, words)?;
    for (node, words) in next.chunks_mut(node_words).enumerate() {
        words.fill(0);
        words[0] = *succ
            .get(node)
            .ok_or_else(|| format!("node {node} has no link"))?;
    }
    Ok(())
}

/// The host's links are the addresses of the successors' first words, as on a device.
fn host_chase_links(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let next = a.slice::<u32>(0)?;
    let links = a.slice_mut::<u64>(1)?;
    let (nodes, node_words) = (a.u32(2)? as usize, a.u32(3)? as usize);
    let base = links.as_ptr() as u64;
    for k in 0..nodes {
        let j = k * node_words;
        let to = *next
            .get(j)
            .ok_or_else(|| format!("node {k} lies outside the ring"))?;
        *links
            .get_mut(j / 2)
            .ok_or_else(|| format!("node {k} lies outside the links"))? =
            base + 8 * u64::from(to / 2);
    }
    Ok(())
}

/// The address chase on the host: each link is turned back into an index, checked against
/// the buffer, before it is followed (so a wrong link is an error, not a stray read). The
/// calibration chases indices on CPU devices; this twin keeps the kernel testable there.
fn host_chase_ptr(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let links = a.slice::<u64>(0)?;
    let steps = a.u32(1)?;
    let out = a.slice_mut::<u32>(2)?;
    let base = links.as_ptr() as u64;
    let mut at = (a.u32(3)? / 2) as usize;
    for _ in 0..steps {
        let to = *links
            .get(at)
            .ok_or_else(|| format!("link {at} lies outside the buffer"))?;
        at = (to.wrapping_sub(base) / 8) as usize;
    }
    out[0] = u32::try_from(2 * at).map_err(|_| format!("link {at} lies outside the ring"))?;
    Ok(())
}

fn host_chase_store(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let next = a.slice::<u32>(0)?;
    let steps = a.u32(1)?;
    let sink = a.slice_mut::<u32>(2)?;
    let out = a.slice_mut::<u32>(3)?;
    let mut j = a.u32(4)?;
    for s in 0..steps {
        *sink
            .get_mut(j as usize)
            .ok_or_else(|| format!("store index {j} outside the buffer"))? = s;
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        j = follow(next, j)?;
    }
    out[0] = j;
    Ok(())
}

fn pattern_of(code: u32) -> Result<Pattern, String> {
    Pattern::ALL
        .into_iter()
        .find(|p| p.code() == code)
        .ok_or_else(|| format!("unknown pattern code {code}"))
}

fn host_read_one(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let data = a.slice::<u32>(0)?;
    let n = a.u32(1)?;
    let pattern = pattern_of(a.u32(2)?)?;
    let mask = a.u32(3)?;
    let errors = a.slice_mut::<u32>(4)?;
    let wrong: usize = map_ranges(n as usize, LINE_F32, |r| {
        r.filter(|&i| {
            let k = pattern.index(i as u32, mask);
            data.get(k as usize) != Some(&k)
        })
        .count()
    })
    .into_iter()
    .sum();
    errors[0] += wrong as u32;
    Ok(())
}

fn host_write_one(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let data = a.slice_mut::<u32>(0)?;
    let n = a.u32(1)?;
    let pattern = pattern_of(a.u32(2)?)?;
    let mask = a.u32(3)?;
    let (needed, _) = pattern.extent(n);
    if data.len() < needed {
        return Err(format!(
            "buffer of {} elements, {needed} needed",
            data.len()
        ));
    }
    match pattern {
        Pattern::Coalesced => for_each_mut(&mut data[..n as usize], LINE_F32, |at, part| {
            part.iter_mut()
                .enumerate()
                .for_each(|(k, v)| *v = (at + k) as u32)
        }),
        Pattern::Strided => {
            let stride = STRIDE_ELEMENTS as usize;
            let lines = (n as usize * stride).min(data.len());
            for_each_mut(&mut data[..lines], stride, |at, part| {
                part.chunks_mut(stride)
                    .enumerate()
                    .for_each(|(i, line)| line[0] = ((at / stride + i) * stride) as u32)
            })
        }
        Pattern::Random => {
            // Walk the targets instead of the executors so the writes split safely.
            let inverse = inverse_mod_2_32(RANDOM_MULTIPLIER);
            for_each_mut(&mut data[..=mask as usize], LINE_F32, |at, part| {
                for (k, v) in part.iter_mut().enumerate() {
                    let k = (at + k) as u32;
                    if k.wrapping_mul(inverse) & mask < n {
                        *v = k;
                    }
                }
            });
        }
    }
    Ok(())
}

fn host_add_chain(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let data = a.slice_mut::<f32>(0)?;
    let iters = a.u32(1)?;
    let (mut x, y) = (data[0], data[1]);
    for _ in 0..iters * 8 {
        x += y;
    }
    data[2] = x;
    Ok(())
}

fn host_fma_chain(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let data = a.slice_mut::<f32>(0)?;
    let iters = a.u32(1)?;
    data[3] = fma_chain(data[0], data[1], data[2], iters * 8);
    Ok(())
}

/// `steps` dependent FMAs `x ← x·m + b` from `x`, with the CPU's FMA instruction where it
/// has one: the chain's time per step is τ, the instruction's latency. A plain `mul_add` in
/// a build for the baseline x86-64 is a call to the C library's `fmaf`, so τ was a call's
/// time (2.0 ns on an EPYC core, 2026-11-29), not the instruction's.
fn fma_chain(x: f32, m: f32, b: f32, steps: u32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the feature the function is compiled for (checked above).
        return unsafe { fma_chain_fma(x, m, b, steps) };
    }
    fma_chain_steps(x, m, b, steps)
}

/// [`fma_chain_steps`] compiled for FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
unsafe fn fma_chain_fma(x: f32, m: f32, b: f32, steps: u32) -> f32 {
    fma_chain_steps(x, m, b, steps)
}

/// The chain itself; an FMA rounds once, in the instruction as in the library.
#[inline(always)]
fn fma_chain_steps(mut x: f32, m: f32, b: f32, steps: u32) -> f32 {
    for _ in 0..steps {
        x = x.mul_add(m, b);
    }
    x
}

/// The value executor `i` of `fma_throughput` stores.
pub fn fma_throughput_value(i: u32, iters: u32, m: f32, b: f32) -> f32 {
    let x0 = (i & 1023) as f32;
    let mut x = [
        x0,
        x0 + 1.0,
        x0 + 2.0,
        x0 + 3.0,
        x0 + 4.0,
        x0 + 5.0,
        x0 + 6.0,
        x0 + 7.0,
    ];
    for _ in 0..iters {
        for v in &mut x {
            *v = v.mul_add(m, b);
        }
    }
    ((x[0] + x[1]) + (x[2] + x[3])) + ((x[4] + x[5]) + (x[6] + x[7]))
}

fn host_fma_throughput(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let out = a.slice_mut::<f32>(0)?;
    let n = a.u32(1)?;
    let iters = a.u32(2)?;
    let (m, b) = (a.f32(3)?, a.f32(4)?);
    for_each_mut(&mut out[..n as usize], LINE_F32, |at, part| {
        fma_executors(at, part, iters, m, b);
    });
    Ok(())
}

/// Executors `at..at + part.len()` of `fma_throughput`, their values into `part`: with the
/// CPU's FMA instructions where it has them. A plain `mul_add` in a build for the baseline
/// x86-64 is a call to the C library's `fmaf`, one at a time: the host then measured 0.53
/// G FMA/s on two EPYC cores (2026-11-29), a call's rate, not the cores', and every phase
/// that declared its flops looked compute-bound there.
fn fma_executors(at: usize, part: &mut [f32], iters: u32, m: f32, b: f32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU has the features the function is compiled for (checked above).
        unsafe { fma_executors_avx2(at, part, iters, m, b) };
        return;
    }
    fma_lanes(at, part, iters, m, b);
}

/// [`fma_lanes`] compiled for AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fma_executors_avx2(at: usize, part: &mut [f32], iters: u32, m: f32, b: f32) {
    fma_lanes(at, part, iters, m, b);
}

/// Eight executors' eight chains at a time, 64 independent lanes, so the FMA units have work
/// while each chain waits on its last result; the same values as [`fma_throughput_value`]
/// (an FMA rounds once, in the instruction as in the library).
#[inline(always)]
fn fma_lanes(at: usize, part: &mut [f32], iters: u32, m: f32, b: f32) {
    const EXECUTORS: usize = 8;
    for (c, chunk) in part.chunks_mut(EXECUTORS).enumerate() {
        let mut x = [[0.0f32; 8]; EXECUTORS];
        for (e, row) in x.iter_mut().enumerate() {
            let x0 = ((at + c * EXECUTORS + e) as u32 & 1023) as f32;
            for (k, v) in row.iter_mut().enumerate() {
                *v = x0 + k as f32;
            }
        }
        for _ in 0..iters {
            for row in x.iter_mut() {
                for v in row.iter_mut() {
                    *v = v.mul_add(m, b);
                }
            }
        }
        for (out, r) in chunk.iter_mut().zip(&x) {
            *out = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        }
    }
}

/// Per-executor partial sums: the host splits the array into contiguous chunks instead of
/// the device's strided walk, so the partials differ but their total is the same.
fn write_partials<T: Copy + Default + std::ops::AddAssign>(partial: &mut [T], sums: Vec<T>) {
    partial.iter_mut().for_each(|p| *p = T::default());
    let slots = partial.len().max(1);
    for (k, s) in sums.into_iter().enumerate() {
        if let Some(p) = partial.get_mut(k % slots) {
            *p += s;
        }
    }
}

// The host's streaming kernels run their passes inside each worker's part, as a device's
// executor runs its passes over its own block: with more than one pass a launch then walks
// each core's share of the arrays from that core's caches (`bench::cache_passes`). The
// parties are chosen by the work, passes times the elements, so that a few KiB walked many
// times are split over every core.

/// The elements a launch of `passes` passes over n elements walks.
fn work(n: usize, passes: u32) -> usize {
    n.saturating_mul(passes as usize)
}

fn host_bw_read(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(1)? as usize;
    let data = a.first::<f32>(0, n)?;
    let passes = a.u32(2)?;
    // Sums of at most STREAM_CHUNK elements each (exact for the sweep's values), the same
    // partition at every pass.
    let sums: Vec<f32> = map_ranges_of(n, LINE_F32, work(n, passes), |r| {
        let mut sums = vec![0.0f32; r.len().div_ceil(STREAM_CHUNK)];
        for _ in 0..passes {
            // Opaque each pass, so the compiler cannot sum the unchanged data once.
            let part = std::hint::black_box(&data[r.clone()]);
            for (s, c) in sums.iter_mut().zip(part.chunks(STREAM_CHUNK)) {
                *s += lane_sum(c);
            }
        }
        sums
    })
    .concat();
    write_partials(a.slice_mut::<f32>(4)?, sums);
    Ok(())
}

fn host_bw_write(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(1)? as usize;
    let data = a.first_mut::<f32>(0, n)?;
    let passes = a.u32(2)?;
    for_each_mut_of(data, LINE_F32, work(n, passes), |_, c| {
        for p in 0..passes {
            c.iter_mut().for_each(|v| *v = p as f32);
            std::hint::black_box(&mut *c);
        }
    });
    Ok(())
}

fn host_bw_copy(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(2)? as usize;
    let src = a.first::<f32>(0, n)?;
    let dst = a.first_mut::<f32>(1, n)?;
    let passes = a.u32(3)?;
    for_each_mut_of(dst, LINE_F32, work(n, passes), |at, d| {
        let s = &src[at..at + d.len()];
        for p in 0..passes {
            d.iter_mut().zip(s).for_each(|(d, s)| *d = s + p as f32);
            std::hint::black_box(&mut *d);
        }
    });
    Ok(())
}

fn host_bw_triad(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(4)? as usize;
    let (s, passes) = (a.f32(3)?, a.u32(5)?);
    let out = a.first_mut::<f32>(0, n)?;
    let (b, c) = (a.first::<f32>(1, n)?, a.first::<f32>(2, n)?);
    for_each_mut_of(out, LINE_F32, work(n, passes), |at, o| {
        let (b, c) = (&b[at..at + o.len()], &c[at..at + o.len()]);
        for p in 0..passes {
            let q = s + p as f32;
            o.iter_mut()
                .zip(b)
                .zip(c)
                .for_each(|((o, &b), &c)| *o = b + q * c);
            std::hint::black_box(&mut *o);
        }
    });
    Ok(())
}

/// The transposing copy on the launching thread alone, as the workloads' transposes run on
/// the host (their twins are one loop): the calibration measures the rate such a loop meets.
fn host_bw_transpose(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(2)? as usize;
    let p = a.f32(3)?;
    let cube = n * n * n;
    let src = a.first::<f32>(0, cube)?;
    let dst = a.first_mut::<f32>(1, cube)?;
    for i in 0..n {
        for j in 0..n {
            let row = &src[(i * n + j) * n..(i * n + j + 1) * n];
            for (k, v) in row.iter().enumerate() {
                dst[(i * n + k) * n + j] = v + p;
            }
        }
    }
    Ok(())
}

/// The gathering copy on the launching thread alone, as SOR's copy back from its skewed
/// layout runs on the host: rows written in order, each element read a row apart.
fn host_bw_gather(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(2)? as usize;
    let p = a.f32(3)?;
    let src = a.first::<f32>(0, n * n)?;
    let dst = a.first_mut::<f32>(1, n * n)?;
    for (i, row) in dst.chunks_exact_mut(n).enumerate() {
        for (j, d) in row.iter_mut().enumerate() {
            *d = src[j * n + i] + p;
        }
    }
    Ok(())
}

/// The gathering read at random indices on the launching thread alone, as the transposing
/// sweeps' twins run: written in order, each element read where its index (shifted, modulo
/// n) says.
fn host_bw_gather_index(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (m, n) = (a.u32(3)? as usize, a.u32(4)? as usize);
    let shift = a.u32(5)? as usize;
    let p = a.f32(6)?;
    let src = a.first::<f32>(0, n)?;
    let idx = a.first::<u32>(1, m)?;
    let dst = a.first_mut::<f32>(2, m)?;
    for (d, &i) in dst.iter_mut().zip(idx) {
        let j = i as usize + shift;
        let j = if j >= n { j - n } else { j };
        *d = src.get(j).ok_or("an index past the array")? + p;
    }
    Ok(())
}

/// One point of the row stencil, in the kernel's operation order: SOR's update of `c` from
/// its four neighbours with relaxation factor `w`.
pub fn stencil_point(c: f32, up: f32, down: f32, left: f32, right: f32, w: f32) -> f32 {
    w * 0.25 * (((up + down) + left) + right) + (1.0 - w) * c
}

/// The row stencil on the launching thread alone, as the workloads' SOR sweeps run on the
/// host (their twins are one loop): row by row, every other point, in place.
fn host_bw_stencil(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(1)? as usize;
    let (parity, w) = (a.u32(2)? as usize, a.f32(3)?);
    let grid = a.first_mut::<f32>(0, n * n)?;
    let mut change = 0u32;
    for i in 1..n.saturating_sub(1) {
        // The first j ≥ 1 with (i + j) % 2 == parity.
        let first = 1 + (i + 1 + parity) % 2;
        for j in (first..n - 1).step_by(2) {
            let p = i * n + j;
            let c = grid[p];
            let v = stencil_point(c, grid[p - n], grid[p + n], grid[p - 1], grid[p + 1], w);
            grid[p] = v;
            change = change.max((c - v).abs().to_bits());
        }
    }
    let out = &mut a.first_mut::<u32>(4, 1)?[0];
    *out = (*out).max(change);
    Ok(())
}

/// One hyperplane of a cube on the launching thread alone, as LU-SSOR's `ssor_plane` runs
/// on the host ([`relax_plane`]).
fn host_bw_plane(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    relax_plane_args(a)
}

/// BabelStream's kernels have no `n`: one element per executor of the launch.
fn babelstream_elements(launch: &Launch) -> usize {
    launch.padded_global()[0]
}

fn host_bs_copy(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let n = babelstream_elements(launch);
    let src = a.first::<f32>(0, n)?;
    for_each_mut(a.first_mut::<f32>(1, n)?, LINE_F32, |at, d| {
        copy_with_plain_stores(d, &src[at..at + d.len()])
    });
    Ok(())
}

/// `d = s` with ordinary stores, as BabelStream's `c[i] = a[i]` loop compiles. A plain copy
/// loop (or `copy_from_slice`) becomes `memcpy`, whose non-temporal stores skip the
/// read-for-ownership of the destination and move a tenth less traffic on large arrays: a
/// different kernel from the one BabelStream times. The volatile store keeps the loop a loop.
fn copy_with_plain_stores<T: Copy + Default>(d: &mut [T], s: &[T]) {
    const LANES: usize = 16;
    let mut d_blocks = d.chunks_exact_mut(LANES);
    let mut s_blocks = s.chunks_exact(LANES);
    for (d, s) in (&mut d_blocks).zip(&mut s_blocks) {
        let mut block = [T::default(); LANES];
        block.copy_from_slice(s);
        // SAFETY: `d` is a chunk of exactly LANES elements, so it is valid for one
        // [T; LANES] write; an array of T has the alignment of T.
        unsafe { std::ptr::write_volatile(d.as_mut_ptr().cast::<[T; LANES]>(), block) };
    }
    let (d, s) = (d_blocks.into_remainder(), s_blocks.remainder());
    d.copy_from_slice(&s[..d.len()]);
}

fn host_bs_mul(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let (s, n) = (a.f32(2)?, babelstream_elements(launch));
    let c = a.first::<f32>(1, n)?;
    for_each_mut(a.first_mut::<f32>(0, n)?, LINE_F32, |at, b| {
        let c = &c[at..at + b.len()];
        b.iter_mut().zip(c).for_each(|(b, c)| *b = s * c)
    });
    Ok(())
}

fn host_bs_add(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let n = babelstream_elements(launch);
    let (x, y) = (a.first::<f32>(0, n)?, a.first::<f32>(1, n)?);
    add_into(a.first_mut::<f32>(2, n)?, x, y);
    Ok(())
}

fn host_bs_triad(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let (s, n) = (a.f32(3)?, babelstream_elements(launch));
    let (b, c) = (a.first::<f32>(1, n)?, a.first::<f32>(2, n)?);
    triad_into(a.first_mut::<f32>(0, n)?, b, c, s);
    Ok(())
}

fn host_bs_dot(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(2)? as usize;
    let (x, y) = (a.first::<f32>(0, n)?, a.first::<f32>(1, n)?);
    let sums: Vec<f32> = map_ranges(n, LINE_F32, |r| {
        x[r.clone()]
            .chunks(STREAM_CHUNK)
            .zip(y[r].chunks(STREAM_CHUNK))
            .map(|(x, y)| lane_dot(x, y))
            .collect::<Vec<f32>>()
    })
    .concat();
    write_partials(a.slice_mut::<f32>(4)?, sums);
    Ok(())
}

fn host_bs64_copy(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let n = babelstream_elements(launch);
    let src = a.first::<f64>(0, n)?;
    for_each_mut(a.first_mut::<f64>(1, n)?, LINE_F64, |at, d| {
        copy_with_plain_stores(d, &src[at..at + d.len()])
    });
    Ok(())
}

fn host_bs64_mul(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let (s, n) = (a.f64(2)?, babelstream_elements(launch));
    let c = a.first::<f64>(1, n)?;
    for_each_mut(a.first_mut::<f64>(0, n)?, LINE_F64, |at, b| {
        let c = &c[at..at + b.len()];
        b.iter_mut().zip(c).for_each(|(b, c)| *b = s * c)
    });
    Ok(())
}

fn host_bs64_add(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let n = babelstream_elements(launch);
    let (x, y) = (a.first::<f64>(0, n)?, a.first::<f64>(1, n)?);
    add_into(a.first_mut::<f64>(2, n)?, x, y);
    Ok(())
}

fn host_bs64_triad(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let (s, n) = (a.f64(3)?, babelstream_elements(launch));
    let (b, c) = (a.first::<f64>(1, n)?, a.first::<f64>(2, n)?);
    triad_into(a.first_mut::<f64>(0, n)?, b, c, s);
    Ok(())
}

fn host_bs64_dot(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(2)? as usize;
    let (x, y) = (a.first::<f64>(0, n)?, a.first::<f64>(1, n)?);
    let sums: Vec<f64> = map_ranges(n, LINE_F64, |r| {
        x[r.clone()]
            .chunks(STREAM_CHUNK)
            .zip(y[r].chunks(STREAM_CHUNK))
            .map(|(x, y)| {
                // Eight sums in flight, as the device kernel keeps them.
                let mut lanes = [0.0f64; 8];
                let (xs, ys) = (x.chunks_exact(8), y.chunks_exact(8));
                let tail: f64 = xs
                    .remainder()
                    .iter()
                    .zip(ys.remainder())
                    .map(|(x, y)| x * y)
                    .sum();
                for (xc, yc) in xs.zip(ys) {
                    for j in 0..8 {
                        lanes[j] += xc[j] * yc[j];
                    }
                }
                lanes.iter().sum::<f64>() + tail
            })
            .collect::<Vec<f64>>()
    })
    .concat();
    write_partials(a.slice_mut::<f64>(4)?, sums);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_fma_lanes_give_each_executors_value() {
        // A part that starts mid-way and ends in a partial group of eight, past 1023.
        let (at, iters, m, b) = (1019usize, 37u32, 0.999f32, 0.25f32);
        let mut part = vec![0.0f32; 21];
        fma_executors(at, &mut part, iters, m, b);
        for (i, got) in part.iter().enumerate() {
            let want = fma_throughput_value((at + i) as u32, iters, m, b);
            assert_eq!(got.to_bits(), want.to_bits(), "executor {}", at + i);
        }
    }

    #[test]
    fn the_hosts_fma_chain_rounds_once_per_step_as_the_library_does() {
        let (x, m, b, steps) = (1.0f32, 0.999_9f32, 1e-3f32, 1000);
        let mut want = x;
        for _ in 0..steps {
            want = want.mul_add(m, b);
        }
        // m·x + b rounded twice differs from the fused result for these values.
        let mut twice = x;
        for _ in 0..steps {
            twice = twice * m + b;
        }
        assert_ne!(
            twice.to_bits(),
            want.to_bits(),
            "the values tell one rounding from two"
        );
        assert_eq!(fma_chain(x, m, b, steps).to_bits(), want.to_bits());
    }

    #[test]
    fn the_plain_store_copy_copies_every_element_and_the_tail() {
        for len in [0usize, 1, 15, 16, 17, 100] {
            let src: Vec<f32> = (0..len).map(|i| i as f32 + 0.5).collect();
            let mut dst = vec![-1.0f32; len];
            copy_with_plain_stores(&mut dst, &src);
            assert_eq!(dst, src, "length {len}");
        }
    }

    #[test]
    fn inverse_is_inverse() {
        assert_eq!(
            RANDOM_MULTIPLIER.wrapping_mul(inverse_mod_2_32(RANDOM_MULTIPLIER)),
            1
        );
    }

    #[test]
    fn random_pattern_is_a_bijection() {
        let (size, mask) = Pattern::Random.extent(1000);
        let mut seen = vec![false; size];
        for i in 0..1000 {
            let k = Pattern::Random.index(i, mask) as usize;
            assert!(!seen[k]);
            seen[k] = true;
        }
    }
}
