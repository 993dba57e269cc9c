//! `lockstep predict` and `lockstep fit` refuse what cannot be replayed,
//! each with the exact reason: the two real PX4 logs of
//! `tests/data/flight-logs` (an AUAV-X2.1 never armed, a CubeOrange VTOL
//! on the ground), a log cut short, a file that is not a ULog, a missing
//! one, a bad mass. The fit itself is checked against a known airframe
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
