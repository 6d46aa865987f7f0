//! The processor grid, the BLOCK distribution of an array over it, and the bytes a shadow
//! (halo) exchange moves between processors.
//!
//! A grid `p1 × p2 (× p3)` numbers its processors in row-major order. An array of interior
//! extents `n1 × n2 (× n3)` is cut into equal blocks of `nk / pk` points along each dimension
//! (a grid that does not divide the array is refused, so every processor holds the same work).
//! A shadow exchange of width `w` sends each neighbour the `w` outermost layers of the block
//! facing it: `w · Π(other extents)` elements across a face and, where corners are exchanged,
//! `w^d` across a corner, per array exchanged.

use super::ClusterError;

/// Most processors a grid may have: the bound keeps a prediction's cost small.
pub const MAX_PROCESSORS: usize = 1 << 20;

/// A grid of processors, `extents[0] × extents[1] × …`, numbered in row-major order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorGrid {
    extents: Vec<usize>,
}

impl ProcessorGrid {
    /// A grid from its extents (1 to 3 dimensions, each ≥ 1, at most [`MAX_PROCESSORS`]).
    pub fn new(extents: Vec<usize>) -> Result<Self, ClusterError> {
        if extents.is_empty() || extents.len() > 3 {
            return Err(ClusterError::Grid(format!(
                "give 1 to 3 extents such as 2x2, got {} dimensions",
                extents.len()
            )));
        }
        if extents.contains(&0) {
            return Err(ClusterError::Grid("every extent must be ≥ 1".into()));
        }
        let count = extents
            .iter()
            .try_fold(1usize, |a, &e| a.checked_mul(e))
            .filter(|&c| c <= MAX_PROCESSORS);
        if count.is_none() {
            return Err(ClusterError::Grid(format!(
                "more than {MAX_PROCESSORS} processors"
            )));
        }
        Ok(Self { extents })
    }

    /// Parse `2x2`, `4`, `2x2x2` (also with `*` or `×`).
    ///
    /// ```
    /// use harness::model::cluster::ProcessorGrid;
    /// assert_eq!(ProcessorGrid::parse("2x3").unwrap().count(), 6);
    /// assert!(ProcessorGrid::parse("2x0").is_err() && ProcessorGrid::parse("two").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, ClusterError> {
        let extents = text
            .split(['x', 'X', '*', '×'])
            .map(|p| p.trim().parse::<usize>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                ClusterError::Grid(format!(
                    "expected extents such as 2x2, got {:?}",
                    text.chars().take(40).collect::<String>()
                ))
            })?;
        Self::new(extents)
    }

    /// The extents.
    pub fn extents(&self) -> &[usize] {
        &self.extents
    }

    /// Number of processors.
    pub fn count(&self) -> usize {
        self.extents.iter().product()
    }

    /// The grid coordinates of processor `p`.
    pub fn coords(&self, mut p: usize) -> Vec<usize> {
        let mut c = vec![0; self.extents.len()];
        for k in (0..self.extents.len()).rev() {
            c[k] = p % self.extents[k];
            p /= self.extents[k];
        }
        c
    }

    /// The processor at `coords`, if inside the grid.
    pub fn index(&self, coords: &[isize]) -> Option<usize> {
        let mut p = 0usize;
        for (k, &c) in coords.iter().enumerate() {
            if c < 0 || c as usize >= self.extents[k] {
                return None;
            }
            p = p * self.extents[k] + c as usize;
        }
        Some(p)
    }

    /// Hops between two processors on the grid's links (the Manhattan distance).
    pub fn distance(&self, a: usize, b: usize) -> usize {
        self.coords(a)
            .iter()
            .zip(self.coords(b))
            .map(|(x, y)| x.abs_diff(y))
            .sum()
    }

    /// `2x2`-style name.
    pub fn name(&self) -> String {
        self.extents
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join("x")
    }
}

/// Bytes sent from one processor to another: `(from, to, bytes)`.
pub type Transfers = Vec<(usize, usize, u64)>;

/// An array BLOCK-distributed over a processor grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocks {
    grid: ProcessorGrid,
    /// Points per dimension of each block.
    block: Vec<usize>,
}

impl Blocks {
    /// The blocks of an array of interior `extents` over `grid`; the grid may have fewer
    /// dimensions than the array (the rest are not cut). Refused: more grid dimensions than
    /// array dimensions, or an extent the grid does not divide.
    pub fn new(extents: &[usize], grid: &ProcessorGrid) -> Result<Self, ClusterError> {
        if grid.extents().len() > extents.len() {
            return Err(ClusterError::Distribution(format!(
                "a {}-dimensional grid cannot distribute a {}-dimensional array",
                grid.extents().len(),
                extents.len()
            )));
        }
        let mut block = Vec::with_capacity(extents.len());
        let mut padded = grid.extents().to_vec();
        padded.resize(extents.len(), 1);
        for (k, (&n, &p)) in extents.iter().zip(&padded).enumerate() {
            if n == 0 || n % p != 0 || n < p {
                return Err(ClusterError::Distribution(format!(
                    "the grid {} does not divide the array: dimension {} has {n} interior points, \
                     not a multiple of {p} (choose a size whose interior divides by the grid)",
                    grid.name(),
                    k + 1
                )));
            }
            block.push(n / p);
        }
        let grid = ProcessorGrid::new(padded)?;
        Ok(Self { grid, block })
    }

    /// The grid, padded to the array's dimensions.
    pub fn grid(&self) -> &ProcessorGrid {
        &self.grid
    }

    /// Points per dimension of each block.
    pub fn block(&self) -> &[usize] {
        &self.block
    }

    /// Points in each block.
    pub fn block_points(&self) -> u64 {
        self.block
            .iter()
            .fold(1u64, |n, &b| n.saturating_mul(b as u64))
    }

    /// The messages of one shadow exchange of `width` layers of `arrays` arrays with
    /// `element_bytes`-byte elements, corners included when `corners`. Byte counts saturate
    /// at `u64::MAX` (a trace may name any number of arrays) rather than wrap.
    pub fn shadow_transfers(
        &self,
        width: u64,
        arrays: u64,
        element_bytes: u64,
        corners: bool,
    ) -> Transfers {
        let dims = self.block.len();
        let offsets: Vec<Vec<isize>> = (0..3usize.pow(dims as u32))
            .map(|mut k| {
                (0..dims)
                    .map(|_| {
                        let o = (k % 3) as isize - 1;
                        k /= 3;
                        o
                    })
                    .collect::<Vec<_>>()
            })
            .filter(|o| {
                let moved = o.iter().filter(|&&x| x != 0).count();
                moved == 1 || (corners && moved > 1)
            })
            .collect();
        let mut out = Vec::new();
        for p in 0..self.grid.count() {
            let c = self.grid.coords(p);
            for o in &offsets {
                let to: Vec<isize> = c.iter().zip(o).map(|(&a, &d)| a as isize + d).collect();
                if let Some(q) = self.grid.index(&to) {
                    let elements: u64 = self
                        .block
                        .iter()
                        .zip(o)
                        .map(|(&b, &d)| {
                            if d == 0 {
                                b as u64
                            } else {
                                width.min(b as u64)
                            }
                        })
                        .fold(1u64, |n, e| n.saturating_mul(e));
                    let bytes = elements
                        .saturating_mul(arrays)
                        .saturating_mul(element_bytes);
                    out.push((p, q, bytes));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_round_trip_and_distance_is_manhattan() {
        let g = ProcessorGrid::new(vec![2, 3]).unwrap();
        for p in 0..6 {
            let c: Vec<isize> = g.coords(p).iter().map(|&x| x as isize).collect();
            assert_eq!(g.index(&c), Some(p));
        }
        assert_eq!(g.coords(5), vec![1, 2]);
        assert_eq!(g.distance(0, 5), 3);
        assert_eq!(g.index(&[2, 0]), None);
        assert!(ProcessorGrid::new(vec![2048, 2048]).is_err());
    }

    #[test]
    fn shadow_bytes_on_a_2x2_grid_by_hand() {
        // 8 × 8 interior over 2 × 2: blocks of 4 × 4; width 1, one f32 array.
        let b = Blocks::new(&[8, 8], &ProcessorGrid::parse("2x2").unwrap()).unwrap();
        let faces = b.shadow_transfers(1, 1, 4, false);
        // Each of 4 processors has 2 face neighbours, 4 points × 4 bytes each.
        assert_eq!(faces.len(), 8);
        assert!(faces.iter().all(|&(_, _, bytes)| bytes == 16));
        let with_corners = b.shadow_transfers(1, 1, 4, true);
        assert_eq!(with_corners.len(), 12);
        assert_eq!(with_corners.iter().filter(|t| t.2 == 4).count(), 4);
        // A 1-D grid over a 2-D array cuts rows only.
        let rows = Blocks::new(&[8, 6], &ProcessorGrid::parse("2").unwrap()).unwrap();
        assert_eq!(rows.block(), &[4, 6]);
        assert_eq!(
            rows.shadow_transfers(1, 2, 4, false),
            vec![(0, 1, 48), (1, 0, 48)]
        );
    }

    #[test]
    fn a_huge_shadow_exchange_saturates_instead_of_overflowing() {
        // A trace may claim 2^63 arrays: the bytes saturate, never wrap to a small cost.
        let b = Blocks::new(&[8, 8], &ProcessorGrid::parse("2x2").unwrap()).unwrap();
        let t = b.shadow_transfers(1, 1 << 63, 8, true);
        assert!(t.iter().all(|&(_, _, bytes)| bytes == u64::MAX), "{t:?}");
    }

    #[test]
    fn a_grid_that_does_not_divide_is_refused_with_the_dimension() {
        let err = Blocks::new(&[10, 10], &ProcessorGrid::parse("4x2").unwrap()).unwrap_err();
        assert!(err.to_string().contains("dimension 1 has 10"), "{err}");
        assert!(Blocks::new(&[8], &ProcessorGrid::parse("2x2").unwrap()).is_err());
    }
}
