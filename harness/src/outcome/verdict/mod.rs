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

/// Default ground-impact speed above which a touchdown is a crash.
pub const DEFAULT_IMPACT_SPEED_MPS: f64 = 3.0;
/// Default yaw rate, held for [`DEFAULT_LOSS_OF_CONTROL_S`] in the air,
/// that is a loss of control: beyond any commanded turn, below the spin of
/// a multirotor that lost a rotor it cannot do without.
pub const DEFAULT_LOSS_OF_CONTROL_YAW_RATE_DPS: f64 = 300.0;
/// Default tilt, held for [`DEFAULT_LOSS_OF_CONTROL_S`] in the air, that is
/// a loss of control (autopilots limit tilt to 35° to 45°).
pub const DEFAULT_LOSS_OF_CONTROL_TILT_DEG: f64 = 60.0;
/// How long a spin or tilt must last to be a loss of control.
pub const DEFAULT_LOSS_OF_CONTROL_S: f64 = 2.0;
/// Default distance beyond the mission's area that is a fly-away.
pub const DEFAULT_FLY_AWAY_MARGIN_M: f64 = 100.0;

/// A box in the world frame: north and east in metres from the origin,
/// altitude in metres above it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Volume {
    pub north_m: [f64; 2],
    pub east_m: [f64; 2],
    pub altitude_m: [f64; 2],
}

impl Volume {
    fn contains(&self, n: f64, e: f64, alt: f64) -> bool {
        let inside = |v: f64, r: [f64; 2]| v >= r[0] && v <= r[1];
        inside(n, self.north_m) && inside(e, self.east_m) && inside(alt, self.altitude_m)
    }
}

/// A point on the ground and a radius.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spot {
    pub north_m: f64,
    pub east_m: f64,
    pub radius_m: f64,
}

/// What the scenario expects (`[expect]`), and the crash thresholds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Expectations {
    pub impact_speed_mps: f64,
    pub volume: Option<Volume>,
    pub allow_crash: bool,
    pub mission_finished: Option<bool>,
    pub landed_within: Option<Spot>,
    pub max_tilt_deg: Option<f64>,
    pub min_soc: Option<f64>,
    pub disarmed: Option<bool>,
    pub loss_of_control_yaw_rate_dps: f64,
    pub loss_of_control_tilt_deg: f64,
    pub loss_of_control_s: f64,
    pub fly_away_margin_m: f64,
}

impl Default for Expectations {
    fn default() -> Self {
        Expectations {
            impact_speed_mps: DEFAULT_IMPACT_SPEED_MPS,
            volume: None,
            allow_crash: false,
            mission_finished: None,
            landed_within: None,
            max_tilt_deg: None,
            min_soc: None,
            disarmed: None,
            loss_of_control_yaw_rate_dps: DEFAULT_LOSS_OF_CONTROL_YAW_RATE_DPS,
            loss_of_control_tilt_deg: DEFAULT_LOSS_OF_CONTROL_TILT_DEG,
            loss_of_control_s: DEFAULT_LOSS_OF_CONTROL_S,
            fly_away_margin_m: DEFAULT_FLY_AWAY_MARGIN_M,
        }
    }
}

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
