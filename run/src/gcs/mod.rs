//! A lockstep flight as a MAVLink vehicle for ground stations
//! (QGroundControl, MAVSDK, pymavlink): telemetry at fixed rates of
//! simulated time, and the mission, command and parameter protocols into
//! the flight (the autopilot's mission upload, the scenario's command path,
//! the ABI's parameter functions), with MAVFTP's parameter and mission
//! files in ArduPilot style. Any `autopilot.h` library can fly it.
//!
//! A fleet is served on one link, each vehicle its own system id (1, 2, ...
//! in the scenario's order), messages routed by their target system.
//!
//! Inputs arrive on the wall clock; each applies after the boundary it
//! arrived at and is recorded with that boundary's time ([`input`]; in a
//! fleet, with the vehicle's name), so replaying the record flies the same
//! flight bit for bit, without a ground station and at any speed.

// Ground stations still send MAVLink's superseded messages (SET_MODE,
// MISSION_REQUEST, REQUEST_AUTOPILOT_CAPABILITIES): they are answered.
#![allow(deprecated)]

mod commands;
mod endpoint;
mod ftp;
mod health;
pub mod input;
mod manual;
mod mission;
pub mod modes;
mod net;
mod offboard;
mod params;
mod rates;
pub mod relay;
pub mod signing;
mod steering;
mod telemetry;
mod vehicle;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lockstep_harness::engine::Engine;
use mavlink::Message;
use mavlink::dialects::common::*;

pub use endpoint::Endpoint;
use input::{Recorder, Recording, Replay};
pub use modes::Style;
use net::{Net, Shared};
use vehicle::Vehicle;

/// How long after an input the autopilot's refusal of it is looked for
/// (a few autopilot steps).
const WATCH_US: u64 = 100_000;

/// Datagrams read per endpoint after one boundary, at most.
const MAX_DATAGRAMS_PER_BOUNDARY: usize = 64;

/// Our component id (each vehicle's autopilot).
const COMPONENT: u8 = 1;

/// The most vehicles one link serves: MAVLink system ids 1 to 250 (255
/// and up are ground stations' by convention, 0 is everyone).
pub const MAX_VEHICLES: usize = 250;

/// How a flight is served to ground stations.
#[derive(Debug, Clone, PartialEq)]
pub struct GcsOptions {
    pub endpoints: Vec<Endpoint>,
    pub style: Style,
    /// Where the inputs received are recorded.
    pub record: Option<PathBuf>,
    /// Inputs to replay instead of listening (no socket is opened).
    pub replay: Option<PathBuf>,
    /// MAVLink 2 signing's secret key: every message sent is signed, only
    /// messages signed with it are applied.
    pub key: Option<[u8; 32]>,
}

/// A reply waiting for an input to be applied.
#[derive(Debug)]
enum After {
    /// COMMAND_ACK for this command.
    Command {
        link: usize,
        to: (u8, u8),
        command: MavCmd,
    },
    /// MISSION_ACK.
    Mission { link: usize },
}

/// The ground-station side of a run: the link, and the vehicles served on
/// it (one for a flight, one per system id for a fleet).
#[derive(Debug)]
pub struct Gcs {
    net: Shared,
    vehicles: Vec<Vehicle>,
    /// A fleet's vehicle names (its inputs are recorded and replayed by
    /// name); empty for one flight.
    names: Vec<String>,
    replay: Option<Replay>,
    /// Where the inputs applied are recorded.
    recorder: Option<Arc<Mutex<Recorder>>>,
    /// A distributed run's secondary: the link is the primary's.
    relayed: bool,
    /// Warnings the primary relayed, for the vehicles here at the next
    /// boundary.
    warnings: Vec<String>,
}

impl Gcs {
    /// One flight's vehicle (system 1). `params` are the parameter names
    /// the scenario sets.
    pub fn open(options: &GcsOptions, params: Vec<String>) -> Result<Gcs, String> {
        Gcs::open_vehicles(options, Vec::new(), vec![params])
    }

    /// A fleet's vehicles, systems 1, 2, ... in the order given: each its
    /// name and the parameter names its scenario sets.
    pub fn open_fleet(
        options: &GcsOptions,
        vehicles: Vec<(String, Vec<String>)>,
    ) -> Result<Gcs, String> {
        if vehicles.len() > MAX_VEHICLES {
            return Err(format!(
                "a fleet served over MAVLink has at most {MAX_VEHICLES} vehicles (system ids 1 to \
                 {MAX_VEHICLES}); this one has {}",
                vehicles.len()
            ));
        }
        let (names, params) = vehicles.into_iter().unzip();
        Gcs::open_vehicles(options, names, params)
    }

    fn open_vehicles(
        options: &GcsOptions,
        names: Vec<String>,
        params: Vec<Vec<String>>,
    ) -> Result<Gcs, String> {
        let replay = match &options.replay {
            Some(path) => Some(Replay::load(path, &names)?),
            None => None,
        };
        let endpoints: &[Endpoint] = if replay.is_some() {
            &[]
        } else {
            &options.endpoints
        };
        let net = Net::open(endpoints, options.key)?;
        let recorder = match &options.record {
            Some(p) if replay.is_none() => Some(Recorder::create(p)?),
            _ => None,
        };
        Ok(Gcs::on(net, options.style, names, params, recorder, replay))
    }

    /// The vehicles of `names` on `net`, systems 1, 2, ... in that order.
    fn on(
        net: Net,
        style: Style,
        names: Vec<String>,
        params: Vec<Vec<String>>,
        recorder: Option<Recorder>,
        replay: Option<Replay>,
    ) -> Gcs {
        let net: Shared = Arc::new(Mutex::new(net));
        let recorder = recorder.map(|r| Arc::new(Mutex::new(r)));
        let vehicles = params
            .into_iter()
            .enumerate()
            .map(|(k, params)| {
                let recording = recorder
                    .as_ref()
                    .map(|r| Recording::new(r, names.get(k).cloned()));
                // k < MAX_VEHICLES: ids 1 to 250.
                let system = u8::try_from(k + 1).unwrap_or(u8::MAX);
                Vehicle::new(Arc::clone(&net), system, style, params, recording)
            })
            .collect();
        Gcs {
            net,
            vehicles,
            names,
            replay,
            recorder,
            relayed: false,
            warnings: Vec::new(),
        }
    }

    /// What was ignored (messages for no vehicle or of no use, frames that
    /// did not parse) and sends that failed, one line per kind; a fleet's
    /// vehicles' lines begin with their names.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self.net().notes();
        for (k, v) in self.vehicles.iter().enumerate() {
            match self.names.get(k) {
                Some(name) => notes.extend(v.notes().map(|n| format!("{name}: {n}"))),
                None => notes.extend(v.notes()),
            }
        }
        notes
    }

    fn net(&self) -> std::sync::MutexGuard<'_, Net> {
        self.net
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// [`Gcs::serve`] for one flight's engine.
    pub fn serve_one(&mut self, engine: &mut Engine) -> Result<(), String> {
        self.serve(std::slice::from_mut(engine))
    }

    /// After a boundary (every engine at it): the inputs that arrived (or
    /// are recorded for it) applied, their answers sent, mission progress
    /// and the telemetry due, for each vehicle.
    pub fn serve(&mut self, engines: &mut [Engine]) -> Result<(), String> {
        let mut here: Vec<Option<&mut Engine>> = engines.iter_mut().map(Some).collect();
        self.serve_here(&mut here)
    }

    /// [`Gcs::serve`] for the vehicles whose engines are here, by index
    /// (a distributed run's secondary steps some of the fleet's).
    fn serve_here(&mut self, engines: &mut [Option<&mut Engine>]) -> Result<(), String> {
        let Some(now) = engines.iter().flatten().next().map(|e| e.now().0) else {
            return Ok(());
        };
        for (v, e) in self.vehicles.iter_mut().zip(engines.iter()) {
            if let Some(e) = e {
                v.arrive(e);
            }
        }
        for text in std::mem::take(&mut self.warnings) {
            for (v, e) in self.vehicles.iter_mut().zip(engines.iter()) {
                if e.is_some() {
                    v.warn(&text);
                }
            }
        }
        let live = self.replay.is_none();
        if let Some(replay) = &mut self.replay {
            for (k, input) in replay.due(now) {
                // A refusal was answered live; the flight goes on the same.
                if let Some(Some(e)) = engines.get_mut(k) {
                    let _ = input.apply(e);
                }
            }
        } else {
            let links = self.net().links();
            for link in 0..links {
                self.receive(link, engines, now)?;
            }
        }
        for (v, e) in self.vehicles.iter_mut().zip(engines.iter_mut()) {
            if let Some(e) = e {
                v.tick(e, now, live)?;
            }
        }
        Ok(())
    }

    /// The datagrams waiting on `link` (at most
    /// [`MAX_DATAGRAMS_PER_BOUNDARY`]: a flood cannot stall the flight; the
    /// rest wait for the next boundary), each message to the vehicles it
    /// is addressed to (its target system; 0 or none: every vehicle).
    fn receive(
        &mut self,
        link: usize,
        engines: &mut [Option<&mut Engine>],
        now: u64,
    ) -> Result<(), String> {
        // A relayed link holds what the primary read for this boundary
        // (it kept to the limit): all of it is read.
        let most = if self.relayed {
            usize::MAX
        } else {
            MAX_DATAGRAMS_PER_BOUNDARY
        };
        for _ in 0..most {
            let Some(datagram) = self.net().datagram(link)? else {
                return Ok(());
            };
            if datagram.first_refusal {
                for v in &mut self.vehicles {
                    v.warn(REFUSED_WARNING);
                }
            }
            for r in datagram.messages {
                let target = r.msg.target_system_id().unwrap_or(0);
                let mut taken = false;
                for (v, e) in self.vehicles.iter_mut().zip(engines.iter_mut()) {
                    if let Some(e) = e
                        && v.for_us(target)
                    {
                        v.handle(link, r.sender, &r.msg, e, now)?;
                        taken = true;
                    }
                }
                // A secondary hears every broadcast, with or without
                // vehicles; the primary counts what is for no one.
                let for_elsewhere = self.relayed && target == 0;
                if !taken && !for_elsewhere {
                    let what = format!(
                        "{} messages for system {target}, which is not served (ignored)",
                        r.msg.message_name()
                    );
                    self.net().ignore(&what);
                }
            }
        }
        Ok(())
    }
}

/// What each vehicle tells the stations when the key first refuses a
/// message.
const REFUSED_WARNING: &str = "Refused messages not signed with the key";
