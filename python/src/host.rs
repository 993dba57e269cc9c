//! The isolated autopilot's host process from Python: the interpreter
//! itself, loading this extension module by its file (no package import,
//! no site) and running the host's program (`lockstep_abi::host_serve`).
//! A wheel carries no executable besides the module, and this needs none.

use std::ffi::OsString;

use lockstep_abi::IsolationOptions;
use pyo3::prelude::*;

/// The program `python -I -S -c` runs: argv[1] is this module's file, the
/// rest the child's arguments.
const LAUNCHER: &str = "import sys\n\
from importlib.util import spec_from_file_location, module_from_spec\n\
s = spec_from_file_location('lockstep._native', sys.argv[1])\n\
m = module_from_spec(s)\n\
s.loader.exec_module(m)\n\
sys.exit(m._child(sys.argv[2:]))\n";

/// A child process that is this interpreter running this module's
/// [`_child`]: the program and the arguments before the child's own.
pub fn launcher(py: Python<'_>) -> PyResult<(std::path::PathBuf, Vec<OsString>)> {
    let sys = py.import("sys")?;
    let exe: std::path::PathBuf = sys.getattr("executable")?.extract()?;
    let module: String = py
        .import("lockstep._native")?
        .getattr("__file__")?
        .extract()?;
    let args = ["-I", "-S", "-c", LAUNCHER, &module]
        .into_iter()
        .map(OsString::from)
        .collect();
    Ok((exe, args))
}

/// Isolation options whose host is this interpreter running this module:
/// declared as this process's own host (`LOCKSTEP_AUTOPILOT_HOST` still
/// names another, see `lockstep_abi::isolate::host_program`).
pub fn options(py: Python<'_>) -> PyResult<IsolationOptions> {
    if lockstep_abi::isolate::own_host().is_none() {
        let (program, args) = launcher(py)?;
        lockstep_abi::isolate::set_own_host(lockstep_abi::isolate::HostProgram { program, args });
    }
    Ok(IsolationOptions::default())
}

/// A child process's program (the harness starts it; never called by
/// hand): the isolated autopilot's host (`--serve ...`) or a Monte Carlo
/// batch's worker (`montecarlo-run ...`).
#[pyfunction]
pub fn _child(args: Vec<String>) -> i32 {
    match args.split_first() {
        Some((first, _)) if first == lockstep_abi::isolate::SERVE_FLAG => {
            lockstep_abi::isolate::host_serve(&args)
        }
        Some((first, rest)) if first == "montecarlo-run" => lockstep_run::batch::worker::main(rest),
        _ => {
            eprintln!("lockstep: a child process of the harness, started by it only");
            2
        }
    }
}
