//! Helpers shared by the integration tests: library paths, airframes, frames,
//! and the geometry used to check what the motors really produce.
#![allow(dead_code)]

use std::path::PathBuf;

use lockstep_abi::ffi::*;
use lockstep_abi::{Autopilot, AutopilotLibrary, config_zeroed};

pub const BUNDLED: &str = env!("LOCKSTEP_BUNDLED_AUTOPILOT");
pub const SINGLE_INSTANCE: &str = env!("LOCKSTEP_SINGLE_INSTANCE_AUTOPILOT");
pub const PERIOD_US: u64 = 4000;
pub const GRAVITY: f32 = 9.80665;

/// A broken fixture built by build.rs.
pub fn broken(case: &str) -> PathBuf {
    PathBuf::from(env!("LOCKSTEP_BROKEN_DIR")).join(format!(
        "{}lockstep_broken_{case}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}

/// Rotors evenly spaced on a circle, first one at `first_deg` from forward,
/// alternating spin directions starting with +1 (counter-clockwise).
pub fn ring(n: usize, radius: f32, first_deg: f32) -> Vec<([f32; 3], i32)> {
    (0..n)
        .map(|i| {
            let a = (first_deg + 360.0 * i as f32 / n as f32).to_radians();
            (
                [radius * a.cos(), radius * a.sin(), 0.0],
                if i % 2 == 0 { 1 } else { -1 },
            )
        })
        .collect()
}

/// A symmetric quad X: front-right and rear-left spin +1, the others -1.
pub fn quad_x() -> Vec<([f32; 3], i32)> {
    let a = 0.18;
    vec![
        ([a, a, 0.0], 1),
        ([-a, -a, 0.0], 1),
        ([a, -a, 0.0], -1),
        ([-a, a, 0.0], -1),
    ]
}

pub fn config(
    rotors: &[([f32; 3], i32)],
    mass_kg: f32,
    max_thrust_n: f32,
) -> lockstep_autopilot_config {
    let mut c = config_zeroed();
    c.rotor_count = rotors.len() as u32;
    for (i, (pos, dir)) in rotors.iter().enumerate() {
        c.rotors[i] = lockstep_rotor_geometry {
            position_m: *pos,
            thrust_axis: [0.0, 0.0, -1.0],
            spin_dir: *dir,
            torque_coeff_m: 0.05,
            max_thrust_n,
        };
    }
    c.thrust_model_factor = 0.6;
    c.mass_kg = mass_kg;
    c.inertia_diag_kgm2 = [0.03, 0.03, 0.055];
    c.gravity_mps2 = GRAVITY;
    c.autopilot_period_us = PERIOD_US as u32;
    c.origin_lat_deg = 47.397742;
    c.origin_lon_deg = 8.545594;
    c.origin_alt_m = 488.0;
    c
}

pub fn load_bundled() -> AutopilotLibrary {
    AutopilotLibrary::load(BUNDLED).expect("the bundled autopilot passes the handshake")
}

/// Quaternion body->NED from roll, pitch, yaw (ZYX).
pub fn quat_rpy(roll: f32, pitch: f32, yaw: f32) -> [f32; 4] {
    let (sr, cr) = (roll * 0.5).sin_cos();
    let (sp, cp) = (pitch * 0.5).sin_cos();
    let (sy, cy) = (yaw * 0.5).sin_cos();
    [
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    ]
}

/// A sensor frame at `t` with only the estimate fresh.
pub fn frame(t: u64, pos: [f32; 3], q: [f32; 4]) -> lockstep_sensor_frame {
    let mut f = lockstep_sensor_frame {
        time_us: t,
        fresh_mask: LOCKSTEP_FRESH_ESTIMATE,
        ..Default::default()
    };
    f.estimate.timestamp_us = t;
    f.estimate.position_ned_m = pos;
    f.estimate.attitude_q = q;
    f
}

pub fn with_command(
    mut f: lockstep_sensor_frame,
    arm: u32,
    mode: u32,
    mission_start: u32,
) -> lockstep_sensor_frame {
    f.fresh_mask |= LOCKSTEP_FRESH_COMMANDS;
    f.commands = lockstep_commands {
        timestamp_us: f.time_us,
        arm_request: arm,
        mode_request: mode,
        mission_start,
        reserved0: 0,
    };
    f
}

/// Steps and returns the actuator frame, panicking with the error.
pub fn step(ap: &mut Autopilot, f: &lockstep_sensor_frame) -> lockstep_actuator_frame {
    let mut out = lockstep_actuator_frame::default();
    ap.step(f.time_us, f, &mut out)
        .unwrap_or_else(|e| panic!("step at {}: {e}", f.time_us));
    out
}

/// Rotor thrusts (N) the motor commands produce per the config's thrust curve.
pub fn thrusts(cfg: &lockstep_autopilot_config, out: &lockstep_actuator_frame) -> Vec<f64> {
    let f = cfg.thrust_model_factor as f64;
    (0..cfg.rotor_count as usize)
        .map(|i| {
            let u = out.motors[i] as f64;
            cfg.rotors[i].max_thrust_n as f64 * (f * u * u + (1.0 - f) * u)
        })
        .collect()
}

/// Body torque (N*m) and collective thrust along -z (N) of rotor thrusts,
/// computed independently from the geometry: sum of r x F plus reaction
/// torques -spin * k * T * axis.
pub fn wrench(cfg: &lockstep_autopilot_config, t: &[f64]) -> ([f64; 3], f64) {
    let mut tau = [0.0f64; 3];
    let mut thrust = 0.0;
    for (i, ti) in t.iter().enumerate() {
        let r = cfg.rotors[i];
        let p = r.position_m.map(f64::from);
        let a = r.thrust_axis.map(f64::from);
        let force = a.map(|x| x * ti);
        let m = [
            p[1] * force[2] - p[2] * force[1],
            p[2] * force[0] - p[0] * force[2],
            p[0] * force[1] - p[1] * force[0],
        ];
        for k in 0..3 {
            tau[k] += m[k] - r.spin_dir as f64 * r.torque_coeff_m as f64 * ti * a[k];
        }
        thrust += -a[2] * ti;
    }
    (tau, thrust)
}

/// Latitude/longitude of a local north/east offset from the config origin, on
/// the WGS-84 ellipsoid's tangent plane at the origin.
pub fn geo_of(cfg: &lockstep_autopilot_config, north_m: f64, east_m: f64) -> (f64, f64) {
    let a = 6378137.0f64;
    let f = 1.0 / 298.257223563;
    let e2 = f * (2.0 - f);
    let phi = cfg.origin_lat_deg.to_radians();
    let w = (1.0 - e2 * phi.sin().powi(2)).sqrt();
    let rn = a / w;
    let rm = a * (1.0 - e2) / (w * w * w);
    let h = cfg.origin_alt_m;
    (
        cfg.origin_lat_deg + (north_m / (rm + h)).to_degrees(),
        cfg.origin_lon_deg + (east_m / ((rn + h) * phi.cos())).to_degrees(),
    )
}

/// A mission item at a local offset, altitude relative to home.
pub fn item(
    cfg: &lockstep_autopilot_config,
    command: u32,
    north_m: f64,
    east_m: f64,
    alt_m: f32,
    hold_s: f32,
) -> lockstep_mission_item {
    let (lat_deg, lon_deg) = if command == LOCKSTEP_MAV_CMD_NAV_TAKEOFF {
        (0.0, 0.0)
    } else {
        geo_of(cfg, north_m, east_m)
    };
    lockstep_mission_item {
        command,
        frame: LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT,
        param1: hold_s,
        lat_deg,
        lon_deg,
        alt_m,
        autocontinue: 1,
        ..Default::default()
    }
}

/// The example scenario (examples/scenarios/square.toml) with text edits
/// applied; relative paths in it stay valid.
pub fn example_scenario(edits: &[(&str, &str)]) -> lockstep_harness::scenario::Scenario {
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml");
    let mut text = std::fs::read_to_string(&example).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replacen(from, to, 1);
    }
    lockstep_harness::scenario::Scenario::from_toml_str(&text, example).unwrap()
}
