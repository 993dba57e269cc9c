//! Who steers the contract's setpoint path, and what the stations are
//! told of it: offboard setpoints ([`super::offboard`]), sticks in
//! position control ([`super::manual`]) and DO_REPOSITION each engage it,
//! any other mode asked for releases it; the mode HEARTBEAT reports names
//! what a station engaged (POSCTL, AUTO.LOITER, GUIDED), not the
//! contract's OFFBOARD it is flown in.

use lockstep_abi::ffi::{LOCKSTEP_MODE_OFFBOARD, LOCKSTEP_MODE_TAKEOFF};
use lockstep_harness::engine::Engine;
use mavlink::dialects::common::*;

use super::commands::Place;
use super::input::Input;
use super::telemetry::{self, View};
use super::vehicle::Vehicle;
use super::{Style, manual, modes, offboard};

impl Vehicle {
    /// The vehicle as the stations are told it.
    pub(super) fn view(&self, engine: &Engine) -> View<'_> {
        View {
            style: self.style,
            home: self.home.as_ref().expect("set at the first boundary"),
            home_first: self.mission.home_first,
            health: &self.health,
            custom_mode: self.custom_mode(engine.actuators().mode),
        }
    }

    /// The autopilot's `mode` as the station's mode names it: the mode a
    /// station engaged for what the contract flies as setpoints (sticks, a
    /// reposition), and ArduPilot's AUTO for a mission's own takeoff.
    pub(super) fn custom_mode(&self, mode: u32) -> u32 {
        if let Some(custom) = self.manual.engaged() {
            return custom;
        }
        if self.repositioned && mode == LOCKSTEP_MODE_OFFBOARD {
            return modes::repositioning(self.style);
        }
        if self.auto_takeoff && mode == LOCKSTEP_MODE_TAKEOFF && self.style == Style::ArduPilot {
            return modes::mission(self.style);
        }
        modes::custom_mode(self.style, mode)
    }

    /// Every way a station steers the setpoint path ends (another mode was
    /// asked for).
    pub(super) fn release(&mut self) {
        self.offboard.disengage();
        self.manual.disengage();
        self.repositioned = false;
    }

    /// The sticks were lost while flying them: the RC-loss failsafe
    /// (return), announced.
    pub(super) fn sticks_lost(&mut self, engine: &mut Engine, now: u64) -> Result<(), String> {
        self.manual.disengage();
        if engine.actuators().armed != 1 {
            return Ok(());
        }
        let input = Input::Command {
            command: "rtl".into(),
        };
        let _ = self.take(input, engine, now)?;
        let text = match self.style {
            Style::Px4 => "Manual control lost: no input for 0.5 s, returning",
            Style::ArduPilot => "Radio failsafe: no override for 3 s, RTL",
        };
        self.announce(MavSeverity::MAV_SEVERITY_CRITICAL, text);
        Ok(())
    }

    /// Sticks from a station: kept, and flown while manual control is
    /// engaged.
    pub(super) fn sticks(
        &mut self,
        m: &MANUAL_CONTROL_DATA,
        engine: &mut Engine,
        now: u64,
    ) -> Result<(), String> {
        self.manual.arrived(manual::Sticks::of(m), now);
        if engine.actuators().armed != 1 {
            return Ok(());
        }
        if let Some(sp) = self.manual.setpoint(engine, now) {
            let _ = self.take(Input::Setpoint(sp), engine, now)?;
        }
        Ok(())
    }

    /// A station asks for a position-control mode (`custom`): sticks flown
    /// at once, or a hold until they come (ArduPilot), or why not (PX4
    /// without sticks).
    pub(super) fn engage_manual(
        &mut self,
        custom: u32,
        engine: &mut Engine,
        now: u64,
    ) -> Result<Result<(), String>, String> {
        // Refused, whatever steers the vehicle now goes on steering it.
        if let Err(why) = self.manual.admits(self.style, now) {
            return Ok(Err(why));
        }
        self.release();
        match self.manual.engage(self.style, custom, now) {
            Ok(true) if engine.actuators().armed == 1 => match self.manual.setpoint(engine, now) {
                Some(sp) => self.take(Input::Setpoint(sp), engine, now),
                None => Ok(Ok(())),
            },
            Ok(true) => Ok(Ok(())),
            Ok(false) => self.take(
                Input::Command {
                    command: "hold".into(),
                },
                engine,
                now,
            ),
            Err(why) => Ok(Err(why)),
        }
    }

    /// DO_REPOSITION: fly to a place and hold there (PX4 reports it as
    /// AUTO.LOITER, ArduPilot as GUIDED), as a position setpoint; a ground
    /// speed (param 1) sets the cruise speed first; a heading (param 4,
    /// radians in PX4 style; ArduCopter ignores it) is flown, NaN keeps
    /// the one flown.
    pub(super) fn reposition(
        &mut self,
        p: [f32; 7],
        place: Place,
        engine: &mut Engine,
        now: u64,
    ) -> Result<Result<(), String>, String> {
        let act = engine.actuators();
        if act.armed != 1 || telemetry::landed(engine) {
            return Ok(Err("Reposition refused: not flying".into()));
        }
        let x = engine.state();
        let here = [x[0], x[1], x[2]];
        let home = self.home.expect("set before inputs").alt_m;
        let at = match place.ned(engine, here, home) {
            Ok(at) => at,
            Err(why) => return Ok(Err(format!("Reposition refused: {why}"))),
        };
        if p[0].is_finite() && p[0] > 0.0 {
            let speed = Input::ParamF32 {
                name: "MPC_XY_CRUISE".into(),
                value: p[0],
            };
            if let Err(why) = self.take(speed, engine, now)? {
                return Ok(Err(format!("Reposition refused: speed {}: {why}", p[0])));
            }
        }
        self.release();
        self.watch_next(engine, now);
        let sp = offboard::Setpoint {
            kind: offboard::Kind::Position,
            vector: at,
            // PX4 reads the heading in radians (MAVSDK sends radians);
            // ArduCopter ignores it.
            yaw_rad: (self.style == Style::Px4 && p[3].is_finite()).then(|| f64::from(p[3])),
            thrust: 0.0,
        };
        let result = self.take(Input::Setpoint(sp), engine, now)?;
        self.repositioned = result.is_ok();
        Ok(result)
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
        let engaged = self.offboard.engage(self.style, now);
        if engaged.is_ok() {
            // The stream steers now, not the sticks or a reposition.
            self.manual.disengage();
            self.repositioned = false;
        }
        match engaged {
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
}
