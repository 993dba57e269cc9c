//! What a fleet run did, as one value, the same whether the fleet flew on
//! threads of one process or across a primary and its secondaries (made by
//! `crate::fleet`).

use lockstep_fleet::run::LookaheadStats;
use lockstep_harness::outcome::class::ErrorClass;
use lockstep_harness::outcome::report::VehicleOutcome;
use serde::{Deserialize, Serialize};

use super::flight::Outcome;

/// How the fleet ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum FleetRun {
    /// On threads of one process.
    Threads { threads: usize },
    /// Across a primary and its secondaries.
    Distributed {
        secondaries: u32,
        /// The rounds, when the run ended (not on an error).
        #[serde(flatten)]
        rounds: Option<Rounds>,
    },
}

/// A distributed run's rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    pub session: String,
    pub rounds: u64,
    pub migrations: u64,
    pub refused_acks: u64,
    /// Vehicles kept where they started: their autopilot cannot move, or
    /// they are served to ground stations.
    pub pinned: Vec<String>,
    /// Wall time of a time-advancing round, µs.
    pub round_latency_us: Percentiles,
    /// Where those rounds' wall time went, s, summed over them.
    pub round_parts_s: RoundPartsSeconds,
}

/// A distributed run's round time by part, along each round's critical
/// path (see `lockstep_distributed::RoundParts`), s; the parts add up to
/// the rounds' time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundPartsSeconds {
    /// The step encoded and handed to the link.
    pub send: f64,
    /// The work of the secondary whose ack came last (as its ack says).
    pub secondary: f64,
    /// The rest of the wait for that ack: the messages on their way,
    /// sealed, encoded and decoded.
    pub transit: f64,
    /// The last ack's digest checked.
    pub checks: f64,
    /// The acks' rows read, and written to the logs or held.
    pub rows: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Percentiles {
    /// The 50th, 90th and 99th percentiles of `values` (0 when empty).
    pub fn of(mut values: Vec<f64>) -> Percentiles {
        values.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            values
                .get(((values.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        Percentiles {
            p50: pct(0.5),
            p90: pct(0.9),
            p99: pct(0.99),
        }
    }
}

/// One vehicle of the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetVehicle {
    pub name: String,
    /// Its log in the out directory, when it wrote one.
    pub log: Option<String>,
    pub digest: Option<String>,
    /// Its outcome (absent when the run did not end).
    #[serde(flatten)]
    pub outcome: Option<VehicleOutcome>,
}

/// The stem of a fleet's plot in its out directory.
pub const FLEET_PLOT: &str = "fleet";

/// An encounter of two vehicles (or the closest they came).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EncounterReport {
    pub time_us: u64,
    /// `proximity`, `proximity_end`, `collision` or `closest`.
    pub kind: String,
    pub a: String,
    pub b: String,
    pub separation_m: f64,
}

/// A fleet run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    pub scenario: String,
    pub seed: u64,
    pub sync_period_us: u64,
    pub run: FleetRun,
    pub outcome: Outcome,
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub exit_status: u8,
    pub simulated_us: u64,
    pub wall_time_s: f64,
    pub real_time_factor: f64,
    pub vehicles: Vec<FleetVehicle>,
    pub encounters: Vec<EncounterReport>,
    pub encounters_dropped: u64,
    pub closest: Option<EncounterReport>,
    pub collisions: usize,
    /// Events dropped because the run was shortened on the command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_events: Vec<String>,
    /// The sync boundaries the vehicles met at, and what the lookahead
    /// did: rounds (barriers, or rounds between a primary and its
    /// secondaries) and stretches redone (absent when the run did not end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookahead: Option<LookaheadReport>,
    /// The viewer's page (`flight.html`), when one was written.
    pub viewer: Option<String>,
    /// The fleet's plot (`fleet.png` and `.svg`: paths and altitudes),
    /// when the vehicles wrote logs.
    #[serde(default)]
    pub plots: Vec<String>,
    /// Outputs that could not be written (the summary).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_errors: Vec<String>,
    /// A served fleet's link: what it ignored and sends that failed, one
    /// line per kind (a vehicle's begin with its name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_notes: Vec<String>,
}

/// What the lookahead did in a run that ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookaheadReport {
    /// Sync boundaries the separation was checked at.
    pub syncs: u64,
    #[serde(flatten)]
    pub stats: LookaheadStats,
}

impl FleetReport {
    /// Every vehicle's verdict passed.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self
                .vehicles
                .iter()
                .all(|v| v.outcome.as_ref().is_some_and(|o| o.passed))
    }
}
