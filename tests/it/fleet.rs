//! Fleets: `[[vehicles]]` scenarios flown on threads, their separation
//! check (proximity, collisions that crash both vehicles), and the CLI.

use std::path::{Path, PathBuf};

use crate::common::{BUNDLED, TempDir, examples, lockstep};
use lockstep_abi::Isolation;
use lockstep_fleet::run::log_path;
use lockstep_fleet::separation::EncounterKind;
use lockstep_fleet::{Fleet, FleetScenario};
use lockstep_harness::engine::RunOptions;
use lockstep_harness::io::digest::file_digest;
use lockstep_harness::outcome::verdict::CrashKind;

/// Two Iris that both hover over the origin: the one starting 6 m north
/// flies into the other.
fn head_on(dir: &Path, extra: &str) -> PathBuf {
    let hover = examples().join("missions/hover.waypoints");
    let text = format!(
        r#"{head}[expect]
allow_crash = true
[[events]]
at_s = 0.5
action = "arm"
[[events]]
at_s = 1.0
action = "mission_start"
[[vehicles]]
name = "still"
spec = "iris"
mission = "{hover}"
[[vehicles]]
name = "mover"
spec = "iris"
mission = "{hover}"
start_north_m = 6.0
{extra}
"#,
        head = crate::common::fleet_head(5, 20.0),
        hover = hover.display()
    );
    let p = dir.join("head_on.toml");
    std::fs::write(&p, text).unwrap();
    p
}

pub(crate) fn options(dir: &Path, threads: usize) -> RunOptions {
    RunOptions {
        autopilot: PathBuf::from(BUNDLED),
        log_dir: Some(dir.to_path_buf()),
        isolation: Isolation::InProcess,
        threads: Some(threads),
    }
}

pub(crate) fn digests(dir: &Path, fs: &FleetScenario) -> Vec<String> {
    fs.vehicles
        .iter()
        .map(|v| file_digest(&log_path(dir, &v.name)).unwrap())
        .collect()
}

#[test]
fn a_collision_crashes_both_vehicles_and_only_them() {
    let dir = TempDir::new("fleet_collision");
    let extra = r#"[[vehicles]]
name = "bystander"
spec = "iris"
mission = "BYSTANDER"
start_north_m = 40.0
"#
    .replace(
        "BYSTANDER",
        &examples()
            .join("missions/swarm/lane_04.waypoints")
            .display()
            .to_string(),
    );
    let fs = FleetScenario::load(head_on(dir.path(), &extra)).unwrap();
    let mut fleet = Fleet::new(&fs, &options(dir.path(), 2)).unwrap();
    let s = fleet.run().unwrap();
    let collisions: Vec<_> = s
        .fleet
        .encounters
        .iter()
        .filter(|e| e.kind == EncounterKind::Collision)
        .collect();
    assert_eq!(collisions.len(), 1, "{:?}", s.fleet.encounters);
    let c = collisions[0];
    assert_eq!((c.a, c.b), (0, 1));
    // The Iris's rotor tip radius: 0.25 m arms (diagonal of the X) plus
    // the propeller; the pair is closer than both together.
    let r = lockstep_fleet::run::rotor_tip_radius_m(fleet.engines()[0].plant());
    assert!(
        c.separation_m < 2.0 * r && r > 0.2 && r < 0.6,
        "{c:?}, r {r}"
    );
    for (name, other) in [("still", "mover"), ("mover", "still")] {
        let sum = s.summary(name).unwrap();
        let crash = sum
            .verdict
            .crashes
            .iter()
            .find(|k| matches!(k.kind, CrashKind::Collision { .. }))
            .unwrap_or_else(|| panic!("{name}: {:?}", sum.verdict.crashes));
        assert_eq!(crash.time, c.time);
        assert_eq!(
            crash.kind,
            CrashKind::Collision {
                with: other.into(),
                separation_m: c.separation_m
            }
        );
        // Every motor failed: it falls to the ground.
        assert!(sum.on_ground, "{name} is not on the ground at the end");
        assert!(
            sum.timeline
                .iter()
                .any(|e| e.what.contains(&format!("collision with {other}"))),
            "{name}: {:?}",
            sum.timeline
        );
    }
    let bystander = &s.summaries[2];
    assert!(
        bystander.verdict.crashes.is_empty(),
        "{:?}",
        bystander.verdict
    );
    assert!(
        -bystander.position_ned_m[2] > 5.0,
        "the bystander still flies"
    );
}

#[test]
fn the_logs_do_not_depend_on_the_number_of_threads() {
    let fs = FleetScenario::load(examples().join("scenarios/swarm.toml")).unwrap();
    assert_eq!(fs.vehicles.len(), 16);
    let mut seen = Vec::new();
    for threads in [1, 2, 5] {
        let dir = TempDir::new(&format!("fleet_threads_{threads}"));
        let mut fs = fs.clone();
        for v in &mut fs.vehicles {
            v.scenario.duration = lockstep_harness::Micros(8_000_000);
        }
        let mut fleet = Fleet::new(&fs, &options(dir.path(), threads)).unwrap();
        let s = fleet.run().unwrap();
        assert_eq!(s.fleet.end.0, 8_000_000);
        seen.push(digests(dir.path(), &fs));
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0], seen[2]);
    // Each vehicle has its own streams: no two logs are the same.
    let mut unique = seen[0].clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 16);
}

#[test]
fn each_vehicle_seed_derives_from_the_master_seed_and_its_name() {
    let fs = FleetScenario::load(examples().join("scenarios/swarm.toml")).unwrap();
    assert_eq!(fs.seed, 11);
    for v in &fs.vehicles {
        assert_eq!(
            v.scenario.seed,
            lockstep_harness::time::rng::RngStreams::new(11).member_seed("fleet.vehicle", &v.name)
        );
    }
    assert_ne!(fs.vehicles[0].scenario.seed, fs.vehicles[1].scenario.seed);
}

#[test]
fn fly_of_a_fleet_writes_every_log_and_the_encounters() {
    let dir = TempDir::new("fleet_cli");
    let out = dir.join("out");
    let r = lockstep(&[
        "fly".as_ref(),
        head_on(dir.path(), "").as_os_str(),
        "--autopilot".as_ref(),
        BUNDLED.as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
        "--json".as_ref(),
        "--threads".as_ref(),
        "2".as_ref(),
    ]);
    // Crashes are allowed: the verdicts pass.
    assert_eq!(r.code(), 0, "{}", r.stderr);
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(j["collisions"], 1);
    assert_eq!(j["vehicles"].as_array().unwrap().len(), 2);
    let kinds: Vec<&str> = j["encounters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"proximity") && kinds.contains(&"collision"),
        "{kinds:?}"
    );
    for name in ["still", "mover"] {
        assert!(out.join(format!("{name}.csv")).is_file());
        let v = j["vehicles"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .unwrap();
        assert_eq!(
            v["digest"].as_str().unwrap(),
            file_digest(&out.join(format!("{name}.csv"))).unwrap()
        );
    }
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(saved["collisions"], 1);
    // The fleet's plot and the viewer's page, named in the summary.
    let plots: Vec<String> = ["png", "svg"]
        .map(|x| out.join(format!("fleet.{x}")).display().to_string())
        .to_vec();
    assert_eq!(saved["plots"], serde_json::json!(plots));
    assert_eq!(
        saved["viewer"],
        out.join("flight.html").display().to_string()
    );
    let svg = std::fs::read_to_string(out.join("fleet.svg")).unwrap();
    for t in ["Paths, top-down (m)", "Altitude (m)", "still", "mover"] {
        assert!(svg.contains(&format!(">\n{t}\n</text>")), "{t}");
    }
    assert!(svg.contains("closest: "), "the closest pair is marked");
    assert!(
        std::fs::read_to_string(out.join("flight.html"))
            .unwrap()
            .contains("\"kind\":\"fleet\"")
    );
}

#[test]
fn single_vehicle_options_are_refused_for_a_fleet_and_threads_for_one_vehicle() {
    let dir = TempDir::new("fleet_cli_refused");
    let fleet = head_on(dir.path(), "");
    let r = lockstep(&[
        "fly".as_ref(),
        fleet.as_os_str(),
        "--log".as_ref(),
        dir.join("x.csv").as_os_str(),
    ]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "lockstep fly: --log is for a scenario of one vehicle; {} is a fleet ([[vehicles]]): \
             give --out DIR for every vehicle's log",
            fleet.display()
        )
    );
    let one = examples().join("scenarios/hover.toml");
    let r = lockstep(&[
        "fly".as_ref(),
        one.as_os_str(),
        "--threads".as_ref(),
        "2".as_ref(),
    ]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        format!(
            "lockstep fly: --threads is for a fleet scenario ([[vehicles]]); {} has one vehicle",
            one.display()
        )
    );
}

#[cfg(not(feature = "distributed"))]
#[test]
fn a_build_without_the_distributed_feature_says_how_to_get_it() {
    let r = lockstep(&["fly", "--network-role", "Secondary"]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: this lockstep was built without distributed runs and remote processes \
         (zenoh); build it with `cargo build --release --features distributed`"
    );
    let r = lockstep(&["ctl", "pause"]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep ctl: this lockstep was built without distributed runs and remote processes \
         (zenoh); build it with `cargo build --release --features distributed`"
    );
}

#[test]
fn network_options_are_checked() {
    let r = lockstep(&["fly", "--network-role", "tertiary"]);
    assert_eq!(r.code(), 2);
    assert!(
        r.stderr
            .contains("invalid value 'tertiary' for '--network-role <NETWORK_ROLE>': `tertiary` is not a role: primary or secondary"),
        "{}",
        r.stderr
    );
    let r = lockstep(&["fly", "--network-secondaries", "2"]);
    assert_eq!(r.code(), 2);
    assert_eq!(
        r.stderr.trim(),
        "lockstep fly: --network-secondaries and --step-deadline are for --network-role primary"
    );
}

/// A vehicle's own event naming a motor its airframe lacks is reported at
/// its own key, `vehicles[i].events[k]` (it was `events[1].motor`, a key
/// the file does not have: the shared and own events merged).
#[test]
fn a_vehicles_own_event_is_named_at_its_own_key() {
    let dir = TempDir::new("fleet-event-key");
    let file = dir.join("fleet.toml");
    std::fs::write(
        &file,
        "schema_version = 1\n[simulation]\nduration_s = 5.0\n\
         [world]\norigin_lat_deg = 47.397742\norigin_lon_deg = 8.545594\norigin_alt_m = 488.0\n\
         [[events]]\nat_s = 1.0\naction = \"arm\"\n\
         [[vehicles]]\nname = \"a\"\nspec = \"iris\"\n\
         [[vehicles]]\nname = \"b\"\nspec = \"iris\"\nstart_north_m = 3.0\n\
         [[vehicles.events]]\nat_s = 2.0\naction = \"motor_fail\"\nmotor = 7\n",
    )
    .unwrap();
    let r = lockstep(&[
        "fly".as_ref(),
        file.as_os_str(),
        "--isolation".as_ref(),
        "in-process".as_ref(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: vehicle `b`: scenario {}: key `vehicles[1].events[0].motor`: motor 7, but iris has 4 motors, numbered 0 to 3\n",
            file.display()
        )
    );
}

/// A vehicle's log that would be one of its inputs (here its mission,
/// named `alpha.csv` in the out directory) is refused before the run, as
/// `fly` refuses its own (the fleet wrote the log over the mission).
#[test]
fn a_vehicles_log_over_one_of_its_inputs_is_refused() {
    let dir = TempDir::new("fleet-log-input");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let mission = out.join("alpha.csv");
    std::fs::copy(examples().join("missions/square.waypoints"), &mission).unwrap();
    let before = std::fs::read(&mission).unwrap();
    let file = dir.join("fleet.toml");
    std::fs::write(
        &file,
        format!(
            "schema_version = 1\n[simulation]\nduration_s = 5.0\n[cadences]\nlog = {{ rate_hz = 10 }}\n\
             [world]\norigin_lat_deg = 47.397742\norigin_lon_deg = 8.545594\norigin_alt_m = 488.0\n\
             [[vehicles]]\nname = \"alpha\"\nspec = \"iris\"\nmission = \"{}\"\n\
             [[vehicles]]\nname = \"bravo\"\nspec = \"iris\"\nstart_north_m = 3.0\n",
            mission.display()
        ),
    )
    .unwrap();
    let r = lockstep(&[
        "fly".as_ref(),
        file.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--isolation".as_ref(),
        "in-process".as_ref(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: vehicle `alpha`'s log {} is the mission; refusing to overwrite an input\n",
            mission.display()
        )
    );
    assert_eq!(std::fs::read(&mission).unwrap(), before);
}

#[test]
fn a_fleet_shortened_on_the_command_line_drops_the_events_past_its_end() {
    let dir = TempDir::new("fleet_shortened");
    let own = "[[vehicles.events]]\nat_s = 15.0\naction = \"land\"\n";
    let scenario = head_on(dir.path(), own);
    let s = scenario.to_str().unwrap();
    // In the file itself, an event past the end is an error.
    let text = std::fs::read_to_string(&scenario).unwrap();
    let short = dir.join("short.toml");
    std::fs::write(
        &short,
        text.replace("duration_s = 20.0", "duration_s = 0.8"),
    )
    .unwrap();
    let r = lockstep(&["fly", short.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr
            .contains("events[1].at_s`: must be in [0, 0.8], is 1"),
        "{r}"
    );
    let r = lockstep(&[
        "fly",
        s,
        "--duration",
        "0.8",
        "--json",
        "--isolation",
        "in-process",
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        j["dropped_events"],
        serde_json::json!([
            "events[1] (mission_start at t = 1.000000 s): after the shortened run's end at t = 0.800000 s",
            "vehicles[1].events[0] (land at t = 15.000000 s): after the shortened run's end at t = 0.800000 s"
        ])
    );
}
