//! The `[sensors]` and `[estimator]` sections over their defaults.

use super::SensorSettings;
use super::checks::{KeyError, delay, each_within, positive, within};
use super::file::File;

/// Largest value of each noise or bias setting: far beyond any real sensor,
/// small enough that every sample stays finite.
const LIMITS: &[(&str, f64)] = &[
    ("sensors.imu.accel_noise_mps2", 100.0),
    ("sensors.imu.gyro_noise_radps", 10.0),
    ("sensors.imu.accel_bias_walk_mps2_per_sqrt_s", 10.0),
    ("sensors.imu.gyro_bias_walk_radps_per_sqrt_s", 1.0),
    ("sensors.mag.noise_gauss", 1.0),
    ("sensors.baro.noise_pa", 10_000.0),
    ("sensors.gps.horizontal_noise_m", 1_000.0),
    ("sensors.gps.vertical_noise_m", 1_000.0),
    ("sensors.gps.velocity_noise_mps", 100.0),
    ("estimator.position_noise_m", 1_000.0),
    ("estimator.velocity_noise_mps", 100.0),
    ("estimator.attitude_noise_rad", std::f64::consts::PI),
    ("estimator.rates_noise_radps", 10.0),
    ("estimator.position_bias_m", 1_000.0),
    ("estimator.velocity_bias_mps", 100.0),
    ("estimator.attitude_bias_rad", std::f64::consts::PI),
    ("estimator.rates_bias_radps", 10.0),
];

/// Sets `target` to `v` when given, after checking it is finite, >= 0 and
/// at most the key's limit in [`LIMITS`].
fn set(key: &str, target: &mut f64, v: Option<f64>) -> Result<(), KeyError> {
    if let Some(v) = v {
        let max = LIMITS
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(f64::MAX, |(_, m)| *m);
        *target = within(key, v, 0.0, max)?;
    }
    Ok(())
}

/// Overlays the file's sensor settings on the defaults; every value is
/// checked with its key path.
pub(super) fn sensor_settings(f: &File) -> Result<SensorSettings, KeyError> {
    let mut s = SensorSettings::default();
    if let Some(i) = &f.sensors.imu {
        let n = &mut s.imu;
        set(
            "sensors.imu.accel_noise_mps2",
            &mut n.accel_noise_mps2,
            i.accel_noise_mps2,
        )?;
        set(
            "sensors.imu.gyro_noise_radps",
            &mut n.gyro_noise_radps,
            i.gyro_noise_radps,
        )?;
        set(
            "sensors.imu.accel_bias_walk_mps2_per_sqrt_s",
            &mut n.accel_bias_walk_mps2_per_sqrt_s,
            i.accel_bias_walk_mps2_per_sqrt_s,
        )?;
        set(
            "sensors.imu.gyro_bias_walk_radps_per_sqrt_s",
            &mut n.gyro_bias_walk_radps_per_sqrt_s,
            i.gyro_bias_walk_radps_per_sqrt_s,
        )?;
    }
    if let Some(m) = &f.sensors.mag {
        set(
            "sensors.mag.noise_gauss",
            &mut s.mag_noise_gauss,
            m.noise_gauss,
        )?;
        if let Some(b) = m.field_ned_gauss {
            // The Earth's field is 0.25 to 0.65 gauss.
            s.mag_field_ned_gauss = each_within("sensors.mag.field_ned_gauss", b, -2.0, 2.0)?;
        }
    }
    if let Some(b) = &f.sensors.baro {
        set("sensors.baro.noise_pa", &mut s.baro_noise_pa, b.noise_pa)?;
    }
    if let Some(g) = &f.sensors.gps {
        set(
            "sensors.gps.horizontal_noise_m",
            &mut s.gps.horizontal_noise_m,
            g.horizontal_noise_m,
        )?;
        set(
            "sensors.gps.vertical_noise_m",
            &mut s.gps.vertical_noise_m,
            g.vertical_noise_m,
        )?;
        set(
            "sensors.gps.velocity_noise_mps",
            &mut s.gps.velocity_noise_mps,
            g.velocity_noise_mps,
        )?;
        if let Some(d) = g.delay_us {
            s.gps.delay = delay("sensors.gps.delay_us", d)?;
        }
    }
    if let Some(e) = &f.estimator {
        let c = &mut s.estimator;
        set(
            "estimator.position_noise_m",
            &mut c.position_noise_m,
            e.position_noise_m,
        )?;
        set(
            "estimator.velocity_noise_mps",
            &mut c.velocity_noise_mps,
            e.velocity_noise_mps,
        )?;
        set(
            "estimator.attitude_noise_rad",
            &mut c.attitude_noise_rad,
            e.attitude_noise_rad,
        )?;
        set(
            "estimator.rates_noise_radps",
            &mut c.rates_noise_radps,
            e.rates_noise_radps,
        )?;
        set(
            "estimator.position_bias_m",
            &mut c.position_bias_m,
            e.position_bias_m,
        )?;
        set(
            "estimator.velocity_bias_mps",
            &mut c.velocity_bias_mps,
            e.velocity_bias_mps,
        )?;
        set(
            "estimator.attitude_bias_rad",
            &mut c.attitude_bias_rad,
            e.attitude_bias_rad,
        )?;
        set(
            "estimator.rates_bias_radps",
            &mut c.rates_bias_radps,
            e.rates_bias_radps,
        )?;
        if let Some(t) = e.bias_tau_s {
            positive("estimator.bias_tau_s", t, 1e5)?;
            c.bias_tau_s = t;
        }
        if let Some(d) = e.delay_us {
            c.delay = delay("estimator.delay_us", d)?;
        }
    }
    Ok(s)
}
