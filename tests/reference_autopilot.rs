//! The bundled C autopilot through the safe wrapper: outputs when disarmed,
//! at hover, under attitude errors, the mixer on several airframes.

mod common;

use common::*;
use lockstep_abi::Autopilot;
use lockstep_abi::ffi::*;

const ALT: [f32; 3] = [0.0, 0.0, -10.0];
const LEVEL: [f32; 4] = [1.0, 0.0, 0.0, 0.0];

/// An instance armed in the air (landed flag 0) and holding at `ALT`, level,
/// heading north; returns it with the time of its last step.
fn hovering(cfg: &lockstep_autopilot_config) -> (Autopilot, u64) {
    let mut ap = load_bundled().create(cfg).unwrap();
    let mut t = PERIOD_US;
    step(&mut ap, &frame(t, ALT, LEVEL));
    t += PERIOD_US;
    let out = step(
        &mut ap,
        &with_command(frame(t, ALT, LEVEL), LOCKSTEP_ARM_ARM, 0, 0),
    );
    assert_eq!((out.armed, out.mode), (1, LOCKSTEP_MODE_IDLE));
    t += PERIOD_US;
    let out = step(
        &mut ap,
        &with_command(frame(t, ALT, LEVEL), 0, LOCKSTEP_MODE_HOLD, 0),
    );
    assert_eq!(out.mode, LOCKSTEP_MODE_HOLD);
    (ap, t)
}

#[test]
fn disarmed_outputs_zero_on_every_motor() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut ap = load_bundled().create(&cfg).unwrap();
    for k in 1..=50u64 {
        let out = step(
            &mut ap,
            &frame(k * PERIOD_US, ALT, quat_rpy(0.2, -0.1, 0.5)),
        );
        assert_eq!(out.armed, 0);
        assert_eq!(out.mode, LOCKSTEP_MODE_DISARMED);
        assert!(out.motors.iter().all(|&m| m == 0.0), "{:?}", out.motors);
    }
}

#[test]
fn hover_with_zero_error_gives_equal_commands_whose_thrust_equals_weight() {
    let mass = 1.5;
    let cfg = config(&quad_x(), mass, 8.0);
    let (mut ap, mut t) = hovering(&cfg);
    for _ in 0..20 {
        t += PERIOD_US;
        let out = step(&mut ap, &frame(t, ALT, LEVEL));
        let m0 = out.motors[0];
        for m in &out.motors[..4] {
            assert!((m - m0).abs() <= 1e-6, "{:?}", out.motors);
        }
        assert!(out.motors[4..].iter().all(|&m| m == 0.0));
        let total: f64 = thrusts(&cfg, &out).iter().sum();
        let weight = mass as f64 * GRAVITY as f64;
        assert!(
            (total - weight).abs() < 1e-4 * weight,
            "thrust {total} vs weight {weight}"
        );
        assert!((out.setpoints.thrust_n as f64 - weight).abs() < 1e-4 * weight);
    }
}

#[test]
fn roll_error_produces_a_restoring_roll_torque() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    for roll in [0.1f32, -0.1] {
        let (mut ap, t) = hovering(&cfg);
        let out = step(
            &mut ap,
            &frame(t + PERIOD_US, ALT, quat_rpy(roll, 0.0, 0.0)),
        );
        let (tau, _) = wrench(&cfg, &thrusts(&cfg, &out));
        assert!(tau[0] * (roll as f64) < 0.0, "roll {roll}: torque {tau:?}");
        assert!(tau[0].abs() > 0.05, "a real torque, not noise: {tau:?}");
        assert!(
            tau[1].abs() < 1e-3 && tau[2].abs() < 1e-3,
            "pure roll: {tau:?}"
        );
        // Rolled right (positive), the right-hand rotors (y > 0) must push harder.
        let right: f32 = (0..4)
            .filter(|&i| cfg.rotors[i].position_m[1] > 0.0)
            .map(|i| out.motors[i])
            .sum();
        let left: f32 = (0..4)
            .filter(|&i| cfg.rotors[i].position_m[1] < 0.0)
            .map(|i| out.motors[i])
            .sum();
        assert!((right - left) * roll > 0.0, "right {right} left {left}");
    }
}

#[test]
fn yaw_error_produces_a_restoring_yaw_torque_through_spin_directions() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    for yaw in [0.1f32, -0.1] {
        let (mut ap, t) = hovering(&cfg);
        let out = step(&mut ap, &frame(t + PERIOD_US, ALT, quat_rpy(0.0, 0.0, yaw)));
        let (tau, _) = wrench(&cfg, &thrusts(&cfg, &out));
        assert!(tau[2] * (yaw as f64) < 0.0, "yaw {yaw}: torque {tau:?}");
        assert!(
            tau[0].abs() < 1e-3 && tau[1].abs() < 1e-3,
            "pure yaw: {tau:?}"
        );
        // Counter-clockwise rotors (spin +1) yaw the body positively: for a
        // positive yaw error the clockwise ones must push harder.
        let ccw: f32 = (0..4)
            .filter(|&i| cfg.rotors[i].spin_dir == 1)
            .map(|i| out.motors[i])
            .sum();
        let cw: f32 = (0..4)
            .filter(|&i| cfg.rotors[i].spin_dir == -1)
            .map(|i| out.motors[i])
            .sum();
        assert!((cw - ccw) * yaw > 0.0, "cw {cw} ccw {ccw}");
    }
}

/// Motor commands, mapped back through the thrust curve and the geometry,
/// reproduce the torque and thrust the controller asked of the mixer.
fn assert_mixer_reproduces_request(rotors: &[([f32; 3], i32)], mass: f32, max_thrust: f32) {
    let cfg = config(rotors, mass, max_thrust);
    let (mut ap, mut t) = hovering(&cfg);
    let mut checked = 0;
    for (roll, pitch, yaw) in [
        (0.05f32, 0.0f32, 0.0f32),
        (0.0, -0.04, 0.0),
        (0.0, 0.0, 0.08),
        (0.03, 0.02, -0.05),
    ] {
        t += PERIOD_US;
        let out = step(&mut ap, &frame(t, ALT, quat_rpy(roll, pitch, yaw)));
        let sp = out.setpoints;
        let (tau, thrust) = wrench(&cfg, &thrusts(&cfg, &out));
        for k in 0..3 {
            assert!(
                (tau[k] - sp.torque_frd_nm[k] as f64).abs() < 1e-4,
                "{} rotors, axis {k}: produced {tau:?}, requested {:?}",
                rotors.len(),
                sp.torque_frd_nm
            );
        }
        assert!(
            (thrust - sp.thrust_n as f64).abs() < 1e-4 * thrust,
            "{thrust} vs {}",
            sp.thrust_n
        );
        assert!(
            sp.torque_frd_nm.iter().any(|x| x.abs() > 0.01),
            "a non-trivial request"
        );
        checked += 1;
    }
    assert_eq!(checked, 4);
}

#[test]
fn mixer_reproduces_requested_wrench_on_quad_hexa_and_octa() {
    assert_mixer_reproduces_request(&quad_x(), 1.5, 8.0);
    assert_mixer_reproduces_request(&ring(6, 0.3, 30.0), 2.5, 9.0);
    assert_mixer_reproduces_request(&ring(8, 0.35, 22.5), 3.5, 9.0);
}

#[test]
fn saturated_request_keeps_commands_in_range_and_the_roll_sign() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let (mut ap, t) = hovering(&cfg);
    let out = step(&mut ap, &frame(t + PERIOD_US, ALT, quat_rpy(1.2, 0.0, 0.0)));
    assert!(
        out.motors[..4].iter().all(|&m| (0.05..=1.0).contains(&m)),
        "{:?}",
        out.motors
    );
    let (tau, thrust) = wrench(&cfg, &thrusts(&cfg, &out));
    assert!(tau[0] < -0.1, "{tau:?}");
    // Regression (a hexa climbed away after touchdown): torque demands never
    // raise the collective above the request or the idle floor.
    let idle_floor: f64 = (0..4)
        .map(|i| {
            let f = cfg.thrust_model_factor as f64;
            cfg.rotors[i].max_thrust_n as f64 * (f * 0.05 * 0.05 + (1.0 - f) * 0.05)
        })
        .sum();
    assert!(
        thrust <= (out.setpoints.thrust_n as f64).max(idle_floor) + 1e-3,
        "{thrust} vs {}",
        out.setpoints.thrust_n
    );
}

#[test]
fn geometry_that_cannot_control_all_axes_is_refused_at_create() {
    // Three rotors on a line cannot produce a pitch torque.
    let rotors = [
        ([0.0, -0.2, 0.0], 1),
        ([0.0, 0.0, 0.0], -1),
        ([0.0, 0.2, 0.0], 1),
    ];
    let err = load_bundled()
        .create(&config(&rotors, 1.0, 8.0))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "autopilot create failed: the 3-rotor geometry cannot produce independent roll, pitch, yaw torque and \
         thrust (B*B^T is singular)"
    );
    let mut bad = config(&quad_x(), 1.5, 8.0);
    bad.rotors[2].spin_dir = 0;
    let err = load_bundled().create(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "autopilot create failed: rotor 2: spin_dir is 0, must be +1 or -1"
    );
    let mut bad = config(&quad_x(), 1.5, 8.0);
    bad.mass_kg = -1.0;
    let err = load_bundled().create(&bad).unwrap_err();
    assert_eq!(
        err.to_string(),
        "autopilot create failed: config.mass_kg and config.gravity_mps2 must be positive and finite"
    );
}
