//! The command protocol on the vehicle's side: COMMAND_LONG and
//! COMMAND_INT into the scenario's command path (arm, takeoff with its
//! altitude, land, RTL, mission start, hold, modes; OFFBOARD through
//! [`super::offboard`]), requests for messages (REQUEST_MESSAGE,
//! GET_HOME_POSITION, AUTOPILOT_VERSION), message intervals; and the
//! setpoint messages' outcomes.

// SET_MODE and REQUEST_AUTOPILOT_CAPABILITIES are superseded but sent.
#![allow(deprecated)]

use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;

use super::input::Input;
use super::telemetry::{self, STREAMS};
use super::{After, Gcs, Style, modes, offboard};

impl Gcs {
    pub(super) fn command(
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
        if command == MAV_CMD_DO_SET_MODE
            && modes::is_offboard(self.style, p[1] as u32, p[2] as u32)
        {
            // The answer first, then why (a station waiting for the answer
            // still reads the reason after it).
            match self.engage(engine, now)? {
                Ok(()) => self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED)),
                Err(why) => {
                    self.send(link, &ack(MavResult::MAV_RESULT_DENIED));
                    self.status_text(&why);
                }
            }
            return Ok(());
        }
        if matches!(
            command,
            MAV_CMD_DO_SET_MODE
                | MAV_CMD_NAV_TAKEOFF
                | MAV_CMD_NAV_LAND
                | MAV_CMD_NAV_RETURN_TO_LAUNCH
                | MAV_CMD_MISSION_START
                | MAV_CMD_NAV_LOITER_UNLIM
        ) {
            // Another mode: the stream no longer steers the vehicle.
            self.offboard.disengage();
        }
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
            let input = match (command, self.takeoff_height(p[6])) {
                (MAV_CMD_NAV_TAKEOFF, Err(why)) => {
                    self.send(link, &ack(MavResult::MAV_RESULT_DENIED));
                    self.status_text(&why);
                    return Ok(());
                }
                (MAV_CMD_NAV_TAKEOFF, Ok(Some(height_m))) => Input::Takeoff { height_m },
                _ => Input::Command {
                    command: name.into(),
                },
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
            MAV_CMD_SET_MESSAGE_INTERVAL => {
                let result = self.rates.set_interval(p[0], p[1], now);
                if result == MavResult::MAV_RESULT_UNSUPPORTED {
                    self.ignore("SET_MESSAGE_INTERVAL for messages this vehicle does not stream");
                }
                self.send(link, &ack(result));
            }
            MAV_CMD_GET_MESSAGE_INTERVAL => match self.rates.interval(p[0]) {
                Some(msg) => {
                    self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED));
                    self.send(link, &msg);
                }
                None => self.send(link, &ack(MavResult::MAV_RESULT_UNSUPPORTED)),
            },
            _ => {
                self.send(link, &ack(MavResult::MAV_RESULT_UNSUPPORTED));
                let what = format!("commands {command:?} answered unsupported");
                self.ignore(&what);
            }
        }
        Ok(())
    }

    /// A setpoint message's outcome: kept for the switch, flown when
    /// engaged, or refused (counted; announced the first time).
    pub(super) fn setpoint(
        &mut self,
        out: offboard::Outcome,
        engine: &mut Engine,
        now: u64,
    ) -> Result<(), String> {
        match out {
            offboard::Outcome::Setpoint(sp) => {
                self.offboard.arrived(sp, now);
                if self.offboard.engaged {
                    let _ = self.take(Input::Setpoint(sp), engine, now)?;
                }
            }
            offboard::Outcome::Refused(why) => {
                let what = format!("{why} (refused)");
                if !self.ignored.contains_key(&what) {
                    self.status_text(&format!("Refused: {why}"));
                }
                self.ignore(&what);
            }
        }
        Ok(())
    }

    /// A station asks for offboard (PX4's OFFBOARD, ArduPilot's GUIDED):
    /// the latest setpoint flown at once, or (ArduPilot, none yet) a hold
    /// until one comes; PX4 refuses without a live stream.
    pub(super) fn engage(
        &mut self,
        engine: &mut Engine,
        now: u64,
    ) -> Result<Result<(), String>, String> {
        match self.offboard.engage(self.style, now) {
            Ok(Some(sp)) => self.take(Input::Setpoint(sp), engine, now),
            Ok(None) => self.take(
                Input::Command {
                    command: "hold".into(),
                },
                engine,
                now,
            ),
            Err(why) => Ok(Err(why)),
        }
    }

    /// NAV_TAKEOFF's altitude (param 7) as a height above home: PX4's is
    /// above mean sea level, ArduPilot's above home; NaN (and ArduPilot's
    /// 0) is the autopilot's own height (`None`).
    pub(super) fn takeoff_height(&self, alt: f32) -> Result<Option<f64>, String> {
        use lockstep_harness::inputs::scenario::{MAX_TAKEOFF_M, MIN_TAKEOFF_M};
        if alt.is_nan() || (self.style == Style::ArduPilot && alt == 0.0) {
            return Ok(None);
        }
        let home = self.home.expect("set before inputs");
        let h = match self.style {
            Style::Px4 => f64::from(alt) - home.alt_m,
            Style::ArduPilot => f64::from(alt),
        };
        if (MIN_TAKEOFF_M..=MAX_TAKEOFF_M).contains(&h) {
            Ok(Some(h))
        } else {
            Err(format!(
                "takeoff refused: {h:.1} m above home is outside {MIN_TAKEOFF_M} to {MAX_TAKEOFF_M} m"
            ))
        }
    }

    /// The message `REQUEST_MESSAGE` asks for by its id (param 1), now:
    /// any message this vehicle sends; `None` for one it does not.
    pub(super) fn requested(&self, id: f32, engine: &Engine) -> Option<MavMessage> {
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

    pub(super) fn autopilot_version(&self) -> MavMessage {
        // What is implemented, no more: missions and commands as _INT,
        // MAVLink 2, offboard setpoints (local and global positions and
        // velocities; body rates of SET_ATTITUDE_TARGET).
        let mut caps = MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_MISSION_INT
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_COMMAND_INT
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_MAVLINK2
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_SET_POSITION_TARGET_LOCAL_NED
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_SET_POSITION_TARGET_GLOBAL_INT
            | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_SET_ATTITUDE_TARGET;
        // MAVFTP (the parameter and mission files) only in ArduPilot style.
        caps |= match self.style {
            Style::Px4 => MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE,
            Style::ArduPilot => {
                MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_C_CAST
                    | MavProtocolCapability::MAV_PROTOCOL_CAPABILITY_FTP
            }
        };
        MavMessage::AUTOPILOT_VERSION(AUTOPILOT_VERSION_DATA {
            capabilities: caps,
            uid: 0x6C6F_636B_7374_6570, // "lockstep"
            ..Default::default()
        })
    }
}
