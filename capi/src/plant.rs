//! Mode 3, the plant alone (`lockstep_plant`): a built-in or file aircraft
//! stepped over integer-microsecond intervals with the actuator commands
//! and wind the host sets, by the integrator it names; its state and the
//! integrator's work read back. For hosts with their own controller, and
//! for measuring integrator cost from C.

use std::ffi::c_char;

use ::lockstep_plant::PlantOutputs;
use ::lockstep_plant::integrate::Method;
use lockstep_harness::Micros;
use lockstep_harness::engine::{AircraftPlantError, PlantRunner};

use crate::boundary::*;
use crate::registry::{Entry, Registry};
use crate::types::*;

/// Our plant on its own. Opaque: created by `lockstep_plant_new`, released
/// by `lockstep_plant_free`.
#[derive(Debug)]
pub struct lockstep_plant {
    _private: [u8; 0],
}

static PLANTS: Registry<PlantRunner> = Registry::new(3, "lockstep_plant");

pub(crate) fn truth(t: Micros, x: &[f64], o: &PlantOutputs) -> lockstep_truth {
    lockstep_truth {
        size: size_of::<lockstep_truth>() as u32,
        on_ground: u32::from(o.contact_points > 0),
        time_us: t.0,
        position_ned_m: [x[0], x[1], x[2]],
        velocity_ned_mps: [x[3], x[4], x[5]],
        attitude_q: [x[6], x[7], x[8], x[9]],
        rates_frd_radps: [x[10], x[11], x[12]],
        specific_force_frd_mps2: o.specific_force_frd_mps2,
    }
}

/// Copies a state vector out.
///
/// # Safety
/// `buf` is NULL or valid for `len` doubles; `out_len` is NULL or writable.
pub(crate) unsafe fn copy_state(
    x: &[f64],
    buf: *mut f64,
    len: usize,
    out_len: *mut usize,
) -> Outcome {
    let out_len = non_null_mut(out_len, "out_len")?;
    // SAFETY: non-NULL and writable (the caller's promise).
    unsafe { *out_len = x.len() };
    if buf.is_null() || len < x.len() {
        return Err(Failure::new(
            lockstep_status::LOCKSTEP_ERR_BUFFER,
            format!("the state has {} values; the buffer holds {len}", x.len()),
        ));
    }
    // SAFETY: `buf` holds at least `x.len()` doubles (checked; the caller
    // promises `len` of them) and cannot overlap our vector.
    unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), buf, x.len()) };
    Ok(())
}

/// Creates the plant of an aircraft at rest at the origin: `spec` is a
/// built-in name (`"iris"`, `"hexa"`, `"octa"`) or a spec file;
/// `integrator` names the method (`"euler"`, `"rk4"`, or the adaptive
/// `"bs32"` and `"dp54"`; NULL: `"rk4"`); `max_step_us` is the longest step
/// it takes (the step of a fixed-step method; 0: 1000).
/// Thread-safe.
///
/// # Safety
/// `spec` is NUL-terminated; `integrator` is NULL or NUL-terminated;
/// `out_plant` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_new(
    spec: *const c_char,
    integrator: *const c_char,
    max_step_us: u64,
    out_plant: *mut *mut lockstep_plant,
) -> lockstep_status {
    guard(|| {
        let out = non_null_mut(out_plant, "out_plant")?;
        // SAFETY: the caller's promise.
        let name = unsafe { text(spec, "spec") }?;
        let method = if integrator.is_null() {
            Method::Rk4
        } else {
            // SAFETY: the caller's promise.
            let m = unsafe { text(integrator, "integrator") }?;
            Method::from_name(m).ok_or_else(|| {
                argument(format!(
                    "no integrator named `{m}` (euler, rk4, bs32, dp54)"
                ))
            })?
        };
        let runner = PlantRunner::of_aircraft(name, method, max_step_us).map_err(|e| match e {
            AircraftPlantError::Spec(_) => {
                Failure::new(lockstep_status::LOCKSTEP_ERR_CONFIG, e.to_string())
            }
            AircraftPlantError::Options(_) => argument(e.to_string()),
        })?;
        let h = PLANTS.insert(runner)?;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = std::ptr::without_provenance_mut(h) };
        Ok(())
    })
}

/// Creates the plant a scenario file flies, as a whole vehicle would have
/// it: its aircraft at the world origin (the scenario's, its mission's home,
/// or the spec's), at rest at its start, with its integrator and physics
/// step. For a host that flies it with a `lockstep_bridge` or its own
/// controller. Thread-safe.
///
/// # Safety
/// `scenario_path` is NUL-terminated; `out_plant` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_new_from_scenario(
    scenario_path: *const c_char,
    out_plant: *mut *mut lockstep_plant,
) -> lockstep_status {
    guard(|| {
        let out = non_null_mut(out_plant, "out_plant")?;
        // SAFETY: the caller's promise.
        let scenario = unsafe { crate::options::scenario_file(scenario_path) }?.load(&[])?;
        let runner = PlantRunner::from_scenario(&scenario)?;
        let h = PLANTS.insert(runner)?;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = std::ptr::without_provenance_mut(h) };
        Ok(())
    })
}

/// Runs `f` on the plant behind `plant`; a failure becomes its last error.
fn with(
    plant: *const lockstep_plant,
    f: impl FnOnce(&mut Entry<PlantRunner>) -> Outcome,
) -> lockstep_status {
    PLANTS.with(plant as usize, "plant", f)
}

/// The number of rotors (the length `lockstep_plant_set_motors` takes).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_count` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_rotor_count(
    plant: *mut lockstep_plant,
    out_count: *mut u32,
) -> lockstep_status {
    with(plant, |e| {
        let out = non_null_mut(out_count, "out_count")?;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = e.value.plant().rotors.len() as u32 };
        Ok(())
    })
}

/// Sets the motor commands (0..1, `count` = the rotor count), held until
/// changed.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `commands` is valid for `count` doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_set_motors(
    plant: *mut lockstep_plant,
    commands: *const f64,
    count: usize,
) -> lockstep_status {
    with(plant, |e| {
        if commands.is_null() {
            return Err(null("commands"));
        }
        let n = e.value.plant().rotors.len();
        if count != n {
            return Err(argument(format!("{count} motor commands for {n} rotors")));
        }
        // SAFETY: non-NULL, valid for `count` doubles (the caller's promise).
        let c = unsafe { std::slice::from_raw_parts(commands, count) };
        finite(c, "commands")?;
        if let Some(i) = c.iter().position(|v| !(0.0..=1.0).contains(v)) {
            return Err(argument(format!(
                "`commands[{i}]` is {}, outside 0..1",
                c[i]
            )));
        }
        e.value.inputs_mut().motor_cmd[..n].copy_from_slice(c);
        Ok(())
    })
}

/// Sets the wind (NED, m/s), held until changed.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `wind_ned_mps` is valid for 3 doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_set_wind(
    plant: *mut lockstep_plant,
    wind_ned_mps: *const f64,
) -> lockstep_status {
    with(plant, |e| {
        if wind_ned_mps.is_null() {
            return Err(null("wind_ned_mps"));
        }
        // SAFETY: non-NULL, valid for 3 doubles (the caller's promise).
        let w = unsafe { std::slice::from_raw_parts(wind_ned_mps, 3) };
        finite(w, "wind_ned_mps")?;
        e.value.inputs_mut().wind_ned_mps = [w[0], w[1], w[2]];
        Ok(())
    })
}

/// Integrates `dt_us` microseconds with the inputs held. `dt_us` above
/// `LOCKSTEP_PLANT_MAX_STEP_US` (10 s) is `LOCKSTEP_ERR_ARGUMENT`, the
/// handle unchanged and usable: step longer intervals in parts (a call
/// holds its caller for at most about 0.1 s). After an error of the
/// integration (a non-finite state, a step that became too small) the
/// state is the last accepted one and the handle is failed
/// (`LOCKSTEP_ERR_FAILED` after).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `plant` as returned by `lockstep_plant_new` (anything else is
/// `LOCKSTEP_ERR_HANDLE`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_step(
    plant: *mut lockstep_plant,
    dt_us: u64,
) -> lockstep_status {
    with(plant, |e| {
        e.usable("plant")?;
        let to = e.value.step_end(dt_us).map_err(argument)?;
        if let Err(err) = e.value.advance_to(to) {
            let f = Failure::new(lockstep_status::LOCKSTEP_ERR_PLANT, err.to_string());
            e.failed = Some(f.clone());
            return Err(f);
        }
        Ok(())
    })
}

/// The plant's time (the sum of the intervals stepped).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_time_us` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_time_us(
    plant: *mut lockstep_plant,
    out_time_us: *mut u64,
) -> lockstep_status {
    with(plant, |e| {
        let out = non_null_mut(out_time_us, "out_time_us")?;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = e.value.now().0 };
        Ok(())
    })
}

/// The true state now (specific force and contact from the plant's outputs
/// with the inputs held).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_truth` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_truth(
    plant: *mut lockstep_plant,
    out: *mut lockstep_truth,
) -> lockstep_status {
    with(plant, |e| {
        let p = &e.value;
        let t = truth(p.now(), p.state(), &p.outputs());
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", t) }
    })
}

/// Battery `index` now (with the inputs held).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_battery_state` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_battery(
    plant: *mut lockstep_plant,
    index: u32,
    out: *mut lockstep_battery_state,
) -> lockstep_status {
    with(plant, |e| {
        let v = battery(&e.value.outputs(), e.value.plant().batteries.len(), index)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// Battery `index` of `n` in `o`.
pub(crate) fn battery(
    o: &PlantOutputs,
    n: usize,
    index: u32,
) -> Result<lockstep_battery_state, Failure> {
    let i = index as usize;
    if i >= n {
        return Err(argument(format!(
            "battery {i}, but the vehicle has {n} (0 to {})",
            n - 1
        )));
    }
    let b = o.batteries[i];
    Ok(lockstep_battery_state {
        size: size_of::<lockstep_battery_state>() as u32,
        warning: b.warning as u32,
        voltage_v: b.voltage_v,
        current_a: b.current_a,
        remaining: b.soc,
        connected: u32::from(b.connected),
        reserved0: 0,
    })
}

/// The whole state vector, as `lockstep_sim_state`.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `buf` is NULL or valid for `len` doubles; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_state(
    plant: *mut lockstep_plant,
    buf: *mut f64,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    // SAFETY: the caller's promises, passed on.
    with(plant, |e| unsafe {
        copy_state(e.value.state(), buf, len, out_len)
    })
}

/// How far from 1 the norm of a state's attitude quaternion may be.
const QUATERNION_TOLERANCE: f64 = 1e-6;

/// Replaces the whole state vector (`len` = its length; finite values,
/// `x[6..10]` a unit quaternion within 1e-6).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `x` is valid for `len` doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_set_state(
    plant: *mut lockstep_plant,
    x: *const f64,
    len: usize,
) -> lockstep_status {
    with(plant, |e| {
        if x.is_null() {
            return Err(null("x"));
        }
        let n = e.value.state().len();
        if len != n {
            return Err(argument(format!("{len} state values for a state of {n}")));
        }
        // SAFETY: non-NULL, valid for `len` doubles (the caller's promise).
        let v = unsafe { std::slice::from_raw_parts(x, len) };
        finite(v, "x")?;
        let q = &v[6..10];
        let norm = q.iter().map(|c| c * c).sum::<f64>().sqrt();
        if (norm - 1.0).abs() > QUATERNION_TOLERANCE {
            return Err(argument(format!(
                "`x[6..10]`, the attitude quaternion, has norm {norm}: a unit quaternion is needed (within {QUATERNION_TOLERANCE})"
            )));
        }
        e.value
            .set_state(v)
            .map_err(|err| argument(err.to_string()))
    })
}

/// The integrator's work since the plant was created.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_integrator_stats` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_stats(
    plant: *mut lockstep_plant,
    out: *mut lockstep_integrator_stats,
) -> lockstep_status {
    with(plant, |e| {
        let s = e.value.stats();
        let v = lockstep_integrator_stats {
            size: size_of::<lockstep_integrator_stats>() as u32,
            reserved0: 0,
            rhs_evals: s.rhs_evals,
            accepted_steps: s.accepted,
            rejected_steps: s.rejected,
        };
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// Frees the plant; `LOCKSTEP_ERR_HANDLE` for one already freed or never
/// created.
///
/// Thread-safe: waits for a call in progress on the handle.
///
/// # Safety
/// As `lockstep_plant_step`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_free(plant: *mut lockstep_plant) -> lockstep_status {
    guard(|| {
        if plant.is_null() {
            return Err(null("plant"));
        }
        PLANTS.remove(plant as usize).map(drop)
    })
}

/// The message of the last error on this plant (empty if none).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_plant_last_error(
    plant: *mut lockstep_plant,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    // SAFETY: the caller's promises, passed on.
    unsafe { PLANTS.last_error(plant as usize, "plant", buf, len, out_len) }
}
