//! What a C host hands over is checked where it enters: output paths that
//! would overwrite an input or each other, and values outside the bounds
//! the scenario file has for the same quantities. Each refusal names the
//! argument and leaves the handle (and every file) as it was.

use lockstep::lockstep_status::*;
use lockstep::sim::{lockstep_sim_fault, lockstep_sim_new_from_toml};
use lockstep::*;

use super::{new_sim, options};
use crate::common::{BUNDLED, TempDir, idle_scenario};

/// `log_path` naming the scenario replaced the scenario by a CSV, and
/// `record_path` = `log_path` tore both: refused at creation, nothing
/// written.
#[test]
fn a_log_or_recording_over_an_input_or_each_other_is_refused() {
    let dir = TempDir::new("c-abi-outputs");
    let scenario = idle_scenario(dir.path(), "idle.toml", 1.0, 10);
    let before = std::fs::read(&scenario).unwrap();
    let (o, _keep) = options(std::path::Path::new(BUNDLED), 0, Some(&scenario));
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "options.log_path {} is the scenario; refusing to overwrite an input",
                scenario.display()
            )
        )
    );
    let (o, _keep) = options(
        std::path::Path::new(BUNDLED),
        0,
        Some(std::path::Path::new(BUNDLED)),
    );
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "options.log_path {BUNDLED} is the autopilot library; refusing to overwrite an input"
            )
        )
    );
    let log = dir.join("run.csv");
    let (mut o, _keep) = options(std::path::Path::new(BUNDLED), 0, Some(&log));
    o.record_path = o.log_path;
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "options.log_path and options.record_path name the same file {}",
                log.display()
            )
        )
    );
    let sidecar = super::c(&format!("{}.json", log.display()));
    o.record_path = sidecar.as_ptr();
    assert_eq!(
        new_sim(&scenario, &o).unwrap_err(),
        (
            LOCKSTEP_ERR_ARGUMENT,
            format!(
                "the log's sidecar and options.record_path name the same file {}.json",
                log.display()
            )
        )
    );
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    assert!(!log.exists());
}

/// A fault's value holds the scenario file's bounds for the same event (a
/// bias of 1e300 was taken and the run failed steps later, a state dump
/// naming nothing); a plant state's attitude must be a unit quaternion (a
/// zero one was taken).
#[test]
fn fault_values_and_plant_states_hold_the_scenarios_bounds() {
    let dir = TempDir::new("c-abi-bounds");
    let scenario = idle_scenario(dir.path(), "idle.toml", 5.0, 10);
    let (o, _keep) = options(std::path::Path::new(BUNDLED), 0, None);
    let sim = new_sim(&scenario, &o).unwrap();
    let mut f = lockstep_fault {
        size: size_of::<lockstep_fault>() as u32,
        kind: LOCKSTEP_FAULT_SENSOR_BIAS_STEP,
        index: LOCKSTEP_SENSOR_BARO,
        ..Default::default()
    };
    for (kind, value, expected) in [
        (
            LOCKSTEP_FAULT_SENSOR_BIAS_STEP,
            1e300,
            "`fault.value` 1e300 is not a valid bias (-1e6 to 1e6)",
        ),
        (
            LOCKSTEP_FAULT_SENSOR_BIAS_STEP,
            -1.5e6,
            "`fault.value` -1.5e6 is not a valid bias (-1e6 to 1e6)",
        ),
        (
            LOCKSTEP_FAULT_SENSOR_NOISE_SCALE,
            1e4,
            "`fault.value` 1e4 is not a valid noise factor (0 to 1000)",
        ),
        (
            LOCKSTEP_FAULT_SENSOR_NOISE_SCALE,
            f64::INFINITY,
            "`fault.value` inf is not a valid noise factor (0 to 1000)",
        ),
    ] {
        f.kind = kind;
        f.value = value;
        // SAFETY: a sized local struct and a live handle.
        let status = unsafe { lockstep_sim_fault(sim, &f) };
        assert_eq!(
            (status, super::last_error()),
            (LOCKSTEP_ERR_ARGUMENT, expected.into())
        );
    }
    f.kind = LOCKSTEP_FAULT_SENSOR_BIAS_STEP;
    f.value = 1e6;
    // SAFETY: as above.
    let status = unsafe { lockstep_sim_fault(sim, &f) };
    assert_eq!(status, LOCKSTEP_OK, "the bound itself");
    super::step(sim, 100).unwrap();
    assert_eq!(super::free(sim), LOCKSTEP_OK);

    let mut p = std::ptr::null_mut();
    // SAFETY: valid strings, local out-values and a 19-double state.
    unsafe {
        assert_eq!(
            lockstep::plant::lockstep_plant_new(c"iris".as_ptr(), std::ptr::null(), 0, &mut p),
            LOCKSTEP_OK
        );
        let mut x = [0.0; 19];
        let mut n = 0;
        assert_eq!(
            lockstep::plant::lockstep_plant_state(p, x.as_mut_ptr(), 19, &mut n),
            LOCKSTEP_OK
        );
        let good = x;
        x[6] = 0.0;
        assert_eq!(
            lockstep::plant::lockstep_plant_set_state(p, x.as_ptr(), 19),
            LOCKSTEP_ERR_ARGUMENT
        );
        assert_eq!(
            super::last_error(),
            "`x[6..10]`, the attitude quaternion, has norm 0: a unit quaternion is needed (within 0.000001)"
        );
        x[6] = 1.0 + 1e-5;
        assert_eq!(
            lockstep::plant::lockstep_plant_set_state(p, x.as_ptr(), 19),
            LOCKSTEP_ERR_ARGUMENT
        );
        let mut y = [0.0; 19];
        assert_eq!(
            lockstep::plant::lockstep_plant_state(p, y.as_mut_ptr(), 19, &mut n),
            LOCKSTEP_OK
        );
        assert_eq!(y, good, "a refused state leaves the plant as it was");
        assert_eq!(
            lockstep::plant::lockstep_plant_set_state(p, good.as_ptr(), 19),
            LOCKSTEP_OK
        );
        assert_eq!(lockstep::plant::lockstep_plant_free(p), LOCKSTEP_OK);
    }
}

/// `dt_us` above `LOCKSTEP_PLANT_MAX_STEP_US` (seconds taken for
/// microseconds: 2^40 us integrated for hours) is refused at once, the
/// plant unmoved and usable; the bound itself is stepped.
#[test]
fn a_plant_step_longer_than_its_bound_is_refused_at_once() {
    use lockstep::plant::{lockstep_plant_free, lockstep_plant_new, lockstep_plant_step};
    let mut p = std::ptr::null_mut();
    let now = |p| {
        let mut t = u64::MAX;
        // SAFETY: a live handle and a local out-value.
        let status = unsafe { lockstep::plant::lockstep_plant_time_us(p, &mut t) };
        assert_eq!(status, LOCKSTEP_OK);
        t
    };
    // SAFETY: valid strings and out-values; `p` is live until freed.
    unsafe {
        assert_eq!(
            lockstep_plant_new(c"iris".as_ptr(), std::ptr::null(), 0, &mut p),
            LOCKSTEP_OK
        );
        let started = std::time::Instant::now();
        for dt in [1u64 << 40, LOCKSTEP_PLANT_MAX_STEP_US + 1, u64::MAX] {
            assert_eq!(lockstep_plant_step(p, dt), LOCKSTEP_ERR_ARGUMENT, "{dt}");
            assert_eq!(
                super::last_error(),
                format!("dt_us = {dt}: one step covers at most 10000000 us (10 s); step in parts")
            );
            assert_eq!(now(p), 0);
        }
        assert!(
            started.elapsed().as_secs_f64() < 0.5,
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            lockstep_plant_step(p, LOCKSTEP_PLANT_MAX_STEP_US),
            LOCKSTEP_OK
        );
        assert_eq!(now(p), 10_000_000);
        assert_eq!(lockstep_plant_free(p), LOCKSTEP_OK);
    }
}

/// A C host is prepared by the run layer as `lockstep fly` is: a check
/// there reaches it. `options.log_path` for a scenario without a `log`
/// cadence was taken (and no log written), where `fly --log` refused it.
#[test]
fn a_log_without_a_log_cadence_is_refused_as_fly_refuses_it() {
    let dir = TempDir::new("c-abi-log-cadence");
    let with_log =
        std::fs::read_to_string(idle_scenario(dir.path(), "idle.toml", 1.0, 10)).unwrap();
    let without = with_log.replace("log = { rate_hz = 10 }\n", "");
    assert_ne!(without, with_log);
    std::fs::write(dir.join("idle-no-log.toml"), &without).unwrap();
    let text = super::c(&without);
    let log = dir.join("run.csv");
    let (o, _keep) = options(std::path::Path::new(BUNDLED), 0, Some(&log));
    let base = super::c(dir.path().to_str().unwrap());
    let mut sim = std::ptr::null_mut();
    // SAFETY: valid strings, options and out-pointer.
    let status = unsafe { lockstep_sim_new_from_toml(text.as_ptr(), base.as_ptr(), &o, &mut sim) };
    assert_eq!(status, LOCKSTEP_ERR_CONFIG);
    assert_eq!(
        super::last_error(),
        format!(
            "options.log_path given but {} has no `log` cadence under [cadences] (add one)",
            dir.join("(scenario text)").display()
        )
    );
    assert!(sim.is_null() && !log.exists());
    let r = crate::common::lockstep(&[
        "fly",
        dir.join("idle-no-log.toml").to_str().unwrap(),
        "--log",
        log.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert!(
        r.stderr.contains(&format!(
            "--log given but {} has no `log` cadence under [cadences] (add one, or --set cadences.log.rate_hz=10)",
            dir.join("idle-no-log.toml").display()
        )),
        "{r}"
    );
}
