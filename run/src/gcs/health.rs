//! The vehicle's health as PX4 and ArduPilot report it in `SYS_STATUS`:
//! which sensors and controllers are present, enabled and healthy, and
//! whether the vehicle would accept an arm (`MAV_SYS_STATUS_PREARM_CHECK`),
//! derived from the sensor models, the faults in force, the battery and
//! the estimate. Clients read these bits, not our logs: MAVSDK's health
//! flags are `present & health` of the gyro, accelerometer, magnetometer
//! and GPS bits, its `is_armable` the prearm check's health bit;
//! QGroundControl lists every present bit as disabled (not enabled), normal
//! or in error (enabled, not healthy) and is ready to fly on the prearm
//! check's health; MAVProxy announces a fence breach when the geofence's
//! health bit falls, so a bit is healthy unless something is wrong with it
//! (MAVLink: 1 = operational or no error).
//!
//! A change of health is announced once, at the boundary it happens, with
//! a `STATUSTEXT` naming the part and the fault ([`Health::changes`]).

use lockstep_abi::ffi::*;
use lockstep_harness::engine::{Engine, SensorFaultKind};
use mavlink::dialects::common::{MavSeverity, MavSysStatusSensor as S};

/// The parts a vehicle has, in the order they are announced.
const PARTS: [(S, &str); 9] = [
    (S::MAV_SYS_STATUS_SENSOR_3D_GYRO, "Gyro"),
    (S::MAV_SYS_STATUS_SENSOR_3D_ACCEL, "Accelerometer"),
    (S::MAV_SYS_STATUS_SENSOR_3D_MAG, "Magnetometer"),
    (S::MAV_SYS_STATUS_SENSOR_ABSOLUTE_PRESSURE, "Barometer"),
    (S::MAV_SYS_STATUS_SENSOR_GPS, "GPS"),
    (S::MAV_SYS_STATUS_AHRS, "Attitude estimate"),
    (S::MAV_SYS_STATUS_SENSOR_MOTOR_OUTPUTS, "Motor outputs"),
    (S::MAV_SYS_STATUS_SENSOR_BATTERY, "Battery"),
    (S::MAV_SYS_STATUS_PREARM_CHECK, "Preflight checks"),
];

/// The controllers of a multirotor flying on an estimate, present and
/// enabled whenever it is armed.
const CONTROLLERS: S = S::MAV_SYS_STATUS_SENSOR_ANGULAR_RATE_CONTROL
    .union(S::MAV_SYS_STATUS_SENSOR_ATTITUDE_STABILIZATION)
    .union(S::MAV_SYS_STATUS_SENSOR_YAW_POSITION)
    .union(S::MAV_SYS_STATUS_SENSOR_Z_ALTITUDE_CONTROL)
    .union(S::MAV_SYS_STATUS_SENSOR_XY_POSITION_CONTROL);

/// A GPS fix good enough to fly on: 3D, and as many satellites as PX4's
/// and MAVSDK's own checks ask for (MAVSDK's fallback: 8).
const MIN_SATELLITES: u32 = 6;

/// The three bit sets of `SYS_STATUS`, and why each unhealthy bit is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Health {
    pub(crate) present: S,
    pub(crate) enabled: S,
    /// Every bit but those in error (MAVLink: 1 = operational or no error).
    pub(crate) healthy: S,
    /// Why each part is unhealthy, in [`PARTS`]' order (`None`: healthy).
    causes: [Option<&'static str>; PARTS.len()],
}

impl Health {
    /// The vehicle's health now.
    pub(crate) fn of(engine: &Engine) -> Health {
        let faults = engine.faults_in_force();
        let frame = engine.sensor_frame();
        let act = engine.actuators();
        let sensor = |k: SensorFaultKind| match k {
            SensorFaultKind::None => None,
            SensorFaultKind::Dropout => Some("no samples (dropout)"),
            SensorFaultKind::Freeze => Some("samples frozen"),
            SensorFaultKind::Bias => Some("biased samples"),
        };
        let [imu, mag, baro, gps, estimator] = faults.sensors;
        let g = &frame.gps;
        let gps_cause = sensor(gps).or(if g.fix_type != LOCKSTEP_GPS_FIX_3D {
            Some("no 3D fix")
        } else if g.satellites < MIN_SATELLITES {
            Some("too few satellites")
        } else {
            None
        });
        let b = &frame.battery;
        let battery_cause = if faults.batteries_disconnected > 0 {
            Some("disconnected")
        } else if b.warning == LOCKSTEP_BATTERY_CRITICAL {
            Some("critical")
        } else if b.warning > LOCKSTEP_BATTERY_CRITICAL {
            Some("emergency")
        } else {
            None
        };
        let motors_cause = (faults.motors_failed > 0).then_some("a motor failed");
        let mut causes = [
            sensor(imu),
            sensor(imu),
            sensor(mag),
            sensor(baro),
            gps_cause,
            sensor(estimator),
            motors_cause,
            battery_cause,
            None,
        ];
        // The arm is refused while any part is in error, after a crash,
        // and (for a flight stack) while its battery is low.
        let prearm = if engine.crashed() {
            Some("the vehicle crashed")
        } else if causes.iter().any(Option::is_some) {
            Some("a sensor or part is unhealthy")
        } else if b.warning != LOCKSTEP_BATTERY_OK {
            Some("battery low")
        } else {
            None
        };
        causes[PARTS.len() - 1] = prearm;
        let mut present = PARTS.iter().fold(S::empty(), |s, (bit, _)| s | *bit);
        let mut enabled = present;
        if act.armed == 1 {
            present |= CONTROLLERS;
            enabled |= CONTROLLERS;
        }
        let errors = PARTS
            .iter()
            .zip(&causes)
            .filter(|(_, c)| c.is_some())
            .fold(S::empty(), |s, ((bit, _), _)| s | *bit);
        Health {
            present,
            enabled,
            healthy: (S::all() - S::MAV_SYS_STATUS_EXTENSION_USED) - errors,
            causes,
        }
    }

    /// The parts whose health changed from `before`, as the lines a flight
    /// stack announces: (severity, text of at most 50 bytes).
    pub(crate) fn changes(&self, before: &Health) -> Vec<(MavSeverity, String)> {
        PARTS
            .iter()
            .zip(self.causes.iter().zip(&before.causes))
            .filter(|(_, (now, was))| now != was)
            .map(|((bit, name), (now, _))| match now {
                Some(cause) if *bit == S::MAV_SYS_STATUS_PREARM_CHECK => (
                    MavSeverity::MAV_SEVERITY_WARNING,
                    format!("Not ready to arm: {cause}"),
                ),
                Some(cause) => (
                    MavSeverity::MAV_SEVERITY_CRITICAL,
                    format!("{name} unhealthy: {cause}"),
                ),
                None if *bit == S::MAV_SYS_STATUS_PREARM_CHECK => {
                    (MavSeverity::MAV_SEVERITY_INFO, "Ready to arm".to_string())
                }
                None => (MavSeverity::MAV_SEVERITY_NOTICE, format!("{name} healthy")),
            })
            .collect()
    }

    /// Everything healthy and ready to arm: what is assumed before the
    /// first boundary (so only what is wrong at the start is announced).
    pub(crate) fn assumed() -> Health {
        Health {
            present: S::empty(),
            enabled: S::empty(),
            healthy: S::all(),
            causes: [None; PARTS.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_name_the_part_and_the_cause() {
        let ok = Health::assumed();
        let mut gps = ok;
        gps.causes[4] = Some("no samples (dropout)");
        gps.causes[8] = Some("a sensor or part is unhealthy");
        assert_eq!(
            gps.changes(&ok),
            vec![
                (
                    MavSeverity::MAV_SEVERITY_CRITICAL,
                    "GPS unhealthy: no samples (dropout)".to_string()
                ),
                (
                    MavSeverity::MAV_SEVERITY_WARNING,
                    "Not ready to arm: a sensor or part is unhealthy".to_string()
                ),
            ]
        );
        assert_eq!(
            ok.changes(&gps),
            vec![
                (MavSeverity::MAV_SEVERITY_NOTICE, "GPS healthy".to_string()),
                (MavSeverity::MAV_SEVERITY_INFO, "Ready to arm".to_string()),
            ]
        );
        assert!(ok.changes(&ok).is_empty());
        // Every line fits STATUSTEXT's 50 bytes.
        for (_, name) in &PARTS[..PARTS.len() - 1] {
            for cause in [
                "no samples (dropout)",
                "samples frozen",
                "biased samples",
                "no 3D fix",
                "too few satellites",
                "a motor failed",
                "disconnected",
                "emergency",
            ] {
                assert!(format!("{name} unhealthy: {cause}").len() <= 50, "{name}");
            }
        }
        for cause in [
            "the vehicle crashed",
            "a sensor or part is unhealthy",
            "battery low",
        ] {
            assert!(format!("Not ready to arm: {cause}").len() <= 50);
        }
    }
}
