//! The isolated autopilot's host process from Python: the interpreter
//! itself, loading this extension module by its file (no package import,
//! no site) and running the host's program (`lockstep_abi::host_serve`).
//! A wheel carries no executable besides the module, and this needs none.

use std::ffi::OsString;

use lockstep_abi::IsolationOptions;
use pyo3::prelude::*;

/// The program `python -I -S -c` runs: argv[1] is this module's file, the
/// rest the host's arguments.
const LAUNCHER: &str = "import sys\n\
from importlib.util import spec_from_file_location, module_from_spec\n\
s = spec_from_file_location('lockstep._native', sys.argv[1])\n\
m = module_from_spec(s)\n\
s.loader.exec_module(m)\n\
sys.exit(m._autopilot_host(sys.argv[2:]))\n";

/// Isolation options whose host is this interpreter running this module,
/// unless `LOCKSTEP_AUTOPILOT_HOST` names a host executable.
pub fn options(py: Python<'_>) -> PyResult<IsolationOptions> {
    let mut o = IsolationOptions::default();
    if std::env::var_os(lockstep_abi::isolate::HOST_ENV).is_some() {
        return Ok(o);
    }
    let sys = py.import("sys")?;
    let exe: std::path::PathBuf = sys.getattr("executable")?.extract()?;
    let module: String = py
        .import("lockstep._native")?
        .getattr("__file__")?
        .extract()?;
    o.host = Some(exe);
    o.host_args = ["-I", "-S", "-c", LAUNCHER, &module]
        .into_iter()
        .map(OsString::from)
        .collect();
    Ok(o)
}

/// The host's program (the harness starts it; never called by hand).
#[pyfunction]
pub fn _autopilot_host(args: Vec<String>) -> i32 {
    lockstep_abi::isolate::host_serve(&args)
}
