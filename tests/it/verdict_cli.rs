//! The verdict of `lockstep run`: crashes detected in flight and the
//! scenario's `[expect]` conditions, printed after the summary; a run that
//! completes but fails its verdict exits with status 3 (expectation failed),
//! one that passes with 0.

use std::path::{Path, PathBuf};

use crate::common::*;

/// The square mission, by absolute path (scenarios are written elsewhere).
fn square_mission() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/missions/square.waypoints")
}

/// The Iris starting the square mission whose motor 0 fails once it climbs
/// past 8 m, for 30 s, with `expect` appended.
fn motor_failure_scenario(dir: &TempDir, name: &str, expect: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "schema_version = 1\n\
             description = \"motor 0 fails at 8 m\"\n\
             \n\
             [simulation]\n\
             seed = 7\n\
             duration_s = 30.0\n\
             integrator = \"rk4\"\n\
             \n\
             [cadences]\n\
             physics = {{ rate_hz = 1000 }}\n\
             autopilot = {{ rate_hz = 250 }}\n\
             log = {{ rate_hz = 10 }}\n\
             \n\
             [vehicle]\n\
             spec = \"iris\"\n\
             mission = {:?}\n\
             \n\
             [[events]]\n\
             at_s = 1.0\n\
             action = \"arm\"\n\
             \n\
             [[events]]\n\
             at_s = 2.0\n\
             action = \"mission_start\"\n\
             \n\
             [[events]]\n\
             when = {{ altitude_above_m = 8.0 }}\n\
             action = \"motor_fail\"\n\
             motor = 0\n\
             {expect}",
            square_mission().to_str().unwrap()
        ),
    )
    .unwrap();
    path
}

/// The default flight (examples/scenarios/square.toml) with its mission by
/// absolute path and `expect` appended.
fn square_scenario(dir: &TempDir, name: &str, expect: &str) -> PathBuf {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml");
    let text = std::fs::read_to_string(example).unwrap();
    let relative = "mission = \"../missions/square.waypoints\"\n";
    assert_eq!(text.matches(relative).count(), 1, "{text}");
    let text = text.replace(
        relative,
        &format!("mission = {:?}\n", square_mission().to_str().unwrap()),
    );
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n{expect}")).unwrap();
    path
}

/// `lockstep run SCENARIO`.
fn run(scenario: &Path) -> Ran {
    lockstep(&[Path::new("run"), scenario])
}

/// The lines of `stdout` after the summary's `battery` line: the crashes,
/// the checks and the verdict.
fn verdict_lines(stdout: &str) -> Vec<&str> {
    let lines: Vec<&str> = stdout.lines().collect();
    let battery = lines
        .iter()
        .position(|l| l.starts_with("battery       "))
        .unwrap_or_else(|| panic!("no battery line in\n{stdout}"));
    lines[battery + 1..].to_vec()
}

/// A time printed as `S.FFFFFF` (every simulated time in the harness's
/// messages, `lockstep_abi::at`), in microseconds.
fn crash_time_us(text: &str) -> u64 {
    let (s, f) = text.split_once('.').expect(text);
    assert_eq!(f.len(), 6, "{text}");
    s.parse::<u64>().expect(text) * 1_000_000 + f.parse::<u64>().expect(text)
}

/// The crash lines of a run of the motor-failure scenario, parsed: the tilt
/// (one decimal) and time of `inverted`, the speed and time of the ground
/// impact, each line ending in `suffix`.
fn crashes(lines: &[&str], suffix: &str) -> ((f64, u64), (f64, u64)) {
    assert_eq!(lines.len(), 3, "two crashes and the verdict: {lines:#?}");
    let inverted = lines[0]
        .strip_prefix("crash         inverted (tilt ")
        .and_then(|l| l.strip_suffix(&format!(" s{suffix}")))
        .and_then(|l| l.split_once("°) at t = "))
        .unwrap_or_else(|| panic!("{:?}", lines[0]));
    let impact = lines[1]
        .strip_prefix("crash         ground impact at ")
        .and_then(|l| l.strip_suffix(&format!(" s{suffix}")))
        .and_then(|l| l.split_once(" m/s at t = "))
        .unwrap_or_else(|| panic!("{:?}", lines[1]));
    let (_, decimals) = impact.0.split_once('.').expect(lines[1]);
    assert_eq!(decimals.len(), 2, "{:?}", lines[1]);
    let (_, decimals) = inverted.0.split_once('.').expect(lines[0]);
    assert_eq!(decimals.len(), 1, "{:?}", lines[0]);
    (
        (
            inverted.0.parse().expect(lines[0]),
            crash_time_us(inverted.1),
        ),
        (impact.0.parse().expect(lines[1]), crash_time_us(impact.1)),
    )
}

#[test]
fn a_crash_fails_the_verdict_with_status_3() {
    let dir = TempDir::new("verdict-crash");
    let scenario = motor_failure_scenario(&dir, "crash.toml", "");
    let r = run(&scenario);
    assert_eq!(r.code(), 3, "{r}");
    assert_eq!(
        r.stderr, "lockstep run: the flight did not meet its expectations (see the verdict)\n",
        "{r}"
    );
    // The flight itself completed.
    assert!(
        r.stdout
            .contains("\nsimulated     30.000 s in 30001 boundaries\n"),
        "{r}"
    );
    let summary = r.summary();
    let lines = verdict_lines(&summary);
    assert_eq!(lines.last(), Some(&"verdict       FAILED"), "{r}");
    let ((tilt, inverted_at), (speed, impact_at)) = crashes(&lines, "");
    // Tilted past 90° (rounded to whole degrees), after the mission started;
    // then it hit the ground faster than the 3 m/s threshold.
    assert!(tilt > 90.0 && tilt <= 180.0, "{r}");
    assert!(inverted_at > 2_000_000, "{r}");
    assert!(speed > 3.0, "{r}");
    assert!(impact_at > inverted_at && impact_at <= 30_000_000, "{r}");
}

#[test]
fn an_allowed_crash_passes_the_verdict_and_is_marked_allowed() {
    let dir = TempDir::new("verdict-allowed");
    let failing = run(&motor_failure_scenario(&dir, "crash.toml", ""));
    let allowed = run(&motor_failure_scenario(
        &dir,
        "allowed.toml",
        "\n[expect]\nallow_crash = true\n",
    ));
    assert_eq!(allowed.code(), 0, "{allowed}");
    assert_eq!(allowed.stderr, "", "{allowed}");
    let allowed_summary = allowed.summary();
    let lines = verdict_lines(&allowed_summary);
    assert_eq!(lines.last(), Some(&"verdict       ok"), "{allowed}");
    let ((tilt, _), (speed, _)) = crashes(&lines, " (allowed)");
    assert!(tilt > 90.0 && tilt <= 180.0 && speed > 3.0, "{allowed}");
    // The same flight and the same crashes as without the permission
    // (`allow_crash` changes nothing but the verdict), apart from the marks.
    let failing_summary = failing.summary();
    let failing_lines = verdict_lines(&failing_summary);
    assert_eq!(failing_lines.len(), lines.len());
    for (a, f) in lines[..2].iter().zip(&failing_lines[..2]) {
        assert_eq!(a.strip_suffix(" (allowed)"), Some(*f));
    }
    let summary = |r: &Ran| {
        r.summary()
            .lines()
            .skip_while(|l| !l.starts_with("vehicle "))
            .take_while(|l| !l.starts_with("crash "))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&allowed), summary(&failing));
}

const EXPECT: &str = "[expect]\n\
                      mission_finished = true\n\
                      disarmed = true\n\
                      landed_within = { north_m = 0.0, east_m = 0.0, radius_m = 1.5 }\n\
                      max_tilt_deg = 35.0\n\
                      min_soc = 0.5\n";

/// The `expect` lines of a run of the square with [`EXPECT`] (and the tilt
/// limit `max_tilt`), checked in order and form; returns the maximum tilt
/// the last line but one reports.
fn assert_expect_lines(lines: &[&str], max_tilt: &str, tilt_ok: bool) -> f64 {
    assert_eq!(lines.len(), 6, "five checks and the verdict: {lines:#?}");
    assert_eq!(
        lines[0],
        "expect ok     expect.mission_finished: expected finished, the mission finished"
    );
    assert_eq!(
        lines[1],
        "expect ok     expect.disarmed: expected to end disarmed, ended disarmed"
    );
    let landed = lines[2]
        .strip_prefix(
            "expect ok     expect.landed_within: expected on the ground within 1.5 m of N 0 m, \
             E 0 m; on the ground ",
        )
        .and_then(|l| l.strip_suffix(" m from it"))
        .unwrap_or_else(|| panic!("{:?}", lines[2]));
    let landed: f64 = landed.parse().expect(lines[2]);
    assert!((0.0..=1.5).contains(&landed), "{}", lines[2]);
    let label = if tilt_ok {
        "expect ok    "
    } else {
        "expect FAILED"
    };
    let tilt = lines[3]
        .strip_prefix(&format!(
            "{label} expect.max_tilt_deg: at most {max_tilt}°, was "
        ))
        .and_then(|l| l.strip_suffix('°'))
        .unwrap_or_else(|| panic!("{:?}", lines[3]));
    let (_, decimals) = tilt.split_once('.').expect(lines[3]);
    assert_eq!(decimals.len(), 1, "{}", lines[3]);
    let tilt: f64 = tilt.parse().expect(lines[3]);
    let soc = lines[4]
        .strip_prefix("expect ok     expect.min_soc: at least 0.5, was ")
        .unwrap_or_else(|| panic!("{:?}", lines[4]));
    let (_, decimals) = soc.split_once('.').expect(lines[4]);
    assert_eq!(decimals.len(), 3, "{}", lines[4]);
    let soc: f64 = soc.parse().expect(lines[4]);
    assert!((0.5..=1.0).contains(&soc), "{}", lines[4]);
    tilt
}

#[test]
fn the_default_flight_meets_its_expectations() {
    let dir = TempDir::new("verdict-expect-ok");
    let r = run(&square_scenario(&dir, "square.toml", EXPECT));
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(r.stderr, "", "{r}");
    let summary = r.summary();
    let lines = verdict_lines(&summary);
    assert_eq!(lines.last(), Some(&"verdict       ok"), "{r}");
    let tilt = assert_expect_lines(&lines, "35", true);
    assert!(tilt > 5.0 && tilt <= 35.0, "{r}");
}

#[test]
fn an_expectation_not_met_fails_the_verdict_with_status_3() {
    let dir = TempDir::new("verdict-expect-failed");
    let strict = EXPECT.replace("max_tilt_deg = 35.0", "max_tilt_deg = 5.0");
    let r = run(&square_scenario(&dir, "strict.toml", &strict));
    assert_eq!(r.code(), 3, "{r}");
    assert_eq!(
        r.stderr, "lockstep run: the flight did not meet its expectations (see the verdict)\n",
        "{r}"
    );
    let summary = r.summary();
    let lines = verdict_lines(&summary);
    assert_eq!(lines.last(), Some(&"verdict       FAILED"), "{r}");
    // Only the tilt check fails; the flight is the same as with 35°.
    let tilt = assert_expect_lines(&lines, "5", false);
    assert!(tilt > 5.0, "{r}");
    let lenient = run(&square_scenario(&dir, "lenient.toml", EXPECT));
    assert_eq!(
        assert_expect_lines(&verdict_lines(&lenient.summary()), "35", true),
        tilt
    );
}
