//! `fly --ulog`: the ULog export opens in pyulog (PyPI; CI installs it)
//! with PX4's topic names, one message per log row, and the log's values.

use crate::common::*;

#[test]
fn the_ulog_export_opens_in_pyulog_with_the_expected_topics_and_values() {
    let dir = TempDir::new("ulog");
    let (log, ulog) = (dir.join("f.csv"), dir.join("f.ulg"));
    let r = lockstep(&[
        "fly",
        "--duration",
        "12",
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
    let script = r#"
import json, sys
from pyulog import ULog
u = ULog(sys.argv[1])
out = {"info": u.msg_info_dict, "topics": {}}
for d in u.data_list:
    out["topics"][d.name] = {k: [None if x != x else float(x) for x in v] for k, v in d.data.items()}
print(json.dumps(out))
"#;
    let py = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&ulog)
        .output()
        .expect("python3 runs (CI installs pyulog with pip)");
    assert!(
        py.status.success(),
        "pyulog failed (pip install pyulog): {}",
        String::from_utf8_lossy(&py.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&py.stdout).unwrap();
    assert_eq!(j["info"]["sys_name"], "lockstep");
    let topics = j["topics"].as_object().unwrap();
    let mut names: Vec<&str> = topics.keys().map(String::as_str).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "actuator_motors",
            "battery_status",
            "vehicle_angular_velocity",
            "vehicle_attitude",
            "vehicle_attitude_groundtruth",
            "vehicle_global_position",
            "vehicle_local_position",
            "vehicle_local_position_groundtruth",
            "vehicle_local_position_setpoint",
            "wind"
        ]
    );
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
    assert_eq!(times.len(), 121);
    for topic in names {
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
    // Beyond the Iris's four rotors: NaN (PX4's "unused").
    assert!(
        series("actuator_motors", "control[4]")
            .iter()
            .all(|v| v.is_nan())
    );
}

#[test]
fn ulog_without_a_log_is_refused() {
    let r = lockstep(&["fly", "--ulog", "/tmp/x.ulg"]);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(
        r.stderr,
        "lockstep fly: --ulog needs a log: give --log or --out, and a `log` cadence under \
         [cadences] (or --set cadences.log.rate_hz=100)\n"
    );
}
