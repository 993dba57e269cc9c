//! lockstep-harness: the lockstep runtime, in folders named for what they
//! hold.
//!
//! - [`time`]: integer-microsecond time, exact cadences, the timeline of
//!   boundaries, the canonical stage order, named random streams.
//! - [`inputs`]: what to fly (TOML scenarios and their overrides, missions,
//!   the world origin, autopilot parameters).
//! - [`environment`]: wind and the sensor and estimator models.
//! - [`engine`]: the fixed-step and event-driven engines that step a vehicle
//!   (plant, avionics, autopilot bridge) through the timeline.
//! - [`outcome`]: the verdict, the journal, a vehicle's outcome as a value.
//! - [`io`]: the flight log and its sidecar, ULog, recordings and replay,
//!   saved state, output paths.

pub mod engine;
pub mod environment;
pub mod inputs;
pub mod io;
pub mod outcome;
pub mod time;

pub use time::{Cadence, CadenceError, Micros};
