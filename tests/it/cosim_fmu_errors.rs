//! FMUs the importer refuses, each with the reason, and what it tolerates.

use std::path::{Path, PathBuf};

use crate::common::{BUNDLED, TempDir};
use lockstep_cosim::Participant;
use lockstep_cosim::fmu::FmuParticipant;

const DESCRIPTION: &str = include_str!("../../c_examples/slung_load_fmu/modelDescription.xml");

/// An unpacked FMU in `dir`: `description` and `binary` as its library.
fn fmu(dir: &Path, description: &str, binary: Option<(&str, &str)>) -> PathBuf {
    std::fs::create_dir_all(dir.join("binaries/linux64")).unwrap();
    std::fs::write(dir.join("modelDescription.xml"), description).unwrap();
    if let Some((from, id)) = binary {
        std::fs::copy(from, dir.join(format!("binaries/linux64/{id}.so"))).unwrap();
    }
    dir.to_path_buf()
}

const SLUNG: &str = lockstep_c_examples::SLUNG_LOAD_FMU_BINARY;

fn load_err(path: &Path, start: &[(&str, f64)]) -> String {
    let start: Vec<(String, f64)> = start.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    FmuParticipant::load(path, "x", &start, &[]).unwrap_err()
}

#[test]
fn broken_fmus_are_refused_with_the_reason() {
    let t = TempDir::new("fmu-errors");
    // Not a zip.
    let junk = t.join("junk.fmu");
    std::fs::write(&junk, b"not a zip").unwrap();
    assert!(
        load_err(&junk, &[]).starts_with(&format!(
            "{} is not an FMU archive (a zip file): ",
            junk.display()
        )),
        "{}",
        load_err(&junk, &[])
    );
    // No description.
    let empty = t.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(load_err(&empty, &[]).starts_with(&format!(
        "{}: no readable modelDescription.xml: ",
        empty.display()
    )));
    // Model exchange only.
    let me = fmu(
        &t.join("me"),
        &DESCRIPTION.replace("<CoSimulation", "<ModelExchange"),
        Some((SLUNG, "slung_load")),
    );
    assert_eq!(
        load_err(&me, &[]),
        format!(
            "{}: modelDescription.xml: this FMU offers model exchange only; lockstep imports co-simulation FMUs",
            me.display()
        )
    );
    // No binary for this platform.
    let nobin = fmu(&t.join("nobin"), DESCRIPTION, None);
    assert_eq!(
        load_err(&nobin, &[]),
        format!(
            "{}: no binary for this platform (looked for binaries/{{linux64}}/slung_load.so)",
            nobin.display()
        )
    );
    // A library that is not an FMU (the autopilot).
    let ap = fmu(&t.join("ap"), DESCRIPTION, Some((BUNDLED, "slung_load")));
    assert_eq!(
        load_err(&ap, &[]),
        format!(
            "{}: the library does not export fmi2Instantiate (an FMI 2.0 co-simulation function)",
            ap.display()
        )
    );
    // The FMU refuses to instantiate (another guid), saying why in its log.
    let guid = fmu(
        &t.join("guid"),
        &DESCRIPTION.replace("slung-load-1}", "slung-load-2}"),
        Some((SLUNG, "slung_load")),
    );
    assert_eq!(
        load_err(&guid, &[]),
        format!(
            "{}: fmi2Instantiate returned NULL (its log: [fmi2Error] slung_load: guid mismatch: {{8f2d6c1e-3b7a-4c59-9e0d-lockstep-slung-load-2}})",
            guid.display()
        )
    );
    // A parameter the FMU refuses at initialization.
    let good = fmu(&t.join("good"), DESCRIPTION, Some((SLUNG, "slung_load")));
    assert_eq!(
        load_err(&good, &[("length_m", -1.0)]),
        "fmi2ExitInitializationMode returned fmi2Error (its log: [fmi2Error] slung_load: length_m must be positive)"
    );
    // Start values only for parameters and inputs that exist.
    assert_eq!(
        load_err(&good, &[("tether_m", 1.0)]),
        "start value for `tether_m`: the FMU has no such variable (parameters and inputs: load_mass_kg, length_m, stiffness_n_per_m, damping_ns_per_m, gravity_mps2, substep_s, vehicle_north_m, vehicle_east_m, vehicle_down_m, vehicle_vn_mps, vehicle_ve_mps, vehicle_vd_mps)"
    );
    assert_eq!(
        load_err(&good, &[("tension_n", 1.0)]),
        "start value for `tension_n`: it is a Output variable; only parameters and inputs take one"
    );
}

#[test]
fn a_slightly_invalid_description_is_read_with_notes() {
    let t = TempDir::new("fmu-tolerated");
    // No guid attribute (the FMU then refuses: its guid check), so keep the
    // guid and drop an input's start value and add a String output.
    let text = DESCRIPTION
        .replace(
            r#"<Real unit="m" start="0.0"/></ScalarVariable>
    <ScalarVariable name="vehicle_east_m""#,
            r#"<Real unit="m"/></ScalarVariable>
    <ScalarVariable name="vehicle_east_m""#,
        )
        // An Annotations element before the type element.
        .replace(
            r#"description="tether tension at the end of the last step"><Real"#,
            r#"description="tether tension at the end of the last step"><Annotations/><Real"#,
        )
        .replace(
            "</ModelVariables>",
            r#"<ScalarVariable name="label" valueReference="99" causality="output"><String/></ScalarVariable></ModelVariables>"#,
        );
    let dir = fmu(&t.join("fmu"), &text, Some((SLUNG, "slung_load")));
    let p = FmuParticipant::load(&dir, "x", &[], &[]).unwrap();
    assert_eq!(
        p.notices(),
        [
            "input `vehicle_north_m` has no start value (FMI 2.0 requires one): it starts at 0",
            "variable `label` is a String: lockstep exchanges numbers only, left out",
        ]
    );
    assert_eq!(p.outputs().len(), 10);
    assert_eq!(p.outputs()[9].name, "tension_n");
    assert_eq!(p.inputs().len(), 6);
}

#[test]
fn after_a_step_returns_fmi2error_only_fmi2freeinstance_is_called() {
    // An infinite attachment point: the load's state is no longer finite.
    // The slung load refuses fmi2Terminate after an fmi2Error, as FMI 2.0
    // would have it: finishing calls only fmi2FreeInstance, and the
    // participant's report (its log included) survives.
    let t = TempDir::new("fmu-error-state");
    let good = fmu(&t.join("good"), DESCRIPTION, Some((SLUNG, "slung_load")));
    let mut p = FmuParticipant::load(&good, "x", &[], &[]).unwrap();
    let down = p
        .inputs()
        .iter()
        .position(|v| v.name == "vehicle_down_m")
        .unwrap();
    p.step(lockstep_harness::Micros(0), lockstep_harness::Micros(4000))
        .unwrap();
    p.set_input(down, &[f64::INFINITY]).unwrap();
    let e = p
        .step(
            lockstep_harness::Micros(4000),
            lockstep_harness::Micros(4000),
        )
        .unwrap_err();
    assert_eq!(
        e.0,
        "fmi2DoStep returned fmi2Error (its log: [fmi2Error] slung_load: the load's state is no longer finite at t = 0.008 s)"
    );
    let lockstep_cosim::ParticipantReport::Fmu(report) = p.finish().unwrap() else {
        panic!("an FMU's report");
    };
    assert_eq!(report.steps, 1);
    assert_eq!(
        report.log,
        ["[fmi2Error] slung_load: the load's state is no longer finite at t = 0.008 s"]
    );
}

#[test]
fn a_description_in_latin_1_is_read_with_a_note() {
    let t = TempDir::new("fmu-latin-1");
    let dir = fmu(&t.join("fmu"), DESCRIPTION, Some((SLUNG, "slung_load")));
    // "café" in ISO-8859-1: é is the one byte 0xE9.
    let mut bytes = Vec::new();
    let (before, after) = DESCRIPTION.split_once("tether tension").unwrap();
    bytes.extend_from_slice(before.as_bytes());
    bytes.extend_from_slice(b"tether tension (caf\xe9)");
    bytes.extend_from_slice(after.as_bytes());
    std::fs::write(dir.join("modelDescription.xml"), &bytes).unwrap();
    let at = before.len() + "tether tension (caf".len();
    let p = FmuParticipant::load(&dir, "x", &[], &[]).unwrap();
    assert_eq!(
        p.notices(),
        [format!(
            "modelDescription.xml is not UTF-8 (FMI 2.0 requires it; first stray byte at offset {at}): read with U+FFFD in place of such bytes"
        )]
    );
    let tension = p
        .outputs()
        .into_iter()
        .find(|v| v.name == "tension_n")
        .unwrap();
    assert!(
        tension.description.contains("(caf\u{fffd})"),
        "{}",
        tension.description
    );
}
