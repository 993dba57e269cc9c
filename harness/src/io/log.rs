//! The flight log: CSV (csv crate) behind a buffered writer, one row per log
//! boundary, the header on line 1 (so `pandas.read_csv` and PlotJuggler
//! read it as it is), a unit in every physical column's name:
//!
//! ```text
//! time_us,x_m,y_m,z_m,...,lat_deg,lon_deg,alt_m,...
//! ```
//!
//! What a header line cannot say (schema version, scenario, spec, seed,
//! units, the mode and fault tables, the digest) is in the JSON sidecar
//! `<log>.json` ([`crate::io::log_meta`]).
//! Floats are written in
//! their shortest round-trip form (zmij), so a logged value parses back to the
//! same bits; integers with itoa.
//!
//! Formatting and writing happen on a writer thread, off the simulation's
//! critical path: the engine copies each row into a recycled, preallocated
//! batch of [`BATCH_ROWS`] rows and hands full batches over a bounded channel
//! (one thread wake-up per batch; it waits only when the writer is
//! [`POOL_BATCHES`] batches behind). Nothing is allocated per row. The file's
//! bytes do not depend on the thread: rows are written in order.
//!
//! The file only ever receives whole rows: rows are formatted into memory
//! and written in chunks that end at a row boundary, so a log cut short by
//! a crash of the process still ends on a whole line. A write that fails
//! (a full disk) stops the run at the next hand-over with an error naming
//! the path and the simulated time of the rows that were lost. The file is
//! locked (`flock`, exclusive) while written: a second run on the same log
//! is refused instead of both writing it.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// The version in the log's first line; bumped on any column change.
pub const LOG_SCHEMA_VERSION: u32 = 3;

/// One row's values, filled by the engine.
#[derive(Debug, Clone, Default)]
pub struct LogRow {
    pub time_us: u64,
    pub truth: [f64; 13],
    /// The truth's latitude, longitude (degrees) and altitude above mean
    /// sea level (WGS-84).
    pub geodetic: [f64; 3],
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
        self.geodetic = other.geodetic;
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
        "p_radps", "q_radps", "r_radps", "lat_deg", "lon_deg", "alt_m",
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
        // The mode's name, next to its code (schema 3).
        "mode_name",
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

/// Bytes of formatted rows gathered before one write to the file.
const CHUNK_BYTES: usize = 1 << 16;

/// The CSV side, owned by the writer thread: rows are formatted into
/// memory and reach the file in whole-row chunks. Numbers never need CSV
/// quoting, so rows are formatted straight into bytes (zmij, itoa; commas,
/// newline), about four times faster than through a CSV writer.
struct CsvRows {
    text: RowText,
    file: File,
    /// Bytes on disk, all of them whole lines.
    committed: u64,
    /// SHA-256 of the bytes on disk, kept as they are written (so the
    /// digest needs no second pass over the file).
    hash: sha2::Sha256,
}

/// Rows formatted as the file holds them, gathered in memory.
struct RowText {
    buf: Vec<u8>,
    cache: FieldCache,
}

impl CsvRows {
    /// Moves the formatted rows to the file when `all` or when a chunk is
    /// full; called only between rows.
    fn drain(&mut self, all: bool) -> std::io::Result<()> {
        if all || self.text.buf.len() >= CHUNK_BYTES {
            // Not torn by an in-process autopilot's crash: the crash line's
            // handler lets this write finish, and none starts after it.
            let written = match lockstep_abi::whole_write() {
                Some(_whole) => self.file.write_all(&self.text.buf),
                None => Err(std::io::Error::other("the process is dying")),
            };
            match written {
                Ok(()) => {
                    self.committed += self.text.buf.len() as u64;
                    sha2::Digest::update(&mut self.hash, &self.text.buf);
                }
                // A partial write would leave a torn line: cut it off.
                Err(_) => self.cut_to_whole_lines(),
            }
            self.text.buf.clear();
            written?;
        }
        Ok(())
    }

    fn cut_to_whole_lines(&mut self) {
        if self.file.metadata().is_ok_and(|m| m.is_file()) {
            let _ = self.file.set_len(self.committed);
        }
    }

    /// True when every formatted row is on disk.
    fn drained(&self) -> bool {
        self.text.buf.is_empty()
    }
}

/// The last formatted text of each float column, by its bits: at 1 kHz
/// most columns (the estimate, setpoints, commands, battery: sampled at
/// slower cadences) repeat the previous row, and copying their text is
/// much cheaper than formatting them again (the same bytes either way).
#[derive(Default)]
struct FieldCache {
    entries: Vec<(u64, u8, [u8; 24])>,
}

impl FieldCache {
    /// Appends field `i` (bits `bits`), formatting it with `format` only
    /// when it changed, then a comma.
    #[inline]
    fn put(
        &mut self,
        buf: &mut Vec<u8>,
        i: usize,
        bits: u64,
        format: impl FnOnce(&mut [u8; 24]) -> u8,
    ) {
        if i >= self.entries.len() {
            self.entries.resize(i + 1, (u64::MAX, 0, [0; 24]));
        }
        let e = &mut self.entries[i];
        if e.0 != bits || e.1 == 0 {
            e.1 = format(&mut e.2);
            e.0 = bits;
        }
        // A fixed-size copy (inlined, no call to memmove) of the whole
        // slot, then the tail beyond the text cut off.
        let end = buf.len() + e.1 as usize;
        buf.extend_from_slice(&e.2);
        buf.truncate(end);
        buf.push(b',');
    }
}

/// Shortest round-trip text of `v` into `out` (at most 24 bytes). zmij
/// (Schubfach with yy's digit output) formats 1.65 times faster than ryu,
/// measured on 3 million doubles; its text differs from ryu's only in the
/// `+` of a positive exponent (`1e+21`), which every CSV reader parses.
fn fmt64(v: f64, out: &mut [u8; 24]) -> u8 {
    let mut b = zmij::Buffer::new();
    let t = b.format(v).as_bytes();
    out[..t.len()].copy_from_slice(t);
    t.len() as u8
}

fn fmt32(v: f32, out: &mut [u8; 24]) -> u8 {
    let mut b = zmij::Buffer::new();
    let t = b.format(v).as_bytes();
    out[..t.len()].copy_from_slice(t);
    t.len() as u8
}

#[inline]
fn int_field(buf: &mut Vec<u8>, v: impl itoa::Integer) {
    let mut b = itoa::Buffer::new();
    buf.extend_from_slice(b.format(v).as_bytes());
    buf.push(b',');
}

impl RowText {
    /// Appends row `r`'s line.
    fn write(&mut self, r: &LogRow) {
        let (buf, c) = (&mut self.buf, &mut self.cache);
        let mut i = 0;
        let mut f64s = |buf: &mut Vec<u8>, c: &mut FieldCache, v: f64| {
            c.put(buf, i, v.to_bits(), |o| fmt64(v, o));
            i += 1;
        };
        int_field(buf, r.time_us);
        for v in r.truth {
            f64s(buf, c, v);
        }
        for v in r.geodetic {
            f64s(buf, c, v);
        }
        let f32s = |buf: &mut Vec<u8>, c: &mut FieldCache, v: f32, i: usize| {
            c.put(buf, i, u64::from(v.to_bits()), |o| fmt32(v, o));
        };
        let f32_fields = r
            .estimate
            .into_iter()
            .chain(r.setpoints)
            .chain(r.motors.iter().copied());
        for (j, v) in f32_fields.enumerate() {
            f32s(buf, c, v, 100 + j);
        }
        let mut k = 200;
        let mut more = |buf: &mut Vec<u8>, c: &mut FieldCache, v: f64| {
            c.put(buf, k, v.to_bits(), |o| fmt64(v, o));
            k += 1;
        };
        for &v in r.rotor_speed.iter().chain(&r.rotor_thrust).chain(&r.wind) {
            more(buf, c, v);
        }
        more(buf, c, r.air_density);
        more(buf, c, r.bus[0]);
        more(buf, c, r.bus[1]);
        for b in &r.batteries {
            for &v in b {
                more(buf, c, v);
            }
        }
        int_field(buf, r.mode);
        int_field(buf, r.armed);
        int_field(buf, r.mission_current);
        int_field(buf, r.mission_finished);
        int_field(buf, r.faults);
        buf.extend_from_slice(lockstep_abi::mode_name(r.mode).as_bytes());
        buf.push(b',');
        // The last comma becomes the line's end.
        if let Some(last) = buf.last_mut() {
            *last = b'\n';
        }
    }
}

/// The header line: the column names for `rotors` rotors and `batteries`
/// batteries.
fn header_line(rotors: usize, batteries: usize) -> std::io::Result<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header(rotors, batteries))
        .map_err(std::io::Error::other)?;
    w.into_inner().map_err(|e| e.into_error())
}

/// `sha256:<hex>` of the log a vehicle shaped like `shape` writes with
/// `rows`: the digest its file would have, computed without writing one
/// (for a front end that keeps the rows in memory).
pub fn digest_of(shape: &LogRow, rows: &[LogRow]) -> std::io::Result<String> {
    let mut hash = <sha2::Sha256 as sha2::Digest>::new();
    sha2::Digest::update(
        &mut hash,
        header_line(shape.motors.len(), shape.batteries.len())?,
    );
    let mut text = RowText {
        buf: Vec::with_capacity(CHUNK_BYTES + (1 << 12)),
        cache: FieldCache::default(),
    };
    for r in rows {
        text.write(r);
        if text.buf.len() >= CHUNK_BYTES {
            sha2::Digest::update(&mut hash, &text.buf);
            text.buf.clear();
        }
    }
    sha2::Digest::update(&mut hash, &text.buf);
    let d = sha2::Digest::finalize(hash);
    Ok(format!("sha256:{}", crate::io::digest::hex(&d)))
}

/// The first write error, with the time of the first row it lost.
type Failure = Arc<Mutex<Option<(u64, std::io::Error)>>>;

/// The flight log: rows go to a writer thread in batches.
#[derive(Debug)]
pub struct FlightLog {
    path: PathBuf,
    to_writer: Option<SyncSender<Batch>>,
    pool: Receiver<Batch>,
    current: Option<Batch>,
    writer: Option<JoinHandle<()>>,
    failure: Failure,
    /// `sha256:<hex>` of the whole file, once the writer has finished
    /// without an error.
    digest: Arc<Mutex<Option<String>>>,
    /// What the writer has put on disk.
    on_disk: Arc<Mutex<OnDisk>>,
    rows: u64,
    last_time_us: Option<u64>,
}

/// Rows on disk, all whole, and the last one's time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OnDisk {
    pub rows: u64,
    pub last_time_us: Option<u64>,
}

fn closed() -> std::io::Error {
    std::io::Error::other("the log writer thread stopped")
}

/// Opens `path` for writing without truncating it, takes the exclusive
/// lock, then empties it (a regular file only: devices and pipes are
/// written as they are).
fn open_locked(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::ResourceBusy,
                format!("{} is locked: another run is writing it", path.display()),
            ));
        }
        Err(std::fs::TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {}
        Err(std::fs::TryLockError::Error(e)) => return Err(e),
    }
    if file.metadata()?.is_file() {
        file.set_len(0)?;
    }
    Ok(file)
}

impl FlightLog {
    /// Creates `path`, writes the header, and starts the writer thread with
    /// batches of rows shaped like `shape`.
    ///
    /// Errors name the path: it cannot be created, is locked by another
    /// run, or the header cannot be written.
    pub fn create(path: &Path, shape: &LogRow) -> std::io::Result<FlightLog> {
        let named = |e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        };
        let (rotors, batteries) = (shape.motors.len(), shape.batteries.len());
        let mut file = open_locked(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::ResourceBusy => e,
            _ => named(e),
        })?;
        let mut head = header_line(rotors, batteries)?;
        file.write_all(&head).map_err(named)?;
        let committed = head.len() as u64;
        let mut hash = <sha2::Sha256 as sha2::Digest>::new();
        sha2::Digest::update(&mut hash, &head);
        head.clear();
        head.reserve(CHUNK_BYTES + (1 << 12));
        let failure: Failure = Arc::default();
        let failed = Arc::clone(&failure);
        let digest: Arc<Mutex<Option<String>>> = Arc::default();
        let digest_out = Arc::clone(&digest);
        let on_disk: Arc<Mutex<OnDisk>> = Arc::default();
        let on_disk_out = Arc::clone(&on_disk);
        let (to_writer, batches_in) = sync_channel::<Batch>(POOL_BATCHES);
        let (to_pool, pool) = sync_channel::<Batch>(POOL_BATCHES + 1);
        // Waiting on a std channel allocates, the first time: the thread's
        // waiting context and the channel's list of waiters. The engine
        // waits on the pool when the writer falls behind (the writer
        // channel cannot fill: it holds as many batches as exist). Wait
        // once now, on the pool while it is empty, long enough (2 ms) to get
        // past std's spinning into a real wait, so that no tick ever
        // allocates.
        let _ = pool.recv_timeout(std::time::Duration::from_millis(2));
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
                let mut csv = CsvRows {
                    text: RowText {
                        buf: head,
                        cache: FieldCache::default(),
                    },
                    file,
                    committed,
                    hash,
                };
                // Time of the first row not yet on disk.
                let mut pending_from: Option<u64> = None;
                let mut failed_at = None;
                // Rows formatted so far, and the last one's time.
                let mut formatted = OnDisk::default();
                let store = |d: OnDisk| *on_disk_out.lock().unwrap_or_else(|e| e.into_inner()) = d;
                for mut batch in batches_in {
                    if failed_at.is_none() {
                        pending_from =
                            pending_from.or(batch.rows[..batch.len].first().map(|r| r.time_us));
                        let written = batch.rows[..batch.len]
                            .iter()
                            .try_for_each(|row| {
                                csv.text.write(row);
                                formatted = OnDisk {
                                    rows: formatted.rows + 1,
                                    last_time_us: Some(row.time_us),
                                };
                                Ok(())
                            })
                            .and_then(|()| csv.drain(false));
                        match written {
                            Err(e) => failed_at = Some((pending_from.unwrap_or(0), e)),
                            Ok(()) if csv.drained() => {
                                pending_from = None;
                                store(formatted);
                            }
                            Ok(()) => {}
                        }
                    }
                    batch.len = 0;
                    // The engine may be gone already; nothing waits for this batch then.
                    let _ = to_pool.send(batch);
                    if failed_at.is_some() {
                        break;
                    }
                }
                if failed_at.is_none() {
                    match csv.drain(true) {
                        Ok(()) => store(formatted),
                        Err(e) => failed_at = Some((pending_from.unwrap_or(0), e)),
                    }
                }
                match failed_at {
                    Some(f) => *failed.lock().unwrap_or_else(|e| e.into_inner()) = Some(f),
                    None => {
                        let d = sha2::Digest::finalize(csv.hash);
                        *digest_out.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(format!("sha256:{}", crate::io::digest::hex(&d)));
                    }
                }
            })?;
        let current = pool.recv().map_err(|_| closed())?;

        Ok(FlightLog {
            path: path.to_path_buf(),
            to_writer: Some(to_writer),
            pool,
            current: Some(current),
            writer: Some(writer),
            failure,
            digest,
            on_disk,
            rows: 0,
            last_time_us: None,
        })
    }

    /// `sha256:<hex>` of the file, after [`FlightLog::finish`] succeeded.
    pub fn digest(&self) -> Option<String> {
        self.digest
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The writer's first error, named with the path and the time of the
    /// first row lost.
    fn failure(&self) -> Option<std::io::Error> {
        let slot = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(|(t, e)| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "cannot write {} (the rows from {} on are lost): {e}",
                    self.path.display(),
                    lockstep_abi::at(*t)
                ),
            )
        })
    }

    /// Queues a copy of `r` for writing.
    pub fn write(&mut self, r: &LogRow) -> std::io::Result<()> {
        let batch = self.current.as_mut().ok_or_else(closed)?;
        batch.rows[batch.len].copy_from(r);
        batch.len += 1;
        self.rows += 1;
        self.last_time_us = Some(r.time_us);
        if batch.len == BATCH_ROWS {
            self.hand_over()?;
            let next = self.pool.recv();
            self.current = Some(next.map_err(|_| self.failure().unwrap_or_else(closed))?);
        }
        Ok(())
    }

    /// Sends the current batch to the writer; fails with the writer's
    /// error once it has one.
    fn hand_over(&mut self) -> std::io::Result<()> {
        if let Some(e) = self.failure() {
            return Err(e);
        }
        if let Some(batch) = self.current.take()
            && batch.len > 0
        {
            let sent = self.to_writer.as_ref().ok_or_else(closed)?.send(batch);
            if sent.is_err() {
                // The writer stopped: after a failure, which it recorded.
                return Err(self.failure().unwrap_or_else(closed));
            }
        }
        Ok(())
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The time of the last row written, if any.
    pub fn last_time_us(&self) -> Option<u64> {
        self.last_time_us
    }

    /// The rows on disk (all of them whole) and the last one's time: after
    /// [`FlightLog::finish`], the rows written unless writing failed, then
    /// those before the first row lost.
    pub fn on_disk(&self) -> OnDisk {
        *self.on_disk.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes every queued row, flushes the file and stops the writer;
    /// returns the first error the writer met. Later writes fail.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let handed = self.hand_over();
        self.to_writer = None;
        if let Some(h) = self.writer.take() {
            h.join()
                .map_err(|_| std::io::Error::other("the log writer thread panicked"))?;
        }
        match self.failure() {
            Some(e) => Err(e),
            None => handed,
        }
    }
}

impl Drop for FlightLog {
    fn drop(&mut self) {
        // Nothing is lost on an early drop either; errors were the caller's
        // to collect with finish().
        let _ = self.finish();
    }
}

// A row travels (a distributed secondary sends its vehicles' rows to the
// primary, which writes them): loaded over a row of the vehicle's shape.
crate::persist::persist_fields!(LogRow {
    time_us,
    truth,
    geodetic,
    estimate,
    setpoints,
    motors,
    rotor_speed,
    rotor_thrust,
    wind,
    air_density,
    bus,
    batteries,
    mode,
    armed,
    mission_current,
    mission_finished,
    faults
});

/// Fault bits in the log's `faults` column.
pub mod fault_bits {
    /// Motor `i` failed: bit `i`.
    pub const MOTOR_FAILED: u32 = 0;
    /// Thrust loss on any motor.
    pub const THRUST_LOSS: u32 = 16;
    /// Battery `j` disconnected: bit `20 + j`.
    pub const BATTERY: u32 = 20;
    /// Sensor `k` (imu, mag, baro, gps, estimator) faulted: bit `32 + k`.
    pub const SENSOR: u32 = 32;
}
