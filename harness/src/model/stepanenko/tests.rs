//! Golden tests from the paper (with its slips), laws of the model, invalid inputs.

use super::*;
use proptest::prelude::*;

fn assert_close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: got {got}, want {want} ± {tol}"
    );
}

/// The paper's machine: two 14-core CPUs and three accelerators (§4).
const Q: u32 = 28;
const R: u32 = 3;

fn example() -> Hybrid {
    Hybrid::new(0.3, 5.7, Q, R).expect("valid inputs")
}

#[test]
fn worked_example() {
    let h = example();
    assert_close((1.0 - h.phi) / h.phi, 2.33, 0.005, "(1 − φ)/φ");
    assert!(h.cores_beat_accelerators());
    let d = h.decompose();
    // The paper prints 32.99 (truncated); the formula gives 32.997.
    assert_close(d.k_max, 32.997, 5e-4, "K^max");
    assert_close(d.nu_continuous, 0.216, 5e-4, "ν*");
    assert!(d.k_max_attainable);
    assert_eq!(d.q_star, 6);
    assert_eq!(d.d, Group::CoresPerAccelerator(2.0));
    assert_eq!(d.cores_per_accelerator, 2.0);
    // The paper prints 32.98; the formula gives 32.997 (it rounds the result to 33 next).
    assert_close(d.k_d, 32.98, 0.02, "K^D");
    assert_close(d.k_d, 32.9968, 1e-4, "K^D");
    assert_close(h.k_q1(2.0), 3.67, 0.005, "K_{2,1}");
    // Balancing: 22 lone cores get T1/33 each; the hybrid part takes the other ≈ 11
    // portions (paper prints 11.01; the formula gives 10.997).
    assert_eq!(d.shares.homogeneous_cores, 22);
    assert_close(
        d.shares.hybrid_part_work * d.k_d,
        10.997,
        5e-4,
        "hybrid portions",
    );
    assert_close(
        d.shares.hybrid_core_time * d.k_d,
        0.55,
        0.005,
        "core, ×T1/33",
    );
    assert_close(
        d.shares.accelerator_time * d.k_d,
        0.45,
        0.005,
        "accelerator, ×T1/33",
    );
    assert_close(d.shares.multiplication_core_time, 0.55, 0.005, "core, ×T1");
    assert_close(
        d.shares.multiplication_accelerator_time,
        0.45,
        0.005,
        "accel., ×T1",
    );
}

#[test]
fn proportional_split_slip() {
    let h = example();
    // Paper prints K_{9,1} = 6.05 and 1 + 3·K_{9,1} = 19.1; the formula gives 6.4045 and
    // 20.2.
    assert_close(h.k_q1(9.0), 6.4045, 1e-4, "K_{9,1}");
    assert_close(h.k_proportional(), 20.2, 0.02, "1 + 3·K_{9,1}");
    // Paper prints "1.83 times the proportional split"; the formula gives 33.0/20.2 = 1.63.
    assert_close(h.decompose().k_d / h.k_proportional(), 1.63, 0.005, "ratio");
    // Either way the proportional split is slower than the 28 cores alone: q > rρ = 17.1.
    assert!(h.k_proportional() < 28.0);
    assert_eq!(h.slow_down(), SlowDown::BeyondRRhoCores);
    assert!(h.decompose().joining_all_cores_slows_down);
}

#[test]
fn worked_example_from_measured_times() {
    let h = Hybrid::from_times(22.98, 7.05, 2.82, Q, R).expect("valid times");
    // Paper prints φ = 0.3 and ρ = 5.7; the formula gives φ = 0.3068 and ρ = 5.649 (the
    // paper's ρ comes from the rounded φ: 0.7·22.98/2.82 = 5.704).
    assert_close(h.phi, 0.30679, 1e-5, "φ");
    assert_close(h.rho, 5.64894, 1e-5, "ρ");
    assert_close(0.7 * 22.98 / 2.82, 5.7, 0.005, "ρ from the rounded φ");
    let d = h.decompose();
    assert_eq!((d.q_star, d.d), (6, Group::CoresPerAccelerator(2.0)));
    assert_close(d.k_max, 32.8654, 1e-4, "K^max");
    assert_close(d.k_d, 32.8652, 1e-4, "K^D");
}

/// Table 3 for q = 28, r = 3 (the paper's caption says "r = r").
#[test]
fn table_3_recomputed() {
    // φ, ρ, ν*, K^max, best q*, its K^D, best multiple of r, its K^D, 1 + 3·K_{9,1}
    let rows = [
        (0.1, 7.4, 0.19049, 39.5328, 5, 39.5179, 6, 39.4803, 23.6018),
        (0.3, 5.7, 0.21613, 32.9970, 6, 32.9968, 6, 32.9968, 20.2135),
        (0.5, 4.07, 0.18063, 30.0949, 5, 30.0947, 6, 30.0461, 17.8156),
    ];
    for (phi, rho, nu, k_max, q_star, k_d, q_star_r, k_d_r, k_prop) in rows {
        let d = Hybrid::new(phi, rho, Q, R).expect("valid").decompose();
        let at = format!("φ = {phi}");
        assert_close(d.nu_continuous, nu, 1e-5, &format!("{at}: ν*"));
        assert_close(d.k_max, k_max, 1e-4, &format!("{at}: K^max"));
        assert_eq!(d.q_star, q_star, "{at}: q*");
        assert_close(d.k_d, k_d, 1e-4, &format!("{at}: K^D"));
        assert_eq!(d.q_star_multiple_of_r, q_star_r, "{at}: q* multiple of r");
        assert_close(
            d.k_d_multiple_of_r,
            k_d_r,
            1e-4,
            &format!("{at}: K^D, r | q*"),
        );
        assert_close(
            d.k_proportional,
            k_prop,
            1e-4,
            &format!("{at}: proportional"),
        );
    }
}

#[test]
fn table_3_slips() {
    let h = |phi, rho| Hybrid::new(phi, rho, Q, R).expect("valid");
    let (h1, h3, h5) = (h(0.1, 7.4), h(0.3, 5.7), h(0.5, 4.07));
    // ν: paper prints 0.216 at φ = 0.1 and 0.19 at φ = 0.3; the formula gives 0.1905 and
    // 0.2161 (the rows are swapped).
    assert_close(h1.nu_optimal(), 0.1905, 5e-5, "ν*(0.1)");
    assert_close(h3.nu_optimal(), 0.2161, 5e-5, "ν*(0.3)");
    assert_close(h5.nu_optimal(), 0.18, 0.005, "ν*(0.5), printed right");
    // K^D at φ = 0.1: paper prints 38.6; the formula gives 38.54 at q* = 3 (the nearest
    // whole q*), 39.52 at the best q* = 5 and 39.48 at the best multiple of r, q* = 6.
    assert_close(h1.k_d(3), 38.54, 0.005, "K^D(q* = 3)");
    assert_close(h1.k_d(5), 39.52, 0.005, "K^D(q* = 5)");
    assert_close(h1.k_d(6), 39.48, 0.005, "K^D(q* = 6)");
    let nearest = (0..=Q).min_by(|&a, &b| {
        (h1.k_d(a) - 38.6)
            .abs()
            .total_cmp(&(h1.k_d(b) - 38.6).abs())
    });
    assert_eq!(nearest, Some(3));
    // K^max at φ = 0.5: paper prints 30.15; the formula gives 30.095.
    assert_close(h5.k_max(), 30.095, 5e-4, "K^max(0.5)");
    // K^D at φ = 0.5: paper prints 30.05, which is the best multiple of r (q* = 6); the
    // best whole q* = 5 gives 30.095.
    assert_close(h5.k_d(6), 30.05, 0.005, "K^D(0.5, q* = 6)");
    // Proportional at φ = 0.1: paper prints 23.7; the formula gives 23.60. At φ = 0.5 it
    // prints 17.8, which the formula confirms.
    assert_close(h1.k_proportional(), 23.60, 0.005, "proportional(0.1)");
    assert_close(h5.k_proportional(), 17.8, 0.05, "proportional(0.5)");
}

#[test]
fn table_1_slip_t_hat_qr() {
    let h = example();
    let (q, r) = (f64::from(Q), f64::from(R));
    let mu = q / r;
    // Paper prints T̂_{q,r} = T1·φ/μ + T1(1 − φ)/ρ; the formula gives r times less, and
    // only then do the two modes agree on K_{q,r}.
    let printed = h.phi / mu + (1.0 - h.phi) / h.rho;
    let t_hat = h.t_qr_over_t1(Mode::Division, q, r);
    assert_close(printed / t_hat, r, 1e-12, "T̂ printed / T̂");
    let k_div = speedup_from_time(Mode::Division, q, r, t_hat);
    let t_tilde = h.t_qr_over_t1(Mode::Multiplication, q, r);
    assert_close(
        t_tilde,
        h.phi + (1.0 - h.phi) * mu / h.rho,
        1e-12,
        "T̃_{q,r}",
    );
    let k_mul = speedup_from_time(Mode::Multiplication, q, r, t_tilde);
    assert_close(k_div, k_mul, 1e-12, "K_{q,r} in both modes");
    assert_close(k_div, r * h.k_q1(mu), 1e-12, "K_{q,r} = r·K_{μ,1}");
    assert_close(k_div, h.k_d_nu(1.0), 1e-12, "K_{q,r} = K^D(ν = 1)");
}

#[test]
fn tables_1_and_2_agree() {
    let h = example();
    let k = |mode, q: f64, r: f64| speedup_from_time(mode, q, r, h.t_qr_over_t1(mode, q, r));
    for mode in [Mode::Division, Mode::Multiplication] {
        for n in [1.0, 2.0, 9.0, 28.0] {
            assert_close(k(mode, n, 1.0), h.k_q1(n), 1e-12, "K_{q,1}");
            assert_close(k(mode, 1.0, n), h.k_1r(n), 1e-12, "K_{1,r}");
            assert_close(k(mode, n, n), h.k_qq(n), 1e-12, "K_{q,q}");
            assert_close(
                k(mode, 3.0 * n, 3.0),
                h.k_qr(3.0 * n, 3.0),
                1e-12,
                "K_{q,r}",
            );
            assert_close(k(mode, 2.0, 2.0 * n), h.k_qr(2.0, 2.0 * n), 1e-12, "q < r");
        }
        assert_close(
            h.t_11_over_t1(),
            h.t_qr_over_t1(mode, 1.0, 1.0),
            1e-12,
            "T_11",
        );
    }
    let (q, r, phi, rho) = (9.0, 4.0, h.phi, h.rho);
    let t = |mode, q, r| h.t_qr_over_t1(mode, q, r);
    assert_close(
        t(Mode::Multiplication, q, 1.0),
        phi + (1.0 - phi) * q / rho,
        1e-12,
        "T̃q1",
    );
    assert_close(
        t(Mode::Division, q, 1.0),
        phi / q + (1.0 - phi) / rho,
        1e-12,
        "T̂q1",
    );
    assert_close(
        t(Mode::Multiplication, 1.0, r),
        phi * r + (1.0 - phi) / rho,
        1e-12,
        "T̃1r",
    );
    assert_close(
        t(Mode::Division, 1.0, r),
        phi + (1.0 - phi) / (r * rho),
        1e-12,
        "T̂1r",
    );
    assert_close(
        h.t_q1_over_t1(Mode::Division, q),
        t(Mode::Division, q, 1.0),
        0.0,
        "q1",
    );
    assert_close(
        h.t_1r_over_t1(Mode::Division, r),
        t(Mode::Division, 1.0, r),
        0.0,
        "1r",
    );
    assert_close(h.k_11(), 1.0 / h.t_11_over_t1(), 1e-12, "K_11");
    assert_close(h.k_11(), h.k_q1(1.0), 1e-12, "K_11 = K_{1,1}");
    // Fig. 2: paper prints K_{q,1} = 1/(φ + (1 − φ)q/ρ) = T1/T̃_{q,1}; the formula gives q
    // times that, as Table 2 prints it.
    let fig_2 = 1.0 / (phi + (1.0 - phi) * q / rho);
    assert_close(
        fig_2,
        1.0 / t(Mode::Multiplication, q, 1.0),
        1e-12,
        "Fig. 2",
    );
    assert_close(h.k_q1(q), q * fig_2, 1e-12, "K_{q,1} = q·Fig. 2");
    // K_{q,1} ≥ q exactly when q ≤ ρ.
    assert!(h.k_q1(5.0) >= 5.0 && h.k_q1(6.0) < 6.0);
}

#[test]
fn limits() {
    let h = example();
    assert_close(h.k_q1_limit(), 5.7 / 0.7, 1e-12, "ρ/(1 − φ)");
    assert_close(h.k_1r_limit(), 1.0 / 0.3, 1e-12, "1/φ");
    let mut previous = (0.0, 0.0);
    for n in [1e1, 1e3, 1e5, 1e7] {
        let (kq, kr) = (h.k_q1(n), h.k_1r(n));
        assert!(
            kq > previous.0 && kq < h.k_q1_limit(),
            "K_q1 rises to its limit"
        );
        assert!(
            kr > previous.1 && kr < h.k_1r_limit(),
            "K_1r rises to its limit"
        );
        previous = (kq, kr);
    }
    assert_close(h.k_q1(1e9), h.k_q1_limit(), 1e-6, "K_q1, q = 1e9");
    assert_close(h.k_1r(1e9), h.k_1r_limit(), 1e-6, "K_1r, r = 1e9");
}

#[test]
fn balanced_parts_finish_together() {
    for (phi, rho, q, r) in [(0.3, 5.7, 28, 3), (0.1, 7.4, 28, 3), (0.2, 40.0, 2, 8)] {
        let h = Hybrid::new(phi, rho, q, r).expect("valid");
        for q_star in 0..=q {
            check_shares(&h, q_star);
        }
    }
}

fn check_shares(h: &Hybrid, q_star: u32) {
    let s = h.shares(q_star);
    let k_d = h.k_d(q_star);
    let at = format!("{h:?}, q* = {q_star}");
    let work = f64::from(s.homogeneous_cores) * s.homogeneous_core_work
        + f64::from(s.hybrid_cores) * s.hybrid_core_work
        + f64::from(h.r) * s.accelerator_work;
    assert_close(work, 1.0, 1e-9, &format!("{at}: work sums to 1"));
    let parts = f64::from(s.homogeneous_cores) * s.homogeneous_core_work + s.hybrid_part_work;
    assert_close(parts, 1.0, 1e-9, &format!("{at}: parts sum to 1"));
    assert_close(
        f64::from(s.groups) * s.hybrid_group_work,
        s.hybrid_part_work,
        1e-9,
        &format!("{at}: groups"),
    );
    assert_close(
        s.homogeneous_core_work,
        1.0 / k_d,
        1e-12,
        &format!("{at}: lone core"),
    );
    if q_star > 0 {
        // Within a group the cores run the MIMD part, then the accelerators the SIMD
        // part: the group finishes with the lone cores, at T1/K^D.
        let group_time = s.hybrid_core_time + s.accelerator_time;
        assert_close(
            group_time,
            1.0 / k_d,
            1e-9,
            &format!("{at}: finish together"),
        );
        let mult = s.multiplication_core_time + s.multiplication_accelerator_time;
        assert_close(mult, 1.0, 1e-9, &format!("{at}: multiplication, T1"));
    }
    if let Group::CoresPerAccelerator(d) = h.group(q_star) {
        // §3's formulas, in the paper's form.
        let k_d1 = h.k_q1(d);
        let want_core = k_d1 / d * h.phi / k_d;
        assert_close(s.hybrid_core_time, want_core, 1e-12, &format!("{at}: core"));
        let want_acc = k_d1 * (1.0 - h.phi) / h.rho / k_d;
        assert_close(
            s.accelerator_time,
            want_acc,
            1e-12,
            &format!("{at}: accelerator"),
        );
        assert_close(
            s.hybrid_group_work,
            k_d1 / k_d,
            1e-12,
            &format!("{at}: group"),
        );
    }
}

#[test]
fn accelerators_slow_down_beyond_r_rho_cores() {
    let h = example(); // rρ = 17.1
    for q_star in 1..=Q {
        let slower = h.k_d(q_star) < f64::from(Q);
        assert_eq!(slower, f64::from(q_star) > 17.1, "q* = {q_star}");
    }
    let slow = |phi, rho, q, r| Hybrid::new(phi, rho, q, r).expect("valid").slow_down();
    assert_eq!(slow(0.3, 5.7, 17, 3), SlowDown::Never);
    assert_eq!(slow(0.3, 0.5, 4, 2), SlowDown::Always);
    let h = Hybrid::new(0.3, 0.5, 4, 2).expect("valid");
    let d = h.decompose();
    assert_eq!((d.q_star, d.d, d.k_d), (0, Group::NoHybridPart, 4.0));
    assert_eq!(d.accelerators_slow_down, SlowDown::Always);
}

#[test]
fn more_accelerators_than_cores() {
    // Fig. 5: q < r and ρ < (1 − φ)/φ.
    let h = Hybrid::new(0.6, 0.5, 2, 8).expect("valid");
    assert!(!h.cores_beat_accelerators());
    let h = Hybrid::new(0.2, 40.0, 2, 8).expect("valid");
    let d = h.decompose();
    assert_eq!(d.q_star, 2);
    assert_eq!(d.d, Group::AcceleratorsPerCore(4.0));
    assert_close(d.k_d, 2.0 * h.k_1r(4.0), 1e-12, "q*·K_{1,d}");
    assert_close(d.k_proportional, 2.0 * h.k_1r(4.0), 1e-12, "proportional");
    assert!(!d.k_max_attainable, "ν* > 1: all cores join");
    assert!(d.k_max > d.k_d);
    assert_eq!(d.q_star_multiple_of_r, 0);
    let h = Hybrid::new(0.2, 40.0, 3, 8).expect("valid");
    // 8 = 2·3 + 2: two accelerators per core, two idle.
    assert_close(
        h.k_proportional(),
        3.0 * h.k_1r(2.0),
        1e-12,
        "leftover idle",
    );
}

#[test]
fn invalid_inputs() {
    for phi in [0.0, 1.0, -0.1, 1.2, f64::NAN, f64::INFINITY] {
        let err = Hybrid::new(phi, 2.0, 1, 1).expect_err("bad φ");
        assert!(matches!(err, StepanenkoError::Phi(_)), "{err}");
    }
    assert_eq!(
        Hybrid::new(1.2, 5.7, 28, 3).expect_err("bad φ").to_string(),
        "phi must lie in (0, 1), got 1.2"
    );
    for rho in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let err = Hybrid::new(0.5, rho, 1, 1).expect_err("bad ρ");
        assert!(matches!(err, StepanenkoError::Rho(_)), "{err}");
    }
    assert_eq!(Hybrid::new(0.5, 2.0, 0, 1), Err(StepanenkoError::Cores(0)));
    assert_eq!(
        Hybrid::new(0.5, 2.0, 1, 0),
        Err(StepanenkoError::Accelerators(0))
    );
    assert_eq!(
        StepanenkoError::Accelerators(0).to_string(),
        "r (accelerators) must be at least 1, got 0"
    );
    for (t1, tm, ts) in [
        (1.0, 2.0, 1.0),
        (1.0, 1.0, 1.0),
        (1.0, 0.0, 1.0),
        (1.0, 0.5, 0.0),
        (-1.0, -0.5, 1.0),
        (f64::NAN, 0.5, 1.0),
        (f64::INFINITY, 0.5, 1.0),
        (1.0, 0.5, f64::INFINITY),
    ] {
        let err = Hybrid::from_times(t1, tm, ts, 1, 1).expect_err("bad times");
        assert!(matches!(err, StepanenkoError::Times { .. }), "{err}");
    }
    assert!(matches!(
        Hybrid::from_times(1.0, 0.5, 1.0, 0, 1),
        Err(StepanenkoError::Cores(0))
    ));
}

proptest! {
    #[test]
    fn decomposition_laws(
        phi in 0.01f64..0.99,
        rho in 0.05f64..200.0,
        q in 1u32..80,
        r in 1u32..12,
    ) {
        let h = Hybrid::new(phi, rho, q, r).expect("valid");
        let d = h.decompose();
        let eps = 1e-9 * d.k_max.max(1.0);
        // The best split never loses to the cores alone, nor beats K^max.
        prop_assert!(d.k_d >= f64::from(q) - eps);
        prop_assert!(d.k_d <= d.k_max + eps);
        prop_assert!(d.k_d_multiple_of_r <= d.k_d + eps);
        prop_assert!((0..=q).all(|s| h.k_d(s) <= d.k_d + eps));
        // K^max is K^D at ν*, and ν* is a stationary point.
        let nu = d.nu_continuous;
        prop_assert!((h.k_d_nu(nu) - d.k_max).abs() <= eps);
        let step = 1e-4 * nu;
        prop_assert!(h.k_d_nu(nu + step) <= d.k_max + eps);
        prop_assert!(h.k_d_nu(nu - step) <= d.k_max + eps);
        // The best whole q* is one of the two neighbours of ν*·q (or q when ν* > 1).
        let x = nu * f64::from(q);
        let floor = (x.floor().min(f64::from(q))) as u32;
        let ceil = (x.ceil().min(f64::from(q))) as u32;
        prop_assert!((h.k_d(floor).max(h.k_d(ceil)) - d.k_d).abs() <= eps);
        // Slower than the cores alone exactly beyond rρ cores.
        let rr = f64::from(r) * rho;
        prop_assert_eq!(d.joining_all_cores_slows_down, f64::from(q) > rr);
        prop_assert!(f64::from(d.q_star) <= rr);
        for s in 0..=q {
            check_shares(&h, s);
        }
    }
}
