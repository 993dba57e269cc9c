//! The FMI 2.0 contract as a master meets it: what the standard lets a
//! master do wrong is refused with an error status, never a crash or a
//! file destroyed; after fmi2Error the instance is in FMI's error state
//! (the getters, fmi2Reset and fmi2FreeInstance only) until it is reset.

use std::ffi::c_int;
use std::path::Path;

use super::master::{Component, Fmu};
use crate::common::TempDir;

/// A master that sets `log_path` to one of the FMU's own files (its
/// scenario: the FMU was destroyed, replaced by a CSV) is refused at the
/// call, and the file is untouched.
#[test]
fn a_log_path_naming_the_fmus_own_files_is_refused() {
    let dir = TempDir::new("fmu-log-input");
    let (unpacked, fmu, guid, vr) = idle_fmu();
    let scenario = unpacked.join("resources/scenario.toml");
    let before = std::fs::read(&scenario).unwrap();
    let c = fmu.instantiate(unpacked, guid);
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
        in_error_until_reset(&fmu, c, vr);
    }
    // Reset, it is usable: a log elsewhere is taken, and the run flies.
    let log = dir.join("fmu.csv");
    assert_eq!(fmu.set_string(c, vr["log_path"], log.to_str().unwrap()), 0);
    fmu.init(c);
    assert_eq!(fmu.step(c, 0.0, 0.5), 0);
    fmu.free(c);
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    assert!(Path::new(&log).exists());
}

/// The instance is in FMI 2.0's error state: setting an input, entering
/// or leaving initialization, stepping and terminating are refused; the
/// getters, the status queries and fmi2SetDebugLogging answer; fmi2Reset
/// leaves it (back to instantiated, the parameters at their defaults).
fn in_error_until_reset(fmu: &Fmu, c: Component, vr: &Refs) {
    let wind = vr["wind_offset_north_mps"];
    assert_eq!(fmu.set_real(c, wind, 0.0), 3, "fmi2SetReal in error");
    for call in [
        "fmi2EnterInitializationMode",
        "fmi2ExitInitializationMode",
        "fmi2Terminate",
    ] {
        assert_eq!(fmu.call(call, c), 3, "{call} in error");
    }
    assert_eq!(fmu.step(c, 0.0, 0.1), 3, "fmi2DoStep in error");
    assert_eq!(fmu.reals(c, &[wind]).len(), 1, "fmi2GetReal answers");
    assert_eq!(terminated(fmu, c).0, 0, "fmi2GetBooleanStatus answers");
    let logging: unsafe extern "C" fn(Component, c_int, usize, *const *const i8) -> c_int =
        fmu.sym("fmi2SetDebugLogging");
    // SAFETY: a live component, no categories.
    assert_eq!(unsafe { logging(c, 0, 0, std::ptr::null()) }, 0);
    assert_eq!(fmu.call("fmi2Reset", c), 0);
    assert_eq!(fmu.set_real(c, wind, 0.0), 0, "usable after fmi2Reset");
}

/// A refused value during initialization: fmi2ExitInitializationMode is
/// refused after it (it was accepted, and the run went on from the error),
/// and so is every step, until fmi2Reset.
#[test]
fn after_an_error_only_getters_reset_and_free_are_allowed() {
    let (unpacked, fmu, guid, vr) = idle_fmu();
    let c = fmu.instantiate(unpacked, guid);
    assert_eq!(fmu.call("fmi2EnterInitializationMode", c), 0);
    assert_eq!(
        fmu.set_string(
            c,
            vr["log_path"],
            unpacked.join("resources/scenario.toml").to_str().unwrap()
        ),
        3
    );
    assert_eq!(fmu.call("fmi2ExitInitializationMode", c), 3);
    in_error_until_reset(&fmu, c, vr);
    // While stepping: a value out of bounds, then nothing steps.
    fmu.init(c);
    assert_eq!(fmu.step(c, 0.0, 0.1), 0);
    assert_eq!(fmu.set_real(c, vr["wind_offset_east_mps"], f64::NAN), 3);
    assert_eq!(fmu.step(c, 0.1, 0.1), 3);
    in_error_until_reset(&fmu, c, vr);
    // Reset, the run flies again from the start.
    fmu.init(c);
    assert_eq!(fmu.step(c, 0.0, 0.1), 0);
    fmu.free(c);
}

/// The shared idle FMU, loaded: (unpacked, master, GUID, value references).
fn idle_fmu() -> (&'static Path, Fmu, &'static str, &'static Refs) {
    let f = super::master::idle_fmu();
    (&f.unpacked, Fmu::load(&f.unpacked), &f.guid, &f.vr)
}

type Refs = std::collections::HashMap<String, u32>;

fn terminated(fmu: &Fmu, c: Component) -> (c_int, c_int) {
    let f: unsafe extern "C" fn(Component, c_int, *mut c_int) -> c_int =
        fmu.sym("fmi2GetBooleanStatus");
    let mut done = -1;
    // SAFETY: a live component and a local out-value.
    (unsafe { f(c, 3, &mut done) }, done)
}

/// Every step at or after the scenario's end is fmi2Discard with
/// fmi2Terminated true (a step starting at the end was fmi2Error, and FMPy
/// then lost the whole result).
#[test]
fn a_step_at_or_after_the_end_is_discard_with_terminated() {
    let (unpacked, fmu, guid, _) = idle_fmu();
    let c = fmu.instantiate(unpacked, guid);
    fmu.init(c);
    assert_eq!(terminated(&fmu, c), (0, 0));
    assert_eq!(fmu.step(c, 0.0, 0.5), 0);
    assert_eq!(fmu.step(c, 0.5, 0.75), 2, "past the end: to the end");
    assert_eq!(terminated(&fmu, c), (0, 1));
    for _ in 0..3 {
        assert_eq!(fmu.step(c, 1.0, 0.1), 2, "from the end");
        assert_eq!(terminated(&fmu, c), (0, 1));
    }
    assert_eq!(fmu.call("fmi2Terminate", c), 0);
    fmu.free(c);
}

fn setup(fmu: &Fmu, c: Component, start: f64, stop: Option<f64>) -> c_int {
    let f: unsafe extern "C" fn(Component, c_int, f64, f64, c_int, f64) -> c_int =
        fmu.sym("fmi2SetupExperiment");
    // SAFETY: a component (live or not: the FMU checks).
    unsafe {
        f(
            c,
            0,
            0.0,
            start,
            c_int::from(stop.is_some()),
            stop.unwrap_or(0.0),
        )
    }
}

/// fmi2SetupExperiment belongs between instantiation and initialization,
/// with a stop time not before the start: anything else is fmi2Error (both
/// were accepted).
#[test]
fn the_experiment_is_set_up_once_before_initialization() {
    let (unpacked, fmu, guid, vr) = idle_fmu();
    let c = fmu.instantiate(unpacked, guid);
    let refused = |status: c_int, why: &str| {
        assert_eq!(status, 3, "{why}");
        in_error_until_reset(&fmu, c, vr);
    };
    refused(setup(&fmu, c, 0.0, Some(-1.0)), "stop before start");
    refused(setup(&fmu, c, 0.0, Some(f64::NAN)), "stop NaN");
    refused(setup(&fmu, c, 2.0, None), "the scenario starts at 0");
    assert_eq!(setup(&fmu, c, 0.0, Some(1.0)), 0);
    assert_eq!(fmu.call("fmi2EnterInitializationMode", c), 0);
    refused(setup(&fmu, c, 0.0, Some(1.0)), "in initialization");
    fmu.init(c);
    refused(setup(&fmu, c, 0.0, Some(1.0)), "while stepping");
    assert_eq!(setup(&fmu, c, 0.0, None), 0, "after a reset");
    fmu.free(c);
}

fn set_reals(fmu: &Fmu, c: Component, vrs: &[u32], xs: &[f64]) -> c_int {
    let f: unsafe extern "C" fn(Component, *const u32, usize, *const f64) -> c_int =
        fmu.sym("fmi2SetReal");
    // SAFETY: arrays of `vrs.len()` elements.
    unsafe { f(c, vrs.as_ptr(), vrs.len(), xs.as_ptr()) }
}

/// A vector with one bad reference or value sets none of it (the first
/// ones were applied), and the scenario file's bounds hold for the same
/// quantities set as parameters and inputs (1e300 m and 1e6 m/s were
/// taken, and the run failed later with a state dump naming nothing).
#[test]
fn values_are_checked_all_first_and_against_the_scenarios_bounds() {
    let (unpacked, fmu, guid, vr) = idle_fmu();
    let c = fmu.instantiate(unpacked, guid);
    let north = vr["start_north_m"];
    let east = vr["start_east_m"];
    assert_eq!(set_reals(&fmu, c, &[north, 999_999], &[5.0, 1.0]), 3);
    assert_eq!(fmu.reals(c, &[north, east]), [0.0, 0.0], "nothing set");
    in_error_until_reset(&fmu, c, vr);
    assert_eq!(set_reals(&fmu, c, &[north, east], &[5.0, 1e300]), 3);
    assert_eq!(fmu.reals(c, &[north, east]), [0.0, 0.0], "nothing set");
    in_error_until_reset(&fmu, c, vr);
    for (name, bad) in [
        ("start_north_m", 1.000_001e6),
        ("start_east_m", -2e6),
        ("start_yaw_deg", 361.0),
        ("wind_offset_north_mps", 1e6),
        ("wind_offset_down_mps", -100.5),
    ] {
        assert_eq!(fmu.set_real(c, vr[name], bad), 3, "{name} = {bad}");
        in_error_until_reset(&fmu, c, vr);
    }
    assert_eq!(
        set_reals(&fmu, c, &[north, east], &[5.0, -1e6]),
        0,
        "bounds included"
    );
    assert_eq!(fmu.reals(c, &[north, east]), [5.0, -1e6]);
    fmu.init(c);
    assert_eq!(fmu.set_real(c, vr["wind_offset_north_mps"], 1e6), 3);
    in_error_until_reset(&fmu, c, vr);
    fmu.init(c);
    assert_eq!(fmu.set_real(c, vr["wind_offset_north_mps"], 100.0), 0);
    assert_eq!(fmu.step(c, 0.0, 0.1), 0);
    fmu.free(c);
    // modelDescription.xml states the same bounds.
    let (_, xml, _) = super::master::description(unpacked);
    assert!(
        xml.contains(r#"name="wind_offset_north_mps""#)
            && xml.contains(r#"<Real unit="m/s" min="-100.0" max="100.0" start="0"/>"#),
        "{xml}"
    );
}

/// Calls on a freed instance, a second free and a handle that never was
/// an instance are fmi2Error or ignored, never a crash (the instance is a
/// handle in a table, as the C ABI's are).
#[test]
fn freed_and_forged_instances_are_refused() {
    let (unpacked, fmu, guid, vr) = idle_fmu();
    let c = fmu.instantiate(unpacked, guid);
    fmu.init(c);
    assert_eq!(fmu.step(c, 0.0, 0.1), 0);
    fmu.free(c);
    fmu.free(c);
    assert_eq!(fmu.step(c, 0.1, 0.1), 3);
    assert_eq!(fmu.set_real(c, vr["wind_offset_north_mps"], 1.0), 3);
    assert_eq!(terminated(&fmu, c).0, 3);
    let mut x = 0u64;
    for forged in [
        (&raw mut x).cast::<std::ffi::c_void>(),
        std::ptr::without_provenance_mut(1),
        std::ptr::without_provenance_mut(usize::MAX),
    ] {
        assert_eq!(fmu.call("fmi2Terminate", forged), 3);
        fmu.free(forged);
    }
    // A new instance is not reached through the old handle.
    let d = fmu.instantiate(unpacked, guid);
    assert_ne!(c, d);
    assert_eq!(fmu.call("fmi2Reset", c), 3);
    assert_eq!(fmu.call("fmi2Reset", d), 0);
    fmu.free(d);
}
