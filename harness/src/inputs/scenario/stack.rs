//! `[autopilot]`'s flight-stack keys, validated: which stack flies (PX4 SITL,
//! ArduPilot's JSON backend) and how its link is opened.

use std::time::Duration;

use lockstep_stacks::{Boot, OutputMap, StackKind, StackOptions};

use super::checks::{KeyError, within};
use super::file::AutopilotSection;
use super::types::{Action, Event};

/// Longest connect timeout or step deadline: an hour.
const MAX_WAIT_S: f64 = 3600.0;

/// The stack the section names, or `None` for a library (the default).
pub(super) fn stack_options(a: &AutopilotSection) -> Result<Option<StackOptions>, KeyError> {
    let key_err = |k: &str, reason: String| (format!("autopilot.{k}"), reason);
    let kind = match a.kind.as_deref() {
        None | Some("library") => {
            let stack_keys = [
                ("instance", a.instance.is_some()),
                ("address", a.address.is_some()),
                ("port", a.port.is_some()),
                ("output_map", a.output_map.is_some()),
                ("connect_timeout_s", a.connect_timeout_s.is_some()),
                ("step_deadline_s", a.step_deadline_s.is_some()),
                ("boot", a.boot.is_some()),
            ];
            if let Some((k, _)) = stack_keys.iter().find(|(_, set)| *set) {
                return Err(key_err(
                    k,
                    "applies to a flight stack (kind = \"px4-sitl\" or \"ardupilot-json\"), \
                     not to a library"
                        .into(),
                ));
            }
            return Ok(None);
        }
        Some(name) => StackKind::from_name(name).ok_or_else(|| {
            key_err(
                "kind",
                format!(
                    "unknown kind {name:?}: one of \"library\", {}",
                    StackKind::ALL.map(|k| format!("{:?}", k.name())).join(", ")
                ),
            )
        })?,
    };
    if !a.params.is_empty() {
        return Err(key_err(
            "params",
            format!(
                "{} takes its parameters over its own MAVLink link, not through lockstep",
                kind.name()
            ),
        ));
    }
    let instance = a.instance.unwrap_or(0);
    let port = match a.port {
        Some(0) => return Err(key_err("port", "must be 1 to 65535".into())),
        Some(p) => p,
        None => kind
            .default_port(instance)
            .ok_or_else(|| key_err("instance", format!("{instance} gives a port past 65535")))?,
    };
    let address = match &a.address {
        None => std::net::IpAddr::from([127, 0, 0, 1]),
        Some(s) => s.parse().map_err(|_| {
            key_err(
                "address",
                format!("{s:?} is not an IP address (e.g. \"127.0.0.1\")"),
            )
        })?,
    };
    let output_map = match &a.output_map {
        None => OutputMap::identity(),
        Some(v) => {
            let mut channels = Vec::with_capacity(v.len());
            for (i, &c) in v.iter().enumerate() {
                let max = kind.channels() as i64 - 1;
                if !(0..=max).contains(&c) {
                    return Err(key_err(
                        &format!("output_map[{i}]"),
                        format!("{c} is not a channel of {} (0 to {max})", kind.name()),
                    ));
                }
                channels.push(c as usize);
            }
            OutputMap::new(channels)
        }
    };
    let wait = |k: &str, v: Option<f64>, default: f64| -> Result<Duration, KeyError> {
        let s = within(
            &format!("autopilot.{k}"),
            v.unwrap_or(default),
            0.001,
            MAX_WAIT_S,
        )?;
        Ok(Duration::from_secs_f64(s))
    };
    let boot = match (kind, a.boot.as_deref()) {
        (_, None) => Boot::FreeRun,
        (StackKind::Px4Sitl, Some("free-run")) => Boot::FreeRun,
        (StackKind::Px4Sitl, Some("strict")) => Boot::Strict,
        (StackKind::Px4Sitl, Some(other)) => {
            return Err(key_err(
                "boot",
                format!("unknown boot {other:?}: \"free-run\" or \"strict\""),
            ));
        }
        (_, Some(_)) => {
            return Err(key_err(
                "boot",
                format!(
                    "applies to px4-sitl; {} answers every frame from the first",
                    kind.name()
                ),
            ));
        }
    };
    Ok(Some(StackOptions {
        kind,
        address,
        port,
        output_map,
        connect_timeout: wait("connect_timeout_s", a.connect_timeout_s, DEFAULT_CONNECT_S)?,
        step_deadline: wait("step_deadline_s", a.step_deadline_s, 10.0)?,
        boot,
    }))
}

/// How long the first step waits for a stack by default: a first `make
/// px4_sitl` or `sim_vehicle.py` compiles for many minutes while a person
/// watches the countdown (Ctrl-C stops it).
pub const DEFAULT_CONNECT_S: f64 = 1800.0;

/// A flight stack takes missions and commands over its own MAVLink link:
/// the scenario's mission and its operator events (arm, disarm, modes,
/// setpoints) cannot reach it over the simulator link, so they are refused
/// rather than dropped.
pub(super) fn refuse_operator_inputs(
    kind: StackKind,
    mission: bool,
    events: &[Event],
) -> Result<(), KeyError> {
    let why = format!(
        "{} takes missions and commands over its own MAVLink link (a ground station, \
         MAVSDK); its simulator link carries sensors and actuators only",
        kind.name()
    );
    if mission {
        return Err(("mission".into(), why));
    }
    for (i, e) in events.iter().enumerate() {
        if e.action.is_command() {
            return Err((format!("events[{i}]"), format!("`{}`: {why}", e.action)));
        }
    }
    Ok(())
}

/// What a stack cannot see or report, refused rather than silently without
/// effect: `[expect] mission_finished` (no simulator link reports a
/// mission); for PX4, an autopilot period that is not a whole number of IMU
/// periods (PX4 runs its controllers on new gyro samples: a HIL_SENSOR
/// without one goes unanswered); for ArduPilot, faults of the sensors it
/// simulates itself from the state (GPS, barometer, magnetometer, the
/// estimator).
pub(super) fn refuse_unseen(
    kind: StackKind,
    events: &[Event],
    expect: &super::Expectations,
    cadences: &[crate::Cadence],
) -> Result<(), KeyError> {
    if expect.mission_finished.is_some() {
        return Err((
            "expect.mission_finished".into(),
            format!(
                "{} does not report its mission over its simulator link",
                kind.name()
            ),
        ));
    }
    let period = |n: &str| cadences.iter().find(|c| c.name == n).map(|c| c.period.0);
    if kind == StackKind::Px4Sitl
        && let (Some(ap), Some(imu)) = (period("autopilot"), period("imu"))
        && ap % imu != 0
    {
        return Err((
            "cadences.imu".into(),
            format!(
                "px4-sitl needs a new IMU sample in every HIL_SENSOR: the autopilot period \
                 ({ap} us) must be a multiple of the IMU period ({imu} us)"
            ),
        ));
    }
    if kind == StackKind::ArduPilotJson {
        for (i, e) in events.iter().enumerate() {
            let sensor = match &e.action {
                Action::SensorDropout { sensor }
                | Action::SensorFreeze { sensor }
                | Action::SensorBiasStep { sensor, .. }
                | Action::SensorNoiseScale { sensor, .. }
                | Action::SensorClear { sensor } => *sensor,
                _ => continue,
            };
            if sensor != super::types::SensorId::Imu {
                return Err((
                    format!("events[{i}]"),
                    format!(
                        "`{}`: ardupilot-json simulates its own GPS, barometer and compass \
                         from the state lockstep sends (only the IMU's samples reach it)",
                        e.action
                    ),
                ));
            }
        }
    }
    Ok(())
}
