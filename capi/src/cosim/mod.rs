//! Co-simulation from C (`lockstep_cosim`): a system file run by the host,
//! its `external` participants stepped by the host's callbacks. The host
//! loads the system, binds a callback to each external participant, then
//! steps (the system is assembled at the first step) and reads outputs.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_void};

use ::lockstep_cosim::assemble::{AssembleOptions, assemble_with};
use ::lockstep_cosim::error::CosimError;
use ::lockstep_cosim::file::{ParticipantKind, SystemFile};
use ::lockstep_cosim::run::Cosim;
use lockstep_harness::Micros;
use lockstep_harness::engine::RunOptions;

mod callback;

use callback::Bound;

use crate::boundary::*;
use crate::options::setup;
use crate::registry::{Entry, Registry};
use crate::types::*;

/// A co-simulation. Opaque: created by `lockstep_cosim_new_from_file`,
/// released by `lockstep_cosim_free`.
#[derive(Debug)]
pub struct lockstep_cosim {
    _private: [u8; 0],
}

/// Steps an external participant from `t_us` to `t_us + dt_us` (its period)
/// on the inputs held over the step (`inputs`: its declared inputs' values
/// laid end to end, `n_inputs` in all), writing its outputs at the end of
/// the step into `outputs` (`n_outputs` values, its declared outputs' end
/// to end; they hold their last values on entry). Returns 0, or any other
/// value to end the run (reported as `LOCKSTEP_ERR_FAILED` with the
/// value). Called on a thread of the library's, one per external
/// participant (never twice at once for one participant; other
/// participants may step at the same time). It must return within the
/// participant's `step_timeout_s` (system file; default 5 s): past it the
/// step returns `LOCKSTEP_ERR_FAILED` naming the participant and the run
/// ends, the callback's thread abandoned (`user` must then stay valid
/// until the process ends). A callback may call any lockstep function
/// except the `lockstep_cosim_*` functions on the co-simulation it steps
/// (its inputs and outputs are its arguments): those return
/// `LOCKSTEP_ERR_UNSUPPORTED` at once.
pub type lockstep_cosim_step_fn = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        t_us: u64,
        dt_us: u64,
        inputs: *const f64,
        n_inputs: usize,
        outputs: *mut f64,
        n_outputs: usize,
    ) -> i32,
>;

/// A host's implementation of an external participant.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct lockstep_cosim_participant {
    /// `sizeof(lockstep_cosim_participant)`.
    pub size: u32,
    /// Passed to `step` unchanged (may be NULL).
    pub user: *mut c_void,
    /// Required.
    pub step: lockstep_cosim_step_fn,
}

impl Versioned for lockstep_cosim_participant {
    const NAME: &'static str = "lockstep_cosim_participant";
}

enum State {
    /// Loaded, callbacks being bound.
    Loaded {
        file: Box<SystemFile>,
        options: Box<AssembleOptions>,
        bound: BTreeMap<String, Bound>,
    },
    Running(Box<Cosim>),
    /// Finished (by the end of its duration or a failed step).
    Ended(Box<Cosim>),
    /// Between two states, never seen outside `end`.
    Gone,
}

pub(crate) struct CosimHandle {
    state: State,
    duration: Micros,
}

static COSIMS: Registry<CosimHandle> = Registry::new(4, "lockstep_cosim");

fn cosim_failure(e: &CosimError) -> Failure {
    let status = match e {
        CosimError::File(_) => lockstep_status::LOCKSTEP_ERR_CONFIG,
        CosimError::Setup { .. } | CosimError::Build { .. } => lockstep_status::LOCKSTEP_ERR_CONFIG,
        _ => lockstep_status::LOCKSTEP_ERR_FAILED,
    };
    Failure::new(status, e.to_string())
}

/// Loads the system file at `system_path` (its relative paths from its own
/// directory); `options` gives the autopilot of vehicles that name none
/// and where autopilots run (its log and record paths must be NULL: each
/// vehicle's log is the system's business). On success `*out_cosim` is the
/// new handle: bind every external participant, then step.
///
/// # Safety
/// `system_path` is NUL-terminated; `options` points to a
/// `lockstep_options` with `size` set; `out_cosim` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_new_from_file(
    system_path: *const c_char,
    options: *const lockstep_options,
    out_cosim: *mut *mut lockstep_cosim,
) -> lockstep_status {
    guard(|| {
        let out = non_null_mut(out_cosim, "out_cosim")?;
        // SAFETY: the caller's promise.
        let path = unsafe { text(system_path, "system_path") }?;
        // SAFETY: the caller's promise.
        let s = unsafe { setup(options) }?;
        if s.log.is_some() || s.record.is_some() {
            return Err(argument(
                "options.log_path and options.record_path are for a lockstep_sim; a co-simulation's vehicles log as its system file says",
            ));
        }
        let file = SystemFile::load(path).map_err(|e| cosim_failure(&e))?;
        let duration = file.duration;
        let h = COSIMS.insert(CosimHandle {
            state: State::Loaded {
                file: Box::new(file),
                options: Box::new(AssembleOptions {
                    run: RunOptions::new(s.autopilot, s.isolation),
                    mode: None,
                    bundled_fmu: None,
                    taken: Vec::new(),
                }),
                bound: BTreeMap::new(),
            },
            duration,
        })?;
        // SAFETY: `out` is non-NULL and, by the caller's promise, writable.
        unsafe { *out = std::ptr::without_provenance_mut(h) };
        Ok(())
    })
}

/// Runs `f` on the co-simulation `cs` (refused from inside its own step
/// callback, which would wait forever for the step that called it).
fn with(
    cs: *const lockstep_cosim,
    f: impl FnOnce(&mut Entry<CosimHandle>) -> Outcome,
) -> lockstep_status {
    let s = guard(|| callback::outside(cs as usize));
    if s != lockstep_status::LOCKSTEP_OK {
        return s;
    }
    COSIMS.with(cs as usize, "cosim", f)
}

/// Binds `participant` to the external participant `name` of the system
/// (before the first step; once per participant).
///
/// # Safety
/// `name` is NUL-terminated; `participant` points to a
/// `lockstep_cosim_participant` with `size` set, whose `step` stays
/// callable, with its `user`, until the handle is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_bind(
    cosim: *mut lockstep_cosim,
    name: *const c_char,
    participant: *const lockstep_cosim_participant,
) -> lockstep_status {
    // SAFETY: the caller's promises.
    let name = match guard_text(name) {
        Ok(n) => n,
        Err(s) => return s,
    };
    with(cosim, |e| {
        // SAFETY: the caller's promise.
        let p = unsafe { input(participant, "participant") }?;
        let step = p.step.ok_or_else(|| null("participant.step"))?;
        let State::Loaded { file, bound, .. } = &mut e.value.state else {
            return Err(argument(format!(
                "`{name}`: participants are bound before the first step"
            )));
        };
        let decl = file
            .participants
            .iter()
            .find(|d| d.name == name)
            .ok_or_else(|| {
                argument(format!(
                    "{} has no participant `{name}`",
                    file.file.display()
                ))
            })?;
        if !matches!(decl.kind, ParticipantKind::External { .. }) {
            return Err(argument(format!(
                "participant `{name}` is not external: the system makes it"
            )));
        }
        if bound.contains_key(&name) {
            return Err(argument(format!("participant `{name}` is bound already")));
        }
        bound.insert(name.clone(), Bound { user: p.user, step });
        Ok(())
    })
}

/// A name argument read inside its own guard (its error is the thread's).
fn guard_text(p: *const c_char) -> Result<String, lockstep_status> {
    let mut out = String::new();
    let s = guard(|| {
        // SAFETY: the caller's promise that `p` is NULL or NUL-terminated.
        out = unsafe { text(p, "name") }?.to_string();
        Ok(())
    });
    if s == lockstep_status::LOCKSTEP_OK {
        Ok(out)
    } else {
        Err(s)
    }
}

/// Assembles a loaded system (every external participant bound), the
/// co-simulation `handle`.
fn start(handle: usize, h: &mut CosimHandle) -> Outcome {
    let State::Loaded {
        file,
        options,
        bound,
    } = &mut h.state
    else {
        return Ok(());
    };
    let unbound: Vec<&str> = file
        .participants
        .iter()
        .filter(|d| {
            matches!(d.kind, ParticipantKind::External { .. }) && !bound.contains_key(&d.name)
        })
        .map(|d| d.name.as_str())
        .collect();
    if !unbound.is_empty() {
        return Err(Failure::new(
            lockstep_status::LOCKSTEP_ERR_CONFIG,
            format!("external participant(s) not bound: {}", unbound.join(", ")),
        ));
    }
    let c = assemble_with(file, options, &mut |d| match &d.kind {
        ParticipantKind::External {
            outputs,
            inputs,
            step_timeout,
        } => Some(callback::participant(
            handle,
            &d.name,
            bound[&d.name],
            outputs.clone(),
            inputs.clone(),
            *step_timeout,
        )),
        _ => None,
    })
    .map_err(|e| cosim_failure(&e))?;
    h.state = State::Running(Box::new(c));
    Ok(())
}

fn step_once(handle: usize, e: &mut Entry<CosimHandle>) -> Result<Micros, Failure> {
    e.usable("co-simulation")?;
    start(handle, &mut e.value)?;
    let h = &mut e.value;
    let (now, ended) = match &h.state {
        State::Running(c) => (c.now(), false),
        State::Ended(c) => (c.now(), true),
        _ => unreachable!("started above"),
    };
    if ended || now >= h.duration {
        end(h);
        return Err(Failure::new(
            lockstep_status::LOCKSTEP_ERR_ENDED,
            format!("the co-simulation ended at {}", lockstep_abi::at(now.0)),
        ));
    }
    let State::Running(c) = &mut h.state else {
        unreachable!("running above")
    };
    match c.step() {
        Ok(t) => Ok(t),
        Err(err) => {
            let f = cosim_failure(&err);
            end(h);
            e.failed = Some(f.clone());
            Err(f)
        }
    }
}

/// Finishes every participant once (logs flushed, FMUs freed).
fn end(h: &mut CosimHandle) {
    if matches!(h.state, State::Running(_)) {
        let State::Running(mut c) = std::mem::replace(&mut h.state, State::Gone) else {
            unreachable!("running above")
        };
        let _ = c.finish();
        h.state = State::Ended(c);
    }
}

/// Steps the system once (its step, `step_us` of the system file); the
/// first step assembles it (every external participant must be bound).
/// `*out_time_us` (NULL: not wanted) is the time reached. After the
/// system's duration: `LOCKSTEP_ERR_ENDED`. A participant's or transfer
/// function's failure ends the run (`LOCKSTEP_ERR_FAILED`, with its name,
/// what it was doing and the time in the last error).
///
/// # Safety
/// `out_time_us` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_step(
    cosim: *mut lockstep_cosim,
    out_time_us: *mut u64,
) -> lockstep_status {
    with(cosim, |e| {
        let t = step_once(cosim as usize, e)?;
        if !out_time_us.is_null() {
            // SAFETY: non-NULL and writable (the caller's promise).
            unsafe { *out_time_us = t.0 };
        }
        Ok(())
    })
}

/// Steps until the time reached is at least `t_us` (or the system's
/// duration: then `LOCKSTEP_ERR_ENDED` once it is reached and passed). A
/// time already reached takes no step (0 at the start), but the system is
/// assembled first: an external participant not bound is refused here too.
#[unsafe(no_mangle)]
pub extern "C" fn lockstep_cosim_run_until(
    cosim: *mut lockstep_cosim,
    t_us: u64,
) -> lockstep_status {
    with(cosim, |e| {
        // Assembled (every external bound) before anything is compared:
        // a time already reached (0 at the start) takes no step.
        e.usable("co-simulation")?;
        start(cosim as usize, &mut e.value)?;
        loop {
            let now = match &e.value.state {
                State::Running(c) | State::Ended(c) => c.now(),
                _ => Micros::ZERO,
            };
            if now.0 >= t_us {
                return Ok(());
            }
            step_once(cosim as usize, e)?;
        }
    })
}

/// The time reached, µs (0 before the first step).
///
/// # Safety
/// `out_time_us` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_time(
    cosim: *mut lockstep_cosim,
    out_time_us: *mut u64,
) -> lockstep_status {
    with(cosim, |e| {
        let out = non_null_mut(out_time_us, "out_time_us")?;
        let t = match &e.value.state {
            State::Running(c) | State::Ended(c) => c.now().0,
            _ => 0,
        };
        // SAFETY: non-NULL and writable (the caller's promise).
        unsafe { *out = t };
        Ok(())
    })
}

/// Copies output `name` (`participant.variable`) as of the time reached
/// into `values` (`len` doubles); `*out_len` (NULL: not wanted) is its
/// width. Too small a buffer: `LOCKSTEP_ERR_BUFFER` with the width in
/// `*out_len`. Before the first step: `LOCKSTEP_ERR_ARGUMENT`.
///
/// # Safety
/// `name` is NUL-terminated; `values` is NULL (with `len` 0) or valid for
/// `len` writes; `out_len` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_output(
    cosim: *mut lockstep_cosim,
    name: *const c_char,
    values: *mut f64,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    let name = match guard_text(name) {
        Ok(n) => n,
        Err(s) => return s,
    };
    with(cosim, |e| {
        let c = match &e.value.state {
            State::Running(c) | State::Ended(c) => c,
            _ => {
                return Err(argument(format!(
                    "`{name}`: outputs exist from the first step on"
                )));
            }
        };
        let r = c
            .find_output(&name)
            .ok_or_else(|| argument(format!("no output `{name}` in the system")))?;
        let v = c.output(r);
        if !out_len.is_null() {
            // SAFETY: non-NULL and writable (the caller's promise).
            unsafe { *out_len = v.len() };
        }
        if len < v.len() {
            return Err(Failure::new(
                lockstep_status::LOCKSTEP_ERR_BUFFER,
                format!("`{name}` holds {} values; the buffer {len}", v.len()),
            ));
        }
        let values = non_null_mut(values, "values")?;
        // SAFETY: `values` is valid for `len` ≥ v.len() writes (the
        // caller's promise) and does not overlap our buffer.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), values, v.len()) };
        Ok(())
    })
}

/// Ends the run (every participant finished: logs flushed, FMUs freed) and
/// releases the handle.
///
/// # Safety
/// `cosim` is a handle from `lockstep_cosim_new_from_file` or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_free(cosim: *mut lockstep_cosim) -> lockstep_status {
    guard(|| {
        if cosim.is_null() {
            return Err(null("cosim"));
        }
        callback::outside(cosim as usize)?;
        let entry = COSIMS.remove(cosim as usize)?;
        let mut g = entry.lock().unwrap_or_else(|p| p.into_inner());
        end(&mut g.value);
        Ok(())
    })
}

/// The message of the last error on this co-simulation, as
/// `lockstep_thread_last_error` copies it (an empty string if none).
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_last_error(
    cosim: *mut lockstep_cosim,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    let s = guard(|| callback::outside(cosim as usize));
    if s != lockstep_status::LOCKSTEP_OK {
        return s;
    }
    // SAFETY: the caller's promises, passed on.
    unsafe { COSIMS.last_error(cosim as usize, "cosim", buf, len, out_len) }
}
