//! One Monte Carlo run in this process.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use lockstep_abi::Isolation;
use lockstep_plant::AircraftSpec;
use sha2::{Digest, Sha256};

use super::Draw;
use super::report::{Metrics, RunRow, RunStatus};
use crate::choice::Spelling;
use crate::flight::{FlightOutputs, FlightRequest, ScenarioSource};
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::outcome::report::VerdictReport;

/// Flies run `draw.run` of a batch over `base` with the autopilot at
/// `autopilot`: the draw applied, no log (a `log` cadence stays, so the
/// boundaries are those of `fly`). Never fails: an error of any
/// kind (the spec, the library, a crash the isolation caught, the
/// integration) is a failed row with its reason. A signal number stored in
/// `interrupt` stops the flight at its next boundary (a failed row).
pub fn fly(
    base: &Scenario,
    autopilot: &Path,
    isolation: &Isolation,
    draw: &Draw,
    interrupt: Option<Arc<AtomicUsize>>,
) -> RunRow {
    let rotors = match AircraftSpec::resolve(&base.spec) {
        Ok(s) => s.rotors.len(),
        Err(e) => return RunRow::failed(draw, 0, e.to_string()),
    };
    let mut row = RunRow::new(draw, rotors);
    let mut s = base.clone();
    draw.apply(&mut s, rotors);
    let start = s.start;
    // Prepared as every flight is (the same checks, the same engine).
    let request = FlightRequest {
        scenario: ScenarioSource::Loaded(Box::new(s)),
        autopilot: autopilot.to_path_buf(),
        overrides: Vec::new(),
        outputs: FlightOutputs::default(),
        isolation: isolation.clone(),
        spelling: Spelling::Cli,
    };
    let mut engine = match crate::flight::prepare(request) {
        Ok(p) => p.into_engine(),
        Err(e) => {
            row.status = RunStatus::Failed(e.message);
            return row;
        }
    };
    if let Some(flag) = interrupt {
        engine.interrupt_on(flag);
    }
    match engine.run() {
        Ok(sum) => {
            let x = engine.state();
            let mut h = Sha256::new();
            h.update(sum.end.0.to_le_bytes());
            for v in x {
                h.update(v.to_bits().to_le_bytes());
            }
            let digest = lockstep_harness::io::digest::hex(&h.finalize());
            row.metrics = Some(Metrics {
                passed: sum.verdict.passed(),
                why: VerdictReport::of(&sum).failures(),
                crashes: sum.verdict.crashes.len(),
                end_s: sum.end.0 as f64 * 1e-6,
                landing_error_m: (x[0] - start.0).hypot(x[1] - start.1),
                altitude_m: -x[2],
                on_ground: sum.on_ground,
                max_tilt_deg: sum.max_tilt_deg,
                // Infinite when the monitor saw no sample (a run shorter
                // than the autopilot's period): the final charge then.
                min_soc: sum.min_soc.min(sum.soc),
                mission_finished: sum.mission_finished,
                digest: format!("sha256:{digest}"),
            });
        }
        Err(e) => row.status = RunStatus::Failed(e.to_string()),
    }
    row
}
