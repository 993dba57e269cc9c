//! How long a mission takes, at most, by a generous estimate: each leg at
//! a slow pace (2.5 m/s along, 1 m/s up, 0.5 m/s down: half or less of
//! what common multirotor autopilots fly, PX4's MPC_XY_CRUISE 5 m/s,
//! MPC_TKO_SPEED 1.5 m/s and MPC_LAND_SPEED 0.7 m/s), plus every hold,
//! plus 10 s. A mission still unfinished that long after it started was
//! not cut short by the scenario's duration.
//! Missions whose length cannot be told (an unlimited loiter, a jump) have
//! no estimate.

use lockstep_abi::ffi;

/// The pace along a leg, m/s.
pub const PLAN_XY_SPEED_MPS: f64 = 2.5;
/// The pace up, m/s.
pub const PLAN_UP_SPEED_MPS: f64 = 1.0;
/// The pace down, m/s.
pub const PLAN_DOWN_SPEED_MPS: f64 = 0.5;
/// Added to every estimate, s.
pub const PLAN_SLACK_S: f64 = 10.0;

/// A mission item where it is in the world frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanItem {
    pub command: u32,
    /// Its place (`None`: where the vehicle is, e.g. a takeoff).
    pub north_east: Option<(f64, f64)>,
    /// Altitude above the origin, m.
    pub altitude_m: f64,
    /// How long it holds there, s (0 when unset).
    pub hold_s: f64,
}

/// The longest the items take from `start` (north, east, altitude), s;
/// `None` when that cannot be told.
pub fn estimate(items: &[PlanItem], start: (f64, f64, f64)) -> Option<f64> {
    let (mut n, mut e, mut alt) = start;
    let home = (start.0, start.1);
    let mut t = PLAN_SLACK_S;
    fn go(to: Option<(f64, f64)>, to_alt: f64, n: &mut f64, e: &mut f64, alt: &mut f64) -> f64 {
        let (tn, te) = to.unwrap_or((*n, *e));
        let climb = to_alt - *alt;
        let vertical = if climb > 0.0 {
            climb / PLAN_UP_SPEED_MPS
        } else {
            -climb / PLAN_DOWN_SPEED_MPS
        };
        let leg = (tn - *n).hypot(te - *e) / PLAN_XY_SPEED_MPS + vertical;
        (*n, *e, *alt) = (tn, te, to_alt);
        leg
    }
    for it in items {
        t += match it.command {
            ffi::LOCKSTEP_MAV_CMD_NAV_TAKEOFF => go(None, it.altitude_m, &mut n, &mut e, &mut alt),
            ffi::LOCKSTEP_MAV_CMD_NAV_WAYPOINT | ffi::LOCKSTEP_MAV_CMD_NAV_LOITER_TIME => {
                go(it.north_east, it.altitude_m, &mut n, &mut e, &mut alt) + it.hold_s.max(0.0)
            }
            ffi::LOCKSTEP_MAV_CMD_NAV_LAND => {
                go(it.north_east, alt, &mut n, &mut e, &mut alt)
                    + go(None, start.2, &mut n, &mut e, &mut alt)
            }
            ffi::LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH => {
                go(Some(home), alt, &mut n, &mut e, &mut alt)
                    + go(None, start.2, &mut n, &mut e, &mut alt)
            }
            ffi::LOCKSTEP_MAV_CMD_NAV_LOITER_UNLIM | ffi::LOCKSTEP_MAV_CMD_DO_JUMP => return None,
            _ => 0.0,
        };
    }
    (t.is_finite()).then_some(t)
}

/// Mission items (as uploaded) in the world frame of `origin`.
pub fn plan_items(
    origin: &lockstep_plant::env::geodesy::WorldOrigin,
    items: &[ffi::lockstep_mission_item],
) -> Vec<PlanItem> {
    items
        .iter()
        .map(|it| {
            let here = it.lat_deg == 0.0 && it.lon_deg == 0.0;
            let north_east = (!here).then(|| {
                let p = origin.to_ned(lockstep_plant::env::geodesy::Geodetic {
                    lat_deg: it.lat_deg,
                    lon_deg: it.lon_deg,
                    alt_m: origin.geodetic.alt_m,
                });
                (p[0], p[1])
            });
            let altitude_m = if it.frame == ffi::LOCKSTEP_MAV_FRAME_GLOBAL {
                f64::from(it.alt_m) - origin.geodetic.alt_m
            } else {
                f64::from(it.alt_m)
            };
            let hold_s = f64::from(it.param1);
            PlanItem {
                command: it.command,
                north_east,
                altitude_m,
                hold_s: if hold_s.is_finite() { hold_s } else { 0.0 },
            }
        })
        .collect()
}
