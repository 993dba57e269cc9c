//! Scenario files (TOML): what to fly, how often everything runs, the wind,
//! the sensors, and the events. Strict like aircraft specs: unknown keys and
//! ill-typed values are errors naming their key path.
//!
//! ```toml
//! schema_version = 1
//! [simulation]
//! seed = 7
//! duration_s = 90.0
//! integrator = "rk4"          # euler, rk4, bs32, dp54
//! [cadences]                  # each one of period_us, period_s, rate_hz
//! autopilot = { rate_hz = 250 }
//! log = { rate_hz = 10 }      # no log cadence: no log
//! [vehicle]
//! spec = "iris"               # built-in name or path (relative to this file)
//! mission = "../missions/square.waypoints"
//! [sensors.gps]              # imu, mag, baro, gps: noise; gps: delay_us
//! delay_us = 100000
//! [estimator]                # noise, AR(1) biases, bias_tau_s, delay_us
//! delay_us = 20000
//! [wind]                     # constant, ornstein_uhlenbeck, dryden (+ w20_mps)
//! model = "ornstein_uhlenbeck"
//! mean_ned_mps = [2.0, 1.0, 0.0]
//! sigma_mps = [0.8, 0.8, 0.3]
//! tau_s = [5.0, 5.0, 2.0]
//! [world]                   # origin (default: the mission's home, else the spec's)
//! origin_lat_deg = 47.397742
//! origin_lon_deg = 8.545594
//! origin_alt_m = 488.0       # above mean sea level
//! max_mission_distance_m = 50000.0
//! [autopilot.params]        # set through the library's parameter functions
//! MPC_XY_VEL_P = 1.5
//! [[events]]
//! at_s = 1.0
//! action = "arm"
//! [[events]]
//! when = { altitude_above_m = 5.0 }
//! action = "motor_fail"
//! motor = 0
//! ```

mod checks;
mod dispersions;
mod events;
mod expect;
mod file;
mod overrides;
pub mod reference;
mod sections;
mod settings;
mod stack;
#[cfg(test)]
mod tests;
mod types;

use std::path::{Path, PathBuf};

pub use lockstep_config::{ConfigError, Source};
use lockstep_plant::integrate::Method;

use crate::{Cadence, Micros};
use checks::within;
pub use checks::{
    MAX_DELAY_US, MAX_DURATION_S, MAX_NOISE_SCALE, MAX_SENSOR_BIAS, MAX_START_OFFSET_M,
    MAX_WIND_MPS,
};
pub use dispersions::{Dispersions, SpecAdjust};
pub use events::{MAX_TAKEOFF_M, MIN_TAKEOFF_M, action_now};
pub use expect::{
    DEFAULT_FLY_AWAY_MARGIN_M, DEFAULT_IMPACT_SPEED_MPS, DEFAULT_LOSS_OF_CONTROL_S,
    DEFAULT_LOSS_OF_CONTROL_TILT_DEG, DEFAULT_LOSS_OF_CONTROL_YAW_RATE_DPS, Expectations, Spot,
    Volume,
};
use file::File;
pub use overrides::Override;
use settings::sensor_settings;
pub use types::*;

/// What is wrong with a scenario: a configuration file's error (the file,
/// the key, its line and column).
pub type ScenarioError = ConfigError;

/// Largest scenario file read: 16 MiB.
pub const MAX_SCENARIO_BYTES: u64 = lockstep_config::MAX_BYTES;

/// The supported `schema_version`.
pub const SCENARIO_SCHEMA_VERSION: u32 = 1;

/// The wind model chosen by the scenario.
pub use crate::environment::wind::WindModel;

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub file: PathBuf,
    pub description: Option<String>,
    pub seed: u64,
    pub duration: Micros,
    pub tick: Micros,
    pub engine: EngineKind,
    pub integrator: Method,
    /// physics, autopilot, imu, mag, baro, gps, estimator, wind[, log].
    pub cadences: Vec<Cadence>,
    pub spec: String,
    pub mission: Option<PathBuf>,
    pub start: (f64, f64, f64),
    pub wind: WindModel,
    pub sensors: SensorSettings,
    pub events: Vec<Event>,
    /// Where each event was read, for messages about it found later (a
    /// motor the airframe does not have): `events[i]`, or a fleet
    /// vehicle's own `vehicles[v].events[k]`.
    pub event_keys: Vec<String>,
    /// Events dropped because the run was shortened on the command line
    /// past them (each: its key, action and time).
    pub dropped_events: Vec<String>,
    /// `[autopilot.params]`, set after the autopilot is created.
    pub autopilot_params: crate::inputs::autopilot_params::Params,
    /// `[autopilot]`'s flight stack, when one flies instead of a library.
    pub stack: Option<lockstep_stacks::StackOptions>,
    /// `[expect]`: crash thresholds and the conditions of the verdict.
    pub expect: Expectations,
    /// `[world]`: the origin (when given) and how far a mission may reach.
    pub world: crate::inputs::origin::WorldSettings,
    /// `[montecarlo]`: what a Monte Carlo batch disperses (none when absent).
    pub montecarlo: Option<Dispersions>,
    /// Scales on the aircraft's parameters (`vehicle.mass_scale`,
    /// `inertia_scale`, `battery_capacity_scale`; a Monte Carlo run's
    /// draws multiply them).
    pub adjust: SpecAdjust,
    /// `sensors.noise_scale`: the factor on every sensor and estimator
    /// noise, applied when the sensors are built (a Monte Carlo run's draw
    /// multiplies it).
    pub noise_scale: f64,
}

const DEFAULT_CADENCES_US: [(&str, u64); 8] = [
    ("physics", 1000),
    ("autopilot", 4000),
    ("imu", 4000),
    ("mag", 20_000),
    ("baro", 20_000),
    ("gps", 200_000),
    ("estimator", 4000),
    ("wind", 10_000),
];

impl Scenario {
    /// Where event `i` was read (`events[i]`, or a fleet vehicle's own
    /// `vehicles[v].events[k]`).
    pub fn event_key(&self, i: usize) -> String {
        self.event_keys
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("events[{i}]"))
    }

    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        Scenario::load_with(path, &[])
    }

    /// The scenario at `path` with `overrides` applied to its keys before
    /// validation (an overridden value is checked as one in the file is).
    pub fn load_with(
        path: impl AsRef<Path>,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = Scenario::read_text(path)?;
        Scenario::from_toml_str_with(&text, path, overrides)
    }

    /// The text of the scenario file at `path` (at most
    /// [`MAX_SCENARIO_BYTES`]).
    pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
        lockstep_config::read(path, "scenario")
    }

    /// A scenario from text, as if read from `path` (relative paths in it are
    /// relative to `path`'s directory).
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        Scenario::from_toml_str_with(text, path, &[])
    }

    /// [`Scenario::from_toml_str`] with `overrides` applied first.
    pub fn from_toml_str_with(
        text: &str,
        path: impl AsRef<Path>,
        overrides: &[Override],
    ) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let (table, source) = Scenario::parse_with(text, path, overrides)?;
        if table.contains_key("vehicles") {
            return Err(ConfigError::invalid(
                &source,
                "vehicles",
                "this is a fleet scenario ([[vehicles]]), which `lockstep fly` flies; this needs \
                 a scenario of one [vehicle]",
            ));
        }
        Scenario::from_table(table, path, &source)
    }

    /// The scenario text as a table with `overrides` applied, and the
    /// source its errors name (the path, and the overrides when there are
    /// any; an overridden key is not looked for in the text).
    pub fn parse_with(
        text: &str,
        path: &Path,
        overrides: &[Override],
    ) -> Result<(toml::Table, Source), ScenarioError> {
        let mut source = Source::new(path.display().to_string(), text);
        let mut table = lockstep_config::parse(&source.label, text)?;
        overrides::apply(&mut table, overrides, &source)?;
        // Errors after this point may come from an overridden value.
        if !overrides.is_empty() {
            let given: Vec<&str> = overrides.iter().map(|o| o.given_as.as_str()).collect();
            source.label = format!("{} (with {})", source.label, given.join(", "));
            source.unlocated = overrides.iter().map(|o| o.key.clone()).collect();
        }
        Ok((table, source))
    }

    /// A scenario from its parsed table (see [`Scenario::parse_with`]), as if
    /// read from `path`; `source` names it in errors.
    pub fn from_table(
        table: toml::Table,
        path: &Path,
        source: &Source,
    ) -> Result<Scenario, ScenarioError> {
        // Read section by section (`sections`), each error its key's.
        let f: File = lockstep_config::strict(source, table)?;
        let key_err = |(k, reason): checks::KeyError| ConfigError::invalid(source, &k, reason);
        sections::schema_version(f.schema_version).map_err(key_err)?;
        let (tick, duration, integrator) = sections::simulation(&f.simulation).map_err(key_err)?;
        let cadences = sections::cadences(&f.cadences, tick, duration).map_err(key_err)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let (spec, mission) = sections::vehicle_files(&f.vehicle, dir).map_err(key_err)?;
        let (start, adjust) = sections::placement(&f.vehicle).map_err(key_err)?;
        let noise_scale = match f.sensors.noise_scale {
            Some(k) => within("sensors.noise_scale", k, 0.0, 100.0).map_err(key_err)?,
            None => 1.0,
        };
        let wind = sections::wind(f.wind.as_ref()).map_err(key_err)?;
        let sensors = sensor_settings(&f).map_err(key_err)?;
        // A run shortened on the command line (`--duration`, `--set
        // simulation.duration_s`) drops the timed events past its end and
        // says so; in the file itself such an event is an error.
        let shortened = source
            .unlocated
            .iter()
            .any(|k| k == "simulation.duration_s");
        let timed = sections::events(&f.events, duration, shortened).map_err(key_err)?;
        let autopilot_params = match &f.autopilot {
            Some(a) => crate::inputs::autopilot_params::parse(&a.params).map_err(key_err)?,
            None => Default::default(),
        };
        let stack = match &f.autopilot {
            Some(a) => stack::stack_options(a).map_err(key_err)?,
            None => None,
        };
        let expect = expect::expectations(f.expect.as_ref()).map_err(key_err)?;
        if let Some(st) = &stack {
            stack::refuse_operator_inputs(st.kind, mission.is_some(), &timed.events)
                .map_err(key_err)?;
            stack::refuse_unseen(st.kind, &timed.events, &expect, &cadences).map_err(key_err)?;
        }
        let world = sections::world(f.world.as_ref()).map_err(key_err)?;
        let montecarlo = match &f.montecarlo {
            Some(m) => Some(dispersions::dispersions(m, duration).map_err(key_err)?),
            None => None,
        };
        Ok(Scenario {
            expect,
            world,
            montecarlo,
            adjust,
            noise_scale,
            file: path.to_path_buf(),
            description: f.description,
            seed: f.simulation.seed,
            duration,
            tick,
            engine: f.simulation.engine,
            integrator,
            cadences,
            spec,
            mission,
            start,
            wind,
            sensors,
            event_keys: timed.keys,
            dropped_events: timed.dropped,
            events: timed.events,
            autopilot_params,
            stack,
        })
    }

    /// The cadence named `name`.
    pub fn cadence(&self, name: &str) -> Option<Micros> {
        self.cadences
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.period)
    }
}
