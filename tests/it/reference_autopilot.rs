//! The bundled C autopilot through the safe wrapper: outputs when disarmed,
//! at hover, under attitude errors, the mixer on several airframes.

use crate::common::*;
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

#[test]
fn create_refuses_a_negative_or_nan_rotor_time_constant() {
    for tau in [-0.01f32, f32::NAN, f32::INFINITY] {
        let mut bad = config(&quad_x(), 1.5, 8.0);
        bad.rotor_time_constant_s = tau;
        let err = load_bundled().create(&bad).unwrap_err();
        assert_eq!(
            err.to_string(),
            "autopilot create failed: config.rotor_time_constant_s must be >= 0 and finite (0: unknown)",
            "{tau}"
        );
    }
    let mut unknown = config(&quad_x(), 1.5, 8.0);
    unknown.rotor_time_constant_s = 0.0;
    load_bundled().create(&unknown).unwrap();
}

#[test]
fn a_non_finite_gyro_sample_fails_the_step_naming_its_timestamp() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    for bad in [f32::NAN, f32::INFINITY] {
        let (mut ap, t) = hovering(&cfg);
        let mut f = frame(t + PERIOD_US, ALT, LEVEL);
        f.fresh_mask |= LOCKSTEP_FRESH_IMU;
        f.imu.timestamp_us = t + PERIOD_US - 1000;
        f.imu.gyro_radps = [0.0, bad, 0.0];
        let mut out = lockstep_actuator_frame::default();
        match ap.step(f.time_us, &f, &mut out).unwrap_err() {
            lockstep_abi::AbiError::StepFailed { code, message, .. } => {
                assert_eq!(code, LOCKSTEP_AP_ERR_INVALID);
                assert_eq!(
                    message,
                    format!("gyro sampled at {} us is not finite", t + PERIOD_US - 1000)
                );
            }
            other => panic!("{other}"),
        }
    }
}

/// A hovering instance whose roll-rate loop is pure P (I and D off), so
/// that its roll torque setpoint is `-J_x P w_x`: the filtered roll rate can
/// be read back from it. Level at `ALT`, attitude and rate setpoints 0.
struct RollRig {
    ap: Autopilot,
    t: u64,
    /// `J_x P`: torque per filtered roll rate.
    gain: f64,
}

impl RollRig {
    fn new() -> RollRig {
        let cfg = config(&quad_x(), 1.5, 8.0);
        let (mut ap, t) = hovering(&cfg);
        for p in ["MC_ROLLRATE_I", "MC_ROLLRATE_D"] {
            ap.set_param_f32(p, 0.0).unwrap();
        }
        let p = f64::from(ap.param_f32("MC_ROLLRATE_P").unwrap());
        RollRig {
            ap,
            t,
            gain: f64::from(cfg.inertia_diag_kgm2[0]) * p,
        }
    }

    /// One autopilot period later: the estimate (its rates `est_roll`) and,
    /// if given, an IMU sample taken at `(timestamp, gyro roll rate)`.
    /// Returns the filtered roll rate the rate loop used, and the motors.
    fn step(&mut self, est_roll: f32, imu: Option<(u64, f32)>) -> (f64, [f32; 4]) {
        self.t += PERIOD_US;
        let mut f = frame(self.t, ALT, LEVEL);
        f.estimate.rates_frd_radps = [est_roll, 0.0, 0.0];
        if let Some((ts, g)) = imu {
            f.fresh_mask |= LOCKSTEP_FRESH_IMU;
            f.imu.timestamp_us = ts;
            f.imu.gyro_radps = [g, 0.0, 0.0];
        }
        let out = step(&mut self.ap, &f);
        let tau = f64::from(out.setpoints.torque_frd_nm[0]);
        let m = [out.motors[0], out.motors[1], out.motors[2], out.motors[3]];
        (-tau / self.gain, m)
    }
}

#[test]
fn an_imu_gap_restarts_the_gyro_filter_without_a_spike() {
    // A steady roll rate of 0.5 rad/s, an IMU dropout of 40 ms, then the
    // same rate again. Before the fix the first sample after the gap went
    // through filters redesigned for the 44 ms gap on the old state: the
    // filtered rate jumped to 1.65 x the true rate, and the motors with it.
    let x = 0.5f32;
    let mut rig = RollRig::new();
    let mut steady = (0.0, [0.0f32; 4]);
    for _ in 0..100 {
        let t = rig.t + PERIOD_US;
        steady = rig.step(x, Some((t, x)));
    }
    assert!(
        (steady.0 / f64::from(x) - 1.0).abs() < 1e-5,
        "DC gain 1: {}",
        steady.0
    );
    for _ in 0..10 {
        // The estimate carries the same rate: the fallback changes nothing.
        let (w, _) = rig.step(x, None);
        assert!((w / f64::from(x) - 1.0).abs() < 1e-5, "during the gap: {w}");
    }
    for k in 0..50 {
        let t = rig.t + PERIOD_US;
        let (w, motors) = rig.step(x, Some((t, x)));
        assert!(
            (w / f64::from(x) - 1.0).abs() < 1e-5,
            "sample {k} after the gap: filtered rate {w} for a true {x}"
        );
        for (m, s) in motors.iter().zip(steady.1) {
            assert!(
                (m - s).abs() < 1e-5,
                "sample {k}: motors {motors:?} vs {:?}",
                steady.1
            );
        }
    }
    // The rate changes during a second gap (0.5 -> 0.2 rad/s, which the
    // estimate carries meanwhile). The last gyro sample stays current for 3
    // IMU periods, then the loop falls back to the estimate's rates; the
    // first sample after the gap restarts the filter at the new rate,
    // instead of filtering a step from the stale 0.5.
    for k in 0..10 {
        let (w, _) = rig.step(0.2, None);
        let expect = if k < 3 { 0.5 } else { 0.2 };
        assert!((w / expect - 1.0).abs() < 1e-5, "gap step {k}: {w}");
    }
    let t = rig.t + PERIOD_US;
    let (w, _) = rig.step(0.2, Some((t, 0.2)));
    assert!(
        (w / 0.2 - 1.0).abs() < 1e-5,
        "restarted at the new rate: {w}"
    );
}

#[test]
fn gyro_staleness_is_measured_in_the_imus_own_period() {
    // IMU every 20 ms, autopilot every 4 ms; the gyro says 0.5 rad/s, the
    // (delayed) estimate 0. Before the fix the gyro went stale after 3
    // autopilot periods (12 ms), so the rate loop switched to the estimate
    // for the last step of every IMU period.
    let mut rig = RollRig::new();
    let mut imu = None;
    for k in 0..200u64 {
        let t = rig.t + PERIOD_US;
        let fresh = k % 5 == 0;
        if fresh {
            imu = Some((t, 0.5f32));
        }
        let (w, _) = rig.step(0.0, if fresh { imu } else { None });
        if k >= 10 {
            assert!((w / 0.5 - 1.0).abs() < 1e-5, "step {k}: the loop used {w}");
        }
    }
}

/// Gain of a second-order Butterworth low-pass at `f` Hz, cutoff `fc`, by
/// the bilinear transform with prewarping at `fs`.
fn butterworth_gain(f: f64, fc: f64, fs: f64) -> f64 {
    let pi = std::f64::consts::PI;
    let r = (pi * f / fs).tan() / (pi * fc / fs).tan();
    1.0 / (1.0 + r.powi(4)).sqrt()
}

/// Steady amplitude of the filtered roll rate for a unit sine of `f` Hz,
/// IMU sampled every `imu_us` and read at each 4 ms autopilot step (the
/// latest sample); `cutoff` sets IMU_GYRO_CUTOFF first, if given.
fn sine_amplitude(f: f64, imu_us: u64, cutoff: Option<f32>) -> f64 {
    let mut rig = RollRig::new();
    if let Some(c) = cutoff {
        rig.ap.set_param_f32("IMU_GYRO_CUTOFF", c).unwrap();
    }
    let mut peak: f64 = 0.0;
    for k in 0..1500u64 {
        let now = rig.t + PERIOD_US;
        let ts = now / imu_us * imu_us;
        let g = (2.0 * std::f64::consts::PI * f * ts as f64 * 1e-6).sin() as f32;
        let (w, _) = rig.step(g, Some((ts, g)));
        if k >= 1000 {
            peak = peak.max(w.abs());
        }
    }
    peak
}

#[test]
fn the_gyro_filter_has_unit_dc_gain_and_its_cutoff_at_the_designed_frequency() {
    // 250 Hz sampling, 40 Hz cutoff: -3 dB at 40 Hz; 20 Hz passes at 0.96.
    // (Peaks of a sampled sine: within 1 % at 4 samples or more per period
    // near the crest; 40 Hz gives 6.25.)
    for (f, tol) in [(5.0, 0.005), (20.0, 0.01), (40.0, 0.03)] {
        let a = sine_amplitude(f, 4000, None);
        let expect = butterworth_gain(f, 40.0, 250.0);
        assert!((a / expect - 1.0).abs() < tol, "{f} Hz: {a} vs {expect}");
    }
}

#[test]
fn a_gyro_cutoff_set_between_steps_takes_effect_at_the_next_sample() {
    // Two identical instances on the same 20 Hz roll rate; one gets
    // IMU_GYRO_CUTOFF = 10 Hz in flight. Before the fix it kept flying on
    // the 40 Hz design: the outputs stayed identical.
    let mut a = RollRig::new();
    let mut b = RollRig::new();
    let sine = |t: u64| (2.0 * std::f64::consts::PI * 20.0 * t as f64 * 1e-6).sin() as f32;
    let mut diverged_at = None;
    let mut peak_b: f64 = 0.0;
    for k in 0..1500u64 {
        if k == 100 {
            b.ap.set_param_f32("IMU_GYRO_CUTOFF", 10.0).unwrap();
        }
        let t = a.t + PERIOD_US;
        let (wa, _) = a.step(sine(t), Some((t, sine(t))));
        let (wb, _) = b.step(sine(t), Some((t, sine(t))));
        if k < 100 {
            assert_eq!(wa, wb);
        } else if wa != wb {
            diverged_at.get_or_insert(k);
        }
        if k >= 1000 {
            peak_b = peak_b.max(wb.abs());
        }
    }
    assert_eq!(
        diverged_at,
        Some(100),
        "the next sample uses the new cutoff"
    );
    let expect = butterworth_gain(20.0, 10.0, 250.0);
    assert!((peak_b / expect - 1.0).abs() < 0.02, "{peak_b} vs {expect}");
}

#[test]
fn an_imu_at_3_ms_read_every_4_ms_is_filtered_as_at_4_ms() {
    // The autopilot sees gaps of 3 and 6 ms (4 ms on average). Before the
    // fix the filters were redesigned for each gap on the other design's
    // state: a steady rate came out biased and rough, a sine distorted.
    let mut rig = RollRig::new();
    for k in 0..300u64 {
        let now = rig.t + PERIOD_US;
        let ts = now / 3000 * 3000;
        let (w, _) = rig.step(0.5, Some((ts, 0.5)));
        if k >= 30 {
            assert!((w / 0.5 - 1.0).abs() < 1e-5, "step {k}: {w}");
        }
    }
    // A 10 Hz sine: the amplitude of the 4 ms design (samples every 4 ms on
    // average), within what the uneven sampling itself costs.
    let a = sine_amplitude(10.0, 3000, None);
    let expect = butterworth_gain(10.0, 40.0, 250.0);
    assert!((a / expect - 1.0).abs() < 0.03, "{a} vs {expect}");
}
