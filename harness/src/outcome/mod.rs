//! What a run concluded: the verdict (crashes and `[expect]` checks), the
//! journal of events, and a vehicle's outcome as one serializable value.
//!
//! - [`verdict`]: the crash monitor and the expectations checked at the end.
//! - [`journal`]: the timeline of events, mode changes, failsafes and crashes.
//! - [`report`]: a vehicle's final state, verdict and timeline as values.
//! - [`Summary`]: where a run ended, as the engine returns it.

pub mod journal;
pub mod report;
mod summary;
pub mod verdict;

pub use summary::Summary;
