//! Manual control over MAVLink: MANUAL_CONTROL (QGroundControl's virtual
//! joystick, a gamepad, MAVSDK's `manual_control`) flown in a position
//! control mode, onto the contract's setpoint path.
//!
//! PX4's POSCTL (`FlightTaskManualPosition`, `mavlink_receiver.cpp`): the
//! axes are read as PX4 reads them (x pitch forward, y roll right, z
//! throttle 0 to 1000 with 500 centred, r yaw clockwise; an axis at
//! `INT16_MAX` is not given and reads centred), each stick through PX4's
//! deadzone and expo ([`DEADZONE`], [`EXPO`]); pitch and roll are velocities
//! in the heading frame up to `MPC_VEL_MANUAL`, the throttle a climb or
//! descent rate up to `MPC_Z_VEL_MAX_UP`/`_DN`, the yaw stick a turn rate up
//! to `MPC_MAN_Y_MAX`. Sticks all centred brake to a stop (a zero
//! velocity) and then hold the position where the vehicle stopped (PX4's
//! position lock, taken below [`LOCK_SPEED`]). Switching to POSCTL is denied without
//! sticks in the last [`Style::Px4`] loss time; losing them for PX4's
//! `COM_RC_LOSS_T` (0.5 s) while in POSCTL is the RC-loss failsafe
//! (`NAV_RCL_ACT` 2: return), announced.
//!
//! ArduPilot's LOITER and POSHOLD fly the sticks the same way; entered
//! without sticks they hold, and sticks steer once they come. An override
//! silent for ArduPilot's `RC_OVERRIDE_TIME` (3 s) falls back to a radio
//! that is not there: the radio failsafe (`FS_THR_ENABLE` 1: RTL).
//!
//! Every stick move is flown as the contract's setpoint and recorded as
//! one, so a replay is the flight bit for bit; a message that changes
//! nothing (the same sticks, centred again) is not sent again.

use lockstep_harness::engine::Engine;
use mavlink::dialects::common::MANUAL_CONTROL_DATA;

use super::Style;
use super::offboard::{Kind, Setpoint};

/// PX4's `MPC_HOLD_DZ`: the part of each stick's travel read as centred.
pub(crate) const DEADZONE: f64 = 0.1;
/// PX4's `MPC_XY_MAN_EXPO`, `MPC_Z_MAN_EXPO` and `MPC_YAW_EXPO`.
pub(crate) const EXPO: f64 = 0.6;
/// PX4's `MPC_VEL_MANUAL`, m/s: full pitch or roll stick.
pub(crate) const VEL_MANUAL: f64 = 10.0;
/// PX4's `MPC_Z_VEL_MAX_UP` and `MPC_Z_VEL_MAX_DN`, m/s: full throttle up
/// and down.
pub(crate) const Z_VEL_UP: f64 = 3.0;
pub(crate) const Z_VEL_DN: f64 = 1.5;
/// PX4's `MPC_MAN_Y_MAX`, deg/s: full yaw stick.
pub(crate) const YAW_MAX_DEG_S: f64 = 150.0;
/// Below this speed (m/s) with the sticks centred, the position is locked.
pub(crate) const LOCK_SPEED: f64 = 0.3;

/// How long silent sticks are lost: PX4's `COM_RC_LOSS_T`, ArduPilot's
/// `RC_OVERRIDE_TIME`.
pub(crate) fn loss_us(style: Style) -> u64 {
    match style {
        Style::Px4 => 500_000,
        Style::ArduPilot => 3_000_000,
    }
}

/// The sticks, each in -1 to 1: pitch forward, roll right, throttle up
/// (centred 0), yaw clockwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sticks {
    pub(crate) pitch: f64,
    pub(crate) roll: f64,
    pub(crate) throttle: f64,
    pub(crate) yaw: f64,
}

impl Sticks {
    /// MANUAL_CONTROL's axes as PX4 reads them.
    pub(crate) fn of(m: &MANUAL_CONTROL_DATA) -> Sticks {
        let axis = |v: i16, centre: f64| {
            if v == i16::MAX {
                centre
            } else {
                (f64::from(v) / 1000.0).clamp(-1.0, 1.0)
            }
        };
        Sticks {
            pitch: axis(m.x, 0.0),
            roll: axis(m.y, 0.0),
            // Throttle 0 to 1000 (500 centred) as -1 to 1.
            throttle: (axis(m.z, 0.5) * 2.0 - 1.0).clamp(-1.0, 1.0),
            yaw: axis(m.r, 0.0),
        }
    }
}

/// PX4's `math::expo_deadzone`: the deadzone taken out, then the expo
/// curve (1 - e)·x + e·x³.
pub(crate) fn shaped(x: f64) -> f64 {
    let d = x.signum() * ((x.abs() - DEADZONE).max(0.0) / (1.0 - DEADZONE));
    (1.0 - EXPO) * d + EXPO * d * d * d
}

/// The station side of manual control.
#[derive(Debug, Default)]
pub(crate) struct Manual {
    /// The latest sticks and when they arrived.
    latest: Option<(Sticks, u64)>,
    /// Engaged in this custom mode (as the HEARTBEAT reports it).
    engaged: Option<u32>,
    /// Sticks came since the mode was engaged (ArduPilot's LOITER holds
    /// until they do; only then can they be lost).
    steered: bool,
    /// The heading flown and when it was last turned.
    heading: Option<(f64, u64)>,
    /// Where the vehicle stopped with the sticks centred: the position
    /// held.
    lock: Option<[f64; 3]>,
    /// The setpoint last flown.
    sent: Option<Setpoint>,
}

impl Manual {
    /// Keeps sticks that arrived at `now`.
    pub(crate) fn arrived(&mut self, sticks: Sticks, now: u64) {
        self.latest = Some((sticks, now));
    }

    /// The custom mode a station engaged, while engaged.
    pub(crate) fn engaged(&self) -> Option<u32> {
        self.engaged
    }

    /// Sticks younger than the loss time, now.
    fn fresh(&self, style: Style, now: u64) -> Option<Sticks> {
        self.latest
            .filter(|(_, t)| now.saturating_sub(*t) < loss_us(style))
            .map(|(s, _)| s)
    }

    /// Whether a position-control mode may be engaged at `now` (PX4: only
    /// with sticks in the last loss time), or why not.
    pub(crate) fn admits(&self, style: Style, now: u64) -> Result<(), String> {
        if style == Style::Px4 && self.fresh(style, now).is_none() {
            return Err(
                "Position mode refused: no manual control input (send MANUAL_CONTROL first)".into(),
            );
        }
        Ok(())
    }

    /// A station asks for a position-control mode (`custom`) at `now`:
    /// whether sticks steer at once (`true`), hold until they come
    /// (`false`, ArduPilot), or why not (PX4 without sticks).
    pub(crate) fn engage(&mut self, style: Style, custom: u32, now: u64) -> Result<bool, String> {
        self.admits(style, now)?;
        let fresh = self.fresh(style, now).is_some();
        *self = Manual {
            latest: self.latest,
            engaged: Some(custom),
            steered: fresh,
            ..Manual::default()
        };
        Ok(fresh)
    }

    /// Manual control ended (another mode asked for, or the autopilot left
    /// the mode it flies in).
    pub(crate) fn disengage(&mut self) {
        self.engaged = None;
        self.steered = false;
        self.heading = None;
        self.lock = None;
        self.sent = None;
    }

    /// The sticks were lost at `now` while steering.
    pub(crate) fn lost(&self, style: Style, now: u64) -> bool {
        self.engaged.is_some() && self.steered && self.fresh(style, now).is_none()
    }

    /// The setpoint the latest sticks ask for at `now`, when it differs
    /// from the one flown (`None`: nothing new to fly, or not engaged).
    pub(crate) fn setpoint(&mut self, engine: &Engine, now: u64) -> Option<Setpoint> {
        self.engaged?;
        let (s, _) = self.latest?;
        self.steered = true;
        let x = engine.state();
        let here = [x[0], x[1], x[2]];
        let (from, since) = self
            .heading
            .unwrap_or((super::offboard::yaw_of(engine), now));
        let dt = now.saturating_sub(since) as f64 * 1e-6;
        let rate = shaped(s.yaw) * YAW_MAX_DEG_S.to_radians();
        let heading = (from + rate * dt).rem_euclid(std::f64::consts::TAU);
        self.heading = Some((heading, now));
        let (fwd, right, up) = (shaped(s.pitch), shaped(s.roll), shaped(s.throttle));
        let centred = fwd == 0.0 && right == 0.0 && up == 0.0 && rate == 0.0;
        let stopped = (x[3] * x[3] + x[4] * x[4] + x[5] * x[5]).sqrt() < LOCK_SPEED;
        if centred && self.lock.is_none() && stopped {
            self.lock = Some(here);
        }
        let sp = if let (true, Some(at)) = (centred, self.lock) {
            // Centred and stopped: hold where it stopped.
            Setpoint {
                kind: Kind::Position,
                vector: at,
                yaw_rad: Some(heading),
                thrust: 0.0,
            }
        } else if centred {
            // Centred, still moving: brake.
            Setpoint {
                kind: Kind::Velocity,
                vector: [0.0; 3],
                yaw_rad: Some(heading),
                thrust: 0.0,
            }
        } else {
            self.lock = None;
            let (sin, cos) = heading.sin_cos();
            let (vf, vr) = (fwd * VEL_MANUAL, right * VEL_MANUAL);
            let vz = if up >= 0.0 {
                -up * Z_VEL_UP
            } else {
                -up * Z_VEL_DN
            };
            Setpoint {
                kind: Kind::Velocity,
                vector: [cos * vf - sin * vr, sin * vf + cos * vr, vz],
                yaw_rad: Some(heading),
                thrust: 0.0,
            }
        };
        if self.sent == Some(sp) {
            return None;
        }
        self.sent = Some(sp);
        Some(sp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(x: i16, y: i16, z: i16, r: i16) -> MANUAL_CONTROL_DATA {
        MANUAL_CONTROL_DATA {
            x,
            y,
            z,
            r,
            ..Default::default()
        }
    }

    #[test]
    fn sticks_read_as_px4_reads_them() {
        let s = Sticks::of(&control(1000, -500, 500, i16::MAX));
        assert_eq!(s.pitch, 1.0);
        assert_eq!(s.roll, -0.5);
        assert_eq!(s.throttle, 0.0);
        assert_eq!(s.yaw, 0.0);
        assert_eq!(Sticks::of(&control(0, 0, 1000, 0)).throttle, 1.0);
        assert_eq!(Sticks::of(&control(0, 0, 0, 0)).throttle, -1.0);
        assert_eq!(Sticks::of(&control(0, 0, i16::MAX, 0)).throttle, 0.0);
        // Out of range is clamped, not flown faster.
        assert_eq!(Sticks::of(&control(-3000, 0, 500, 0)).pitch, -1.0);
    }

    #[test]
    fn the_deadzone_and_expo_are_px4s() {
        assert_eq!(shaped(0.05), 0.0);
        assert_eq!(shaped(-0.1), 0.0);
        assert_eq!(shaped(1.0), 1.0);
        assert_eq!(shaped(-1.0), -1.0);
        // Half travel: (0.5 - 0.1) / 0.9 = 0.444…, then 0.4·d + 0.6·d³.
        let d: f64 = 0.4 / 0.9;
        assert!((shaped(0.5) - (0.4 * d + 0.6 * d.powi(3))).abs() < 1e-15);
    }

    #[test]
    fn px4_refuses_position_mode_without_sticks_and_loses_them_after_half_a_second() {
        let mut m = Manual::default();
        let e = m.engage(Style::Px4, 3 << 16, 1_000_000).unwrap_err();
        assert_eq!(
            e,
            "Position mode refused: no manual control input (send MANUAL_CONTROL first)"
        );
        m.arrived(Sticks::of(&control(0, 0, 500, 0)), 1_000_000);
        assert_eq!(m.engage(Style::Px4, 3 << 16, 1_400_000), Ok(true));
        assert!(!m.lost(Style::Px4, 1_499_999));
        assert!(m.lost(Style::Px4, 1_500_000));
        // Sticks 0.6 s old are too old to engage.
        assert!(m.engage(Style::Px4, 3 << 16, 1_600_000).is_err());
    }

    #[test]
    fn ardupilot_holds_until_sticks_come_and_only_then_can_lose_them() {
        let mut m = Manual::default();
        assert_eq!(m.engage(Style::ArduPilot, 5, 0), Ok(false));
        assert!(!m.lost(Style::ArduPilot, 10_000_000));
        m.steered = true;
        m.latest = Some((Sticks::of(&control(0, 0, 500, 0)), 10_000_000));
        assert!(!m.lost(Style::ArduPilot, 12_999_999));
        assert!(m.lost(Style::ArduPilot, 13_000_000));
    }
}
