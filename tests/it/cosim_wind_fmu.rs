//! A wind field from an FMU written in Python (examples/cosim/wind_fmu,
//! built with pythonfmu from PyPI): the wind the Iris flies in is the power
//! law at the height it reported, and it holds its hover leaning into the
//! wind. Needs python3 with pythonfmu and a shared libpython: `.ci/run`
//! installs pythonfmu and runs it (`cargo test --test cosim_wind_fmu --
//! --ignored`).

use crate::common::{BUNDLED, TempDir, examples};
use lockstep_abi::Isolation;
use lockstep_cosim::assemble::{AssembleOptions, assemble};
use lockstep_cosim::file::{FileMode, SystemFile};
use lockstep_harness::Micros;
use lockstep_harness::engine::RunOptions;

/// Builds examples/cosim/wind_fmu into `dir`/WindShear.fmu.
fn build(dir: &TempDir) {
    let built = std::process::Command::new("python3")
        .args(["-m", "pythonfmu", "build", "-f"])
        .arg(examples().join("cosim/wind_fmu/wind_shear.py"))
        .arg("--dest")
        .arg(dir.path())
        .output()
        .expect("run python3 -m pythonfmu");
    assert!(
        built.status.success(),
        "pythonfmu build failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
}

#[test]
#[ignore = "needs python3 with pythonfmu (pip install pythonfmu); .ci/run runs it"]
fn an_unpacked_fmu_named_by_a_relative_path_finds_its_resources() {
    // An unpacked FMU named relative to a system file named relative to the
    // working directory: pythonfmu's binary loads its Python script from
    // the resources directory it is given as a file:// URI (made absolute:
    // cosim's unit test `a_resource_uri_is_absolute_and_percent_encoded`).
    let dir = TempDir::new("cosim-wind-unpacked");
    build(&dir);
    let unpacked = std::process::Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(dir.join("WindShear.fmu"))
        .arg(dir.join("sys/WindShear"))
        .output()
        .unwrap();
    assert!(unpacked.status.success(), "{unpacked:?}");
    std::fs::write(
        dir.join("sys/wind.toml"),
        r#"schema_version = 1
[cosim]
step_us = 20000
duration_s = 0.1
record = ["wind.wind_east_mps"]
[[participants]]
name = "wind"
kind = "fmu"
path = "WindShear"
preload = ["python"]
start = { speed_ref_mps = 6.0, height_ref_m = 10.0, exponent = 0.5, towards_deg = 90.0, down_m = -40.0 }
"#,
    )
    .unwrap();
    let ran = crate::common::ran(
        std::process::Command::new(crate::common::LOCKSTEP)
            .current_dir(dir.path())
            .args(["cosim", "sys/wind.toml", "-q", "-o", "out"]),
    );
    assert_eq!(ran.code(), 0, "{}", ran.summary());
    let record = std::fs::read_to_string(dir.join("out/cosim.csv")).unwrap();
    // At 40 m, 6 m/s * (40 / 10)^0.5 = 12 m/s, blowing east (from the
    // first step on: the FMU's outputs start at 0).
    let last = record.lines().last().unwrap();
    assert_eq!(last, "100000,12.0", "{record}");
}

#[test]
#[ignore = "needs python3 with pythonfmu (pip install pythonfmu); .ci/run runs it"]
fn an_iris_flies_in_the_power_law_wind_of_a_python_fmu() {
    let dir = TempDir::new("cosim-wind");
    build(&dir);
    let system = std::fs::read_to_string(examples().join("cosim/wind_shear.toml"))
        .unwrap()
        .replace(
            "wind_fmu/WindShear.fmu",
            dir.join("WindShear.fmu").to_str().unwrap(),
        )
        .replace(
            "\"vehicle.toml\"",
            &format!("{:?}", examples().join("cosim/vehicle.toml")),
        );
    let sf = SystemFile::from_toml_str(&system, dir.join("wind_shear.toml")).unwrap();
    let mut c = assemble(
        &sf,
        &AssembleOptions {
            run: RunOptions {
                threads: Some(2),
                ..RunOptions::new(BUNDLED, Isolation::InProcess)
            },
            mode: Some(FileMode::Parallel),
            bundled_fmu: None,
            taken: Vec::new(),
        },
    )
    .unwrap();
    let pos = c.find_output("iris.position_ned_m").unwrap();
    let q = c.find_output("iris.attitude_q").unwrap();
    let wind = c.find_output("wind.wind_east_mps").unwrap();
    let felt = c.find_output("iris.wind_ned_mps").unwrap();
    let fmu_period = Micros(20_000);
    let mut heights = vec![(Micros::ZERO, -c.output(pos)[2])];
    let mut checked = 0;
    c.run_until(sf.duration, |c| {
        let t = c.now();
        heights.push((t, -c.output(pos)[2]));
        if t.is_multiple_of(fmu_period) && t >= Micros(2_000_000) {
            // The FMU stepped [t - 20 ms, t] on the height published at
            // t - 20 ms: its wind is the power law there.
            let sent = Micros(t.0 - fmu_period.0);
            let h = heights.iter().find(|(s, _)| *s == sent).unwrap().1;
            let want = 6.0 * (h / 10.0).powf(0.142857142857);
            let got = c.output(wind)[0];
            assert!(
                (got - want).abs() <= 1e-12 * want,
                "at {t}: {got} m/s at {h} m, power law {want}"
            );
            checked += 1;
        }
        if t >= Micros(15_000_000) {
            // Hovering over home in 6 m/s of wind, blowing east, which it
            // feels as it is.
            let p = c.output(pos);
            assert!(
                p[1].abs() < 1.0 && (p[2] + 10.0).abs() < 0.5,
                "{p:?} at {t}"
            );
            let w = c.output(felt);
            assert!((w[1] - 6.0).abs() < 0.1 && w[0].abs() < 1e-9, "{w:?}");
            // Leaning into the wind: the thrust axis (body -z in NED, minus
            // the third column of the rotation) points west of vertical:
            // its east part is negative.
            let q = c.output(q);
            let up_east = -2.0 * (q[2] * q[3] - q[0] * q[1]);
            assert!(up_east < -0.1, "thrust axis east part {up_east} at {t}");
        }
        Ok(())
    })
    .unwrap();
    assert!(checked > 1000, "{checked}");
    let report = c.finish().unwrap();
    let lockstep_cosim::ParticipantReport::Fmu(wind) = &report[1].1 else {
        panic!("an FMU's report");
    };
    assert_eq!(wind.steps, 2000);
}
