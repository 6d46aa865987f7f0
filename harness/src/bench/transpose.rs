//! Transposing bandwidth: the rate a transposing copy meets at each working set.
//!
//! The streaming sweep ([`super::bandwidth`]) reads and writes contiguously, and the strided
//! sweep of the serialization intervals ([`super::gaps`]) fetches one line per executor; a
//! transpose does neither. It reads along one axis and writes along the other, so one side
//! of its traffic misses a line at a time where no prefetcher follows it, and the step from
//! one memory level to the next costs it more than either sweep says: on an Intel Xeon VM a
//! one-thread j,k transpose cost 0.8 ns per element with its 8.7 MB in the last-level cache
//! and 3.6 ns with 560 MB in memory (4.4×), where one thread's streaming rate fell by 2.0×
//! and its line rate by 1.8× (suite run 51, docs/models.md §2.4). A prediction moves a
//! transposing phase between levels by these sweeps' rates.
//!
//! **Two shapes.** Which side misses matters: scattered writes drain through the store
//! buffer while the next reads go on, gathered reads stall the loop that waits for them. On
//! the same VM SOR's copy into its skewed layout (scattered writes) cost 4.3 ns per point at
//! N = 8260, its copy back (gathered reads) 7.1 ns. So the calibration sweeps both:
//!
//! - [`TransposeShape::CubeJk`], the workloads' j,k transposes (ADI's and the line solves'
//!   reordered layouts): for each working set W a cube of side n ≈ (W/8)^(1/3) is transposed
//!   by `b(i, k, j) = a(i, j, k) + p`, one executor per element (a 3-D launch, as the
//!   workloads' `swap_jk`): it reads along k and writes n elements apart.
//! - [`TransposeShape::SquareGather`], SOR's copy back from its skewed layout: a square of
//!   side n ≈ (W/8)^(1/2) is transposed by `b(i, j) = a(j, i) + p`, a 2-D launch in the
//!   tiles of the workloads' 2-D grids ([`Launch::tiles2`]: 16 × 4 on a CPU's OpenCL, whose
//!   four rows share each line a column's read fetches, as in SOR's copies; launched in
//!   rows of work-items instead, PoCL's sweep rated memory 5.5× slower than 64 MB where SOR's
//!   copy back slowed 1.5×, suite run 66): it writes along j and reads n elements apart, a
//!   row's length as SOR's diagonals are, so a page apart too once a row outgrows a page, as
//!   SOR's are at the sizes it is predicted at.
//!
//! Each side is made odd (a power-of-two side would put every line of a column in the same
//! cache sets, a conflict the workloads' odd-sized grids avoid). On the host the twins are one
//! loop on the launching thread, as the workloads' transposes are, so their rates are one
//! thread's. A sample is one launch over data the previous launch left warm; the working sets
//! are measured in rounds, as the streaming sweep's are. The rate counts 8 bytes per element
//! (its read and its write), as the workloads declare for their transposes. Each working
//! set's output is checked against the host after its measurement.

use serde::{Deserialize, Serialize};

use super::bandwidth::rate_of;
use super::{verify, BenchContext, BenchError};
use crate::backend::{download_f32, upload_f32, Arg, Launch};

/// Which transposing copy a sweep ran (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransposeShape {
    /// The j,k transpose of a cube, `b(i, k, j) = a(i, j, k) + p`: contiguous reads,
    /// writes n elements apart. The only shape of calibrations before 2026-11-27's second.
    #[default]
    CubeJk,
    /// The transpose of a square, `b(i, j) = a(j, i) + p`, reads gathered n elements
    /// apart, contiguous writes.
    SquareGather,
}

impl TransposeShape {
    /// The kernel that runs it.
    fn kernel(self) -> &'static str {
        match self {
            Self::CubeJk => "bw_transpose",
            Self::SquareGather => "bw_gather",
        }
    }

    /// The number of dimensions of its array (and of its launch).
    fn dims(self) -> usize {
        match self {
            Self::CubeJk => 3,
            Self::SquareGather => 2,
        }
    }

    /// Its elements at side n.
    pub fn elements(self, n: usize) -> usize {
        n.pow(self.dims() as u32)
    }

    /// The odd side whose two arrays come closest to `bytes`, at least 3.
    pub fn side_for(self, bytes: usize) -> usize {
        let n = (bytes as f64 / 8.0)
            .powf(1.0 / self.dims() as f64)
            .round()
            .max(3.0) as usize;
        n | 1
    }

    /// Where element `x` of the source lands in the output, at side n.
    fn destination(self, x: usize, n: usize) -> usize {
        match self {
            Self::CubeJk => {
                let (i, j, k) = (x / (n * n), x / n % n, x % n);
                (i * n + k) * n + j
            }
            Self::SquareGather => (x % n) * n + x / n,
        }
    }

    /// The prefix of its raw samples' names.
    fn samples(self) -> &'static str {
        match self {
            Self::CubeJk => "transpose_s",
            Self::SquareGather => "gather_s",
        }
    }

    /// A figure's label for its points.
    pub fn label(self) -> &'static str {
        match self {
            Self::CubeJk => "j,k transpose",
            Self::SquareGather => "gathering transpose",
        }
    }

    /// Words for reports: what the copy is.
    pub fn describe(self) -> &'static str {
        match self {
            Self::CubeJk => "transposing copy (a j,k transpose of a cube, writes a row apart)",
            Self::SquareGather => "gathering copy (a square's transpose, reads a row apart)",
        }
    }
}

/// One working set of a transposing sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransposePoint {
    /// The array's side n (a cube's or a square's, by the sweep's shape).
    pub side: usize,
    /// Bytes of both arrays, 8·n³ for a cube, 8·n² for a square.
    pub working_set_bytes: usize,
    /// Median rate, GB/s (8 bytes per element over the median time of one launch).
    pub gbps: f64,
    /// Its 95 % CI.
    pub ci95_gbps: [f64; 2],
    /// Samples whose modified Z-score exceeded 3.5 (kept).
    pub outliers: usize,
}

/// The whole sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransposeSweep {
    /// Which copy it ran.
    #[serde(default)]
    pub shape: TransposeShape,
    /// Whether every launch ran on one thread (the host's twin), so the rates are one
    /// thread's.
    pub one_thread: bool,
    /// Ascending working sets.
    pub points: Vec<TransposePoint>,
}

/// Element x of the source cube: distinct over any 1021 neighbours and exact in f32, so a
/// misplaced element shows.
fn source_value(x: usize) -> f32 {
    (x % 1021) as f32
}

/// The value added on every sample (and on the check's run).
const ADDED: f32 = 1.0;

/// Measure the transposing copy of `shape` at every working set of `sizes` (one array per
/// distinct side), verify each, and return the points in ascending order.
pub fn measure_transposes(
    ctx: &mut BenchContext<'_>,
    sizes: &[usize],
    shape: TransposeShape,
) -> Result<TransposeSweep, BenchError> {
    let mut sides: Vec<usize> = sizes.iter().map(|&b| shape.side_for(b)).collect();
    sides.dedup();
    let group = ctx.group().max(1);
    let mut arrays = Vec::with_capacity(sides.len());
    for &n in &sides {
        let elements = shape.elements(n);
        let source: Vec<f32> = (0..elements).map(source_value).collect();
        let a = upload_f32(ctx.device, &source)?;
        let b = ctx.device.alloc(elements * 4)?;
        // Launched as the workloads launch what it stands for: the cube as `swap_jk` (rows of
        // work-items along k), the square in the tiles of SOR's 2-D grids, whose rows share
        // the lines their reads gather.
        let launch = match shape {
            TransposeShape::CubeJk => Launch::cube(n, group),
            TransposeShape::SquareGather => Launch::tiles2(n, n, group),
        };
        arrays.push((n, a, b, launch));
    }
    let names: Vec<String> = arrays
        .iter()
        .map(|(n, ..)| format!("{}/{}", shape.samples(), 8 * shape.elements(*n)))
        .collect();
    let measured = ctx.measure_in_rounds(&names, |i| {
        let (n, a, b, launch) = &arrays[i];
        let args = [
            Arg::Buf(a),
            Arg::Buf(b),
            Arg::U32(*n as u32),
            Arg::F32(ADDED),
        ];
        Ok(ctx.launch(shape.kernel(), launch, &args)?.0)
    })?;
    let mut points = Vec::with_capacity(arrays.len());
    for ((name, m), (n, _, b, _)) in names.iter().zip(&measured).zip(&arrays) {
        ctx.record(name, m);
        check(ctx, shape, *n, b)?;
        let elements = shape.elements(*n);
        let Some((gbps, ci95_gbps)) = rate_of(8.0 * elements as f64, m) else {
            continue;
        };
        points.push(TransposePoint {
            side: *n,
            working_set_bytes: 8 * elements,
            gbps,
            ci95_gbps,
            outliers: m.summary.outliers,
        });
    }
    Ok(TransposeSweep {
        shape,
        one_thread: ctx.device.info().backend == crate::backend::BackendKind::Host,
        points,
    })
}

/// The last sample's output against the host: every source element plus 1 where `shape`
/// puts it.
fn check(
    ctx: &BenchContext<'_>,
    shape: TransposeShape,
    n: usize,
    b: &crate::backend::Buffer,
) -> Result<(), BenchError> {
    let elements = shape.elements(n);
    let out = download_f32(ctx.device, b, elements)?;
    let bad = (0..elements).find(|&x| out[shape.destination(x, n)] != source_value(x) + ADDED);
    verify(
        bad.is_none(),
        &format!("{} at n = {n}", shape.kernel()),
        || format!("source element {bad:?} is not where the copy puts it, plus {ADDED}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_odd_and_near_the_working_set() {
        let cube = |b| TransposeShape::CubeJk.side_for(b);
        assert_eq!(cube(16 << 10), 13);
        // 8 · 103³ = 8.7 MB, ADI's window top on the Intel VM; 512 would be a power of two.
        assert_eq!(cube(8_741_816), 103);
        assert_eq!(cube(1 << 30), 513);
        assert_eq!(cube(0), 3);
        // A square of 8 · 8193² bytes ≈ 537 MB: SOR's rows at N = 8260 are as far apart.
        let square = |b| TransposeShape::SquareGather.side_for(b);
        assert_eq!(square(16 << 10), 45);
        assert_eq!(square(1 << 29), 8193);
    }

    #[test]
    fn each_shape_puts_every_element_once_where_its_kernel_writes_it() {
        // The cube: a(i, j, k) lands at b(i, k, j); the square: a(j, i) at b(i, j). At side
        // 5, a(2, 3, 1) at b(2, 1, 3) and a(3, 2) at b(2, 3).
        assert_eq!(
            TransposeShape::CubeJk.destination((2 * 5 + 3) * 5 + 1, 5),
            (2 * 5 + 1) * 5 + 3
        );
        assert_eq!(
            TransposeShape::SquareGather.destination(3 * 5 + 2, 5),
            2 * 5 + 3
        );
        for shape in [TransposeShape::CubeJk, TransposeShape::SquareGather] {
            let n = 7;
            let mut seen = vec![false; shape.elements(n)];
            for x in 0..shape.elements(n) {
                let d = shape.destination(x, n);
                assert!(!seen[d], "{shape:?} puts two elements at {d}");
                seen[d] = true;
            }
        }
    }

    #[test]
    fn the_host_sweeps_transpose_and_are_one_threads() {
        let device = crate::backend::host::HostDevice::new();
        let mut ctx = BenchContext::new(&device, crate::bench::SamplingPlan::quick(), true)
            .expect("the host compiles the microbenchmarks");
        for (shape, side, name) in [
            (TransposeShape::CubeJk, 13, "transpose_s/17576"),
            (TransposeShape::SquareGather, 45, "gather_s/16200"),
        ] {
            let sweep = measure_transposes(&mut ctx, &[16 << 10, 64 << 10], shape)
                .expect("measured and verified");
            assert_eq!(sweep.shape, shape);
            assert!(sweep.one_thread);
            assert_eq!(sweep.points.len(), 2);
            assert_eq!(sweep.points[0].side, side);
            assert!(sweep
                .points
                .iter()
                .all(|p| p.gbps > 0.0 && p.gbps.is_finite()));
            assert!(ctx.samples.contains_key(name), "{name}");
        }
    }

    #[test]
    fn a_sweep_stored_before_the_shapes_is_the_cubes() {
        let old = r#"{"one_thread": true, "points": []}"#;
        let sweep: TransposeSweep = serde_json::from_str(old).expect("parses");
        assert_eq!(sweep.shape, TransposeShape::CubeJk);
    }
}
