//! Aircraft specs: built-ins, strict keys with paths, extends, validation.

use std::path::PathBuf;

use lockstep_config::{ConfigError, Problem};
use lockstep_plant::spec::BUILTIN_SPECS;
use lockstep_plant::{AircraftSpec, SpecError};

/// A fresh directory for spec files of one test.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("lockstep-spec-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn iris_text() -> String {
    AircraftSpec::builtin("iris").unwrap().to_toml_string()
}

/// The Iris spec with one line replaced (or appended when `from` is empty).
fn iris_with(from: &str, to: &str) -> Result<AircraftSpec, SpecError> {
    let text = iris_text();
    let text = if from.is_empty() {
        format!("{text}\n{to}\n")
    } else {
        assert!(text.contains(from), "{from:?} not in\n{text}");
        text.replacen(from, to, 1)
    };
    AircraftSpec::from_toml_str(&text, "test.toml")
}

fn invalid(from: &str, to: &str) -> String {
    let err = iris_with(from, to)
        .and_then(|s| s.build_named("test.toml").map(|_| s))
        .unwrap_err();
    err.to_string()
}

#[test]
fn iris_is_the_specified_airframe() {
    let s = AircraftSpec::builtin("iris").unwrap();
    // PX4 SITL iris: mass, inertia, rotor positions (FLU converted to FRD).
    assert_eq!(s.body.mass_kg, 1.5);
    assert_eq!(
        s.body.inertia_kgm2,
        [
            [0.029125, 0.0, 0.0],
            [0.0, 0.029125, 0.0],
            [0.0, 0.0, 0.055225]
        ]
    );
    let pos: Vec<[f64; 3]> = s.rotors.iter().map(|r| r.position_m).collect();
    assert_eq!(
        pos,
        [
            [0.13, 0.22, -0.023],
            [-0.13, -0.2, -0.023],
            [0.13, -0.22, -0.023],
            [-0.13, 0.2, -0.023]
        ]
    );
    assert_eq!(
        s.rotors.iter().map(|r| r.spin_dir).collect::<Vec<_>>(),
        [1, 1, -1, -1]
    );
    // APC 10x4.7 SF from the UIUC data: CT 0.1213, CP 0.0489 at hover speed.
    let p = &s.propeller;
    assert_eq!(
        (
            p.radius_m,
            p.thrust_coeff_n_s2,
            p.max_thrust_to_hover_ratio,
            p.torque_coeff_m
        ),
        (0.127, Some(1.5667e-5), None, 0.0163)
    );
    let (rho, d) = (1.225, 0.254f64);
    let ct = 1.5667e-5 * 4.0 * std::f64::consts::PI.powi(2) / (rho * d.powi(4));
    assert!((ct - 0.1213).abs() < 5e-5, "{ct}");
    let cp = 0.0163 * 2.0 * std::f64::consts::PI * ct / d;
    assert!((cp - 0.0489).abs() < 5e-5, "{cp}");
    assert_eq!(
        (p.zero_thrust_advance_ratio, p.torque_inflow_coeffs),
        (0.84, [-0.127, -1.119])
    );
    assert!(p.ground_effect, "from the base it extends");
    let m = &s.motor;
    assert_eq!(
        (
            m.kv_rpm_per_v,
            m.resistance_ohm,
            m.rotor_inertia_kgm2,
            m.no_load_current_a,
            m.current_limit_a
        ),
        (950.0, 0.16, 3.2e-5, 0.4, 20.0)
    );
    assert_eq!((s.esc.efficiency, s.esc.deadzone), (0.95, 0.02));
    let b = &s.batteries[0];
    assert_eq!(
        (b.capacity_ah, b.r0_ohm, b.r1_ohm, b.c1_f, b.voltage_floor_v),
        (5.1, 0.015, Some(0.0095), Some(3500.0), 9.0)
    );
    // Empty at 3.3 V per cell, full (rested) at 4.10 V per cell.
    let ocv = b.ocv_v.as_ref().unwrap();
    assert_eq!((ocv[0], ocv[ocv.len() - 1]), (9.9, 12.309));
    assert_eq!(s.body.linear_drag_ns_per_m, [0.327, 0.302, 0.0]);
    assert_eq!(s.body.quadratic_drag_ns2_per_m2, [0.018, 0.018, 0.05]);
    assert_eq!(s.body.angular_damping_nms_per_rad, [0.005, 0.005, 0.02]);
    assert_eq!(s.power.avionics_power_w, 5.0);
}

#[test]
fn hexa_product_of_inertia_follows_its_stated_derivation() {
    // The spec: a 0.3 kg camera 0.07 m forward of and 0.1 m below the centre
    // of mass. In FRD forward is +x and below is +z, and the tensor element
    // is I_xz = -sum m x z (the sign was wrong: +0.002).
    let (m, x, z) = (0.3, 0.07, 0.1);
    let expect = -m * x * z;
    let s = AircraftSpec::builtin("hexa").unwrap();
    let i = s.body.inertia_kgm2;
    assert!(expect < 0.0);
    assert!((i[0][2] - expect).abs() < 1e-12, "{} vs {expect}", i[0][2]);
    assert_eq!(i[2][0], i[0][2], "symmetric");
    let p = s.build().unwrap();
    assert_eq!(
        p.inertia_kgm2[(0, 2)],
        i[0][2],
        "used as the tensor element"
    );
}

#[test]
fn every_builtin_builds_and_round_trips_through_canonical_toml() {
    for (name, _) in BUILTIN_SPECS {
        if name == "multirotor-base" {
            // A partial base, only meant to be extended.
            let err = AircraftSpec::builtin(name).unwrap_err();
            assert_eq!(
                err.to_string(),
                "builtin:multirotor-base:18:2: key `propeller`: missing field `radius_m`"
            );
            continue;
        }
        let s = AircraftSpec::builtin(name).unwrap();
        let p = s.build().unwrap();
        assert_eq!(p.name, name);
        let again = AircraftSpec::from_toml_str(&s.to_toml_string(), "copy.toml").unwrap();
        assert_eq!(again, s, "{name}");
    }
    let p = AircraftSpec::builtin("octa").unwrap().build().unwrap();
    assert_eq!(
        (p.rotors.len(), p.batteries.len(), p.actuator.states()),
        (8, 2, 1)
    );
    assert_eq!(
        AircraftSpec::builtin("hexa")
            .unwrap()
            .build()
            .unwrap()
            .rotors
            .len(),
        6
    );
}

#[test]
fn calibration_gives_the_requested_multiple_of_hover_thrust() {
    // The explicit alternative to a thrust coefficient from propeller data.
    let p = iris_with(
        "thrust_coeff_n_s2 = 0.000015667",
        "max_thrust_to_hover_ratio = 2.6",
    )
    .unwrap()
    .build()
    .unwrap();
    let v = p.batteries[0].nominal_voltage_v;
    let t = p.steady_state_thrust_n(1.0, v, 1.225);
    assert!((t / p.hover_thrust_per_rotor_n() - 2.6).abs() < 1e-9, "{t}");
}

/// The file error of `err` (a spec's errors are configuration errors).
fn file(err: &SpecError) -> &ConfigError {
    err.file()
        .unwrap_or_else(|| panic!("a file error: {err:?}"))
}

/// The unknown keys of `err`, with their positions and valid keys.
fn unknown(err: &SpecError) -> Vec<(String, Option<usize>, Vec<String>)> {
    let Problem::UnknownKeys(keys) = &file(err).problem else {
        panic!("unknown keys: {err:?}")
    };
    keys.iter()
        .map(|k| (k.key.clone(), k.at.map(|p| p.line), k.valid.clone()))
        .collect()
}

#[test]
fn unknown_keys_are_errors_naming_every_key_path_and_the_valid_keys() {
    let err = iris_with("kv_rpm_per_v", "kv_rpm_per_vv").unwrap_err();
    assert_eq!(file(&err).file, "test.toml");
    let u = unknown(&err);
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].0, "motor.kv_rpm_per_vv");
    assert!(u[0].1.is_some(), "located: {err}");
    assert!(u[0].2.contains(&"kv_rpm_per_v".to_string()), "{err}");
    let err = iris_with("spin_dir = -1\n", "spin_dir = -1\nspin = 2\n").unwrap_err();
    let line = unknown(&err)[0].1.unwrap();
    assert_eq!(
        err.to_string(),
        format!(
            "test.toml:{line}:1: unknown key `rotors.2.spin` (valid in [rotors.2]: position_m, \
             spin_dir, thrust_axis)"
        )
    );
    let err = iris_with(
        "friction_coeff = 0.5",
        "friction_coeff = 0.5\nfriction = 0.5",
    )
    .unwrap_err();
    assert_eq!(unknown(&err)[0].0, "contact.friction", "optional table");
    let err = iris_with("", "[weather]\nrain = true").unwrap_err();
    let u = unknown(&err);
    assert_eq!(u[0].0, "weather");
    assert!(u[0].2.contains(&"motor".to_string()), "{err}");
}

#[test]
fn type_errors_name_the_key_path() {
    let invalid = |err: &SpecError| match &file(err).problem {
        Problem::Invalid { key, reason, .. } => (key.clone(), reason.clone()),
        p => panic!("{p:?}"),
    };
    let err = iris_with("spin_dir = -1\n", "spin_dir = \"ccw\"\n").unwrap_err();
    let (key, reason) = invalid(&err);
    assert_eq!(key, "rotors[2].spin_dir");
    assert!(reason.contains("invalid type"), "{reason}");
    assert!(err.to_string().starts_with("test.toml:"), "located: {err}");
    let err = iris_with("model = \"thevenin\"", "model = \"nimh\"").unwrap_err();
    let (key, reason) = invalid(&err);
    assert_eq!(key, "batteries[0].model");
    assert!(reason.contains("unknown variant `nimh`"), "{reason}");
    let err = iris_with("mass_kg = 1.5\n", "").unwrap_err();
    let (key, reason) = invalid(&err);
    assert_eq!(key, "body");
    assert!(reason.contains("missing field `mass_kg`"), "{reason}");
}

#[test]
fn syntax_errors_carry_line_and_column() {
    let err =
        AircraftSpec::from_toml_str("schema_version = 1\nname = \"x\n", "broken.toml").unwrap_err();
    let Problem::Syntax { at, .. } = &file(&err).problem else {
        panic!("{err:?}")
    };
    assert_eq!(at.map(|p| p.line), Some(2));
    assert!(err.to_string().starts_with("broken.toml:2:"), "{err}");
}

#[test]
fn schema_version_must_match() {
    let err = iris_with("schema_version = 1", "schema_version = 2").unwrap_err();
    assert!(
        err.to_string()
            .ends_with(":1: key `schema_version`: 2 is not supported (this build reads 1)")
            || err
                .to_string()
                .contains("key `schema_version`: 2 is not supported (this build reads 1)"),
        "{err}"
    );
    assert_eq!(file(&err).key(), Some("schema_version"));
}

#[test]
fn extends_deep_merges_files_and_builtins() {
    let d = dir("extends");
    std::fs::write(
        d.join("heavy.toml"),
        "schema_version = 1\nextends = [\"iris\"]\nname = \"heavy-iris\"\n[body]\nmass_kg = 1.6\n",
    )
    .unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(
        d.join("sub/heavier.toml"),
        "extends = [\"../heavy.toml\"]\n[motor]\nresistance_ohm = 0.2\n[[batteries]]\nmodel = \"ideal\"\ncapacity_ah = 5.0\nnominal_voltage_v = 12.0\nvoltage_v = 12.0\n",
    )
    .unwrap();
    let s = AircraftSpec::load(d.join("sub/heavier.toml")).unwrap();
    assert_eq!(s.name, "heavy-iris");
    assert_eq!(s.body.mass_kg, 1.6, "from the middle file");
    assert_eq!(
        s.body.inertia_kgm2[0][0], 0.029125,
        "deep merge keeps the base's other body keys"
    );
    assert_eq!(s.motor.resistance_ohm, 0.2);
    assert_eq!(s.motor.kv_rpm_per_v, 950.0);
    assert_eq!(s.batteries.len(), 1, "arrays are replaced, not appended");
    s.build().unwrap();
    assert_eq!(
        AircraftSpec::resolve("iris").unwrap(),
        AircraftSpec::builtin("iris").unwrap()
    );
    assert_eq!(
        AircraftSpec::resolve(d.join("heavy.toml").to_str().unwrap())
            .unwrap()
            .body
            .mass_kg,
        1.6
    );
}

#[test]
fn extends_errors_cycles_missing_files_and_bad_values() {
    let d = dir("cycle");
    std::fs::write(d.join("a.toml"), "extends = [\"./b.toml\"]\n").unwrap();
    std::fs::write(d.join("b.toml"), "extends = [\"./a.toml\"]\n").unwrap();
    let err = AircraftSpec::load(d.join("a.toml")).unwrap_err();
    assert_eq!(file(&err).key(), Some("extends"));
    assert!(
        err.to_string().contains("key `extends`: ./a.toml: cycle: "),
        "{err}"
    );
    std::fs::write(d.join("c.toml"), "extends = [\"./missing.toml\"]\n").unwrap();
    let err = AircraftSpec::load(d.join("c.toml")).unwrap_err();
    assert!(
        err.to_string()
            .contains("key `extends`: ./missing.toml: cannot read spec "),
        "{err}"
    );
    std::fs::write(d.join("e.toml"), "extends = [\"nosuchbuiltin\"]\n").unwrap();
    let err = AircraftSpec::load(d.join("e.toml")).unwrap_err();
    assert!(
        err.to_string().contains(
            "no built-in spec named `nosuchbuiltin` (built-in: multirotor-base, iris, hexa, octa)"
        ),
        "{err}"
    );
    std::fs::write(d.join("f.toml"), "extends = \"iris\"\n").unwrap();
    let err = AircraftSpec::load(d.join("f.toml")).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("key `extends`: must be an array of spec names or paths, found string"),
        "{err}"
    );
    let err = AircraftSpec::load(d.join("nope.toml")).unwrap_err();
    assert!(
        matches!(&file(&err).problem, Problem::Read { what, .. } if what == "spec"),
        "{err:?}"
    );
    assert!(matches!(
        AircraftSpec::builtin("nope"),
        Err(SpecError::UnknownBuiltin { .. })
    ));
}

#[test]
fn validation_names_the_key_and_the_rule() {
    let cases = [
        (
            "mass_kg = 1.5",
            "mass_kg = -1.5",
            "key `body.mass_kg`: must be positive and finite, is -1.5",
        ),
        (
            "[0.029125, 0.0, 0.0], [0.0, 0.029125",
            "[0.029125, 0.001, 0.0], [0.0, 0.029125",
            "key `body.inertia_kgm2`: must be symmetric: [0][1] = 0.001 but [1][0] = 0",
        ),
        (
            "[0.029125, 0.0, 0.0], [0.0, 0.029125, 0.0], [0.0, 0.0, 0.055225]",
            "[0.029125, 0.0, 0.0], [0.0, -0.029125, 0.0], [0.0, 0.0, 0.055225]",
            "key `body.inertia_kgm2`: must be positive definite (leading principal minors all > 0)",
        ),
        (
            "quadratic_drag_ns2_per_m2 = [0.018, 0.018, 0.05]",
            "quadratic_drag_ns2_per_m2 = [0.018, -0.018, 0.05]",
            "key `body.quadratic_drag_ns2_per_m2`: must be >= 0",
        ),
        (
            "spin_dir = -1\n",
            "spin_dir = 0\n",
            "key `rotors[2].spin_dir`: must be 1 or -1, is 0",
        ),
        (
            "efficiency = 0.95",
            "efficiency = 1.5",
            "key `esc.efficiency`: must be in (0, 1], is 1.5",
        ),
        (
            "model = \"direct\"",
            "model = \"first_order\"",
            "key `actuator.time_constant_s`: is required by model \"first_order\"",
        ),
        (
            "r0_ohm = 0.015",
            "r0_ohm = 0.015\nvoltage_v = 12.0",
            "key `batteries[0].voltage_v`: does not apply to model \"thevenin\"",
        ),
        (
            "10.244, 10.491",
            "10.491, 10.244",
            "key `batteries[0].ocv_v`: must be positive and non-decreasing",
        ),
        (
            "ocv_soc = [0.0,",
            "ocv_soc = [0.1,",
            "key `batteries[0].ocv_soc`: must increase strictly from 0 to 1",
        ),
        (
            "thrust_coeff_n_s2 = 0.000015667",
            "thrust_coeff_n_s2 = 0.000015667\nmax_thrust_to_hover_ratio = 2.0",
            "key `propeller`: give exactly one of thrust_coeff_n_s2 and max_thrust_to_hover_ratio",
        ),
        (
            "thrust_coeff_n_s2 = 0.000015667",
            "max_thrust_to_hover_ratio = 4.0",
            "key `propeller.max_thrust_to_hover_ratio`: 14.710 N at full throttle needs 24.3 A, above the motor's current limit of 20 A",
        ),
        (
            "thrust_coeff_n_s2 = 0.000015667",
            "max_thrust_to_hover_ratio = 12.0",
            "key `propeller.max_thrust_to_hover_ratio`: the motor cannot turn a propeller making 44.130 N (reaction torque 0.719 N m) at 11.1 V",
        ),
        (
            "thrust_coeff_n_s2 = 0.000015667",
            "max_thrust_to_hover_ratio = 0.5",
            "key `propeller.max_thrust_to_hover_ratio`: must be > 1, is 0.5",
        ),
        (
            "current_limit_a = 20.0",
            "current_limit_a = 0.0",
            "key `motor.current_limit_a`: must be positive and finite, is 0",
        ),
        (
            "torque_inflow_coeffs = [-0.127, -1.119]",
            "torque_inflow_coeffs = [-0.127, nan]",
            "key `propeller.torque_inflow_coeffs`: must be finite",
        ),
        (
            "friction_coeff = 0.5",
            "friction_coeff = -0.5",
            "key `contact.friction_coeff`: must be >= 0 and finite, is -0.5",
        ),
        (
            "origin_lat_deg = 47.397742",
            "origin_lat_deg = 97.0",
            "key `environment.origin_lat_deg`: must be in [-90, 90], is 97",
        ),
    ];
    for (from, to, expect) in cases {
        let msg = invalid(from, to);
        assert_eq!(
            msg,
            format!("test.toml: {expect}"),
            "replacing {from:?} by {to:?}"
        );
    }
    // Thrust axis must be a unit vector.
    let mut s = AircraftSpec::builtin("iris").unwrap();
    s.rotors[1].thrust_axis = [0.0, 0.0, -2.0];
    assert_eq!(
        s.build().unwrap_err().to_string(),
        "iris: key `rotors[1].thrust_axis`: must be a unit vector, has length 2"
    );
    s.rotors.clear();
    assert_eq!(
        s.build().unwrap_err().to_string(),
        "iris: key `rotors`: needs 1 to 12 rotors, has 0"
    );
}

#[test]
fn an_ocv_table_has_at_most_255_knots() {
    // The OCV lookup keeps segment indices in bytes: 255 knots build, 256
    // are refused by name (they were accepted and the lookup started its
    // search at a truncated index).
    let table = |n: usize| -> (Vec<f64>, Vec<f64>) {
        let soc: Vec<f64> = (0..n).map(|i| i as f64 / (n - 1) as f64).collect();
        let volts = soc.iter().map(|s| 9.9 + 2.4 * s).collect();
        (soc, volts)
    };
    let mut s = AircraftSpec::builtin("iris").unwrap();
    let (soc, volts) = table(255);
    s.batteries[0].ocv_soc = Some(soc);
    s.batteries[0].ocv_v = Some(volts);
    s.build().unwrap();
    let (soc, volts) = table(256);
    s.batteries[0].ocv_soc = Some(soc);
    s.batteries[0].ocv_v = Some(volts);
    assert_eq!(
        s.build().unwrap_err().to_string(),
        "iris: key `batteries[0].ocv_soc`: has 256 knots, at most 255 are allowed"
    );
}

#[test]
fn calibration_is_explicit_and_implausible_propulsion_is_refused() {
    // A thrust coefficient 12 times too large (the old Iris): CT 1.5.
    assert_eq!(
        invalid(
            "thrust_coeff_n_s2 = 0.000015667",
            "thrust_coeff_n_s2 = 1.88e-4"
        ),
        "test.toml: key `propeller.thrust_coeff_n_s2`: implies a static thrust coefficient \
         CT = kT 4 pi^2 / (rho D^4) = 1.4556 (rho = 1.225 kg/m^3, D = 0.254 m); real \
         propellers have 0.07 to 0.16: check the coefficient's units (N s^2 per (rad/s)^2) \
         and radius_m"
    );
    // The old Iris's torque per unit thrust (0.05 m): figure of merit 0.23.
    assert_eq!(
        invalid("torque_coeff_m = 0.0163", "torque_coeff_m = 0.05"),
        "test.toml: key `propeller.torque_coeff_m`: with this thrust coefficient the figure \
         of merit sqrt(kT / (2 rho A)) / torque_coeff_m is 0.225; real propellers have 0.45 \
         to 0.8: torque_coeff_m is CP D / (2 pi CT)"
    );
    // The motor carries too much of its limit in hover.
    assert_eq!(
        invalid("current_limit_a = 20.0", "current_limit_a = 10.0"),
        "test.toml: key `motor.current_limit_a`: hovering needs 6.4 A per motor (3.68 N per \
         rotor at 4737 rpm), above 60 % of the 10 A limit: the motor or propeller is too \
         small for the weight"
    );
    // Calibration is checked the same way once it has produced a coefficient,
    // and the error names the key the spec wrote (it named
    // `propeller.thrust_coeff_n_s2`, which the spec did not have): a far too
    // weak ratio calibrates an absurd propeller.
    let msg = invalid(
        "thrust_coeff_n_s2 = 0.000015667",
        "max_thrust_to_hover_ratio = 1.05",
    );
    let iris = AircraftSpec::builtin("iris").unwrap().build().unwrap();
    let kt = lockstep_plant::propulsion::calibrate_thrust_coeff(
        &iris.motor,
        iris.propeller.torque_coeff_m,
        iris.batteries[0].nominal_voltage_v,
        1.05 * iris.mass_kg * iris.gravity_mps2() / 4.0,
    )
    .unwrap();
    let ct = kt * 4.0 * std::f64::consts::PI.powi(2) / (1.225 * 0.254f64.powi(4));
    assert!(ct < 0.07, "{ct}");
    assert_eq!(
        msg,
        format!(
            "test.toml: key `propeller.max_thrust_to_hover_ratio`: calibrates the thrust \
             coefficient to kT = {kt:.4e} N s^2, a static thrust coefficient CT = kT 4 pi^2 / \
             (rho D^4) = {ct:.4} (rho = 1.225 kg/m^3, D = 0.254 m); real propellers have \
             0.07 to 0.16: the motor, radius_m and this ratio do not fit together"
        )
    );
    // Switching the checks off is explicit, for what is not a propeller.
    let s = iris_with(
        "thrust_coeff_n_s2 = 0.000015667",
        "thrust_coeff_n_s2 = 1.88e-4\nplausibility_checks = false",
    )
    .unwrap();
    s.build().unwrap();
    assert!(s.to_toml_string().contains("plausibility_checks = false"));
    // Every built-in passes them.
    for name in ["iris", "hexa", "octa"] {
        let s = AircraftSpec::builtin(name).unwrap();
        assert!(s.propeller.plausibility_checks && s.propeller.thrust_coeff_n_s2.is_some());
        let p = s.build().unwrap();
        let (ct, fm) = (p.propeller.static_ct(), p.propeller.figure_of_merit());
        assert!(
            ct > 0.07 && ct < 0.16 && fm > 0.45 && fm < 0.8,
            "{name}: CT {ct} FM {fm}"
        );
    }
}
