//! The full multirotor plant against analytic solutions and conservation
//! laws, with every integrator.

use lockstep_plant::battery::BatteryModel;
use lockstep_plant::integrate::{ErrorGroup, GroupKind, Integrator, Method, Options, System};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs, StateLayout};

const ALL: [Method; 4] = [Method::Euler, Method::Rk4, Method::Bs32, Method::Dp54];

fn iris() -> Multirotor {
    AircraftSpec::builtin("iris").unwrap().build().unwrap()
}

fn options(method: Method) -> Options {
    Options {
        max_step_ticks: match method {
            Method::Euler => 100,
            Method::Rk4 => 1000,
            _ => 4000,
        },
        ..Options::default()
    }
}

/// Runs `seconds` of 4 ms intervals with inputs held.
fn fly(p: &Multirotor, method: Method, x: &mut [f64], u: &PlantInputs, seconds: f64) {
    let sys = HeldPlant {
        plant: p,
        inputs: u,
    };
    let mut integ = Integrator::new(method, p.dim(), options(method)).unwrap();
    let n = (seconds * 250.0).round() as u64;
    for k in 0..n {
        integ.step_interval(&sys, k * 4000, 4000, x).unwrap();
    }
}

fn yaw_of(x: &[f64]) -> f64 {
    let q = &x[StateLayout::QUAT..StateLayout::QUAT + 4];
    (2.0 * (q[0] * q[3] + q[1] * q[2])).atan2(1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3]))
}

#[test]
fn hover_rotor_speed_balances_the_weight() {
    for name in ["iris", "hexa", "octa"] {
        let p = AircraftSpec::builtin(name).unwrap().build().unwrap();
        let mut x = p.state_at([0.0, 0.0, -10.0], [1.0, 0.0, 0.0, 0.0]);
        let rho = p.outputs(&x, &PlantInputs::default()).air_density_kgpm3;
        for i in 0..p.rotors.len() {
            x[p.layout.rotor_speed(i)] = p.hover_rotor_speed(rho);
        }
        let mut dx = vec![0.0; p.dim()];
        p.rhs(&x, &PlantInputs::default(), &mut dx);
        assert!(
            dx[StateLayout::VEL + 2].abs() < 1e-9,
            "{name}: a_z = {}",
            dx[5]
        );
        assert!(dx[StateLayout::VEL].abs() < 1e-12 && dx[StateLayout::VEL + 1].abs() < 1e-12);
        for k in 0..3 {
            assert!(
                dx[StateLayout::RATES + k].abs() < 1e-9,
                "{name}: rate derivative {:?}",
                &dx[10..13]
            );
        }
    }
}

/// The iris with only the given drag (per body axis, linear and quadratic).
fn iris_with_drag(linear: [f64; 3], quadratic: [f64; 3]) -> Multirotor {
    let mut spec = AircraftSpec::builtin("iris").unwrap();
    spec.body.linear_drag_ns_per_m = linear;
    spec.body.quadratic_drag_ns2_per_m2 = quadratic;
    spec.build().unwrap()
}

#[test]
fn free_fall_with_linear_drag_matches_the_closed_form() {
    let p = iris_with_drag([0.0, 0.0, 0.05], [0.0; 3]);
    let (m, g, c) = (p.mass_kg, p.gravity_mps2(), p.linear_drag_ns_per_m.z);
    let t = 3.0;
    let vz = m * g / c * (1.0 - (-c * t / m).exp());
    let dz = m * g / c * t - m * m * g / (c * c) * (1.0 - (-c * t / m).exp());
    for method in ALL {
        let mut x = p.state_at([0.0, 0.0, -200.0], [1.0, 0.0, 0.0, 0.0]);
        fly(&p, method, &mut x, &PlantInputs::default(), t);
        let tol = if method == Method::Euler { 2e-3 } else { 1e-8 };
        assert!(
            (x[5] - vz).abs() < tol * vz,
            "{method:?}: vz {} vs {vz}",
            x[5]
        );
        assert!(
            (x[2] - (-200.0 + dz)).abs() < tol * dz,
            "{method:?}: z {} vs {}",
            x[2],
            -200.0 + dz
        );
        assert_eq!((x[0], x[1]), (0.0, 0.0));
    }
}

#[test]
fn an_external_force_accelerates_the_centre_of_mass_as_f_over_m() {
    // No drag, rotors stopped, high above the ground: a = g + F / m, and a
    // force of m g upwards holds the vehicle still.
    let p = iris_with_drag([0.0; 3], [0.0; 3]);
    let (m, g) = (p.mass_kg, p.gravity_mps2());
    let x = p.state_at([0.0, 0.0, -500.0], [1.0, 0.0, 0.0, 0.0]);
    let u = PlantInputs {
        external_force_ned_n: Some([3.0, -1.5, -m * g]),
        ..PlantInputs::default()
    };
    let mut dx = vec![0.0; p.dim()];
    p.rhs(&x, &u, &mut dx);
    assert!((dx[3] - 3.0 / m).abs() < 1e-12, "{}", dx[3]);
    assert!((dx[4] + 1.5 / m).abs() < 1e-12, "{}", dx[4]);
    assert!(dx[5].abs() < 1e-12, "{}", dx[5]);
    // Acting at the centre of mass it turns nothing.
    assert_eq!(&dx[10..13], &[0.0; 3]);
    // Zero force: the derivatives of no input at all, bit for bit.
    let mut plain = vec![0.0; p.dim()];
    p.rhs(&x, &PlantInputs::default(), &mut plain);
    let mut zero = vec![0.0; p.dim()];
    let u0 = PlantInputs {
        external_force_ned_n: Some([0.0; 3]),
        ..PlantInputs::default()
    };
    p.rhs(&x, &u0, &mut zero);
    assert_eq!(plain, zero);
    assert!((plain[5] - g).abs() < 1e-12);
}

#[test]
fn quadratic_drag_gives_the_closed_form_fall_and_terminal_speed() {
    // m dv/dt = m g - c v^2: v(t) = vt tanh(g t / vt), z(t) = vt^2/g ln cosh(g t / vt),
    // vt = sqrt(m g / c).
    let p = iris_with_drag([0.0; 3], [0.0, 0.0, 0.05]);
    let (m, g, c) = (p.mass_kg, p.gravity_mps2(), 0.05);
    let vt = (m * g / c).sqrt();
    let t = 4.0;
    let vz = vt * (g * t / vt).tanh();
    let dz = vt * vt / g * (g * t / vt).cosh().ln();
    for method in [Method::Rk4, Method::Dp54] {
        let mut x = p.state_at([0.0, 0.0, -500.0], [1.0, 0.0, 0.0, 0.0]);
        fly(&p, method, &mut x, &PlantInputs::default(), t);
        assert!(
            (x[5] / vz - 1.0).abs() < 1e-8,
            "{method:?}: vz {} vs {vz}",
            x[5]
        );
        assert!(((x[2] + 500.0) / dz - 1.0).abs() < 1e-8, "{method:?}");
    }
    // Long enough, the fall settles at the terminal speed.
    let mut x = p.state_at([0.0, 0.0, -5000.0], [1.0, 0.0, 0.0, 0.0]);
    fly(&p, Method::Dp54, &mut x, &PlantInputs::default(), 60.0);
    assert!((x[5] / vt - 1.0).abs() < 1e-9, "{} vs {vt}", x[5]);
    // Drag acts per body axis on the air-relative velocity: in a 10 m/s
    // wind the vehicle drifts towards the wind's speed (strong vertical
    // drag keeps the fall slow meanwhile).
    let p = iris_with_drag([0.3, 0.0, 100.0], [0.02, 0.0, 0.0]);
    let mut x = p.state_at([0.0, 0.0, -5000.0], [1.0, 0.0, 0.0, 0.0]);
    let u = PlantInputs {
        wind_ned_mps: [10.0, 0.0, 0.0],
        ..PlantInputs::default()
    };
    let mut dx = vec![0.0; p.dim()];
    p.rhs(&x, &u, &mut dx);
    let f = 0.3 * 10.0 + 0.02 * 100.0;
    assert!((dx[3] - f / m).abs() < 1e-12, "{} vs {}", dx[3], f / m);
    fly(&p, Method::Dp54, &mut x, &u, 60.0);
    // Time constant m / 0.3 = 5 s: 12 of them leave 10 e^-12 ~ 6e-5 m/s.
    assert!((x[3] - 10.0).abs() < 1e-4, "{}", x[3]);
}

#[test]
fn quadratic_drag_is_per_body_axis_so_it_is_29_percent_lower_at_45_degrees() {
    // The standard body-axis form, -c_i |v_i| v_i on each axis i (README,
    // model limits): at 45 degrees between two axes with equal
    // coefficients the drag is c v^2 / sqrt(2), not c v^2; with unequal
    // ones it is not antiparallel to the velocity.
    let c = 0.02;
    let p = iris_with_drag([0.0; 3], [c, c, 0.0]);
    let m = p.mass_kg;
    let v = 8.0;
    let drag = |p: &Multirotor, vel: [f64; 3]| -> [f64; 2] {
        let mut x = p.state_at([0.0, 0.0, -500.0], [1.0, 0.0, 0.0, 0.0]);
        x[3..6].copy_from_slice(&vel);
        let mut dx = vec![0.0; p.dim()];
        p.rhs(&x, &PlantInputs::default(), &mut dx);
        [dx[3] * m, dx[4] * m]
    };
    let on_axis = drag(&p, [v, 0.0, 0.0]);
    assert!((on_axis[0] + c * v * v).abs() < 1e-12, "{on_axis:?}");
    let d = v / 2f64.sqrt();
    let diagonal = drag(&p, [d, d, 0.0]);
    let magnitude = diagonal[0].hypot(diagonal[1]);
    assert!(
        (magnitude - c * v * v / 2f64.sqrt()).abs() < 1e-12,
        "{magnitude}"
    );
    let below = 1.0 - magnitude / (c * v * v);
    assert!((below - 0.29).abs() < 0.005, "{below}: 29 % below on-axis");
    let p = iris_with_drag([0.0; 3], [c, 2.0 * c, 0.0]);
    let f = drag(&p, [d, d, 0.0]);
    assert!((f[1] / f[0] - 2.0).abs() < 1e-12, "not antiparallel: {f:?}");
}

#[test]
fn constant_body_rate_decays_with_angular_damping_as_the_closed_form() {
    // Yaw rate about a principal axis: w(t) = w0 exp(-d t / I), psi = w0 I/d (1 - exp(-d t / I)).
    let p = iris();
    let (iz, d) = (p.inertia_kgm2[(2, 2)], p.angular_damping_nms_per_rad.z);
    let (w0, t) = (1.0, 2.5);
    let w = w0 * (-d * t / iz).exp();
    let psi = w0 * iz / d * (1.0 - (-d * t / iz).exp());
    for method in ALL {
        let mut x = p.state_at([0.0, 0.0, -100.0], [1.0, 0.0, 0.0, 0.0]);
        x[StateLayout::RATES + 2] = w0;
        fly(&p, method, &mut x, &PlantInputs::default(), t);
        let tol = if method == Method::Euler { 1e-3 } else { 1e-8 };
        assert!((x[12] - w).abs() < tol, "{method:?}: rate {} vs {w}", x[12]);
        let dpsi = (yaw_of(&x)
            - (psi - 2.0 * std::f64::consts::PI * (psi / (2.0 * std::f64::consts::PI)).round()))
        .abs();
        assert!(dpsi < tol, "{method:?}: yaw off by {dpsi:e}");
        assert!(x[10].abs() < 1e-12 && x[11].abs() < 1e-12);
    }
}

/// A battery alone under a constant current.
struct BatteryUnderLoad<'a> {
    battery: &'a lockstep_plant::battery::Battery,
    current: f64,
}
impl System for BatteryUnderLoad<'_> {
    fn dim(&self) -> usize {
        2
    }
    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        let (a, b) = self.battery.derivatives(x[1], self.current);
        dx[0] = a;
        dx[1] = b;
    }
    fn error_groups(&self) -> &[ErrorGroup] {
        const G: [ErrorGroup; 1] = [ErrorGroup {
            name: "battery",
            start: 0,
            len: 2,
            kind: GroupKind::Vector {
                atol: 1e-10,
                rtol: 1e-10,
            },
        }];
        &G
    }
}

#[test]
fn thevenin_battery_under_constant_current_matches_the_closed_form() {
    let p = iris();
    let b = &p.batteries[0];
    let BatteryModel::Thevenin {
        r0_ohm,
        r1_ohm,
        c1_f,
        ..
    } = b.model
    else {
        panic!("iris has a Thevenin battery")
    };
    let current = 20.0;
    let t = 600.0;
    let soc = 1.0 - current * t / (3600.0 * b.capacity_ah);
    let v1 = current * r1_ohm * (1.0 - (-t / (r1_ohm * c1_f)).exp());
    let terminal = b.emf(soc, v1) - r0_ohm * current;
    for method in ALL {
        let sys = BatteryUnderLoad {
            battery: b,
            current,
        };
        let mut integ = Integrator::new(method, 2, options(method)).unwrap();
        let mut x = [1.0, 0.0];
        for k in 0..(t as u64 * 250) {
            integ.step_interval(&sys, k * 4000, 4000, &mut x).unwrap();
        }
        let tol = if method == Method::Euler { 1e-6 } else { 1e-9 };
        assert!(
            (x[0] - soc).abs() < tol,
            "{method:?}: soc {} vs {soc}",
            x[0]
        );
        assert!(
            (x[1] - v1).abs() < tol * 10.0,
            "{method:?}: v1 {} vs {v1}",
            x[1]
        );
        assert!(
            (b.terminal_voltage(x[0], x[1], current) - terminal).abs() < 1e-5,
            "{method:?}"
        );
    }
}

#[test]
fn spinning_rotors_keep_total_angular_momentum_through_gyroscopic_terms() {
    // Free-spinning unpowered rotors with no aerodynamic torque, no friction,
    // no damping and negligible thrust: body + rotors conserve angular
    // momentum in the world frame only if w x H is modelled.
    let text = AircraftSpec::builtin("iris").unwrap().to_toml_string();
    let mut spec = AircraftSpec::from_toml_str(&text, "flywheel.toml").unwrap();
    spec.propeller.torque_coeff_m = 0.0;
    spec.propeller.max_thrust_to_hover_ratio = None;
    spec.propeller.thrust_coeff_n_s2 = Some(1e-18);
    spec.propeller.plausibility_checks = false;
    spec.motor.no_load_current_a = 0.0;
    spec.body.angular_damping_nms_per_rad = [0.0; 3];
    spec.body.linear_drag_ns_per_m = [0.0; 3];
    let p = spec.build().unwrap();
    let momentum = |x: &[f64]| {
        let w = nalgebra::Vector3::new(x[10], x[11], x[12]);
        let mut l = p.inertia_kgm2 * w;
        for (i, r) in p.rotors.iter().enumerate() {
            l += r.thrust_axis
                * r.spin_dir
                * p.motor.rotor_inertia_kgm2
                * x[p.layout.rotor_speed(i)];
        }
        let q = nalgebra::UnitQuaternion::new_normalize(nalgebra::Quaternion::new(
            x[6], x[7], x[8], x[9],
        ));
        q * l
    };
    let mut x = p.state_at([0.0, 0.0, -1000.0], [1.0, 0.0, 0.0, 0.0]);
    x[10] = 0.8;
    x[11] = -0.3;
    for i in 0..2 {
        x[p.layout.rotor_speed(i)] = 900.0; // the two counter-clockwise rotors: H != 0
    }
    let l0 = momentum(&x);
    fly(&p, Method::Dp54, &mut x, &PlantInputs::default(), 3.0);
    let l = momentum(&x);
    assert!((l - l0).norm() < 1e-7 * l0.norm(), "{l0:?} -> {l:?}");
    // The gyroscopic coupling really acted: the body rate changed direction.
    assert!((x[11] + 0.3).abs() > 0.05, "rates {:?}", &x[10..13]);

    // Spinning a rotor up from rest: the motor torque is internal, so the
    // body counter-rotates and Iw + H stays zero (the H-dot term).
    let mut x = p.state_at([0.0, 0.0, -1000.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    u.motor_cmd[0] = 0.5;
    fly(&p, Method::Dp54, &mut x, &u, 0.5);
    assert!(x[p.layout.rotor_speed(0)] > 100.0);
    assert!(momentum(&x).norm() < 1e-9, "{:?}", momentum(&x));
    assert!(
        x[12] > 0.0,
        "a counter-clockwise rotor spinning up yaws the body clockwise seen from above (positive yaw)"
    );
}

#[test]
fn rotor_reaction_torque_yaws_the_body_with_the_spin_convention() {
    // Counter-clockwise rotors (spin +1) at higher thrust: positive yaw rate.
    let p = iris();
    let mut x = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    for (i, r) in p.rotors.iter().enumerate() {
        u.motor_cmd[i] = if r.spin_dir > 0.0 { 0.6 } else { 0.4 };
    }
    fly(&p, Method::Rk4, &mut x, &u, 0.5);
    assert!(x[12] > 0.1, "yaw rate {}", x[12]);
}

#[test]
fn rotors_settle_at_the_steady_state_of_the_drive_train() {
    // The Iris drive train on a body too heavy to move, without gravity:
    // no inflow, so the rotor sees exactly the steady-state conditions.
    let iris = iris();
    let mut spec = AircraftSpec::builtin("iris").unwrap();
    spec.propeller.max_thrust_to_hover_ratio = None;
    spec.propeller.thrust_coeff_n_s2 = Some(iris.propeller.thrust_coeff);
    spec.body.mass_kg = 1e7;
    spec.body.inertia_kgm2 = [[1e6, 0.0, 0.0], [0.0, 1e6, 0.0], [0.0, 0.0, 1e6]];
    spec.environment.gravity_mps2 = 1e-12;
    let p = spec.build().unwrap();
    let mut x = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    u.motor_cmd[..4].copy_from_slice(&[0.7; 4]);
    fly(&p, Method::Rk4, &mut x, &u, 1.0);
    let o = p.outputs(&x, &u);
    let expect = p.steady_state_thrust_n(p.esc.duty(0.7), o.bus_voltage_v, o.air_density_kgpm3);
    let got = o.rotors[0].thrust_n;
    // The bus keeps sagging slowly (V1 charges with a 20 s time constant),
    // so the rotor trails the steady state by a hair.
    assert!(
        (got / expect - 1.0).abs() < 1e-4,
        "thrust {got} vs steady state {expect}"
    );
    assert!(
        o.bus_voltage_v < 12.6 && o.bus_voltage_v > 10.0,
        "bus sags under load: {}",
        o.bus_voltage_v
    );
    assert!(o.batteries[0].current_a > 10.0);
}

#[test]
fn faults_on_the_inputs_act_on_the_plant() {
    let p = iris();
    let base = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    u.motor_cmd[..4].copy_from_slice(&[0.6; 4]);
    let mut healthy = base.clone();
    fly(&p, Method::Rk4, &mut healthy, &u, 0.3);
    // Motor 0 failed: no current, its rotor stays stopped.
    let mut failed = base.clone();
    let mut uf = u;
    uf.motor_enabled[0] = false;
    fly(&p, Method::Rk4, &mut failed, &uf, 0.3);
    assert_eq!(failed[p.layout.rotor_speed(0)], 0.0);
    assert!(failed[p.layout.rotor_speed(1)] > 50.0);
    // Half thrust on rotor 1.
    let mut ul = u;
    ul.thrust_scale[1] = 0.5;
    let o = p.outputs(&healthy, &ul);
    let oh = p.outputs(&healthy, &u);
    assert!((o.rotors[1].thrust_n / oh.rotors[1].thrust_n - 0.5).abs() < 1e-12);
    // Battery disconnected: the bus is dead and nothing is drawn.
    let mut ud = u;
    ud.battery_connected[0] = false;
    let o = p.outputs(&healthy, &ud);
    assert_eq!(
        (o.bus_voltage_v, o.bus_current_a, o.batteries[0].current_a),
        (0.0, 0.0, 0.0)
    );
    assert!(
        !o.batteries[0].connected && o.batteries[0].voltage_v > 12.0,
        "open-circuit voltage reported"
    );
}

#[test]
fn parallel_batteries_share_the_load_by_resistance() {
    let p = AircraftSpec::builtin("octa").unwrap().build().unwrap();
    let mut x = p.state_at([0.0, 0.0, -50.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    u.motor_cmd[..8].copy_from_slice(&[0.6; 8]);
    fly(&p, Method::Rk4, &mut x, &u, 0.2);
    let o = p.outputs(&x, &u);
    let (i0, i1) = (o.batteries[0].current_a, o.batteries[1].current_a);
    assert!((i0 + i1 - o.bus_current_a).abs() < 1e-9);
    let (e0, e1) = (
        p.batteries[0].emf(x[p.layout.soc(0)], x[p.layout.v1(0)]),
        p.batteries[1].emf(x[p.layout.soc(1)], x[p.layout.v1(1)]),
    );
    assert!((e0 - p.batteries[0].r0() * i0 - o.bus_voltage_v).abs() < 1e-9);
    assert!((e1 - p.batteries[1].r0() * i1 - o.bus_voltage_v).abs() < 1e-9);
    assert!(i0 > i1, "the lower-resistance pack carries more: {i0} {i1}");
}

#[test]
fn a_dropped_vehicle_comes_to_rest_level_on_its_feet() {
    let p = iris();
    let rest = p.resting_state(0.0, 0.0, 0.0);
    let mut x = p.state_at([0.0, 0.0, rest[2] - 0.5], [0.998, 0.05, 0.03, 0.0]);
    fly(&p, Method::Dp54, &mut x, &PlantInputs::default(), 4.0);
    let o = p.outputs(&x, &PlantInputs::default());
    assert_eq!(o.contact_points, 4, "all four feet down");
    assert!(
        (x[2] - rest[2]).abs() < 2e-3,
        "z {} vs rest {}",
        x[2],
        rest[2]
    );
    assert!(
        x[3..6].iter().all(|v| v.abs() < 1e-2),
        "still: {:?}",
        &x[3..6]
    );
    assert!(
        x[7].abs() < 1e-3 && x[8].abs() < 1e-3,
        "level: {:?}",
        &x[6..10]
    );
}

#[test]
fn a_hard_impact_is_integrated_and_settles() {
    // Regression: a discontinuous contact force at touchdown made the
    // adaptive step collapse to 1 us and fail. Dropped from 10 m (14 m/s).
    let p = iris();
    let rest = p.resting_state(0.0, 0.0, 0.0);
    for method in [Method::Dp54, Method::Bs32, Method::Rk4] {
        let mut x = p.state_at([0.0, 0.0, rest[2] - 10.0], [0.99, 0.1, 0.05, 0.0]);
        fly(&p, method, &mut x, &PlantInputs::default(), 5.0);
        assert!(
            (x[2] - rest[2]).abs() < 5e-3,
            "{method:?}: z {} vs rest {}",
            x[2],
            rest[2]
        );
        assert!(
            x[3..6].iter().all(|v| v.abs() < 0.05),
            "{method:?}: {:?}",
            &x[3..6]
        );
    }
}

#[test]
fn resting_state_is_an_equilibrium() {
    for name in ["iris", "hexa", "octa"] {
        let p = AircraftSpec::builtin(name).unwrap().build().unwrap();
        let x = p.resting_state(3.0, -2.0, 0.7);
        let mut dx = vec![0.0; p.dim()];
        p.rhs(&x, &PlantInputs::default(), &mut dx);
        assert!(
            dx[3..6].iter().all(|v| v.abs() < 1e-9),
            "{name}: {:?}",
            &dx[3..6]
        );
        assert!(
            dx[10..13].iter().all(|v| v.abs() < 1e-9),
            "{name}: {:?}",
            &dx[10..13]
        );
    }
}

#[test]
fn same_interval_sequence_gives_identical_bits_on_the_full_plant() {
    let p = AircraftSpec::builtin("octa").unwrap().build().unwrap();
    for method in ALL {
        let run = || {
            let mut x = p.resting_state(0.0, 0.0, 0.0);
            let sys_inputs: Vec<PlantInputs> = (0..8)
                .map(|k| {
                    let mut u = PlantInputs::default();
                    for i in 0..8 {
                        u.motor_cmd[i] = 0.55 + 0.02 * ((k * 3 + i) % 5) as f64;
                    }
                    u.wind_ned_mps = [1.0, -0.5 * k as f64, 0.1];
                    u
                })
                .collect();
            let mut integ = Integrator::new(method, p.dim(), options(method)).unwrap();
            for k in 0..250u64 {
                let u = &sys_inputs[(k % 8) as usize];
                integ
                    .step_interval(
                        &HeldPlant {
                            plant: &p,
                            inputs: u,
                        },
                        k * 4000,
                        4000,
                        &mut x,
                    )
                    .unwrap();
            }
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        assert_eq!(run(), run(), "{method:?}");
    }
}

#[test]
fn the_largest_plant_has_outputs_the_same_as_its_derivatives() {
    // 12 rotors, a second-order actuator and 8 packs: 13 + 12 x 3 + 8 x 2 =
    // 65 states. Before the fix `outputs` used a 64-element scratch and
    // panicked on this plant (the engine's IMU stage and its log call it).
    use lockstep_plant::multirotor::{MAX_BATTERIES, MAX_ROTORS, MAX_STATES};
    use lockstep_plant::spec::{ActuatorModel, RotorSpec};
    let mut spec = AircraftSpec::builtin("iris").unwrap();
    spec.rotors = (0..MAX_ROTORS)
        .map(|i| {
            let a = (15.0 + 30.0 * i as f64).to_radians();
            RotorSpec {
                position_m: [0.4 * a.cos(), 0.4 * a.sin(), 0.0],
                thrust_axis: [0.0, 0.0, -1.0],
                spin_dir: if i % 2 == 0 { 1 } else { -1 },
            }
        })
        .collect();
    spec.actuator.model = ActuatorModel::SecondOrder;
    spec.actuator.natural_freq_radps = Some(60.0);
    spec.actuator.damping_ratio = Some(0.8);
    spec.actuator.rate_limit_per_s = Some(20.0);
    let pack = spec.batteries[0].clone();
    spec.batteries = vec![pack; MAX_BATTERIES];
    let p = spec.build().unwrap();
    assert_eq!(MAX_STATES, 65);
    assert_eq!(p.dim(), MAX_STATES);
    let mut x = p.state_at([0.0, 0.0, -20.0], [1.0, 0.0, 0.0, 0.0]);
    let mut u = PlantInputs::default();
    for i in 0..MAX_ROTORS {
        u.motor_cmd[i] = 0.3 + 0.02 * i as f64;
        x[p.layout.rotor_speed(i)] = 300.0 + 10.0 * i as f64;
        x[p.layout.actuator(i)] = u.motor_cmd[i] - 0.05;
    }
    fly(&p, Method::Rk4, &mut x, &u, 0.2);
    let o = p.outputs(&x, &u);
    let mut dx = vec![0.0; p.dim()];
    p.rhs(&x, &u, &mut dx);
    assert_eq!(
        o.accel_ned_mps2,
        [dx[3], dx[4], dx[5]],
        "the same computation"
    );
    let packs: f64 = o.batteries.iter().map(|b| b.current_a).sum();
    assert!(o.bus_current_a > 1.0, "{o:?}");
    assert!(
        (packs / o.bus_current_a - 1.0).abs() < 1e-12,
        "{packs} vs {}",
        o.bus_current_a
    );
    for r in &o.rotors {
        assert!(r.speed_radps > 0.0 && r.thrust_n > 0.0, "{r:?}");
    }
}
