//! A vehicle's state as Python reads it: the truth, the estimate, the
//! autopilot's outputs and a battery, as dicts of numbers and numpy arrays
//! (units in the keys, as in the log).

use lockstep_abi::ffi::{lockstep_actuator_frame, lockstep_sensor_frame};
use lockstep_plant::PlantOutputs;
use numpy::PyArray1;
use pyo3::exceptions::PyIndexError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn vec3<'py>(py: Python<'py>, v: [f64; 3]) -> Bound<'py, PyArray1<f64>> {
    PyArray1::from_slice(py, &v)
}

/// The true state at time `t_us` (state vector `x`, outputs `o`).
pub fn truth<'py>(
    py: Python<'py>,
    t_us: u64,
    x: &[f64],
    o: &PlantOutputs,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_us", t_us)?;
    d.set_item("position_ned_m", vec3(py, [x[0], x[1], x[2]]))?;
    d.set_item("velocity_ned_mps", vec3(py, [x[3], x[4], x[5]]))?;
    d.set_item("attitude_q", PyArray1::from_slice(py, &x[6..10]))?;
    d.set_item("rates_frd_radps", vec3(py, [x[10], x[11], x[12]]))?;
    d.set_item(
        "specific_force_frd_mps2",
        vec3(py, o.specific_force_frd_mps2),
    )?;
    d.set_item("on_ground", o.contact_points > 0)?;
    Ok(d)
}

/// The estimate the autopilot last received.
pub fn estimate<'py>(py: Python<'py>, f: &lockstep_sensor_frame) -> PyResult<Bound<'py, PyDict>> {
    let s = &f.estimate;
    let w = |v: &[f32]| PyArray1::from_vec(py, v.iter().map(|&x| f64::from(x)).collect());
    let d = PyDict::new(py);
    d.set_item("time_us", s.timestamp_us)?;
    d.set_item("position_ned_m", w(&s.position_ned_m))?;
    d.set_item("velocity_ned_mps", w(&s.velocity_ned_mps))?;
    d.set_item("attitude_q", w(&s.attitude_q))?;
    d.set_item("rates_frd_radps", w(&s.rates_frd_radps))?;
    Ok(d)
}

/// The autopilot's outputs of its last step.
pub fn actuators<'py>(
    py: Python<'py>,
    a: &lockstep_actuator_frame,
    rotors: usize,
    time_us: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_us", time_us)?;
    d.set_item(
        "motors",
        PyArray1::from_vec(py, a.motors[..rotors].to_vec()),
    )?;
    d.set_item("mode", a.mode)?;
    d.set_item("mode_name", lockstep_abi::mode_name(a.mode))?;
    d.set_item("armed", a.armed != 0)?;
    d.set_item("mission_current", a.mission_current)?;
    d.set_item("mission_finished", a.mission_finished != 0)?;
    Ok(d)
}

/// Battery `index` of `n`.
pub fn battery<'py>(
    py: Python<'py>,
    o: &PlantOutputs,
    n: usize,
    index: usize,
) -> PyResult<Bound<'py, PyDict>> {
    if index >= n {
        return Err(PyIndexError::new_err(format!(
            "battery {index}, but the vehicle has {n} (0 to {})",
            n.saturating_sub(1)
        )));
    }
    let b = o.batteries[index];
    let d = PyDict::new(py);
    d.set_item("voltage_v", b.voltage_v)?;
    d.set_item("current_a", b.current_a)?;
    d.set_item("soc", b.soc)?;
    d.set_item("warning", format!("{:?}", b.warning).to_lowercase())?;
    d.set_item("connected", b.connected)?;
    Ok(d)
}
