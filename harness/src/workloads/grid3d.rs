//! The 3-D grid program shared by `adi`, `line-solve` and `lu-ssor`
//! (`kernels/workloads/grid3d.kern`): its host twins, the initial array and the j,k
//! transpose of the reordered layouts. One place of its own, so the three workloads import it
//! and not each other.

use super::session::Session;
use super::WorkloadError;
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

pub fn relax(a: &mut [f32], n: usize, p: usize, w6: f32, keep: f32) {
    let nn = n * n;
    let sum = ((((a[p - nn] + a[p + nn]) + a[p - n]) + a[p + n]) + a[p - 1]) + a[p + 1];
    a[p] = w6 * sum + keep * a[p];
}

/// Rows of a hyperplane the host twin walks together (see [`host_plane`]).
const PLANE_TILE_ROWS: usize = 4;

/// The points (j, k) of row j in hyperplane i + j + k = h of an n³ grid's interior: the k
/// range with 1 ≤ k ≤ n − 2 and 1 ≤ i = h − j − k ≤ n − 2; `None` where the row misses it.
fn plane_row(n: usize, h: usize, j: usize) -> Option<(usize, usize)> {
    if h < j + 2 {
        return None;
    }
    let lo = (h - j).saturating_sub(n - 2).max(1);
    let hi = (n - 2).min(h - j - 1);
    (lo <= hi).then_some((lo, hi))
}

/// One hyperplane of LU-SSOR on one thread. The plane's points are independent, so the
/// order is the twin's choice: rows j are taken [`PLANE_TILE_ROWS`] at a time and walked
/// together, point t of each row in turn. Point t of row j + 1 is (i, j + 1, k − 1) beside
/// (i, j, k) in the same i-plane, and it lies in the line that (i, j, k)'s j + 1 neighbour
/// brought in, so a tile reuses its lines while they are in L1; and the rows' misses are
/// independent, so the core overlaps them. Measured on the 2-vCPU AMD EPYC (one thread, ns
/// per point update over both sweeps): row by row (j, then k, as until 2026-11-26) 4.2 at
/// N = 65 and 10.6 at 260; tiles of 4 rows 3.2 and 5.2.
fn host_plane(args: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let a = args.slice_mut::<f32>(0)?;
    let (n, h) = (args.u32(1)? as usize, args.u32(2)? as usize);
    let (w6, keep) = (args.f32(3)?, args.f32(4)?);
    if n < 3 {
        return Ok(());
    }
    if a.len() < n * n * n {
        return Err(format!("grid of {} floats, {} needed", a.len(), n * n * n));
    }
    let mut first = 1;
    while first < n - 1 {
        let mut rows = [(0, 0, 0); PLANE_TILE_ROWS];
        let mut count = 0;
        for j in first..(first + PLANE_TILE_ROWS).min(n - 1) {
            if let Some((lo, hi)) = plane_row(n, h, j) {
                rows[count] = (j, lo, hi);
                count += 1;
            }
        }
        let longest = rows[..count]
            .iter()
            .map(|&(_, lo, hi)| hi - lo + 1)
            .max()
            .unwrap_or(0);
        for t in 0..longest {
            for &(j, lo, hi) in &rows[..count] {
                let k = lo + t;
                if k <= hi {
                    relax(a, n, ((h - j - k) * n + j) * n + k, w6, keep);
                }
            }
        }
        first += PLANE_TILE_ROWS;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plane_row_holds_exactly_the_interior_points_of_its_hyperplane() {
        for n in [3, 4, 7, 12] {
            for h in 0..3 * n {
                for j in 0..n {
                    let want: Vec<usize> = (1..n - 1)
                        .filter(|&k| {
                            (1..n - 1).contains(&j)
                                && h >= j + k
                                && (1..n - 1).contains(&(h - j - k))
                        })
                        .collect();
                    let got: Vec<usize> =
                        match plane_row(n, h, j).filter(|_| (1..n - 1).contains(&j)) {
                            Some((lo, hi)) => (lo..=hi).collect(),
                            None => Vec::new(),
                        };
                    assert_eq!(got, want, "n {n}, h {h}, j {j}");
                }
            }
        }
    }
}
