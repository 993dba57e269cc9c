//! `lockstep fly` (and its alias `run`): overrides, `--out`, the JSON
//! summary and its agreement with the text one, `--quiet`, the digest and
//! the timeline.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use serde_json::Value;

const SQUARE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/scenarios/square.toml"
);
const MISSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/missions");

fn json(r: &Ran) -> Value {
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {r}"))
}

fn digest_of(p: &Path) -> String {
    lockstep_harness::io::digest::file_digest(p).unwrap()
}

/// `fly --json --out DIR` with the default scenario shortened: every field
/// of the report, `summary.json` equal to stdout, the digest that of the
/// log written into DIR.
#[test]
fn the_json_summary_reports_the_flight_and_matches_summary_json() {
    let dir = TempDir::new("fly-json");
    let out = dir.join("out");
    let r = lockstep(&[
        "fly",
        "--duration",
        "12",
        "--seed",
        "3",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(r.stderr, "", "{r}");
    let j = json(&r);
    assert_eq!(j["report_version"], 1);
    assert_eq!(j["scenario"], SQUARE);
    assert_eq!(j["autopilot"], BUNDLED);
    assert_eq!(j["isolated"], true);
    assert_eq!(j["vehicle"], "iris");
    assert_eq!(j["rotors"], 4);
    assert_eq!(j["seed"], 3);
    assert_eq!(j["outcome"], "completed");
    assert_eq!(j["error"], Value::Null);
    assert_eq!(j["exit_status"], 0);
    assert_eq!(j["simulated_us"], 12_000_000);
    assert_eq!(j["boundaries"], 12_001);
    let wall = j["wall_time_s"].as_f64().unwrap();
    let rtf = j["real_time_factor"].as_f64().unwrap();
    assert!(
        wall > 0.0 && (rtf * wall - 12.0).abs() < 1e-9,
        "{wall} {rtf}"
    );
    let log = out.join("log.csv");
    assert_eq!(j["log"]["path"], log.to_str().unwrap());
    assert_eq!(j["log"]["rows"], 121);
    assert_eq!(j["log"]["last_time_us"], 12_000_000);
    assert_eq!(j["log"]["complete"], true);
    assert_eq!(j["digest"], digest_of(&log));
    assert_eq!(j["final_state"]["mode"], "mission");
    assert_eq!(j["final_state"]["armed"], true);
    assert_eq!(j["verdict"]["passed"], true);
    let written = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert_eq!(written, r.stdout, "summary.json is what --json prints");
    // The square's events and the autopilot's changes, in order.
    let timeline: Vec<(u64, String, String)> = j["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["time_us"].as_u64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
                e["what"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected_start = [
        (1_000_000, "event", "arm"),
        (1_000_000, "arming", "armed"),
        (1_000_000, "mode", "disarmed -> idle"),
        (2_000_000, "event", "mission_start"),
        (2_000_000, "mode", "idle -> takeoff"),
    ];
    for (got, want) in timeline.iter().zip(expected_start) {
        assert_eq!((got.0, got.1.as_str(), got.2.as_str()), want);
    }
    assert_eq!(timeline.len(), 6, "{timeline:?}");
    assert_eq!(
        (timeline[5].1.as_str(), timeline[5].2.as_str()),
        ("mode", "takeoff -> mission")
    );
    assert_eq!(j["timeline_dropped"], 0);
}

/// The text summary carries the same facts: wall time and real-time
/// factor, the digest, the timeline.
#[test]
fn the_text_summary_ends_with_wall_time_digest_timeline_and_verdict() {
    let dir = TempDir::new("fly-text");
    let log = dir.join("log.csv");
    let r = lockstep(&["fly", "--duration", "3", "--log", log.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
    let lines: Vec<&str> = r.stdout.lines().collect();
    let wall = lines
        .iter()
        .find_map(|l| l.strip_prefix("wall time     "))
        .unwrap_or_else(|| panic!("{r}"));
    let (secs, rtf) = wall
        .strip_suffix(')')
        .and_then(|w| w.split_once(" s (real-time factor "))
        .unwrap_or_else(|| panic!("{wall}"));
    assert!(secs.parse::<f64>().unwrap() >= 0.0);
    assert!(rtf.parse::<u64>().unwrap() > 0);
    assert!(
        r.stdout.contains(&format!(
            "\ndigest        {} (of the log)\n",
            digest_of(&log)
        )),
        "{r}"
    );
    let timeline_at = lines
        .iter()
        .position(|l| l.starts_with("timeline "))
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(
        &lines[timeline_at..timeline_at + 6],
        [
            "timeline          1.000000 s  event     arm",
            "                  1.000000 s  arming    armed",
            "                  1.000000 s  mode      disarmed -> idle",
            "                  2.000000 s  event     mission_start",
            "                  2.000000 s  mode      idle -> takeoff",
            "verdict       ok",
        ]
    );
}

#[test]
fn quiet_prints_nothing_and_errors_still_reach_stderr() {
    let r = lockstep(&["fly", "--duration", "3", "--quiet"]);
    assert_eq!(
        (r.code(), r.stdout.as_str(), r.stderr.as_str()),
        (0, "", "")
    );
    let r = lockstep(&["fly", "--quiet", "--set", "simulation.integrator=rk5"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: {SQUARE} (with --set simulation.integrator=rk5): key \
             `simulation.integrator`: `rk5` is not one of euler, rk4, bs32, dp54\n"
        )
    );
}

/// Same seed, same digest; another seed, another digest; `run` is `fly`.
#[test]
fn the_digest_follows_the_seed_and_run_is_an_alias() {
    let dir = TempDir::new("fly-digest");
    let digest = |verb: &str, seed: &str, name: &str| {
        let log = dir.join(name);
        let r = lockstep(&[
            verb,
            "--duration",
            "4",
            "--seed",
            seed,
            "--json",
            "--log",
            log.to_str().unwrap(),
        ]);
        assert_eq!(r.code(), 0, "{r}");
        json(&r)["digest"].as_str().unwrap().to_string()
    };
    let a = digest("fly", "11", "a.csv");
    assert_eq!(a.len(), "sha256:".len() + 64);
    assert_eq!(a, digest("run", "11", "b.csv"));
    assert_ne!(a, digest("fly", "12", "c.csv"));
}

/// `--spec`, `--mission` (relative to the working directory), `--set` and
/// `--param` reach the flight.
#[test]
fn overrides_change_the_flight() {
    let r = ran(Command::new(LOCKSTEP).current_dir(MISSIONS).args([
        "fly",
        SQUARE,
        "--spec",
        "hexa",
        "--mission",
        "loiter.waypoints",
        "--duration",
        "20",
        "--set",
        "wind.model=constant",
        "--set",
        "wind.sigma_mps=[0.0, 0.0, 0.0]",
        "--json",
    ]));
    // A constant wind takes no sigma: the override reached validation.
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: {SQUARE} (with --duration 20, --spec hexa, --mission loiter.waypoints, \
             --set wind.model=constant, --set wind.sigma_mps=[0.0, 0.0, 0.0]): key `wind`: \
             sigma_mps and tau_s do not apply to model \"constant\"\n"
        )
    );
    let r = ran(Command::new(LOCKSTEP).current_dir(MISSIONS).args([
        "fly",
        SQUARE,
        "--spec",
        "hexa",
        "--mission",
        "loiter.waypoints",
        "--duration",
        "20",
        "--set",
        "wind={ model = \"constant\", mean_ned_mps = [0.0, 0.0, 0.0] }",
        "--param",
        "MIS_TAKEOFF_ALT=4.0",
        "--json",
    ]));
    assert_eq!(r.code(), 0, "{r}");
    let j = json(&r);
    assert_eq!(j["vehicle"], "hexa");
    assert_eq!(j["rotors"], 6);
    // The loiter mission holds 10 m; the flight is 20 s long.
    let alt = j["final_state"]["altitude_m"].as_f64().unwrap();
    assert!((alt - 10.0).abs() < 0.5, "{alt}");
}

#[test]
fn bad_overrides_are_configuration_errors_naming_the_option() {
    let cases: [(&[&str], String); 5] = [
        (
            &["--set", "simulation"],
            "lockstep fly: --set simulation: expected KEY=VALUE\n".into(),
        ),
        (
            &["--set", "simulation.seed.x=1"],
            format!(
                "lockstep fly: {SQUARE}: key `simulation.seed.x`: `simulation.seed` is not a \
                 table but a value of type integer (from --set simulation.seed.x=1)\n"
            ),
        ),
        (
            &["--set", "simulation.sed=3"],
            format!(
                "lockstep fly: {SQUARE} (with --duration 3, --set simulation.sed=3): unknown key \
                 `simulation.sed` (valid in [simulation]: duration_s, engine, integrator, seed, \
                 tick_us)\n"
            ),
        ),
        (
            &["--param", "A.B=1"],
            "lockstep fly: --param A.B=1: `A.B` is not a parameter name\n".into(),
        ),
        (
            &["--param", "NO_SUCH_PARAM=1"],
            format!(
                "lockstep fly: scenario {SQUARE}: key `autopilot.params.NO_SUCH_PARAM`: parameter \
                 NO_SUCH_PARAM: not found (status -6): unknown parameter NO_SUCH_PARAM\n"
            ),
        ),
    ];
    for (args, message) in cases {
        let mut all = vec!["fly", "--duration", "3"];
        all.extend_from_slice(args);
        let r = lockstep(&all);
        assert_eq!(r.code(), 2, "{args:?}: {r}");
        assert_eq!(r.stdout, "", "{args:?}");
        assert!(r.stderr.starts_with(&message), "{args:?}: {message:?}\n{r}");
    }
    let r = lockstep(&["fly", "--seed=-1"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with(
            "error: invalid value '-1' for '--seed <SEED>': -1 is not an integer in [0, \
             9223372036854775807]"
        ),
        "{r}"
    );
}

/// `--out` creates its directory; a path it cannot create is refused
/// before anything flies.
#[test]
fn out_creates_its_directory_or_refuses() {
    let dir = TempDir::new("fly-out");
    let blocker = dir.join("file");
    std::fs::write(&blocker, "x").unwrap();
    let bad: PathBuf = blocker.join("sub");
    let r = lockstep(&["fly", "--duration", "3", "--out", bad.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.starts_with(&format!(
            "lockstep fly: --out {}: cannot create the directory: ",
            bad.display()
        )),
        "{r}"
    );
    let deep = dir.join("a").join("b");
    let r = lockstep(&[
        "fly",
        "--duration",
        "3",
        "--quiet",
        "--out",
        deep.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(deep.join("log.csv").is_file() && deep.join("summary.json").is_file());
}

/// A mistyped aircraft is named with the built-ins and the nearest one; an
/// inexact cadence suggests periods valid against the tick.
#[test]
fn typos_get_suggestions_that_work() {
    let dir = TempDir::new("fly-typos");
    let r = ran(Command::new(LOCKSTEP)
        .current_dir(dir.path())
        .args(["fly", "--spec", "irs"]));
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: --spec irs: not a built-in aircraft (iris, hexa, octa; `lockstep specs` \
             lists them) and no file {}; did you mean `iris`?\n",
            dir.join("irs").display()
        )
    );
    let r = lockstep(&["fly", SQUARE, "--set", "cadences.imu.rate_hz=333"]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.ends_with(
            "key `cadences.imu`: 0.003003003003003003 s is not a whole number of microseconds; \
             nearest valid: 3000 us or 4000 us\n"
        ),
        "{r}"
    );
    // The suggestion flies.
    let r = lockstep(&[
        "fly",
        SQUARE,
        "--duration",
        "3",
        "-q",
        "--set",
        "cadences.imu.period_us=3000",
    ]);
    assert_eq!(r.code(), 0, "{r}");
}

/// `--speed X` keeps the flight to X simulated seconds per wall second and
/// changes no byte of what it writes; bad speeds and pacing a fleet are
/// refused with the exact message.
#[test]
fn pacing_waits_for_the_wall_clock_and_changes_no_output() {
    let dir = TempDir::new("pace");
    let (fast, paced) = (dir.join("fast"), dir.join("paced"));
    let args = |out: &Path| {
        vec![
            "fly".to_string(),
            "--duration".into(),
            "3".into(),
            "--quiet".into(),
            "--out".into(),
            out.to_str().unwrap().into(),
        ]
    };
    let r = lockstep(&args(&fast));
    assert!(r.status.code() == Some(3) || r.status.success(), "{r}");
    let mut a = args(&paced);
    a.extend(["--speed".into(), "4".into()]);
    let p = lockstep(&a);
    assert_eq!(p.status.code(), r.status.code(), "{p}");
    // 3 simulated seconds at 4x: at least 0.75 s of wall time.
    assert!(p.wall.as_secs_f64() >= 0.75, "{:?}", p.wall);
    assert_eq!(
        std::fs::read(fast.join("log.csv")).unwrap(),
        std::fs::read(paced.join("log.csv")).unwrap()
    );
    let bad = lockstep(&["fly", "--speed", "0"]);
    assert_eq!(bad.status.code(), Some(2), "{bad}");
    assert!(
        bad.stderr.contains(
            "invalid value '0' for '--speed <X>': 0 is not a speed in [0.001, 1000000] \
             (simulated seconds per second)"
        ),
        "{bad}"
    );
    // A fleet keeps to the wall clock too, with the same logs.
    let swarm = examples().join("scenarios/gcs_fleet.toml");
    let (fleet_fast, fleet_paced) = (dir.join("ff"), dir.join("fp"));
    let fleet = |out: &Path, extra: &[&str]| {
        let mut a = vec![
            "fly",
            swarm.to_str().unwrap(),
            "--duration",
            "2",
            "--out",
            out.to_str().unwrap(),
        ];
        a.extend_from_slice(extra);
        lockstep(&a)
    };
    let f = fleet(&fleet_fast, &[]);
    assert!(f.status.success(), "{f}");
    let p = fleet(&fleet_paced, &["--speed", "4"]);
    assert!(p.status.success(), "{p}");
    // 2 simulated seconds at 4x: at least 0.5 s of wall time.
    assert!(p.wall.as_secs_f64() >= 0.5, "{:?}", p.wall);
    for name in ["alpha.csv", "bravo.csv", "charlie.csv"] {
        assert_eq!(
            std::fs::read(fleet_fast.join(name)).unwrap(),
            std::fs::read(fleet_paced.join(name)).unwrap(),
            "{name}"
        );
    }
}

/// `--duration -5` reaches the scenario's check (not clap's tip to write
/// `-- -5`), and `--seed -3` the seed's own message.
#[test]
fn negative_numbers_are_values_and_get_their_checks_messages() {
    let r = lockstep(&["fly", "--duration", "-5"]);
    assert_eq!(r.status.code(), Some(2), "{r}");
    assert!(
        r.stderr.contains(
            "(with --duration -5): key `simulation.duration_s`: must be positive and at most \
             10000000, is -5"
        ),
        "{r}"
    );
    let r = lockstep(&["fly", "--seed", "-3"]);
    assert_eq!(r.status.code(), Some(2), "{r}");
    assert!(
        r.stderr
            .contains("invalid value '-3' for '--seed <SEED>': -3 is not an integer in [0, 9223372036854775807]"),
        "{r}"
    );
}

/// A built-in spec misspelt in a scenario file gets the CLI's "did you
/// mean", and the list names only the aircraft that fly.
#[test]
fn a_misspelt_spec_in_a_file_gets_a_suggestion() {
    let dir = TempDir::new("spec-case");
    let s = dir.join("iris.toml");
    std::fs::write(
        &s,
        "schema_version = 1\n[simulation]\nduration_s = 5.0\n[vehicle]\nspec = \"IRIS\"\n",
    )
    .unwrap();
    let r = lockstep(&["fly", s.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(2), "{r}");
    assert!(
        r.stderr
            .contains("key `vehicle.spec`: `IRIS` is not a built-in spec (iris, hexa, octa) and "),
        "{r}"
    );
    assert!(
        r.stderr.trim_end().ends_with("; did you mean `iris`?"),
        "{r}"
    );
}

/// `fly --help` shows the network options only in a build that has them
/// (the default build hides them, and refuses them when given: .ci/default-build).
#[test]
fn help_shows_network_options_only_where_they_work() {
    let r = lockstep(&["fly", "--help"]);
    assert_eq!(r.code(), 0, "{r}");
    for flag in ["--network-role", "--network-connect", "--step-deadline"] {
        assert_eq!(
            r.stdout.contains(flag),
            cfg!(feature = "distributed"),
            "{flag}"
        );
    }
}

/// A run shortened on the command line drops (and names) the timed events
/// past its end; in the file itself such an event stays an error.
#[test]
fn a_shortened_run_drops_the_events_past_its_end() {
    let gust = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/scenarios/gust.toml");
    let dropped =
        "events[2] (wind_gust at t = 20.000000 s): after the shortened run's end at t = 5.000000 s";
    let r = lockstep(&["fly", gust, "--duration", "5"]);
    assert!(
        r.stdout.contains(&format!("\ndropped       {dropped}\n")),
        "{r}"
    );
    assert!(r.code() == 0 || r.code() == 3, "{r}");
    let r = lockstep(&["fly", gust, "--set", "simulation.duration_s=5.0", "--json"]);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(j["dropped_events"], serde_json::json!([dropped]));
    assert_eq!(j["simulated_us"], 5_000_000);
    // Nothing dropped: no key.
    let r = lockstep(&["fly", gust, "--duration", "30", "--json"]);
    let j: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(j.get("dropped_events").is_none(), "{}", r.stdout);
    // The file's own duration: an error naming the event.
    let dir = TempDir::new("fly-short");
    let text = std::fs::read_to_string(gust)
        .unwrap()
        .replace("duration_s = 75.0", "duration_s = 5.0");
    assert!(
        text.contains("duration_s = 5.0"),
        "gust.toml's duration changed"
    );
    let own = dir.join("short.toml");
    std::fs::write(
        &own,
        text.replace(
            "../missions",
            &format!("{}/examples/missions", env!("CARGO_MANIFEST_DIR")),
        ),
    )
    .unwrap();
    let r = lockstep(&["fly", own.to_str().unwrap()]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(r.stderr.contains("events[2].at_s"), "{r}");
}
