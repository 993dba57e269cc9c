//! lockstep-harness: the lockstep runtime.
//!
//! Built so far (the runtime issue is in progress): the microsecond time type
//! and cadence validation ([`time`]), the timeline of boundaries ([`timeline`]),
//! the canonical stage order ([`stage`]), and named random streams ([`rng`]).

pub mod dryden;
pub mod engine;
pub mod error;
pub mod log;
pub mod mission;
pub mod record;
pub mod rng;
pub mod scenario;
pub mod sensors;
pub mod stage;
pub mod time;
pub mod timeline;
pub mod vehicle;
pub mod wind;

pub use error::ConfigError;
pub use time::{Cadence, Micros};
