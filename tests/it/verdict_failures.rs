//! Flights a pilot would call failures, whatever the autopilot says: a
//! hexa that loses a motor near Tokyo (it spun and drifted 336 m in
//! mission mode to the end with `verdict ok`; the reference autopilot now
//! gives yaw up and lands where it is, and a mission that had the time and
//! did not finish fails the verdict), and an Iris blown off by a gale
//! beyond the fence round its mission (a fly-away).

use std::path::Path;

use serde_json::Value;

use crate::common::{TempDir, lockstep};

/// A 40 m square at 15 m near Tokyo Station, as QGroundControl writes it.
fn tokyo_square(dir: &Path) -> std::path::PathBuf {
    let (lat0, lon0) = (35.6812f64, 139.7671f64);
    let dlat = 40.0 / 111_320.0;
    let dlon = 40.0 / (111_320.0 * lat0.to_radians().cos());
    let corners = [
        (lat0 + dlat, lon0),
        (lat0 + dlat, lon0 + dlon),
        (lat0, lon0 + dlon),
        (lat0, lon0),
    ];
    let mut text = format!(
        "QGC WPL 110\n0\t1\t0\t16\t0\t0\t0\t0\t{lat0:.8}\t{lon0:.8}\t40\t1\n\
         1\t0\t3\t22\t0\t0\t0\t0\t0\t0\t15\t1\n"
    );
    for (i, (la, lo)) in corners.iter().enumerate() {
        text += &format!(
            "{}\t0\t3\t16\t2\t1.5\t0\t0\t{la:.8}\t{lo:.8}\t15\t1\n",
            i + 2
        );
    }
    text += &format!("6\t0\t3\t21\t0\t0\t0\t0\t{lat0:.8}\t{lon0:.8}\t0\t1\n");
    let path = dir.join("tokyo.waypoints");
    std::fs::write(&path, text).unwrap();
    path
}

fn fly_json(scenario: &Path) -> (i32, Value, String) {
    let r = lockstep(&[
        Path::new("fly"),
        scenario,
        Path::new("--isolation"),
        Path::new("in-process"),
        Path::new("--json"),
    ]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r}"));
    (r.code(), v, r.stderr)
}

fn hexa(dir: &TempDir, expect: &str) -> std::path::PathBuf {
    tokyo_square(dir.path());
    let path = dir.join("hexa.toml");
    std::fs::write(
        &path,
        format!(
            "schema_version = 1\n[simulation]\nseed = 5\nduration_s = 200.0\n\
             [vehicle]\nspec = \"hexa\"\nmission = \"tokyo.waypoints\"\n\
             [[events]]\nat_s = 1.0\naction = \"arm\"\n\
             [[events]]\nat_s = 2.0\naction = \"mission_start\"\n\
             [[events]]\nwhen = {{ altitude_above_m = 12.0 }}\naction = \"motor_fail\"\nmotor = 2\n\
             {expect}"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_hexa_that_loses_a_motor_gives_yaw_up_and_lands_where_it_is() {
    let dir = TempDir::new("hexa-motor");
    let (code, r, stderr) = fly_json(&hexa(&dir, ""));
    // Landed and disarmed, no crash, not far from where the motor failed.
    assert_eq!(r["final_state"]["armed"], false, "{r}");
    assert_eq!(r["verdict"]["crashes"], serde_json::json!([]), "{r}");
    let p = &r["final_state"]["position_ned_m"];
    let off = p[0].as_f64().unwrap().hypot(p[1].as_f64().unwrap());
    assert!(off < 30.0, "landed {off:.1} m from the start: {r}");
    let modes: Vec<&str> = r["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "mode")
        .map(|e| e["what"].as_str().unwrap())
        .collect();
    assert!(modes.contains(&"takeoff -> land"), "{modes:?}");
    // The mission had the time and did not finish: the verdict says so.
    assert_eq!(code, 3, "{stderr}");
    let checks = r["verdict"]["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 1, "{r}");
    assert_eq!(checks[0]["key"], "expect.mission_finished");
    assert!(
        checks[0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("not given, so expected finished: the mission started at t = 2.000000 s"),
        "{r}"
    );
    // A scenario that knows the mission will not finish says so, and passes.
    let dir = TempDir::new("hexa-motor-told");
    let (code, r, stderr) = fly_json(&hexa(&dir, "[expect]\nmission_finished = false\n"));
    assert_eq!(code, 0, "{stderr}\n{r}");
}

#[test]
fn an_iris_blown_beyond_the_fence_round_its_mission_is_a_fly_away() {
    let dir = TempDir::new("fly-away");
    let missions = crate::common::examples().join("missions");
    let path = dir.join("gale.toml");
    std::fs::write(
        &path,
        format!(
            "schema_version = 1\n[simulation]\nduration_s = 90.0\n\
             [vehicle]\nspec = \"iris\"\nmission = \"{}\"\n\
             [wind]\nmodel = \"constant\"\nmean_ned_mps = [0.0, 30.0, 0.0]\n\
             [[events]]\nat_s = 1.0\naction = \"arm\"\n\
             [[events]]\nat_s = 2.0\naction = \"mission_start\"\n",
            missions.join("square.waypoints").display()
        ),
    )
    .unwrap();
    let (code, r, _) = fly_json(&path);
    assert_eq!(code, 3, "{r}");
    let crashes = r["verdict"]["crashes"].as_array().unwrap();
    let fly_away = crashes
        .iter()
        .map(|c| c["what"].as_str().unwrap_or_default())
        .find(|c| c.starts_with("fly-away: at N "))
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        fly_away.contains(" beyond the fence round the mission's area at t = "),
        "{fly_away}"
    );
}
