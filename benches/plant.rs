//! Plant and integrator cost, with two in-run references:
//! - a minimal 17-state quadrotor (thrust = kT w^2, first-order motor lag,
//!   no battery) written here with plain arrays, RHS and one RK4 1 ms step;
//! - the `ode_solvers` crate doing the same work on the same plant, driven
//!   as a lockstep harness must drive it (a new solver per interval).
//!
//! Run: `cargo bench --bench plant`. The targets are ratios against those
//! references measured in the same run: the closed-loop tick at most 8x the
//! minimal RK4 step (the physics issue), our integrators against
//! ode_solvers doing the same work.
//!
//! `closed_loop_tick` measures one 1 ms boundary of the whole loop (plant
//! RK4, all sensors, estimator, wind, scenario, the C autopilot every 4th
//! tick) while the Iris loiters, with logging off and at 100 Hz.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use lockstep_abi::{Isolation, IsolationOptions};
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_plant::integrate::{Integrator, Method, Options, StepStart};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs, fixtures};
use ode_solvers::{DVector, Dopri5, Rk4, System};

// ---- The minimal reference quadrotor ---------------------------------------

const N: usize = 17;

struct MiniQuad {
    mass: f64,
    inertia: [f64; 3],
    kt: f64,
    kq: f64,
    tau: f64,
    w_max: f64,
    arm: [[f64; 2]; 4],
    dir: [f64; 4],
    cmd: [f64; 4],
}

impl MiniQuad {
    fn iris() -> Self {
        MiniQuad {
            mass: 1.5,
            inertia: [0.029125, 0.029125, 0.055225],
            kt: 1.8e-4,
            kq: 0.05 * 1.8e-4,
            tau: 0.02,
            w_max: 200.0,
            arm: [
                [0.1515, 0.245],
                [-0.1515, -0.1875],
                [0.1515, -0.245],
                [-0.1515, 0.1875],
            ],
            dir: [1.0, 1.0, -1.0, -1.0],
            cmd: [0.72, 0.71, 0.72, 0.71],
        }
    }

    fn rhs(&self, x: &[f64; N], dx: &mut [f64; N]) {
        let (qw, qx, qy, qz) = (x[6], x[7], x[8], x[9]);
        let (wx, wy, wz) = (x[10], x[11], x[12]);
        let mut thrust = 0.0;
        let (mut tx, mut ty, mut tz) = (0.0, 0.0, 0.0);
        for i in 0..4 {
            let w = x[13 + i];
            let t = self.kt * w * w;
            thrust += t;
            tx -= self.arm[i][1] * t;
            ty += self.arm[i][0] * t;
            tz += self.dir[i] * self.kq * w * w;
            dx[13 + i] = (self.cmd[i] * self.w_max - w) / self.tau;
        }
        // Body -z thrust rotated to NED: third column of R times -T.
        let fx = -thrust * 2.0 * (qx * qz + qw * qy);
        let fy = -thrust * 2.0 * (qy * qz - qw * qx);
        let fz = -thrust * (1.0 - 2.0 * (qx * qx + qy * qy));
        dx[0] = x[3];
        dx[1] = x[4];
        dx[2] = x[5];
        dx[3] = fx / self.mass;
        dx[4] = fy / self.mass;
        dx[5] = fz / self.mass + 9.80665;
        dx[6] = -0.5 * (qx * wx + qy * wy + qz * wz);
        dx[7] = 0.5 * (qw * wx + qy * wz - qz * wy);
        dx[8] = 0.5 * (qw * wy + qz * wx - qx * wz);
        dx[9] = 0.5 * (qw * wz + qx * wy - qy * wx);
        let i = self.inertia;
        dx[10] = (tx - (i[2] - i[1]) * wy * wz) / i[0];
        dx[11] = (ty - (i[0] - i[2]) * wz * wx) / i[1];
        dx[12] = (tz - (i[1] - i[0]) * wx * wy) / i[2];
    }

    fn rk4(&self, x: &mut [f64; N], h: f64) {
        let (mut k1, mut k2, mut k3, mut k4, mut t) =
            ([0.0; N], [0.0; N], [0.0; N], [0.0; N], [0.0; N]);
        self.rhs(x, &mut k1);
        for i in 0..N {
            t[i] = x[i] + 0.5 * h * k1[i];
        }
        self.rhs(&t, &mut k2);
        for i in 0..N {
            t[i] = x[i] + 0.5 * h * k2[i];
        }
        self.rhs(&t, &mut k3);
        for i in 0..N {
            t[i] = x[i] + h * k3[i];
        }
        self.rhs(&t, &mut k4);
        for i in 0..N {
            x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
        let n = (x[6] * x[6] + x[7] * x[7] + x[8] * x[8] + x[9] * x[9]).sqrt();
        for v in &mut x[6..10] {
            *v /= n;
        }
    }
}

fn mini_state() -> [f64; N] {
    let mut x = [0.0; N];
    x[2] = -20.0;
    x[6] = 1.0;
    x[13..17].copy_from_slice(&[143.0; 4]);
    x
}

// ---- The full plant ---------------------------------------------------------

fn iris() -> Multirotor {
    AircraftSpec::builtin("iris").unwrap().build().unwrap()
}

/// In flight at 20 m with rotors at hover speed, a small rate, some wind.
fn flying(plant: &Multirotor) -> (Vec<f64>, PlantInputs) {
    let mut x = fixtures::hovering_state(plant, [0.0, 0.0, -20.0]);
    x[10] = 0.1;
    let mut u = PlantInputs::default();
    u.motor_cmd[..4].copy_from_slice(&[0.52, 0.51, 0.52, 0.51]);
    u.wind_ned_mps = [2.0, -1.0, 0.0];
    (x, u)
}

struct Adapter<'a> {
    plant: &'a Multirotor,
    inputs: &'a PlantInputs,
}

impl System<f64, DVector<f64>> for Adapter<'_> {
    fn system(&self, _t: f64, y: &DVector<f64>, dy: &mut DVector<f64>) {
        self.plant.rhs(y.as_slice(), self.inputs, dy.as_mut_slice());
    }
}

fn benches(c: &mut Criterion) {
    let plant = iris();
    let (x0, u) = flying(&plant);
    let mini = MiniQuad::iris();

    let mut g = c.benchmark_group("rhs");
    g.bench_function("reference_minimal_quad", |b| {
        let x = mini_state();
        let mut dx = [0.0; N];
        b.iter(|| mini.rhs(black_box(&x), &mut dx));
    });
    g.bench_function("iris_full", |b| {
        let mut dx = vec![0.0; plant.dim()];
        b.iter(|| plant.rhs(black_box(&x0), &u, &mut dx));
    });
    g.finish();

    let mut g = c.benchmark_group("rk4_step_1ms");
    g.bench_function("reference_minimal_quad", |b| {
        let mut x = mini_state();
        b.iter(|| {
            mini.rk4(black_box(&mut x), 0.001);
            x[2] = -20.0;
        });
    });
    g.bench_function("iris_full", |b| {
        let sys = HeldPlant {
            plant: &plant,
            inputs: &u,
        };
        let mut integ = Integrator::new(Method::Rk4, plant.dim(), Options::default()).unwrap();
        let mut x = x0.clone();
        b.iter(|| {
            x.copy_from_slice(&x0);
            integ
                .step_interval(&sys, 0, 1000, black_box(&mut x))
                .unwrap()
        });
    });
    g.bench_function("iris_full_ode_solvers", |b| {
        let y0 = DVector::from_vec(x0.clone());
        b.iter(|| {
            let mut s = Rk4::new(
                Adapter {
                    plant: &plant,
                    inputs: &u,
                },
                0.0,
                y0.clone(),
                0.001,
                0.001,
            );
            s.integrate().unwrap();
            black_box(s.y_out().last().unwrap()[2])
        });
    });
    g.finish();

    let mut g = c.benchmark_group("dp54_interval_4ms");
    for (name, start) in [
        ("iris_full", StepStart::Restart),
        ("iris_full_carry", StepStart::Carry),
    ] {
        g.bench_function(name, |b| {
            let sys = HeldPlant {
                plant: &plant,
                inputs: &u,
            };
            let opts = Options {
                max_step_ticks: 4000,
                step_start: start,
                ..Options::default()
            };
            let mut integ = Integrator::new(Method::Dp54, plant.dim(), opts).unwrap();
            let mut x = x0.clone();
            integ.step_interval(&sys, 0, 4000, &mut x).unwrap();
            b.iter(|| {
                x.copy_from_slice(&x0);
                integ
                    .step_interval(&sys, 0, 4000, black_box(&mut x))
                    .unwrap()
            });
        });
    }
    g.bench_function("iris_full_ode_solvers", |b| {
        let y0 = DVector::from_vec(x0.clone());
        b.iter(|| {
            let mut s = Dopri5::new(
                Adapter {
                    plant: &plant,
                    inputs: &u,
                },
                0.0,
                0.004,
                0.004,
                y0.clone(),
                1e-6,
                1e-5,
            );
            s.integrate().unwrap();
            black_box(s.y_out().last().unwrap()[2])
        });
    });
    g.finish();

    // Carry vs restart where it matters: a manoeuvring flight whose inputs
    // change at every 4 ms boundary (1 s = 250 intervals).
    let mut g = c.benchmark_group("dp54_flight_1s");
    let inputs: Vec<PlantInputs> = (0..250).map(fixtures::manoeuvre).collect();
    for (name, start) in [("restart", StepStart::Restart), ("carry", StepStart::Carry)] {
        g.bench_function(name, |b| {
            let opts = Options {
                max_step_ticks: 4000,
                step_start: start,
                ..Options::default()
            };
            let mut integ = Integrator::new(Method::Dp54, plant.dim(), opts).unwrap();
            let mut x = x0.clone();
            b.iter(|| {
                x.copy_from_slice(&x0);
                integ.reset();
                for (k, u) in inputs.iter().enumerate() {
                    let sys = HeldPlant {
                        plant: &plant,
                        inputs: u,
                    };
                    integ
                        .step_interval(&sys, k as u64 * 4000, 4000, &mut x)
                        .unwrap();
                }
                black_box(x[2])
            });
        });
    }
    g.finish();
}

/// The isolated mode with the host executable cargo built for this bench.
fn isolated() -> Isolation {
    isolated_spinning(IsolationOptions::default().spin)
}

/// The isolated mode, busy-waiting up to `spin` for an answer.
fn isolated_spinning(spin: Duration) -> Isolation {
    Isolation::Process(IsolationOptions {
        host: Some(env!("CARGO_BIN_EXE_lockstep").into()),
        spin,
        ..IsolationOptions::default()
    })
}

/// An engine loitering at 10 m after 15 s of flight, logging at `log`.
fn loitering_engine(log: Option<&std::path::Path>, isolation: &Isolation) -> Engine {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = format!(
        "schema_version = 1\n[simulation]\nseed = 3\nduration_s = 36000.0\n\
         [cadences]\nlog = {{ rate_hz = 100 }}\n\
         [vehicle]\nspec = \"iris\"\nmission = \"{}\"\n\
         [wind]\nmodel = \"ornstein_uhlenbeck\"\nmean_ned_mps = [2.0, 1.0, 0.0]\nsigma_mps = [0.8, 0.8, 0.3]\ntau_s = [5.0, 5.0, 2.0]\n\
         [[events]]\nat_s = 1.0\naction = \"arm\"\n[[events]]\nat_s = 2.0\naction = \"mission_start\"\n",
        root.join("examples/missions/loiter.waypoints").display()
    );
    let s = Scenario::from_toml_str(&text, root.join("bench.toml")).unwrap();
    let mut e = Engine::with_isolation(
        &s,
        std::path::Path::new(lockstep_c_examples::REFERENCE_AUTOPILOT),
        log,
        isolation,
    )
    .unwrap();
    for _ in 0..15_000 {
        e.step().unwrap();
    }
    assert!(e.state()[2] < -9.0, "loitering at 10 m");
    e
}

/// Ticks timed on one loitering engine before a fresh one replaces it:
/// 200 s of flight, well inside the battery's endurance (criterion runs
/// millions of ticks; one engine would drain its pack, land by failsafe and
/// measure a vehicle resting on the ground).
const CHUNK: u64 = 200_000;

/// Times `iters` ticks on loitering engines from `make`, each used for at
/// most [`CHUNK`] ticks and built untimed.
fn loiter_ticks(iters: u64, make: &dyn Fn() -> Engine) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let n = left.min(CHUNK);
        let mut e = make();
        let t = std::time::Instant::now();
        for _ in 0..n {
            black_box(e.step().unwrap());
        }
        total += t.elapsed();
        assert!(e.state()[2] < -9.0, "still loitering at 10 m");
        left -= n;
    }
    total
}

fn closed_loop(c: &mut Criterion) {
    let mut g = c.benchmark_group("closed_loop_tick");
    g.bench_function("iris_log_off", |b| {
        b.iter_custom(|n| loiter_ticks(n, &|| loitering_engine(None, &Isolation::InProcess)));
    });
    g.bench_function("iris_log_off_isolated", |b| {
        b.iter_custom(|n| loiter_ticks(n, &|| loitering_engine(None, &isolated())));
    });
    // Isolated without busy-waiting: every answer is a futex wake-up (what
    // the isolated mode does when the machine's cores are all busy).
    g.bench_function("iris_log_off_isolated_sleeping", |b| {
        b.iter_custom(|n| {
            loiter_ticks(n, &|| {
                loitering_engine(None, &isolated_spinning(Duration::ZERO))
            })
        });
    });
    g.bench_function("iris_log_100hz", |b| {
        let path = std::env::temp_dir().join(format!("lockstep-bench-{}.csv", std::process::id()));
        b.iter_custom(|n| {
            loiter_ticks(n, &|| loitering_engine(Some(&path), &Isolation::InProcess))
        });
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(path.with_extension("csv.json"));
    });
    g.finish();
    // One autopilot step alone, in this process and across the isolation
    // boundary: the difference is the round trip's cost.
    let mut g = c.benchmark_group("autopilot_step");
    for (name, isolation) in [
        ("in_process", Isolation::InProcess),
        ("isolated", isolated()),
    ] {
        g.bench_function(name, |b| {
            let mut e = loitering_engine(None, &isolation);
            let mut frame = lockstep_abi::ffi::lockstep_sensor_frame::default();
            frame.estimate.attitude_q[0] = 1.0;
            let mut out = lockstep_abi::ffi::lockstep_actuator_frame::default();
            let mut t = 100_000_000u64;
            b.iter(|| {
                t += 4000;
                frame.time_us = t;
                e.autopilot().step(t, &frame, &mut out).unwrap();
                black_box(out.motors[0])
            });
        });
    }
    g.finish();
}

criterion_group! {
    name = plant;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(40);
    targets = benches, closed_loop
}
criterion_main!(plant);
