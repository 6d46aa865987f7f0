//! Page walks: what a step of a walk costs as the pages it spans outgrow the TLB's reach.
//!
//! A kernel whose work items each walk a column of a column-major matrix (a GEMM's inner
//! product, a mat-vec along columns) reads one element a step, the matrix's leading dimension
//! apart. Sixteen neighbouring work items read one line together, and the line comes from a
//! cache; but once a column outgrows a page each step lands on another page, and once the
//! pages the walks span outgrow the TLB's reach every step waits on a page walk (a two-level
//! one in a VM). No streaming, strided or gathering sweep sees it: their working sets decide
//! their rates, and a walk's lines may fit the L2 while its pages do not. On the Intel Xeon
//! VM's PoCL a GEMM of 700 × 700 over K steps cost 0.49 ns a work item's step at K = 1400
//! (two walks over 1,914 pages) and 5.5 ns at K = 2900 (3,965 pages), its lines in L2 at both.
//!
//! For each span the sweep launches `16 · 2 · compute units` work items in groups of 16, each
//! summing `steps` elements [`STRIDE`] floats apart (a page and a line: every step another
//! page, and the lines spread over the cache's sets), all reading the same lines, `reps`
//! times over so that a launch runs about [`STEPS_PER_LAUNCH`] work-item steps whatever the
//! span. A point is the median time of one launch over those steps: seconds per work item's
//! step. A spec that declares a launch's `walks` gets each step's cost along the target's
//! walks over that along its small sizes' added (docs/models.md §2.4, "Walks"). Each span's
//! sums are checked against the host after its measurement.
//!
//! A second, coarser curve walks exactly a page a step ([`PAGE_FLOATS`]): every step then
//! falls in the same sets of a cache indexed below a page (a CPU's L1 has 64 sets of 64 B),
//! and in a few of a larger cache's, so a walk's lines no longer stay in it. A walk whose
//! stride is a whole number of pages (a power-of-two leading dimension) pays that instead:
//! on the Intel Xeon VM's PoCL a GEMM of 1024 × 1024 over 512 steps (a page a step, 1,024
//! pages) cost 1.40 ns a work item's step, one of 1100 × 1100 0.45 ns.

use serde::{Deserialize, Serialize};

use super::{verify, BenchContext, BenchError};
use crate::backend::{upload_f32, Arg, HostArgs, Launch};

/// Floats from one step to the next: a 4 KiB page and a 64-byte line, so that every step
/// lands on another page and on the next set of the caches.
pub const STRIDE: usize = 1024 + 16;

/// Bytes from one step to the next.
pub const STRIDE_BYTES: usize = 4 * STRIDE;

/// Floats from one step to the next along the aliased curve: exactly a 4 KiB page, so that
/// every step lands in the same sets of a cache indexed below a page.
pub const PAGE_FLOATS: usize = 1024;

/// The aliased curve's steps: 64 to 32,768 by factors of 2 (every other span of
/// [`steps_swept`]), spans of 256 KiB to 128 MiB.
pub fn aliased_steps_swept() -> Vec<usize> {
    (6..=15).map(|j| 1usize << j).collect()
}

/// The walks' steps (pages spanned): 64 to 32,768 by factors of √2, spans of 266 KB to
/// 136 MB, past a CPU's TLB reach (1,536–3,072 entries of 4 KiB pages) by ten times.
pub fn steps_swept() -> Vec<usize> {
    (0..=18)
        .map(|j| (64.0 * 2f64.powf(j as f64 / 2.0)).round() as usize)
        .collect()
}

/// Work-item steps one launch runs (2 Mi): a few milliseconds past the TLB's reach on a
/// 2-core CPU, where a step costs a few nanoseconds, and a hundred times a launch's fixed
/// cost within it.
pub const STEPS_PER_LAUNCH: usize = 1 << 21;

/// One span of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageWalkPoint {
    /// Steps of each work item's walk, one page each.
    pub steps: usize,
    /// Bytes the walk spans, `steps` × [`STRIDE_BYTES`].
    pub span_bytes: usize,
    /// Median seconds per work item's step, nanoseconds.
    pub ns_per_step: f64,
    /// Its 95 % CI.
    pub ci95_ns: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageWalkSweep {
    /// Work items a launch ran.
    pub items: usize,
    /// Ascending spans, a page and a line a step ([`STRIDE`]).
    pub points: Vec<PageWalkPoint>,
    /// Ascending spans, exactly a page a step ([`PAGE_FLOATS`]): walks whose steps share a
    /// cache's sets. Absent in files written before 2026-12-01 (afternoon).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliased: Vec<PageWalkPoint>,
}

/// Element i of the walked array: small integers, so that every sum is exact in f32.
fn value(i: usize) -> f32 {
    (i % 5) as f32
}

/// How many times a launch of `items` work items walks `steps` steps: about
/// [`STEPS_PER_LAUNCH`] work-item steps, at least one walk.
fn reps_for(items: usize, steps: usize) -> usize {
    (STEPS_PER_LAUNCH / (items * steps).max(1)).max(1)
}

/// What work item x's walk sums: its lane's column, `stride` floats a step, `reps` times.
fn expected(lane: usize, steps: usize, stride: usize, reps: usize) -> f32 {
    let column: usize = (0..steps).map(|k| (lane + k * stride) % 5).sum();
    (column * reps) as f32
}

/// Floats a walk of `steps` steps `stride` floats apart reads up to: its last step's line.
fn floats_for(steps: usize, stride: usize) -> usize {
    16 + steps.saturating_sub(1) * stride
}

/// One walk of the sweep: its steps and the floats between them.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Walk {
    steps: usize,
    stride: usize,
}

/// The walks of `steps` at `stride` whose array fits `max_floats`, ascending, each once.
fn walks_within(steps: &[usize], stride: usize, max_floats: usize) -> Vec<Walk> {
    let mut steps: Vec<usize> = steps
        .iter()
        .copied()
        .filter(|&s| s > 0 && floats_for(s, stride) <= max_floats)
        .collect();
    steps.sort_unstable();
    steps.dedup();
    steps
        .into_iter()
        .map(|steps| Walk { steps, stride })
        .collect()
}

/// Measure the page walk at each of `steps` (a page and a line a step) and of
/// `aliased_steps` (a page a step) whose array fits the device's largest allocation, all in
/// the same rounds over one array, verify each, and return each curve in ascending order.
pub fn measure_page_walks(
    ctx: &mut BenchContext<'_>,
    steps: &[usize],
    aliased_steps: &[usize],
) -> Result<PageWalkSweep, BenchError> {
    let max_floats = (ctx.device.info().max_alloc_bytes / 4) as usize;
    let plain = walks_within(steps, STRIDE, max_floats);
    let aliased = walks_within(aliased_steps, PAGE_FLOATS, max_floats);
    let walks: Vec<Walk> = plain.iter().chain(&aliased).copied().collect();
    let Some(length) = walks.iter().map(|w| floats_for(w.steps, w.stride)).max() else {
        return Ok(PageWalkSweep {
            items: 0,
            points: Vec::new(),
            aliased: Vec::new(),
        });
    };
    let items = 16 * 2 * ctx.device.info().compute_units.max(1) as usize;
    let a = upload_f32(ctx.device, &(0..length).map(value).collect::<Vec<f32>>())?;
    let out = ctx.device.alloc(items * 4)?;
    let launch = |ctx: &BenchContext<'_>, w: Walk| {
        let args = [
            Arg::Buf(&a),
            Arg::Buf(&out),
            Arg::U32(w.steps as u32),
            Arg::U32(w.stride as u32),
            Arg::U32(reps_for(items, w.steps) as u32),
        ];
        ctx.launch("page_walk", &Launch::linear(items, 16), &args)
    };
    let name = |w: &Walk| match w.stride {
        STRIDE => format!("page_walk_s/{}", w.steps),
        _ => format!("page_walk_aliased_s/{}", w.steps),
    };
    let names: Vec<String> = walks.iter().map(name).collect();
    let measured = ctx.measure_in_rounds(&names, |k| Ok(launch(ctx, walks[k])?.0))?;
    let mut host = vec![0f32; items];
    let mut points = Vec::with_capacity(walks.len());
    for ((name, m), &w) in names.iter().zip(&measured).zip(&walks) {
        ctx.record(name, m);
        let reps = reps_for(items, w.steps);
        launch(ctx, w)?;
        ctx.device
            .download(&out, bytemuck::cast_slice_mut(&mut host))?;
        let bad = (0..items).find(|&x| host[x] != expected(x & 15, w.steps, w.stride, reps));
        verify(bad.is_none(), &format!("page_walk at {name}"), || {
            format!("work item {bad:?}'s sum is not its column's, {reps} times")
        })?;
        let per_step = |seconds: f64| seconds * 1e9 / (items * w.steps * reps) as f64;
        points.push(PageWalkPoint {
            steps: w.steps,
            span_bytes: w.steps * 4 * w.stride,
            ns_per_step: per_step(m.summary.median),
            ci95_ns: m.summary.ci95.map(per_step),
            outliers: m.summary.outliers,
        });
    }
    let aliased = points.split_off(plain.len());
    Ok(PageWalkSweep {
        items,
        points,
        aliased,
    })
}

/// The page walk: each executor's sum of `steps` elements `stride` apart from its place in
/// the first line, `reps` times over, in the kernel's order.
pub(super) fn host_page_walk(a: &HostArgs<'_>, launch: &Launch) -> Result<(), String> {
    let (steps, stride, reps) = (a.u32(2)? as usize, a.u32(3)? as usize, a.u32(4)?);
    let items = launch.global[0];
    let src = a.first::<f32>(0, 16 + steps.saturating_sub(1) * stride)?;
    let out = a.first_mut::<f32>(1, items)?;
    for (x, o) in out.iter_mut().enumerate() {
        let lane = x & 15;
        let mut s = 0f32;
        for _ in 0..reps {
            for k in 0..steps {
                s += src[lane + k * stride];
            }
        }
        *o = s;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swept_steps_run_from_64_to_32768_by_root_two() {
        let s = steps_swept();
        assert_eq!((s[0], s[1], s[2]), (64, 91, 128));
        assert_eq!(*s.last().unwrap(), 32_768);
        assert!(s.windows(2).all(|w| w[1] > w[0]));
        assert_eq!(STRIDE_BYTES % 4096, 64, "a page and a line");
    }

    #[test]
    fn the_longest_walk_fits_a_few_hundred_megabytes() {
        assert_eq!(floats_for(1, STRIDE), 16);
        assert_eq!(floats_for(3, STRIDE), 16 + 2 * STRIDE);
        let longest = *steps_swept().last().unwrap();
        let floats = floats_for(longest, STRIDE);
        assert!(4 * floats < 140 << 20, "{floats}");
        // The aliased curve's longest walk fits the same array.
        let aliased = *aliased_steps_swept().last().unwrap();
        assert_eq!(aliased, longest);
        assert!(floats_for(aliased, PAGE_FLOATS) < floats);
        assert_eq!(4 * PAGE_FLOATS, 4096, "exactly a page");
    }

    #[test]
    fn a_launch_runs_about_the_same_steps_at_every_span() {
        for s in steps_swept() {
            let total = 64 * s * reps_for(64, s);
            assert!(
                total <= STEPS_PER_LAUNCH && 2 * total > STEPS_PER_LAUNCH,
                "{s}"
            );
        }
        assert_eq!(reps_for(1 << 20, 1 << 20), 1, "at least one walk");
    }

    #[test]
    fn the_host_sweep_walks_checks_each_span_and_counts_per_work_item_step() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        let sweep = measure_page_walks(&mut ctx, &[256, 64], &[128]).expect("measured, verified");
        assert_eq!(sweep.points.len(), 2);
        assert_eq!(sweep.points[0].steps, 64);
        assert_eq!(sweep.points[1].span_bytes, 256 * STRIDE_BYTES);
        assert_eq!(sweep.aliased.len(), 1);
        assert_eq!(sweep.aliased[0].span_bytes, 128 * 4096);
        assert!(ctx.samples.contains_key("page_walk_aliased_s/128"));
        for p in &sweep.points {
            assert!(p.ns_per_step > 0.0 && p.ns_per_step.is_finite(), "{p:?}");
            assert!(
                p.ci95_ns[0] <= p.ns_per_step && p.ns_per_step <= p.ci95_ns[1],
                "{p:?}"
            );
            assert!(ctx
                .samples
                .contains_key(&format!("page_walk_s/{}", p.steps)));
        }
    }

    #[test]
    fn a_walk_that_read_the_wrong_line_fails_its_check() {
        // Lane 3's column over 7 steps, twice: the values at 3 + k·STRIDE, never the lane's
        // neighbours'.
        let want = expected(3, 7, STRIDE, 2);
        let right: usize = (0..7).map(|k| (3 + k * STRIDE) % 5).sum();
        let wrong: usize = (0..7).map(|k| (4 + k * STRIDE) % 5).sum();
        assert_eq!(want, (2 * right) as f32);
        assert_ne!(want, (2 * wrong) as f32);
    }
}
