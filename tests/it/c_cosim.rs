//! A C host's co-simulation callbacks (`lockstep_cosim_bind`), called as C
//! calls them: a callback that calls back into the co-simulation it steps
//! is refused at once (it used to wait forever for the lock its own step
//! held), and one that never returns ends the run at its participant's
//! deadline, naming it.

use std::ffi::{CString, c_char, c_void};
use std::time::{Duration, Instant};

use lockstep::cosim::*;
use lockstep::lockstep_status::{self, *};
use lockstep::*;

use crate::c_abi::{c, last_error};
use crate::common::{BUNDLED, TempDir};

/// A system of one external participant `x` (`mode`, `extra` keys of `x`).
fn system(dir: &TempDir, mode: &str, extra: &str) -> CString {
    let path = dir.join(format!("{mode}.toml"));
    std::fs::write(
        &path,
        format!(
            "schema_version = 1\n[cosim]\nstep_us = 1000\nduration_s = 0.01\nmode = \"{mode}\"\n\
             [[participants]]\nname = \"x\"\nkind = \"external\"\n\
             outputs = [{{ name = \"w\" }}]\ninputs = [{{ name = \"p\" }}]\n{extra}"
        ),
    )
    .unwrap();
    c(path.to_str().unwrap())
}

fn new_cosim(path: &CString) -> *mut lockstep_cosim {
    let ap = c(BUNDLED);
    let o = lockstep_options {
        size: size_of::<lockstep_options>() as u32,
        isolation: 0,
        autopilot_path: ap.as_ptr(),
        autopilot_host_path: std::ptr::null(),
        log_path: std::ptr::null(),
        record_path: std::ptr::null(),
    };
    let mut cs = std::ptr::null_mut();
    // SAFETY: valid strings and options; `cs` is writable.
    let s = unsafe { lockstep_cosim_new_from_file(path.as_ptr(), &o, &mut cs) };
    assert_eq!(s, LOCKSTEP_OK, "{}", last_error());
    cs
}

/// What the re-entrant callback saw of each call it made.
struct Inside {
    cs: *mut lockstep_cosim,
    seen: Vec<(&'static str, lockstep_status, String)>,
}

unsafe extern "C" fn reentrant(
    user: *mut c_void,
    _t: u64,
    _dt: u64,
    _i: *const f64,
    _ni: usize,
    o: *mut f64,
    _no: usize,
) -> i32 {
    // SAFETY: `user` is the test's `Inside`, alive for the run.
    let me = unsafe { &mut *user.cast::<Inside>() };
    let cs = me.cs;
    let name = c("x.w");
    let mut t = 0u64;
    let mut v = [0.0f64; 1];
    let mut n = 0usize;
    let mut buf = [0 as c_char; 64];
    let p = lockstep_cosim_participant {
        size: size_of::<lockstep_cosim_participant>() as u32,
        user,
        step: Some(reentrant),
    };
    // SAFETY: every pointer is valid for the call; the handle is live.
    let calls: [(&'static str, lockstep_status); 7] = unsafe {
        [
            ("time", lockstep_cosim_time(cs, &mut t)),
            (
                "output",
                lockstep_cosim_output(cs, name.as_ptr(), v.as_mut_ptr(), 1, &mut n),
            ),
            ("step", lockstep_cosim_step(cs, &mut t)),
            ("run_until", lockstep_cosim_run_until(cs, 5000)),
            ("bind", lockstep_cosim_bind(cs, c("x").as_ptr(), &p)),
            (
                "last_error",
                lockstep_cosim_last_error(cs, buf.as_mut_ptr(), buf.len(), &mut n),
            ),
            ("free", lockstep_cosim_free(cs)),
        ]
    };
    for (what, s) in calls {
        me.seen.push((what, s, last_error()));
    }
    // SAFETY: one output, as declared.
    unsafe { *o = 1.0 };
    0
}

const REFUSED: &str = "called from inside this co-simulation's step callback: a callback reads its inputs and writes its outputs through its arguments and calls no lockstep_cosim_* function on the co-simulation it steps";

#[test]
fn a_callback_calling_its_own_cosimulation_is_refused_at_once() {
    let dir = TempDir::new("c-cosim-reentrant");
    for mode in ["parallel", "serialized"] {
        let path = system(&dir, mode, "");
        let cs = new_cosim(&path);
        let mut inside = Inside {
            cs,
            seen: Vec::new(),
        };
        let p = lockstep_cosim_participant {
            size: size_of::<lockstep_cosim_participant>() as u32,
            user: (&raw mut inside).cast(),
            step: Some(reentrant),
        };
        // SAFETY: live handle, valid strings; `inside` outlives the run.
        unsafe {
            assert_eq!(lockstep_cosim_bind(cs, c("x").as_ptr(), &p), LOCKSTEP_OK);
            let mut t = 0;
            assert_eq!(lockstep_cosim_step(cs, &mut t), LOCKSTEP_OK, "{mode}");
            assert_eq!(t, 1000);
            let mut w = [0.0];
            let mut n = 0;
            let s = lockstep_cosim_output(cs, c("x.w").as_ptr(), w.as_mut_ptr(), 1, &mut n);
            assert_eq!((s, w[0]), (LOCKSTEP_OK, 1.0), "{mode}: the step went on");
            assert_eq!(
                lockstep_cosim_free(cs),
                LOCKSTEP_OK,
                "{mode}: not freed inside"
            );
        }
        let names: Vec<&str> = inside.seen.iter().map(|s| s.0).collect();
        assert_eq!(
            names,
            [
                "time",
                "output",
                "step",
                "run_until",
                "bind",
                "last_error",
                "free"
            ],
            "{mode}"
        );
        for (what, status, message) in &inside.seen {
            assert_eq!(
                (*status, message.as_str()),
                (LOCKSTEP_ERR_UNSUPPORTED, REFUSED),
                "{mode}: {what}"
            );
        }
    }
}

unsafe extern "C" fn sleeper(
    _user: *mut c_void,
    t: u64,
    _dt: u64,
    _i: *const f64,
    _ni: usize,
    o: *mut f64,
    _no: usize,
) -> i32 {
    if t == 2000 {
        std::thread::sleep(Duration::from_secs(3));
    }
    // SAFETY: one output, as declared; the buffer is the library's, alive
    // as long as this thread.
    unsafe { *o = t as f64 };
    0
}

#[test]
fn a_callback_that_does_not_return_ends_the_run_at_its_deadline() {
    let dir = TempDir::new("c-cosim-deadline");
    let path = system(&dir, "parallel", "step_timeout_s = 0.3\n");
    let cs = new_cosim(&path);
    let p = lockstep_cosim_participant {
        size: size_of::<lockstep_cosim_participant>() as u32,
        user: std::ptr::null_mut(),
        step: Some(sleeper),
    };
    // SAFETY: live handle, valid strings.
    unsafe {
        assert_eq!(lockstep_cosim_bind(cs, c("x").as_ptr(), &p), LOCKSTEP_OK);
        let started = Instant::now();
        assert_eq!(lockstep_cosim_run_until(cs, 2000), LOCKSTEP_OK);
        let s = lockstep_cosim_step(cs, std::ptr::null_mut());
        let waited = started.elapsed();
        assert_eq!(s, LOCKSTEP_ERR_FAILED);
        let m = last_error();
        assert!(
            m.contains("`x`")
                && m.contains("the host's step callback did not return within 0.3 s (the participant's step_timeout_s)"),
            "{m}"
        );
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_secs(2),
            "{waited:?}"
        );
        // The run is over: what was reached stays readable.
        let mut t = 0;
        assert_eq!(lockstep_cosim_time(cs, &mut t), LOCKSTEP_OK);
        assert_eq!(t, 2000);
        assert_eq!(
            lockstep_cosim_step(cs, std::ptr::null_mut()),
            LOCKSTEP_ERR_FAILED
        );
        assert_eq!(lockstep_cosim_free(cs), LOCKSTEP_OK);
    }
}
