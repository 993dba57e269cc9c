//! Mode 2, the autopilot in the loop against a plant the host owns
//! (`lockstep_bridge`): at each boundary of the scenario's sensor and
//! autopilot cadences (`lockstep_bridge_next_time_us`) the host hands over
//! its truth; the harness samples its sensor and estimator models, injects
//! the frame with exact timestamps, steps the autopilot where due, and
//! returns the actuator commands, which the host holds until the next
//! autopilot step.

use std::ffi::c_char;
use std::path::Path;

use lockstep_harness::Micros;
use lockstep_harness::engine::{HostBattery, HostTruth, HostedVehicle};
use lockstep_harness::environment::sensors::Truth;
use lockstep_run::flight::ScenarioSource;

use crate::boundary::*;
use crate::options::{Setup, scenario_file, scenario_text, setup};
use crate::registry::{Entry, Registry};
use crate::sim::{actuators, estimate};
use crate::types::*;

/// An autopilot with the harness's sensors and estimator, flying a plant
/// the host owns. Opaque: created by `lockstep_bridge_new_*`, released by
/// `lockstep_bridge_free`.
#[derive(Debug)]
pub struct lockstep_bridge {
    _private: [u8; 0],
}

pub(crate) struct Bridge {
    hosted: HostedVehicle,
    rotors: usize,
}

static BRIDGES: Registry<Bridge> = Registry::new(2, "lockstep_bridge");

fn create(scenario: ScenarioSource, s: Setup, out: *mut *mut lockstep_bridge) -> Outcome {
    let out = non_null_mut(out, "out_bridge")?;
    if s.log.is_some() || s.record.is_some() {
        return Err(argument(
            "options.log_path and options.record_path are for whole vehicles: a bridge has no plant to log",
        ));
    }
    let scenario = scenario.load(&[])?;
    let hosted = HostedVehicle::new(&scenario, Path::new(&s.autopilot), &s.isolation)?;
    let rotors = hosted.motor_commands().len();
    let h = BRIDGES.insert(Bridge { hosted, rotors })?;
    // SAFETY: `out` is non-NULL and writable (the caller's promise).
    unsafe { *out = std::ptr::without_provenance_mut(h) };
    Ok(())
}

/// Creates a bridge from the scenario file at `scenario_path`: its sensors,
/// estimator, cadences, events (commands and sensor faults; plant faults
/// are refused), wind and seed, and its aircraft for the autopilot's
/// configuration (the vehicle the host simulates). `options.log_path` and
/// `record_path` must be NULL. Thread-safe.
///
/// # Safety
/// `scenario_path` is NUL-terminated; `options` points to a
/// `lockstep_options` with `size` set; `out_bridge` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_new_from_file(
    scenario_path: *const c_char,
    options: *const lockstep_options,
    out_bridge: *mut *mut lockstep_bridge,
) -> lockstep_status {
    guard(|| {
        // SAFETY: the caller's promises, passed on.
        let scenario = unsafe { scenario_file(scenario_path) }?;
        // SAFETY: as above.
        let s = unsafe { setup(options) }?;
        create(scenario, s, out_bridge)
    })
}

/// As `lockstep_bridge_new_from_file`, from scenario TOML text whose
/// relative paths are taken from `base_dir` (NULL: the working directory).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `toml` is NUL-terminated, `base_dir` NULL or NUL-terminated; the others
/// as for `lockstep_bridge_new_from_file`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_new_from_toml(
    toml: *const c_char,
    base_dir: *const c_char,
    options: *const lockstep_options,
    out_bridge: *mut *mut lockstep_bridge,
) -> lockstep_status {
    guard(|| {
        // SAFETY: the caller's promises, passed on.
        let scenario = unsafe { scenario_text(toml, base_dir) }?;
        // SAFETY: as above.
        let s = unsafe { setup(options) }?;
        create(scenario, s, out_bridge)
    })
}

/// Runs `f` on the bridge behind `bridge`; a failure becomes its last error.
fn with(
    bridge: *const lockstep_bridge,
    f: impl FnOnce(&mut Entry<Bridge>) -> Outcome,
) -> lockstep_status {
    BRIDGES.with(bridge as usize, "bridge", f)
}

/// When the host must next hand over truth (`LOCKSTEP_ERR_ENDED` after the
/// end of the run).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_time_us` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_next_time_us(
    bridge: *mut lockstep_bridge,
    out_time_us: *mut u64,
) -> lockstep_status {
    with(bridge, |e| {
        let out = non_null_mut(out_time_us, "out_time_us")?;
        let t = e.value.hosted.next_time().ok_or_else(|| {
            Failure::new(
                lockstep_status::LOCKSTEP_ERR_ENDED,
                format!(
                    "the run ended at {}; nothing is left to step",
                    lockstep_abi::at(e.value.hosted.end().0)
                ),
            )
        })?;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = t.0 };
        Ok(())
    })
}

/// Processes the boundary awaiting truth with the host's `truth` there
/// (`truth->time_us` must be `lockstep_bridge_next_time_us`, else
/// `LOCKSTEP_ERR_TIME`; non-finite values are `LOCKSTEP_ERR_ARGUMENT`; in
/// both cases nothing changes) and its battery (NULL: the autopilot gets no
/// battery readings). Writes the autopilot's outputs to `out` (from its
/// last step: they change only at autopilot boundaries). An autopilot
/// failure leaves the bridge failed.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `truth` points to a `lockstep_truth`, `battery` is NULL or points to a
/// `lockstep_battery_state`, `out` to a `lockstep_actuators`, each with
/// `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_step(
    bridge: *mut lockstep_bridge,
    truth: *const lockstep_truth,
    battery: *const lockstep_battery_state,
    out: *mut lockstep_actuators,
) -> lockstep_status {
    with(bridge, |e| {
        // SAFETY: the caller's promise on `truth`.
        let t = unsafe { input(truth, "truth") }?;
        let b = if battery.is_null() {
            None
        } else {
            // SAFETY: non-NULL; the caller's promise.
            let b = unsafe { input(battery, "battery") }?;
            if b.warning > lockstep_abi::ffi::LOCKSTEP_BATTERY_EMERGENCY {
                return Err(argument(format!(
                    "battery.warning is {}, not a LOCKSTEP_BATTERY_* value (0 to 3)",
                    b.warning
                )));
            }
            if b.connected > 1 {
                return Err(argument(format!(
                    "battery.connected is {}: 0 or 1",
                    b.connected
                )));
            }
            Some(HostBattery {
                voltage_v: b.voltage_v,
                current_a: b.current_a,
                remaining: b.remaining,
                warning: b.warning,
                connected: b.connected == 1,
            })
        };
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: non-NULL; the size field is readable (the caller's
        // promise). Checked before stepping, so a wrong size changes nothing.
        check_size::<lockstep_actuators>(unsafe { *out.cast::<u32>() })?;
        e.usable("bridge")?;
        let host = HostTruth {
            state: Truth {
                time: Micros(t.time_us),
                position_ned_m: t.position_ned_m,
                velocity_ned_mps: t.velocity_ned_mps,
                attitude_q: t.attitude_q,
                rates_frd_radps: t.rates_frd_radps,
                specific_force_frd_mps2: t.specific_force_frd_mps2,
            },
            on_ground: t.on_ground != 0,
            battery: b,
        };
        if let Err(err) = e.value.hosted.step(&host) {
            let f = engine_failure(&err);
            if matches!(err, lockstep_harness::engine::EngineError::Abi(_)) {
                e.failed = Some(f.clone());
            }
            return Err(f);
        }
        let h = &e.value.hosted;
        let v = actuators(h.actuators(), e.value.rotors, h.sensor_frame().time_us);
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// The estimate the autopilot last received.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_estimate` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_estimate(
    bridge: *mut lockstep_bridge,
    out: *mut lockstep_estimate,
) -> lockstep_status {
    with(bridge, |e| {
        let v = estimate(e.value.hosted.sensor_frame());
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// The scenario's wind at the vehicle (NED, m/s) as last sampled, for a host
/// that applies it to its plant.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_wind_ned_mps` is valid for writing 3 doubles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_wind(
    bridge: *mut lockstep_bridge,
    out_wind_ned_mps: *mut f64,
) -> lockstep_status {
    with(bridge, |e| {
        let out = non_null_mut(out_wind_ned_mps, "out_wind_ned_mps")?;
        let w = e.value.hosted.wind();
        // SAFETY: non-NULL, valid for 3 doubles (the caller's promise).
        unsafe { std::ptr::copy_nonoverlapping(w.as_ptr(), out, 3) };
        Ok(())
    })
}

/// The number of rotors of the scenario's aircraft (entries of
/// `lockstep_actuators.motors` in use).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_count` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_rotor_count(
    bridge: *mut lockstep_bridge,
    out_count: *mut u32,
) -> lockstep_status {
    with(bridge, |e| {
        let out = non_null_mut(out_count, "out_count")?;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = e.value.rotors as u32 };
        Ok(())
    })
}

/// Queues a command (`LOCKSTEP_COMMAND_*`) for the autopilot's next step.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// As `lockstep_bridge_next_time_us`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_command(
    bridge: *mut lockstep_bridge,
    command: u32,
) -> lockstep_status {
    with(bridge, |e| {
        let a = crate::types::command(command)?;
        e.usable("bridge")?;
        Ok(e.value.hosted.apply_now(a)?)
    })
}

/// Injects a sensor fault now; a plant fault is `LOCKSTEP_ERR_UNSUPPORTED`
/// (the host owns the plant).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `fault` points to a `lockstep_fault` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_fault(
    bridge: *mut lockstep_bridge,
    fault: *const lockstep_fault,
) -> lockstep_status {
    with(bridge, |e| {
        // SAFETY: the caller's promise on `fault`.
        let f = unsafe { input(fault, "fault") }?;
        // A plant fault is refused whatever its index (the plant and its
        // batteries are the host's).
        if (LOCKSTEP_FAULT_MOTOR_FAIL..=LOCKSTEP_FAULT_BATTERY_RECONNECT).contains(&f.kind) {
            return Err(Failure::new(
                lockstep_status::LOCKSTEP_ERR_UNSUPPORTED,
                "plant faults (motors, batteries) act on the plant, which the host owns",
            ));
        }
        let a = crate::types::fault(f, e.value.rotors, 0)?;
        e.usable("bridge")?;
        Ok(e.value.hosted.apply_now(a)?)
    })
}

/// Frees the bridge (destroying the autopilot instance).
/// `LOCKSTEP_ERR_HANDLE` for one already freed or never created; the handle
/// is invalid afterwards whatever the status.
///
/// Thread-safe: waits for a call in progress on the handle.
///
/// # Safety
/// As `lockstep_bridge_next_time_us`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_free(bridge: *mut lockstep_bridge) -> lockstep_status {
    guard(|| {
        if bridge.is_null() {
            return Err(null("bridge"));
        }
        let entry = BRIDGES.remove(bridge as usize)?;
        // A handle an earlier panic poisoned is still ended as well as it
        // can be (log flushed, recording closed) before it goes.
        let mut g = entry.lock().unwrap_or_else(|p| p.into_inner());
        if g.failed.is_some() {
            return Ok(());
        }
        Ok(g.value.hosted.close()?)
    })
}

/// The message of the last error on this bridge (empty if none).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_bridge_last_error(
    bridge: *mut lockstep_bridge,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    // SAFETY: the caller's promises, passed on.
    unsafe { BRIDGES.last_error(bridge as usize, "bridge", buf, len, out_len) }
}
