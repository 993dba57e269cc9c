//! The fleet's simple models: the order stream (produce-only), the
//! no-fly-zone map (steady state), the battery-swap station, and the KPI
//! collector (consume-only). The dispatcher and the vehicles have their own
//! files.
//!
//! Keys (`dataset/group/attribute`):
//! - `orders/<id>/request`: `{id, north_m, east_m, placed_us}`
//! - `airspace/<map>/zones`: `[{north_m, east_m, radius_m}]`
//! - `dispatch/<vehicle>/mission`: `{leg, order, waypoints: [[n, e, alt]], land: [n, e]}`
//! - `dispatch/<vehicle>/swap`: `{vehicle}`; `dispatch/<order>/rejected`: `{order, reason}`
//! - `station/<station>/swapped`: `{vehicle}`
//! - `vehicles/<vehicle>/event`: `{kind: ready|landed|diverted|crashed|refused, leg, order, north_m, east_m, soc}`
//!   (`refused`: the autopilot refused the mission, with its `reason`)
//! - `vehicles/<vehicle>/telemetry`: `{time_us, north_m, east_m, down_m, soc, mode}`

use std::collections::{BTreeMap, VecDeque};

use lockstep_harness::time::rng::{RngStreams, Stream};
use lockstep_orchestrator::{DataMask, Key, Model, Moment, Outcome, Timestamp, Update};
use serde_json::{Value, json};

use crate::geometry::Zone;

fn mask(publishes: &[&str], subscribes: &[&str]) -> DataMask {
    DataMask::new(publishes, subscribes).expect("the fleet's own patterns are valid")
}

/// Seconds to timestamps (at least one).
pub fn to_timestamps(s: f64, scale_us: u64) -> Timestamp {
    ((s * 1e6).round() as u64).div_ceil(scale_us).max(1)
}

/// Orders at exponential intervals (mean `mean_interval_s`), drop-offs
/// uniform over a disc of `radius_m` around the depot; draws from the
/// stream `orders.<name>` of the fleet's seed.
#[derive(Debug)]
pub struct Orders {
    name: String,
    mean_interval_s: f64,
    radius_m: f64,
    first_s: f64,
    max_orders: u32,
    rng: Stream,
    placed: u32,
}

impl Orders {
    pub fn new(
        name: &str,
        seed: u64,
        mean_interval_s: f64,
        radius_m: f64,
        first_s: f64,
        max_orders: u32,
    ) -> Orders {
        Orders {
            name: name.to_string(),
            mean_interval_s,
            radius_m,
            first_s,
            max_orders,
            rng: RngStreams::new(seed).stream(&format!("orders.{name}")),
            placed: 0,
        }
    }

    fn next(&mut self, now: Timestamp, scale: u64) -> Option<Timestamp> {
        if self.placed >= self.max_orders {
            return None;
        }
        let u = self.rng.uniform();
        let gap = -self.mean_interval_s * (1.0 - u).ln();
        // A draw far in the tail can overshoot any timeline: saturate.
        Some(now.saturating_add(to_timestamps(gap, scale)))
    }
}

impl Model for Orders {
    fn mask(&self) -> DataMask {
        mask(&["orders/*/request"], &[])
    }

    fn initialize(&mut self, at: Moment) -> Result<Outcome, String> {
        let first = at
            .timestamp
            .saturating_add(to_timestamps(self.first_s, at.info.time_scale_us));
        Ok(Outcome::wake_at((self.max_orders > 0).then_some(first)))
    }

    fn update(&mut self, at: Moment, _: &[Update]) -> Result<Outcome, String> {
        self.placed += 1;
        let id = format!("{}-{:04}", self.name, self.placed);
        let r = self.radius_m * self.rng.uniform().sqrt();
        let a = std::f64::consts::TAU * self.rng.uniform();
        let next = self.next(at.timestamp, at.info.time_scale_us);
        Ok(Outcome::wake_at(next).with(
            Key::new("orders", &id, "request"),
            json!({"id": id, "north_m": r * a.cos(), "east_m": r * a.sin(), "placed_us": at.micros()}),
        ))
    }

    fn finish(&mut self) -> Result<Value, String> {
        Ok(json!({"placed": self.placed}))
    }
}

/// The no-fly-zone map: publishes its zones at the start, then never wakes
/// (steady state).
#[derive(Debug)]
pub struct NoFlyZones {
    name: String,
    zones: Vec<Zone>,
}

impl NoFlyZones {
    pub fn new(name: &str, zones: Vec<Zone>) -> NoFlyZones {
        NoFlyZones {
            name: name.to_string(),
            zones,
        }
    }
}

impl Model for NoFlyZones {
    fn mask(&self) -> DataMask {
        mask(&[&format!("airspace/{}/zones", self.name)], &[])
    }

    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None).with(
            Key::new("airspace", &self.name, "zones"),
            serde_json::to_value(&self.zones).map_err(|e| e.to_string())?,
        ))
    }

    fn update(&mut self, _: Moment, _: &[Update]) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }
}

/// The battery-swap station at the depot: swaps take `swap_s`, `bays` at a
/// time, in the order requested.
#[derive(Debug)]
pub struct SwapStation {
    name: String,
    swap: Timestamp,
    bays: usize,
    queue: VecDeque<String>,
    /// Vehicles in a bay and when they are done.
    busy: Vec<(Timestamp, String)>,
    swaps: u64,
    waited_us: u64,
    requested: BTreeMap<String, u64>,
}

impl SwapStation {
    pub fn new(name: &str, swap: Timestamp, bays: u32) -> SwapStation {
        SwapStation {
            name: name.to_string(),
            swap,
            bays: bays as usize,
            queue: VecDeque::new(),
            busy: Vec::new(),
            swaps: 0,
            waited_us: 0,
            requested: BTreeMap::new(),
        }
    }
}

impl Model for SwapStation {
    fn mask(&self) -> DataMask {
        mask(
            &[&format!("station/{}/swapped", self.name)],
            &["dispatch/*/swap"],
        )
    }

    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }

    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        let t = at.timestamp;
        for u in inbox {
            for v in u.data.values() {
                let vehicle = v["vehicle"]
                    .as_str()
                    .ok_or_else(|| format!("a swap request without a vehicle: {v}"))?;
                self.queue.push_back(vehicle.to_string());
                self.requested.insert(vehicle.to_string(), at.micros());
            }
        }
        let mut out = Outcome::wake_at(None);
        // Done swaps leave (one per call: a key holds one value).
        if let Some(k) = self.busy.iter().position(|(done, _)| *done <= t) {
            let (_, vehicle) = self.busy.remove(k);
            self.swaps += 1;
            let asked = self.requested.remove(&vehicle).unwrap_or(at.micros());
            self.waited_us += at.micros().saturating_sub(asked);
            out = out.with(
                Key::new("station", &self.name, "swapped"),
                json!({"vehicle": vehicle}),
            );
        }
        while self.busy.len() < self.bays
            && let Some(v) = self.queue.pop_front()
        {
            self.busy.push((t.saturating_add(self.swap), v));
        }
        out.next_time = self
            .busy
            .iter()
            .map(|(d, _)| *d)
            .min()
            .map(|d| d.max(t + 1));
        Ok(out)
    }

    fn finish(&mut self) -> Result<Value, String> {
        Ok(json!({
            "swaps": self.swaps,
            "mean_turnaround_s": if self.swaps > 0 { self.waited_us as f64 * 1e-6 / self.swaps as f64 } else { 0.0 },
            "queued_at_end": self.queue.len() + self.busy.len(),
        }))
    }
}

/// What the KPI collector knows of an order.
#[derive(Debug, Default)]
struct OrderKpi {
    placed_us: u64,
    delivered_us: Option<u64>,
    rejected: bool,
}

/// The KPI collector: consumes orders, dispatches, vehicle events,
/// telemetry and zones; says at the end what the fleet achieved.
#[derive(Debug, Default)]
pub struct Kpi {
    orders: BTreeMap<String, OrderKpi>,
    zones: Vec<Zone>,
    swaps: u64,
    flights: u64,
    crashes: Vec<String>,
    /// Landings away from where a leg was sent (failsafes).
    diverted: u64,
    /// Per vehicle: last position, distance flown.
    tracks: BTreeMap<String, ([f64; 2], f64)>,
    telemetry: u64,
    /// The closest any telemetry came to a zone's edge (negative: inside).
    min_clearance_m: Option<f64>,
    incursions: u64,
}

impl Model for Kpi {
    fn mask(&self) -> DataMask {
        mask(
            &[],
            &[
                "orders/*/request",
                "dispatch/*/*",
                "vehicles/*/*",
                "station/*/swapped",
                "airspace/*/zones",
            ],
        )
    }

    fn initialize(&mut self, _: Moment) -> Result<Outcome, String> {
        Ok(Outcome::wake_at(None))
    }

    fn update(&mut self, _: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        for u in inbox {
            for (k, v) in &u.data {
                match (k.dataset.as_str(), k.attribute.as_str()) {
                    ("orders", "request") => {
                        let id = v["id"].as_str().unwrap_or(&k.group).to_string();
                        self.orders.insert(
                            id,
                            OrderKpi {
                                placed_us: v["placed_us"].as_u64().unwrap_or(0),
                                ..OrderKpi::default()
                            },
                        );
                    }
                    ("dispatch", "rejected") => {
                        if let Some(o) = self.orders.get_mut(&k.group) {
                            o.rejected = true;
                        }
                    }
                    ("dispatch", "mission") => self.flights += 1,
                    ("station", "swapped") => self.swaps += 1,
                    ("airspace", "zones") => {
                        let z: Vec<Zone> =
                            serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                        self.zones.extend(z);
                    }
                    ("vehicles", "event") => match v["kind"].as_str() {
                        Some("landed") if v["leg"] == "out" => {
                            if let Some(o) =
                                v["order"].as_str().and_then(|o| self.orders.get_mut(o))
                            {
                                o.delivered_us = v["time_us"].as_u64();
                            }
                        }
                        Some("crashed") => self.crashes.push(k.group.clone()),
                        Some("diverted") => self.diverted += 1,
                        _ => {}
                    },
                    ("vehicles", "telemetry") => {
                        self.telemetry += 1;
                        let p = [
                            v["north_m"].as_f64().unwrap_or(0.0),
                            v["east_m"].as_f64().unwrap_or(0.0),
                        ];
                        let e = self.tracks.entry(k.group.clone()).or_insert((p, 0.0));
                        e.1 += (p[0] - e.0[0]).hypot(p[1] - e.0[1]);
                        e.0 = p;
                        // Airborne samples only: a pad may sit anywhere.
                        if v["down_m"].as_f64().unwrap_or(0.0) < -2.0 {
                            for z in &self.zones {
                                let c = z.clearance(p);
                                if c < 0.0 {
                                    self.incursions += 1;
                                }
                                self.min_clearance_m =
                                    Some(self.min_clearance_m.map_or(c, |m| m.min(c)));
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(Outcome::wake_at(None))
    }

    fn finish(&mut self) -> Result<Value, String> {
        let times: Vec<f64> = self
            .orders
            .values()
            .filter_map(|o| {
                o.delivered_us
                    .map(|d| d.saturating_sub(o.placed_us) as f64 * 1e-6)
            })
            .collect();
        let mean = if times.is_empty() {
            0.0
        } else {
            times.iter().sum::<f64>() / times.len() as f64
        };
        let distance: BTreeMap<&String, f64> =
            self.tracks.iter().map(|(k, (_, d))| (k, *d)).collect();
        Ok(json!({
            "orders": self.orders.len(),
            "delivered": times.len(),
            "rejected": self.orders.values().filter(|o| o.rejected).count(),
            "open": self.orders.values().filter(|o| !o.rejected && o.delivered_us.is_none()).count(),
            "mean_delivery_s": mean,
            "max_delivery_s": times.iter().cloned().fold(0.0, f64::max),
            "flights": self.flights,
            "swaps": self.swaps,
            "crashes": self.crashes,
            "diverted": self.diverted,
            "telemetry_samples": self.telemetry,
            "zone_incursions": self.incursions,
            "min_zone_clearance_m": self.min_clearance_m,
            "distance_flown_m": distance,
        }))
    }
}
