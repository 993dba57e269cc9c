//! The one check of outputs against inputs: a run refuses, before it
//! starts, an output that names one of its inputs (the scenario, the
//! autopilot library, the spec or the mission) or another output.

use std::path::Path;

use lockstep_harness::inputs::scenario::Scenario;
use lockstep_harness::io::paths::check_outputs;

use crate::RunError;

/// The files a run of `s` reads, named for the check: the scenario, the
/// autopilot library, the spec when it is a file, and the mission.
pub fn scenario_inputs<'a>(
    scenario: &'a Path,
    autopilot: &'a Path,
    s: &'a Scenario,
) -> Vec<(&'static str, &'a Path)> {
    let mut inputs = vec![
        ("the scenario", scenario),
        ("the autopilot library", autopilot),
    ];
    let spec = Path::new(&s.spec);
    if spec.is_file() {
        inputs.push(("the aircraft spec", spec));
    }
    if let Some(m) = &s.mission {
        inputs.push(("the mission", m.as_path()));
    }
    inputs
}

/// Refuses an output that names an input or another output.
pub fn check_against_inputs(
    inputs: &[(&str, &Path)],
    outputs: &[(&str, &Path)],
) -> Result<(), RunError> {
    check_outputs(inputs, outputs).map_err(RunError::configuration)
}

/// Creates the directory `dir` (given as `flag`) with its parents.
pub fn make_dir(flag: &str, dir: &Path) -> Result<(), RunError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        RunError::configuration(format!(
            "{flag} {}: cannot create the directory: {e}",
            dir.display()
        ))
    })
}
