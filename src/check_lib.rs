//! `lockstep check-lib`: what a library is, and whether the harness can use it.

use std::path::Path;
use std::process::ExitCode;

use lockstep_abi::ffi::{LOCKSTEP_AP_CAP_REENTRANT, LOCKSTEP_AUTOPILOT_ABI_VERSION};
use lockstep_abi::{AutopilotLibrary, LayoutVerdict};

pub fn run(path: &Path) -> ExitCode {
    let inspection = match AutopilotLibrary::inspect(path) {
        Ok(i) => i,
        Err(e) => {
            println!("library       {}", path.display());
            println!("verdict       NOT USABLE: {e}");
            return ExitCode::from(1);
        }
    };
    println!("library       {}", inspection.path.display());
    println!(
        "name          {}",
        inspection.name.as_deref().unwrap_or("(not exported)")
    );
    match inspection.abi_version {
        Some(v) if v == LOCKSTEP_AUTOPILOT_ABI_VERSION => {
            println!("abi version   {v} (harness {LOCKSTEP_AUTOPILOT_ABI_VERSION}): ok")
        }
        Some(v) => {
            println!("abi version   {v} (harness {LOCKSTEP_AUTOPILOT_ABI_VERSION}): MISMATCH")
        }
        None => println!("abi version   (not exported)"),
    }
    match inspection.capabilities {
        Some(c) => println!(
            "capabilities  {c:#x}: {}",
            if c & LOCKSTEP_AP_CAP_REENTRANT != 0 {
                "re-entrant"
            } else {
                "one instance per process"
            }
        ),
        None => println!("capabilities  (not exported)"),
    }
    if inspection.missing_required.is_empty() {
        println!("required      all present");
    } else {
        println!(
            "required      MISSING: {}",
            inspection.missing_required.join(", ")
        );
    }
    println!(
        "optional      found: {}",
        list_or_none(&inspection.optional_found)
    );
    println!(
        "              not found: {}",
        list_or_none(&inspection.optional_missing)
    );
    match &inspection.layout {
        LayoutVerdict::NotChecked { reason } => println!("layout        not checked: {reason}"),
        LayoutVerdict::Unreadable { reason } => println!("layout        UNREADABLE: {reason}"),
        LayoutVerdict::Compared(reports) => {
            println!("layout");
            for r in reports {
                let verdict = if r.mismatches.is_empty() {
                    "ok"
                } else {
                    "MISMATCH"
                };
                println!(
                    "  {:<28} size {:>3}  align {}  {:>2} fields  {verdict}",
                    r.name, r.size, r.align, r.field_count
                );
                for m in &r.mismatches {
                    println!(
                        "    {}: expected {}, found {}",
                        m.field, m.expected, m.found
                    );
                }
            }
        }
    }
    match inspection.problem() {
        None => {
            println!("verdict       usable");
            ExitCode::SUCCESS
        }
        Some(e) => {
            println!("verdict       NOT USABLE: {e}");
            ExitCode::from(1)
        }
    }
}

fn list_or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "(none)".into()
    } else {
        names.join(", ")
    }
}
