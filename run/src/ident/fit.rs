//! An airframe fitted from a log: the spec's parameters a log can
//! identify, by Levenberg-Marquardt least squares on the open-loop
//! replay's residuals (body rates, the accelerometer's specific force,
//! velocity, each over its noise scale, at every logged sample of short
//! windows), the Jacobian by finite differences. Each parameter gets a
//! 95 % interval from the cluster-robust ("sandwich") covariance with 5 s
//! stretches of log as clusters: what the model misses (the estimate's
//! slowly wandering biases, the wind) counts once per stretch, not once
//! per sample; with a measured model floor ([`MODEL_FLOOR`]) added in
//! quadrature; a parameter whose interval is wider than
//! ±[`IDENTIFIED_WITHIN`] of its value (the dead zone: ±[`DEADZONE_WITHIN`]
//! of the command), or that no residual moves, is not identified by the
//! log: it keeps the base spec's value, and the report says so.
//!
//! The actuator mapping: a log's PWM is mapped onto 0..1 by its
//! `PWM_MAIN_MIN`/`MAX` (1000 to 2000 µs when not logged), and the fit
//! finds where in that range the rotors start (`esc.deadzone`). The top of
//! the range is not fitted: the coefficients take up a command scaled by a
//! factor (the iris's log read with its top 100 us, 10 %, off fits with a
//! residual 3 % worse, inside the model floors, its coefficients 12 to 21 %
//! away).

use lockstep_plant::AircraftSpec;
use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::Serialize;

use super::log::{Commands, Flight};
use super::replay;

/// The noise scales the residuals are divided by: body rates (rad/s),
/// specific force (m/s²), velocity (m/s).
const SIGMA: [f64; 3] = [0.05, 0.5, 0.1];

/// The horizon of each fitting window.
pub const FIT_HORIZON_US: u64 = 200_000;

/// A parameter is identified when its 95 % interval is within this
/// fraction of its value.
pub const IDENTIFIED_WITHIN: f64 = 0.25;

/// What the intervals add, in quadrature, to the statistical half-width:
/// the error the replay's own approximations leave (the logged estimate
/// taken as the state, the unlogged rotor speeds, the commands held
/// between samples), which the dead zone and the thrust coefficient, fitted
/// together, share. Measured, not chosen: fitting lockstep's own logs of
/// `examples/scenarios/identify.toml` with the iris, hexa and octa, seeds 1
/// to 5, each from a spec with every fitted value 15 to 100 % wrong, left
/// at most 4.2 % error (the iris's thrust coefficient, seed 2) and 0.0138
/// of the command in the dead zone ([`DEADZONE_FLOOR`]); seeds 6 to 10 are
/// held out to check them (README, "How close is the physics?").
pub const MODEL_FLOOR: f64 = 0.045;

/// The dead zone's model floor, in command (0..1) units: it sits near 0,
/// so its floor is absolute (measured as [`MODEL_FLOOR`]).
pub const DEADZONE_FLOOR: f64 = 0.015;

/// A dead zone is identified when its 95 % interval is within this much
/// of the command each side (25 µs of a 1000 to 2000 µs PWM range).
pub const DEADZONE_WITHIN: f64 = 0.025;

/// The largest dead zone a spec takes (`esc.deadzone`'s range).
const MOST_DEADZONE: f64 = 0.5;

/// The stretch of log whose windows are one cluster of the covariance.
const CLUSTER_US: u64 = 5_000_000;

/// The fewest windows a fit needs.
pub const MIN_WINDOWS: usize = 20;

/// What is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    ThrustCoeff,
    TorqueCoeff,
    InertiaX,
    InertiaY,
    InertiaZ,
    RotorInertia,
    DragX,
    DragY,
    /// The actuator mapping: the command below which the rotors do not
    /// turn (the ESC's dead zone; a log's PWM range maps onto 0..1 first).
    Deadzone,
}

impl Param {
    pub const ALL: [Param; 9] = [
        Param::ThrustCoeff,
        Param::TorqueCoeff,
        Param::InertiaX,
        Param::InertiaY,
        Param::InertiaZ,
        Param::RotorInertia,
        Param::DragX,
        Param::DragY,
        Param::Deadzone,
    ];

    /// The spec key.
    pub fn key(self) -> &'static str {
        match self {
            Param::ThrustCoeff => "propeller.thrust_coeff_n_s2",
            Param::TorqueCoeff => "propeller.torque_coeff_m",
            Param::InertiaX => "body.inertia_kgm2[0][0]",
            Param::InertiaY => "body.inertia_kgm2[1][1]",
            Param::InertiaZ => "body.inertia_kgm2[2][2]",
            Param::RotorInertia => "motor.rotor_inertia_kgm2",
            Param::DragX => "body.linear_drag_ns_per_m[0]",
            Param::DragY => "body.linear_drag_ns_per_m[1]",
            Param::Deadzone => "esc.deadzone",
        }
    }

    /// What in a flight moves it.
    pub fn excitation(self) -> &'static str {
        match self {
            Param::ThrustCoeff => "collective: vertical specific force against the commands",
            Param::TorqueCoeff => "yaw: differential spin against the yaw rate",
            Param::InertiaX => "roll: roll rate changes against differential thrust",
            Param::InertiaY => "pitch: pitch rate changes against differential thrust",
            Param::InertiaZ => "yaw: yaw rate changes against the rotors' torque",
            Param::RotorInertia => {
                "command steps: how fast the rotors follow (the motor time constant)"
            }
            Param::DragX => "forward flight: x specific force against the body-x airspeed",
            Param::DragY => "sideways flight: y specific force against the body-y airspeed",
            Param::Deadzone => {
                "collective: how the vertical specific force grows with the command away from hover"
            }
        }
    }

    /// Drag and the dead zone may be 0 in a base spec: they move
    /// additively (this step, N s/m or command); the others by a factor.
    fn additive(self) -> Option<f64> {
        match self {
            Param::DragX | Param::DragY => Some(0.1),
            Param::Deadzone => Some(0.02),
            _ => None,
        }
    }

    /// The widest 95 % half-width (in the value's units) at which it counts
    /// as identified: [`IDENTIFIED_WITHIN`] of its value, and for the dead
    /// zone [`DEADZONE_WITHIN`] of the command (it is near 0).
    fn identified_within(self, value: f64) -> f64 {
        match self {
            Param::Deadzone => DEADZONE_WITHIN,
            Param::DragX | Param::DragY => IDENTIFIED_WITHIN * value.max(1e-3),
            _ => IDENTIFIED_WITHIN * value,
        }
    }

    fn get(self, s: &AircraftSpec, thrust: f64) -> f64 {
        match self {
            Param::ThrustCoeff => s.propeller.thrust_coeff_n_s2.unwrap_or(thrust),
            Param::TorqueCoeff => s.propeller.torque_coeff_m,
            Param::InertiaX => s.body.inertia_kgm2[0][0],
            Param::InertiaY => s.body.inertia_kgm2[1][1],
            Param::InertiaZ => s.body.inertia_kgm2[2][2],
            Param::RotorInertia => s.motor.rotor_inertia_kgm2,
            Param::DragX => s.body.linear_drag_ns_per_m[0],
            Param::DragY => s.body.linear_drag_ns_per_m[1],
            Param::Deadzone => s.esc.deadzone,
        }
    }

    fn set(self, s: &mut AircraftSpec, v: f64) {
        match self {
            Param::ThrustCoeff => {
                s.propeller.thrust_coeff_n_s2 = Some(v);
                s.propeller.max_thrust_to_hover_ratio = None;
            }
            Param::TorqueCoeff => s.propeller.torque_coeff_m = v,
            Param::InertiaX => s.body.inertia_kgm2[0][0] = v,
            Param::InertiaY => s.body.inertia_kgm2[1][1] = v,
            Param::InertiaZ => s.body.inertia_kgm2[2][2] = v,
            Param::RotorInertia => s.motor.rotor_inertia_kgm2 = v,
            Param::DragX => s.body.linear_drag_ns_per_m[0] = v.max(0.0),
            Param::DragY => s.body.linear_drag_ns_per_m[1] = v.max(0.0),
            Param::Deadzone => s.esc.deadzone = v.clamp(0.0, MOST_DEADZONE),
        }
    }

    /// The value at `theta` from `base`.
    fn value(self, base: f64, theta: f64) -> f64 {
        match self.additive() {
            Some(step) if self == Param::Deadzone => {
                (base + step * theta).clamp(0.0, MOST_DEADZONE)
            }
            Some(step) => (base + step * theta).max(0.0),
            None => base * theta.exp(),
        }
    }
}

/// One parameter's result.
#[derive(Debug, Clone, Serialize)]
pub struct Fitted {
    pub key: &'static str,
    pub base: f64,
    pub value: f64,
    /// The 95 % interval.
    pub ci95: [f64; 2],
    pub identified: bool,
    /// Why it is not identified, or what identified it.
    pub note: String,
}

/// A fit's result.
#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    pub windows: usize,
    pub residuals: usize,
    pub iterations: u32,
    /// The weighted residuals' RMS before and after.
    pub rms_before: f64,
    pub rms_after: f64,

    pub params: Vec<Fitted>,
    /// How late the log's estimate (attitude, position, velocity) was
    /// found to be.
    pub estimate_delay_s: f64,
    /// Why the fitted spec is written with `plausibility_checks = false`
    /// (its propeller is one no data sheet has), if it is.
    pub implausible: Option<String>,
    #[serde(skip)]
    pub spec: AircraftSpec,
}

/// The residual vector of `spec` over the windows at `starts`.
fn residuals(spec: &AircraftSpec, flight: &Flight, starts: &[u64]) -> Result<Vec<f64>, String> {
    Ok(per_window(spec, flight, starts)?.concat())
}

/// The residuals of each window.
fn per_window(
    spec: &AircraftSpec,
    flight: &Flight,
    starts: &[u64],
) -> Result<Vec<Vec<f64>>, String> {
    let plant = spec.build().map_err(|e| e.to_string())?;
    let per: Vec<Result<Vec<f64>, String>> = starts
        .par_iter()
        .map(|&t0| {
            let pairs = replay::fly(&plant, flight, t0, FIT_HORIZON_US)?;
            let mut r = Vec::with_capacity(pairs.len() * 9);
            for (p, l) in pairs {
                for k in 0..3 {
                    r.push((p.rates[k] - l.rates[k]) / SIGMA[0]);
                    r.push((p.force[k] - l.force[k]) / SIGMA[1]);
                    r.push((p.vel[k] - l.vel[k]) / SIGMA[2]);
                }
            }
            Ok(r)
        })
        .collect();
    per.into_iter().collect()
}

fn rms(r: &[f64]) -> f64 {
    (r.iter().map(|v| v * v).sum::<f64>() / r.len().max(1) as f64).sqrt()
}

/// The estimate delays tried (µs): PX4's EKF2 logs its output predictor's
/// state (close to none); lockstep's default estimator is 20 ms late.
const DELAYS_US: [u64; 13] = [
    0, 5_000, 10_000, 15_000, 20_000, 25_000, 30_000, 40_000, 50_000, 60_000, 80_000, 100_000,
    150_000,
];

/// Fits `base` (its mass already the vehicle's) to `flight`: once with the
/// estimate taken as logged, then the estimate's delay that fits that spec
/// best is found among [`DELAYS_US`], and the fit is done again with it.
pub fn fit(base: &AircraftSpec, flight: &Flight) -> Result<Fit, String> {
    let first = fit_at(base, flight)?;
    let mut trial = flight.clone();
    let mut best = (f64::INFINITY, 0);
    let plant_spec = {
        let mut s = first.spec.clone();
        s.propeller.plausibility_checks = false;
        s
    };
    for d in DELAYS_US {
        trial.estimate_delay_us = d;
        let rotors = plant_spec.rotors.len();
        let starts = replay::windows(&trial, rotors, FIT_HORIZON_US, 240);
        if starts.len() < MIN_WINDOWS {
            continue;
        }
        let r = residuals(&plant_spec, &trial, &starts)?;
        let cost = rms(&r);
        if cost < best.0 {
            best = (cost, d);
        }
    }
    if best.1 == 0 {
        return Ok(first);
    }
    trial.estimate_delay_us = best.1;
    let mut again = fit_at(base, &trial)?;
    again.estimate_delay_s = best.1 as f64 * 1e-6;
    Ok(again)
}

fn fit_at(base: &AircraftSpec, flight: &Flight) -> Result<Fit, String> {
    let plant = base.build().map_err(|e| e.to_string())?;
    let rotors = plant.rotors.len();
    let starts = replay::windows(flight, rotors, FIT_HORIZON_US, 240);
    if starts.len() < MIN_WINDOWS {
        return Err(format!(
            "too little flight to fit: {} windows of {:.1} s airborne (every motor above 10 % and \
             {} m above the log's start), at least {MIN_WINDOWS} needed",
            starts.len(),
            FIT_HORIZON_US as f64 * 1e-6,
            replay::MIN_HEIGHT_M
        ));
    }
    let thrust = plant.propeller.thrust_coeff;
    let params = Param::ALL;
    let bases: Vec<f64> = params.iter().map(|p| p.get(base, thrust)).collect();
    // A trial may be a propeller no real one is (the fit must be free to
    // pass through it); the spec written is checked again.
    let spec_at = |theta: &DVector<f64>| -> AircraftSpec {
        let mut s = base.clone();
        s.propeller.plausibility_checks = false;
        for (k, p) in params.iter().enumerate() {
            p.set(&mut s, p.value(bases[k], theta[k]));
        }
        s
    };
    let n = params.len();
    let solved = levenberg_marquardt(&spec_at, n, flight, &starts)?;
    let (theta, r, jac) = (solved.theta, solved.r, solved.jac);
    let m = r.len();
    let lengths = cluster_lengths(&per_window(&spec_at(&theta), flight, &starts)?, &starts);
    // A parameter no residual moves (one held at a bound: a dead zone or a
    // drag at 0) has no variance; the others' covariance is taken without
    // it (with it, the matrix would be singular and nothing identified).
    let moves: Vec<usize> = (0..n).filter(|&k| jac.column(k).norm() > 1e-9).collect();
    let cov = sandwich(&jac.select_columns(&moves), &r, &lengths);
    let mut fitted = Vec::with_capacity(n);
    let mut spec = base.clone();
    for (k, p) in params.iter().enumerate() {
        let value = p.value(bases[k], theta[k]);
        let sd = moves.iter().position(|&m| m == k).and_then(|i| {
            cov.as_ref()
                .map(|c| c[(i, i)].max(0.0).sqrt())
                .filter(|s| s.is_finite())
        });
        let (ci95, identified, note) = judged(*p, bases[k], theta[k], sd, &flight.commands);
        if identified {
            p.set(&mut spec, value);
        }
        fitted.push(Fitted {
            key: p.key(),
            base: bases[k],
            value: if identified { value } else { bases[k] },
            ci95,
            identified,
            note,
        });
    }
    if fitted.iter().all(|f| !f.identified) {
        return Err(format!(
            "too little excitation: no parameter is identified from {} windows (the flight \
             holds still; fly steps and turns in every axis)",
            starts.len()
        ));
    }
    let implausible = spec.build().err().map(|e| e.to_string());
    if implausible.is_some() {
        spec.propeller.plausibility_checks = false;
        spec.build()
            .map_err(|e| format!("the fitted spec does not build: {e}"))?;
    }
    Ok(Fit {
        estimate_delay_s: 0.0,
        implausible,
        windows: starts.len(),
        residuals: m,
        iterations: solved.iterations,
        rms_before: solved.rms_before,
        rms_after: rms(r.as_slice()),
        params: fitted,
        spec,
    })
}

/// Where Levenberg–Marquardt took the parameters (`theta`, one per
/// [`Param`], 0 = the base spec), the residuals and Jacobian there.
struct Solved {
    theta: DVector<f64>,
    r: DVector<f64>,
    jac: DMatrix<f64>,
    iterations: u32,
    rms_before: f64,
}

/// Levenberg–Marquardt over the `n` parameters of `spec_at`, from the base
/// spec: at most 15 iterations, each trying up to 8 dampings; it stops
/// when a step improves the cost by less than 1e-5 of it.
fn levenberg_marquardt(
    spec_at: &impl Fn(&DVector<f64>) -> AircraftSpec,
    n: usize,
    flight: &Flight,
    starts: &[u64],
) -> Result<Solved, String> {
    let mut theta = DVector::zeros(n);
    let mut r = DVector::from_vec(residuals(&spec_at(&theta), flight, starts)?);
    let rms_before = rms(r.as_slice());
    let mut lambda = 1e-3;
    let mut iterations = 0;
    let mut jac = jacobian(spec_at, &theta, &r, flight, starts)?;
    while iterations < 15 {
        iterations += 1;
        let jtj = jac.transpose() * &jac;
        let g = jac.transpose() * &r;
        let cost = r.norm_squared();
        let mut improved = false;
        for _ in 0..8 {
            let mut a = jtj.clone();
            for k in 0..n {
                a[(k, k)] += lambda * jtj[(k, k)].max(1e-12);
            }
            let Some(delta) = a.lu().solve(&(-&g)) else {
                lambda *= 10.0;
                continue;
            };
            let trial = &theta + &delta;
            let rt = DVector::from_vec(residuals(&spec_at(&trial), flight, starts)?);
            if rt.norm_squared() < cost {
                theta = trial;
                r = rt;
                lambda = (lambda / 3.0).max(1e-9);
                improved = true;
                break;
            }
            lambda *= 10.0;
        }
        let relative = (cost - r.norm_squared()) / cost.max(1e-300);
        if !improved || relative < 1e-5 {
            break;
        }
        jac = jacobian(spec_at, &theta, &r, flight, starts)?;
    }
    Ok(Solved {
        theta,
        r,
        jac,
        iterations,
        rms_before,
    })
}

/// The windows' residual counts, summed by cluster of [`CLUSTER_US`]: the
/// estimate's biases and the wind last seconds, so neighbouring windows
/// share their errors.
fn cluster_lengths(windows: &[Vec<f64>], starts: &[u64]) -> Vec<usize> {
    let mut lengths: Vec<usize> = Vec::new();
    let mut cluster = None;
    for (w, &t0) in windows.iter().zip(starts) {
        let c = t0 / CLUSTER_US;
        if cluster == Some(c) {
            *lengths.last_mut().expect("a cluster was started") += w.len();
        } else {
            lengths.push(w.len());
            cluster = Some(c);
        }
    }
    lengths
}

/// What the fit says of parameter `p` (base value `base`, fitted at
/// `theta`, its standard deviation in theta's units `sd` when a residual
/// moves it): its 95 % interval, whether it is identified, and why.
fn judged(
    p: Param,
    base: f64,
    theta: f64,
    sd: Option<f64>,
    commands: &Commands,
) -> ([f64; 2], bool, String) {
    let value = p.value(base, theta);
    match sd {
        Some(sd) => {
            // The statistical half-width and the model floor, in
            // quadrature, in theta's units.
            let floor = match p.additive() {
                Some(step) if p == Param::Deadzone => DEADZONE_FLOOR / step,
                Some(step) => MODEL_FLOOR * value / step,
                None => (1.0 + MODEL_FLOOR).ln(),
            };
            let half = ((1.96 * sd).powi(2) + floor * floor).sqrt();
            let ci = [p.value(base, theta - half), p.value(base, theta + half)];
            // The half-width in the value's units.
            let width = match p.additive() {
                Some(step) => step * half,
                None => value * (half.exp() - 1.0),
            };
            if width <= p.identified_within(value) {
                let mut note = format!("identified by {}", p.excitation());
                if let (Param::Deadzone, Commands::Pwm { min_us, max_us }) = (p, commands) {
                    note.push_str(&format!(
                        "; with the log's PWM range the rotors start at {:.0} us",
                        min_us + value * (max_us - min_us)
                    ));
                }
                (ci, true, note)
            } else {
                let spread = match p {
                    Param::Deadzone => format!("±{width:.3} of the command"),
                    _ => format!("±{:.0} %", 100.0 * width / value.max(1e-3)),
                };
                (
                    ci,
                    false,
                    format!(
                        "not identified: its 95 % interval is {spread} (needs more {})",
                        p.excitation()
                    ),
                )
            }
        }
        // Held at a bound: a step of theta leaves the value where it is.
        None if p.additive().is_some() && value == p.value(base, theta + 1e-3) => (
            [f64::NAN, f64::NAN],
            false,
            format!(
                "not identified: the fit took it to {value}, its bound, where no residual \
                 moves it ({})",
                match p {
                    Param::Deadzone =>
                        "the rotors start below the log's PWM minimum: is \
                                        PWM_MAIN_MIN right?",
                    _ => "the log shows less than none",
                }
            ),
        ),
        None => (
            [f64::NAN, f64::NAN],
            false,
            format!(
                "not identified: no residual moves it (no {})",
                p.excitation()
            ),
        ),
    }
}

/// The Jacobian of the residuals at `theta` by forward differences.
fn jacobian(
    spec_at: &impl Fn(&DVector<f64>) -> AircraftSpec,
    theta: &DVector<f64>,
    r: &DVector<f64>,
    flight: &Flight,
    starts: &[u64],
) -> Result<DMatrix<f64>, String> {
    let n = theta.len();
    let mut j = DMatrix::zeros(r.len(), n);
    for k in 0..n {
        let h = 1e-3;
        let mut t = theta.clone();
        t[k] += h;
        let rk = residuals(&spec_at(&t), flight, starts)?;
        if rk.len() != r.len() {
            return Err("the windows changed length between evaluations".into());
        }
        for (i, v) in rk.iter().enumerate() {
            j[(i, k)] = (v - r[i]) / h;
        }
    }
    Ok(j)
}

/// The cluster-robust covariance of the parameters: `A B A` with `A` the
/// inverse of `JᵀJ` and `B` the sum over windows of `(J_wᵀ r_w)(J_wᵀ r_w)ᵀ`,
/// times `W / (W - 1)` for `W` windows; `None` when `JᵀJ` is singular.
fn sandwich(jac: &DMatrix<f64>, r: &DVector<f64>, lengths: &[usize]) -> Option<DMatrix<f64>> {
    let n = jac.ncols();
    let a = (jac.transpose() * jac).try_inverse()?;
    let mut b = DMatrix::zeros(n, n);
    let mut at = 0;
    for &len in lengths {
        let jw = jac.rows(at, len);
        let rw = r.rows(at, len);
        let s = jw.transpose() * rw;
        b += &s * s.transpose();
        at += len;
    }
    let w = lengths.len() as f64;
    Some(&a * b * &a * (w / (w - 1.0).max(1.0)))
}
