//! The C ABI's behaviour, called as C calls it (the exported functions of
//! liblockstep): a crash of the autopilot behind it, a library that allows
//! one instance, commands and faults reaching the vehicle, time and
//! argument errors, the message functions. Each error with the exact status
//! and message expected.

use std::ffi::{CStr, CString, c_char};
use std::path::Path;

use lockstep::boundary::{lockstep_status_name, lockstep_thread_last_error};
use lockstep::bridge::*;
use lockstep::lockstep_status::{self, *};
use lockstep::sim::*;
use lockstep::*;

use crate::common::{BUNDLED, HOST, LOCKSTEP, SINGLE_INSTANCE, TempDir, broken, idle_scenario};

mod checked_at_the_call;

pub(crate) fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// Options for `autopilot` (kept alive by the returned strings).
pub(crate) fn options(
    autopilot: &Path,
    isolation: u32,
    log: Option<&Path>,
) -> (lockstep_options, Vec<CString>) {
    let ap = c(autopilot.to_str().unwrap());
    let host = c(HOST);
    let log = log.map(|l| c(l.to_str().unwrap()));
    let o = lockstep_options {
        size: size_of::<lockstep_options>() as u32,
        isolation,
        autopilot_path: ap.as_ptr(),
        autopilot_host_path: host.as_ptr(),
        log_path: log.as_ref().map_or(std::ptr::null(), |l| l.as_ptr()),
        record_path: std::ptr::null(),
    };
    let mut keep = vec![ap, host];
    keep.extend(log);
    (o, keep)
}

/// The calling thread's last error message.
pub(crate) fn last_error() -> String {
    let mut buf = vec![0 as c_char; 4096];
    let mut n = 0;
    // SAFETY: a 4096-byte buffer and a local length.
    let s = unsafe { lockstep_thread_last_error(buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(s, LOCKSTEP_OK);
    // SAFETY: the library wrote a NUL-terminated string into `buf`.
    unsafe { CStr::from_ptr(buf.as_ptr()) }
        .to_str()
        .unwrap()
        .to_owned()
}

pub(crate) fn new_sim(
    scenario: &Path,
    o: &lockstep_options,
) -> Result<*mut lockstep_sim, (lockstep_status, String)> {
    let path = c(scenario.to_str().unwrap());
    let mut sim = std::ptr::null_mut();
    // SAFETY: valid strings, options and out-pointer.
    match unsafe { lockstep_sim_new_from_file(path.as_ptr(), o, &mut sim) } {
        LOCKSTEP_OK => Ok(sim),
        s => Err((s, last_error())),
    }
}

pub(crate) fn step(sim: *mut lockstep_sim, n: u64) -> Result<u64, (lockstep_status, String)> {
    let mut done = 0;
    // SAFETY: `done` is a local; the handle is checked by the library.
    match unsafe { lockstep_sim_step(sim, n, &mut done) } {
        LOCKSTEP_OK => Ok(done),
        s => Err((s, last_error())),
    }
}

pub(crate) fn truth(sim: *mut lockstep_sim) -> lockstep_truth {
    let mut t = lockstep_truth {
        size: size_of::<lockstep_truth>() as u32,
        ..Default::default()
    };
    // SAFETY: a sized local struct.
    assert_eq!(unsafe { lockstep_sim_truth(sim, &mut t) }, LOCKSTEP_OK);
    t
}

fn actuators(sim: *mut lockstep_sim) -> lockstep_actuators {
    let mut a = lockstep_actuators {
        size: size_of::<lockstep_actuators>() as u32,
        ..Default::default()
    };
    // SAFETY: a sized local struct.
    assert_eq!(unsafe { lockstep_sim_actuators(sim, &mut a) }, LOCKSTEP_OK);
    a
}

fn verdict(sim: *mut lockstep_sim) -> Result<lockstep_verdict, (lockstep_status, String)> {
    let mut v = lockstep_verdict {
        size: size_of::<lockstep_verdict>() as u32,
        ..Default::default()
    };
    // SAFETY: a sized local struct.
    match unsafe { lockstep_sim_verdict(sim, &mut v) } {
        LOCKSTEP_OK => Ok(v),
        s => Err((s, last_error())),
    }
}

/// The report, read as a C host does: its length first, then the bytes.
fn report(sim: *mut lockstep_sim) -> Result<serde_json::Value, (lockstep_status, String)> {
    let mut n = 0;
    // SAFETY: no buffer: the library writes only the length.
    match unsafe { lockstep_sim_report(sim, std::ptr::null_mut(), 0, &mut n) } {
        LOCKSTEP_ERR_BUFFER => {}
        s => return Err((s, last_error())),
    }
    let mut buf = vec![0 as c_char; n + 1];
    let mut written = 0;
    // SAFETY: a buffer of n + 1 bytes and a local length.
    let s = unsafe { lockstep_sim_report(sim, buf.as_mut_ptr(), buf.len(), &mut written) };
    assert_eq!(s, LOCKSTEP_OK);
    assert_eq!(written, n);
    // SAFETY: the library wrote a NUL-terminated string into `buf`.
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(text.len(), n);
    Ok(serde_json::from_str(text).unwrap())
}

pub(crate) fn free(sim: *mut lockstep_sim) -> lockstep_status {
    // SAFETY: the library checks the handle.
    unsafe { lockstep_sim_free(sim) }
}

#[test]
fn a_crash_in_the_isolated_autopilot_fails_the_handle_and_loses_nothing() {
    let dir = TempDir::new("capi-crash");
    let scenario = idle_scenario(dir.path(), "idle.toml", 8.0, 100);
    let log = dir.join("log.csv");
    let (o, _keep) = options(&broken("step_segv"), LOCKSTEP_ISOLATION_PROCESS, Some(&log));
    let sim = new_sim(&scenario, &o).unwrap();
    let (s, msg) = step(sim, 10_000).unwrap_err();
    assert_eq!(s, LOCKSTEP_ERR_AUTOPILOT);
    assert_eq!(
        msg,
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s"
    );
    // Failed: no more steps, with the original error; reading still works.
    let (s, msg) = step(sim, 1).unwrap_err();
    assert_eq!(s, LOCKSTEP_ERR_FAILED);
    assert_eq!(
        msg,
        "an earlier error left this simulation unusable: the autopilot was killed by signal \
         SIGSEGV (segmentation fault) in step at t = 5.000000 s"
    );
    assert_eq!(truth(sim).time_us, 5_000_000);
    // The log holds every row up to the crash and its sidecar is complete.
    let rows = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(rows, 1 + 500, "the header, then 0 to 4.99 s at 100 Hz");
    let meta = std::fs::read_to_string(dir.join("log.csv.json")).unwrap();
    assert!(meta.contains("\"complete\": true"), "{meta}");
    // The verdict of the stopped run: a run failure, exit status 1.
    let v = verdict(sim).unwrap();
    assert_eq!(
        (v.outcome, v.passed, v.error_class, v.exit_status),
        (LOCKSTEP_OUTCOME_STOPPED, 0, LOCKSTEP_CLASS_RUN_FAILURE, 1)
    );
    assert_eq!(v.simulated_us, 5_000_000);
    let r = report(sim).unwrap();
    assert_eq!(r["outcome"], "stopped");
    assert_eq!(r["error_class"], "run_failure");
    assert_eq!(
        r["error"],
        "the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s"
    );
    assert_eq!(r["log"]["rows"], 500);
    assert_eq!(free(sim), LOCKSTEP_OK);
    assert_eq!(free(sim), LOCKSTEP_ERR_HANDLE);
}

#[test]
fn a_library_that_allows_one_instance_refuses_a_second_simulation() {
    let _one = crate::common::single_instance_lock();
    let dir = TempDir::new("capi-single");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let (o, _keep) = options(
        Path::new(SINGLE_INSTANCE),
        LOCKSTEP_ISOLATION_IN_PROCESS,
        None,
    );
    let first = new_sim(&scenario, &o).unwrap();
    let (s, msg) = new_sim(&scenario, &o).unwrap_err();
    assert_eq!(s, LOCKSTEP_ERR_AUTOPILOT);
    assert!(
        msg.ends_with(
            "is not re-entrant (capabilities lack LOCKSTEP_AP_CAP_REENTRANT) and an instance of \
             it is already alive in this process; drop it first, or run each instance isolated \
             in its own process (lockstep_abi::Isolation::Process, `--isolation process`)"
        ),
        "{msg}"
    );
    assert_eq!(free(first), LOCKSTEP_OK);
    // Freed, the instance is available again.
    let again = new_sim(&scenario, &o).unwrap();
    assert_eq!(free(again), LOCKSTEP_OK);
}

#[test]
fn commands_and_faults_reach_the_vehicle() {
    let dir = TempDir::new("capi-commands");
    let scenario = idle_scenario(dir.path(), "idle.toml", 20.0, 10);
    let (o, _keep) = options(Path::new(BUNDLED), LOCKSTEP_ISOLATION_IN_PROCESS, None);
    let sim = new_sim(&scenario, &o).unwrap();
    step(sim, 1000).unwrap();
    assert_eq!(actuators(sim).armed, 0);
    // SAFETY: a live handle and values; the library checks them.
    unsafe {
        assert_eq!(lockstep_sim_command(sim, LOCKSTEP_COMMAND_ARM), LOCKSTEP_OK);
        assert_eq!(lockstep_sim_command(sim, 0), LOCKSTEP_ERR_ARGUMENT);
    }
    assert_eq!(
        last_error(),
        "command 0 is not a LOCKSTEP_COMMAND_* value (1 to 6)"
    );
    step(sim, 8).unwrap();
    assert_eq!(actuators(sim).armed, 1, "armed at the next autopilot step");
    // A motor that does not exist, then one that does.
    let mut f = lockstep_fault {
        size: size_of::<lockstep_fault>() as u32,
        kind: LOCKSTEP_FAULT_MOTOR_FAIL,
        index: 7,
        ..Default::default()
    };
    // SAFETY: a sized local struct.
    let status = unsafe { lockstep_sim_fault(sim, &f) };
    assert_eq!(status, LOCKSTEP_ERR_ARGUMENT);
    assert_eq!(last_error(), "motor 7, but the vehicle has 4 (0 to 3)");
    f.kind = LOCKSTEP_FAULT_THRUST_LOSS;
    f.index = 0;
    f.value = 1.5;
    // SAFETY: as above.
    let status = unsafe { lockstep_sim_fault(sim, &f) };
    assert_eq!(status, LOCKSTEP_ERR_ARGUMENT);
    assert_eq!(
        last_error(),
        "`fault.value` 1.5e0 is not a valid fraction (0 to 1)"
    );
    f.kind = 42;
    // SAFETY: as above.
    let status = unsafe { lockstep_sim_fault(sim, &f) };
    assert_eq!(status, LOCKSTEP_ERR_ARGUMENT);
    assert_eq!(
        last_error(),
        "fault kind 42 is not a LOCKSTEP_FAULT_* value (1 to 10)"
    );
    f.kind = LOCKSTEP_FAULT_MOTOR_FAIL;
    // SAFETY: as above.
    assert_eq!(unsafe { lockstep_sim_fault(sim, &f) }, LOCKSTEP_OK);
    // Armed on the ground, the other rotors idle; the failed one stops.
    step(sim, 3000).unwrap();
    let mut x = [0.0; 64];
    let mut n = 0;
    // SAFETY: a 64-double buffer and a local length.
    let status = unsafe { lockstep_sim_state(sim, x.as_mut_ptr(), x.len(), &mut n) };
    assert_eq!(status, LOCKSTEP_OK);
    assert_eq!(n, 19);
    assert_eq!(x[13], 0.0, "rotor 0 stopped");
    assert!(x[14] > 10.0, "rotor 1 idles at {} rad/s", x[14]);
    assert_eq!(free(sim), LOCKSTEP_OK);
}

#[test]
fn time_missions_and_sizes_are_checked() {
    let dir = TempDir::new("capi-time");
    let scenario = idle_scenario(dir.path(), "idle.toml", 2.0, 10);
    let (o, _keep) = options(Path::new(BUNDLED), LOCKSTEP_ISOLATION_IN_PROCESS, None);
    let sim = new_sim(&scenario, &o).unwrap();
    // SAFETY: live handle, local out-values, valid strings.
    unsafe {
        assert_eq!(lockstep_sim_run_until(sim, 1_000_500), LOCKSTEP_OK);
        let mut t = 0;
        assert_eq!(lockstep_sim_time_us(sim, &mut t), LOCKSTEP_OK);
        assert_eq!(t, 1_000_000, "the last boundary at or before 1.0005 s");
        assert_eq!(lockstep_sim_run_until(sim, 999_999), LOCKSTEP_ERR_TIME);
        assert_eq!(
            last_error(),
            "run until t = 0.999999 s, but the simulation is at t = 1.000000 s"
        );
        let missing = c("no/such.waypoints");
        assert_eq!(
            lockstep_sim_upload_mission(sim, missing.as_ptr()),
            LOCKSTEP_ERR_CONFIG
        );
        assert!(
            last_error().contains("no/such.waypoints"),
            "{}",
            last_error()
        );
        let mission = c(&format!(
            "{}/examples/missions/square.waypoints",
            env!("CARGO_MANIFEST_DIR")
        ));
        assert_eq!(
            lockstep_sim_upload_mission(sim, mission.as_ptr()),
            LOCKSTEP_OK
        );
        // Past the end: the run ends at 2 s; stepping more reports it.
        assert_eq!(lockstep_sim_run_until(sim, 10_000_000), LOCKSTEP_OK);
        assert_eq!(lockstep_sim_time_us(sim, &mut t), LOCKSTEP_OK);
        assert_eq!(t, 2_000_000);
    }
    assert_eq!(
        step(sim, 1).unwrap_err(),
        (
            LOCKSTEP_ERR_ENDED,
            "the run ended at t = 2.000000 s; nothing is left to step".into()
        )
    );
    // SAFETY: a live handle.
    let s2 = unsafe { lockstep_sim_run_until(sim, 3_000_000) };
    assert_eq!(s2, LOCKSTEP_ERR_ENDED);
    // SAFETY: as above (at the end already: nothing to do, no error).
    let s3 = unsafe { lockstep_sim_run_until(sim, 2_000_000) };
    assert_eq!(s3, LOCKSTEP_OK);
    // A struct from another version of the header.
    let mut t = lockstep_truth {
        size: 100,
        ..Default::default()
    };
    // SAFETY: a local struct (bigger than the size it claims).
    let status = unsafe { lockstep_sim_truth(sim, &mut t) };
    assert_eq!(status, LOCKSTEP_ERR_STRUCT_SIZE);
    assert_eq!(t.time_us, 0, "out-params untouched on error");
    assert_eq!(free(sim), LOCKSTEP_OK);
    // Options that are wrong.
    let (mut bad, _keep) = options(Path::new(BUNDLED), 7, None);
    assert_eq!(
        new_sim(&scenario, &bad).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            "options.isolation is 7: LOCKSTEP_ISOLATION_IN_PROCESS (0) or LOCKSTEP_ISOLATION_PROCESS (1)".into()
        )
    );
    bad.isolation = 0;
    // No autopilot named: the bundled reference autopilot, which flies as
    // the same library named by its path.
    bad.autopilot_path = std::ptr::null();
    let bundled = new_sim(&scenario, &bad).unwrap();
    let (named_options, _keep2) = options(Path::new(BUNDLED), LOCKSTEP_ISOLATION_IN_PROCESS, None);
    let named = new_sim(&scenario, &named_options).unwrap();
    assert_eq!(step(bundled, 500).unwrap(), 500);
    assert_eq!(step(named, 500).unwrap(), 500);
    assert_eq!(truth(bundled), truth(named));
    assert_eq!(free(bundled), LOCKSTEP_OK);
    assert_eq!(free(named), LOCKSTEP_OK);
}

#[test]
fn a_bridge_refuses_logs_and_wrong_times() {
    let dir = TempDir::new("capi-bridge");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let path = c(scenario.to_str().unwrap());
    let log = dir.join("log.csv");
    let (o, _keep) = options(
        Path::new(BUNDLED),
        LOCKSTEP_ISOLATION_IN_PROCESS,
        Some(&log),
    );
    let mut b = std::ptr::null_mut();
    // SAFETY: valid strings, options and out-pointer.
    let s = unsafe { lockstep_bridge_new_from_file(path.as_ptr(), &o, &mut b) };
    assert_eq!(s, LOCKSTEP_ERR_ARGUMENT);
    assert_eq!(
        last_error(),
        "options.log_path and options.record_path are for whole vehicles: a bridge has no plant to log"
    );
    let (o, _keep) = options(Path::new(BUNDLED), LOCKSTEP_ISOLATION_IN_PROCESS, None);
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            lockstep_bridge_new_from_file(path.as_ptr(), &o, &mut b),
            LOCKSTEP_OK
        );
        let mut truth = lockstep_truth {
            size: size_of::<lockstep_truth>() as u32,
            time_us: 4000,
            attitude_q: [1.0, 0.0, 0.0, 0.0],
            ..Default::default()
        };
        let mut act = lockstep_actuators {
            size: size_of::<lockstep_actuators>() as u32,
            ..Default::default()
        };
        assert_eq!(
            lockstep_bridge_step(b, &truth, std::ptr::null(), &mut act),
            LOCKSTEP_ERR_TIME
        );
        assert_eq!(
            last_error(),
            "truth at t = 0.004000 s, but the next boundary is at t = 0.000000 s"
        );
        truth.time_us = 0;
        truth.rates_frd_radps[2] = f64::INFINITY;
        assert_eq!(
            lockstep_bridge_step(b, &truth, std::ptr::null(), &mut act),
            LOCKSTEP_ERR_ARGUMENT
        );
        assert_eq!(
            last_error(),
            "truth at t = 0.000000 s: `rates_frd_radps` is not finite or out of range"
        );
        truth.rates_frd_radps[2] = 0.0;
        act.size = 4;
        assert_eq!(
            lockstep_bridge_step(b, &truth, std::ptr::null(), &mut act),
            LOCKSTEP_ERR_STRUCT_SIZE
        );
        act.size = size_of::<lockstep_actuators>() as u32;
        // The checks above changed nothing: the boundary at 0 still awaits.
        assert_eq!(
            lockstep_bridge_step(b, &truth, std::ptr::null(), &mut act),
            LOCKSTEP_OK
        );
        assert_eq!(act.motor_count, 4);
        truth.time_us = 4000;
        let mut battery = lockstep_battery_state {
            size: size_of::<lockstep_battery_state>() as u32,
            warning: 9,
            voltage_v: 12.0,
            remaining: 0.5,
            connected: 1,
            ..Default::default()
        };
        assert_eq!(
            lockstep_bridge_step(b, &truth, &battery, &mut act),
            LOCKSTEP_ERR_ARGUMENT
        );
        assert_eq!(
            last_error(),
            "battery.warning is 9, not a LOCKSTEP_BATTERY_* value (0 to 3)"
        );
        battery.warning = 0;
        assert_eq!(
            lockstep_bridge_step(b, &truth, &battery, &mut act),
            LOCKSTEP_OK
        );
        let f = lockstep_fault {
            size: size_of::<lockstep_fault>() as u32,
            kind: LOCKSTEP_FAULT_MOTOR_FAIL,
            index: 99,
            ..Default::default()
        };
        assert_eq!(lockstep_bridge_fault(b, &f), LOCKSTEP_ERR_UNSUPPORTED);
        assert_eq!(
            last_error(),
            "plant faults (motors, batteries) act on the plant, which the host owns"
        );
        assert_eq!(lockstep_bridge_free(b), LOCKSTEP_OK);
        assert_eq!(lockstep_bridge_free(b), LOCKSTEP_ERR_HANDLE);
    }
}

#[test]
fn a_plants_state_is_replaced_only_whole() {
    let mut p = std::ptr::null_mut();
    // SAFETY: valid strings and local out-values; the library checks the
    // rest (a length that does not match is refused before reading).
    unsafe {
        assert_eq!(
            lockstep::plant::lockstep_plant_new(c"iris".as_ptr(), std::ptr::null(), 0, &mut p),
            LOCKSTEP_OK
        );
        let x = [0.0; 4];
        assert_eq!(
            lockstep::plant::lockstep_plant_set_state(p, x.as_ptr(), 1000),
            LOCKSTEP_ERR_ARGUMENT
        );
        assert_eq!(last_error(), "1000 state values for a state of 19");
        assert_eq!(lockstep::plant::lockstep_plant_free(p), LOCKSTEP_OK);
    }
}

#[test]
fn status_names_and_message_buffers() {
    let name = |s: i32| {
        // SAFETY: the library returns a static NUL-terminated string.
        unsafe { CStr::from_ptr(lockstep_status_name(s)) }
            .to_str()
            .unwrap()
            .to_owned()
    };
    for (code, n) in [
        (0, "LOCKSTEP_OK"),
        (-1, "LOCKSTEP_ERR_NULL"),
        (-2, "LOCKSTEP_ERR_HANDLE"),
        (-3, "LOCKSTEP_ERR_STRUCT_SIZE"),
        (-4, "LOCKSTEP_ERR_ARGUMENT"),
        (-5, "LOCKSTEP_ERR_CONFIG"),
        (-6, "LOCKSTEP_ERR_AUTOPILOT"),
        (-7, "LOCKSTEP_ERR_PLANT"),
        (-8, "LOCKSTEP_ERR_TIME"),
        (-9, "LOCKSTEP_ERR_ENDED"),
        (-10, "LOCKSTEP_ERR_IO"),
        (-11, "LOCKSTEP_ERR_BUFFER"),
        (-12, "LOCKSTEP_ERR_FAILED"),
        (-13, "LOCKSTEP_ERR_UNSUPPORTED"),
        (-14, "LOCKSTEP_ERR_PANIC"),
        (-15, "LOCKSTEP_ERR_NOT_ENDED"),
        (1, "LOCKSTEP_UNKNOWN_STATUS"),
        (-16, "LOCKSTEP_UNKNOWN_STATUS"),
    ] {
        assert_eq!(name(code), n);
        if (-15..=0).contains(&code) {
            assert_eq!(format!("{:?}", status_of(code)), n);
        }
    }
    // A failure, then its message through a buffer too small, then one
    // big enough.
    // SAFETY: NULL handle (checked), local out-value.
    let status = unsafe { lockstep_sim_time_us(std::ptr::null_mut(), &mut 0) };
    assert_eq!(status, LOCKSTEP_ERR_NULL);
    let mut buf = [0 as c_char; 4];
    let mut n = 0;
    // SAFETY: a 4-byte buffer, a local length.
    let s = unsafe { lockstep_thread_last_error(buf.as_mut_ptr(), buf.len(), &mut n) };
    assert_eq!(s, LOCKSTEP_ERR_BUFFER);
    assert_eq!(n, "`sim` is NULL".len());
    assert_eq!(buf, [0; 4], "untouched");
    assert_eq!(last_error(), "`sim` is NULL");
}

/// The enum value with code `c` (as C would compare it).
fn status_of(c: i32) -> lockstep_status {
    [
        LOCKSTEP_OK,
        LOCKSTEP_ERR_NULL,
        LOCKSTEP_ERR_HANDLE,
        LOCKSTEP_ERR_STRUCT_SIZE,
        LOCKSTEP_ERR_ARGUMENT,
        LOCKSTEP_ERR_CONFIG,
        LOCKSTEP_ERR_AUTOPILOT,
        LOCKSTEP_ERR_PLANT,
        LOCKSTEP_ERR_TIME,
        LOCKSTEP_ERR_ENDED,
        LOCKSTEP_ERR_IO,
        LOCKSTEP_ERR_BUFFER,
        LOCKSTEP_ERR_FAILED,
        LOCKSTEP_ERR_UNSUPPORTED,
        LOCKSTEP_ERR_PANIC,
        LOCKSTEP_ERR_NOT_ENDED,
    ]
    .into_iter()
    .find(|s| *s as i32 == c)
    .unwrap()
}

#[test]
fn a_host_reads_the_verdict_of_a_run_that_missed_its_expectations() {
    let dir = TempDir::new("capi-verdict");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    // Idle on the ground, disarmed: `disarmed` holds, a finished mission
    // does not, and neither does a charge that never fell below 1 (the
    // avionics draw on it).
    let text = std::fs::read_to_string(&scenario).unwrap()
        + "[expect]\ndisarmed = true\nmission_finished = true\nmin_soc = 1.0\n";
    std::fs::write(&scenario, text).unwrap();
    let (o, _keep) = options(Path::new(BUNDLED), LOCKSTEP_ISOLATION_IN_PROCESS, None);
    let sim = new_sim(&scenario, &o).unwrap();
    step(sim, 100).unwrap();
    // Before the end, neither the verdict nor the report.
    // (The first boundary is t = 0: 100 of them reach 99 ms.)
    let expected = "the run is at t = 0.099000 s and has not ended: step it to its end \
                    (t = 1.000000 s) or end it with lockstep_sim_finish first";
    assert_eq!(
        verdict(sim).unwrap_err(),
        (LOCKSTEP_ERR_NOT_ENDED, expected.to_string())
    );
    assert_eq!(
        report(sim).unwrap_err(),
        (LOCKSTEP_ERR_NOT_ENDED, expected.to_string())
    );
    // A wrong size and NULL are refused as everywhere.
    let mut small = lockstep_verdict {
        size: 8,
        ..Default::default()
    };
    // SAFETY: a local struct whose size field says 8.
    let wrong_size = unsafe { lockstep_sim_verdict(sim, &mut small) };
    assert_eq!(wrong_size, LOCKSTEP_ERR_STRUCT_SIZE);
    // SAFETY: NULL is checked.
    let null_out = unsafe { lockstep_sim_verdict(sim, std::ptr::null_mut()) };
    assert_eq!(null_out, LOCKSTEP_ERR_NULL);
    // SAFETY: NULL out_len is checked.
    let null_len =
        unsafe { lockstep_sim_report(sim, std::ptr::null_mut(), 0, std::ptr::null_mut()) };
    assert_eq!(null_len, LOCKSTEP_ERR_NULL);
    while step(sim, 1000).is_ok() {}
    // SAFETY: the handle is checked.
    let finished = unsafe { lockstep_sim_finish(sim) };
    assert_eq!(finished, LOCKSTEP_OK);
    let v = verdict(sim).unwrap();
    assert_eq!(
        v,
        lockstep_verdict {
            size: size_of::<lockstep_verdict>() as u32,
            outcome: LOCKSTEP_OUTCOME_COMPLETED,
            passed: 0,
            error_class: LOCKSTEP_CLASS_EXPECTATION_FAILED,
            exit_status: 3,
            crashes: 0,
            checks: 3,
            checks_failed: 2,
            simulated_us: 1_000_000,
        }
    );
    // The report is `lockstep fly --json`'s for the same scenario.
    let r = report(sim).unwrap();
    let cli = std::process::Command::new(LOCKSTEP)
        .args(["fly", scenario.to_str().unwrap(), "--json"])
        .args(["--isolation", "in-process", "--autopilot", BUNDLED])
        .output()
        .unwrap();
    assert_eq!(cli.status.code(), Some(3));
    let cli: serde_json::Value = serde_json::from_slice(&cli.stdout).unwrap();
    for key in [
        "scenario",
        "seed",
        "outcome",
        "error_class",
        "exit_status",
        "simulated_us",
        "boundaries",
        "final_state",
        "verdict",
        "timeline",
    ] {
        assert_eq!(r[key], cli[key], "{key}");
    }
    let failed: Vec<&str> = r["verdict"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["passed"] == false)
        .map(|c| c["key"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["expect.mission_finished", "expect.min_soc"]);
    assert_eq!(free(sim), LOCKSTEP_OK);
    // A freed handle has no verdict.
    assert_eq!(verdict(sim).unwrap_err().0, LOCKSTEP_ERR_HANDLE);
}

#[test]
fn the_autopilots_parameter_table_is_listed_and_an_abi_3_library_says_it_has_none() {
    let dir = TempDir::new("c-abi-params");
    let scenario = idle_scenario(dir.path(), "idle", 2.0, 10);
    let (o, _keep) = options(Path::new(BUNDLED), LOCKSTEP_ISOLATION_PROCESS, None);
    let sim = new_sim(&scenario, &o).unwrap();
    let mut n = 0;
    // SAFETY: a live handle and a local out-parameter.
    let s = unsafe { lockstep_sim_param_count(sim, &mut n) };
    assert_eq!(s, LOCKSTEP_OK);
    assert_eq!(n, 44);
    let param = |i: u32| {
        let mut p = lockstep_param {
            size: size_of::<lockstep_param>() as u32,
            ..Default::default()
        };
        // SAFETY: a sized local struct.
        match unsafe { lockstep_sim_param(sim, i, &mut p) } {
            LOCKSTEP_OK => Ok(p),
            s => Err((s, last_error())),
        }
    };
    let names: Vec<String> = (0..n)
        .map(|i| {
            let p = param(i).unwrap();
            // SAFETY: the library wrote a NUL-terminated name.
            unsafe { CStr::from_ptr(p.name.as_ptr()) }
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    let cruise = param(names.iter().position(|n| n == "MPC_XY_CRUISE").unwrap() as u32).unwrap();
    assert_eq!(
        (cruise.r#type, cruise.value, cruise.default_value),
        (lockstep_abi::ffi::LOCKSTEP_PARAM_TYPE_F32, 5.0, 5.0)
    );
    let bat = param(names.iter().position(|n| n == "COM_LOW_BAT_ACT").unwrap() as u32).unwrap();
    assert_eq!(bat.r#type, lockstep_abi::ffi::LOCKSTEP_PARAM_TYPE_I32);
    assert_eq!(
        param(44).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            "index: parameter 44, but the autopilot has 44 (0 to 43)".to_string()
        )
    );
    // SAFETY: the handle, freed once.
    assert_eq!(unsafe { lockstep_sim_free(sim) }, LOCKSTEP_OK);

    let (o, _keep) = options(
        Path::new(lockstep_c_examples::ABI3_AUTOPILOT),
        LOCKSTEP_ISOLATION_PROCESS,
        None,
    );
    let sim = new_sim(&scenario, &o).unwrap();
    // SAFETY: a live handle and a local out-parameter.
    let s = unsafe { lockstep_sim_param_count(sim, &mut n) };
    assert_eq!(s, LOCKSTEP_ERR_UNSUPPORTED);
    assert_eq!(
        last_error(),
        "the autopilot does not list its parameters (an ABI-3 library, or one without \
         lockstep_autopilot_param_count and lockstep_autopilot_param_info)"
    );
    // SAFETY: the handle, freed once.
    assert_eq!(unsafe { lockstep_sim_free(sim) }, LOCKSTEP_OK);
}
