//! The lockstep engine: fixed-step or event-driven.
//!
//! Fixed-step: the physics cadence is a timeline cadence, and the plant steps
//! between boundaries with the scenario's integrator at that step.
//! Event-driven: no physics boundaries; an adaptive integrator spans each
//! interval between consecutive boundaries of the other cadences and events.
//!
//! Built once from a scenario (library loaded and validated, plant built,
//! every buffer preallocated), then [`Engine::step`] processes one timeline
//! boundary: the plant is first integrated from the previous boundary with
//! everything held, then the stages run in [`crate::stage::STAGE_ORDER`]:
//! scenario events, faults, wind, sensors and estimator, autopilot, logging.
//! [`Engine::run`] loops over `step` to the end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot, Isolation};
use lockstep_plant::integrate::{Integrator, IntegratorError, Options};
use lockstep_plant::multirotor::{MAX_BATTERIES, MAX_ROTORS};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs, PlantOutputs, SpecError};

use crate::log::{FlightLog, LogRow};
use crate::log_meta::LogMeta;
use crate::mission::{Mission, MissionError};
use crate::record::{RecordError, Recorder};
use crate::rng::RngStreams;
use crate::scenario::{Action, Condition, EngineKind, Event, Scenario, SensorId, Trigger};
use crate::sensors::{Baro, Estimator, Gps, History, Imu, Mag, Truth};
use crate::timeline::{Due, Timeline};
use crate::vehicle::autopilot_config;
use crate::verdict::{End, Monitor, Sample, Verdict};
use crate::wind::{Gust, Wind};
use crate::{ConfigError, Micros};

mod events;
mod logging;

/// Why a run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Abi(#[from] AbiError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Mission(#[from] MissionError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the plant integration failed: {0}")]
    Integrator(#[from] IntegratorError),
    #[error("scenario {file}: {reason}")]
    Invalid { file: String, reason: String },
    #[error(
        "cannot record to {path}: recording must start before the first step (now at {now_us} us)"
    )]
    RecordTooLate { path: String, now_us: u64 },
    #[error("flight log: {0}")]
    Log(#[from] std::io::Error),
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A signal (SIGINT, SIGTERM) asked the run to stop; everything up to
    /// `time_us` was written.
    #[error("interrupted by {} at {}", lockstep_abi::signal_name(*signal), lockstep_abi::at(*time_us))]
    Interrupted { signal: i32, time_us: u64 },
}

/// The faults in force, set by scenario events; the faults stage turns them
/// into plant inputs and sensor faults.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FaultState {
    motor_failed: [bool; MAX_ROTORS],
    thrust_loss: [f64; MAX_ROTORS],
    battery_disconnected: [bool; MAX_BATTERIES],
    sensors: [SensorFault; 5],
}

impl Default for FaultState {
    fn default() -> Self {
        FaultState {
            motor_failed: [false; MAX_ROTORS],
            thrust_loss: [0.0; MAX_ROTORS],
            battery_disconnected: [false; MAX_BATTERIES],
            sensors: [SensorFault::default(); 5],
        }
    }
}

/// What one sensor fault does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct SensorFault {
    dropout: bool,
    freeze: bool,
    bias: f64,
}

/// `4 motors, numbered 0 to 3`, `1 battery, numbered 0`.
fn numbered(n: usize, what: &str) -> String {
    match n {
        0 => format!("no {what}"),
        1 => format!("1 {what}, numbered 0"),
        _ => format!(
            "{n} {}, numbered 0 to {}",
            if what == "battery" {
                "batteries".to_string()
            } else {
                format!("{what}s")
            },
            n - 1
        ),
    }
}

/// Fault bits in the log's `faults` column.
pub mod fault_bits {
    /// Motor `i` failed: bit `i`.
    pub const MOTOR_FAILED: u32 = 0;
    /// Thrust loss on any motor.
    pub const THRUST_LOSS: u32 = 16;
    /// Battery `j` disconnected: bit `20 + j`.
    pub const BATTERY: u32 = 20;
    /// Sensor `k` (imu, mag, baro, gps, estimator) faulted: bit `32 + k`.
    pub const SENSOR: u32 = 32;
}

/// Indices of the engine's cadences in the timeline.
#[derive(Debug, Clone, Copy)]
struct Cad {
    autopilot: usize,
    imu: usize,
    mag: usize,
    baro: usize,
    gps: usize,
    estimator: usize,
    wind: usize,
    log: Option<usize>,
}

/// Boundaries between two calls of [`Engine::run_observed`]'s progress.
pub const PROGRESS_EVERY: u32 = 4096;

/// Where a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub end: Micros,
    pub boundaries: u64,
    pub position_ned_m: [f64; 3],
    pub mode: u32,
    pub armed: bool,
    pub mission_finished: bool,
    pub soc: f64,
    pub log_rows: u64,
    /// Crashes detected and the scenario's `[expect]` checks.
    pub verdict: Verdict,
    /// Events, mode changes, failsafes and crashes in time order.
    pub timeline: Vec<crate::journal::Entry>,
    /// Timeline entries dropped past [`crate::journal::MAX_ENTRIES`].
    pub timeline_dropped: u64,
    /// The largest tilt and the smallest state of charge seen by the
    /// verdict's monitor (at the autopilot's cadence), and whether the
    /// vehicle ended on the ground.
    pub max_tilt_deg: f64,
    pub min_soc: f64,
    pub on_ground: bool,
}

pub struct Engine {
    plant: Multirotor,
    x: Vec<f64>,
    inputs: PlantInputs,
    integ: Integrator,
    ap: Autopilot,
    frame: lockstep_sensor_frame,
    act: lockstep_actuator_frame,
    timeline: Timeline,
    cad: Cad,
    wind: Wind,
    wind_now: [f64; 3],
    imu: Imu,
    mag: Mag,
    baro: Baro,
    gps: Gps,
    est: Estimator,
    history: History,
    events: Vec<(Event, bool)>,
    /// Condition-triggered events not yet fired (checked every boundary).
    pending_when: usize,
    faults: FaultState,
    /// The fault state changed since the faults stage last ran.
    faults_changed: bool,
    sensor_faults: [SensorFault; 5],
    pending: lockstep_commands,
    pending_fresh: bool,
    prev: Micros,
    mission_started: Option<Micros>,
    boundaries: u64,
    log: Option<FlightLog>,
    /// The log's path and sidecar, rewritten when the log is finished.
    log_meta: Option<(PathBuf, LogMeta)>,
    row: LogRow,
    spec: AircraftSpec,
    options: Options,
    method: lockstep_plant::integrate::Method,
    seed: u64,
    recorder: Option<Recorder>,
    /// Set to a signal number to stop [`Engine::run`] at the next boundary.
    interrupt: Option<Arc<AtomicUsize>>,
    monitor: Monitor,
    journal: crate::journal::Journal,
    /// The contact flag at the last autopilot boundary.
    on_ground: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("now", &self.prev)
            .field("boundaries", &self.boundaries)
            .finish_non_exhaustive()
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
        let file = scenario.file.display().to_string();
        let invalid = |reason: String| EngineError::Invalid {
            file: file.clone(),
            reason,
        };
        let mut spec = AircraftSpec::resolve(&scenario.spec)?;
        scenario.adjust.apply(&mut spec);
        let mission = match &scenario.mission {
            Some(m) => Some((m.as_path(), Mission::load(m)?)),
            None => None,
        };
        // The world origin: the scenario's, the mission's home, or the
        // spec's; a mission far from it is refused.
        let env = &mut spec.environment;
        let spec_origin = crate::world::Geo {
            lat_deg: env.origin_lat_deg,
            lon_deg: env.origin_lon_deg,
            alt_m: env.origin_alt_m,
        };
        let (origin, _) = crate::world::origin(
            &scenario.world,
            spec_origin,
            mission.as_ref().map(|(p, m)| (*p, m)),
        )
        .map_err(&invalid)?;
        env.origin_lat_deg = origin.lat_deg;
        env.origin_lon_deg = origin.lon_deg;
        env.origin_alt_m = origin.alt_m;
        let plant = spec.build_named(&scenario.spec)?;
        let (n, e, yaw) = scenario.start;
        let x = plant.resting_state(n, e, yaw.to_radians());
        for (i, ev) in scenario.events.iter().enumerate() {
            match ev.action {
                Action::MotorFail { motor }
                | Action::MotorRestore { motor }
                | Action::ThrustLoss { motor, .. }
                    if motor >= plant.rotors.len() =>
                {
                    return Err(invalid(format!(
                        "key `events[{i}].motor`: motor {motor}, but {} has {}",
                        plant.name,
                        numbered(plant.rotors.len(), "motor")
                    )));
                }
                Action::BatteryDisconnect { battery } | Action::BatteryReconnect { battery }
                    if battery >= plant.batteries.len() =>
                {
                    return Err(invalid(format!(
                        "key `events[{i}].battery`: battery {battery}, but {} has {}",
                        plant.name,
                        numbered(plant.batteries.len(), "battery")
                    )));
                }
                _ => {}
            }
        }
        let period = |name: &str| {
            scenario
                .cadence(name)
                .ok_or_else(|| invalid(format!("no `{name}` cadence")))
        };
        let physics = period("physics")?;
        let ap_period = period("autopilot")?;
        let mut ap = Autopilot::open(autopilot, &autopilot_config(&plant, ap_period), isolation)?;
        crate::autopilot_params::apply(&mut ap, &scenario.autopilot_params)
            .map_err(|(key, e)| invalid(format!("key `{key}`: {e}")))?;
        if let Some((_, m)) = &mission {
            ap.upload_mission(&m.items)?;
        }
        let event_times: Vec<Micros> = scenario
            .events
            .iter()
            .filter_map(|e| match e.trigger {
                Trigger::At(t) => Some(t),
                Trigger::When(_) => None,
            })
            .collect();
        // The event-driven engine has no physics boundaries: the adaptive
        // integrator spans each interval between the others.
        let cadences: Vec<_> = match scenario.engine {
            EngineKind::FixedStep => scenario.cadences.clone(),
            EngineKind::EventDriven => scenario
                .cadences
                .iter()
                .filter(|c| c.name != "physics")
                .cloned()
                .collect(),
        };
        let finest = cadences
            .iter()
            .map(|c| c.period.0)
            .min()
            .unwrap_or(physics.0);
        let timeline = Timeline::new(cadences, event_times.clone(), scenario.duration)?;
        let idx = |name: &str| {
            timeline
                .index_of(name)
                .ok_or_else(|| invalid(format!("no `{name}` cadence")))
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
        let sensors = scenario.sensors;
        let gps_cfg = sensors.gps;
        let est_cfg = sensors.estimator;
        let longest = gps_cfg.delay.0.max(est_cfg.delay.0);
        let history = History::with_capacity((longest / finest) as usize + event_times.len() + 4);
        let opts = match scenario.engine {
            EngineKind::FixedStep => Options {
                max_step_ticks: physics.0,
                ..Options::default()
            },
            EngineKind::EventDriven => Options {
                max_step_ticks: scenario.duration.0.max(1),
                ..Options::default()
            },
        };
        let integ = Integrator::new(scenario.integrator, plant.dim(), opts)?;
        let opts = *integ.options();
        let origin = plant.origin;
        let alt = origin.geodetic.alt_m;
        let nr = plant.rotors.len();
        let nb = plant.batteries.len();
        let row = LogRow {
            motors: vec![0.0; nr],
            rotor_speed: vec![0.0; nr],
            rotor_thrust: vec![0.0; nr],
            batteries: vec![[0.0; 3]; nb],
            ..LogRow::default()
        };
        let log_meta = match (log, cad.log) {
            (Some(path), Some(_)) => {
                let g = origin.geodetic;
                let meta = LogMeta::new(
                    &scenario.file,
                    &plant.name,
                    scenario.seed,
                    autopilot,
                    crate::log_meta::Origin {
                        lat_deg: g.lat_deg,
                        lon_deg: g.lon_deg,
                        alt_m: g.alt_m,
                    },
                    nr,
                    nb,
                );
                let meta = LogMeta {
                    mission: scenario.mission.as_ref().map(|m| m.display().to_string()),
                    ..meta
                };
                Some((path.to_path_buf(), meta))
            }
            _ => None,
        };
        let log = match &log_meta {
            Some((path, meta)) => {
                let log = FlightLog::create(path, &row)?;
                meta.write(path)?;
                Some(log)
            }
            None => None,
        };
        Ok(Engine {
            x,
            inputs: PlantInputs::default(),
            integ,
            ap,
            frame: lockstep_sensor_frame::default(),
            act: lockstep_actuator_frame::default(),
            timeline,
            cad,
            wind: Wind::new(scenario.wind, rng.stream("wind")),
            wind_now: [0.0; 3],
            imu: Imu::new(sensors.imu, rng.stream("sensor.imu")),
            mag: Mag::new(
                sensors.mag_field_ned_gauss,
                sensors.mag_noise_gauss,
                rng.stream("sensor.mag"),
            ),
            baro: Baro::new(alt, sensors.baro_noise_pa, rng.stream("sensor.baro")),
            gps: Gps::new(gps_cfg, origin, rng.stream("sensor.gps")),
            est: Estimator::new(est_cfg, rng.stream("estimator")),
            history,
            events: scenario.events.iter().map(|e| (*e, false)).collect(),
            pending_when: scenario
                .events
                .iter()
                .filter(|e| matches!(e.trigger, Trigger::When(_)))
                .count(),
            faults: FaultState::default(),
            faults_changed: true,
            sensor_faults: [SensorFault::default(); 5],
            pending: lockstep_commands::default(),
            pending_fresh: false,
            prev: Micros::ZERO,
            mission_started: None,
            boundaries: 0,
            log,
            log_meta,
            row,
            spec,
            options: opts,
            method: scenario.integrator,
            seed: scenario.seed,
            recorder: None,
            interrupt: None,
            monitor: Monitor::new(scenario.expect),
            journal: Default::default(),
            on_ground: true,
            plant,
        })
    }

    pub fn plant(&self) -> &Multirotor {
        &self.plant
    }

    /// Records this run to `path` (see [`crate::record`]); call before the
    /// first step.
    pub fn record_to(&mut self, path: &Path) -> Result<(), EngineError> {
        if self.boundaries > 0 {
            return Err(EngineError::RecordTooLate {
                path: path.display().to_string(),
                now_us: self.prev.0,
            });
        }
        self.recorder = Some(Recorder::create(
            path,
            &self.spec,
            &self.plant,
            self.method,
            &self.options,
            self.seed,
            &self.x,
            // No boundary is later than the end; every multiple of the
            // finest cadence is a boundary, so none is further apart.
            crate::record::TimeBounds {
                end_us: self.timeline.end().0,
                max_interval_us: self
                    .timeline
                    .cadences()
                    .iter()
                    .map(|c| c.period.0)
                    .fold(self.timeline.end().0, u64::min)
                    .max(1),
            },
        )?);
        Ok(())
    }

    /// The plant state at the last boundary.
    pub fn state(&self) -> &[f64] {
        &self.x
    }

    /// The inputs the plant holds until the next boundary.
    pub fn plant_inputs(&self) -> &PlantInputs {
        &self.inputs
    }

    /// The plant's algebraic outputs (bus, batteries, rotors) at the last
    /// boundary with the inputs it now holds. Costs one right-hand side:
    /// for inspection, not for every boundary.
    pub fn plant_outputs(&self) -> PlantOutputs {
        self.plant.outputs(&self.x, &self.inputs)
    }

    /// The autopilot instance (its parameters, mission, last error).
    pub fn autopilot(&mut self) -> &mut Autopilot {
        &mut self.ap
    }

    /// The flight log, when the run writes one.
    pub fn log(&self) -> Option<&FlightLog> {
        self.log.as_ref()
    }

    /// The autopilot's last outputs.
    pub fn actuators(&self) -> &lockstep_actuator_frame {
        &self.act
    }

    pub fn now(&self) -> Micros {
        self.prev
    }

    /// Processes the next boundary; `None` once the end has been processed.
    pub fn step(&mut self) -> Result<Option<Micros>, EngineError> {
        let Some((t, due)) = self.timeline.advance() else {
            return Ok(None);
        };
        if t > self.prev {
            let sys = HeldPlant {
                plant: &self.plant,
                inputs: &self.inputs,
            };
            self.integ
                .step_interval(&sys, self.prev.0, (t - self.prev).0, &mut self.x)?;
        }
        self.prev = t;
        self.boundaries += 1;
        if due.event || self.pending_when > 0 {
            self.stage_scenario(t);
        }
        if self.faults_changed {
            self.stage_faults();
        }
        self.stage_wind(t, due);
        let landed = self.stage_sensors(t, due);
        let issued = if self.pending_fresh {
            self.pending
        } else {
            lockstep_commands::default()
        };
        self.stage_autopilot(t, due, landed)?;
        self.stage_log(t, due)?;
        if let Some(r) = &mut self.recorder {
            let e = &self.frame.estimate;
            let mut est = [0.0f32; 13];
            est[..3].copy_from_slice(&e.position_ned_m);
            est[3..6].copy_from_slice(&e.velocity_ned_mps);
            est[6..10].copy_from_slice(&e.attitude_q);
            est[10..13].copy_from_slice(&e.rates_frd_radps);
            r.record(t, &self.inputs, &self.act, &est, &issued)?;
        }
        Ok(Some(t))
    }

    /// Makes [`Engine::run`] stop at the next boundary once `flag` holds a
    /// signal number (see `signal_hook::flag::register_usize`), ending with
    /// [`EngineError::Interrupted`] after writing everything up to there.
    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.interrupt = Some(flag);
    }

    /// Runs to the end; the log is flushed whether the run ends by success
    /// or by error.
    pub fn run(&mut self) -> Result<Summary, EngineError> {
        self.run_observed(|_| {})
    }

    /// [`Engine::run`], calling `progress` with the simulated time every
    /// [`PROGRESS_EVERY`] boundaries (for a progress bar; it cannot change
    /// the run).
    pub fn run_observed(
        &mut self,
        mut progress: impl FnMut(Micros),
    ) -> Result<Summary, EngineError> {
        let mut count = 0u32;
        let result = loop {
            count = count.wrapping_add(1);
            if count.is_multiple_of(PROGRESS_EVERY) {
                progress(self.prev);
            }
            if let Some(f) = &self.interrupt {
                let signal = f.load(Ordering::Relaxed);
                if signal != 0 {
                    break Err(EngineError::Interrupted {
                        signal: signal as i32,
                        time_us: self.prev.0,
                    });
                }
            }
            match self.step() {
                Ok(Some(_)) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        // Everything up to here is written whatever happened: the log first
        // (an in-process crash in destroy must not cost its tail), then the
        // instance is destroyed (which can fail too: a crash or hang in
        // destroy), then the recording ends with the run's status. The first
        // error is the run's.
        let logged = match &mut self.log {
            Some(log) => log.finish().map_err(EngineError::from),
            None => Ok(()),
        };
        let logged = logged.and_then(|()| self.finish_log_meta().map_err(EngineError::from));
        let result = result.and(logged);
        let result = result.and_then(|()| self.ap.close().map_err(EngineError::from));
        if let Some(r) = self.recorder.take() {
            let finished = r.finish(match &result {
                Ok(()) => crate::record::EndStatus::Completed,
                Err(EngineError::Interrupted { signal, time_us }) => {
                    crate::record::EndStatus::Interrupted {
                        time_us: *time_us,
                        signal: *signal,
                    }
                }
                Err(e) => crate::record::EndStatus::Stopped {
                    time_us: self.prev.0,
                    reason: e.to_string(),
                },
            });
            if result.is_ok() {
                finished?;
            }
        }
        result?;
        let l = &self.plant.layout;
        let verdict = self.monitor.verdict(&End {
            north_m: self.x[0],
            east_m: self.x[1],
            on_ground: self.on_ground,
            disarmed: self.act.armed == 0,
            mission_finished: self.act.mission_finished != 0,
        });
        let (timeline, timeline_dropped) = self.timeline();
        Ok(Summary {
            timeline,
            timeline_dropped,
            verdict,
            end: self.prev,
            boundaries: self.boundaries,
            position_ned_m: [self.x[0], self.x[1], self.x[2]],
            mode: self.act.mode,
            armed: self.act.armed != 0,
            mission_finished: self.act.mission_finished != 0,
            soc: self.x[l.soc(0)],
            log_rows: self.log.as_ref().map_or(0, FlightLog::rows),
            max_tilt_deg: self.monitor.max_tilt_deg(),
            min_soc: self.monitor.min_soc(),
            on_ground: self.on_ground,
        })
    }

    fn stage_wind(&mut self, t: Micros, due: Due) {
        if due.contains(self.cad.wind) || due.event {
            let x = &self.x;
            self.wind_now = self.wind.sample(t, -x[2], [x[3], x[4], x[5]]);
            self.inputs.wind_ned_mps = self.wind_now;
        }
    }

    /// Samples the due sensors into the frame; returns the landed flag.
    fn stage_sensors(&mut self, t: Micros, due: Due) -> bool {
        // The plant's algebraic outputs cost an RHS evaluation: only where
        // the IMU, the autopilot (battery, landed flag) or the log need them.
        let log_due = self.cad.log.is_some_and(|c| due.contains(c));
        let needed = due.contains(self.cad.imu) || due.contains(self.cad.autopilot) || log_due;
        let outputs = needed.then(|| self.plant.outputs(&self.x, &self.inputs));
        let x = &self.x;
        let truth = Truth {
            time: t,
            position_ned_m: [x[0], x[1], x[2]],
            velocity_ned_mps: [x[3], x[4], x[5]],
            attitude_q: [x[6], x[7], x[8], x[9]],
            rates_frd_radps: [x[10], x[11], x[12]],
            specific_force_frd_mps2: outputs
                .as_ref()
                .map_or([f64::NAN; 3], |o| o.specific_force_frd_mps2),
        };
        self.history.push(truth);
        let f = self.sensor_faults;
        let mut fresh = 0u32;
        let ok = |k: usize| !f[k].dropout;
        if due.contains(self.cad.imu) && ok(0) {
            if !f[0].freeze {
                self.frame.imu = self.imu.sample(&truth);
                for a in &mut self.frame.imu.accel_mps2 {
                    *a += f[0].bias as f32;
                }
            }
            self.frame.imu.timestamp_us = t.0;
            fresh |= LOCKSTEP_FRESH_IMU;
        }
        if due.contains(self.cad.mag) && ok(1) {
            if !f[1].freeze {
                self.frame.mag = self.mag.sample(&truth);
                for b in &mut self.frame.mag.field_gauss {
                    *b += f[1].bias as f32;
                }
            }
            self.frame.mag.timestamp_us = t.0;
            fresh |= LOCKSTEP_FRESH_MAG;
        }
        if due.contains(self.cad.baro) && ok(2) {
            if !f[2].freeze {
                self.frame.baro = self.baro.sample(&truth);
                self.frame.baro.pressure_pa += f[2].bias as f32;
            }
            self.frame.baro.timestamp_us = t.0;
            fresh |= LOCKSTEP_FRESH_BARO;
        }
        if due.contains(self.cad.gps)
            && ok(3)
            && !f[3].freeze
            && let Some(g) = self.gps.sample(t, &self.history)
        {
            self.frame.gps = g;
            self.frame.gps.alt_m += f[3].bias as f32;
            fresh |= LOCKSTEP_FRESH_GPS;
        }
        if due.contains(self.cad.estimator)
            && ok(4)
            && !f[4].freeze
            && let Some(e) = self.est.sample(t, &self.history)
        {
            self.frame.estimate = e;
            self.frame.estimate.position_ned_m[0] += f[4].bias as f32;
            fresh |= LOCKSTEP_FRESH_ESTIMATE;
        }
        let Some(o) = outputs else {
            self.frame.fresh_mask |= fresh;
            return false;
        };
        if due.contains(self.cad.autopilot) {
            let b = o.batteries[0];
            self.frame.battery = lockstep_battery {
                timestamp_us: t.0,
                voltage_v: b.voltage_v as f32,
                current_a: b.current_a as f32,
                remaining: b.soc.clamp(0.0, 1.0) as f32,
                warning: b.warning as u32,
                connected: u32::from(b.connected),
                reserved0: 0,
            };
            fresh |= LOCKSTEP_FRESH_BATTERY;
        }
        self.frame.fresh_mask |= fresh;
        // Logging reads these at this boundary.
        for i in 0..self.plant.rotors.len() {
            self.row.rotor_speed[i] = o.rotors[i].speed_radps;
            self.row.rotor_thrust[i] = o.rotors[i].thrust_n;
        }
        for j in 0..self.plant.batteries.len() {
            let b = o.batteries[j];
            self.row.batteries[j] = [b.voltage_v, b.current_a, b.soc];
        }
        self.row.air_density = o.air_density_kgpm3;
        self.row.bus = [o.bus_voltage_v, o.bus_current_a];
        o.contact_points > 0
    }

    fn stage_autopilot(&mut self, t: Micros, due: Due, landed: bool) -> Result<(), EngineError> {
        if !due.contains(self.cad.autopilot) {
            return Ok(());
        }
        self.frame.time_us = t.0;
        self.frame.landed = u32::from(landed);
        if self.pending_fresh {
            self.pending.timestamp_us = t.0;
            self.frame.commands = self.pending;
            self.frame.fresh_mask |= LOCKSTEP_FRESH_COMMANDS;
        }
        self.ap.step(t.0, &self.frame, &mut self.act)?;
        self.journal
            .autopilot(t, &self.act, self.frame.battery.warning);
        self.observe(t, landed);
        self.frame.fresh_mask = 0;
        self.pending = lockstep_commands::default();
        self.pending_fresh = false;
        for i in 0..self.plant.rotors.len() {
            self.inputs.motor_cmd[i] = f64::from(self.act.motors[i]);
        }
        Ok(())
    }

    /// Feeds the verdict's monitor (at the autopilot's cadence, where the
    /// contact flag is known).
    fn observe(&mut self, t: Micros, in_contact: bool) {
        let mut soc = [0.0; MAX_BATTERIES];
        let nb = self.plant.batteries.len();
        for (j, s) in soc.iter_mut().enumerate().take(nb) {
            *s = self.x[self.plant.layout.soc(j)];
        }
        self.on_ground = in_contact;
        self.monitor.observe(Sample {
            time: t,
            state: &self.x,
            in_contact,
            soc: &soc[..nb],
        });
    }
}
