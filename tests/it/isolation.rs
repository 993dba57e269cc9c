//! The isolated mode (the default of `lockstep run`): the autopilot runs in
//! a child process; its crash, exit or hang ends the run with a message
//! naming the cause, the function and the simulated time, exit status 1,
//! and a log holding every row up to the boundary of the fault. Faults in
//! step strike at t = 5 s, so the log holds rows 0 to 4.9 s.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::*;
use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, Autopilot, Function, Isolation, IsolationOptions};
use lockstep_harness::Micros;
use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::inputs::scenario::Scenario;

/// The second line of every failed run's stderr.
fn stopped_at(t: &str) -> String {
    format!("              the run stopped at t = {t} s; what happened up to there is written\n")
}

/// Options of the isolated mode with the host cargo built for these tests.
fn options(step_timeout: Duration) -> IsolationOptions {
    IsolationOptions {
        step_timeout,
        host: Some(HOST.into()),
        ..IsolationOptions::default()
    }
}

/// `lockstep run SCENARIO --autopilot <fixture> --log LOG EXTRA...` of the
/// 8 s idle scenario.
fn run_fixture(dir: &TempDir, case: &str, extra: &[&str]) -> (Ran, PathBuf, PathBuf) {
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 10);
    let log = dir.join(format!("{case}.csv"));
    let mut args: Vec<std::ffi::OsString> = vec![
        "run".into(),
        scenario.clone().into(),
        "--autopilot".into(),
        broken(case).into(),
        "--log".into(),
        log.clone().into(),
    ];
    args.extend(extra.iter().map(|s| s.into()));
    (lockstep(&args), scenario, log)
}

/// The summary `lockstep run` prints before and after a flight of the idle
/// scenario with the fixture `case`, isolated, that stopped with a log of
/// `rows` rows.
fn summary(scenario: &Path, case: &str, log: &Path, rows_and_last: &str) -> String {
    format!(
        "{}log           {} ({rows_and_last})\n",
        idle_header(scenario, &broken(case), false),
        log.display()
    )
}

/// The log of a run stopped by a fault in step at 5 s: the two header
/// lines, then rows every 0.1 s from 0 to 4.9 s, all whole.
fn assert_log_up_to_the_fault(log: &Path) -> Log {
    let l = Log::read(log);
    assert_idle_meta(&l);
    assert_eq!(l.columns.len(), 68);
    assert_eq!(l.times_us(), times(0, 4_900_000, 100_000));
    l
}

/// A fault of `case` in step at 5 s, isolated: status 1, exactly
/// `message` and the stop line, the log up to the fault.
fn assert_step_fault_is_reported(case: &str, message: &str) {
    let dir = TempDir::new(case);
    let (r, scenario, log) = run_fixture(&dir, case, &[]);
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stderr,
        format!("lockstep run: {message}\n{}", stopped_at("5.000000")),
        "{r}"
    );
    assert_eq!(
        r.summary(),
        summary(&scenario, case, &log, "50 rows, the last at t = 4.900000 s"),
        "{r}"
    );
    assert_log_up_to_the_fault(&log);
}

#[test]
fn a_segfault_in_step() {
    assert_step_fault_is_reported(
        "step_segv",
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s",
    );
}

#[test]
fn an_abort_in_step() {
    assert_step_fault_is_reported(
        "step_abort",
        "the autopilot was killed by signal SIGABRT (abort) in step at t = 5.000000 s",
    );
}

#[test]
fn a_stack_overflow_in_step() {
    assert_step_fault_is_reported(
        "stack_overflow",
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s",
    );
}

#[test]
fn exit_0_in_step_is_not_success() {
    assert_step_fault_is_reported(
        "step_exit0",
        "the autopilot exited with status 0 in step at t = 5.000000 s: the library ended its \
         process",
    );
}

#[test]
fn underscore_exit_in_step() {
    assert_step_fault_is_reported(
        "step__exit",
        "the autopilot exited with status 3 in step at t = 5.000000 s: the library ended its \
         process",
    );
}

#[test]
fn a_hanging_step_is_stopped_by_the_watchdog() {
    let dir = TempDir::new("step_hang");
    let (r, scenario, log) = run_fixture(&dir, "step_hang", &["--step-timeout", "1"]);
    assert!(r.wall < Duration::from_secs(10), "took {:?}", r.wall);
    assert!(r.wall >= Duration::from_secs(1), "took {:?}", r.wall);
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep run: the autopilot hung in step at t = 5.000000 s: no answer within 1 s \
             (the watchdog's limit for a step, --step-timeout); its process was stopped\n{}",
            stopped_at("5.000000")
        ),
        "{r}"
    );
    assert_eq!(
        r.summary(),
        summary(
            &scenario,
            "step_hang",
            &log,
            "50 rows, the last at t = 4.900000 s"
        ),
        "{r}"
    );
    assert_log_up_to_the_fault(&log);
}

#[test]
fn watchdog_limits_are_refused_in_process() {
    // Nothing can stop a call that hangs in this process: the limits are a
    // configuration error there, before anything is loaded or written.
    let dir = TempDir::new("in-process-timeouts");
    for limits in [
        &["--step-timeout", "1"][..],
        &["--call-timeout", "1"],
        &["--step-timeout", "1", "--call-timeout", "2"],
    ] {
        let extra = [&["--isolation", "in-process"][..], limits].concat();
        let (r, _, log) = run_fixture(&dir, "idle", &extra);
        assert_eq!(r.code(), 2, "{limits:?}: {r}");
        assert_eq!(
            r.stderr,
            "lockstep run: --step-timeout and --call-timeout apply to --isolation process only \
             (in-process, nothing can stop a call that hangs)\n",
            "{limits:?}: {r}"
        );
        assert_eq!(r.stdout, "", "{limits:?}: {r}");
        assert!(!log.exists(), "{limits:?}");
    }
}

#[test]
fn the_step_timeout_must_be_a_positive_number_of_seconds() {
    for bad in ["0", "-1", "nan", "inf", "86401", "soon"] {
        let r = lockstep(&["run".to_string(), format!("--step-timeout={bad}")]);
        assert_eq!(r.code(), 2, "{r}");
        let reason = match bad {
            "soon" => "invalid float literal".to_string(),
            _ => format!("{bad} is not a number of seconds in (0, 86400]"),
        };
        assert!(
            r.stderr.starts_with(&format!(
                "error: invalid value '{bad}' for '--step-timeout <STEP_TIMEOUT>': {reason}\n"
            )),
            "{r}"
        );
    }
}

#[test]
fn a_segfault_in_create() {
    let dir = TempDir::new("create_segv");
    let (r, _, log) = run_fixture(&dir, "create_segv", &[]);
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep run: the autopilot was killed by signal SIGSEGV (segmentation fault) in \
             create\n{}",
            library_line(&broken("create_segv"))
        ),
        "{r}"
    );
    assert_eq!(r.stdout, "", "{r}");
    assert!(!log.exists(), "no log is created before the autopilot");
}

#[test]
fn a_segfault_in_destroy_after_a_complete_flight() {
    let dir = TempDir::new("destroy_segv");
    let (r, scenario, log) = run_fixture(&dir, "destroy_segv", &[]);
    assert_eq!(r.code(), 1, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep run: the autopilot was killed by signal SIGSEGV (segmentation fault) in \
             destroy\n{}",
            stopped_at("8.000000")
        ),
        "{r}"
    );
    assert_eq!(
        r.summary(),
        summary(
            &scenario,
            "destroy_segv",
            &log,
            "81 rows, the last at t = 8.000000 s"
        ),
        "{r}"
    );
    assert_eq!(Log::read(&log).times_us(), times(0, 8_000_000, 100_000));
}

/// The idle scenario as a value (its file is never read back).
fn idle(dir: &TempDir, duration_s: f64) -> Scenario {
    Scenario::load(idle_scenario(dir.path(), "idle.toml", duration_s, 10)).unwrap()
}

#[test]
fn the_engine_reports_a_crash_in_step_with_function_time_and_cause() {
    let dir = TempDir::new("engine-step");
    let scenario = idle(&dir, 8.0);
    for (case, expected, expected_detail, text) in [
        (
            "step_segv",
            "was killed by signal SIGSEGV (segmentation fault)",
            "",
            "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at \
             t = 5.000000 s",
        ),
        (
            "step_abort",
            "was killed by signal SIGABRT (abort)",
            "",
            "the autopilot was killed by signal SIGABRT (abort) in step at t = 5.000000 s",
        ),
        (
            "step_exit0",
            "exited with status 0",
            "the library ended its process",
            "the autopilot exited with status 0 in step at t = 5.000000 s: the library ended \
             its process",
        ),
    ] {
        let isolation = Isolation::Process(options(Duration::from_secs(5)));
        let mut engine =
            Engine::with_isolation(&scenario, &broken(case), None, &isolation).unwrap();
        assert!(engine.autopilot().is_isolated());
        let err = loop {
            match engine.step() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("{case}: the run ended without the fault"),
                Err(e) => break e,
            }
        };
        assert_eq!(engine.now(), Micros(5_000_000), "{case}");
        match &err {
            EngineError::Abi(AbiError::Crashed {
                function,
                time_us,
                cause,
                detail,
            }) => {
                assert_eq!(*function, Function::Step, "{case}");
                assert_eq!(*time_us, Some(5_000_000), "{case}");
                assert_eq!(cause, expected, "{case}");
                assert_eq!(detail, expected_detail, "{case}");
            }
            other => panic!("{case}: expected Crashed, got {other:?}"),
        }
        assert_eq!(err.to_string(), text, "{case}");
    }
}

#[test]
fn the_engine_reports_crashes_in_create_and_destroy() {
    let dir = TempDir::new("engine-create-destroy");
    let scenario = idle(&dir, 1.0);
    let isolation = Isolation::Process(options(Duration::from_secs(5)));
    let segv = "was killed by signal SIGSEGV (segmentation fault)";
    match Engine::with_isolation(&scenario, &broken("create_segv"), None, &isolation) {
        Err(EngineError::Abi(e @ AbiError::Crashed { .. })) => {
            assert!(
                matches!(&e, AbiError::Crashed {
                    function: Function::Create,
                    time_us: None,
                    cause,
                    detail,
                } if cause == segv && detail.is_empty()),
                "{e:?}"
            );
            assert_eq!(e.to_string(), format!("the autopilot {segv} in create"));
        }
        other => panic!("expected Crashed in create, got {other:?}"),
    }
    let mut engine =
        Engine::with_isolation(&scenario, &broken("destroy_segv"), None, &isolation).unwrap();
    match engine.run() {
        Err(EngineError::Abi(e @ AbiError::Crashed { .. })) => {
            // The host died in the destroy call itself, not after answering
            // it (that would be `while unloading`).
            assert!(
                matches!(&e, AbiError::Crashed {
                    function: Function::Destroy,
                    time_us: None,
                    cause,
                    detail,
                } if cause == segv && detail.is_empty()),
                "{e:?}"
            );
            assert_eq!(e.to_string(), format!("the autopilot {segv} in destroy"));
        }
        other => panic!("expected Crashed in destroy, got {other:?}"),
    }
    assert_eq!(
        engine.now(),
        Micros(1_000_000),
        "the flight itself completed"
    );
}

/// Steps `ap` through a short arming sequence and returns every output's
/// bits.
fn fly(ap: &mut Autopilot) -> Vec<u32> {
    (1..=200u64)
        .flat_map(|k| {
            let t = k * PERIOD_US;
            let mut f = frame(t, [0.0, 0.0, -0.1 * k as f32], [1.0, 0.0, 0.0, 0.0]);
            if k == 2 {
                f = with_command(f, LOCKSTEP_ARM_ARM, 0, 0);
            }
            let out = step(ap, &f);
            out.motors
                .iter()
                .map(|m| m.to_bits())
                .chain([out.mode, out.armed])
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_non_reentrant_library_runs_once_per_host_process() {
    let _one = crate::common::single_instance_lock();
    let cfg = config(&quad_x(), 1.5, 8.0);
    let path = Path::new(SINGLE_INSTANCE);
    let isolated = Isolation::Process(options(Duration::from_secs(5)));
    let mut a = Autopilot::open(path, &cfg, &isolated).unwrap();
    let mut b = Autopilot::open(path, &cfg, &isolated).expect("each in its own process");
    assert!(a.is_isolated() && b.is_isolated());
    assert_eq!(a.capabilities() & LOCKSTEP_AP_CAP_REENTRANT, 0);
    let (fa, fb) = (fly(&mut a), fly(&mut b));
    assert_eq!(fa, fb, "two live instances, identical outputs");

    // In this process, one at a time (the isolated ones do not count).
    let first = Autopilot::open(path, &cfg, &Isolation::InProcess).unwrap();
    assert!(!first.is_isolated());
    let err = Autopilot::open(path, &cfg, &Isolation::InProcess).unwrap_err();
    assert!(
        matches!(&err, AbiError::NotReentrant { path: p } if p == path),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "autopilot library {SINGLE_INSTANCE} is not re-entrant (capabilities lack \
             LOCKSTEP_AP_CAP_REENTRANT) and an instance of it is already alive in this process; \
             drop it first, or run each instance isolated in its own process \
             (lockstep_abi::Isolation::Process, `--isolation process`)"
        )
    );
    // A third isolated one is still fine.
    let mut c = Autopilot::open(path, &cfg, &isolated).unwrap();
    assert_eq!(fly(&mut c), fa);
    for mut ap in [a, b, c] {
        ap.close().unwrap();
    }
    drop(first);
}

#[test]
fn isolated_and_in_process_runs_write_bit_identical_logs() {
    let dir = TempDir::new("layouts");
    let logs = [dir.join("process.csv"), dir.join("in-process.csv")];
    // Both at once: the default scenario takes a few seconds in debug.
    let children: Vec<_> = logs
        .iter()
        .zip(["process", "in-process"])
        .map(|(log, mode)| {
            std::process::Command::new(LOCKSTEP)
                .args(["run", "--isolation", mode, "--log"])
                .arg(log)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    for o in &outs {
        assert!(o.status.success(), "{o:?}");
    }
    let (a, b) = (
        std::fs::read(&logs[0]).unwrap(),
        std::fs::read(&logs[1]).unwrap(),
    );
    assert_eq!(Log::read(&logs[0]).rows.len(), 901);
    assert!(a == b, "the logs differ");
    // The summaries agree too, apart from the log's name and the mode on
    // the autopilot line.
    let text = |o: &std::process::Output, log: &Path| {
        without_report_lines(&String::from_utf8(o.stdout.clone()).unwrap())
            .replace(&log.display().to_string(), "LOG")
    };
    let (isolated, in_process) = (text(&outs[0], &logs[0]), text(&outs[1], &logs[1]));
    let line = format!("\nautopilot     {BUNDLED}\n");
    let line_in_process = format!("\nautopilot     {BUNDLED} (in-process)\n");
    assert_eq!(isolated.matches(&line).count(), 1, "{isolated}");
    assert_eq!(
        in_process.matches(&line_in_process).count(),
        1,
        "{in_process}"
    );
    assert_eq!(isolated, in_process.replacen(&line_in_process, &line, 1));
}
