//! The primary: owns time and every vehicle's last known position, runs no
//! physics. Each round it sends one step to every secondary and waits for
//! every ack (refusing stale, duplicate and damaged ones, within the step
//! deadline); it writes the vehicles' logs from the rows the acks carry,
//! checks the separation at every sync boundary exactly as a run in one
//! process does, and moves a vehicle whose level changed owner (a transfer
//! round: the old owner snapshots it, the new one restores it). When no
//! pair can come near, one round steps a stretch of sync periods
//! (`primary_stretch.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use lockstep_fleet::levels::Levels;
use lockstep_fleet::run::LookaheadStats;
use lockstep_fleet::run::{log_path, rotor_tip_radius_m};
use lockstep_fleet::separation::Separation;
use lockstep_fleet::{FleetResult, FleetScenario};
use lockstep_harness::Micros;
use lockstep_harness::engine::{LogHandle, Pace, PlantRunner, finish_log, open_log, shaped_row};
use lockstep_harness::io::log::LogRow;
use lockstep_harness::outcome::report::VehicleOutcome;

use crate::link::{Control, LinkError, PrimaryLink};
use crate::protocol::{Arrival, Collision, Step};
use crate::served::Router;

/// Why a distributed run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum PrimaryError {
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("{peer} did not acknowledge step {iteration} within {} s", .deadline.as_secs_f64())]
    Deadline {
        peer: String,
        iteration: u64,
        deadline: Duration,
    },
    #[error("{0}")]
    Vehicle(String, u8),
    #[error("{0}")]
    Protocol(String),
    #[error("vehicle `{vehicle}`: {reason}")]
    Setup { vehicle: String, reason: String },
    #[error("log {path}: {reason}")]
    Log { path: String, reason: String },
    #[error("the ground stations' link: {0}")]
    GroundStation(String),
    #[error("interrupted by {} at {}", lockstep_abi::signal_name(*signal), lockstep_abi::at(*time_us))]
    Interrupted { signal: i32, time_us: u64 },
}

/// How the primary runs.
#[derive(Debug, Clone)]
pub struct PrimaryOptions {
    /// Where each vehicle's log goes (`<dir>/<name>.csv`), when the
    /// scenario has a `log` cadence.
    pub log_dir: Option<PathBuf>,
    /// The autopilot the vehicles' logs name.
    pub autopilot: PathBuf,
    /// How long one round may take before the run stops.
    pub step_deadline: Duration,
}

/// What the run did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The fleet's result, as a run on threads gives it.
    pub fleet: FleetResult,
    pub rounds: u64,
    pub migrations: u64,
    /// Acks refused as stale or duplicate.
    pub refused_acks: u64,
    /// Vehicles whose autopilot cannot move, kept on their first secondary.
    pub pinned: Vec<String>,
    /// Wall time of each time-advancing round.
    pub round_times: Vec<Duration>,
    /// Where those rounds' time went.
    pub round_parts: RoundParts,
    /// What the ground stations' link ignored (the primary's and each
    /// secondary's), one line per kind.
    pub link_notes: Vec<String>,
}

struct Performer {
    name: String,
    owner: u32,
    level: usize,
    position: [f64; 3],
    pinned: bool,
    log: Option<LogHandle>,
    row: LogRow,
    /// Rows received and not yet written (a stretch not yet checked).
    pending: Vec<LogRow>,
    /// Its positions at each boundary of the last round.
    positions: Vec<[f64; 3]>,
    /// Its speed and acceleration bounds at the boundary.
    speed_mps: f64,
    accel_mps2: f64,
    outcome: Option<VehicleOutcome>,
}

/// The primary of a distributed run.
pub struct Primary<L: PrimaryLink> {
    link: L,
    fleet: FleetScenario,
    options: PrimaryOptions,
    performers: Vec<Performer>,
    separation: Separation,
    radii: Vec<f64>,
    /// Every sync period is checked up to here (a stretch being redone).
    plain_until: Micros,
    lookahead: LookaheadStats,
    iteration: u64,
    now: Micros,
    syncs: u64,
    paused: bool,
    collisions: Vec<Collision>,
    arrivals: Vec<Arrival>,
    affinity: Vec<(u32, u32)>,
    migrations: u64,
    refused: u64,
    round_times: Vec<Duration>,
    round_parts: RoundParts,
    interrupt: Option<Arc<AtomicUsize>>,
    /// Called with a line for the user (pause, resume, pinned vehicles).
    notify: Box<dyn FnMut(&str) + Send>,
    /// The ground stations' link, when the vehicles are served.
    router: Option<Box<dyn Router>>,
    /// What the secondaries' links ignored (from their last acks).
    link_notes: Vec<String>,
    /// Kept to the wall clock.
    pace: Option<Pace>,
}

impl<L: PrimaryLink> std::fmt::Debug for Primary<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Primary")
            .field("iteration", &self.iteration)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

impl<L: PrimaryLink> Primary<L> {
    /// Resolves every vehicle's plant (for its log and its radius), opens
    /// the logs, and deals the vehicles to the secondaries by level.
    pub fn new(
        link: L,
        fleet: FleetScenario,
        options: PrimaryOptions,
    ) -> Result<Self, PrimaryError> {
        let n = link.secondaries();
        let mut performers = Vec::new();
        let mut radii = Vec::new();
        if let Some(dir) = &options.log_dir {
            std::fs::create_dir_all(dir).map_err(|e| PrimaryError::Log {
                path: dir.display().to_string(),
                reason: e.to_string(),
            })?;
        }
        for v in &fleet.vehicles {
            let setup = |reason: String| PrimaryError::Setup {
                vehicle: v.name.clone(),
                reason,
            };
            let runner =
                PlantRunner::from_scenario(&v.scenario).map_err(|e| setup(e.to_string()))?;
            let plant = runner.plant();
            radii.push(v.radius_m.unwrap_or_else(|| rotor_tip_radius_m(plant)));
            let log = match (&options.log_dir, v.scenario.cadence("log")) {
                (Some(dir), Some(_)) => {
                    let path = log_path(dir, &v.name);
                    let ap = v.autopilot.as_deref().unwrap_or(&options.autopilot);
                    let (log, meta) =
                        open_log(&v.scenario, plant, ap, &path).map_err(|e| PrimaryError::Log {
                            path: path.display().to_string(),
                            reason: e.to_string(),
                        })?;
                    Some((log, Some(meta)))
                }
                _ => None,
            };
            let (north, east, _) = v.scenario.start;
            let position = [north, east, 0.0];
            let level = fleet.levels.initial(position);
            performers.push(Performer {
                name: v.name.clone(),
                owner: Levels::owner(level, n) as u32,
                level,
                position,
                pinned: false,
                log,
                row: shaped_row(plant),
                pending: Vec::new(),
                positions: vec![position],
                speed_mps: 0.0,
                accel_mps2: 0.0,
                outcome: None,
            });
        }
        let affinity = performers
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u32, p.owner))
            .collect();
        let lookahead = LookaheadStats {
            off: (fleet.lookahead.max.0 < 2 * fleet.sync.0)
                .then(|| "lookahead_max_s is under two sync periods".to_string()),
            ..LookaheadStats::default()
        };
        Ok(Primary {
            separation: Separation::new(&radii, fleet.proximity_m),
            radii,
            plain_until: Micros(0),
            lookahead,
            link,
            fleet,
            options,
            performers,
            iteration: 0,
            now: Micros(0),
            syncs: 0,
            paused: false,
            collisions: Vec::new(),
            arrivals: Vec::new(),
            affinity,
            migrations: 0,
            refused: 0,
            round_times: Vec::new(),
            round_parts: RoundParts::default(),
            interrupt: None,
            notify: Box::new(|_| {}),
            router: None,
            link_notes: Vec::new(),
            pace: None,
        })
    }

    /// Serves the vehicles to ground stations through `router` (the
    /// secondaries were told in their setup): each stays on its first
    /// secondary, and every sync boundary is a round.
    pub fn serve(&mut self, router: Box<dyn Router>) {
        self.router = Some(router);
        self.lookahead.off =
            Some("ground stations are served: an input may come at any sync boundary".into());
    }

    /// Keeps the run to the wall clock: `speed` simulated seconds per
    /// second, waited for at each sync boundary; the outputs do not change.
    pub fn pace(&mut self, speed: f64) {
        self.pace = Some(Pace::new(speed, self.now));
    }

    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.interrupt = Some(flag);
    }

    /// Lines for the user as the run goes (pause, resume, pinned vehicles).
    pub fn on_notice(&mut self, f: impl FnMut(&str) + Send + 'static) {
        self.notify = Box::new(f);
    }

    /// What the ground stations' link ignored so far (the primary's, and
    /// the secondaries' from a stop): also after a run that failed.
    pub fn link_notes(&self) -> Vec<String> {
        self.router
            .as_ref()
            .map(|r| r.notes())
            .unwrap_or_default()
            .into_iter()
            .chain(self.link_notes.iter().cloned())
            .collect()
    }

    /// The last sync boundary processed.
    pub fn now(&self) -> Micros {
        self.now
    }

    /// Runs to the end. Whatever happens the logs are complete to the last
    /// boundary every ack reached, and the secondaries are told to stop
    /// (with the reason when the run is abandoned).
    pub fn run(&mut self) -> Result<Outcome, PrimaryError> {
        let result = self.drive();
        if let Err(e) = &result {
            // Best effort: a secondary that can still hear stops now.
            let _ = self.link.broadcast(&Step {
                iteration: self.iteration + 1,
                time_us: self.now.0,
                first_us: self.now.0,
                keep: false,
                redo: false,
                step_us: self.fleet.sync.0,
                paused: false,
                affinity: Vec::new(),
                collisions: Vec::new(),
                release: Vec::new(),
                arrivals: Vec::new(),
                stop: true,
                abort: Some(e.to_string()),
                mavlink: Vec::new(),
                warnings: Vec::new(),
            });
        }
        let logged = self.finish_logs();
        result?;
        logged?;
        Ok(self.outcome())
    }

    fn outcome(&self) -> Outcome {
        Outcome {
            fleet: FleetResult {
                end: self.now,
                syncs: self.syncs,
                vehicles: self
                    .performers
                    .iter()
                    .map(|p| (p.name.clone(), p.outcome.clone()))
                    .collect(),
                encounters: self.separation.encounters().to_vec(),
                encounters_dropped: self.separation.dropped(),
                closest: self.separation.closest(),
                collisions: self.separation.collisions(),
                lookahead: LookaheadStats {
                    rounds: self.round_times.len() as u64,
                    ..self.lookahead.clone()
                },
            },
            rounds: self.iteration,
            migrations: self.migrations,
            refused_acks: self.refused,
            pinned: self
                .performers
                .iter()
                .filter(|p| p.pinned)
                .map(|p| p.name.clone())
                .collect(),
            round_times: self.round_times.clone(),
            round_parts: self.round_parts,
            link_notes: self.link_notes(),
        }
    }

    fn finish_logs(&mut self) -> Result<(), PrimaryError> {
        let mut first = Ok(());
        for p in &mut self.performers {
            if let Some((log, Some(meta))) = &mut p.log {
                let r = finish_log(log, meta).map_err(|e| PrimaryError::Log {
                    path: meta.0.display().to_string(),
                    reason: e.to_string(),
                });
                if first.is_ok() {
                    first = r;
                }
            }
        }
        first
    }

    fn step_message(&self, time_us: u64) -> Step {
        Step {
            iteration: self.iteration,
            time_us,
            first_us: time_us,
            keep: false,
            redo: false,
            step_us: self.fleet.sync.0,
            paused: self.paused,
            affinity: Vec::new(),
            collisions: Vec::new(),
            release: Vec::new(),
            arrivals: Vec::new(),
            stop: false,
            abort: None,
            mavlink: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn drive(&mut self) -> Result<(), PrimaryError> {
        // Iteration 0: every vehicle built where its level is, stepped
        // through t = 0.
        let mut first = self.step_message(0);
        first.affinity = std::mem::take(&mut self.affinity);
        let acks = self.round(first)?;
        if self.router.is_some() {
            let mut places: Vec<(u32, Vec<&str>)> = Vec::new();
            for p in &mut self.performers {
                p.pinned = true;
                match places.iter_mut().find(|(o, _)| *o == p.owner) {
                    Some((_, names)) => names.push(&p.name),
                    None => places.push((p.owner, vec![&p.name])),
                }
            }
            places.sort_by_key(|(o, _)| *o);
            let places: Vec<String> = places
                .iter()
                .map(|(o, names)| format!("{} on {}", names.join(", "), self.link.peer_name(*o)))
                .collect();
            let line = format!(
                "the vehicles are served to ground stations: each stays on its first secondary \
                 ({})",
                places.join("; ")
            );
            (self.notify)(&line);
        }
        for a in &acks {
            for r in &a.performers {
                let p = &mut self.performers[r.performer as usize];
                if !r.can_migrate && self.router.is_none() {
                    p.pinned = true;
                    if self.lookahead.off.is_none() {
                        self.lookahead.off = Some(format!(
                            "vehicle `{}`'s autopilot gives no snapshot (lockstep_autopilot_snapshot)",
                            p.name
                        ));
                    }
                    let line = format!(
                        "vehicle `{}` stays on {}: its autopilot cannot migrate (no \
                         lockstep_autopilot_snapshot)",
                        p.name,
                        self.link.peer_name(p.owner)
                    );
                    (self.notify)(&line);
                }
            }
        }
        self.boundary(Micros(0));
        let end = self.fleet.vehicles[0].scenario.duration;
        loop {
            self.check_interrupt()?;
            self.controls()?;
            self.transfers()?;
            if self.now >= end {
                break;
            }
            let periods = self.plan();
            if periods > 1 {
                self.stretch(periods, end)?;
                continue;
            }
            let t = Micros((self.now.0 + self.fleet.sync.0).min(end.0));
            self.iteration += 1;
            let mut step = self.step_message(t.0);
            step.collisions = std::mem::take(&mut self.collisions);
            step.arrivals = std::mem::take(&mut self.arrivals);
            step.affinity = std::mem::take(&mut self.affinity);
            self.timed_round(step)?;
            self.boundary(t);
            if let Some(p) = &mut self.pace {
                p.wait_for(t);
            }
        }
        self.iteration += 1;
        let mut stop = self.step_message(self.now.0);
        stop.stop = true;
        stop.collisions = std::mem::take(&mut self.collisions);
        let acks = self.round(stop)?;
        for a in acks {
            for r in a.performers {
                self.performers[r.performer as usize].outcome = r.outcome;
            }
        }
        Ok(())
    }

    fn check_interrupt(&self) -> Result<(), PrimaryError> {
        if let Some(f) = &self.interrupt {
            let signal = f.load(Ordering::Relaxed);
            if signal != 0 {
                return Err(PrimaryError::Interrupted {
                    signal: signal as i32,
                    time_us: self.now.0,
                });
            }
        }
        Ok(())
    }

    /// Pause and resume: a pause is sent to every secondary (and
    /// acknowledged), then the primary waits for resume, watching the
    /// peers and the interrupt.
    fn controls(&mut self) -> Result<(), PrimaryError> {
        let mut wait = Duration::ZERO;
        loop {
            match self.link.control(wait)? {
                Some(Control::Pause) if !self.paused => {
                    self.paused = true;
                    self.iteration += 1;
                    let step = self.step_message(self.now.0);
                    self.round(step)?;
                    let line = format!("paused at {}", lockstep_abi::at(self.now.0));
                    (self.notify)(&line);
                }
                Some(Control::Resume) if self.paused => {
                    self.paused = false;
                    let line = format!("resumed at {}", lockstep_abi::at(self.now.0));
                    (self.notify)(&line);
                }
                Some(_) => {}
                None if self.paused => self.check_interrupt()?,
                None => return Ok(()),
            }
            wait = if self.paused {
                Duration::from_millis(50)
            } else {
                Duration::ZERO
            };
        }
    }

    /// Vehicles whose level now belongs to another secondary move: the
    /// old owners release them (with the collisions of this boundary
    /// applied first), the next step brings them to the new owners.
    fn transfers(&mut self) -> Result<(), PrimaryError> {
        let n = self.link.secondaries();
        let mut release = Vec::new();
        for (i, p) in self.performers.iter_mut().enumerate() {
            let level = self.fleet.levels.update(p.level, p.position);
            if level == p.level {
                continue;
            }
            let owner = Levels::owner(level, n) as u32;
            if owner == p.owner || p.pinned {
                if !p.pinned {
                    p.level = level;
                }
                continue;
            }
            p.level = level;
            release.push((i as u32, owner));
        }
        if release.is_empty() {
            return Ok(());
        }
        self.iteration += 1;
        let mut step = self.step_message(self.now.0);
        step.collisions = std::mem::take(&mut self.collisions);
        step.release = release.iter().map(|(p, _)| *p).collect();
        let acks = self.round(step)?;
        for a in acks {
            for r in a.performers {
                if let Some(state) = r.state {
                    let to = release
                        .iter()
                        .find(|(p, _)| *p == r.performer)
                        .map(|(_, o)| *o)
                        .ok_or_else(|| {
                            PrimaryError::Protocol(format!(
                                "{} sent the state of vehicle {} it was not asked to release",
                                self.link.peer_name(a.sender),
                                r.performer
                            ))
                        })?;
                    self.performers[r.performer as usize].owner = to;
                    self.affinity.push((r.performer, to));
                    self.arrivals.push(Arrival {
                        performer: r.performer,
                        to,
                        state,
                    });
                    self.migrations += 1;
                }
            }
        }
        if self.arrivals.len() != release.len() {
            return Err(PrimaryError::Protocol(format!(
                "{} of {} vehicles released came back with their state",
                self.arrivals.len(),
                release.len()
            )));
        }
        Ok(())
    }

    /// The separation check at sync boundary `t` (every position is the
    /// one at `t`).
    fn boundary(&mut self, t: Micros) {
        self.now = t;
        self.syncs += 1;
        let positions: Vec<[f64; 3]> = self.performers.iter().map(|p| p.position).collect();
        for (a, b, d) in self.separation.observe(t, &positions) {
            self.collisions.push(Collision {
                a: a as u32,
                b: b as u32,
                separation_m: d,
            });
        }
    }

    /// The fleet this primary runs.
    pub fn fleet(&self) -> &FleetScenario {
        &self.fleet
    }

    /// Every vehicle's log path (when logging).
    pub fn log_paths(&self) -> Vec<Option<&Path>> {
        self.performers
            .iter()
            .map(|p| p.log.as_ref().map(|(l, _)| l.path()))
            .collect()
    }
}

#[path = "primary_round.rs"]
mod round;
#[path = "primary_stretch.rs"]
mod stretch;

pub use round::RoundParts;

#[cfg(test)]
#[path = "primary_tests.rs"]
mod tests;
