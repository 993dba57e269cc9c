//! What a co-simulation did, as one value (its `summary.json`; made by
//! `crate::cosim`).

use std::collections::BTreeMap;

pub use lockstep_cosim::{ParticipantReport, TransferReport};
use lockstep_harness::outcome::class::ErrorClass;
use serde::{Deserialize, Serialize};

/// A co-simulation run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CosimReport {
    pub system: String,
    pub description: Option<String>,
    /// `serialized` or `parallel`.
    pub mode: String,
    pub threads: usize,
    pub step_us: u64,
    pub duration_us: u64,
    pub reached_us: u64,
    pub wall_s: f64,
    pub real_time_factor: f64,
    /// The record (`cosim.csv`) and its digest.
    pub record: String,
    pub record_digest: Option<String>,
    /// The first failure: the run's, else finishing's, else the record's.
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub exit_status: u8,
    pub participants: BTreeMap<String, ParticipantReport>,
    pub transfers: BTreeMap<String, TransferReport>,
    /// Outputs that could not be written (the summary).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_errors: Vec<String>,
}

impl CosimReport {
    /// The vehicles whose verdict failed.
    pub fn failed_vehicles(&self) -> Vec<&str> {
        self.participants
            .iter()
            .filter(|(_, r)| r.vehicle().and_then(|v| v.passed()) == Some(false))
            .map(|(n, _)| n.as_str())
            .collect()
    }
}
