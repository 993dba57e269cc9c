//! The logging stage: one row per log boundary, and the log's sidecar
//! completed when the run ends.

use super::*;

impl Engine {
    /// Rewrites the log's sidecar with its rows, last time and digest.
    pub(super) fn finish_log_meta(&mut self) -> std::io::Result<()> {
        let (Some((path, meta)), Some(log)) = (&mut self.log_meta, &self.log) else {
            return Ok(());
        };
        meta.rows = Some(log.rows());
        meta.last_time_us = log.last_time_us();
        meta.digest = log.digest();
        meta.complete = true;
        meta.write(path)
    }

    pub(super) fn stage_log(&mut self, t: Micros, due: Due) -> Result<(), EngineError> {
        let (Some(log), Some(c)) = (&mut self.log, self.cad.log) else {
            return Ok(());
        };
        if !due.contains(c) {
            return Ok(());
        }
        let r = &mut self.row;
        r.time_us = t.0;
        r.truth.copy_from_slice(&self.x[..13]);
        let g = self
            .plant
            .origin
            .to_geodetic([self.x[0], self.x[1], self.x[2]]);
        r.geodetic = [g.lat_deg, g.lon_deg, g.alt_m];
        let e = &self.frame.estimate;
        r.estimate[..3].copy_from_slice(&e.position_ned_m);
        r.estimate[3..6].copy_from_slice(&e.velocity_ned_mps);
        r.estimate[6..10].copy_from_slice(&e.attitude_q);
        r.estimate[10..13].copy_from_slice(&e.rates_frd_radps);
        let s = &self.act.setpoints;
        r.setpoints[..3].copy_from_slice(&s.position_ned_m);
        r.setpoints[3..6].copy_from_slice(&s.velocity_ned_mps);
        r.setpoints[6..9].copy_from_slice(&s.accel_ned_mps2);
        r.setpoints[9] = s.yaw_rad;
        r.setpoints[10] = s.thrust_n;
        let n = self.plant.rotors.len();
        r.motors.copy_from_slice(&self.act.motors[..n]);
        r.wind = self.wind_now;
        r.mode = self.act.mode;
        r.armed = self.act.armed;
        r.mission_current = self.act.mission_current;
        r.mission_finished = self.act.mission_finished;
        let mut faults = 0u64;
        for i in 0..n {
            if !self.inputs.motor_enabled[i] {
                faults |= 1 << (fault_bits::MOTOR_FAILED + i as u32);
            }
            if self.inputs.thrust_scale[i] != 1.0 {
                faults |= 1 << fault_bits::THRUST_LOSS;
            }
        }
        for j in 0..self.plant.batteries.len() {
            if !self.inputs.battery_connected[j] {
                faults |= 1 << (fault_bits::BATTERY + j as u32);
            }
        }
        for (k, f) in self.sensor_faults.iter().enumerate() {
            if *f != SensorFault::default() {
                faults |= 1 << (fault_bits::SENSOR + k as u32);
            }
        }
        r.faults = faults;
        log.write(r)?;
        Ok(())
    }
}
