//! How `lockstep run` ends when the world around it misbehaves: SIGINT and
//! SIGTERM stop it at the next boundary with everything written (status
//! 128 + signal); a log another run is writing is refused; a closed stdout
//! loses the summary, not the run; a log that cannot be written mid-run
//! stops the run naming the path and the time of the first row lost, and
//! leaves whole rows.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::*;
use signal_hook::consts::{SIGINT, SIGTERM, SIGXFSZ};

/// Starts `lockstep run SCENARIO --log LOG EXTRA...` with its output piped
/// and waits until it has printed its `seed` line (the log is open and
/// locked, the signal handlers installed, the flight about to start).
/// Returns the child and what it printed so far.
fn start(
    scenario: &Path,
    log: &Path,
    extra: &[&str],
) -> (Child, BufReader<std::process::ChildStdout>, String) {
    let mut child = Command::new(LOCKSTEP)
        .arg("run")
        .arg(scenario)
        .arg("--log")
        .arg(log)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut head = String::new();
    while !head.contains("\nseed ") {
        let n = out.read_line(&mut head).unwrap();
        assert!(n > 0, "the run ended before its flight: {head}");
    }
    (child, out, head)
}

/// Sends `signal` to `child` and collects how it ended.
fn stop(child: Child, out: BufReader<std::process::ChildStdout>, head: String, signal: i32) -> Ran {
    sys::send(child.id(), signal).unwrap();
    collect(child, out, head)
}

/// Reads what `child` prints until it ends, and how it ended.
fn collect(mut child: Child, mut out: BufReader<std::process::ChildStdout>, head: String) -> Ran {
    let mut stdout = head;
    out.read_to_string(&mut stdout).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Ran {
        status: child.wait().unwrap(),
        stdout,
        stderr,
        wall: Duration::ZERO,
    }
}

/// Interrupts a long flight after about a second with `signal`: status
/// 128 + signal, one line naming the signal and the time, the log complete
/// up to that time with whole rows, its last row the one the summary names.
fn assert_interrupted(signal: i32, name: &str, isolation: &str) {
    let dir = TempDir::new(&format!("signal-{signal}-{isolation}"));
    let scenario = idle_scenario(dir.path(), "long.toml", 3000.0, 10);
    let log = dir.join("log.csv");
    let (child, out, head) = start(&scenario, &log, &["--isolation", isolation]);
    std::thread::sleep(Duration::from_secs(1));
    let r = stop(child, out, head, signal);
    assert_eq!(r.code(), 128 + signal, "{r}");
    let prefix = format!("lockstep run: interrupted by {name} at t = ");
    let at = r
        .stderr
        .strip_prefix(&prefix)
        .and_then(|s| s.strip_suffix(" s\n"))
        .unwrap_or_else(|| panic!("one line `{prefix}... s`: {r}"));
    assert!(!at.contains('\n'), "{r}");
    let at_us = micros(at);
    assert!(at_us > 0 && at_us < 3_000_000_000, "{r}");
    let (rows, last) = summary_log_line(&r.summary(), &log);
    assert_eq!(
        r.summary(),
        format!(
            "{}log           {} ({rows} rows, the last at t = {}.{:06} s)\n",
            idle_header(&scenario, Path::new(BUNDLED), isolation == "in-process"),
            log.display(),
            last.unwrap() / 1_000_000,
            last.unwrap() % 1_000_000
        ),
        "{r}"
    );
    let l = Log::read(&log);
    assert_eq!(l.rows.len() as u64, rows);
    assert_eq!(l.last_time_us(), last);
    assert_eq!(l.times_us(), times(0, last.unwrap(), 100_000));
    assert_eq!(
        last.unwrap(),
        at_us - at_us % 100_000,
        "the last row is the last log boundary processed"
    );
}

#[test]
fn sigint_stops_an_isolated_run_with_everything_written() {
    assert_interrupted(SIGINT, "SIGINT (interrupted)", "process");
}

#[test]
fn sigterm_stops_an_isolated_run_with_everything_written() {
    assert_interrupted(SIGTERM, "SIGTERM (terminated)", "process");
}

#[test]
fn sigint_stops_an_in_process_run_with_everything_written() {
    assert_interrupted(SIGINT, "SIGINT (interrupted)", "in-process");
}

#[test]
fn a_log_another_run_is_writing_is_refused_and_left_alone() {
    let dir = TempDir::new("locked");
    let scenario = idle_scenario(dir.path(), "long.toml", 3000.0, 10);
    let log = dir.join("log.csv");
    let (child, out, head) = start(&scenario, &log, &[]);
    let second = lockstep(&[Path::new("run"), &scenario, Path::new("--log"), &log]);
    assert_eq!(second.code(), 2, "{second}");
    assert_eq!(
        second.stderr,
        format!(
            "lockstep run: flight log: {} is locked: another run is writing it\n",
            log.display()
        ),
        "{second}"
    );
    assert_eq!(second.stdout, "", "{second}");
    // The first run goes on, and its log is whole: the refused run did not
    // empty it.
    std::thread::sleep(Duration::from_millis(300));
    let first = stop(child, out, head, SIGTERM);
    assert_eq!(first.code(), 128 + SIGTERM, "{first}");
    assert!(
        first
            .stdout
            .starts_with(&idle_header(&scenario, Path::new(BUNDLED), false)),
        "{first}"
    );
    let (rows, last) = summary_log_line(&first.summary(), &log);
    let l = Log::read(&log);
    assert_eq!(l.rows.len() as u64, rows);
    assert_eq!(l.times_us(), times(0, last.unwrap(), 100_000));
}

#[test]
fn a_closed_stdout_does_not_end_the_run() {
    let dir = TempDir::new("closed-stdout");
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 10);
    let log = dir.join("log.csv");
    // `lockstep run | head -c 10`, with the reader gone before the first line.
    let mut child = Command::new(LOCKSTEP)
        .arg("run")
        .arg(&scenario)
        .arg("--log")
        .arg(&log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert_eq!(stderr, "", "no panic, no complaint");
    assert_eq!(Log::read(&log).times_us(), times(0, 8_000_000, 100_000));
}

#[test]
fn a_log_that_cannot_be_written_mid_run_stops_it_on_a_whole_row() {
    const LIMIT: u64 = 300_000;
    let dir = TempDir::new("fsize");
    let scenario = idle_scenario(dir.path(), "mid.toml", 300.0, 10);
    let log = dir.join("log.csv");
    let mut cmd = Command::new(LOCKSTEP);
    // In-process: the isolated mode's shared memory (a memfd of about
    // 4 MB) counts against RLIMIT_FSIZE too, and its host could not start.
    cmd.arg("run")
        .arg(&scenario)
        .arg("--log")
        .arg(&log)
        .args(["--isolation", "in-process"]);
    // SAFETY: the closure runs in the child between fork and exec and only
    // calls setrlimit and signal, which are async-signal-safe. SIGXFSZ
    // ignored makes a write past the limit fail with EFBIG instead of
    // killing the process.
    unsafe {
        cmd.pre_exec(|| {
            sys::limit_file_size(LIMIT)?;
            sys::no_core_dumps()?;
            sys::ignore(SIGXFSZ)
        });
    }
    let r = ran(&mut cmd);
    assert_eq!(r.code(), 1, "{r}");
    let l = Log::read(&log);
    assert!(l.text.len() as u64 <= LIMIT);
    let last_on_disk = l.last_time_us().expect("rows before the limit");
    assert_eq!(l.times_us(), times(0, last_on_disk, 100_000));
    assert!(last_on_disk < 300_000_000, "the run stopped early");
    // The first row lost is the one after the last on disk. The log is not
    // "written up to there": no stop line, and the summary says so.
    let lost_from = last_on_disk + 100_000;
    assert_eq!(
        r.stderr,
        format!(
            "lockstep run: flight log: cannot write {} (the rows from t = {}.{:06} s on are \
             lost): File too large (os error 27)\n",
            log.display(),
            lost_from / 1_000_000,
            lost_from % 1_000_000,
        ),
        "{r}"
    );
    assert_eq!(
        r.summary(),
        format!(
            "{}log           {} (incomplete: writing it failed)\n",
            idle_header(&scenario, Path::new(BUNDLED), true),
            log.display()
        ),
        "{r}"
    );
}

/// A log lost from its first row (a disk that fills at once): the report
/// says no row is on disk (it counted the rows queued, and claimed them),
/// and the plots say why they are missing after the log's own error (it
/// said "no rows to plot", pointing at the log instead of the disk).
#[test]
fn a_log_lost_from_its_first_row_reports_no_rows_and_no_plots() {
    const LIMIT: u64 = 20_000;
    let dir = TempDir::new("fsize-first");
    let scenario = idle_scenario(dir.path(), "lost.toml", 300.0, 10);
    let out = dir.join("out");
    let mut cmd = Command::new(LOCKSTEP);
    cmd.arg("fly").arg(&scenario).arg("--out").arg(&out).args([
        "--isolation",
        "in-process",
        "--json",
    ]);
    // SAFETY: as in the test above: setrlimit and signal only.
    unsafe {
        cmd.pre_exec(|| {
            sys::limit_file_size(LIMIT)?;
            sys::no_core_dumps()?;
            sys::ignore(SIGXFSZ)
        });
    }
    let r = ran(&mut cmd);
    assert_eq!(r.code(), 1, "{r}");
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        report["log"],
        serde_json::json!({"path": out.join("log.csv").display().to_string(), "rows": 0,
                           "last_time_us": null, "complete": false})
    );
    assert_eq!(Log::read(&out.join("log.csv")).rows.len(), 0);
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{r}");
    assert!(
        lines[0].starts_with("lockstep fly: flight log: cannot write ")
            && lines[0].ends_with(
                " (the rows from t = 0.000000 s on are lost): File too large (os error 27)"
            ),
        "the cause first: {r}"
    );
    assert_eq!(
        lines[1],
        "lockstep fly: plots: not written: writing the flight log failed before its first row"
    );
    assert_eq!(
        lines[2],
        "lockstep fly: the viewer's page: not written: writing the flight log failed before its first row"
    );
}

/// A recording cut by SIGINT ends with an end block saying so: replay
/// reports the interruption and its time, replays every record up to it,
/// and never presents the run as complete.
#[test]
fn a_recording_cut_by_sigint_replays_as_interrupted() {
    let dir = TempDir::new("signal-record");
    let scenario = idle_scenario(dir.path(), "long.toml", 3000.0, 10);
    let log = dir.join("log.csv");
    let rec = dir.join("run.lsrec");
    let rec_arg = rec.to_str().unwrap();
    let (child, out, head) = start(&scenario, &log, &["--record", rec_arg]);
    std::thread::sleep(Duration::from_secs(1));
    let r = stop(child, out, head, SIGINT);
    assert_eq!(r.code(), 128 + SIGINT, "{r}");
    let at = r
        .stderr
        .strip_prefix("lockstep run: interrupted by SIGINT (interrupted) at t = ")
        .and_then(|s| s.strip_suffix(" s\n"))
        .unwrap_or_else(|| panic!("one interruption line: {r}"));
    let replayed = lockstep(&[Path::new("replay"), &rec]);
    assert_eq!(replayed.code(), 0, "{replayed}");
    let line = format!(
        "recorded run  interrupted by SIGINT (interrupted) at t = {at} s; the recording ends there\n"
    );
    assert!(replayed.stdout.contains(&line), "{line}\n{replayed}");
    let shown = replayed
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("replayed      "))
        .unwrap_or_else(|| panic!("a replayed line: {replayed}"));
    let secs: f64 = shown.split(' ').next().unwrap().parse().unwrap();
    let at_s: f64 = at.parse().unwrap();
    assert!(secs > 0.0 && secs <= at_s, "replayed {secs} s of {at_s} s");
}

/// `timeout -s INT 2 lockstep fly ...` signals the run and then its process
/// group: two SIGINTs at once. The second is the same request: the run
/// still ends at a boundary with its log, sidecar and recording finished
/// (it ended at the second signal, with no message, the sidecar saying
/// `"complete": false` and a recording replay called unfinished).
#[test]
fn two_signals_at_once_still_finish_every_output() {
    let dir = TempDir::new("signal-twice");
    let scenario = idle_scenario(dir.path(), "long.toml", 3000.0, 10);
    let log = dir.join("log.csv");
    let rec = dir.join("run.lsrec");
    let plot = dir.join("flight");
    // The plots make the run's end long enough for the second signal to
    // come while the files are being finished.
    let (child, out, head) = start(
        &scenario,
        &log,
        &[
            "--record",
            rec.to_str().unwrap(),
            "--plot",
            plot.to_str().unwrap(),
        ],
    );
    std::thread::sleep(Duration::from_millis(500));
    sys::send(child.id(), SIGINT).unwrap();
    // Apart enough not to merge into one pending signal, as timeout's are.
    std::thread::sleep(Duration::from_millis(5));
    sys::send(child.id(), SIGINT).unwrap();
    let r = collect(child, out, head);
    assert_eq!(r.code(), 128 + SIGINT, "{r}");
    let at = r
        .stderr
        .strip_prefix("lockstep run: interrupted by SIGINT (interrupted) at t = ")
        .and_then(|s| s.strip_suffix(" s\n"))
        .unwrap_or_else(|| panic!("one interruption line: {r}"));
    let sidecar: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("log.csv.json")).unwrap()).unwrap();
    assert_eq!(sidecar["complete"], true, "{sidecar}");
    let (rows, _) = summary_log_line(&r.summary(), &log);
    assert_eq!(Log::read(&log).rows.len() as u64, rows);
    let replayed = lockstep(&[Path::new("replay"), &rec]);
    assert_eq!(replayed.code(), 0, "{replayed}");
    let line = format!(
        "recorded run  interrupted by SIGINT (interrupted) at t = {at} s; the recording ends there\n"
    );
    assert!(replayed.stdout.contains(&line), "{line}\n{replayed}");
    for ext in ["png", "svg"] {
        assert!(plot.with_extension(ext).is_file(), "flight.{ext}: {r}");
    }
}
