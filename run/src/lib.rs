//! lockstep-run: what a front end needs to run something and get a typed
//! result, with no printing. The CLI, the C ABI and the Python package all
//! call this layer; none of them re-derives what it knows.
//!
//! - [`flight`]: one vehicle (a scenario and its overrides), its outputs and
//!   their preconditions, a [`flight::FlightReport`].
//! - [`fleet`]: a fleet scenario on threads, or across a primary and its
//!   secondaries ([`fleet::distributed`]), a [`fleet::FleetReport`].
//! - [`cosim`]: a co-simulation (a system file), a [`cosim::CosimReport`].
//! - [`orchestrate`]: an orchestrated delivery fleet, an
//!   [`orchestrate::OrchestrateReport`].
//! - [`hosts`]: parts of a run served by processes of their own.
//! - [`net`]: where a run meets its peers on the network.
//! - [`choice`]: what to fly, as a front end's arguments say it.
//! - [`batch`]: Monte Carlo batches (draws, the worker pool, the worker
//!   process's entry point, aggregates), a [`batch::BatchReport`].
//! - [`study`]: integrators compared on a recorded flight.
//! - [`session`]: a flight stepped by its front end (C, Python).
//! - [`replay`]: a recording replayed, compared, written as a log.
//! - [`package`]: a scenario's vehicle packaged as an FMI 2.0 FMU.
//! - [`assets`]: what the binary carries (the reference autopilot, the
//!   default scenario, the bundled FMUs).
//! - [`outputs`]: the one check of outputs against inputs.
//! - [`plots`]: a flight log drawn.
//! - [`summary`]: what a run leaves behind: the files of its out directory
//!   ([`summary::OutDir`]) and its `summary.json`, one report per kind of
//!   run tagged with the kind ([`summary::RunSummary`]).
//! - [`RunError`] and the classification every front end maps
//!   ([`ErrorClass`]: exit statuses, C status codes, Python exceptions).

pub mod assets;
pub mod batch;
pub mod choice;
pub mod cosim;
pub mod examples;
pub mod fleet;
pub mod flight;
pub mod gcs;
pub mod hosts;
pub mod ident;
pub mod net;
pub mod orchestrate;
pub mod outputs;
pub mod package;
pub mod plots;
pub mod replay;
pub mod session;
pub mod study;
pub mod summary;
pub mod view;

pub use lockstep_harness::outcome::class::{Classified, ErrorClass, Part};

/// A run refused before it started, or one that could not start: its
/// class, the message, and lines that say more.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RunError {
    pub class: ErrorClass,
    /// The part that failed, when it is known.
    pub part: Option<Part>,
    /// The signal that stopped it, when one did.
    pub signal: Option<i32>,
    pub message: String,
    /// Lines that say more (the autopilot library's path...).
    pub context: Vec<String>,
}

impl RunError {
    /// An input refused.
    pub fn configuration(message: impl Into<String>) -> RunError {
        RunError {
            class: ErrorClass::Configuration,
            part: Some(Part::Input),
            signal: None,
            message: message.into(),
            context: Vec::new(),
        }
    }

    /// A run that failed (an autopilot, an output, a peer).
    pub fn run_failure(message: impl Into<String>) -> RunError {
        RunError {
            class: ErrorClass::RunFailure,
            part: None,
            signal: None,
            message: message.into(),
            context: Vec::new(),
        }
    }

    /// An error classified by [`lockstep_harness::outcome::class`].
    pub fn classified(c: Classified, message: impl Into<String>) -> RunError {
        RunError {
            class: c.class,
            part: Some(c.part),
            signal: c.signal,
            message: message.into(),
            context: Vec::new(),
        }
    }

    /// An engine's error while it ran, classified.
    pub fn of_run(e: &lockstep_harness::engine::EngineError) -> RunError {
        RunError::classified(
            lockstep_harness::engine::classify::classify(e),
            e.to_string(),
        )
    }

    /// An engine's error while it was built, classified.
    pub fn of_build(e: &lockstep_harness::engine::EngineError) -> RunError {
        RunError::classified(
            lockstep_harness::engine::classify::classify_build(e),
            e.to_string(),
        )
    }

    /// The process's exit status for it.
    pub fn exit_status(&self) -> u8 {
        self.class.exit_status(self.signal)
    }
}
