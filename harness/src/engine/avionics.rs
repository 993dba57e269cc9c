//! A vehicle's avionics: the sensor suite and the estimator (with their
//! faults) sampling the truth they are handed, and the autopilot bridge that
//! receives their frame, with exact sample timestamps, and commands the
//! motors. Whoever owns the plant (the harness, or a host) supplies the truth
//! at each boundary; nothing here knows which.

use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot};

use crate::Micros;
use crate::environment::sensors::{Baro, Estimator, Gps, History, Imu, Mag, Truth};
use crate::inputs::scenario::{SensorId, SetpointKind};

/// What one sensor fault does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct SensorFault {
    pub(crate) dropout: bool,
    pub(crate) freeze: bool,
    pub(crate) bias: f64,
}

/// Which sensors sample at a boundary.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SensorsDue {
    pub(crate) imu: bool,
    pub(crate) mag: bool,
    pub(crate) baro: bool,
    pub(crate) gps: bool,
    pub(crate) estimator: bool,
}

#[derive(Debug)]
pub(crate) struct Avionics {
    pub(crate) imu: Imu,
    pub(crate) mag: Mag,
    pub(crate) baro: Baro,
    pub(crate) gps: Gps,
    pub(crate) est: Estimator,
    pub(crate) history: History,
    /// The sensor faults in force (imu, mag, baro, gps, estimator).
    pub(crate) sensor_faults: [SensorFault; 5],
    pub(crate) ap: Autopilot,
    pub(crate) frame: lockstep_sensor_frame,
    pub(crate) act: lockstep_actuator_frame,
    pending: lockstep_commands,
    pending_fresh: bool,
}

impl Avionics {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        imu: Imu,
        mag: Mag,
        baro: Baro,
        gps: Gps,
        est: Estimator,
        history: History,
        ap: Autopilot,
    ) -> Avionics {
        Avionics {
            imu,
            mag,
            baro,
            gps,
            est,
            history,
            sensor_faults: [SensorFault::default(); 5],
            ap,
            frame: lockstep_sensor_frame::default(),
            act: lockstep_actuator_frame::default(),
            pending: lockstep_commands::default(),
            pending_fresh: false,
        }
    }

    /// Keeps `truth` for the delayed sensors and samples the due ones into
    /// the frame (a dropped-out sensor is not fresh; a frozen one repeats its
    /// last sample with a new timestamp).
    pub(crate) fn sample(&mut self, due: SensorsDue, truth: Truth) {
        let t = truth.time;
        self.history.push(truth);
        let f = self.sensor_faults;
        let mut fresh = 0u32;
        let ok = |k: usize| !f[k].dropout;
        if due.imu && ok(0) {
            if !f[0].freeze {
                self.frame.imu = self.imu.sample(&truth);
                for a in &mut self.frame.imu.accel_mps2 {
                    *a += f[0].bias as f32;
                }
            }
            self.frame.imu.timestamp_us = t.0;
            fresh |= LOCKSTEP_FRESH_IMU;
        }
        if due.mag && ok(1) {
            if !f[1].freeze {
                self.frame.mag = self.mag.sample(&truth);
                for b in &mut self.frame.mag.field_gauss {
                    *b += f[1].bias as f32;
                }
            }
            self.frame.mag.timestamp_us = t.0;
            fresh |= LOCKSTEP_FRESH_MAG;
        }
        if due.baro && ok(2) {
            if !f[2].freeze {
                self.frame.baro = self.baro.sample(&truth);
                self.frame.baro.pressure_pa += f[2].bias as f32;
            }
            self.frame.baro.timestamp_us = t.0;
            fresh |= LOCKSTEP_FRESH_BARO;
        }
        if due.gps
            && ok(3)
            && !f[3].freeze
            && let Some(g) = self.gps.sample(t, &self.history)
        {
            self.frame.gps = g;
            self.frame.gps.alt_m += f[3].bias as f32;
            fresh |= LOCKSTEP_FRESH_GPS;
        }
        if due.estimator
            && ok(4)
            && !f[4].freeze
            && let Some(e) = self.est.sample(t, &self.history)
        {
            self.frame.estimate = e;
            self.frame.estimate.position_ned_m[0] += f[4].bias as f32;
            fresh |= LOCKSTEP_FRESH_ESTIMATE;
        }
        self.frame.fresh_mask |= fresh;
    }

    /// A fresh battery reading for the next autopilot step.
    pub(crate) fn set_battery(&mut self, battery: lockstep_battery) {
        self.frame.battery = battery;
        self.frame.fresh_mask |= LOCKSTEP_FRESH_BATTERY;
    }

    /// Queues a command for the next autopilot step (0 leaves a field as it is).
    pub(crate) fn command(&mut self, arm: u32, mode: u32, start: u32) {
        if arm != 0 {
            self.pending.arm_request = arm;
        }
        if mode != 0 {
            self.pending.mode_request = mode;
        }
        if start != 0 {
            self.pending.mission_start = start;
        }
        self.pending_fresh = true;
    }

    /// Queues a takeoff to `height_m` above home (`None`: the autopilot's
    /// default) for the next autopilot step.
    pub(crate) fn takeoff(&mut self, height_m: Option<f64>) {
        self.command(0, LOCKSTEP_MODE_TAKEOFF, 0);
        // ABI 3 had a reserved 0 there (the scenario's heights are refused
        // at build for such a library, a station's by the station).
        if self.ap.abi_version() >= 4 {
            self.pending.takeoff_alt_m = height_m.map_or(0.0, |h| h as f32);
        }
    }

    /// Queues a setpoint for the next autopilot step.
    pub(crate) fn setpoint(
        &mut self,
        kind: SetpointKind,
        vector: [f64; 3],
        yaw_rad: Option<f64>,
        thrust: f64,
    ) {
        let mut mask = match kind {
            SetpointKind::Position => LOCKSTEP_SETPOINT_POSITION,
            SetpointKind::Velocity => LOCKSTEP_SETPOINT_VELOCITY,
            SetpointKind::Rates => LOCKSTEP_SETPOINT_RATES,
        };
        if yaw_rad.is_some() {
            mask |= LOCKSTEP_SETPOINT_YAW;
        }
        self.pending.setpoint_mask = mask;
        self.pending.setpoint = vector.map(|v| v as f32);
        self.pending.setpoint_yaw_rad = yaw_rad.unwrap_or(0.0) as f32;
        self.pending.setpoint_thrust = thrust as f32;
        self.pending_fresh = true;
    }

    /// The commands the next autopilot step will carry (all zero if none).
    pub(crate) fn issued(&self) -> lockstep_commands {
        if self.pending_fresh {
            self.pending
        } else {
            lockstep_commands::default()
        }
    }

    /// Steps the autopilot at `t` with the frame sampled so far, then starts
    /// a new frame.
    pub(crate) fn step_autopilot(&mut self, t: Micros, landed: bool) -> Result<(), AbiError> {
        self.frame.time_us = t.0;
        self.frame.landed = u32::from(landed);
        if self.pending_fresh {
            self.pending.timestamp_us = t.0;
            self.frame.commands = self.pending;
            self.frame.fresh_mask |= LOCKSTEP_FRESH_COMMANDS;
        }
        self.ap.step(t.0, &self.frame, &mut self.act)?;
        self.frame.fresh_mask = 0;
        self.pending = lockstep_commands::default();
        self.pending_fresh = false;
        Ok(())
    }

    /// Multiplies a sensor's noise by `k`.
    pub(crate) fn scale_noise(&mut self, s: SensorId, k: f64) {
        match s {
            SensorId::Imu => {
                self.imu.noise.accel_noise_mps2 *= k;
                self.imu.noise.gyro_noise_radps *= k;
            }
            SensorId::Mag => self.mag.noise_gauss *= k,
            SensorId::Baro => self.baro.noise_pa *= k,
            SensorId::Gps => {
                self.gps.config.horizontal_noise_m *= k;
                self.gps.config.vertical_noise_m *= k;
                self.gps.config.velocity_noise_mps *= k;
            }
            SensorId::Estimator => {
                let c = &mut self.est.config;
                c.position_noise_m *= k;
                c.velocity_noise_mps *= k;
                c.attitude_noise_rad *= k;
                c.rates_noise_radps *= k;
            }
        }
    }
}

// The avionics' running state (see crate::persist); the autopilot's own
// state moves through its snapshot functions (see Engine::snapshot).
crate::persist::persist_fields!(SensorFault {
    dropout,
    freeze,
    bias
});

crate::persist::persist_fields!(Avionics {
    imu,
    mag,
    baro,
    gps,
    est,
    history,
    sensor_faults,
    frame,
    act,
    pending,
    pending_fresh
});
