//! A vehicle of the fleet: a lockstep engine (its scenario, the autopilot,
//! the plant) stepped to each timestamp it is called at, publishing
//! telemetry at its cadence and an event when its state changes (ready on
//! its pad, landed, crashed). A mission from the dispatcher is uploaded to
//! the autopilot and started (arm, mission start); a swap from the station
//! refills its batteries. Given a log path, the engine writes the
//! vehicle's flight log and sidecar as `fly` does, finished (whatever
//! ended the run) when the model is.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use lockstep_abi::Isolation;
use lockstep_abi::ffi::{
    LOCKSTEP_MAV_CMD_NAV_LAND, LOCKSTEP_MAV_CMD_NAV_TAKEOFF, LOCKSTEP_MAV_CMD_NAV_WAYPOINT,
    LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT, LOCKSTEP_MODE_DISARMED, LOCKSTEP_MODE_IDLE,
    LOCKSTEP_MODE_LANDED, lockstep_mission_item,
};
use lockstep_harness::Micros;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::{Action, Scenario};
use lockstep_orchestrator::{DataMask, Key, Model, Moment, Outcome, Timestamp, Update};
use lockstep_plant::env::geodesy::{Geodetic, WorldOrigin};
use serde_json::{Value, json};

/// A leg being flown.
#[derive(Debug, Clone)]
struct Leg {
    leg: String,
    order: Value,
    /// Where it is to land (north, east).
    land: [f64; 2],
    /// The autopilot has left the ground on it.
    airborne: bool,
}

pub struct Vehicle {
    name: String,
    engine: Engine,
    origin: WorldOrigin,
    /// Timestamp of engine time zero.
    start: Option<Timestamp>,
    every: Timestamp,
    next_tick: Timestamp,
    leg: Option<Leg>,
    events: VecDeque<Value>,
    crashed: bool,
    flights: u64,
    swaps: u64,
    /// Where its engine writes its log (and the sidecar beside it).
    log: Option<PathBuf>,
    /// A step of its engine failed (that error is the run's).
    failed: bool,
}

impl std::fmt::Debug for Vehicle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vehicle")
            .field("name", &self.name)
            .field("now", &self.engine.now())
            .field("leg", &self.leg)
            .finish_non_exhaustive()
    }
}

/// A landing this close to the leg's end is where it was sent, m.
pub const LANDED_WITHIN_M: f64 = 5.0;

fn on_ground(mode: u32) -> bool {
    mode == LOCKSTEP_MODE_DISARMED || mode == LOCKSTEP_MODE_IDLE || mode == LOCKSTEP_MODE_LANDED
}

impl Vehicle {
    /// The vehicle of `scenario` (its `[world]` origin required: missions
    /// are placed from it), flown by `autopilot`, its flight log written
    /// at `log` when given.
    pub fn new(
        name: &str,
        scenario: &Scenario,
        autopilot: &Path,
        isolation: &Isolation,
        every: Timestamp,
        log: Option<&Path>,
    ) -> Result<Vehicle, String> {
        let o = scenario.world.origin.ok_or_else(|| {
            "the vehicle's scenario sets no [world] origin (a fleet's missions are placed from it)"
                .to_string()
        })?;
        let engine = Engine::with_isolation(scenario, autopilot, log, isolation)
            .map_err(|e| e.to_string())?;
        Ok(Vehicle {
            name: name.to_string(),
            engine,
            origin: WorldOrigin::new(Geodetic {
                lat_deg: o.lat_deg,
                lon_deg: o.lon_deg,
                alt_m: o.alt_m,
            }),
            start: None,
            every,
            next_tick: 0,
            leg: None,
            events: VecDeque::new(),
            crashed: false,
            flights: 0,
            swaps: 0,
            log: log.map(Path::to_path_buf),
            failed: false,
        })
    }

    fn ned(&self) -> [f64; 3] {
        let x = self.engine.state();
        [x[0], x[1], x[2]]
    }

    fn soc(&self) -> f64 {
        self.engine.state()[self.engine.plant().layout.soc(0)]
    }

    fn event(&self, kind: &str) -> Value {
        let p = self.ned();
        let (leg, order) = match &self.leg {
            Some(l) => (json!(l.leg), l.order.clone()),
            None => (Value::Null, Value::Null),
        };
        json!({"kind": kind, "leg": leg, "order": order, "north_m": p[0], "east_m": p[1],
               "soc": self.soc(), "time_us": self.engine.now().0})
    }

    /// Steps the engine to `t` (its own time: µs since the fleet's start).
    fn advance(&mut self, t: Micros) -> Result<(), String> {
        while let Some(n) = self.engine.next_time() {
            if n > t {
                break;
            }
            if let Err(e) = self.engine.step() {
                self.failed = true;
                return Err(e.to_string());
            }
        }
        Ok(())
    }

    fn item(&self, command: u32, n: f64, e: f64, alt: f64) -> lockstep_mission_item {
        let g = self.origin.to_geodetic([n, e, 0.0]);
        lockstep_mission_item {
            command,
            frame: LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT,
            lat_deg: g.lat_deg,
            lon_deg: g.lon_deg,
            alt_m: alt as f32,
            autocontinue: 1,
            ..Default::default()
        }
    }

    fn fly(&mut self, m: &Value) -> Result<(), String> {
        let bad = || format!("a malformed mission: {m}");
        let wps = m["waypoints"].as_array().ok_or_else(bad)?;
        let land = m["land"].as_array().ok_or_else(bad)?;
        let num = |v: &Value| v.as_f64().ok_or_else(bad);
        let mut items = Vec::with_capacity(wps.len() + 2);
        let first_alt = wps
            .first()
            .and_then(|w| w.get(2))
            .and_then(Value::as_f64)
            .ok_or_else(bad)?;
        items.push(lockstep_mission_item {
            command: LOCKSTEP_MAV_CMD_NAV_TAKEOFF,
            frame: LOCKSTEP_MAV_FRAME_GLOBAL_RELATIVE_ALT,
            alt_m: first_alt as f32,
            autocontinue: 1,
            ..Default::default()
        });
        for w in wps {
            let w = w.as_array().filter(|w| w.len() == 3).ok_or_else(bad)?;
            items.push(self.item(
                LOCKSTEP_MAV_CMD_NAV_WAYPOINT,
                num(&w[0])?,
                num(&w[1])?,
                num(&w[2])?,
            ));
        }
        if land.len() != 2 {
            return Err(bad());
        }
        items.push(self.item(
            LOCKSTEP_MAV_CMD_NAV_LAND,
            num(&land[0])?,
            num(&land[1])?,
            0.0,
        ));
        // A mission the autopilot refuses is the dispatcher's to count (the
        // order rejected), not the end of the fleet: the vehicle stays
        // where it is.
        if let Err(e) = self.engine.upload_mission(&items) {
            let mut refused = self.event("refused");
            refused["leg"] = m["leg"].clone();
            refused["order"] = m["order"].clone();
            refused["reason"] = json!(format!("the autopilot refused the mission: {e}"));
            self.events.push_back(refused);
            return Ok(());
        }
        self.engine.apply_now(Action::Arm);
        self.engine.apply_now(Action::MissionStart);
        self.leg = Some(Leg {
            leg: m["leg"].as_str().unwrap_or("out").to_string(),
            order: m["order"].clone(),
            land: [num(&land[0])?, num(&land[1])?],
            airborne: false,
        });
        self.flights += 1;
        Ok(())
    }

    fn telemetry(&self) -> Value {
        let p = self.ned();
        json!({"time_us": self.engine.now().0, "north_m": p[0], "east_m": p[1], "down_m": p[2],
               "soc": self.soc(), "mode": self.engine.actuators().mode})
    }
}

impl Model for Vehicle {
    fn mask(&self) -> DataMask {
        DataMask::new(
            &[&format!("vehicles/{}/*", self.name)],
            &[
                &format!("dispatch/{}/mission", self.name),
                "station/*/swapped",
            ],
        )
        .expect("a vehicle's name is a valid key segment")
    }

    fn initialize(&mut self, at: Moment) -> Result<Outcome, String> {
        self.start = Some(at.timestamp);
        self.next_tick = at.timestamp + self.every;
        self.advance(Micros::ZERO)?;
        Ok(Outcome::wake_at(Some(self.next_tick))
            .with(
                Key::new("vehicles", &self.name, "event"),
                self.event("ready"),
            )
            .with(
                Key::new("vehicles", &self.name, "telemetry"),
                self.telemetry(),
            ))
    }

    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        let start = self.start.unwrap_or(at.info.start_time);
        let t = Micros(at.info.micros(at.timestamp) - at.info.micros(start));
        self.advance(t)?;
        for u in inbox {
            for (k, v) in &u.data {
                match (k.dataset.as_str(), k.attribute.as_str()) {
                    ("dispatch", "mission") => self.fly(v)?,
                    ("station", "swapped") if v["vehicle"] == self.name.as_str() => {
                        self.engine.swap_batteries();
                        self.swaps += 1;
                        self.events.push_back(self.event("ready"));
                    }
                    _ => {}
                }
            }
        }
        let mode = self.engine.actuators().mode;
        let p = self.ned();
        let mut landed = None;
        if let Some(l) = &mut self.leg {
            if !on_ground(mode) {
                l.airborne = true;
            } else if l.airborne {
                // Landed where it was sent, or elsewhere (a failsafe).
                let off = (p[0] - l.land[0]).hypot(p[1] - l.land[1]);
                landed = Some(if off <= LANDED_WITHIN_M {
                    "landed"
                } else {
                    "diverted"
                });
            }
        }
        if let Some(kind) = landed {
            self.events.push_back(self.event(kind));
            self.leg = None;
        }
        if !self.crashed && self.engine.crashed() {
            self.crashed = true;
            self.events.push_back(self.event("crashed"));
        }
        let mut out = Outcome::default();
        // One event per call (a key holds one value); more wait a timestamp.
        if let Some(e) = self.events.pop_front() {
            out.data
                .insert(Key::new("vehicles", &self.name, "event"), e);
        }
        if at.timestamp >= self.next_tick {
            out.data.insert(
                Key::new("vehicles", &self.name, "telemetry"),
                self.telemetry(),
            );
            while self.next_tick <= at.timestamp {
                self.next_tick += self.every;
            }
        }
        out.next_time = Some(if self.events.is_empty() {
            self.next_tick
        } else {
            at.timestamp + 1
        });
        Ok(out)
    }

    fn finish(&mut self) -> Result<Value, String> {
        let p = self.ned();
        let mut said = json!({
            "flights": self.flights,
            "swaps": self.swaps,
            "crashed": self.crashed,
            "soc": self.soc(),
            "position_ned_m": p,
            "simulated_s": self.engine.now().0 as f64 * 1e-6,
        });
        if let Some(log) = &self.log {
            said["log"] = json!(log.display().to_string());
        }
        // The engine's end writes the log's tail and completes its sidecar
        // before it closes the autopilot. After a failed step, closing can
        // fail again: the run's error already says why.
        if !self.engine.is_finished() {
            match self.engine.finish(Ok(())) {
                Err(e) if !self.failed => return Err(format!("ending its flight: {e}")),
                _ => {}
            }
        }
        Ok(said)
    }
}
