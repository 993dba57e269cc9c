//! The header's contract, enforced on every step in both modes: a library
//! that writes past its actuator frame or into the (const) sensor frame,
//! drives motors or servos the vehicle lacks, or reports mission progress
//! for a mission it was never given, is stopped with a message naming what
//! it did and when; one that claims capabilities the harness does not know
//! is refused at load.

use std::mem::offset_of;
use std::path::Path;
use std::time::Duration;

use crate::common::*;
use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot, AutopilotLibrary, Isolation, IsolationOptions};

/// When the fixtures strike: their first step at or after 5 s.
const T_US: u64 = 5_000_000;

/// Creates an instance of `case` in this process and steps it at
/// `T_US - PERIOD_US` (fine) and at `T_US`; returns the error and checks that
/// neither of the caller's frames was touched.
fn in_process_step_error(case: &str) -> AbiError {
    let lib = AutopilotLibrary::load(broken(case)).unwrap();
    let mut ap = lib.create(&config(&quad_x(), 1.5, 8.0)).unwrap();
    step_error(&mut ap, case)
}

/// The same in a host process.
fn isolated_step_error(case: &str) -> AbiError {
    let options = IsolationOptions {
        host: Some(HOST.into()),
        step_timeout: Duration::from_secs(5),
        ..IsolationOptions::default()
    };
    let mut ap = Autopilot::open(
        &broken(case),
        &config(&quad_x(), 1.5, 8.0),
        &Isolation::Process(options),
    )
    .unwrap();
    assert!(ap.is_isolated());
    step_error(&mut ap, case)
}

fn step_error(ap: &mut Autopilot, case: &str) -> AbiError {
    // Before 5 s the fixture keeps the contract.
    let early = frame(T_US - PERIOD_US, [0.0; 3], [1.0, 0.0, 0.0, 0.0]);
    let out = step(ap, &early);
    assert_eq!(out.mode, LOCKSTEP_MODE_DISARMED, "{case}");
    let sensors = frame(T_US, [0.0; 3], [1.0, 0.0, 0.0, 0.0]);
    let before = sensors;
    let mut out = lockstep_actuator_frame::default();
    out.motors[0] = 0.125;
    let err = ap
        .step(T_US, &sensors, &mut out)
        .expect_err(&format!("{case} breaks the contract"));
    assert_eq!(
        format!("{sensors:?}"),
        format!("{before:?}"),
        "{case}: the caller's sensor frame is untouched"
    );
    assert_eq!(
        sensors.estimate.position_ned_m[0].to_bits(),
        0.0f32.to_bits()
    );
    assert_eq!(out.motors[0], 0.125, "{case}: out is untouched on error");
    err
}

/// `lockstep run` (isolated) of the idle scenario with `case`: status 1,
/// exactly `message` and the stop line at 5 s, and a log of whole rows
/// every 0.1 s from 0 to 4.9 s (the fault at 5 s precedes that boundary's
/// row). Returns the log.
fn assert_cli_stops_at_the_fault(case: &str, message: &str) -> Log {
    let dir = TempDir::new(case);
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 10);
    let log = dir.join("log.csv");
    let r = lockstep(&[
        Path::new("run"),
        &scenario,
        Path::new("--autopilot"),
        &broken(case),
        Path::new("--log"),
        &log,
    ]);
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep run: {message}\n              the run stopped at t = 5.000000 s; what \
             happened up to there is written\n"
        ),
        "{r}"
    );
    assert_eq!(
        r.summary(),
        format!(
            "{}log           {} (50 rows, the last at t = 4.900000 s)\n",
            idle_header(&scenario, &broken(case), false),
            log.display()
        ),
        "{r}"
    );
    let l = Log::read(&log);
    assert_idle_meta(&l);
    assert_eq!(l.columns.len(), 68);
    assert_eq!(l.times_us(), times(0, 4_900_000, 100_000));
    // The fixture idles disarmed until it strikes.
    assert!(l.column("armed").iter().all(|a| *a == 0.0), "{case}");
    assert!(l.column("motor0").iter().all(|m| *m == 0.0), "{case}");
    l
}

/// Asserts `err` is the `InvalidOutput` of `field = value` with `reason`
/// at `T_US`.
fn assert_invalid_output(err: &AbiError, field: &str, value: &str, reason: &str) {
    match err {
        AbiError::InvalidOutput {
            time_us,
            field: f,
            value: v,
            reason: r,
        } => {
            assert_eq!(*time_us, T_US);
            assert_eq!(f, field);
            assert_eq!(v, value);
            assert_eq!(r, reason);
        }
        other => panic!("expected InvalidOutput, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        format!("autopilot output {field} = {value} at t = 5.000000 s is invalid: {reason}")
    );
}

fn assert_contract_violation(err: &AbiError, what: &str) {
    match err {
        AbiError::ContractViolation { time_us, what: w } => {
            assert_eq!(*time_us, T_US);
            assert_eq!(w, what);
        }
        other => panic!("expected ContractViolation, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        format!("autopilot contract violation at t = 5.000000 s: {what}")
    );
}

/// An `InvalidOutput` of `case` at 5 s, in-process, isolated and from
/// `lockstep run`.
fn assert_output_refused_everywhere(case: &str, field: &str, value: &str, reason: &str) {
    assert_invalid_output(&in_process_step_error(case), field, value, reason);
    assert_invalid_output(&isolated_step_error(case), field, value, reason);
    assert_cli_stops_at_the_fault(
        case,
        &format!("autopilot output {field} = {value} at t = 5.000000 s is invalid: {reason}"),
    );
}

#[test]
fn writing_past_the_actuator_frame() {
    // The fixture writes one byte 40 bytes past the frame's end: the 41st
    // byte after it, counted from 1.
    assert_eq!(std::mem::size_of::<lockstep_actuator_frame>(), 204);
    let what =
        "step wrote past the end of the actuator frame (204 bytes): byte 41 after it changed";
    assert_contract_violation(&in_process_step_error("write_past"), what);
    assert_contract_violation(&isolated_step_error("write_past"), what);
    assert_cli_stops_at_the_fault(
        "write_past",
        &format!("autopilot contract violation at t = 5.000000 s: {what}"),
    );
}

#[test]
fn writing_into_the_const_sensor_frame() {
    let field =
        offset_of!(lockstep_sensor_frame, estimate) + offset_of!(lockstep_estimate, position_ned_m);
    assert_eq!(field, 168);
    assert_eq!(std::mem::size_of::<lockstep_sensor_frame>(), 304);
    // Here the field held 0.0: NaN (0x7fc00000) differs from it first in
    // its third byte (little endian).
    let first = field + if cfg!(target_endian = "little") { 2 } else { 0 };
    let what = format!(
        "step wrote into the sensor frame it was given (const in the header): \
         estimate.position_ned_m[0] (byte {first} of 304)"
    );
    assert_contract_violation(&in_process_step_error("write_sensors"), &what);
    assert_contract_violation(&isolated_step_error("write_sensors"), &what);
    // In flight the field holds the estimator's noisy north position, which
    // differs from NaN in its first byte: the byte named is the field's
    // own. (Deterministic: seed 7.)
    let l = assert_cli_stops_at_the_fault(
        "write_sensors",
        "autopilot contract violation at t = 5.000000 s: step wrote into the sensor frame it \
         was given (const in the header): estimate.position_ned_m[0] (byte 168 of 304)",
    );
    // The harness's own frame is never the library's to write: every
    // estimate the log holds is finite (the NaN written at 5 s reached no
    // row).
    let estimates: Vec<&String> = l.columns.iter().filter(|c| c.starts_with("est_")).collect();
    assert_eq!(estimates.len(), 13);
    for c in estimates {
        let v = l.column(c);
        assert_eq!(v.len(), 50);
        assert!(v.iter().all(|x| x.is_finite()), "{c}: {v:?}");
    }
    // Not trivially: the estimated north position varies (it is noisy).
    let north = l.column("est_x_m");
    assert!(north.iter().any(|x| *x != north[0]), "{north:?}");
}

#[test]
fn mission_progress_without_a_mission() {
    assert_output_refused_everywhere(
        "mission_current",
        "mission_current",
        "1000",
        "is neither -1 nor an index into the mission uploaded (0 items)",
    );
}

#[test]
fn a_mission_count_without_a_mission() {
    assert_output_refused_everywhere(
        "mission_count",
        "mission_count",
        "3",
        "differs from the number of mission items uploaded (0)",
    );
}

#[test]
fn a_motor_the_vehicle_does_not_have() {
    // The test's config (quad X) and the idle scenario's Iris both have 4
    // rotors.
    assert_output_refused_everywhere(
        "extra_motor",
        &format!("motors[{}]", LOCKSTEP_MAX_MOTORS - 1),
        "0.25",
        "drives a motor the vehicle does not have (it has 4 motors, numbered 0 to 3)",
    );
}

#[test]
fn a_servo_on_a_multirotor() {
    assert_output_refused_everywhere(
        "servo",
        "servos[0]",
        "0.5",
        "drives a servo the vehicle does not have",
    );
}

#[test]
fn unknown_capability_bits_are_refused_before_the_flight() {
    let path = broken("unknown_caps");
    let text = format!(
        "autopilot library {} reports unknown capability bits 0x80000000 (this harness knows \
         LOCKSTEP_AP_CAP_REENTRANT = 0x1); it may rely on behaviour the harness does not provide",
        path.display()
    );
    let err = AutopilotLibrary::load(&path).unwrap_err();
    assert!(
        matches!(&err, AbiError::UnknownCapabilities { bits: 0x8000_0000, path: p } if *p == path),
        "{err:?}"
    );
    assert_eq!(err.to_string(), text);
    let options = IsolationOptions {
        host: Some(HOST.into()),
        ..IsolationOptions::default()
    };
    let err = Autopilot::open(
        &path,
        &config(&quad_x(), 1.5, 8.0),
        &Isolation::Process(options),
    )
    .unwrap_err();
    assert_eq!(err.to_string(), text, "the host relays the same error");
    let dir = TempDir::new("unknown_caps");
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 10);
    let log = dir.join("log.csv");
    for isolation in ["process", "in-process"] {
        let r = lockstep(&[
            Path::new("run"),
            &scenario,
            Path::new("--autopilot"),
            &path,
            Path::new("--log"),
            &log,
            Path::new("--isolation"),
            Path::new(isolation),
        ]);
        assert_eq!(r.code(), 2, "{isolation}: {r}");
        assert_eq!(r.stderr, refused(&text, &path), "{isolation}: {r}");
        assert_eq!(r.stdout, "", "{isolation}: {r}");
        assert!(!log.exists(), "{isolation}");
    }
}
