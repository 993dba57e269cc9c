//! A recording replayed: its inputs flown again through the plant (without
//! autopilot or randomness, optionally with another spec or integrator),
//! compared with a flight's log, written as a log of its own.

use std::path::PathBuf;

use lockstep_harness::io::log_compare::{GROUPS, LogTruth};
use lockstep_harness::io::record::Replay;
use lockstep_harness::io::replay_log::ReplayLog;
use lockstep_harness::{Cadence, Micros};
use lockstep_plant::AircraftSpec;
use lockstep_plant::integrate::Method;

use crate::RunError;
use crate::outputs::check_against_inputs;

/// A replay to make.
#[derive(Debug, Clone, Default)]
pub struct ReplayRequest {
    pub recording: PathBuf,
    /// Refuse the recording unless made with this spec (built-in name or
    /// path).
    pub spec: Option<String>,
    /// Integrate with this method (by name) instead of the recorded one.
    pub integrator: Option<String>,
    /// Compare the replayed states with this flight log's.
    pub compare: Option<PathBuf>,
    /// Write the replay as a flight log here, with rows at this rate (Hz).
    pub log: Option<(PathBuf, f64)>,
}

/// What is about to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayHeader {
    pub vehicle: String,
    /// How the recorded run ended (`completed`, or where it stopped).
    pub recorded: String,
    pub completed: bool,
    pub integrator: &'static str,
}

/// A replay and its options, ready.
pub struct PreparedReplay {
    request: ReplayRequest,
    replay: Replay,
    truth: Option<LogTruth>,
    log: Option<ReplayLog>,
    header: ReplayHeader,
}

impl std::fmt::Debug for PreparedReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedReplay")
            .field("recording", &self.request.recording)
            .finish_non_exhaustive()
    }
}

/// The largest difference per state group between the replay and a log.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub log: PathBuf,
    /// Rows compared, and rows of the log the replay did not reach.
    pub compared: u64,
    pub unmatched: u64,
    /// (group, largest absolute difference).
    pub max_abs: Vec<(&'static str, f64)>,
}

/// What the replay did.
#[derive(Debug)]
pub struct ReplayReport {
    /// Simulated time reached, µs, and the boundaries replayed.
    pub last_us: u64,
    pub boundaries: u64,
    /// The log written and its rows, or why it could not be.
    pub log: Option<Result<(PathBuf, u64), String>>,
    pub comparison: Option<Comparison>,
    /// The final state, or the integration's error.
    pub result: Result<Vec<f64>, String>,
}

/// Opens the recording, reads the log to compare with, checks and opens
/// the replay's log.
pub fn prepare(request: ReplayRequest) -> Result<PreparedReplay, RunError> {
    let config = RunError::configuration;
    let log_period_us = match &request.log {
        Some((_, hz)) => Some(
            Cadence::from_hz("log", *hz, Micros(1))
                .map_err(|e| config(format!("--log-rate: {e}")))?
                .period
                .0,
        ),
        None => None,
    };
    let method = match &request.integrator {
        None => None,
        Some(name) => Some(Method::from_name(name).ok_or_else(|| {
            config(format!(
                "--integrator {name}: not one of euler, rk4, bs32, dp54"
            ))
        })?),
    };
    let truth = match &request.compare {
        None => None,
        Some(p) => Some(LogTruth::read(p).map_err(|e| config(e.to_string()))?),
    };
    let spec = request
        .spec
        .as_deref()
        .map(AircraftSpec::resolve)
        .transpose()
        .map_err(|e| config(e.to_string()))?;
    let mut replay =
        Replay::open(&request.recording, spec.as_ref()).map_err(|e| config(e.to_string()))?;
    let status = replay.end_status().clone();
    if let Some(m) = method {
        replay.set_integrator(m);
    }
    let log = match (&request.log, log_period_us) {
        (Some((path, _)), Some(period)) => {
            let sidecar = lockstep_harness::io::log_meta::sidecar_path(path);
            check_against_inputs(
                &[("the recording", request.recording.as_path())],
                &[("--log", path.as_path()), ("the log's sidecar", &sidecar)],
            )?;
            Some(
                ReplayLog::create(path, &request.recording, replay.plant(), period)
                    .map_err(|e| config(e.to_string()))?,
            )
        }
        _ => None,
    };
    let header = ReplayHeader {
        vehicle: replay.plant().name.clone(),
        recorded: status.to_string(),
        completed: status.is_completed(),
        integrator: replay.integrator().name(),
    };
    Ok(PreparedReplay {
        request,
        replay,
        truth,
        log,
        header,
    })
}

impl PreparedReplay {
    pub fn header(&self) -> &ReplayHeader {
        &self.header
    }

    /// Replays every recorded boundary.
    pub fn run(self) -> ReplayReport {
        let PreparedReplay {
            request,
            replay,
            truth,
            log,
            ..
        } = self;
        let mut last = 0;
        let mut boundaries = 0u64;
        let mut comparer = truth.as_ref().map(|t| t.comparer());
        let mut replay_log = log;
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
        let log = match (replay_log, &request.log) {
            (Some(l), Some((path, _))) => Some(
                log_error
                    .map_or_else(|| l.finish(), Err)
                    .map(|rows| (path.clone(), rows))
                    .map_err(|e| e.to_string()),
            ),
            _ => None,
        };
        let comparison = match (comparer, &request.compare) {
            (Some(c), Some(log)) => {
                let d = c.finish();
                Some(Comparison {
                    log: log.clone(),
                    compared: d.compared,
                    unmatched: d.unmatched,
                    max_abs: GROUPS.iter().map(|(g, _)| *g).zip(d.max_abs).collect(),
                })
            }
            _ => None,
        };
        ReplayReport {
            last_us: last,
            boundaries,
            log,
            comparison,
            result: result.map(|x| x.to_vec()).map_err(|e| e.to_string()),
        }
    }
}

impl ReplayReport {
    /// The exit status: 0 replayed and written, 1 otherwise.
    pub fn exit_status(&self) -> u8 {
        let log_failed = matches!(self.log, Some(Err(_)));
        u8::from(log_failed || self.result.is_err())
    }
}
