//! Recording and replay of a run's bus streams.
//!
//! A recording holds everything the plant was given: the initial state, and
//! at every boundary the time and the inputs held until the next boundary
//! (motor commands, wind, motor and battery faults, thrust loss). It also
//! holds the estimator output, mode and armed flag for inspection. Replay
//! drives the plant from it with no autopilot and no randomness and, with the
//! same spec and integrator, reproduces the plant trajectory bit for bit.
//!
//! A recording never lies: every byte after the preamble is covered by a
//! CRC-32 (the preamble is compared byte for byte), the file says how the
//! run ended, and a file that was cut or
//! written by a killed process is refused as "unfinished" instead of being
//! replayed as if the run had ended there. [`Replay::open`] checks the whole
//! file (every block, every record time) before it returns, so a damaged
//! file is refused before any replay starts and [`Replay::end_status`] is
//! known up front; [`Replay::run`] checks everything again as it reads.
//!
//! # Format (version 2), all numbers little-endian
//!
//! | bytes | content |
//! |---|---|
//! | 16 | magic `LOCKSTEP-REC\0\0\0\0` |
//! | 4 | u32 format version (2) |
//! | block | the header block (kind `HEAD`) |
//! | blocks | data blocks (kind `DATA`), zero or more |
//! | block | the end block (kind `END\0`), written only by [`Recorder::finish`]; nothing may follow it |
//!
//! Every block is a 32-byte frame followed by its payload:
//!
//! | bytes | content |
//! |---|---|
//! | 4 | kind: `HEAD`, `DATA` or `END\0` |
//! | 4 | u32 payload length as stored (compressed for data blocks) |
//! | 4 | u32 payload length uncompressed (equal to the stored length for header and end blocks) |
//! | 8 | u64 index of the block's first record (header: 0; end: the total record count) |
//! | 4 | u32 record count of the block (0 for header and end blocks) |
//! | 4 | u32 CRC-32 of the 24 bytes above (so a damaged length is told apart from a cut file) |
//! | 4 | u32 CRC-32 of the 24 bytes above followed by the stored payload |
//! | n | the stored payload |
//!
//! Limits, checked before anything is allocated: a header payload is at most
//! [`MAX_HEADER_BYTES`], a data payload at most [`MAX_BLOCK_BYTES`]
//! uncompressed (and at most zstd's bound for that as stored), an end
//! payload at most [`MAX_END_BYTES`].
//!
//! **Header payload**: u32 TOML length `h`; `h` bytes of UTF-8 TOML with
//! `spec_name`, `spec_sha256` (of `spec_toml`), `spec_toml` (the canonical
//! merged spec), `integrator`, `max_step_ticks`, `seed`, `rotors`,
//! `batteries`, `dim`, `end_us` and `max_interval_us` (see [`TimeBounds`]);
//! then `dim` f64: the initial state.
//!
//! **Data payload**: a zstd frame (level [`ZSTD_LEVEL`]) of whole records,
//! `record count × record size` bytes uncompressed. The first data block
//! starts at record 0; each next one at the record after the previous one.
//!
//! **A record** (`104 + 17·rotors + batteries` bytes): u64 time (µs); per
//! rotor f64 motor command; 3 × f64 wind (NED); per rotor u8 motor enabled
//! and f64 thrust scale; per battery u8 connected; 13 × f32 estimate
//! (position, velocity, attitude, rates); u32 mode; u32 armed; the operator
//! commands the scenario issued at this boundary (u32 arm request, u32 mode
//! request, u32 mission start; zeros when none). Record times are strictly
//! increasing, at most `end_us`, and consecutive times are at most
//! `max_interval_us` apart.
//!
//! **End payload**: u64 total record count; u64 time of the last record
//! (0 when there is none); u32 status (0 completed, 1 stopped by an error,
//! 2 interrupted by a signal); u64 status time (µs; 0 when completed); i32
//! signal number (0 unless interrupted); u32 reason length `r` (at most
//! [`MAX_REASON_BYTES`]); `r` bytes of UTF-8 reason (empty unless stopped).
//! A completed run's last record is at `end_us`; a stopped or interrupted
//! run's status time is at or after its last record and at most `end_us`.
//!
//! The same records make the same bytes: zstd runs single-threaded at a
//! fixed level, and blocks are cut at a fixed record count
//! (`MAX_BLOCK_BYTES / record size`).
//!
//! # Bounded replay
//!
//! Memory: one header payload and one data block at a time (about 1.3 MiB
//! plus zstd's decompression context), whatever the file says. Time: the
//! work is linear in the file's records; the integrator crosses at most
//! `max_interval_us` per record, in at most [`MAX_SUBSTEPS_PER_INTERVAL`]
//! fixed steps (the header is refused otherwise) or, for adaptive methods,
//! at most the integrator's own substep limit.

mod block;
mod end;
mod error;
mod reader;
mod records;
mod writer;

#[cfg(test)]
mod tests;

use lockstep_plant::integrate::{Method, Options};
use lockstep_plant::{AircraftSpec, Multirotor};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

pub use end::EndStatus;
pub use error::{CrcPart, RecordError};
pub use reader::Replay;
pub use writer::Recorder;

pub const RECORDING_MAGIC: [u8; 16] = *b"LOCKSTEP-REC\0\0\0\0";
pub const RECORDING_VERSION: u32 = 2;

/// Largest uncompressed data block payload. The recorder fills blocks up to
/// this; a reader refuses a block that declares more, before reading it.
pub const MAX_BLOCK_BYTES: usize = 256 * 1024;

/// Largest header block payload (the spec TOML is a few KiB).
pub const MAX_HEADER_BYTES: usize = 1024 * 1024;

/// Largest end-status reason kept; a longer one is cut at a character
/// boundary when the end block is written.
pub const MAX_REASON_BYTES: usize = 16 * 1024;

/// Largest end block payload: the fixed fields and the longest reason.
pub const MAX_END_BYTES: usize = END_FIXED_BYTES + MAX_REASON_BYTES;

/// Bytes of an end payload before the reason.
const END_FIXED_BYTES: usize = 8 + 8 + 4 + 8 + 4 + 4;

/// Most fixed integrator steps one interval may take on replay:
/// `ceil(max_interval_us / max_step_ticks)` above this refuses the header.
/// The same number the adaptive integrator uses for its substep limit.
pub const MAX_SUBSTEPS_PER_INTERVAL: u64 = 100_000;

/// zstd level of data blocks: 1, the fastest, and here also among the
/// smallest.
///
/// Measured on the record streams of two real 90 s recordings (the example
/// square mission, 90 000+ boundaries each), compressed in 256 KiB blocks
/// on one core of this 2-core machine (`zstd -b<L> -B262144 -T1`, zstd
/// 1.5; ratio, compression speed):
///
/// | level | octa, 21.8 MB raw | iris, 15.6 MB raw |
/// |---|---|---|
/// | 1 | 10.82x, 1007 MB/s | 8.49x, 944 MB/s |
/// | 3 | 10.54x, 805 MB/s | 8.27x, 589 MB/s |
/// | 6 | 10.79x, 173 MB/s | 8.43x, 149 MB/s |
/// | 9 | 10.81x, 132 MB/s | 8.45x, 127 MB/s |
/// | 15 | 11.04x, 16 MB/s | 8.62x, 13 MB/s |
/// | 19 | 11.05x, 0.9 MB/s | 8.62x, 1.1 MB/s |
///
/// Records repeat whole runs of fields (inputs held between autopilot
/// ticks), which level 1 already finds; higher levels gain at most 2 % for
/// 6x to 1000x the time. Decompression runs at about 3.5 GB/s at every
/// level. Transposing each block's bytes by position in the record (a
/// shuffle filter) made it worse: 5.1x and 4.0x at level 1. This
/// recorder (zstd 1.5.7, level 1) writes the same 90 s flights as files
/// 8.47x (iris) and 10.74x (octa) smaller than their records, so an hour
/// of octa (871 MB of records) takes about 81 MB, compressed in under a
/// second of the run's time; [`Replay::open`] checks the 90 s octa file in
/// 55 ms in a debug build.
pub const ZSTD_LEVEL: i32 = 1;

/// The time limits of a run, stored in the header; replay refuses records
/// outside them, which also bounds the work of replaying any file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBounds {
    /// The run's planned end time (µs): the scenario's duration. No record
    /// is later; a completed run's last record is exactly here.
    pub end_us: u64,
    /// The largest gap (µs) between consecutive boundaries the run can
    /// have: the finest cadence period (every multiple of it is a
    /// boundary), or less. Must be positive.
    pub max_interval_us: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Header {
    spec_name: String,
    spec_sha256: String,
    spec_toml: String,
    integrator: String,
    max_step_ticks: u64,
    seed: u64,
    rotors: usize,
    batteries: usize,
    dim: usize,
    end_us: u64,
    max_interval_us: u64,
}

impl Header {
    fn new(
        spec: &AircraftSpec,
        plant: &Multirotor,
        integrator: Method,
        options: &Options,
        seed: u64,
        bounds: TimeBounds,
    ) -> Header {
        Header {
            spec_name: plant.name.clone(),
            spec_sha256: spec_hash(spec),
            spec_toml: spec.to_toml_string(),
            integrator: integrator.name().to_string(),
            max_step_ticks: options.max_step_ticks,
            seed,
            rotors: plant.rotors.len(),
            batteries: plant.batteries.len(),
            dim: plant.dim(),
            end_us: bounds.end_us,
            max_interval_us: bounds.max_interval_us,
        }
    }

    /// The header block payload: TOML length, TOML, initial state.
    fn payload(&self, initial_state: &[f64]) -> Result<Vec<u8>, String> {
        if initial_state.len() != self.dim {
            return Err(format!(
                "the initial state has {} entries, the plant {}",
                initial_state.len(),
                self.dim
            ));
        }
        let text = toml::to_string(self).map_err(|e| e.to_string())?;
        let mut payload = Vec::with_capacity(4 + text.len() + 8 * initial_state.len());
        payload.extend_from_slice(&(text.len() as u32).to_le_bytes());
        payload.extend_from_slice(text.as_bytes());
        for v in initial_state {
            payload.extend_from_slice(&v.to_le_bytes());
        }
        if payload.len() > MAX_HEADER_BYTES {
            return Err(format!(
                "{} bytes, above the limit of {MAX_HEADER_BYTES}",
                payload.len()
            ));
        }
        Ok(payload)
    }

    /// What makes replay unbounded or impossible, whatever the spec says.
    fn check_bounds(&self) -> Result<(), String> {
        if self.max_interval_us == 0 {
            return Err("max_interval_us is 0".into());
        }
        if self.max_step_ticks == 0 {
            return Err("max_step_ticks is 0".into());
        }
        let substeps = self.max_interval_us.div_ceil(self.max_step_ticks);
        if substeps > MAX_SUBSTEPS_PER_INTERVAL {
            return Err(format!(
                "an interval of {} us in steps of {} us takes {substeps} steps, more than {MAX_SUBSTEPS_PER_INTERVAL}",
                self.max_interval_us, self.max_step_ticks
            ));
        }
        if self.rotors > lockstep_plant::multirotor::MAX_ROTORS
            || self.batteries > lockstep_plant::multirotor::MAX_BATTERIES
        {
            return Err(format!(
                "{} rotors and {} batteries exceed the plant's limits",
                self.rotors, self.batteries
            ));
        }
        Ok(())
    }
}

/// SHA-256 (hex) of a spec's canonical TOML: the hash of the model parameters.
pub fn spec_hash(spec: &AircraftSpec) -> String {
    Sha256::digest(spec.to_toml_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Keys whose values differ between two TOML values (dotted paths).
fn differing_keys(a: &toml::Value, b: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    match (a, b) {
        (toml::Value::Table(ta), toml::Value::Table(tb)) => {
            let mut keys: Vec<&String> = ta.keys().chain(tb.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match (ta.get(k), tb.get(k)) {
                    (Some(x), Some(y)) => differing_keys(x, y, &p, out),
                    _ => out.push(p),
                }
            }
        }
        (x, y) if x != y => out.push(prefix.to_string()),
        _ => {}
    }
}
