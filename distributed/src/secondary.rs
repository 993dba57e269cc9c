//! A secondary: builds and steps the vehicles the primary gives it, and
//! answers every step with their positions and log rows (and, for a
//! vehicle leaving it, its whole state). A stretch of sync periods is
//! stepped in one round, each vehicle snapshot first and its position
//! kept at every boundary; the primary may have it redone.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_fleet::FleetScenario;
use lockstep_harness::Micros;
use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::persist::Persist;

use crate::link::{LinkError, SecondaryLink};
use crate::protocol::{Ack, Failure, Frame, Report, Step};
use crate::served::{Relay, Station};
use lockstep_harness::engine::classify::classify;
use lockstep_harness::outcome::report::VehicleOutcome;

/// Why a secondary stopped.
#[derive(Debug, thiserror::Error)]
pub enum SecondaryError {
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("the primary stopped the run: {0}")]
    Aborted(String),
    #[error("vehicle `{vehicle}`: {source}")]
    Vehicle {
        vehicle: String,
        #[source]
        source: EngineError,
    },
}

/// A secondary's vehicles and its end of the link.
pub struct Secondary<L: SecondaryLink> {
    link: L,
    fleet: FleetScenario,
    autopilot: PathBuf,
    isolation: Isolation,
    engines: BTreeMap<u32, Engine>,
    /// Each vehicle's snapshot before the last stretch (to redo it).
    kept: BTreeMap<u32, Vec<u8>>,
    /// Each vehicle's position at every boundary of the last step.
    positions: BTreeMap<u32, Vec<[f64; 3]>>,
    /// Steps answered.
    pub rounds: u64,
    /// The last step's iteration.
    last: Option<u64>,
    /// Its vehicles served to ground stations.
    station: Option<Box<dyn Station>>,
    /// The sync boundary its vehicles are at, and whether they were served
    /// there.
    at: Option<(u64, bool)>,
    /// Frames and warnings relayed and not yet served (a paused round's).
    inbox: (Vec<Frame>, Vec<String>),
    /// What the vehicles did since the last ack.
    relay: Relay,
    link_error: Option<String>,
}

impl<L: SecondaryLink> std::fmt::Debug for Secondary<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secondary")
            .field("index", &self.link.index())
            .field("vehicles", &self.engines.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<L: SecondaryLink> Secondary<L> {
    pub fn new(link: L, fleet: FleetScenario, autopilot: PathBuf, isolation: Isolation) -> Self {
        Secondary {
            link,
            fleet,
            autopilot,
            isolation,
            engines: BTreeMap::new(),
            kept: BTreeMap::new(),
            positions: BTreeMap::new(),
            rounds: 0,
            last: None,
            station: None,
            at: None,
            inbox: (Vec::new(), Vec::new()),
            relay: Relay::default(),
            link_error: None,
        }
    }

    /// Serves its vehicles to ground stations through `station` (a served
    /// run's setup says so).
    pub fn serve(&mut self, station: Box<dyn Station>) {
        self.station = Some(station);
    }

    fn name(&self, p: u32) -> String {
        self.fleet
            .vehicles
            .get(p as usize)
            .map_or_else(|| format!("#{p}"), |v| v.name.clone())
    }

    fn build(&self, p: u32) -> Result<Engine, EngineError> {
        let v = &self.fleet.vehicles[p as usize];
        let ap = v.autopilot.as_deref().unwrap_or(&self.autopilot);
        let mut e = Engine::with_isolation(&v.scenario, ap, None, &self.isolation)?;
        e.capture_rows();
        Ok(e)
    }

    /// Answers steps until the primary stops the run (`Ok`) or abandons it.
    pub fn run(&mut self) -> Result<(), SecondaryError> {
        loop {
            let step = match self.link.next_step() {
                Ok(s) => s,
                Err(e) => {
                    self.close_all();
                    return Err(e.into());
                }
            };
            // A step already answered (sent again) is not acted on twice.
            if self.last.is_some_and(|l| step.iteration <= l) {
                continue;
            }
            self.last = Some(step.iteration);
            if let Some(reason) = &step.abort {
                self.close_all();
                return Err(SecondaryError::Aborted(reason.clone()));
            }
            let stop = step.stop;
            let ack = self.answer(&step, Instant::now());
            self.link.ack(&ack)?;
            self.rounds += 1;
            if stop {
                return Ok(());
            }
        }
    }

    /// Ends every vehicle's run (its autopilot closed).
    fn close_all(&mut self) {
        for e in self.engines.values_mut() {
            if !e.is_finished() {
                let _ = e.finish(Ok(()));
            }
        }
        self.engines.clear();
    }

    /// The ack of `step`, received at `received`.
    fn answer(&mut self, step: &Step, received: Instant) -> Ack {
        let me = self.link.index();
        let mut failure = None;
        let mut released: BTreeMap<u32, (Vec<u8>, [f64; 3])> = BTreeMap::new();
        let result = self.act(step, me, &mut released);
        if let Err((p, e)) = result {
            failure = Some(Failure {
                performer: p,
                message: format!("vehicle `{}`: {e}", self.name(p)),
                status: classify(&e).exit_status(),
            });
        }
        let mut performers = Vec::new();
        for (&p, e) in &mut self.engines {
            let x = e.state();
            let position = [x[0], x[1], x[2]];
            let positions = self.positions.remove(&p).unwrap_or_else(|| vec![position]);
            let reach = e.reach();
            let rows = e.take_rows();
            let mut bytes = Vec::new();
            for r in &rows {
                r.save(&mut bytes);
            }
            let summary = if step.stop && !e.is_finished() {
                match e.finish(Ok(())) {
                    Ok(s) => Some(VehicleOutcome::of(&s)),
                    Err(err) => {
                        if failure.is_none() {
                            failure = Some(Failure {
                                performer: p,
                                message: format!(
                                    "vehicle `{}`: {err}",
                                    self.fleet.vehicles[p as usize].name
                                ),
                                status: classify(&err).exit_status(),
                            });
                        }
                        None
                    }
                }
            } else {
                None
            };
            performers.push(Report {
                performer: p,
                position_ned_m: position,
                positions,
                speed_mps: reach.speed_mps,
                accel_mps2: reach.accel_mps2,
                rows: bytes,
                row_count: rows.len() as u32,
                state: None,
                can_migrate: step.iteration == 0 && e.can_migrate(),
                outcome: summary,
            });
        }
        for (p, (state, position)) in released {
            performers.push(Report {
                performer: p,
                position_ned_m: position,
                positions: vec![position],
                speed_mps: 0.0,
                accel_mps2: 0.0,
                rows: Vec::new(),
                row_count: 0,
                state: Some(state),
                can_migrate: true,
                outcome: None,
            });
        }
        performers.sort_by_key(|r| r.performer);
        let relay = std::mem::take(&mut self.relay);
        let link_notes = match &self.station {
            Some(s) if step.stop => s.notes(),
            _ => Vec::new(),
        };
        Ack {
            iteration: step.iteration,
            sender: me,
            time_us: step.time_us,
            performers,
            failure,
            mavlink: relay.frames,
            recorded: relay.recorded,
            link_notes,
            link_error: self.link_error.take(),
            work_us: received.elapsed().as_micros() as u64,
            digest: [0; 32],
        }
        .sealed()
    }

    /// The step's work: vehicles given to this secondary, collisions,
    /// vehicles leaving and arriving, then stepping.
    fn act(
        &mut self,
        step: &Step,
        me: u32,
        released: &mut BTreeMap<u32, (Vec<u8>, [f64; 3])>,
    ) -> Result<(), (u32, EngineError)> {
        self.positions.clear();
        // A stretch redone starts from the snapshots taken before it; any
        // other step confirms the last one.
        let kept = std::mem::take(&mut self.kept);
        if step.redo {
            for (p, state) in &kept {
                let restored = match self.engines.get_mut(p) {
                    Some(e) => e.restore(state).map(|()| e.take_rows().clear()),
                    None => continue,
                };
                if restored.is_err() {
                    // Its autopilot's host died in the stretch: a new
                    // engine takes the state, as an arriving vehicle does.
                    let mut e = self.build(*p).map_err(|err| (*p, err))?;
                    e.restore(state).map_err(|err| (*p, err))?;
                    if let Some(mut old) = self.engines.insert(*p, e) {
                        let _ = old.finish(Ok(()));
                    }
                }
            }
        }
        let arriving: Vec<u32> = step
            .arrivals
            .iter()
            .filter(|a| a.to == me)
            .map(|a| a.performer)
            .collect();
        for &(p, owner) in &step.affinity {
            if owner == me && !self.engines.contains_key(&p) && !arriving.contains(&p) {
                let e = self.build(p).map_err(|e| (p, e))?;
                self.engines.insert(p, e);
            }
        }
        for c in &step.collisions {
            for (x, y) in [(c.a, c.b), (c.b, c.a)] {
                let other = self.name(y);
                if let Some(e) = self.engines.get_mut(&x) {
                    e.collide(&other, c.separation_m);
                }
            }
        }
        for p in &step.release {
            if let Some(mut e) = self.engines.remove(p) {
                let state = e.snapshot().map_err(|err| (*p, err))?;
                let x = e.state();
                let position = [x[0], x[1], x[2]];
                e.finish(Ok(())).map_err(|err| (*p, err))?;
                released.insert(*p, (state, position));
            }
        }
        for a in step.arrivals.iter().filter(|a| a.to == me) {
            let mut e = self.build(a.performer).map_err(|e| (a.performer, e))?;
            e.restore(&a.state).map_err(|e| (a.performer, e))?;
            self.engines.insert(a.performer, e);
        }
        self.serve_here(step);
        // Its link failed: the vehicles stay at this boundary (the primary
        // ends the run here, as a run in one process does).
        if !step.paused && !step.stop && self.link_error.is_none() {
            self.at = Some((step.time_us, false));
            let last = Micros(step.time_us);
            let period = step.step_us.max(1);
            if step.keep {
                // Every vehicle before any steps: a failure anywhere in the
                // stretch is redone from here.
                for (&p, e) in &mut self.engines {
                    let state = e.snapshot().map_err(|err| (p, err))?;
                    self.kept.insert(p, state);
                }
            }
            for (&p, e) in &mut self.engines {
                let mut at = Vec::new();
                let mut t = Micros(step.first_us.min(step.time_us));
                loop {
                    while e.next_time().is_some_and(|n| n <= t) {
                        e.step().map_err(|err| (p, err))?;
                    }
                    let x = e.state();
                    at.push([x[0], x[1], x[2]]);
                    if t >= last {
                        break;
                    }
                    t = Micros((t.0 + period).min(last.0));
                }
                self.positions.insert(p, at);
            }
        }
        Ok(())
    }

    /// A served run: the frames relayed applied at the boundary the
    /// vehicles are at, once (after that boundary's collisions, before they
    /// step on), unless the run is paused.
    fn serve_here(&mut self, step: &Step) {
        let Some(station) = &mut self.station else {
            return;
        };
        self.inbox.0.extend(step.mavlink.iter().cloned());
        self.inbox.1.extend(step.warnings.iter().cloned());
        let Some((_, served @ false)) = &mut self.at else {
            return;
        };
        if step.paused {
            return;
        }
        *served = true;
        let (frames, warnings) = std::mem::take(&mut self.inbox);
        match station.serve(&mut self.engines, &frames, &warnings) {
            Ok(r) => {
                self.relay.frames.extend(r.frames);
                self.relay.recorded.extend(r.recorded);
            }
            Err(e) => self.link_error = Some(e),
        }
    }
}
