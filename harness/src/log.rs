//! The flight log: CSV (csv crate) behind a buffered writer, one row per log
//! boundary, with a versioned first line:
//!
//! ```text
//! # lockstep-log 1 spec=iris seed=7 rotors=4 batteries=1
//! time_us,x_m,y_m,z_m,...
//! ```
//!
//! (Read it with a CSV reader that skips `#` lines.) Floats are written in
//! their shortest round-trip form (ryu), so a logged value parses back to the
//! same bits; integers with itoa.
//!
//! Formatting and writing happen on a writer thread, off the simulation's
//! critical path: the engine copies each row into a recycled, preallocated
//! batch of [`BATCH_ROWS`] rows and hands full batches over a bounded channel
//! (one thread wake-up per batch; it waits only when the writer is
//! [`POOL_BATCHES`] batches behind). Nothing is allocated per row. The file's
//! bytes do not depend on the thread: rows are written in order.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

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

impl LogRow {
    /// Copies `other` into `self` without allocating (the rows must have the
    /// same shape, as every row of one log does).
    pub fn copy_from(&mut self, other: &LogRow) {
        self.time_us = other.time_us;
        self.truth = other.truth;
        self.estimate = other.estimate;
        self.setpoints = other.setpoints;
        self.motors.copy_from_slice(&other.motors);
        self.rotor_speed.copy_from_slice(&other.rotor_speed);
        self.rotor_thrust.copy_from_slice(&other.rotor_thrust);
        self.wind = other.wind;
        self.air_density = other.air_density;
        self.bus = other.bus;
        self.batteries.copy_from_slice(&other.batteries);
        self.mode = other.mode;
        self.armed = other.armed;
        self.mission_current = other.mission_current;
        self.mission_finished = other.mission_finished;
        self.faults = other.faults;
    }
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

/// Rows per batch handed to the writer thread.
pub const BATCH_ROWS: usize = 64;
/// Batches in flight between the engine and the writer thread.
pub const POOL_BATCHES: usize = 4;

/// A batch of rows; `len` of them are filled.
#[derive(Debug)]
struct Batch {
    rows: Vec<LogRow>,
    len: usize,
}

/// The CSV side, owned by the writer thread.
struct CsvRows {
    w: csv::Writer<BufWriter<File>>,
}

impl CsvRows {
    fn f64(&mut self, v: f64) -> std::io::Result<()> {
        let mut b = ryu::Buffer::new();
        self.w
            .write_field(b.format(v).as_bytes())
            .map_err(std::io::Error::other)
    }

    fn f32(&mut self, v: f32) -> std::io::Result<()> {
        let mut b = ryu::Buffer::new();
        self.w
            .write_field(b.format(v).as_bytes())
            .map_err(std::io::Error::other)
    }

    fn int(&mut self, v: impl itoa::Integer) -> std::io::Result<()> {
        let mut b = itoa::Buffer::new();
        self.w
            .write_field(b.format(v).as_bytes())
            .map_err(std::io::Error::other)
    }

    fn write(&mut self, r: &LogRow) -> std::io::Result<()> {
        self.int(r.time_us)?;
        for v in r.truth {
            self.f64(v)?;
        }
        for v in r.estimate {
            self.f32(v)?;
        }
        for v in r.setpoints {
            self.f32(v)?;
        }
        for &v in &r.motors {
            self.f32(v)?;
        }
        for &v in &r.rotor_speed {
            self.f64(v)?;
        }
        for &v in &r.rotor_thrust {
            self.f64(v)?;
        }
        for v in r.wind {
            self.f64(v)?;
        }
        self.f64(r.air_density)?;
        self.f64(r.bus[0])?;
        self.f64(r.bus[1])?;
        for b in &r.batteries {
            for &v in b {
                self.f64(v)?;
            }
        }
        self.int(r.mode)?;
        self.int(r.armed)?;
        self.int(r.mission_current)?;
        self.int(r.mission_finished)?;
        self.int(r.faults)?;
        self.w
            .write_record(None::<&[u8]>)
            .map_err(std::io::Error::other)
    }
}

/// The flight log: rows go to a writer thread in batches.
#[derive(Debug)]
pub struct FlightLog {
    to_writer: Option<SyncSender<Batch>>,
    pool: Receiver<Batch>,
    current: Option<Batch>,
    writer: Option<JoinHandle<std::io::Result<()>>>,
    rows: u64,
}

fn closed() -> std::io::Error {
    std::io::Error::other("the log writer thread stopped")
}

impl FlightLog {
    /// Creates `path`, writes the version line and the header, and starts
    /// the writer thread with batches of rows shaped like `shape`.
    pub fn create(path: &Path, label: &str, shape: &LogRow) -> std::io::Result<FlightLog> {
        let (rotors, batteries) = (shape.motors.len(), shape.batteries.len());
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        writeln!(
            out,
            "# lockstep-log {LOG_SCHEMA_VERSION} {label} rotors={rotors} batteries={batteries}"
        )?;
        let mut w = csv::Writer::from_writer(out);
        w.write_record(header(rotors, batteries))
            .map_err(std::io::Error::other)?;
        let (to_writer, batches_in) = sync_channel::<Batch>(POOL_BATCHES);
        let (to_pool, pool) = sync_channel::<Batch>(POOL_BATCHES + 1);
        for _ in 0..POOL_BATCHES {
            to_pool
                .send(Batch {
                    rows: vec![shape.clone(); BATCH_ROWS],
                    len: 0,
                })
                .map_err(|_| closed())?;
        }
        let writer = std::thread::Builder::new()
            .name("lockstep-log".into())
            .spawn(move || {
                let mut csv = CsvRows { w };
                let mut first_error = None;
                for mut batch in batches_in {
                    for row in &batch.rows[..batch.len] {
                        if first_error.is_none()
                            && let Err(e) = csv.write(row)
                        {
                            first_error = Some(e);
                        }
                    }
                    batch.len = 0;
                    // The engine may be gone already; nothing waits for this batch then.
                    let _ = to_pool.send(batch);
                }
                let flushed = csv.w.flush();
                match first_error {
                    Some(e) => Err(e),
                    None => flushed,
                }
            })?;
        let current = pool.recv().map_err(|_| closed())?;
        Ok(FlightLog {
            to_writer: Some(to_writer),
            pool,
            current: Some(current),
            writer: Some(writer),
            rows: 0,
        })
    }

    /// Queues a copy of `r` for writing.
    pub fn write(&mut self, r: &LogRow) -> std::io::Result<()> {
        let batch = self.current.as_mut().ok_or_else(closed)?;
        batch.rows[batch.len].copy_from(r);
        batch.len += 1;
        self.rows += 1;
        if batch.len == BATCH_ROWS {
            self.hand_over()?;
            self.current = Some(self.pool.recv().map_err(|_| closed())?);
        }
        Ok(())
    }

    /// Sends the current batch to the writer.
    fn hand_over(&mut self) -> std::io::Result<()> {
        if let Some(batch) = self.current.take()
            && batch.len > 0
        {
            self.to_writer
                .as_ref()
                .ok_or_else(closed)?
                .send(batch)
                .map_err(|_| closed())?;
        }
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes every queued row, flushes the file and stops the writer;
    /// returns the first error the writer met. Later writes fail.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let handed = self.hand_over();
        self.to_writer = None;
        let joined = match self.writer.take() {
            Some(h) => h
                .join()
                .map_err(|_| std::io::Error::other("the log writer thread panicked"))?,
            None => Ok(()),
        };
        handed.and(joined)
    }
}

impl Drop for FlightLog {
    fn drop(&mut self) {
        // Nothing is lost on an early drop either; errors were the caller's
        // to collect with finish().
        let _ = self.finish();
    }
}
