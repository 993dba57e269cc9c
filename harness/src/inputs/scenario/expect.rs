//! `[expect]`: the verdict's thresholds and conditions, checked at load
//! (the verdict, in `outcome`, judges a flight by them).

use super::checks::{KeyError, MAX_START_OFFSET_M, positive, within};
use super::file::ExpectSection;

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
    /// Whether the point (north, east, altitude) is inside, bounds included.
    pub fn contains(&self, n: f64, e: f64, alt: f64) -> bool {
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

/// A `[lo, hi]` range with finite ends, lo < hi, each within `limit`.
fn range(key: &str, r: [f64; 2], limit: f64) -> Result<[f64; 2], KeyError> {
    within(&format!("{key}[0]"), r[0], -limit, limit)?;
    within(&format!("{key}[1]"), r[1], -limit, limit)?;
    if r[0] >= r[1] {
        return Err((
            key.to_string(),
            format!(
                "must be [low, high] with low < high, is [{}, {}]",
                r[0], r[1]
            ),
        ));
    }
    Ok(r)
}

pub(super) fn expectations(e: Option<&ExpectSection>) -> Result<Expectations, KeyError> {
    let mut x = Expectations::default();
    let Some(e) = e else { return Ok(x) };
    if let Some(v) = e.impact_speed_mps {
        x.impact_speed_mps = positive("expect.impact_speed_mps", v, 100.0)?;
    }
    if let Some(v) = e.volume {
        x.volume = Some(Volume {
            north_m: range("expect.volume.north_m", v.north_m, MAX_START_OFFSET_M)?,
            east_m: range("expect.volume.east_m", v.east_m, MAX_START_OFFSET_M)?,
            altitude_m: range("expect.volume.altitude_m", v.altitude_m, 1e5)?,
        });
    }
    if let Some(s) = e.landed_within {
        x.landed_within = Some(Spot {
            north_m: within(
                "expect.landed_within.north_m",
                s.north_m,
                -MAX_START_OFFSET_M,
                MAX_START_OFFSET_M,
            )?,
            east_m: within(
                "expect.landed_within.east_m",
                s.east_m,
                -MAX_START_OFFSET_M,
                MAX_START_OFFSET_M,
            )?,
            radius_m: positive(
                "expect.landed_within.radius_m",
                s.radius_m,
                MAX_START_OFFSET_M,
            )?,
        });
    }
    if let Some(v) = e.max_tilt_deg {
        x.max_tilt_deg = Some(positive("expect.max_tilt_deg", v, 180.0)?);
    }
    if let Some(v) = e.min_soc {
        x.min_soc = Some(within("expect.min_soc", v, 0.0, 1.0)?);
    }
    if let Some(v) = e.loss_of_control_yaw_rate_dps {
        x.loss_of_control_yaw_rate_dps =
            positive("expect.loss_of_control_yaw_rate_dps", v, 100_000.0)?;
    }
    if let Some(v) = e.loss_of_control_tilt_deg {
        x.loss_of_control_tilt_deg = positive("expect.loss_of_control_tilt_deg", v, 180.0)?;
    }
    if let Some(v) = e.loss_of_control_s {
        x.loss_of_control_s = positive("expect.loss_of_control_s", v, 3600.0)?;
    }
    if let Some(v) = e.fly_away_margin_m {
        x.fly_away_margin_m = positive("expect.fly_away_margin_m", v, MAX_START_OFFSET_M)?;
    }
    x.allow_crash = e.allow_crash.unwrap_or(false);
    x.mission_finished = e.mission_finished;
    x.disarmed = e.disarmed;
    Ok(x)
}
