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
mod settings;
mod stack;
#[cfg(test)]
mod tests;
mod types;

use std::path::{Path, PathBuf};

pub use lockstep_config::{ConfigError, Source};
use lockstep_plant::integrate::Method;

use crate::{Cadence, CadenceError, Micros};
pub use checks::{
    MAX_DELAY_US, MAX_DURATION_S, MAX_NOISE_SCALE, MAX_SENSOR_BIAS, MAX_START_OFFSET_M,
    MAX_WIND_MPS,
};
use checks::{MAX_TICK_US, each_within, positive, within};
pub use dispersions::{Dispersions, SpecAdjust};
use events::event;
pub use events::{MAX_TAKEOFF_M, MIN_TAKEOFF_M, action_now};
pub use expect::{
    DEFAULT_FLY_AWAY_MARGIN_M, DEFAULT_IMPACT_SPEED_MPS, DEFAULT_LOSS_OF_CONTROL_S,
    DEFAULT_LOSS_OF_CONTROL_TILT_DEG, DEFAULT_LOSS_OF_CONTROL_YAW_RATE_DPS, Expectations, Spot,
    Volume,
};
use file::{File, PeriodSection, WindKind};
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
        let f: File = lockstep_config::strict(source, table)?;
        let invalid = |key: &str, reason: String| ConfigError::invalid(source, key, reason);
        // A cadence's error is its key's: `cadences.<name>`.
        let cad_err = |e: CadenceError| {
            let name = e.cadence().to_string();
            let text = e.to_string();
            let reason = text
                .strip_prefix(&format!("cadence `{name}`: "))
                .unwrap_or(&text);
            invalid(&format!("cadences.{name}"), reason.to_string())
        };
        if f.schema_version != SCENARIO_SCHEMA_VERSION {
            return Err(invalid(
                "schema_version",
                format!(
                    "{} is not supported (this build reads {SCENARIO_SCHEMA_VERSION})",
                    f.schema_version
                ),
            ));
        }
        let key_err = |(k, reason): checks::KeyError| invalid(&k, reason);
        if f.simulation.tick_us == 0 || f.simulation.tick_us > MAX_TICK_US {
            return Err(invalid(
                "simulation.tick_us",
                format!("must be in [1, {MAX_TICK_US}], is {}", f.simulation.tick_us),
            ));
        }
        let tick = Micros(f.simulation.tick_us);
        positive(
            "simulation.duration_s",
            f.simulation.duration_s,
            MAX_DURATION_S,
        )
        .map_err(key_err)?;
        let duration = checks::duration(
            "simulation.duration_s",
            f.simulation.duration_s,
            MAX_DURATION_S,
        )
        .map_err(key_err)?;
        let integrator = Method::from_name(&f.simulation.integrator).ok_or_else(|| {
            invalid(
                "simulation.integrator",
                format!(
                    "`{}` is not one of euler, rk4, bs32, dp54",
                    f.simulation.integrator
                ),
            )
        })?;
        if f.simulation.engine == EngineKind::EventDriven && !integrator.is_adaptive() {
            return Err(invalid(
                "simulation.integrator",
                format!(
                    "the event_driven engine needs an adaptive integrator (bs32, dp54), not {}",
                    integrator.name()
                ),
            ));
        }
        let c = &f.cadences;
        let given = [
            c.physics,
            c.autopilot,
            c.imu,
            c.mag,
            c.baro,
            c.gps,
            c.estimator,
            c.wind,
        ];
        let mut cadences = Vec::new();
        for ((name, default_us), spec) in DEFAULT_CADENCES_US.iter().zip(given) {
            cadences.push(
                cadence(name, spec, Some(*default_us), tick).map_err(|e| match e {
                    Either::Config(e) => cad_err(e),
                    Either::Key(reason) => invalid(&format!("cadences.{name}"), reason),
                })?,
            );
        }
        // An autopilot that would step once, at t = 0, flies nothing.
        if c.autopilot.is_some()
            && let Some(ap) = cadences.iter().find(|x| x.name == "autopilot")
            && ap.period > duration
        {
            return Err(invalid(
                "cadences.autopilot",
                format!(
                    "{} is longer than the run ({duration}): the autopilot would step once, at t = 0",
                    ap.period
                ),
            ));
        }
        if let Some(spec) = c.log {
            cadences.push(cadence("log", Some(spec), None, tick).map_err(|e| match e {
                Either::Config(e) => cad_err(e),
                Either::Key(reason) => invalid("cadences.log", reason),
            })?);
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let spec = if lockstep_plant::spec::BUILTIN_SPECS
            .iter()
            .any(|(n, _)| *n == f.vehicle.spec)
        {
            f.vehicle.spec.clone()
        } else {
            let p = resolve(dir, &f.vehicle.spec).map_err(|reason| {
                let near = lockstep_plant::spec::nearest_builtin(&f.vehicle.spec)
                    .map(|n| format!("; did you mean `{n}`?"))
                    .unwrap_or_default();
                invalid(
                    "vehicle.spec",
                    format!(
                        "`{}` is not a built-in spec ({}) and {reason}{near}",
                        f.vehicle.spec,
                        lockstep_plant::spec::flyable_builtins().join(", ")
                    ),
                )
            })?;
            p.display().to_string()
        };
        let mission = match f.vehicle.mission.as_deref() {
            Some(m) => Some(resolve(dir, m).map_err(|reason| invalid("vehicle.mission", reason))?),
            None => None,
        };
        let v = &f.vehicle;
        let start = (
            within(
                "vehicle.start_north_m",
                v.start_north_m,
                -MAX_START_OFFSET_M,
                MAX_START_OFFSET_M,
            )
            .map_err(key_err)?,
            within(
                "vehicle.start_east_m",
                v.start_east_m,
                -MAX_START_OFFSET_M,
                MAX_START_OFFSET_M,
            )
            .map_err(key_err)?,
            within("vehicle.start_yaw_deg", v.start_yaw_deg, -360.0, 360.0).map_err(key_err)?,
        );
        let scale = |key: &str, v: Option<f64>| match v {
            Some(x) => within(key, x, 1e-3, 1e3).map_err(key_err),
            None => Ok(1.0),
        };
        let adjust = SpecAdjust {
            mass: scale("vehicle.mass_scale", v.mass_scale)?,
            inertia: scale("vehicle.inertia_scale", v.inertia_scale)?,
            battery_capacity: scale("vehicle.battery_capacity_scale", v.battery_capacity_scale)?,
        };
        let noise_scale = match f.sensors.noise_scale {
            Some(k) => within("sensors.noise_scale", k, 0.0, 100.0).map_err(key_err)?,
            None => 1.0,
        };
        if let Some(w) = &f.wind {
            each_within(
                "wind.mean_ned_mps",
                w.mean_ned_mps,
                -MAX_WIND_MPS,
                MAX_WIND_MPS,
            )
            .map_err(key_err)?;
        }
        let wind = match &f.wind {
            None => WindModel::Constant { ned_mps: [0.0; 3] },
            Some(w) => match w.model {
                WindKind::Constant => {
                    if w.sigma_mps.is_some() || w.tau_s.is_some() {
                        return Err(invalid(
                            "wind",
                            "sigma_mps and tau_s do not apply to model \"constant\"".into(),
                        ));
                    }
                    WindModel::Constant {
                        ned_mps: w.mean_ned_mps,
                    }
                }
                WindKind::OrnsteinUhlenbeck => {
                    let sigma = w
                        .sigma_mps
                        .ok_or_else(|| invalid("wind.sigma_mps", "is required".into()))?;
                    let tau = w
                        .tau_s
                        .ok_or_else(|| invalid("wind.tau_s", "is required".into()))?;
                    each_within("wind.sigma_mps", sigma, 0.0, MAX_WIND_MPS / 2.0)
                        .map_err(key_err)?;
                    for (i, t) in tau.iter().enumerate() {
                        positive(&format!("wind.tau_s[{i}]"), *t, 1e5).map_err(key_err)?;
                    }
                    WindModel::OrnsteinUhlenbeck {
                        mean_ned_mps: w.mean_ned_mps,
                        sigma_mps: sigma,
                        tau_s: tau,
                    }
                }
                WindKind::Dryden => {
                    if w.sigma_mps.is_some() || w.tau_s.is_some() {
                        return Err(invalid(
                            "wind",
                            "sigma_mps and tau_s do not apply to model \"dryden\"".into(),
                        ));
                    }
                    let m = w.mean_ned_mps;
                    let w20 = w.w20_mps.unwrap_or((m[0] * m[0] + m[1] * m[1]).sqrt());
                    within("wind.w20_mps", w20, 0.0, MAX_WIND_MPS).map_err(key_err)?;
                    WindModel::Dryden {
                        mean_ned_mps: m,
                        w20_mps: w20,
                    }
                }
            },
        };
        let sensors = sensor_settings(&f).map_err(|(k, reason)| invalid(&k, reason))?;
        // A run shortened on the command line (`--duration`, `--set
        // simulation.duration_s`) drops the timed events past its end and
        // says so; in the file itself such an event is an error.
        let shortened = source
            .unlocated
            .iter()
            .any(|k| k == "simulation.duration_s");
        let mut events = Vec::with_capacity(f.events.len());
        let mut event_keys = Vec::with_capacity(f.events.len());
        let mut dropped_events = Vec::new();
        for (i, e) in f.events.iter().enumerate() {
            let at_us = match (e.at_s, e.at_us) {
                (Some(s), None) if s.is_finite() => Some((s * 1e6).round() as u64),
                (None, Some(us)) => Some(us),
                _ => None,
            };
            if let Some(at) = at_us.filter(|at| shortened && *at > duration.0) {
                dropped_events.push(format!(
                    "events[{i}] ({} at {}): after the shortened run's end at {}",
                    e.action,
                    lockstep_abi::at(at),
                    lockstep_abi::at(duration.0)
                ));
                continue;
            }
            let key = |k: &str| format!("events[{i}].{k}");
            events.push(event(e, &key, duration).map_err(key_err)?);
            event_keys.push(format!("events[{i}]"));
        }
        let autopilot_params = match &f.autopilot {
            Some(a) => crate::inputs::autopilot_params::parse(&a.params)
                .map_err(|(k, reason)| invalid(&k, reason))?,
            None => Default::default(),
        };
        let stack = match &f.autopilot {
            Some(a) => stack::stack_options(a).map_err(key_err)?,
            None => None,
        };
        let expect = expect::expectations(f.expect.as_ref()).map_err(key_err)?;
        if let Some(st) = &stack {
            stack::refuse_operator_inputs(st.kind, mission.is_some(), &events).map_err(key_err)?;
            stack::refuse_unseen(st.kind, &events, &expect, &cadences).map_err(key_err)?;
        }
        let world = world_settings(f.world.as_ref()).map_err(key_err)?;
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
            event_keys,
            dropped_events,
            events,
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

enum Either {
    Config(CadenceError),
    Key(String),
}

fn cadence(
    name: &str,
    spec: Option<PeriodSection>,
    default_us: Option<u64>,
    tick: Micros,
) -> Result<Cadence, Either> {
    match spec {
        None => {
            Cadence::from_micros(name, default_us.unwrap_or(tick.0), tick).map_err(Either::Config)
        }
        Some(PeriodSection {
            period_us: Some(us),
            period_s: None,
            rate_hz: None,
        }) => Cadence::from_micros(name, us, tick).map_err(Either::Config),
        Some(PeriodSection {
            period_us: None,
            period_s: Some(s),
            rate_hz: None,
        }) => Cadence::from_secs(name, s, tick).map_err(Either::Config),
        Some(PeriodSection {
            period_us: None,
            period_s: None,
            rate_hz: Some(hz),
        }) => Cadence::from_hz(name, hz, tick).map_err(Either::Config),
        Some(_) => Err(Either::Key(
            "give exactly one of period_us, period_s, rate_hz".into(),
        )),
    }
}

/// `p` as given when absolute, else relative to the scenario's directory
/// `dir` (never to the working directory); it must name an existing file.
/// The error names the path that was tried.
fn resolve(dir: &Path, p: &str) -> Result<PathBuf, String> {
    let path = Path::new(p);
    let resolved = if path.is_absolute() {
        path.to_path_buf()
    } else {
        dir.join(path)
    };
    match std::fs::metadata(&resolved) {
        Ok(m) if m.is_file() => Ok(resolved),
        Ok(m) => Err(format!(
            "{} is {}, not a regular file",
            resolved.display(),
            lockstep_config::kind_of(m.file_type())
        )),
        Err(e) if path.is_absolute() => Err(format!("{}: {e}", resolved.display())),
        Err(e) => Err(format!(
            "{}: {e} (relative paths are relative to the scenario's directory)",
            resolved.display()
        )),
    }
}

/// `[world]`: all three origin keys or none; the distance bound.
fn world_settings(
    w: Option<&file::WorldSection>,
) -> Result<crate::inputs::origin::WorldSettings, checks::KeyError> {
    let mut settings = crate::inputs::origin::WorldSettings::default();
    let Some(w) = w else {
        return Ok(settings);
    };
    match (w.origin_lat_deg, w.origin_lon_deg, w.origin_alt_m) {
        (None, None, None) => {}
        (Some(lat), Some(lon), Some(alt)) => {
            settings.origin = Some(crate::inputs::origin::Geo {
                lat_deg: within("world.origin_lat_deg", lat, -90.0, 90.0)?,
                lon_deg: within("world.origin_lon_deg", lon, -180.0, 180.0)?,
                alt_m: within("world.origin_alt_m", alt, -500.0, 9000.0)?,
            });
        }
        _ => {
            return Err((
                "world".into(),
                "give all of origin_lat_deg, origin_lon_deg and origin_alt_m, or none".into(),
            ));
        }
    }
    if let Some(d) = w.max_mission_distance_m {
        settings.max_mission_distance_m = positive("world.max_mission_distance_m", d, 1_000_000.0)?;
    }
    Ok(settings)
}
