//! A vehicle's outcome as JSON: what `lockstep fly` reports for each
//! vehicle of a fleet, the same whether the fleet ran in one process or
//! across many (a secondary sends it to the primary as this text).

use lockstep_harness::engine::Summary;
use lockstep_harness::journal::Entry;
use lockstep_harness::report::{FinalState, VerdictReport};

#[derive(Debug, serde::Serialize)]
struct Outcome<'a> {
    passed: bool,
    final_state: FinalState,
    verdict: VerdictReport,
    timeline: &'a [Entry],
    timeline_dropped: u64,
}

/// `s` as the JSON object a fleet report holds for a vehicle (`passed`,
/// `final_state`, `verdict`, `timeline`, `timeline_dropped`).
pub fn summary_json(s: &Summary) -> String {
    serde_json::to_string(&Outcome {
        passed: s.verdict.passed(),
        final_state: FinalState::of(s),
        verdict: VerdictReport::of(s),
        timeline: &s.timeline,
        timeline_dropped: s.timeline_dropped,
    })
    .expect("a vehicle's outcome serializes")
}
