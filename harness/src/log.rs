//! The flight log: CSV (csv crate) behind a buffered writer, one row per log
//! boundary, with a versioned first line:
//!
//! ```text
//! # lockstep-log 1 spec=iris seed=7 rotors=4 batteries=1
//! time_us,x_m,y_m,z_m,...
//! ```
//!
//! (Read it with a CSV reader that skips `#` lines.) Numbers are written in
//! Rust's shortest round-trip form, so a logged value parses back to the same
//! bits. Rows are formatted into reused buffers: logging allocates nothing
//! per row once warm.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The version in the log's first line; bumped on any column change.
pub const LOG_SCHEMA_VERSION: u32 = 1;

/// One row's values, filled by the engine.
#[derive(Debug, Clone, Default)]
pub struct LogRow {
    pub time_us: u64,
    pub truth: [f64; 13],
    pub estimate: [f32; 13],
    pub setpoints: [f32; 11],
    pub motors: Vec<f32>,
    pub rotor_speed: Vec<f64>,
    pub rotor_thrust: Vec<f64>,
    pub wind: [f64; 3],
    pub air_density: f64,
    pub bus: [f64; 2],
    /// Per battery: voltage, current, SOC.
    pub batteries: Vec<[f64; 3]>,
    pub mode: u32,
    pub armed: u32,
    pub mission_current: i32,
    pub mission_finished: u32,
    /// Active faults as a bit mask (see the engine's fault bits).
    pub faults: u64,
}

/// Column names for `rotors` rotors and `batteries` batteries.
pub fn header(rotors: usize, batteries: usize) -> Vec<String> {
    let mut h: Vec<String> = [
        "time_us", "x_m", "y_m", "z_m", "vx_mps", "vy_mps", "vz_mps", "qw", "qx", "qy", "qz",
        "p_radps", "q_radps", "r_radps",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for s in [
        "x_m", "y_m", "z_m", "vx_mps", "vy_mps", "vz_mps", "qw", "qx", "qy", "qz", "p_radps",
        "q_radps", "r_radps",
    ] {
        h.push(format!("est_{s}"));
    }
    for s in [
        "x_m", "y_m", "z_m", "vx_mps", "vy_mps", "vz_mps", "ax_mps2", "ay_mps2", "az_mps2",
        "yaw_rad", "thrust_n",
    ] {
        h.push(format!("sp_{s}"));
    }
    for i in 0..rotors {
        h.push(format!("motor{i}"));
    }
    for i in 0..rotors {
        h.push(format!("rotor{i}_radps"));
    }
    for i in 0..rotors {
        h.push(format!("rotor{i}_thrust_n"));
    }
    for s in [
        "wind_n_mps",
        "wind_e_mps",
        "wind_d_mps",
        "air_density_kgpm3",
        "bus_v",
        "bus_a",
    ] {
        h.push(s.to_string());
    }
    for j in 0..batteries {
        for s in ["v", "a", "soc"] {
            h.push(format!("battery{j}_{s}"));
        }
    }
    for s in [
        "mode",
        "armed",
        "mission_current",
        "mission_finished",
        "faults",
    ] {
        h.push(s.to_string());
    }
    h
}

#[derive(Debug)]
pub struct FlightLog {
    w: csv::Writer<BufWriter<File>>,
    buf: String,
    rows: u64,
}

impl FlightLog {
    /// Creates `path` and writes the version line and the header.
    pub fn create(
        path: &Path,
        label: &str,
        rotors: usize,
        batteries: usize,
    ) -> std::io::Result<FlightLog> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        writeln!(
            out,
            "# lockstep-log {LOG_SCHEMA_VERSION} {label} rotors={rotors} batteries={batteries}"
        )?;
        let mut w = csv::Writer::from_writer(out);
        w.write_record(header(rotors, batteries))
            .map_err(std::io::Error::other)?;
        Ok(FlightLog {
            w,
            buf: String::with_capacity(64),
            rows: 0,
        })
    }

    fn field(&mut self, v: impl std::fmt::Display) -> std::io::Result<()> {
        self.buf.clear();
        // Writing to a String cannot fail.
        let _ = write!(self.buf, "{v}");
        self.w
            .write_field(self.buf.as_bytes())
            .map_err(std::io::Error::other)
    }

    pub fn write(&mut self, r: &LogRow) -> std::io::Result<()> {
        self.field(r.time_us)?;
        for v in r.truth {
            self.field(v)?;
        }
        for v in r.estimate {
            self.field(v)?;
        }
        for v in r.setpoints {
            self.field(v)?;
        }
        for i in 0..r.motors.len() {
            self.field(r.motors[i])?;
        }
        for i in 0..r.rotor_speed.len() {
            self.field(r.rotor_speed[i])?;
        }
        for i in 0..r.rotor_thrust.len() {
            self.field(r.rotor_thrust[i])?;
        }
        for v in r.wind {
            self.field(v)?;
        }
        self.field(r.air_density)?;
        self.field(r.bus[0])?;
        self.field(r.bus[1])?;
        for j in 0..r.batteries.len() {
            for v in r.batteries[j] {
                self.field(v)?;
            }
        }
        self.field(r.mode)?;
        self.field(r.armed)?;
        self.field(r.mission_current)?;
        self.field(r.mission_finished)?;
        self.field(r.faults)?;
        self.w
            .write_record(None::<&[u8]>)
            .map_err(std::io::Error::other)?;
        self.rows += 1;
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes everything written so far to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}
