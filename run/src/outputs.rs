//! The one check of outputs against inputs: a run refuses, before it
//! starts, an output that names one of its inputs (the scenario, the
//! autopilot library, the spec or the mission) or another output.

use std::path::Path;

use lockstep_harness::io::paths::check_outputs;
pub use lockstep_harness::io::paths::scenario_inputs;

use crate::RunError;

/// Refuses an output that names an input or another output.
pub fn check_against_inputs(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, &Path)],
) -> Result<(), RunError> {
    check_outputs(inputs, outputs).map_err(|m| {
        RunError::classified(
            crate::Classified::new(crate::ErrorClass::Configuration, crate::Part::Argument),
            m,
        )
    })
}

/// Creates the directory `dir` (given as `flag`) with its parents, and
/// makes sure a file can be written in it (a file created and removed at
/// once, never seen): a read-only directory is refused before the run, not
/// found when the run's outputs are written at its end.
pub fn make_dir(flag: &str, dir: &Path) -> Result<(), RunError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        RunError::configuration(format!(
            "{flag} {}: cannot create the directory: {e}",
            dir.display()
        ))
    })?;
    tempfile::tempfile_in(dir).map(drop).map_err(|e| {
        RunError::configuration(format!(
            "{flag} {}: cannot write in the directory: {e}",
            dir.display()
        ))
    })
}
