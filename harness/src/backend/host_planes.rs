//! Hyperplane loops the host backend's twins share: LU-SSOR's planes (`workloads::lu_ssor`)
//! and the calibration's hyperplane sweep (`bench::hyperplane`), so that the sweep times the
//! walk the workload runs. One thread walks a plane; the launching thread runs it.

use super::HostArgs;

/// One point of the seven-point relaxation of LU-SSOR's hyperplane sweeps, in the kernels'
/// operation order: point p of an n³ grid moves towards the sum of its six neighbours,
/// `a_p = w6·Σ + keep·a_p` (w6 = ω/6, keep = 1 − ω).
pub fn relax_point(a: &mut [f32], n: usize, p: usize, w6: f32, keep: f32) {
    let nn = n * n;
    let sum = ((((a[p - nn] + a[p + nn]) + a[p - n]) + a[p + n]) + a[p - 1]) + a[p + 1];
    a[p] = w6 * sum + keep * a[p];
}

/// Rows of a hyperplane [`relax_plane`] walks together.
pub const PLANE_TILE_ROWS: usize = 4;

/// The points (j, k) of row j in hyperplane i + j + k = h of an n³ grid's interior: the k
/// range with 1 ≤ k ≤ n − 2 and 1 ≤ i = h − j − k ≤ n − 2; `None` where the row misses it.
pub fn plane_row(n: usize, h: usize, j: usize) -> Option<(usize, usize)> {
    if h < j + 2 {
        return None;
    }
    let lo = (h - j).saturating_sub(n - 2).max(1);
    let hi = (n - 2).min(h - j - 1);
    (lo <= hi).then_some((lo, hi))
}

/// Relax every interior point of hyperplane i + j + k = h of the n³ grid `a` on one thread
/// ([`relax_point`]); the number of points. The plane's points are independent, so the order
/// is the walk's choice: rows j are taken [`PLANE_TILE_ROWS`] at a time and walked together,
/// point t of each row in turn. Point t of row j + 1 is (i, j + 1, k − 1) beside (i, j, k) in
/// the same i-plane, and it lies in the line that (i, j, k)'s j + 1 neighbour brought in, so
/// a tile reuses its lines while they are in L1; and the rows' misses are independent, so the
/// core overlaps them. Measured on the 2-vCPU AMD EPYC (one thread, ns per point update over
/// both sweeps): row by row (j, then k, as until 2026-11-26) 4.2 at N = 65 and 10.6 at 260;
/// tiles of 4 rows 3.2 and 5.2. The host twin of LU-SSOR's planes and of the calibration's
/// hyperplane sweep (`bench::hyperplane`) alike.
pub fn relax_plane(a: &mut [f32], n: usize, h: usize, w6: f32, keep: f32) -> usize {
    let mut points = 0;
    if n < 3 {
        return points;
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
                    relax_point(a, n, ((h - j - k) * n + j) * n + k, w6, keep);
                    points += 1;
                }
            }
        }
        first += PLANE_TILE_ROWS;
    }
    points
}

/// [`relax_plane`] over a twin's arguments (grid, n, h, w6, keep), as LU-SSOR's `ssor_plane`
/// and the microbenchmarks' `bw_plane` take them.
pub fn relax_plane_args(a: &HostArgs<'_>) -> Result<(), String> {
    let grid = a.slice_mut::<f32>(0)?;
    let (n, h) = (a.u32(1)? as usize, a.u32(2)? as usize);
    let (w6, keep) = (a.f32(3)?, a.f32(4)?);
    if grid.len() < n * n * n {
        return Err(format!(
            "grid of {} floats, {} needed",
            grid.len(),
            n * n * n
        ));
    }
    relax_plane(grid, n, h, w6, keep);
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
