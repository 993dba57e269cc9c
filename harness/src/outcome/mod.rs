//! What a run concluded: the verdict (crashes and `[expect]` checks), the
//! journal of events, and a vehicle's outcome as one serializable value.
//!
//! - [`class`]: one classification of errors (configuration, run failure,
//!   expectation failed, interrupted) and the part that failed.
//! - [`verdict`]: the crash monitor and the expectations checked at the end.
//! - [`journal`]: the timeline of events, mode changes, failsafes and crashes.
//! - [`report`]: a vehicle's final state, verdict and timeline as values.
//! - [`Summary`]: where a run ended, as the engine returns it.

pub mod class;
pub mod journal;
pub mod report;
mod summary;
pub mod verdict;

pub use summary::Summary;
