//! Isolation: the autopilot library runs in a child process, the *host*,
//! and exchanges frames with the harness through shared memory
//! ([`channel`]). The harness keeps time, plant and log; a crash, `exit` or
//! hang of the library ends the run with an error naming the signal or exit
//! status, the function and the simulated time, and the harness goes on to
//! write everything up to that boundary.
//!
//! The host is no file of its own: each front end starts *itself* again in
//! a serve mode ([`host_serve`]). The `lockstep` binary runs as
//! `lockstep --serve ...`, the C ABI's `liblockstep.so` is an executable
//! shared library that serves the same way, and Python runs its interpreter
//! on its extension module. A front end declares its own program once
//! ([`set_own_host`]); [`host_program`] says which host a run starts.
//!
//! - [`Isolation`] chooses the mode; [`IsolationOptions`] hold the watchdog's
//!   limits.
//! - [`probe`] loads a library in a host process and returns what
//!   `check-lib` prints: a library whose initialisers crash or exit is a
//!   report, not the end of the harness.
//! - [`host_serve`] is the host's whole program.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use crate::AbiError;
use crate::library::Report;

mod channel;
mod host;
mod remote;

pub use host::host_serve;
pub(crate) use remote::Remote;

/// The argument that starts a host's serve mode (`PROGRAM ARGS... --serve
/// MEMFD LIFELINE SPIN_NS`).
pub const SERVE_FLAG: &str = "--serve";
/// The environment variable that names the host program: the `lockstep`
/// binary, `liblockstep.so`, or any program that serves like them.
pub const HOST_ENV: &str = "LOCKSTEP_AUTOPILOT_HOST";
/// The program looked for next to the running executable when this process
/// has no host of its own (a test executable, a C program linked with
/// `liblockstep.a`).
pub const SIBLING_NAME: &str = "lockstep";

/// A program that runs as the host: started as `program args... --serve
/// MEMFD LIFELINE SPIN_NS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostProgram {
    /// The executable.
    pub program: PathBuf,
    /// The arguments before `--serve` (a launcher's: a Python interpreter
    /// running lockstep's extension module).
    pub args: Vec<OsString>,
}

impl HostProgram {
    /// `program` with no arguments of its own.
    pub fn new(program: impl Into<PathBuf>) -> HostProgram {
        HostProgram {
            program: program.into(),
            args: Vec::new(),
        }
    }

    /// The running executable, started again: `/proc/self/exe` where the
    /// system has it (the very file this process runs, even after a rebuild
    /// replaced or removed it), else its path.
    ///
    /// Under a launcher that runs the program itself (valgrind), the file
    /// behind `/proc/self/exe` is the launcher's, which cannot be started
    /// that way, while the link still names the program: the named file is
    /// taken when it is not the file `/proc/self/exe` opens.
    pub fn this_executable() -> Result<HostProgram, AbiError> {
        let proc = Path::new("/proc/self/exe");
        if let Ok(opened) = std::fs::metadata(proc) {
            return Ok(HostProgram::new(launched_program(proc, &opened)));
        }
        std::env::current_exe()
            .map(HostProgram::new)
            .map_err(|e| AbiError::HostUnavailable {
                reason: format!("cannot locate the running executable: {e}"),
            })
    }
}

/// `proc` (the link to this process's executable), or the file it names
/// when that is another file than the one it opens (`opened`).
fn launched_program(proc: &Path, opened: &std::fs::Metadata) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let named = match std::fs::read_link(proc) {
        Ok(named) => named,
        Err(_) => return proc.to_path_buf(),
    };
    match std::fs::metadata(&named) {
        Ok(m) if (m.dev(), m.ino()) != (opened.dev(), opened.ino()) => named,
        _ => proc.to_path_buf(),
    }
}

impl From<&str> for HostProgram {
    fn from(p: &str) -> HostProgram {
        HostProgram::new(p)
    }
}

impl From<PathBuf> for HostProgram {
    fn from(p: PathBuf) -> HostProgram {
        HostProgram::new(p)
    }
}

impl From<&Path> for HostProgram {
    fn from(p: &Path) -> HostProgram {
        HostProgram::new(p)
    }
}

static OWN_HOST: OnceLock<HostProgram> = OnceLock::new();

/// Declares this process's own host: the front end's program started again
/// in its serve mode (the `lockstep` binary, the C ABI's shared library,
/// Python's interpreter on the extension module). The first declaration
/// holds; returns whether this one did.
pub fn set_own_host(host: HostProgram) -> bool {
    OWN_HOST.set(host).is_ok()
}

/// This process's own host, if a front end declared one.
pub fn own_host() -> Option<&'static HostProgram> {
    OWN_HOST.get()
}

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
    /// The host program; `None` looks it up (see [`host_program`]).
    pub host: Option<HostProgram>,
}

impl Default for IsolationOptions {
    fn default() -> Self {
        IsolationOptions {
            step_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(60),
            spin: Duration::from_micros(50),
            host: None,
        }
    }
}

/// The host a run starts: `explicit` when given, else the program named by
/// `LOCKSTEP_AUTOPILOT_HOST`, else this process's own ([`set_own_host`]),
/// else `lockstep` next to the running executable or in its parent
/// directory (where cargo puts the binaries for the test executables in
/// `deps/`).
pub fn host_program(explicit: Option<&HostProgram>) -> Result<HostProgram, AbiError> {
    if let Some(h) = explicit {
        return match existing(&h.program) {
            Some(_) => Ok(h.clone()),
            None => Err(AbiError::HostUnavailable {
                reason: format!("{} does not exist", h.program.display()),
            }),
        };
    }
    if let Some(p) = std::env::var_os(HOST_ENV) {
        let p = PathBuf::from(p);
        return existing(&p)
            .map(HostProgram::new)
            .ok_or_else(|| AbiError::HostUnavailable {
                reason: format!("{HOST_ENV}={} names no file", p.display()),
            });
    }
    if let Some(h) = own_host() {
        return Ok(h.clone());
    }
    let exe = std::env::current_exe().map_err(|e| AbiError::HostUnavailable {
        reason: format!("cannot locate the running executable: {e}"),
    })?;
    let mut tried = Vec::new();
    for dir in exe.ancestors().skip(1).take(2) {
        let p = dir.join(SIBLING_NAME);
        if let Some(p) = existing(&p) {
            return Ok(HostProgram::new(p));
        }
        tried.push(p.display().to_string());
    }
    Err(AbiError::HostUnavailable {
        reason: format!(
            "this program ({}) cannot serve as the autopilot's host, and no {SIBLING_NAME} binary is next to it (looked for {}); set {HOST_ENV} to the lockstep binary or to liblockstep.so, or run the autopilot in-process",
            exe.display(),
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
    host: &HostProgram,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_running_executable_is_started_through_proc_self_exe() {
        let own = HostProgram::this_executable().unwrap();
        assert_eq!(own.program, Path::new("/proc/self/exe"));
        assert!(own.args.is_empty());
    }

    #[test]
    fn a_launcher_behind_the_link_gives_the_program_it_names() {
        let dir = std::env::temp_dir().join(format!("lockstep-launched-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (program, launcher, link) =
            (dir.join("program"), dir.join("launcher"), dir.join("exe"));
        std::fs::write(&program, b"program").unwrap();
        std::fs::write(&launcher, b"launcher").unwrap();
        std::os::unix::fs::symlink(&program, &link).unwrap();
        let program_opened = std::fs::metadata(&program).unwrap();
        let launcher_opened = std::fs::metadata(&launcher).unwrap();
        // The link opens the file it names: the link itself is kept.
        assert_eq!(launched_program(&link, &program_opened), link);
        // The link opens another file (valgrind's tool): the named one.
        assert_eq!(launched_program(&link, &launcher_opened), program);
        // The named file is gone (a rebuild removed it): the link.
        std::fs::remove_file(&program).unwrap();
        assert_eq!(launched_program(&link, &launcher_opened), link);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
