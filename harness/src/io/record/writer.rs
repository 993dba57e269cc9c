//! The recorder: records into bounded blocks, compresses each full block
//! and writes it at once; the end block only on [`Recorder::finish`].

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use lockstep_abi::ffi::{lockstep_actuator_frame, lockstep_commands};
use lockstep_plant::integrate::{Method, Options};
use lockstep_plant::{AircraftSpec, Multirotor, PlantInputs};

use super::block::{FRAME_BYTES, Frame, Kind, max_compressed};
use super::records::{Layout, Sequence};
use super::{
    EndStatus, Header, MAX_BLOCK_BYTES, RECORDING_MAGIC, RECORDING_VERSION, RecordError,
    TimeBounds, ZSTD_LEVEL,
};
use crate::Micros;

/// Where a recorder writes: a file, or in tests any writer.
type Sink = Box<dyn Write + Send + Sync>;

/// Writes a recording, one record per boundary.
///
/// Records are kept in memory until a block of up to [`MAX_BLOCK_BYTES`] is
/// full, then compressed and written with one `write` (no buffering
/// beyond that, so a killed process loses at most the block being filled).
/// Steady-state recording allocates nothing. [`Recorder::finish`] writes the
/// last block and the end block; a recorder dropped without it writes its
/// full records but no end block, so the file reads as unfinished.
pub struct Recorder {
    sink: Sink,
    path: String,
    layout: Layout,
    seq: Sequence,
    /// Records of the block being filled.
    raw: Vec<u8>,
    /// Records per block, times the record size.
    block_bytes: usize,
    /// A block's frame and compressed payload (`FRAME_BYTES +` zstd's bound).
    out: Vec<u8>,
    cctx: zstd::bulk::Compressor<'static>,
    /// Index of the next block (0 is the header) and its byte offset.
    block: u64,
    offset: u64,
    /// Index of the first record in `raw`.
    block_first: u64,
    /// The end block is written.
    finished: bool,
    /// A write failed: the file is in an unknown state, write nothing more.
    broken: bool,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("path", &self.path)
            .field("records", &self.seq.records)
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// Creates `path` and writes the preamble and header block. `bounds`
    /// are the run's planned end and largest boundary interval: records
    /// outside them are refused here as they would be on replay.
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        path: &Path,
        spec: &AircraftSpec,
        plant: &Multirotor,
        integrator: Method,
        options: &Options,
        seed: u64,
        initial_state: &[f64],
        bounds: TimeBounds,
    ) -> Result<Recorder, RecordError> {
        let p = path.display().to_string();
        let file = File::create(path).map_err(|source| RecordError::Io {
            path: p.clone(),
            source,
        })?;
        Recorder::with_sink(
            Box::new(file),
            p,
            spec,
            plant,
            integrator,
            options,
            seed,
            initial_state,
            bounds,
            MAX_BLOCK_BYTES,
        )
    }

    /// [`Recorder::create`] writing to `sink`, with blocks of at most
    /// `block_bytes` (tests use small blocks).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn with_sink(
        mut sink: Sink,
        path: String,
        spec: &AircraftSpec,
        plant: &Multirotor,
        integrator: Method,
        options: &Options,
        seed: u64,
        initial_state: &[f64],
        bounds: TimeBounds,
        block_bytes: usize,
    ) -> Result<Recorder, RecordError> {
        let header = Header::new(spec, plant, integrator, options, seed, bounds);
        let bad = |reason: String| RecordError::Header {
            path: path.clone(),
            reason,
        };
        header.check_bounds().map_err(bad)?;
        let payload = header.payload(initial_state).map_err(bad)?;
        let frame = Frame {
            kind: Kind::Header,
            stored_len: payload.len() as u32,
            raw_len: payload.len() as u32,
            first_record: 0,
            record_count: 0,
        };
        let mut bytes = Vec::with_capacity(20 + FRAME_BYTES + payload.len());
        bytes.extend_from_slice(&RECORDING_MAGIC);
        bytes.extend_from_slice(&RECORDING_VERSION.to_le_bytes());
        bytes.extend_from_slice(&frame.encode(&payload));
        let io = |source| RecordError::Io {
            path: path.clone(),
            source,
        };
        sink.write_all(&bytes).map_err(io)?;
        let cctx = zstd::bulk::Compressor::new(ZSTD_LEVEL).map_err(io)?;
        let layout = Layout {
            rotors: header.rotors,
            batteries: header.batteries,
        };
        let record = layout.record_bytes();
        let block_bytes = block_bytes.clamp(record, MAX_BLOCK_BYTES) / record * record;
        Ok(Recorder {
            sink,
            layout,
            seq: Sequence::new(bounds),
            raw: Vec::with_capacity(block_bytes),
            block_bytes,
            out: vec![0; FRAME_BYTES + max_compressed()],
            cctx,
            block: 1,
            offset: bytes.len() as u64,
            block_first: 0,
            finished: false,
            broken: false,
            path,
        })
    }

    /// Records the inputs held from `t` to the next boundary, and what the
    /// scenario and the autopilot produced at `t`. Refuses a time the
    /// reader would refuse (not after the last one, too far after it, or
    /// after the planned end). A write error names the path and `t`.
    pub fn record(
        &mut self,
        t: Micros,
        u: &PlantInputs,
        act: &lockstep_actuator_frame,
        estimate: &[f32; 13],
        commands: &lockstep_commands,
    ) -> Result<(), RecordError> {
        if self.broken || self.finished {
            return Err(self.write_error(t.0, self.dead()));
        }
        self.seq
            .push(t.0)
            .map_err(|f| self.seq.time_error(f, &self.path, self.block, t.0))?;
        self.layout
            .encode(t.0, u, act, estimate, commands, &mut self.raw);
        if self.raw.len() + self.layout.record_bytes() > self.block_bytes {
            self.write_block(t.0)?;
        }
        Ok(())
    }

    /// Writes the records not yet written and the end block saying how the
    /// run ended, then flushes. Refuses a status the records contradict
    /// (completed before the planned end; stopped or interrupted before the
    /// last record or after the end); the recording then stays unfinished.
    pub fn finish(mut self, status: EndStatus) -> Result<(), RecordError> {
        let t = self.seq.last_us.unwrap_or(0);
        if self.broken || self.finished {
            return Err(self.write_error(t, self.dead()));
        }
        self.seq
            .check_end(&status)
            .map_err(|reason| RecordError::Malformed {
                path: self.path.clone(),
                block: self.block,
                offset: self.offset,
                index: self.seq.records,
                reason,
            })?;
        self.write_block(t)?;
        let payload = self.seq.encode_end(&status);
        let end = Frame {
            kind: Kind::End,
            stored_len: payload.len() as u32,
            raw_len: payload.len() as u32,
            first_record: self.seq.records,
            record_count: 0,
        }
        .encode(&payload);
        self.finished = true;
        let written = self.sink.write_all(&end).and_then(|()| self.sink.flush());
        written.map_err(|e| self.write_error(t, e))
    }

    fn dead(&self) -> io::Error {
        io::Error::other(if self.finished {
            "the recording is already finished"
        } else {
            "an earlier write to this recording failed"
        })
    }

    fn write_error(&self, time_us: u64, source: io::Error) -> RecordError {
        RecordError::Write {
            path: self.path.clone(),
            time_us,
            source,
        }
    }

    /// Compresses and writes the records in `raw` as one data block; `t` is
    /// the time of the record being written, for the error.
    fn write_block(&mut self, t: u64) -> Result<(), RecordError> {
        if self.raw.is_empty() {
            return Ok(());
        }
        let (head, body) = self.out.split_at_mut(FRAME_BYTES);
        let n = match self.cctx.compress_to_buffer(&self.raw, body) {
            Ok(n) => n,
            Err(e) => {
                self.broken = true;
                return Err(self.write_error(t, e));
            }
        };
        let count = self.raw.len() / self.layout.record_bytes();
        let frame = Frame {
            kind: Kind::Data,
            stored_len: n as u32,
            raw_len: self.raw.len() as u32,
            first_record: self.block_first,
            record_count: count as u32,
        };
        let mut sealed = [0u8; FRAME_BYTES];
        frame.seal(&body[..n], &mut sealed);
        head.copy_from_slice(&sealed);
        if let Err(e) = self.sink.write_all(&self.out[..FRAME_BYTES + n]) {
            self.broken = true;
            return Err(self.write_error(t, e));
        }
        self.block += 1;
        self.offset += (FRAME_BYTES + n) as u64;
        self.block_first += count as u64;
        self.raw.clear();
        Ok(())
    }
}

impl Drop for Recorder {
    /// Without [`Recorder::finish`]: writes the full records (so the file
    /// says how far the run got) but no end block.
    fn drop(&mut self) {
        if !self.finished && !self.broken {
            let t = self.seq.last_us.unwrap_or(0);
            let _ = self.write_block(t);
            let _ = self.sink.flush();
        }
    }
}
