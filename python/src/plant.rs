//! `lockstep.Plant`: the aircraft alone (6-DOF body, rotors, motors,
//! batteries, ground contact), stepped over integer-µs intervals with the
//! motor commands and wind Python sets, by the integrator it names. For a
//! controller written in Python, and for integrator studies.

use std::sync::Mutex;

use lockstep_harness::engine::{AircraftPlantError, PlantRunner};
use lockstep_plant::integrate::Method;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{configuration, run_error};

/// The aircraft alone: `Plant(spec="iris", *, integrator="rk4",
/// max_step_us=1000)` or `Plant.from_scenario(path)`, stepped over
/// integer-microsecond intervals (`step`) with the motor commands and wind
/// it is given (`set_motors`, `set_wind`); `truth`, `state`, `battery`,
/// `stats` (the integrator's work).
#[derive(Debug)]
#[pyclass(module = "lockstep._native", name = "Plant")]
pub struct Plant {
    inner: Mutex<PlantRunner>,
}

impl Plant {
    fn with<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut PlantRunner) -> PyResult<T>,
    ) -> PyResult<T> {
        let mut g = crate::lock::lock(py, &self.inner);
        f(&mut g)
    }
}

/// `values` as `n` finite numbers within `lo..=hi`, named `what`.
pub fn checked<'a>(
    values: &'a [f64],
    n: usize,
    what: &str,
    bounds: Option<(f64, f64)>,
) -> PyResult<&'a [f64]> {
    if values.len() != n {
        return Err(PyValueError::new_err(format!(
            "{what}: {} values, expected {n}",
            values.len()
        )));
    }
    if let Some(i) = values.iter().position(|v| !v.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{what}[{i}] is {}: not a finite number",
            values[i]
        )));
    }
    if let Some((lo, hi)) = bounds
        && let Some(i) = values.iter().position(|v| !(lo..=hi).contains(v))
    {
        return Err(PyValueError::new_err(format!(
            "{what}[{i}] is {}, outside {lo}..{hi}",
            values[i]
        )));
    }
    Ok(values)
}

#[pymethods]
impl Plant {
    /// An aircraft at rest at the origin: `spec` a built-in name
    /// (`lockstep.specs()`) or a spec file; `integrator` "euler", "rk4",
    /// "bs32" or "dp54"; `max_step_us` its longest step (a fixed-step
    /// method's step).
    #[new]
    #[pyo3(signature = (spec=None, *, integrator="rk4", max_step_us=1000))]
    fn new(spec: Option<Bound<'_, PyAny>>, integrator: &str, max_step_us: u64) -> PyResult<Plant> {
        let spec = match crate::args::none_is_none(&spec) {
            None => "iris".to_string(),
            Some(v) => match v.extract::<String>() {
                Ok(s) => s,
                Err(_) => crate::args::path("spec", v)?.display().to_string(),
            },
        };
        let method = Method::from_name(integrator).ok_or_else(|| {
            configuration(format!(
                "integrator={integrator:?}: no integrator by that name (euler, rk4, bs32, dp54)"
            ))
        })?;
        if max_step_us == 0 {
            return Err(configuration("max_step_us=0: at least 1"));
        }
        let runner = PlantRunner::of_aircraft(&spec, method, max_step_us).map_err(|e| match e {
            AircraftPlantError::Spec(_) => configuration(format!("spec={spec:?}: {e}")),
            AircraftPlantError::Options(_) => configuration(e.to_string()),
        })?;
        Ok(Plant {
            inner: Mutex::new(runner),
        })
    }

    /// The plant a scenario file flies, as its whole vehicle would have
    /// it: its aircraft at the world origin, at rest at its start, with its
    /// integrator and physics step.
    #[staticmethod]
    fn from_scenario(scenario: Bound<'_, PyAny>) -> PyResult<Plant> {
        let p = crate::args::path("scenario", &scenario)?;
        let s = lockstep_harness::inputs::scenario::Scenario::load(&p)
            .map_err(|e| configuration(e.to_string()))?;
        let runner = PlantRunner::from_scenario(&s)
            .map_err(|e| run_error(lockstep_run::RunError::of_build(&e)))?;
        Ok(Plant {
            inner: Mutex::new(runner),
        })
    }

    /// The number of rotors.
    #[getter]
    fn rotors(&self, py: Python<'_>) -> usize {
        self.with(py, |p| Ok(p.plant().rotors.len())).unwrap_or(0)
    }

    /// Sets the motor commands (one per rotor, each in [0, 1]); held until
    /// set again.
    fn set_motors(&self, py: Python<'_>, commands: PyReadonlyArray1<'_, f64>) -> PyResult<()> {
        let c = commands.as_slice()?;
        self.with(py, |p| {
            let n = p.plant().rotors.len();
            let c = checked(c, n, "commands", Some((0.0, 1.0)))?;
            p.inputs_mut().motor_cmd[..n].copy_from_slice(c);
            Ok(())
        })
    }

    /// Sets the wind (NED, m/s); held until set again.
    fn set_wind(&self, py: Python<'_>, wind_ned_mps: PyReadonlyArray1<'_, f64>) -> PyResult<()> {
        let w = wind_ned_mps.as_slice()?;
        let w = checked(w, 3, "wind_ned_mps", None)?;
        self.with(py, |p| {
            p.inputs_mut().wind_ned_mps = [w[0], w[1], w[2]];
            Ok(())
        })
    }

    /// Integrates `dt_us` microseconds with the inputs held; at most 10 s
    /// a call (`ValueError` above it: step in parts).
    fn step(&self, py: Python<'_>, dt_us: u64) -> PyResult<()> {
        self.with(py, |p| {
            let to = p.step_end(dt_us).map_err(PyValueError::new_err)?;
            py.detach(|| p.advance_to(to))
                .map_err(|e| run_error(lockstep_run::RunError::run_failure(e.to_string())))?;
            Ok(())
        })
    }

    /// Now, µs.
    #[getter]
    fn time_us(&self, py: Python<'_>) -> u64 {
        self.with(py, |p| Ok(p.now().0)).unwrap_or(0)
    }

    /// The true state: as `Sim.truth`.
    #[getter]
    fn truth<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |p| {
            crate::state::truth(py, p.now().0, p.state(), &p.outputs())
        })
    }

    /// The whole state vector (as `Sim.state`).
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.with(py, |p| Ok(PyArray1::from_slice(py, p.state())))
    }

    /// Battery `index`: as `Sim.battery`.
    #[pyo3(signature = (index=0))]
    fn battery<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |p| {
            crate::state::battery(py, &p.outputs(), p.plant().batteries.len(), index)
        })
    }

    /// The integrator's work so far: rhs_evals, accepted, rejected.
    #[getter]
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |p| {
            let s = p.stats();
            let d = PyDict::new(py);
            d.set_item("rhs_evals", s.rhs_evals)?;
            d.set_item("accepted", s.accepted)?;
            d.set_item("rejected", s.rejected)?;
            Ok(d)
        })
    }
}
