//! The dispatcher and airspace manager: steady state, woken only by data —
//! orders, the zone map, vehicles' events (a vehicle ready on its pad,
//! landed at a drop-off or home, crashed). It gives the oldest waiting
//! order to the first ready vehicle (in name order), routes every leg round
//! the no-fly zones with a margin, sends a vehicle low on charge to the
//! swap station after it lands home, and refuses orders no route reaches.

use std::collections::{BTreeMap, VecDeque};

use lockstep_orchestrator::{DataMask, Key, Model, Moment, Outcome, Update};
use serde_json::{Value, json};

use crate::geometry::{Zone, route};

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// On its pad, charged enough.
    Ready,
    /// Flying a leg (out: to the order's drop-off; home).
    Busy,
    /// At the station.
    Swapping,
    Lost,
}

#[derive(Debug, Clone)]
struct Vehicle {
    pad: [f64; 2],
    state: State,
    /// Its cruise altitude (its own layer).
    alt_m: f64,
}

#[derive(Debug, Clone)]
struct Order {
    id: String,
    at: [f64; 2],
}

#[derive(Debug)]
pub struct Dispatcher {
    cruise_alt_m: f64,
    alt_step_m: f64,
    swap_below_soc: f64,
    margin_m: f64,
    zones: Vec<Zone>,
    vehicles: BTreeMap<String, Vehicle>,
    waiting: VecDeque<Order>,
    assigned: u64,
    rejected: u64,
    /// Vehicles whose autopilot refused a mission, in the order they did.
    grounded: Vec<String>,
}

impl Dispatcher {
    pub fn new(cruise_alt_m: f64, alt_step_m: f64, swap_below_soc: f64, margin_m: f64) -> Self {
        Dispatcher {
            cruise_alt_m,
            alt_step_m,
            swap_below_soc,
            margin_m,
            zones: Vec::new(),
            vehicles: BTreeMap::new(),
            waiting: VecDeque::new(),
            assigned: 0,
            rejected: 0,
            grounded: Vec::new(),
        }
    }

    fn mission(&self, v: &Vehicle, from: [f64; 2], to: [f64; 2]) -> Option<Value> {
        let path = route(&self.zones, self.margin_m, from, to)?;
        let waypoints: Vec<[f64; 3]> = path[1..].iter().map(|p| [p[0], p[1], v.alt_m]).collect();
        Some(json!({"waypoints": waypoints, "land": to}))
    }

    fn event(&mut self, name: &str, e: &Value, out: &mut Outcome) -> Result<(), String> {
        let kind = e["kind"].as_str().unwrap_or_default();
        let at = [
            e["north_m"].as_f64().unwrap_or(0.0),
            e["east_m"].as_f64().unwrap_or(0.0),
        ];
        match kind {
            "ready" => {
                let n = self.vehicles.len();
                let alt_m = self.cruise_alt_m + self.alt_step_m * n as f64;
                let v = self.vehicles.entry(name.to_string()).or_insert(Vehicle {
                    pad: at,
                    state: State::Ready,
                    alt_m,
                });
                v.state = State::Ready;
            }
            "landed" | "diverted" => {
                let Some(v) = self.vehicles.get(name).cloned() else {
                    return Err(format!("`{name}` landed before it said it was ready"));
                };
                let soc = e["soc"].as_f64().unwrap_or(0.0);
                if e["leg"] == "out" || (kind == "diverted" && at != v.pad) {
                    // Home from the drop-off.
                    match self.mission(&v, at, v.pad) {
                        Some(mut m) => {
                            m["leg"] = json!("home");
                            m["order"] = e["order"].clone();
                            out.data.insert(Key::new("dispatch", name, "mission"), m);
                        }
                        None => return Err(format!("no route home for `{name}` from {at:?}")),
                    }
                } else if soc < self.swap_below_soc {
                    if let Some(v) = self.vehicles.get_mut(name) {
                        v.state = State::Swapping;
                    }
                    out.data
                        .insert(Key::new("dispatch", name, "swap"), json!({"vehicle": name}));
                } else if let Some(v) = self.vehicles.get_mut(name) {
                    v.state = State::Ready;
                }
            }
            "crashed" => {
                if let Some(v) = self.vehicles.get_mut(name) {
                    v.state = State::Lost;
                }
            }
            // The vehicle's autopilot refused the mission: an order not
            // flown is rejected, and the vehicle is grounded for the rest
            // of the run (where it is), as a fleet manager grounds a
            // vehicle that refuses a mission: it is not sent the next
            // order to refuse it too.
            "refused" => {
                let reason = e["reason"]
                    .as_str()
                    .unwrap_or("the autopilot refused the mission");
                if e["leg"] == "out" {
                    let order = e["order"].as_str().unwrap_or_default().to_string();
                    // Counted as rejected, not as assigned.
                    self.assigned = self.assigned.saturating_sub(1);
                    self.rejected += 1;
                    out.data.insert(
                        Key::new("dispatch", &order, "rejected"),
                        json!({"order": order, "reason": format!("`{name}`: {reason}")}),
                    );
                }
                if let Some(v) = self.vehicles.get_mut(name) {
                    v.state = State::Lost;
                }
                self.grounded.push(name.to_string());
            }
            _ => {}
        }
        Ok(())
    }

    /// The oldest orders to the ready vehicles, in name order.
    fn assign(&mut self, out: &mut Outcome) {
        let ready: Vec<String> = self
            .vehicles
            .iter()
            .filter(|(_, v)| v.state == State::Ready)
            .map(|(k, _)| k.clone())
            .collect();
        for name in ready {
            let v = self.vehicles[&name].clone();
            while let Some(o) = self.waiting.pop_front() {
                match self.mission(&v, v.pad, o.at) {
                    Some(mut m) => {
                        m["leg"] = json!("out");
                        m["order"] = json!(o.id);
                        out.data.insert(Key::new("dispatch", &name, "mission"), m);
                        if let Some(v) = self.vehicles.get_mut(&name) {
                            v.state = State::Busy;
                        }
                        self.assigned += 1;
                        break;
                    }
                    None => {
                        self.rejected += 1;
                        out.data.insert(
                            Key::new("dispatch", &o.id, "rejected"),
                            json!({"order": o.id, "reason": "no route keeps clear of the no-fly zones"}),
                        );
                    }
                }
            }
        }
    }
}

impl Model for Dispatcher {
    fn mask(&self) -> DataMask {
        DataMask::new(
            &["dispatch/*/*"],
            &["orders/*/request", "vehicles/*/event", "airspace/*/zones"],
        )
        .expect("the dispatcher's patterns are valid")
    }

    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }

    fn update(&mut self, _: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        let mut out = Outcome::wake_at(None);
        for u in inbox {
            for (k, v) in &u.data {
                match k.dataset.as_str() {
                    "airspace" => {
                        let z: Vec<Zone> =
                            serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                        self.zones.extend(z);
                    }
                    "orders" => self.waiting.push_back(Order {
                        id: v["id"].as_str().unwrap_or(&k.group).to_string(),
                        at: [
                            v["north_m"].as_f64().unwrap_or(0.0),
                            v["east_m"].as_f64().unwrap_or(0.0),
                        ],
                    }),
                    "vehicles" => self.event(&k.group, v, &mut out)?,
                    _ => {}
                }
            }
        }
        self.assign(&mut out);
        Ok(out)
    }

    fn finish(&mut self) -> Result<Value, String> {
        Ok(json!({
            "assigned": self.assigned,
            "rejected": self.rejected,
            "grounded": self.grounded,
            "waiting_at_end": self.waiting.len(),
        }))
    }
}
