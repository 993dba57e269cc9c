//! Building a run from a scenario, in parts that every front end shares:
//! the spec resolved and adjusted, the world origin chosen and the plant
//! built ([`resolve`]); the autopilot loaded, configured and given its
//! mission ([`open_autopilot`]); the world's timeline, events and wind
//! ([`build_world`]); the sensors and estimator ([`build_avionics`]); and,
//! for the whole-vehicle engine, the plant's integrator and the log.

use std::path::{Path, PathBuf};

use lockstep_abi::{Autopilot, Isolation};
use lockstep_plant::{AircraftSpec, Multirotor};

use super::autopilot_config::autopilot_config;
use super::avionics::Avionics;
use super::plant_runner::PlantRunner;
use super::vehicle::Vehicle;
use super::world::{Cad, World};
use super::{Engine, EngineError, logging, numbered};
use crate::Micros;
use crate::environment::sensors::{Baro, Estimator, Gps, History, Imu, Mag};
use crate::environment::wind::Wind;
use crate::inputs::mission::Mission;
use crate::inputs::scenario::{Action, EngineKind, Scenario, Trigger};
use crate::outcome::verdict::{Monitor, plan_items};
use crate::time::rng::RngStreams;
use crate::time::timeline::Timeline;
use lockstep_plant::integrate::{Method, Options};

/// An error about the scenario file's content.
pub(crate) fn invalid(scenario: &Scenario, reason: String) -> EngineError {
    EngineError::Invalid {
        file: scenario.file.display().to_string(),
        reason,
    }
}

/// The scenario's aircraft: the adjusted spec, the plant built at the world
/// origin, and the mission (if any).
pub(crate) struct Resolved {
    pub(crate) spec: AircraftSpec,
    pub(crate) plant: Multirotor,
    pub(crate) mission: Option<Mission>,
}

pub(crate) fn resolve(scenario: &Scenario) -> Result<Resolved, EngineError> {
    let invalid = |reason: String| invalid(scenario, reason);
    let mut spec = AircraftSpec::resolve(&scenario.spec)?;
    scenario.adjust.apply(&mut spec);
    let mission = match &scenario.mission {
        Some(m) => Some((m.as_path(), Mission::load(m)?)),
        None => None,
    };
    // The world origin: the scenario's, the mission's home, or the
    // spec's; a mission far from it is refused.
    let env = &mut spec.environment;
    let spec_origin = crate::inputs::origin::Geo {
        lat_deg: env.origin_lat_deg,
        lon_deg: env.origin_lon_deg,
        alt_m: env.origin_alt_m,
    };
    let (origin, _) = crate::inputs::origin::origin(
        &scenario.world,
        spec_origin,
        mission.as_ref().map(|(p, m)| (*p, m)),
    )
    .map_err(&invalid)?;
    env.origin_lat_deg = origin.lat_deg;
    env.origin_lon_deg = origin.lon_deg;
    env.origin_alt_m = origin.alt_m;
    let plant = spec.build_named(&scenario.spec)?;
    for (i, ev) in scenario.events.iter().enumerate() {
        let key = scenario.event_key(i);
        match ev.action {
            Action::MotorFail { motor }
            | Action::MotorRestore { motor }
            | Action::ThrustLoss { motor, .. }
                if motor >= plant.rotors.len() =>
            {
                return Err(invalid(format!(
                    "key `{key}.motor`: motor {motor}, but {} has {}",
                    plant.name,
                    numbered(plant.rotors.len(), "motor")
                )));
            }
            Action::BatteryDisconnect { battery } | Action::BatteryReconnect { battery }
                if battery >= plant.batteries.len() =>
            {
                return Err(invalid(format!(
                    "key `{key}.battery`: battery {battery}, but {} has {}",
                    plant.name,
                    numbered(plant.batteries.len(), "battery")
                )));
            }
            _ => {}
        }
    }
    Ok(Resolved {
        spec,
        plant,
        mission: mission.map(|(_, m)| m),
    })
}

/// A cadence's period, or an error naming it.
pub(crate) fn period(scenario: &Scenario, name: &str) -> Result<Micros, EngineError> {
    scenario
        .cadence(name)
        .ok_or_else(|| invalid(scenario, format!("no `{name}` cadence")))
}

/// The autopilot library loaded and validated, configured for `plant`, with
/// the scenario's parameters set and its mission uploaded.
pub(crate) fn open_autopilot(
    scenario: &Scenario,
    resolved: &Resolved,
    autopilot: &Path,
    isolation: &Isolation,
) -> Result<Autopilot, EngineError> {
    let ap_period = period(scenario, "autopilot")?;
    let config = autopilot_config(&resolved.plant, ap_period);
    if let Some(stack) = &scenario.stack {
        // A flight stack over its simulator protocol: no parameters or
        // mission to give it here (the scenario refuses them).
        return Ok(Autopilot::from_stack(
            lockstep_stacks::open(stack, &config)?,
            &config,
        )?);
    }
    let mut ap = Autopilot::open(autopilot, &config, isolation)?;
    crate::inputs::autopilot_params::apply(&mut ap, &scenario.autopilot_params)
        .map_err(|(key, e)| invalid(scenario, format!("key `{key}`: {e}")))?;
    if let Some(m) = &resolved.mission {
        ap.upload_mission(&m.items)?;
    }
    Ok(ap)
}

/// Whose physics a world's vehicle runs, which decides the boundaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Physics {
    /// Ours at the scenario's engine: fixed-step has physics boundaries,
    /// event-driven spans the intervals between the others.
    Own,
    /// The host's: no physics or log boundaries, the host steps its plant
    /// from one boundary of the sensors and autopilot to the next.
    Host,
}

/// The world: the timeline of the cadences and event times, the events,
/// the wind; and the finest period on it.
pub(crate) fn build_world(
    scenario: &Scenario,
    physics: Physics,
) -> Result<(World, u64), EngineError> {
    let physics_period = period(scenario, "physics")?;
    let event_times: Vec<Micros> = scenario
        .events
        .iter()
        .filter_map(|e| match e.trigger {
            Trigger::At(t) => Some(t),
            Trigger::When(_) => None,
        })
        .collect();
    let keep = |name: &str| match (physics, scenario.engine) {
        (Physics::Own, EngineKind::FixedStep) => true,
        (Physics::Own, EngineKind::EventDriven) => name != "physics",
        (Physics::Host, _) => name != "physics" && name != "log",
    };
    let cadences: Vec<_> = scenario
        .cadences
        .iter()
        .filter(|c| keep(&c.name))
        .cloned()
        .collect();
    let finest = cadences
        .iter()
        .map(|c| c.period.0)
        .min()
        .unwrap_or(physics_period.0);
    let timeline = Timeline::new(cadences, event_times, scenario.duration)?;
    let idx = |name: &str| {
        timeline
            .index_of(name)
            .ok_or_else(|| invalid(scenario, format!("no `{name}` cadence")))
    };
    let cad = Cad {
        autopilot: idx("autopilot")?,
        imu: idx("imu")?,
        mag: idx("mag")?,
        baro: idx("baro")?,
        gps: idx("gps")?,
        estimator: idx("estimator")?,
        wind: idx("wind")?,
        log: timeline.index_of("log"),
    };
    let rng = RngStreams::new(scenario.seed);
    let world = World {
        timeline,
        cad,
        wind: Wind::new(scenario.wind, rng.stream("wind")),
        wind_now: [0.0; 3],
        events: scenario.events.iter().map(|e| (*e, false)).collect(),
        pending_when: scenario
            .events
            .iter()
            .filter(|e| matches!(e.trigger, Trigger::When(_)))
            .count(),
        mission_started: None,
        now: Micros::ZERO,
        boundaries: 0,
        journal: Default::default(),
        destinations: Vec::new(),
    };
    Ok((world, finest))
}

/// The sensors and estimator of the scenario for `plant` (its origin), with
/// a truth history long enough for their delays at boundaries `finest`
/// apart, feeding `ap`.
pub(crate) fn build_avionics(
    scenario: &Scenario,
    plant: &Multirotor,
    ap: Autopilot,
    finest: u64,
) -> Result<Avionics, EngineError> {
    // A takeoff height reaches the autopilot in ABI 4's commands only.
    let abi = ap.abi_version();
    if !ap.is_stack() && abi < 4 {
        for (i, ev) in scenario.events.iter().enumerate() {
            if let Action::Takeoff { height_m: Some(_) } = ev.action {
                return Err(invalid(
                    scenario,
                    format!(
                        "key `{}.height_m`: the autopilot implements ABI version {abi}, \
                         which has no takeoff height (ABI 4 has); leave it out to take off \
                         to the autopilot's own height",
                        scenario.event_key(i)
                    ),
                ));
            }
        }
    }
    let rng = RngStreams::new(scenario.seed);
    let mut sensors = scenario.sensors;
    if scenario.noise_scale != 1.0 {
        sensors.scale_noise(scenario.noise_scale);
    }
    let gps_cfg = sensors.gps;
    let est_cfg = sensors.estimator;
    let longest = gps_cfg.delay.0.max(est_cfg.delay.0);
    let event_times = scenario
        .events
        .iter()
        .filter(|e| matches!(e.trigger, Trigger::At(_)))
        .count();
    let history = History::with_capacity((longest / finest) as usize + event_times + 4);
    let origin = plant.origin;
    Ok(Avionics::new(
        Imu::new(sensors.imu, rng.stream("sensor.imu")),
        Mag::new(
            sensors.mag_field_ned_gauss,
            sensors.mag_noise_gauss,
            rng.stream("sensor.mag"),
        ),
        Baro::new(
            origin.geodetic.alt_m,
            sensors.baro_noise_pa,
            rng.stream("sensor.baro"),
        ),
        Gps::new(gps_cfg, origin, rng.stream("sensor.gps")),
        Estimator::new(est_cfg, rng.stream("estimator")),
        history,
        ap,
    ))
}

/// `plant` at rest at the scenario's start, stepped by its integrator: at
/// most one physics period per step for the fixed-step engine, up to the
/// whole interval between boundaries for the event-driven one.
fn plant_runner(scenario: &Scenario, plant: Multirotor) -> Result<PlantRunner, EngineError> {
    let opts = match scenario.engine {
        EngineKind::FixedStep => Options {
            max_step_ticks: period(scenario, "physics")?.0,
            ..Options::default()
        },
        EngineKind::EventDriven => Options {
            max_step_ticks: scenario.duration.0.max(1),
            ..Options::default()
        },
    };
    let (n, e, yaw) = scenario.start;
    let x = plant.resting_state(n, e, yaw.to_radians());
    Ok(PlantRunner::new(plant, x, scenario.integrator, opts)?)
}

/// Why [`PlantRunner::of_aircraft`] refused.
#[derive(Debug, thiserror::Error)]
pub enum AircraftPlantError {
    /// The aircraft: not built in, no file, or an invalid spec.
    #[error(transparent)]
    Spec(#[from] lockstep_plant::SpecError),
    /// The integrator's options (a step it cannot take).
    #[error("integrator options: {0}")]
    Options(#[from] lockstep_plant::integrate::IntegratorError),
}

impl PlantRunner {
    /// An aircraft alone, for a host with its own controller: `spec` is a
    /// built-in name or a spec file; at rest at the origin; integrated by
    /// `method` in steps of at most `max_step_us` (0: 1000).
    pub fn of_aircraft(
        spec: &str,
        method: Method,
        max_step_us: u64,
    ) -> Result<PlantRunner, AircraftPlantError> {
        let plant = AircraftSpec::resolve(spec)?.build_named(spec)?;
        let x = plant.resting_state(0.0, 0.0, 0.0);
        let opts = Options {
            max_step_ticks: if max_step_us == 0 { 1000 } else { max_step_us },
            ..Options::default()
        };
        Ok(PlantRunner::new(plant, x, method, opts)?)
    }

    /// The plant a scenario flies, as a whole vehicle would: its aircraft at
    /// the world origin, at rest at the start, with the scenario's
    /// integrator (for a host that runs its own controller or autopilot).
    pub fn from_scenario(scenario: &Scenario) -> Result<PlantRunner, EngineError> {
        let Resolved { plant, .. } = resolve(scenario)?;
        plant_runner(scenario, plant)
    }
}

impl Engine {
    /// Builds the run of `scenario` with the autopilot library at
    /// `autopilot`, logging to `log` when the scenario has a log cadence;
    /// the library runs as [`Isolation::default`] says.
    pub fn new(
        scenario: &Scenario,
        autopilot: &Path,
        log: Option<&Path>,
    ) -> Result<Engine, EngineError> {
        Engine::with_isolation(scenario, autopilot, log, &Isolation::default())
    }

    /// [`Engine::new`] with the autopilot in this process or isolated in a
    /// child process, as `isolation` says.
    pub fn with_isolation(
        scenario: &Scenario,
        autopilot: &Path,
        log: Option<&Path>,
        isolation: &Isolation,
    ) -> Result<Engine, EngineError> {
        let resolved = resolve(scenario)?;
        period(scenario, "physics")?;
        let ap = open_autopilot(scenario, &resolved, autopilot, isolation)?;
        let ap_label = ap.stack_description().map(PathBuf::from);
        let (world, finest) = build_world(scenario, Physics::Own)?;
        let Resolved {
            spec,
            plant,
            mission,
        } = resolved;
        let mut monitor = Monitor::new(scenario.expect);
        if scenario.stack.is_some() {
            monitor.without_mission_fence();
        }
        if let Some(m) = &mission {
            monitor.set_mission(
                (scenario.start.0, scenario.start.1, 0.0),
                &plan_items(&plant.origin, &m.items),
            );
        }
        let avionics = build_avionics(scenario, &plant, ap, finest)?;
        let row = logging::shaped_row(&plant);
        let (log, log_meta) = match (log, world.cad.log) {
            (Some(path), Some(_)) => {
                // A flight stack is named by its kind and address.
                let named = ap_label.as_deref().unwrap_or(autopilot);
                let (log, meta) = logging::open_log(scenario, &plant, named, path)?;
                (Some(log), Some(meta))
            }
            _ => (None, None),
        };
        let physics = plant_runner(scenario, plant)?;
        Ok(Engine {
            world,
            vehicle: Vehicle::new(physics, avionics, monitor),
            outputs: super::outputs::Outputs::new(log, log_meta, row),
            spec,
            seed: scenario.seed,
            interrupt: None,
            wind_offset: [0.0; 3],
            stack_notes: Vec::new(),
            pace: None,
            finished: false,
        })
    }
}
