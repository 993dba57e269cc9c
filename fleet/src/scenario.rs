//! Fleet scenarios: a scenario file whose `[[vehicles]]` replace its
//! `[vehicle]`. Every other section (simulation, cadences, wind, sensors,
//! estimator, events, expect, world) is shared: each vehicle is validated
//! as a scenario of its own made of those sections, its entry as the
//! `[vehicle]`, the shared events followed by its own.
//!
//! ```toml
//! schema_version = 1
//! [simulation]
//! seed = 3
//! duration_s = 60.0
//! [world]                      # required: the vehicles share one NED frame
//! origin_lat_deg = 47.397742
//! origin_lon_deg = 8.545594
//! origin_alt_m = 488.0
//! [fleet]
//! sync_period_us = 4000        # default: the autopilot period
//! proximity_m = 5.0            # a pair closer than this is a proximity event
//! level_grid = { north_m = [-50.0, 200.0], east_m = [-10.0, 130.0], rows = 1, columns = 4 }
//! level_buffer_m = 2.0         # hysteresis at a level's border (default 2)
//! lookahead_max_s = 1.0        # longest stretch between checks (0: every sync period)
//! lookahead_margin_m = 1.0     # kept beyond a pair's contact distance
//! # or boxes: [[fleet.levels]] name = "west", north_m = [..], east_m = [..], altitude_m = [..]
//! [[events]]                   # shared by every vehicle
//! at_s = 1.0
//! action = "arm"
//! [[vehicles]]
//! name = "alpha"               # the log is <out>/alpha.csv
//! spec = "iris"
//! mission = "../missions/square.waypoints"
//! start_north_m = 0.0
//! radius_m = 0.4               # default: rotor tip radius of the airframe
//! autopilot = "libother.so"    # default: the run's autopilot
//! [[vehicles.events]]          # this vehicle's own, after the shared ones
//! at_s = 20.0
//! action = "motor_fail"
//! motor = 0
//! ```
//!
//! Each vehicle's random streams derive from the master seed and its name
//! (`RngStreams::member_seed`, kind `fleet.vehicle`): renaming a vehicle changes its noise, adding or
//! removing another never does.

use std::path::{Path, PathBuf};

use lockstep_config::{ConfigError, Problem, Source};
use lockstep_harness::Micros;
use lockstep_harness::inputs::scenario::{Override, Scenario, ScenarioError};
use lockstep_harness::time::rng::RngStreams;

use crate::levels::Levels;
use crate::lookahead::LookaheadSettings;

/// The most vehicles a fleet may hold.
pub const MAX_VEHICLES: usize = 256;
/// The longest vehicle name.
pub const MAX_NAME_LEN: usize = 64;
/// The default distance under which a pair is in proximity, m.
pub const DEFAULT_PROXIMITY_M: f64 = 5.0;
/// The most levels.
pub const MAX_LEVELS: usize = 1024;
/// The default buffer around a level, m.
pub const DEFAULT_LEVEL_BUFFER_M: f64 = 2.0;

/// Keys of a `[[vehicles]]` entry that are the fleet's, not the `[vehicle]`'s.
const FLEET_VEHICLE_KEYS: [&str; 4] = ["name", "autopilot", "radius_m", "events"];

/// A validated fleet scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetScenario {
    pub file: PathBuf,
    pub description: Option<String>,
    /// The master seed (`simulation.seed`).
    pub seed: u64,
    /// The vehicles meet at every multiple of this period (a multiple of
    /// the autopilot period).
    pub sync: Micros,
    /// A pair closer than this is in proximity, m.
    pub proximity_m: f64,
    pub vehicles: Vec<FleetVehicle>,
    /// The regions a distributed run assigns to secondaries (one holding
    /// everything when the scenario declares none).
    pub levels: Levels,
    /// How far ahead the fleet may step between checks.
    pub lookahead: LookaheadSettings,
    /// Events dropped because the run was shortened on the command line
    /// (each shared one once, a vehicle's own under its entry).
    pub dropped_events: Vec<String>,
}

/// One vehicle of a fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetVehicle {
    pub name: String,
    /// The scenario this vehicle flies (its seed derived from the master).
    pub scenario: Scenario,
    /// Its autopilot library (resolved against the scenario's directory);
    /// `None`: the run's.
    pub autopilot: Option<PathBuf>,
    /// The declared collision radius, m; `None`: the airframe's rotor tip
    /// radius.
    pub radius_m: Option<f64>,
}

/// Whether the scenario text at `path` is a fleet (has `[[vehicles]]`).
pub fn is_fleet(path: &Path) -> Result<bool, ScenarioError> {
    let text = Scenario::read_text(path)?;
    let (table, _) = Scenario::parse_with(&text, path, &[])?;
    Ok(table.contains_key("vehicles"))
}

impl FleetScenario {
    pub fn load(path: impl AsRef<Path>) -> Result<FleetScenario, ScenarioError> {
        FleetScenario::load_with(path, &[])
    }

    /// The fleet at `path` with `overrides` applied to the file's keys
    /// before validation.
    pub fn load_with(
        path: impl AsRef<Path>,
        overrides: &[Override],
    ) -> Result<FleetScenario, ScenarioError> {
        let path = path.as_ref();
        let text = Scenario::read_text(path)?;
        FleetScenario::from_toml_str_with(&text, path, overrides)
    }

    /// A fleet from text, as if read from `path`.
    pub fn from_toml_str_with(
        text: &str,
        path: impl AsRef<Path>,
        overrides: &[Override],
    ) -> Result<FleetScenario, ScenarioError> {
        let path = path.as_ref();
        let (mut table, source) = Scenario::parse_with(text, path, overrides)?;
        let invalid = |key: &str, reason: String| ConfigError::invalid(&source, key, reason);
        if table.contains_key("vehicle") {
            return Err(invalid(
                "vehicle",
                "a fleet scenario declares its vehicles as [[vehicles]], not [vehicle]".into(),
            ));
        }
        let entries = match table.remove("vehicles") {
            Some(toml::Value::Array(a)) => a,
            Some(_) | None => {
                return Err(invalid(
                    "vehicles",
                    "must be an array of tables ([[vehicles]])".into(),
                ));
            }
        };
        if entries.is_empty() || entries.len() > MAX_VEHICLES {
            return Err(invalid(
                "vehicles",
                format!(
                    "a fleet has 1 to {MAX_VEHICLES} vehicles, this one {}",
                    entries.len()
                ),
            ));
        }
        let fleet = FleetSection::take(&mut table, &source)?;
        check_world(&table, &invalid)?;
        let shared_events = match table.get("events") {
            Some(toml::Value::Array(a)) => a.len(),
            _ => 0,
        };
        let mut dropped_events: Vec<String> = Vec::new();
        let mut vehicles: Vec<FleetVehicle> = Vec::with_capacity(entries.len());
        let shared = Shared {
            table: &table,
            path,
            source: &source,
            events: shared_events,
        };
        for (i, entry) in entries.into_iter().enumerate() {
            let v = shared.vehicle(i, entry, &vehicles, &mut dropped_events)?;
            vehicles.push(v);
        }
        let first = &vehicles[0].scenario;
        let master = match table.get("simulation").and_then(|s| s.get("seed")) {
            Some(toml::Value::Integer(s)) => *s as u64,
            _ => 0,
        };
        let ap = first
            .cadence("autopilot")
            .ok_or_else(|| invalid("cadences.autopilot", "the fleet needs one".into()))?;
        let sync = match fleet.sync_period_us {
            None => ap,
            Some(us) if us > 0 && us % ap.0 == 0 && us <= first.duration.0 => Micros(us),
            Some(us) => {
                return Err(invalid(
                    "fleet.sync_period_us",
                    format!(
                        "{us} us is not a positive multiple of the autopilot period ({} us) \
                         within the run",
                        ap.0
                    ),
                ));
            }
        };
        let levels = match (fleet.levels, fleet.level_grid) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "fleet.level_grid",
                    "give levels as [[fleet.levels]] or as a [fleet.level_grid], not both".into(),
                ));
            }
            (Some(l), None) | (None, Some(l)) => Levels {
                levels: l,
                buffer_m: fleet.level_buffer_m.unwrap_or(DEFAULT_LEVEL_BUFFER_M),
            },
            (None, None) => Levels::default(),
        };
        let defaults = LookaheadSettings::default();
        let lookahead = LookaheadSettings {
            max: fleet
                .lookahead_max_s
                .map_or(defaults.max, |s| Micros((s * 1e6).round() as u64)),
            margin_m: fleet.lookahead_margin_m.unwrap_or(defaults.margin_m),
        };
        Ok(FleetScenario {
            levels,
            lookahead,
            dropped_events,
            file: path.to_path_buf(),
            description: first.description.clone(),
            seed: master,
            sync,
            proximity_m: fleet.proximity_m.unwrap_or(DEFAULT_PROXIMITY_M),
            vehicles,
        })
    }
}

/// What every vehicle of a fleet file shares: the file's other tables
/// (each vehicle's scenario is them with its own `[vehicle]` and events),
/// where the file is, its source for errors, how many events are shared.
struct Shared<'a> {
    table: &'a toml::Table,
    path: &'a Path,
    source: &'a Source,
    events: usize,
}

impl Shared<'_> {
    /// `vehicles[i]`: its name (unique among those `taken` before it), its
    /// autopilot, radius and own events, and its scenario; the events it
    /// drops from a shortened run added to `dropped` (each once).
    fn vehicle(
        &self,
        i: usize,
        entry: toml::Value,
        taken: &[FleetVehicle],
        dropped_events: &mut Vec<String>,
    ) -> Result<FleetVehicle, ScenarioError> {
        let invalid = |key: &str, reason: String| ConfigError::invalid(self.source, key, reason);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let at = |k: &str| format!("vehicles[{i}].{k}");
        let toml::Value::Table(mut entry) = entry else {
            return Err(invalid(&format!("vehicles[{i}]"), "must be a table".into()));
        };
        let name = match entry.remove("name") {
            Some(toml::Value::String(s)) => s,
            Some(_) => return Err(invalid(&at("name"), "must be a string".into())),
            None => return Err(invalid(&at("name"), "every vehicle needs a name".into())),
        };
        check_name(&name).map_err(|r| invalid(&at("name"), r))?;
        if let Some(j) = taken.iter().position(|v| v.name == name) {
            return Err(invalid(
                &at("name"),
                format!("`{name}` is also the name of vehicles[{j}]"),
            ));
        }
        let autopilot = match entry.remove("autopilot") {
            Some(toml::Value::String(s)) => Some(dir.join(s)),
            Some(_) => return Err(invalid(&at("autopilot"), "must be a path".into())),
            None => None,
        };
        let radius_m =
            match entry.remove("radius_m") {
                Some(v) => Some(number(&v).filter(|r| *r > 0.0 && *r <= 100.0).ok_or_else(
                    || {
                        invalid(
                            &at("radius_m"),
                            format!("must be a number in (0, 100] m, is {v}"),
                        )
                    },
                )?),
                None => None,
            };
        let own_events = match entry.remove("events") {
            Some(toml::Value::Array(a)) => a,
            Some(_) => {
                return Err(invalid(
                    &at("events"),
                    "must be an array of tables ([[vehicles.events]])".into(),
                ));
            }
            None => Vec::new(),
        };
        let mut t = self.table.clone();
        if !own_events.is_empty() {
            let events = t
                .entry("events")
                .or_insert_with(|| toml::Value::Array(Vec::new()));
            if let toml::Value::Array(a) = events {
                a.extend(own_events);
            }
        }
        t.insert("vehicle".into(), toml::Value::Table(entry));
        // Its errors are located in the fleet file, at its own keys;
        // the keys set on the command line stay known as such (a run
        // shortened there drops the events past its end).
        let own = Source {
            unlocated: self.source.unlocated.clone(),
            ..Source::unlocated(self.source.label.clone())
        };
        let mut scenario = Scenario::from_table(t, self.path, &own)
            .map_err(|e| relabel(e, self.source, i, self.events))?;
        // The events dropped, named as the file has them: a shared one
        // once, a vehicle's own under its entry.
        for d in &scenario.dropped_events {
            let named = match d
                .strip_prefix("events[")
                .and_then(|r| r.split_once(']'))
                .and_then(|(k, rest)| Some((k.parse::<usize>().ok()?, rest)))
            {
                Some((k, rest)) if k >= self.events => {
                    format!("vehicles[{i}].events[{}]{rest}", k - self.events)
                }
                _ => d.clone(),
            };
            if !dropped_events.contains(&named) {
                dropped_events.push(named);
            }
        }
        scenario.seed = RngStreams::new(scenario.seed).member_seed("fleet.vehicle", &name);
        // Its own events are named where the file has them.
        for (k, key) in scenario.event_keys.iter_mut().enumerate().skip(self.events) {
            *key = format!("vehicles[{i}].events[{}]", k - self.events);
        }
        Ok(FleetVehicle {
            name,
            scenario,
            autopilot,
            radius_m,
        })
    }
}

/// The vehicles share one frame: the origin must be given, not taken from
/// each vehicle's mission.
fn check_world(
    table: &toml::Table,
    invalid: &impl Fn(&str, String) -> ScenarioError,
) -> Result<(), ScenarioError> {
    let has = |k: &str| table.get("world").and_then(|w| w.get(k)).is_some();
    if ["origin_lat_deg", "origin_lon_deg", "origin_alt_m"]
        .iter()
        .all(|k| has(k))
    {
        Ok(())
    } else {
        Err(invalid(
            "world",
            "a fleet's vehicles share one NED frame: give its origin_lat_deg, origin_lon_deg \
             and origin_alt_m under [world]"
                .into(),
        ))
    }
}

/// Names become file names: letters, digits, `_`, `-` and `.`, not
/// starting with `.`.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a name: 1 to {MAX_NAME_LEN} letters, digits, `_`, `-` or `.`, \
             not starting with `.`"
        ))
    }
}

/// A key of vehicle `i`'s own scenario as it is written in the fleet file:
/// `vehicle.x` is `vehicles[i].x`, a shared event keeps its place, the
/// vehicle's own events are `vehicles[i].events[k]`.
fn fleet_key(key: &str, i: usize, shared_events: usize) -> String {
    if key == "vehicle" {
        return format!("vehicles[{i}]");
    }
    if let Some(rest) = key.strip_prefix("vehicle.") {
        return format!("vehicles[{i}].{rest}");
    }
    if let Some(rest) = key.strip_prefix("events[")
        && let Some((n, tail)) = rest.split_once(']')
        && let Ok(n) = n.parse::<usize>()
        && n >= shared_events
    {
        return format!("vehicles[{i}].events[{}]{tail}", n - shared_events);
    }
    key.to_string()
}

/// An error of vehicle `i`'s own scenario as the fleet file spells it:
/// its keys (and the keys valid where a vehicle entry's stands, which
/// include the fleet's own: name, autopilot, radius_m) located there.
fn relabel(mut e: ScenarioError, source: &Source, i: usize, shared_events: usize) -> ScenarioError {
    if let Problem::UnknownKeys(keys) = &mut e.problem {
        for k in keys.iter_mut().filter(|k| k.key.starts_with("vehicle.")) {
            k.valid
                .extend(FLEET_VEHICLE_KEYS.iter().map(|s| s.to_string()));
            k.valid.sort();
        }
    }
    e.rekey(source, |k| fleet_key(k, i, shared_events))
}

mod section;
use section::{FleetSection, number};

#[cfg(test)]
mod tests;
