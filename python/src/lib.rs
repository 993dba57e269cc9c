//! lockstep's Python extension module (`lockstep._native`): the run layer
//! for Python. Whole runs (`runs`), a vehicle stepped from Python (`sim`),
//! the plant alone (`plant`), their state as Python reads it (`state`),
//! log rows as numpy columns (`columns`), the exceptions (`errors`), the
//! arguments (`args`), and the isolated autopilot's host (`host`). The
//! Python package around it (`python/lockstep/`) adds the `Flight` and the
//! Gymnasium environments.

use pyo3::prelude::*;

mod args;
mod columns;
mod env;
mod errors;
mod host;
mod lock;
mod plant;
mod runs;
mod sim;
mod state;

/// The flight-mode names by code (the log's `mode` column).
#[pyfunction]
fn mode_names(py: Python<'_>) -> PyResult<Bound<'_, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    for m in 0..=lockstep_abi::ffi::LOCKSTEP_MODE_STACK {
        d.set_item(m, lockstep_abi::mode_name(m))?;
    }
    Ok(d)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(runs::_fly, m)?)?;
    m.add_function(wrap_pyfunction!(runs::_montecarlo, m)?)?;
    m.add_function(wrap_pyfunction!(runs::_montecarlo_run, m)?)?;
    m.add_function(wrap_pyfunction!(runs::_compare_integrators, m)?)?;
    m.add_function(wrap_pyfunction!(runs::specs, m)?)?;
    m.add_function(wrap_pyfunction!(runs::spec_toml, m)?)?;
    m.add_function(wrap_pyfunction!(mode_names, m)?)?;
    m.add_function(wrap_pyfunction!(host::_child, m)?)?;
    m.add_class::<sim::Sim>()?;
    m.add_class::<plant::Plant>()?;
    m.add_class::<env::Env>()?;
    m.add_class::<env::VectorEnv>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
