//! The built-in airframes against the figures of their classes (the physics
//! issue's acceptance table): hover rotor speed, command and battery power,
//! endurance, full-throttle thrust-to-weight, the thrust response's time
//! constant, the largest static yaw acceleration, and the tilt that holds
//! position in a 5 m/s wind. Hover figures: calm air at the spec's origin
//! (488 m), perfect estimator, hovering at 10 m, averaged over 30 s.
//!
//! Two kinds of figures per class:
//! - acceptance bands (`Class`): the class's figure from component data and
//!   momentum theory (the physics issue's acceptance table) with a relative
//!   tolerance, or a range; the model must land in them;
//! - the measured values README.md's table states (`Readme`), which the
//!   tests check to the digits shown, so the table cannot go stale. The
//!   README shows each measured value with its band in brackets.

use std::path::{Path, PathBuf};

use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_plant::env::atmosphere::Isa;
use lockstep_plant::integrate::{ErrorGroup, Integrator, Method, Options, System};
use lockstep_plant::{AircraftSpec, Multirotor, PlantInputs, StateLayout};
use nalgebra::{DMatrix, Vector3};

/// One class's acceptance bands: value and relative tolerance, or a range.
struct Class {
    name: &'static str,
    rpm: (f64, f64),
    command: (f64, f64),
    power_w: (f64, f64),
    endurance_min: (f64, f64),
    thrust_to_weight: (f64, f64),
    time_constant_s: (f64, f64),
    tilt_deg: Option<(f64, f64)>,
    readme: Readme,
}

/// The measured values in README.md's table, as printed there.
struct Readme {
    rpm: f64,
    command: f64,
    power_w: f64,
    endurance_min: f64,
    thrust_to_weight: f64,
    /// The 63 % rise time and the analytic time constant, ms.
    time_constant_ms: (f64, f64),
    yaw_radps2: f64,
    tilt_deg: Option<f64>,
}

/// `value` shows as `printed` with the digits of `unit` (1, 0.1, 0.01):
/// the README's figure is current.
fn as_printed(what: &str, name: &str, value: f64, printed: f64, unit: f64) {
    assert!(
        (value - printed).abs() <= 0.5 * unit + 1e-9,
        "{name}: {what} is now {value:.4}, README.md's table says {printed}: update the table"
    );
}

const CLASSES: [Class; 3] = [
    Class {
        name: "iris",
        rpm: (4790.0, 0.05),
        command: (0.53, 0.05),
        power_w: (169.0, 0.15),
        endurance_min: (16.1, 0.15),
        thrust_to_weight: (2.4, 3.0),
        time_constant_s: (0.020, 0.060),
        tilt_deg: Some((5.0, 11.0)),
        readme: Readme {
            rpm: 4739.0,
            command: 0.51,
            power_w: 166.0,
            endurance_min: 16.6,
            thrust_to_weight: 2.81,
            time_constant_ms: (33.5, 36.6),
            yaw_radps2: 4.1,
            tilt_deg: Some(8.1),
        },
    },
    Class {
        name: "hexa",
        rpm: (3640.0, 0.06),
        command: (0.53, 0.05),
        power_w: (234.0, 0.15),
        endurance_min: (18.6, 0.15),
        thrust_to_weight: (2.5, 3.2),
        time_constant_s: (0.015, 0.060),
        tilt_deg: Some((4.0, 10.0)),
        readme: Readme {
            rpm: 3631.0,
            command: 0.53,
            power_w: 224.0,
            endurance_min: 19.3,
            thrust_to_weight: 2.85,
            time_constant_ms: (43.0, 46.0),
            yaw_radps2: 4.0,
            tilt_deg: Some(8.1),
        },
    },
    Class {
        name: "octa",
        rpm: (4140.0, 0.07),
        command: (0.51, 0.05),
        power_w: (1400.0, 0.15),
        endurance_min: (12.1, 0.15),
        thrust_to_weight: (2.3, 3.1),
        time_constant_s: (0.020, 0.060),
        tilt_deg: None,
        readme: Readme {
            rpm: 4141.0,
            command: 0.53,
            power_w: 1388.0,
            endurance_min: 12.1,
            thrust_to_weight: 2.86,
            time_constant_ms: (39.9, 43.4),
            yaw_radps2: 3.5,
            tilt_deg: None,
        },
    },
];

fn class(name: &str) -> &'static Class {
    CLASSES.iter().find(|c| c.name == name).unwrap()
}

fn within(what: &str, name: &str, value: f64, (target, rel): (f64, f64)) {
    assert!(
        (value / target - 1.0).abs() <= rel,
        "{name}: {what} {value:.4} is not within {:.0} % of {target}",
        rel * 100.0
    );
}

fn between(what: &str, name: &str, value: f64, (lo, hi): (f64, f64)) {
    assert!(
        value >= lo && value <= hi,
        "{name}: {what} {value:.4} is not in [{lo}, {hi}]"
    );
}

fn scratch(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lockstep-airframes-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scenario hovering `spec` at 10 m above its origin for `duration_s`:
/// take-off from rest, then loiter over home. `extra` is appended.
fn hover_scenario(dir: &Path, spec: &str, duration_s: f64, extra: &str) -> Scenario {
    std::fs::write(
        dir.join("hover.waypoints"),
        "QGC WPL 110\n\
         0\t1\t0\t16\t0\t0\t0\t0\t47.397742\t8.545594\t488\t1\n\
         1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t10\t1\n\
         2\t0\t3\t19\t1000000\t0\t0\t0\t47.397742\t8.545594\t10\t1\n",
    )
    .unwrap();
    let text = format!(
        "schema_version = 1\n\
         [simulation]\nseed = 11\nduration_s = {duration_s}\n\
         [vehicle]\nspec = \"{spec}\"\nmission = \"hover.waypoints\"\n\
         [[events]]\nat_s = 1.0\naction = \"arm\"\n\
         [[events]]\nat_s = 2.0\naction = \"mission_start\"\n{extra}"
    );
    Scenario::from_toml_str(&text, dir.join("hover.toml")).unwrap()
}

/// The estimator's output is the truth, undelayed.
const PERFECT_ESTIMATOR: &str = "[estimator]\ndelay_us = 0\nposition_noise_m = 0.0\n\
    velocity_noise_mps = 0.0\nattitude_noise_rad = 0.0\nrates_noise_radps = 0.0\n\
    position_bias_m = 0.0\nvelocity_bias_mps = 0.0\nattitude_bias_rad = 0.0\n\
    rates_bias_radps = 0.0\n";

fn engine(s: &Scenario) -> Engine {
    Engine::new(s, Path::new(crate::common::BUNDLED), None).unwrap()
}

fn tilt_deg(x: &[f64]) -> f64 {
    let (qx, qy) = (x[StateLayout::QUAT + 1], x[StateLayout::QUAT + 2]);
    (1.0 - 2.0 * (qx * qx + qy * qy))
        .clamp(-1.0, 1.0)
        .acos()
        .to_degrees()
}

/// Averages over 30 s of hover (from 25 s: take-off and settling done).
#[derive(Debug, Default)]
struct HoverFigures {
    rpm: f64,
    command: f64,
    power_w: f64,
    n: f64,
}

/// Hovers until the packs' mean state of charge falls to 0.2; returns the
/// 30 s hover averages and the time from arming (a full pack) to SOC 0.2.
fn hover_until_soc_0_2(name: &str) -> (HoverFigures, f64) {
    let dir = scratch(&format!("endurance-{name}"));
    let s = hover_scenario(&dir, name, 3000.0, PERFECT_ESTIMATOR);
    let mut e = engine(&s);
    let nr = e.plant().rotors.len();
    let nb = e.plant().batteries.len();
    let mut h = HoverFigures::default();
    let armed_at = 1.0;
    // The mission's altitudes are above home: the resting centre of mass.
    let hover_z = e.state()[2] - 10.0;
    loop {
        let t = e
            .step()
            .unwrap_or_else(|err| panic!("{name}: {err}"))
            .unwrap_or_else(|| panic!("{name}: SOC 0.2 not reached in 3000 s"))
            .as_secs_f64();
        let x = e.state();
        if (25.0..55.0).contains(&t) && e.now().0.is_multiple_of(4000) {
            assert!(
                (x[2] - hover_z).abs() < 0.05,
                "{name}: not hovering at 10 m at {t} s"
            );
            let o = e.plant_outputs();
            let a = e.actuators();
            h.rpm += (0..nr)
                .map(|i| x[e.plant().layout.rotor_speed(i)])
                .sum::<f64>()
                / nr as f64
                * 60.0
                / (2.0 * std::f64::consts::PI);
            h.command += a.motors[..nr].iter().map(|m| f64::from(*m)).sum::<f64>() / nr as f64;
            h.power_w += o.batteries[..nb]
                .iter()
                .map(|b| b.voltage_v * b.current_a)
                .sum::<f64>();
            h.n += 1.0;
        }
        let soc = (0..nb).map(|j| x[e.plant().layout.soc(j)]).sum::<f64>() / nb as f64;
        if soc <= 0.2 {
            assert!(
                (x[2] - hover_z).abs() < 0.05,
                "{name}: still hovering at SOC 0.2"
            );
            h.rpm /= h.n;
            h.command /= h.n;
            h.power_w /= h.n;
            return (h, (t - armed_at) / 60.0);
        }
    }
}

fn hover_figures_and_endurance(name: &str) {
    let c = class(name);
    let (h, minutes) = hover_until_soc_0_2(name);
    eprintln!("{name}: {h:?}, {minutes:.2} min from a full pack to SOC 0.2");
    within("hover rotor speed (rpm)", name, h.rpm, c.rpm);
    within("hover command", name, h.command, c.command);
    within("battery power at hover (W)", name, h.power_w, c.power_w);
    within(
        "hover time to SOC 0.2 (min)",
        name,
        minutes,
        c.endurance_min,
    );
    let r = &c.readme;
    as_printed("hover rotor speed (rpm)", name, h.rpm, r.rpm, 1.0);
    as_printed("hover command", name, h.command, r.command, 0.01);
    as_printed(
        "battery power at hover (W)",
        name,
        h.power_w,
        r.power_w,
        1.0,
    );
    as_printed("hover time (min)", name, minutes, r.endurance_min, 0.1);
}

#[test]
fn iris_hover_figures_and_endurance() {
    hover_figures_and_endurance("iris");
}

#[test]
fn hexa_hover_figures_and_endurance() {
    hover_figures_and_endurance("hexa");
}

#[test]
fn octa_hover_figures_and_endurance() {
    hover_figures_and_endurance("octa");
}

fn plant(name: &str) -> Multirotor {
    AircraftSpec::builtin(name).unwrap().build().unwrap()
}

fn origin_density(p: &Multirotor) -> f64 {
    Isa::at_altitude(p.origin.geodetic.alt_m).density_kgpm3
}

#[test]
fn full_throttle_thrust_to_weight_at_nominal_voltage() {
    for c in &CLASSES {
        let p = plant(c.name);
        let v = p.batteries[0].nominal_voltage_v;
        let full = p.steady_state_thrust_n(1.0, v, origin_density(&p));
        let tw = full * p.rotors.len() as f64 / (p.mass_kg * p.gravity_mps2());
        eprintln!("{}: T/W {tw:.3}", c.name);
        between("full-throttle T/W", c.name, tw, c.thrust_to_weight);
        as_printed("T/W", c.name, tw, c.readme.thrust_to_weight, 0.01);
    }
}

/// The airframe on a test stand: the rigid body is held, only the drive
/// train, actuators and batteries evolve.
struct Stand<'a> {
    plant: &'a Multirotor,
    inputs: PlantInputs,
}

impl System for Stand<'_> {
    fn dim(&self) -> usize {
        self.plant.dim()
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        self.plant.rhs(x, &self.inputs, dx);
        dx[..13].fill(0.0);
    }
    fn error_groups(&self) -> &[ErrorGroup] {
        self.plant.error_groups()
    }
}

#[test]
fn thrust_response_time_constant_at_hover() {
    for c in &CLASSES {
        let p = plant(c.name);
        let rho = origin_density(&p);
        let analytic = p.hover_rotor_time_constant_s(rho) + p.actuator.equivalent_lag_s();
        // Find the hover command on the stand (bisection on the steady rotor
        // speed), then step rotor 0's command by 2 % and time 63 % of its
        // speed change (one rotor: the bus voltage barely moves).
        let settle = |cmd: f64| -> (Vec<f64>, Stand) {
            let mut u = PlantInputs::default();
            u.motor_cmd[..p.rotors.len()].fill(cmd);
            let stand = Stand {
                plant: &p,
                inputs: u,
            };
            let mut x = p.state_at([0.0, 0.0, -100.0], [1.0, 0.0, 0.0, 0.0]);
            let mut integ = Integrator::new(Method::Rk4, p.dim(), Options::default()).unwrap();
            for k in 0..3000 {
                integ.step_interval(&stand, k * 1000, 1000, &mut x).unwrap();
            }
            (x, stand)
        };
        let w_hover = p.hover_rotor_speed(rho);
        let (mut lo, mut hi) = (0.2, 0.9);
        for _ in 0..30 {
            let mid = 0.5 * (lo + hi);
            if settle(mid).0[p.layout.rotor_speed(0)] < w_hover {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let (mut x, mut stand) = settle(lo);
        let w0 = x[p.layout.rotor_speed(0)];
        stand.inputs.motor_cmd[0] = lo * 1.02;
        let mut end = x.clone();
        let mut integ = Integrator::new(Method::Rk4, p.dim(), Options::default()).unwrap();
        for k in 0..3000 {
            integ
                .step_interval(&stand, k * 1000, 1000, &mut end)
                .unwrap();
        }
        let w_end = end[p.layout.rotor_speed(0)];
        let mut integ = Integrator::new(Method::Rk4, p.dim(), Options::default()).unwrap();
        let target = w0 + (1.0 - (-1.0f64).exp()) * (w_end - w0);
        let mut t63 = None;
        for k in 0..1_000_000u64 {
            integ.step_interval(&stand, k * 100, 100, &mut x).unwrap();
            if x[p.layout.rotor_speed(0)] >= target {
                t63 = Some((k + 1) as f64 * 1e-4);
                break;
            }
        }
        let t63 = t63.unwrap();
        eprintln!(
            "{}: tau {analytic:.4} s (analytic), 63 % after {t63:.4} s",
            c.name
        );
        between("thrust time constant (s)", c.name, t63, c.time_constant_s);
        between(
            "analytic time constant (s)",
            c.name,
            analytic,
            c.time_constant_s,
        );
        let (rise_ms, analytic_ms) = c.readme.time_constant_ms;
        as_printed("63 % rise (ms)", c.name, t63 * 1e3, rise_ms, 0.1);
        as_printed(
            "time constant (ms)",
            c.name,
            analytic * 1e3,
            analytic_ms,
            0.1,
        );
        // A first-order lag reaches 63 % at tau; with the octa's ESC lag in
        // series the sum of the lags is within 15 % of the 63 % time.
        assert!(
            (t63 / analytic - 1.0).abs() < 0.15,
            "{}: {t63} vs {analytic}",
            c.name
        );
    }
}

#[test]
fn largest_static_yaw_acceleration() {
    for c in &CLASSES {
        let p = plant(c.name);
        let n = p.rotors.len();
        // B maps rotor thrusts to roll, pitch, yaw torque and collective.
        let mut b = DMatrix::<f64>::zeros(4, n);
        for (i, r) in p.rotors.iter().enumerate() {
            let m = r.moment_arm_m - r.spin_axis * p.propeller.torque_coeff_m;
            for k in 0..3 {
                b[(k, i)] = m[k];
            }
            b[(3, i)] = -r.thrust_axis.z;
        }
        let pinv = b.transpose() * (&b * b.transpose()).try_inverse().unwrap();
        let weight = p.mass_kg * p.gravity_mps2();
        let hover: Vec<f64> = (0..n).map(|i| pinv[(i, 3)] * weight).collect();
        let full =
            p.steady_state_thrust_n(1.0, p.batteries[0].nominal_voltage_v, origin_density(&p));
        // The largest yaw torque the allocation reaches with every rotor in
        // [0, full] while holding the weight with no roll or pitch torque.
        let mut tau = f64::INFINITY;
        for i in 0..n {
            let u = pinv[(i, 2)];
            if u > 1e-12 {
                tau = tau.min((full - hover[i]) / u);
            } else if u < -1e-12 {
                tau = tau.min(-hover[i] / u);
            }
        }
        let alpha = (p.inertia_kgm2.try_inverse().unwrap() * Vector3::new(0.0, 0.0, tau)).z;
        eprintln!("{}: yaw {tau:.3} N m, {alpha:.2} rad/s^2", c.name);
        between("max static yaw acceleration", c.name, alpha, (3.0, 6.0));
        as_printed(
            "max static yaw acceleration",
            c.name,
            alpha,
            c.readme.yaw_radps2,
            0.1,
        );
    }
}

/// Mean tilt over 30 s of holding position at 10 m in a constant 5 m/s
/// wind from the north.
fn tilt_in_wind(name: &str) -> f64 {
    let dir = scratch(&format!("wind-{name}"));
    let s = hover_scenario(
        &dir,
        name,
        60.0,
        &format!(
            "{PERFECT_ESTIMATOR}[wind]\nmodel = \"constant\"\nmean_ned_mps = [5.0, 0.0, 0.0]\n"
        ),
    );
    let mut e = engine(&s);
    let (mut sum, mut n) = (0.0, 0.0);
    while let Some(t) = e.step().unwrap() {
        if t.0 >= 30_000_000 && t.0.is_multiple_of(4000) {
            let x = e.state();
            assert!(x[0].hypot(x[1]) < 0.5, "{name}: holding position");
            sum += tilt_deg(x);
            n += 1.0;
        }
    }
    sum / n
}

#[test]
fn steady_tilt_holding_position_in_a_5_mps_wind() {
    for c in &CLASSES {
        if let Some(range) = c.tilt_deg {
            let tilt = tilt_in_wind(c.name);
            eprintln!("{}: {tilt:.2} deg in 5 m/s", c.name);
            between("tilt in a 5 m/s wind (deg)", c.name, tilt, range);
            as_printed("tilt (deg)", c.name, tilt, c.readme.tilt_deg.unwrap(), 0.1);
        }
    }
}

#[test]
fn motor_commands_are_steady_in_hover_with_default_sensor_noise() {
    // Default sensors and estimator (noise, biases, 20 ms delay), calm air.
    for c in &CLASSES {
        let dir = scratch(&format!("noise-{}", c.name));
        let s = hover_scenario(&dir, c.name, 45.0, "");
        let mut e = engine(&s);
        let n = e.plant().rotors.len();
        let mut samples: Vec<Vec<f64>> = vec![Vec::new(); n];
        while let Some(t) = e.step().unwrap() {
            if t.0 >= 25_000_000 && t.0.is_multiple_of(4000) {
                for (i, s) in samples.iter_mut().enumerate() {
                    s.push(f64::from(e.actuators().motors[i]));
                }
            }
        }
        for (i, s) in samples.iter().enumerate() {
            let mean = s.iter().sum::<f64>() / s.len() as f64;
            let sd = (s.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / s.len() as f64).sqrt();
            assert!(sd <= 0.03, "{}: motor {i} command sd {sd:.4}", c.name);
        }
    }
}

#[test]
fn hovering_until_the_pack_is_empty_cuts_it_off_and_the_vehicle_comes_down() {
    // The Iris from 2 % charge, battery failsafe off: it hovers until the
    // pack is empty, which then delivers nothing (SOC stops at exactly 0,
    // the bus drops to 0 V) and the vehicle comes down. At every boundary
    // the pack's current equals the bus current.
    let dir = scratch("empty");
    let mut spec = AircraftSpec::builtin("iris").unwrap();
    spec.batteries[0].initial_soc = 0.02;
    std::fs::write(dir.join("iris-low.toml"), spec.to_toml_string()).unwrap();
    let s = hover_scenario(
        &dir,
        "iris-low.toml",
        120.0,
        &format!("{PERFECT_ESTIMATOR}[autopilot.params]\nCOM_LOW_BAT_ACT = 0\n"),
    );
    let mut e = engine(&s);
    let soc = e.plant().layout.soc(0);
    let mut empty_at = None;
    let mut max_alt: f64 = 0.0;
    while let Some(t) = e.step().unwrap() {
        let x = e.state();
        assert!(x[soc] >= 0.0, "SOC {} at {t}", x[soc]);
        max_alt = max_alt.max(-x[2]);
        let o = e.plant_outputs();
        let b = o.batteries[0];
        assert!(
            (b.current_a - o.bus_current_a).abs() <= 1e-9 * o.bus_current_a.abs().max(1e-9),
            "{t}: pack {} A, bus {} A",
            b.current_a,
            o.bus_current_a
        );
        if x[soc] == 0.0 {
            empty_at.get_or_insert(t);
            assert!(
                !b.connected && b.current_a == 0.0 && o.bus_voltage_v == 0.0,
                "{t}: {o:?}"
            );
        }
    }
    let empty_at = empty_at.expect("the pack empties");
    assert!(max_alt > 9.5, "it hovered at 10 m first ({max_alt} m)");
    assert!(
        empty_at.as_secs_f64() > 20.0,
        "2 % of 5.1 Ah lasts about 25 s: empty at {empty_at}"
    );
    let x = e.state();
    assert!(
        -x[2] < 0.3,
        "down on the ground at the end: altitude {}",
        -x[2]
    );
    assert_eq!(x[soc], 0.0);
}
