//! The exceptions: one per error class of the run layer (the classes the
//! command line maps to exit statuses and the C ABI to status codes), each
//! carrying the run layer's exact message and what it knows besides.

use lockstep_run::session::SessionError;
use lockstep_run::{ErrorClass, RunError};
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pyo3::create_exception!(
    lockstep,
    Error,
    PyException,
    "A lockstep error. Attributes: error_class (\"configuration\", \"run_failure\", \
     \"expectation_failed\", \"interrupted\"), part (what failed, or None), exit_status (the \
     command line's for the same error), context (lines that say more)."
);
pyo3::create_exception!(
    lockstep,
    ConfigurationError,
    Error,
    "An input was refused before the run started: an argument, the scenario, spec or mission, \
     an output path, or an autopilot library the loader's checks refuse."
);
pyo3::create_exception!(
    lockstep,
    RunFailure,
    Error,
    "The run failed: the autopilot crashed, exited, hung or broke the contract, the integration \
     failed, or an output could not be written. Everything before the failure was written."
);
pyo3::create_exception!(
    lockstep,
    ExpectationFailed,
    Error,
    "The run completed but its verdict failed (a crash, or an [expect] condition not met)."
);
pyo3::create_exception!(
    lockstep,
    Interrupted,
    Error,
    "A signal stopped the run (everything up to its boundary was written)."
);
pyo3::create_exception!(
    lockstep,
    EndedError,
    PyRuntimeError,
    "The run has ended (at its end, by finish(), or by a failure): nothing is left to step."
);

/// The exception for a run-layer error, with its attributes.
pub fn run_error(e: RunError) -> PyErr {
    let err = match e.class {
        ErrorClass::Configuration => ConfigurationError::new_err(e.message.clone()),
        ErrorClass::RunFailure => RunFailure::new_err(e.message.clone()),
        ErrorClass::ExpectationFailed => ExpectationFailed::new_err(e.message.clone()),
        ErrorClass::Interrupted => Interrupted::new_err(e.message.clone()),
    };
    Python::attach(|py| {
        let v = err.value(py);
        let part = e
            .part
            .and_then(|p| serde_json::to_value(p).ok())
            .and_then(|v| v.as_str().map(String::from));
        // Setting attributes on a fresh exception object cannot fail but
        // for memory; the exception is raised either way.
        let _ = v.setattr("error_class", e.class.name());
        let _ = v.setattr("part", part);
        let _ = v.setattr("exit_status", e.exit_status());
        let _ = v.setattr("signal", e.signal);
        let _ = v.setattr("context", e.context.clone());
    });
    err
}

/// The exception for a stepped run's refusal or failure.
pub fn session_error(e: SessionError) -> PyErr {
    match e {
        SessionError::Step(r) | SessionError::End(r) => run_error(r),
        SessionError::Ended(m) => EndedError::new_err(m),
        SessionError::Past(m) => PyValueError::new_err(m),
        SessionError::NotEnded(m) => PyRuntimeError::new_err(m),
    }
}

/// A configuration error with `message`.
pub fn configuration(message: impl Into<String>) -> PyErr {
    run_error(RunError::configuration(message))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("ConfigurationError", py.get_type::<ConfigurationError>())?;
    m.add("RunFailure", py.get_type::<RunFailure>())?;
    m.add("ExpectationFailed", py.get_type::<ExpectationFailed>())?;
    m.add("Interrupted", py.get_type::<Interrupted>())?;
    m.add("EndedError", py.get_type::<EndedError>())?;
    Ok(())
}
