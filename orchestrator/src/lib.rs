//! An event-driven orchestrator of models (seed 004): models register data
//! masks (what they publish and subscribe to, over `dataset/group/attribute`
//! keys with `*` wildcards); the orchestrator keeps a timeline of each
//! model's next wake-up (none: steady state), wakes the earliest, forwards
//! what they produce to the subscribers, and cascades within the timestamp
//! until no model produces data — bounded by a pass limit, results routed
//! in model-id order so arrival order never matters. [`wire`] carries a
//! model's calls to another process.

pub mod mask;
pub mod model;
pub mod run;
pub mod wire;

pub use mask::{DataMask, Key, Pattern};
pub use model::{Model, Moment, Outcome, TimelineInfo, Timestamp, Update};
pub use run::{Call, DEFAULT_PASS_LIMIT, Orchestrator, OrchestratorError, Stats};
