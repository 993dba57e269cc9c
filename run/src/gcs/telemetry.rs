//! The vehicle's telemetry as MAVLink messages, read from the engine at a
//! boundary: the true state (attitude, position, velocity) as a flight
//! stack reports its estimate, the GPS sample, the battery, the autopilot's
//! arming, mode and mission progress. Each stream has its own rate in
//! simulated time.

use lockstep_abi::ffi::*;
use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;

use super::health::Health;
use super::modes::Style;

/// The streams and their default periods (µs of simulated time); a
/// station changes them with SET_MESSAGE_INTERVAL or REQUEST_DATA_STREAM.
pub(crate) const STREAMS: [(Stream, u64); 15] = [
    (Stream::Heartbeat, 1_000_000),
    (Stream::SysStatus, 1_000_000),
    (Stream::Attitude, 100_000),
    (Stream::GlobalPosition, 100_000),
    (Stream::LocalPosition, 100_000),
    (Stream::Battery, 1_000_000),
    (Stream::ExtendedSysState, 500_000),
    (Stream::GpsRaw, 200_000),
    (Stream::MissionCurrent, 500_000),
    (Stream::SystemTime, 1_000_000),
    (Stream::VfrHud, 250_000),
    (Stream::Altitude, 100_000),
    (Stream::AttitudeQuaternion, 100_000),
    (Stream::ServoOutputRaw, 200_000),
    // PX4 streams home at 0.5 Hz: MAVSDK's `telemetry.home()` waits for
    // the next one.
    (Stream::HomePosition, 2_000_000),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Heartbeat,
    SysStatus,
    Attitude,
    GlobalPosition,
    LocalPosition,
    Battery,
    ExtendedSysState,
    GpsRaw,
    MissionCurrent,
    SystemTime,
    VfrHud,
    Altitude,
    AttitudeQuaternion,
    ServoOutputRaw,
    HomePosition,
}

impl Stream {
    /// The MAVLink id of the stream's message (what `REQUEST_MESSAGE`
    /// names).
    pub(crate) fn message_id(self) -> u32 {
        use mavlink::MessageData;
        match self {
            Stream::Heartbeat => HEARTBEAT_DATA::ID,
            Stream::SysStatus => SYS_STATUS_DATA::ID,
            Stream::Attitude => ATTITUDE_DATA::ID,
            Stream::GlobalPosition => GLOBAL_POSITION_INT_DATA::ID,
            Stream::LocalPosition => LOCAL_POSITION_NED_DATA::ID,
            Stream::Battery => BATTERY_STATUS_DATA::ID,
            Stream::ExtendedSysState => EXTENDED_SYS_STATE_DATA::ID,
            Stream::GpsRaw => GPS_RAW_INT_DATA::ID,
            Stream::MissionCurrent => MISSION_CURRENT_DATA::ID,
            Stream::SystemTime => SYSTEM_TIME_DATA::ID,
            Stream::VfrHud => VFR_HUD_DATA::ID,
            Stream::Altitude => ALTITUDE_DATA::ID,
            Stream::AttitudeQuaternion => ATTITUDE_QUATERNION_DATA::ID,
            Stream::ServoOutputRaw => SERVO_OUTPUT_RAW_DATA::ID,
            Stream::HomePosition => HOME_POSITION_DATA::ID,
        }
    }

    /// The streams of one of ArduPilot's stream groups (REQUEST_DATA_STREAM,
    /// as ArduCopter's GCS_MAVLink groups its messages); HEARTBEAT is in
    /// none (always sent).
    pub(crate) fn in_group(self, group: MavDataStream) -> bool {
        use MavDataStream::*;
        match group {
            // HOME_POSITION keeps its own rate (ArduPilot streams it in
            // no group).
            MAV_DATA_STREAM_ALL => !matches!(self, Stream::Heartbeat | Stream::HomePosition),
            MAV_DATA_STREAM_EXTENDED_STATUS => matches!(
                self,
                Stream::SysStatus | Stream::GpsRaw | Stream::MissionCurrent
            ),
            MAV_DATA_STREAM_POSITION => {
                matches!(self, Stream::GlobalPosition | Stream::LocalPosition)
            }
            MAV_DATA_STREAM_RC_CHANNELS => self == Stream::ServoOutputRaw,
            MAV_DATA_STREAM_EXTRA1 => matches!(self, Stream::Attitude | Stream::AttitudeQuaternion),
            MAV_DATA_STREAM_EXTRA2 => self == Stream::VfrHud,
            MAV_DATA_STREAM_EXTRA3 => matches!(
                self,
                Stream::Battery | Stream::SystemTime | Stream::ExtendedSysState | Stream::Altitude
            ),
            _ => false,
        }
    }
}

/// Where the vehicle was at the start: its home.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Home {
    pub(crate) lat_deg: f64,
    pub(crate) lon_deg: f64,
    pub(crate) alt_m: f64,
    pub(crate) ned: [f64; 3],
}

impl Home {
    pub(crate) fn of(engine: &Engine) -> Home {
        let x = engine.state();
        let ned = [x[0], x[1], x[2]];
        let g = engine.plant().origin.to_geodetic(ned);
        Home {
            lat_deg: g.lat_deg,
            lon_deg: g.lon_deg,
            alt_m: g.alt_m,
            ned,
        }
    }

    /// Home as ArduPilot's mission item 0.
    pub(crate) fn mission_item(&self) -> MISSION_ITEM_INT_DATA {
        MISSION_ITEM_INT_DATA {
            x: deg_e7(self.lat_deg),
            y: deg_e7(self.lon_deg),
            z: self.alt_m as f32,
            seq: 0,
            command: MavCmd::MAV_CMD_NAV_WAYPOINT,
            frame: MavFrame::MAV_FRAME_GLOBAL,
            autocontinue: 1,
            mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
            ..Default::default()
        }
    }

    pub(crate) fn message(&self, time_us: u64) -> MavMessage {
        MavMessage::HOME_POSITION(HOME_POSITION_DATA {
            latitude: deg_e7(self.lat_deg),
            longitude: deg_e7(self.lon_deg),
            altitude: (self.alt_m * 1000.0).round() as i32,
            x: self.ned[0] as f32,
            y: self.ned[1] as f32,
            z: self.ned[2] as f32,
            q: [1.0, 0.0, 0.0, 0.0],
            approach_x: 0.0,
            approach_y: 0.0,
            approach_z: 0.0,
            time_usec: time_us,
        })
    }
}

fn deg_e7(deg: f64) -> i32 {
    (deg * 1e7).round() as i32
}

fn cm_s(v: f64) -> i16 {
    (v * 100.0).round().clamp(-32_768.0, 32_767.0) as i16
}

/// Roll, pitch, yaw (rad) of a body-to-NED quaternion (w, x, y, z).
pub(crate) fn euler(q: &[f64]) -> [f64; 3] {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    [
        libm::atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y)),
        libm::asin((2.0 * (w * y - z * x)).clamp(-1.0, 1.0)),
        libm::atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)),
    ]
}

/// What a station is told beside the engine's own state.
pub(crate) struct View<'a> {
    pub(crate) style: Style,
    pub(crate) home: &'a Home,
    /// ArduPilot's missions count home as item 0.
    pub(crate) home_first: bool,
    pub(crate) health: &'a Health,
    /// The mode HEARTBEAT reports, as the station's mode names it.
    pub(crate) custom_mode: u32,
}

/// HEARTBEAT in `style`, reporting `custom_mode`.
pub(crate) fn heartbeat(engine: &Engine, style: Style, custom_mode: u32) -> MavMessage {
    let act = engine.actuators();
    let mut base = MavModeFlag::MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
        | MavModeFlag::MAV_MODE_FLAG_STABILIZE_ENABLED
        | MavModeFlag::MAV_MODE_FLAG_GUIDED_ENABLED;
    if act.mode == LOCKSTEP_MODE_MISSION || act.mode == LOCKSTEP_MODE_RTL {
        base |= MavModeFlag::MAV_MODE_FLAG_AUTO_ENABLED;
    }
    if act.armed == 1 {
        base |= MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED;
    }
    MavMessage::HEARTBEAT(HEARTBEAT_DATA {
        custom_mode,
        mavtype: match engine.plant().rotors.len() {
            6 => MavType::MAV_TYPE_HEXAROTOR,
            8 => MavType::MAV_TYPE_OCTOROTOR,
            _ => MavType::MAV_TYPE_QUADROTOR,
        },
        autopilot: match style {
            Style::Px4 => MavAutopilot::MAV_AUTOPILOT_PX4,
            Style::ArduPilot => MavAutopilot::MAV_AUTOPILOT_ARDUPILOTMEGA,
        },
        base_mode: base,
        system_status: if engine.crashed() {
            MavState::MAV_STATE_EMERGENCY
        } else if act.armed == 1 {
            MavState::MAV_STATE_ACTIVE
        } else {
            MavState::MAV_STATE_STANDBY
        },
        mavlink_version: 3,
    })
}

/// Whether the vehicle rests on the ground (the landed flag of the last
/// autopilot step).
pub(crate) fn landed(engine: &Engine) -> bool {
    engine.sensor_frame().landed == 1
}

/// The message of one stream now, as `view` presents the vehicle.
///
/// Long because it is the table of streams: one arm per MAVLink message,
/// each filling that message's fields from the engine's state.
pub(crate) fn message(engine: &Engine, stream: Stream, view: &View) -> MavMessage {
    let (home, health) = (view.home, view.health);
    let now = engine.now().0;
    let ms = (now / 1000) as u32;
    let x = engine.state();
    let act = engine.actuators();
    let frame = engine.sensor_frame();
    let b = &frame.battery;
    match stream {
        Stream::Heartbeat => heartbeat(engine, view.style, view.custom_mode),
        Stream::SysStatus => MavMessage::SYS_STATUS(SYS_STATUS_DATA {
            onboard_control_sensors_present: health.present,
            onboard_control_sensors_enabled: health.enabled,
            onboard_control_sensors_health: health.healthy,
            voltage_battery: (b.voltage_v * 1000.0).round().clamp(0.0, 65_534.0) as u16,
            current_battery: (b.current_a * 100.0).round().clamp(-1.0, 32_767.0) as i16,
            battery_remaining: (b.remaining * 100.0).round().clamp(0.0, 100.0) as i8,
            ..Default::default()
        }),
        Stream::Attitude => {
            let [roll, pitch, yaw] = euler(&x[6..10]);
            MavMessage::ATTITUDE(ATTITUDE_DATA {
                time_boot_ms: ms,
                roll: roll as f32,
                pitch: pitch as f32,
                yaw: yaw as f32,
                rollspeed: x[10] as f32,
                pitchspeed: x[11] as f32,
                yawspeed: x[12] as f32,
            })
        }
        Stream::GlobalPosition => {
            let g = engine.plant().origin.to_geodetic([x[0], x[1], x[2]]);
            let yaw = euler(&x[6..10])[2].to_degrees().rem_euclid(360.0);
            MavMessage::GLOBAL_POSITION_INT(GLOBAL_POSITION_INT_DATA {
                time_boot_ms: ms,
                lat: deg_e7(g.lat_deg),
                lon: deg_e7(g.lon_deg),
                alt: (g.alt_m * 1000.0).round() as i32,
                relative_alt: ((home.ned[2] - x[2]) * 1000.0).round() as i32,
                vx: cm_s(x[3]),
                vy: cm_s(x[4]),
                vz: cm_s(x[5]),
                hdg: ((yaw * 100.0).round() as u16) % 36_000,
            })
        }
        Stream::LocalPosition => MavMessage::LOCAL_POSITION_NED(LOCAL_POSITION_NED_DATA {
            time_boot_ms: ms,
            x: x[0] as f32,
            y: x[1] as f32,
            z: x[2] as f32,
            vx: x[3] as f32,
            vy: x[4] as f32,
            vz: x[5] as f32,
        }),
        Stream::Battery => {
            let mut voltages = [u16::MAX; 10];
            voltages[0] = (b.voltage_v * 1000.0).round().clamp(0.0, 65_534.0) as u16;
            MavMessage::BATTERY_STATUS(BATTERY_STATUS_DATA {
                current_consumed: -1,
                energy_consumed: -1,
                temperature: i16::MAX,
                voltages,
                current_battery: (b.current_a * 100.0).round().clamp(-1.0, 32_767.0) as i16,
                id: 0,
                battery_function: MavBatteryFunction::MAV_BATTERY_FUNCTION_ALL,
                mavtype: MavBatteryType::MAV_BATTERY_TYPE_LIPO,
                battery_remaining: (b.remaining * 100.0).round().clamp(0.0, 100.0) as i8,
                charge_state: match b.warning {
                    LOCKSTEP_BATTERY_OK => MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_OK,
                    LOCKSTEP_BATTERY_LOW => MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_LOW,
                    LOCKSTEP_BATTERY_CRITICAL => {
                        MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_CRITICAL
                    }
                    _ => MavBatteryChargeState::MAV_BATTERY_CHARGE_STATE_EMERGENCY,
                },
                ..Default::default()
            })
        }
        Stream::ExtendedSysState => MavMessage::EXTENDED_SYS_STATE(EXTENDED_SYS_STATE_DATA {
            vtol_state: MavVtolState::MAV_VTOL_STATE_UNDEFINED,
            landed_state: if landed(engine) {
                MavLandedState::MAV_LANDED_STATE_ON_GROUND
            } else if act.mode == LOCKSTEP_MODE_TAKEOFF {
                MavLandedState::MAV_LANDED_STATE_TAKEOFF
            } else if act.mode == LOCKSTEP_MODE_LAND {
                MavLandedState::MAV_LANDED_STATE_LANDING
            } else {
                MavLandedState::MAV_LANDED_STATE_IN_AIR
            },
        }),
        Stream::GpsRaw => {
            let g = &frame.gps;
            // A GPS that delivers nothing reports no fix (its last sample
            // stays in the frame the autopilot no longer sees refreshed).
            let dropped = engine.faults_in_force().sensors[3]
                == lockstep_harness::engine::SensorFaultKind::Dropout;
            let [vn, ve] = [f64::from(g.vel_ned_mps[0]), f64::from(g.vel_ned_mps[1])];
            MavMessage::GPS_RAW_INT(GPS_RAW_INT_DATA {
                time_usec: g.timestamp_us,
                lat: deg_e7(g.lat_deg),
                lon: deg_e7(g.lon_deg),
                alt: (f64::from(g.alt_m) * 1000.0).round() as i32,
                eph: (g.eph_m * 100.0).round().clamp(0.0, 65_534.0) as u16,
                epv: (g.epv_m * 100.0).round().clamp(0.0, 65_534.0) as u16,
                vel: (vn.hypot(ve) * 100.0).round().min(65_534.0) as u16,
                cog: u16::MAX,
                fix_type: if dropped {
                    GpsFixType::GPS_FIX_TYPE_NO_FIX
                } else if g.fix_type == LOCKSTEP_GPS_FIX_3D {
                    GpsFixType::GPS_FIX_TYPE_3D_FIX
                } else if g.fix_type == LOCKSTEP_GPS_FIX_2D {
                    GpsFixType::GPS_FIX_TYPE_2D_FIX
                } else {
                    GpsFixType::GPS_FIX_TYPE_NO_FIX
                },
                satellites_visible: if dropped {
                    0
                } else {
                    g.satellites.min(255) as u8
                },
                ..Default::default()
            })
        }
        Stream::MissionCurrent => mission_current(act, u16::from(view.home_first)),
        // No calendar in a lockstep run: the Unix time is 0, "unknown".
        Stream::SystemTime => MavMessage::SYSTEM_TIME(SYSTEM_TIME_DATA {
            time_unix_usec: 0,
            time_boot_ms: ms,
        }),
        Stream::VfrHud => {
            // Airspeed: the speed through the air (the wind taken off).
            let w = engine.wind();
            let air =
                ((x[3] - w[0]).powi(2) + (x[4] - w[1]).powi(2) + (x[5] - w[2]).powi(2)).sqrt();
            let n = engine.plant().rotors.len().max(1);
            let mean = act.motors[..n].iter().map(|&m| f64::from(m)).sum::<f64>() / n as f64;
            let g = engine.plant().origin.to_geodetic([x[0], x[1], x[2]]);
            let yaw = euler(&x[6..10])[2].to_degrees().rem_euclid(360.0);
            MavMessage::VFR_HUD(VFR_HUD_DATA {
                airspeed: air as f32,
                groundspeed: x[3].hypot(x[4]) as f32,
                alt: g.alt_m as f32,
                climb: -x[5] as f32,
                heading: (yaw.round() as i16) % 360,
                throttle: (mean * 100.0).round().clamp(0.0, 100.0) as u16,
            })
        }
        Stream::Altitude => {
            let g = engine.plant().origin.to_geodetic([x[0], x[1], x[2]]);
            MavMessage::ALTITUDE(ALTITUDE_DATA {
                time_usec: now,
                altitude_monotonic: g.alt_m as f32,
                altitude_amsl: g.alt_m as f32,
                altitude_local: -x[2] as f32,
                altitude_relative: (home.ned[2] - x[2]) as f32,
                // The ground is the plane z = 0 of the world frame.
                altitude_terrain: -x[2] as f32,
                // No distance sensor.
                bottom_clearance: -1.0,
            })
        }
        Stream::AttitudeQuaternion => MavMessage::ATTITUDE_QUATERNION(ATTITUDE_QUATERNION_DATA {
            time_boot_ms: ms,
            q1: x[6] as f32,
            q2: x[7] as f32,
            q3: x[8] as f32,
            q4: x[9] as f32,
            rollspeed: x[10] as f32,
            pitchspeed: x[11] as f32,
            yawspeed: x[12] as f32,
            repr_offset_q: [0.0; 4],
        }),
        Stream::ServoOutputRaw => {
            // Motor commands as PWM: 1000 us off to 2000 us full, 0 for
            // outputs without a motor.
            let n = engine.plant().rotors.len();
            let pwm = |i: usize| -> u16 {
                if i < n {
                    (1000.0 + f64::from(act.motors[i]).clamp(0.0, 1.0) * 1000.0).round() as u16
                } else {
                    0
                }
            };
            MavMessage::SERVO_OUTPUT_RAW(SERVO_OUTPUT_RAW_DATA {
                time_usec: now as u32,
                port: 0,
                servo1_raw: pwm(0),
                servo2_raw: pwm(1),
                servo3_raw: pwm(2),
                servo4_raw: pwm(3),
                servo5_raw: pwm(4),
                servo6_raw: pwm(5),
                servo7_raw: pwm(6),
                servo8_raw: pwm(7),
                servo9_raw: pwm(8),
                servo10_raw: pwm(9),
                servo11_raw: pwm(10),
                servo12_raw: pwm(11),
                servo13_raw: pwm(12),
                servo14_raw: pwm(13),
                servo15_raw: pwm(14),
                servo16_raw: pwm(15),
            })
        }
        Stream::HomePosition => home.message(now),
    }
}

/// PROTOCOL_VERSION: MAVLink 2 (200), also speaking 1 (100).
pub(crate) fn protocol_version() -> MavMessage {
    MavMessage::PROTOCOL_VERSION(PROTOCOL_VERSION_DATA {
        version: 200,
        min_version: 100,
        max_version: 200,
        spec_version_hash: [0; 8],
        library_version_hash: [0; 8],
    })
}

/// MISSION_CURRENT: the item being flown (the last one once finished),
/// numbered from `offset` (1 when the link's item 0 is home).
pub(crate) fn mission_current(act: &lockstep_actuator_frame, offset: u16) -> MavMessage {
    let total = act.mission_count.min(u32::from(u16::MAX - 1)) as u16;
    let seq = if act.mission_finished == 1 {
        total.saturating_sub(1)
    } else {
        act.mission_current.max(0) as u16
    } + offset;
    let total = total + offset;
    MavMessage::MISSION_CURRENT(MISSION_CURRENT_DATA {
        seq,
        total,
        mission_state: if act.mission_count == 0 {
            MissionState::MISSION_STATE_NO_MISSION
        } else if act.mission_finished == 1 {
            MissionState::MISSION_STATE_COMPLETE
        } else if act.mode == LOCKSTEP_MODE_MISSION {
            MissionState::MISSION_STATE_ACTIVE
        } else if act.mission_current >= 0 {
            MissionState::MISSION_STATE_PAUSED
        } else {
            MissionState::MISSION_STATE_NOT_STARTED
        },
        mission_mode: u8::from(act.mode == LOCKSTEP_MODE_MISSION),
        ..Default::default()
    })
}
