//! Record a run, replay it without autopilot or randomness: the plant
//! trajectory is reproduced to the last bit; mismatches are refused.

use std::path::{Path, PathBuf};

use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::io::record::{EndStatus, RecordError, Replay};
use lockstep_plant::AircraftSpec;

fn scenario(edits: &[(&str, &str)]) -> Scenario {
    let mut all = vec![("duration_s = 90.0", "duration_s = 30.0")];
    all.extend_from_slice(edits);
    crate::common::example_scenario(&all)
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("lockstep-rec-{name}-{}.bin", std::process::id()))
}

/// Runs with recording; returns the state bits at every boundary.
fn record(s: &Scenario, path: &Path) -> Vec<(u64, Vec<u64>)> {
    let mut e = Engine::new(s, Path::new(crate::common::BUNDLED), None).unwrap();
    e.record_to(path).unwrap();
    let mut states = Vec::new();
    while let Some(t) = e.step().unwrap() {
        states.push((t.0, e.state().iter().map(|v| v.to_bits()).collect()));
    }
    e.run().unwrap();
    states
}

fn replay(path: &Path, spec: Option<&AircraftSpec>) -> Result<Vec<(u64, Vec<u64>)>, RecordError> {
    let mut states = Vec::new();
    Replay::open(path, spec)?
        .run(|t, x| states.push((t.0, x.iter().map(|v| v.to_bits()).collect())))?;
    Ok(states)
}

#[test]
fn replay_reproduces_the_trajectory_bit_for_bit_fixed_step_and_event_driven() {
    for (name, edits) in [
        ("rk4", vec![]),
        (
            "dp54",
            vec![(
                "integrator = \"rk4\"",
                "integrator = \"dp54\"\nengine = \"event_driven\"",
            )],
        ),
        (
            "octa-fault",
            vec![
                ("spec = \"iris\"", "spec = \"octa\""),
                (
                    "[[events]]\nat_s = 1.0",
                    "[[events]]\nat_s = 12.0\naction = \"motor_fail\"\nmotor = 2\n\n[[events]]\nat_s = 1.0",
                ),
            ],
        ),
    ] {
        let path = tmp(name);
        let recorded = record(&scenario(&edits), &path);
        assert_eq!(
            Replay::open(&path, None).unwrap().end_status(),
            &EndStatus::Completed,
            "{name}"
        );
        let replayed = replay(&path, None).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(recorded.len(), replayed.len(), "{name}");
        assert!(
            recorded.len() > 7000,
            "{name}: {} boundaries",
            recorded.len()
        );
        for (a, b) in recorded.iter().zip(&replayed) {
            assert_eq!(a, b, "{name}: first difference at t = {} us", a.0);
        }
    }
}

#[test]
fn two_recordings_of_the_same_run_are_byte_identical() {
    let (a, b) = (tmp("same-a"), tmp("same-b"));
    record(&scenario(&[]), &a);
    record(&scenario(&[]), &b);
    let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_file(&b).unwrap();
    assert!(
        x == y && x.len() > 100_000,
        "{} vs {} bytes",
        x.len(),
        y.len()
    );
}

#[test]
fn replay_refuses_other_parameters_other_schemas_and_damaged_files() {
    let path = tmp("refuse");
    let boundaries = record(&scenario(&[]), &path).len() as u64;
    // The same spec is accepted; a heavier one is refused, naming the key.
    let iris = AircraftSpec::builtin("iris").unwrap();
    assert!(replay(&path, Some(&iris)).is_ok());
    let mut heavy = iris.clone();
    heavy.body.mass_kg = 1.6;
    match replay(&path, Some(&heavy)) {
        Err(RecordError::ParameterMismatch { keys, .. }) => assert_eq!(keys, ["body.mass_kg"]),
        other => panic!("{other:?}"),
    }
    let bytes = std::fs::read(&path).unwrap();
    // Another format version (1 is the unframed format this build refuses).
    for version in [1u32, 3] {
        let mut edited = bytes.clone();
        edited[16..20].copy_from_slice(&version.to_le_bytes());
        std::fs::write(&path, &edited).unwrap();
        match replay(&path, None) {
            Err(
                e @ RecordError::SchemaMismatch {
                    found, expected: 2, ..
                },
            ) if found == version => {
                assert!(
                    e.to_string().ends_with(&format!(
                        "has format version {version}; this build reads version 2"
                    )),
                    "{e}"
                )
            }
            other => panic!("{other:?}"),
        }
    }
    // Not a recording at all.
    std::fs::write(&path, b"time_us,x\n0,1\n").unwrap();
    assert!(matches!(
        replay(&path, None),
        Err(RecordError::NotARecording { .. })
    ));
    // The embedded spec edited (mass 1.5 -> 1.6, same length): the header
    // block's checksum refuses it before the spec hash is looked at.
    // (Byte offsets: the file is binary, not UTF-8.)
    let needle = b"mass_kg = 1.5";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the spec is embedded as text");
    let mut edited = bytes.clone();
    edited[at + "mass_kg = 1.".len()] = b'6';
    std::fs::write(&path, &edited).unwrap();
    match replay(&path, None) {
        Err(e @ RecordError::HeaderCrc { .. }) => assert_eq!(
            e.to_string(),
            format!(
                "recording {}: the header block fails its checksum (payload); the file is damaged",
                path.display()
            )
        ),
        other => panic!("{other:?}"),
    }
    // Cut inside the end block: the records are all there, the end marker
    // is not.
    std::fs::write(&path, &bytes[..bytes.len() - 7]).unwrap();
    assert!(
        matches!(
            replay(&path, None),
            Err(RecordError::Unfinished { records, last_time_us: 30_000_000, .. })
                if records == boundaries
        ),
        "{:?}",
        replay(&path, None).err()
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn recording_must_start_before_the_first_step() {
    let mut e = Engine::new(&scenario(&[]), Path::new(crate::common::BUNDLED), None).unwrap();
    e.step().unwrap();
    let err = e.record_to(&tmp("late")).unwrap_err();
    assert!(
        matches!(
            err,
            lockstep_harness::engine::EngineError::RecordTooLate { now_us: 0, .. }
        ),
        "{err}"
    );
    assert!(!tmp("late").exists(), "nothing is created");
}

/// `replay --compare LOG` of a fresh recording finds every logged row and
/// no difference at all; another integrator replays the same inputs open
/// loop and drifts, reported per group.
#[test]
fn replay_compare_reports_zero_difference_for_a_fresh_recording() {
    let dir = crate::common::TempDir::new("replay-compare");
    let (rec, log) = (dir.join("r.lsrec"), dir.join("r.csv"));
    let r = crate::common::lockstep(&[
        "fly",
        "--duration",
        "20",
        "--quiet",
        "--record",
        rec.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let compare = |extra: &[&str]| {
        let mut args = vec![
            "replay",
            rec.to_str().unwrap(),
            "--compare",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let r = crate::common::lockstep(&args);
        assert_eq!(r.code(), 0, "{r}");
        let max: Vec<f64> = r
            .stdout
            .lines()
            .filter_map(|l| l.strip_prefix("  max |diff|  "))
            .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
            .collect();
        assert_eq!(max.len(), 4, "{r}");
        (r.stdout, max)
    };
    let (out, max) = compare(&[]);
    assert!(out.contains("\nintegrator    rk4\n"), "{out}");
    assert!(
        out.contains(&format!(
            "\ncompared      201 rows of {} (0 not reached)\n",
            log.display()
        )),
        "{out}"
    );
    assert_eq!(max, [0.0; 4]);
    let (out, euler) = compare(&["--integrator", "euler"]);
    assert!(out.contains("\nintegrator    euler\n"), "{out}");
    assert!(euler[0] > 1e-3, "{euler:?}");
    let r = crate::common::lockstep(&["replay", rec.to_str().unwrap(), "--integrator", "rk5"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        "lockstep replay: --integrator rk5: not one of euler, rk4, bs32, dp54\n"
    );
}

/// `replay --log` writes the `fly` columns: the truth, position, motor
/// commands and wind equal the flight's own log cell for cell; the
/// autopilot's columns are NaN; the sidecar has no seed.
#[test]
fn replay_log_has_the_fly_columns_and_the_same_truth() {
    let dir = crate::common::TempDir::new("replay-log");
    let (rec, fly_log, replay_log) = (
        dir.join("r.lsrec"),
        dir.join("fly.csv"),
        dir.join("replay.csv"),
    );
    let r = crate::common::lockstep(&[
        "fly",
        "--duration",
        "15",
        "--quiet",
        "--record",
        rec.to_str().unwrap(),
        "--log",
        fly_log.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let r = crate::common::lockstep(&[
        "replay",
        rec.to_str().unwrap(),
        "--log",
        replay_log.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout.contains(&format!(
            "\nlog           {} (151 rows)\n",
            replay_log.display()
        )),
        "{r}"
    );
    let (a, b) = (
        crate::common::Log::read(&fly_log),
        crate::common::Log::read(&replay_log),
    );
    assert_eq!(a.columns, b.columns);
    assert_eq!(a.rows.len(), b.rows.len());
    let col = |l: &crate::common::Log, n: &str| -> Vec<String> {
        let i = l.columns.iter().position(|c| c == n).unwrap();
        l.rows.iter().map(|r| r[i].clone()).collect()
    };
    for n in [
        "time_us",
        "x_m",
        "y_m",
        "z_m",
        "vx_mps",
        "qw",
        "qz",
        "r_radps",
        "lat_deg",
        "lon_deg",
        "alt_m",
        "motor0",
        "motor3",
        "rotor2_radps",
        "wind_e_mps",
        "battery0_soc",
    ] {
        assert_eq!(col(&a, n), col(&b, n), "{n}");
    }
    assert!(col(&b, "est_x_m").iter().all(|v| v == "NaN"));
    assert!(col(&b, "sp_thrust_n").iter().all(|v| v == "NaN"));
    let meta = b.meta.expect("a sidecar");
    assert_eq!(meta["seed"], serde_json::Value::Null);
    assert_eq!(meta["rows"], 151);
    assert_eq!(meta["complete"], true);
    assert_eq!(meta["scenario"], rec.to_str().unwrap());
}

/// `replay --log`'s errors: a rate whose period is not whole microseconds,
/// and a log that would overwrite the recording.
#[test]
fn replay_log_refuses_a_bad_rate_and_overwriting_the_recording() {
    let dir = crate::common::TempDir::new("replay-log-errors");
    let rec = dir.join("r.lsrec");
    let r = crate::common::lockstep(&[
        "fly",
        "--duration",
        "2",
        "--quiet",
        "--record",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let log = dir.join("x.csv");
    let r = crate::common::lockstep(&[
        "replay",
        rec.to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
        "--log-rate",
        "3",
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        "lockstep replay: --log-rate: cadence `log`: 0.3333333333333333 s is not a whole number \
         of microseconds; nearest valid: 333333 us or 333334 us\n"
    );
    assert!(!log.exists());
    let r = crate::common::lockstep(&[
        "replay",
        rec.to_str().unwrap(),
        "--log",
        rec.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep replay: --log {} is the recording; refusing to overwrite an input\n",
            rec.display()
        )
    );
    // The recording is intact: it still replays.
    let r = crate::common::lockstep(&["replay", rec.to_str().unwrap()]);
    assert_eq!(r.code(), 0, "{r}");
}
