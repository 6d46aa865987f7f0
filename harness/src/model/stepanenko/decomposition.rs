//! §2 (decomposition into a homogeneous and a hybrid part) and §3 (balancing) of the paper.

use serde::Serialize;

use super::Hybrid;

impl Hybrid {
    /// K^D(ν) = q − νq + νq/(φ + (1 − φ)·νq/(rρ)) (§2), with ν = q*/q the share of cores
    /// joined to the accelerators; real ν, so ν·q may be fractional. K^D(0) = q.
    pub fn k_d_nu(&self, nu: f64) -> f64 {
        let q = f64::from(self.q);
        let joined = nu * q;
        q - joined + self.hybrid_part_speedup(joined)
    }

    /// K^D at a whole number q* = νq ≤ q of cores joined to the accelerators (§2):
    /// K^D = q − q* + r·K_{d,1}, d = q*/r (or q − q* + q*·K_{1,d}, d = r/q*, when q* < r).
    ///
    /// ```
    /// use harness::model::stepanenko::Hybrid;
    /// let h = Hybrid::new(0.3, 5.7, 28, 3)?;
    /// // The paper's example: q* = 6 cores, two per accelerator (it prints 32.98).
    /// assert!((h.k_d(6) - 32.997).abs() < 1e-3);
    /// assert_eq!(h.k_d(0), 28.0); // no core joined: the accelerators idle
    /// # Ok::<(), harness::model::stepanenko::StepanenkoError>(())
    /// ```
    pub fn k_d(&self, q_star: u32) -> f64 {
        self.k_d_nu(f64::from(q_star) / f64::from(self.q))
    }

    /// The hybrid part's speed-up νq/(φ + (1 − φ)·νq/(rρ)) = r·K_{d,1} (§2, §3).
    fn hybrid_part_speedup(&self, joined_cores: f64) -> f64 {
        let rr = f64::from(self.r) * self.rho;
        joined_cores / (self.phi + (1.0 - self.phi) * joined_cores / rr)
    }

    /// The continuous optimum ν* = rρ·√φ/(q(1 + √φ)) (Appendix A). Above 1 it cannot be
    /// reached (q* ≤ q) and the best split joins every core.
    pub fn nu_optimal(&self) -> f64 {
        let s = self.phi.sqrt();
        f64::from(self.r) * self.rho * s / (f64::from(self.q) * (1.0 + s))
    }

    /// K^max = q + rρ(1 − √φ)/(1 + √φ), K^D at ν* (Appendix B); an upper bound of K^D at any
    /// q*, reached only when ν* ≤ 1.
    pub fn k_max(&self) -> f64 {
        let s = self.phi.sqrt();
        f64::from(self.q) + f64::from(self.r) * self.rho * (1.0 - s) / (1.0 + s)
    }

    /// The whole q* ∈ 0..=q with the largest K^D (the smallest on a tie).
    pub fn best_q_star(&self) -> u32 {
        self.best_of(0..=self.q)
    }

    /// The multiple of r in 0..=q with the largest K^D: the best split into r equal groups of
    /// whole cores (0 when r > q).
    pub fn best_q_star_multiple_of_r(&self) -> u32 {
        self.best_of((0..=self.q).step_by(self.r as usize))
    }

    fn best_of(&self, candidates: impl Iterator<Item = u32>) -> u32 {
        let mut best = 0;
        let mut best_k = self.k_d(0);
        for q_star in candidates {
            let k = self.k_d(q_star);
            if k > best_k {
                (best, best_k) = (q_star, k);
            }
        }
        best
    }

    /// The shape of the hybrid groups when q* cores join the accelerators (§2, Figs. 4, 5).
    pub fn group(&self, q_star: u32) -> Group {
        let (joined, r) = (f64::from(q_star), f64::from(self.r));
        if q_star == 0 {
            Group::NoHybridPart
        } else if q_star >= self.r {
            Group::CoresPerAccelerator(joined / r)
        } else {
            Group::AcceleratorsPerCore(r / joined)
        }
    }

    /// The paper's "proportional" split (§4, Table 3's last column): ⌊q/r⌋ cores per
    /// accelerator and the q mod r leftover cores alone, K = (q mod r) + r·K_{⌊q/r⌋,1}
    /// (1 + 3·K_{9,1} for q = 28, r = 3). When q < r: ⌊r/q⌋ accelerators per core and the
    /// leftover accelerators idle, K = q·K_{1,⌊r/q⌋}.
    pub fn k_proportional(&self) -> f64 {
        let (q, r) = (self.q, self.r);
        if q >= r {
            f64::from(q % r) + f64::from(r) * self.k_q1(f64::from(q / r))
        } else {
            f64::from(q) * self.k_1r(f64::from(r / q))
        }
    }

    /// Whether and when the accelerators slow the element down (§2): K^D(q*) < q exactly when
    /// q* > rρ, so joining all q cores (ν = 1) is slower than the cores alone when q > rρ.
    pub fn slow_down(&self) -> SlowDown {
        let rr = f64::from(self.r) * self.rho;
        if f64::from(self.q) <= rr {
            SlowDown::Never
        } else if rr <= 1.0 {
            SlowDown::Always
        } else {
            SlowDown::BeyondRRhoCores
        }
    }

    // ---- §3: balancing ----

    /// The balanced shares when q* cores join the accelerators (§3), so that every part
    /// finishes together at T1/K^D (division mode) or T1 (multiplication mode). A q* above q
    /// is taken as q.
    pub fn shares(&self, q_star: u32) -> Shares {
        let q_star = q_star.min(self.q);
        let joined = f64::from(q_star);
        let k_d = self.k_d(q_star);
        let hybrid_part_work = self.hybrid_part_speedup(joined) / k_d;
        let groups = match self.group(q_star) {
            Group::CoresPerAccelerator(_) => self.r,
            Group::AcceleratorsPerCore(_) => q_star,
            Group::NoHybridPart => 0,
        };
        let per = |total: f64, n: u32| if n == 0 { 0.0 } else { total / f64::from(n) };
        let hybrid_core_work = per(hybrid_part_work * self.phi, q_star);
        let accelerator_work = per(hybrid_part_work * (1.0 - self.phi), self.r);
        let accelerator_time = accelerator_work / self.rho;
        Shares {
            homogeneous_cores: self.q - q_star,
            hybrid_cores: q_star,
            groups,
            homogeneous_core_work: 1.0 / k_d,
            hybrid_part_work,
            hybrid_group_work: per(hybrid_part_work, groups),
            hybrid_core_work,
            accelerator_work,
            hybrid_core_time: hybrid_core_work,
            accelerator_time,
            multiplication_core_time: hybrid_core_work * k_d,
            multiplication_accelerator_time: accelerator_time * k_d,
        }
    }

    /// The recommended decomposition: the best whole q*, beside the continuous optimum, the
    /// best multiple of r and the proportional split, with the balancing shares at q*.
    pub fn decompose(&self) -> Decomposition {
        let q_star = self.best_q_star();
        let q_star_r = self.best_q_star_multiple_of_r();
        let nu_continuous = self.nu_optimal();
        let slow_down = self.slow_down();
        Decomposition {
            hybrid: *self,
            nu_continuous,
            k_max: self.k_max(),
            k_max_attainable: nu_continuous <= 1.0,
            q_star,
            nu: f64::from(q_star) / f64::from(self.q),
            d: self.group(q_star),
            cores_per_accelerator: f64::from(q_star) / f64::from(self.r),
            k_d: self.k_d(q_star),
            q_star_multiple_of_r: q_star_r,
            k_d_multiple_of_r: self.k_d(q_star_r),
            k_proportional: self.k_proportional(),
            cores_beat_accelerators: self.cores_beat_accelerators(),
            accelerators_slow_down: slow_down,
            joining_all_cores_slows_down: slow_down != SlowDown::Never,
            shares: self.shares(q_star),
        }
    }
}

/// The hybrid groups' shape (§2): d cores per accelerator (Fig. 4) or d accelerators per core
/// (Fig. 5). d is fractional when the groups cannot all be equal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "shape", content = "value", rename_all = "snake_case")]
pub enum Group {
    /// q* ≥ r: r groups, each of d = q*/r cores and one accelerator; a group's speed-up is
    /// K_{d,1}.
    CoresPerAccelerator(f64),
    /// 0 < q* < r: q* groups, each of one core and d = r/q* accelerators; a group's speed-up
    /// is K_{1,d}.
    AcceleratorsPerCore(f64),
    /// q* = 0: every core works alone and the accelerators idle.
    NoHybridPart,
}

/// The paper's warning (§2): K^D(q*) < q whenever q* > rρ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlowDown {
    /// q ≤ rρ: no split is slower than the q cores alone, not even all cores joined (ν = 1).
    Never,
    /// 1 < rρ < q: joining more than rρ cores (all of them, or the proportional split) is
    /// slower than the cores alone; the best q* ≤ rρ still beats them.
    BeyondRRhoCores,
    /// rρ ≤ 1: the accelerators together are no faster than one core on the SIMD fragment;
    /// joining any core slows the element down, and the best q* is 0.
    Always,
}

/// The balanced distribution of the work at a given q* (§3). "Work" is a fraction of the
/// whole process, measured as one core would run it (the accelerator's SIMD work counts at
/// core speed); "time" is a busy time as a multiple of T1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shares {
    /// q − q*: cores working alone.
    pub homogeneous_cores: u32,
    /// q*: cores in the hybrid part.
    pub hybrid_cores: u32,
    /// Hybrid groups: r (d cores per accelerator), q* (d accelerators per core) or 0.
    pub groups: u32,
    /// Division: the work of each lone core, 1/K^D; it takes T1/K^D.
    pub homogeneous_core_work: f64,
    /// Division: the hybrid part's work, (νq/(φ + (1 − φ)·νq/(rρ)))/K^D.
    pub hybrid_part_work: f64,
    /// Division: the work of each hybrid group, the hybrid part's split evenly; K_{d,1}/K^D
    /// for d cores per accelerator.
    pub hybrid_group_work: f64,
    /// Division: the MIMD work of each hybrid core, (K_{d,1}/d)·φ/K^D.
    pub hybrid_core_work: f64,
    /// Division: the SIMD work of each accelerator at core speed, K_{d,1}·(1 − φ)/K^D.
    pub accelerator_work: f64,
    /// Division: the busy time of each hybrid core, (T1/K^D)·(K_{d,1}/d)·φ, in T1
    /// (the paper's 0.55·T1/33).
    pub hybrid_core_time: f64,
    /// Division: the busy time of each accelerator, (T1/K^D)·K_{d,1}·(1 − φ)/ρ, in T1
    /// (the paper's 0.45·T1/33). Core time plus accelerator time is T1/K^D.
    pub accelerator_time: f64,
    /// Multiplication: the busy time of each hybrid core, (K_{d,1}/d)·φ·T1, in T1.
    pub multiplication_core_time: f64,
    /// Multiplication: the busy time of each accelerator, K_{d,1}·(1 − φ)·T1/ρ, in T1; with
    /// the core's it adds up to T1.
    pub multiplication_accelerator_time: f64,
}

/// The recommended decomposition of the element for one process (§2–§4). In JSON the inputs
/// φ, ρ, q, r sit at the top level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Decomposition {
    /// The inputs φ, ρ, q, r.
    #[serde(flatten)]
    pub hybrid: Hybrid,
    /// ν* = rρ·√φ/(q(1 + √φ)), the continuous optimum (Appendix A).
    pub nu_continuous: f64,
    /// K^max = q + rρ(1 − √φ)/(1 + √φ) (Appendix B).
    pub k_max: f64,
    /// ν* ≤ 1: K^max can be approached; above 1 it is out of reach (q* ≤ q).
    pub k_max_attainable: bool,
    /// The best whole number of cores joined to the accelerators (searched over 0..=q).
    pub q_star: u32,
    /// ν = q*/q at that q*.
    pub nu: f64,
    /// The groups' shape at q*: d = q*/r cores per accelerator, or d = r/q* accelerators per
    /// core when r > q*.
    pub d: Group,
    /// q*/r (below 1 when r > q*: then 1/d accelerators per core); kept beside `d` for tables.
    pub cores_per_accelerator: f64,
    /// K^D at q*.
    pub k_d: f64,
    /// The best q* among the multiples of r (equal groups of whole cores).
    pub q_star_multiple_of_r: u32,
    /// K^D there.
    pub k_d_multiple_of_r: f64,
    /// The proportional split's speed-up, (q mod r) + r·K_{⌊q/r⌋,1}.
    pub k_proportional: f64,
    /// ρ > (1 − φ)/φ: add cores rather than accelerators (Table 2).
    pub cores_beat_accelerators: bool,
    /// The paper's warning: when joining cores to the accelerators makes things slower.
    pub accelerators_slow_down: SlowDown,
    /// q > rρ: joining all q cores (ν = 1) is slower than the cores alone; the same as
    /// `accelerators_slow_down != SlowDown::Never`.
    pub joining_all_cores_slows_down: bool,
    /// The balancing shares at q*.
    pub shares: Shares,
}
