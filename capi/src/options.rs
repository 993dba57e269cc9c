//! What creating a whole vehicle or a bridge takes from C: the options
//! (autopilot, isolation, log, recording) checked, and the scenario from a
//! file or from TOML text.

use std::ffi::c_char;
use std::path::PathBuf;

use lockstep_abi::Isolation;
use lockstep_run::flight::ScenarioSource;

use crate::boundary::*;
use crate::types::*;

/// What the options say, checked.
pub(crate) struct Setup {
    pub(crate) autopilot: PathBuf,
    pub(crate) isolation: Isolation,
    pub(crate) log: Option<PathBuf>,
    pub(crate) record: Option<PathBuf>,
}

/// # Safety
/// `options` is NULL or a valid `lockstep_options` whose strings are NULL or
/// NUL-terminated.
pub(crate) unsafe fn setup(options: *const lockstep_options) -> Result<Setup, Failure> {
    // SAFETY: the caller's promise.
    let o = unsafe { input(options, "options") }?;
    // SAFETY: the caller's promise on the strings.
    let autopilot = match unsafe { optional_path(o.autopilot_path, "options.autopilot_path") }? {
        Some(p) => p,
        // NULL: the reference autopilot the library carries, written into
        // its cache on first use (as `lockstep fly` does).
        None => lockstep_run::assets::autopilot().map_err(|e| {
            argument(format!(
                "options.autopilot_path is NULL and the bundled reference autopilot cannot be written: {e}"
            ))
        })?,
    };
    // SAFETY: as above.
    let host = unsafe { optional_path(o.autopilot_host_path, "options.autopilot_host_path") }?
        .map(lockstep_abi::isolate::HostProgram::new);
    crate::serve::declare_own_host();
    let isolation = match o.isolation {
        LOCKSTEP_ISOLATION_IN_PROCESS => Isolation::InProcess,
        LOCKSTEP_ISOLATION_PROCESS => Isolation::Process(lockstep_abi::IsolationOptions {
            host,
            ..Default::default()
        }),
        v => {
            return Err(argument(format!(
                "options.isolation is {v}: LOCKSTEP_ISOLATION_IN_PROCESS (0) or LOCKSTEP_ISOLATION_PROCESS (1)"
            )));
        }
    };
    Ok(Setup {
        autopilot,
        isolation,
        // SAFETY: as above.
        log: unsafe { optional_path(o.log_path, "options.log_path") }?,
        // SAFETY: as above.
        record: unsafe { optional_path(o.record_path, "options.record_path") }?,
    })
}

/// The scenario in a file.
///
/// # Safety
/// `path` is NULL or NUL-terminated.
pub(crate) unsafe fn scenario_file(path: *const c_char) -> Result<ScenarioSource, Failure> {
    // SAFETY: the caller's promise.
    let p = unsafe { text(path, "scenario_path") }?;
    Ok(ScenarioSource::File(p.into()))
}

/// A scenario given as TOML text; its relative paths are taken from
/// `base_dir` (NULL: the working directory).
///
/// # Safety
/// `toml` and `base_dir` are NULL or NUL-terminated.
pub(crate) unsafe fn scenario_text(
    toml: *const c_char,
    base_dir: *const c_char,
) -> Result<ScenarioSource, Failure> {
    // SAFETY: the caller's promise.
    let t = unsafe { text(toml, "toml") }?;
    // SAFETY: the caller's promise.
    let dir = unsafe { optional_path(base_dir, "base_dir") }?.unwrap_or_else(|| ".".into());
    let s = lockstep_harness::inputs::scenario::Scenario::from_toml_str(
        t,
        dir.join("(scenario text)"),
    )?;
    Ok(ScenarioSource::Loaded(Box::new(s)))
}
