//! Every broken fixture is refused with its own error variant, and every
//! mismatched field is named with expected and found values.

use std::path::PathBuf;

use crate::common::*;
use lockstep_abi::ffi::*;
use lockstep_abi::{AbiError, AutopilotLibrary, FieldMismatch, OutputPolicy};

fn load_err(case: &str) -> AbiError {
    AutopilotLibrary::load(broken(case)).expect_err("the loader must refuse this fixture")
}

fn mm(s: &str, field: &str, expected: &str, found: &str) -> FieldMismatch {
    FieldMismatch {
        struct_name: s.into(),
        field: field.into(),
        expected: expected.into(),
        found: found.into(),
    }
}

fn layout_mismatches(case: &str) -> Vec<FieldMismatch> {
    match load_err(case) {
        AbiError::LayoutMismatch { path, mismatches } => {
            assert_eq!(path, broken(case));
            mismatches
        }
        other => panic!("{case}: expected LayoutMismatch, got {other:?}"),
    }
}

#[test]
fn missing_required_symbol() {
    match load_err("missing_symbol") {
        AbiError::MissingSymbol { names, .. } => assert_eq!(names, ["lockstep_autopilot_step"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn other_abi_version() {
    match load_err("abi_version") {
        AbiError::AbiVersionMismatch {
            expected, found, ..
        } => {
            assert_eq!(expected, LOCKSTEP_AUTOPILOT_ABI_VERSION);
            assert_eq!(found, LOCKSTEP_AUTOPILOT_ABI_VERSION + 1000);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn sensor_frame_of_another_size() {
    assert_eq!(
        layout_mismatches("sensor_size"),
        [
            mm("lockstep_sensor_frame", "(size)", "304", "312"),
            mm(
                "lockstep_sensor_frame",
                "extra_timestamp_us",
                "absent",
                "offset 304, u64 x1"
            ),
        ]
    );
}

#[test]
fn two_fields_swapped_both_named() {
    assert_eq!(
        layout_mismatches("swapped_fields"),
        [
            mm(
                "lockstep_baro",
                "pressure_pa",
                "offset 8, f32 x1",
                "offset 12, f32 x1"
            ),
            mm(
                "lockstep_baro",
                "temperature_c",
                "offset 12, f32 x1",
                "offset 8, f32 x1"
            ),
        ]
    );
}

#[test]
fn field_of_another_type() {
    assert_eq!(
        layout_mismatches("type_changed"),
        [mm(
            "lockstep_gps",
            "fix_type",
            "offset 40, u32 x1",
            "offset 40, f32 x1"
        )]
    );
}

#[test]
fn create_returning_null_reports_the_library_message() {
    let lib = AutopilotLibrary::load(broken("create_null")).unwrap();
    match lib.create(&config(&quad_x(), 1.5, 8.0)) {
        Err(AbiError::CreateFailed { message }) => {
            assert_eq!(
                message,
                "broken fixture: refusing to create (rotor_count 4)"
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn step_error_code_with_time_and_message() {
    let lib = AutopilotLibrary::load(broken("step_error")).unwrap();
    let mut ap = lib.create(&config(&quad_x(), 1.5, 8.0)).unwrap();
    let mut out = lockstep_actuator_frame::default();
    out.motors[0] = 0.25;
    let err = ap
        .step(1000, &frame(1000, [0.0; 3], [1.0, 0.0, 0.0, 0.0]), &mut out)
        .unwrap_err();
    assert!(
        matches!(&err, AbiError::StepFailed { time_us: 1000, code: LOCKSTEP_AP_ERR_INTERNAL, message }
            if message == "broken fixture: simulated controller fault at 1000 us"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "autopilot step at t = 0.001000 s failed with status {LOCKSTEP_AP_ERR_INTERNAL} \
             (internal error): broken fixture: simulated controller fault at 1000 us"
        )
    );
    assert_eq!(
        out.motors[0], 0.25,
        "the output frame is untouched on error"
    );
}

#[test]
fn nan_output_names_the_field_and_time() {
    let lib = AutopilotLibrary::load(broken("nan_output")).unwrap();
    let mut ap = lib.create(&config(&quad_x(), 1.5, 8.0)).unwrap();
    ap.set_output_policy(OutputPolicy::Clamp);
    let mut out = lockstep_actuator_frame::default();
    let err = ap
        .step(2000, &frame(2000, [0.0; 3], [1.0, 0.0, 0.0, 0.0]), &mut out)
        .unwrap_err();
    assert!(
        matches!(&err, AbiError::InvalidOutput { time_us: 2000, field, reason, .. } if field == "motors[2]" && reason == "not finite"),
        "NaN is never clamped: {err:?}"
    );
    assert_eq!(
        err.to_string(),
        "autopilot output motors[2] = NaN at t = 0.002000 s is invalid: not finite"
    );
}

#[test]
fn a_step_time_that_does_not_increase_names_both_times() {
    let lib = AutopilotLibrary::load(broken("idle")).unwrap();
    let mut ap = lib.create(&config(&quad_x(), 1.5, 8.0)).unwrap();
    step(&mut ap, &frame(5_000_000, [0.0; 3], [1.0, 0.0, 0.0, 0.0]));
    for t in [5_000_000, 4_999_999] {
        let mut out = lockstep_actuator_frame::default();
        let err = ap
            .step(t, &frame(t, [0.0; 3], [1.0, 0.0, 0.0, 0.0]), &mut out)
            .unwrap_err();
        assert!(
            matches!(&err, AbiError::TimeNotIncreasing { time_us, previous_us: 5_000_000 } if *time_us == t),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "autopilot step at t = {}.{:06} s does not follow the previous step at \
                 t = 5.000000 s",
                t / 1_000_000,
                t % 1_000_000
            )
        );
    }
}

#[test]
fn out_of_range_output_is_refused_unless_clamping_is_chosen() {
    let lib = AutopilotLibrary::load(broken("out_of_range")).unwrap();
    let mut ap = lib.create(&config(&quad_x(), 1.5, 8.0)).unwrap();
    let mut out = lockstep_actuator_frame::default();
    let err = ap
        .step(3000, &frame(3000, [0.0; 3], [1.0, 0.0, 0.0, 0.0]), &mut out)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "autopilot output motors[1] = 1.5 at t = 0.003000 s is invalid: outside [0, 1]"
    );
    ap.set_output_policy(OutputPolicy::Clamp);
    ap.step(4000, &frame(4000, [0.0; 3], [1.0, 0.0, 0.0, 0.0]), &mut out)
        .unwrap();
    assert_eq!(out.motors[1], 1.0);
}

#[test]
fn path_that_does_not_exist() {
    let path = PathBuf::from("/nonexistent/liblockstep_nothing.so");
    match AutopilotLibrary::load(&path) {
        Err(AbiError::LibraryNotFound { path: p }) => assert_eq!(p, path),
        other => panic!("{other:?}"),
    }
}

#[test]
fn file_that_is_not_a_shared_library() {
    let path =
        std::env::temp_dir().join(format!("lockstep-not-a-library-{}.so", std::process::id()));
    std::fs::write(&path, "this is text, not ELF\n").unwrap();
    let result = AutopilotLibrary::load(&path);
    std::fs::remove_file(&path).unwrap();
    match result {
        Err(AbiError::LibraryLoad { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(!reason.is_empty());
        }
        other => panic!("{other:?}"),
    }
    match AutopilotLibrary::load(std::env::temp_dir()) {
        Err(AbiError::LibraryLoad { reason, .. }) => assert_eq!(reason, "not a regular file"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn optional_symbols_absent_are_unsupported_errors() {
    let lib = AutopilotLibrary::load(broken("out_of_range")).unwrap();
    assert_eq!(
        lib.optional_symbols(),
        ["lockstep_autopilot_name", "lockstep_autopilot_last_error"]
    );
    let mut ap = lib.create(&config(&quad_x(), 1.5, 8.0)).unwrap();
    assert_eq!(
        ap.upload_mission(&[]).unwrap_err().to_string(),
        "autopilot library does not export lockstep_autopilot_mission_upload, needed to upload a mission"
    );
    assert!(matches!(
        ap.param_f32("X"),
        Err(AbiError::Unsupported { symbol, .. }) if symbol == "lockstep_autopilot_param_get_f32"
    ));
    assert!(matches!(
        ap.reset(),
        Err(AbiError::Unsupported { symbol, .. }) if symbol == "lockstep_autopilot_reset"
    ));
}
