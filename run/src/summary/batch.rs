//! What a Monte Carlo batch did, as one value (its `summary.json`; made
//! by `crate::batch`), a shard's the same with what `montecarlo merge`
//! checks.

use lockstep_harness::inputs::scenario::Override;
use lockstep_harness::outcome::class::ErrorClass;
use serde::{Deserialize, Serialize};

/// A batch's summary (`summary.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchReport {
    pub scenario: String,
    pub master_seed: u64,
    pub runs: usize,
    pub completed: usize,
    pub failed: usize,
    /// Completed runs whose verdict passed.
    pub passed: usize,
    pub motor_failures: usize,
    pub jobs: usize,
    pub workers: Workers,
    pub wall_s: f64,
    pub runs_per_s: f64,
    /// The signal that stopped the batch (its runs not flown are failed
    /// rows that say so).
    pub interrupted_by: Option<String>,
    pub stats: Vec<Stat>,
    /// The viewer's page (`montecarlo.html`), when one was written.
    #[serde(default)]
    pub viewer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub exit_status: u8,
    /// The shard of a batch this is (`--shard K/M`): its statistics are
    /// its runs' only, and `montecarlo merge` joins the shards.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Outputs that could not be written (the CSV, the summary, the
    /// histograms).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_errors: Vec<String>,
}

/// Where the runs fly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Workers {
    /// Each run in a child process of its own (the autopilot in-process
    /// there): a crash or hang of the library is that run's failed row,
    /// and every run starts from a freshly loaded library.
    Processes,
    /// Runs on threads of this process, the autopilot in-process: no
    /// process start per run, but only for a library that declares itself
    /// re-entrant, and a crash of the library ends the batch.
    Threads,
}

impl Workers {
    /// Its name as the summary and `--workers` write it.
    pub fn name(self) -> &'static str {
        match self {
            Workers::Processes => "processes",
            Workers::Threads => "threads",
        }
    }
}

/// Statistics of one measurement over the completed runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    pub name: String,
    pub mean: f64,
    pub std: f64,
    pub min: f64,
    pub p5: f64,
    pub p50: f64,
    pub p95: f64,
    pub max: f64,
}

/// What a shard's summary says of the batch it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    pub index: u64,
    pub of: u64,
    /// Its runs: `first_run` to `end_run` (excluded) of `total_runs`.
    pub first_run: u64,
    pub end_run: u64,
    pub total_runs: u64,
    /// The overrides the batch was given.
    pub overrides: Vec<Override>,
    /// Each input file (scenario, spec, mission) and its SHA-256.
    pub inputs: Vec<(String, String)>,
    pub autopilot: String,
    pub autopilot_digest: String,
    /// The lockstep that flew it.
    pub version: String,
}
