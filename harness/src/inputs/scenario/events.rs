//! `[[events]]`: triggers and actions.

use super::checks::{
    KeyError, MAX_NOISE_SCALE, MAX_SENSOR_BIAS, MAX_WIND_MPS, duration, each_within, within,
};
use super::file::EventSection;
use super::{Action, Condition, Event, SensorId, SetpointKind, Trigger};
use crate::Micros;

/// The largest push force component, N.
const MAX_PUSH_N: f64 = 10_000.0;

/// Largest altitude a condition may name: 100 km.
const MAX_ALTITUDE_M: f64 = 1e5;
/// Largest setpoint coordinate: 1000 km from the origin.
const MAX_SETPOINT_M: f64 = 1e6;
/// Largest setpoint velocity component.
const MAX_SETPOINT_MPS: f64 = 100.0;
/// Largest setpoint body rate, rad/s (about 3 turns a second).
const MAX_SETPOINT_RADPS: f64 = 20.0;
/// A takeoff's height, m above home (PX4's MIS_TAKEOFF_ALT range).
pub const MIN_TAKEOFF_M: f64 = 0.5;
pub const MAX_TAKEOFF_M: f64 = 500.0;

/// One `[[events]]` entry, every value checked with its key path; times
/// lie within the run (`end`).
///
/// Long because it is the table of event kinds: one arm per action, each
/// checking that action's keys beside their bounds (the scenario
/// reference lists them in the same order).
pub(super) fn event(
    e: &EventSection,
    key: &dyn Fn(&str) -> String,
    end: Micros,
) -> Result<Event, KeyError> {
    let end_s = end.0 as f64 / 1e6;
    let trigger = match (e.at_s, e.at_us, &e.when) {
        (Some(s), None, None) => Trigger::At(duration(&key("at_s"), s, end_s)?),
        (None, Some(us), None) => {
            if us > end.0 {
                return Err((
                    key("at_us"),
                    format!("must be at most the run's end, {} us, is {us}", end.0),
                ));
            }
            Trigger::At(Micros(us))
        }
        (None, None, Some(w)) => {
            let time = |k: &str, v: Option<f64>| {
                v.map(|s| duration(&key(&format!("when.{k}")), s, end_s))
                    .transpose()
            };
            let altitude = |k: &str, v: Option<f64>| {
                v.map(|a| {
                    within(
                        &key(&format!("when.{k}")),
                        a,
                        -MAX_ALTITUDE_M,
                        MAX_ALTITUDE_M,
                    )
                })
                .transpose()
            };
            if let Some(i) = w.mission_item_at_least
                && i < 0
            {
                return Err((
                    key("when.mission_item_at_least"),
                    format!("must be >= 0, is {i}"),
                ));
            }
            let named = [
                w.altitude_above_m.is_some(),
                w.altitude_below_m.is_some(),
                w.soc_below.is_some(),
                w.mission_item_at_least.is_some(),
                w.after_s.is_some(),
                w.since_mission_start_s.is_some(),
            ];
            if !named.contains(&true) {
                return Err((
                    key("when"),
                    "names no condition (altitude_above_m, altitude_below_m, soc_below, \
                     mission_item_at_least, after_s, since_mission_start_s): it would fire at \
                     once; for that, write at_s = 0"
                        .into(),
                ));
            }
            Trigger::When(Condition {
                altitude_above_m: altitude("altitude_above_m", w.altitude_above_m)?,
                altitude_below_m: altitude("altitude_below_m", w.altitude_below_m)?,
                soc_below: w
                    .soc_below
                    .map(|v| within(&key("when.soc_below"), v, 0.0, 1.0))
                    .transpose()?,
                mission_item_at_least: w.mission_item_at_least,
                after: time("after_s", w.after_s)?,
                since_mission_start: time("since_mission_start_s", w.since_mission_start_s)?,
            })
        }
        _ => return Err((key("at_s"), "give exactly one of at_s, at_us, when".into())),
    };
    let need = |v: Option<usize>, k: &str, max: usize| {
        let i = v.ok_or_else(|| (key(k), format!("is required by action `{}`", e.action)))?;
        if i >= max {
            return Err((key(k), format!("must be below {max}, is {i}")));
        }
        Ok(i)
    };
    let motor = |k| need(e.motor, k, lockstep_plant::multirotor::MAX_ROTORS);
    let battery = |k| need(e.battery, k, lockstep_plant::multirotor::MAX_BATTERIES);
    let sensor = || -> Result<SensorId, (String, String)> {
        let n = e.sensor.as_deref().ok_or_else(|| {
            (
                key("sensor"),
                format!("is required by action `{}`", e.action),
            )
        })?;
        SensorId::from_name(n).ok_or_else(|| {
            (
                key("sensor"),
                format!("`{n}` is not one of imu, mag, baro, gps, estimator"),
            )
        })
    };
    let value = || {
        e.value.ok_or_else(|| {
            (
                key("value"),
                format!("is required by action `{}`", e.action),
            )
        })
    };
    if e.height_m.is_some() && e.action != "takeoff" {
        return Err((key("height_m"), "goes with action `takeoff` only".into()));
    }
    let action = match e.action.as_str() {
        "takeoff" => Action::Takeoff {
            height_m: e
                .height_m
                .map(|h| within(&key("height_m"), h, MIN_TAKEOFF_M, MAX_TAKEOFF_M))
                .transpose()?,
        },
        name if Action::command(name).is_some() => Action::command(name).expect("just found"),
        "wind_gust" => {
            let g = e
                .gust
                .as_ref()
                .ok_or_else(|| (key("gust"), "is required by action `wind_gust`".into()))?;
            let d = |k: &str, s: f64| duration(&key(&format!("gust.{k}")), s, end_s);
            Action::WindGust {
                amplitude_ned_mps: each_within(
                    &key("gust.amplitude_ned_mps"),
                    g.amplitude_ned_mps,
                    -MAX_WIND_MPS,
                    MAX_WIND_MPS,
                )?,
                rise: d("rise_s", g.rise_s)?,
                hold: d("hold_s", g.hold_s)?,
                fall: d("fall_s", g.fall_s)?,
            }
        }
        "motor_fail" => Action::MotorFail {
            motor: motor("motor")?,
        },
        "motor_restore" => Action::MotorRestore {
            motor: motor("motor")?,
        },
        "thrust_loss" => {
            let fraction = e.fraction.ok_or_else(|| {
                (
                    key("fraction"),
                    "is required by action `thrust_loss`".into(),
                )
            })?;
            within(&key("fraction"), fraction, 0.0, 1.0)?;
            Action::ThrustLoss {
                motor: motor("motor")?,
                fraction,
            }
        }
        "push" => {
            let f = e
                .force_ned_n
                .ok_or_else(|| (key("force_ned_n"), "is required by action `push`".into()))?;
            Action::Push {
                force_ned_n: each_within(&key("force_ned_n"), f, -MAX_PUSH_N, MAX_PUSH_N)?,
            }
        }
        "battery_disconnect" => Action::BatteryDisconnect {
            battery: battery("battery")?,
        },
        "battery_reconnect" => Action::BatteryReconnect {
            battery: battery("battery")?,
        },
        "sensor_dropout" => Action::SensorDropout { sensor: sensor()? },
        "sensor_freeze" => Action::SensorFreeze { sensor: sensor()? },
        "sensor_bias_step" => Action::SensorBiasStep {
            sensor: sensor()?,
            value: within(&key("value"), value()?, -MAX_SENSOR_BIAS, MAX_SENSOR_BIAS)?,
        },
        "sensor_noise_scale" => Action::SensorNoiseScale {
            sensor: sensor()?,
            value: within(&key("value"), value()?, 0.0, MAX_NOISE_SCALE)?,
        },
        "sensor_clear" => Action::SensorClear { sensor: sensor()? },
        "setpoint" => {
            let (kind, vector) = match (e.position_ned_m, e.velocity_ned_mps, e.rates_frd_radps) {
                (Some(p), None, None) => (
                    SetpointKind::Position,
                    each_within(&key("position_ned_m"), p, -MAX_SETPOINT_M, MAX_SETPOINT_M)?,
                ),
                (None, Some(v), None) => (
                    SetpointKind::Velocity,
                    each_within(
                        &key("velocity_ned_mps"),
                        v,
                        -MAX_SETPOINT_MPS,
                        MAX_SETPOINT_MPS,
                    )?,
                ),
                (None, None, Some(r)) => (
                    SetpointKind::Rates,
                    each_within(
                        &key("rates_frd_radps"),
                        r,
                        -MAX_SETPOINT_RADPS,
                        MAX_SETPOINT_RADPS,
                    )?,
                ),
                _ => {
                    return Err((
                        key("position_ned_m"),
                        "action `setpoint` takes exactly one of position_ned_m, \
                         velocity_ned_mps, rates_frd_radps"
                            .into(),
                    ));
                }
            };
            let rates = kind == SetpointKind::Rates;
            let thrust = match (e.thrust, rates) {
                (Some(t), true) => within(&key("thrust"), t, 0.0, 1.0)?,
                (None, true) => {
                    return Err((key("thrust"), "is required with rates_frd_radps".into()));
                }
                (Some(_), false) => {
                    return Err((key("thrust"), "goes with rates_frd_radps only".into()));
                }
                (None, false) => 0.0,
            };
            if rates && e.yaw_deg.is_some() {
                return Err((
                    key("yaw_deg"),
                    "goes with position_ned_m or velocity_ned_mps only".into(),
                ));
            }
            let yaw_rad = e
                .yaw_deg
                .map(|y| within(&key("yaw_deg"), y, -360.0, 360.0).map(f64::to_radians))
                .transpose()?;
            Action::Setpoint {
                kind,
                vector,
                yaw_rad,
                thrust,
            }
        }
        other => {
            return Err((
                key("action"),
                format!(
                    "`{other}` is not an action (arm, disarm, mission_start, rtl, land, hold, wind_gust, motor_fail, \
                     motor_restore, thrust_loss, push, battery_disconnect, battery_reconnect, sensor_dropout, sensor_freeze, \
                     sensor_bias_step, sensor_noise_scale, sensor_clear, setpoint)"
                ),
            ));
        }
    };
    Ok(Event { trigger, action })
}

/// An action a front end gives now rather than a scenario's timeline
/// (Python's `Sim.command` and `Sim.fault`): `table` holds `action` and the
/// keys an `[[events]]` entry gives it, without a trigger. Checked as a
/// scenario's events are (unknown keys named with the valid ones, values
/// within their bounds); `what` names the table in errors.
pub fn action_now(mut table: toml::Table, what: &str) -> Result<Action, String> {
    for trigger in ["at_s", "at_us", "when"] {
        if table.contains_key(trigger) {
            return Err(format!(
                "{what}: `{trigger}` is a scenario event's trigger; an action given now has none"
            ));
        }
    }
    table.insert("at_s".into(), toml::Value::Float(0.0));
    let source = lockstep_config::Source::unlocated(what);
    let e: EventSection = lockstep_config::strict(&source, table).map_err(|e| e.to_string())?;
    event(&e, &|k| format!("{what}.{k}"), Micros(u64::MAX))
        .map(|ev| ev.action)
        .map_err(|(k, m)| format!("{k} {m}"))
}
