//! `fly --ulog`: the ULog written as the run flies, read back with pyulog
//! (PyPI; CI installs it) and its command-line tools `ulog_info`,
//! `ulog_params` and `ulog_messages`: PX4's topic names, the log's values,
//! the status and landing state, the sensor samples, the parameters and
//! their changes, the timeline as logged messages, the info fields.
//!
//! The tests that read with pyulog are ignored by the README's test command
//! (a fresh machine has no pyulog); `.ci/run` installs it and runs them
//! (`cargo test --test it -- --ignored ulog_export::`).

use std::path::Path;

use crate::common::*;

/// Every topic of a ULog as pyulog reads it: {topic: {field: [values]}},
/// with its info, initial and changed parameters and logged messages.
fn read_ulog(ulog: &Path) -> serde_json::Value {
    let script = r#"
import json, sys
from pyulog import ULog
u = ULog(sys.argv[1])
out = {"info": u.msg_info_dict, "topics": {}, "params": u.initial_parameters,
       "defaults": u.get_default_parameters(0) if u.has_default_parameters else {},
       "config_defaults": u.get_default_parameters(1) if u.has_default_parameters else {},
       "changed": [[t, n, v] for t, n, v in u.changed_parameters],
       "messages": [[m.timestamp, m.log_level_str(), m.message] for m in u.logged_messages]}
for d in u.data_list:
    out["topics"][d.name] = {k: [None if x != x else float(x) for x in v] for k, v in d.data.items()}
print(json.dumps(out))
"#;
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(ulog)
        .output()
        .expect("python3 runs (CI installs pyulog with pip)");
    assert!(
        py.status.success(),
        "pyulog failed (pip install pyulog): {}",
        String::from_utf8_lossy(&py.stderr)
    );
    serde_json::from_slice(&py.stdout).unwrap()
}

/// A pyulog tool's output.
fn tool(name: &str, ulog: &Path) -> String {
    let out = std::process::Command::new(name)
        .arg(ulog)
        .output()
        .unwrap_or_else(|e| panic!("{name} runs (pip install pyulog): {e}"));
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

const TOPICS: [&str; 17] = [
    "actuator_motors",
    "actuator_outputs",
    "battery_status",
    "sensor_baro",
    "sensor_combined",
    "vehicle_angular_velocity",
    "vehicle_attitude",
    "vehicle_attitude_groundtruth",
    "vehicle_global_position",
    "vehicle_gps_position",
    "vehicle_land_detected",
    "vehicle_local_position",
    "vehicle_local_position_groundtruth",
    "vehicle_local_position_setpoint",
    "vehicle_magnetometer",
    "vehicle_status",
    "wind",
];

#[test]
#[ignore = "needs pyulog (pip install pyulog); .ci/run runs it"]
fn ulog_alone_is_written_as_the_run_flies_and_pyulogs_tools_read_it() {
    let dir = TempDir::new("ulog-alone");
    let ulog = dir.join("f.ulg");
    let r = lockstep(&[
        "fly",
        "--ulog",
        ulog.to_str().unwrap(),
        "--param",
        "MPC_XY_VEL_P=1.5",
        "--json",
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(report["ulog"], ulog.display().to_string());
    let info = tool("ulog_info", &ulog);
    for line in [
        " sys_name: lockstep",
        " ver_hw: iris",
        &format!(" ver_sw: {}", env!("CARGO_PKG_VERSION")),
    ] {
        assert!(info.contains(&format!("{line}\n")), "{line}\n{info}");
    }
    let uuid = info
        .lines()
        .find_map(|l| l.strip_prefix(" sys_uuid: "))
        .unwrap();
    assert_eq!(uuid.len(), 32, "{uuid}");
    for t in TOPICS {
        assert!(info.contains(&format!("\n {t} (0, ")), "{t}\n{info}");
    }
    // The autopilot's whole table (ABI 4's enumeration), as set.
    let params = tool("ulog_params", &ulog);
    assert_eq!(params.lines().count(), 44, "{params}");
    assert!(params.lines().any(|l| l == "MPC_XY_VEL_P,1.5"), "{params}");
    // The timeline, message for message.
    let messages = tool("ulog_messages", &ulog);
    let want: Vec<String> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let us = e["time_us"].as_u64().unwrap();
            let level = match e["kind"].as_str().unwrap() {
                "crash" => "ERROR",
                "failsafe" => "WARNING",
                _ => "INFO",
            };
            format!(
                "0:00:{:02}.{:03} {level}: {}: {}",
                us / 1_000_000,
                us % 1_000_000 / 1000,
                e["kind"].as_str().unwrap(),
                e["what"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(messages.lines().collect::<Vec<_>>(), want);
    // The same run, the same bytes (the run's id included).
    let again = dir.join("g.ulg");
    let r = lockstep(&[
        "fly",
        "--ulog",
        again.to_str().unwrap(),
        "--param",
        "MPC_XY_VEL_P=1.5",
        "-q",
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert_eq!(
        std::fs::read(&ulog).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
#[ignore = "needs pyulog (pip install pyulog); .ci/run runs it"]
fn the_ulog_holds_the_logs_values_the_status_and_the_sensor_samples() {
    let dir = TempDir::new("ulog");
    let (log, ulog) = (dir.join("f.csv"), dir.join("f.ulg"));
    let r = lockstep(&[
        "fly",
        "--duration",
        "60",
        "--log",
        log.to_str().unwrap(),
        "--ulog",
        ulog.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    assert!(
        r.stdout
            .contains(&format!("\nulog          {}\n", ulog.display())),
        "{r}"
    );
    let j = read_ulog(&ulog);
    assert_eq!(j["info"]["sys_name"], "lockstep");
    let topics = j["topics"].as_object().unwrap();
    let mut names: Vec<&str> = topics.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(names, TOPICS);
    let l = Log::read(&log);
    let col = |name: &str| -> Vec<f64> {
        let c = l.columns.iter().position(|h| h == name).unwrap();
        l.rows.iter().map(|r| r[c].parse().unwrap()).collect()
    };
    let series = |topic: &str, field: &str| -> Vec<f64> {
        topics[topic][field]
            .as_array()
            .unwrap_or_else(|| panic!("{topic}.{field}"))
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect()
    };
    let times: Vec<f64> = l.times_us().iter().map(|&t| t as f64).collect();
    assert_eq!(times.len(), 601);
    for topic in [
        "actuator_motors",
        "actuator_outputs",
        "battery_status",
        "vehicle_global_position",
        "vehicle_local_position",
        "vehicle_local_position_groundtruth",
        "vehicle_local_position_setpoint",
        "wind",
    ] {
        assert_eq!(series(topic, "timestamp"), times, "{topic}");
    }
    // Doubles exactly, floats as f32.
    assert_eq!(series("vehicle_global_position", "lat"), col("lat_deg"));
    let as_f32 = |v: Vec<f64>| v.into_iter().map(|x| x as f32 as f64).collect::<Vec<_>>();
    assert_eq!(
        series("vehicle_local_position_groundtruth", "z"),
        as_f32(col("z_m"))
    );
    assert_eq!(
        series("vehicle_local_position", "x"),
        as_f32(col("est_x_m"))
    );
    assert_eq!(
        series("battery_status", "voltage_v"),
        as_f32(col("battery0_v"))
    );
    assert_eq!(
        series("actuator_motors", "control[3]"),
        as_f32(col("motor3"))
    );
    assert!(
        series("actuator_motors", "control[4]")
            .iter()
            .all(|v| v.is_nan())
    );
    let pwm: Vec<f64> = col("motor2")
        .iter()
        .map(|m| (1000.0 + 1000.0 * (*m as f32 as f64)) as f32 as f64)
        .collect();
    assert_eq!(series("actuator_outputs", "output[2]"), pwm);
    assert!(
        series("actuator_outputs", "noutputs")
            .iter()
            .all(|n| *n == 4.0)
    );
    // The status at each change of arming or PX4's nav_state for the
    // log's mode (2 armed; 4 hold for disarmed and idle, 17 takeoff, 3
    // mission, 18 land and landed).
    let nav = |m: f64| match m as u32 {
        1 | 2 | 5 => 4.0,
        3 => 17.0,
        4 => 3.0,
        6 => 5.0,
        7 | 8 => 18.0,
        9 => 14.0,
        _ => 0.0,
    };
    let (mode, armed) = (col("mode"), col("armed"));
    let mut changes = vec![];
    for i in 0..mode.len() {
        if i == 0 || nav(mode[i]) != nav(mode[i - 1]) || armed[i] != armed[i - 1] {
            changes.push(times[i]);
        }
    }
    assert_eq!(series("vehicle_status", "timestamp"), changes);
    assert_eq!(
        series("vehicle_status", "arming_state"),
        [1.0, 2.0, 2.0, 2.0, 2.0, 1.0]
    );
    assert_eq!(
        series("vehicle_status", "nav_state"),
        [4.0, 4.0, 17.0, 3.0, 18.0, 4.0]
    );
    // On the ground at the start and the end, flying between.
    let landed = series("vehicle_land_detected", "landed");
    assert_eq!(landed.first(), Some(&1.0));
    assert_eq!(landed.last(), Some(&1.0));
    assert!(landed.contains(&0.0));
    // Each IMU sample once (250 Hz), baro and mag at 50 Hz, GPS at 5 Hz:
    // the scenario's cadences, stamped with the samples' times.
    let imu = series("sensor_combined", "timestamp");
    assert_eq!(imu.len(), 60 * 250);
    assert!(imu.windows(2).all(|w| w[1] - w[0] == 4000.0));
    assert_eq!(series("sensor_baro", "timestamp").len(), 60 * 50);
    assert_eq!(series("vehicle_magnetometer", "timestamp").len(), 60 * 50);
    assert_eq!(series("vehicle_gps_position", "timestamp").len(), 60 * 5);
    // At rest before arming: the accelerometer reads about -g down, the
    // barometer about the ISA pressure at 488 m, the GPS Zurich.
    let az = series("sensor_combined", "accelerometer_m_s2[2]");
    assert!((az[10] + 9.80665).abs() < 0.5, "{}", az[10]);
    let p = series("sensor_baro", "pressure");
    assert!((p[5] - 95_500.0).abs() < 500.0, "{}", p[5]);
    let lat = series("vehicle_gps_position", "lat");
    assert!((lat[2] - 473_977_420.0).abs() < 100.0, "{}", lat[2]);
}

/// A parameter a ground station sets during the flight is a changed
/// parameter at that time.
#[test]
#[ignore = "needs pyulog (pip install pyulog); .ci/run runs it"]
fn parameter_changes_during_the_flight_are_recorded() {
    use lockstep_harness::engine::Engine;
    use lockstep_harness::inputs::scenario::Scenario;
    use lockstep_harness::io::ulog::Param;
    let dir = TempDir::new("ulog-params");
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml");
    let text =
        std::fs::read_to_string(&example).unwrap() + "\n[autopilot.params]\nMPC_XY_VEL_P = 1.25\n";
    let s = Scenario::from_toml_str(&text, &example).unwrap();
    let mut e = Engine::new(&s, std::path::Path::new(BUNDLED), None).unwrap();
    let ulog = dir.join("p.ulg");
    e.ulog_to(&ulog, &s.autopilot_params, "test").unwrap();
    while e.now().0 < 3_000_000 {
        e.step().unwrap();
    }
    e.set_param("MPC_XY_VEL_P", Param::Float(2.5)).unwrap();
    let refused = e.set_param("NO_SUCH_PARAM", Param::Float(1.0));
    assert!(refused.is_err());
    e.finish(Ok(())).unwrap();
    let j = read_ulog(&ulog);
    assert_eq!(j["params"]["MPC_XY_VEL_P"], 1.25);
    assert_eq!(
        j["changed"],
        serde_json::json!([[3_000_000, "MPC_XY_VEL_P", 2.5]])
    );
    assert_eq!(j["info"]["sys_uuid"], "test");
    // Every parameter and its default, as PX4 writes them (both the
    // system's and the configuration's default).
    assert_eq!(j["params"].as_object().unwrap().len(), 44);
    for defaults in [&j["defaults"], &j["config_defaults"]] {
        assert_eq!(defaults.as_object().unwrap().len(), 44, "{defaults}");
        assert_eq!(defaults["MPC_XY_VEL_P"], f64::from(1.8f32));
        assert_eq!(defaults["MIS_YAW_TO_WP"], 0);
    }
    assert_eq!(j["params"]["MIS_YAW_TO_WP"], 0);
}

#[test]
#[ignore = "needs pyulog (pip install pyulog); .ci/run runs it"]
fn an_abi_3_library_s_ulog_holds_the_parameters_set_and_no_defaults() {
    use lockstep_harness::engine::Engine;
    use lockstep_harness::inputs::scenario::Scenario;
    let dir = TempDir::new("ulog-params-abi3");
    let example =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml");
    let text =
        std::fs::read_to_string(&example).unwrap() + "\n[autopilot.params]\nMPC_XY_VEL_P = 1.25\n";
    let s = Scenario::from_toml_str(&text, &example).unwrap();
    let lib = std::path::Path::new(lockstep_c_examples::ABI3_AUTOPILOT);
    let mut e = Engine::new(&s, lib, None).unwrap();
    let ulog = dir.join("p.ulg");
    e.ulog_to(&ulog, &s.autopilot_params, "test").unwrap();
    while e.now().0 < 1_000_000 {
        e.step().unwrap();
    }
    e.finish(Ok(())).unwrap();
    let j = read_ulog(&ulog);
    assert_eq!(j["params"], serde_json::json!({"MPC_XY_VEL_P": 1.25}));
    assert_eq!(j["defaults"], serde_json::json!({}));
}

#[test]
fn ulog_without_a_log_cadence_is_refused() {
    let dir = TempDir::new("ulog-refused");
    let scenario = dir.join("nolog.toml");
    std::fs::write(
        &scenario,
        "schema_version = 1\n[simulation]\nseed = 1\nduration_s = 1.0\n[vehicle]\nspec = \"iris\"\n",
    )
    .unwrap();
    let r = lockstep(&[
        "fly",
        scenario.to_str().unwrap(),
        "--ulog",
        dir.join("x.ulg").to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        format!(
            "lockstep fly: --ulog writes its state topics at the `log` cadence, and {} has none \
             under [cadences] (add one, or --set cadences.log.rate_hz=100)\n",
            scenario.display()
        )
    );
}
