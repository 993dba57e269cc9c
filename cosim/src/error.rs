//! The co-simulation's errors: each names the participant, variable or
//! transfer function concerned and, for a run, the simulated time.

use lockstep_harness::Micros;

#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// A system file that cannot be read or does not describe a system:
    /// the file, the key, its line and column.
    #[error(transparent)]
    File(#[from] lockstep_config::ConfigError),
    /// A participant that cannot be made (its scenario, library or FMU).
    #[error("participant `{participant}`: {reason}")]
    Setup { participant: String, reason: String },
    /// The system as assembled is inconsistent (unknown names, widths,
    /// periods, cycles); `what` names the transfer function or participant.
    #[error("{what}: {reason}")]
    Build { what: String, reason: String },
    /// A participant failed; `during` says in what (`step`, `set_input`,
    /// `output`, `finish`).
    #[error("participant `{participant}` failed in {during} at {time_us}: {message}")]
    Participant {
        participant: String,
        during: &'static str,
        time_us: Micros,
        message: String,
    },
    #[error("transfer function `{transfer}` failed at {time_us}: {message}")]
    Transfer {
        transfer: String,
        time_us: Micros,
        message: String,
    },
    #[error("cannot start {threads} worker threads: {reason}")]
    Threads { threads: usize, reason: String },
    #[error("cannot write {path}: {reason}")]
    Record { path: String, reason: String },
    /// A signal (SIGINT, SIGTERM) stopped the run after the step that
    /// reached `time_us`: everything up to there is written.
    #[error("interrupted by {} at {}", lockstep_abi::signal_name(*signal), lockstep_abi::at(time_us.0))]
    Interrupted { signal: i32, time_us: Micros },
}

impl CosimError {
    pub(crate) fn build(what: impl Into<String>, reason: impl Into<String>) -> CosimError {
        CosimError::Build {
            what: what.into(),
            reason: reason.into(),
        }
    }
}
