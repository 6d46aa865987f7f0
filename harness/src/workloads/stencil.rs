//! 2-D stencils (docs/models.md §4): `jacobi2d`; `sor`, the DVMH paper's Listing 1 by the
//! hyperplane (wavefront) method, in the plain row-major layout and in the skewed diagonal
//! layout of "dynamic array reordering"; and `sor-rb`, red-black SOR.
//!
//! SOR point update (Listing 1):
//! `S = A(I,J); A(I,J) = (W/4)(A(I−1,J) + A(I+1,J) + A(I,J−1) + A(I,J+1)) + (1−W)·A(I,J);`
//! `EPS = max(EPS, |S − A(I,J)|)`. Each point depends on its
//! already-updated up and left neighbours and the not-yet-updated down and right ones, so all
//! points of an anti-diagonal i + j = d are independent: one launch per diagonal, 2N − 5 per
//! iteration. In the plain layout consecutive executors on a diagonal touch addresses n − 1
//! apart; in the skewed layout each diagonal is contiguous, so they touch consecutive ones.

use crate::backend::host_pool::for_each_mut;
use rayon::prelude::*;

use super::session::{compare, compare_with_history, Session};
use super::{check_fits, finish, Access, Layout, RunResult, Workload, WorkloadError};
use crate::backend::{Arg, Buffer, Device, HostArgs, HostKernel, Launch, ProgramSource};

/// The relaxation factor W.
pub const OMEGA: f32 = 1.5;
/// Results agree with the host within this fraction of the grid's largest value (device
/// compilers may fuse the multiply-adds).
pub const TOLERANCE: f64 = 1e-4;

/// The stencil program and its host twins.
pub fn program() -> ProgramSource {
    ProgramSource::embedded(
        "workloads/stencil.kern",
        include_str!("../../../kernels/workloads/stencil.kern"),
        TWINS,
    )
}

const TWINS: &[(&str, HostKernel)] = &[
    ("zero_u32", host_zero),
    ("jacobi", host_jacobi),
    ("sor_diag", host_sor_diag),
    ("sor_diag_skewed", host_sor_diag_skewed),
    ("to_skewed", host_to_skewed),
    ("from_skewed", host_from_skewed),
    ("sor_rb", host_sor_rb),
];

/// One SOR point update, in the kernel's operation order.
pub fn sor_point(c: f32, up: f32, down: f32, left: f32, right: f32, w: f32) -> f32 {
    w * 0.25 * (((up + down) + left) + right) + (1.0 - w) * c
}

fn max_bits(eps: &mut u32, delta: f32) {
    *eps = (*eps).max(delta.abs().to_bits());
}

fn host_zero(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    a.slice_mut::<u32>(0)?[0] = 0;
    Ok(())
}

fn host_jacobi(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (src, dst, n) = (
        a.slice::<f32>(0)?,
        a.slice_mut::<f32>(1)?,
        a.u32(2)? as usize,
    );
    for_each_mut(&mut dst[..n * n], n, |at, rows| {
        for (r, row) in rows.chunks_mut(n).enumerate() {
            let i = at / n + r;
            if i >= 1 && i + 1 < n {
                jacobi_row(src, row, i, n);
            }
        }
    });
    Ok(())
}

/// One interior row `i` of a Jacobi sweep over a grid `width` points wide: `out[j]` for
/// `j` in `1..width − 1` from the four neighbours in `src`, in the kernel's operation order.
/// The host twin and the distributed version (`harness mpi-run`) share it.
pub fn jacobi_row(src: &[f32], out: &mut [f32], i: usize, width: usize) {
    let n = width;
    for (j, cell) in out.iter_mut().enumerate().take(n - 1).skip(1) {
        let p = i * n + j;
        *cell = 0.25 * (((src[p - n] + src[p + n]) + src[p - 1]) + src[p + 1]);
    }
}

/// One colour of red-black SOR on interior row `i` of a grid `width` points wide, updating
/// the points `j ≥ first` (1 or 2), every other one; returns the largest |change| as the bits
/// of a non-negative f32 (which order as the values do). Shared by the host twin and the
/// distributed version.
pub fn sor_rb_row(grid: &mut [f32], i: usize, width: usize, first: usize, w: f32) -> u32 {
    let n = width;
    let mut eps = 0u32;
    for j in (first..n - 1).step_by(2) {
        let p = i * n + j;
        let c = grid[p];
        let v = sor_point(c, grid[p - n], grid[p + n], grid[p - 1], grid[p + 1], w);
        grid[p] = v;
        max_bits(&mut eps, c - v);
    }
    eps
}

fn host_sor_diag(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let grid = a.slice_mut::<f32>(0)?;
    let (n, d, i_lo, count) = (
        a.u32(1)? as usize,
        a.u32(2)? as usize,
        a.u32(3)? as usize,
        a.u32(4)? as usize,
    );
    let w = a.f32(5)?;
    let eps = &mut a.slice_mut::<u32>(6)?[0];
    for i in i_lo..i_lo + count {
        let p = i * n + (d - i);
        let c = grid[p];
        let v = sor_point(c, grid[p - n], grid[p + n], grid[p - 1], grid[p + 1], w);
        grid[p] = v;
        max_bits(eps, c - v);
    }
    Ok(())
}

fn host_sor_diag_skewed(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let s = a.slice_mut::<f32>(0)?;
    let (prev, cur, next) = (a.u32(1)? as usize, a.u32(2)? as usize, a.u32(3)? as usize);
    let (i_lo, count, w) = (a.u32(4)? as usize, a.u32(5)? as usize, a.f32(6)?);
    let eps = &mut a.slice_mut::<u32>(7)?[0];
    for i in i_lo..i_lo + count {
        let c = s[cur + i];
        let v = sor_point(
            c,
            s[prev + i - 1],
            s[next + i + 1],
            s[prev + i],
            s[next + i],
            w,
        );
        s[cur + i] = v;
        max_bits(eps, c - v);
    }
    Ok(())
}

/// Start of anti-diagonal `d` in the skewed layout of an n×n grid (the kernel's
/// `skew_offset`).
pub fn skew_offset(d: usize, n: usize) -> usize {
    if d < n {
        return d * (d + 1) / 2;
    }
    let k = d - n;
    n * (n + 1) / 2 + k * (2 * n - 1) - k * (n + d - 1) / 2
}

/// Smallest row index on anti-diagonal `d`.
pub fn diagonal_start(d: usize, n: usize) -> usize {
    d.saturating_sub(n - 1)
}

/// Position of point (i, j) in the skewed layout.
pub fn skew_index(i: usize, j: usize, n: usize) -> usize {
    let d = i + j;
    skew_offset(d, n) + i - diagonal_start(d, n)
}

fn host_to_skewed(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (src, dst, n) = (
        a.slice::<f32>(0)?,
        a.slice_mut::<f32>(1)?,
        a.u32(2)? as usize,
    );
    for i in 0..n {
        for j in 0..n {
            dst[skew_index(i, j, n)] = src[i * n + j];
        }
    }
    Ok(())
}

fn host_from_skewed(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (src, dst, n) = (
        a.slice::<f32>(0)?,
        a.slice_mut::<f32>(1)?,
        a.u32(2)? as usize,
    );
    for i in 0..n {
        for j in 0..n {
            dst[i * n + j] = src[skew_index(i, j, n)];
        }
    }
    Ok(())
}

fn host_sor_rb(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let grid = a.slice_mut::<f32>(0)?;
    let (n, parity, w) = (a.u32(1)? as usize, a.u32(2)? as usize, a.f32(3)?);
    let eps = &mut a.slice_mut::<u32>(4)?[0];
    for i in 1..n - 1 {
        // The first j ≥ 1 with (i + j) % 2 == parity.
        let first = 1 + (i + 1 + parity) % 2;
        *eps = (*eps).max(sor_rb_row(grid, i, n, first, w));
    }
    Ok(())
}

/// Points per task when the host fills or checks a grid on all its cores.
const HOST_CHUNK: usize = 1 << 16;

/// The initial grid: deterministic values in [0, 1), filled on all the host's cores (a GPU
/// target of 44,876² points is 2 × 10⁹ of them).
pub fn initial_grid(n: usize) -> Vec<f32> {
    let mut grid = vec![0.0f32; n * n];
    grid.par_chunks_mut(HOST_CHUNK)
        .enumerate()
        .for_each(|(c, chunk)| {
            for (o, v) in chunk.iter_mut().enumerate() {
                *v = initial_value(c * HOST_CHUNK + o);
            }
        });
    grid
}

/// The initial value of point `k` (row-major) of the grid: a block of a distributed run
/// fills itself from it.
pub fn initial_value(k: usize) -> f32 {
    ((k as u64 * 2_654_435_761 % 1000) as f32) * 1e-3
}

/// Listing 1 run on the host: the reference. Returns the grid and EPS per iteration. The
/// plain sweep runs sequentially, in Listing 1's order; the red-black one runs each colour's
/// rows on all the host's cores, with the same result: a point of one colour reads only
/// points of the other, which that colour's pass does not change.
pub fn sor_reference(n: usize, iterations: usize, red_black: bool) -> (Vec<f32>, Vec<f32>) {
    let mut a = initial_grid(n);
    let mut history = Vec::with_capacity(iterations);
    // The other colour's points as they stand during a pass (red-black only; each pass
    // copies them in before it reads any).
    let mut before = if red_black {
        vec![0.0f32; n * n]
    } else {
        Vec::new()
    };
    for _ in 0..iterations {
        let mut eps = 0.0f32;
        if red_black {
            for parity in [0, 1] {
                before
                    .par_chunks_mut(HOST_CHUNK)
                    .zip(a.par_chunks(HOST_CHUNK))
                    .for_each(|(to, from)| to.copy_from_slice(from));
                let pass = a
                    .par_chunks_mut(n)
                    .enumerate()
                    .skip(1)
                    .take(n - 2)
                    .map(|(i, row)| {
                        let mut eps = 0.0f32;
                        // The first j ≥ 1 with (i + j) % 2 == parity.
                        for j in (1 + (i + 1 + parity) % 2..n - 1).step_by(2) {
                            let p = i * n + j;
                            let c = row[j];
                            row[j] = sor_point(
                                c,
                                before[p - n],
                                before[p + n],
                                row[j - 1],
                                row[j + 1],
                                OMEGA,
                            );
                            eps = eps.max((c - row[j]).abs());
                        }
                        eps
                    })
                    .reduce(|| 0.0f32, f32::max);
                eps = eps.max(pass);
            }
        } else {
            for i in 1..n - 1 {
                for j in 1..n - 1 {
                    let p = i * n + j;
                    let c = a[p];
                    a[p] = sor_point(c, a[p - n], a[p + n], a[p - 1], a[p + 1], OMEGA);
                    eps = eps.max((c - a[p]).abs());
                }
            }
        }
        history.push(eps);
    }
    (a, history)
}

/// Jacobi run on the host, its rows on all the host's cores: the reference.
pub fn jacobi_reference(n: usize, iterations: usize) -> Vec<f32> {
    let mut a = initial_grid(n);
    let mut b = a.clone();
    for _ in 0..iterations {
        b.par_chunks_mut(n)
            .enumerate()
            .skip(1)
            .take(n - 2)
            .for_each(|(i, row)| {
                for (j, v) in row.iter_mut().enumerate().take(n - 1).skip(1) {
                    let p = i * n + j;
                    *v = 0.25 * (((a[p - n] + a[p + n]) + a[p - 1]) + a[p + 1]);
                }
            });
        std::mem::swap(&mut a, &mut b);
    }
    a
}

fn check_grid(
    name: &str,
    size: usize,
    device: &dyn Device,
    w: &dyn Workload,
) -> Result<(), WorkloadError> {
    if size < 4 {
        return Err(WorkloadError::Invalid(format!(
            "{name}: the grid needs n ≥ 4, got {size}"
        )));
    }
    if size > 46_000 {
        return Err(WorkloadError::Invalid(format!(
            "{name}: n = {size} overflows 32-bit indices"
        )));
    }
    check_fits(w, device, size)
}

/// Jacobi 2-D, 5-point, no dependencies.
#[derive(Debug, Clone, Copy)]
pub struct Jacobi2d;

impl Workload for Jacobi2d {
    fn name(&self) -> &str {
        "jacobi2d"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        super::grid_bytes(2, size, 2, 0)
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        let inner = size.saturating_sub(2) as u64;
        Some(inner * inner)
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        check_grid(self.name(), size, device, self)?;
        let n = size;
        let mut s = Session::new(device, &program())?;
        let init = initial_grid(n);
        let mut a = s.upload_f32(&init)?;
        let mut b = s.upload_f32(&init)?;
        let launch = s.grid2(n - 2, n - 2);
        for _ in 0..iterations {
            // Three adds and a multiply per interior point.
            s.launch_declared(
                "jacobi",
                "jacobi",
                &launch,
                &[Arg::Buf(&a), Arg::Buf(&b), Arg::U32(n as u32)],
                Some(8 * ((n - 2) * (n - 2)) as u64),
                Some(4 * ((n - 2) * (n - 2)) as u64),
            )?;
            std::mem::swap(&mut a, &mut b);
        }
        let got = s.download_f32(&a, n * n)?;
        let verification =
            verify.then(|| compare(&got, &jacobi_reference(n, iterations), TOLERANCE));
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}

/// SOR by the hyperplane method, plain or skewed layout.
#[derive(Debug, Clone, Copy)]
pub struct Sor(pub Layout);

impl Workload for Sor {
    fn name(&self) -> &str {
        "sor"
    }

    /// In the `reordered` layout, the copies into and out of the skewed layout: the points
    /// of a row lie on consecutive anti-diagonals, a diagonal's length apart, so each
    /// executor's step writes (`to_skewed`) or reads (`from_skewed`) one element per cache
    /// line, as a transpose does. (Until 2026-11-27 they were left undeclared and moved at
    /// the streaming rate, which charged them almost nothing for leaving the cache.)
    fn access_patterns(&self) -> Vec<(&str, Access)> {
        match self.0 {
            Layout::Plain => Vec::new(),
            // Both copies move by the calibration's transposing sweeps, the kernels that do
            // what they do. The copy back reads a diagonal's length apart and writes rows: a
            // gathering transpose; the copy in writes apart.
            // In the skewed layout each diagonal is updated in place from the diagonals
            // either side, contiguous as a row stencil's rows are: a stencil. (The plain
            // layout's diagonals step a row at a time, a gather: not this.)
            Layout::Reordered => vec![
                ("to_skewed", Access::Transpose),
                ("from_skewed", Access::TransposeRead),
                ("sor_diag_skewed", Access::Stencil),
            ],
        }
    }

    /// The skewed sweep walks the skewed grid alone, one of the layout's two.
    fn walked_bytes(&self, _phase: &str, size: usize) -> u64 {
        super::grid_bytes(1, size, 2, 0)
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        let copies = if self.0 == Layout::Reordered { 2 } else { 1 };
        super::grid_bytes(copies, size, 2, 4)
    }

    /// The mean anti-diagonal: (N − 2)² points over 2N − 5 launches.
    fn parallelism(&self, size: usize) -> Option<u64> {
        let inner = size.saturating_sub(2) as u64;
        Some(inner * inner / (2 * size as u64).saturating_sub(5).max(1))
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        check_grid(self.name(), size, device, self)?;
        let n = size;
        let mut s = Session::new(device, &program())?;
        let a = s.upload_f32(&initial_grid(n))?;
        let eps = s.scratch(4)?;
        let mut history = Vec::with_capacity(iterations);
        match self.0 {
            Layout::Plain => {
                for _ in 0..iterations {
                    history.push(sor_plain_iteration(&mut s, &a, &eps, n)?);
                }
            }
            Layout::Reordered => {
                let skewed = s.scratch(n * n * 4)?;
                let whole = s.grid2(n, n);
                s.launch_moving(
                    "to_skewed",
                    "to_skewed",
                    &whole,
                    &[Arg::Buf(&a), Arg::Buf(&skewed), Arg::U32(n as u32)],
                    Some(8 * (n * n) as u64),
                )?;
                for _ in 0..iterations {
                    history.push(sor_skewed_iteration(&mut s, &skewed, &eps, n)?);
                }
                s.launch_moving(
                    "from_skewed",
                    "from_skewed",
                    &whole,
                    &[Arg::Buf(&skewed), Arg::Buf(&a), Arg::U32(n as u32)],
                    Some(8 * (n * n) as u64),
                )?;
            }
        }
        let got = s.download_f32(&a, n * n)?;
        let verification = verify.then(|| {
            compare_with_history(
                got,
                &history,
                sor_reference(n, iterations, false),
                TOLERANCE,
            )
        });
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}

/// Interior anti-diagonals 2 ..= 2n − 4 with their first row and point count.
fn interior_diagonals(n: usize) -> impl Iterator<Item = (usize, usize, usize)> {
    (2..=2 * n - 4).map(move |d| {
        let lo = d.saturating_sub(n - 2).max(1);
        let hi = (d - 1).min(n - 2);
        (d, lo, hi + 1 - lo)
    })
}

/// The phase of the per-iteration read of SOR's EPS (kept apart from the final download).
pub const READ_EPS: &str = "download eps";

fn read_eps(s: &mut Session<'_>, eps: &Buffer) -> Result<f32, WorkloadError> {
    let bits = s.download_f32_as(READ_EPS, eps, 1)?[0];
    Ok(bits)
}

fn sor_plain_iteration(
    s: &mut Session<'_>,
    a: &Buffer,
    eps: &Buffer,
    n: usize,
) -> Result<f32, WorkloadError> {
    s.launch("zero_u32", &Launch::single(), &[Arg::Buf(eps)])?;
    for (d, lo, count) in interior_diagonals(n) {
        let launch = s.linear(count);
        s.launch_declared(
            "sor_diag",
            "sor_diag",
            &launch,
            &[
                Arg::Buf(a),
                Arg::U32(n as u32),
                Arg::U32(d as u32),
                Arg::U32(lo as u32),
                Arg::U32(count as u32),
                Arg::F32(OMEGA),
                Arg::Buf(eps),
            ],
            Some(8 * count as u64),
            Some(SOR_POINT_FLOPS * count as u64),
        )?;
    }
    read_eps(s, eps)
}

fn sor_skewed_iteration(
    s: &mut Session<'_>,
    grid: &Buffer,
    eps: &Buffer,
    n: usize,
) -> Result<f32, WorkloadError> {
    s.launch("zero_u32", &Launch::single(), &[Arg::Buf(eps)])?;
    let base = |e: usize| (skew_offset(e, n) - diagonal_start(e, n)) as u32;
    for (d, lo, count) in interior_diagonals(n) {
        let launch = s.linear(count);
        s.launch_declared(
            "sor_diag_skewed",
            "sor_diag_skewed",
            &launch,
            &[
                Arg::Buf(grid),
                Arg::U32(base(d - 1)),
                Arg::U32(base(d)),
                Arg::U32(base(d + 1)),
                Arg::U32(lo as u32),
                Arg::U32(count as u32),
                Arg::F32(OMEGA),
                Arg::Buf(eps),
            ],
            Some(8 * count as u64),
            Some(SOR_POINT_FLOPS * count as u64),
        )?;
    }
    read_eps(s, eps)
}

/// The floating-point operations of one SOR point as the kernels write it (`SOR_POINT` and the
/// change it reports): three adds of the neighbours, ω·¼, its product with the sum, 1 − ω,
/// its product with the point, the add of the two, and the change's subtract.
const SOR_POINT_FLOPS: u64 = 9;

/// The interior points (i, j in 1..n − 1) of colour `parity`, (i + j) % 2 = parity.
fn colour_points(n: usize, parity: u32) -> u64 {
    let m = n.saturating_sub(2) as u64;
    let even = (m * m).div_ceil(2);
    if parity == 0 {
        even
    } else {
        m * m - even
    }
}

/// Red-black SOR: red points, then black points, per iteration.
#[derive(Debug, Clone, Copy)]
pub struct SorRedBlack;

impl Workload for SorRedBlack {
    fn name(&self) -> &str {
        "sor-rb"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        super::grid_bytes(1, size, 2, 4)
    }

    /// Both colours: each is the stencil sweep's kernel.
    fn access_patterns(&self) -> Vec<(&str, Access)> {
        vec![
            ("sor_rb red", Access::Stencil),
            ("sor_rb black", Access::Stencil),
        ]
    }

    /// The grid alone, without the reduction's few bytes.
    fn walked_bytes(&self, _phase: &str, size: usize) -> u64 {
        super::grid_bytes(1, size, 2, 0)
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        let inner = size.saturating_sub(2) as u64;
        Some(inner * inner)
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        check_grid(self.name(), size, device, self)?;
        let n = size;
        let mut s = Session::new(device, &program())?;
        let a = s.upload_f32(&initial_grid(n))?;
        let eps = s.scratch(4)?;
        let launch = s.grid2(n - 2, n - 2);
        let mut history = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            s.launch("zero_u32", &Launch::single(), &[Arg::Buf(&eps)])?;
            for (phase, parity) in [("sor_rb red", 0u32), ("sor_rb black", 1u32)] {
                sor_rb_half_sweep(&mut s, phase, &launch, &a, n, parity, &eps)?;
            }
            history.push(read_eps(&mut s, &eps)?);
        }
        let got = s.download_f32(&a, n * n)?;
        let verification = verify.then(|| {
            compare_with_history(got, &history, sor_reference(n, iterations, true), TOLERANCE)
        });
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}

/// One colour of a red-black sweep (`parity` 0: red, 1: black) over the n × n grid `a`,
/// recorded as `phase`; EPS = max |change| goes to `eps`.
///
/// The phase moves 8 bytes per interior cell, though it updates only half of them (the other
/// in-place kernels declare 8 bytes per updated cell, its read and its write): the colours
/// alternate within every row, so each cache line (or GPU sector) holds cells of both, and
/// one colour's sweep reads every line of the grid and writes every line back. Until 2026-11-26 it declared 4 bytes per interior cell, the
/// updated cells' share only, and the calibrated variant moved it from the caches to the
/// memory by half its traffic (host sor-rb −12 to −16 % with its interval missing in suite
/// runs 40–44; docs/models.md §2.4, "Red-black moves whole lines").
pub(super) fn sor_rb_half_sweep(
    s: &mut Session<'_>,
    phase: &str,
    launch: &Launch,
    a: &Buffer,
    n: usize,
    parity: u32,
    eps: &Buffer,
) -> Result<(), WorkloadError> {
    s.launch_declared(
        phase,
        "sor_rb",
        launch,
        &[
            Arg::Buf(a),
            Arg::U32(n as u32),
            Arg::U32(parity),
            Arg::F32(OMEGA),
            Arg::Buf(eps),
        ],
        Some(8 * ((n - 2) * (n - 2)) as u64),
        Some(SOR_POINT_FLOPS * colour_points(n, parity)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_colours_hold_every_interior_point_once() {
        for n in [3usize, 4, 5, 10, 11] {
            let brute = |parity: usize| {
                (1..n - 1)
                    .flat_map(|i| (1..n - 1).map(move |j| (i + j) % 2))
                    .filter(|&p| p == parity)
                    .count() as u64
            };
            assert_eq!(colour_points(n, 0), brute(0), "n = {n}");
            assert_eq!(colour_points(n, 1), brute(1), "n = {n}");
        }
    }

    #[test]
    fn skewed_layout_is_a_bijection_with_contiguous_diagonals() {
        let n = 7;
        let mut seen = vec![false; n * n];
        for i in 0..n {
            for j in 0..n {
                let k = skew_index(i, j, n);
                assert!(!seen[k]);
                seen[k] = true;
                if i > 0 && j + 1 < n {
                    assert_eq!(
                        skew_index(i, j, n),
                        skew_index(i - 1, j + 1, n) + 1,
                        "diagonal contiguous"
                    );
                }
            }
        }
    }

    #[test]
    fn the_references_on_all_cores_equal_the_sequential_sweeps() {
        for n in [5, 37, 40, 301] {
            // Listing 1's red-black and Jacobi loops, one point at a time.
            let mut a = (0..n * n).map(initial_value).collect::<Vec<f32>>();
            let mut history = Vec::new();
            for _ in 0..3 {
                let mut eps = 0.0f32;
                for parity in [0, 1] {
                    for i in 1..n - 1 {
                        for j in 1..n - 1 {
                            if (i + j) % 2 != parity {
                                continue;
                            }
                            let p = i * n + j;
                            let c = a[p];
                            a[p] = sor_point(c, a[p - n], a[p + n], a[p - 1], a[p + 1], OMEGA);
                            eps = eps.max((c - a[p]).abs());
                        }
                    }
                }
                history.push(eps);
            }
            let (got, got_history) = sor_reference(n, 3, true);
            assert!(got.iter().zip(&a).all(|(x, y)| x.to_bits() == y.to_bits()));
            assert_eq!(got_history, history);
            assert!(history.iter().all(|&e| e > 0.0));
            let (mut x, mut y) = (initial_grid(n), initial_grid(n));
            for _ in 0..3 {
                for i in 1..n - 1 {
                    for j in 1..n - 1 {
                        let p = i * n + j;
                        y[p] = 0.25 * (((x[p - n] + x[p + n]) + x[p - 1]) + x[p + 1]);
                    }
                }
                std::mem::swap(&mut x, &mut y);
            }
            let got = jacobi_reference(n, 3);
            assert!(got.iter().zip(&x).all(|(u, v)| u.to_bits() == v.to_bits()));
            assert_ne!(got, initial_grid(n));
        }
    }

    #[test]
    fn wavefront_order_equals_the_sequential_sweep() {
        // Listing 1's loop order and the anti-diagonal order give bit-identical grids.
        let n = 9;
        let (reference, _) = sor_reference(n, 1, false);
        let mut a = initial_grid(n);
        for (d, lo, count) in interior_diagonals(n) {
            for i in lo..lo + count {
                let p = i * n + (d - i);
                a[p] = sor_point(a[p], a[p - n], a[p + n], a[p - 1], a[p + 1], OMEGA);
            }
        }
        assert_eq!(a, reference);
    }
}
