//! `lockstep check-lib`: what a library is, and whether the harness can use it.

use std::path::Path;
use std::process::ExitCode;

use lockstep_abi::LayoutVerdict;
use lockstep_abi::ffi::{LOCKSTEP_AP_CAP_REENTRANT, LOCKSTEP_AUTOPILOT_ABI_VERSION};
use lockstep_abi::isolate::{host_program, probe};

/// Probes the library in a host process (a library that crashes, exits or
/// hangs while loading is a verdict, not the end of this process) and
/// prints the report. Exit status: 0 usable, 1 not usable, 2 the probe
/// itself could not run.
pub fn run(path: &Path, call_timeout: std::time::Duration) -> ExitCode {
    let host = match host_program(None) {
        Ok(h) => h,
        Err(e) => {
            warn!("lockstep check-lib: {e}");
            return ExitCode::from(2);
        }
    };
    let options = lockstep_abi::IsolationOptions {
        call_timeout,
        ..Default::default()
    };
    let inspection = match probe(&host, path, Some(&options)) {
        Ok(i) => i,
        Err(e) => {
            say!("library       {}", path.display());
            say!("verdict       NOT USABLE: {e}");
            return ExitCode::from(1);
        }
    };
    say!("library       {}", inspection.path.display());
    say!(
        "name          {}",
        inspection.name.as_deref().unwrap_or("(not exported)")
    );
    match inspection.abi_version {
        Some(v) if v == LOCKSTEP_AUTOPILOT_ABI_VERSION => {
            say!("abi version   {v} (harness {LOCKSTEP_AUTOPILOT_ABI_VERSION}): ok")
        }
        Some(v) => {
            say!("abi version   {v} (harness {LOCKSTEP_AUTOPILOT_ABI_VERSION}): MISMATCH")
        }
        None => say!("abi version   (not exported)"),
    }
    match inspection.capabilities {
        Some(c) => {
            let unknown = c & !lockstep_abi::KNOWN_CAPABILITIES;
            say!(
                "capabilities  {c:#x}: {}{}",
                if c & LOCKSTEP_AP_CAP_REENTRANT != 0 {
                    "re-entrant"
                } else {
                    "one instance per process"
                },
                if unknown != 0 {
                    format!(", UNKNOWN bits {unknown:#x}")
                } else {
                    String::new()
                }
            )
        }
        None => say!("capabilities  (not exported)"),
    }
    if inspection.missing_required.is_empty() {
        say!("required      all present");
    } else {
        say!(
            "required      MISSING: {}",
            inspection.missing_required.join(", ")
        );
    }
    say!(
        "optional      found: {}",
        list_or_none(&inspection.optional_found)
    );
    say!(
        "              not found: {}",
        list_or_none(&inspection.optional_missing)
    );
    let migration = lockstep_abi::MIGRATION_SYMBOLS
        .iter()
        .filter(|n| inspection.optional_found.iter().any(|f| f == *n))
        .count();
    say!(
        "migration     {}",
        match migration {
            3 => "yes: a distributed run can move its vehicles between secondaries",
            0 => "no: a distributed run pins its vehicles where they start",
            _ => "partial: refused (snapshot_size, snapshot and restore come together)",
        }
    );
    match &inspection.layout {
        LayoutVerdict::NotChecked { reason } => say!("layout        not checked: {reason}"),
        LayoutVerdict::Unreadable { reason } => say!("layout        UNREADABLE: {reason}"),
        LayoutVerdict::Compared(reports) => {
            say!("layout");
            for r in reports {
                let verdict = if r.mismatches.is_empty() {
                    "ok"
                } else {
                    "MISMATCH"
                };
                say!(
                    "  {:<28} size {:>3}  align {}  {:>2} fields  {verdict}",
                    r.name,
                    r.size,
                    r.align,
                    r.field_count
                );
                for m in &r.mismatches {
                    say!(
                        "    {}: expected {}, found {}",
                        m.field,
                        m.expected,
                        m.found
                    );
                }
            }
        }
    }
    match inspection.problem() {
        None => {
            say!("verdict       usable");
            ExitCode::SUCCESS
        }
        Some(e) => {
            say!("verdict       NOT USABLE: {e}");
            ExitCode::from(1)
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(", ")
    }
}
