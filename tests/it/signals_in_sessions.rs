//! SIGINT and SIGTERM in `cosim` and `orchestrate`, as a terminal's Ctrl-C
//! or GNU `timeout` sends them: twice, to the whole process group. The run
//! stops before its next step with everything reached written (the record,
//! the vehicles' logs, `summary.json`) and exits 128 + signal; both were
//! killed outright, `orchestrate` leaving its out directory empty.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use signal_hook::consts::SIGINT;

use crate::common::{LOCKSTEP, Log, TempDir, sys, vehicles_system};

/// Runs `lockstep ARGS` in a process group of its own, waits until `ready`
/// holds (polled), then sends `signal` to the group twice, 5 ms apart;
/// (exit code, stderr).
fn interrupt_group(args: &[&str], ready: &dyn Fn() -> bool, signal: i32) -> (i32, String) {
    let child = Command::new(LOCKSTEP)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ready() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never ready: {args:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    sys::send_group(child.id(), signal).unwrap();
    std::thread::sleep(Duration::from_millis(5));
    sys::send_group(child.id(), signal).unwrap();
    let o = child.wait_with_output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// A two-vehicle system of the example's vehicle, 600 s long.
fn long_system(dir: &TempDir) -> std::path::PathBuf {
    vehicles_system(
        dir.path(),
        600.0,
        &[
            ("alpha", ""),
            ("bravo", "set = { \"vehicle.start_east_m\" = 20.0 }\n"),
        ],
    )
}

fn cosim_interrupted(name: &str, extra: &[&str], signal: i32) {
    let dir = TempDir::new(name);
    let system = long_system(&dir);
    let out = dir.join("out");
    let record = out.join("cosim.csv");
    let mut args = vec![
        "cosim",
        system.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--isolation",
        "in-process",
    ];
    args.extend_from_slice(extra);
    // Running: the record has rows.
    let ready = || std::fs::metadata(&record).is_ok_and(|m| m.len() > 4096);
    let (code, stderr) = interrupt_group(&args, &ready, signal);
    assert_eq!(code, 128 + signal, "{stderr}");
    let s = summary(&out);
    let name = if signal == SIGINT {
        "SIGINT (interrupted)"
    } else {
        "SIGTERM (terminated)"
    };
    let error = s["error"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("interrupted by {name} at t = ")),
        "{s}"
    );
    assert_eq!(s["exit_status"], 128 + signal);
    assert!(
        stderr.ends_with(&format!("lockstep cosim: {error}\n")),
        "the last line is the summary's: {stderr}"
    );
    let reached = s["reached_us"].as_u64().unwrap();
    assert!(reached > 0 && reached < 600_000_000, "{s}");
    // Every vehicle finished its log to the time reached.
    for v in ["alpha", "bravo"] {
        let meta: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("{v}.csv.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(meta["complete"], true, "{v}: {meta}");
        let last = Log::read(&out.join(format!("{v}.csv")))
            .last_time_us()
            .unwrap();
        assert!(
            last <= reached && reached - last < 100_000,
            "{v}: {last} vs {reached}"
        );
    }
    assert_eq!(
        s["record_digest"].as_str().unwrap(),
        lockstep_harness::io::digest::file_digest(&record).unwrap(),
        "the record is closed as the summary says"
    );
}

#[test]
fn sigint_twice_to_the_group_stops_a_cosimulation_with_everything_written() {
    cosim_interrupted("cosim-sigint", &[], SIGINT);
}

#[cfg(feature = "distributed")]
#[test]
fn sigterm_stops_a_cosimulation_whose_participant_is_a_process() {
    // The participant's server is in a group of its own: the signal to
    // this group reaches only the run, which ends its server.
    cosim_interrupted(
        "cosim-sigterm-process",
        &["--process", "bravo"],
        signal_hook::consts::SIGTERM,
    );
}

/// A signal while a participant served elsewhere is awaited ends the wait
/// at once (the run waited out its 60 s network wait before seeing it).
#[cfg(feature = "distributed")]
#[test]
fn a_signal_while_a_participant_is_awaited_ends_the_wait() {
    let dir = TempDir::new("cosim-sigint-wait");
    let system = long_system(&dir);
    let out = dir.join("out");
    let started = Instant::now();
    let ready = || started.elapsed() > Duration::from_millis(800);
    let (code, stderr) = interrupt_group(
        &[
            "cosim",
            system.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--isolation",
            "in-process",
            "--remote",
            "bravo",
        ],
        &ready,
        SIGINT,
    );
    assert_eq!(code, 128 + SIGINT, "{stderr}");
    assert!(
        stderr.ends_with(
            "lockstep cosim: interrupted by SIGINT (interrupted) while its participants were \
             started or awaited, before the first step\n"
        ),
        "{stderr}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn sigint_twice_to_the_group_stops_an_orchestration_with_its_summary() {
    let dir = TempDir::new("orchestrate-sigint");
    let file =
        crate::orchestrate::fleet_file(&dir, &[("duration_s = 900.0", "duration_s = 90000.0")]);
    let out = dir.join("out");
    let started = Instant::now();
    let ready = || started.elapsed() > Duration::from_millis(1500);
    let (code, stderr) = interrupt_group(
        &[
            "orchestrate",
            file.to_str().unwrap(),
            "--isolation",
            "in-process",
            "--trace",
            "-o",
            out.to_str().unwrap(),
        ],
        &ready,
        SIGINT,
    );
    assert_eq!(code, 128 + SIGINT, "{stderr}");
    let s = summary(&out);
    let error = s["error"].as_str().unwrap();
    assert!(
        error.starts_with("interrupted by SIGINT (interrupted) "),
        "{s}"
    );
    assert_eq!(s["exit_status"], 128 + SIGINT);
    assert!(stderr.contains(error), "{stderr}");
    let last = s["last_timestamp"].as_u64().unwrap();
    assert!(last < 900_000, "stopped early: {s}");
    // The models were finished, and the trace holds every call made.
    assert!(s["models"]["kpi"].is_object(), "{s}");
    let trace = std::fs::read_to_string(out.join("trace.jsonl")).unwrap();
    assert_eq!(
        trace.lines().count() as u64,
        s["stats"]["calls"].as_u64().unwrap()
    );
}
