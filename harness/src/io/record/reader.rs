//! Replay: opening (which checks the whole file) and driving the plant.

use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use lockstep_plant::integrate::{Integrator, Method, Options};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs};

use super::block::{BlockReader, Fault, Frame, Kind, read_full};
use super::end::decode_end;
use super::records::{Layout, Sequence};
use super::{
    CrcPart, EndStatus, Header, MAX_BLOCK_BYTES, RECORDING_MAGIC, RECORDING_VERSION, RecordError,
    TimeBounds, differing_keys, spec_hash,
};
use crate::Micros;

/// Bytes before the header block: magic and version.
const PREAMBLE_BYTES: u64 = 20;

/// An opened and fully checked recording, ready to replay.
pub struct Replay {
    path: String,
    plant: Multirotor,
    method: Method,
    options: Options,
    initial: Vec<f64>,
    layout: Layout,
    bounds: TimeBounds,
    /// The file, and where its first data block starts.
    input: BufReader<File>,
    data_offset: u64,
    end: EndStatus,
    records: u64,
    last_us: Option<u64>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("path", &self.path)
            .field("records", &self.records)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

impl Replay {
    /// Opens `path` and checks all of it: framing, checksums, record
    /// counts and times, and the end block. With `spec`, refuses a
    /// recording made with other model parameters (naming the differing
    /// keys); without, replays with the spec embedded in the recording.
    /// Reads the file once, one block at a time.
    pub fn open(path: &Path, spec: Option<&AircraftSpec>) -> Result<Replay, RecordError> {
        let p = path.display().to_string();
        let io = |source| RecordError::Io {
            path: p.clone(),
            source,
        };
        let mut input = BufReader::with_capacity(1 << 16, File::open(path).map_err(io)?);
        let mut pre = [0u8; PREAMBLE_BYTES as usize];
        let n = read_full(&mut input, &mut pre).map_err(io)?;
        let magic = n.min(RECORDING_MAGIC.len());
        if pre[..magic] != RECORDING_MAGIC[..magic] {
            return Err(RecordError::NotARecording { path: p });
        }
        if n < pre.len() {
            return Err(unfinished(&p, 0, &Sequence::new(ANY_TIME)));
        }
        let version = u32::from_le_bytes([pre[16], pre[17], pre[18], pre[19]]);
        if version != RECORDING_VERSION {
            return Err(RecordError::SchemaMismatch {
                path: p,
                found: version,
                expected: RECORDING_VERSION,
            });
        }
        let mut blocks = BlockReader::new(input, PREAMBLE_BYTES, 0);
        let (header, initial) = read_header(&mut blocks, &p)?;
        let bad = |reason: String| RecordError::Header {
            path: p.clone(),
            reason,
        };
        let recorded = AircraftSpec::from_toml_str(&header.spec_toml, "recording")
            .map_err(|e| bad(e.to_string()))?;
        if spec_hash(&recorded) != header.spec_sha256 {
            return Err(RecordError::Damaged { path: p });
        }
        if let Some(given) = spec
            && spec_hash(given) != header.spec_sha256
        {
            let parse = |s: &AircraftSpec| {
                toml::Value::Table(s.to_toml_string().parse().unwrap_or_default())
            };
            let mut keys = Vec::new();
            differing_keys(&parse(&recorded), &parse(given), "", &mut keys);
            return Err(RecordError::ParameterMismatch { path: p, keys });
        }
        let plant = recorded
            .build_named(&header.spec_name)
            .map_err(|e| bad(e.to_string()))?;
        let method = Method::from_name(&header.integrator)
            .ok_or_else(|| bad(format!("unknown integrator {}", header.integrator)))?;
        if plant.dim() != header.dim
            || plant.rotors.len() != header.rotors
            || plant.batteries.len() != header.batteries
        {
            return Err(bad("the header's dimensions do not match its spec".into()));
        }
        let layout = Layout {
            rotors: header.rotors,
            batteries: header.batteries,
        };
        let bounds = TimeBounds {
            end_us: header.end_us,
            max_interval_us: header.max_interval_us,
        };
        let data_offset = blocks.offset;
        let (end, seq, input) = {
            let mut records = Records::new(blocks, &p, layout, bounds)?;
            while records.next()?.is_some() {}
            (records.end.take(), records.seq, records.blocks.into_inner())
        };
        let Some(end) = end else {
            unreachable!("the records end only at the end block")
        };
        Ok(Replay {
            options: Options {
                max_step_ticks: header.max_step_ticks,
                ..Options::default()
            },
            path: p,
            method,
            initial,
            layout,
            bounds,
            input,
            data_offset,
            end,
            records: seq.records,
            last_us: seq.last_us,
            plant,
        })
    }

    /// Replays with `method` instead of the recorded integrator (same
    /// step options: at most one physics interval per step for the fixed
    /// methods, the recorded tolerances for the adaptive ones).
    pub fn set_integrator(&mut self, method: Method) {
        self.method = method;
    }

    /// The integrator the replay uses.
    pub fn integrator(&self) -> Method {
        self.method
    }

    pub fn plant(&self) -> &Multirotor {
        &self.plant
    }

    /// How the run that wrote the recording ended. A stopped or interrupted
    /// run replays up to its last record like a completed one; this says
    /// which it was.
    pub fn end_status(&self) -> &EndStatus {
        &self.end
    }

    /// Records (boundaries) in the recording.
    pub fn record_count(&self) -> u64 {
        self.records
    }

    /// Time of the last record, if there is one.
    pub fn last_time(&self) -> Option<Micros> {
        self.last_us.map(Micros)
    }

    /// The run's planned end and largest boundary interval.
    pub fn bounds(&self) -> TimeBounds {
        self.bounds
    }

    /// Drives the plant through every recorded boundary; `visit` sees the
    /// state at each boundary. Returns the final state. Checks the file
    /// again as it reads it.
    pub fn run(self, mut visit: impl FnMut(Micros, &[f64])) -> Result<Vec<f64>, RecordError> {
        self.run_with_inputs(|t, x, _, _| visit(t, x))
    }

    /// [`Replay::run`], visiting each boundary with the inputs recorded
    /// there (held from that time on) and the plant.
    pub fn run_with_inputs(
        mut self,
        mut visit: impl FnMut(Micros, &[f64], &PlantInputs, &Multirotor),
    ) -> Result<Vec<f64>, RecordError> {
        let path = self.path.clone();
        let replay_error = |time_us: u64, reason: String| RecordError::Replay {
            path: path.clone(),
            time_us,
            reason,
        };
        self.input
            .seek(SeekFrom::Start(self.data_offset))
            .map_err(|source| RecordError::Io {
                path: path.clone(),
                source,
            })?;
        let blocks = BlockReader::new(self.input, self.data_offset, 1);
        let mut records = Records::new(blocks, &self.path, self.layout, self.bounds)?;
        let mut x = self.initial;
        let mut integ = Integrator::new(self.method, x.len(), self.options)
            .map_err(|e| replay_error(0, e.to_string()))?;
        let mut held: Option<(u64, PlantInputs)> = None;
        while let Some((t, u)) = records.next()? {
            if let Some((prev, inputs)) = &held {
                let sys = HeldPlant {
                    plant: &self.plant,
                    inputs,
                };
                // The records' checks make `t - prev` in 1..=max_interval_us.
                integ
                    .step_interval(&sys, *prev, t - *prev, &mut x)
                    .map_err(|e| replay_error(t, e.to_string()))?;
            }
            visit(Micros(t), &x, &u, &self.plant);
            held = Some((t, u));
        }
        Ok(x)
    }
}

/// Bounds that refuse no time: for errors before the header is read.
const ANY_TIME: TimeBounds = TimeBounds {
    end_us: u64::MAX,
    max_interval_us: u64::MAX,
};

fn unfinished(path: &str, block: u64, seq: &Sequence) -> RecordError {
    RecordError::Unfinished {
        path: path.to_string(),
        block,
        records: seq.records,
        last_time_us: seq.last_us.unwrap_or(0),
    }
}

/// A block-reading fault as the error naming file, block and record.
fn block_error(fault: Fault, path: &str, block: u64, offset: u64, seq: &Sequence) -> RecordError {
    let (path, index) = (path.to_string(), seq.records);
    let crc = |part| {
        if block == 0 {
            RecordError::HeaderCrc {
                path: path.clone(),
                part,
            }
        } else {
            RecordError::BlockCrc {
                path: path.clone(),
                block,
                offset,
                index,
                part,
            }
        }
    };
    match fault {
        Fault::Io(source) => RecordError::Io { path, source },
        Fault::Cut => unfinished(&path, block, seq),
        Fault::FrameCrc => crc(CrcPart::Frame),
        Fault::PayloadCrc => crc(CrcPart::Payload),
        Fault::TooLarge { declared, max } => RecordError::BlockTooLarge {
            path,
            block,
            offset,
            index,
            declared,
            max,
        },
        Fault::UnknownKind(tag) => RecordError::Malformed {
            path,
            block,
            offset,
            index,
            reason: format!("unknown block kind `{}`", tag.escape_ascii()),
        },
        Fault::Lengths { stored, raw } => RecordError::Malformed {
            path,
            block,
            offset,
            index,
            reason: format!("an uncompressed block stores {stored} bytes but declares {raw}"),
        },
    }
}

/// Reads the header block: the header and the initial state.
fn read_header<R: Read>(
    blocks: &mut BlockReader<R>,
    path: &str,
) -> Result<(Header, Vec<f64>), RecordError> {
    let seq = Sequence::new(ANY_TIME);
    let (block, offset) = (blocks.index, blocks.offset);
    let (frame, payload) = match blocks.next() {
        Ok(Some(b)) => b,
        Ok(None) => return Err(unfinished(path, block, &seq)),
        Err(fault) => return Err(block_error(fault, path, block, offset, &seq)),
    };
    let bad = |reason: String| RecordError::Header {
        path: path.to_string(),
        reason,
    };
    if frame.kind != Kind::Header || frame.first_record != 0 || frame.record_count != 0 {
        return Err(bad(format!(
            "the first block is a {:?} block (first record {}, {} records), not the header",
            frame.kind, frame.first_record, frame.record_count
        )));
    }
    let len = payload.get(..4).map_or(usize::MAX, |w| {
        u32::from_le_bytes([w[0], w[1], w[2], w[3]]) as usize
    });
    let text = payload.get(4..4usize.saturating_add(len)).ok_or_else(|| {
        bad(format!(
            "{} bytes cannot hold the header text",
            payload.len()
        ))
    })?;
    let text = std::str::from_utf8(text).map_err(|e| bad(e.to_string()))?;
    let header: Header = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
    header.check_bounds().map_err(bad)?;
    let state = &payload[4 + len..];
    if Some(state.len()) != header.dim.checked_mul(8) {
        return Err(bad(format!(
            "the initial state has {} bytes, not {} f64",
            state.len(),
            header.dim
        )));
    }
    let initial = state
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    blocks.advance();
    Ok((header, initial))
}

/// The records of a recording, block by block, each block and record
/// checked; then the end block and nothing after it.
struct Records<'p, R> {
    blocks: BlockReader<R>,
    path: &'p str,
    layout: Layout,
    seq: Sequence,
    dctx: zstd::bulk::Decompressor<'static>,
    /// The current block's records, and the next one's start in it.
    raw: Vec<u8>,
    raw_len: usize,
    at: usize,
    /// Index of the current data block.
    block: u64,
    /// Set once the end block is read.
    end: Option<EndStatus>,
}

impl<'p, R: Read> Records<'p, R> {
    fn new(
        blocks: BlockReader<R>,
        path: &'p str,
        layout: Layout,
        bounds: TimeBounds,
    ) -> Result<Self, RecordError> {
        let dctx = zstd::bulk::Decompressor::new().map_err(|source| RecordError::Io {
            path: path.to_string(),
            source,
        })?;
        Ok(Records {
            blocks,
            path,
            layout,
            seq: Sequence::new(bounds),
            dctx,
            raw: vec![0; MAX_BLOCK_BYTES],
            raw_len: 0,
            at: 0,
            block: 0,
            end: None,
        })
    }

    /// The next record's time and inputs; `None` after the end block.
    fn next(&mut self) -> Result<Option<(u64, PlantInputs)>, RecordError> {
        let size = self.layout.record_bytes();
        while self.at >= self.raw_len {
            if self.end.is_some() || !self.next_block()? {
                return Ok(None);
            }
        }
        let (t, u) = self.layout.decode(&self.raw[self.at..self.at + size]);
        self.at += size;
        self.seq
            .push(t)
            .map_err(|f| self.seq.time_error(f, self.path, self.block, t))?;
        Ok(Some((t, u)))
    }

    /// Reads the next block: data (true) or the end (false).
    fn next_block(&mut self) -> Result<bool, RecordError> {
        let (path, seq) = (self.path, &self.seq);
        let (block, offset, index) = (self.blocks.index, self.blocks.offset, seq.records);
        let (frame, stored) = match self.blocks.next() {
            Ok(Some(b)) => b,
            Ok(None) => return Err(unfinished(path, block, seq)),
            Err(fault) => return Err(block_error(fault, path, block, offset, seq)),
        };
        let count_error = |reason: String| RecordError::CountMismatch {
            path: path.to_string(),
            block,
            offset,
            index,
            reason,
        };
        let malformed = |reason: String| RecordError::Malformed {
            path: path.to_string(),
            block,
            offset,
            index,
            reason,
        };
        let starts_right = || {
            if frame.first_record == seq.records {
                return Ok(());
            }
            Err(count_error(format!(
                "the block starts at record {}; the blocks before it hold {} records",
                frame.first_record, seq.records
            )))
        };
        match frame.kind {
            Kind::Header => Err(malformed("a second header block".into())),
            Kind::End => {
                starts_right()?;
                let status = end_block(seq, &frame, stored, count_error, malformed)?;
                self.blocks.advance();
                let offset = self.blocks.offset;
                let count = self.blocks.remaining().map_err(|source| RecordError::Io {
                    path: path.to_string(),
                    source,
                })?;
                if count > 0 {
                    return Err(RecordError::TrailingBytes {
                        path: path.to_string(),
                        offset,
                        count,
                    });
                }
                self.end = Some(status);
                Ok(false)
            }
            Kind::Data => {
                starts_right()?;
                let size = self.layout.record_bytes();
                let raw_len = frame.raw_len as usize;
                if frame.record_count == 0 || raw_len != frame.record_count as usize * size {
                    return Err(count_error(format!(
                        "the block declares {} records of {size} bytes but {raw_len} bytes",
                        frame.record_count
                    )));
                }
                // `raw_len` is at most MAX_BLOCK_BYTES (checked on reading
                // the frame): decompression cannot write past it.
                let n = self
                    .dctx
                    .decompress_to_buffer(stored, &mut self.raw[..raw_len])
                    .map_err(|e| RecordError::Decompress {
                        path: path.to_string(),
                        block,
                        offset,
                        index,
                        reason: e.to_string(),
                    })?;
                if n != raw_len {
                    return Err(RecordError::Decompress {
                        path: path.to_string(),
                        block,
                        offset,
                        index,
                        reason: format!("{n} bytes, the block declares {raw_len}"),
                    });
                }
                self.raw_len = raw_len;
                self.at = 0;
                self.block = block;
                self.blocks.advance();
                Ok(true)
            }
        }
    }
}

/// Checks the end block against the records read.
fn end_block(
    seq: &Sequence,
    frame: &Frame,
    payload: &[u8],
    count_error: impl Fn(String) -> RecordError,
    malformed: impl Fn(String) -> RecordError,
) -> Result<EndStatus, RecordError> {
    if frame.record_count != 0 {
        return Err(count_error(format!(
            "the end block declares {} records of its own",
            frame.record_count
        )));
    }
    let (total, last, status) = decode_end(payload).map_err(&malformed)?;
    if total != seq.records {
        return Err(count_error(format!(
            "the end block counts {total} records; the file holds {}",
            seq.records
        )));
    }
    if last != seq.last_us.unwrap_or(0) {
        return Err(malformed(format!(
            "the end block puts the last record at {}; it is at {}",
            lockstep_abi::at(last),
            lockstep_abi::at(seq.last_us.unwrap_or(0))
        )));
    }
    seq.check_end(&status).map_err(malformed)?;
    Ok(status)
}
