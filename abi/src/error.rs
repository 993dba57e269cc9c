//! The one error type of this crate.

use std::fmt;
use std::path::PathBuf;

/// One difference between the layout the harness expects and the one a
/// library reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldMismatch {
    /// The struct, e.g. `lockstep_baro`.
    pub struct_name: String,
    /// The field, or `(size)` / `(align)` / `(struct)` for the struct itself.
    pub field: String,
    /// What the harness was compiled with, e.g. `offset 8, f32 x1`.
    pub expected: String,
    /// What the library reports, e.g. `offset 12, f32 x1`, or `absent`.
    pub found: String,
}

impl fmt::Display for FieldMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{}: expected {}, found {}",
            self.struct_name, self.field, self.expected, self.found
        )
    }
}

fn list_mismatches(m: &[FieldMismatch]) -> String {
    m.iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Everything that can go wrong between the harness and an autopilot library.
#[derive(Debug, thiserror::Error)]
pub enum AbiError {
    /// The path names no file.
    #[error("autopilot library {path} does not exist")]
    LibraryNotFound { path: PathBuf },
    /// The file exists but the dynamic loader refused it.
    #[error("cannot load autopilot library {path}: {reason}")]
    LibraryLoad { path: PathBuf, reason: String },
    /// Required symbols are not exported.
    #[error(
        "autopilot library {path} does not export required symbol(s): {}; \
         see include/lockstep/autopilot.h for the functions every library must define",
        names.join(", ")
    )]
    MissingSymbol { path: PathBuf, names: Vec<String> },
    /// The library was built against another ABI version.
    #[error(
        "autopilot library {path} implements ABI version {found}, this harness needs version {expected}; \
         rebuild the library against this harness's include/lockstep/autopilot.h"
    )]
    AbiVersionMismatch {
        path: PathBuf,
        expected: u32,
        found: u32,
    },
    /// The layout table itself is unreadable (NULL, absurd counts, bad strings).
    #[error("autopilot library {path} reports an unusable layout table: {reason}")]
    InvalidLayoutTable { path: PathBuf, reason: String },
    /// At least one shared struct differs; every differing field is listed.
    #[error(
        "autopilot library {path} was built with a different struct layout ({} difference(s)): {}; \
         rebuild it against this harness's include/lockstep/autopilot.h",
        mismatches.len(), list_mismatches(mismatches)
    )]
    LayoutMismatch {
        path: PathBuf,
        mismatches: Vec<FieldMismatch>,
    },
    /// A second instance of a library that is not re-entrant.
    #[error(
        "autopilot library {path} is not re-entrant (capabilities lack LOCKSTEP_AP_CAP_REENTRANT) \
         and an instance of it is already alive in this process; drop it first or run another process"
    )]
    NotReentrant { path: PathBuf },
    /// A config or sensor frame refused before the library sees it.
    #[error("invalid autopilot input: {reason}")]
    InvalidInput { reason: String },
    /// create() returned NULL.
    #[error("autopilot create failed: {message}")]
    CreateFailed { message: String },
    /// step() returned a non-zero status.
    #[error("autopilot step at t={time_us} us failed with status {code} ({}): {message}", crate::status_name(*code))]
    StepFailed {
        time_us: u64,
        code: i32,
        message: String,
    },
    /// The harness asked to step at a time that does not increase.
    #[error(
        "autopilot step time {time_us} us does not follow the previous step at {previous_us} us"
    )]
    TimeNotIncreasing { time_us: u64, previous_us: u64 },
    /// step() succeeded but wrote a value outside the contract.
    #[error("autopilot output {field} = {value} at t={time_us} us is invalid: {reason}")]
    InvalidOutput {
        time_us: u64,
        field: String,
        value: String,
        reason: &'static str,
    },
    /// An optional symbol the call needs is not exported.
    #[error("autopilot library does not export {symbol}, needed to {action}")]
    Unsupported {
        symbol: &'static str,
        action: &'static str,
    },
    /// The library rejected a mission upload.
    #[error("mission upload of {count} item(s) rejected with status {code} ({}): {message}", crate::status_name(*code))]
    MissionRejected {
        count: usize,
        code: i32,
        message: String,
    },
    /// A parameter call failed.
    #[error("parameter {name}: {} (status {code}){}", crate::status_name(*code), if message.is_empty() { String::new() } else { format!(": {message}") })]
    Param {
        name: String,
        code: i32,
        message: String,
    },
    /// reset() failed.
    #[error("autopilot reset failed with status {code} ({}): {message}", crate::status_name(*code))]
    ResetFailed { code: i32, message: String },
}
