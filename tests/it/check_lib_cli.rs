//! `lockstep check-lib` as a user runs it.

use std::process::Command;

use crate::common::*;

fn check_lib(path: Option<&std::path::Path>) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstep"));
    cmd.arg("check-lib");
    if let Some(p) = path {
        cmd.arg(p);
    }
    let out = cmd.output().expect("run lockstep");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn bundled_autopilot_is_usable_by_default() {
    let (code, text) = check_lib(None);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains(&format!("library       {BUNDLED}")), "{text}");
    assert!(
        text.contains("name          lockstep-reference-autopilot 0.1.0"),
        "{text}"
    );
    let v = lockstep_abi::ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION;
    assert!(
        text.contains(&format!("abi version   {v} (harness {v}): ok")),
        "{text}"
    );
    assert!(text.contains("capabilities  0x1: re-entrant"), "{text}");
    assert!(text.contains("required      all present"), "{text}");
    assert!(text.contains("              not found: (none)"), "{text}");
    assert_eq!(
        text.matches("  ok\n").count(),
        13,
        "13 structs, all ok: {text}"
    );
    assert!(text.ends_with("verdict       usable\n"), "{text}");
}

#[test]
fn swapped_fields_are_both_named_with_offsets() {
    let (code, text) = check_lib(Some(&broken("swapped_fields")));
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("  lockstep_baro                size  16  align 8   3 fields  MISMATCH\n"),
        "{text}"
    );
    assert!(
        text.contains("    pressure_pa: expected offset 8, f32 x1, found offset 12, f32 x1\n"),
        "{text}"
    );
    assert!(
        text.contains("    temperature_c: expected offset 12, f32 x1, found offset 8, f32 x1\n"),
        "{text}"
    );
    assert!(
        text.contains("verdict       NOT USABLE: autopilot library"),
        "{text}"
    );
}

#[test]
fn type_change_and_size_change_are_named() {
    let (code, text) = check_lib(Some(&broken("type_changed")));
    assert_eq!(code, 1);
    assert!(
        text.contains("    fix_type: expected offset 40, u32 x1, found offset 40, f32 x1\n"),
        "{text}"
    );
    let (code, text) = check_lib(Some(&broken("sensor_size")));
    assert_eq!(code, 1);
    assert!(
        text.contains("    (size): expected 304, found 312\n"),
        "{text}"
    );
    assert!(
        text.contains("    extra_timestamp_us: expected absent, found offset 304, u64 x1\n"),
        "{text}"
    );
}

#[test]
fn version_missing_symbol_and_single_instance_are_reported() {
    let (code, text) = check_lib(Some(&broken("abi_version")));
    assert_eq!(code, 1);
    assert!(
        text.contains(&format!(
            "abi version   {} (harness {}): MISMATCH",
            lockstep_abi::ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION + 1000,
            lockstep_abi::ffi::LOCKSTEP_AUTOPILOT_ABI_VERSION
        )),
        "{text}"
    );
    assert!(
        text.contains("layout        not checked: the ABI version differs"),
        "{text}"
    );
    let (code, text) = check_lib(Some(&broken("missing_symbol")));
    assert_eq!(code, 1);
    assert!(
        text.contains("required      MISSING: lockstep_autopilot_step\n"),
        "{text}"
    );
    let (code, text) = check_lib(Some(std::path::Path::new(SINGLE_INSTANCE)));
    assert_eq!(code, 0, "a single-instance library is usable: {text}");
    assert!(
        text.contains("capabilities  0x0: one instance per process"),
        "{text}"
    );
}

#[test]
fn unloadable_paths_exit_nonzero_with_the_reason() {
    let (code, text) = check_lib(Some(std::path::Path::new("/nonexistent/lib.so")));
    assert_eq!(code, 1);
    assert!(
        text.contains(
            "verdict       NOT USABLE: autopilot library /nonexistent/lib.so does not exist"
        ),
        "{text}"
    );
    let (code, text) = check_lib(Some(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("Cargo.toml")
            .as_path(),
    ));
    assert_eq!(code, 1);
    assert!(
        text.contains("verdict       NOT USABLE: cannot load autopilot library"),
        "{text}"
    );
}

#[test]
fn the_probes_call_timeout_defaults_to_a_minute() {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep"))
        .args(["check-lib", "--help"])
        .output()
        .expect("run lockstep");
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8(out.stdout).unwrap();
    let line = help
        .lines()
        .find(|l| l.trim_start().starts_with("--call-timeout <CALL_TIMEOUT>"))
        .unwrap_or_else(|| panic!("no --call-timeout in\n{help}"));
    assert!(line.ends_with(" [default: 60]"), "{line}");
}

#[test]
fn unknown_capability_bits_are_flagged_on_the_capabilities_line() {
    let (code, text) = check_lib(Some(&broken("unknown_caps")));
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("\ncapabilities  0x80000001: re-entrant, UNKNOWN bits 0x80000000\n"),
        "{text}"
    );
}
