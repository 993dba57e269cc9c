//! Where a run ended: what the engine returns at its end.

use crate::Micros;
use crate::outcome::journal::Entry;
use crate::outcome::verdict::Verdict;

/// Where a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    pub end: Micros,
    pub boundaries: u64,
    pub position_ned_m: [f64; 3],
    pub mode: u32,
    pub armed: bool,
    pub mission_finished: bool,
    pub soc: f64,
    pub log_rows: u64,
    /// Crashes detected and the scenario's `[expect]` checks.
    pub verdict: Verdict,
    /// Events, mode changes, failsafes and crashes in time order.
    pub timeline: Vec<Entry>,
    /// Timeline entries dropped past [`crate::outcome::journal::MAX_ENTRIES`].
    pub timeline_dropped: u64,
    /// The largest tilt and the smallest state of charge seen by the
    /// verdict's monitor (at the autopilot's cadence), and whether the
    /// vehicle ended on the ground.
    pub max_tilt_deg: f64,
    pub min_soc: f64,
    pub on_ground: bool,
}
