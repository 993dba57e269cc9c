//! Offboard control over MAVLink, onto the contract's setpoint path (ABI
//! 3): SET_POSITION_TARGET_LOCAL_NED (frames LOCAL_NED, LOCAL_OFFSET_NED,
//! BODY_NED, BODY_OFFSET_NED), SET_POSITION_TARGET_GLOBAL_INT (frames
//! GLOBAL and GLOBAL_RELATIVE_ALT, with or without `_INT`) and
//! SET_ATTITUDE_TARGET (body rates and thrust).
//!
//! PX4's rules (`mavlink_receiver.cpp`, Commander's offboard checks), timed
//! in simulated time so a replay is the flight bit for bit: setpoints
//! stream without moving the vehicle until a station switches to OFFBOARD;
//! the switch is denied unless a setpoint arrived within the last
//! [`STREAM_US`] (a stream above 2 Hz); from then on each setpoint is
//! flown; a stream silent for [`LOSS_US`] (PX4's `COM_OF_LOSS_T`, 1 s) is
//! the offboard-loss failsafe (PX4 without RC: hold), announced. In
//! ArduPilot's style GUIDED takes setpoints as they come, with no stream
//! rule and no loss failsafe.
//!
//! What the contract cannot carry is refused, counted and announced once
//! per kind, never flown as something else: accelerations and forces, a
//! vector given in part (PX4 mixes, e.g. a velocity with an altitude),
//! attitude quaternions (the contract takes rates), terrain frames.

use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::SetpointKind;
use lockstep_plant::env::geodesy::Geodetic;
use mavlink::dialects::common::*;
use serde::{Deserialize, Serialize};

use super::Style;

/// A setpoint younger than this proves a stream above 2 Hz.
pub(crate) const STREAM_US: u64 = 500_000;
/// PX4's `COM_OF_LOSS_T` default: a silent stream this long is lost.
pub(crate) const LOSS_US: u64 = 1_000_000;

/// A setpoint as the contract flies it (recorded as an input).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Setpoint {
    pub kind: Kind,
    /// m NED from the world origin, m/s NED, or rad/s FRD (as `kind`).
    pub vector: [f64; 3],
    /// Heading, rad from north (position and velocity only).
    pub yaw_rad: Option<f64>,
    /// Rates only: collective thrust, 0 to 1.
    pub thrust: f64,
}

/// What a setpoint's vector is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Position,
    Velocity,
    Rates,
}

impl Kind {
    pub(crate) fn contract(self) -> SetpointKind {
        match self {
            Kind::Position => SetpointKind::Position,
            Kind::Velocity => SetpointKind::Velocity,
            Kind::Rates => SetpointKind::Rates,
        }
    }
}

/// The station side of offboard control.
#[derive(Debug, Default)]
pub(crate) struct Offboard {
    /// The latest setpoint and when it arrived.
    latest: Option<(Setpoint, u64)>,
    /// A station switched to OFFBOARD (GUIDED): setpoints are flown.
    pub(crate) engaged: bool,
    /// A yaw being turned at a rate: the heading and when it was set.
    turning: Option<(f64, u64)>,
}

/// What to do with a setpoint message.
pub(crate) enum Outcome {
    /// Fly it now (engaged) or keep it for the switch.
    Setpoint(Setpoint),
    /// Refused: why (one line per kind of refusal).
    Refused(&'static str),
}

/// The vehicle's heading now, rad from north.
pub(crate) fn yaw_of(engine: &Engine) -> f64 {
    let x = engine.state();
    let (w, qx, qy, qz) = (x[6], x[7], x[8], x[9]);
    (2.0 * (w * qz + qx * qy)).atan2(1.0 - 2.0 * (qy * qy + qz * qz))
}

fn rotate_yaw(v: [f64; 3], yaw: f64) -> [f64; 3] {
    let (s, c) = yaw.sin_cos();
    [c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]]
}

fn finite(v: &[f32]) -> bool {
    v.iter().all(|x| x.is_finite())
}

impl Offboard {
    /// Keeps a setpoint that arrived at `now`.
    pub(crate) fn arrived(&mut self, sp: Setpoint, now: u64) {
        self.latest = Some((sp, now));
    }

    /// A station asks for OFFBOARD (GUIDED) at `now`: the setpoint to fly
    /// first (PX4: the stream must be alive), or why not.
    pub(crate) fn engage(&mut self, style: Style, now: u64) -> Result<Option<Setpoint>, String> {
        let fresh = self
            .latest
            .filter(|(_, t)| now.saturating_sub(*t) < STREAM_US)
            .map(|(sp, _)| sp);
        match (style, fresh) {
            (Style::Px4, None) => {
                Err("Offboard refused: no setpoint stream (send setpoints above 2 Hz first)".into())
            }
            (_, sp) => {
                self.engaged = true;
                Ok(sp)
            }
        }
    }

    /// Offboard ended (another mode asked for, or the autopilot left it).
    pub(crate) fn disengage(&mut self) {
        self.engaged = false;
        self.turning = None;
    }

    /// PX4's offboard loss at `now`: the stream has been silent for
    /// [`LOSS_US`] while engaged.
    pub(crate) fn lost(&self, style: Style, now: u64) -> bool {
        style == Style::Px4
            && self.engaged
            && self
                .latest
                .is_none_or(|(_, t)| now.saturating_sub(t) >= LOSS_US)
    }

    /// The yaw a setpoint asks for: a heading, or a rate turned from the
    /// heading now (or from the one last set at that rate).
    fn yaw(
        &mut self,
        heading: Option<f32>,
        rate: Option<f32>,
        engine: &Engine,
        now: u64,
    ) -> Option<f64> {
        if let Some(h) = heading {
            self.turning = None;
            return Some(f64::from(h));
        }
        let rate = f64::from(rate?);
        let (from, since) = self.turning.unwrap_or((yaw_of(engine), now));
        let dt = now.saturating_sub(since) as f64 * 1e-6;
        let yaw = (from + rate * dt).rem_euclid(std::f64::consts::TAU);
        self.turning = Some((yaw, now));
        Some(yaw)
    }

    /// SET_POSITION_TARGET_LOCAL_NED as PX4 reads its type mask and frame.
    pub(crate) fn local_ned(
        &mut self,
        m: &SET_POSITION_TARGET_LOCAL_NED_DATA,
        engine: &Engine,
        now: u64,
    ) -> Outcome {
        let mask = m.type_mask;
        let kind = match classify(mask) {
            Ok(k) => k,
            Err(why) => return Outcome::Refused(why),
        };
        let x = engine.state();
        let here = [x[0], x[1], x[2]];
        let yaw_now = yaw_of(engine);
        let v = match kind {
            Kind::Position => [m.x, m.y, m.z],
            _ => [m.vx, m.vy, m.vz],
        };
        if !finite(&v) {
            return Outcome::Refused("setpoints that are not finite");
        }
        let v = v.map(f64::from);
        let vector = match (m.coordinate_frame, kind) {
            (MavFrame::MAV_FRAME_LOCAL_NED, _) => v,
            (MavFrame::MAV_FRAME_LOCAL_OFFSET_NED, Kind::Position) => {
                [here[0] + v[0], here[1] + v[1], here[2] + v[2]]
            }
            (MavFrame::MAV_FRAME_LOCAL_OFFSET_NED, _) => v,
            (
                MavFrame::MAV_FRAME_BODY_NED | MavFrame::MAV_FRAME_BODY_OFFSET_NED,
                Kind::Position,
            ) => {
                let d = rotate_yaw(v, yaw_now);
                [here[0] + d[0], here[1] + d[1], here[2] + d[2]]
            }
            (MavFrame::MAV_FRAME_BODY_NED | MavFrame::MAV_FRAME_BODY_OFFSET_NED, _) => {
                rotate_yaw(v, yaw_now)
            }
            _ => {
                return Outcome::Refused(
                    "SET_POSITION_TARGET_LOCAL_NED in a frame other than LOCAL_NED, LOCAL_OFFSET_NED, BODY_NED or BODY_OFFSET_NED",
                );
            }
        };
        let (heading, rate) = yaw_given(mask, m.yaw, m.yaw_rate);
        let yaw_rad = self.yaw(heading, rate, engine, now);
        Outcome::Setpoint(Setpoint {
            kind,
            vector,
            yaw_rad,
            thrust: 0.0,
        })
    }

    /// SET_POSITION_TARGET_GLOBAL_INT: a position (latitude, longitude,
    /// altitude above mean sea level or above home) or a velocity (NED).
    pub(crate) fn global_int(
        &mut self,
        m: &SET_POSITION_TARGET_GLOBAL_INT_DATA,
        engine: &Engine,
        home_alt_m: f64,
        now: u64,
    ) -> Outcome {
        let mask = m.type_mask;
        let kind = match classify(mask) {
            Ok(k) => k,
            Err(why) => return Outcome::Refused(why),
        };
        let vector = match kind {
            Kind::Position => {
                let alt = f64::from(m.alt);
                let alt_m = match m.coordinate_frame {
                    MavFrame::MAV_FRAME_GLOBAL | MavFrame::MAV_FRAME_GLOBAL_INT => alt,
                    MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT
                    | MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT_INT => home_alt_m + alt,
                    _ => {
                        return Outcome::Refused(
                            "SET_POSITION_TARGET_GLOBAL_INT in a frame other than GLOBAL or GLOBAL_RELATIVE_ALT (with or without _INT)",
                        );
                    }
                };
                if !m.alt.is_finite()
                    || m.lat_int.abs() > 900_000_000
                    || m.lon_int.abs() > 1_800_000_000
                {
                    return Outcome::Refused("setpoints that are not finite");
                }
                engine.plant().origin.to_ned(Geodetic {
                    lat_deg: f64::from(m.lat_int) * 1e-7,
                    lon_deg: f64::from(m.lon_int) * 1e-7,
                    alt_m,
                })
            }
            _ => {
                if !finite(&[m.vx, m.vy, m.vz]) {
                    return Outcome::Refused("setpoints that are not finite");
                }
                [m.vx, m.vy, m.vz].map(f64::from)
            }
        };
        let (heading, rate) = yaw_given(mask, m.yaw, m.yaw_rate);
        let yaw_rad = self.yaw(heading, rate, engine, now);
        Outcome::Setpoint(Setpoint {
            kind,
            vector,
            yaw_rad,
            thrust: 0.0,
        })
    }

    /// SET_ATTITUDE_TARGET: body rates with a thrust (the attitude itself
    /// ignored, as MAVSDK's attitude-rate offboard sends it).
    pub(crate) fn attitude(m: &SET_ATTITUDE_TARGET_DATA) -> Outcome {
        use AttitudeTargetTypemask as T;
        let mask = m.type_mask;
        if !mask.contains(T::ATTITUDE_TARGET_TYPEMASK_ATTITUDE_IGNORE) {
            return Outcome::Refused(
                "SET_ATTITUDE_TARGET with an attitude (the contract takes body rates and a thrust: set ATTITUDE_IGNORE)",
            );
        }
        if mask.intersects(
            T::ATTITUDE_TARGET_TYPEMASK_BODY_ROLL_RATE_IGNORE
                | T::ATTITUDE_TARGET_TYPEMASK_BODY_PITCH_RATE_IGNORE
                | T::ATTITUDE_TARGET_TYPEMASK_BODY_YAW_RATE_IGNORE
                | T::ATTITUDE_TARGET_TYPEMASK_THROTTLE_IGNORE,
        ) {
            return Outcome::Refused(
                "SET_ATTITUDE_TARGET without all three body rates and the thrust",
            );
        }
        let rates = [m.body_roll_rate, m.body_pitch_rate, m.body_yaw_rate];
        if !finite(&rates) || !(0.0..=1.0).contains(&m.thrust) {
            return Outcome::Refused(
                "SET_ATTITUDE_TARGET with rates not finite or a thrust outside 0 to 1",
            );
        }
        Outcome::Setpoint(Setpoint {
            kind: Kind::Rates,
            vector: rates.map(f64::from),
            yaw_rad: None,
            thrust: f64::from(m.thrust),
        })
    }
}

/// A position (any velocity given with it is PX4's feed-forward, which the
/// contract's position setpoint does not take) or a velocity, as the type
/// mask says; anything else is refused.
fn classify(mask: PositionTargetTypemask) -> Result<Kind, &'static str> {
    use PositionTargetTypemask as T;
    let pos = !mask.intersects(
        T::POSITION_TARGET_TYPEMASK_X_IGNORE
            | T::POSITION_TARGET_TYPEMASK_Y_IGNORE
            | T::POSITION_TARGET_TYPEMASK_Z_IGNORE,
    );
    let vel = !mask.intersects(
        T::POSITION_TARGET_TYPEMASK_VX_IGNORE
            | T::POSITION_TARGET_TYPEMASK_VY_IGNORE
            | T::POSITION_TARGET_TYPEMASK_VZ_IGNORE,
    );
    let acc = !mask.contains(
        T::POSITION_TARGET_TYPEMASK_AX_IGNORE
            | T::POSITION_TARGET_TYPEMASK_AY_IGNORE
            | T::POSITION_TARGET_TYPEMASK_AZ_IGNORE,
    );
    if acc && !pos && !vel {
        return Err(
            "setpoints of acceleration or force (the contract takes a position, a velocity or rates)",
        );
    }
    match (pos, vel) {
        (true, _) => Ok(Kind::Position),
        (false, true) => Ok(Kind::Velocity),
        (false, false) => {
            Err("setpoints with a partial position or velocity (the contract takes a whole vector)")
        }
    }
}

/// The heading and the yaw rate a type mask says are given (and finite).
fn yaw_given(mask: PositionTargetTypemask, yaw: f32, rate: f32) -> (Option<f32>, Option<f32>) {
    use PositionTargetTypemask as T;
    (
        (!mask.contains(T::POSITION_TARGET_TYPEMASK_YAW_IGNORE) && yaw.is_finite()).then_some(yaw),
        (!mask.contains(T::POSITION_TARGET_TYPEMASK_YAW_RATE_IGNORE) && rate.is_finite())
            .then_some(rate),
    )
}
