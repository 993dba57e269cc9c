//! Every integrator against every analytic model, each pair with its own
//! tolerance, stepped the way a lockstep harness steps: fixed intervals of
//! integer microseconds with the system held.

use lockstep_plant::integrate::{
    ErrorGroup, GroupKind, Integrator, IntegratorError, Method, Options, StepStart, System,
};

const ALL: [Method; 4] = [Method::Euler, Method::Rk4, Method::Bs32, Method::Dp54];

/// Options per method: Euler 50 us, RK4 1 ms, adaptive up to the interval.
fn options(method: Method, interval: u64) -> Options {
    Options {
        max_step_ticks: match method {
            Method::Euler => 50,
            Method::Rk4 => 1000,
            _ => interval,
        },
        ..Options::default()
    }
}

/// Integrates `x` over `duration` ticks in intervals of `interval` ticks.
fn run<S: System>(
    sys: &S,
    method: Method,
    x: &mut [f64],
    interval: u64,
    duration: u64,
) -> Integrator {
    let mut integ = Integrator::new(method, sys.dim(), options(method, interval)).unwrap();
    let mut t = 0;
    while t < duration {
        let dt = interval.min(duration - t);
        integ.step_interval(sys, t, dt, x).unwrap();
        t += dt;
    }
    integ
}

fn tol(method: Method, euler: f64, rk4: f64, bs: f64, dp: f64) -> f64 {
    match method {
        Method::Euler => euler,
        Method::Rk4 => rk4,
        Method::Bs32 => bs,
        Method::Dp54 => dp,
    }
}

fn groups(atol: f64) -> [ErrorGroup; 1] {
    [ErrorGroup {
        name: "all",
        start: 0,
        len: 0,
        kind: GroupKind::Vector { atol, rtol: atol },
    }]
}

// ---- Simple harmonic oscillator ------------------------------------------

struct Sho {
    omega: f64,
    groups: [ErrorGroup; 1],
}
impl Sho {
    fn new(omega: f64) -> Self {
        let mut g = groups(1e-9);
        g[0].len = 2;
        Sho { omega, groups: g }
    }
    fn energy(&self, x: &[f64]) -> f64 {
        0.5 * x[1] * x[1] + 0.5 * self.omega * self.omega * x[0] * x[0]
    }
}
impl System for Sho {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = -self.omega * self.omega * x[0];
    }
    fn error_groups(&self) -> &[ErrorGroup] {
        &self.groups
    }
}

#[test]
fn sho_energy_stays_in_band_over_ten_periods() {
    let sho = Sho::new(2.0 * std::f64::consts::PI); // 1 Hz
    for m in ALL {
        let mut x = [1.0, 0.0];
        let e0 = sho.energy(&x);
        let mut worst = 0.0f64;
        let mut integ = Integrator::new(m, 2, options(m, 4000)).unwrap();
        for k in 0..2500u64 {
            integ.step_interval(&sho, k * 4000, 4000, &mut x).unwrap();
            worst = worst.max((sho.energy(&x) / e0 - 1.0).abs());
        }
        let band = tol(m, 0.03, 1e-9, 5e-7, 1e-8);
        assert!(
            worst < band,
            "{m:?}: energy deviation {worst:e} over 10 periods, band {band:e}"
        );
        // After exactly 10 periods (10 s) the state is back at (1, 0).
        let pos_tol = tol(m, 0.03, 1e-8, 1e-6, 1e-7);
        assert!(
            (x[0] - 1.0).abs() < pos_tol && x[1].abs() < 2.0 * std::f64::consts::PI * pos_tol,
            "{m:?}: {x:?}"
        );
    }
}

// ---- Pendulum ----------------------------------------------------------------

struct Pendulum {
    w0: f64,
    groups: [ErrorGroup; 1],
}
impl System for Pendulum {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = -self.w0 * self.w0 * x[0].sin();
    }
    fn error_groups(&self) -> &[ErrorGroup] {
        &self.groups
    }
}

/// Complete elliptic integral of the first kind K(k) by the AGM.
fn ellip_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    for _ in 0..40 {
        let (an, bn) = (0.5 * (a + b), (a * b).sqrt());
        a = an;
        b = bn;
    }
    std::f64::consts::PI / (2.0 * a)
}

#[test]
fn pendulum_returns_to_its_release_angle_after_exact_periods_small_and_large() {
    let w0 = 3.0;
    for theta0 in [0.05f64, 2.5] {
        let mut g = groups(1e-10);
        g[0].len = 2;
        let p = Pendulum { w0, groups: g };
        let period = 4.0 * ellip_k((theta0 / 2.0).sin()) / w0;
        let n = 5.0;
        let ticks = (n * period * 1e6).round() as u64;
        for m in ALL {
            let mut x = [theta0, 0.0];
            run(&p, m, &mut x, 4000, ticks);
            let t = tol(m, 0.06, 1e-7, 1e-6, 1e-7) * theta0.max(0.5);
            assert!(
                (x[0] - theta0).abs() < t,
                "{m:?} theta0 {theta0}: theta {} after {n} periods",
                x[0]
            );
            let e = |x: &[f64]| 0.5 * x[1] * x[1] - w0 * w0 * x[0].cos();
            let e0 = e(&[theta0, 0.0]);
            assert!(
                (e(&x) - e0).abs() < tol(m, 0.5, 1e-6, 1e-5, 1e-6) * w0 * w0,
                "{m:?} energy"
            );
        }
    }
}

// ---- Circular Kepler orbit -----------------------------------------------------

struct Kepler {
    groups: [ErrorGroup; 1],
}
impl System for Kepler {
    fn dim(&self) -> usize {
        4
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        let r3 = (x[0] * x[0] + x[1] * x[1]).powf(1.5);
        dx[0] = x[2];
        dx[1] = x[3];
        dx[2] = -x[0] / r3;
        dx[3] = -x[1] / r3;
    }
    fn error_groups(&self) -> &[ErrorGroup] {
        &self.groups
    }
}

#[test]
fn kepler_circular_orbit_keeps_energy_and_angular_momentum() {
    let mut g = groups(1e-10);
    g[0].len = 4;
    let k = Kepler { groups: g };
    let ticks = (3.0 * 2.0 * std::f64::consts::PI * 1e6).round() as u64;
    let t_end = ticks as f64 * 1e-6;
    for m in ALL {
        let mut x = [1.0, 0.0, 0.0, 1.0];
        run(&k, m, &mut x, 4000, ticks);
        let energy = 0.5 * (x[2] * x[2] + x[3] * x[3]) - 1.0 / (x[0] * x[0] + x[1] * x[1]).sqrt();
        let h = x[0] * x[3] - x[1] * x[2];
        let t = tol(m, 2e-3, 1e-10, 1e-7, 1e-8);
        assert!((energy + 0.5).abs() < t, "{m:?}: energy {energy}");
        assert!((h - 1.0).abs() < t, "{m:?}: angular momentum {h}");
        let tp = tol(m, 0.05, 1e-8, 1e-5, 1e-6);
        assert!(
            (x[0] - t_end.cos()).abs() < tp && (x[1] - t_end.sin()).abs() < tp,
            "{m:?}: after 3 orbits {x:?}, analytic ({}, {})",
            t_end.cos(),
            t_end.sin()
        );
    }
}

// ---- Torque-free asymmetric rigid body -----------------------------------

struct FreeBody {
    inertia: [f64; 3],
    groups: [ErrorGroup; 2],
}
impl FreeBody {
    fn new() -> Self {
        FreeBody {
            inertia: [1.0, 2.0, 3.0],
            groups: [
                ErrorGroup {
                    name: "attitude",
                    start: 0,
                    len: 4,
                    kind: GroupKind::Quaternion { atol_rad: 1e-10 },
                },
                ErrorGroup {
                    name: "rates",
                    start: 4,
                    len: 3,
                    kind: GroupKind::Vector {
                        atol: 1e-10,
                        rtol: 1e-10,
                    },
                },
            ],
        }
    }
    fn world_momentum(&self, x: &[f64]) -> [f64; 3] {
        let l = [
            self.inertia[0] * x[4],
            self.inertia[1] * x[5],
            self.inertia[2] * x[6],
        ];
        rotate(&x[0..4], l)
    }
    fn energy(&self, x: &[f64]) -> f64 {
        0.5 * (self.inertia[0] * x[4] * x[4]
            + self.inertia[1] * x[5] * x[5]
            + self.inertia[2] * x[6] * x[6])
    }
}
fn rotate(q: &[f64], v: [f64; 3]) -> [f64; 3] {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    [
        (1.0 - 2.0 * (y * y + z * z)) * v[0]
            + 2.0 * (x * y - w * z) * v[1]
            + 2.0 * (x * z + w * y) * v[2],
        2.0 * (x * y + w * z) * v[0]
            + (1.0 - 2.0 * (x * x + z * z)) * v[1]
            + 2.0 * (y * z - w * x) * v[2],
        2.0 * (x * z - w * y) * v[0]
            + 2.0 * (y * z + w * x) * v[1]
            + (1.0 - 2.0 * (x * x + y * y)) * v[2],
    ]
}
impl System for FreeBody {
    fn dim(&self) -> usize {
        7
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        let (q, w) = (&x[0..4], &x[4..7]);
        dx[0] = -0.5 * (q[1] * w[0] + q[2] * w[1] + q[3] * w[2]);
        dx[1] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]);
        dx[2] = 0.5 * (q[0] * w[1] + q[3] * w[0] - q[1] * w[2]);
        dx[3] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
        let i = self.inertia;
        dx[4] = (i[1] - i[2]) * w[1] * w[2] / i[0];
        dx[5] = (i[2] - i[0]) * w[2] * w[0] / i[1];
        dx[6] = (i[0] - i[1]) * w[0] * w[1] / i[2];
    }
    fn error_groups(&self) -> &[ErrorGroup] {
        &self.groups
    }
    fn project(&self, x: &mut [f64]) {
        let n = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]).sqrt();
        for v in &mut x[0..4] {
            *v /= n;
        }
    }
}

#[test]
fn torque_free_body_conserves_energy_world_momentum_and_unit_quaternion() {
    let b = FreeBody::new();
    for m in ALL {
        // Near the unstable intermediate axis: a demanding tumble.
        let mut x = [1.0, 0.0, 0.0, 0.0, 0.1, 2.0, 0.1];
        let l0 = b.world_momentum(&x);
        let e0 = b.energy(&x);
        run(&b, m, &mut x, 4000, 10_000_000);
        let l = b.world_momentum(&x);
        let dl = ((l[0] - l0[0]).powi(2) + (l[1] - l0[1]).powi(2) + (l[2] - l0[2]).powi(2)).sqrt();
        let t = tol(m, 0.05, 1e-8, 1e-5, 1e-7);
        assert!(dl < t * 4.0, "{m:?}: world angular momentum drift {dl:e}");
        assert!(
            (b.energy(&x) / e0 - 1.0).abs() < t,
            "{m:?}: energy {}",
            b.energy(&x) / e0
        );
        let qn = (x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]).sqrt();
        assert!((qn - 1.0).abs() < 1e-14, "{m:?}: |q| = {qn}");
    }
}

// ---- Long-horizon drift at microsecond quantization -----------------------

#[test]
fn adaptive_long_horizon_has_no_time_drift() {
    // One hour of a 0.5 Hz oscillator in 4 ms intervals: 900 000 intervals.
    // Integer time cannot drift; the phase error after an hour stays at the
    // integration tolerance, which f64 time accumulation would not give.
    let sho = Sho::new(std::f64::consts::PI);
    for m in [Method::Bs32, Method::Dp54] {
        let mut x = [1.0, 0.0];
        let mut integ = Integrator::new(m, 2, options(m, 4000)).unwrap();
        let mut t: u64 = 0;
        let interval = 4000;
        for _ in 0..900_000 {
            integ.step_interval(&sho, t, interval, &mut x).unwrap();
            t += interval;
        }
        assert_eq!(t, 3_600_000_000);
        // cos(pi * 3600) = 1.
        let tolerance = if m == Method::Dp54 { 1e-4 } else { 1e-3 };
        assert!(
            (x[0] - 1.0).abs() < tolerance && x[1].abs() < 4.0 * tolerance,
            "{m:?}: {x:?}"
        );
        let s = integ.total_stats();
        assert!(
            s.accepted >= 900_000,
            "{m:?}: one substep per interval at least"
        );
    }
}

// ---- Properties of the stepping itself -------------------------------------

#[test]
fn same_interval_sequence_gives_identical_bits() {
    let b = FreeBody::new();
    for m in ALL {
        let run_once = || {
            let mut x = [1.0, 0.0, 0.0, 0.0, 0.3, 1.0, -0.7];
            let mut integ = Integrator::new(m, 7, options(m, 4000)).unwrap();
            for (k, dt) in [4000u64, 1000, 2500, 4000, 3, 4000]
                .iter()
                .cycle()
                .take(300)
                .enumerate()
            {
                integ
                    .step_interval(&b, k as u64 * 4000, *dt, &mut x)
                    .unwrap();
            }
            x.map(f64::to_bits)
        };
        assert_eq!(run_once(), run_once(), "{m:?}");
    }
}

#[test]
fn fsal_saves_one_evaluation_per_accepted_substep_within_an_interval() {
    let sho = Sho::new(1.0);
    for (m, stages) in [(Method::Dp54, 7u64), (Method::Bs32, 4)] {
        // Tight tolerance: several substeps per interval.
        let mut integ = Integrator::new(
            m,
            2,
            Options {
                max_step_ticks: 4000,
                ..Options::default()
            },
        )
        .unwrap();
        let mut x = [1.0, 0.0];
        let s = integ.step_interval(&sho, 0, 400_000, &mut x).unwrap();
        assert!(s.accepted > 1);
        // First substep: all stages; every later attempt reuses the first stage.
        let attempts = s.accepted + s.rejected;
        assert_eq!(
            s.rhs_evals,
            stages + (attempts - 1) * (stages - 1),
            "{m:?}: {s:?}"
        );
    }
}

#[test]
fn carry_and_restart_both_reach_the_same_solution() {
    let sho = Sho::new(2.0);
    let mut results = Vec::new();
    for start in [StepStart::Carry, StepStart::Restart] {
        let opts = Options {
            max_step_ticks: 4000,
            step_start: start,
            ..Options::default()
        };
        let mut integ = Integrator::new(Method::Dp54, 2, opts).unwrap();
        let mut x = [1.0, 0.0];
        for k in 0..1000 {
            integ.step_interval(&sho, k * 4000, 4000, &mut x).unwrap();
        }
        results.push((x, integ.total_stats()));
    }
    let exact = [(2.0f64 * 4.0).cos(), -2.0 * (2.0f64 * 4.0).sin()];
    for (x, _) in &results {
        assert!(
            (x[0] - exact[0]).abs() < 1e-7 && (x[1] - exact[1]).abs() < 1e-7,
            "{x:?} vs {exact:?}"
        );
    }
}

struct Blowup;
impl System for Blowup {
    fn dim(&self) -> usize {
        1
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[0] * x[0];
    }
}

#[test]
fn guard_rails_return_errors_with_time_and_state() {
    // x' = x^2 from 1 blows up at t = 1 s.
    let mut integ = Integrator::new(
        Method::Dp54,
        1,
        Options {
            max_step_ticks: 100_000,
            ..Options::default()
        },
    )
    .unwrap();
    let mut x = [1.0];
    let err = integ
        .step_interval(&Blowup, 0, 2_000_000, &mut x)
        .unwrap_err();
    match err {
        IntegratorError::StepTooSmall {
            t_ticks,
            min_step_ticks: 1,
            ref state,
            ..
        } => {
            assert!((990_000..1_000_000).contains(&t_ticks), "{t_ticks}");
            assert_eq!(
                state,
                &x.to_vec(),
                "the state at the failure is reported and kept"
            );
        }
        IntegratorError::TooManySubsteps { .. } => {}
        other => panic!("{other:?}"),
    }
    let opts = Options {
        max_step_ticks: 100_000,
        max_substeps: 10,
        ..Options::default()
    };
    let mut integ = Integrator::new(Method::Bs32, 1, opts).unwrap();
    let mut x = [1.0];
    let err = integ
        .step_interval(&Blowup, 5, 990_000, &mut x)
        .unwrap_err();
    assert!(
        matches!(
            err,
            IntegratorError::TooManySubsteps {
                end_ticks: 990_005,
                max_substeps: 10,
                ..
            }
        ),
        "{err:?}"
    );
    // Fixed step: non-finite is reported with time and index.
    let mut integ = Integrator::new(
        Method::Euler,
        1,
        Options {
            max_step_ticks: 100_000,
            ..Options::default()
        },
    )
    .unwrap();
    let mut x = [1e200];
    let err = integ
        .step_interval(&Blowup, 0, 1_000_000, &mut x)
        .unwrap_err();
    assert!(
        matches!(
            err,
            IntegratorError::NonFinite {
                t_ticks: 100_000,
                index: 0,
                ..
            }
        ),
        "{err:?}"
    );
    // Bad dimensions and options.
    let mut integ = Integrator::new(Method::Rk4, 2, Options::default()).unwrap();
    let err = integ
        .step_interval(&Blowup, 0, 10, &mut [1.0, 2.0])
        .unwrap_err();
    assert_eq!(
        err,
        IntegratorError::DimensionMismatch {
            expected: 2,
            found: 1
        }
    );
    let err = Integrator::new(
        Method::Rk4,
        2,
        Options {
            min_step_ticks: 0,
            ..Options::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid integrator options: min_step_ticks must be in 1..=max_step_ticks"
    );
}
