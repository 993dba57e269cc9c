//! Autopilot parameters: the reference autopilot's defaults derived from the
//! airframe's config, and a scenario's `[autopilot.params]`.

use std::path::Path;

use lockstep_harness::Micros;
use lockstep_harness::engine::Engine;
use lockstep_harness::engine::autopilot_config::autopilot_config;
use lockstep_harness::inputs::scenario::{Scenario, ScenarioError};
use lockstep_plant::AircraftSpec;

#[test]
fn default_gains_follow_the_airframes_thrust_response() {
    // Rate P = clamp(0.5 / tau, 5, 25), I = P / 2, D = 0.1 tau P; yaw
    // P = clamp(0.6 P, 3, 15), I = 0.4 of it; attitude P = rate P / 3
    // (yaw at most 2.8); the rate integrator holds 1.5 x one rotor's hover
    // moment.
    let lib = crate::common::load_bundled();
    for name in ["iris", "hexa", "octa"] {
        let plant = AircraftSpec::builtin(name).unwrap().build().unwrap();
        let cfg = autopilot_config(&plant, Micros(4000));
        let tau = f64::from(cfg.rotor_time_constant_s);
        assert!(tau > 0.02 && tau < 0.06, "{name}: {tau}");
        let kp = (0.5 / tau).clamp(5.0, 25.0);
        let kp_yaw = (0.6 * kp).clamp(3.0, 15.0);
        let mut ap = lib.create(&cfg).unwrap();
        let mut get = |n: &str| f64::from(ap.param_f32(n).unwrap());
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-5 * b.abs().max(1.0);
        for (param, expect) in [
            ("MC_ROLLRATE_P", kp),
            ("MC_PITCHRATE_I", 0.5 * kp),
            ("MC_ROLLRATE_D", 0.1 * tau * kp),
            ("MC_YAWRATE_P", kp_yaw),
            ("MC_YAWRATE_I", 0.4 * kp_yaw),
            ("MC_ROLL_P", (kp / 3.0).clamp(2.0, 8.0)),
            ("MC_YAW_P", (kp_yaw / 3.0).min(2.8)),
        ] {
            let got = get(param);
            assert!(
                close(got, expect),
                "{name}: {param} = {got}, expected {expect}"
            );
        }
        let weight_per_rotor = plant.mass_kg * plant.gravity_mps2() / plant.rotors.len() as f64;
        let arm = plant
            .rotors
            .iter()
            .map(|r| r.moment_arm_m.xy().norm())
            .fold(0.0, f64::max);
        let i_min = plant.inertia_kgm2[(0, 0)].min(plant.inertia_kgm2[(1, 1)]);
        let lim = (1.5 * arm * weight_per_rotor / i_min).clamp(10.0, 100.0);
        let got = get("MC_RATE_INT_LIM");
        assert!((got / lim - 1.0).abs() < 1e-4, "{name}: {got} vs {lim}");
    }
}

fn scenario_with(params: &str) -> Result<Scenario, ScenarioError> {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml");
    let text =
        std::fs::read_to_string(&example).unwrap() + "\n[autopilot.params]\n" + params + "\n";
    Scenario::from_toml_str(&text, example)
}

fn engine_error(params: &str) -> String {
    let s = scenario_with(params).unwrap();
    Engine::new(&s, Path::new(crate::common::BUNDLED), None)
        .unwrap_err()
        .to_string()
}

#[test]
fn scenario_parameters_reach_the_autopilot_by_name_and_type() {
    let s = scenario_with(
        "MPC_XY_VEL_P = 1.25\nMC_ROLLRATE_P = 12\nMIS_YAW_TO_WP = 1\nCOM_LOW_BAT_ACT = 0.0",
    )
    .unwrap();
    let mut e = Engine::new(&s, Path::new(crate::common::BUNDLED), None).unwrap();
    let ap = e.autopilot();
    assert_eq!(ap.param_f32("MPC_XY_VEL_P").unwrap(), 1.25);
    // An integer for a float parameter, and an integral float for an
    // integer one, pass as the parameter's type.
    assert_eq!(ap.param_f32("MC_ROLLRATE_P").unwrap(), 12.0);
    assert_eq!(ap.param_i32("MIS_YAW_TO_WP").unwrap(), 1);
    assert_eq!(ap.param_i32("COM_LOW_BAT_ACT").unwrap(), 0);
}

#[test]
fn bad_scenario_parameters_are_errors_naming_the_key() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/scenarios/square.toml")
        .display()
        .to_string();
    assert_eq!(
        engine_error("MPC_NOPE = 1.0"),
        format!(
            "scenario {file}: key `autopilot.params.MPC_NOPE`: parameter MPC_NOPE: not found \
             (status -6): unknown parameter MPC_NOPE"
        )
    );
    assert_eq!(
        engine_error("MPC_TILTMAX_AIR = 95.0"),
        format!(
            "scenario {file}: key `autopilot.params.MPC_TILTMAX_AIR`: parameter \
             MPC_TILTMAX_AIR: invalid argument (status -2): parameter MPC_TILTMAX_AIR = 95 is \
             outside [5, 85]"
        )
    );
    assert_eq!(
        engine_error("MIS_YAW_TO_WP = 0.5"),
        format!(
            "scenario {file}: key `autopilot.params.MIS_YAW_TO_WP`: parameter \
             MIS_YAW_TO_WP: wrong type (status -7): parameter MIS_YAW_TO_WP is an int32"
        )
    );
    // An integral float passes as an int32 only below 2e9 (where f32 -> i32
    // is exact and in range); above, the autopilot's type error stands.
    assert_eq!(
        engine_error("MIS_YAW_TO_WP = 3.0e9"),
        format!(
            "scenario {file}: key `autopilot.params.MIS_YAW_TO_WP`: parameter \
             MIS_YAW_TO_WP: wrong type (status -7): parameter MIS_YAW_TO_WP is an int32"
        )
    );
    assert_eq!(
        engine_error("MIS_YAW_TO_WP = 1.0e9"),
        format!(
            "scenario {file}: key `autopilot.params.MIS_YAW_TO_WP`: parameter \
             MIS_YAW_TO_WP: invalid argument (status -2): parameter MIS_YAW_TO_WP = \
             1000000000 is outside [0, 1]"
        )
    );
    for (params, expect) in [
        (
            "MPC_XY_P = \"fast\"",
            ":36:1: key `autopilot.params.MPC_XY_P`: must be a number, found string",
        ),
        (
            "MPC_XY_P = 1e40",
            ":36:1: key `autopilot.params.MPC_XY_P`: must be a finite float32, is 1e40",
        ),
        (
            "MPC_XY_P = nan",
            ":36:1: key `autopilot.params.MPC_XY_P`: must be a finite float32, is NaN",
        ),
        (
            "MIS_YAW_TO_WP = 3000000000",
            ":36:1: key `autopilot.params.MIS_YAW_TO_WP`: 3000000000 is outside the int32 range",
        ),
        (
            "\"\" = 1",
            ":36:1: key `autopilot.params.`: is not a parameter name",
        ),
    ] {
        assert_eq!(
            scenario_with(params).unwrap_err().to_string(),
            format!("{file}{expect}"),
            "{params}"
        );
    }
}
