//! The recording format on synthetic and crafted files: every refusal with
//! its exact message, the recorder's own refusals and write errors, end
//! statuses, and property tests that no input makes replay panic or hang.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use lockstep_abi::ffi::{lockstep_actuator_frame, lockstep_commands};
use lockstep_plant::integrate::{Method, Options};
use lockstep_plant::{AircraftSpec, Multirotor, PlantInputs};

use super::block::{FRAME_BYTES, Frame, Kind, max_compressed};
use super::records::{Layout, Sequence};
use super::*;
use crate::Micros;

mod properties;
mod recorder;
mod refusals;

/// The built-in iris at rest; records every 1000 us from 0 to `END_US`.
struct Fixture {
    spec: AircraftSpec,
    plant: Multirotor,
    options: Options,
    initial: Vec<f64>,
    bounds: TimeBounds,
    layout: Layout,
}

const END_US: u64 = 9000;
const STEP_US: u64 = 1000;
/// 4 rotors, 1 battery.
const RECORD: usize = 173;

fn fixture() -> Fixture {
    let spec = AircraftSpec::builtin("iris").unwrap();
    let plant = spec.build_named("iris").unwrap();
    Fixture {
        initial: plant.resting_state(0.0, 0.0, 0.0),
        layout: Layout {
            rotors: plant.rotors.len(),
            batteries: plant.batteries.len(),
        },
        options: Options {
            max_step_ticks: STEP_US,
            ..Options::default()
        },
        bounds: TimeBounds {
            end_us: END_US,
            max_interval_us: STEP_US,
        },
        spec,
        plant,
    }
}

/// A fresh path in the temporary directory.
fn tmp(name: &str) -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "lockstep-unit-{}-{}-{name}.rec",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Inputs that change from record to record.
fn inputs(k: usize) -> PlantInputs {
    let mut u = PlantInputs::default();
    for i in 0..4 {
        u.motor_cmd[i] = 0.3 + 0.01 * ((k * 7 + i) % 11) as f64;
    }
    u.wind_ned_mps = [1.0, 0.5, 0.0];
    u
}

fn recorder(
    f: &Fixture,
    sink: Box<dyn Write + Send + Sync>,
    path: &Path,
    block: usize,
) -> Recorder {
    Recorder::with_sink(
        sink,
        path.display().to_string(),
        &f.spec,
        &f.plant,
        Method::Rk4,
        &f.options,
        7,
        &f.initial,
        f.bounds,
        block,
    )
    .unwrap()
}

fn record(r: &mut Recorder, k: usize, t: u64) -> Result<(), RecordError> {
    r.record(
        Micros(t),
        &inputs(k),
        &lockstep_actuator_frame::default(),
        &[0.5; 13],
        &lockstep_commands::default(),
    )
}

/// Records `times` into `path` in blocks of `block` bytes, finishing with
/// `status` when given; returns the file.
fn synthetic(
    f: &Fixture,
    path: &Path,
    times: &[u64],
    status: Option<EndStatus>,
    block: usize,
) -> Vec<u8> {
    let mut r = recorder(
        f,
        Box::new(std::fs::File::create(path).unwrap()),
        path,
        block,
    );
    for (k, t) in times.iter().enumerate() {
        record(&mut r, k, *t).unwrap();
    }
    match status {
        Some(s) => r.finish(s).unwrap(),
        None => drop(r),
    }
    std::fs::read(path).unwrap()
}

fn all_times() -> Vec<u64> {
    (0..=END_US).step_by(STEP_US as usize).collect()
}

// ---- crafting files block by block ----

fn preamble_and_header(f: &Fixture, tweak: impl FnOnce(&mut Header)) -> Vec<u8> {
    let mut h = Header::new(&f.spec, &f.plant, Method::Rk4, &f.options, 7, f.bounds);
    tweak(&mut h);
    let payload = h.payload(&f.initial).unwrap();
    let mut b = RECORDING_MAGIC.to_vec();
    b.extend(RECORDING_VERSION.to_le_bytes());
    b.extend(header_block(&payload));
    b
}

fn header_block(payload: &[u8]) -> Vec<u8> {
    Frame {
        kind: Kind::Header,
        stored_len: payload.len() as u32,
        raw_len: payload.len() as u32,
        first_record: 0,
        record_count: 0,
    }
    .encode(payload)
}

fn records(f: &Fixture, first: usize, times: &[u64]) -> Vec<u8> {
    let mut raw = Vec::new();
    for (k, t) in times.iter().enumerate() {
        f.layout.encode(
            *t,
            &inputs(first + k),
            &lockstep_actuator_frame::default(),
            &[0.5; 13],
            &lockstep_commands::default(),
            &mut raw,
        );
    }
    raw
}

fn data_block(first: u64, count: u32, raw: &[u8]) -> Vec<u8> {
    let z = zstd::bulk::compress(raw, ZSTD_LEVEL).unwrap();
    Frame {
        kind: Kind::Data,
        stored_len: z.len() as u32,
        raw_len: raw.len() as u32,
        first_record: first,
        record_count: count,
    }
    .encode(&z)
}

fn data(f: &Fixture, first: usize, times: &[u64]) -> Vec<u8> {
    data_block(first as u64, times.len() as u32, &records(f, first, times))
}

fn end_block(first: u64, total: u64, last: u64, status: &EndStatus) -> Vec<u8> {
    let seq = Sequence {
        bounds: TimeBounds {
            end_us: END_US,
            max_interval_us: STEP_US,
        },
        records: total,
        last_us: Some(last),
    };
    let payload = seq.encode_end(status);
    Frame {
        kind: Kind::End,
        stored_len: payload.len() as u32,
        raw_len: payload.len() as u32,
        first_record: first,
        record_count: 0,
    }
    .encode(&payload)
}

/// Recomputes both checksums of the block at the start of `b`.
fn reseal(b: &mut [u8]) {
    let stored = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    let head = crc32fast::hash(&b[..24]);
    b[24..28].copy_from_slice(&head.to_le_bytes());
    let mut all = crc32fast::Hasher::new();
    all.update(&b[..24]);
    all.update(&b[FRAME_BYTES..FRAME_BYTES + stored]);
    b[28..32].copy_from_slice(&all.finalize().to_le_bytes());
}

/// A valid crafted recording: header, records 0..5 and 5..10, end.
struct Crafted {
    head: Vec<u8>,
    d1: Vec<u8>,
    d2: Vec<u8>,
    end: Vec<u8>,
}

impl Crafted {
    fn new(f: &Fixture) -> Crafted {
        let t = all_times();
        Crafted {
            head: preamble_and_header(f, |_| {}),
            d1: data(f, 0, &t[..5]),
            d2: data(f, 5, &t[5..]),
            end: end_block(10, 10, END_US, &EndStatus::Completed),
        }
    }

    fn bytes(&self) -> Vec<u8> {
        [&self.head[..], &self.d1, &self.d2, &self.end].concat()
    }

    /// Byte offsets of the two data blocks and the end block.
    fn offsets(&self) -> (u64, u64, u64) {
        let d1 = self.head.len() as u64;
        let d2 = d1 + self.d1.len() as u64;
        (d1, d2, d2 + self.d2.len() as u64)
    }
}

/// Opens and runs `bytes` as the file `path`.
fn replay(path: &Path, bytes: &[u8]) -> Result<(EndStatus, u64, Vec<f64>), RecordError> {
    std::fs::write(path, bytes).unwrap();
    let r = Replay::open(path, None)?;
    let status = r.end_status().clone();
    let mut visits = 0;
    let x = r.run(|_, _| visits += 1)?;
    Ok((status, visits, x))
}

fn refusal(path: &Path, bytes: &[u8]) -> RecordError {
    match replay(path, bytes) {
        Ok(_) => panic!("{} was accepted", path.display()),
        Err(e) => e,
    }
}
