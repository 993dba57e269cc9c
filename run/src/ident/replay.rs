//! Open-loop replay of a log through the plant: from the logged state at a
//! window's start, the logged motor commands drive lockstep's multirotor
//! for a horizon; what it predicts (body rates, attitude, the
//! accelerometer's specific force, velocity) is compared with the log at
//! each logged sample. The rotors' own state is not logged: each window
//! starts [`WARMUP_US`] earlier with the rotors at the hover speed, driven
//! by the logged commands, and the body's state is then set to the log's
//! at the window's start (the rotors and the ESCs keep what the commands
//! made of them).

use lockstep_plant::integrate::{Integrator, Method, Options};
use lockstep_plant::{HeldPlant, Multirotor, PlantInputs, StateLayout};
use nalgebra::{UnitQuaternion, Vector3};

use super::log::Flight;

/// How long the rotors are driven before a window: six of the iris's
/// rotor time constants, five of the octa's with its ESC lag (150 ms, 2.5
/// of the octa's, left its fitted thrust coefficient 4.6 % low with the
/// dead zone fitted; 300 ms, 2.3 %; 500 ms no better, 3.5 %).
pub const WARMUP_US: u64 = 300_000;

/// The integrator's step (RK4).
const STEP_US: u64 = 1_000;

/// A window is flown only with every motor above this command (airborne,
/// not idling on the ground) and at least [`MIN_HEIGHT_M`] above where
/// the log starts.
const MIN_COMMAND: f64 = 0.1;
pub const MIN_HEIGHT_M: f64 = 1.0;

/// What is predicted and logged at one sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub t_us: u64,
    pub rates: [f64; 3],
    pub q: [f64; 4],
    pub force: [f64; 3],
    pub vel: [f64; 3],
}

/// The log's samples a window compares (the body rates' times).
pub fn grid(flight: &Flight) -> &[u64] {
    &flight.rates.t_us
}

/// The logged sample at `t` (each topic's last value at or before it).
pub fn logged(flight: &Flight, t: u64) -> Option<Sample> {
    let late = t + flight.estimate_delay_us;
    let r = flight.rates.at(t)?;
    let q = flight.attitude.at(late)?;
    let f = flight.accel.at(t)?;
    let l = flight.local.at(late)?;
    let all = [r, q, f, l].iter().all(|s| s.iter().all(|v| v.is_finite()));
    (all && r.len() >= 3 && q.len() >= 4 && f.len() >= 3 && l.len() >= 6).then(|| Sample {
        t_us: t,
        rates: [r[0], r[1], r[2]],
        q: [q[0], q[1], q[2], q[3]],
        force: [f[0], f[1], f[2]],
        vel: [l[3], l[4], l[5]],
    })
}

/// The window starts worth flying for `horizon_us`: every motor above
/// [`MIN_COMMAND`] from the warm-up to the end, above [`MIN_HEIGHT_M`],
/// every topic logged; at most `most`, spread evenly.
pub fn windows(flight: &Flight, rotors: usize, horizon_us: u64, most: usize) -> Vec<u64> {
    let ground = flight.local.v.first().map_or(0.0, |l| l[2]);
    let grid = grid(flight);
    let airborne = |t: u64| {
        flight.motors.at(t).is_some_and(|m| {
            m.len() >= rotors
                && m[..rotors]
                    .iter()
                    .all(|&u| u.is_finite() && u >= MIN_COMMAND)
        }) && flight
            .local
            .at(t)
            .is_some_and(|l| ground - l[2] >= MIN_HEIGHT_M)
    };
    let ok: Vec<u64> = grid
        .iter()
        .copied()
        .filter(|&t| {
            t >= WARMUP_US
                && t + horizon_us + flight.estimate_delay_us <= flight.duration_us
                && logged(flight, t).is_some()
                && [t - WARMUP_US, t, t + horizon_us / 2, t + horizon_us]
                    .iter()
                    .all(|&s| airborne(s))
        })
        .collect();
    if ok.len() <= most {
        return ok;
    }
    (0..most).map(|k| ok[k * ok.len() / most]).collect()
}

/// The plant's inputs at `t`: the logged commands held, the logged wind.
fn inputs(flight: &Flight, rotors: usize, t: u64) -> PlantInputs {
    let mut u = PlantInputs::default();
    if let Some(m) = flight.motors.at(t) {
        for (i, c) in m.iter().take(rotors).enumerate() {
            u.motor_cmd[i] = c.clamp(0.0, 1.0);
        }
    }
    if let Some(w) = flight.wind.at(t) {
        u.wind_ned_mps = [w[0], w[1], 0.0];
    }
    u
}

/// Flies the window from `t0` for `horizon_us`: the prediction at each
/// logged sample after `t0` (with the log's at the same time).
pub fn fly(
    plant: &Multirotor,
    flight: &Flight,
    t0: u64,
    horizon_us: u64,
) -> Result<Vec<(Sample, Sample)>, String> {
    let rotors = plant.rotors.len();
    let start = logged(flight, t0).ok_or("no logged state at the window's start")?;
    let mut x = plant.state_at([0.0; 3], start.q);
    let layout = plant.layout;
    let hover = plant.hover_rotor_speed(1.1);
    for i in 0..rotors {
        x[layout.rotor_speed(i)] = hover;
    }
    set_battery(plant, flight.battery.at(t0 - WARMUP_US), &mut x);
    let l = flight
        .local
        .at(t0 + flight.estimate_delay_us)
        .ok_or("no local position")?;
    x[StateLayout::POS..StateLayout::POS + 3].copy_from_slice(&l[..3]);
    let options = Options {
        max_step_ticks: STEP_US,
        ..Options::default()
    };
    let mut integrator =
        Integrator::new(Method::Rk4, plant.dim(), options).map_err(|e| e.to_string())?;
    // The warm-up: the rotors follow the logged commands; the body is set
    // back to the log's state after it.
    let mut t = t0 - WARMUP_US;
    while t < t0 {
        let u = inputs(flight, rotors, t);
        let next = next_change(flight, t, t0);
        step(&mut integrator, plant, &u, t, next - t, &mut x)?;
        t = next;
    }
    x[StateLayout::POS..StateLayout::POS + 3].copy_from_slice(&l[..3]);
    x[StateLayout::VEL..StateLayout::VEL + 3].copy_from_slice(&start.vel);
    x[StateLayout::QUAT..StateLayout::QUAT + 4].copy_from_slice(&start.q);
    x[StateLayout::RATES..StateLayout::RATES + 3].copy_from_slice(&start.rates);
    let end = t0 + horizon_us;
    let samples: Vec<u64> = grid(flight)
        .iter()
        .copied()
        .filter(|&s| s > t0 && s <= end)
        .collect();
    let mut out = Vec::with_capacity(samples.len());
    for s in samples {
        while t < s {
            let u = inputs(flight, rotors, t);
            let next = next_change(flight, t, s);
            step(&mut integrator, plant, &u, t, next - t, &mut x)?;
            t = next;
        }
        let Some(log) = logged(flight, s) else {
            continue;
        };
        let u = inputs(flight, rotors, s);
        let y = plant.outputs(&x, &u);
        let q = &x[StateLayout::QUAT..StateLayout::QUAT + 4];
        let r = &x[StateLayout::RATES..StateLayout::RATES + 3];
        let v = &x[StateLayout::VEL..StateLayout::VEL + 3];
        let predicted = Sample {
            t_us: s,
            rates: [r[0], r[1], r[2]],
            q: [q[0], q[1], q[2], q[3]],
            force: y.specific_force_frd_mps2,
            vel: [v[0], v[1], v[2]],
        };
        out.push((predicted, log));
    }
    Ok(out)
}

/// The packs' state from the logged battery: the charge remaining, and
/// the R1 C1 voltage that makes the model's terminal voltage the logged
/// one at the logged current. `battery_status` is one pack's (PX4 logs an
/// instance per pack, lockstep the first pack's): every pack is set from
/// it.
/// Without a logged voltage the packs start at their spec's charge.
fn set_battery(plant: &Multirotor, logged: Option<&[f64]>, x: &mut [f64]) {
    let Some(b) = logged else {
        return;
    };
    let layout = plant.layout;
    for (j, pack) in plant.batteries.iter().enumerate() {
        if let Some(&soc) = b.get(1).filter(|s| s.is_finite()) {
            x[layout.soc(j)] = soc.clamp(0.0, 1.0);
        }
        let (Some(&v), Some(&i)) = (b.first(), b.get(2)) else {
            continue;
        };
        if !(v.is_finite() && i.is_finite()) {
            continue;
        }
        if let lockstep_plant::battery::BatteryModel::Thevenin { .. } = pack.model {
            let emf0 = pack.emf(x[layout.soc(j)], 0.0);
            // A voltage the pack cannot give is a logging fault: the RC
            // voltage stays within a few volts.
            x[layout.v1(j)] = (emf0 - v - pack.r0() * i).clamp(-1.0, 3.0);
        }
    }
}

/// The next time after `t` (at most `until`) at which the commands or the
/// wind change.
fn next_change(flight: &Flight, t: u64, until: u64) -> u64 {
    let after = |ts: &[u64]| ts.get(ts.partition_point(|&s| s <= t)).copied();
    [after(&flight.motors.t_us), after(&flight.wind.t_us)]
        .into_iter()
        .flatten()
        .fold(until, u64::min)
}

fn step(
    integrator: &mut Integrator,
    plant: &Multirotor,
    u: &PlantInputs,
    t: u64,
    dt: u64,
    x: &mut [f64],
) -> Result<(), String> {
    let sys = HeldPlant { plant, inputs: u };
    integrator
        .step_interval(&sys, t, dt, x)
        .map(|_| ())
        .map_err(|e| format!("the plant failed at {:.3} s of log: {e}", t as f64 * 1e-6))
}

/// The attitude error (rad) from `a` to `b`, as a rotation vector.
pub fn attitude_error(a: &[f64; 4], b: &[f64; 4]) -> [f64; 3] {
    let qa = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(a[0], a[1], a[2], a[3]));
    let qb = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(b[0], b[1], b[2], b[3]));
    let e = (qa.inverse() * qb).scaled_axis();
    [e.x, e.y, e.z]
}

/// The baselines' predictions for `log` at `t` from a window at `t0`:
/// constant body rates (and the attitude they turn), the specific force
/// of the sample before the window held (and the velocity it gives).
pub fn baseline(flight: &Flight, t0: u64, t: u64, gravity: f64) -> Option<Sample> {
    let s0 = logged(flight, t0)?;
    let grid = grid(flight);
    let k = grid.partition_point(|&s| s < t0);
    let before = logged(flight, grid.get(k.checked_sub(1)?).copied()?)?;
    let dt = (t - t0) as f64 * 1e-6;
    let w = Vector3::from(s0.rates);
    let q0 = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(
        s0.q[0], s0.q[1], s0.q[2], s0.q[3],
    ));
    let q = q0 * UnitQuaternion::from_scaled_axis(w * dt);
    let f = Vector3::from(before.force);
    let a = q0 * f + Vector3::new(0.0, 0.0, gravity);
    let v = Vector3::from(s0.vel) + a * dt;
    Some(Sample {
        t_us: t,
        rates: s0.rates,
        q: [q.w, q.i, q.j, q.k],
        force: before.force,
        vel: [v.x, v.y, v.z],
    })
}
