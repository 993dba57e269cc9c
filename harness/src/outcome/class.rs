//! One classification of what went wrong, for every front end: the CLI's
//! exit statuses, the C ABI's status codes and Python's exceptions all
//! derive from [`Classified`], and nothing else classifies an error (an
//! engine's errors are classified beside them: `engine::classify`).
//!
//! Two questions, answered once: was it the input's fault, the run's, the
//! verdict's or a signal's ([`ErrorClass`]), and which part failed
//! ([`Part`]: the C ABI names it in its status codes).

use serde::{Deserialize, Serialize};

/// How a run that did not succeed went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// An input was refused before the run started: an argument, the
    /// scenario, spec or mission, an output path, or a library the
    /// loader's checks refuse (file, ELF, symbols, ABI version, layout,
    /// capabilities) or whose parameters or mission refuse the scenario's.
    Configuration,
    /// The autopilot failed (crashed, exited, hung, broke the contract or
    /// refused to create), the integration failed, an output could not be
    /// written, or a peer was lost.
    RunFailure,
    /// The run completed but its verdict failed: a crash was detected or an
    /// `[expect]` condition was not met.
    ExpectationFailed,
    /// SIGINT or SIGTERM stopped it.
    Interrupted,
}

/// The exit status of a successful run.
pub const EXIT_SUCCESS: u8 = 0;

impl ErrorClass {
    /// The process's exit status (documented in the README): 2
    /// configuration, 1 run failure, 3 expectation failed, 128 + the
    /// signal's number when interrupted (130 without a number).
    pub fn exit_status(self, signal: Option<i32>) -> u8 {
        match self {
            ErrorClass::Configuration => 2,
            ErrorClass::RunFailure => 1,
            ErrorClass::ExpectationFailed => 3,
            ErrorClass::Interrupted => {
                128u8.saturating_add(signal.unwrap_or(2).clamp(0, 127) as u8)
            }
        }
    }

    /// The class an exit status stands for (`None` for success).
    pub fn of_exit_status(status: u8) -> Option<ErrorClass> {
        match status {
            0 => None,
            2 => Some(ErrorClass::Configuration),
            3 => Some(ErrorClass::ExpectationFailed),
            s if s > 128 => Some(ErrorClass::Interrupted),
            _ => Some(ErrorClass::RunFailure),
        }
    }

    /// Its name in reports and exceptions.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Configuration => "configuration",
            ErrorClass::RunFailure => "run_failure",
            ErrorClass::ExpectationFailed => "expectation_failed",
            ErrorClass::Interrupted => "interrupted",
        }
    }
}

/// Which part of a run failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    /// A scenario, spec, mission, cadence or other input.
    Input,
    /// An argument a host passed (a time, a state, a recording started late).
    Argument,
    /// The autopilot library: loading, validation or a call.
    Autopilot,
    /// The plant's integration.
    Plant,
    /// Writing an output (log, recording).
    Output,
    /// A time before the current one, or not the boundary awaited.
    Time,
    /// The run had ended.
    Ended,
    /// Not possible in this mode (a plant fault on a host-owned plant).
    Unsupported,
    /// A signal stopped the run.
    Signal,
}

/// An error's class, the part that failed, and the signal that stopped the
/// run (when one did).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Classified {
    pub class: ErrorClass,
    pub part: Part,
    pub signal: Option<i32>,
}

impl Classified {
    /// A classification without a signal.
    pub fn new(class: ErrorClass, part: Part) -> Classified {
        Classified {
            class,
            part,
            signal: None,
        }
    }

    /// The process's exit status.
    pub fn exit_status(self) -> u8 {
        self.class.exit_status(self.signal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_statuses_are_the_documented_ones() {
        assert_eq!(ErrorClass::Configuration.exit_status(None), 2);
        assert_eq!(ErrorClass::RunFailure.exit_status(None), 1);
        assert_eq!(ErrorClass::ExpectationFailed.exit_status(None), 3);
        assert_eq!(ErrorClass::Interrupted.exit_status(Some(15)), 143);
        assert_eq!(ErrorClass::Interrupted.exit_status(Some(2)), 130);
        for c in [
            ErrorClass::Configuration,
            ErrorClass::RunFailure,
            ErrorClass::ExpectationFailed,
            ErrorClass::Interrupted,
        ] {
            assert_eq!(ErrorClass::of_exit_status(c.exit_status(Some(15))), Some(c));
        }
        assert_eq!(ErrorClass::of_exit_status(0), None);
    }
}
