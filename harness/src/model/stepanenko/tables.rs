//! Tables 1 and 2 of the paper: run times and speed-ups of fixed compositions.

use super::{Hybrid, Mode};

impl Hybrid {
    /// T_{1,1}/T1 = φ + (1 − φ)/ρ: one core and one accelerator (§1; both modes).
    pub fn t_11_over_t1(&self) -> f64 {
        self.phi + (1.0 - self.phi) / self.rho
    }

    /// Table 1, q cores and one accelerator, as a multiple of T1:
    /// T̃_{q,1} = T1·φ + T1(1 − φ)·q/ρ (multiplication), T̂_{q,1} = T1·φ/q + T1(1 − φ)/ρ
    /// (division).
    pub fn t_q1_over_t1(&self, mode: Mode, q: f64) -> f64 {
        self.t_qr_over_t1(mode, q, 1.0)
    }

    /// Table 1, one core and r accelerators, as a multiple of T1:
    /// T̃_{1,r} = T1·φ·r + T1(1 − φ)/ρ (multiplication), T̂_{1,r} = T1·φ + T1(1 − φ)/(rρ)
    /// (division).
    pub fn t_1r_over_t1(&self, mode: Mode, r: f64) -> f64 {
        self.t_qr_over_t1(mode, 1.0, r)
    }

    /// Table 1, q cores and r accelerators all working together, as a multiple of T1.
    ///
    /// For q/r = μ ≥ 1 (r groups of μ cores and one accelerator): T̃_{q,r} = T1·φ +
    /// T1(1 − φ)·μ/ρ (multiplication) and T̂_{q,r} = T1·φ/q + T1(1 − φ)/(rρ) (division; the
    /// paper prints T1·φ/μ + T1(1 − φ)/ρ, the time of one group doing all of T1, r times
    /// this). For q < r (q groups of one core and r/q accelerators): T̃_{q,r} = T1·φ·r/q +
    /// T1(1 − φ)/ρ, which is T̃_{1,r} at q = 1; T̂_{q,r} has the same form as above.
    pub fn t_qr_over_t1(&self, mode: Mode, q: f64, r: f64) -> f64 {
        let (phi, rho) = (self.phi, self.rho);
        match mode {
            Mode::Division => phi / q + (1.0 - phi) / (r * rho),
            // max(q, r) copies of the work: each core runs max(q, r)/q MIMD copies, each
            // accelerator max(q, r)/r SIMD copies, one after the other.
            Mode::Multiplication => {
                let copies = q.max(r);
                phi * copies / q + (1.0 - phi) * copies / (r * rho)
            }
        }
    }

    // ---- Table 2: speed-ups (the same in both modes) ----

    /// K_{1,1} = T1/T_{1,1} = 1/(φ + (1 − φ)/ρ) = ρ/(1 + φ(ρ − 1)) (§1).
    pub fn k_11(&self) -> f64 {
        self.rho / (1.0 + self.phi * (self.rho - 1.0))
    }

    /// K_{q,1} = q/(φ + (1 − φ)·q/ρ): q cores with one accelerator (Table 2). It is at least
    /// q when q ≤ ρ and tends to ρ/(1 − φ) as q → ∞ ([`Hybrid::k_q1_limit`]). With q = d it is
    /// the K_{d,1} of a hybrid group (§2).
    pub fn k_q1(&self, q: f64) -> f64 {
        q / (self.phi + (1.0 - self.phi) * q / self.rho)
    }

    /// K_{1,r} = r/(φ·r + (1 − φ)/ρ): one core with r accelerators (Table 2); tends to 1/φ as
    /// r → ∞ ([`Hybrid::k_1r_limit`]).
    pub fn k_1r(&self, r: f64) -> f64 {
        r / (self.phi * r + (1.0 - self.phi) / self.rho)
    }

    /// K_{q,q} = q/(φ + (1 − φ)/ρ): q cores, each with its own accelerator (Table 2).
    pub fn k_qq(&self, q: f64) -> f64 {
        q / (self.phi + (1.0 - self.phi) / self.rho)
    }

    /// K_{q,r} = q/(φ + (1 − φ)·q/(rρ)): all q cores joined to all r accelerators, that is
    /// r·K_{μ,1} with μ = q/r (Table 1's third row), or q·K_{1,r/q} when q < r; K^D at ν = 1.
    pub fn k_qr(&self, q: f64, r: f64) -> f64 {
        q / (self.phi + (1.0 - self.phi) * q / (r * self.rho))
    }

    /// lim_{q→∞} K_{q,1} = ρ/(1 − φ) (Table 2).
    pub fn k_q1_limit(&self) -> f64 {
        self.rho / (1.0 - self.phi)
    }

    /// lim_{r→∞} K_{1,r} = 1/φ (Table 2).
    pub fn k_1r_limit(&self) -> f64 {
        1.0 / self.phi
    }

    /// ρ > (1 − φ)/φ: then K_{n,1} > K_{1,n} for every n > 1, and adding cores pays more than
    /// adding accelerators (Table 2, last row; §4: 5.7 > 2.33).
    pub fn cores_beat_accelerators(&self) -> bool {
        self.rho > (1.0 - self.phi) / self.phi
    }
}
