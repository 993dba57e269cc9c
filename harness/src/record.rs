//! Recording and replay of a run's bus streams.
//!
//! A recording holds everything the plant was given: the initial state, and
//! at every boundary the time and the inputs held until the next boundary
//! (motor commands, wind, motor and battery faults, thrust loss). It also
//! holds the estimator output, mode and armed flag for inspection. Replay
//! drives the plant from it with no autopilot and no randomness and, with the
//! same spec and integrator, reproduces the plant trajectory bit for bit.
//!
//! # Format (version 1), all numbers little-endian
//!
//! | bytes | content |
//! |---|---|
//! | 16 | magic `LOCKSTEP-REC\0\0\0\0` |
//! | 4 | u32 format version (1) |
//! | 4 | u32 header length `h` |
//! | h | UTF-8 TOML header: `spec_name`, `spec_sha256` (of `spec_toml`), `spec_toml` (the canonical merged spec), `integrator`, `max_step_ticks`, `seed`, `rotors`, `batteries`, `dim` |
//! | 8·dim | f64 initial state |
//! | records | until the end of the file, one per boundary |
//!
//! A record: u64 time (µs); per rotor f64 motor command; 3 × f64 wind (NED);
//! per rotor u8 motor enabled and f64 thrust scale; per battery u8
//! connected; 13 × f32 estimate (position, velocity, attitude, rates); u32
//! mode; u32 armed; the operator commands the scenario issued at this
//! boundary (u32 arm request, u32 mode request, u32 mission start; zeros when
//! none).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use lockstep_abi::ffi::{lockstep_actuator_frame, lockstep_commands};
use lockstep_plant::integrate::{Integrator, Method, Options};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Micros;

pub const RECORDING_MAGIC: [u8; 16] = *b"LOCKSTEP-REC\0\0\0\0";
pub const RECORDING_VERSION: u32 = 1;

/// What is wrong with a recording.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("recording {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a lockstep recording (bad magic)")]
    NotARecording { path: String },
    #[error("recording {path} has format version {found}; this build reads version {expected}")]
    SchemaMismatch {
        path: String,
        found: u32,
        expected: u32,
    },
    #[error("recording {path}: unreadable header: {reason}")]
    Header { path: String, reason: String },
    #[error(
        "recording {path} was made with other model parameters than the spec given for replay; differing keys: {}",
        keys.join(", ")
    )]
    ParameterMismatch { path: String, keys: Vec<String> },
    #[error(
        "recording {path}: the embedded spec does not match its own hash (the file is damaged)"
    )]
    Damaged { path: String },
    #[error("recording {path}: record {index} is cut short")]
    Truncated { path: String, index: u64 },
    #[error("replay of {path} failed at t = {time_us} us: {reason}")]
    Replay {
        path: String,
        time_us: u64,
        reason: String,
    },
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
}

/// SHA-256 (hex) of a spec's canonical TOML: the hash of the model parameters.
pub fn spec_hash(spec: &AircraftSpec) -> String {
    Sha256::digest(spec.to_toml_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Writes a recording, one record per boundary.
#[derive(Debug)]
pub struct Recorder {
    out: BufWriter<File>,
    path: String,
    rotors: usize,
    batteries: usize,
}

impl Recorder {
    pub fn create(
        path: &Path,
        spec: &AircraftSpec,
        plant: &Multirotor,
        integrator: Method,
        options: &Options,
        seed: u64,
        initial_state: &[f64],
    ) -> Result<Recorder, RecordError> {
        let p = path.display().to_string();
        let io = |source| RecordError::Io {
            path: p.clone(),
            source,
        };
        let header = Header {
            spec_name: plant.name.clone(),
            spec_sha256: spec_hash(spec),
            spec_toml: spec.to_toml_string(),
            integrator: integrator.name().to_string(),
            max_step_ticks: options.max_step_ticks,
            seed,
            rotors: plant.rotors.len(),
            batteries: plant.batteries.len(),
            dim: plant.dim(),
        };
        let text = toml::to_string(&header).map_err(|e| RecordError::Header {
            path: p.clone(),
            reason: e.to_string(),
        })?;
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path).map_err(io)?);
        out.write_all(&RECORDING_MAGIC).map_err(io)?;
        out.write_all(&RECORDING_VERSION.to_le_bytes())
            .map_err(io)?;
        out.write_all(&(text.len() as u32).to_le_bytes())
            .map_err(io)?;
        out.write_all(text.as_bytes()).map_err(io)?;
        for v in initial_state {
            out.write_all(&v.to_le_bytes()).map_err(io)?;
        }
        Ok(Recorder {
            out,
            path: p,
            rotors: plant.rotors.len(),
            batteries: plant.batteries.len(),
        })
    }

    /// Records the inputs held from `t` to the next boundary, and what the
    /// scenario and the autopilot produced at `t`.
    pub fn record(
        &mut self,
        t: Micros,
        u: &PlantInputs,
        act: &lockstep_actuator_frame,
        estimate: &[f32; 13],
        commands: &lockstep_commands,
    ) -> Result<(), RecordError> {
        let io = |source| RecordError::Io {
            path: self.path.clone(),
            source,
        };
        let o = &mut self.out;
        o.write_all(&t.0.to_le_bytes()).map_err(io)?;
        for i in 0..self.rotors {
            o.write_all(&u.motor_cmd[i].to_le_bytes()).map_err(io)?;
        }
        for v in u.wind_ned_mps {
            o.write_all(&v.to_le_bytes()).map_err(io)?;
        }
        for i in 0..self.rotors {
            o.write_all(&[u8::from(u.motor_enabled[i])]).map_err(io)?;
            o.write_all(&u.thrust_scale[i].to_le_bytes()).map_err(io)?;
        }
        for j in 0..self.batteries {
            o.write_all(&[u8::from(u.battery_connected[j])])
                .map_err(io)?;
        }
        for v in estimate {
            o.write_all(&v.to_le_bytes()).map_err(io)?;
        }
        o.write_all(&act.mode.to_le_bytes()).map_err(io)?;
        o.write_all(&act.armed.to_le_bytes()).map_err(io)?;
        for v in [
            commands.arm_request,
            commands.mode_request,
            commands.mission_start,
        ] {
            o.write_all(&v.to_le_bytes()).map_err(io)?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), RecordError> {
        self.out.flush().map_err(|source| RecordError::Io {
            path: self.path.clone(),
            source,
        })
    }
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

/// An opened recording, ready to replay.
#[derive(Debug)]
pub struct Replay {
    path: String,
    plant: Multirotor,
    method: Method,
    options: Options,
    initial: Vec<f64>,
    input: BufReader<File>,
    rotors: usize,
    batteries: usize,
}

impl Replay {
    /// Opens `path`. With `spec`, refuses a recording made with other model
    /// parameters (naming the differing keys); without, replays with the
    /// spec embedded in the recording.
    pub fn open(path: &Path, spec: Option<&AircraftSpec>) -> Result<Replay, RecordError> {
        let p = path.display().to_string();
        let io = |source| RecordError::Io {
            path: p.clone(),
            source,
        };
        let mut input = BufReader::new(File::open(path).map_err(io)?);
        let mut magic = [0u8; 16];
        if input.read_exact(&mut magic).is_err() || magic != RECORDING_MAGIC {
            return Err(RecordError::NotARecording { path: p });
        }
        let mut word = [0u8; 4];
        input.read_exact(&mut word).map_err(io)?;
        let version = u32::from_le_bytes(word);
        if version != RECORDING_VERSION {
            return Err(RecordError::SchemaMismatch {
                path: p,
                found: version,
                expected: RECORDING_VERSION,
            });
        }
        input.read_exact(&mut word).map_err(io)?;
        let mut text = vec![0u8; u32::from_le_bytes(word) as usize];
        input.read_exact(&mut text).map_err(io)?;
        let bad = |reason: String| RecordError::Header {
            path: p.clone(),
            reason,
        };
        let text = String::from_utf8(text).map_err(|e| bad(e.to_string()))?;
        let header: Header = toml::from_str(&text).map_err(|e| bad(e.to_string()))?;
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
        let mut initial = vec![0.0; header.dim];
        let mut b8 = [0u8; 8];
        for v in &mut initial {
            input.read_exact(&mut b8).map_err(io)?;
            *v = f64::from_le_bytes(b8);
        }
        Ok(Replay {
            path: p,
            options: Options {
                max_step_ticks: header.max_step_ticks,
                ..Options::default()
            },
            method,
            initial,
            input,
            rotors: header.rotors,
            batteries: header.batteries,
            plant,
        })
    }

    pub fn plant(&self) -> &Multirotor {
        &self.plant
    }

    /// Reads the next record; `Ok(None)` at a clean end of file.
    fn next_record(&mut self, index: u64) -> Result<Option<(Micros, PlantInputs)>, RecordError> {
        let mut b8 = [0u8; 8];
        match self.input.read(&mut b8[..1]) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(source) => {
                return Err(RecordError::Io {
                    path: self.path.clone(),
                    source,
                });
            }
        }
        let short = |_| RecordError::Truncated {
            path: self.path.clone(),
            index,
        };
        let r = &mut self.input;
        r.read_exact(&mut b8[1..]).map_err(short)?;
        let t = Micros(u64::from_le_bytes(b8));
        let mut u = PlantInputs::default();
        let mut f = || -> Result<f64, std::io::Error> {
            let mut b = [0u8; 8];
            r.read_exact(&mut b)?;
            Ok(f64::from_le_bytes(b))
        };
        for i in 0..self.rotors {
            u.motor_cmd[i] = f().map_err(short)?;
        }
        for k in 0..3 {
            u.wind_ned_mps[k] = f().map_err(short)?;
        }
        let mut b1 = [0u8; 1];
        for i in 0..self.rotors {
            r.read_exact(&mut b1).map_err(short)?;
            u.motor_enabled[i] = b1[0] != 0;
            let mut b = [0u8; 8];
            r.read_exact(&mut b).map_err(short)?;
            u.thrust_scale[i] = f64::from_le_bytes(b);
        }
        for j in 0..self.batteries {
            r.read_exact(&mut b1).map_err(short)?;
            u.battery_connected[j] = b1[0] != 0;
        }
        let mut skip = [0u8; 13 * 4 + 8 + 12];
        r.read_exact(&mut skip).map_err(short)?;
        Ok(Some((t, u)))
    }

    /// Drives the plant through every recorded boundary; `visit` sees the
    /// state at each boundary. Returns the final state.
    pub fn run(mut self, mut visit: impl FnMut(Micros, &[f64])) -> Result<Vec<f64>, RecordError> {
        let mut x = self.initial.clone();
        let mut integ = Integrator::new(self.method, x.len(), self.options).map_err(|e| {
            RecordError::Replay {
                path: self.path.clone(),
                time_us: 0,
                reason: e.to_string(),
            }
        })?;
        let mut held: Option<(Micros, PlantInputs)> = None;
        let mut index = 0;
        while let Some((t, u)) = self.next_record(index)? {
            if let Some((prev, inputs)) = &held
                && t > *prev
            {
                let sys = HeldPlant {
                    plant: &self.plant,
                    inputs,
                };
                integ
                    .step_interval(&sys, prev.0, (t - *prev).0, &mut x)
                    .map_err(|e| RecordError::Replay {
                        path: self.path.clone(),
                        time_us: t.0,
                        reason: e.to_string(),
                    })?;
            }
            visit(t, &x);
            held = Some((t, u));
            index += 1;
        }
        Ok(x)
    }
}
