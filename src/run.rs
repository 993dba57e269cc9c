//! `lockstep run` and `lockstep replay`: fly a scenario or replay a
//! recording, print what happened, and exit with a status that says how it
//! went (see [`Exit`]).

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

use lockstep_abi::{AbiError, Isolation, mode_name};
use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::record::Replay;
use lockstep_harness::scenario::Scenario;
use lockstep_plant::AircraftSpec;

/// The exit statuses, documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run completed (and met its expectations).
    Success = 0,
    /// The autopilot failed (it crashed, exited, hung, broke the contract
    /// or refused to create, even while loading), or the run stopped early
    /// (the integration failed, a file could not be written).
    RunError = 1,
    /// An input was refused before the run started: the command line, the
    /// scenario, spec or mission, a log or recording path, or a library the
    /// loader's checks refuse (file, ELF, symbols, ABI version, layout,
    /// capabilities) or whose parameters or mission refuse the scenario's.
    ConfigError = 2,
    /// The run completed but its verdict failed: a crash was detected or an
    /// `[expect]` condition of the scenario was not met.
    ExpectationFailed = 3,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// The status for an error: inputs refused before the flight are
/// configuration errors; everything the autopilot or the run did is a run
/// error; a signal gives 128 + its number.
fn status_of(e: &EngineError) -> ExitCode {
    match e {
        EngineError::Interrupted { signal, .. } => {
            ExitCode::from(128u8.saturating_add(*signal as u8))
        }
        EngineError::Spec(_)
        | EngineError::Mission(_)
        | EngineError::Config(_)
        | EngineError::Invalid { .. }
        | EngineError::RecordTooLate { .. } => Exit::ConfigError.into(),
        EngineError::Abi(
            AbiError::LibraryNotFound { .. }
            | AbiError::LibraryLoad { .. }
            | AbiError::MissingSymbol { .. }
            | AbiError::AbiVersionMismatch { .. }
            | AbiError::UnknownCapabilities { .. }
            | AbiError::InvalidLayoutTable { .. }
            | AbiError::LayoutMismatch { .. }
            | AbiError::NotReentrant { .. }
            | AbiError::HostUnavailable { .. }
            | AbiError::MissionRejected { .. }
            | AbiError::Param { .. }
            | AbiError::Unsupported { .. },
        ) => Exit::ConfigError.into(),
        _ => Exit::RunError.into(),
    }
}

/// SIGINT and SIGTERM set `which` to their number; a second one ends the
/// process at once (status 128 + signal).
fn catch_signals() -> Arc<AtomicUsize> {
    let which = Arc::new(AtomicUsize::new(0));
    let again = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let registered =
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&again))
                .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&again)))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)
                });
        if let Err(e) = registered {
            warn!("lockstep: cannot catch signal {sig}: {e}");
        }
    }
    which
}

pub fn run(
    scenario: &Path,
    autopilot: &Path,
    log: Option<&Path>,
    record: Option<&Path>,
    isolation: &Isolation,
) -> ExitCode {
    let interrupt = catch_signals();
    let s = match Scenario::load(scenario) {
        Ok(s) => s,
        Err(e) => {
            warn!("lockstep run: {e}");
            return Exit::ConfigError.into();
        }
    };
    let spec_path = Path::new(&s.spec);
    let mut inputs: Vec<(&str, &Path)> = vec![
        ("the scenario", scenario),
        ("the autopilot library", autopilot),
    ];
    if spec_path.is_file() {
        inputs.push(("the aircraft spec", spec_path));
    }
    if let Some(m) = &s.mission {
        inputs.push(("the mission", m));
    }
    let outputs: Vec<(&str, &Path)> = [("--log", log), ("--record", record)]
        .into_iter()
        .filter_map(|(w, p)| p.map(|p| (w, p)))
        .collect();
    if let Err(e) = lockstep_harness::paths::check_outputs(&inputs, &outputs) {
        warn!("lockstep run: {e}");
        return Exit::ConfigError.into();
    }
    if log.is_some() && s.cadence("log").is_none() {
        warn!(
            "lockstep run: --log given but {} has no `log` cadence under [cadences]",
            scenario.display()
        );
        return Exit::ConfigError.into();
    }
    let mut engine = match Engine::with_isolation(&s, autopilot, log, isolation) {
        Ok(e) => e,
        Err(e) => {
            warn!("lockstep run: {e}");
            if matches!(e, EngineError::Abi(_))
                && !e.to_string().contains(&autopilot.display().to_string())
            {
                warn!("              autopilot library: {}", autopilot.display());
            }
            // A log that cannot be created is a refused input.
            return match e {
                EngineError::Log(_) => Exit::ConfigError.into(),
                e => status_of(&e),
            };
        }
    };
    if let Some(r) = record
        && let Err(e) = engine.record_to(r)
    {
        warn!("lockstep run: {e}");
        return Exit::ConfigError.into();
    }
    engine.interrupt_on(interrupt);
    say!("scenario      {}", scenario.display());
    if let Some(d) = &s.description {
        say!("              {d}");
    }
    say!(
        "autopilot     {}{}",
        autopilot.display(),
        if engine.autopilot().is_isolated() {
            ""
        } else {
            " (in-process)"
        }
    );
    say!(
        "vehicle       {} ({} rotors)",
        engine.plant().name,
        engine.plant().rotors.len()
    );
    say!("seed          {}", s.seed);
    let result = engine.run();
    let logged = |engine: &Engine, failed: bool| {
        if let (Some(l), Some(flog)) = (log, engine.log()) {
            if failed {
                say!(
                    "log           {} (incomplete: writing it failed)",
                    l.display()
                );
            } else {
                let upto = flog
                    .last_time_us()
                    .map(|t| format!(", the last at {}", lockstep_abi::at(t)))
                    .unwrap_or_default();
                say!("log           {} ({} rows{upto})", l.display(), flog.rows());
            }
        }
        if let Some(r) = record {
            say!("recording     {}", r.display());
        }
    };
    match result {
        Ok(sum) => {
            let p = sum.position_ned_m;
            say!(
                "simulated     {:.3} s in {} boundaries",
                sum.end.as_secs_f64(),
                sum.boundaries
            );
            say!(
                "final         mode {} ({})",
                mode_name(sum.mode),
                if sum.armed { "armed" } else { "not armed" }
            );
            say!(
                "position      N {:.2} m, E {:.2} m, altitude {:.2} m",
                p[0],
                p[1],
                -p[2]
            );
            say!(
                "mission       {}",
                if sum.mission_finished {
                    "finished"
                } else {
                    "not finished"
                }
            );
            say!("battery       {:.1} % left", 100.0 * sum.soc);
            logged(&engine, false);
            let v = &sum.verdict;
            for c in &v.crashes {
                say!(
                    "crash         {c}{}",
                    if v.crashes_allowed { " (allowed)" } else { "" }
                );
            }
            for c in &v.checks {
                say!(
                    "{:<13} {}: {}",
                    if c.passed {
                        "expect ok"
                    } else {
                        "expect FAILED"
                    },
                    c.key,
                    c.detail
                );
            }
            if v.passed() {
                say!("verdict       ok");
                Exit::Success.into()
            } else {
                say!("verdict       FAILED");
                warn!("lockstep run: the flight did not meet its expectations (see the verdict)");
                Exit::ExpectationFailed.into()
            }
        }
        Err(e) => {
            warn!("lockstep run: {e}");
            let log_failed = matches!(e, EngineError::Log(_));
            if !matches!(e, EngineError::Interrupted { .. }) && !log_failed {
                warn!(
                    "              the run stopped at {}; what happened up to there is written",
                    lockstep_abi::at(engine.now().0)
                );
            }
            logged(&engine, log_failed);
            status_of(&e)
        }
    }
}

pub fn replay(recording: &Path, spec: Option<&str>) -> ExitCode {
    let spec = match spec.map(AircraftSpec::resolve).transpose() {
        Ok(s) => s,
        Err(e) => {
            warn!("lockstep replay: {e}");
            return Exit::ConfigError.into();
        }
    };
    let replay = match Replay::open(recording, spec.as_ref()) {
        Ok(r) => r,
        Err(e) => {
            warn!("lockstep replay: {e}");
            return Exit::ConfigError.into();
        }
    };
    say!("recording     {}", recording.display());
    say!("vehicle       {}", replay.plant().name);
    let status = replay.end_status().clone();
    if status.is_completed() {
        say!("recorded run  completed");
    } else {
        say!("recorded run  {status}; the recording ends there");
    }
    let mut last = 0;
    let mut boundaries = 0u64;
    match replay.run(|t, _| {
        last = t.0;
        boundaries += 1;
    }) {
        Ok(x) => {
            say!(
                "replayed      {:.3} s in {boundaries} boundaries",
                last as f64 * 1e-6
            );
            say!(
                "position      N {:.6} m, E {:.6} m, altitude {:.6} m",
                x[0],
                x[1],
                -x[2]
            );
            Exit::Success.into()
        }
        Err(e) => {
            warn!("lockstep replay: {e}");
            Exit::RunError.into()
        }
    }
}
