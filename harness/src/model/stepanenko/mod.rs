//! Decomposition of a hybrid processing element and balancing of the work — S. A. Stepanenko,
//! «Декомпозиция структуры гибридных процессорных элементов и балансировка вычислений»
//! (RFNC-VNIIEF; docs/models.md §3, seed `004_…txt`).
//!
//! A processing element has q CPU cores (MIMD) and r accelerators (SIMD), joined by a switch
//! that can connect any subset of cores to any subset of accelerators. A process that takes T1
//! on one core is a MIMD fragment of share φ (T_M = φ·T1 on one core) followed by a SIMD
//! fragment that one accelerator runs ρ times faster than one core (T_S = (1 − φ)·T1/ρ).
//! Speed-ups K are against one core, in two modes ([`Mode`]): "division" keeps the total work
//! and "multiplication" multiplies it by max(q, r).
//!
//! The paper numbers no equations; the docs cite its Table 1 (times), Table 2 (speed-ups), §2
//! (decomposition, K^D), §3 (balancing), §4 (the worked example, Table 3) and Appendices A/B
//! (ν*, K^max). Everything here is pure arithmetic: numbers in, numbers out.
//!
//! # How the paper is read here
//! - **Decomposition (§2).** q − q* cores work alone (the homogeneous part, speed-up q − q*);
//!   q* cores and the r accelerators form the hybrid part: r groups of d = q*/r cores with one
//!   accelerator each (Fig. 4), or, when q* < r, q* groups of one core with d = r/q*
//!   accelerators (Fig. 5). Both give K^D(ν) = q − νq + νq/(φ + (1 − φ)·νq/(rρ)), ν = q*/q.
//!   When q* is not a multiple of r (or of r/q*), d is fractional: the formula then assumes
//!   the switch pools the hybrid part (the q* cores run its MIMD work, then the r accelerators
//!   its SIMD work), which is what the paper's own search over q* implies.
//! - **Proportional split (§4).** "Each accelerator gets q/r cores": the paper's example has
//!   three groups of 9 cores with one accelerator each and "one core of the 28 used alone",
//!   K = 1 + 3·K_{9,1}. In general: ⌊q/r⌋ cores per accelerator and the q mod r leftover cores
//!   working alone, K = (q mod r) + r·K_{⌊q/r⌋,1}. The paper treats only q ≥ r; for q < r
//!   this module gives every core ⌊r/q⌋ accelerators, K = q·K_{1,⌊r/q⌋}, and leaves the
//!   r mod q leftover accelerators idle (an accelerator alone cannot run the MIMD fragment).
//! - **Multiplication mode.** The paper defines K = q·T1/T_{q,r}, but its K̃_{1,r} =
//!   r/(φr + (1 − φ)/ρ) needs the factor max(q, r) = r: the work is multiplied by max(q, r),
//!   so K = max(q, r)·T1/T̃_{q,r} here, and the two modes then agree as the paper says.
//! - **Balancing (§3).** The paper's per-device figures ("0.55·T1/33 on a core, 0.45·T1/33 on
//!   the accelerator") are busy times: within a group the cores run the MIMD part and then the
//!   accelerator runs the SIMD part, so the two add up to the T1/K^D of a lone core.
//!
//! # Paper slips (each asserted in the tests as "paper prints X; the formula gives Y")
//! - §4: K_{9,1} at φ = 0.3, ρ = 5.7 is 6.4045, not 6.05, so 1 + 3·K_{9,1} = 20.2, not 19.1;
//!   and K^D/K_prop = 33.0/20.2 = 1.63, not the printed 1.83.
//! - Table 3: the ν column has the rows φ = 0.1 and φ = 0.3 swapped (0.1905 and 0.2161);
//!   K^D = 38.6 at φ = 0.1 is nearest q* = 3 (38.54), while the best integer q* is 5 (39.52)
//!   and the best multiple of r is 6 (39.48); K^max at φ = 0.5 is 30.095, not 30.15; the
//!   proportional value at φ = 0.1 is 23.6, not 23.7.
//! - §4: ρ = 5.7 comes from the rounded φ = 0.3; the measured φ = 7.05/22.98 = 0.3068 gives
//!   ρ = 5.649.
//! - Table 1: T̂_{q,r} is printed as T1·φ/μ + T1(1 − φ)/ρ, which is one group doing all of T1;
//!   with the work divided over the r groups it is T1·φ/q + T1(1 − φ)/(rρ), r times less.
//! - Fig. 2 prints K_{q,1} = 1/(φ + (1 − φ)q/ρ); Table 2 and the text have q in the numerator.
//! - §4: the hybrid part takes 6/(0.3 + 0.7·6/17.1) = 10.997 portions (printed 11.01), and
//!   K^D = 32.997, K^max = 32.997 (printed 32.98 and 32.99).
//! - Typos that change no number: §2 calls φ "the share of the SIMD fragment" (it is the
//!   MIMD share); §3's per-group share has q where q* = νq is meant and writes K^D_{q,q},
//!   K^D_{q,d} for K^D_{q,r}; Table 2 writes K_{r,1} ≥ r for K_{1,r} ≥ r (true when φr < 1
//!   and ρ ≥ (1 − φ)/(1 − φr)); Table 3's caption reads "r = r" for r = 3.

use serde::Serialize;
use thiserror::Error;

mod decomposition;
mod tables;
#[cfg(test)]
mod tests;

pub use decomposition::{Decomposition, Group, Shares, SlowDown};

/// Inputs the model cannot take.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
pub enum StepanenkoError {
    /// φ, the MIMD share of T1, outside the open interval (0, 1).
    #[error("phi must lie in (0, 1), got {0}")]
    Phi(f64),
    /// ρ, the accelerator's speed-up on the SIMD fragment, not a positive finite number.
    #[error("rho must be a positive finite number, got {0}")]
    Rho(f64),
    /// q = 0 CPU cores.
    #[error("q (CPU cores) must be at least 1, got {0}")]
    Cores(u32),
    /// r = 0 accelerators.
    #[error("r (accelerators) must be at least 1, got {0}")]
    Accelerators(u32),
    /// Measured times that cannot give φ and ρ.
    #[error(
        "measured times must be finite with 0 < T_M < T1 and T_S > 0, \
         got T1 = {t1_seconds} s, T_M = {t_m_seconds} s, T_S = {t_s_seconds} s"
    )]
    Times {
        /// T1: the whole process on one core.
        t1_seconds: f64,
        /// T_M: the MIMD fragment on one core.
        t_m_seconds: f64,
        /// T_S: the SIMD fragment on one accelerator.
        t_s_seconds: f64,
    },
}

/// How the work scales with the element (§1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// «Деление»: the same total work as on one core; K = T1/T̂_{q,r}.
    Division,
    /// «Умножение»: max(q, r) times the work of one core; K = max(q, r)·T1/T̃_{q,r} (the paper
    /// writes q·T1/T_{q,r}, which its own K̃_{1,r} contradicts; see the module docs).
    Multiplication,
}

/// The speed-up over one core of a run that took `t_over_t1`·T1 on q cores and r accelerators
/// (§1): K = T1/T in division mode, K = max(q, r)·T1/T in multiplication mode.
pub fn speedup_from_time(mode: Mode, q: f64, r: f64, t_over_t1: f64) -> f64 {
    match mode {
        Mode::Division => 1.0 / t_over_t1,
        Mode::Multiplication => q.max(r) / t_over_t1,
    }
}

/// A process (φ, ρ) on a processing element of q cores and r accelerators.
///
/// Counts passed to the table functions (`k_q1`, `t_qr_over_t1`, …) are `f64` because the
/// model uses fractional ones (d = q*/r); they must be positive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hybrid {
    /// φ = T_M/T1: share of the MIMD fragment in T1, in (0, 1).
    pub phi: f64,
    /// ρ = (1 − φ)·T1/T_S: how much faster one accelerator runs the SIMD fragment than one core.
    pub rho: f64,
    /// q: CPU cores.
    pub q: u32,
    /// r: accelerators.
    pub r: u32,
}

impl Hybrid {
    /// Validates φ ∈ (0, 1), ρ > 0 (finite), q ≥ 1 and r ≥ 1.
    pub fn new(phi: f64, rho: f64, q: u32, r: u32) -> Result<Self, StepanenkoError> {
        if !(phi > 0.0 && phi < 1.0) {
            return Err(StepanenkoError::Phi(phi));
        }
        if !(rho > 0.0 && rho.is_finite()) {
            return Err(StepanenkoError::Rho(rho));
        }
        if q == 0 {
            return Err(StepanenkoError::Cores(q));
        }
        if r == 0 {
            return Err(StepanenkoError::Accelerators(r));
        }
        Ok(Hybrid { phi, rho, q, r })
    }

    /// From measured times (§4): φ = T_M/T1, ρ = (1 − φ)·T1/T_S, with T1 the whole process on
    /// one core, T_M its MIMD fragment on one core and T_S its SIMD fragment on one
    /// accelerator; 0 < T_M < T1 and T_S > 0. φ is not rounded (the paper rounds it to 0.3
    /// before computing ρ).
    pub fn from_times(
        t1_seconds: f64,
        t_m_seconds: f64,
        t_s_seconds: f64,
        q: u32,
        r: u32,
    ) -> Result<Self, StepanenkoError> {
        let finite = t1_seconds.is_finite() && t_m_seconds.is_finite() && t_s_seconds.is_finite();
        if !(finite && t_m_seconds > 0.0 && t_m_seconds < t1_seconds && t_s_seconds > 0.0) {
            return Err(StepanenkoError::Times {
                t1_seconds,
                t_m_seconds,
                t_s_seconds,
            });
        }
        let phi = t_m_seconds / t1_seconds;
        Hybrid::new(phi, (1.0 - phi) * t1_seconds / t_s_seconds, q, r)
    }
}
