//! The in-process mode (`--isolation in-process`): a fault in the library
//! takes the harness with it, but first one line on stderr names the
//! signal, the function and the simulated time; the process then dies by
//! that very signal, and the log on disk holds only whole rows. A crash in
//! destroy, after the flight, costs no row: the log is finished first.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};

use crate::common::*;
use signal_hook::consts::{SIGABRT, SIGSEGV};

/// The line the crash handler writes.
fn crash_line(signal: &str, function_and_time: &str) -> String {
    format!(
        "lockstep: the autopilot was killed by signal {signal} in {function_and_time}; run it \
         with --isolation process to keep the harness alive and the log complete\n"
    )
}

/// `lockstep run SCENARIO --autopilot <case> --log LOG --isolation MODE`
/// without core dumps.
fn run(scenario: &Path, case: &str, log: &Path, mode: &str) -> Ran {
    let mut cmd = std::process::Command::new(LOCKSTEP);
    cmd.arg("run")
        .arg(scenario)
        .arg("--autopilot")
        .arg(broken(case))
        .arg("--log")
        .arg(log)
        .arg("--isolation")
        .arg(mode);
    // SAFETY: the closure runs in the child between fork and exec and only
    // calls setrlimit, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(sys::no_core_dumps);
    }
    ran(&mut cmd)
}

/// A fault in step at 5 s, in-process: death by `signal`, the one crash
/// line, a log of whole rows that is a prefix of the isolated run's log.
fn assert_dies_by(case: &str, signal: i32, name: &str) {
    let dir = TempDir::new(case);
    // A log at 100 Hz: by 5 s some 240 kB of rows, more than the writer
    // keeps in memory (at most 4 batches of 64 rows and one 64 kB chunk),
    // so the file on disk holds rows when the process dies.
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 100);
    let (log, isolated_log): (PathBuf, PathBuf) = (dir.join("log.csv"), dir.join("isolated.csv"));
    let r = run(&scenario, case, &log, "in-process");
    assert_eq!(r.status.signal(), Some(signal), "{r}");
    assert_eq!(
        r.stderr,
        crash_line(name, "step at t = 5.000000 s"),
        "exactly the one line: {r}"
    );
    assert_eq!(r.stdout, idle_header(&scenario, &broken(case), true), "{r}");
    let on_disk = Log::read(&log);
    assert_idle_meta(&on_disk);
    let n = on_disk.rows.len();
    assert!(n > 0, "some rows reach the disk before 5 s");
    assert_eq!(
        on_disk.times_us(),
        times(0, (n as u64 - 1) * 10_000, 10_000)
    );
    // The same rows as the isolated run, which keeps the log complete.
    let isolated = run(&scenario, case, &isolated_log, "process");
    assert_eq!(isolated.code(), 1, "{isolated}");
    let complete = Log::read(&isolated_log);
    assert_eq!(complete.times_us(), times(0, 4_990_000, 10_000));
    assert!(
        complete.text.starts_with(&on_disk.text),
        "the in-process log is a prefix of the complete one"
    );
}

#[test]
fn a_segfault_in_step_kills_the_harness_after_one_line() {
    assert_dies_by("step_segv", SIGSEGV, "SIGSEGV (segmentation fault)");
}

#[test]
fn an_abort_in_step_kills_the_harness_after_one_line() {
    assert_dies_by("step_abort", SIGABRT, "SIGABRT (abort)");
}

#[test]
fn a_stack_overflow_in_step_kills_the_harness_after_one_line() {
    assert_dies_by("stack_overflow", SIGSEGV, "SIGSEGV (segmentation fault)");
}

#[test]
fn a_segfault_in_create_names_create() {
    let dir = TempDir::new("create_segv");
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 10);
    let log = dir.join("log.csv");
    let r = run(&scenario, "create_segv", &log, "in-process");
    assert_eq!(r.status.signal(), Some(SIGSEGV), "{r}");
    assert_eq!(
        r.stderr,
        crash_line("SIGSEGV (segmentation fault)", "create"),
        "{r}"
    );
    assert_eq!(r.stdout, "", "{r}");
    assert!(!log.exists());
}

#[test]
fn a_segfault_in_destroy_names_destroy_and_leaves_the_complete_log() {
    let dir = TempDir::new("destroy_segv");
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 10);
    let (log, isolated_log) = (dir.join("log.csv"), dir.join("isolated.csv"));
    let r = run(&scenario, "destroy_segv", &log, "in-process");
    assert_eq!(r.status.signal(), Some(SIGSEGV), "{r}");
    assert_eq!(
        r.stderr,
        crash_line("SIGSEGV (segmentation fault)", "destroy"),
        "{r}"
    );
    // The process died before its summary.
    assert_eq!(
        r.stdout,
        idle_header(&scenario, &broken("destroy_segv"), true),
        "{r}"
    );
    // The log is finished before the instance is destroyed: every row of
    // the complete flight is on disk, the same bytes as the isolated run's.
    let on_disk = Log::read(&log);
    assert_idle_meta(&on_disk);
    assert_eq!(on_disk.times_us(), times(0, 8_000_000, 100_000));
    let isolated = run(&scenario, "destroy_segv", &isolated_log, "process");
    assert_eq!(isolated.code(), 1, "{isolated}");
    assert_eq!(on_disk.text, Log::read(&isolated_log).text);
}
