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
//! everything held, then the stages run in [`crate::time::stage::STAGE_ORDER`]:
//! scenario events, faults, wind, sensors and estimator, autopilot, logging.
//! [`Engine::run`] loops over `step` to the end.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot};
use lockstep_plant::integrate::IntegratorError;
use lockstep_plant::{AircraftSpec, Multirotor, PlantInputs, PlantOutputs, SpecError};

use crate::inputs::mission::MissionError;
use crate::inputs::scenario::Action;
use crate::io::log::FlightLog;
use crate::io::record::{RecordError, Recorder};
use crate::outcome::Summary;
use crate::outcome::verdict::End;
use crate::{CadenceError, Micros};

pub mod autopilot_config;
mod avionics;
mod build;
pub mod classify;
mod events;
mod hosted;
mod logging;
mod migration;
mod options;
mod outputs;
mod pace;
mod plant_runner;
mod reach;
mod ulog;
mod vehicle;
mod world;

pub use build::AircraftPlantError;
pub use hosted::{HostBattery, HostTruth, HostedVehicle};
pub use logging::{finish_log, open_log, shaped_row};
pub use options::{RunOptions, cores};
pub use outputs::LogHandle;
pub use pace::Pace;
pub use plant_runner::{MAX_STEP_US as PLANT_MAX_STEP_US, PlantRunner};
pub use reach::Reach;
pub use vehicle::{FaultsInForce, SensorFaultKind};

use outputs::Outputs;
use vehicle::Vehicle;
use world::World;

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
    Config(#[from] CadenceError),
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
    #[error("ULog: {0}")]
    Ulog(std::io::Error),
    #[error(transparent)]
    Record(#[from] RecordError),
    /// A signal (SIGINT, SIGTERM) asked the run to stop; everything up to
    /// `time_us` was written.
    /// A host stepped past the end of the run.
    #[error("the run ended at {}; nothing is left to step", lockstep_abi::at(*end_us))]
    Ended { end_us: u64 },
    /// A host's truth was not for the boundary awaiting it.
    #[error(
        "truth at {}, but the next boundary is at {}",
        lockstep_abi::at(*found_us),
        lockstep_abi::at(*expected_us)
    )]
    HostTime { expected_us: u64, found_us: u64 },
    /// A host's truth held a value that is not finite (or out of range).
    #[error("truth at {}: `{field}` is not finite or out of range", lockstep_abi::at(*time_us))]
    HostTruth { field: &'static str, time_us: u64 },
    /// A plant fault on a vehicle whose plant the host owns.
    #[error("`{action}` acts on the plant, which the host owns")]
    HostOwnsPlant { action: String },
    #[error("interrupted by {} at {}", lockstep_abi::signal_name(*signal), lockstep_abi::at(*time_us))]
    Interrupted { signal: i32, time_us: u64 },
    /// The link to the ground stations failed (a socket, the record of
    /// their inputs).
    #[error("the ground-station link failed: {reason}")]
    GroundStation { reason: String },
    /// A vehicle state that does not load into this vehicle.
    #[error(transparent)]
    State(#[from] crate::persist::PersistError),
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

/// Boundaries between two calls of [`Engine::run_observed`]'s progress.
pub const PROGRESS_EVERY: u32 = 4096;

/// A run: the world and its vehicle, and the loop that drives them
/// (integrate to the next boundary, then the stages in order), with the
/// run's log and recording.
pub struct Engine {
    world: World,
    vehicle: Vehicle,
    /// What the run writes as it flies (log, recording, ULog, rows
    /// captured or held back): the engine's one observer.
    outputs: Outputs,
    spec: AircraftSpec,
    seed: u64,
    /// Set to a signal number to stop [`Engine::run`] at the next boundary.
    interrupt: Option<Arc<AtomicUsize>>,
    /// Wind a host adds to the world's (NED, m/s).
    wind_offset: [f64; 3],
    /// Wall-clock pacing of [`Engine::run`] (none: as fast as possible).
    pace: Option<pace::Pace>,
    /// A flight stack's notes, taken when the run finished.
    stack_notes: Vec<String>,
    /// [`Engine::finish`] has run.
    finished: bool,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("now", &self.world.now)
            .field("boundaries", &self.world.boundaries)
            .finish_non_exhaustive()
    }
}

impl Engine {
    pub fn plant(&self) -> &Multirotor {
        &self.vehicle.physics.plant
    }

    /// Records this run to `path` (see [`crate::io::record`]); call before the
    /// first step.
    pub fn record_to(&mut self, path: &Path) -> Result<(), EngineError> {
        if self.world.boundaries > 0 {
            return Err(EngineError::RecordTooLate {
                path: path.display().to_string(),
                now_us: self.world.now.0,
            });
        }
        let p = &self.vehicle.physics;
        let timeline = &self.world.timeline;
        self.outputs.recorder = Some(Recorder::create(
            path,
            &self.spec,
            &p.plant,
            p.method(),
            p.options(),
            self.seed,
            &p.x,
            // No boundary is later than the end; every multiple of the
            // finest cadence is a boundary, so none is further apart.
            crate::io::record::TimeBounds {
                end_us: timeline.end().0,
                max_interval_us: timeline
                    .cadences()
                    .iter()
                    .map(|c| c.period.0)
                    .fold(timeline.end().0, u64::min)
                    .max(1),
            },
        )?);
        Ok(())
    }

    /// The plant state at the last boundary.
    pub fn state(&self) -> &[f64] {
        &self.vehicle.physics.x
    }

    /// The inputs the plant holds until the next boundary.
    pub fn plant_inputs(&self) -> &PlantInputs {
        &self.vehicle.physics.inputs
    }

    /// The plant's algebraic outputs (bus, batteries, rotors) at the last
    /// boundary with the inputs it now holds. Costs one right-hand side:
    /// for inspection, not for every boundary.
    pub fn plant_outputs(&self) -> PlantOutputs {
        self.vehicle.physics.outputs()
    }

    /// The integrator's work so far.
    pub fn integrator_stats(&self) -> lockstep_plant::integrate::Stats {
        self.vehicle.physics.stats()
    }

    /// What a flight stack's link ignored or noticed (bytes that were no
    /// frame, re-sent packets...): one line each, empty for a library.
    pub fn stack_notes(&self) -> Vec<String> {
        if self.finished {
            self.stack_notes.clone()
        } else {
            self.vehicle.avionics.ap.stack_notes().lines
        }
    }

    /// The autopilot instance (its parameters, mission, last error).
    pub fn autopilot(&mut self) -> &mut Autopilot {
        &mut self.vehicle.avionics.ap
    }

    /// Uploads a mission to the autopilot, replacing its own: the fence a
    /// fly-away is measured against grows to hold it (a mission uploaded
    /// this way, by a host or a dispatcher, takes the vehicle where the
    /// scenario's did not).
    pub fn upload_mission(
        &mut self,
        items: &[lockstep_abi::ffi::lockstep_mission_item],
    ) -> Result<(), lockstep_abi::AbiError> {
        self.vehicle.avionics.ap.upload_mission(items)?;
        let plan = crate::outcome::verdict::plan_items(&self.vehicle.physics.plant.origin, items);
        self.vehicle.monitor.add_mission(&plan);
        Ok(())
    }

    /// The flight log, when the run writes one.
    pub fn log(&self) -> Option<&FlightLog> {
        self.outputs.log.as_ref()
    }

    /// The autopilot's last outputs.
    pub fn actuators(&self) -> &lockstep_actuator_frame {
        &self.vehicle.avionics.act
    }

    /// The sensor frame as the autopilot last received it (its estimate,
    /// battery and sensor samples; the freshness mask is cleared after each
    /// autopilot step).
    pub fn sensor_frame(&self) -> &lockstep_sensor_frame {
        &self.vehicle.avionics.frame
    }

    /// The wind at the vehicle (NED, m/s) as last sampled.
    pub fn wind(&self) -> [f64; 3] {
        self.world.wind_now
    }

    /// The next boundary [`Engine::step`] would process; `None` after the end.
    pub fn next_time(&self) -> Option<Micros> {
        self.world.timeline.peek()
    }

    /// The run's end time.
    pub fn end(&self) -> Micros {
        self.world.timeline.end()
    }

    pub fn now(&self) -> Micros {
        self.world.now
    }

    /// Processes the next boundary; `None` once the end has been processed.
    pub fn step(&mut self) -> Result<Option<Micros>, EngineError> {
        let Some((t, due)) = self.world.advance() else {
            return Ok(None);
        };
        self.vehicle.physics.advance_to(t)?;
        self.world.arrive(t);
        if due.event || self.world.pending_when > 0 {
            self.stage_scenario(t);
        }
        if self.vehicle.faults_changed {
            self.vehicle.stage_faults();
        }
        if let Some(w) = self.world.stage_wind(t, due, &self.vehicle.physics.x) {
            self.vehicle.physics.inputs.wind_ned_mps = self.with_offset(w);
        }
        let vdue = self.world.vehicle_due(due);
        let fresh = self.vehicle.stage_sensors(t, vdue);
        let landed = fresh && self.vehicle.outputs.contact_points > 0;
        let issued = self.vehicle.avionics.issued();
        if vdue.autopilot {
            self.vehicle
                .stage_autopilot(t, landed)
                .map_err(|e| match e {
                    // A signal ended a wait for a flight stack.
                    AbiError::WaitInterrupted { signal } => EngineError::Interrupted {
                        signal,
                        time_us: t.0,
                    },
                    e => e.into(),
                })?;
            let a = &self.vehicle.avionics;
            self.world
                .journal
                .autopilot(t, &a.act, a.frame.battery.warning);
            if self.outputs.ulog.is_some() {
                self.stage_ulog()?;
            }
        }
        self.stage_log(t, vdue.log)?;
        if self.outputs.recorder.is_some() {
            let a = &self.vehicle.avionics;
            let e = &a.frame.estimate;
            let mut est = [0.0f32; 13];
            est[..3].copy_from_slice(&e.position_ned_m);
            est[3..6].copy_from_slice(&e.velocity_ned_mps);
            est[6..10].copy_from_slice(&e.attitude_q);
            est[10..13].copy_from_slice(&e.rates_frd_radps);
            self.outputs
                .record(t, &self.vehicle.physics.inputs, &a.act, &est, &issued)?;
        }
        Ok(Some(t))
    }

    /// Adds `offset` (NED, m/s) to the world's wind from now on (a
    /// co-simulation's wind input); zero restores the world's wind alone.
    pub fn set_wind_offset(&mut self, offset: [f64; 3]) {
        self.wind_offset = offset;
        self.vehicle.physics.inputs.wind_ned_mps = self.with_offset(self.world.wind_now);
    }

    /// The world's wind `w` with the offset (untouched when it is zero, so
    /// a run without one is the run it always was, bit for bit).
    fn with_offset(&self, w: [f64; 3]) -> [f64; 3] {
        let o = self.wind_offset;
        if o == [0.0; 3] {
            w
        } else {
            [w[0] + o[0], w[1] + o[1], w[2] + o[2]]
        }
    }

    /// Holds `force` (NED, N) on the vehicle's centre of mass from now on
    /// (a co-simulated tether or payload); zero removes it.
    pub fn set_external_force(&mut self, force: [f64; 3]) {
        self.vehicle.physics.inputs.external_force_ned_n = (force != [0.0; 3]).then_some(force);
    }

    /// A battery swap at the current boundary: every pack's state of charge
    /// set to full and its polarization relaxed, as a fresh pack would be.
    pub fn swap_batteries(&mut self) {
        let p = &mut self.vehicle.physics;
        let layout = p.plant.layout;
        for j in 0..layout.batteries {
            p.x[layout.soc(j)] = 1.0;
            p.x[layout.v1(j)] = 0.0;
        }
    }

    /// The faults in force on the vehicle now (sensors, motors, batteries).
    pub fn faults_in_force(&self) -> FaultsInForce {
        self.vehicle.faults_in_force()
    }

    /// The vehicle has crashed (or collided) so far in this run.
    pub fn crashed(&self) -> bool {
        !self.vehicle.monitor.crashes().is_empty()
    }

    /// Motor commands (one per rotor, each in [0, 1]) that replace the
    /// autopilot's from the next boundary on, until `None` gives the motors
    /// back: for an agent that flies the motors itself (the autopilot still
    /// steps, and the log's motor columns hold these). Not part of a
    /// [`Engine::snapshot`]. Commands outside [0, 1] or not one per rotor
    /// are refused with the reason.
    pub fn set_motor_override(&mut self, commands: Option<&[f32]>) -> Result<(), String> {
        let Some(c) = commands else {
            self.vehicle.motor_override = None;
            return Ok(());
        };
        let n = self.vehicle.physics.plant.rotors.len();
        if c.len() != n {
            return Err(format!("{} motor commands for {n} rotors", c.len()));
        }
        if let Some(i) = c.iter().position(|v| !(0.0..=1.0).contains(v)) {
            return Err(format!("motor command {i} is {}, outside 0..1", c[i]));
        }
        let mut m = [0.0; lockstep_abi::ffi::LOCKSTEP_MAX_MOTORS as usize];
        m[..n].copy_from_slice(c);
        self.vehicle.motor_override = Some(m);
        self.vehicle.hold_override();
        Ok(())
    }

    /// Applies a scenario action now, as an event at the current time would
    /// (a command reaches the autopilot at its next step; a fault acts from
    /// the next boundary).
    pub fn apply_now(&mut self, action: Action) {
        let t = self.world.now;
        self.apply(action, t);
    }
    /// A collision with vehicle `with` at the current boundary (a fleet's
    /// separation check): a crash in the verdict and the timeline, and
    /// every motor failed from the next boundary on, as a `motor_fail`
    /// event now would.
    pub fn collide(&mut self, with: &str, separation_m: f64) {
        let t = self.world.now;
        self.vehicle.monitor.collision(t, with, separation_m);
        let n = self.vehicle.physics.plant.rotors.len();
        self.vehicle.faults.motor_failed[..n].fill(true);
        self.vehicle.faults_changed = true;
    }

    /// Makes [`Engine::run`] stop at the next boundary once `flag` holds a
    /// signal number (see `signal_hook::flag::register_usize`), ending with
    /// [`EngineError::Interrupted`] after writing everything up to there.
    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.vehicle.avionics.ap.interrupt_on(Arc::clone(&flag));
        self.interrupt = Some(flag);
    }

    /// Makes [`Engine::run`] keep to the wall clock: `speed` simulated
    /// seconds per second of wall time (1 = real time). Time stays the
    /// simulation's, so the outputs are those of a run as fast as possible.
    pub fn pace(&mut self, speed: f64) {
        self.pace = Some(pace::Pace::new(speed, self.world.now));
    }

    /// Runs to the end; the log is flushed whether the run ends by success
    /// or by error.
    pub fn run(&mut self) -> Result<Summary, EngineError> {
        self.run_observed(|_| {})
    }

    /// [`Engine::run`], calling `progress` with the simulated time every
    /// [`PROGRESS_EVERY`] boundaries (for a progress bar; it cannot change
    /// the run).
    pub fn run_observed(&mut self, progress: impl FnMut(Micros)) -> Result<Summary, EngineError> {
        self.run_with(progress, |_| Ok(()))
    }

    /// [`Engine::run_observed`], calling `each` after every boundary (a
    /// ground station's link reading its inputs and sending telemetry); an
    /// error from it ends the run as an engine error would.
    pub fn run_with(
        &mut self,
        mut progress: impl FnMut(Micros),
        mut each: impl FnMut(&mut Engine) -> Result<(), EngineError>,
    ) -> Result<Summary, EngineError> {
        let mut count = 0u32;
        let result = loop {
            count = count.wrapping_add(1);
            if count.is_multiple_of(PROGRESS_EVERY) {
                progress(self.world.now);
            }
            if let Some(f) = &self.interrupt {
                let signal = f.load(Ordering::Relaxed);
                if signal != 0 {
                    break Err(EngineError::Interrupted {
                        signal: signal as i32,
                        time_us: self.world.now.0,
                    });
                }
            }
            match self.step() {
                Ok(Some(_)) => {}
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
            if let Some(p) = &mut self.pace {
                p.wait_for(self.world.now);
            }
            if let Err(e) = each(self) {
                break Err(e);
            }
        };
        self.finish(result)
    }

    /// [`Engine::finish`] has run.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Ends the run where it is, with `result` the outcome of stepping so
    /// far: what [`Engine::run`] does after its last step, for a caller that
    /// steps the engine itself (the C ABI, a co-simulation). Call once.
    pub fn finish(&mut self, result: Result<(), EngineError>) -> Result<Summary, EngineError> {
        self.finished = true;
        // Rows held back are the run's too: written before the log ends.
        let result = match (result, self.outputs.commit_rows()) {
            (Err(e), _) | (Ok(()), Err(e)) => Err(e),
            (Ok(()), Ok(())) => Ok(()),
        };
        // Everything up to here is written whatever happened: the log first
        // (an in-process crash in destroy must not cost its tail), then the
        // instance is destroyed (which can fail too: a crash or hang in
        // destroy), then the recording ends with the run's status. The first
        // error is the run's.
        let logged = self.outputs.finish_log();
        let result = result.and(logged).and(self.finish_ulog());
        // What a flight stack's link ignored, kept past the close.
        self.stack_notes = self.vehicle.avionics.ap.stack_notes().lines;
        let result =
            result.and_then(|()| self.vehicle.avionics.ap.close().map_err(EngineError::from));
        self.outputs.finish_recording(&result, self.world.now)?;
        result?;
        let v = &self.vehicle;
        let (x, act) = (&v.physics.x, &v.avionics.act);
        let l = &v.physics.plant.layout;
        let verdict = v.monitor.verdict(&End {
            time: self.world.now,
            north_m: x[0],
            east_m: x[1],
            on_ground: v.on_ground,
            disarmed: act.armed == 0,
            mission_finished: act.mission_finished != 0,
        });
        let (timeline, timeline_dropped) = self.timeline();
        Ok(Summary {
            timeline,
            timeline_dropped,
            verdict,
            end: self.world.now,
            boundaries: self.world.boundaries,
            position_ned_m: [x[0], x[1], x[2]],
            mode: act.mode,
            armed: act.armed != 0,
            mission_finished: act.mission_finished != 0,
            soc: x[l.soc(0)],
            log_rows: self.outputs.log.as_ref().map_or(0, FlightLog::rows),
            max_tilt_deg: v.monitor.max_tilt_deg(),
            min_soc: v.monitor.min_soc(),
            on_ground: v.on_ground,
        })
    }
}
