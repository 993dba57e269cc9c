//! Every example scenario flies as the README says, meeting the
//! expectations it declares; the skeleton autopilot is usable.

use crate::common::*;
use serde_json::Value;

const SCENARIOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scenarios");
const SKELETON: &str = lockstep_c_examples::SKELETON_AUTOPILOT;

fn fly(name: &str, extra: &[&str]) -> Value {
    let path = format!("{SCENARIOS}/{name}");
    let mut args = vec!["fly", path.as_str(), "--json"];
    args.extend_from_slice(extra);
    let r = lockstep(&args);
    assert_eq!(r.code(), 0, "{name}: {r}");
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(j["verdict"]["passed"], true, "{name}: {j}");
    j
}

fn timeline(j: &Value) -> Vec<(String, String)> {
    j["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap().to_string(),
                e["what"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_example_scenario_meets_its_expectations() {
    let mut names: Vec<String> = std::fs::read_dir(SCENARIOS)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "ardupilot_json.toml",
            "battery_failsafe.toml",
            "event_driven.toml",
            "gcs.toml",
            "gcs_fleet.toml",
            "gust.toml",
            "hover.toml",
            "identify.toml",
            "montecarlo.toml",
            "motor_failure.toml",
            "px4_sitl.toml",
            "region64.toml",
            "skeleton.toml",
            "square.toml",
            "swarm.toml"
        ]
    );
    for name in names {
        if name == "swarm.toml" {
            swarm();
            continue;
        }
        if name == "region64.toml" {
            region64();
            continue;
        }
        if name == "gcs_fleet.toml" {
            gcs_fleet();
            continue;
        }
        if name == "px4_sitl.toml" || name == "ardupilot_json.toml" {
            // A flight stack flies these: they validate here, and fly
            // against the peers written from the stacks' sources in
            // tests/peers (CI runs both).
            let s = lockstep_harness::inputs::scenario::Scenario::load(
                std::path::Path::new(SCENARIOS).join(&name),
            )
            .unwrap();
            assert!(s.stack.is_some(), "{name}");
            continue;
        }
        let extra: &[&str] = if name == "skeleton.toml" {
            &["--autopilot", SKELETON]
        } else {
            &[]
        };
        let j = fly(&name, extra);
        let t = timeline(&j);
        match name.as_str() {
            "battery_failsafe.toml" => {
                assert!(
                    t.contains(&(
                        "failsafe".into(),
                        "mission -> rtl (battery warning 2)".into()
                    )),
                    "{t:?}"
                );
                assert_eq!(j["final_state"]["armed"], false);
            }
            "motor_failure.toml" => {
                assert!(
                    t.contains(&("event".into(), "motor_fail motor 0".into())),
                    "{t:?}"
                );
                assert_eq!(j["vehicle"], "octa");
            }
            "gust.toml" => {
                assert!(
                    t.iter()
                        .any(|(k, w)| k == "event" && w.starts_with("wind_gust [0, 6, 0]"))
                );
            }
            "gcs.toml" => {
                // Alone it waits on the ground for a ground station
                // (tests/peers/test_gcs.py flies it with MAVSDK and
                // pymavlink).
                assert_eq!(j["final_state"]["armed"], false);
                assert_eq!(j["verdict"]["passed"], true);
            }
            "skeleton.toml" => {
                let alt = j["final_state"]["altitude_m"].as_f64().unwrap();
                assert!((alt - 2.1).abs() < 0.2, "{alt}");
            }
            _ => assert_eq!(j["final_state"]["mission_finished"], true, "{name}"),
        }
    }
}

/// The fleet waiting for ground stations: alone, three vehicles stay on
/// the ground, 10 m apart (tests/peers/test_gcs_fleet.py serves it).
fn gcs_fleet() {
    let path = format!("{SCENARIOS}/gcs_fleet.toml");
    let r = lockstep(&["fly", path.as_str(), "--json", "--duration", "20"]);
    assert_eq!(r.code(), 0, "gcs_fleet: {r}");
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    let vehicles = j["vehicles"].as_array().unwrap();
    let names: Vec<&str> = vehicles
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "bravo", "charlie"]);
    for v in vehicles {
        assert_eq!(v["verdict"]["passed"], true, "{v}");
        assert_eq!(v["final_state"]["armed"], false, "{v}");
    }
    assert_eq!(j["collisions"], 0);
}

/// The fleet: every lane finishes and lands; lanes 14 and 15 end within
/// proximity, nobody collides.
fn swarm() {
    let path = format!("{SCENARIOS}/swarm.toml");
    let r = lockstep(&["fly", path.as_str(), "--json"]);
    assert_eq!(r.code(), 0, "swarm: {r}");
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    let vehicles = j["vehicles"].as_array().unwrap();
    assert_eq!(vehicles.len(), 16);
    for v in vehicles {
        assert_eq!(v["verdict"]["passed"], true, "{v}");
        assert_eq!(v["final_state"]["mission_finished"], true, "{v}");
    }
    assert_eq!(j["collisions"], 0);
    let e = &j["encounters"][0];
    assert_eq!(
        (e["kind"].as_str(), e["a"].as_str(), e["b"].as_str()),
        (Some("proximity"), Some("lane14"), Some("lane15"))
    );
    let closest = j["closest"]["separation_m"].as_f64().unwrap();
    assert!(closest > 2.0 && closest < 4.0, "{closest}");
}

/// 64 vehicles over 2.8 km: every one lands where it was sent; the three
/// pairs set to meet pass within proximity, nobody collides; the
/// lookahead meets in a hundredth of the sync periods.
fn region64() {
    let path = format!("{SCENARIOS}/region64.toml");
    let r = lockstep(&["fly", path.as_str(), "--json", "--isolation", "in-process"]);
    assert_eq!(r.code(), 0, "region64: {r}");
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    let vehicles = j["vehicles"].as_array().unwrap();
    assert_eq!(vehicles.len(), 64);
    for v in vehicles {
        assert_eq!(v["verdict"]["passed"], true, "{v}");
    }
    assert_eq!(j["collisions"], 0);
    let mut met: Vec<(&str, &str)> = j["encounters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "proximity")
        .map(|e| (e["a"].as_str().unwrap(), e["b"].as_str().unwrap()))
        .collect();
    met.sort();
    assert_eq!(met, [("v01", "v09"), ("v28", "v36"), ("v46", "v54")]);
    let l = &j["lookahead"];
    assert_eq!(l["syncs"], 20_001);
    assert!(l["rounds"].as_u64().unwrap() < 400, "{l}");
}

#[test]
fn the_skeleton_autopilot_is_usable() {
    let r = lockstep(&["check-lib", SKELETON]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(r.stdout.ends_with("verdict       usable\n"), "{r}");
}
