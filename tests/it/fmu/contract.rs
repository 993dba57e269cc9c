//! The FMI 2.0 contract as a master meets it: what the standard lets a
//! master do wrong is refused with an error status and the instance left
//! as it was, never a crash or a file destroyed.

use std::path::Path;

use super::master::{Fmu, description, package, root};
use crate::common::{BUNDLED, TempDir};

/// A master that sets `log_path` to one of the FMU's own files (its
/// scenario: the FMU was destroyed, replaced by a CSV) is refused at the
/// call, and the file is untouched.
#[test]
fn a_log_path_naming_the_fmus_own_files_is_refused() {
    let dir = TempDir::new("fmu-log-input");
    let unpacked = package(
        &dir,
        &root().join("examples/scenarios/square.toml"),
        BUNDLED,
    );
    let (guid, _, vr) = description(&unpacked);
    let fmu = Fmu::load(&unpacked);
    let scenario = unpacked.join("resources/scenario.toml");
    let before = std::fs::read(&scenario).unwrap();
    let c = fmu.instantiate(&unpacked, &guid);
    for own in [
        scenario.clone(),
        unpacked.join("resources/autopilot.so"),
        unpacked.join("modelDescription.xml"),
    ] {
        assert_eq!(
            fmu.set_string(c, vr["log_path"], own.to_str().unwrap()),
            3,
            "{}",
            own.display()
        );
    }
    // Still usable: a log elsewhere is taken, and the run flies.
    let log = dir.join("fmu.csv");
    assert_eq!(fmu.set_string(c, vr["log_path"], log.to_str().unwrap()), 0);
    fmu.init(c);
    assert_eq!(fmu.step(c, 0.0, 0.5), 0);
    fmu.free(c);
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    assert!(Path::new(&log).exists());
}
