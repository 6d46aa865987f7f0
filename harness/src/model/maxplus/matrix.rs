//! Matrices over R_max or over symbolic polynomials (Antonyuk & Mikheev 2022, §4 and §7;
//! docs/models.md §1 "Matrices", "Identity", "Modified Kronecker product").
//!
//! (A ⊕ B)_ij = max(a_ij, b_ij), (A ⊙ B)_ij = max_k (a_ik + b_kj), I_n has 0 on the diagonal and
//! ε elsewhere, and the modified Kronecker product A ⊗ B is the usual block layout with ⊙ in
//! place of ×, so that (I_n ⊗ K)^⊙m = I_n ⊗ K^⊙m.

use std::fmt;

use super::error::MaxPlusError;
use super::semiring::Semiring;

/// A dense rows × cols matrix whose entries are numeric or symbolic max-plus values.
///
/// ```
/// use harness::model::maxplus::matrix::Matrix;
/// use harness::model::maxplus::scalar::MaxPlus;
/// let x = |v: f64| MaxPlus::new(v).expect("finite");
/// let a = Matrix::from_rows(vec![vec![x(1.0), x(2.0)], vec![MaxPlus::EPSILON, x(0.0)]])?;
/// let b = Matrix::from_rows(vec![vec![x(0.0), MaxPlus::EPSILON], vec![x(3.0), x(1.0)]])?;
/// let product = a.otimes(&b)?;
/// // (A ⊙ B)_11 = max(1 + 0, 2 + 3) = 5, (A ⊙ B)_21 = max(ε + 0, 0 + 3) = 3
/// assert_eq!(product.get(0, 0), Some(&x(5.0)));
/// assert_eq!(product.get(1, 0), Some(&x(3.0)));
/// assert_eq!(product.get(0, 1), Some(&x(3.0)));
/// # Ok::<(), harness::model::maxplus::MaxPlusError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix<S> {
    rows: usize,
    cols: usize,
    /// Row-major entries.
    entries: Vec<S>,
}

impl<S: Semiring> Matrix<S> {
    /// The rows × cols matrix of ε (a graph with no arcs).
    pub fn epsilon(rows: usize, cols: usize) -> Self {
        Matrix {
            rows,
            cols,
            entries: vec![S::epsilon(); rows * cols],
        }
    }

    /// I_n: 0 on the diagonal, ε elsewhere; X ⊙ I_n = I_n ⊙ X = X (paper §7).
    pub fn identity(n: usize) -> Self {
        let mut identity = Self::epsilon(n, n);
        for i in 0..n {
            identity.entries[i * n + i] = S::unit();
        }
        identity
    }

    /// A matrix from its rows; rows of unequal length are an error naming the first bad row.
    pub fn from_rows(rows: Vec<Vec<S>>) -> Result<Self, MaxPlusError> {
        let cols = rows.first().map_or(0, Vec::len);
        if let Some((index, row)) = rows.iter().enumerate().find(|(_, row)| row.len() != cols) {
            return Err(MaxPlusError::RaggedRows {
                row: index + 1,
                len: row.len(),
                expected: cols,
            });
        }
        let row_count = rows.len();
        Ok(Matrix {
            rows: row_count,
            cols,
            entries: rows.into_iter().flatten().collect(),
        })
    }

    /// A column vector (an n × 1 matrix), e.g. the input vector 1_i.
    pub fn column(entries: Vec<S>) -> Self {
        Matrix {
            rows: entries.len(),
            cols: 1,
            entries,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The entry at (row, col), counted from 0; `None` outside the matrix.
    pub fn get(&self, row: usize, col: usize) -> Option<&S> {
        (row < self.rows && col < self.cols).then(|| &self.entries[row * self.cols + col])
    }

    /// Sets the entry at (row, col), counted from 0.
    pub fn set(&mut self, row: usize, col: usize, value: S) -> Result<(), MaxPlusError> {
        if row >= self.rows || col >= self.cols {
            return Err(MaxPlusError::IndexOutOfRange {
                row: row + 1,
                col: col + 1,
                rows: self.rows,
                cols: self.cols,
            });
        }
        self.entries[row * self.cols + col] = value;
        Ok(())
    }

    /// One row, counted from 0.
    pub fn row(&self, row: usize) -> Option<&[S]> {
        (row < self.rows).then(|| &self.entries[row * self.cols..(row + 1) * self.cols])
    }

    /// The entries of the first column (for column vectors).
    pub fn column_entries(&self) -> Vec<S> {
        (0..self.rows)
            .map(|row| self.entries[row * self.cols].clone())
            .collect()
    }

    fn shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }

    /// A ⊕ B, entry by entry max; the shapes must be equal.
    pub fn oplus(&self, other: &Self) -> Result<Self, MaxPlusError> {
        if self.shape() != other.shape() {
            return Err(MaxPlusError::ShapeMismatch {
                operation: "⊕",
                left: self.shape(),
                right: other.shape(),
            });
        }
        let entries = self
            .entries
            .iter()
            .zip(&other.entries)
            .map(|(a, b)| a.oplus(b))
            .collect();
        Ok(Matrix {
            rows: self.rows,
            cols: self.cols,
            entries,
        })
    }

    /// A ⊙ B with (A ⊙ B)_ij = ⊕_k a_ik ⊙ b_kj (paper §4); A's columns must match B's rows.
    pub fn otimes(&self, other: &Self) -> Result<Self, MaxPlusError> {
        if self.cols != other.rows {
            return Err(MaxPlusError::ShapeMismatch {
                operation: "⊙",
                left: self.shape(),
                right: other.shape(),
            });
        }
        let mut product = Self::epsilon(self.rows, other.cols);
        for i in 0..self.rows {
            for k in 0..self.cols {
                let a = &self.entries[i * self.cols + k];
                if a.is_epsilon() {
                    continue;
                }
                for j in 0..other.cols {
                    let b = &other.entries[k * other.cols + j];
                    if !b.is_epsilon() {
                        let cell = &mut product.entries[i * other.cols + j];
                        *cell = cell.oplus(&a.otimes(b));
                    }
                }
            }
        }
        Ok(product)
    }

    /// A^⊙k by repeated squaring; A^⊙0 = I. The matrix must be square.
    pub fn power(&self, exponent: usize) -> Result<Self, MaxPlusError> {
        if self.rows != self.cols {
            return Err(MaxPlusError::NotSquare {
                rows: self.rows,
                cols: self.cols,
            });
        }
        let mut result = Self::identity(self.rows);
        let mut square = self.clone();
        let mut remaining = exponent;
        while remaining > 0 {
            if remaining & 1 == 1 {
                result = result.otimes(&square)?;
            }
            remaining >>= 1;
            if remaining > 0 {
                square = square.otimes(&square)?;
            }
        }
        Ok(result)
    }

    /// The modified Kronecker product A ⊗ B: block (i, j) is a_ij ⊙ B (paper §7).
    pub fn kronecker(&self, other: &Self) -> Self {
        let rows = self.rows * other.rows;
        let cols = self.cols * other.cols;
        let mut product = Self::epsilon(rows, cols);
        for (block_row, block_col, a) in self.indexed() {
            for (row, col, b) in other.indexed() {
                let cell = (block_row * other.rows + row) * cols + block_col * other.cols + col;
                product.entries[cell] = a.otimes(b);
            }
        }
        product
    }

    fn indexed(&self) -> impl Iterator<Item = (usize, usize, &S)> {
        self.entries
            .iter()
            .enumerate()
            .map(move |(index, entry)| (index / self.cols.max(1), index % self.cols.max(1), entry))
    }
}

/// The max-plus scalar product ⟨a, b⟩ = ⊕_i a_i ⊙ b_i (paper §6: ⟨1_o, Z^⊙k ⊙ 1_i⟩).
///
/// ```
/// use harness::model::maxplus::matrix::inner_product;
/// use harness::model::maxplus::scalar::MaxPlus;
/// let x = |v: f64| MaxPlus::new(v).expect("finite");
/// let outputs = [x(0.0), MaxPlus::EPSILON];
/// let times = [x(7.0), x(9.0)];
/// assert_eq!(inner_product(&outputs, &times)?, x(7.0));
/// # Ok::<(), harness::model::maxplus::MaxPlusError>(())
/// ```
pub fn inner_product<S: Semiring>(a: &[S], b: &[S]) -> Result<S, MaxPlusError> {
    if a.len() != b.len() {
        return Err(MaxPlusError::ShapeMismatch {
            operation: "⟨·,·⟩",
            left: (a.len(), 1),
            right: (b.len(), 1),
        });
    }
    Ok(a.iter()
        .zip(b)
        .fold(S::epsilon(), |sum, (x, y)| sum.oplus(&x.otimes(y))))
}

impl<S: Semiring> fmt::Display for Matrix<S> {
    /// One bracketed row per line, ε for "no arc", e.g. `[ε, T + τ, T + t, T + t]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in 0..self.rows {
            let cells: Vec<String> = self.entries[row * self.cols..(row + 1) * self.cols]
                .iter()
                .map(ToString::to_string)
                .collect();
            writeln!(f, "[{}]", cells.join(", "))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::scalar::MaxPlus;
    use super::*;
    use proptest::prelude::*;

    fn x(value: f64) -> MaxPlus {
        MaxPlus::new(value).expect("finite")
    }

    fn square(size: usize) -> impl Strategy<Value = Matrix<MaxPlus>> {
        let entry = prop_oneof![
            1 => Just(MaxPlus::EPSILON),
            2 => (-20i32..20).prop_map(|v| x(f64::from(v))),
        ];
        prop::collection::vec(entry, size * size).prop_map(move |entries| Matrix {
            rows: size,
            cols: size,
            entries,
        })
    }

    #[test]
    fn ragged_rows_name_the_row() {
        let error = Matrix::from_rows(vec![vec![x(1.0), x(2.0)], vec![x(3.0)]]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "matrix row 2 has 1 entries, but row 1 has 2: a matrix must be rectangular"
        );
    }

    #[test]
    fn incompatible_shapes_are_named() {
        let a = Matrix::<MaxPlus>::epsilon(2, 3);
        let error = a.otimes(&a).unwrap_err().to_string();
        assert_eq!(error, "cannot compute ⊙ of a 2×3 matrix and a 2×3 matrix");
        assert!(a.power(2).unwrap_err().to_string().contains("2×3"));
        assert!(a.oplus(&Matrix::epsilon(3, 2)).is_err());
        assert!(inner_product(&[x(0.0)], &[x(0.0), x(1.0)]).is_err());
    }

    #[test]
    fn setting_outside_the_matrix_names_the_entry() {
        let mut a = Matrix::<MaxPlus>::epsilon(2, 2);
        let message = a.set(2, 0, x(1.0)).unwrap_err().to_string();
        assert!(message.contains("(3, 1)"), "{message}");
    }

    #[test]
    fn power_zero_is_the_identity() {
        let a =
            Matrix::from_rows(vec![vec![x(1.0), x(2.0)], vec![x(3.0), x(4.0)]]).expect("square");
        assert_eq!(a.power(0).expect("square"), Matrix::identity(2));
        assert_eq!(a.power(1).expect("square"), a);
    }

    proptest! {
        #[test]
        fn identity_is_neutral(a in square(3)) {
            let identity = Matrix::identity(3);
            prop_assert_eq!(a.otimes(&identity).expect("fits"), a.clone());
            prop_assert_eq!(identity.otimes(&a).expect("fits"), a);
        }

        #[test]
        fn epsilon_matrix_is_neutral_for_oplus_and_absorbs_otimes(a in square(3)) {
            let epsilon = Matrix::epsilon(3, 3);
            prop_assert_eq!(a.oplus(&epsilon).expect("fits"), a.clone());
            prop_assert_eq!(a.otimes(&epsilon).expect("fits"), epsilon.clone());
            prop_assert_eq!(epsilon.otimes(&a).expect("fits"), epsilon);
        }

        #[test]
        fn squaring_agrees_with_repeated_products(a in square(3), m in 0usize..7) {
            let mut expected = Matrix::identity(3);
            for _ in 0..m {
                expected = expected.otimes(&a).expect("fits");
            }
            prop_assert_eq!(a.power(m).expect("square"), expected);
        }

        /// (I_n ⊗ K)^⊙m = I_n ⊗ K^⊙m: n identical executors reduce to one kernel (paper §7).
        #[test]
        fn executors_reduce_to_one_kernel(k in square(3), n in 1usize..4, m in 0usize..5) {
            let identity = Matrix::<MaxPlus>::identity(n);
            let left = identity.kronecker(&k).power(m).expect("square");
            let right = identity.kronecker(&k.power(m).expect("square"));
            prop_assert_eq!(left, right);
        }

        /// (A ⊗ B) ⊙ (C ⊗ D) = (A ⊙ C) ⊗ (B ⊙ D) (paper §7).
        #[test]
        fn mixed_product_rule(a in square(2), b in square(2), c in square(2), d in square(2)) {
            let left = a.kronecker(&b).otimes(&c.kronecker(&d)).expect("fits");
            let right = a.otimes(&c).expect("fits").kronecker(&b.otimes(&d).expect("fits"));
            prop_assert_eq!(left, right);
        }
    }
}
