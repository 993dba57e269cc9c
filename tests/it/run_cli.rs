//! `lockstep run` as a user runs it.

use std::process::Command;

fn lockstep(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(args)
        .output()
        .expect("run lockstep");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_default_flight_finishes_its_mission_and_writes_its_log() {
    let log = std::env::temp_dir().join(format!("lockstep-run-cli-{}.csv", std::process::id()));
    let (code, out, err) = lockstep(&["run", "--log", log.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(err, "", "{out}");
    // The header: the scenario, its description, the autopilot (isolated,
    // the default mode), the vehicle, the seed.
    assert!(
        out.starts_with(&format!(
            "scenario      {}/examples/scenarios/square.toml\n              Iris, square mission, \
             OU wind, noisy delayed estimates\nautopilot     {}\nvehicle       iris (4 rotors)\n\
             seed          7\n",
            env!("CARGO_MANIFEST_DIR"),
            lockstep_c_examples::REFERENCE_AUTOPILOT
        )),
        "{out}"
    );
    assert!(
        out.contains("simulated     90.000 s in 90001 boundaries"),
        "{out}"
    );
    assert!(
        out.contains("final         mode disarmed (not armed)"),
        "{out}"
    );
    assert!(out.contains("mission       finished"), "{out}");
    assert!(
        out.contains(&format!(
            "\nlog           {} (901 rows, the last at t = 90.000000 s)\n",
            log.display()
        )),
        "{out}"
    );
    // No expectations, no crash: the verdict is ok, and last.
    assert!(!out.contains("\ncrash "), "{out}");
    assert!(!out.contains("\nexpect "), "{out}");
    assert!(out.ends_with("\nverdict       ok\n"), "{out}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text.lines().count(),
        902,
        "the header on line 1, then the rows"
    );
    // The sidecar: what the header cannot say, and the finished log's digest.
    let mut sidecar = log.as_os_str().to_owned();
    sidecar.push(".json");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sidecar).unwrap()).unwrap();
    assert_eq!(meta["log_schema_version"], 3);
    assert_eq!(meta["spec"], "iris");
    assert_eq!(meta["seed"], 7);
    assert_eq!(meta["complete"], true);
    assert_eq!(meta["rows"], 901);
    assert_eq!(meta["last_time_us"], 90_000_000);
    assert_eq!(
        meta["digest"],
        lockstep_harness::io::digest::file_digest(&log).unwrap()
    );
    assert_eq!(meta["origin"]["lat_deg"], 47.397742);
    assert_eq!(meta["modes"]["4"], "mission");
    assert_eq!(meta["fault_bits"]["0"], "motor 0 failed");
    let unit = |name: &str| {
        meta["columns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["unit"].as_str().unwrap().to_string())
    };
    assert_eq!(unit("lat_deg").as_deref(), Some("deg"));
    assert_eq!(unit("bus_a").as_deref(), Some("A"));
    // The geodetic columns agree with the NED ones: the first row is at
    // the origin, on the ground.
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let first: Vec<&str> = text.lines().nth(1).unwrap().split(',').collect();
    let col = |n: &str| -> f64 {
        first[header.iter().position(|h| *h == n).unwrap()]
            .parse()
            .unwrap()
    };
    // Through ECEF and back: equal to rounding (1e-12 degrees is 0.1 um).
    assert!(
        (col("lat_deg") - 47.397742).abs() < 1e-12,
        "{}",
        col("lat_deg")
    );
    assert!(
        (col("lon_deg") - 8.545594).abs() < 1e-12,
        "{}",
        col("lon_deg")
    );
    assert!((col("alt_m") - (488.0 - col("z_m"))).abs() < 1e-6);
    std::fs::remove_file(&log).unwrap();
    std::fs::remove_file(&sidecar).unwrap();
}

#[test]
fn bad_scenarios_are_reported_with_exit_status_2() {
    let (code, _, err) = lockstep(&["run", "/nonexistent/scenario.toml"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("lockstep run: cannot read scenario /nonexistent/scenario.toml"),
        "{err}"
    );
    let dir = std::env::temp_dir().join(format!("lockstep-run-cli-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "schema_version = 1\n[simulation]\nduration_s = 1.0\n[cadences]\nautopilot = { rate_hz = 120 }\n[vehicle]\nspec = \"iris\"\n").unwrap();
    let (code, _, err) = lockstep(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains(&format!(
            "{}:5:1: key `cadences.autopilot`: 0.008333333333333333 s is not a whole number of \
             microseconds; nearest valid: 8000 us or 9000 us",
            bad.display()
        )),
        "{err}"
    );
    let nolog = dir.join("nolog.toml");
    std::fs::write(
        &nolog,
        "schema_version = 1\n[simulation]\nduration_s = 1.0\n[vehicle]\nspec = \"iris\"\n",
    )
    .unwrap();
    let (code, _, err) = lockstep(&["run", nolog.to_str().unwrap(), "--log", "/tmp/x.csv"]);
    assert_eq!(code, 2);
    assert!(err.contains("has no `log` cadence"), "{err}");
}

#[test]
fn the_in_process_mode_is_named_on_the_autopilot_line() {
    let dir = std::env::temp_dir().join(format!("lockstep-run-cli-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let short = dir.join("short.toml");
    std::fs::write(
        &short,
        "schema_version = 1\n[simulation]\nduration_s = 0.5\n[vehicle]\nspec = \"iris\"\n",
    )
    .unwrap();
    let bundled = lockstep_c_examples::REFERENCE_AUTOPILOT;
    for (mode, line) in [
        ("process", format!("\nautopilot     {bundled}\n")),
        (
            "in-process",
            format!("\nautopilot     {bundled} (in-process)\n"),
        ),
    ] {
        let (code, out, err) = lockstep(&["run", short.to_str().unwrap(), "--isolation", mode]);
        assert_eq!(code, 0, "{mode}: {out}{err}");
        // No description: the autopilot line follows the scenario's.
        assert!(
            out.starts_with(&format!("scenario      {}{line}", short.display())),
            "{mode}: {out}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_recorded_run_replays_to_the_same_final_position() {
    let rec = std::env::temp_dir().join(format!("lockstep-run-cli-rec-{}.bin", std::process::id()));
    let (code, out, err) = lockstep(&["run", "--record", rec.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, replayed, err) = lockstep(&["replay", rec.to_str().unwrap(), "--spec", "iris"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        replayed.contains("replayed      90.000 s in 90001 boundaries"),
        "{replayed}"
    );
    let (code, _, err) = lockstep(&["replay", rec.to_str().unwrap(), "--spec", "hexa"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "was made with other model parameters than the spec given for replay; differing keys:"
        ),
        "{err}"
    );
    std::fs::remove_file(&rec).unwrap();
    // The run's final position and the replay's agree (both printed).
    let pos = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("position"))
            .map(str::to_string)
            .unwrap()
    };
    let run_n: f64 = pos(&out)
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    let rep_n: f64 = pos(&replayed)
        .split_whitespace()
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    assert!((run_n - rep_n).abs() < 0.006, "{run_n} vs {rep_n}");
}
