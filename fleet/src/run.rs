//! A fleet run: every vehicle's engine stepped to the next sync boundary on
//! a thread pool, then the separation check on one thread, in index order.
//!
//! Between two sync boundaries the vehicles are independent (each one has
//! its own streams and its own autopilot instance), so which thread steps
//! which vehicle cannot change a bit of the result; the collisions found at
//! a boundary act on both vehicles from the next boundary on.
//!
//! When no pair can come near ([`crate::lookahead`]), the vehicles step a
//! stretch of sync periods in one go (one barrier instead of many),
//! recording their positions at every boundary; the separation is then
//! observed at each of them in order, as if checked there. A stretch that
//! broke its bound is redone from the vehicles' snapshots at the plain
//! sync period, so the results are the same bits either way.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use lockstep_abi::Isolation;
use lockstep_harness::Micros;
use lockstep_harness::engine::{Engine, EngineError, Pace, Reach, RunOptions};
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::outcome::Summary;
use lockstep_harness::outcome::report::VehicleOutcome;
use rayon::prelude::*;

use crate::lookahead::{LookaheadSettings, boundaries, check_stretch, horizon};
use crate::scenario::FleetScenario;
use crate::separation::{Closest, Encounter, Separation};
use crate::starts::{Start, check_starts};

/// Why a fleet run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// One vehicle's engine failed (its autopilot crashed, its log could
    /// not be written, …); every other vehicle's log is complete to the
    /// same boundary.
    #[error("vehicle `{vehicle}`: {source}")]
    Vehicle {
        vehicle: String,
        #[source]
        source: EngineError,
    },
    #[error("cannot create the log directory {path}: {reason}")]
    LogDir { path: String, reason: String },
    #[error("cannot start a pool of {threads} threads: {reason}")]
    Threads { threads: usize, reason: String },
    #[error("interrupted by {} at {}", lockstep_abi::signal_name(*signal), lockstep_abi::at(*time_us))]
    Interrupted { signal: i32, time_us: u64 },
    /// Two vehicles start where the other is.
    #[error("{0}")]
    Overlap(String),
    /// The ground stations' link failed (e.g. its record could not be
    /// written).
    #[error("ground station link at {}: {reason}", lockstep_abi::at(*time_us))]
    GroundStation { reason: String, time_us: u64 },
}

/// What a fleet's run produced, however it ran (on threads here, or across
/// processes by `lockstep-distributed`): the one result a fleet's report
/// is made of.
#[derive(Debug, Clone)]
pub struct FleetResult {
    pub end: Micros,
    /// Sync boundaries processed.
    pub syncs: u64,
    /// Each vehicle's name and outcome, in the scenario's order (`None`:
    /// its run did not end).
    pub vehicles: Vec<(String, Option<VehicleOutcome>)>,
    pub encounters: Vec<Encounter>,
    /// Encounters past the bound, counted only.
    pub encounters_dropped: u64,
    pub closest: Option<Closest>,
    pub collisions: usize,
    pub lookahead: LookaheadStats,
}

/// How a fleet run on threads ended: its result, and each vehicle's
/// summary (in the result's order) with what only this process has (the
/// crashes and timeline as values).
#[derive(Debug, Clone)]
pub struct FleetSummary {
    pub fleet: FleetResult,
    pub summaries: Vec<Summary>,
}

/// What the lookahead did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LookaheadStats {
    /// Times the vehicles were stepped and met (a stretch or one period).
    pub rounds: u64,
    /// Stretches redone at the plain sync period: a vehicle went beyond
    /// its bound, or a pair collided inside the stretch.
    pub redone: u64,
    /// Why the fleet checks every sync period, when it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off: Option<String>,
}

impl FleetSummary {
    /// Every vehicle's verdict passed.
    pub fn passed(&self) -> bool {
        self.summaries.iter().all(|s| s.verdict.passed())
    }

    /// Vehicle `name`'s summary.
    pub fn summary(&self, name: &str) -> Option<&Summary> {
        let i = self.fleet.vehicles.iter().position(|(n, _)| n == name)?;
        self.summaries.get(i)
    }
}

/// A fleet built and ready to step.
pub struct Fleet {
    /// Each vehicle's scenario and autopilot, to build it again.
    vehicles: Vec<(Scenario, PathBuf)>,
    isolation: Isolation,
    names: Vec<String>,
    engines: Vec<Engine>,
    separation: Separation,
    pool: rayon::ThreadPool,
    sync: Micros,
    end: Micros,
    now: Micros,
    syncs: u64,
    interrupt: Option<Arc<AtomicUsize>>,
    radii: Vec<f64>,
    lookahead: LookaheadSettings,
    /// Every sync period is checked up to here (a stretch being redone).
    plain_until: Micros,
    stats: LookaheadStats,
    /// Kept to the wall clock (a fleet served to ground stations).
    pace: Option<Pace>,
}

impl std::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fleet")
            .field("vehicles", &self.names)
            .field("now", &self.now)
            .finish_non_exhaustive()
    }
}

/// The radius a vehicle declares by default: its farthest rotor tip from
/// the centre of mass.
pub fn rotor_tip_radius_m(plant: &lockstep_plant::Multirotor) -> f64 {
    plant
        .rotors
        .iter()
        .map(|r| r.position_m.norm())
        .fold(0.0, f64::max)
        + plant.propeller.radius_m
}

/// The log of vehicle `name` in `dir`.
pub fn log_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.csv"))
}

impl Fleet {
    /// Builds every vehicle's engine (in the scenario's order).
    pub fn new(fs: &FleetScenario, o: &RunOptions) -> Result<Fleet, FleetError> {
        let threads = o.threads_or(None);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("lockstep-fleet-{i}"))
            .build()
            .map_err(|e| FleetError::Threads {
                threads,
                reason: e.to_string(),
            })?;
        if let Some(dir) = &o.log_dir {
            std::fs::create_dir_all(dir).map_err(|e| FleetError::LogDir {
                path: dir.display().to_string(),
                reason: e.to_string(),
            })?;
        }
        let mut engines = Vec::with_capacity(fs.vehicles.len());
        let mut radii = Vec::with_capacity(fs.vehicles.len());
        for v in &fs.vehicles {
            let log = match (&o.log_dir, v.scenario.cadence("log")) {
                (Some(dir), Some(_)) => Some(log_path(dir, &v.name)),
                _ => None,
            };
            let autopilot = v.autopilot.as_deref().unwrap_or(&o.autopilot);
            let engine =
                Engine::with_isolation(&v.scenario, autopilot, log.as_deref(), &o.isolation)
                    .map_err(|source| FleetError::Vehicle {
                        vehicle: v.name.clone(),
                        source,
                    })?;
            radii.push(
                v.radius_m
                    .unwrap_or_else(|| rotor_tip_radius_m(engine.plant())),
            );
            engines.push(engine);
        }
        let starts: Vec<Start> = fs
            .vehicles
            .iter()
            .zip(&engines)
            .zip(&radii)
            .map(|((v, e), r)| {
                let x = e.state();
                Start::new(&v.name, e.plant(), [x[0], x[1], x[2]], Some(*r))
            })
            .collect();
        check_starts(&starts).map_err(FleetError::Overlap)?;
        let end = fs.vehicles[0].scenario.duration;
        // A stretch is redone from snapshots: every autopilot must give one.
        let off = if fs.lookahead.max.0 < 2 * fs.sync.0 {
            Some("lookahead_max_s is under two sync periods".to_string())
        } else {
            engines
                .iter_mut()
                .zip(&fs.vehicles)
                .find_map(|(e, v)| (!e.can_migrate()).then_some(v))
                .map(|v| {
                    format!(
                        "vehicle `{}`'s autopilot gives no snapshot (lockstep_autopilot_snapshot)",
                        v.name
                    )
                })
        };
        Ok(Fleet {
            vehicles: fs
                .vehicles
                .iter()
                .map(|v| {
                    let ap = v.autopilot.as_deref().unwrap_or(&o.autopilot);
                    (v.scenario.clone(), ap.to_path_buf())
                })
                .collect(),
            isolation: o.isolation.clone(),
            names: fs.vehicles.iter().map(|v| v.name.clone()).collect(),
            engines,
            separation: Separation::new(&radii, fs.proximity_m),
            radii,
            lookahead: fs.lookahead,
            plain_until: Micros(0),
            pace: None,
            stats: LookaheadStats {
                off,
                ..LookaheadStats::default()
            },
            pool,
            sync: fs.sync,
            end,
            now: Micros(0),
            syncs: 0,
            interrupt: None,
        })
    }

    /// Stops [`Fleet::run`] at the next round (a sync boundary, or the end
    /// of a stretch of them) once `flag` holds a signal number.
    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.interrupt = Some(flag);
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn engines(&self) -> &[Engine] {
        &self.engines
    }

    /// The last sync boundary processed.
    pub fn now(&self) -> Micros {
        self.now
    }

    pub fn end(&self) -> Micros {
        self.end
    }

    /// The next sync boundary: 0 first, then every sync period, the end
    /// last; `None` after the end.
    pub fn next_sync(&self) -> Option<Micros> {
        if self.syncs == 0 {
            Some(Micros(0))
        } else if self.now >= self.end {
            None
        } else {
            Some(Micros((self.now.0 + self.sync.0).min(self.end.0)))
        }
    }

    /// Steps every vehicle through the next sync boundary (or, when the
    /// lookahead grants it, through a stretch of them), then checks the
    /// separation there; returns the last boundary processed, `None` once
    /// the end has been. On a vehicle's error the fleet stays at the
    /// previous check (call [`Fleet::finish`] with the error).
    pub fn step(&mut self) -> Result<Option<Micros>, FleetError> {
        let Some(t) = self.next_sync() else {
            return Ok(None);
        };
        self.stats.rounds += 1;
        let periods = self.horizon();
        if periods > 1 {
            return self.step_ahead(periods);
        }
        self.step_plain(t)
    }

    /// The sync periods the next round may cover (1: the next boundary).
    fn horizon(&self) -> u64 {
        if self.syncs == 0 || self.stats.off.is_some() || self.now < self.plain_until {
            return 1;
        }
        let reach: Vec<Reach> = self.engines.iter().map(Engine::reach).collect();
        horizon(&reach, &self.radii, &self.lookahead, self.sync)
    }

    /// A stretch of `periods` sync periods in one round: every vehicle
    /// snapshot, stepped through each boundary (its positions kept, its
    /// log rows held back); then the separation observed at each boundary
    /// in order and every position checked against its reach. Kept, the
    /// rows are written; broken (a vehicle beyond its reach, a collision
    /// before the last boundary, a vehicle whose engine failed), every
    /// vehicle is restored and the stretch is stepped again one sync period
    /// at a time, where a failure comes back at its own boundary.
    fn step_ahead(&mut self, periods: u64) -> Result<Option<Micros>, FleetError> {
        let times = boundaries(self.now, periods, self.sync, self.end);
        let start = self.now;
        let last = *times.last().expect("a stretch has a boundary");
        // Every vehicle snapshot before any steps: one that cannot be makes
        // the fleet check every period from here on (the report says why).
        let snapped: Vec<Result<(Reach, Vec<u8>), EngineError>> = self.pool.install(|| {
            self.engines
                .par_iter_mut()
                .map(|e| e.snapshot().map(|s| (e.reach(), s)))
                .collect()
        });
        let mut states = Vec::with_capacity(snapped.len());
        for (r, name) in snapped.into_iter().zip(&self.names) {
            match r {
                Ok(v) => states.push(v),
                Err(err) => {
                    self.stats.off = Some(format!("vehicle `{name}` gave no snapshot: {err}"));
                    return self.step_plain(times[0]);
                }
            }
        }
        let stepped: Vec<Result<Vec<[f64; 3]>, EngineError>> = self.pool.install(|| {
            self.engines
                .par_iter_mut()
                .map(|e| {
                    e.hold_rows();
                    let mut at = Vec::with_capacity(times.len());
                    for t in &times {
                        step_to(e, *t)?;
                        let x = e.state();
                        at.push([x[0], x[1], x[2]]);
                    }
                    Ok(at)
                })
                .collect()
        });
        let collided = if stepped.iter().all(Result::is_ok) {
            let reach: Vec<Reach> = states.iter().map(|(r, _)| *r).collect();
            let at: Vec<&Vec<[f64; 3]>> = stepped.iter().flatten().collect();
            check_stretch(&mut self.separation, &reach, start, &times, |k| {
                at.iter().map(|a| a[k]).collect()
            })
        } else {
            None
        };
        let Some(last_collisions) = collided else {
            self.stats.redone += 1;
            // The stretch's round, then the redo's.
            self.stats.rounds += 1;
            for (i, (_, state)) in states.iter().enumerate() {
                self.restore(i, state)?;
            }
            self.plain_until = last;
            return self.step_plain(times[0]);
        };
        for (e, name) in self.engines.iter_mut().zip(&self.names) {
            if let Err(source) = e.commit_rows() {
                return Err(FleetError::Vehicle {
                    vehicle: name.clone(),
                    source: ended(e, source),
                });
            }
        }
        self.now = last;
        self.syncs += times.len() as u64;
        for (a, b, d) in last_collisions {
            let (na, nb) = (self.names[a].clone(), self.names[b].clone());
            self.engines[a].collide(&nb, d);
            self.engines[b].collide(&na, d);
        }
        Ok(Some(last))
    }

    /// Vehicle `i` back to `state` (its rows since dropped); an engine that
    /// cannot take it (its autopilot's host died in the stretch) is built
    /// again from its scenario, as a migration does, its log going on.
    fn restore(&mut self, i: usize, state: &[u8]) -> Result<(), FleetError> {
        let fail = |e: &mut Engine, source| FleetError::Vehicle {
            vehicle: self.names[i].clone(),
            source: ended(e, source),
        };
        let e = &mut self.engines[i];
        e.drop_rows();
        if e.restore(state).is_ok() {
            return Ok(());
        }
        let (scenario, autopilot) = &self.vehicles[i];
        let mut fresh = match Engine::with_isolation(scenario, autopilot, None, &self.isolation)
            .and_then(|mut f| f.restore(state).map(|()| f))
        {
            Ok(f) => f,
            Err(source) => return Err(fail(e, source)),
        };
        if let Some(log) = e.take_log() {
            fresh.put_log(log);
        }
        let mut old = std::mem::replace(e, fresh);
        // The broken instance is closed; what it says is the stretch's.
        let _ = old.finish(Ok(()));
        Ok(())
    }

    /// Steps every vehicle through boundary `t`, then checks the
    /// separation there.
    fn step_plain(&mut self, t: Micros) -> Result<Option<Micros>, FleetError> {
        let names = &self.names;
        let results: Vec<Result<(), FleetError>> = self.pool.install(|| {
            self.engines
                .par_iter_mut()
                .zip(names.par_iter())
                .map(|(e, name)| {
                    step_to(e, t).map_err(|source| {
                        // Ended here, log flushed, with its own error
                        // (which `finish` returns).
                        let source = match e.finish(Err(source)) {
                            Err(e) => e,
                            Ok(_) => unreachable!("finish returns the error it is given"),
                        };
                        FleetError::Vehicle {
                            vehicle: name.clone(),
                            source,
                        }
                    })
                })
                .collect()
        });
        // The first failure in the scenario's order.
        results.into_iter().collect::<Result<Vec<()>, _>>()?;
        self.now = t;
        self.syncs += 1;
        let positions: Vec<[f64; 3]> = self
            .engines
            .iter()
            .map(|e| {
                let x = e.state();
                [x[0], x[1], x[2]]
            })
            .collect();
        for (a, b, d) in self.separation.observe(t, &positions) {
            let (na, nb) = (self.names[a].clone(), self.names[b].clone());
            self.engines[a].collide(&nb, d);
            self.engines[b].collide(&na, d);
        }
        Ok(Some(t))
    }

    /// Moves vehicle `i` into a new engine built from its scenario (a new
    /// autopilot instance, in a new host process when isolated): its state
    /// at this boundary is snapshot and restored there, its log goes on.
    /// What a distributed run does when a vehicle changes secondaries; the
    /// run goes on exactly as it would have without.
    pub fn migrate(&mut self, i: usize) -> Result<(), FleetError> {
        let name = self.names[i].clone();
        let fail = |source| FleetError::Vehicle {
            vehicle: name.clone(),
            source,
        };
        let (scenario, autopilot) = &self.vehicles[i];
        let state = self.engines[i].snapshot().map_err(fail)?;
        let mut moved =
            Engine::with_isolation(scenario, autopilot, None, &self.isolation).map_err(fail)?;
        moved.restore(&state).map_err(fail)?;
        let mut old = std::mem::replace(&mut self.engines[i], moved);
        if let Some(log) = old.take_log() {
            self.engines[i].put_log(log);
        }
        // The old instance is closed; its log went on in the new engine.
        old.finish(Ok(())).map_err(fail)?;
        Ok(())
    }

    /// Keeps the fleet to the wall clock: `speed` simulated seconds per
    /// second, waited for at each sync boundary; the outputs do not change.
    pub fn pace(&mut self, speed: f64) {
        self.pace = Some(Pace::new(speed, self.now));
    }

    /// Runs to the end (or the first error); every log is complete to the
    /// last boundary processed either way.
    pub fn run(&mut self) -> Result<FleetSummary, FleetError> {
        self.run_observed(|_| {})
    }

    /// [`Fleet::run_observed`], calling `each` with every vehicle's engine
    /// after every sync boundary (ground stations' link: inputs applied
    /// there, telemetry sent). The lookahead is off, as an input may come
    /// at any sync boundary; an error from `each` ends the run.
    pub fn run_with(
        &mut self,
        progress: impl FnMut(Micros),
        mut each: impl FnMut(&mut [Engine]) -> Result<(), String>,
    ) -> Result<FleetSummary, FleetError> {
        if self.stats.off.is_none() {
            self.stats.off =
                Some("ground stations are served: an input may come at any sync boundary".into());
        }
        self.run_each(progress, |engines, t| {
            each(engines).map_err(|reason| FleetError::GroundStation {
                reason,
                time_us: t.0,
            })
        })
    }

    /// [`Fleet::run`], calling `progress` with the time of every 64th sync
    /// boundary.
    pub fn run_observed(
        &mut self,
        progress: impl FnMut(Micros),
    ) -> Result<FleetSummary, FleetError> {
        self.run_each(progress, |_, _| Ok(()))
    }

    fn run_each(
        &mut self,
        mut progress: impl FnMut(Micros),
        mut each: impl FnMut(&mut [Engine], Micros) -> Result<(), FleetError>,
    ) -> Result<FleetSummary, FleetError> {
        let result = loop {
            if let Some(f) = &self.interrupt {
                let signal = f.load(Ordering::Relaxed);
                if signal != 0 {
                    break Err(FleetError::Interrupted {
                        signal: signal as i32,
                        time_us: self.now.0,
                    });
                }
            }
            let before = self.syncs;
            match self.step() {
                Ok(Some(t)) => {
                    if self.syncs / 64 != before / 64 {
                        progress(t);
                    }
                    if let Err(e) = each(&mut self.engines, t) {
                        break Err(e);
                    }
                    if let Some(p) = &mut self.pace {
                        p.wait_for(t);
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.finish(result)
    }

    /// Ends every vehicle's run where it is (logs flushed, instances
    /// closed); the first error (`result`'s, else the first vehicle's in
    /// the scenario's order) is the fleet's.
    pub fn finish(&mut self, result: Result<(), FleetError>) -> Result<FleetSummary, FleetError> {
        let failed = match &result {
            Err(FleetError::Vehicle { vehicle, .. }) => Some(vehicle.clone()),
            _ => None,
        };
        let mut result = result;
        let mut vehicles = Vec::with_capacity(self.engines.len());
        for (e, name) in self.engines.iter_mut().zip(&self.names) {
            // A vehicle that failed was ended where it failed.
            if failed.as_deref() == Some(name.as_str()) || e.is_finished() {
                continue;
            }
            match e.finish(Ok(())) {
                Ok(s) => vehicles.push((name.clone(), s)),
                Err(source) => {
                    if result.is_ok() {
                        result = Err(FleetError::Vehicle {
                            vehicle: name.clone(),
                            source,
                        });
                    }
                }
            }
        }
        result?;
        let (names, summaries): (Vec<String>, Vec<Summary>) = vehicles.into_iter().unzip();
        Ok(FleetSummary {
            fleet: FleetResult {
                end: self.now,
                syncs: self.syncs,
                vehicles: names
                    .into_iter()
                    .zip(&summaries)
                    .map(|(n, s)| (n, Some(VehicleOutcome::of(s))))
                    .collect(),
                encounters: self.separation.encounters().to_vec(),
                encounters_dropped: self.separation.dropped(),
                closest: self.separation.closest(),
                collisions: self.separation.collisions(),
                lookahead: self.stats.clone(),
            },
            summaries,
        })
    }
}

/// `e` ended where it is with `source`, its log flushed; the error
/// (which `finish` returns).
fn ended(e: &mut Engine, source: EngineError) -> EngineError {
    match e.finish(Err(source)) {
        Err(e) => e,
        Ok(_) => unreachable!("finish returns the error it is given"),
    }
}

/// Steps `e` through every boundary up to and including `t`.
fn step_to(e: &mut Engine, t: Micros) -> Result<(), EngineError> {
    while e.next_time().is_some_and(|n| n <= t) {
        e.step()?;
    }
    Ok(())
}
