//! Missions as QGroundControl writes them, drawn far from the default
//! origin: the mission's home sets the world origin, the vehicle flies
//! them and lands at home; a mission far from a declared origin is
//! refused; DO_JUMP, DO_CHANGE_SPEED and LOITER_UNLIM are flown.

use std::path::Path;

use crate::common::*;
use serde_json::Value;

const MISSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/missions");

fn mission(name: &str) -> String {
    format!("{MISSIONS}/{name}")
}

/// Flies the default scenario with `mission` for `duration` s, logging;
/// returns the JSON summary and the log.
fn fly(dir: &TempDir, mission: &str, duration: &str, extra: &[&str]) -> (Value, Log) {
    let log = dir.join("log.csv");
    let mut args = vec![
        "fly",
        "--mission",
        mission,
        "--duration",
        duration,
        "--json",
        "--log",
        log.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let r = lockstep(&args);
    assert_eq!(r.code(), 0, "{r}");
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    (j, Log::read(&log))
}

/// Finished, disarmed, on the ground within 1.5 m of home.
fn assert_landed_at_home(j: &Value) {
    let f = &j["final_state"];
    assert_eq!(f["mission_finished"], true, "{j}");
    assert_eq!(f["armed"], false, "{j}");
    let p: Vec<f64> = f["position_ned_m"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(p[0].hypot(p[1]) < 1.5, "landed {p:?} from home");
    assert!(f["altitude_m"].as_f64().unwrap() < 0.2, "{j}");
}

/// The values a column takes, consecutive repeats collapsed.
fn changes(log: &Log, column: &str) -> Vec<String> {
    let c = log
        .columns
        .iter()
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column}"));
    let mut out: Vec<String> = Vec::new();
    for row in &log.rows {
        if out.last() != Some(&row[c]) {
            out.push(row[c].clone());
        }
    }
    out
}

/// WPL 120 with `nan` params near Canberra (southern, eastern
/// hemisphere): takeoff, a waypoint with unset hold and acceptance, a
/// DO_CHANGE_SPEED, a loiter, and a landing at home.
#[test]
fn a_wpl_120_mission_with_nan_params_near_canberra_lands_at_home() {
    let dir = TempDir::new("canberra");
    let (j, log) = fly(&dir, &mission("canberra_wpl120.waypoints"), "120", &[]);
    assert_landed_at_home(&j);
    // Takeoff, the waypoint, the loiter (the speed item runs on the way),
    // the landing.
    assert_eq!(changes(&log, "mission_current"), ["-1", "0", "1", "3", "4"]);
}

/// A `.plan` at 1,655 m near Boulder (northern, western hemisphere): the
/// DO_JUMP flies the leg twice, then a speed change and a return.
#[test]
fn a_plan_with_a_jump_near_boulder_flies_the_leg_twice_and_returns_home() {
    let dir = TempDir::new("boulder");
    let (j, log) = fly(&dir, &mission("boulder.plan"), "150", &[]);
    assert_landed_at_home(&j);
    assert_eq!(
        changes(&log, "mission_current"),
        ["-1", "0", "1", "2", "1", "2", "5"]
    );
}

#[test]
fn a_mission_far_from_the_declared_origin_is_refused() {
    let m = mission("canberra_wpl120.waypoints");
    let r = lockstep(&[
        "fly",
        "--mission",
        &m,
        "--set",
        "world.origin_lat_deg=47.397742",
        "--set",
        "world.origin_lon_deg=8.545594",
        "--set",
        "world.origin_alt_m=488.0",
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(r.stdout, "");
    let scenario = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scenarios/square.toml"
    );
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: scenario {scenario}: mission {m}: its home is 16513.1 km from the world \
             origin (47.397742, 8.545594) set by the scenario's [world]; a mission must lie \
             within 50.0 km of the origin (world.max_mission_distance_m). Was it drawn for \
             another place? Without a [world] origin, the mission's home sets the origin\n"
        )
    );
    let r = lockstep(&["fly", "--set", "world.origin_lat_deg=47.0"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.ends_with(
            ": key `world`: give all of origin_lat_deg, origin_lon_deg and origin_alt_m, or none\n"
        ),
        "{r}"
    );
}

/// LOITER_UNLIM holds its point until told otherwise: the mission never
/// finishes.
#[test]
fn loiter_unlimited_holds_its_point() {
    let dir = TempDir::new("loiter-unlim");
    let path = dir.join("unlim.waypoints");
    std::fs::write(
        &path,
        "QGC WPL 110\n\
         0\t1\t0\t16\t0\t0\t0\t0\t-33.9249\t18.4241\t10\t1\n\
         1\t0\t3\t22\t0\t0\t0\tnan\t0\t0\t8\t1\n\
         2\t0\t3\t17\t0\t0\t0\tnan\t-33.92472\t18.4241\t8\t1\n\
         3\t0\t3\t21\t0\t0\t0\tnan\t0\t0\t0\t1\n",
    )
    .unwrap();
    let (j, log) = fly(&dir, path.to_str().unwrap(), "60", &[]);
    let f = &j["final_state"];
    assert_eq!(
        (f["mission_finished"].clone(), f["mode"].clone()),
        (false.into(), "mission".into())
    );
    let north = f["position_ned_m"][0].as_f64().unwrap();
    // 0.00018 degrees of latitude north of home: 20.0 m.
    assert!((north - 20.0).abs() < 1.0, "{north}");
    assert!((f["altitude_m"].as_f64().unwrap() - 8.0).abs() < 0.5, "{j}");
    assert_eq!(changes(&log, "mission_current"), ["-1", "0", "1"]);
}

#[test]
fn a_plan_with_a_survey_is_refused_naming_it() {
    let dir = TempDir::new("survey");
    let text = std::fs::read_to_string(mission("boulder.plan"))
        .unwrap()
        .replacen(
            "\"type\": \"SimpleItem\"",
            "\"type\": \"ComplexItem\", \"complexItemType\": \"survey\"",
            1,
        );
    let path = dir.join("survey.plan");
    std::fs::write(&path, text).unwrap();
    let r = lockstep(&["fly", "--mission", path.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: mission {}: not a QGroundControl plan: mission.items[0]: a \
             ComplexItem (survey) is not supported; only SimpleItems are (in QGroundControl, \
             convert it to waypoints)\n",
            Path::new(&path).display()
        )
    );
}
