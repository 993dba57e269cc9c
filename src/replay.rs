//! `lockstep replay`: fly a recording's inputs again through the plant
//! (optionally with another spec or integrator), compare the result with a
//! log, write a log of its own.

use std::path::Path;
use std::process::ExitCode;

use lockstep_harness::io::record::Replay;
use lockstep_plant::AircraftSpec;

use crate::run::Exit;

pub fn command(
    recording: &Path,
    spec: Option<&str>,
    integrator: Option<&str>,
    compare: Option<&Path>,
    log: Option<(&Path, f64)>,
) -> ExitCode {
    let log_period_us = match log
        .map(|(_, hz)| lockstep_harness::Cadence::from_hz("log", hz, lockstep_harness::Micros(1)))
        .transpose()
    {
        Ok(c) => c.map(|c| c.period.0),
        Err(e) => {
            warn!("lockstep replay: --log-rate: {e}");
            return Exit::ConfigError.into();
        }
    };
    let method = match integrator {
        None => None,
        Some(name) => match lockstep_plant::integrate::Method::from_name(name) {
            Some(m) => Some(m),
            None => {
                warn!("lockstep replay: --integrator {name}: not one of euler, rk4, bs32, dp54");
                return Exit::ConfigError.into();
            }
        },
    };
    let truth = match compare.map(lockstep_harness::io::log_compare::LogTruth::read) {
        None => None,
        Some(Ok(t)) => Some(t),
        Some(Err(e)) => {
            warn!("lockstep replay: {e}");
            return Exit::ConfigError.into();
        }
    };
    let spec = match spec.map(AircraftSpec::resolve).transpose() {
        Ok(s) => s,
        Err(e) => {
            warn!("lockstep replay: {e}");
            return Exit::ConfigError.into();
        }
    };
    let mut replay = match Replay::open(recording, spec.as_ref()) {
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
    if let Some(m) = method {
        replay.set_integrator(m);
    }
    say!("integrator    {}", replay.integrator().name());
    let mut last = 0;
    let mut boundaries = 0u64;
    let mut comparer = truth.as_ref().map(|t| t.comparer());
    let mut replay_log = match (log, log_period_us) {
        (Some((path, _)), Some(period)) => {
            let inputs: Vec<(&str, &Path)> = vec![("the recording", recording)];
            let sidecar = lockstep_harness::io::log_meta::sidecar_path(path);
            let outputs: Vec<(&str, &Path)> =
                vec![("--log", path), ("the log's sidecar", &sidecar)];
            if let Err(e) = lockstep_harness::io::paths::check_outputs(&inputs, &outputs) {
                warn!("lockstep replay: {e}");
                return Exit::ConfigError.into();
            }
            match lockstep_harness::io::replay_log::ReplayLog::create(
                path,
                recording,
                replay.plant(),
                period,
            ) {
                Ok(l) => Some(l),
                Err(e) => {
                    warn!("lockstep replay: {e}");
                    return Exit::ConfigError.into();
                }
            }
        }
        _ => None,
    };
    let mut log_error = None;
    let result = replay.run_with_inputs(|t, x, u, plant| {
        last = t.0;
        boundaries += 1;
        if let Some(c) = &mut comparer {
            c.visit(t.0, x);
        }
        if let Some(l) = &mut replay_log
            && log_error.is_none()
            && let Err(e) = l.visit(t.0, x, u, plant)
        {
            log_error = Some(e);
        }
    });
    if let (Some(l), Some((path, _))) = (replay_log, log) {
        match log_error.map_or_else(|| l.finish(), Err) {
            Ok(rows) => say!("log           {} ({rows} rows)", path.display()),
            Err(e) => {
                warn!("lockstep replay: {e}");
                return Exit::RunError.into();
            }
        }
    }
    if let (Some(c), Some(log)) = (comparer, compare) {
        let d = c.finish();
        say!(
            "compared      {} rows of {} ({} not reached)",
            d.compared,
            log.display(),
            d.unmatched
        );
        for ((group, _), m) in lockstep_harness::io::log_compare::GROUPS
            .iter()
            .zip(d.max_abs)
        {
            say!("  max |diff|  {group:<20} {m:.3e}");
        }
    }
    match result {
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
