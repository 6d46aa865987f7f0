//! Decomposition and balancing of a hybrid processing element — Stepanenko (PAPERS.md §3).
//!
//! q CPU cores (MIMD) and r accelerators (SIMD) run a process that takes T1 on one core: a
//! MIMD fragment of share φ, then a SIMD fragment that one accelerator runs ρ times faster
//! than one core. The model is pure arithmetic: numbers in, numbers out.

use serde::Serialize;
use thiserror::Error;

/// Invalid model inputs.
#[derive(Debug, Error, PartialEq)]
pub enum StepanenkoError {
    /// φ outside (0, 1).
    #[error("phi must lie in (0, 1), got {0}")]
    Phi(f64),
    /// ρ not positive.
    #[error("rho must be positive, got {0}")]
    Rho(f64),
    /// q = 0.
    #[error("q (CPU cores) must be at least 1")]
    Cores,
    /// r = 0.
    #[error("r (accelerators) must be at least 1")]
    Accelerators,
    /// Measured times that cannot give φ and ρ.
    #[error("measured times must satisfy 0 < T_M < T1 and T_S > 0, got T1 = {t1}, T_M = {tm}, T_S = {ts}")]
    Times {
        /// Whole process on one core.
        t1: f64,
        /// MIMD fragment on one core.
        tm: f64,
        /// SIMD fragment on one accelerator.
        ts: f64,
    },
}

/// The process (φ, ρ) on a machine of q cores and r accelerators.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Hybrid {
    /// φ: share of the MIMD fragment in T1.
    pub phi: f64,
    /// ρ: how much faster one accelerator runs the SIMD fragment than one core.
    pub rho: f64,
    /// q: CPU cores.
    pub q: u32,
    /// r: accelerators.
    pub r: u32,
}

impl Hybrid {
    /// Validate φ ∈ (0, 1), ρ > 0, q ≥ 1, r ≥ 1.
    pub fn new(phi: f64, rho: f64, q: u32, r: u32) -> Result<Self, StepanenkoError> {
        if !(phi > 0.0 && phi < 1.0) {
            return Err(StepanenkoError::Phi(phi));
        }
        if !(rho > 0.0 && rho.is_finite()) {
            return Err(StepanenkoError::Rho(rho));
        }
        if q == 0 {
            return Err(StepanenkoError::Cores);
        }
        if r == 0 {
            return Err(StepanenkoError::Accelerators);
        }
        Ok(Hybrid { phi, rho, q, r })
    }

    /// From measurements: φ = T_M / T1, ρ = (1 − φ)·T1 / T_S.
    pub fn from_times(t1: f64, tm: f64, ts: f64, q: u32, r: u32) -> Result<Self, StepanenkoError> {
        if !(t1 > 0.0 && tm > 0.0 && tm < t1 && ts > 0.0) {
            return Err(StepanenkoError::Times { t1, tm, ts });
        }
        let phi = tm / t1;
        Hybrid::new(phi, (1.0 - phi) * t1 / ts, q, r)
    }

    /// K_11 = ρ / (1 + φ(ρ − 1)): one core and one accelerator.
    pub fn k_11(&self) -> f64 {
        self.rho / (1.0 + self.phi * (self.rho - 1.0))
    }

    /// K_d1 = d / (φ + (1 − φ)·d/ρ): d cores sharing one accelerator (division mode).
    pub fn k_d1(&self, d: f64) -> f64 {
        d / (self.phi + (1.0 - self.phi) * d / self.rho)
    }

    /// K_1r = r / (φr + (1 − φ)/ρ): one core with r accelerators.
    pub fn k_1r(&self, r: f64) -> f64 {
        r / (self.phi * r + (1.0 - self.phi) / self.rho)
    }

    /// K_qq = q / (φ + (1 − φ)/ρ): q cores each with its own accelerator.
    pub fn k_qq(&self, q: f64) -> f64 {
        q / (self.phi + (1.0 - self.phi) / self.rho)
    }

    /// lim q→∞ K_q1 = ρ / (1 − φ).
    pub fn k_q1_limit(&self) -> f64 {
        self.rho / (1.0 - self.phi)
    }

    /// lim r→∞ K_1r = 1 / φ.
    pub fn k_1r_limit(&self) -> f64 {
        1.0 / self.phi
    }

    /// K^D(ν) = q − νq + νq / (φ + (1 − φ)·νq/(rρ)), with q* = νq cores joined to the
    /// accelerators (real-valued q*; q* = 0 leaves the accelerators idle: K = q).
    ///
    /// ```
    /// use harness::model::stepanenko::Hybrid;
    /// let h = Hybrid::new(0.3, 5.7, 28, 3).unwrap();
    /// assert!((h.k_d(6.0) - 32.997).abs() < 1e-3);
    /// ```
    pub fn k_d(&self, q_star: f64) -> f64 {
        let q = f64::from(self.q);
        if q_star <= 0.0 {
            return q;
        }
        let rr = f64::from(self.r) * self.rho;
        q - q_star + q_star / (self.phi + (1.0 - self.phi) * q_star / rr)
    }

    /// The continuous optimum ν* = rρ√φ / (q(1 + √φ)).
    pub fn nu_optimal(&self) -> f64 {
        let s = self.phi.sqrt();
        f64::from(self.r) * self.rho * s / (f64::from(self.q) * (1.0 + s))
    }

    /// K^max = q + rρ(1 − √φ)/(1 + √φ), the speedup at ν*.
    pub fn k_max(&self) -> f64 {
        let s = self.phi.sqrt();
        f64::from(self.q) + f64::from(self.r) * self.rho * (1.0 - s) / (1.0 + s)
    }

    /// The best whole number of hybrid cores q* ∈ 0..=q with `step` dividing it.
    pub fn best_q_star(&self, step: u32) -> u32 {
        (0..=self.q)
            .step_by(step.max(1) as usize)
            .max_by(|&a, &b| self.k_d(f64::from(a)).total_cmp(&self.k_d(f64::from(b))))
            .unwrap_or(0)
    }

    /// The "proportional" split: the cores divided evenly among the accelerators, ⌊q/r⌋ per
    /// accelerator, the q mod r left over working alone: (q mod r) + r·K_{⌊q/r⌋,1}.
    pub fn k_proportional(&self) -> f64 {
        let d = self.q / self.r;
        f64::from(self.q % self.r) + f64::from(self.r) * self.k_d1(f64::from(d))
    }

    /// The decomposition at the best integer q*, with the balancing shares.
    pub fn decompose(&self) -> Decomposition {
        let q_star = self.best_q_star(1);
        let q_star_r = self.best_q_star(self.r);
        let k_d = self.k_d(f64::from(q_star));
        let d = f64::from(q_star) / f64::from(self.r);
        let k_group = if q_star > 0 { self.k_d1(d) } else { 0.0 };
        let rr = f64::from(self.r) * self.rho;
        Decomposition {
            hybrid: *self,
            nu_continuous: self.nu_optimal(),
            k_max: self.k_max(),
            q_star,
            nu: f64::from(q_star) / f64::from(self.q),
            cores_per_accelerator: d,
            k_d,
            q_star_multiple_of_r: q_star_r,
            k_d_multiple_of_r: self.k_d(f64::from(q_star_r)),
            k_proportional: self.k_proportional(),
            joining_all_cores_slows_down: f64::from(self.q) > rr,
            shares: Shares {
                homogeneous_core_work: 1.0 / k_d,
                hybrid_group_work: k_group / k_d,
                hybrid_core_time: if d > 0.0 {
                    k_group / d * self.phi / k_d
                } else {
                    0.0
                },
                accelerator_time: k_group * (1.0 - self.phi) / self.rho / k_d,
                multiplication_core_time: if d > 0.0 { k_group / d * self.phi } else { 0.0 },
                multiplication_accelerator_time: k_group * (1.0 - self.phi) / self.rho,
            },
        }
    }
}

/// Work and time shares of the balanced split (division mode unless named).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shares {
    /// Fraction of the work each homogeneous core gets: 1/K^D.
    pub homogeneous_core_work: f64,
    /// Fraction of the work each hybrid group gets: K_d1/K^D.
    pub hybrid_group_work: f64,
    /// Time of each hybrid core, in units of T1: (K_d1/d)·φ / K^D.
    pub hybrid_core_time: f64,
    /// Time of each accelerator, in units of T1: K_d1·(1 − φ)/ρ / K^D.
    pub accelerator_time: f64,
    /// Multiplication mode: time per hybrid core, units of T1: (K_d1/d)·φ.
    pub multiplication_core_time: f64,
    /// Multiplication mode: time per accelerator, units of T1: K_d1·(1 − φ)/ρ.
    pub multiplication_accelerator_time: f64,
}

/// The recommended decomposition.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Decomposition {
    /// The inputs.
    pub hybrid: Hybrid,
    /// ν* (continuous).
    pub nu_continuous: f64,
    /// K^max.
    pub k_max: f64,
    /// The best integer q*.
    pub q_star: u32,
    /// ν = q*/q.
    pub nu: f64,
    /// d = q*/r cores per accelerator (below 1: accelerators per core is 1/d).
    pub cores_per_accelerator: f64,
    /// K^D at q*.
    pub k_d: f64,
    /// The best q* among multiples of r.
    pub q_star_multiple_of_r: u32,
    /// K^D there.
    pub k_d_multiple_of_r: f64,
    /// The proportional split's speedup.
    pub k_proportional: f64,
    /// q > rρ: joining all q cores to the accelerators (q* = q, e.g. the proportional
    /// split) is slower than the cores alone — the paper's warning; K^D(q*) < q whenever
    /// q* > rρ.
    pub joining_all_cores_slows_down: bool,
    /// The balancing shares.
    pub shares: Shares,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn worked_example() {
        // q = 28, r = 3, φ = 0.3, ρ = 5.7 (PAPERS.md §3).
        let h = Hybrid::new(0.3, 5.7, 28, 3).unwrap();
        assert!((1.0 - h.phi) / h.phi < h.rho);
        let d = h.decompose();
        assert!(close(d.k_max, 32.99, 0.01), "{}", d.k_max);
        assert!(close(d.nu_continuous, 0.216, 0.001));
        assert_eq!(d.q_star, 6);
        assert_eq!(d.cores_per_accelerator, 2.0);
        // The paper prints 32.98; the formula gives 32.997 (rounding in the paper).
        assert!(close(d.k_d, 32.98, 0.02), "{}", d.k_d);
        assert!(close(h.k_d1(2.0), 3.67, 0.005));
        assert!(close(d.shares.hybrid_core_time * d.k_d, 0.55, 0.005));
        assert!(close(d.shares.accelerator_time * d.k_d, 0.45, 0.005));
        // Slip: the paper prints 19.1 for 1 + 3·K_91; K_91 = 6.405, so it is 20.2.
        assert!(close(h.k_d1(9.0), 6.405, 0.001));
        assert!(close(d.k_proportional, 20.2, 0.02));
        // q = 28 > rρ = 17.1: the proportional split (all cores joined) loses to the cores.
        assert!(d.joining_all_cores_slows_down && d.k_proportional < 28.0);
        assert!(h.k_d(18.0) < 28.0, "q* > rρ gives K^D < q");
    }

    #[test]
    fn worked_example_from_measured_times() {
        // T1 = 22.98 s, T_M = 7.05 s, T_S = 2.82 s: φ = 0.307 (the paper rounds to 0.3),
        // ρ = (1 − φ)·T1/T_S = 5.65 (the paper: 5.7).
        let h = Hybrid::from_times(22.98, 7.05, 2.82, 28, 3).unwrap();
        assert!(close(h.phi, 0.3068, 1e-4));
        assert!(close(h.rho, 5.6488, 1e-3));
        assert_eq!(h.decompose().q_star, 6);
    }

    #[test]
    fn table_3_recomputed() {
        // (φ, ρ) → ν*, K^max, best q*, K^D(q*), best multiple of r, K^D there, proportional.
        let rows = [
            (0.1, 7.4, 0.1905, 39.533, 5, 39.518, 6, 39.48, 23.602),
            (0.3, 5.7, 0.2161, 32.997, 6, 32.997, 6, 32.997, 20.213),
            (0.5, 4.07, 0.1806, 30.095, 5, 30.095, 6, 30.046, 17.816),
        ];
        for (phi, rho, nu, kmax, qs, kd, qr, kdr, prop) in rows {
            let d = Hybrid::new(phi, rho, 28, 3).unwrap().decompose();
            assert!(
                close(d.nu_continuous, nu, 1e-4),
                "φ = {phi}: ν {}",
                d.nu_continuous
            );
            assert!(close(d.k_max, kmax, 1e-3), "φ = {phi}: K^max {}", d.k_max);
            assert_eq!((d.q_star, d.q_star_multiple_of_r), (qs, qr), "φ = {phi}");
            assert!(
                close(d.k_d, kd, 1e-3) && close(d.k_d_multiple_of_r, kdr, 1e-2),
                "φ = {phi}"
            );
            assert!(close(d.k_proportional, prop, 1e-3), "φ = {phi}");
        }
        // Slips in the printed table: its ν column has the rows φ = 0.1 and 0.3 swapped
        // (0.216 / 0.19 printed; 0.1905 / 0.2161 computed); its K^D = 38.6 at φ = 0.1 is
        // q* = 3, not the best integer q* = 5 (39.52); its K^max at φ = 0.5 is 30.15, the
        // formula gives 30.095.
        let h = Hybrid::new(0.1, 7.4, 28, 3).unwrap();
        assert!(close(h.k_d(3.0), 38.54, 0.01));
    }

    #[test]
    fn balanced_parts_finish_together() {
        let d = Hybrid::new(0.3, 5.7, 28, 3).unwrap().decompose();
        let h = d.hybrid;
        let homogeneous = f64::from(h.q - d.q_star);
        let work = homogeneous * d.shares.homogeneous_core_work
            + f64::from(h.r) * d.shares.hybrid_group_work;
        assert!(close(work, 1.0, 1e-12), "work shares sum to 1: {work}");
        // A group runs its MIMD part on its cores, then its SIMD part on the accelerator.
        let group_time = d.shares.hybrid_core_time + d.shares.accelerator_time;
        assert!(close(group_time, d.shares.homogeneous_core_work, 1e-12));
    }

    #[test]
    fn limits() {
        let h = Hybrid::new(0.3, 5.7, 1, 1).unwrap();
        let k_q1 = |q: f64| q / (h.phi + (1.0 - h.phi) * q / h.rho);
        assert!(close(k_q1(1e9), h.k_q1_limit(), 1e-6));
        assert!(close(h.k_1r(1e9), h.k_1r_limit(), 1e-6));
        assert!(close(h.k_11(), h.k_d1(1.0), 1e-12));
        assert!(close(h.k_qq(1.0), h.k_11(), 1e-12));
        // q < ρ: adding the accelerator to q cores gives more than q.
        assert!(k_q1(4.0) >= 4.0);
    }

    #[test]
    fn slow_accelerators_are_flagged() {
        let d = Hybrid::new(0.5, 1.2, 28, 3).unwrap().decompose();
        assert!(d.joining_all_cores_slows_down);
        assert!(
            d.k_d >= 28.0 - 1e-9,
            "the best split never loses to the cores alone"
        );
    }

    #[test]
    fn invalid_inputs() {
        for phi in [0.0, 1.0, -0.1, f64::NAN] {
            assert_eq!(
                Hybrid::new(phi, 2.0, 1, 1)
                    .err()
                    .map(|e| matches!(e, StepanenkoError::Phi(_))),
                Some(true)
            );
        }
        assert_eq!(Hybrid::new(0.5, 0.0, 1, 1), Err(StepanenkoError::Rho(0.0)));
        assert_eq!(Hybrid::new(0.5, 2.0, 0, 1), Err(StepanenkoError::Cores));
        assert_eq!(
            Hybrid::new(0.5, 2.0, 1, 0),
            Err(StepanenkoError::Accelerators)
        );
        assert!(Hybrid::from_times(1.0, 2.0, 1.0, 1, 1).is_err());
    }
}
