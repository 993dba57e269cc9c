//! Co-simulation participants in their own processes over zenoh (feature
//! `distributed`): the same record, byte for byte, as in one process; a
//! participant process killed (kill -9) or stopped (SIGSTOP) ends the run
//! within the lease, naming it, with the record written to the last step.
#![cfg(feature = "distributed")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::sys as sig;
use crate::common::{BUNDLED, LOCKSTEP, TempDir, signal_its_child};

fn system(dir: &TempDir, duration: &str) -> PathBuf {
    let src = crate::common::examples().join("cosim");
    let text = std::fs::read_to_string(src.join("radio_swarm.toml"))
        .unwrap()
        .replacen("duration_s = 45.0", &format!("duration_s = {duration}"), 1);
    // The system's files, beside it.
    std::fs::copy(src.join("vehicle.toml"), dir.join("vehicle.toml")).unwrap();
    std::fs::create_dir_all(dir.join("missions")).unwrap();
    for e in std::fs::read_dir(src.join("missions")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join("missions").join(e.file_name())).unwrap();
    }
    let p = dir.join("swarm.toml");
    std::fs::write(&p, text).unwrap();
    p
}

fn cosim(system: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut c = Command::new(LOCKSTEP);
    c.args([
        "cosim",
        "--isolation",
        "in-process",
        "--autopilot",
        BUNDLED,
        "-q",
        "-o",
    ])
    .arg(out)
    .arg(system)
    .args(["--network-lease", "1"])
    .args(extra);
    c
}

#[test]
fn participants_in_their_own_processes_give_the_same_record() {
    let dir = TempDir::new("cosim-proc-same");
    let s = system(&dir, "6.0");
    for (out, extra) in [
        ("here", vec![]),
        ("apart", vec!["--process", "bravo", "--process", "delta"]),
    ] {
        let o = cosim(&s, &dir.join(out), &extra).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // bravo's log is written by its own process, into the same --out.
    for f in ["cosim.csv", "alpha.csv", "bravo.csv"] {
        let a = std::fs::read(dir.join("here").join(f)).unwrap();
        let b = std::fs::read(dir.join("apart").join(f)).unwrap();
        assert!(a.len() > 1000 && a == b, "{f} differs");
    }
}

/// A slung load alone, its attachment point held where `start` puts it
/// (no transfer writes it): it hangs 2 m below it, in one process or in a
/// process of its own (which is sent every input each step).
#[test]
fn an_fmu_input_nothing_writes_keeps_its_start_value_in_its_own_process() {
    let dir = TempDir::new("cosim-proc-start");
    let s = dir.join("load.toml");
    std::fs::write(
        &s,
        r#"schema_version = 1
[cosim]
step_us = 4000
duration_s = 2.0
record_period_us = 100000
record = ["load.load_down_m"]
[[participants]]
name = "load"
kind = "fmu"
path = "bundled:slung_load"
start = { vehicle_down_m = -12.0, load_mass_kg = 0.5, length_m = 2.0 }
"#,
    )
    .unwrap();
    for (out, extra) in [("here", vec![]), ("apart", vec!["--process", "load"])] {
        let o = cosim(&s, &dir.join(out), &extra).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(dir.join(out).join("cosim.csv")).unwrap();
        let last: f64 = text
            .lines()
            .last()
            .and_then(|l| l.split(',').nth(1))
            .unwrap()
            .parse()
            .unwrap();
        // 2 m below the attachment at -12 m, plus the tether's static
        // stretch (m g / k, well under a metre).
        assert!((-10.0..-9.0).contains(&last), "{out}: load down {last}");
    }
    assert_eq!(
        std::fs::read(dir.join("here/cosim.csv")).unwrap(),
        std::fs::read(dir.join("apart/cosim.csv")).unwrap()
    );
}

#[test]
fn a_participant_process_that_cannot_start_is_reported_at_once() {
    let dir = TempDir::new("cosim-proc-setup");
    let s = dir.join("load.toml");
    std::fs::write(
        &s,
        r#"schema_version = 1
[cosim]
step_us = 4000
duration_s = 1.0
[[participants]]
name = "load"
kind = "fmu"
path = "missing.fmu"
"#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let o = cosim(&s, &dir.join("out"), &["--process", "load"])
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    // The child says why; the run names the child's end, well before the
    // 60 s it would wait for a participant that is still starting.
    assert!(
        stderr.contains(&format!(
            "lockstep participant-host: participant `load`: cannot read {}: ",
            dir.join("missing.fmu").display()
        )) && stderr.contains(
            "lockstep cosim: participant `load`: the process of participant `load` (pid "
        ) && stderr.contains(") ended before it served: exit status: 2"),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

fn lose_a_participant(name: &str, signal: i32) {
    let dir = TempDir::new(name);
    let s = system(&dir, "3600.0");
    let out = dir.join("out");
    let r = signal_its_child(
        cosim(&s, &out, &["--process", "charlie"]).stdout(Stdio::null()),
        "lockstep cosim: participant `charlie` runs in process ",
        signal,
    );
    let (pid, status, noticed, rest) = (r.pid, r.status, r.noticed, r.stderr);
    assert_eq!(status.code(), Some(1), "{rest:?}");
    // Noticed (the process reaped) within the lease (1 s) plus zenoh's
    // detection; the run's end after it writes the outputs, which a debug
    // build on a busy machine takes seconds over (not the lease's concern).
    assert!(
        noticed < Duration::from_secs(3),
        "noticed after {noticed:?}"
    );
    let last = rest.last().cloned().unwrap_or_default();
    assert!(
        last.starts_with("lockstep cosim: participant `charlie` failed in step at ")
            && last.contains(&format!(
                "the process of participant `charlie` (pid {pid}) left: its liveliness token vanished"
            )),
        "{last}"
    );
    // The record holds every step up to the failure: it ran a while (how
    // far in the 2.5 s before the signal depends on the machine's load:
    // 17 rows, not the 20 this asked for, on a loaded one), and its rows
    // are exactly those of the time reached.
    let record = std::fs::read_to_string(out.join("cosim.csv")).unwrap();
    let rows = record.lines().count();
    assert!(rows > 3, "{rows} rows");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let reached = s["reached_us"].as_u64().unwrap();
    // A row every 100 ms (the file's record period), from time 0.
    assert_eq!(
        (rows - 1) as u64,
        reached / 100_000 + 1,
        "rows vs reached {reached}"
    );
    assert!(
        sig::send(pid, 0).is_err(),
        "charlie's process {pid} is still there"
    );
}

#[test]
fn a_killed_participant_process_ends_the_run_within_the_lease() {
    lose_a_participant("cosim-proc-kill", libc::SIGKILL);
}

#[test]
fn a_stopped_participant_process_ends_the_run_within_the_lease() {
    lose_a_participant("cosim-proc-stop", libc::SIGSTOP);
}
