//! The 3-D grid program shared by `adi`, `line-solve` and `lu-ssor`
//! (`kernels/workloads/grid3d.kern`): its host twins, the initial array and the j,k
//! transpose of the reordered layouts. One place of its own, so the three workloads import it
//! and not each other.

use super::session::Session;
use super::{Access, Layout, WorkloadError};
use crate::backend::host_planes::relax_plane_args;
use crate::backend::{Arg, Buffer, HostArgs, HostKernel, Launch, ProgramSource};

/// The 3-D grid program (ADI, LU-SSOR, line solves) and its host twins.
pub fn program() -> ProgramSource {
    ProgramSource::embedded(
        "workloads/grid3d.kern",
        include_str!("../../../kernels/workloads/grid3d.kern"),
        TWINS,
    )
}

const TWINS: &[(&str, HostKernel)] = &[
    ("zero_u32", host_zero),
    ("adi_sweep", host_sweep),
    ("swap_jk", host_swap),
    ("ssor_plane", host_plane),
    ("line_solve", host_line_solve),
];

fn host_zero(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    a.slice_mut::<u32>(0)?[0] = 0;
    Ok(())
}

/// One sweep over all interior lines; returns the largest change.
pub fn sweep(a: &mut [f32], n: usize, line: usize, fast: usize, slow: usize) -> f32 {
    let mut worst = 0.0f32;
    for e_slow in 1..n - 1 {
        for e_fast in 1..n - 1 {
            let base = e_slow * slow + e_fast * fast;
            let mut line_worst = 0.0f32;
            for t in 1..n - 1 {
                let p = base + t * line;
                let old = a[p];
                let v = (a[p - line] + a[p + line]) * 0.5;
                a[p] = v;
                line_worst = line_worst.max((old - v).abs());
            }
            worst = worst.max(line_worst);
        }
    }
    worst
}

fn host_sweep(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let grid = a.slice_mut::<f32>(0)?;
    let (n, line, fast, slow) = (
        a.u32(1)? as usize,
        a.u32(2)? as usize,
        a.u32(3)? as usize,
        a.u32(4)? as usize,
    );
    let with_eps = a.u32(5)? != 0;
    let eps = &mut a.slice_mut::<u32>(6)?[0];
    let worst = sweep(grid, n, line, fast, slow);
    if with_eps {
        *eps = (*eps).max(worst.to_bits());
    }
    Ok(())
}

fn host_swap(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (src, dst, n) = (
        a.slice::<f32>(0)?,
        a.slice_mut::<f32>(1)?,
        a.u32(2)? as usize,
    );
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                dst[(i * n + k) * n + j] = src[(i * n + j) * n + k];
            }
        }
    }
    Ok(())
}

/// The initial array: deterministic values in [0, 1).
pub fn initial(n: usize) -> Vec<f32> {
    (0..n * n * n)
        .map(|k| ((k as u64 * 2_654_435_761 % 1000) as f32) * 1e-3)
        .collect()
}

/// Transpose the j and k axes of `from` into `to` (the reordering phase).
pub fn swap_jk(
    s: &mut Session<'_>,
    from: &Buffer,
    to: &Buffer,
    n: usize,
) -> Result<(), WorkloadError> {
    let cube = s.cube(n);
    s.launch_moving(
        "swap j,k",
        "swap_jk",
        &cube,
        &[Arg::Buf(from), Arg::Buf(to), Arg::U32(n as u32)],
        Some(8 * (n * n * n) as u64),
    )
}

/// Solve one line in place (the kernel's operation order).
pub fn solve_line(a: &mut [f32], inv: &[f32], base: usize, line: usize) {
    let n = inv.len();
    let mut prev = 0.0f32;
    for (t, r) in inv.iter().enumerate() {
        let p = base + t * line;
        prev = (a[p] + prev) * r;
        a[p] = prev;
    }
    for t in (1..n).rev() {
        let p = base + (t - 1) * line;
        prev = a[p] + inv[t - 1] * prev;
        a[p] = prev;
    }
}

pub fn solve_all(a: &mut [f32], inv: &[f32], strides: [usize; 3]) {
    let n = inv.len();
    for e_slow in 0..n {
        for e_fast in 0..n {
            solve_line(
                a,
                inv,
                e_slow * strides[2] + e_fast * strides[1],
                strides[0],
            );
        }
    }
}

fn host_line_solve(args: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let a = args.slice_mut::<f32>(0)?;
    let n = args.u32(2)? as usize;
    let inv = &args.slice::<f32>(1)?[..n];
    let strides = [
        args.u32(3)? as usize,
        args.u32(4)? as usize,
        args.u32(5)? as usize,
    ];
    solve_all(a, inv, strides);
    Ok(())
}

/// One hyperplane of LU-SSOR on one thread: the tiled walk of
/// [`crate::backend::host_planes::relax_plane`], which the calibration's hyperplane sweep
/// times as well.
fn host_plane(args: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    relax_plane_args(args)
}

/// The access patterns of a workload that walks its cube's lines along i, j and k (`lines`,
/// each strided: one cache line per executor per step) and, in the `reordered` layout, swaps
/// j and k between sweeps (a transpose): ADI's and line-solve's.
pub fn line_patterns(lines: [&'static str; 3], layout: Layout) -> Vec<(&'static str, Access)> {
    let mut patterns: Vec<(&'static str, Access)> =
        lines.iter().map(|&l| (l, Access::Strided)).collect();
    if layout == Layout::Reordered {
        patterns.push(("swap j,k", Access::Transpose));
    }
    patterns
}
