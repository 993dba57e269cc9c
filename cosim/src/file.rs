//! System files: what `lockstep cosim SYSTEM.toml` runs.
//!
//! ```toml
//! schema_version = 1
//! description = "two Iris sharing a radio"
//! [cosim]
//! step_us = 4000            # the system's step, integer µs
//! duration_s = 60.0
//! seed = 7                  # vehicles' and radios' streams derive from it (default 1)
//! mode = "parallel"         # or "serialized" (same bits, one thread)
//! threads = 2               # parallel workers (default: the machine's cores)
//! record_period_us = 20000  # a row of cosim.csv every this often (default: the step)
//! record = ["alpha.position_ned_m"]  # default: every output
//!
//! [[participants]]
//! name = "alpha"
//! kind = "vehicle"
//! scenario = "hover.toml"   # a one-vehicle scenario (relative to this file)
//! autopilot = "libap.so"    # default: the run's autopilot
//! period_us = 4000          # default: the step
//! set = { "vehicle.start_east_m" = 10.0 }  # scenario keys overridden
//! traffic_slots = 8         # neighbours its `traffic` input holds
//! avoid_m = 8.0             # hold when a neighbour is reported nearer
//!
//! [[participants]]
//! name = "load"
//! kind = "fmu"
//! path = "slung_load.fmu"     # an archive or an unpacked FMU directory,
//!                             # or "bundled:slung_load" (carried by lockstep)
//! start = { length_m = 2.0 }   # start values of its variables
//! preload = ["python"]      # libraries its binary needs loaded first
//!                           # (`python`: the libpython of python3 on PATH,
//!                           # which FMUs built with pythonfmu call into)
//!
//! [[participants]]
//! name = "thermal"
//! kind = "external"         # provided by the program running the system
//!                           # (a C host binds a callback: lockstep_cosim_bind)
//! outputs = [{ name = "temperature_k", start = [293.0] }]
//! inputs = [{ name = "heat_w", width = 1 }]
//!
//! [[transfers]]
//! name = "tether_in"
//! kind = "connect"          # values read laid end to end, dealt to the inputs
//! from = ["alpha.position_ned_m", "alpha.velocity_ned_mps"]
//! to = ["load.x", "load.y", "load.z", "load.vx", "load.vy", "load.vz"]
//! gain = 1.0                # and offset = 0.0
//! same_step = false         # true: within the step, Gauss–Seidel order
//! period_us = 4000          # default: the step
//!
//! [[transfers]]
//! name = "radio"
//! kind = "radio"
//! vehicles = ["alpha", "bravo"]
//! latency_us = 200000
//! loss = 0.1
//! range_m = 500.0
//! ```
//!
//! A vehicle's scenario lasts the system's duration, and its seed is derived
//! from the system's seed and its name (unless `set` gives either).

use std::path::{Path, PathBuf};

use lockstep_harness::Micros;
use lockstep_harness::rng::RngStreams;
use lockstep_harness::scenario::{Override, read_bounded};
use lockstep_plant::spec::{deserialize_strict, parse_table};
use serde::Deserialize;

use crate::error::CosimError;
use crate::participant::Variable;
use crate::system::check_participant_name;

pub const SCHEMA_VERSION: u32 = 1;
/// An fmu participant's `path` naming an FMU the program carries.
pub const BUNDLED_PREFIX: &str = "bundled:";
/// The most participants a system may hold.
pub const MAX_PARTICIPANTS: usize = 1024;
/// The most traffic slots of a vehicle.
pub const MAX_TRAFFIC_SLOTS: usize = 256;

#[derive(Debug, Deserialize)]
struct Raw {
    schema_version: u32,
    description: Option<String>,
    cosim: RawCosim,
    #[serde(default)]
    participants: Vec<RawParticipant>,
    #[serde(default)]
    transfers: Vec<RawTransfer>,
}

#[derive(Debug, Deserialize)]
struct RawCosim {
    step_us: u64,
    duration_s: f64,
    seed: Option<u64>,
    mode: Option<String>,
    threads: Option<usize>,
    record_period_us: Option<u64>,
    record: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct RawParticipant {
    name: String,
    kind: String,
    period_us: Option<u64>,
    // vehicle
    scenario: Option<PathBuf>,
    autopilot: Option<PathBuf>,
    set: Option<toml::Table>,
    traffic_slots: Option<usize>,
    avoid_m: Option<f64>,
    // fmu
    path: Option<PathBuf>,
    start: Option<toml::Table>,
    preload: Option<Vec<String>>,
    // external
    outputs: Option<Vec<RawVariable>>,
    inputs: Option<Vec<RawVariable>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVariable {
    name: String,
    /// Values (default 1; or the length of `start`).
    width: Option<usize>,
    /// The value held before the first step (default zeros).
    start: Option<Vec<f64>>,
    description: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RawTransfer {
    name: String,
    kind: String,
    period_us: Option<u64>,
    same_step: Option<bool>,
    // connect
    from: Option<Vec<String>>,
    to: Option<Vec<String>>,
    gain: Option<f64>,
    offset: Option<f64>,
    // radio
    vehicles: Option<Vec<String>>,
    latency_us: Option<u64>,
    loss: Option<f64>,
    range_m: Option<f64>,
}

/// How a system's participants step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileMode {
    Parallel,
    Serialized,
}

/// A validated system file.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemFile {
    pub file: PathBuf,
    pub description: Option<String>,
    pub step: Micros,
    pub duration: Micros,
    pub seed: u64,
    pub mode: FileMode,
    pub threads: Option<usize>,
    pub record_period: Micros,
    /// Outputs recorded (`participant.variable`); `None`: every output.
    pub record: Option<Vec<String>>,
    pub participants: Vec<ParticipantDecl>,
    pub transfers: Vec<TransferDecl>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParticipantDecl {
    pub name: String,
    pub period: Option<Micros>,
    pub kind: ParticipantKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ParticipantKind {
    Vehicle {
        scenario: PathBuf,
        autopilot: Option<PathBuf>,
        /// The scenario's keys overridden (seed and duration included).
        overrides: Vec<Override>,
        traffic_slots: usize,
        avoid_m: Option<f64>,
    },
    Fmu {
        path: PathBuf,
        /// Start values by variable name.
        start: Vec<(String, f64)>,
        /// Libraries loaded (symbols global) before the FMU's binary.
        preload: Vec<String>,
    },
    /// A participant the program running the system provides (a C host's
    /// callback through the C ABI): its variables as declared.
    External {
        outputs: Vec<Variable>,
        inputs: Vec<Variable>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct TransferDecl {
    pub name: String,
    pub period: Option<Micros>,
    pub same_step: bool,
    pub kind: TransferKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TransferKind {
    Connect {
        from: Vec<String>,
        to: Vec<String>,
        gain: f64,
        offset: f64,
    },
    Radio {
        vehicles: Vec<String>,
        latency: Micros,
        loss: f64,
        range_m: Option<f64>,
    },
}

/// The seed of vehicle `name`: the first 8 bytes (little-endian) of the
/// stream key `cosim.vehicle.<name>` of the system's seed.
pub fn vehicle_seed(master: u64, name: &str) -> u64 {
    let key = RngStreams::new(master).stream_key(&format!("cosim.vehicle.{name}"));
    let mut b = [0u8; 8];
    b.copy_from_slice(&key[..8]);
    u64::from_le_bytes(b)
}

/// Keys each kind takes (besides `name`, `kind`, `period_us`).
const VEHICLE_KEYS: [&str; 5] = ["scenario", "autopilot", "set", "traffic_slots", "avoid_m"];
const FMU_KEYS: [&str; 3] = ["path", "start", "preload"];
const EXTERNAL_KEYS: [&str; 2] = ["outputs", "inputs"];
/// The most values one declared variable holds.
const MAX_WIDTH: usize = 4096;
const CONNECT_KEYS: [&str; 4] = ["from", "to", "gain", "offset"];
const RADIO_KEYS: [&str; 4] = ["vehicles", "latency_us", "loss", "range_m"];

impl SystemFile {
    pub fn load(path: impl AsRef<Path>) -> Result<SystemFile, CosimError> {
        let path = path.as_ref();
        let text = read_bounded(path, "system").map_err(|reason| CosimError::Io {
            path: path.display().to_string(),
            reason,
        })?;
        SystemFile::from_toml_str(&text, path)
    }

    /// A system from text, as if read from `path` (relative paths in it are
    /// relative to `path`'s directory).
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<SystemFile, CosimError> {
        let path = path.as_ref();
        let label = path.display().to_string();
        let table = parse_table(&label, text)?;
        let raw: Raw = deserialize_strict(&label, table)?;
        let invalid = |key: String, reason: String| CosimError::Config {
            file: label.clone(),
            key,
            reason,
        };
        if raw.schema_version != SCHEMA_VERSION {
            return Err(invalid(
                "schema_version".into(),
                format!(
                    "{} is not supported (this build reads {SCHEMA_VERSION})",
                    raw.schema_version
                ),
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let c = &raw.cosim;
        if c.step_us == 0 {
            return Err(invalid("cosim.step_us".into(), "must be positive".into()));
        }
        let step = Micros(c.step_us);
        let duration = lockstep_harness::time::micros_from_secs("duration_s", c.duration_s)
            .map_err(|e| invalid("cosim.duration_s".into(), e.to_string()))?;
        if duration == Micros::ZERO || !duration.is_multiple_of(step) {
            return Err(invalid(
                "cosim.duration_s".into(),
                format!("{duration} must be a positive multiple of the step {step}"),
            ));
        }
        let mode = match c.mode.as_deref() {
            None | Some("parallel") => FileMode::Parallel,
            Some("serialized") => FileMode::Serialized,
            Some(other) => {
                return Err(invalid(
                    "cosim.mode".into(),
                    format!("`{other}` is not a mode (parallel, serialized)"),
                ));
            }
        };
        if c.threads == Some(0) {
            return Err(invalid("cosim.threads".into(), "must be at least 1".into()));
        }
        let multiple = |key: &str, p: u64| -> Result<Micros, CosimError> {
            let p = Micros(p);
            if p == Micros::ZERO || !p.is_multiple_of(step) {
                return Err(invalid(
                    key.to_string(),
                    format!("{p} must be a positive multiple of the step {step}"),
                ));
            }
            Ok(p)
        };
        let record_period = match c.record_period_us {
            Some(p) => multiple("cosim.record_period_us", p)?,
            None => step,
        };
        let seed = c.seed.unwrap_or(1);
        if raw.participants.is_empty() {
            return Err(invalid(
                "participants".into(),
                "a system needs at least one [[participants]] entry".into(),
            ));
        }
        if raw.participants.len() > MAX_PARTICIPANTS {
            return Err(invalid(
                "participants".into(),
                format!(
                    "{} entries; at most {MAX_PARTICIPANTS}",
                    raw.participants.len()
                ),
            ));
        }
        let mut participants = Vec::with_capacity(raw.participants.len());
        for (i, p) in raw.participants.into_iter().enumerate() {
            let key = |k: &str| format!("participants[{i}].{k}");
            check_participant_name(&p.name).map_err(|r| invalid(key("name"), r))?;
            if participants
                .iter()
                .any(|q: &ParticipantDecl| q.name == p.name)
            {
                return Err(invalid(
                    key("name"),
                    format!("`{}` is taken by an earlier participant", p.name),
                ));
            }
            let period = p
                .period_us
                .map(|v| multiple(&key("period_us"), v))
                .transpose()?;
            let given = [
                ("scenario", p.scenario.is_some()),
                ("autopilot", p.autopilot.is_some()),
                ("set", p.set.is_some()),
                ("traffic_slots", p.traffic_slots.is_some()),
                ("avoid_m", p.avoid_m.is_some()),
                ("path", p.path.is_some()),
                ("start", p.start.is_some()),
                ("preload", p.preload.is_some()),
                ("outputs", p.outputs.is_some()),
                ("inputs", p.inputs.is_some()),
            ];
            let (valid, kind): (&[&str], &str) = match p.kind.as_str() {
                "vehicle" => (&VEHICLE_KEYS, "a vehicle"),
                "fmu" => (&FMU_KEYS, "an fmu"),
                "external" => (&EXTERNAL_KEYS, "an external"),
                other => {
                    return Err(invalid(
                        key("kind"),
                        format!("`{other}` is not a participant kind (vehicle, fmu, external)"),
                    ));
                }
            };
            if let Some((k, reason)) = foreign_key(
                &given,
                valid,
                &format!("{kind} participant"),
                "name, kind, period_us",
            ) {
                return Err(invalid(key(k), reason));
            }
            let kind = match p.kind.as_str() {
                "vehicle" => {
                    let scenario = p.scenario.ok_or_else(|| {
                        invalid(key("scenario"), "a vehicle needs its scenario file".into())
                    })?;
                    let mut overrides = Vec::new();
                    let set = p.set.unwrap_or_default();
                    let mut flat = Vec::new();
                    flatten("", &set, &mut flat);
                    for (k, v) in flat {
                        overrides.push(Override::new(
                            &k,
                            v,
                            format!("participants[{i}].set.{k} in {label}"),
                        ));
                    }
                    if !overrides.iter().any(|o| o.key == "simulation.seed") {
                        overrides.push(Override::new(
                            "simulation.seed",
                            toml::Value::Integer(vehicle_seed(seed, &p.name) as i64 & i64::MAX),
                            format!("the seed of vehicle `{}` derived from cosim.seed", p.name),
                        ));
                    }
                    if !overrides.iter().any(|o| o.key == "simulation.duration_s") {
                        overrides.push(Override::new(
                            "simulation.duration_s",
                            toml::Value::Float(c.duration_s),
                            "cosim.duration_s".to_string(),
                        ));
                    }
                    let traffic_slots = p
                        .traffic_slots
                        .unwrap_or(crate::vehicle::DEFAULT_TRAFFIC_SLOTS);
                    if traffic_slots > MAX_TRAFFIC_SLOTS {
                        return Err(invalid(
                            key("traffic_slots"),
                            format!("{traffic_slots}; at most {MAX_TRAFFIC_SLOTS}"),
                        ));
                    }
                    if let Some(a) = p.avoid_m
                        && !(a.is_finite() && a > 0.0)
                    {
                        return Err(invalid(
                            key("avoid_m"),
                            format!("{a} must be a positive distance"),
                        ));
                    }
                    ParticipantKind::Vehicle {
                        scenario: dir.join(scenario),
                        autopilot: p.autopilot.map(|a| dir.join(a)),
                        overrides,
                        traffic_slots,
                        avoid_m: p.avoid_m,
                    }
                }
                "external" => {
                    let vars = |what: &str, raw: Option<Vec<RawVariable>>| {
                        let mut out: Vec<Variable> = Vec::new();
                        for (k, v) in raw.unwrap_or_default().into_iter().enumerate() {
                            let vk = |f: &str| key(&format!("{what}[{k}].{f}"));
                            if v.name.is_empty()
                                || v.name.chars().any(|c| c.is_whitespace() || c.is_control())
                            {
                                return Err(invalid(
                                    vk("name"),
                                    format!(
                                        "`{}`: a variable's name is not empty and holds no spaces",
                                        v.name
                                    ),
                                ));
                            }
                            if out.iter().any(|o| o.name == v.name) {
                                return Err(invalid(
                                    vk("name"),
                                    format!("`{}` is declared twice", v.name),
                                ));
                            }
                            let width = match (v.width, &v.start) {
                                (Some(w), Some(s)) if w != s.len() => {
                                    return Err(invalid(
                                        vk("start"),
                                        format!("{} values for a width of {w}", s.len()),
                                    ));
                                }
                                (Some(w), _) => w,
                                (None, Some(s)) => s.len(),
                                (None, None) => 1,
                            };
                            if width == 0 || width > MAX_WIDTH {
                                return Err(invalid(
                                    vk("width"),
                                    format!("{width}: a variable holds 1 to {MAX_WIDTH} values"),
                                ));
                            }
                            let start = v.start.unwrap_or_else(|| vec![0.0; width]);
                            out.push(Variable {
                                name: v.name,
                                len: width,
                                start,
                                description: v.description.unwrap_or_default(),
                            });
                        }
                        Ok(out)
                    };
                    let outputs = vars("outputs", p.outputs)?;
                    let inputs = vars("inputs", p.inputs)?;
                    if outputs.is_empty() && inputs.is_empty() {
                        return Err(invalid(
                            key("outputs"),
                            "an external participant declares outputs or inputs".into(),
                        ));
                    }
                    ParticipantKind::External { outputs, inputs }
                }
                _ => {
                    let fmu = p.path.ok_or_else(|| {
                        invalid(
                            key("path"),
                            "an fmu participant needs the path of its .fmu".into(),
                        )
                    })?;
                    let mut start = Vec::new();
                    for (k, v) in p.start.unwrap_or_default() {
                        let x = match v {
                            toml::Value::Float(f) => f,
                            toml::Value::Integer(n) => n as f64,
                            toml::Value::Boolean(b) => f64::from(u8::from(b)),
                            other => {
                                return Err(invalid(
                                    format!("participants[{i}].start.{k}"),
                                    format!(
                                        "expected a number or a boolean, found {}",
                                        other.type_str()
                                    ),
                                ));
                            }
                        };
                        start.push((k, x));
                    }
                    // `bundled:NAME`: an FMU the program carries.
                    let path = if fmu.to_str().is_some_and(|f| f.starts_with(BUNDLED_PREFIX)) {
                        fmu
                    } else {
                        dir.join(fmu)
                    };
                    ParticipantKind::Fmu {
                        path,
                        start,
                        preload: p.preload.unwrap_or_default(),
                    }
                }
            };
            participants.push(ParticipantDecl {
                name: p.name,
                period,
                kind,
            });
        }
        let mut transfers = Vec::with_capacity(raw.transfers.len());
        for (i, t) in raw.transfers.into_iter().enumerate() {
            let key = |k: &str| format!("transfers[{i}].{k}");
            if t.name.is_empty() {
                return Err(invalid(key("name"), "cannot be empty".into()));
            }
            if transfers.iter().any(|q: &TransferDecl| q.name == t.name) {
                return Err(invalid(
                    key("name"),
                    format!("`{}` is taken by an earlier transfer function", t.name),
                ));
            }
            let period = t
                .period_us
                .map(|v| multiple(&key("period_us"), v))
                .transpose()?;
            let given = [
                ("from", t.from.is_some()),
                ("to", t.to.is_some()),
                ("gain", t.gain.is_some()),
                ("offset", t.offset.is_some()),
                ("vehicles", t.vehicles.is_some()),
                ("latency_us", t.latency_us.is_some()),
                ("loss", t.loss.is_some()),
                ("range_m", t.range_m.is_some()),
            ];
            let (valid, kind): (&[&str], &str) = match t.kind.as_str() {
                "connect" => (&CONNECT_KEYS, "a connect"),
                "radio" => (&RADIO_KEYS, "a radio"),
                other => {
                    return Err(invalid(
                        key("kind"),
                        format!("`{other}` is not a transfer function kind (connect, radio)"),
                    ));
                }
            };
            if let Some((k, reason)) = foreign_key(
                &given,
                valid,
                &format!("{kind} transfer function"),
                "name, kind, period_us, same_step",
            ) {
                return Err(invalid(key(k), reason));
            }
            let kind = if t.kind == "connect" {
                let from = t.from.ok_or_else(|| {
                    invalid(
                        key("from"),
                        "a connection needs the outputs it reads".into(),
                    )
                })?;
                let to = t.to.ok_or_else(|| {
                    invalid(key("to"), "a connection needs the inputs it writes".into())
                })?;
                for (k, v) in [("gain", t.gain), ("offset", t.offset)] {
                    if let Some(x) = v
                        && !x.is_finite()
                    {
                        return Err(invalid(key(k), format!("{x} must be finite")));
                    }
                }
                TransferKind::Connect {
                    from,
                    to,
                    gain: t.gain.unwrap_or(1.0),
                    offset: t.offset.unwrap_or(0.0),
                }
            } else {
                let vehicles = t.vehicles.ok_or_else(|| {
                    invalid(
                        key("vehicles"),
                        "a radio needs the vehicles it links".into(),
                    )
                })?;
                if vehicles.len() < 2 {
                    return Err(invalid(
                        key("vehicles"),
                        "a radio links at least two vehicles".into(),
                    ));
                }
                for (k, v) in vehicles.iter().enumerate() {
                    if vehicles[..k].contains(v) {
                        return Err(invalid(key("vehicles"), format!("`{v}` is listed twice")));
                    }
                    match participants.iter().find(|p| &p.name == v) {
                        Some(ParticipantDecl {
                            kind: ParticipantKind::Vehicle { .. },
                            ..
                        }) => {}
                        Some(_) => {
                            return Err(invalid(
                                key("vehicles"),
                                format!("`{v}` is not a vehicle"),
                            ));
                        }
                        None => {
                            return Err(invalid(key("vehicles"), format!("no participant `{v}`")));
                        }
                    }
                }
                let loss = t.loss.unwrap_or(0.0);
                if !(0.0..=1.0).contains(&loss) {
                    return Err(invalid(
                        key("loss"),
                        format!("{loss} is not a probability in [0, 1]"),
                    ));
                }
                if let Some(r) = t.range_m
                    && (r.is_nan() || r <= 0.0)
                {
                    return Err(invalid(
                        key("range_m"),
                        format!("{r} must be a positive distance"),
                    ));
                }
                TransferKind::Radio {
                    vehicles,
                    latency: Micros(t.latency_us.unwrap_or(0)),
                    loss,
                    range_m: t.range_m,
                }
            };
            transfers.push(TransferDecl {
                name: t.name,
                period,
                same_step: t.same_step.unwrap_or(false),
                kind,
            });
        }
        Ok(SystemFile {
            file: path.to_path_buf(),
            description: raw.description,
            step,
            duration,
            seed,
            mode,
            threads: c.threads,
            record_period,
            record: c.record.clone(),
            participants,
            transfers,
        })
    }
}

/// The first key given that `valid` (the keys of this `kind`) lacks, as
/// an error naming it and the kind's keys.
fn foreign_key(
    given: &[(&'static str, bool)],
    valid: &[&str],
    kind: &str,
    common: &str,
) -> Option<(&'static str, String)> {
    given
        .iter()
        .find(|(k, g)| *g && !valid.contains(k))
        .map(|(k, _)| {
            (
                *k,
                format!(
                    "not a key of {kind} (its keys: {common}, {})",
                    valid.join(", ")
                ),
            )
        })
}

/// `set` as dotted keys: `{ vehicle = { start_east_m = 1 } }` and
/// `{ "vehicle.start_east_m" = 1 }` both give `vehicle.start_east_m`.
fn flatten(prefix: &str, t: &toml::Table, out: &mut Vec<(String, toml::Value)>) {
    for (k, v) in t {
        let key = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(inner) => flatten(&key, inner, out),
            other => out.push((key, other.clone())),
        }
    }
}
