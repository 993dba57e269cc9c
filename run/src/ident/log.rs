//! A PX4 ULog read for identification (yule_log parses the file): the
//! motor commands, attitude, body rates, the accelerometer, the local
//! position and velocity, the battery, and the parameters, each topic's
//! first instance as a time series. A log that cannot be flown open loop
//! (no motor outputs, a fixed-wing or VTOL airframe, a truncated file) is
//! refused naming what is missing.

use std::collections::BTreeMap;
use std::path::Path;

use yule_log::builder::ULogParserBuilder;
use yule_log::model::inst::{FieldValue, ParameterValue};
use yule_log::model::msg::UlogMessage;

/// One topic's samples: times (µs since the log's start) and values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub t_us: Vec<u64>,
    pub v: Vec<Vec<f64>>,
}

impl Series {
    /// The last sample at or before `t` (sample and hold), if any.
    pub fn at(&self, t: u64) -> Option<&[f64]> {
        let k = self.t_us.partition_point(|&s| s <= t);
        k.checked_sub(1).map(|k| self.v[k].as_slice())
    }

    pub fn is_empty(&self) -> bool {
        self.t_us.is_empty()
    }

    fn push(&mut self, t: u64, v: Vec<f64>) {
        // Out-of-order samples (a logger's reordering) are dropped.
        if self.t_us.last().is_some_and(|&l| t < l) {
            return;
        }
        self.t_us.push(t);
        self.v.push(v);
    }
}

/// Where the motor commands came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Commands {
    /// `actuator_outputs` (PWM, µs) mapped to 0..1 with this range.
    Pwm { min_us: f64, max_us: f64 },
    /// `actuator_motors` (already 0..1).
    Normalised,
}

impl std::fmt::Display for Commands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Commands::Pwm { min_us, max_us } => write!(
                f,
                "actuator_outputs, PWM {min_us}..{max_us} us mapped to 0..1"
            ),
            Commands::Normalised => f.write_str("actuator_motors, 0..1"),
        }
    }
}

/// What identification reads of a log.
#[derive(Debug, Clone)]
pub struct Flight {
    /// Motor commands 0..1, one per output (as many as the log has).
    pub motors: Series,
    pub commands: Commands,
    /// Attitude quaternion (w, x, y, z), body FRD to NED.
    pub attitude: Series,
    /// Body rates (rad/s, FRD).
    pub rates: Series,
    /// The accelerometer: specific force (m/s², FRD).
    pub accel: Series,
    /// Local position and velocity (m, m/s, NED).
    pub local: Series,
    /// Battery voltage (V), charge remaining (0..1) and current (A).
    pub battery: Series,
    /// Wind north and east (m/s), when logged.
    pub wind: Series,
    pub params: BTreeMap<String, f64>,
    /// The log's duration (µs).
    pub duration_us: u64,
    /// How late the estimate (attitude, local position) is logged: the
    /// state at `t` is read at `t` + this (a fit finds it).
    pub estimate_delay_us: u64,
}

/// Reads `path`; an error names the file and what is wrong.
pub fn read(path: &Path) -> Result<Flight, String> {
    let name = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("{name}: cannot open it: {e}"))?;
    let parser = ULogParserBuilder::new(std::io::BufReader::new(file))
        .include_header(true)
        .build()
        .map_err(|e| format!("{name}: not a ULog file: {e}"))?;
    let mut topics: BTreeMap<String, Series> = BTreeMap::new();
    let mut params = BTreeMap::new();
    let mut vehicle_types: Vec<f64> = Vec::new();
    let mut vtol = false;
    let mut first: Option<u64> = None;
    let mut header: Option<u64> = None;
    let mut last = 0;
    for message in parser {
        let message = message.map_err(|e| match first {
            None => format!("{name}: not a ULog file, or damaged before its first data: {e}"),
            Some(_) => format!(
                "{name}: truncated or damaged after {:.1} s of log: {e}",
                secs(header.or(first), last)
            ),
        })?;
        match message {
            UlogMessage::Header(h) => {
                header = Some(h.timestamp);
            }
            UlogMessage::Parameter(p) => {
                params.insert(p.key.clone(), param_value(&p.value));
            }
            UlogMessage::LoggedData(d) => {
                if d.data.multi_id_index.unwrap_or(0) != 0 {
                    continue;
                }
                let t = d.timestamp;
                // The log starts at its header's time (as pyulog reads it);
                // without one, at its earliest sample.
                first = Some(first.map_or(t, |f: u64| f.min(t)));
                last = last.max(t);
                let topic: &str = &d.data.name;
                let field = |f: &str| -> Option<Vec<f64>> {
                    d.data
                        .fields
                        .iter()
                        .find(|x| &*x.name == f)
                        .and_then(|x| numbers(&x.value))
                };
                let picked: Option<Vec<f64>> = match topic {
                    "actuator_outputs" => field("output"),
                    "actuator_motors" => field("control"),
                    "vehicle_attitude" => field("q"),
                    "vehicle_angular_velocity" => field("xyz"),
                    "sensor_combined" => {
                        // Older logs have no vehicle_angular_velocity: the
                        // gyro stands in for it.
                        if let Some(g) = field("gyro_rad") {
                            topics.entry("gyro".into()).or_default().push(t, g);
                        }
                        field("accelerometer_m_s2")
                    }
                    "vehicle_local_position" => ["x", "y", "z", "vx", "vy", "vz"]
                        .iter()
                        .map(|f| field(f).and_then(|v| v.first().copied()))
                        .collect(),
                    "battery_status" => {
                        let v = field("voltage_v")
                            .or_else(|| field("voltage_filtered_v"))
                            .and_then(|v| v.first().copied());
                        let r = field("remaining").and_then(|v| v.first().copied());
                        let i = field("current_a").and_then(|v| v.first().copied());
                        v.map(|v| vec![v, r.unwrap_or(f64::NAN), i.unwrap_or(f64::NAN)])
                    }
                    "wind" | "wind_estimate" => field("windspeed_north")
                        .zip(field("windspeed_east"))
                        .map(|(n, e)| vec![n[0], e[0]]),
                    "vehicle_status" => {
                        if let Some(v) = field("vehicle_type") {
                            vehicle_types.extend(v);
                        }
                        if field("is_vtol").is_some_and(|v| v.first() == Some(&1.0)) {
                            vtol = true;
                        }
                        None
                    }
                    _ => None,
                };
                if let Some(v) = picked {
                    topics.entry(topic.to_string()).or_default().push(t, v);
                }
            }
            _ => {}
        }
    }
    let start = header.or(first).unwrap_or(0);
    for s in topics.values_mut() {
        for t in &mut s.t_us {
            *t = t.saturating_sub(start);
        }
    }
    if let Some(what) = not_a_multirotor(&params, vtol, &vehicle_types) {
        return Err(format!("{name}: {what}; lockstep's plant is a multirotor"));
    }
    let mut take = |t: &str| topics.remove(t).unwrap_or_default();
    let outputs = take("actuator_outputs");
    let normalised = take("actuator_motors");
    let Some((motors, commands)) = motor_commands(outputs, normalised, &params) else {
        return Err(format!(
            "{name}: no motor outputs (neither actuator_outputs nor actuator_motors): nothing \
             to drive the plant with"
        ));
    };
    let flight = Flight {
        motors,
        commands,
        attitude: take("vehicle_attitude"),
        rates: {
            let r = take("vehicle_angular_velocity");
            if r.is_empty() { take("gyro") } else { r }
        },
        accel: take("sensor_combined"),
        local: take("vehicle_local_position"),
        battery: take("battery_status"),
        wind: {
            let w = take("wind");
            if w.is_empty() {
                take("wind_estimate")
            } else {
                w
            }
        },
        params,
        duration_us: last.saturating_sub(start),
        estimate_delay_us: 0,
    };
    for (what, s) in [
        ("vehicle_attitude", &flight.attitude),
        (
            "vehicle_angular_velocity (or sensor_combined's gyro)",
            &flight.rates,
        ),
        ("sensor_combined", &flight.accel),
        ("vehicle_local_position", &flight.local),
    ] {
        if s.is_empty() {
            return Err(format!(
                "{name}: no {what} samples: the replay starts from it"
            ));
        }
    }
    Ok(flight)
}

/// The motors' commands in [0, 1]: the PWM outputs mapped through the
/// log's `PWM_MAIN_MIN`/`MAX` (default 1000 to 2000 µs), else the
/// normalised ones; `None` when the log has neither.
fn motor_commands(
    outputs: Series,
    normalised: Series,
    params: &BTreeMap<String, f64>,
) -> Option<(Series, Commands)> {
    if !outputs.is_empty() {
        let min_us = pwm_param(params, "MIN").unwrap_or(1000.0);
        let max_us = pwm_param(params, "MAX").unwrap_or(2000.0);
        let span = max_us - min_us;
        let mapped = Series {
            t_us: outputs.t_us,
            v: outputs
                .v
                .into_iter()
                .map(|o| {
                    o.iter()
                        .map(|p| ((p - min_us) / span).clamp(0.0, 1.0))
                        .collect()
                })
                .collect(),
        };
        Some((mapped, Commands::Pwm { min_us, max_us }))
    } else if !normalised.is_empty() {
        Some((normalised, Commands::Normalised))
    } else {
        None
    }
}

/// Why the log is not a multirotor's: its `MAV_TYPE` (PX4's airframe
/// class: 1 fixed wing, 19 to 25 VTOLs), `SYS_AUTOSTART` (PX4's airframe
/// ranges: 2000s and 3000s planes, 13000s VTOLs) or `vehicle_status`
/// (`is_vtol`; `vehicle_type` 2, fixed wing).
fn not_a_multirotor(
    params: &BTreeMap<String, f64>,
    vtol: bool,
    vehicle_types: &[f64],
) -> Option<String> {
    if let Some(&t) = params.get("MAV_TYPE") {
        match t as i64 {
            1 => return Some("a fixed-wing log (MAV_TYPE 1)".into()),
            19..=25 => return Some(format!("a VTOL log (MAV_TYPE {t})")),
            _ => {}
        }
    }
    if let Some(&a) = params.get("SYS_AUTOSTART") {
        match a as i64 {
            13000..=13999 => return Some(format!("a VTOL log (SYS_AUTOSTART {a})")),
            2000..=3999 => return Some(format!("a fixed-wing log (SYS_AUTOSTART {a})")),
            _ => {}
        }
    }
    if vtol {
        return Some("a VTOL log (vehicle_status.is_vtol)".into());
    }
    // PX4's vehicle_type: 1 rotary wing, 2 fixed wing, 3 rover.
    if vehicle_types.iter().all(|&t| t == 2.0) && !vehicle_types.is_empty() {
        return Some("a fixed-wing log (vehicle_status.vehicle_type 2)".into());
    }
    None
}

fn secs(first: Option<u64>, last: u64) -> f64 {
    first.map_or(0.0, |f| (last - f) as f64 * 1e-6)
}

/// PX4's PWM range: `PWM_MAIN_MIN`/`MAX` (older), `PWM_MAIN_MIN1`/`MAX1`
/// (newer, per output: the first).
fn pwm_param(params: &BTreeMap<String, f64>, which: &str) -> Option<f64> {
    params
        .get(&format!("PWM_MAIN_{which}"))
        .or_else(|| params.get(&format!("PWM_MAIN_{which}1")))
        .copied()
        .filter(|v| *v > 0.0)
}

fn param_value(v: &ParameterValue) -> f64 {
    match v {
        ParameterValue::INT32(i) => f64::from(*i),
        ParameterValue::FLOAT(f) => f64::from(*f),
    }
}

/// A numeric field as numbers (scalars as one).
fn numbers(v: &FieldValue) -> Option<Vec<f64>> {
    use FieldValue::*;
    Some(match v {
        ScalarU8(x) => vec![f64::from(*x)],
        ScalarU16(x) => vec![f64::from(*x)],
        ScalarU32(x) => vec![f64::from(*x)],
        ScalarU64(x) => vec![*x as f64],
        ScalarI8(x) => vec![f64::from(*x)],
        ScalarI16(x) => vec![f64::from(*x)],
        ScalarI32(x) => vec![f64::from(*x)],
        ScalarI64(x) => vec![*x as f64],
        ScalarF32(x) => vec![f64::from(*x)],
        ScalarF64(x) => vec![*x],
        ScalarBool(x) => vec![f64::from(u8::from(*x))],
        ArrayU8(x) => x.iter().map(|v| f64::from(*v)).collect(),
        ArrayU16(x) => x.iter().map(|v| f64::from(*v)).collect(),
        ArrayU32(x) => x.iter().map(|v| f64::from(*v)).collect(),
        ArrayI32(x) => x.iter().map(|v| f64::from(*v)).collect(),
        ArrayF32(x) => x.iter().map(|v| f64::from(*v)).collect(),
        ArrayF64(x) => x.clone(),
        _ => return None,
    })
}
