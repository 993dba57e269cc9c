//! Mode 1, the whole vehicle (`lockstep_sim`): a scenario's plant, sensors,
//! estimator, autopilot and world, stepped by the host; its state read into
//! caller structs; commands, faults and missions sent to it; the log and
//! recording written where the options say.

use std::ffi::c_char;

use lockstep_harness::engine::EngineError;
use lockstep_harness::inputs::mission::Mission;
use lockstep_run::choice::Spelling;
use lockstep_run::flight::{FlightOutputs, FlightReport, FlightRequest, ScenarioSource};
use lockstep_run::session::{Session, SessionError};

use crate::boundary::*;
use crate::options::{Setup, scenario_file, scenario_text, setup};
use crate::registry::{Entry, Registry};
use crate::types::*;

/// A whole simulated vehicle. Opaque: created by `lockstep_sim_new_*`,
/// released by `lockstep_sim_free`.
#[derive(Debug)]
pub struct lockstep_sim {
    _private: [u8; 0],
}

/// The run layer's stepped flight: the C handle's state.
pub(crate) type Sim = Session;

static SIMS: Registry<Sim> = Registry::new(1, "lockstep_sim");

/// The stepped flight of `scenario` with `s`, prepared by the run layer as
/// every front end's is (its checks reach C: outputs against inputs, the
/// log's cadence, the engine), in a new handle at `*out`.
fn create(scenario: ScenarioSource, s: Setup, out: *mut *mut lockstep_sim) -> Outcome {
    let out = non_null_mut(out, "out_sim")?;
    let request = FlightRequest {
        scenario,
        autopilot: s.autopilot,
        overrides: Vec::new(),
        outputs: FlightOutputs {
            log: s.log,
            record: s.record,
            ..FlightOutputs::default()
        },
        isolation: s.isolation,
        spelling: Spelling::C,
    };
    let session = lockstep_run::flight::prepare(request)?.into_session();
    let h = SIMS.insert(session)?;
    // SAFETY: `out` is non-NULL and, by the caller's promise, writable.
    unsafe { *out = std::ptr::without_provenance_mut(h) };
    Ok(())
}

/// Creates a whole vehicle from the scenario file at `scenario_path` (its
/// relative paths from its own directory), with `options` (required:
/// `autopilot_path`). On success `*out_sim` is the new handle.
/// Thread-safe: any number of simulations per process, each on any thread,
/// when the autopilot library is re-entrant (one that is not refuses a
/// second instance with `LOCKSTEP_ERR_AUTOPILOT`).
///
/// # Safety
/// `scenario_path` is NUL-terminated; `options` points to a
/// `lockstep_options` with `size` set; `out_sim` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_new_from_file(
    scenario_path: *const c_char,
    options: *const lockstep_options,
    out_sim: *mut *mut lockstep_sim,
) -> lockstep_status {
    guard(|| {
        // SAFETY: the caller's promises, passed on.
        let scenario = unsafe { scenario_file(scenario_path) }?;
        // SAFETY: as above.
        let s = unsafe { setup(options) }?;
        create(scenario, s, out_sim)
    })
}

/// Creates a whole vehicle from scenario TOML text; relative paths in it
/// (spec, mission) are taken from `base_dir` (NULL: the working directory).
/// Otherwise as `lockstep_sim_new_from_file`.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `toml` is NUL-terminated; `base_dir` is NULL or NUL-terminated;
/// `options` and `out_sim` as for `lockstep_sim_new_from_file`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_new_from_toml(
    toml: *const c_char,
    base_dir: *const c_char,
    options: *const lockstep_options,
    out_sim: *mut *mut lockstep_sim,
) -> lockstep_status {
    guard(|| {
        // SAFETY: the caller's promises, passed on.
        let scenario = unsafe { scenario_text(toml, base_dir) }?;
        // SAFETY: as above.
        let s = unsafe { setup(options) }?;
        create(scenario, s, out_sim)
    })
}

/// Runs `f` on the sim behind `sim`; a failure becomes its last error.
fn with(sim: *const lockstep_sim, f: impl FnOnce(&mut Entry<Sim>) -> Outcome) -> lockstep_status {
    SIMS.with(sim as usize, "sim", f)
}

/// Steps `f` may take only while the run is usable.
fn usable(e: &Entry<Sim>) -> Outcome {
    e.usable("simulation")?;
    e.value.usable().map_err(|err| refusal(e, err))
}

/// The status and message of a session's refusal or failure; a failed step
/// (or end) leaves the handle failed.
fn refusal(e: &Entry<Sim>, err: SessionError) -> Failure {
    let code = match &err {
        SessionError::Step(_) | SessionError::End(_) => {
            return match e.value.failure() {
                Some(f) => engine_failure(f),
                None => Failure::new(lockstep_status::LOCKSTEP_ERR_FAILED, err.to_string()),
            };
        }
        SessionError::Ended(_) => lockstep_status::LOCKSTEP_ERR_ENDED,
        SessionError::Past(_) => lockstep_status::LOCKSTEP_ERR_TIME,
        SessionError::NotEnded(_) => lockstep_status::LOCKSTEP_ERR_NOT_ENDED,
    };
    Failure::new(code, err.to_string())
}

/// A session call's outcome: a failed step leaves the handle failed.
fn checked<T>(e: &mut Entry<Sim>, r: Result<T, SessionError>) -> Result<T, Failure> {
    r.map_err(|err| {
        let failed = matches!(err, SessionError::Step(_));
        let f = refusal(e, err);
        if failed {
            e.failed = Some(f.clone());
        }
        f
    })
}

/// Processes up to `n` boundaries of the timeline (each tick of the finest
/// cadence is one); `*out_done` is how many were (fewer at the end of the
/// run). `LOCKSTEP_ERR_ENDED` when none was left. After an error
/// (`*out_done` is not written: `lockstep_sim_time_us` says how far the run
/// got; the
/// autopilot or the plant failed), everything up to it is written and the
/// handle is failed: later steps return `LOCKSTEP_ERR_FAILED`.
/// Thread-safe (calls on one handle are serialized).
///
/// # Safety
/// `sim` is a handle from `lockstep_sim_new_*` (or anything: a stale or
/// bogus value is `LOCKSTEP_ERR_HANDLE`); `out_done` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_step(
    sim: *mut lockstep_sim,
    n: u64,
    out_done: *mut u64,
) -> lockstep_status {
    with(sim, |e| {
        let out = non_null_mut(out_done, "out_done")?;
        usable(e)?;
        let r = e.value.step(n);
        let done = checked(e, r)?;
        // SAFETY: non-NULL, writable by the caller's promise.
        unsafe { *out = done };
        Ok(())
    })
}

/// Processes every boundary at or before `time_us` (up to the end of the
/// run). `LOCKSTEP_ERR_TIME` when `time_us` is before the last boundary
/// processed; `LOCKSTEP_ERR_ENDED` when `time_us` is later and nothing is
/// left. Errors as `lockstep_sim_step` (after one, `lockstep_sim_time_us`
/// says how far the run got).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// As `lockstep_sim_step`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_run_until(
    sim: *mut lockstep_sim,
    time_us: u64,
) -> lockstep_status {
    with(sim, |e| {
        usable(e)?;
        let r = e.value.run_until(time_us);
        checked(e, r)
    })
}

/// The time of the last boundary processed (0 before the first step).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_time_us` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_time_us(
    sim: *mut lockstep_sim,
    out_time_us: *mut u64,
) -> lockstep_status {
    with(sim, |e| {
        let out = non_null_mut(out_time_us, "out_time_us")?;
        // SAFETY: non-NULL, writable by the caller's promise.
        unsafe { *out = e.value.engine().now().0 };
        Ok(())
    })
}

/// The time the run ends (the scenario's duration).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_time_us` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_end_us(
    sim: *mut lockstep_sim,
    out_time_us: *mut u64,
) -> lockstep_status {
    with(sim, |e| {
        let out = non_null_mut(out_time_us, "out_time_us")?;
        // SAFETY: non-NULL, writable by the caller's promise.
        unsafe { *out = e.value.engine().end().0 };
        Ok(())
    })
}

/// The number of rotors (motors) of the vehicle.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_count` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_rotor_count(
    sim: *mut lockstep_sim,
    out_count: *mut u32,
) -> lockstep_status {
    with(sim, |e| {
        let out = non_null_mut(out_count, "out_count")?;
        // SAFETY: non-NULL, writable by the caller's promise.
        unsafe { *out = e.value.engine().plant().rotors.len() as u32 };
        Ok(())
    })
}

/// The true state at the last boundary (specific force and contact from
/// the plant's outputs there, with the inputs it now holds).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_truth` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_truth(
    sim: *mut lockstep_sim,
    out: *mut lockstep_truth,
) -> lockstep_status {
    with(sim, |e| {
        let eng = e.value.engine();
        let t = crate::plant::truth(eng.now(), eng.state(), &eng.plant_outputs());
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", t) }
    })
}

/// The estimate the autopilot last received.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_estimate` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_estimate(
    sim: *mut lockstep_sim,
    out: *mut lockstep_estimate,
) -> lockstep_status {
    with(sim, |e| {
        let v = estimate(e.value.engine().sensor_frame());
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

pub(crate) fn estimate(f: &lockstep_abi::ffi::lockstep_sensor_frame) -> lockstep_estimate {
    let s = &f.estimate;
    let d = |v: &[f32]| -> [f64; 3] { [v[0].into(), v[1].into(), v[2].into()] };
    lockstep_estimate {
        size: size_of::<lockstep_estimate>() as u32,
        reserved0: 0,
        timestamp_us: s.timestamp_us,
        position_ned_m: d(&s.position_ned_m),
        velocity_ned_mps: d(&s.velocity_ned_mps),
        attitude_q: s.attitude_q.map(f64::from),
        rates_frd_radps: d(&s.rates_frd_radps),
    }
}

/// The autopilot's outputs `a` from its step at `time_us`.
pub(crate) fn actuators(
    a: &lockstep_abi::ffi::lockstep_actuator_frame,
    rotors: usize,
    time_us: u64,
) -> lockstep_actuators {
    let mut motors = [0.0; LOCKSTEP_HARNESS_MAX_ROTORS];
    for (m, a) in motors.iter_mut().zip(&a.motors[..rotors]) {
        *m = f64::from(*a);
    }
    lockstep_actuators {
        size: size_of::<lockstep_actuators>() as u32,
        motor_count: rotors as u32,
        time_us,
        motors,
        mode: a.mode,
        armed: a.armed,
        mission_current: a.mission_current,
        mission_finished: a.mission_finished,
    }
}

/// The autopilot's last outputs: motor commands, mode, arming, mission
/// progress.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_actuators` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_actuators(
    sim: *mut lockstep_sim,
    out: *mut lockstep_actuators,
) -> lockstep_status {
    with(sim, |e| {
        let eng = e.value.engine();
        let v = actuators(
            eng.actuators(),
            eng.plant().rotors.len(),
            eng.sensor_frame().time_us,
        );
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// Battery `index` (0 for the first pack) at the last boundary.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_battery_state` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_battery(
    sim: *mut lockstep_sim,
    index: u32,
    out: *mut lockstep_battery_state,
) -> lockstep_status {
    with(sim, |e| {
        let eng = e.value.engine();
        let v = crate::plant::battery(&eng.plant_outputs(), eng.plant().batteries.len(), index)?;
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// The autopilot's whole table (ABI 4's enumeration), or the refusal a C
/// host reads.
fn param_table(e: &mut Entry<Sim>) -> Result<Vec<lockstep_abi::NamedParam>, Failure> {
    usable(e)?;
    match e.value.engine_mut().autopilot().params() {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Err(Failure::new(
            lockstep_status::LOCKSTEP_ERR_UNSUPPORTED,
            "the autopilot does not list its parameters (an ABI-3 library, or one without \
             lockstep_autopilot_param_count and lockstep_autopilot_param_info)",
        )),
        Err(err) => Err(Failure::new(
            lockstep_status::LOCKSTEP_ERR_AUTOPILOT,
            err.to_string(),
        )),
    }
}

/// How many parameters the autopilot has, into `*out_count`
/// (`LOCKSTEP_ERR_UNSUPPORTED` when the library does not enumerate them:
/// an ABI-3 library, or one without the enumeration).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out_count` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_param_count(
    sim: *mut lockstep_sim,
    out_count: *mut u32,
) -> lockstep_status {
    with(sim, |e| {
        if out_count.is_null() {
            return Err(crate::boundary::null("out_count"));
        }
        let n = param_table(e)?.len() as u32;
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { out_count.write(n) };
        Ok(())
    })
}

/// Parameter `index` (0 to count - 1, the library's order): its name,
/// type, value now and default (`LOCKSTEP_ERR_ARGUMENT` past the end,
/// `LOCKSTEP_ERR_UNSUPPORTED` as `lockstep_sim_param_count`). Each call
/// reads the table from the autopilot.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_param` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_param(
    sim: *mut lockstep_sim,
    index: u32,
    out: *mut lockstep_param,
) -> lockstep_status {
    with(sim, |e| {
        let table = param_table(e)?;
        let Some(p) = table.get(index as usize) else {
            return Err(Failure::new(
                lockstep_status::LOCKSTEP_ERR_ARGUMENT,
                format!(
                    "index: parameter {index}, but the autopilot has {} (0 to {})",
                    table.len(),
                    table.len().saturating_sub(1)
                ),
            ));
        };
        let mut v = lockstep_param {
            size: std::mem::size_of::<lockstep_param>() as u32,
            r#type: match p.param.kind {
                lockstep_abi::ParamKind::F32 => lockstep_abi::ffi::LOCKSTEP_PARAM_TYPE_F32,
                lockstep_abi::ParamKind::I32 => lockstep_abi::ffi::LOCKSTEP_PARAM_TYPE_I32,
            },
            value: p.param.value,
            default_value: p.param.default,
            ..Default::default()
        };
        // The enumeration checked the name: 1 to 16 printable ASCII bytes.
        for (d, b) in v.name.iter_mut().zip(p.name.bytes()) {
            *d = b as std::ffi::c_char;
        }
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", v) }
    })
}

/// The plant's whole state vector (its layout: 13 rigid-body states, then
/// per rotor its speed, then per battery its charge and polarization
/// voltage) into `buf` of `len` doubles; its length in `*out_len`
/// (`LOCKSTEP_ERR_BUFFER` when `len` is smaller, `buf` untouched).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `buf` is NULL or valid for `len` doubles; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_state(
    sim: *mut lockstep_sim,
    buf: *mut f64,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    // SAFETY: the caller's promises, passed on.
    with(sim, |e| unsafe {
        crate::plant::copy_state(e.value.engine().state(), buf, len, out_len)
    })
}

/// Queues a command (`LOCKSTEP_COMMAND_*`) for the autopilot's next step,
/// as a scenario event now would.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// As `lockstep_sim_step`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_command(
    sim: *mut lockstep_sim,
    command: u32,
) -> lockstep_status {
    with(sim, |e| {
        let a = crate::types::command(command)?;
        usable(e)?;
        e.value.engine_mut().apply_now(a);
        Ok(())
    })
}

/// Injects a fault now, as a scenario event would (it acts from the next
/// boundary).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `fault` points to a `lockstep_fault` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_fault(
    sim: *mut lockstep_sim,
    fault: *const lockstep_fault,
) -> lockstep_status {
    with(sim, |e| {
        // SAFETY: the caller's promise on `fault`.
        let f = unsafe { input(fault, "fault") }?;
        let p = e.value.engine().plant();
        let a = crate::types::fault(f, p.rotors.len(), p.batteries.len())?;
        usable(e)?;
        e.value.engine_mut().apply_now(a);
        Ok(())
    })
}

/// Uploads the mission in a QGC file (WPL 110/120 `.waypoints` or `.plan`)
/// to the autopilot, replacing its mission.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `mission_path` is NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_upload_mission(
    sim: *mut lockstep_sim,
    mission_path: *const c_char,
) -> lockstep_status {
    with(sim, |e| {
        // SAFETY: the caller's promise.
        let p = unsafe { text(mission_path, "mission_path") }?;
        let m = Mission::load(p)
            .map_err(|err| Failure::new(lockstep_status::LOCKSTEP_ERR_CONFIG, err.to_string()))?;
        usable(e)?;
        e.value
            .engine_mut()
            .upload_mission(&m.items)
            .map_err(|err| engine_failure(&EngineError::Abi(err)))
    })
}

/// Ends the run where it is: the log flushed and its sidecar completed,
/// the autopilot destroyed, the recording closed. Later steps return
/// `LOCKSTEP_ERR_ENDED`; reading state still works. Done by
/// `lockstep_sim_free` if not before (call this to see its errors).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// As `lockstep_sim_step`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_finish(sim: *mut lockstep_sim) -> lockstep_status {
    with(sim, |e| {
        if e.failed.is_some() {
            return Ok(());
        }
        let r = e.value.finish();
        checked(e, r)
    })
}

/// Frees the simulation (finishing the run first if it was not).
/// `LOCKSTEP_ERR_HANDLE` for a handle already freed or never created; the
/// handle is invalid afterwards whatever the status (an error finishing the
/// run is returned, and nothing is lost before it). NULL is
/// `LOCKSTEP_ERR_NULL`.
///
/// Thread-safe: waits for a call in progress on the handle.
///
/// # Safety
/// As `lockstep_sim_step`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_free(sim: *mut lockstep_sim) -> lockstep_status {
    guard(|| {
        if sim.is_null() {
            return Err(null("sim"));
        }
        let entry = SIMS.remove(sim as usize)?;
        // A handle an earlier panic poisoned is still ended as well as it
        // can be (log flushed, recording closed) before it goes.
        let mut g = entry.lock().unwrap_or_else(|p| p.into_inner());
        if g.failed.is_some() {
            return Ok(());
        }
        let r = g.value.finish();
        r.map_err(|err| refusal(&g, err))
    })
}

/// The report of a run that has ended, as `lockstep fly --json` prints it.
fn ended_report(e: &Entry<Sim>) -> Result<FlightReport, Failure> {
    e.value
        .report("lockstep_sim_finish")
        .map_err(|err| refusal(e, err))
}

/// The verdict of a run that has ended (stepped to its end and finished,
/// or stopped by an error): whether it passed its `[expect]` and how it
/// ended, as `lockstep fly` reports it. `LOCKSTEP_ERR_NOT_ENDED` before
/// the end: a run that reached its last boundary ends with
/// `lockstep_sim_finish` (or `lockstep_sim_free`).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `out` points to a `lockstep_verdict` with `size` set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_verdict(
    sim: *mut lockstep_sim,
    out: *mut lockstep_verdict,
) -> lockstep_status {
    with(sim, |e| {
        // The arguments first: a NULL or wrong-size struct says so whenever
        // it is asked.
        if out.is_null() {
            return Err(null("out"));
        }
        // SAFETY: non-NULL; its first 4 bytes are the size of any version
        // of the struct (the caller's promise).
        check_size::<lockstep_verdict>(unsafe { *out.cast::<u32>() })?;
        let r = ended_report(e)?;
        let (crashes, checks, checks_failed) = match &r.verdict {
            Some(v) => (
                v.crashes.len(),
                v.checks.len(),
                v.checks.iter().filter(|c| !c.passed).count(),
            ),
            None => (0, 0, 0),
        };
        let verdict = lockstep_verdict {
            size: size_of::<lockstep_verdict>() as u32,
            outcome: match r.outcome {
                lockstep_run::flight::Outcome::Completed => LOCKSTEP_OUTCOME_COMPLETED,
                lockstep_run::flight::Outcome::Stopped => LOCKSTEP_OUTCOME_STOPPED,
                lockstep_run::flight::Outcome::Interrupted => LOCKSTEP_OUTCOME_INTERRUPTED,
            },
            passed: u32::from(r.passed()),
            error_class: match r.error_class {
                None => LOCKSTEP_CLASS_NONE,
                Some(lockstep_run::ErrorClass::Configuration) => LOCKSTEP_CLASS_CONFIGURATION,
                Some(lockstep_run::ErrorClass::RunFailure) => LOCKSTEP_CLASS_RUN_FAILURE,
                Some(lockstep_run::ErrorClass::ExpectationFailed) => {
                    LOCKSTEP_CLASS_EXPECTATION_FAILED
                }
                Some(lockstep_run::ErrorClass::Interrupted) => LOCKSTEP_CLASS_INTERRUPTED,
            },
            exit_status: u32::from(r.exit_status),
            crashes: crashes as u32,
            checks: checks as u32,
            checks_failed: checks_failed as u32,
            simulated_us: r.simulated_us,
        };
        // SAFETY: the caller's promise on `out`.
        unsafe { output(out, "out", verdict) }
    })
}

/// The report of a run that has ended, as one JSON object: the same
/// object `lockstep fly --json` prints (the scenario, autopilot, vehicle,
/// seed, outcome, error and its class, exit status, simulated and wall
/// time, final state, log and its digest, recording, verdict with every
/// check, timeline). Copied with its NUL into `buf` of `len` bytes, its
/// length without the NUL written to `out_len`; `LOCKSTEP_ERR_BUFFER` when
/// it does not fit (`*out_len` is then the length needed, without the
/// NUL). `LOCKSTEP_ERR_NOT_ENDED` before the run's end, as for
/// `lockstep_sim_verdict`.
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_report(
    sim: *mut lockstep_sim,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    with(sim, |e| {
        non_null_mut(out_len, "out_len")?;
        let json = lockstep_run::summary::RunSummary::from(ended_report(e)?).to_json_line();
        // SAFETY: the caller's promises on `buf` and `out_len`.
        unsafe { copy_message(&json, buf, len, out_len) }
    })
}

/// The message of the last error on this simulation, as
/// `lockstep_thread_last_error` copies it (an empty string if none).
///
/// Thread-safe: calls on one handle are serialized.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_sim_last_error(
    sim: *mut lockstep_sim,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    // SAFETY: the caller's promises, passed on.
    unsafe { SIMS.last_error(sim as usize, "sim", buf, len, out_len) }
}
