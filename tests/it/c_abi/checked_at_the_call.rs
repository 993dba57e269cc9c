//! What a C host hands over is checked where it enters: output paths that
//! would overwrite an input or each other, and values outside the bounds
//! the scenario file has for the same quantities. Each refusal names the
//! argument and leaves the handle (and every file) as it was.

use lockstep::lockstep_status::*;

use super::{new_sim, options};
use crate::common::{BUNDLED, TempDir, idle_scenario};

/// `log_path` naming the scenario replaced the scenario by a CSV, and
/// `record_path` = `log_path` tore both: refused at creation, nothing
/// written.
#[test]
fn a_log_or_recording_over_an_input_or_each_other_is_refused() {
    let dir = TempDir::new("c-abi-outputs");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let before = std::fs::read(&scenario).unwrap();
    let (o, _keep) = options(std::path::Path::new(BUNDLED), 0, Some(&scenario));
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "options.log_path {} is the scenario; refusing to overwrite an input",
                scenario.display()
            )
        )
    );
    let (o, _keep) = options(
        std::path::Path::new(BUNDLED),
        0,
        Some(std::path::Path::new(BUNDLED)),
    );
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "options.log_path {BUNDLED} is the autopilot library; refusing to overwrite an input"
            )
        )
    );
    let log = dir.join("run.csv");
    let (mut o, _keep) = options(std::path::Path::new(BUNDLED), 0, Some(&log));
    o.record_path = o.log_path;
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "options.log_path and options.record_path name the same file {}",
                log.display()
            )
        )
    );
    let sidecar = super::c(&format!("{}.json", log.display()));
    o.record_path = sidecar.as_ptr();
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "the log's sidecar and options.record_path name the same file {}.json",
                log.display()
            )
        )
    );
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    assert!(!log.exists());
}
