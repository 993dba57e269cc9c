//! What an orchestrated run did, as one value (its `summary.json`; made
//! by `crate::orchestrate`).

use std::collections::BTreeMap;

use lockstep_harness::outcome::class::ErrorClass;
use lockstep_orchestrator::{Stats, TimelineInfo};
use serde::{Deserialize, Serialize};

/// An orchestrated run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OrchestrateReport {
    pub fleet: String,
    pub description: Option<String>,
    pub timeline: TimelineInfo,
    pub seed: u64,
    pub threads: usize,
    /// Models run in child processes, and models reached elsewhere.
    pub processes: Vec<String>,
    pub remote: Vec<String>,
    /// The last timestamp processed.
    pub last_timestamp: u64,
    pub stats: Stats,
    pub wall_s: f64,
    pub calls_per_s: f64,
    /// What ended the run early, if anything.
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub exit_status: u8,
    /// What each model said at the end (a vehicle's `log`: where its
    /// flight log is).
    pub models: BTreeMap<String, serde_json::Value>,
    /// The viewer's page of the vehicles, when they wrote logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer: Option<String>,
    /// The plot of the vehicles' logs (`fleet.png`, `fleet.svg`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plots: Vec<String>,
    /// Outputs that could not be written (the summary, the trace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_errors: Vec<String>,
}

impl OrchestrateReport {
    /// Simulated seconds reached.
    pub fn simulated_s(&self) -> f64 {
        self.timeline.micros(self.last_timestamp) as f64 * 1e-6
    }
}
