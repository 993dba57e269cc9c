//! The log of a replay (`lockstep replay REC --log PATH`): the columns of a
//! `fly` log, from what a recording holds. The truth (state, latitude,
//! longitude, altitude), the motor commands, the wind and the plant's
//! outputs are there; the autopilot's columns (estimate, setpoints) are
//! NaN, its mode 0 (none), `armed` 0 and `mission_current` -1, because a
//! replay runs no autopilot. The plant's algebraic outputs (currents, bus,
//! thrust) are evaluated with the inputs recorded at that boundary.

use std::path::Path;

use lockstep_plant::{Multirotor, PlantInputs};

use crate::io::log::fault_bits;
use crate::io::log::{FlightLog, LogRow};
use crate::io::log_meta::LogMeta;

/// A log being written from a replay's visits.
#[derive(Debug)]
pub struct ReplayLog {
    log: FlightLog,
    meta: LogMeta,
    path: std::path::PathBuf,
    row: LogRow,
    period_us: u64,
}

impl ReplayLog {
    /// Creates the log at `path` (and its sidecar) for `plant`, with a row
    /// at every boundary whose time is a multiple of `period_us`.
    pub fn create(
        path: &Path,
        recording: &Path,
        plant: &Multirotor,
        period_us: u64,
    ) -> std::io::Result<ReplayLog> {
        let (nr, nb) = (plant.rotors.len(), plant.batteries.len());
        let row = LogRow {
            motors: vec![0.0; nr],
            rotor_speed: vec![0.0; nr],
            rotor_thrust: vec![0.0; nr],
            batteries: vec![[0.0; 3]; nb],
            ..LogRow::default()
        };
        let log = FlightLog::create(path, &row)?;
        let mut meta = LogMeta::new(recording, plant, 0, Path::new("none (a replay)"));
        meta.seed = None;
        meta.write(path)?;
        Ok(ReplayLog {
            log,
            meta,
            path: path.to_path_buf(),
            row,
            period_us: period_us.max(1),
        })
    }

    /// The replay's state `x` at `t` with the inputs `u` recorded there.
    pub fn visit(
        &mut self,
        t: u64,
        x: &[f64],
        u: &PlantInputs,
        plant: &Multirotor,
    ) -> std::io::Result<()> {
        if !t.is_multiple_of(self.period_us) {
            return Ok(());
        }
        let r = &mut self.row;
        r.time_us = t;
        r.truth.copy_from_slice(&x[..13]);
        let g = plant.origin.to_geodetic([x[0], x[1], x[2]]);
        r.geodetic = [g.lat_deg, g.lon_deg, g.alt_m];
        r.estimate = [f32::NAN; 13];
        r.setpoints = [f32::NAN; 11];
        let o = plant.outputs(x, u);
        let mut faults = 0u64;
        for i in 0..r.motors.len() {
            r.motors[i] = u.motor_cmd[i] as f32;
            r.rotor_speed[i] = o.rotors[i].speed_radps;
            r.rotor_thrust[i] = o.rotors[i].thrust_n;
            if !u.motor_enabled[i] {
                faults |= 1 << (fault_bits::MOTOR_FAILED + i as u32);
            }
            if u.thrust_scale[i] != 1.0 {
                faults |= 1 << fault_bits::THRUST_LOSS;
            }
        }
        for (j, b) in r.batteries.iter_mut().enumerate() {
            let ob = o.batteries[j];
            *b = [ob.voltage_v, ob.current_a, ob.soc];
            if !u.battery_connected[j] {
                faults |= 1 << (fault_bits::BATTERY + j as u32);
            }
        }
        r.wind = u.wind_ned_mps;
        r.air_density = o.air_density_kgpm3;
        r.bus = [o.bus_voltage_v, o.bus_current_a];
        r.mode = 0;
        r.armed = 0;
        r.mission_current = -1;
        r.mission_finished = 0;
        r.faults = faults;
        self.log.write(r)
    }

    /// Finishes the log and its sidecar; returns the rows written.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.log.finish()?;
        self.meta.rows = Some(self.log.rows());
        self.meta.last_time_us = self.log.last_time_us();
        self.meta.digest = self.log.digest();
        self.meta.complete = true;
        self.meta.write(&self.path)?;
        Ok(self.log.rows())
    }
}
