//! The topics written: each one's format (PX4's field names) and its
//! fields from a log row or a sensor frame.

use lockstep_abi::ffi::lockstep_sensor_frame;

use super::file::Fields;
use crate::io::log::LogRow;

/// A topic; its number is its subscription's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Topic {
    LocalPosition,
    LocalPositionTruth,
    LocalPositionSetpoint,
    Attitude,
    AttitudeTruth,
    AngularVelocity,
    GlobalPosition,
    ActuatorMotors,
    ActuatorOutputs,
    BatteryStatus,
    Wind,
    VehicleStatus,
    VehicleLandDetected,
    SensorCombined,
    VehicleMagnetometer,
    SensorBaro,
    VehicleGpsPosition,
}

/// Motors in `actuator_motors`, outputs in `actuator_outputs`.
const MOTORS: usize = 12;
const OUTPUTS: usize = 16;

/// PX4's `nav_state` for a lockstep mode (see the module's table).
pub(super) fn nav_state(mode: u32) -> u8 {
    use lockstep_abi::ffi::*;
    match mode {
        LOCKSTEP_MODE_DISARMED | LOCKSTEP_MODE_IDLE | LOCKSTEP_MODE_HOLD => 4,
        LOCKSTEP_MODE_TAKEOFF => 17,
        LOCKSTEP_MODE_MISSION => 3,
        LOCKSTEP_MODE_RTL => 5,
        LOCKSTEP_MODE_LAND | LOCKSTEP_MODE_LANDED => 18,
        LOCKSTEP_MODE_OFFBOARD => 14,
        _ => 0,
    }
}

impl Topic {
    pub(super) const ALL: [Topic; 17] = [
        Topic::LocalPosition,
        Topic::LocalPositionTruth,
        Topic::LocalPositionSetpoint,
        Topic::Attitude,
        Topic::AttitudeTruth,
        Topic::AngularVelocity,
        Topic::GlobalPosition,
        Topic::ActuatorMotors,
        Topic::ActuatorOutputs,
        Topic::BatteryStatus,
        Topic::Wind,
        Topic::VehicleStatus,
        Topic::VehicleLandDetected,
        Topic::SensorCombined,
        Topic::VehicleMagnetometer,
        Topic::SensorBaro,
        Topic::VehicleGpsPosition,
    ];

    /// The topics written with each log row: the first eleven (the status,
    /// landing and sensor topics follow).
    pub(super) const ROWS: &'static [Topic] = Topic::ALL.split_at(11).0;

    pub(super) fn name(self) -> &'static str {
        match self {
            Topic::LocalPosition => "vehicle_local_position",
            Topic::LocalPositionTruth => "vehicle_local_position_groundtruth",
            Topic::LocalPositionSetpoint => "vehicle_local_position_setpoint",
            Topic::Attitude => "vehicle_attitude",
            Topic::AttitudeTruth => "vehicle_attitude_groundtruth",
            Topic::AngularVelocity => "vehicle_angular_velocity",
            Topic::GlobalPosition => "vehicle_global_position",
            Topic::ActuatorMotors => "actuator_motors",
            Topic::ActuatorOutputs => "actuator_outputs",
            Topic::BatteryStatus => "battery_status",
            Topic::Wind => "wind",
            Topic::VehicleStatus => "vehicle_status",
            Topic::VehicleLandDetected => "vehicle_land_detected",
            Topic::SensorCombined => "sensor_combined",
            Topic::VehicleMagnetometer => "vehicle_magnetometer",
            Topic::SensorBaro => "sensor_baro",
            Topic::VehicleGpsPosition => "vehicle_gps_position",
        }
    }

    /// The format's fields, the timestamp first.
    pub(super) fn fields(self) -> Vec<&'static str> {
        let position = [
            "float x", "float y", "float z", "float vx", "float vy", "float vz",
        ];
        let mut f = vec!["uint64_t timestamp"];
        match self {
            Topic::LocalPosition | Topic::LocalPositionTruth => f.extend(position),
            Topic::LocalPositionSetpoint => {
                f.extend(position);
                f.extend(["float yaw", "float[3] acceleration", "float thrust_n"]);
            }
            Topic::Attitude | Topic::AttitudeTruth => f.push("float[4] q"),
            Topic::AngularVelocity => f.push("float[3] xyz"),
            Topic::GlobalPosition => f.extend(["double lat", "double lon", "float alt"]),
            Topic::ActuatorMotors => f.push("float[12] control"),
            Topic::ActuatorOutputs => f.extend(["uint32_t noutputs", "float[16] output"]),
            Topic::BatteryStatus => {
                f.extend(["float voltage_v", "float current_a", "float remaining"])
            }
            Topic::Wind => f.extend(["float windspeed_north", "float windspeed_east"]),
            Topic::VehicleStatus => f.extend([
                "uint8_t arming_state",
                "uint8_t nav_state",
                "uint8_t vehicle_type",
            ]),
            Topic::VehicleLandDetected => {
                f.extend(["bool landed", "bool maybe_landed", "bool ground_contact"])
            }
            Topic::SensorCombined => f.extend([
                "float[3] gyro_rad",
                "uint32_t gyro_integral_dt",
                "int32_t accelerometer_timestamp_relative",
                "float[3] accelerometer_m_s2",
                "uint32_t accelerometer_integral_dt",
            ]),
            Topic::VehicleMagnetometer => f.push("float[3] magnetometer_ga"),
            Topic::SensorBaro => f.extend(["float pressure", "float temperature"]),
            Topic::VehicleGpsPosition => f.extend([
                "int32_t lat",
                "int32_t lon",
                "int32_t alt",
                "float eph",
                "float epv",
                "float vel_n_m_s",
                "float vel_e_m_s",
                "float vel_d_m_s",
                "uint8_t fix_type",
                "uint8_t satellites_used",
            ]),
        }
        f
    }

    /// A row topic's fields after the timestamp.
    pub(super) fn of_row(self, r: &LogRow) -> Fields {
        let mut f = Fields::default();
        let (t, e, s) = (&r.truth, &r.estimate, &r.setpoints);
        match self {
            Topic::LocalPosition => {
                f.f32s(&e[..6]);
            }
            Topic::LocalPositionTruth => {
                for v in &t[..6] {
                    f.f32(*v);
                }
            }
            Topic::LocalPositionSetpoint => {
                f.f32s(&s[..6])
                    .f32s(&s[9..10])
                    .f32s(&s[6..9])
                    .f32s(&s[10..11]);
            }
            Topic::Attitude => {
                f.f32s(&e[6..10]);
            }
            Topic::AttitudeTruth => {
                for v in &t[6..10] {
                    f.f32(*v);
                }
            }
            Topic::AngularVelocity => {
                for v in &t[10..13] {
                    f.f32(*v);
                }
            }
            Topic::GlobalPosition => {
                f.f64(r.geodetic[0]).f64(r.geodetic[1]).f32(r.geodetic[2]);
            }
            Topic::ActuatorMotors => {
                for i in 0..MOTORS {
                    f.f32(r.motors.get(i).map_or(f64::NAN, |m| f64::from(*m)));
                }
            }
            Topic::ActuatorOutputs => {
                f.u32(r.motors.len().min(OUTPUTS) as u32);
                for i in 0..OUTPUTS {
                    f.f32(
                        r.motors
                            .get(i)
                            .map_or(0.0, |m| 1000.0 + 1000.0 * f64::from(*m)),
                    );
                }
            }
            Topic::BatteryStatus => {
                let b = r.batteries.first().copied().unwrap_or([f64::NAN; 3]);
                f.f32(b[0]).f32(b[1]).f32(b[2]);
            }
            Topic::Wind => {
                f.f32(r.wind[0]).f32(r.wind[1]);
            }
            _ => unreachable!("{self:?} is not written from a log row"),
        }
        f
    }

    /// A sensor topic's fields after the timestamp.
    pub(super) fn of_sample(self, s: &lockstep_sensor_frame, imu_period_us: u32) -> Fields {
        let mut f = Fields::default();
        match self {
            Topic::SensorCombined => {
                f.f32s(&s.imu.gyro_radps)
                    .u32(imu_period_us)
                    .i32(0)
                    .f32s(&s.imu.accel_mps2)
                    .u32(imu_period_us);
            }
            Topic::VehicleMagnetometer => {
                f.f32s(&s.mag.field_gauss);
            }
            Topic::SensorBaro => {
                f.f32s(&[s.baro.pressure_pa, s.baro.temperature_c]);
            }
            Topic::VehicleGpsPosition => {
                let g = &s.gps;
                f.i32((g.lat_deg * 1e7).round() as i32)
                    .i32((g.lon_deg * 1e7).round() as i32)
                    .i32((f64::from(g.alt_m) * 1e3).round() as i32)
                    .f32s(&[g.eph_m, g.epv_m])
                    .f32s(&g.vel_ned_mps)
                    .u8(g.fix_type.min(255) as u8)
                    .u8(g.satellites.min(255) as u8);
            }
            _ => unreachable!("{self:?} is not a sensor sample"),
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_topic_is_numbered_by_its_place_and_named_once() {
        for (i, t) in Topic::ALL.iter().enumerate() {
            assert_eq!(*t as usize, i);
        }
        let mut names: Vec<&str> = Topic::ALL.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Topic::ALL.len());
    }

    #[test]
    fn each_row_topic_packs_what_its_format_says() {
        let size = |field: &str| -> usize {
            let (ty, _) = field.split_once(' ').unwrap();
            let (base, n) = match ty.split_once('[') {
                Some((b, n)) => (b, n.trim_end_matches(']').parse().unwrap()),
                None => (ty, 1),
            };
            n * match base {
                "double" | "uint64_t" => 8,
                "float" | "int32_t" | "uint32_t" => 4,
                "uint8_t" | "bool" => 1,
                other => panic!("{other}"),
            }
        };
        let row = LogRow {
            motors: vec![0.5; 4],
            batteries: vec![[12.0, 10.0, 0.9]],
            ..LogRow::default()
        };
        for t in Topic::ROWS {
            let want: usize = t.fields()[1..].iter().map(|f| size(f)).sum();
            assert_eq!(t.of_row(&row).0.len(), want, "{t:?}");
        }
        let frame = lockstep_sensor_frame::default();
        for t in [
            Topic::SensorCombined,
            Topic::VehicleMagnetometer,
            Topic::SensorBaro,
            Topic::VehicleGpsPosition,
        ] {
            let want: usize = t.fields()[1..].iter().map(|f| size(f)).sum();
            assert_eq!(t.of_sample(&frame, 4000).0.len(), want, "{t:?}");
        }
        assert_eq!(
            [Topic::VehicleStatus, Topic::VehicleLandDetected]
                .map(|t| t.fields()[1..].iter().map(|f| size(f)).sum::<usize>()),
            [3, 3]
        );
    }
}
