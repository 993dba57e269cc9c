//! One vehicle as ground stations see it: its system id, its telemetry,
//! what it announces, and the protocols' state (missions, parameters,
//! commands, offboard, sticks, MAVFTP), behind the link the vehicles of a
//! run share ([`super::net`]).

// Ground stations still send MAVLink's superseded messages (SET_MODE,
// MISSION_REQUEST, REQUEST_AUTOPILOT_CAPABILITIES): they are answered.
#![allow(deprecated)]

use std::collections::BTreeMap;

use lockstep_abi::ffi::{LOCKSTEP_MODE_HOLD, LOCKSTEP_MODE_OFFBOARD, LOCKSTEP_MODE_TAKEOFF};
use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;
use mavlink::{MavHeader, Message};

use super::health::Health;
use super::input::{Input, Recording};
use super::mission::MissionServer;
use super::net::{Net, Shared};
use super::telemetry::{self, Home, STREAMS};
use super::{
    After, COMPONENT, Style, WATCH_US, commands, ftp, manual, modes, offboard, params, rates,
};

/// One served vehicle: its system id, what the stations were told and
/// asked, and its protocols' state.
#[derive(Debug)]
pub(crate) struct Vehicle {
    /// The link the vehicles share.
    pub(super) net: Shared,
    pub(super) style: Style,
    pub(super) header: MavHeader,
    pub(super) rates: rates::Rates,
    /// The timeline entries and crashes announced so far.
    pub(super) announced: (usize, usize),
    pub(super) home: Option<Home>,
    /// The health last announced.
    pub(super) health: Health,
    pub(super) mission: MissionServer,
    /// The mission item last reported current, and whether the mission was
    /// finished (for MISSION_ITEM_REACHED).
    pub(super) reported: (i32, bool),
    /// Where its inputs are recorded, and its name there (a fleet's).
    pub(super) recorder: Option<Recording>,
    /// The parameters ground stations see: the library's whole table when
    /// it enumerates it (ABI 4), else those set by the scenario or over
    /// MAVLink.
    pub(super) params: params::Table,
    /// MAVFTP (ArduPilot style): the parameter and mission files.
    pub(super) ftp: ftp::Server,
    /// What was ignored, by kind.
    pub(super) ignored: BTreeMap<String, u64>,
    /// Offboard control from the stations.
    pub(super) offboard: offboard::Offboard,
    /// Manual control (sticks) from the stations.
    pub(super) manual: manual::Manual,
    /// A station's DO_REPOSITION is being flown (a position setpoint).
    pub(super) repositioned: bool,
    /// A station's mission start: a takeoff now is the mission's own.
    pub(super) auto_takeoff: bool,
    /// The autopilot's mode at the last boundary.
    pub(super) mode: u32,
    /// After an input: until when to look for the autopilot's refusal of
    /// it, and its last message before.
    pub(super) watch: Option<(u64, String)>,
}

impl Vehicle {
    /// Vehicle `system` (its id) served in `style` over `net`. `params`
    /// are the parameter names the scenario sets.
    pub(crate) fn new(
        net: Shared,
        system: u8,
        style: Style,
        params: Vec<String>,
        recorder: Option<Recording>,
    ) -> Vehicle {
        Vehicle {
            net,
            style,
            header: MavHeader {
                system_id: u32::from(system),
                component_id: COMPONENT,
                sequence: 0,
            },
            rates: rates::Rates::new(),
            announced: (0, 0),
            home: None,
            health: Health::assumed(),
            mission: MissionServer::new(style == Style::ArduPilot),
            reported: (-1, false),
            recorder,
            params: params::Table::new(params),
            ftp: ftp::Server::default(),
            ignored: BTreeMap::new(),
            offboard: offboard::Offboard::default(),
            manual: manual::Manual::default(),
            repositioned: false,
            auto_takeoff: false,
            mode: 0,
            watch: None,
        }
    }

    /// What was ignored, one line per kind.
    pub(crate) fn notes(&self) -> impl Iterator<Item = String> + '_ {
        self.ignored.iter().map(|(what, n)| format!("{n} {what}"))
    }

    pub(super) fn ignore(&mut self, what: &str) {
        *self.ignored.entry(what.to_string()).or_insert(0) += 1;
    }

    /// Before the link is read at a boundary: home, at the first.
    pub(crate) fn arrive(&mut self, engine: &Engine) {
        if self.home.is_none() {
            self.home = Some(Home::of(engine));
        }
    }

    /// After the inputs that arrived at a boundary (`live`: not replayed):
    /// the failsafes of lost streams, mission progress, health, the
    /// timeline announced, the telemetry due.
    pub(crate) fn tick(&mut self, engine: &mut Engine, now: u64, live: bool) -> Result<(), String> {
        // What the autopilot did by itself first (a failsafe ending what
        // steered it), then the streams a station stopped.
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
        if live {
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
    pub(super) fn announce_timeline(&mut self, engine: &Engine) {
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
    pub(super) fn progress(&mut self, engine: &Engine) {
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

    /// Whether a message addressed to `target` is for this vehicle.
    pub(crate) fn for_us(&self, target: u8) -> bool {
        target == 0 || u32::from(target) == self.header.system_id
    }

    pub(crate) fn handle(
        &mut self,
        link: usize,
        sender: (u8, u8),
        msg: &MavMessage,
        engine: &mut Engine,
        now: u64,
    ) -> Result<(), String> {
        match msg {
            MavMessage::HEARTBEAT(_) => {}
            // A time-sync request (tc1 = 0) addressed to us or to all is
            // answered with our time in ns: the simulated time.
            MavMessage::TIMESYNC(t) if t.tc1 == 0 && self.for_us(t.target_system) => {
                let reply = MavMessage::TIMESYNC(TIMESYNC_DATA {
                    tc1: i64::try_from(now.saturating_mul(1000)).unwrap_or(i64::MAX),
                    ts1: t.ts1,
                    target_system: sender.0,
                    target_component: sender.1,
                });
                self.send(link, &reply);
            }
            MavMessage::COMMAND_LONG(c) if self.for_us(c.target_system) => {
                let p = [
                    c.param1, c.param2, c.param3, c.param4, c.param5, c.param6, c.param7,
                ];
                let place = commands::Place::of_long(&p, self.style);
                self.command(link, sender, c.command, p, place, engine, now)?;
            }
            MavMessage::COMMAND_INT(c) if self.for_us(c.target_system) => {
                let p = [
                    c.param1, c.param2, c.param3, c.param4, c.x as f32, c.y as f32, c.z,
                ];
                let place = commands::Place::of_int(c);
                self.command(link, sender, c.command, p, place, engine, now)?;
            }
            MavMessage::REQUEST_DATA_STREAM(r) if self.for_us(r.target_system) => {
                self.rates.request_stream(r, now);
            }
            MavMessage::SET_POSITION_TARGET_LOCAL_NED(m) if self.for_us(m.target_system) => {
                let out = self.offboard.local_ned(m, engine, now);
                self.setpoint(out, engine, now)?;
            }
            MavMessage::SET_POSITION_TARGET_GLOBAL_INT(m) if self.for_us(m.target_system) => {
                let home = self.home.expect("set before inputs").alt_m;
                let out = self.offboard.global_int(m, engine, home, now);
                self.setpoint(out, engine, now)?;
            }
            MavMessage::SET_ATTITUDE_TARGET(m) if self.for_us(m.target_system) => {
                let out = offboard::Offboard::attitude(m);
                self.setpoint(out, engine, now)?;
            }
            MavMessage::MANUAL_CONTROL(m) if self.for_us(m.target) => {
                self.sticks(m, engine, now)?;
            }
            MavMessage::SET_MODE(m)
                if self.for_us(m.target_system)
                    && modes::is_offboard(
                        self.style,
                        modes::split(self.style, m.custom_mode).0,
                        0,
                    ) =>
            {
                let _ = self.engage(engine, now)?;
            }
            MavMessage::SET_MODE(m)
                if self.for_us(m.target_system) && {
                    let (main, sub) = modes::split(self.style, m.custom_mode);
                    modes::is_manual(self.style, main, sub)
                } =>
            {
                if let Err(why) = self.engage_manual(m.custom_mode, engine, now)? {
                    self.status_text(&why);
                }
            }
            MavMessage::SET_MODE(m) if self.for_us(m.target_system) => {
                let (main, sub) = modes::split(self.style, m.custom_mode);
                match modes::command_for(self.style, main, sub) {
                    Some(cmd) => {
                        self.release();
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
                if !self.for_us(target_of(msg)) {
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
                if self.style == Style::ArduPilot && self.for_us(m.target_system) =>
            {
                self.file_transfer(link, sender, m, engine, now)
            }
            other => {
                let what = format!(
                    "{} messages (of no use to this vehicle)",
                    other.message_name()
                );
                self.ignore(&what);
            }
        }
        Ok(())
    }

    /// Applies a live input now and records it.
    pub(super) fn take(
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
            // A mission started on the ground takes off as its own.
            Input::Command { command } => {
                self.auto_takeoff = command == "mission_start" && telemetry::landed(engine)
            }
            Input::Takeoff { .. } | Input::Setpoint(_) => self.auto_takeoff = false,
            _ => {}
        }
        let result = input.apply(engine);
        if let Some(r) = &self.recorder {
            r.write(now, &input)?;
        }
        Ok(result)
    }

    /// Looks for the autopilot's refusal of the next input, whatever it is
    /// (a setpoint given once, e.g. a reposition, is watched too).
    pub(super) fn watch_next(&mut self, engine: &mut Engine, now: u64) {
        if self.watch.is_none() {
            self.watch = Some((now + WATCH_US, engine.autopilot().last_error()));
        }
    }

    /// An input accepted (delivered) that the autopilot then refused: its
    /// message, as a STATUSTEXT, once its step has run.
    pub(super) fn relay_refusal(&mut self, engine: &mut Engine, now: u64) {
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
    pub(super) fn answer(&mut self, after: After, result: &Result<(), String>, _engine: &Engine) {
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

    /// A STATUSTEXT (warning) to every ground station.
    pub(crate) fn warn(&mut self, text: &str) {
        self.announce(MavSeverity::MAV_SEVERITY_WARNING, text);
    }

    /// A STATUSTEXT (error) to every ground station.
    pub(super) fn status_text(&mut self, text: &str) {
        self.announce(MavSeverity::MAV_SEVERITY_ERROR, text);
    }

    /// A STATUSTEXT of `severity` to every ground station.
    pub(super) fn announce(&mut self, severity: MavSeverity, text: &str) {
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

    pub(super) fn send(&mut self, link: usize, msg: &MavMessage) {
        lock(&self.net).send(link, &mut self.header, msg);
    }

    pub(super) fn broadcast(&mut self, msg: &MavMessage) {
        lock(&self.net).broadcast(&mut self.header, msg);
    }
}

/// The link, locked to send (a panic while sending left nothing half-done
/// worth refusing).
fn lock(net: &Shared) -> std::sync::MutexGuard<'_, Net> {
    net.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
