//! What a model is to the orchestrator: a data mask, an initialization, and
//! an update called when its wake-up time comes or data it subscribes to
//! arrives; each call returns the data it produced and its next wake-up.

use std::collections::BTreeMap;

use crate::mask::{DataMask, Key};

/// A point of the simulation's discrete timeline.
pub type Timestamp = u64;

/// How timestamps map to world time (the source's TimelineInfo, with the
/// time scale in whole microseconds so no float time drives the run).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TimelineInfo {
    /// Unix time, s, of timestamp 0.
    pub reference: f64,
    /// What one timestamp stands for, µs.
    pub time_scale_us: u64,
    /// The first timestamp.
    pub start_time: Timestamp,
    /// Timestamps the run lasts: it ends after `start_time + duration`.
    pub duration: Timestamp,
}

impl TimelineInfo {
    pub fn end(&self) -> Timestamp {
        self.start_time.saturating_add(self.duration)
    }

    /// Microseconds since timestamp 0.
    pub fn micros(&self, t: Timestamp) -> u64 {
        t.saturating_mul(self.time_scale_us)
    }

    /// Unix time, s, of `t` (for display and models' own use).
    pub fn world_time_s(&self, t: Timestamp) -> f64 {
        self.reference + self.micros(t) as f64 * 1e-6
    }
}

/// The time a model is called at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moment {
    pub timestamp: Timestamp,
    pub info: TimelineInfo,
}

impl Moment {
    pub fn micros(&self) -> u64 {
        self.info.micros(self.timestamp)
    }

    pub fn world_time_s(&self) -> f64 {
        self.info.world_time_s(self.timestamp)
    }
}

/// Data a model produced, delivered to each subscriber restricted to the
/// keys it subscribes to.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Update {
    /// The producing model's name.
    pub from: String,
    pub timestamp: Timestamp,
    pub data: BTreeMap<Key, serde_json::Value>,
}

/// What one call of a model returns.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    /// The data it produced (empty: no update).
    pub data: BTreeMap<Key, serde_json::Value>,
    /// When to wake it next (later than now), or `None`: only when data it
    /// subscribes to arrives (steady state).
    pub next_time: Option<Timestamp>,
}

impl Outcome {
    /// Nothing produced, woken next at `next_time`.
    pub fn wake_at(next_time: Option<Timestamp>) -> Outcome {
        Outcome {
            data: BTreeMap::new(),
            next_time,
        }
    }

    /// Adds `value` under `key`.
    pub fn with(mut self, key: Key, value: serde_json::Value) -> Outcome {
        self.data.insert(key, value);
        self
    }
}

/// A model taking part in an orchestrated run.
pub trait Model: Send {
    /// What it publishes and subscribes to (fixed for the run).
    fn mask(&self) -> DataMask;
    /// Called once, at the start time, before any update.
    fn initialize(&mut self, at: Moment) -> Result<Outcome, String>;
    /// Called at `at` because its wake-up came, or data arrived (`inbox`:
    /// the updates since its last call, oldest first, each holding only
    /// the keys it subscribes to), or both.
    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String>;
    /// Whether the model can still be called (a model in another process
    /// whose process died says why); checked at every timestamp, so a dead
    /// model ends the run even when it is not due.
    fn alive(&self) -> Result<(), String> {
        Ok(())
    }
    /// The end of the run: what it has to say (`null` when nothing).
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}
