//! `lockstep predict` and `lockstep fit` refuse what cannot be replayed,
//! each with the exact reason: the two real PX4 logs of
//! `tests/data/flight-logs` (an AUAV-X2.1 never armed, a CubeOrange VTOL
//! on the ground), PX4 SITL's log without motor outputs, logs written here
//! without motor outputs or of fixed-wing airframes, a log cut short, a
//! file that is not a ULog, a missing one, a bad mass. The fit itself is checked against a known airframe
//! with the release binary (`tests/peers/test_fit.py`: it takes seconds
//! there, minutes in a debug build).

use std::path::PathBuf;

use crate::common::{TempDir, lockstep};

fn log(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/flight-logs")
        .join(name)
}

fn refused(args: &[&str], expected: &str) {
    let r = lockstep(args);
    assert_eq!(r.code(), 2, "{r}");
    assert_eq!(r.stderr.trim(), expected);
    assert_eq!(r.stdout, "", "nothing on standard output");
}

#[test]
fn the_real_logs_are_refused_for_what_they_are() {
    let auav = log("px4_auav_x21_quad.ulg");
    let cube = log("px4_cubeorange_19min.ulg");
    let (a, c) = (auav.to_str().unwrap(), cube.to_str().unwrap());
    // Never armed: its outputs stay at the disarmed 900 us.
    refused(
        &["fit", a, "--mass", "1.2", "--out", "x.toml"],
        &format!(
            "lockstep fit: {a}: too little flight to fit: 0 windows of 0.2 s airborne (every \
             motor above 10 % and 1 m above the log's start), at least 20 needed"
        ),
    );
    refused(
        &["predict", a],
        &format!(
            "lockstep predict: {a}: no airborne stretch to replay (every motor above 10 % and \
             1 m above the log's start, for 0.2 s at least)"
        ),
    );
    refused(
        &["predict", c],
        &format!(
            "lockstep predict: {c}: a VTOL log (MAV_TYPE 22); lockstep's plant is a multirotor"
        ),
    );
    refused(
        &["fit", c, "--mass", "12", "--out", "x.toml"],
        &format!("lockstep fit: {c}: a VTOL log (MAV_TYPE 22); lockstep's plant is a multirotor"),
    );
    // PX4 SITL, logged without its motor outputs (the px4-ulog crate's
    // fixture).
    let sitl = log("px4_sitl_no_outputs.ulg");
    let s = sitl.to_str().unwrap();
    refused(
        &["fit", s, "--mass", "1.5", "--out", "x.toml"],
        &format!(
            "lockstep fit: {s}: no motor outputs (neither actuator_outputs nor actuator_motors): \
             nothing to drive the plant with"
        ),
    );
}

#[test]
fn broken_files_are_refused_naming_the_file() {
    let dir = TempDir::new("fit_refusals");
    let whole = std::fs::read(log("px4_auav_x21_quad.ulg")).unwrap();
    let cut = dir.join("cut.ulg");
    std::fs::write(&cut, &whole[..200_000]).unwrap();
    let cut = cut.to_str().unwrap();
    refused(
        &["predict", cut],
        &format!(
            "lockstep predict: {cut}: truncated or damaged after 2.9 s of log: IO Error: the \
             file ends inside a message (truncated)"
        ),
    );
    let text = dir.join("notes.ulg");
    std::fs::write(&text, "not a log\n").unwrap();
    let text = text.to_str().unwrap();
    refused(
        &["predict", text],
        &format!(
            "lockstep predict: {text}: not a ULog file, or damaged before its first data: \
             Invalid Header"
        ),
    );
    let missing = dir.join("missing.ulg");
    let missing = missing.to_str().unwrap();
    refused(
        &["fit", missing, "--mass", "1.5", "--out", "x.toml"],
        &format!("lockstep fit: {missing}: cannot open it: No such file or directory (os error 2)"),
    );
    let a = log("px4_auav_x21_quad.ulg");
    refused(
        &["fit", a.to_str().unwrap(), "--mass", "0", "--out", "x.toml"],
        "lockstep fit: --mass 0: a mass is a positive number of kilograms",
    );
    assert!(!PathBuf::from("x.toml").exists(), "no spec written");
}

/// A ULog of a vehicle holding 5 m up for 30 s (50 Hz), written with
/// lockstep's ULog writer: `motors` adds `actuator_outputs` at 1500 us;
/// `params` and `vehicle_type` (PX4's `vehicle_status.vehicle_type`) say
/// what airframe it is.
fn synthetic(
    path: &std::path::Path,
    motors: bool,
    params: &[(&str, i32)],
    vehicle_type: Option<u8>,
) {
    use lockstep_harness::io::ulog::{Param, UlogFile};
    let mut u = UlogFile::create(path, false).unwrap();
    let topics: [(&str, &[&str]); 6] = [
        ("vehicle_attitude", &["float[4] q"]),
        ("vehicle_angular_velocity", &["float[3] xyz"]),
        (
            "sensor_combined",
            &["float[3] gyro_rad", "float[3] accelerometer_m_s2"],
        ),
        (
            "vehicle_local_position",
            &[
                "float x", "float y", "float z", "float vx", "float vy", "float vz",
            ],
        ),
        ("actuator_outputs", &["float[16] output"]),
        ("vehicle_status", &["uint8_t vehicle_type", "bool is_vtol"]),
    ];
    for (name, fields) in topics {
        let mut all = vec!["uint64_t timestamp"];
        all.extend_from_slice(fields);
        u.format(name, &all).unwrap();
    }
    for (name, v) in params {
        u.param(name, Param::Int(*v)).unwrap();
    }
    for (id, (name, _)) in topics.iter().enumerate() {
        u.subscribe(id as u16, name).unwrap();
    }
    let f32s = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    for k in 0..1500u64 {
        let t = 1_000_000 + k * 20_000;
        let z = if k < 50 { 0.0 } else { -5.0 };
        u.data(0, t, &f32s(&[1.0, 0.0, 0.0, 0.0])).unwrap();
        u.data(1, t, &f32s(&[0.0; 3])).unwrap();
        u.data(2, t, &f32s(&[0.0, 0.0, 0.0, 0.0, 0.0, -9.81]))
            .unwrap();
        u.data(3, t, &f32s(&[0.0, 0.0, z, 0.0, 0.0, 0.0])).unwrap();
        if motors {
            u.data(4, t, &f32s(&[1500.0; 16])).unwrap();
        }
        if let Some(v) = vehicle_type {
            u.data(5, t, &[v, 0]).unwrap();
        }
    }
    u.finish().unwrap();
}

#[test]
fn what_cannot_be_flown_open_loop_is_refused_for_what_it_lacks_or_is() {
    let dir = TempDir::new("fit_refusals_synthetic");
    let no_motors = dir.join("no-motors.ulg");
    synthetic(&no_motors, false, &[("MAV_TYPE", 2)], Some(1));
    let m = no_motors.to_str().unwrap();
    let lacks = format!(
        "{m}: no motor outputs (neither actuator_outputs nor actuator_motors): nothing to drive \
         the plant with"
    );
    refused(&["predict", m], &format!("lockstep predict: {lacks}"));
    refused(
        &["fit", m, "--mass", "1.5", "--out", "x.toml"],
        &format!("lockstep fit: {lacks}"),
    );
    // A fixed-wing log, told by each of the three marks PX4 leaves.
    for (name, params, vehicle_type, what) in [
        (
            "plane.ulg",
            &[("MAV_TYPE", 1)][..],
            Some(2),
            "a fixed-wing log (MAV_TYPE 1)",
        ),
        (
            "autostart.ulg",
            &[("SYS_AUTOSTART", 2100)][..],
            None,
            "a fixed-wing log (SYS_AUTOSTART 2100)",
        ),
        (
            "status.ulg",
            &[][..],
            Some(2),
            "a fixed-wing log (vehicle_status.vehicle_type 2)",
        ),
        (
            "tailsitter.ulg",
            &[("SYS_AUTOSTART", 13200)][..],
            Some(1),
            "a VTOL log (SYS_AUTOSTART 13200)",
        ),
    ] {
        let path = dir.join(name);
        synthetic(&path, true, params, vehicle_type);
        let p = path.to_str().unwrap();
        refused(
            &["fit", p, "--mass", "2", "--out", "x.toml"],
            &format!("lockstep fit: {p}: {what}; lockstep's plant is a multirotor"),
        );
    }
    // The same hover as a multirotor's is read, and replayed.
    let quad = dir.join("quad.ulg");
    synthetic(&quad, true, &[("MAV_TYPE", 2)], Some(1));
    let out = dir.join("page");
    let r = lockstep(&[
        "predict",
        quad.to_str().unwrap(),
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code(), 0, "{r}");
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        report["commands"],
        "actuator_outputs, PWM 1000..2000 us mapped to 0..1"
    );
    assert_eq!(report["page"], out.join("predict.html").to_str().unwrap());
    // The report written is the one printed.
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("predict.json")).unwrap()).unwrap();
    assert_eq!(written, report);
    // A page that cannot be written is named, with nothing on stdout.
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, "").unwrap();
    let inside = blocked.join("page");
    refused(
        &[
            "predict",
            quad.to_str().unwrap(),
            "--out",
            inside.to_str().unwrap(),
        ],
        &format!(
            "lockstep predict: cannot create {}: Not a directory (os error 20)",
            inside.display()
        ),
    );
    assert!(!PathBuf::from("x.toml").exists(), "no spec written");
}
