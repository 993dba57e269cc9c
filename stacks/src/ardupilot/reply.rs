//! The JSON state ArduPilot reads (`libraries/SITL/SIM_JSON.cpp`), framed
//! as `"\n" + json + "\n"`, its keys in an order that its substring search
//! cannot confuse (`velocity` before `velocity_wind`); and the timestamps
//! that keep ArduPilot's clock on lockstep's microseconds.
//!
//! ArduPilot advances its clock by `time_now_us += deltat * 1.0e6` (a
//! `uint64_t` plus a `double`, truncated), `deltat` the difference of two
//! parsed timestamps. Sent as the doubles nearest `t / 1e6`, the product
//! falls a hair below the period about half the time and the truncation
//! loses a microsecond: at 400 Hz (2500 µs frames) the first is lost at the
//! 6th frame and 181 ms in an hour (measured by [`tests`]; only multiples
//! of 15625 µs, 1/64 s, stay exact). So each timestamp is the smallest
//! double, from the nearest up, for which `deltat * 1e6` is at least the
//! period (and less than it + 0.5): the truncation then lands exactly on
//! lockstep's time at any integer period, whatever ArduPilot's clock
//! started at, and the timestamp differs from `t / 1e6` by well under a
//! microsecond (0.6 µs after an hour at 1 kHz).

use lockstep_abi::GroundTruth;
use lockstep_abi::ffi::lockstep_sensor_frame;
use serde::Serialize;

/// The timestamps sent so far.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Clock {
    last_s: f64,
    last_us: u64,
}

impl Clock {
    /// The timestamp (s) to send for lockstep time `t_us` (later than the
    /// last one sent, or the first).
    pub(crate) fn timestamp(&mut self, t_us: u64) -> f64 {
        let period = (t_us - self.last_us) as f64;
        let mut d = (self.last_s + period / 1e6).max(t_us as f64 / 1e6);
        while (d - self.last_s) * 1e6 < period {
            d = d.next_up();
        }
        self.last_s = d;
        self.last_us = t_us;
        d
    }
}

#[derive(Serialize)]
struct Imu {
    gyro: [f32; 3],
    accel_body: [f32; 3],
}

#[derive(Serialize)]
struct Battery {
    voltage: f32,
    current: f32,
}

/// The keys in the order they are written.
#[derive(Serialize)]
struct State {
    timestamp: f64,
    imu: Imu,
    position: [f64; 3],
    quaternion: [f64; 4],
    velocity: [f64; 3],
    velocity_wind: [f64; 3],
    latitude: f64,
    longitude: f64,
    altitude: f64,
    battery: Battery,
}

/// Writes the reply for a frame into `out` (cleared first): the IMU sample
/// from lockstep's sensor model (with its noise and faults), the true
/// position, attitude, velocity and wind, and the battery.
pub(crate) fn write(out: &mut Vec<u8>, timestamp: f64, f: &lockstep_sensor_frame, t: &GroundTruth) {
    out.clear();
    out.push(b'\n');
    let state = State {
        timestamp,
        imu: Imu {
            gyro: f.imu.gyro_radps,
            accel_body: f.imu.accel_mps2,
        },
        position: t.position_ned_m,
        quaternion: t.attitude_q,
        velocity: t.velocity_ned_mps,
        velocity_wind: t.wind_ned_mps,
        latitude: t.lat_deg,
        longitude: t.lon_deg,
        altitude: t.alt_m,
        battery: Battery {
            voltage: f.battery.voltage_v,
            current: f.battery.current_a,
        },
    };
    // Serialising plain numbers into a Vec cannot fail (a non-finite
    // number becomes null, which the link refuses before sending).
    let _ = serde_json::to_writer(&mut *out, &state);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ArduPilot's `time_now_us += deltat * 1.0e6` over `frames` frames of
    /// `period_us` from a clock at `start_us`, fed `stamp(t)`: the number
    /// of frames whose clock differs from lockstep's, and the final error.
    fn ardupilot_clock(
        period_us: u64,
        frames: u64,
        start_us: u64,
        mut stamp: impl FnMut(u64) -> f64,
    ) -> (u64, i64) {
        let (mut now, mut last) = (start_us, 0.0f64);
        let mut wrong = 0;
        for k in 1..=frames {
            let t = k * period_us;
            let ts = stamp(t);
            let deltat = if ts < last { 0.0 } else { ts - last };
            now = (now as f64 + deltat * 1.0e6) as u64;
            last = ts;
            wrong += u64::from(now != start_us + t);
        }
        (wrong, now as i64 - (start_us + frames * period_us) as i64)
    }

    #[test]
    fn nearest_timestamps_lose_microseconds_in_ardupilots_clock() {
        // 400 Hz for a minute: most frames lose a microsecond.
        let (wrong, drift) = ardupilot_clock(2500, 24_000, 0, |t| t as f64 / 1e6);
        assert!(wrong > 20_000, "{wrong}");
        assert!(drift < -1000, "{drift}");
        // 1/64 s frames are exact binary fractions: no loss.
        assert_eq!(
            ardupilot_clock(15_625, 10_000, 0, |t| t as f64 / 1e6),
            (0, 0)
        );
    }

    #[test]
    fn chosen_timestamps_keep_ardupilots_clock_exact_at_any_period() {
        for period in [1000, 1200, 2500, 3333, 4000, 20_000] {
            // An hour at the period (capped at a million frames), from a
            // clock at zero and from one ArduPilot had running already.
            let frames = (3_600_000_000 / period).min(1_000_000);
            for start in [0, 123_456_789] {
                let mut c = Clock::default();
                let mut worst = 0.0f64;
                let result = ardupilot_clock(period, frames, start, |t| {
                    let ts = c.timestamp(t);
                    worst = worst.max((ts - t as f64 / 1e6).abs());
                    ts
                });
                assert_eq!(result, (0, 0), "period {period} from {start}");
                assert!(worst < 1e-6, "period {period}: {worst} s off");
            }
        }
    }

    #[test]
    fn the_reply_is_one_framed_line_with_velocity_before_velocity_wind() {
        let mut f = lockstep_sensor_frame::default();
        f.imu.gyro_radps = [0.5, 0.0, -0.25];
        f.imu.accel_mps2 = [0.0, 0.0, -9.75];
        f.battery.voltage_v = 16.5;
        let t = GroundTruth {
            position_ned_m: [1.0, 2.0, -3.0],
            attitude_q: [1.0, 0.0, 0.0, 0.0],
            velocity_ned_mps: [0.5, 0.0, 0.0],
            wind_ned_mps: [0.0, -6.0, 0.0],
            lat_deg: 47.0,
            lon_deg: 8.5,
            alt_m: 500.0,
            ..Default::default()
        };
        let mut out = Vec::new();
        write(&mut out, 0.0025, &f, &t);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "\n{\"timestamp\":0.0025,\"imu\":{\"gyro\":[0.5,0.0,-0.25],\"accel_body\":\
             [0.0,0.0,-9.75]},\"position\":[1.0,2.0,-3.0],\"quaternion\":[1.0,0.0,0.0,0.0],\
             \"velocity\":[0.5,0.0,0.0],\"velocity_wind\":[0.0,-6.0,0.0],\"latitude\":47.0,\
             \"longitude\":8.5,\"altitude\":500.0,\"battery\":{\"voltage\":16.5,\"current\":0.0}}\n"
        );
    }
}
