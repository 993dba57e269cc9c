//! lockstep-harness: the lockstep runtime, in folders named for what they
//! hold, each using only those listed above it (`tests/it/layers.rs` checks):
//!
//! - [`persist`]: a running state as bytes, the format every part saves to.
//! - [`time`]: integer-microsecond time, exact cadences, the timeline of
//!   boundaries, the canonical stage order, named random streams.
//! - [`environment`]: wind and the sensor and estimator models.
//! - [`inputs`]: what to fly (TOML scenarios and their overrides, the
//!   `[expect]` conditions, missions, the world origin, autopilot parameters).
//! - [`outcome`]: the verdict, the journal, a vehicle's outcome as a value,
//!   the one error classification.
//! - [`io`]: the flight log and its sidecar, ULog, recordings and replay,
//!   output paths.
//! - [`engine`]: the fixed-step and event-driven engines that step a vehicle
//!   (plant, avionics, autopilot bridge) through the timeline, and their
//!   errors classified.

pub mod engine;
pub mod environment;
pub mod inputs;
pub mod io;
pub mod outcome;
pub mod persist;
pub mod time;

pub use time::{Cadence, CadenceError, Micros};
