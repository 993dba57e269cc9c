//! A lockstep flight as a MAVLink vehicle for ground stations
//! (QGroundControl, MAVSDK, pymavlink): telemetry at fixed rates of
//! simulated time, and the mission, command and parameter protocols into
//! the flight (the autopilot's mission upload, the scenario's command path,
//! the ABI's parameter functions). Any `autopilot.h` library can fly it.
//!
//! Inputs arrive on the wall clock; each applies after the boundary it
//! arrived at and is recorded with that boundary's time ([`input`]), so
//! replaying the record flies the same flight bit for bit, without a
//! ground station and at any speed.

// Ground stations still send MAVLink's superseded messages (SET_MODE,
// MISSION_REQUEST, REQUEST_AUTOPILOT_CAPABILITIES): they are answered.
#![allow(deprecated)]

mod endpoint;
mod health;
pub mod input;
mod mission;
pub mod modes;
mod telemetry;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

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
    next_due: [u64; STREAMS.len()],
    home: Option<Home>,
    /// The health last announced.
    health: Health,
    mission: MissionServer,
    /// The mission item last reported current, and whether the mission was
    /// finished (for MISSION_ITEM_REACHED).
    reported: (i32, bool),
    recorder: Option<Recorder>,
    replay: Option<Replay>,
    /// Parameter names known (set by the scenario or over MAVLink), for
    /// PARAM_REQUEST_LIST: the contract cannot list a library's.
    params: Vec<String>,
    out: Vec<u8>,
    buf: Vec<u8>,
    /// What was ignored, by kind.
    ignored: BTreeMap<String, u64>,
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
            next_due: [0; STREAMS.len()],
            home: None,
            health: Health::assumed(),
            mission: MissionServer::new(options.style == Style::ArduPilot),
            reported: (-1, false),
            recorder,
            replay,
            params,
            out: Vec::with_capacity(300),
            buf: vec![0; 65_536],
            ignored: BTreeMap::new(),
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
        }
        self.progress(engine);
        let health = Health::of(engine);
        for (severity, text) in health.changes(&self.health) {
            self.announce(severity, &text);
        }
        self.health = health;
        for (k, (stream, period)) in STREAMS.iter().enumerate() {
            if now >= self.next_due[k] {
                let home = self.home.expect("set above");
                let msg = telemetry::message(
                    engine,
                    *stream,
                    self.style,
                    &home,
                    self.mission.home_first,
                    &self.health,
                );
                self.broadcast(&msg);
                self.next_due[k] = (now / period + 1) * period;
            }
        }
        Ok(())
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
                self.command(link, sender, c.command, p, engine, now)?;
            }
            MavMessage::COMMAND_INT(c) if Self::for_us(c.target_system) => {
                let p = [
                    c.param1, c.param2, c.param3, c.param4, c.x as f32, c.y as f32, c.z,
                ];
                self.command(link, sender, c.command, p, engine, now)?;
            }
            MavMessage::SET_MODE(m) if Self::for_us(m.target_system) => {
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
            MavMessage::PARAM_SET(p) if Self::for_us(p.target_system) => {
                let name = param_name(&p.param_id);
                let input = match p.param_type {
                    MavParamType::MAV_PARAM_TYPE_REAL32 | MavParamType::MAV_PARAM_TYPE_REAL64 => {
                        Input::ParamF32 {
                            name: name.clone(),
                            value: p.param_value,
                        }
                    }
                    _ => Input::ParamI32 {
                        name: name.clone(),
                        value: self.decode_int(p.param_value),
                    },
                };
                let result = self.take(input, engine, now)?;
                if result.is_ok() && !self.params.contains(&name) {
                    self.params.push(name.clone());
                }
                let integer = !matches!(
                    p.param_type,
                    MavParamType::MAV_PARAM_TYPE_REAL32 | MavParamType::MAV_PARAM_TYPE_REAL64
                );
                self.answer_param(link, &name, integer, &result, engine);
            }
            MavMessage::PARAM_REQUEST_READ(p) if Self::for_us(p.target_system) => {
                let name = if p.param_index >= 0 {
                    self.params.get(p.param_index as usize).cloned()
                } else {
                    Some(param_name(&p.param_id))
                };
                match name {
                    Some(name) => self.answer_param(link, &name, false, &Ok(()), engine),
                    None => self.ignore("PARAM_REQUEST_READ of an index past the known parameters"),
                }
            }
            MavMessage::PARAM_REQUEST_LIST(p) if Self::for_us(p.target_system) => {
                for name in self.params.clone() {
                    self.answer_param(link, &name, false, &Ok(()), engine);
                }
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
        let result = input.apply(engine);
        if let Some(r) = &mut self.recorder {
            r.write(now, &input)?;
        }
        Ok(result)
    }

    fn command(
        &mut self,
        link: usize,
        sender: (u8, u8),
        command: MavCmd,
        p: [f32; 7],
        engine: &mut Engine,
        now: u64,
    ) -> Result<(), String> {
        use MavCmd::*;
        let ack = |result: MavResult| {
            MavMessage::COMMAND_ACK(COMMAND_ACK_DATA {
                command,
                result,
                progress: 0,
                result_param2: 0,
                target_system: sender.0,
                target_component: sender.1,
            })
        };
        let named = match command {
            MAV_CMD_COMPONENT_ARM_DISARM => Some(if p[0] >= 0.5 { "arm" } else { "disarm" }),
            MAV_CMD_NAV_TAKEOFF => Some("takeoff"),
            MAV_CMD_NAV_LAND => Some("land"),
            MAV_CMD_NAV_RETURN_TO_LAUNCH => Some("rtl"),
            MAV_CMD_MISSION_START => Some("mission_start"),
            MAV_CMD_NAV_LOITER_UNLIM => Some("hold"),
            MAV_CMD_DO_SET_MODE => match modes::command_for(self.style, p[1] as u32, p[2] as u32) {
                Some(c) => Some(c),
                None => {
                    self.send(link, &ack(MavResult::MAV_RESULT_DENIED));
                    return Ok(());
                }
            },
            _ => None,
        };
        if let Some(name) = named {
            let input = Input::Command {
                command: name.into(),
            };
            let result = self.take(input, engine, now)?;
            self.answer(
                After::Command {
                    link,
                    to: sender,
                    command,
                },
                &result,
                engine,
            );
            return Ok(());
        }
        match command {
            MAV_CMD_REQUEST_MESSAGE => match self.requested(p[0], engine) {
                Some(msg) => {
                    self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED));
                    self.send(link, &msg);
                }
                None => {
                    self.send(link, &ack(MavResult::MAV_RESULT_UNSUPPORTED));
                    self.ignore("REQUEST_MESSAGE for messages this vehicle does not send");
                }
            },
            MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES => {
                self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED));
                self.send(link, &self.autopilot_version());
            }
            // The older request MAVProxy sends (MAV_CMD_GET_HOME_POSITION).
            MAV_CMD_GET_HOME_POSITION => {
                self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED));
                let home = self.home.expect("set before inputs");
                self.send(link, &home.message(now));
            }
            // Our streams keep their rates; the request is accepted (as
            // MAVSDK asks for them and needs no more).
            MAV_CMD_SET_MESSAGE_INTERVAL => self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED)),
            _ => {
                self.send(link, &ack(MavResult::MAV_RESULT_UNSUPPORTED));
                let what = format!("commands {command:?} answered unsupported");
                self.ignore(&what);
            }
        }
        Ok(())
    }

    /// The message `REQUEST_MESSAGE` asks for by its id (param 1), now:
    /// any message this vehicle sends; `None` for one it does not.
    fn requested(&self, id: f32, engine: &Engine) -> Option<MavMessage> {
        use mavlink::MessageData;
        if !(id.is_finite() && id >= 0.0 && id.fract() == 0.0) {
            return None;
        }
        let id = id as u32;
        let home = self.home.expect("set before inputs");
        Some(match id {
            AUTOPILOT_VERSION_DATA::ID => self.autopilot_version(),
            HOME_POSITION_DATA::ID => home.message(engine.now().0),
            PROTOCOL_VERSION_DATA::ID => telemetry::protocol_version(),
            _ => {
                let (stream, _) = STREAMS.iter().find(|(s, _)| s.message_id() == id)?;
                telemetry::message(
                    engine,
                    *stream,
                    self.style,
                    &home,
                    self.mission.home_first,
                    &self.health,
                )
            }
        })
    }

    fn autopilot_version(&self) -> MavMessage {
        let mut caps = MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_MISSION_INT
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_COMMAND_INT
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_MAVLINK2;
        caps |= match self.style {
            Style::Px4 => MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE,
            Style::ArduPilot => MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_C_CAST,
        };
        MavMessage::AUTOPILOT_VERSION(AUTOPILOT_VERSION_DATA {
            capabilities: caps,
            uid: 0x6C6F_636B_7374_6570, // "lockstep"
            ..Default::default()
        })
    }

    /// An integer parameter's value as the style encodes it in a float.
    fn decode_int(&self, v: f32) -> i32 {
        match self.style {
            Style::Px4 => v.to_bits() as i32,
            Style::ArduPilot => v as i32,
        }
    }

    fn encode_int(&self, v: i32) -> f32 {
        match self.style {
            Style::Px4 => f32::from_bits(v as u32),
            Style::ArduPilot => v as f32,
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

    /// PARAM_VALUE of `name` as the autopilot now has it (float first, then
    /// integer); a refusal is a STATUSTEXT.
    /// PARAM_VALUE of `name` as the autopilot now has it, in the type
    /// `integer` says first (a set is answered in the type it set); a
    /// refused set is also a STATUSTEXT, and still answered with the value
    /// in force when there is one (so a client stops retrying).
    fn answer_param(
        &mut self,
        link: usize,
        name: &str,
        integer: bool,
        result: &Result<(), String>,
        engine: &mut Engine,
    ) {
        if let Err(e) = result {
            self.status_text(e);
        }
        let ap = engine.autopilot();
        let as_float = |ap: &mut lockstep_abi::Autopilot| {
            ap.param_f32(name)
                .map(|v| (v, MavParamType::MAV_PARAM_TYPE_REAL32))
        };
        let as_int = |ap: &mut lockstep_abi::Autopilot| {
            ap.param_i32(name)
                .map(|v| (v, MavParamType::MAV_PARAM_TYPE_INT32))
        };
        let read = if integer {
            as_int(ap)
                .map(|(v, k)| (self.encode_int(v), k))
                .or_else(|_| as_float(ap))
        } else {
            as_float(ap).or_else(|_| as_int(ap).map(|(v, k)| (self.encode_int(v), k)))
        };
        let (value, kind) = match read {
            Ok(r) => r,
            Err(e) => {
                if result.is_ok() {
                    self.status_text(&e.to_string());
                }
                return;
            }
        };
        let index = self
            .params
            .iter()
            .position(|p| p == name)
            .map_or(u16::MAX, |i| i as u16);
        let msg = MavMessage::PARAM_VALUE(PARAM_VALUE_DATA {
            param_value: value,
            param_count: self.params.len() as u16,
            param_index: index,
            param_id: name.into(),
            param_type: kind,
        });
        self.send(link, &msg);
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
        let _ = mavlink::write_v2_msg(&mut self.out, self.header, msg);
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

/// A parameter id as text (up to 16 bytes, NUL-padded).
fn param_name(id: &mavlink::types::CharArray<16>) -> String {
    let bytes: &[u8] = &id[..];
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
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
