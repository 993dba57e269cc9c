//! The verdict on a flight: crashes detected on the way, and the scenario's
//! `[expect]` conditions checked at the end.
//!
//! Crash detection is always on; a crash fails the run unless the scenario
//! allows it (`allow_crash = true`):
//! - **ground impact**: touching down at more than `impact_speed_mps`
//!   (default 3 m/s, total speed of the last airborne sample);
//! - **inverted**: tilt beyond 90°;
//! - **loss of control**: airborne and spinning faster than
//!   `loss_of_control_yaw_rate_dps` (default 300°/s) or tilted beyond
//!   `loss_of_control_tilt_deg` (default 60°) for `loss_of_control_s`
//!   (default 2 s) on end;
//! - **left the volume**: outside the `volume` box, when one is declared;
//! - **fly-away**: without a `volume`, farther than `fly_away_margin_m`
//!   (default 100 m) from the mission's area (the start, every mission
//!   item, those uploaded during the run too, and every position flown to
//!   by setpoint) or above its highest item by as much (`fence`);
//! - **pack empty in the air**: a battery at SOC 0 while airborne.
//!
//! At the end, besides the `[expect]` conditions: a mission that was
//! started, had the time to finish by a generous estimate (`plan`) and did
//! not, fails the verdict unless `expect.mission_finished` says what to
//! expect.
//!
//! The monitor samples at the autopilot's cadence (where the contact flag is
//! computed anyway); it only reads the state and never changes the flight.

mod crash;
mod fence;
mod monitor;
mod plan;
#[cfg(test)]
mod tests;

pub use crash::{Crash, CrashKind, LossOfControl};
pub use fence::Fence;
pub use monitor::{Monitor, Sample};
pub use plan::{PlanItem, estimate, plan_items};

pub use crate::inputs::scenario::{
    DEFAULT_FLY_AWAY_MARGIN_M, DEFAULT_IMPACT_SPEED_MPS, DEFAULT_LOSS_OF_CONTROL_S,
    DEFAULT_LOSS_OF_CONTROL_TILT_DEG, DEFAULT_LOSS_OF_CONTROL_YAW_RATE_DPS, Expectations, Spot,
    Volume,
};

/// One `[expect]` condition and how it came out.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// The key, e.g. `expect.max_tilt_deg`.
    pub key: &'static str,
    pub passed: bool,
    /// Expected and found, e.g. `at most 35°, was 41.2°`.
    pub detail: String,
}

/// The outcome.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// The first crash of each kind, in time order.
    pub crashes: Vec<Crash>,
    /// Crashes do not fail the run (`allow_crash = true`).
    pub crashes_allowed: bool,
    pub checks: Vec<Check>,
}

impl Verdict {
    /// No disallowed crash, every check passed.
    pub fn passed(&self) -> bool {
        (self.crashes.is_empty() || self.crashes_allowed) && self.checks.iter().all(|c| c.passed)
    }
}

/// How the flight ended, for the checks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct End {
    /// When the flight ended.
    pub time: crate::Micros,
    pub north_m: f64,
    pub east_m: f64,
    pub on_ground: bool,
    pub disarmed: bool,
    pub mission_finished: bool,
}
