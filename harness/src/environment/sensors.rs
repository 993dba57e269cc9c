//! Sensor models and the estimated state, sampled from truth snapshots.
//!
//! Each model owns its random stream. Delayed outputs (GPS, estimator) come
//! from a preallocated history of truth snapshots and carry the timestamp of
//! the truth they were taken from, never the time they are delivered at.

use lockstep_abi::ffi::{
    LOCKSTEP_GPS_FIX_3D, lockstep_baro, lockstep_estimate, lockstep_gps, lockstep_imu, lockstep_mag,
};
use lockstep_plant::env::atmosphere::Isa;
use lockstep_plant::env::geodesy::WorldOrigin;

use crate::Micros;
use crate::time::rng::Stream;

/// The true state at one boundary, as the sensors see it.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Truth {
    pub time: Micros,
    pub position_ned_m: [f64; 3],
    pub velocity_ned_mps: [f64; 3],
    /// Body to NED, (w, x, y, z).
    pub attitude_q: [f64; 4],
    pub rates_frd_radps: [f64; 3],
    /// What an accelerometer at the centre of mass reads. The engine
    /// computes it only at boundaries where the IMU samples (NaN elsewhere;
    /// the delayed outputs never read it).
    pub specific_force_frd_mps2: [f64; 3],
}

/// Body vector of an NED vector for attitude `q` (body -> NED).
fn ned_to_body(q: &[f64; 4], v: [f64; 3]) -> [f64; 3] {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    // R^T v with R the body -> NED rotation.
    [
        (1.0 - 2.0 * (y * y + z * z)) * v[0]
            + 2.0 * (x * y + w * z) * v[1]
            + 2.0 * (x * z - w * y) * v[2],
        2.0 * (x * y - w * z) * v[0]
            + (1.0 - 2.0 * (x * x + z * z)) * v[1]
            + 2.0 * (y * z + w * x) * v[2],
        2.0 * (x * z + w * y) * v[0]
            + 2.0 * (y * z - w * x) * v[1]
            + (1.0 - 2.0 * (x * x + y * y)) * v[2],
    ]
}

/// A fixed-capacity history of truth snapshots for delayed outputs.
#[derive(Debug, Clone)]
pub struct History {
    buf: Vec<Truth>,
    next: usize,
    len: usize,
}

impl History {
    pub fn with_capacity(capacity: usize) -> Self {
        History {
            buf: vec![Truth::default(); capacity.max(1)],
            next: 0,
            len: 0,
        }
    }

    /// Records a snapshot (times must increase); the oldest is dropped when full.
    pub fn push(&mut self, t: Truth) {
        self.buf[self.next] = t;
        self.next = (self.next + 1) % self.buf.len();
        self.len = (self.len + 1).min(self.buf.len());
    }

    /// The newest snapshot taken at or before `time`, if still held.
    pub fn at_or_before(&self, time: Micros) -> Option<&Truth> {
        (0..self.len)
            .map(|k| &self.buf[(self.next + self.buf.len() - 1 - k) % self.buf.len()])
            .find(|s| s.time <= time)
    }
}

/// IMU noise: white noise and bias random walk per axis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ImuNoise {
    pub accel_noise_mps2: f64,
    pub gyro_noise_radps: f64,
    /// Bias random walk, per sqrt(second).
    pub accel_bias_walk_mps2_per_sqrt_s: f64,
    pub gyro_bias_walk_radps_per_sqrt_s: f64,
}

impl Default for ImuNoise {
    fn default() -> Self {
        ImuNoise {
            accel_noise_mps2: 0.02,
            gyro_noise_radps: 0.002,
            accel_bias_walk_mps2_per_sqrt_s: 0.001,
            gyro_bias_walk_radps_per_sqrt_s: 0.0001,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Imu {
    pub noise: ImuNoise,
    rng: Stream,
    accel_bias: [f64; 3],
    gyro_bias: [f64; 3],
    last: Option<Micros>,
    /// sqrt(dt) of the last interval (the cadence repeats it).
    sqrt_dt: (Micros, f64),
}

impl Imu {
    pub fn new(noise: ImuNoise, rng: Stream) -> Self {
        Imu {
            noise,
            rng,
            accel_bias: [0.0; 3],
            gyro_bias: [0.0; 3],
            last: None,
            sqrt_dt: (Micros::ZERO, 0.0),
        }
    }

    pub fn biases(&self) -> ([f64; 3], [f64; 3]) {
        (self.accel_bias, self.gyro_bias)
    }

    pub fn sample(&mut self, t: &Truth) -> lockstep_imu {
        if let Some(last) = self.last {
            let dt = t.time - last;
            if dt != self.sqrt_dt.0 {
                self.sqrt_dt = (dt, dt.as_secs_f64().sqrt());
            }
            let sq = self.sqrt_dt.1;
            for k in 0..3 {
                self.accel_bias[k] +=
                    self.noise.accel_bias_walk_mps2_per_sqrt_s * sq * self.rng.standard_normal();
                self.gyro_bias[k] +=
                    self.noise.gyro_bias_walk_radps_per_sqrt_s * sq * self.rng.standard_normal();
            }
        }
        self.last = Some(t.time);
        let mut out = lockstep_imu {
            timestamp_us: t.time.0,
            temperature_c: 25.0,
            ..Default::default()
        };
        for k in 0..3 {
            out.accel_mps2[k] = (t.specific_force_frd_mps2[k]
                + self.accel_bias[k]
                + self.noise.accel_noise_mps2 * self.rng.standard_normal())
                as f32;
            out.gyro_radps[k] = (t.rates_frd_radps[k]
                + self.gyro_bias[k]
                + self.noise.gyro_noise_radps * self.rng.standard_normal())
                as f32;
        }
        out
    }
}

/// Magnetometer: the Earth's field at the origin (NED, gauss) in body axes.
#[derive(Debug, Clone)]
pub struct Mag {
    pub field_ned_gauss: [f64; 3],
    pub noise_gauss: f64,
    rng: Stream,
}

impl Mag {
    pub fn new(field_ned_gauss: [f64; 3], noise_gauss: f64, rng: Stream) -> Self {
        Mag {
            field_ned_gauss,
            noise_gauss,
            rng,
        }
    }

    pub fn sample(&mut self, t: &Truth) -> lockstep_mag {
        let b = ned_to_body(&t.attitude_q, self.field_ned_gauss);
        let mut out = lockstep_mag {
            timestamp_us: t.time.0,
            ..Default::default()
        };
        for (o, bk) in out.field_gauss.iter_mut().zip(b) {
            *o = (bk + self.noise_gauss * self.rng.standard_normal()) as f32;
        }
        out
    }
}

/// Barometer: ISA pressure and temperature at the true altitude, with noise.
#[derive(Debug, Clone)]
pub struct Baro {
    pub origin_alt_m: f64,
    pub noise_pa: f64,
    rng: Stream,
}

impl Baro {
    pub fn new(origin_alt_m: f64, noise_pa: f64, rng: Stream) -> Self {
        Baro {
            origin_alt_m,
            noise_pa,
            rng,
        }
    }

    pub fn sample(&mut self, t: &Truth) -> lockstep_baro {
        let isa = Isa::at_altitude(self.origin_alt_m - t.position_ned_m[2]);
        lockstep_baro {
            timestamp_us: t.time.0,
            pressure_pa: (isa.pressure_pa + self.noise_pa * self.rng.standard_normal()) as f32,
            temperature_c: (isa.temperature_k - 273.15) as f32,
        }
    }
}

/// GPS noise and delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpsConfig {
    pub delay: Micros,
    pub horizontal_noise_m: f64,
    pub vertical_noise_m: f64,
    pub velocity_noise_mps: f64,
}

impl Default for GpsConfig {
    fn default() -> Self {
        GpsConfig {
            delay: Micros(100_000),
            horizontal_noise_m: 0.5,
            vertical_noise_m: 0.8,
            velocity_noise_mps: 0.05,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Gps {
    pub config: GpsConfig,
    origin: WorldOrigin,
    rng: Stream,
}

impl Gps {
    pub fn new(config: GpsConfig, origin: WorldOrigin, rng: Stream) -> Self {
        Gps {
            config,
            origin,
            rng,
        }
    }

    /// The fix for delivery at `now`, from the truth `delay` earlier (none
    /// before the history reaches back that far).
    pub fn sample(&mut self, now: Micros, history: &History) -> Option<lockstep_gps> {
        let when = Micros(now.0.checked_sub(self.config.delay.0)?);
        let t = *history.at_or_before(when)?;
        let c = self.config;
        let mut p = t.position_ned_m;
        p[0] += c.horizontal_noise_m * self.rng.standard_normal();
        p[1] += c.horizontal_noise_m * self.rng.standard_normal();
        p[2] += c.vertical_noise_m * self.rng.standard_normal();
        let g = self.origin.to_geodetic(p);
        let mut v = [0.0f32; 3];
        for (vk, tk) in v.iter_mut().zip(t.velocity_ned_mps) {
            *vk = (tk + c.velocity_noise_mps * self.rng.standard_normal()) as f32;
        }
        Some(lockstep_gps {
            timestamp_us: t.time.0,
            lat_deg: g.lat_deg,
            lon_deg: g.lon_deg,
            alt_m: g.alt_m as f32,
            vel_ned_mps: v,
            fix_type: LOCKSTEP_GPS_FIX_3D,
            satellites: 12,
            eph_m: c.horizontal_noise_m as f32,
            epv_m: c.vertical_noise_m as f32,
            speed_accuracy_mps: c.velocity_noise_mps as f32,
            reserved0: 0,
        })
    }
}

/// Estimator error model: white noise plus an AR(1) bias per group, and a delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatorConfig {
    pub delay: Micros,
    pub position_noise_m: f64,
    pub velocity_noise_mps: f64,
    pub attitude_noise_rad: f64,
    pub rates_noise_radps: f64,
    /// Stationary standard deviation and correlation time of the AR(1) biases.
    pub position_bias_m: f64,
    pub velocity_bias_mps: f64,
    pub attitude_bias_rad: f64,
    pub rates_bias_radps: f64,
    pub bias_tau_s: f64,
}

impl EstimatorConfig {
    /// The truth, undelayed.
    pub fn perfect() -> Self {
        EstimatorConfig {
            delay: Micros(0),
            position_noise_m: 0.0,
            velocity_noise_mps: 0.0,
            attitude_noise_rad: 0.0,
            rates_noise_radps: 0.0,
            position_bias_m: 0.0,
            velocity_bias_mps: 0.0,
            attitude_bias_rad: 0.0,
            rates_bias_radps: 0.0,
            bias_tau_s: 1.0,
        }
    }
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        EstimatorConfig {
            delay: Micros(20_000),
            position_noise_m: 0.02,
            velocity_noise_mps: 0.02,
            attitude_noise_rad: 0.002,
            rates_noise_radps: 0.003,
            position_bias_m: 0.1,
            velocity_bias_mps: 0.03,
            attitude_bias_rad: 0.005,
            rates_bias_radps: 0.001,
            bias_tau_s: 10.0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Estimator {
    pub config: EstimatorConfig,
    rng: Stream,
    /// Position, velocity, attitude (small rotation vector), rates.
    bias: [[f64; 3]; 4],
    last: Option<Micros>,
    /// The AR(1) coefficients `(a, sqrt(1 - a^2))` of the last interval and
    /// correlation time (the cadence repeats them).
    ar1: (Micros, f64, f64, f64),
}

impl Estimator {
    pub fn new(config: EstimatorConfig, rng: Stream) -> Self {
        Estimator {
            config,
            rng,
            bias: [[0.0; 3]; 4],
            last: None,
            ar1: (Micros::ZERO, f64::NAN, 0.0, 0.0),
        }
    }

    /// The estimate for delivery at `now`, of the truth `delay` earlier,
    /// timestamped with that truth's time.
    pub fn sample(&mut self, now: Micros, history: &History) -> Option<lockstep_estimate> {
        let c = self.config;
        let sd = [
            c.position_bias_m,
            c.velocity_bias_mps,
            c.attitude_bias_rad,
            c.rates_bias_radps,
        ];
        if let Some(last) = self.last {
            let dt = now - last;
            if (dt, c.bias_tau_s) != (self.ar1.0, self.ar1.1) {
                let a = libm::exp(-dt.as_secs_f64() / c.bias_tau_s);
                self.ar1 = (dt, c.bias_tau_s, a, libm::sqrt(1.0 - a * a));
            }
            let (a, s) = (self.ar1.2, self.ar1.3);
            for (g, b) in self.bias.iter_mut().enumerate() {
                for v in b.iter_mut() {
                    *v = a * *v + sd[g] * s * self.rng.standard_normal();
                }
            }
        } else {
            for (g, b) in self.bias.iter_mut().enumerate() {
                for v in b.iter_mut() {
                    *v = sd[g] * self.rng.standard_normal();
                }
            }
        }
        self.last = Some(now);
        let when = Micros(now.0.checked_sub(c.delay.0)?);
        let t = *history.at_or_before(when)?;
        let noise = [
            c.position_noise_m,
            c.velocity_noise_mps,
            c.attitude_noise_rad,
            c.rates_noise_radps,
        ];
        let mut e = [[0.0f64; 3]; 4];
        for (g, eg) in e.iter_mut().enumerate() {
            for (k, v) in eg.iter_mut().enumerate() {
                *v = self.bias[g][k] + noise[g] * self.rng.standard_normal();
            }
        }
        // Attitude error: a small body-frame rotation applied to the truth.
        let r = e[2];
        let dq = [1.0, 0.5 * r[0], 0.5 * r[1], 0.5 * r[2]];
        let q = t.attitude_q;
        let mut qe = [
            q[0] * dq[0] - q[1] * dq[1] - q[2] * dq[2] - q[3] * dq[3],
            q[0] * dq[1] + q[1] * dq[0] + q[2] * dq[3] - q[3] * dq[2],
            q[0] * dq[2] - q[1] * dq[3] + q[2] * dq[0] + q[3] * dq[1],
            q[0] * dq[3] + q[1] * dq[2] - q[2] * dq[1] + q[3] * dq[0],
        ];
        let n = (qe.iter().map(|v| v * v).sum::<f64>()).sqrt();
        for v in &mut qe {
            *v /= n;
        }
        let f = |a: [f64; 3], b: [f64; 3]| {
            [
                (a[0] + b[0]) as f32,
                (a[1] + b[1]) as f32,
                (a[2] + b[2]) as f32,
            ]
        };
        Some(lockstep_estimate {
            timestamp_us: t.time.0,
            position_ned_m: f(t.position_ned_m, e[0]),
            velocity_ned_mps: f(t.velocity_ned_mps, e[1]),
            attitude_q: qe.map(|v| v as f32),
            rates_frd_radps: f(t.rates_frd_radps, e[3]),
            reserved0: 0,
        })
    }
}

// The state a vehicle carries to another process (see crate::persist):
// every field, the configurations included (a noise-scaling event changes
// them while the run steps).
use crate::persist::persist_fields;
persist_fields!(Truth {
    time,
    position_ned_m,
    velocity_ned_mps,
    attitude_q,
    rates_frd_radps,
    specific_force_frd_mps2
});
persist_fields!(History { buf, next, len });
persist_fields!(ImuNoise {
    accel_noise_mps2,
    gyro_noise_radps,
    accel_bias_walk_mps2_per_sqrt_s,
    gyro_bias_walk_radps_per_sqrt_s
});
persist_fields!(Imu {
    noise,
    rng,
    accel_bias,
    gyro_bias,
    last,
    sqrt_dt
});
persist_fields!(Mag {
    field_ned_gauss,
    noise_gauss,
    rng
});
persist_fields!(Baro {
    origin_alt_m,
    noise_pa,
    rng
});
persist_fields!(GpsConfig {
    delay,
    horizontal_noise_m,
    vertical_noise_m,
    velocity_noise_mps
});
persist_fields!(Gps { config, rng });
persist_fields!(EstimatorConfig {
    delay,
    position_noise_m,
    velocity_noise_mps,
    attitude_noise_rad,
    rates_noise_radps,
    position_bias_m,
    velocity_bias_mps,
    attitude_bias_rad,
    rates_bias_radps,
    bias_tau_s
});
persist_fields!(Estimator {
    config,
    rng,
    bias,
    last,
    ar1
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::rng::RngStreams;
    use lockstep_plant::env::geodesy::Geodetic;

    fn level(time_us: u64, z: f64) -> Truth {
        Truth {
            time: Micros(time_us),
            position_ned_m: [time_us as f64 * 1e-6, 0.0, z],
            velocity_ned_mps: [1.0, 0.0, 0.0],
            attitude_q: [1.0, 0.0, 0.0, 0.0],
            rates_frd_radps: [0.0, 0.0, 0.1],
            specific_force_frd_mps2: [0.0, 0.0, -9.80665],
        }
    }

    #[test]
    fn imu_noise_and_bias_walk_have_their_statistics() {
        let noise = ImuNoise {
            accel_bias_walk_mps2_per_sqrt_s: 0.0,
            gyro_bias_walk_radps_per_sqrt_s: 0.0,
            ..ImuNoise::default()
        };
        let mut imu = Imu::new(noise, RngStreams::new(3).stream("sensor.imu"));
        let n = 50_000;
        let mut sq = 0.0;
        for k in 0..n {
            let s = imu.sample(&level(k * 1000, -5.0));
            sq += (f64::from(s.accel_mps2[2]) + 9.80665).powi(2);
            assert_eq!(s.timestamp_us, k * 1000);
        }
        assert!(((sq / n as f64).sqrt() / 0.02 - 1.0).abs() < 0.03);
        // Bias random walk: variance grows as walk^2 t.
        let walk = ImuNoise {
            accel_noise_mps2: 0.0,
            gyro_noise_radps: 0.0,
            ..ImuNoise::default()
        };
        let mut var = 0.0;
        let runs = 2000;
        for r in 0..runs {
            let mut imu = Imu::new(walk, RngStreams::new(r).stream("sensor.imu"));
            for k in 0..=100 {
                imu.sample(&level(k * 10_000, -5.0)); // 1 s in 10 ms steps
            }
            var += imu.biases().1[0].powi(2);
        }
        let expect = 0.0001f64.powi(2) * 1.0;
        assert!(
            (var / runs as f64 / expect - 1.0).abs() < 0.1,
            "{}",
            var / runs as f64
        );
    }

    #[test]
    fn mag_and_baro_follow_attitude_and_altitude() {
        let mut mag = Mag::new(
            [0.2, 0.0, 0.4],
            0.0,
            RngStreams::new(1).stream("sensor.mag"),
        );
        let mut t = level(0, -5.0);
        // Yaw 90 degrees right: north appears on the body's left (-y).
        let h = std::f64::consts::FRAC_PI_4;
        t.attitude_q = [h.cos(), 0.0, 0.0, h.sin()];
        let m = mag.sample(&t);
        assert!(
            (f64::from(m.field_gauss[1]) + 0.2).abs() < 1e-6
                && f64::from(m.field_gauss[0]).abs() < 1e-6,
            "{m:?}"
        );
        assert!((f64::from(m.field_gauss[2]) - 0.4).abs() < 1e-6);
        let mut baro = Baro::new(488.0, 0.0, RngStreams::new(1).stream("sensor.baro"));
        let low = baro.sample(&level(0, 0.0)).pressure_pa;
        let high = baro.sample(&level(0, -100.0)).pressure_pa;
        assert!((f64::from(low) - Isa::at_altitude(488.0).pressure_pa).abs() < 0.01);
        assert!(
            low - high > 1100.0 && low - high < 1250.0,
            "about 12 Pa per metre: {}",
            low - high
        );
    }

    #[test]
    fn delayed_outputs_carry_the_true_sample_time() {
        let origin = WorldOrigin::new(Geodetic {
            lat_deg: 47.397742,
            lon_deg: 8.545594,
            alt_m: 488.0,
        });
        let mut hist = History::with_capacity(200);
        for k in 0..=150u64 {
            hist.push(level(k * 1000, -10.0));
        }
        let cfg = GpsConfig {
            delay: Micros(100_000),
            horizontal_noise_m: 0.0,
            vertical_noise_m: 0.0,
            velocity_noise_mps: 0.0,
        };
        let mut gps = Gps::new(cfg, origin, RngStreams::new(1).stream("sensor.gps"));
        let fix = gps.sample(Micros(150_000), &hist).unwrap();
        assert_eq!(
            fix.timestamp_us, 50_000,
            "the fix is of the truth 100 ms earlier"
        );
        let back = origin.to_ned(Geodetic {
            lat_deg: fix.lat_deg,
            lon_deg: fix.lon_deg,
            alt_m: f64::from(fix.alt_m),
        });
        assert!(
            (back[0] - 0.05).abs() < 1e-3 && (back[2] + 10.0).abs() < 1e-3,
            "{back:?}"
        );
        assert!(
            gps.sample(Micros(50_000), &hist).is_none(),
            "no truth that old yet"
        );
        let mut est = Estimator::new(
            EstimatorConfig {
                delay: Micros(20_000),
                ..EstimatorConfig::perfect()
            },
            RngStreams::new(1).stream("estimator"),
        );
        let e = est.sample(Micros(150_000), &hist).unwrap();
        assert_eq!(e.timestamp_us, 130_000);
        assert_eq!(e.position_ned_m, [0.13, 0.0, -10.0]);
        assert_eq!(e.attitude_q, [1.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn estimator_biases_are_ar1_with_the_stationary_spread() {
        let cfg = EstimatorConfig {
            position_noise_m: 0.0,
            delay: Micros(0),
            ..EstimatorConfig::default()
        };
        let mut hist = History::with_capacity(4);
        let mut sq = 0.0;
        let runs = 3000;
        for r in 0..runs {
            let mut est = Estimator::new(cfg, RngStreams::new(r).stream("estimator"));
            hist.push(level(r * 1000, 0.0));
            let e = est.sample(Micros(r * 1000), &hist).unwrap();
            sq += (f64::from(e.position_ned_m[1])).powi(2);
        }
        let sd = (sq / runs as f64).sqrt();
        assert!((sd / cfg.position_bias_m - 1.0).abs() < 0.06, "{sd}");
    }
}
