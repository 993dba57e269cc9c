//! Random call sequences, valid and invalid, through the C ABI (a
//! `lockstep_sim`) and the FMU (an fmi2 instance), as a hostile host or
//! master would make them: every call returns one of the documented
//! statuses (never the panic one), within a deadline, and the contract
//! holds after each (time never goes back, a refused call changes nothing,
//! an ended run stays ended, a freed handle stays dead).

use std::ffi::{CString, c_char, c_int};
use std::sync::mpsc::channel;
use std::time::Duration;

use lockstep::boundary::lockstep_thread_last_error;
use lockstep::lockstep_status::*;
use lockstep::sim::*;
use lockstep::*;
use proptest::prelude::*;

use crate::common::BUNDLED;
use crate::fmu::master::{Component, Fmu, idle_fmu};

/// Runs `f` on a thread of its own; a call that does not return within
/// `limit` fails the test (a hang) instead of hanging it.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("a call sequence did not end within {limit:?}: a hang"))
}

/// Doubles a hostile caller passes.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(1.0),
        Just(0.5),
        Just(-1.0),
        Just(1e6),
        Just(1e300),
        Just(-1e300),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MIN_POSITIVE),
        -2.0f64..2.0,
    ]
}

// --- the C ABI ---

#[derive(Debug, Clone)]
enum SimCall {
    Step(u64),
    RunUntil(u64),
    Command(u32),
    Fault(u32, u32, f64),
    Truth,
    Verdict,
    Report(usize),
    Finish,
    Free,
    LastError(usize),
}

fn sim_call() -> impl Strategy<Value = SimCall> {
    prop_oneof![
        4 => (0u64..400).prop_map(SimCall::Step),
        2 => prop_oneof![Just(0u64), 0u64..2_500_000, Just(u64::MAX)].prop_map(SimCall::RunUntil),
        2 => (0u32..9).prop_map(SimCall::Command),
        3 => (0u32..12, 0u32..10, number()).prop_map(|(k, i, v)| SimCall::Fault(k, i, v)),
        1 => Just(SimCall::Truth),
        1 => Just(SimCall::Verdict),
        1 => (0usize..64).prop_map(SimCall::Report),
        1 => Just(SimCall::Finish),
        1 => Just(SimCall::Free),
        1 => (0usize..8).prop_map(SimCall::LastError),
    ]
}

const SCENARIO: &str = "schema_version = 1\n[simulation]\nseed = 3\nduration_s = 2.0\n\
     [vehicle]\nspec = \"iris\"\n[[events]]\nat_s = 0.5\naction = \"arm\"\n";

fn options(ap: &CString) -> lockstep_options {
    lockstep_options {
        size: size_of::<lockstep_options>() as u32,
        isolation: LOCKSTEP_ISOLATION_IN_PROCESS,
        autopilot_path: ap.as_ptr(),
        autopilot_host_path: std::ptr::null(),
        log_path: std::ptr::null(),
        record_path: std::ptr::null(),
    }
}

fn now(sim: *mut lockstep_sim) -> Option<u64> {
    let mut t = 0;
    // SAFETY: a local out-value; the handle is checked by the library.
    (unsafe { lockstep_sim_time_us(sim, &mut t) } == LOCKSTEP_OK).then_some(t)
}

/// Plays `calls` on one simulation, checking the contract after each; the
/// first breach, described. Long: one arm per call of the C ABI, each with
/// the state it must leave.
fn play_sim(calls: Vec<SimCall>) -> Result<(), String> {
    let ap = CString::new(BUNDLED).unwrap();
    let toml = CString::new(SCENARIO).unwrap();
    let mut sim = std::ptr::null_mut();
    // SAFETY: valid strings and options; `sim` is a local out-value.
    let s = unsafe {
        lockstep_sim_new_from_toml(toml.as_ptr(), std::ptr::null(), &options(&ap), &mut sim)
    };
    if s != LOCKSTEP_OK {
        return Err(format!("creation: {s:?}"));
    }
    let end = 2_000_000u64;
    let mut freed = false;
    let mut finished = false;
    let mut time = 0u64;
    for (k, call) in calls.iter().enumerate() {
        let before = if freed { None } else { now(sim) };
        // SAFETY: local out-values and buffers of the sizes given; the
        // handle (live, ended or freed) is the library's to check.
        let status = unsafe {
            match call {
                SimCall::Step(n) => {
                    let mut done = 0;
                    lockstep_sim_step(sim, *n, &mut done)
                }
                SimCall::RunUntil(t) => lockstep_sim_run_until(sim, *t),
                SimCall::Command(c) => lockstep_sim_command(sim, *c),
                SimCall::Fault(kind, index, value) => {
                    let f = lockstep_fault {
                        size: size_of::<lockstep_fault>() as u32,
                        kind: *kind,
                        index: *index,
                        value: *value,
                        ..Default::default()
                    };
                    lockstep_sim_fault(sim, &f)
                }
                SimCall::Truth => {
                    let mut t = lockstep_truth {
                        size: size_of::<lockstep_truth>() as u32,
                        ..Default::default()
                    };
                    lockstep_sim_truth(sim, &mut t)
                }
                SimCall::Verdict => {
                    let mut v = lockstep_verdict {
                        size: size_of::<lockstep_verdict>() as u32,
                        ..Default::default()
                    };
                    lockstep_sim_verdict(sim, &mut v)
                }
                SimCall::Report(len) => {
                    let mut buf = vec![0 as c_char; *len];
                    let mut n = 0;
                    lockstep_sim_report(sim, buf.as_mut_ptr(), buf.len(), &mut n)
                }
                SimCall::Finish => lockstep_sim_finish(sim),
                SimCall::Free => lockstep_sim_free(sim),
                SimCall::LastError(len) => {
                    let mut buf = vec![0 as c_char; *len];
                    let mut n = 0;
                    lockstep_sim_last_error(sim, buf.as_mut_ptr(), buf.len(), &mut n)
                }
            }
        };
        let breach = |what: &str| Err(format!("call {k} {call:?} -> {status:?}: {what}"));
        if status == LOCKSTEP_ERR_PANIC {
            return breach("a panic reached the boundary");
        }
        if freed {
            if status != LOCKSTEP_ERR_HANDLE {
                return breach("a freed handle answered");
            }
            continue;
        }
        match call {
            SimCall::Free if status == LOCKSTEP_OK => {
                freed = true;
                continue;
            }
            SimCall::Free => return breach("a live handle was not freed"),
            SimCall::Finish if status == LOCKSTEP_OK => finished = true,
            _ => {}
        }
        let after = now(sim).ok_or_else(|| format!("call {k}: the time is unreadable"))?;
        if after < time || Some(after) < before {
            return breach(&format!("time went back from {time} to {after}"));
        }
        if after > end {
            return breach(&format!("time {after} past the end {end}"));
        }
        let changes_time = matches!(call, SimCall::Step(_) | SimCall::RunUntil(_));
        if !changes_time && Some(after) != before {
            return breach("a call that takes no step moved the time");
        }
        if status != LOCKSTEP_OK && !matches!(status, LOCKSTEP_ERR_BUFFER) && Some(after) != before
        {
            // A failing step may have taken boundaries before failing; a
            // refusal (argument, time, ended) takes none.
            if matches!(
                status,
                LOCKSTEP_ERR_ARGUMENT | LOCKSTEP_ERR_TIME | LOCKSTEP_ERR_ENDED
            ) {
                return breach("a refused call moved the time");
            }
        }
        let ended = before == Some(end) || finished;
        let valued = |kind: u32| {
            matches!(
                kind,
                LOCKSTEP_FAULT_THRUST_LOSS
                    | LOCKSTEP_FAULT_SENSOR_BIAS_STEP
                    | LOCKSTEP_FAULT_SENSOR_NOISE_SCALE
            )
        };
        let wrong = match call {
            SimCall::Step(n) => (*n > 0 && ended && status != LOCKSTEP_ERR_ENDED)
                .then_some("a step past the end was not LOCKSTEP_ERR_ENDED"),
            // A finished run answers LOCKSTEP_ERR_ENDED to every step.
            SimCall::RunUntil(t) => (Some(*t) < before && !finished && status != LOCKSTEP_ERR_TIME)
                .then_some("a time in the past was not LOCKSTEP_ERR_TIME"),
            SimCall::Command(c) => (!(1..=6).contains(c) && status != LOCKSTEP_ERR_ARGUMENT)
                .then_some("an unknown command was taken"),
            // Only the faults that take no value may carry any.
            SimCall::Fault(kind, _, v) => {
                (!v.is_finite() && status == LOCKSTEP_OK && valued(*kind))
                    .then_some("a fault's value that is not finite was taken")
            }
            SimCall::Verdict => (status == LOCKSTEP_OK && after < end && !finished)
                .then_some("a verdict before the run ended"),
            _ => None,
        };
        if let Some(what) = wrong {
            return breach(what);
        }
        time = after;
    }
    if !freed {
        // SAFETY: the handle from creation, freed once.
        let s = unsafe { lockstep_sim_free(sim) };
        if s != LOCKSTEP_OK {
            return Err(format!("the last free: {s:?}"));
        }
    }
    // The thread's last error is always readable.
    let mut buf = vec![0 as c_char; 4096];
    let mut n = 0;
    // SAFETY: a 4096-byte buffer and a local length.
    let s = unsafe { lockstep_thread_last_error(buf.as_mut_ptr(), buf.len(), &mut n) };
    if s != LOCKSTEP_OK {
        return Err(format!("the thread's last error: {s:?}"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_c_abi_keeps_its_contract_under_any_call_sequence(
        calls in prop::collection::vec(sim_call(), 1..40)
    ) {
        let r = within(Duration::from_secs(60), move || play_sim(calls));
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

// --- the FMU ---

#[derive(Debug, Clone)]
enum FmiCall {
    Setup(f64, Option<f64>),
    Enter,
    Exit,
    SetReal(Vec<(u32, f64)>),
    GetReal(u32),
    /// Step from the instance's time (or off it by the first number) by
    /// the second.
    DoStep(f64, f64),
    Terminate,
    Reset,
    Free,
}

fn fmi_call() -> impl Strategy<Value = FmiCall> {
    let step = prop_oneof![
        Just(0.001),
        Just(0.004),
        Just(0.25),
        Just(0.0000005),
        Just(0.0),
        Just(-0.001),
        Just(1e300),
        Just(f64::NAN),
    ];
    let off = prop_oneof![6 => Just(0.0), 1 => Just(0.5), 1 => Just(f64::NAN), 1 => Just(-1.0)];
    prop_oneof![
        1 => (number(), prop::option::of(number())).prop_map(|(a, b)| FmiCall::Setup(a, b)),
        2 => Just(FmiCall::Enter),
        2 => Just(FmiCall::Exit),
        3 => prop::collection::vec((0u32..80, number()), 1..4).prop_map(FmiCall::SetReal),
        1 => (0u32..80).prop_map(FmiCall::GetReal),
        6 => (off, step).prop_map(|(o, h)| FmiCall::DoStep(o, h)),
        1 => Just(FmiCall::Terminate),
        1 => Just(FmiCall::Reset),
        1 => Just(FmiCall::Free),
    ]
}

fn last_time(fmu: &Fmu, c: Component) -> Option<f64> {
    let f: unsafe extern "C" fn(Component, c_int, *mut f64) -> c_int = fmu.sym("fmi2GetRealStatus");
    let mut t = 0.0;
    // SAFETY: a component (the FMU checks it) and a local out-value.
    (unsafe { f(c, 2, &mut t) } == 0).then_some(t)
}

fn play_fmu(calls: Vec<FmiCall>) -> Result<(), String> {
    let f = idle_fmu();
    let (unpacked, guid) = (&f.unpacked, &f.guid);
    let fmu = Fmu::load(unpacked);
    let c = fmu.instantiate(unpacked, guid);
    if c.is_null() {
        return Err("instantiation failed".into());
    }
    let mut freed = false;
    let mut reached = 0.0f64;
    for (k, call) in calls.iter().enumerate() {
        let t0 = last_time(&fmu, c).unwrap_or(reached);
        // SAFETY: FMI calls with local arrays of the lengths given; the
        // component (live or freed) is the FMU's to check.
        let status: c_int = unsafe {
            match call {
                FmiCall::Setup(start, stop) => {
                    let f: unsafe extern "C" fn(Component, c_int, f64, f64, c_int, f64) -> c_int =
                        fmu.sym("fmi2SetupExperiment");
                    f(
                        c,
                        0,
                        0.0,
                        *start,
                        c_int::from(stop.is_some()),
                        stop.unwrap_or(0.0),
                    )
                }
                FmiCall::Enter => fmu.call("fmi2EnterInitializationMode", c),
                FmiCall::Exit => fmu.call("fmi2ExitInitializationMode", c),
                FmiCall::SetReal(pairs) => {
                    let f: unsafe extern "C" fn(Component, *const u32, usize, *const f64) -> c_int =
                        fmu.sym("fmi2SetReal");
                    let (vrs, xs): (Vec<u32>, Vec<f64>) = pairs.iter().copied().unzip();
                    f(c, vrs.as_ptr(), vrs.len(), xs.as_ptr())
                }
                FmiCall::GetReal(vr) => {
                    let f: unsafe extern "C" fn(Component, *const u32, usize, *mut f64) -> c_int =
                        fmu.sym("fmi2GetReal");
                    let mut x = 0.0;
                    f(c, vr, 1, &mut x)
                }
                FmiCall::DoStep(off, h) => fmu.step(c, t0 + off, *h),
                FmiCall::Terminate => fmu.call("fmi2Terminate", c),
                FmiCall::Reset => fmu.call("fmi2Reset", c),
                FmiCall::Free => {
                    fmu.free(c);
                    freed = true;
                    continue;
                }
            }
        };
        let breach = |what: &str| Err(format!("call {k} {call:?} -> {status}: {what}"));
        if !(0..=3).contains(&status) {
            return breach("fmi2Fatal or no status at all (a panic, or worse)");
        }
        if freed {
            if status != 3 {
                return breach("a freed instance answered");
            }
            continue;
        }
        let t1 = last_time(&fmu, c).unwrap_or(t0);
        if matches!(call, FmiCall::Reset) && status == 0 {
            reached = 0.0;
            continue;
        }
        if t1 < t0 {
            return breach(&format!("time went back from {t0} to {t1}"));
        }
        if t1 > 1.0 + 1e-9 {
            return breach(&format!("time {t1} past the end"));
        }
        if !matches!(call, FmiCall::DoStep(..)) && t1 != t0 {
            return breach("a call that takes no step moved the time");
        }
        if let FmiCall::DoStep(off, h) = call {
            if status == 3 && t1 != t0 {
                return breach("a refused step moved the time");
            }
            if *off == 0.0 && *h > 0.0 && h.is_finite() && t0 >= 1.0 && status != 2 && status != 3 {
                return breach("a step from the end was not fmi2Discard");
            }
        }
        reached = t1;
    }
    if !freed {
        fmu.free(c);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn the_fmu_keeps_its_contract_under_any_call_sequence(
        calls in prop::collection::vec(fmi_call(), 1..40)
    ) {
        let r = within(Duration::from_secs(60), move || play_fmu(calls));
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}
