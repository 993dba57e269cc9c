//! ABI 4 and the older version the harness still loads: the reference
//! autopilot built against the ABI-3 header (build.rs) loads, flies the
//! example flight bit for bit as the ABI-4 build does, lists no parameters
//! and refuses a takeoff height with the scenario key named; the ABI-4
//! build lists its whole parameter table (values and defaults) and climbs
//! to the height a takeoff asks for, then holds there.

use std::path::Path;

use lockstep_abi::{AutopilotLibrary, Isolation, ParamKind};
use lockstep_harness::Micros;
use lockstep_harness::engine::Engine;
use lockstep_harness::engine::autopilot_config::autopilot_config;
use lockstep_plant::AircraftSpec;

use crate::common::{BUNDLED, example_scenario, lockstep};

const ABI3: &str = lockstep_c_examples::ABI3_AUTOPILOT;

fn iris_config() -> lockstep_abi::ffi::lockstep_autopilot_config {
    let plant = AircraftSpec::builtin("iris").unwrap().build().unwrap();
    autopilot_config(&plant, Micros(4000))
}

#[test]
fn an_abi_3_library_loads_and_has_no_parameter_table() {
    let lib = AutopilotLibrary::load(ABI3).unwrap();
    assert_eq!(lib.abi_version(), 3);
    let mut ap = lib.create(&iris_config()).unwrap();
    assert_eq!(ap.abi_version(), 3);
    assert!(ap.params().unwrap().is_none());
    // Isolated too (the host reports the version).
    let mut iso = lockstep_abi::Autopilot::open(
        Path::new(ABI3),
        &iris_config(),
        &Isolation::Process(lockstep_abi::IsolationOptions::default()),
    )
    .unwrap();
    assert_eq!(iso.abi_version(), 3);
    assert!(iso.params().unwrap().is_none());
}

#[test]
fn an_abi_3_library_flies_the_example_bit_for_bit_as_the_abi_4_build() {
    let s = example_scenario(&[("duration_s = 90.0", "duration_s = 30.0")]);
    let fly = |lib: &str| {
        let mut e = Engine::new(&s, Path::new(lib), None).unwrap();
        let summary = e.run().unwrap();
        (
            e.state().iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            summary.boundaries,
        )
    };
    assert_eq!(fly(ABI3), fly(BUNDLED));
}

#[test]
fn a_takeoff_height_is_refused_for_an_abi_3_library_with_its_key() {
    let s = example_scenario(&[(
        "action = \"arm\"",
        "action = \"arm\"\n\n[[events]]\nat_s = 2.0\naction = \"takeoff\"\nheight_m = 6.0",
    )]);
    let e = Engine::new(&s, Path::new(ABI3), None).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "scenario {}: key `events[1].height_m`: the autopilot implements ABI version 3, which has no \
             takeoff height (ABI 4 has); leave it out to take off to the autopilot's own height",
            s.file.display()
        )
    );
}

#[test]
fn check_lib_says_an_abi_3_library_is_usable_without_a_table_and_lists_the_references() {
    let r = lockstep(&["check-lib", ABI3]);
    assert_eq!(r.code(), 0, "{}", r.summary());
    assert!(
        r.stdout.contains(
            "abi version   3 (harness 4): ok, an older version (no takeoff height, no parameter enumeration)"
        ),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(
            "parameters    not enumerated (no lockstep_autopilot_param_count/param_info, ABI 4)"
        ),
        "{}",
        r.stdout
    );
    let r = lockstep(&["check-lib", BUNDLED]);
    assert_eq!(r.code(), 0, "{}", r.summary());
    assert!(
        r.stdout
            .contains("parameters    44 (defaults of an instance for the built-in iris at 250 Hz)"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  MPC_XY_CRUISE     f32  5\n"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("  COM_LOW_BAT_ACT   i32  1\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_reference_lists_every_parameter_with_its_value_and_default() {
    let lib = crate::common::load_bundled();
    let mut ap = lib.create(&iris_config()).unwrap();
    ap.set_param_f32("MPC_XY_P", 1.5).unwrap();
    ap.set_param_i32("MIS_YAW_TO_WP", 1).unwrap();
    let table = ap.params().unwrap().expect("ABI 4: enumerated");
    assert_eq!(table.len(), 44);
    let get = |n: &str| table.iter().find(|p| p.name == n).unwrap().param;
    let xy = get("MPC_XY_P");
    assert_eq!(
        (xy.kind, xy.value, xy.default),
        (ParamKind::F32, 1.5, f64::from(0.95f32))
    );
    let yaw = get("MIS_YAW_TO_WP");
    assert_eq!(
        (yaw.kind, yaw.value, yaw.default),
        (ParamKind::I32, 1.0, 0.0)
    );
    let cruise = get("MPC_XY_CRUISE");
    assert_eq!((cruise.value, cruise.default), (5.0, 5.0));
    assert_eq!(get("MPC_XY_VEL_MAX").default, 12.0);
    // Every listed name reads back by name in its type.
    for p in &table {
        match p.param.kind {
            ParamKind::F32 => assert_eq!(f64::from(ap.param_f32(&p.name).unwrap()), p.param.value),
            ParamKind::I32 => assert_eq!(f64::from(ap.param_i32(&p.name).unwrap()), p.param.value),
        }
    }
}

/// The example with only an arm and a takeoff (no mission start), for `s`
/// seconds.
fn takeoff_flight(height: Option<f64>, seconds: u32) -> Vec<f64> {
    let takeoff = match height {
        Some(h) => format!("action = \"takeoff\"\nheight_m = {h}"),
        None => "action = \"takeoff\"".to_string(),
    };
    let s = example_scenario(&[
        ("duration_s = 90.0", &format!("duration_s = {seconds}.0")),
        ("action = \"mission_start\"", &takeoff),
    ]);
    let mut e = Engine::new(&s, Path::new(BUNDLED), None).unwrap();
    e.run().unwrap();
    e.state().to_vec()
}

#[test]
fn a_takeoff_climbs_to_the_height_asked_and_holds_there() {
    // z is NED from the origin (the vehicle starts on the ground at 0).
    let x = takeoff_flight(Some(6.0), 25);
    assert!((x[2] + 6.0).abs() < 0.3, "z = {}", x[2]);
}

#[test]
fn a_takeoff_without_a_height_holds_at_mis_takeoff_alt_not_where_the_climb_was_judged_done() {
    // The climb ends within NAV_ACC_ALT (0.8 m) of 2.5 m; the hold that
    // follows keeps 2.5 m (it held at 1.9 m before).
    let x = takeoff_flight(None, 20);
    assert!((x[2] + 2.5).abs() < 0.25, "z = {}", x[2]);
}

#[test]
fn half_an_enumeration_is_refused_at_load() {
    let path = lockstep_c_examples::broken("partial_enumeration");
    let e =
        lockstep_abi::Autopilot::open(&path, &iris_config(), &Isolation::InProcess).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "autopilot library {} exports lockstep_autopilot_param_count but not \
             lockstep_autopilot_param_info: the parameter enumeration (param_count, param_info) \
             comes whole or not at all",
            path.display()
        )
    );
}
