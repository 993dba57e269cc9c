//! The scenario file's sections read into a scenario's values, a stage
//! each, in the order [`super::Scenario::from_table`] reads them; each
//! error names its key and says why ([`KeyError`]).

use std::path::{Path, PathBuf};

use lockstep_plant::integrate::Method;

use super::checks::{
    self, KeyError, MAX_DURATION_S, MAX_START_OFFSET_M, MAX_TICK_US, MAX_WIND_MPS, each_within,
    positive, within,
};
use super::dispersions::SpecAdjust;
use super::events::event;
use super::file::{
    CadencesSection, EventSection, PeriodSection, SimulationSection, VehicleSection, WindKind,
    WindSection, WorldSection,
};
use super::{DEFAULT_CADENCES_US, EngineKind, Event, SCENARIO_SCHEMA_VERSION, WindModel};
use crate::inputs::origin::{Geo, WorldSettings};
use crate::{Cadence, CadenceError, Micros};

/// The file's format version: this build's.
pub(super) fn schema_version(v: u32) -> Result<(), KeyError> {
    if v != SCENARIO_SCHEMA_VERSION {
        return Err((
            "schema_version".into(),
            format!("{v} is not supported (this build reads {SCENARIO_SCHEMA_VERSION})"),
        ));
    }
    Ok(())
}

/// `[simulation]`: the base tick, the run's duration, the integrator (an
/// adaptive one for the event-driven engine).
pub(super) fn simulation(s: &SimulationSection) -> Result<(Micros, Micros, Method), KeyError> {
    if s.tick_us == 0 || s.tick_us > MAX_TICK_US {
        return Err((
            "simulation.tick_us".into(),
            format!("must be in [1, {MAX_TICK_US}], is {}", s.tick_us),
        ));
    }
    let tick = Micros(s.tick_us);
    positive("simulation.duration_s", s.duration_s, MAX_DURATION_S)?;
    let duration = checks::duration("simulation.duration_s", s.duration_s, MAX_DURATION_S)?;
    let integrator = Method::from_name(&s.integrator).ok_or_else(|| {
        (
            "simulation.integrator".to_string(),
            format!("`{}` is not one of euler, rk4, bs32, dp54", s.integrator),
        )
    })?;
    if s.engine == EngineKind::EventDriven && !integrator.is_adaptive() {
        return Err((
            "simulation.integrator".into(),
            format!(
                "the event_driven engine needs an adaptive integrator (bs32, dp54), not {}",
                integrator.name()
            ),
        ));
    }
    Ok((tick, duration, integrator))
}

/// A cadence's error is its key's (`cadences.<name>`).
fn cadence_error(e: Either) -> KeyError {
    match e {
        Either::Config(e) => {
            let name = e.cadence().to_string();
            let text = e.to_string();
            let reason = text
                .strip_prefix(&format!("cadence `{name}`: "))
                .unwrap_or(&text);
            (format!("cadences.{name}"), reason.to_string())
        }
        Either::Key(name, reason) => (format!("cadences.{name}"), reason),
    }
}

/// `[cadences]`: each one given or its default, on the base tick `tick`;
/// an autopilot that steps within the run; the log's when given.
pub(super) fn cadences(
    c: &CadencesSection,
    tick: Micros,
    duration: Micros,
) -> Result<Vec<Cadence>, KeyError> {
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
        cadences.push(cadence(name, spec, Some(*default_us), tick).map_err(cadence_error)?);
    }
    // An autopilot that would step once, at t = 0, flies nothing.
    if c.autopilot.is_some()
        && let Some(ap) = cadences.iter().find(|x| x.name == "autopilot")
        && ap.period > duration
    {
        return Err((
            "cadences.autopilot".into(),
            format!(
                "{} is longer than the run ({duration}): the autopilot would step once, at t = 0",
                ap.period
            ),
        ));
    }
    if let Some(spec) = c.log {
        cadences.push(cadence("log", Some(spec), None, tick).map_err(cadence_error)?);
    }
    Ok(cadences)
}

/// `vehicle.spec` (a built-in's name, else a file relative to the
/// scenario's directory `dir`) and `vehicle.mission`.
pub(super) fn vehicle_files(
    v: &VehicleSection,
    dir: &Path,
) -> Result<(String, Option<PathBuf>), KeyError> {
    let spec = if lockstep_plant::spec::BUILTIN_SPECS
        .iter()
        .any(|(n, _)| *n == v.spec)
    {
        v.spec.clone()
    } else {
        let p = resolve(dir, &v.spec).map_err(|reason| {
            let near = lockstep_plant::spec::nearest_builtin(&v.spec)
                .map(|n| format!("; did you mean `{n}`?"))
                .unwrap_or_default();
            (
                "vehicle.spec".to_string(),
                format!(
                    "`{}` is not a built-in spec ({}) and {reason}{near}",
                    v.spec,
                    lockstep_plant::spec::flyable_builtins().join(", ")
                ),
            )
        })?;
        p.display().to_string()
    };
    let mission = match v.mission.as_deref() {
        Some(m) => Some(resolve(dir, m).map_err(|reason| ("vehicle.mission".to_string(), reason))?),
        None => None,
    };
    Ok((spec, mission))
}

/// Where the vehicle starts (north, east, yaw) and how its spec is scaled.
pub(super) fn placement(v: &VehicleSection) -> Result<((f64, f64, f64), SpecAdjust), KeyError> {
    let start = (
        within(
            "vehicle.start_north_m",
            v.start_north_m,
            -MAX_START_OFFSET_M,
            MAX_START_OFFSET_M,
        )?,
        within(
            "vehicle.start_east_m",
            v.start_east_m,
            -MAX_START_OFFSET_M,
            MAX_START_OFFSET_M,
        )?,
        within("vehicle.start_yaw_deg", v.start_yaw_deg, -360.0, 360.0)?,
    );
    let scale = |key: &str, v: Option<f64>| match v {
        Some(x) => within(key, x, 1e-3, 1e3),
        None => Ok(1.0),
    };
    let adjust = SpecAdjust {
        mass: scale("vehicle.mass_scale", v.mass_scale)?,
        inertia: scale("vehicle.inertia_scale", v.inertia_scale)?,
        battery_capacity: scale("vehicle.battery_capacity_scale", v.battery_capacity_scale)?,
    };
    Ok((start, adjust))
}

/// `[wind]`: its model with the keys that model takes (calm without it).
pub(super) fn wind(w: Option<&WindSection>) -> Result<WindModel, KeyError> {
    let Some(w) = w else {
        return Ok(WindModel::Constant { ned_mps: [0.0; 3] });
    };
    each_within(
        "wind.mean_ned_mps",
        w.mean_ned_mps,
        -MAX_WIND_MPS,
        MAX_WIND_MPS,
    )?;
    let no_turbulence = |model: &str| {
        if w.sigma_mps.is_some() || w.tau_s.is_some() {
            Err((
                "wind".to_string(),
                format!("sigma_mps and tau_s do not apply to model \"{model}\""),
            ))
        } else {
            Ok(())
        }
    };
    Ok(match w.model {
        WindKind::Constant => {
            no_turbulence("constant")?;
            WindModel::Constant {
                ned_mps: w.mean_ned_mps,
            }
        }
        WindKind::OrnsteinUhlenbeck => {
            let sigma = w
                .sigma_mps
                .ok_or_else(|| ("wind.sigma_mps".to_string(), "is required".to_string()))?;
            let tau = w
                .tau_s
                .ok_or_else(|| ("wind.tau_s".to_string(), "is required".to_string()))?;
            each_within("wind.sigma_mps", sigma, 0.0, MAX_WIND_MPS / 2.0)?;
            for (i, t) in tau.iter().enumerate() {
                positive(&format!("wind.tau_s[{i}]"), *t, 1e5)?;
            }
            WindModel::OrnsteinUhlenbeck {
                mean_ned_mps: w.mean_ned_mps,
                sigma_mps: sigma,
                tau_s: tau,
            }
        }
        WindKind::Dryden => {
            no_turbulence("dryden")?;
            let m = w.mean_ned_mps;
            let w20 = w.w20_mps.unwrap_or((m[0] * m[0] + m[1] * m[1]).sqrt());
            within("wind.w20_mps", w20, 0.0, MAX_WIND_MPS)?;
            WindModel::Dryden {
                mean_ned_mps: m,
                w20_mps: w20,
            }
        }
    })
}

/// The events of a run, each with its key (`events[i]`), and those
/// dropped from a run `shortened` on the command line.
pub(super) struct Timed {
    pub events: Vec<Event>,
    pub keys: Vec<String>,
    pub dropped: Vec<String>,
}

/// `[[events]]`, in the run ending at `duration`.
pub(super) fn events(
    given: &[EventSection],
    duration: Micros,
    shortened: bool,
) -> Result<Timed, KeyError> {
    let mut t = Timed {
        events: Vec::with_capacity(given.len()),
        keys: Vec::with_capacity(given.len()),
        dropped: Vec::new(),
    };
    for (i, e) in given.iter().enumerate() {
        let at_us = match (e.at_s, e.at_us) {
            (Some(s), None) if s.is_finite() => Some((s * 1e6).round() as u64),
            (None, Some(us)) => Some(us),
            _ => None,
        };
        if let Some(at) = at_us.filter(|at| shortened && *at > duration.0) {
            t.dropped.push(format!(
                "events[{i}] ({} at {}): after the shortened run's end at {}",
                e.action,
                lockstep_abi::at(at),
                lockstep_abi::at(duration.0)
            ));
            continue;
        }
        let key = |k: &str| format!("events[{i}].{k}");
        t.events.push(event(e, &key, duration)?);
        t.keys.push(format!("events[{i}]"));
    }
    Ok(t)
}

/// A cadence refused by its own checks, or (its name and why) by the
/// file's shape.
enum Either {
    Config(CadenceError),
    Key(String, String),
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
            name.to_string(),
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
pub(super) fn world(w: Option<&WorldSection>) -> Result<WorldSettings, KeyError> {
    let mut settings = WorldSettings::default();
    let Some(w) = w else {
        return Ok(settings);
    };
    match (w.origin_lat_deg, w.origin_lon_deg, w.origin_alt_m) {
        (None, None, None) => {}
        (Some(lat), Some(lon), Some(alt)) => {
            settings.origin = Some(Geo {
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
