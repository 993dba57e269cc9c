//! A lockstep flight as a MAVLink vehicle for ground stations
//! (QGroundControl, MAVSDK, pymavlink): telemetry at fixed rates of
//! simulated time, and the mission, command and parameter protocols into
//! the flight (the autopilot's mission upload, the scenario's command path,
//! the ABI's parameter functions), with MAVFTP's parameter and mission
//! files in ArduPilot style. Any `autopilot.h` library can fly it.
//!
//! Inputs arrive on the wall clock; each applies after the boundary it
//! arrived at and is recorded with that boundary's time ([`input`]), so
//! replaying the record flies the same flight bit for bit, without a
//! ground station and at any speed.

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
mod offboard;
mod params;
mod rates;
pub mod signing;
mod steering;
mod telemetry;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use lockstep_abi::ffi::{LOCKSTEP_MODE_HOLD, LOCKSTEP_MODE_OFFBOARD, LOCKSTEP_MODE_TAKEOFF};
use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;
use mavlink::{MavHeader, Message};

pub use endpoint::Endpoint;
use endpoint::Link;
use health::Health;
use input::{Input, Recorder, Replay};
use mission::MissionServer;
pub use modes::Style;
use telemetry::{Home, STREAMS};

/// How long after an input the autopilot's refusal of it is looked for
/// (a few autopilot steps).
const WATCH_US: u64 = 100_000;

/// Datagrams read per endpoint after one boundary, at most.
const MAX_DATAGRAMS_PER_BOUNDARY: usize = 64;

/// Our system and component ids.
const SYSTEM: u8 = 1;
const COMPONENT: u8 = 1;

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

/// The served vehicle.
#[derive(Debug)]
pub struct Gcs {
    links: Vec<Link>,
    style: Style,
    header: MavHeader,
    rates: rates::Rates,
    /// The timeline entries and crashes announced so far.
    announced: (usize, usize),
    home: Option<Home>,
    /// The health last announced.
    health: Health,
    mission: MissionServer,
    /// The mission item last reported current, and whether the mission was
    /// finished (for MISSION_ITEM_REACHED).
    reported: (i32, bool),
    recorder: Option<Recorder>,
    replay: Option<Replay>,
    /// The parameters ground stations see: the library's whole table when
    /// it enumerates it (ABI 4), else those set by the scenario or over
    /// MAVLink.
    params: params::Table,
    /// MAVFTP (ArduPilot style): the parameter and mission files.
    ftp: ftp::Server,
    out: Vec<u8>,
    buf: Vec<u8>,
    /// What was ignored, by kind.
    ignored: BTreeMap<String, u64>,
    /// Offboard control from the stations.
    offboard: offboard::Offboard,
    /// Manual control (sticks) from the stations.
    manual: manual::Manual,
    /// A station's DO_REPOSITION is being flown (a position setpoint).
    repositioned: bool,
    /// A station's mission start: a takeoff now is the mission's own.
    auto_takeoff: bool,
    /// The autopilot's mode at the last boundary.
    mode: u32,
    /// The link's signing, with a key.
    signing: Option<signing::Signing>,
    /// After an input: until when to look for the autopilot's refusal of
    /// it, and its last message before.
    watch: Option<(u64, String)>,
}

impl Gcs {
    /// Opens the endpoints (or the replay). `params` are the parameter
    /// names the scenario sets.
    pub fn open(options: &GcsOptions, params: Vec<String>) -> Result<Gcs, String> {
        let (links, replay) = match &options.replay {
            Some(path) => (Vec::new(), Some(Replay::load(path)?)),
            None => (
                options
                    .endpoints
                    .iter()
                    .map(Link::open)
                    .collect::<Result<Vec<_>, _>>()?,
                None,
            ),
        };
        let recorder = match &options.record {
            Some(p) if replay.is_none() => Some(Recorder::create(p)?),
            _ => None,
        };
        Ok(Gcs {
            links,
            style: options.style,
            header: MavHeader {
                system_id: u32::from(SYSTEM),
                component_id: COMPONENT,
                sequence: 0,
            },
            rates: rates::Rates::new(),
            announced: (0, 0),
            home: None,
            health: Health::assumed(),
            mission: MissionServer::new(options.style == Style::ArduPilot),
            reported: (-1, false),
            recorder,
            replay,
            params: params::Table::new(params),
            ftp: ftp::Server::default(),
            out: Vec::with_capacity(300),
            buf: vec![0; 65_536],
            ignored: BTreeMap::new(),
            offboard: offboard::Offboard::default(),
            manual: manual::Manual::default(),
            repositioned: false,
            auto_takeoff: false,
            mode: 0,
            signing: options.key.map(signing::Signing::new),
            watch: None,
        })
    }

    /// What was ignored (messages not for us or of no use, frames that did
    /// not parse), one line per kind.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .ignored
            .iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        for l in &self.links {
            if l.send_failures > 0 {
                notes.push(format!(
                    "{} sends to {} failed (no ground station listening?)",
                    l.send_failures, l.endpoint
                ));
            }
        }
        notes
    }

    fn ignore(&mut self, what: &str) {
        *self.ignored.entry(what.to_string()).or_insert(0) += 1;
    }

    /// After a boundary: the inputs that arrived (or are recorded for it)
    /// applied, their answers sent, mission progress and the telemetry due.
    pub fn serve(&mut self, engine: &mut Engine) -> Result<(), String> {
        let now = engine.now().0;
        if self.home.is_none() {
            self.home = Some(Home::of(engine));
        }
        if let Some(replay) = &mut self.replay {
            for input in replay.due(now) {
                // A refusal was answered live; the flight goes on the same.
                let _ = input.apply(engine);
            }
        } else {
            for link in 0..self.links.len() {
                self.receive(link, engine, now)?;
            }
            if self.offboard.lost(self.style, now) {
                self.offboard.disengage();
                let input = Input::Command {
                    command: "hold".into(),
                };
                let _ = self.take(input, engine, now)?;
                self.announce(
                    MavSeverity::MAV_SEVERITY_WARNING,
                    "Offboard lost: no setpoint for 1 s, holding",
                );
            }
            if self.manual.lost(self.style, now) {
                self.sticks_lost(engine, now)?;
            }
        }
        let mode = engine.actuators().mode;
        let steered = |m: u32| m == LOCKSTEP_MODE_OFFBOARD || m == LOCKSTEP_MODE_HOLD;
        if self.mode == LOCKSTEP_MODE_OFFBOARD && mode != LOCKSTEP_MODE_OFFBOARD {
            // The autopilot left offboard (a failsafe, a command): the
            // stream no longer steers it, nor a reposition.
            self.offboard.disengage();
            self.repositioned = false;
        }
        if steered(self.mode) && !steered(mode) {
            // Sticks fly as setpoints (or a hold until they come).
            self.manual.disengage();
        }
        if mode != LOCKSTEP_MODE_TAKEOFF && self.mode == LOCKSTEP_MODE_TAKEOFF {
            self.auto_takeoff = false;
        }
        self.mode = mode;
        self.progress(engine);
        let health = Health::of(engine);
        for (severity, text) in health.changes(&self.health) {
            self.announce(severity, &text);
        }
        self.health = health;
        self.announce_timeline(engine);
        self.relay_refusal(engine, now);
        let due = self.rates.due(now);
        for (&(stream, _), _) in STREAMS.iter().zip(due).filter(|(_, d)| *d) {
            let msg = telemetry::message(engine, stream, &self.view(engine));
            self.broadcast(&msg);
        }
        Ok(())
    }

    /// A STATUSTEXT for each new entry of the run's timeline (scenario
    /// events, mode changes, arming, failsafes) and each crash, with the
    /// severity QGroundControl shows them by.
    fn announce_timeline(&mut self, engine: &Engine) {
        use lockstep_harness::outcome::journal::EntryKind;
        let entries = engine.journal_entries();
        // Streamed setpoints are events too, at the stream's rate: the
        // switch into offboard is announced (a mode change), not each one.
        let new: Vec<(MavSeverity, String)> = entries[self.announced.0.min(entries.len())..]
            .iter()
            .filter(|e| !(e.kind == EntryKind::Event && e.what.starts_with("setpoint ")))
            .map(|e| {
                let severity = match e.kind {
                    EntryKind::Event => MavSeverity::MAV_SEVERITY_NOTICE,
                    EntryKind::Mode | EntryKind::Arming => MavSeverity::MAV_SEVERITY_INFO,
                    EntryKind::Failsafe => MavSeverity::MAV_SEVERITY_CRITICAL,
                    EntryKind::Crash => MavSeverity::MAV_SEVERITY_EMERGENCY,
                };
                (severity, e.what.clone())
            })
            .collect();
        self.announced.0 = entries.len();
        let crashes: Vec<String> = engine.crashes()[self.announced.1.min(engine.crashes().len())..]
            .iter()
            .map(|c| format!("Crash: {c}"))
            .collect();
        self.announced.1 = engine.crashes().len();
        for (severity, text) in new {
            self.announce(severity, &text);
        }
        for text in crashes {
            self.announce(MavSeverity::MAV_SEVERITY_EMERGENCY, &text);
        }
    }

    /// MISSION_ITEM_REACHED for each item passed since the last boundary,
    /// and MISSION_CURRENT when the current item changes.
    fn progress(&mut self, engine: &Engine) {
        let act = *engine.actuators();
        let offset = i32::from(self.mission.home_first);
        let (last, finished) = self.reported;
        if act.mission_current != last || (act.mission_finished == 1) != finished {
            if act.mission_current > last && last >= 0 {
                for seq in last..act.mission_current {
                    self.broadcast(&MavMessage::MISSION_ITEM_REACHED(
                        MISSION_ITEM_REACHED_DATA {
                            seq: (seq + offset) as u16,
                        },
                    ));
                }
            }
            if act.mission_finished == 1 && !finished && act.mission_count > 0 {
                self.broadcast(&MavMessage::MISSION_ITEM_REACHED(
                    MISSION_ITEM_REACHED_DATA {
                        seq: (act.mission_count - 1 + offset as u32).min(u32::from(u16::MAX))
                            as u16,
                    },
                ));
            }
            self.broadcast(&telemetry::mission_current(&act, offset as u16));
            self.reported = (act.mission_current, act.mission_finished == 1);
        }
    }

    fn receive(&mut self, link: usize, engine: &mut Engine, now: u64) -> Result<(), String> {
        // At most this many datagrams per boundary (a flood cannot stall
        // the flight; the rest wait for the next boundary).
        for _ in 0..MAX_DATAGRAMS_PER_BOUNDARY {
            let Some((n, from)) = self.links[link].poll(&mut self.buf)? else {
                return Ok(());
            };
            let datagram = self.buf[..n].to_vec();
            let mut reader = mavlink::MavlinkReader::new(&datagram[..]);
            let mut frames = 0;
            while let Ok(raw) = reader.read_any_raw_message::<MavMessage>() {
                frames += 1;
                if let Some(s) = &self.signing
                    && !s.accepts(&raw)
                {
                    let what = "MAVLink messages refused: not signed with the link's key, or \
                                an old signature timestamp";
                    if !self.ignored.contains_key(what) {
                        self.announce(
                            MavSeverity::MAV_SEVERITY_WARNING,
                            "Refused messages not signed with the key",
                        );
                    }
                    self.ignore(what);
                    continue;
                }
                let sender = (raw.system_id() as u8, raw.component_id());
                match MavMessage::parse(raw.version(), raw.message_id(), raw.payload()) {
                    Ok(msg) => self.handle(link, from, sender, &msg, engine, now)?,
                    Err(_) => self.ignore("MAVLink messages that did not parse (ignored)"),
                }
            }
            if frames == 0 {
                self.ignore("datagrams with no valid MAVLink frame (ignored)");
            }
        }
        Ok(())
    }

    /// Whether a message addressed to `target` is for this vehicle.
    fn for_us(target: u8) -> bool {
        target == 0 || target == SYSTEM
    }

    fn handle(
        &mut self,
        link: usize,
        from: SocketAddr,
        sender: (u8, u8),
        msg: &MavMessage,
        engine: &mut Engine,
        now: u64,
    ) -> Result<(), String> {
        self.links[link].heard(from);
        match msg {
            MavMessage::HEARTBEAT(_) => {}
            // A time-sync request (tc1 = 0) addressed to us or to all is
            // answered with our time in ns: the simulated time.
            MavMessage::TIMESYNC(t)
                if t.tc1 == 0 && (t.target_system == 0 || t.target_system == SYSTEM) =>
            {
                let reply = MavMessage::TIMESYNC(TIMESYNC_DATA {
                    tc1: i64::try_from(now.saturating_mul(1000)).unwrap_or(i64::MAX),
                    ts1: t.ts1,
                    target_system: sender.0,
                    target_component: sender.1,
                });
                self.send(link, &reply);
            }
            MavMessage::COMMAND_LONG(c) if Self::for_us(c.target_system) => {
                let p = [
                    c.param1, c.param2, c.param3, c.param4, c.param5, c.param6, c.param7,
                ];
                let place = commands::Place::of_long(&p, self.style);
                self.command(link, sender, c.command, p, place, engine, now)?;
            }
            MavMessage::COMMAND_INT(c) if Self::for_us(c.target_system) => {
                let p = [
                    c.param1, c.param2, c.param3, c.param4, c.x as f32, c.y as f32, c.z,
                ];
                let place = commands::Place::of_int(c);
                self.command(link, sender, c.command, p, place, engine, now)?;
            }
            MavMessage::REQUEST_DATA_STREAM(r) if Self::for_us(r.target_system) => {
                self.rates.request_stream(r, now);
            }
            MavMessage::SET_POSITION_TARGET_LOCAL_NED(m) if Self::for_us(m.target_system) => {
                let out = self.offboard.local_ned(m, engine, now);
                self.setpoint(out, engine, now)?;
            }
            MavMessage::SET_POSITION_TARGET_GLOBAL_INT(m) if Self::for_us(m.target_system) => {
                let home = self.home.expect("set before inputs").alt_m;
                let out = self.offboard.global_int(m, engine, home, now);
                self.setpoint(out, engine, now)?;
            }
            MavMessage::SET_ATTITUDE_TARGET(m) if Self::for_us(m.target_system) => {
                let out = offboard::Offboard::attitude(m);
                self.setpoint(out, engine, now)?;
            }
            MavMessage::MANUAL_CONTROL(m) if Self::for_us(m.target) => {
                self.sticks(m, engine, now)?;
            }
            MavMessage::SET_MODE(m)
                if Self::for_us(m.target_system)
                    && modes::is_offboard(
                        self.style,
                        modes::split(self.style, m.custom_mode).0,
                        0,
                    ) =>
            {
                let _ = self.engage(engine, now)?;
            }
            MavMessage::SET_MODE(m)
                if Self::for_us(m.target_system) && {
                    let (main, sub) = modes::split(self.style, m.custom_mode);
                    modes::is_manual(self.style, main, sub)
                } =>
            {
                if let Ok(Err(why)) = self.engage_manual(m.custom_mode, engine, now) {
                    self.status_text(&why);
                }
            }
            MavMessage::SET_MODE(m) if Self::for_us(m.target_system) => {
                self.release();
                let (main, sub) = modes::split(self.style, m.custom_mode);
                match modes::command_for(self.style, main, sub) {
                    Some(cmd) => {
                        let input = Input::Command {
                            command: cmd.into(),
                        };
                        let _ = self.take(input, engine, now)?;
                    }
                    None => self.ignore("SET_MODE to a mode the contract has no command for"),
                }
            }
            MavMessage::MISSION_COUNT(_)
            | MavMessage::MISSION_ITEM_INT(_)
            | MavMessage::MISSION_REQUEST_LIST(_)
            | MavMessage::MISSION_REQUEST_INT(_)
            | MavMessage::MISSION_REQUEST(_)
            | MavMessage::MISSION_CLEAR_ALL(_) => {
                if !Self::for_us(target_of(msg)) {
                    return Ok(());
                }
                let home = self.home.expect("set before inputs").mission_item();
                let outcome = self.mission.handle(sender, msg, &home);
                for r in &outcome.replies {
                    self.send(link, r);
                }
                if let Some(input) = outcome.input {
                    let result = self.take(input, engine, now)?;
                    self.answer(After::Mission { link }, &result, engine);
                }
            }
            MavMessage::MISSION_ACK(_) => {}
            MavMessage::PARAM_SET(_)
            | MavMessage::PARAM_REQUEST_READ(_)
            | MavMessage::PARAM_REQUEST_LIST(_) => {
                self.parameter(link, sender, msg, engine, now)?
            }
            // ArduPilot's stations fetch parameters and missions over
            // MAVFTP; a PX4-style vehicle leaves it unanswered (counted).
            MavMessage::FILE_TRANSFER_PROTOCOL(m)
                if self.style == Style::ArduPilot && Self::for_us(m.target_system) =>
            {
                self.file_transfer(link, sender, m, engine, now)
            }
            other => {
                let what = format!(
                    "{} messages (not for this vehicle or of no use)",
                    other.message_name()
                );
                self.ignore(&what);
            }
        }
        Ok(())
    }

    /// Applies a live input now and records it.
    fn take(
        &mut self,
        input: Input,
        engine: &mut Engine,
        now: u64,
    ) -> Result<Result<(), String>, String> {
        // What the autopilot said last, before it steps on this input (a
        // streamed setpoint is not watched: one read of the library per
        // boundary while a stream lasts would cost more than it says).
        if self.watch.is_none() && !matches!(input, Input::Setpoint(_)) {
            self.watch = Some((now + WATCH_US, engine.autopilot().last_error()));
        }
        match &input {
            Input::Command { command } => self.auto_takeoff = command == "mission_start",
            Input::Takeoff { .. } | Input::Setpoint(_) => self.auto_takeoff = false,
            _ => {}
        }
        let result = input.apply(engine);
        if let Some(r) = &mut self.recorder {
            r.write(now, &input)?;
        }
        Ok(result)
    }

    /// Looks for the autopilot's refusal of the next input, whatever it is
    /// (a setpoint given once, e.g. a reposition, is watched too).
    fn watch_next(&mut self, engine: &mut Engine, now: u64) {
        if self.watch.is_none() {
            self.watch = Some((now + WATCH_US, engine.autopilot().last_error()));
        }
    }

    /// An input accepted (delivered) that the autopilot then refused: its
    /// message, as a STATUSTEXT, once its step has run.
    fn relay_refusal(&mut self, engine: &mut Engine, now: u64) {
        let Some((until, before)) = &self.watch else {
            return;
        };
        let (until, before) = (*until, before.clone());
        let said = engine.autopilot().last_error();
        if said != before && !said.is_empty() {
            self.watch = None;
            self.announce(MavSeverity::MAV_SEVERITY_WARNING, &said);
        } else if now >= until {
            self.watch = None;
        }
    }

    /// The answer to an applied input.
    fn answer(&mut self, after: After, result: &Result<(), String>, _engine: &Engine) {
        match after {
            After::Command { link, to, command } => {
                let msg = MavMessage::COMMAND_ACK(COMMAND_ACK_DATA {
                    command,
                    result: if result.is_ok() {
                        MavResult::MAV_RESULT_ACCEPTED
                    } else {
                        MavResult::MAV_RESULT_FAILED
                    },
                    progress: 0,
                    result_param2: 0,
                    target_system: to.0,
                    target_component: to.1,
                });
                self.send(link, &msg);
            }
            After::Mission { link } => {
                let msg = self.mission.acknowledge(result);
                self.send(link, &msg);
            }
        }
        if let Err(e) = result {
            self.status_text(e);
        }
    }

    /// A STATUSTEXT (error) to every ground station.
    fn status_text(&mut self, text: &str) {
        self.announce(MavSeverity::MAV_SEVERITY_ERROR, text);
    }

    /// A STATUSTEXT of `severity` to every ground station.
    fn announce(&mut self, severity: MavSeverity, text: &str) {
        // STATUSTEXT holds 50 bytes: cut at a character boundary.
        let mut end = text.len().min(50);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let t = &text[..end];
        let msg = MavMessage::STATUSTEXT(STATUSTEXT_DATA {
            severity,
            text: t.into(),
            ..Default::default()
        });
        self.broadcast(&msg);
    }

    fn frame(&mut self, msg: &MavMessage) {
        self.out.clear();
        // Writing into a Vec cannot fail.
        let _ = mavlink::write_v2_msg_signed(
            &mut self.out,
            self.header,
            msg,
            self.signing.as_ref().map(signing::Signing::data),
        );
        self.header.sequence = self.header.sequence.wrapping_add(1);
    }

    fn send(&mut self, link: usize, msg: &MavMessage) {
        self.frame(msg);
        self.links[link].send(&self.out);
    }

    fn broadcast(&mut self, msg: &MavMessage) {
        if self.links.is_empty() {
            return;
        }
        self.frame(msg);
        for l in &mut self.links {
            l.send(&self.out);
        }
    }
}

/// The target system of a mission message.
fn target_of(msg: &MavMessage) -> u8 {
    match msg {
        MavMessage::MISSION_COUNT(m) => m.target_system,
        MavMessage::MISSION_ITEM_INT(m) => m.target_system,
        MavMessage::MISSION_REQUEST_LIST(m) => m.target_system,
        MavMessage::MISSION_REQUEST_INT(m) => m.target_system,
        MavMessage::MISSION_REQUEST(m) => m.target_system,
        MavMessage::MISSION_CLEAR_ALL(m) => m.target_system,
        _ => 0,
    }
}
