//! The entry point of a batch's worker process (`lockstep montecarlo-run`):
//! one run of the batch in this process, its row printed as JSON on a line
//! that starts with [`ROW_PREFIX`].

use std::path::Path;

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::{Override, Scenario};

use super::{Draw, RunRow, fly};
use crate::RunError;

/// What starts a worker's row on its stdout: the row is found by this
/// prefix, since an autopilot may print there too (and C's buffered
/// output reaches the pipe at exit, after the row).
pub const ROW_PREFIX: &str = "lockstep-montecarlo-row ";

/// Flies run `run` of the batch over the scenario (with its overrides) in
/// this process; its row.
pub fn run(
    scenario: &Path,
    autopilot: &Path,
    overrides: &[Override],
    run: u64,
) -> Result<RunRow, RunError> {
    let s = Scenario::load_with(scenario, overrides)
        .map_err(|e| RunError::configuration(e.to_string()))?;
    let Some(d) = s.montecarlo else {
        return Err(RunError::configuration(format!(
            "{} has no [montecarlo] section",
            scenario.display()
        )));
    };
    let draw = Draw::new(&d, s.seed, run, s.tick);
    Ok(fly(&s, autopilot, &Isolation::InProcess, &draw, None))
}

/// The line a worker prints its row on.
pub fn row_line(row: &RunRow) -> String {
    format!(
        "{ROW_PREFIX}{}",
        serde_json::to_string(row).expect("a row is JSON")
    )
}
