//! Errors shared by the run-time extrapolation fits: the fractal (log-log) fit of Escobar &
//! Boppana (docs/models.md §2, [`super::fractal`]), the polynomial and `a·N^c + b` baselines it is
//! compared with ([`super::baselines`]) and the whole-application phase model
//! ([`super::phases`]).
//!
//! Every message names the offending value and its position so that a user can fix the input
//! series without reading the code.

use thiserror::Error;

/// Why a run-time fit or prediction was refused.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum FitError {
    /// Too few points for the model: a line with a prediction interval needs 3 (k − 2 ≥ 1
    /// degrees of freedom), a polynomial of degree p needs p + 1.
    #[error("{model} needs at least {needed} points, got {got}")]
    TooFewPoints {
        /// The model that was asked for.
        model: String,
        /// Points it needs.
        needed: usize,
        /// Points it got.
        got: usize,
    },
    /// Two input series of different lengths.
    #[error("{what}: expected {expected} values (one per size), got {got}")]
    LengthMismatch {
        /// Which series.
        what: String,
        /// Number of sizes.
        expected: usize,
        /// Number of values in the series.
        got: usize,
    },
    /// A NaN or infinite value.
    #[error("{what}[{index}] is not a finite number ({value})")]
    NotFinite {
        /// Which series.
        what: String,
        /// Position in the series.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A value that must be positive (a size, or a time whose logarithm is taken) is not.
    #[error("{what}[{index}] = {value} must be positive (its logarithm is taken)")]
    NotPositive {
        /// Which series.
        what: String,
        /// Position in the series.
        index: usize,
        /// The value.
        value: f64,
    },
    /// A value that must not be negative (an offset, a phase time) is.
    #[error("{what}[{index}] = {value} must not be negative")]
    Negative {
        /// Which series.
        what: String,
        /// Position in the series.
        index: usize,
        /// The value.
        value: f64,
    },
    /// The same size appears twice; the paper requires n_1 < n_2 < … < n_k.
    #[error("size {size} appears twice (positions {first} and {second}); give each size once")]
    DuplicateSize {
        /// The repeated size.
        size: f64,
        /// First position.
        first: usize,
        /// Second position.
        second: usize,
    },
    /// The target size n_L is not a positive finite number.
    #[error("target size {0} must be a positive finite number")]
    BadTarget(f64),
    /// Subtracting the known constant part left nothing to fit at some size.
    #[error(
        "at size {size} the offset {offset} s is not below the measured time {time} s; \
         the offset is too large or the run is all overhead"
    )]
    OffsetLeavesNonPositive {
        /// The size where it happened.
        size: f64,
        /// The measured time there, seconds.
        time: f64,
        /// The offset subtracted, seconds.
        offset: f64,
    },
    /// A polynomial degree outside the supported range.
    #[error("polynomial degree {0} is not supported (use 1 to 4)")]
    BadDegree(usize),
    /// The least-squares system has no unique solution.
    #[error("{0}: the least-squares system is singular (too few distinct sizes?)")]
    Singular(String),
    /// A setting outside its documented range.
    #[error("setting {name} = {value} is out of range: {expected}")]
    BadSetting {
        /// The setting.
        name: String,
        /// Its value.
        value: f64,
        /// What it must be.
        expected: String,
    },
    /// The phase series holds no phase.
    #[error("the phase series holds no phase")]
    NoPhases,
    /// Two phases with one name.
    #[error("phase {0:?} appears twice")]
    DuplicatePhase(String),
    /// The application's total time is below the sum of its phases.
    #[error(
        "at size {size} the total {total} s is below the sum of the phases {phases} s; \
         check that totals and phase times are in the same unit"
    )]
    TotalBelowPhases {
        /// The size.
        size: f64,
        /// The total given, seconds.
        total: f64,
        /// The sum of the phase times, seconds.
        phases: f64,
    },
    /// The time outside the selected phases is zero at some sizes but not at others, so its
    /// share cannot be extrapolated.
    #[error(
        "the time outside the selected phases is zero at size {size} but not at every size; \
         give application totals or select every phase"
    )]
    RestVanishes {
        /// The size where the rest is zero.
        size: f64,
    },
    /// A fit of one phase failed.
    #[error("phase {phase:?}: {source}")]
    Phase {
        /// The phase.
        phase: String,
        /// Why its fit failed.
        #[source]
        source: Box<FitError>,
    },
    /// A prediction past the largest representable time.
    #[error("at target {target:e} the fitted power law (exponent {exponent:.3}) exceeds the largest representable time: choose a smaller target")]
    Overflow {
        /// The target size.
        target: f64,
        /// The fitted exponent.
        exponent: f64,
    },
    /// The regression library refused the data.
    #[error("regression failed: {0}")]
    Regression(String),
}
