//! Helpers around the shared structs: construction, names, output checks.

use crate::{AbiError, OutputPolicy, ffi};

/// A config with `struct_size` set and everything else zero.
pub fn config_zeroed() -> ffi::lockstep_autopilot_config {
    ffi::lockstep_autopilot_config {
        struct_size: std::mem::size_of::<ffi::lockstep_autopilot_config>() as u32,
        ..Default::default()
    }
}

/// The name of a `LOCKSTEP_AP_*` status code.
pub fn status_name(code: i32) -> &'static str {
    match code {
        ffi::LOCKSTEP_AP_OK => "ok",
        ffi::LOCKSTEP_AP_ERR_NULL => "NULL argument",
        ffi::LOCKSTEP_AP_ERR_INVALID => "invalid argument",
        ffi::LOCKSTEP_AP_ERR_TIME => "time does not increase",
        ffi::LOCKSTEP_AP_ERR_INTERNAL => "internal error",
        ffi::LOCKSTEP_AP_ERR_UNSUPPORTED => "unsupported",
        ffi::LOCKSTEP_AP_ERR_NOT_FOUND => "not found",
        ffi::LOCKSTEP_AP_ERR_TYPE => "wrong type",
        _ => "unknown status",
    }
}

/// The name of a `LOCKSTEP_MODE_*` value.
pub fn mode_name(mode: u32) -> &'static str {
    match mode {
        ffi::LOCKSTEP_MODE_NONE => "none",
        ffi::LOCKSTEP_MODE_DISARMED => "disarmed",
        ffi::LOCKSTEP_MODE_IDLE => "idle",
        ffi::LOCKSTEP_MODE_TAKEOFF => "takeoff",
        ffi::LOCKSTEP_MODE_MISSION => "mission",
        ffi::LOCKSTEP_MODE_HOLD => "hold",
        ffi::LOCKSTEP_MODE_RTL => "rtl",
        ffi::LOCKSTEP_MODE_LAND => "land",
        ffi::LOCKSTEP_MODE_LANDED => "landed",
        ffi::LOCKSTEP_MODE_OFFBOARD => "offboard",
        ffi::LOCKSTEP_MODE_STACK => "flight-stack",
        _ => "unknown",
    }
}

fn invalid(time_us: u64, field: String, value: impl ToString, reason: &'static str) -> AbiError {
    AbiError::InvalidOutput {
        time_us,
        field,
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Checks a bounded command array; with [`OutputPolicy::Clamp`] finite
/// values outside the range are clamped instead of refused.
fn check_range(
    values: &mut [f32],
    name: &str,
    lo: f32,
    hi: f32,
    reason: &'static str,
    time_us: u64,
    policy: OutputPolicy,
) -> Result<(), AbiError> {
    for (i, v) in values.iter_mut().enumerate() {
        if !v.is_finite() {
            return Err(invalid(time_us, format!("{name}[{i}]"), *v, "not finite"));
        }
        if *v < lo || *v > hi {
            match policy {
                OutputPolicy::Reject => {
                    return Err(invalid(time_us, format!("{name}[{i}]"), *v, reason));
                }
                OutputPolicy::Clamp => *v = v.clamp(lo, hi),
            }
        }
    }
    Ok(())
}

fn check_finite(values: &[f32], name: &str, time_us: u64) -> Result<(), AbiError> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(i) => Err(invalid(
            time_us,
            format!("setpoints.{name}[{i}]"),
            values[i],
            "not finite",
        )),
        None => Ok(()),
    }
}

/// True when every check below passes: one pass without branches or early
/// exits (NaN fails every comparison), so a valid frame costs a few dozen
/// instructions; [`validate_outputs`] looks closer only when this fails.
fn all_valid(out: &ffi::lockstep_actuator_frame) -> bool {
    let in_range =
        |v: &[f32], lo: f32, hi: f32| v.iter().fold(true, |ok, x| ok & (*x >= lo) & (*x <= hi));
    let finite = |v: &[f32]| v.iter().fold(true, |ok, x| ok & x.is_finite());
    let s = &out.setpoints;
    in_range(&out.motors, 0.0, 1.0)
        & in_range(&out.servos, -1.0, 1.0)
        & (out.armed <= 1)
        & (out.mission_finished <= 1)
        & (out.mode != ffi::LOCKSTEP_MODE_NONE)
        & (out.mode <= ffi::LOCKSTEP_MODE_STACK)
        & (out.mission_current >= -1)
        & finite(&s.position_ned_m)
        & finite(&s.velocity_ned_mps)
        & finite(&s.accel_ned_mps2)
        & finite(&s.attitude_q)
        & finite(&s.rates_frd_radps)
        & finite(&s.torque_frd_nm)
        & finite(&[s.yaw_rad, s.thrust_n])
}

/// What the vehicle has, for the contract checks of a step's outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Vehicle {
    /// Motors driven (`config.rotor_count`); outputs beyond must be 0.
    pub motors: usize,
    /// Servos driven (none on a multirotor); outputs beyond must be 0.
    pub servos: usize,
    /// Items of the mission last uploaded (0: none).
    pub mission_items: u32,
}

/// The outputs the vehicle does not have are zero, and the mission progress
/// refers to the mission uploaded. One pass, no early exits.
pub fn check_vehicle(
    out: &ffi::lockstep_actuator_frame,
    v: &Vehicle,
    time_us: u64,
) -> Result<(), AbiError> {
    let unused_motors = &out.motors[v.motors.min(out.motors.len())..];
    let unused_servos = &out.servos[v.servos.min(out.servos.len())..];
    let zero = |s: &[f32]| s.iter().fold(true, |ok, x| ok & (*x == 0.0));
    let current_ok = out.mission_current == -1
        || (out.mission_current >= 0 && (out.mission_current as u32) < v.mission_items);
    if zero(unused_motors)
        & zero(unused_servos)
        & current_ok
        & (out.mission_count == v.mission_items)
    {
        return Ok(());
    }
    if let Some(i) = unused_motors.iter().position(|x| *x != 0.0) {
        let i = v.motors + i;
        return Err(AbiError::InvalidOutput {
            time_us,
            field: format!("motors[{i}]"),
            value: out.motors[i].to_string(),
            reason: format!(
                "drives a motor the vehicle does not have (it has {} motors, numbered 0 to {})",
                v.motors,
                v.motors.saturating_sub(1)
            )
            .into(),
        });
    }
    if let Some(i) = unused_servos.iter().position(|x| *x != 0.0) {
        let i = v.servos + i;
        return Err(invalid(
            time_us,
            format!("servos[{i}]"),
            out.servos[i],
            "drives a servo the vehicle does not have",
        ));
    }
    if out.mission_count != v.mission_items {
        return Err(AbiError::InvalidOutput {
            time_us,
            field: "mission_count".into(),
            value: out.mission_count.to_string(),
            reason: format!(
                "differs from the number of mission items uploaded ({})",
                v.mission_items
            )
            .into(),
        });
    }
    Err(AbiError::InvalidOutput {
        time_us,
        field: "mission_current".into(),
        value: out.mission_current.to_string(),
        reason: format!(
            "is neither -1 nor an index into the mission uploaded ({} items)",
            v.mission_items
        )
        .into(),
    })
}

/// Checks everything an autopilot wrote at `time_us` against the contract:
/// motors finite in [0, 1], servos finite in [-1, 1], flags 0/1, a known
/// mode, a mission index of -1 or more, every setpoint finite.
pub fn validate_outputs(
    out: &mut ffi::lockstep_actuator_frame,
    time_us: u64,
    policy: OutputPolicy,
) -> Result<(), AbiError> {
    if all_valid(out) {
        return Ok(());
    }
    check_range(
        &mut out.motors,
        "motors",
        0.0,
        1.0,
        "outside [0, 1]",
        time_us,
        policy,
    )?;
    check_range(
        &mut out.servos,
        "servos",
        -1.0,
        1.0,
        "outside [-1, 1]",
        time_us,
        policy,
    )?;
    if out.armed > 1 {
        return Err(invalid(time_us, "armed".into(), out.armed, "not 0 or 1"));
    }
    if out.mission_finished > 1 {
        return Err(invalid(
            time_us,
            "mission_finished".into(),
            out.mission_finished,
            "not 0 or 1",
        ));
    }
    if out.mode == ffi::LOCKSTEP_MODE_NONE || out.mode > ffi::LOCKSTEP_MODE_STACK {
        return Err(invalid(
            time_us,
            "mode".into(),
            out.mode,
            "not a LOCKSTEP_MODE_* value",
        ));
    }
    if out.mission_current < -1 {
        return Err(invalid(
            time_us,
            "mission_current".into(),
            out.mission_current,
            "below -1",
        ));
    }
    let s = &out.setpoints;
    check_finite(&s.position_ned_m, "position_ned_m", time_us)?;
    check_finite(&s.velocity_ned_mps, "velocity_ned_mps", time_us)?;
    check_finite(&s.accel_ned_mps2, "accel_ned_mps2", time_us)?;
    check_finite(&[s.yaw_rad], "yaw_rad", time_us)?;
    check_finite(&s.attitude_q, "attitude_q", time_us)?;
    check_finite(&s.rates_frd_radps, "rates_frd_radps", time_us)?;
    check_finite(&s.torque_frd_nm, "torque_frd_nm", time_us)?;
    check_finite(&[s.thrust_n], "thrust_n", time_us)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok_frame() -> ffi::lockstep_actuator_frame {
        ffi::lockstep_actuator_frame {
            mode: ffi::LOCKSTEP_MODE_HOLD,
            mission_current: -1,
            ..Default::default()
        }
    }

    fn err_text(f: &mut ffi::lockstep_actuator_frame, policy: OutputPolicy) -> String {
        validate_outputs(f, 4000, policy).unwrap_err().to_string()
    }

    #[test]
    fn a_valid_frame_passes() {
        validate_outputs(&mut ok_frame(), 0, OutputPolicy::Reject).unwrap();
    }

    #[test]
    fn nan_motor_is_refused_under_both_policies() {
        for policy in [OutputPolicy::Reject, OutputPolicy::Clamp] {
            let mut f = ok_frame();
            f.motors[2] = f32::NAN;
            assert_eq!(
                err_text(&mut f, policy),
                "autopilot output motors[2] = NaN at t = 0.004000 s is invalid: not finite"
            );
        }
    }

    #[test]
    fn out_of_range_is_refused_or_clamped_as_chosen() {
        let mut f = ok_frame();
        f.motors[1] = 1.5;
        assert_eq!(
            err_text(&mut f, OutputPolicy::Reject),
            "autopilot output motors[1] = 1.5 at t = 0.004000 s is invalid: outside [0, 1]"
        );
        f.servos[0] = -2.0;
        validate_outputs(&mut f, 0, OutputPolicy::Clamp).unwrap();
        assert_eq!((f.motors[1], f.servos[0]), (1.0, -1.0));
    }

    #[test]
    fn flags_mode_index_and_setpoints_are_checked() {
        let mut f = ok_frame();
        f.armed = 2;
        assert!(err_text(&mut f, OutputPolicy::Reject).contains("armed = 2"));
        let mut f = ok_frame();
        f.mode = 99;
        assert!(
            err_text(&mut f, OutputPolicy::Reject)
                .contains("mode = 99 at t = 0.004000 s is invalid: not a LOCKSTEP_MODE_* value")
        );
        let mut f = ok_frame();
        f.mission_current = -2;
        assert!(err_text(&mut f, OutputPolicy::Reject).contains("mission_current = -2"));
        let mut f = ok_frame();
        f.setpoints.velocity_ned_mps[1] = f32::INFINITY;
        assert_eq!(
            err_text(&mut f, OutputPolicy::Reject),
            "autopilot output setpoints.velocity_ned_mps[1] = inf at t = 0.004000 s is invalid: not finite"
        );
    }

    #[test]
    fn the_fast_path_misses_no_invalid_field() {
        // Every float field set to NaN, +inf and -inf, every range edge
        // crossed by one step of f32: each is refused with that field named.
        type Field = fn(&mut ffi::lockstep_actuator_frame) -> &mut f32;
        let fields: [(&str, Field); 10] = [
            ("motors[15]", |f| &mut f.motors[15]),
            ("servos[7]", |f| &mut f.servos[7]),
            ("setpoints.position_ned_m[2]", |f| {
                &mut f.setpoints.position_ned_m[2]
            }),
            ("setpoints.velocity_ned_mps[0]", |f| {
                &mut f.setpoints.velocity_ned_mps[0]
            }),
            ("setpoints.accel_ned_mps2[1]", |f| {
                &mut f.setpoints.accel_ned_mps2[1]
            }),
            ("setpoints.yaw_rad[0]", |f| &mut f.setpoints.yaw_rad),
            ("setpoints.attitude_q[3]", |f| {
                &mut f.setpoints.attitude_q[3]
            }),
            ("setpoints.rates_frd_radps[2]", |f| {
                &mut f.setpoints.rates_frd_radps[2]
            }),
            ("setpoints.torque_frd_nm[0]", |f| {
                &mut f.setpoints.torque_frd_nm[0]
            }),
            ("setpoints.thrust_n[0]", |f| &mut f.setpoints.thrust_n),
        ];
        for (name, field) in fields {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut f = ok_frame();
                *field(&mut f) = bad;
                let e = err_text(&mut f, OutputPolicy::Reject);
                assert!(
                    e.contains(&format!("output {name} = ")),
                    "{name} = {bad}: {e}"
                );
            }
        }
        for (name, field, lo, hi) in [
            ("motors[0]", (|f| &mut f.motors[0]) as Field, 0.0f32, 1.0f32),
            ("servos[3]", |f| &mut f.servos[3], -1.0, 1.0),
        ] {
            for edge in [lo, hi, -0.0] {
                let mut f = ok_frame();
                *field(&mut f) = edge;
                validate_outputs(&mut f, 0, OutputPolicy::Reject).unwrap();
            }
            for out in [lo.next_down(), hi.next_up()] {
                let mut f = ok_frame();
                *field(&mut f) = out;
                let e = err_text(&mut f, OutputPolicy::Reject);
                assert!(e.contains(&format!("output {name} = ")), "{e}");
            }
        }
        for (mode, ok) in [
            (0, false),
            (1, true),
            (8, true),
            (9, true),
            (10, true),
            (11, false),
        ] {
            let mut f = ok_frame();
            f.mode = mode;
            assert_eq!(
                validate_outputs(&mut f, 0, OutputPolicy::Reject).is_ok(),
                ok,
                "mode {mode}"
            );
        }
        let mut f = ok_frame();
        f.mission_finished = 2;
        assert!(err_text(&mut f, OutputPolicy::Reject).contains("mission_finished = 2"));
    }
}
