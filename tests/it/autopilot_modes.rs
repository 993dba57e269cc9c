//! The bundled autopilot's mode machine, mission logic and parameters,
//! driven through the safe wrapper with a kinematic (teleported) estimate.

use crate::common::*;
use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot};

const LEVEL: [f32; 4] = [1.0, 0.0, 0.0, 0.0];

struct Drive {
    ap: Autopilot,
    t: u64,
    landed: u32,
}

impl Drive {
    fn new(cfg: &lockstep_autopilot_config) -> Self {
        Drive {
            ap: load_bundled().create(cfg).unwrap(),
            t: 0,
            landed: 1,
        }
    }
    fn at(&mut self, pos: [f32; 3]) -> lockstep_actuator_frame {
        self.cmd(pos, 0, 0, 0)
    }
    fn cmd(&mut self, pos: [f32; 3], arm: u32, mode: u32, start: u32) -> lockstep_actuator_frame {
        self.t += PERIOD_US;
        let mut f = frame(self.t, pos, LEVEL);
        f.landed = self.landed;
        if arm != 0 || mode != 0 || start != 0 {
            f = with_command(f, arm, mode, start);
        }
        step(&mut self.ap, &f)
    }
    /// Steps at `pos` for `seconds`, returning the last frame.
    fn hold_for(&mut self, pos: [f32; 3], seconds: f64) -> lockstep_actuator_frame {
        let n = (seconds * 1e6 / PERIOD_US as f64).round() as u64;
        let mut out = self.at(pos);
        for _ in 1..n {
            out = self.at(pos);
        }
        out
    }
}

fn mission(cfg: &lockstep_autopilot_config) -> Vec<lockstep_mission_item> {
    vec![
        item(cfg, LOCKSTEP_MAV_CMD_NAV_TAKEOFF, 0.0, 0.0, 10.0, 0.0),
        item(cfg, LOCKSTEP_MAV_CMD_NAV_WAYPOINT, 20.0, 0.0, 10.0, 1.0),
        item(cfg, LOCKSTEP_MAV_CMD_NAV_LOITER_TIME, 20.0, 20.0, 10.0, 2.0),
        item(cfg, LOCKSTEP_MAV_CMD_NAV_WAYPOINT, 0.0, 20.0, 10.0, 0.0),
        item(
            cfg,
            LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH,
            0.0,
            0.0,
            0.0,
            0.0,
        ),
    ]
}

#[test]
fn full_mission_follows_the_mode_machine_to_auto_disarm() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut d = Drive::new(&cfg);
    d.ap.upload_mission(&mission(&cfg)).unwrap();
    let ground = [0.0, 0.0, 0.0];

    let out = d.cmd(ground, 0, 0, 1);
    assert_eq!(
        out.mode, LOCKSTEP_MODE_DISARMED,
        "a mission cannot start disarmed"
    );
    assert_eq!(d.ap.last_error(), "mission start refused: disarmed");
    assert_eq!(out.mission_count, 5);

    let out = d.cmd(ground, LOCKSTEP_ARM_ARM, 0, 0);
    assert_eq!((out.armed, out.mode), (1, LOCKSTEP_MODE_IDLE));
    assert!(
        out.motors[..4].iter().all(|&m| m == 0.05),
        "idle: {:?}",
        out.motors
    );

    let out = d.cmd(ground, 0, 0, 1);
    assert_eq!((out.mode, out.mission_current), (LOCKSTEP_MODE_TAKEOFF, 0));
    assert!(out.setpoints.velocity_ned_mps[2] < 0.0, "climbing");
    d.landed = 0;
    let out = d.at([0.0, 0.0, -5.0]);
    assert_eq!(out.mode, LOCKSTEP_MODE_TAKEOFF);
    let out = d.at([0.0, 0.0, -9.5]);
    assert_eq!((out.mode, out.mission_current), (LOCKSTEP_MODE_MISSION, 1));
    assert!(
        (out.setpoints.position_ned_m[0] - 20.0).abs() < 0.05,
        "{:?}",
        out.setpoints.position_ned_m
    );

    // Waypoint 1: reached, held 1 s, then the loiter item.
    let wp1 = [20.0, 0.0, -10.0];
    let out = d.hold_for(wp1, 0.5);
    assert_eq!(out.mission_current, 1);
    let out = d.hold_for(wp1, 0.6);
    assert_eq!(out.mission_current, 2);
    let wp2 = [20.0, 20.0, -10.0];
    assert!(
        out.setpoints
            .position_ned_m
            .iter()
            .zip(wp2)
            .all(|(a, b)| (a - b).abs() < 0.05)
    );

    // Commanded HOLD interrupts, MISSION resumes the same item.
    let out = d.cmd([20.0, 10.0, -10.0], 0, LOCKSTEP_MODE_HOLD, 0);
    assert_eq!((out.mode, out.mission_current), (LOCKSTEP_MODE_HOLD, 2));
    assert_eq!(out.setpoints.position_ned_m, [20.0, 10.0, -10.0]);
    let out = d.cmd([20.0, 10.0, -10.0], 0, LOCKSTEP_MODE_MISSION, 0);
    assert_eq!((out.mode, out.mission_current), (LOCKSTEP_MODE_MISSION, 2));

    let out = d.hold_for(wp2, 2.1);
    assert_eq!(out.mission_current, 3);
    let out = d.hold_for([0.0, 20.0, -10.0], 0.1);
    assert_eq!((out.mode, out.mission_current), (LOCKSTEP_MODE_RTL, 4));
    assert!(
        (out.setpoints.position_ned_m[2] + 15.0).abs() < 1e-4,
        "RTL climbs to 15 m first"
    );

    // RTL: climb, return, descend, land detection, auto-disarm.
    let out = d.at([0.0, 20.0, -15.0]);
    assert_eq!(
        out.setpoints.position_ned_m[..2],
        [0.0, 0.0],
        "returns above home"
    );
    let out = d.at([0.0, 0.0, -15.0]);
    assert!(out.setpoints.velocity_ned_mps[2] > 0.0, "descending");
    assert_eq!(out.mode, LOCKSTEP_MODE_RTL);
    d.landed = 1;
    let out = d.hold_for(ground, 1.1);
    assert_eq!(
        (out.mode, out.armed, out.mission_finished),
        (LOCKSTEP_MODE_LANDED, 1, 1)
    );
    let out = d.hold_for(ground, 2.1);
    assert_eq!((out.mode, out.armed), (LOCKSTEP_MODE_DISARMED, 0));
    assert!(out.motors.iter().all(|&m| m == 0.0));
}

#[test]
fn takeoff_land_and_refused_requests() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut d = Drive::new(&cfg);
    let ground = [0.0, 0.0, 0.0];
    // No estimate yet: arming is refused with a message.
    d.t += PERIOD_US;
    let f = with_command(
        lockstep_sensor_frame {
            time_us: d.t,
            landed: 1,
            ..Default::default()
        },
        LOCKSTEP_ARM_ARM,
        0,
        0,
    );
    let out = step(&mut d.ap, &f);
    assert_eq!(out.mode, LOCKSTEP_MODE_DISARMED);
    assert_eq!(
        d.ap.last_error(),
        "arming refused: no estimated state received yet"
    );

    let out = d.cmd(ground, 0, LOCKSTEP_MODE_HOLD, 0);
    assert_eq!(out.mode, LOCKSTEP_MODE_DISARMED);
    assert_eq!(d.ap.last_error(), "mode request 5 refused: disarmed");
    d.cmd(ground, LOCKSTEP_ARM_ARM, 0, 0);
    let out = d.cmd(ground, 0, LOCKSTEP_MODE_HOLD, 0);
    assert_eq!(
        out.mode, LOCKSTEP_MODE_IDLE,
        "no HOLD while resting on the ground"
    );
    let out = d.cmd(ground, 0, LOCKSTEP_MODE_MISSION, 0);
    assert_eq!(out.mode, LOCKSTEP_MODE_IDLE, "no mission uploaded");
    assert_eq!(d.ap.last_error(), "mode request 4 refused in mode 2");

    let out = d.cmd(ground, 0, LOCKSTEP_MODE_TAKEOFF, 0);
    assert_eq!(out.mode, LOCKSTEP_MODE_TAKEOFF);
    d.landed = 0;
    let out = d.at([0.0, 0.0, -2.4]);
    assert_eq!(
        out.mode, LOCKSTEP_MODE_HOLD,
        "takeoff to MIS_TAKEOFF_ALT 2.5 m ends in HOLD"
    );
    let out = d.cmd([0.0, 0.0, -2.4], 0, LOCKSTEP_MODE_LAND, 0);
    assert_eq!(out.mode, LOCKSTEP_MODE_LAND);
    assert!(
        (out.setpoints.velocity_ned_mps[2] - 0.7).abs() < 1e-6,
        "MPC_LAND_SPEED"
    );
    d.landed = 1;
    let out = d.hold_for(ground, 1.1);
    assert_eq!(out.mode, LOCKSTEP_MODE_LANDED);
    // Disarm on command at any time.
    let out = d.cmd(ground, LOCKSTEP_ARM_DISARM, 0, 0);
    assert_eq!((out.mode, out.armed), (LOCKSTEP_MODE_DISARMED, 0));
}

#[test]
fn battery_failsafe_returns_then_lands() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut d = Drive::new(&cfg);
    d.landed = 0;
    let air = [5.0, 5.0, -10.0];
    d.cmd(air, LOCKSTEP_ARM_ARM, 0, 0);
    assert_eq!(
        d.cmd(air, 0, LOCKSTEP_MODE_HOLD, 0).mode,
        LOCKSTEP_MODE_HOLD
    );
    let battery = |d: &mut Drive, warning: u32| {
        d.t += PERIOD_US;
        let mut f = frame(d.t, air, LEVEL);
        f.fresh_mask |= LOCKSTEP_FRESH_BATTERY;
        f.battery.warning = warning;
        step(&mut d.ap, &f)
    };
    assert_eq!(
        battery(&mut d, LOCKSTEP_BATTERY_LOW).mode,
        LOCKSTEP_MODE_HOLD
    );
    assert_eq!(
        battery(&mut d, LOCKSTEP_BATTERY_CRITICAL).mode,
        LOCKSTEP_MODE_RTL
    );
    assert_eq!(
        battery(&mut d, LOCKSTEP_BATTERY_EMERGENCY).mode,
        LOCKSTEP_MODE_LAND
    );
}

#[test]
fn mission_upload_is_validated() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut ap = load_bundled().create(&cfg).unwrap();
    let mut items = mission(&cfg);
    ap.upload_mission(&items).unwrap();
    ap.upload_mission(&[]).unwrap();
    items[1].command = 183;
    let err = ap.upload_mission(&items).unwrap_err();
    assert!(
        matches!(&err, AbiError::MissionRejected { count: 5, code: LOCKSTEP_AP_ERR_INVALID, message } if message == "mission item 1: command 183 is not supported"),
        "{err:?}"
    );
    items[1].command = LOCKSTEP_MAV_CMD_NAV_WAYPOINT;
    // DO_JUMP and DO_CHANGE_SPEED are checked; NaN params are unset.
    let rejected = |ap: &mut lockstep_abi::Autopilot, items: &[lockstep_mission_item]| match ap
        .upload_mission(items)
        .unwrap_err()
    {
        AbiError::MissionRejected { message, .. } => message,
        e => panic!("{e:?}"),
    };
    let mut jump = items.clone();
    jump[1] = lockstep_mission_item {
        command: LOCKSTEP_MAV_CMD_DO_JUMP,
        param1: 5.0,
        param2: 1.0,
        ..Default::default()
    };
    assert_eq!(
        rejected(&mut ap, &jump),
        "mission item 1: DO_JUMP (177) to item 5: no such item (0 to 4)"
    );
    jump[1].param1 = f32::NAN;
    assert_eq!(
        rejected(&mut ap, &jump),
        "mission item 1: DO_JUMP (177) to item nan: no such item (0 to 4)"
    );
    jump[1].param1 = 0.0;
    jump[1].param2 = -2.0;
    assert_eq!(
        rejected(&mut ap, &jump),
        "mission item 1: DO_JUMP (177) repeat count -2 is not -1 or a count"
    );
    jump[1].param2 = -1.0;
    ap.upload_mission(&jump).unwrap();
    jump[1] = lockstep_mission_item {
        command: LOCKSTEP_MAV_CMD_DO_CHANGE_SPEED,
        param1: 4.0,
        param2: 3.0,
        ..Default::default()
    };
    assert_eq!(
        rejected(&mut ap, &jump),
        "mission item 1: DO_CHANGE_SPEED (178) speed type 4 is not 0 to 3"
    );
    jump[1].param1 = 1.0;
    jump[1].param2 = f32::INFINITY;
    assert_eq!(
        rejected(&mut ap, &jump),
        "mission item 1: DO_CHANGE_SPEED (178) speed is not finite"
    );
    jump[1].param2 = f32::NAN;
    ap.upload_mission(&jump).unwrap();
    let mut unset = items.clone();
    unset[2].param1 = f32::NAN;
    unset[2].param2 = f32::NAN;
    unset[2].param4 = f32::NAN;
    ap.upload_mission(&unset).unwrap();
    unset[2].param1 = f32::INFINITY;
    assert_eq!(
        rejected(&mut ap, &unset),
        "mission item 2: position or parameters out of range"
    );
    items[1].command = LOCKSTEP_MAV_CMD_NAV_WAYPOINT;
    items[2].lat_deg = 91.0;
    let err = ap.upload_mission(&items).unwrap_err();
    assert_eq!(
        err.to_string(),
        "mission upload of 5 item(s) rejected with status -2 (invalid argument): mission item 2: position or parameters out of range"
    );
    items[2].lat_deg = cfg.origin_lat_deg;
    items[3].frame = 1;
    let err = ap.upload_mission(&items).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("mission item 3: frame 1 is not supported (0 or 3)"),
        "{err}"
    );
}

#[test]
fn parameters_are_read_and_set_by_name_with_checked_types_and_ranges() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut ap = load_bundled().create(&cfg).unwrap();
    assert_eq!(ap.param_f32("MPC_XY_P").unwrap(), 0.95);
    ap.set_param_f32("MPC_XY_P", 1.25).unwrap();
    assert_eq!(ap.param_f32("MPC_XY_P").unwrap(), 1.25);
    assert_eq!(ap.param_i32("COM_LOW_BAT_ACT").unwrap(), 1);
    ap.set_param_i32("COM_LOW_BAT_ACT", 0).unwrap();
    assert_eq!(ap.param_i32("COM_LOW_BAT_ACT").unwrap(), 0);

    let err = ap.param_f32("NO_SUCH_PARAM").unwrap_err();
    assert!(
        matches!(
            &err,
            AbiError::Param {
                code: LOCKSTEP_AP_ERR_NOT_FOUND,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "parameter NO_SUCH_PARAM: not found (status -6): unknown parameter NO_SUCH_PARAM"
    );
    let err = ap.param_i32("MPC_XY_P").unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter MPC_XY_P: wrong type (status -7): parameter MPC_XY_P is a float"
    );
    let err = ap.set_param_f32("MPC_TILTMAX_AIR", 95.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter MPC_TILTMAX_AIR: invalid argument (status -2): parameter MPC_TILTMAX_AIR = 95 is outside [5, 85]"
    );
    let err = ap.set_param_f32("MPC_XY_P", f32::NAN).unwrap_err();
    assert!(matches!(
        err,
        AbiError::Param {
            code: LOCKSTEP_AP_ERR_INVALID,
            ..
        }
    ));
    let err = ap.set_param_f32("BAD\0NAME", 1.0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "parameter BAD\\0NAME: invalid argument (status -2): the name contains a NUL byte"
    );
}

#[test]
fn a_parameter_change_changes_the_control_output() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let run = |gain: f32| {
        let mut d = Drive::new(&cfg);
        d.landed = 0;
        d.ap.set_param_f32("MC_ROLL_P", gain).unwrap();
        let p = [0.0, 0.0, -10.0];
        d.cmd(p, LOCKSTEP_ARM_ARM, 0, 0);
        d.cmd(p, 0, LOCKSTEP_MODE_HOLD, 0);
        d.t += PERIOD_US;
        step(&mut d.ap, &frame(d.t, p, quat_rpy(0.1, 0.0, 0.0)))
            .setpoints
            .rates_frd_radps[0]
    };
    let (low, high) = (run(2.0), run(8.0));
    assert!(low < 0.0 && high < 0.0);
    assert!(
        (high / low - 4.0).abs() < 1e-4,
        "rate setpoint is proportional to MC_ROLL_P: {low} {high}"
    );
}

#[test]
fn wrapper_enforces_increasing_time_and_matching_frame_time() {
    let cfg = config(&quad_x(), 1.5, 8.0);
    let mut ap = load_bundled().create(&cfg).unwrap();
    let mut out = lockstep_actuator_frame::default();
    ap.step(8000, &frame(8000, [0.0; 3], LEVEL), &mut out)
        .unwrap();
    let err = ap
        .step(8000, &frame(8000, [0.0; 3], LEVEL), &mut out)
        .unwrap_err();
    assert!(
        matches!(
            err,
            AbiError::TimeNotIncreasing {
                time_us: 8000,
                previous_us: 8000
            }
        ),
        "{err:?}"
    );
    let err = ap
        .step(12000, &frame(11000, [0.0; 3], LEVEL), &mut out)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid autopilot input: sensor frame time_us 11000 differs from the step time 12000"
    );
    // Reset: back to disarmed, and time may start over.
    let out2 = step(
        &mut ap,
        &with_command(frame(16000, [0.0; 3], LEVEL), LOCKSTEP_ARM_ARM, 0, 0),
    );
    assert_eq!(out2.armed, 1);
    ap.reset().unwrap();
    let out3 = step(&mut ap, &frame(4000, [0.0; 3], LEVEL));
    assert_eq!((out3.armed, out3.mode), (0, LOCKSTEP_MODE_DISARMED));
}

#[test]
fn bad_configs_are_refused_before_the_library_sees_them() {
    let lib = load_bundled();
    let mut cfg = config(&quad_x(), 1.5, 8.0);
    cfg.struct_size = 100;
    assert_eq!(
        lib.create(&cfg).unwrap_err().to_string(),
        "invalid autopilot input: config.struct_size is 100, must be 496"
    );
    let mut cfg = config(&quad_x(), 1.5, 8.0);
    cfg.rotor_count = 13;
    assert_eq!(
        lib.create(&cfg).unwrap_err().to_string(),
        "invalid autopilot input: config.rotor_count is 13, must be 1..=12"
    );
}
