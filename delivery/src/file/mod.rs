//! The fleet file of `lockstep orchestrate`: the timeline and the models.
//!
//! ```toml
//! schema_version = 1
//! [timeline]
//! reference_unix_s = 1798761600.0  # world time of timestamp 0
//! time_scale_us = 100000           # one timestamp = 0.1 s
//! duration_s = 900.0               # a whole number of timestamps
//! seed = 11                        # models' streams derive from it (default 1)
//! pass_limit = 100                 # passes of one cascade at most
//! [[models]]
//! name = "orders"
//! kind = "orders"                  # orders, no_fly_zones, dispatcher,
//!                                  # swap_station, kpi, vehicle
//! ...                              # the kind's keys (see `ModelKind`)
//! ```

use std::path::{Path, PathBuf};

use lockstep_config::{ConfigError, Kinded, Source};
use lockstep_orchestrator::{TimelineInfo, Timestamp};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::geometry::Zone;

mod model;

pub const SCHEMA_VERSION: u32 = 1;
/// The most models a file may declare.
pub const MAX_MODELS: usize = 256;

/// What is wrong with a fleet file: a configuration file's error (the
/// file, the key, its line and column).
pub type FileError = ConfigError;

/// A model as declared.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelKind {
    /// Produce-only: orders at exponential intervals, drop-offs uniform in
    /// a disc around the depot (the world origin).
    Orders {
        mean_interval_s: f64,
        radius_m: f64,
        first_s: f64,
        max_orders: u32,
    },
    /// Steady state: publishes its zones once.
    NoFlyZones {
        zones: Vec<Zone>,
    },
    /// Wakes on vehicle events, orders and zones only.
    Dispatcher {
        cruise_alt_m: f64,
        /// Each further vehicle cruises this much higher (separation).
        alt_step_m: f64,
        swap_below_soc: f64,
        zone_margin_m: f64,
    },
    SwapStation {
        swap_s: f64,
        bays: u32,
    },
    /// Consume-only.
    Kpi,
    Vehicle {
        scenario: PathBuf,
        autopilot: Option<PathBuf>,
        pad_north_m: f64,
        pad_east_m: f64,
        telemetry_s: f64,
    },
}

impl ModelKind {
    pub fn kind(&self) -> &'static str {
        match self {
            ModelKind::Orders { .. } => "orders",
            ModelKind::NoFlyZones { .. } => "no_fly_zones",
            ModelKind::Dispatcher { .. } => "dispatcher",
            ModelKind::SwapStation { .. } => "swap_station",
            ModelKind::Kpi => "kpi",
            ModelKind::Vehicle { .. } => "vehicle",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelDecl {
    pub name: String,
    pub kind: ModelKind,
}

/// A fleet file, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetFile {
    pub path: PathBuf,
    pub description: Option<String>,
    pub info: TimelineInfo,
    pub seed: u64,
    pub pass_limit: usize,
    pub threads: Option<usize>,
    pub models: Vec<ModelDecl>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Raw {
    schema_version: u32,
    #[serde(default)]
    description: Option<String>,
    timeline: RawTimeline,
    #[serde(default)]
    models: Vec<RawModel>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RawTimeline {
    reference_unix_s: f64,
    time_scale_us: u64,
    duration_s: f64,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    pass_limit: Option<usize>,
    #[serde(default)]
    threads: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct RawZone {
    north_m: f64,
    east_m: f64,
    radius_m: f64,
}

// Unknown keys are caught by `deserialize_strict` (named with their entry)
// rather than by serde, which would list every kind's keys as valid.
#[derive(Debug, Deserialize, JsonSchema)]
struct RawModel {
    name: String,
    kind: String,
    // orders
    mean_interval_s: Option<f64>,
    radius_m: Option<f64>,
    first_s: Option<f64>,
    max_orders: Option<u32>,
    // no_fly_zones
    zones: Option<Vec<RawZone>>,
    // dispatcher
    cruise_alt_m: Option<f64>,
    alt_step_m: Option<f64>,
    swap_below_soc: Option<f64>,
    zone_margin_m: Option<f64>,
    // swap_station
    swap_s: Option<f64>,
    bays: Option<u32>,
    // vehicle
    scenario: Option<PathBuf>,
    autopilot: Option<PathBuf>,
    pad_north_m: Option<f64>,
    pad_east_m: Option<f64>,
    telemetry_s: Option<f64>,
}

/// The most worker threads (as `--threads`).
pub const MAX_THREADS: usize = 1024;

/// The longest time a model's keys take (about 31.7 years).
pub const MAX_SECONDS: f64 = 1e9;
/// The highest altitude a delivery flies at, 10 km: above any multirotor's
/// ceiling, and far inside what a mission item holds.
pub const MAX_ALTITUDE_M: f64 = 1e4;
/// The farthest distance from the depot a file places anything (orders,
/// zones, pads, margins), 1,000 km: a scenario's largest start offset.
pub const MAX_DISTANCE_M: f64 = 1e6;

const KINDS: &str = "orders, no_fly_zones, dispatcher, swap_station, kpi, vehicle";

fn keys_of(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "orders" => &["mean_interval_s", "radius_m", "first_s", "max_orders"],
        "no_fly_zones" => &["zones"],
        "dispatcher" => &[
            "cruise_alt_m",
            "alt_step_m",
            "swap_below_soc",
            "zone_margin_m",
        ],
        "swap_station" => &["swap_s", "bays"],
        "kpi" => &[],
        "vehicle" => &[
            "scenario",
            "autopilot",
            "pad_north_m",
            "pad_east_m",
            "telemetry_s",
        ],
        _ => return None,
    })
}

impl RawModel {
    fn given(&self) -> [(&'static str, bool); 16] {
        [
            ("mean_interval_s", self.mean_interval_s.is_some()),
            ("radius_m", self.radius_m.is_some()),
            ("first_s", self.first_s.is_some()),
            ("max_orders", self.max_orders.is_some()),
            ("zones", self.zones.is_some()),
            ("cruise_alt_m", self.cruise_alt_m.is_some()),
            ("alt_step_m", self.alt_step_m.is_some()),
            ("swap_below_soc", self.swap_below_soc.is_some()),
            ("zone_margin_m", self.zone_margin_m.is_some()),
            ("swap_s", self.swap_s.is_some()),
            ("bays", self.bays.is_some()),
            ("scenario", self.scenario.is_some()),
            ("autopilot", self.autopilot.is_some()),
            ("pad_north_m", self.pad_north_m.is_some()),
            ("pad_east_m", self.pad_east_m.is_some()),
            ("telemetry_s", self.telemetry_s.is_some()),
        ]
    }
}

/// A model's name: a key segment and a file name (letters, digits, `_`,
/// `-`).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err("a model's name has 1 to 64 characters".into());
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(format!(
            "`{name}`: a model's name holds only letters, digits, `_` and `-`"
        ));
    }
    Ok(())
}

/// The `[timeline]` section checked: its reference, time scale, duration
/// (whole timestamps), pass limit and threads.
fn timeline(
    t: &RawTimeline,
    invalid: &dyn Fn(String, String) -> FileError,
) -> Result<TimelineInfo, FileError> {
    if !t.reference_unix_s.is_finite() {
        return Err(invalid(
            "timeline.reference_unix_s".into(),
            "must be a finite number".into(),
        ));
    }
    if t.time_scale_us == 0 {
        return Err(invalid(
            "timeline.time_scale_us".into(),
            "must be positive".into(),
        ));
    }
    let duration_us = lockstep_harness::time::micros_from_secs("duration_s", t.duration_s)
        .map_err(|e| invalid("timeline.duration_s".into(), e.to_string()))?;
    if duration_us.0 == 0 || !duration_us.0.is_multiple_of(t.time_scale_us) {
        return Err(invalid(
            "timeline.duration_s".into(),
            format!(
                "{duration_us} must be a positive whole number of timestamps of {} us",
                t.time_scale_us
            ),
        ));
    }
    if t.pass_limit == Some(0) {
        return Err(invalid(
            "timeline.pass_limit".into(),
            "must be at least 1".into(),
        ));
    }
    if let Some(n) = t.threads
        && !(1..=MAX_THREADS).contains(&n)
    {
        return Err(invalid(
            "timeline.threads".into(),
            format!("{n}: a run has 1 to {MAX_THREADS} threads"),
        ));
    }
    Ok(TimelineInfo {
        reference: t.reference_unix_s,
        time_scale_us: t.time_scale_us,
        start_time: 0,
        duration: duration_us.0 / t.time_scale_us,
    })
}

impl FleetFile {
    pub fn load(path: impl AsRef<Path>) -> Result<FleetFile, FileError> {
        let path = path.as_ref();
        let text = lockstep_config::read(path, "fleet")?;
        FleetFile::from_toml_str(&text, path)
    }

    /// A fleet from text, as if read from `path` (relative paths in it are
    /// relative to `path`'s directory).
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<FleetFile, FileError> {
        let path = path.as_ref();
        let source = Source::new(path.display().to_string(), text);
        let table = lockstep_config::parse(&source.label, text)?;
        // An unknown key of a model is told the keys of its kind (and the
        // name and kind every model has).
        let keys_of = |kind: &str| {
            let own = keys_of(kind)?;
            Some(["name", "kind"].iter().chain(own).copied().collect())
        };
        let raw: Raw = lockstep_config::strict_kinded(
            &source,
            table,
            &[Kinded {
                section: "models",
                keys_of: &keys_of,
            }],
        )?;
        let invalid = |key: String, reason: String| ConfigError::invalid(&source, key, reason);
        if raw.schema_version != SCHEMA_VERSION {
            return Err(invalid(
                "schema_version".into(),
                format!(
                    "{} is not supported (this build reads {SCHEMA_VERSION})",
                    raw.schema_version
                ),
            ));
        }
        let t = &raw.timeline;
        let info = timeline(t, &invalid)?;
        if raw.models.is_empty() {
            return Err(invalid(
                "models".into(),
                "a fleet needs at least one [[models]] entry".into(),
            ));
        }
        if raw.models.len() > MAX_MODELS {
            return Err(invalid(
                "models".into(),
                format!("{} entries; at most {MAX_MODELS}", raw.models.len()),
            ));
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let mut models: Vec<ModelDecl> = Vec::with_capacity(raw.models.len());
        let vehicles = raw.models.iter().filter(|r| r.kind == "vehicle").count();
        for (i, m) in raw.models.into_iter().enumerate() {
            let entry = model::Entry {
                source: &source,
                index: i,
                dir,
                vehicles,
            };
            models.push(entry.declare(m, &models)?);
        }
        let ff = FleetFile {
            path: path.to_path_buf(),
            description: raw.description,
            info,
            seed: t.seed.unwrap_or(1),
            pass_limit: t
                .pass_limit
                .unwrap_or(lockstep_orchestrator::DEFAULT_PASS_LIMIT),
            threads: t.threads,
            models,
        };
        ff.check_cadences().map_err(|(k, r)| invalid(k, r))?;
        Ok(ff)
    }

    /// Seconds as whole timestamps (at least one).
    pub fn timestamps(&self, s: f64) -> Timestamp {
        let us = (s * 1e6).round() as u64;
        us.div_ceil(self.info.time_scale_us).max(1)
    }

    /// Every period a model keeps is a whole number of timestamps.
    fn check_cadences(&self) -> Result<(), (String, String)> {
        let scale = self.info.time_scale_us;
        for (i, m) in self.models.iter().enumerate() {
            let (k, s) = match &m.kind {
                ModelKind::Vehicle { telemetry_s, .. } => ("telemetry_s", *telemetry_s),
                ModelKind::SwapStation { swap_s, .. } => ("swap_s", *swap_s),
                _ => continue,
            };
            let us = (s * 1e6).round();
            if us < scale as f64
                || !(us as u64).is_multiple_of(scale)
                || (us - s * 1e6).abs() > 1e-3
            {
                return Err((
                    format!("models[{i}].{k}"),
                    format!("{s} s is not a whole number of timestamps of {scale} us"),
                ));
            }
        }
        Ok(())
    }

    pub fn model(&self, name: &str) -> Option<&ModelDecl> {
        self.models.iter().find(|m| m.name == name)
    }
}
