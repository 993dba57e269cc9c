//! The engine's contracts: bitwise-identical logs for the same seed, stream
//! independence, complete logs on error, configuration errors.

use std::path::{Path, PathBuf};

use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::io::log::header;

fn scenario(edits: &[(&str, &str)]) -> Scenario {
    crate::common::example_scenario(edits)
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lockstep-{name}-{}.csv", std::process::id()))
}

/// Runs 20 s and returns the log's bytes.
fn run_log(s: &Scenario, name: &str) -> Vec<u8> {
    let path = tmp(name);
    let mut e = Engine::new(s, Path::new(crate::common::BUNDLED), Some(&path)).unwrap();
    let summary = e
        .run()
        .unwrap_or_else(|err| panic!("seed {}: {err}", s.seed));
    assert_eq!(summary.log_rows, 201, "20 s at 10 Hz, both ends included");
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    bytes
}

fn short(edits: &[(&str, &str)]) -> Scenario {
    let mut all = vec![("duration_s = 90.0", "duration_s = 20.0")];
    all.extend_from_slice(edits);
    scenario(&all)
}

#[test]
fn same_seed_gives_a_byte_identical_log_and_another_seed_does_not() {
    let a = run_log(&short(&[]), "det-a");
    let b = run_log(&short(&[]), "det-b");
    assert!(a == b, "two runs of the same scenario and seed differ");
    let c = run_log(&short(&[("seed = 7", "seed = 8")]), "det-c");
    assert!(a != c, "a different seed must change the run");
    let text = String::from_utf8(a).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), header(4, 1).join(","));
    let cols = header(4, 1).len();
    assert!(lines.all(|l| l.split(',').count() == cols));
}

/// The wind columns of a log.
fn wind_columns(log: &[u8]) -> Vec<String> {
    let text = String::from_utf8(log.to_vec()).unwrap();
    let h = header(4, 1);
    let k = h.iter().position(|c| c == "wind_n_mps").unwrap();
    text.lines()
        .skip(2)
        .map(|l| l.split(',').skip(k).take(3).collect::<Vec<_>>().join(","))
        .collect()
}

#[test]
fn silencing_one_sensor_stream_leaves_the_wind_sequence_unchanged() {
    let base = run_log(&short(&[]), "wind-a");
    // The magnetometer drops out from t = 0: its stream is never drawn. The
    // autopilot does not use the magnetometer, but the wind must not even
    // notice.
    let quiet = run_log(
        &short(&[(
            "[[events]]\nat_s = 1.0",
            "[[events]]\nat_s = 0.0\naction = \"sensor_dropout\"\nsensor = \"mag\"\n\n[[events]]\nat_s = 1.0",
        )]),
        "wind-b",
    );
    assert_eq!(wind_columns(&base), wind_columns(&quiet));
    // And the wind does vary: it is not trivially equal.
    let w = wind_columns(&base);
    assert!(w.first() != w.last());
}

#[test]
fn a_failing_autopilot_ends_the_run_with_its_error_and_a_complete_log() {
    // The fixture exports no mission upload: fly without a mission.
    let s = short(&[("mission = \"../missions/square.waypoints\"\n", "")]);
    let path = tmp("fail");
    let lib = crate::common::broken("step_error");
    let mut e = Engine::new(&s, &lib, Some(&path)).unwrap();
    let err = e.run().unwrap_err();
    assert!(
        matches!(
            err,
            EngineError::Abi(lockstep_abi::AbiError::StepFailed { time_us: 0, .. })
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "autopilot step at t = 0.000000 s failed with status {} (internal error): broken \
             fixture: simulated controller fault at 0 us",
            lockstep_abi::ffi::LOCKSTEP_AP_ERR_INTERNAL
        )
    );
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(text.lines().count(), 1, "the header, flushed: {text}");
}

#[test]
fn a_crash_in_destroy_after_the_flight_costs_no_row_of_the_log() {
    // The log is finished before the instance is destroyed: the crash in
    // destroy (isolated, the default) is the run's error, and every row of
    // the 20 s flight is on disk.
    let s = short(&[("mission = \"../missions/square.waypoints\"\n", "")]);
    let path = tmp("destroy");
    let mut e = Engine::new(&s, &crate::common::broken("destroy_segv"), Some(&path)).unwrap();
    let err = e.run().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in destroy"
    );
    assert_eq!(e.log().map(|l| l.rows()), Some(201));
    assert_eq!(e.log().and_then(|l| l.last_time_us()), Some(20_000_000));
    let log = crate::common::Log::read(&path);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(log.times_us(), crate::common::times(0, 20_000_000, 100_000));
}

#[test]
fn events_naming_parts_the_vehicle_lacks_are_refused() {
    let s = short(&[(
        "[[events]]\nat_s = 1.0",
        "[[events]]\nat_s = 5.0\naction = \"motor_fail\"\nmotor = 4\n\n[[events]]\nat_s = 1.0",
    )]);
    let err = Engine::new(&s, Path::new(crate::common::BUNDLED), None).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("key `events[0].motor`: motor 4, but iris has 4 motors, numbered 0 to 3"),
        "{err}"
    );
    let s = short(&[(
        "[[events]]\nat_s = 1.0",
        "[[events]]\nat_s = 5.0\naction = \"battery_disconnect\"\nbattery = 1\n\n[[events]]\nat_s = 1.0",
    )]);
    let err = Engine::new(&s, Path::new(crate::common::BUNDLED), None).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("key `events[0].battery`: battery 1, but iris has 1 battery, numbered 0"),
        "{err}"
    );
}

#[test]
fn stages_run_in_order_within_a_boundary() {
    // Arm at t = 1.000 s, an autopilot boundary: the scenario stage runs
    // before the autopilot stage, so the autopilot is armed at that boundary;
    // logging runs last, so that boundary's row shows it.
    let mut e = Engine::new(&short(&[]), Path::new(crate::common::BUNDLED), None).unwrap();
    loop {
        let t = e.step().unwrap().unwrap();
        if t.0 == 996_000 {
            assert_eq!(e.actuators().armed, 0, "not before the event");
        }
        if t.0 == 1_000_000 {
            assert_eq!(e.actuators().armed, 1, "armed at the event's own boundary");
            break;
        }
    }
    let log = String::from_utf8(run_log(&short(&[]), "order")).unwrap();
    let h = header(4, 1);
    let armed = h.iter().position(|c| c == "armed").unwrap();
    let at = |time: &str| {
        log.lines()
            .find(|l| l.starts_with(&format!("{time},")))
            .unwrap()
            .split(',')
            .nth(armed)
            .unwrap()
            .to_string()
    };
    assert_eq!(
        (at("900000"), at("1000000")),
        ("0".to_string(), "1".to_string())
    );
}

/// The log's column `name` at time `time_us`.
fn column(log: &str, name: &str, time_us: u64) -> f64 {
    let h = header(4, 1);
    let k = h.iter().position(|c| c == name).unwrap();
    let row = log
        .lines()
        .find(|l| l.starts_with(&format!("{time_us},")))
        .unwrap();
    row.split(',').nth(k).unwrap().parse().unwrap()
}

#[test]
fn faults_act_through_the_faults_stage() {
    // Battery disconnected at 8 s, in the climb: the bus dies, the fault bit is set.
    let log = String::from_utf8(run_log(
        &short(&[("[[events]]\nat_s = 1.0", "[[events]]\nat_s = 8.0\naction = \"battery_disconnect\"\nbattery = 0\n\n[[events]]\nat_s = 1.0")]),
        "fault-battery",
    ))
    .unwrap();
    assert!(column(&log, "bus_v", 7_900_000) > 10.0);
    assert_eq!(column(&log, "bus_v", 8_000_000), 0.0);
    assert_eq!(column(&log, "faults", 8_000_000) as u64, 1 << 20);
    assert_eq!(column(&log, "faults", 7_900_000) as u64, 0);

    // A +2 m north bias on the estimate while holding: the autopilot
    // corrects a position error that is not there, and the vehicle really
    // moves 2 m south.
    let hold = |extra: &str| {
        let s = short(&[(
            "[[events]]\nat_s = 2.0\naction = \"mission_start\"",
            &format!(
                "[[events]]\nat_s = 2.0\naction = \"mission_start\"\n\n[[events]]\nat_s = 8.0\naction = \"hold\"\n{extra}"
            ),
        )]);
        String::from_utf8(run_log(&s, "fault-bias")).unwrap()
    };
    let clean = hold("");
    let biased = hold(
        "\n[[events]]\nat_s = 9.0\naction = \"sensor_bias_step\"\nsensor = \"estimator\"\nvalue = 2.0\n",
    );
    let dn = column(&biased, "x_m", 19_000_000) - column(&clean, "x_m", 19_000_000);
    assert!((dn + 2.0).abs() < 0.3, "moved {dn} m north");
    assert_eq!(column(&biased, "faults", 19_000_000) as u64, 1 << (32 + 4));
}

/// The progress callback sees the simulated time every PROGRESS_EVERY
/// boundaries, in order, and cannot change the run: the log is the same
/// bytes as without it.
#[test]
fn progress_reports_increasing_times_and_leaves_the_run_unchanged() {
    let s = short(&[]);
    let plain = run_log(&s, "progress-plain");
    let path = tmp("progress-observed");
    let mut e = Engine::new(&s, Path::new(crate::common::BUNDLED), Some(&path)).unwrap();
    let mut seen = Vec::new();
    let summary = e.run_observed(|t| seen.push(t.0)).unwrap();
    let observed = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(plain == observed, "the progress callback changed the log");
    let every = u64::from(lockstep_harness::engine::PROGRESS_EVERY);
    assert_eq!(seen.len() as u64, summary.boundaries / every, "{seen:?}");
    // At 1 kHz physics boundary k (from 0) is at k ms: each call comes
    // after PROGRESS_EVERY more boundaries, and reports the last one done.
    let expected: Vec<u64> = (1..=seen.len() as u64)
        .map(|k| (k * every - 2) * 1000)
        .collect();
    assert_eq!(seen, expected);
}
