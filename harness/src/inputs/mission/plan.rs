//! QGroundControl's `.plan` JSON format (the only format current
//! QGroundControl saves):
//!
//! ```json
//! { "fileType": "Plan", "version": 1,
//!   "mission": { "version": 2,
//!     "plannedHomePosition": [47.3977, 8.5456, 488.0],
//!     "items": [
//!       { "type": "SimpleItem", "command": 22, "frame": 3, "autoContinue": true,
//!         "doJumpId": 1, "params": [0, 0, 0, null, 0, 0, 10] } ] } }
//! ```
//!
//! SimpleItems only: a ComplexItem (survey, corridor scan, structure scan)
//! is refused by name. `params` holds param1..4, latitude, longitude and
//! altitude; `null` in param1..4 is NaN (unset), `null` latitude and
//! longitude are 0 ("here"). A DO_JUMP's param1 is the target's `doJumpId`.
//! `geoFence` and `rallyPoints` are not used.

use serde_json::Value;

use lockstep_abi::ffi::lockstep_mission_item;

use super::{Mission, MissionError};

fn plan_err(reason: impl Into<String>) -> MissionError {
    MissionError::Plan {
        reason: reason.into(),
    }
}

pub(super) fn parse(text: &str) -> Result<Mission, MissionError> {
    let root: Value = serde_json::from_str(text).map_err(|e| plan_err(e.to_string()))?;
    if root.get("fileType").and_then(Value::as_str) != Some("Plan") {
        return Err(plan_err(format!(
            "`fileType` is {}, not \"Plan\"",
            shown(root.get("fileType"))
        )));
    }
    let mission = root
        .get("mission")
        .filter(|m| m.is_object())
        .ok_or_else(|| plan_err("no `mission` object"))?;
    let home = home(mission)?;
    let list = mission
        .get("items")
        .and_then(Value::as_array)
        .ok_or_else(|| plan_err("no `mission.items` array"))?;
    if list.len() > lockstep_abi::MAX_MISSION_ITEMS {
        return Err(MissionError::TooMany { items: list.len() });
    }
    let mut items = Vec::with_capacity(list.len());
    let mut jump_ids = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let (item, jump_id) = item(i, v)?;
        items.push(item);
        jump_ids.push(jump_id);
    }
    super::finish(
        home,
        items,
        |i| format!("mission.items[{i}]"),
        |p| {
            let id = p as f64;
            if id.fract() != 0.0 || id < 0.0 {
                return None;
            }
            jump_ids.iter().position(|j| *j == Some(id as u64))
        },
        "the doJumpId of an item",
    )
}

/// `mission.plannedHomePosition`: [latitude, longitude, altitude].
fn home(mission: &Value) -> Result<lockstep_mission_item, MissionError> {
    let home = mission
        .get("plannedHomePosition")
        .and_then(Value::as_array)
        .ok_or_else(|| plan_err("no `mission.plannedHomePosition` array"))?;
    let home_at = "mission.plannedHomePosition";
    if home.len() != 3 {
        return Err(plan_err(format!(
            "`{home_at}` holds {} values, not [latitude, longitude, altitude]",
            home.len()
        )));
    }
    Ok(lockstep_mission_item {
        command: super::cmd::NAV_WAYPOINT,
        frame: 0,
        lat_deg: number(&home[0], home_at, "latitude", -90.0, 90.0)?,
        lon_deg: number(&home[1], home_at, "longitude", -180.0, 180.0)?,
        alt_m: number(
            &home[2],
            home_at,
            "altitude",
            -f64::from(f32::MAX),
            f64::from(f32::MAX),
        )? as f32,
        autocontinue: 1,
        ..Default::default()
    })
}

/// `mission.items[i]`, a SimpleItem, and its `doJumpId` when it has one.
fn item(i: usize, v: &Value) -> Result<(lockstep_mission_item, Option<u64>), MissionError> {
    let at = format!("mission.items[{i}]");
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "SimpleItem" => {}
        "ComplexItem" => {
            let what = v
                .get("complexItemType")
                .and_then(Value::as_str)
                .unwrap_or("unnamed");
            return Err(plan_err(format!(
                "{at}: a ComplexItem ({what}) is not supported; only SimpleItems are \
                 (in QGroundControl, convert it to waypoints)"
            )));
        }
        _ => {
            return Err(plan_err(format!(
                "{at}: `type` is {}, not \"SimpleItem\"",
                shown(v.get("type"))
            )));
        }
    }
    let command = uint(v.get("command"), &at, "command", 65_535)?;
    let item_err = |reason: String| MissionError::Item {
        at: at.clone(),
        command,
        reason,
    };
    let frame = uint(v.get("frame"), &at, "frame", 255)?;
    let auto = match v.get("autoContinue") {
        Some(Value::Bool(b)) => u32::from(*b),
        None => 1,
        other => {
            return Err(item_err(format!(
                "`autoContinue` is {}, not true or false",
                shown(other)
            )));
        }
    };
    let params = v
        .get("params")
        .and_then(Value::as_array)
        .filter(|p| p.len() == 7)
        .ok_or_else(|| {
            item_err(
                "`params` is not an array of 7 values (param1..4, latitude, longitude, altitude)"
                    .into(),
            )
        })?;
    let mut p = [0.0f32; 4];
    for (k, out) in p.iter_mut().enumerate() {
        *out = match &params[k] {
            Value::Null => f32::NAN,
            x => number(
                x,
                &at,
                PARAM_NAMES[k],
                -f64::from(f32::MAX),
                f64::from(f32::MAX),
            )
            .map_err(|_| {
                item_err(format!(
                    "param{} is {x}, not a finite number or null",
                    k + 1
                ))
            })? as f32,
        };
    }
    let coord = |k: usize, lo: f64, hi: f64, name: &str| match &params[k] {
        Value::Null => Ok(0.0),
        x => number(x, &at, name, lo, hi)
            .map_err(|_| item_err(format!("{name} is {x}, not a number in [{lo}, {hi}]"))),
    };
    let lat_deg = coord(4, -90.0, 90.0, "latitude")?;
    let lon_deg = coord(5, -180.0, 180.0, "longitude")?;
    let alt_m = match &params[6] {
        x @ Value::Number(_) => number(
            x,
            &at,
            "altitude",
            -f64::from(f32::MAX),
            f64::from(f32::MAX),
        )
        .map_err(|_| item_err(format!("altitude is {x}, not a finite number")))?,
        x => return Err(item_err(format!("altitude is {x}, not a finite number"))),
    } as f32;
    let item = lockstep_mission_item {
        command,
        frame,
        param1: p[0],
        param2: p[1],
        param3: p[2],
        param4: p[3],
        lat_deg,
        lon_deg,
        alt_m,
        autocontinue: auto,
    };
    Ok((item, v.get("doJumpId").and_then(Value::as_u64)))
}

const PARAM_NAMES: [&str; 4] = ["param1", "param2", "param3", "param4"];

fn shown(v: Option<&Value>) -> String {
    v.map_or_else(|| "missing".into(), Value::to_string)
}

fn number(v: &Value, at: &str, name: &str, lo: f64, hi: f64) -> Result<f64, MissionError> {
    match v.as_f64() {
        Some(x) if x.is_finite() && x >= lo && x <= hi => Ok(x),
        _ => Err(plan_err(format!(
            "{at}: {name} is {v}, not a number in [{lo}, {hi}]"
        ))),
    }
}

fn uint(v: Option<&Value>, at: &str, name: &str, max: u64) -> Result<u32, MissionError> {
    match v.and_then(Value::as_u64) {
        Some(x) if x <= max => Ok(x as u32),
        _ => Err(plan_err(format!(
            "{at}: `{name}` is {}, not an integer in [0, {max}]",
            shown(v)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(items: &str) -> String {
        format!(
            r#"{{"fileType": "Plan", "version": 1, "groundStation": "QGroundControl",
              "geoFence": {{"circles": [], "polygons": [], "version": 2}},
              "rallyPoints": {{"points": [], "version": 2}},
              "mission": {{"version": 2, "firmwareType": 12, "vehicleType": 2,
                "cruiseSpeed": 15, "hoverSpeed": 5,
                "plannedHomePosition": [-35.3632621, 149.1652374, 584.09],
                "items": [{items}]}}}}"#
        )
    }

    const TAKEOFF: &str = r#"{"type": "SimpleItem", "command": 22, "frame": 3, "autoContinue": true,
        "doJumpId": 1, "params": [0, 0, 0, null, -35.3632, 149.1652, 10],
        "Altitude": 10, "AltitudeMode": 1, "AMSLAltAboveTerrain": null}"#;
    const WAYPOINT: &str = r#"{"type": "SimpleItem", "command": 16, "frame": 3, "autoContinue": true,
        "doJumpId": 2, "params": [0, 0, 0, null, -35.3630, 149.1652, 10]}"#;

    #[test]
    fn a_qgc_plan_parses_into_home_and_items() {
        let jump = r#"{"type": "SimpleItem", "command": 177, "frame": 2, "autoContinue": true,
            "doJumpId": 3, "params": [2, 4, 0, 0, 0, 0, 0]}"#;
        let m = Mission::parse(&plan(&format!("{TAKEOFF}, {WAYPOINT}, {jump}"))).unwrap();
        assert_eq!(
            (m.home.lat_deg, m.home.lon_deg, m.home.alt_m),
            (-35.3632621, 149.1652374, 584.09)
        );
        assert_eq!(m.items.len(), 3);
        assert_eq!(
            (m.items[0].command, m.items[0].frame, m.items[0].alt_m),
            (22, 3, 10.0)
        );
        assert!(m.items[0].param4.is_nan(), "null is unset");
        assert_eq!(m.items[1].lat_deg, -35.3630);
        // doJumpId 2 is the waypoint, item 1.
        assert_eq!((m.items[2].param1, m.items[2].param2), (1.0, 4.0));
    }

    #[test]
    fn what_is_not_a_simple_plan_is_refused_by_name() {
        let survey = r#"{"type": "ComplexItem", "complexItemType": "survey", "version": 5}"#;
        let jump_nowhere = r#"{"type": "SimpleItem", "command": 177, "frame": 2,
            "doJumpId": 3, "params": [9, 1, 0, 0, 0, 0, 0]}"#;
        let cases = [
            (
                plan(&format!("{TAKEOFF}, {survey}")),
                "not a QGroundControl plan: mission.items[1]: a ComplexItem (survey) is not \
                 supported; only SimpleItems are (in QGroundControl, convert it to waypoints)",
            ),
            (
                plan(&format!("{TAKEOFF}, {jump_nowhere}")),
                "mission.items[1]: DO_JUMP (177): param1 (the item to jump to) is 9, not the \
                 doJumpId of an item",
            ),
            (
                plan(&TAKEOFF.replace(
                    "\"params\": [0, 0, 0, null, -35.3632, 149.1652, 10]",
                    "\"params\": [0, 0, 0]",
                )),
                "mission.items[0]: NAV_TAKEOFF (22): `params` is not an array of 7 values \
                 (param1..4, latitude, longitude, altitude)",
            ),
            (
                plan(&WAYPOINT.replace("-35.3630", "-95")),
                "mission.items[0]: NAV_WAYPOINT (16): latitude is -95, not a number in [-90, 90]",
            ),
            (
                plan(&WAYPOINT.replace(", 10]", ", null]")),
                "mission.items[0]: NAV_WAYPOINT (16): altitude is null, not a finite number",
            ),
            (
                plan(&WAYPOINT.replace("\"command\": 16", "\"command\": -1")),
                "not a QGroundControl plan: mission.items[0]: `command` is -1, not an integer \
                 in [0, 65535]",
            ),
            (
                plan(TAKEOFF).replace("\"Plan\"", "\"GeoFence\""),
                "not a QGroundControl plan: `fileType` is \"GeoFence\", not \"Plan\"",
            ),
            (
                plan(TAKEOFF).replace("[-35.3632621, 149.1652374, 584.09]", "[1, 2]"),
                "not a QGroundControl plan: `mission.plannedHomePosition` holds 2 values, not \
                 [latitude, longitude, altitude]",
            ),
            (
                "{\"fileType\": \"Plan\",".to_string(),
                "not a QGroundControl plan: EOF while parsing a value at line 1 column 20",
            ),
        ];
        for (text, expect) in cases {
            assert_eq!(Mission::parse(&text).unwrap_err().to_string(), expect);
        }
    }
}
