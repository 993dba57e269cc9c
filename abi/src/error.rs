//! The one error type of this crate.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::Function;

/// One difference between the layout the harness expects and the one a
/// library reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

/// What the library said, as `": message"`, or nothing when it said nothing
/// (a status without text ends the sentence there).
pub(crate) fn said(message: &str) -> String {
    let m = message.trim();
    if m.is_empty() {
        String::new()
    } else {
        format!(": {m}")
    }
}

/// A simulated time as every message writes it: `t = 5.000000 s` (seconds
/// with all six decimals: the exact microsecond).
pub fn at(time_us: u64) -> String {
    format!("t = {}.{:06} s", time_us / 1_000_000, time_us % 1_000_000)
}

/// Everything that can go wrong between the harness and an autopilot library.
/// Optional functions that come together or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SymbolGroup {
    /// snapshot_size, snapshot, restore.
    Migration,
    /// param_count, param_info (ABI 4).
    Enumeration,
}

impl SymbolGroup {
    /// The group's rule, as errors state it.
    pub fn rule(self) -> &'static str {
        match self {
            SymbolGroup::Migration => {
                "the migration functions (snapshot_size, snapshot, restore) come all three or none"
            }
            SymbolGroup::Enumeration => {
                "the parameter enumeration (param_count, param_info) comes whole or not at all"
            }
        }
    }
}

/// Serializable: an isolated instance's host process sends its errors to the
/// harness as they are.
#[derive(Debug, thiserror::Error, Serialize, Deserialize)]
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
        "autopilot library {path} implements ABI version {found}, this harness needs version {expected} \
         (or one down to {}); rebuild the library against this harness's include/lockstep/autopilot.h",
        crate::ffi::LOCKSTEP_AUTOPILOT_ABI_OLDEST
    )]
    AbiVersionMismatch {
        path: PathBuf,
        expected: u32,
        found: u32,
    },
    /// The library reports capability bits this harness does not know.
    #[error(
        "autopilot library {path} reports unknown capability bits {bits:#x} (this harness knows \
         LOCKSTEP_AP_CAP_REENTRANT = 0x1); it may rely on behaviour the harness does not provide"
    )]
    UnknownCapabilities { path: PathBuf, bits: u32 },
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
         and an instance of it is already alive in this process; drop it first, or run each instance \
         isolated in its own process (lockstep_abi::Isolation::Process, `--isolation process`)"
    )]
    NotReentrant { path: PathBuf },
    /// A config or sensor frame refused before the library sees it.
    #[error("invalid autopilot input: {reason}")]
    InvalidInput { reason: String },
    /// create() returned NULL.
    #[error("autopilot create failed{}", said(message))]
    CreateFailed { message: String },
    /// step() returned a non-zero status.
    #[error("autopilot step at {} failed with status {code} ({}){}", at(*time_us), crate::status_name(*code), said(message))]
    StepFailed {
        time_us: u64,
        code: i32,
        message: String,
    },
    /// The harness asked to step at a time that does not increase.
    #[error(
        "autopilot step at {} does not follow the previous step at {}", at(*time_us), at(*previous_us)
    )]
    TimeNotIncreasing { time_us: u64, previous_us: u64 },
    /// step() succeeded but wrote a value outside the contract.
    #[error("autopilot output {field} = {value} at {} is invalid: {reason}", at(*time_us))]
    InvalidOutput {
        time_us: u64,
        field: String,
        value: String,
        reason: Cow<'static, str>,
    },
    /// The library broke the header's contract in a way that could corrupt
    /// the harness (writing past a frame, into a const frame).
    #[error("autopilot contract violation at {}: {what}", at(*time_us))]
    ContractViolation { time_us: u64, what: String },
    /// The autopilot died or hung (isolated mode): a signal, an exit, no
    /// answer within the watchdog's limit, or a host process it corrupted.
    #[error("the autopilot {cause} in {}{}{}", function.name(), time_us.map(|t| format!(" at {}", at(t))).unwrap_or_default(), said(detail))]
    Crashed {
        function: Function,
        time_us: Option<u64>,
        /// What happened: `was killed by signal SIGSEGV (segmentation
        /// fault)`, `exited with status 0`, `hung`.
        cause: String,
        /// More about it, or empty.
        detail: String,
    },
    /// An error the host process of an isolated instance could only pass on
    /// as text.
    #[error("{message}")]
    Relayed { message: String },
    /// The helper executable of the isolated mode cannot be found or started.
    #[error("cannot start the autopilot host process: {reason}")]
    HostUnavailable { reason: String },
    /// An optional symbol the call needs is not exported.
    #[error("autopilot library does not export {symbol}, needed to {action}")]
    Unsupported {
        symbol: Cow<'static, str>,
        action: Cow<'static, str>,
    },
    /// The library rejected a mission upload.
    #[error("mission upload of {count} item(s) rejected with status {code} ({}){}", crate::status_name(*code), said(message))]
    MissionRejected {
        count: usize,
        code: i32,
        message: String,
    },
    /// A parameter call failed.
    #[error("parameter {name}: {} (status {code}){}", crate::status_name(*code), said(message))]
    Param {
        name: String,
        code: i32,
        message: String,
    },
    /// The parameter enumeration broke the contract (a failing call, a
    /// count past [`crate::MAX_PARAMS`], a bad name or type).
    #[error("the autopilot's parameter table: {reason}")]
    ParamTable { reason: String },
    /// reset() failed.
    #[error("autopilot reset failed with status {code} ({}){}", crate::status_name(*code), said(message))]
    ResetFailed { code: i32, message: String },
    /// Some functions of a group that comes whole (the migration
    /// functions, the parameter enumeration) are exported, not all.
    #[error(
        "autopilot library {path} exports {} but not {}: {}",
        found.join(", "),
        missing.join(", "),
        group.rule()
    )]
    PartialGroup {
        path: PathBuf,
        group: SymbolGroup,
        found: Vec<String>,
        missing: Vec<String>,
    },
    /// snapshot_size() or snapshot() failed or broke the contract.
    #[error("autopilot snapshot failed: {reason}")]
    SnapshotFailed { reason: String },
    /// A flight stack's simulator protocol has no way to do what was asked.
    #[error("{stack} cannot {action}: {reason}")]
    StackUnsupported {
        stack: String,
        action: String,
        reason: String,
    },
    /// The link to a flight stack could not be opened.
    #[error("{stack}: cannot listen on {address}: {reason}")]
    StackListen {
        stack: String,
        address: String,
        reason: String,
    },
    /// No flight stack connected in time.
    #[error("{stack}: no flight stack connected within {waited_s} s{}", said(hint))]
    PeerNotConnected {
        stack: String,
        waited_s: f64,
        hint: String,
    },
    /// The flight stack disconnected, broke its protocol or missed a deadline.
    #[error("{stack} at {}: {reason}", at(*time_us))]
    PeerFailed {
        stack: String,
        time_us: u64,
        reason: String,
    },
    /// A signal arrived while the harness waited for a flight stack.
    #[error("interrupted by {} while waiting for the flight stack", crate::signal_name(*signal))]
    WaitInterrupted { signal: i32 },
    /// restore() refused the snapshot.
    #[error("autopilot restore failed with status {code} ({}){}", crate::status_name(*code), said(message))]
    RestoreFailed { code: i32, message: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_without_text_ends_its_sentence_without_a_dangling_colon() {
        let step = |message: &str| {
            AbiError::StepFailed {
                time_us: 1000,
                code: crate::ffi::LOCKSTEP_AP_ERR_INTERNAL,
                message: message.into(),
            }
            .to_string()
        };
        assert_eq!(
            step(""),
            "autopilot step at t = 0.001000 s failed with status -4 (internal error)"
        );
        assert_eq!(step(" \n"), step(""));
        assert_eq!(
            step("fault\n"),
            "autopilot step at t = 0.001000 s failed with status -4 (internal error): fault"
        );
        let create = |message: &str| {
            AbiError::CreateFailed {
                message: message.into(),
            }
            .to_string()
        };
        assert_eq!(create(""), "autopilot create failed");
        assert_eq!(create("no memory"), "autopilot create failed: no memory");
        let reset = AbiError::ResetFailed {
            code: crate::ffi::LOCKSTEP_AP_ERR_INTERNAL,
            message: String::new(),
        };
        assert_eq!(
            reset.to_string(),
            "autopilot reset failed with status -4 (internal error)"
        );
        let upload = AbiError::MissionRejected {
            count: 3,
            code: crate::ffi::LOCKSTEP_AP_ERR_INTERNAL,
            message: String::new(),
        };
        assert_eq!(
            upload.to_string(),
            "mission upload of 3 item(s) rejected with status -4 (internal error)"
        );
    }
}
