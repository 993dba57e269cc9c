//! `lockstep check-lib`: what a library is, and whether the harness can use it.

use std::path::Path;
use std::process::ExitCode;

use lockstep_abi::ffi::{LOCKSTEP_AP_CAP_REENTRANT, LOCKSTEP_AUTOPILOT_ABI_VERSION};
use lockstep_abi::isolate::{HostProgram, host_program, probe};
use lockstep_abi::{Autopilot, Isolation, LayoutVerdict, ParamKind};
use lockstep_harness::Micros;
use lockstep_harness::engine::autopilot_config::autopilot_config;
use lockstep_plant::spec::AircraftSpec;

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
    let inspection = match probe(&host, path, Some(&options.clone())) {
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
        Some(v) if lockstep_abi::abi_supported(v) => say!(
            "abi version   {v} (harness {LOCKSTEP_AUTOPILOT_ABI_VERSION}): ok, an older version \
             (no takeoff height, no parameter enumeration)"
        ),
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
            params(path, &host, options);
            say!("verdict       usable");
            ExitCode::SUCCESS
        }
        Some(e) => {
            say!("verdict       NOT USABLE: {e}");
            ExitCode::from(1)
        }
    }
}

/// The parameter table of an instance created for the built-in Iris at
/// 250 Hz (defaults may depend on the airframe), or why there is none.
fn params(path: &Path, host: &HostProgram, mut options: lockstep_abi::IsolationOptions) {
    let config = match AircraftSpec::builtin("iris").and_then(|s| s.build()) {
        Ok(plant) => autopilot_config(&plant, Micros(4_000)),
        Err(e) => {
            say!("parameters    not listed: the Iris spec does not build: {e}");
            return;
        }
    };
    options.host = Some(host.clone());
    let listed =
        Autopilot::open(path, &config, &Isolation::Process(options)).and_then(|mut ap| ap.params());
    match listed {
        Ok(None) => say!(
            "parameters    not enumerated (no lockstep_autopilot_param_count/param_info, ABI 4): \
             ground stations and logs see only the parameters a scenario or station sets"
        ),
        Err(e) => say!("parameters    NOT LISTED: {e}"),
        Ok(Some(table)) => {
            say!(
                "parameters    {} (defaults of an instance for the built-in iris at 250 Hz)",
                table.len()
            );
            for p in table {
                let (kind, default) = match p.param.kind {
                    ParamKind::F32 => ("f32", (p.param.default as f32).to_string()),
                    ParamKind::I32 => ("i32", (p.param.default as i32).to_string()),
                };
                say!("  {:<17} {kind}  {default}", p.name);
            }
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
