//! lockstep-harness: the lockstep runtime.
//!
//! - [`time`], [`timeline`], [`stage`]: integer-microsecond time, exact
//!   cadences, boundaries, and the canonical stage order.
//! - [`scenario`], [`mission`]: what to fly (TOML scenarios, QGC missions).
//! - [`engine`]: the fixed-step and event-driven engines.
//! - [`wind`], [`dryden`], [`sensors`], [`rng`], [`ziggurat`]: the sources
//!   and their random streams.
//! - [`vehicle`]: the autopilot's view of the plant.
//! - [`log`], [`record`]: the CSV flight log, recording and replay.
//! - [`integrator_study`]: integrators compared on a recorded flight.

pub mod autopilot_params;
pub mod dryden;
pub mod engine;
pub mod error;
pub mod integrator_study;
pub mod journal;
pub mod log;
pub mod log_compare;
pub mod log_meta;
pub mod mission;
pub mod montecarlo;
pub mod paths;
pub mod persist;
pub mod record;
pub mod replay_log;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sensors;
pub mod stage;
pub mod time;
pub mod timeline;
pub mod ulog;
pub mod vehicle;
pub mod verdict;
pub mod wind;
pub mod world;
pub mod ziggurat;

pub use error::ConfigError;
pub use time::{Cadence, Micros};
