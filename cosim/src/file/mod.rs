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
//! start = { length_m = 2.0 }   # start values of its variables (a bare
//!                             # dotted key names a dotted variable: body.m)
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

use lockstep_config::{ConfigError, Kinded, Source};
use lockstep_harness::Micros;
use lockstep_harness::inputs::scenario::Override;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::error::CosimError;
use crate::participant::Variable;

mod participants;
pub use participants::{DEFAULT_STEP_TIMEOUT, MAX_STEP_TIMEOUT};
mod transfers;

pub const SCHEMA_VERSION: u32 = 1;
/// An fmu participant's `path` naming an FMU the program carries.
pub const BUNDLED_PREFIX: &str = "bundled:";
/// The most participants a system may hold.
pub const MAX_PARTICIPANTS: usize = 1024;
/// The most worker threads (as `--threads`).
pub const MAX_THREADS: usize = 1024;
/// The most traffic slots of a vehicle.
pub const MAX_TRAFFIC_SLOTS: usize = 256;

#[derive(Debug, Deserialize, JsonSchema)]
struct Raw {
    schema_version: u32,
    description: Option<String>,
    cosim: RawCosim,
    #[serde(default)]
    participants: Vec<RawParticipant>,
    #[serde(default)]
    transfers: Vec<RawTransfer>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RawCosim {
    step_us: u64,
    duration_s: f64,
    seed: Option<u64>,
    mode: Option<String>,
    threads: Option<usize>,
    record_period_us: Option<u64>,
    record: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RawParticipant {
    name: String,
    kind: String,
    period_us: Option<u64>,
    // vehicle
    scenario: Option<PathBuf>,
    autopilot: Option<PathBuf>,
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    set: Option<toml::Table>,
    traffic_slots: Option<usize>,
    avoid_m: Option<f64>,
    // fmu
    path: Option<PathBuf>,
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    start: Option<toml::Table>,
    preload: Option<Vec<String>>,
    // external
    outputs: Option<Vec<RawVariable>>,
    inputs: Option<Vec<RawVariable>>,
    step_timeout_s: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RawVariable {
    name: String,
    /// Values (default 1; or the length of `start`).
    width: Option<usize>,
    /// The value held before the first step (default zeros).
    start: Option<Vec<f64>>,
    description: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
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
        /// How long one step (one call of the host's callback) may take:
        /// past it the run ends with the participant named.
        step_timeout: std::time::Duration,
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

impl SystemFile {
    pub fn load(path: impl AsRef<Path>) -> Result<SystemFile, CosimError> {
        let path = path.as_ref();
        let text = lockstep_config::read(path, "system")?;
        SystemFile::from_toml_str(&text, path)
    }

    /// A system from text, as if read from `path` (relative paths in it are
    /// relative to `path`'s directory).
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<SystemFile, CosimError> {
        let path = path.as_ref();
        let source = Source::new(path.display().to_string(), text);
        let table = lockstep_config::parse(&source.label, text)?;
        // An unknown key of a participant or a transfer function is told
        // the keys of its kind.
        let raw: Raw = lockstep_config::strict_kinded(
            &source,
            table,
            &[
                Kinded {
                    section: "participants",
                    keys_of: &participants::keys_of,
                },
                Kinded {
                    section: "transfers",
                    keys_of: &transfers::keys_of,
                },
            ],
        )?;
        let invalid = |key: String, reason: String| {
            CosimError::from(ConfigError::invalid(&source, key, reason))
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
        if let Some(n) = c.threads
            && !(1..=MAX_THREADS).contains(&n)
        {
            return Err(invalid(
                "cosim.threads".into(),
                format!("{n}: a run has 1 to {MAX_THREADS} threads"),
            ));
        }
        let seed = c.seed.unwrap_or(1);
        let ctx = Context {
            source: &source,
            dir: path.parent().unwrap_or(Path::new(".")),
            step,
            seed,
            duration,
            duration_s: c.duration_s,
        };
        let record_period = match c.record_period_us {
            Some(p) => ctx.multiple("cosim.record_period_us".into(), p)?,
            None => step,
        };
        let participants = participants::read(&ctx, raw.participants)?;
        let transfers = transfers::read(&ctx, raw.transfers, &participants)?;
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

/// What reading the sections after `[cosim]` needs: the file's name (for
/// errors), its directory (relative paths), the step and the seed.
struct Context<'a> {
    source: &'a Source,
    dir: &'a Path,
    step: Micros,
    seed: u64,
    duration: Micros,
    duration_s: f64,
}

impl Context<'_> {
    fn invalid(&self, key: String, reason: String) -> CosimError {
        ConfigError::invalid(self.source, key, reason).into()
    }

    /// A period at `key`: a positive multiple of the step, no longer than
    /// the run.
    fn multiple(&self, key: String, p: u64) -> Result<Micros, CosimError> {
        let p = Micros(p);
        let step = self.step;
        if p == Micros::ZERO || !p.is_multiple_of(step) {
            return Err(self.invalid(
                key,
                format!("{p} must be a positive multiple of the step {step}"),
            ));
        }
        if p > self.duration {
            return Err(self.invalid(
                key,
                format!(
                    "{p} is longer than the run ({}): it would act once, at the start",
                    self.duration
                ),
            ));
        }
        Ok(p)
    }
}
