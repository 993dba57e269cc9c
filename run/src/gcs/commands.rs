//! The command protocol on the vehicle's side: COMMAND_LONG and
//! COMMAND_INT into the scenario's command path (arm, takeoff with its
//! altitude, land, RTL, mission start, hold, modes; OFFBOARD through
//! [`super::offboard`], POSCTL/LOITER through [`super::manual`]),
//! DO_REPOSITION (a position setpoint, reported as PX4's hold or
//! ArduPilot's GUIDED) and DO_CHANGE_SPEED (the autopilot's cruise or climb
//! speed parameter), requests for messages (REQUEST_MESSAGE,
//! GET_HOME_POSITION, AUTOPILOT_VERSION), message intervals; and the
//! setpoint messages' outcomes.

// SET_MODE and REQUEST_AUTOPILOT_CAPABILITIES are superseded but sent.
#![allow(deprecated)]

use lockstep_harness::engine::Engine;
use lockstep_plant::env::geodesy::Geodetic;
use mavlink::dialects::common::*;

use super::input::Input;
use super::telemetry::{self, STREAMS};
use super::vehicle::Vehicle;
use super::{After, Style, modes};

/// Where a command points: COMMAND_INT's x, y and z in its frame, or
/// COMMAND_LONG's parameters 5 to 7 (in the style's frame for them).
#[derive(Debug, Clone, Copy)]
pub(super) struct Place {
    /// Degrees; NaN when not given.
    pub(super) lat_deg: f64,
    pub(super) lon_deg: f64,
    /// m in `frame`; NaN when not given.
    pub(super) alt: f32,
    pub(super) frame: MavFrame,
}

impl Place {
    /// COMMAND_LONG's: degrees in parameters 5 and 6 (0 and NaN are not
    /// given), PX4's altitude above mean sea level, ArduPilot's above home.
    pub(super) fn of_long(p: &[f32; 7], style: Style) -> Place {
        let given = !(p[4] == 0.0 && p[5] == 0.0);
        let deg = |v: f32| if given { f64::from(v) } else { f64::NAN };
        Place {
            lat_deg: deg(p[4]),
            lon_deg: deg(p[5]),
            alt: p[6],
            frame: match style {
                Style::Px4 => MavFrame::MAV_FRAME_GLOBAL,
                Style::ArduPilot => MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT,
            },
        }
    }

    /// COMMAND_INT's: degrees × 10⁷ (0, 0 and `INT32_MAX` are not given)
    /// in a global frame; x and y in any other frame are no place here
    /// (read as a latitude of infinity, refused where a place is used).
    pub(super) fn of_int(c: &COMMAND_INT_DATA) -> Place {
        use MavFrame::*;
        let given = !(c.x == 0 && c.y == 0) && c.x != i32::MAX && c.y != i32::MAX;
        let global = matches!(
            c.frame,
            MAV_FRAME_GLOBAL
                | MAV_FRAME_GLOBAL_INT
                | MAV_FRAME_GLOBAL_RELATIVE_ALT
                | MAV_FRAME_GLOBAL_RELATIVE_ALT_INT
        );
        let deg = |v: i32| match (given, global) {
            (false, _) => f64::NAN,
            (true, true) => f64::from(v) * 1e-7,
            (true, false) => f64::INFINITY,
        };
        Place {
            lat_deg: deg(c.x),
            lon_deg: deg(c.y),
            alt: c.z,
            frame: c.frame,
        }
    }

    /// NED (m from the world origin) of the place, each part not given
    /// taken from `here`; or why it is not a place.
    pub(super) fn ned(
        &self,
        engine: &Engine,
        here: [f64; 3],
        home_alt_m: f64,
    ) -> Result<[f64; 3], String> {
        let origin = &engine.plant().origin;
        let mut at = here;
        if !self.lat_deg.is_nan() || !self.lon_deg.is_nan() {
            if self.lat_deg.is_infinite() {
                return Err(format!(
                    "x and y in frame {:?} (not a global frame)",
                    self.frame
                ));
            }
            if !(self.lat_deg.abs() <= 90.0 && self.lon_deg.abs() <= 180.0) {
                return Err(format!(
                    "latitude {} / longitude {} is not a place",
                    self.lat_deg, self.lon_deg
                ));
            }
            let g = origin.to_geodetic(here);
            let p = origin.to_ned(Geodetic {
                lat_deg: self.lat_deg,
                lon_deg: self.lon_deg,
                alt_m: g.alt_m,
            });
            at[0] = p[0];
            at[1] = p[1];
        }
        if !self.alt.is_nan() {
            let alt_m = match self.frame {
                MavFrame::MAV_FRAME_GLOBAL | MavFrame::MAV_FRAME_GLOBAL_INT => f64::from(self.alt),
                MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT
                | MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT_INT => home_alt_m + f64::from(self.alt),
                other => {
                    return Err(format!(
                        "frame {other:?} is not GLOBAL or GLOBAL_RELATIVE_ALT"
                    ));
                }
            };
            if !alt_m.is_finite() {
                return Err(format!("altitude {} is not finite", self.alt));
            }
            let g = origin.to_geodetic(at);
            at[2] = origin.to_ned(Geodetic { alt_m, ..g })[2];
        }
        Ok(at)
    }
}

/// The autopilot parameter DO_CHANGE_SPEED's speed type (param 1) sets:
/// ground or air speed the cruise speed, climb and descent their limits.
fn speed_param(kind: f32) -> Option<&'static str> {
    match kind as i32 {
        _ if !kind.is_finite() => None,
        0 | 1 => Some("MPC_XY_CRUISE"),
        2 => Some("MPC_Z_VEL_MAX_UP"),
        3 => Some("MPC_Z_VEL_MAX_DN"),
        _ => None,
    }
}

impl Vehicle {
    /// Carries out `command` from `sender` on `link` and acknowledges it.
    ///
    /// Long because it is the table of commands: one arm per MAV_CMD the
    /// vehicle takes, each with its parameters' checks and its answer.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn command(
        &mut self,
        link: usize,
        sender: (u8, u8),
        command: MavCmd,
        p: [f32; 7],
        place: Place,
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
        if command == MAV_CMD_DO_SET_MODE && modes::is_manual(self.style, p[1] as u32, p[2] as u32)
        {
            let custom = modes::compose(self.style, p[1] as u32, p[2] as u32);
            match self.engage_manual(custom, engine, now)? {
                Ok(()) => self.send(link, &ack(MavResult::MAV_RESULT_ACCEPTED)),
                Err(why) => {
                    self.send(link, &ack(MavResult::MAV_RESULT_DENIED));
                    self.status_text(&why);
                }
            }
            return Ok(());
        }
        match command {
            MAV_CMD_DO_REPOSITION => {
                let result = self.reposition(p, place, engine, now)?;
                return self.finish(link, sender, command, result, engine);
            }
            MAV_CMD_DO_CHANGE_SPEED => {
                let result = self.change_speed(p, engine, now)?;
                return self.finish(link, sender, command, result, engine);
            }
            MAV_CMD_NAV_LAND if !place.lat_deg.is_nan() => {
                // Only where the vehicle is: a place farther than 1 m is
                // refused, not landed on here.
                let x = engine.state();
                let here = [x[0], x[1], x[2]];
                let home = self.home.expect("set before inputs").alt_m;
                let far = place
                    .ned(engine, here, home)
                    .map(|at| (at[0] - here[0]).hypot(at[1] - here[1]) > 1.0)
                    .unwrap_or(true);
                if far {
                    self.send(link, &ack(MavResult::MAV_RESULT_DENIED));
                    self.status_text(
                        "Land refused: not here (fly there with DO_REPOSITION, then land)",
                    );
                    return Ok(());
                }
            }
            _ => {}
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
            if command != MAV_CMD_COMPONENT_ARM_DISARM {
                // Another mode, accepted: the stream, the sticks or a
                // reposition no longer steer the vehicle.
                self.release();
            }
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

    /// A command's answer once applied (or refused before, with why).
    fn finish(
        &mut self,
        link: usize,
        sender: (u8, u8),
        command: MavCmd,
        result: Result<(), String>,
        engine: &Engine,
    ) -> Result<(), String> {
        self.answer(
            super::After::Command {
                link,
                to: sender,
                command,
            },
            &result,
            engine,
        );
        Ok(())
    }

    /// DO_CHANGE_SPEED: the speed of a kind (param 1: ground or air speed,
    /// climb, descent) set to param 2 m/s through the autopilot's
    /// parameter for it, in force at once; -1 (or any speed not above 0)
    /// changes nothing.
    fn change_speed(
        &mut self,
        p: [f32; 7],
        engine: &mut Engine,
        now: u64,
    ) -> Result<Result<(), String>, String> {
        let Some(name) = speed_param(p[0]) else {
            return Ok(Err(format!(
                "Speed change refused: speed type {} is not 0 to 3",
                p[0]
            )));
        };
        if !(p[1].is_finite() && p[1] > 0.0) {
            return Ok(Ok(()));
        }
        let input = Input::ParamF32 {
            name: name.into(),
            value: p[1],
        };
        Ok(self
            .take(input, engine, now)?
            .map_err(|why| format!("Speed change refused: {why}")))
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
                telemetry::message(engine, *stream, &self.view(engine))
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
