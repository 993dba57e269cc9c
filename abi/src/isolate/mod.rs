//! Isolation: the autopilot library runs in a child process, the *host*
//! (`lockstep-autopilot-host`), and exchanges frames with the harness
//! through shared memory ([`channel`]). The harness keeps time, plant and
//! log; a crash, `exit` or hang of the library ends the run with an error
//! naming the signal or exit status, the function and the simulated time,
//! and the harness goes on to write everything up to that boundary.
//!
//! - [`Isolation`] chooses the mode; [`IsolationOptions`] hold the watchdog's
//!   limits.
//! - [`probe`] loads a library in a host process and returns what
//!   `check-lib` prints: a library whose initialisers crash or exit is a
//!   report, not the end of the harness.
//! - [`host_main`] is the host executable's whole program.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::AbiError;
use crate::library::Report;

mod channel;
mod host;
mod remote;

pub use host::{host_main, host_serve};
pub(crate) use remote::Remote;

/// The host executable's file name.
pub const HOST_NAME: &str = "lockstep-autopilot-host";
/// The environment variable that names the host executable.
pub const HOST_ENV: &str = "LOCKSTEP_AUTOPILOT_HOST";

/// Where an autopilot instance runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Isolation {
    /// In the harness's process: the cheapest, but a crash in the library
    /// ends the harness (after one line naming signal, function and time).
    InProcess,
    /// In a child process, with a watchdog on every call.
    Process(IsolationOptions),
}

impl Default for Isolation {
    fn default() -> Self {
        Isolation::Process(IsolationOptions::default())
    }
}

/// The isolated mode's limits and where its host executable is.
#[derive(Debug, Clone, PartialEq)]
pub struct IsolationOptions {
    /// Wall time a `step` may take before the watchdog stops the host
    /// (default 5 s: a step is normally microseconds, and this leaves room
    /// for debuggers and valgrind).
    pub step_timeout: Duration,
    /// Wall time any other call may take: load (the library's
    /// initialisers), create, mission upload, parameters, reset, destroy
    /// (default 60 s).
    pub call_timeout: Duration,
    /// How long a side busy-waits for the other's answer before sleeping
    /// (default 50 µs; a step's round trip is a few µs, so the common case
    /// never sleeps, while an idle host sleeps within 50 µs). Spinning is
    /// used only while the machine has about a core for every runnable task;
    /// on a busy machine both sides sleep at once (see `channel::Backoff`).
    pub spin: Duration,
    /// The host executable; `None` looks it up (see [`host_path`]).
    pub host: Option<PathBuf>,
    /// Arguments the host executable takes before `--serve`: for a launcher
    /// that runs the host's program ([`host_serve`]) from elsewhere, such as
    /// a Python interpreter running it from lockstep's extension module.
    pub host_args: Vec<std::ffi::OsString>,
}

impl Default for IsolationOptions {
    fn default() -> Self {
        IsolationOptions {
            step_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(60),
            spin: Duration::from_micros(50),
            host: None,
            host_args: Vec::new(),
        }
    }
}

/// The host executable: `explicit` when given, else the file named by
/// `LOCKSTEP_AUTOPILOT_HOST`, else `lockstep-autopilot-host` next to the
/// running executable or in its parent directory (where cargo puts binaries
/// for test executables in `deps/`).
pub fn host_path(explicit: Option<&Path>) -> Result<PathBuf, AbiError> {
    if let Some(p) = explicit {
        return existing(p).ok_or_else(|| AbiError::HostUnavailable {
            reason: format!("{} does not exist", p.display()),
        });
    }
    if let Some(p) = std::env::var_os(HOST_ENV) {
        let p = PathBuf::from(p);
        return existing(&p).ok_or_else(|| AbiError::HostUnavailable {
            reason: format!("{HOST_ENV}={} names no file", p.display()),
        });
    }
    let exe = std::env::current_exe().map_err(|e| AbiError::HostUnavailable {
        reason: format!("cannot locate the running executable: {e}"),
    })?;
    let mut tried = Vec::new();
    for dir in exe.ancestors().skip(1).take(2) {
        let p = dir.join(HOST_NAME);
        if let Some(p) = existing(&p) {
            return Ok(p);
        }
        tried.push(p.display().to_string());
    }
    Err(AbiError::HostUnavailable {
        reason: format!(
            "{HOST_NAME} not found (looked for {}); install it next to the harness or set {HOST_ENV}",
            tried.join(" and ")
        ),
    })
}

fn existing(p: &Path) -> Option<PathBuf> {
    p.is_file().then(|| p.to_path_buf())
}

/// Loads the library at `path` in a host process and reports on it (the
/// in-process [`crate::AutopilotLibrary::inspect`], out of harm's way).
/// A library that crashes, exits or hangs while loading is an
/// [`AbiError::Crashed`] in `library load`.
pub fn probe(
    host: &Path,
    path: &Path,
    options: Option<&IsolationOptions>,
) -> Result<Report, AbiError> {
    let defaults = IsolationOptions::default();
    let options = options.unwrap_or(&defaults);
    let mut r = Remote::start(host, options)?;
    let report = r.inspect(path)?;
    r.close()?;
    Ok(report)
}
