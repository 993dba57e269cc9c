//! `[expect]`: the verdict's thresholds and conditions, checked at load.

use super::checks::{KeyError, MAX_START_OFFSET_M, positive, within};
use super::file::ExpectSection;
use crate::outcome::verdict::{Expectations, Spot, Volume};

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
