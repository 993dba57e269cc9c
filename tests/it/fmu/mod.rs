//! The FMI 2.0 FMU: packaged by `lockstep fmu`, unpacked, and driven by a
//! minimal co-simulation master written here (FMI's C calls through
//! libloading). CI also checks it with FMPy (.ci/fmu-check.py).

use std::ffi::{c_int, c_void};
use std::path::Path;
use std::process::Command;

use lockstep_abi::Isolation;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;

use crate::common::{BUNDLED, LOCKSTEP, SINGLE_INSTANCE, TempDir};

mod contract;
pub(crate) mod master;

use master::{Component, Fmu, description, fmu_library, package, root};

const TRUTH: [&str; 13] = [
    "north_m",
    "east_m",
    "down_m",
    "v_north_mps",
    "v_east_mps",
    "v_down_mps",
    "q_w",
    "q_x",
    "q_y",
    "q_z",
    "p_radps",
    "q_radps",
    "r_radps",
];

#[test]
fn the_fmu_flies_the_rust_apis_flight_bit_for_bit() {
    let dir = TempDir::new("fmu-flight");
    let scenario = root().join("examples/scenarios/square.toml");
    let unpacked = package(&dir, &scenario, BUNDLED);
    let (guid, xml, vr) = description(&unpacked);
    assert!(xml.contains(r#"canBeInstantiatedOnlyOncePerProcess="false""#));
    let truth: Vec<u32> = TRUTH.iter().map(|n| vr[&format!("truth_{n}")]).collect();
    let fmu = Fmu::load(&unpacked);
    // Every one of FMI 2.0's 34 co-simulation functions is exported.
    for name in lockstep_fmu::FMI2_FUNCTIONS {
        // SAFETY: only looked up, not called.
        let found = unsafe { fmu.lib.get::<*const c_void>(name.as_bytes()) }.is_ok();
        assert!(found, "{name}");
    }
    assert!(
        fmu.instantiate(&unpacked, "{wrong}").is_null(),
        "a wrong GUID is refused"
    );

    let c = fmu.instantiate(&unpacked, &guid);
    assert!(!c.is_null());
    fmu.init(c);
    let s = Scenario::load(&scenario).unwrap();
    let mut e =
        Engine::with_isolation(&s, Path::new(BUNDLED), None, &Isolation::InProcess).unwrap();
    let bits = |x: &[f64]| x.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let mut compared = 0;
    for k in 0..89_999u64 {
        // FMI's doubles: the communication point as a master computes it.
        assert_eq!(fmu.step(c, k as f64 * 0.001, 0.001), 0, "step {k}");
        while e.next_time().is_some_and(|t| t.0 <= (k + 1) * 1000) {
            e.step().unwrap();
        }
        if (k + 1) % 500 == 0 {
            assert_eq!(
                bits(&fmu.reals(c, &truth)),
                bits(&e.state()[..13]),
                "t = {} ms",
                k + 1
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 179);
    // A step past the end: taken to the end, fmi2Discard, and the status
    // says where it stopped.
    assert_eq!(fmu.step(c, 89.999, 0.002), 2, "fmi2Discard");
    while e.step().unwrap().is_some() {}
    assert_eq!(
        bits(&fmu.reals(c, &truth)),
        bits(&e.state()[..13]),
        "at the end"
    );
    let last: unsafe extern "C" fn(Component, c_int, *mut f64) -> c_int =
        fmu.sym("fmi2GetRealStatus");
    let terminated: unsafe extern "C" fn(Component, c_int, *mut c_int) -> c_int =
        fmu.sym("fmi2GetBooleanStatus");
    let (mut t, mut done) = (0.0, 0);
    // SAFETY: a live component and local out-values.
    unsafe {
        assert_eq!(last(c, 2, &mut t), 0);
        assert_eq!(terminated(c, 3, &mut done), 0);
        assert_eq!(
            last(c, 0, &mut t),
            2,
            "fmi2Discard for a status it cannot give"
        );
    }
    assert_eq!((t, done), (90.0, 1));
    assert_eq!(
        fmu.step(c, 90.0, 0.001),
        2,
        "nothing left to step: fmi2Discard"
    );
    // A step that is not whole microseconds: fmi2Error, and FMI's error
    // state after it (fmi2Terminate refused, fmi2FreeInstance taken).
    assert_eq!(fmu.step(c, 90.0, 0.0000005), 3, "fmi2Error");
    assert_eq!(fmu.call("fmi2Terminate", c), 3);
    fmu.free(c);
}

#[test]
fn parameters_and_inputs_reach_the_run_and_the_log_is_joined_before_free() {
    let dir = TempDir::new("fmu-inputs");
    let scenario = root().join("examples/scenarios/square.toml");
    let unpacked = package(&dir, &scenario, BUNDLED);
    let (guid, _, vr) = description(&unpacked);
    let fmu = Fmu::load(&unpacked);
    let fly = |wind: f64, log: Option<&Path>| {
        let c = fmu.instantiate(&unpacked, &guid);
        if let Some(l) = log {
            assert_eq!(fmu.set_string(c, vr["log_path"], l.to_str().unwrap()), 0);
        }
        fmu.enter(c);
        // In initialization mode the outputs are the run's initial ones,
        // with the parameters set there.
        assert_eq!(fmu.set_real(c, vr["start_north_m"], 3.0), 0);
        assert_eq!(fmu.reals(c, &[vr["truth_north_m"]]), [3.0]);
        assert_eq!(fmu.set_real(c, vr["start_north_m"], 0.0), 0);
        assert_eq!(fmu.reals(c, &[vr["truth_north_m"]]), [0.0]);
        assert_eq!(fmu.call("fmi2ExitInitializationMode", c), 0);
        assert_eq!(fmu.set_real(c, vr["wind_offset_north_mps"], wind), 0);
        for k in 0..10_000u64 {
            assert_eq!(fmu.step(c, k as f64 * 0.001, 0.001), 0);
        }
        let x = fmu.reals(c, &[vr["truth_north_m"], vr["truth_east_m"]]);
        // A fixed parameter after initialization is refused.
        assert_eq!(fmu.set_string(c, vr["log_path"], "x.csv"), 3);
        fmu.free(c); // without fmi2Terminate: freeing ends the run
        x
    };
    let log = dir.join("fmu.csv");
    let calm = fly(0.0, Some(&log));
    let windy = fly(4.0, None);
    assert_ne!(calm, windy, "a 4 m/s wind offset moves the vehicle");
    let meta = std::fs::read_to_string(dir.join("fmu.csv.json")).unwrap();
    assert!(meta.contains("\"complete\": true"), "{meta}");
    let rows = std::fs::read_to_string(&log).unwrap().lines().count();
    assert_eq!(rows, 1 + 101, "the header, then 0 to 10 s at 10 Hz");
}

#[test]
fn a_one_instance_autopilot_makes_a_one_instance_fmu() {
    let dir = TempDir::new("fmu-single");
    let scenario = root().join("examples/scenarios/square.toml");
    let unpacked = package(&dir, &scenario, SINGLE_INSTANCE);
    let (_, xml, _) = description(&unpacked);
    assert!(xml.contains(r#"canBeInstantiatedOnlyOncePerProcess="true""#));
}

#[test]
fn packaging_errors_name_what_is_wrong() {
    let dir = TempDir::new("fmu-errors");
    let o = Command::new(LOCKSTEP)
        .args(["fmu", "examples/scenarios/square.toml", "-o"])
        .arg(dir.join("x.fmu"))
        .args(["--library", "/no/such/liblockstep_fmu.so"])
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "lockstep fmu: the FMU library /no/such/liblockstep_fmu.so does not exist: build it \
         (`cargo build --release -p lockstep-fmu` puts liblockstep_fmu.so next to lockstep) or \
         name it with --library\n"
    );
    let o = Command::new(LOCKSTEP)
        .args(["fmu", "no/such.toml", "-o"])
        .arg(dir.join("x.fmu"))
        .arg("--library")
        .arg(fmu_library())
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "lockstep fmu: cannot read scenario no/such.toml: No such file or directory (os error 2)\n"
    );
    assert!(!dir.join("x.fmu").exists());
}

/// `-o` that names an input, a directory or a place that cannot be
/// written, and a `--library` that is not an FMU's binary, are the
/// request's fault (exit 2), found before anything is written: `-o` the
/// scenario replaced the scenario by the archive, and a directory or an
/// unwritable place exited 1.
#[test]
fn an_fmu_written_over_its_scenario_or_where_it_cannot_be_is_refused() {
    let dir = TempDir::new("fmu-o");
    let scenario = crate::common::idle_scenario(dir.path(), "s.toml", 1.0, 10);
    let before = std::fs::read(&scenario).unwrap();
    let run = |out: &Path, library: &Path| {
        let o = Command::new(LOCKSTEP)
            .arg("fmu")
            .arg(&scenario)
            .arg("-o")
            .arg(out)
            .args(["--autopilot", BUNDLED])
            .arg("--library")
            .arg(library)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let lib = fmu_library();
    assert_eq!(
        run(&scenario, &lib),
        (
            Some(2),
            format!(
                "lockstep fmu: -o {} is the scenario; refusing to overwrite an input\n",
                scenario.display()
            )
        )
    );
    assert_eq!(std::fs::read(&scenario).unwrap(), before);
    assert_eq!(
        run(Path::new(BUNDLED), &lib),
        (
            Some(2),
            format!(
                "lockstep fmu: -o {BUNDLED} is the autopilot library; refusing to overwrite an input\n"
            )
        )
    );
    assert_eq!(
        run(dir.path(), &lib),
        (
            Some(2),
            format!("lockstep fmu: -o {} is a directory\n", dir.path().display())
        )
    );
    // Unwritable even for root: sysfs.
    assert_eq!(
        run(Path::new("/sys/x.fmu"), &lib),
        (
            Some(2),
            "lockstep fmu: -o /sys/x.fmu: cannot create it: Permission denied (os error 13)\n"
                .to_string()
        )
    );
    assert_eq!(
        run(&dir.join("x.fmu"), Path::new(BUNDLED)),
        (
            Some(2),
            format!(
                "lockstep fmu: the FMU library {BUNDLED} does not export FMI 2.0's functions \
                 (missing: fmi2GetTypesPlatform, fmi2GetVersion, fmi2SetDebugLogging, \
                 fmi2Instantiate, ... (34 in all)): name lockstep's FMU library \
                 (liblockstep_fmu.so) with --library\n"
            )
        )
    );
    assert_eq!(
        run(&dir.join("x.fmu"), &scenario),
        (
            Some(2),
            format!(
                "lockstep fmu: the FMU library {} is not a shared library: Unknown file magic\n",
                scenario.display()
            )
        )
    );
    // The FMU library built for another machine (ARM): its e_machine
    // patched, its exports all there.
    let mut arm = std::fs::read(&lib).unwrap();
    arm[18..20].copy_from_slice(&40u16.to_le_bytes());
    let arm_lib = dir.join("liblockstep_fmu_arm.so");
    std::fs::write(&arm_lib, arm).unwrap();
    assert_eq!(
        run(&dir.join("x.fmu"), &arm_lib),
        (
            Some(2),
            format!(
                "lockstep fmu: the FMU library {} is built for Arm, not x86-64 (the FMU's binaries/linux64)\n",
                arm_lib.display()
            )
        )
    );
    assert!(!dir.join("x.fmu").exists());
    // A full disk: the system's error, once, and the device left a device
    // (zip's own complaint on drop was glued to a message without cause).
    assert_eq!(
        run(Path::new("/dev/full"), &lib),
        (
            Some(1),
            "lockstep fmu: writing /dev/full: No space left on device (os error 28)\n".to_string()
        )
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata("/dev/full")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// A master that gives resources that are not this FMU's (here: none) is
/// told so, naming the file it could not read (it was told that its GUID
/// was wrong and that the expected one was empty).
#[test]
fn resources_that_are_missing_are_reported_as_such_not_as_a_wrong_guid() {
    let dir = TempDir::new("fmu-no-resources");
    let scenario = root().join("examples/scenarios/square.toml");
    let unpacked = package(&dir, &scenario, BUNDLED);
    std::fs::remove_dir_all(unpacked.join("resources")).unwrap();
    let system = dir.join("system.toml");
    std::fs::write(
        &system,
        format!(
            "schema_version = 1\n[cosim]\nstep_us = 4000\nduration_s = 1.0\n\
             [[participants]]\nname = \"v\"\nkind = \"fmu\"\npath = \"{}\"\n",
            unpacked.display()
        ),
    )
    .unwrap();
    let r = crate::common::lockstep(&[
        Path::new("cosim"),
        &system,
        Path::new("--out"),
        &dir.join("out"),
    ]);
    assert_ne!(r.code(), 0, "{r}");
    let guid = unpacked.join("resources/guid");
    assert!(
        r.stderr.contains(&format!(
            "are not this FMU's: cannot read {}: No such file or directory (os error 2)",
            guid.display()
        )),
        "{r}"
    );
    assert!(!r.stderr.contains("is not this FMU's ("), "{r}");
}
