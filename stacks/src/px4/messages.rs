//! The MAVLink messages of one boundary, built from lockstep's sensor frame
//! and the true state, in the units PX4's `SimulatorMavlink` reads them;
//! and the actuator frame built from PX4's `HIL_ACTUATOR_CONTROLS`. Pure
//! functions: the link only sends and receives them.

use lockstep_abi::GroundTruth;
use lockstep_abi::ffi::*;
use mavlink::dialects::common::{
    HIL_ACTUATOR_CONTROLS_DATA, HIL_GPS_DATA, HIL_SENSOR_DATA, HIL_STATE_QUATERNION_DATA,
    HilSensorUpdatedFlags, MavModeFlag,
};

use crate::OutputMap;

/// Standard gravity, for HIL_STATE_QUATERNION's accelerations in mG.
const G0: f64 = 9.806_65;

/// Pressure altitude (m) of `pressure_pa` in the ISA troposphere, as
/// `HIL_SENSOR.pressure_alt` carries it.
pub(crate) fn pressure_altitude_m(pressure_pa: f32) -> f32 {
    (44_330.769 * (1.0 - libm::pow(f64::from(pressure_pa) / 101_325.0, 0.190_263))) as f32
}

/// `HIL_SENSOR` at `time_us` (id 0): every value is the sensor's latest
/// sample; `fields_updated` says which were sampled since the last message
/// (IMU: accel and gyro; magnetometer; barometer: pressure, pressure
/// altitude, temperature).
pub(crate) fn hil_sensor(time_us: u64, f: &lockstep_sensor_frame) -> HIL_SENSOR_DATA {
    let mut updated = HilSensorUpdatedFlags::empty();
    if f.fresh_mask & LOCKSTEP_FRESH_IMU != 0 {
        updated |= HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_XACC
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_YACC
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_ZACC
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_XGYRO
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_YGYRO
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_ZGYRO;
    }
    if f.fresh_mask & LOCKSTEP_FRESH_MAG != 0 {
        updated |= HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_XMAG
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_YMAG
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_ZMAG;
    }
    if f.fresh_mask & LOCKSTEP_FRESH_BARO != 0 {
        updated |= HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_ABS_PRESSURE
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_PRESSURE_ALT
            | HilSensorUpdatedFlags::HIL_SENSOR_UPDATED_TEMPERATURE;
    }
    HIL_SENSOR_DATA {
        time_usec: time_us,
        xacc: f.imu.accel_mps2[0],
        yacc: f.imu.accel_mps2[1],
        zacc: f.imu.accel_mps2[2],
        xgyro: f.imu.gyro_radps[0],
        ygyro: f.imu.gyro_radps[1],
        zgyro: f.imu.gyro_radps[2],
        xmag: f.mag.field_gauss[0],
        ymag: f.mag.field_gauss[1],
        zmag: f.mag.field_gauss[2],
        // hPa (mbar), as MAVLink and PX4 read it.
        abs_pressure: f.baro.pressure_pa / 100.0,
        diff_pressure: 0.0,
        pressure_alt: pressure_altitude_m(f.baro.pressure_pa),
        temperature: f.baro.temperature_c,
        fields_updated: updated,
        id: 0,
    }
}

fn deg_e7(deg: f64) -> i32 {
    (deg * 1e7).round() as i32
}

/// A speed in cm/s as an `i16` (saturating: 327 m/s is far past a
/// multirotor's).
fn cm_s(v: f64) -> i16 {
    (v * 100.0)
        .round()
        .clamp(f64::from(i16::MIN), f64::from(i16::MAX)) as i16
}

/// `HIL_GPS` from the frame's fix (sampled at this boundary).
pub(crate) fn hil_gps(time_us: u64, g: &lockstep_gps) -> HIL_GPS_DATA {
    let [vn, ve, vd] = g.vel_ned_mps.map(f64::from);
    let ground = vn.hypot(ve);
    let cog = if ground < 0.01 {
        u16::MAX
    } else {
        let deg = libm::atan2(ve, vn).to_degrees().rem_euclid(360.0);
        ((deg * 100.0).round() as u16) % 36_000
    };
    let cm = |m: f32| (f64::from(m) * 100.0).round().clamp(0.0, 65_534.0) as u16;
    HIL_GPS_DATA {
        time_usec: time_us,
        lat: deg_e7(g.lat_deg),
        lon: deg_e7(g.lon_deg),
        alt: (f64::from(g.alt_m) * 1000.0).round() as i32,
        eph: cm(g.eph_m),
        epv: cm(g.epv_m),
        vel: (ground * 100.0).round().min(65_534.0) as u16,
        vn: cm_s(vn),
        ve: cm_s(ve),
        vd: cm_s(vd),
        cog,
        fix_type: g.fix_type as u8,
        satellites_visible: g.satellites as u8,
        id: 0,
        yaw: 0,
    }
}

/// `HIL_STATE_QUATERNION`: the true state (PX4 logs it as ground truth).
pub(crate) fn hil_state(time_us: u64, t: &GroundTruth) -> HIL_STATE_QUATERNION_DATA {
    let air = [0, 1, 2].map(|i| t.velocity_ned_mps[i] - t.wind_ned_mps[i]);
    let airspeed = (air[0] * air[0] + air[1] * air[1] + air[2] * air[2]).sqrt();
    let mg = |a: f64| (a / G0 * 1000.0).round().clamp(-32_768.0, 32_767.0) as i16;
    HIL_STATE_QUATERNION_DATA {
        time_usec: time_us,
        attitude_quaternion: t.attitude_q.map(|q| q as f32),
        rollspeed: t.rates_frd_radps[0] as f32,
        pitchspeed: t.rates_frd_radps[1] as f32,
        yawspeed: t.rates_frd_radps[2] as f32,
        lat: deg_e7(t.lat_deg),
        lon: deg_e7(t.lon_deg),
        alt: (t.alt_m * 1000.0).round() as i32,
        vx: cm_s(t.velocity_ned_mps[0]),
        vy: cm_s(t.velocity_ned_mps[1]),
        vz: cm_s(t.velocity_ned_mps[2]),
        ind_airspeed: (airspeed * 100.0).round().min(65_535.0) as u16,
        true_airspeed: (airspeed * 100.0).round().min(65_535.0) as u16,
        xacc: mg(t.specific_force_frd_mps2[0]),
        yacc: mg(t.specific_force_frd_mps2[1]),
        zacc: mg(t.specific_force_frd_mps2[2]),
    }
}

/// The actuator frame PX4's answer commands: rotor `i` gets channel
/// `map.channel(i)`; armed from the `MAV_MODE_FLAG_SAFETY_ARMED` bit. The
/// simulator link carries no mode, mission or setpoint: the mode is
/// `LOCKSTEP_MODE_STACK` while armed.
pub(crate) fn actuators(
    c: &HIL_ACTUATOR_CONTROLS_DATA,
    map: &OutputMap,
    rotors: usize,
) -> lockstep_actuator_frame {
    let armed = c.mode.contains(MavModeFlag::MAV_MODE_FLAG_SAFETY_ARMED);
    let mut out = lockstep_actuator_frame {
        armed: u32::from(armed),
        mode: if armed {
            LOCKSTEP_MODE_STACK
        } else {
            LOCKSTEP_MODE_DISARMED
        },
        mission_current: -1,
        ..Default::default()
    };
    for (i, m) in out.motors.iter_mut().enumerate().take(rotors) {
        *m = c.controls[map.channel(i)];
    }
    out
}

/// What the motors hold while PX4 boots (before its first answer).
pub(crate) fn motors_off() -> lockstep_actuator_frame {
    lockstep_actuator_frame {
        mode: LOCKSTEP_MODE_DISARMED,
        mission_current: -1,
        ..Default::default()
    }
}
