//! What a flight did, as one value: the CLI prints it as text or as one
//! JSON object (`lockstep fly --json`) and writes it as `summary.json`; the C
//! ABI returns the same JSON; Python gets it as a dict. Made here from an
//! engine and what the front end knows besides ([`report`]), whoever
//! stepped the engine.

use std::path::PathBuf;

use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::inputs::scenario::Override;
use lockstep_harness::outcome::Summary;
use lockstep_harness::outcome::class::{self, EXIT_SUCCESS, ErrorClass};
use lockstep_harness::outcome::journal::Entry;
use lockstep_harness::outcome::report::{FinalState, VerdictReport};
use serde::{Deserialize, Serialize};

/// The report's format version (the JSON's `report_version`).
pub const REPORT_VERSION: u32 = 1;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The run reached its planned end (the verdict says whether it met
    /// its expectations).
    Completed,
    /// An error stopped it (`error` says which).
    Stopped,
    /// SIGINT or SIGTERM stopped it.
    Interrupted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogReport {
    pub path: String,
    pub rows: u64,
    pub last_time_us: Option<u64>,
    /// False when writing it failed (the rows on disk are whole).
    pub complete: bool,
}

/// One flight, as `fly` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlightReport {
    pub report_version: u32,
    pub scenario: String,
    pub description: Option<String>,
    /// The overrides applied to the scenario before it was validated, in
    /// the order they applied (`--seed`, `--set`, a Python keyword...).
    pub overrides: Vec<Override>,
    pub autopilot: String,
    pub isolated: bool,
    /// What a flight stack's link ignored or noticed (bytes that were no
    /// MAVLink frame, re-sent servo packets, boot periods...), one line
    /// each; absent for a library.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_notes: Vec<String>,
    pub vehicle: String,
    pub rotors: usize,
    pub seed: u64,
    pub outcome: Outcome,
    /// The error that stopped the run, if any.
    pub error: Option<String>,
    /// What kind of failure the exit status stands for (`None`: success).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// The process's exit status.
    pub exit_status: u8,
    /// Simulated time reached, µs.
    pub simulated_us: u64,
    pub boundaries: u64,
    pub wall_time_s: f64,
    /// Simulated time over wall time.
    pub real_time_factor: f64,
    /// Present when the run completed.
    pub final_state: Option<FinalState>,
    pub log: Option<LogReport>,
    pub recording: Option<String>,
    /// The plots drawn (PNG and SVG).
    pub plots: Vec<String>,
    /// The viewer's page (`flight.html`), when one was written.
    pub viewer: Option<String>,
    /// Scenario events past the end of a run shortened on the command
    /// line, dropped (each: its key, action and time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_events: Vec<String>,
    /// The ULog export, when one was written.
    pub ulog: Option<String>,
    /// `sha256:<hex>` of the log file, when there is one.
    pub digest: Option<String>,
    /// Present when the run completed.
    pub verdict: Option<VerdictReport>,
    pub timeline: Vec<Entry>,
    pub timeline_dropped: u64,
    /// Outputs that could not be written after the flight (the ULog, the
    /// plots, the summary), each with its reason; the exit status counts
    /// them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_errors: Vec<String>,
}

impl FlightReport {
    /// The verdict passed (`false` when the run did not complete).
    pub fn passed(&self) -> bool {
        self.verdict.as_ref().is_some_and(|v| v.passed)
    }
}

/// What a report says of a flight besides what its engine knows.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportContext {
    /// The scenario as the user named it.
    pub scenario: String,
    pub description: Option<String>,
    pub overrides: Vec<Override>,
    pub autopilot: String,
    pub isolated: bool,
    pub seed: u64,
    /// The CSV log the engine writes, if any.
    pub log: Option<PathBuf>,
    /// The recording the engine writes, if any.
    pub recording: Option<PathBuf>,
}

/// The report of a flight whose engine ended with `result` after `wall_s`
/// seconds of stepping: the same for the CLI, the C ABI and Python,
/// whoever stepped the engine.
pub fn report(
    context: &ReportContext,
    engine: &Engine,
    result: &Result<Summary, EngineError>,
    wall_s: f64,
) -> FlightReport {
    let log_failed = matches!(result, Err(EngineError::Log(_)));
    let log = match (&context.log, engine.log()) {
        // What is on disk: a log whose writing failed holds only the rows
        // before the first one lost.
        (Some(l), Some(flog)) if log_failed => Some(LogReport {
            path: l.display().to_string(),
            rows: flog.on_disk().rows,
            last_time_us: flog.on_disk().last_time_us,
            complete: false,
        }),
        (Some(l), Some(flog)) => Some(LogReport {
            path: l.display().to_string(),
            rows: flog.rows(),
            last_time_us: flog.last_time_us(),
            complete: true,
        }),
        _ => None,
    };
    let (class, outcome, error) = match result {
        Ok(sum) if sum.verdict.passed() => (None, Outcome::Completed, None),
        Ok(_) => (
            Some(class::Classified {
                class: ErrorClass::ExpectationFailed,
                part: class::Part::Input,
                signal: None,
            }),
            Outcome::Completed,
            None,
        ),
        Err(e) => {
            let c = lockstep_harness::engine::classify::classify(e);
            let outcome = if c.class == ErrorClass::Interrupted {
                Outcome::Interrupted
            } else {
                Outcome::Stopped
            };
            (Some(c), outcome, Some(e.to_string()))
        }
    };
    let (timeline, timeline_dropped) = match result {
        Ok(sum) => (sum.timeline.clone(), sum.timeline_dropped),
        Err(_) => engine.timeline(),
    };
    let simulated_us = match result {
        Ok(sum) => sum.end.0,
        Err(_) => engine.now().0,
    };
    FlightReport {
        report_version: REPORT_VERSION,
        scenario: context.scenario.clone(),
        description: context.description.clone(),
        overrides: context.overrides.clone(),
        autopilot: context.autopilot.clone(),
        isolated: context.isolated,
        link_notes: engine.stack_notes(),
        vehicle: engine.plant().name.clone(),
        rotors: engine.plant().rotors.len(),
        seed: context.seed,
        outcome,
        error,
        error_class: class.map(|c| c.class),
        exit_status: class.map_or(EXIT_SUCCESS, class::Classified::exit_status),
        simulated_us,
        boundaries: result.as_ref().map_or(0, |s| s.boundaries),
        wall_time_s: wall_s,
        real_time_factor: real_time_factor(simulated_us, wall_s),
        final_state: result.as_ref().ok().map(FinalState::of),
        log,
        recording: context.recording.as_ref().map(|r| r.display().to_string()),
        plots: Vec::new(),
        viewer: None,
        dropped_events: Vec::new(),
        ulog: None,
        // Kept by the log's writer as it wrote (none when writing failed).
        digest: engine.log().and_then(|l| l.digest()),
        verdict: result.as_ref().ok().map(VerdictReport::of),
        timeline,
        timeline_dropped,
        output_errors: Vec::new(),
    }
}

/// Simulated over wall time; 0 when no wall time passed (a run of
/// nothing), never infinite or NaN (JSON has neither).
pub fn real_time_factor(simulated_us: u64, wall_s: f64) -> f64 {
    let r = simulated_us as f64 * 1e-6 / wall_s;
    if r.is_finite() { r } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_time_factor_is_always_a_number() {
        assert_eq!(real_time_factor(2_000_000, 0.5), 4.0);
        assert_eq!(real_time_factor(2_000_000, 0.0), 0.0);
        assert_eq!(real_time_factor(0, 0.0), 0.0);
    }
}
