//! The logging stage: one row per log boundary, and the log's sidecar
//! completed when the run ends.

use std::path::{Path, PathBuf};

use lockstep_plant::Multirotor;

use super::avionics::SensorFault;
use super::{Engine, EngineError};
use crate::Micros;
use crate::inputs::scenario::Scenario;
use crate::io::log::fault_bits;
use crate::io::log::{FlightLog, LogRow};
use crate::io::log_meta::LogMeta;

impl Engine {
    /// Writes a row where the log is due (where the sensors stage has
    /// computed the plant's outputs).
    pub(super) fn stage_log(&mut self, t: Micros, log_due: bool) -> Result<(), EngineError> {
        if !log_due || !self.outputs.wants_rows() {
            return Ok(());
        }
        let v = &self.vehicle;
        let (plant, x, inputs) = (&v.physics.plant, &v.physics.x, &v.physics.inputs);
        let r = &mut self.outputs.row;
        let o = &v.outputs;
        for i in 0..plant.rotors.len() {
            r.rotor_speed[i] = o.rotors[i].speed_radps;
            r.rotor_thrust[i] = o.rotors[i].thrust_n;
        }
        for j in 0..plant.batteries.len() {
            let b = o.batteries[j];
            r.batteries[j] = [b.voltage_v, b.current_a, b.soc];
        }
        r.air_density = o.air_density_kgpm3;
        r.bus = [o.bus_voltage_v, o.bus_current_a];
        r.time_us = t.0;
        r.truth.copy_from_slice(&x[..13]);
        let g = plant.origin.to_geodetic([x[0], x[1], x[2]]);
        r.geodetic = [g.lat_deg, g.lon_deg, g.alt_m];
        let e = &v.avionics.frame.estimate;
        r.estimate[..3].copy_from_slice(&e.position_ned_m);
        r.estimate[3..6].copy_from_slice(&e.velocity_ned_mps);
        r.estimate[6..10].copy_from_slice(&e.attitude_q);
        r.estimate[10..13].copy_from_slice(&e.rates_frd_radps);
        let act = &v.avionics.act;
        let s = &act.setpoints;
        r.setpoints[..3].copy_from_slice(&s.position_ned_m);
        r.setpoints[3..6].copy_from_slice(&s.velocity_ned_mps);
        r.setpoints[6..9].copy_from_slice(&s.accel_ned_mps2);
        r.setpoints[9] = s.yaw_rad;
        r.setpoints[10] = s.thrust_n;
        let n = plant.rotors.len();
        r.motors.copy_from_slice(&act.motors[..n]);
        r.wind = self.world.wind_now;
        r.mode = act.mode;
        r.armed = act.armed;
        r.mission_current = act.mission_current;
        r.mission_finished = act.mission_finished;
        let mut faults = 0u64;
        for i in 0..n {
            if !inputs.motor_enabled[i] {
                faults |= 1 << (fault_bits::MOTOR_FAILED + i as u32);
            }
            if inputs.thrust_scale[i] != 1.0 {
                faults |= 1 << fault_bits::THRUST_LOSS;
            }
        }
        for j in 0..plant.batteries.len() {
            if !inputs.battery_connected[j] {
                faults |= 1 << (fault_bits::BATTERY + j as u32);
            }
        }
        for (k, f) in v.avionics.sensor_faults.iter().enumerate() {
            if *f != SensorFault::default() {
                faults |= 1 << (fault_bits::SENSOR + k as u32);
            }
        }
        r.faults = faults;
        self.outputs.write_row()
    }

    /// Keeps every log row in memory from now on (for [`Engine::take_rows`]),
    /// whether or not the engine writes a log itself: a distributed
    /// secondary sends its vehicles' rows to the primary, which writes them.
    pub fn capture_rows(&mut self) {
        self.outputs.capture_rows();
    }

    /// The rows captured since the last call, in time order.
    pub fn take_rows(&mut self) -> Vec<LogRow> {
        self.outputs.take_rows()
    }

    /// Holds the log's rows back from now on: kept in memory, not
    /// written, until [`Engine::commit_rows`] writes them or
    /// [`Engine::drop_rows`] drops them (a stretch a fleet may redo from a
    /// snapshot). Nothing to hold without a log, or while rows are
    /// captured for someone else ([`Engine::capture_rows`]). Only the CSV
    /// log's rows are held: a ULog or a recording goes on being written
    /// (a fleet has neither).
    pub fn hold_rows(&mut self) {
        self.outputs.hold_rows();
    }

    /// Writes the rows held back, and writes on from now on.
    pub fn commit_rows(&mut self) -> Result<(), EngineError> {
        self.outputs.commit_rows()
    }

    /// Drops the rows held back (the engine was restored to where they
    /// began), and writes on from now on.
    pub fn drop_rows(&mut self) {
        self.outputs.drop_rows();
    }

    /// An empty row shaped for this vehicle (its rotors and batteries).
    pub fn row_shape(&self) -> LogRow {
        shaped_row(&self.vehicle.physics.plant)
    }
}

/// An empty log row shaped for `plant`.
pub fn shaped_row(plant: &Multirotor) -> LogRow {
    let nr = plant.rotors.len();
    let nb = plant.batteries.len();
    LogRow {
        motors: vec![0.0; nr],
        rotor_speed: vec![0.0; nr],
        rotor_thrust: vec![0.0; nr],
        batteries: vec![[0.0; 3]; nb],
        ..LogRow::default()
    }
}

/// The log a vehicle of `scenario` writes at `path` and its sidecar, as the
/// engine creates them (for a writer of rows that come from elsewhere).
pub fn open_log(
    scenario: &Scenario,
    plant: &Multirotor,
    autopilot: &Path,
    path: &Path,
) -> std::io::Result<(FlightLog, (PathBuf, LogMeta))> {
    let meta = LogMeta::new(&scenario.file, plant, scenario.seed, autopilot);
    let meta = LogMeta {
        mission: scenario.mission.as_ref().map(|m| m.display().to_string()),
        ..meta
    };
    let log = FlightLog::create(path, &shaped_row(plant))?;
    meta.write(path)?;
    Ok((log, (path.to_path_buf(), meta)))
}

/// Finishes a log opened by [`open_log`]: flushed, and its sidecar
/// completed with its rows, last time and digest.
pub fn finish_log(
    log: &mut FlightLog,
    (path, meta): &mut (PathBuf, LogMeta),
) -> std::io::Result<()> {
    log.finish()?;
    meta.rows = Some(log.rows());
    meta.last_time_us = log.last_time_us();
    meta.digest = log.digest();
    meta.complete = true;
    meta.write(path)
}
