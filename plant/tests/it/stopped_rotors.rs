//! Stopped rotors: an undriven rotor spinning down stops in finite time
//! (below `ROTOR_STOP_RADPS` it is set to exactly 0), and the right-hand
//! side's shortcut for a vehicle whose rotors are all stopped and
//! undriven gives the general path's numbers bit for bit.

use lockstep_plant::integrate::{Integrator, Method, Options};
use lockstep_plant::spec::{ActuatorModel, ActuatorSpec};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, PlantInputs, ROTOR_STOP_RADPS};

fn iris() -> Multirotor {
    AircraftSpec::builtin("iris").unwrap().build().unwrap()
}

/// The Iris with a first-order actuator on each motor: its right-hand
/// side never takes the stopped shortcut (the actuator has states), and
/// with the actuators at rest its rigid body and batteries see the same
/// physics as the direct Iris.
fn iris_with_actuators() -> Multirotor {
    let mut spec = AircraftSpec::builtin("iris").unwrap();
    spec.actuator = ActuatorSpec {
        model: ActuatorModel::FirstOrder,
        time_constant_s: Some(0.02),
        ..ActuatorSpec::default()
    };
    spec.build().unwrap()
}

#[test]
fn resting_with_stopped_rotors_matches_the_general_path_bit_for_bit() {
    let (a, b) = (iris(), iris_with_actuators());
    assert_eq!(a.layout.actuator_states, 0);
    assert!(b.layout.actuator_states > 0);
    // Resting on the gear, tilted a little, sliding slowly, in wind.
    let q = [0.999, 0.02, -0.03, 0.01];
    let n = (q.iter().map(|v| v * v).sum::<f64>()).sqrt();
    let q = q.map(|v| v / n);
    let mut xa = a.state_at([1.0, 2.0, -0.05], q);
    xa[3] = 0.01;
    xa[5] = 0.02;
    xa[11] = 0.05;
    let mut xb = b.state_at([1.0, 2.0, -0.05], q);
    xb[..13].copy_from_slice(&xa[..13]);
    let u = PlantInputs {
        wind_ned_mps: [3.0, -1.0, 0.5],
        ..PlantInputs::default()
    };
    let (mut da, mut db) = (vec![0.0; a.dim()], vec![0.0; b.dim()]);
    a.rhs(&xa, &u, &mut da);
    b.rhs(&xb, &u, &mut db);
    for i in 0..13 {
        assert_eq!(
            da[i].to_bits(),
            db[i].to_bits(),
            "state {i}: {} {}",
            da[i],
            db[i]
        );
    }
    let (sa, sb) = (a.layout.soc(0), b.layout.soc(0));
    assert_eq!(da[sa].to_bits(), db[sb].to_bits());
    assert_eq!(da[sa + 1].to_bits(), db[sb + 1].to_bits());
    for i in 0..4 {
        assert_eq!(da[a.layout.rotor_speed(i)].to_bits(), 0.0f64.to_bits());
    }
    let (oa, ob) = (a.outputs(&xa, &u), b.outputs(&xb, &u));
    assert_eq!(oa.contact_force_ned_n, ob.contact_force_ned_n);
    assert!(oa.contact_points > 0, "it rests on its gear");
    assert_eq!(
        oa.batteries[0].current_a.to_bits(),
        ob.batteries[0].current_a.to_bits()
    );
    assert!(oa.batteries[0].current_a > 0.0, "the avionics draw");
    for i in 0..4 {
        assert_eq!(oa.rotors[i], ob.rotors[i]);
    }
}

/// Spins rotor speeds from `w0` with `u` held for `ms` 1 ms RK4 steps.
fn spin(plant: &Multirotor, w0: f64, u: &PlantInputs, ms: u64) -> Vec<f64> {
    let mut x = plant.state_at([0.0, 0.0, -0.05], [1.0, 0.0, 0.0, 0.0]);
    for i in 0..4 {
        x[plant.layout.rotor_speed(i)] = w0;
    }
    let mut integ = Integrator::new(Method::Rk4, plant.dim(), Options::default()).unwrap();
    let sys = HeldPlant { plant, inputs: u };
    for k in 0..ms {
        integ.step_interval(&sys, k * 1000, 1000, &mut x).unwrap();
    }
    (0..4).map(|i| x[plant.layout.rotor_speed(i)]).collect()
}

#[test]
fn an_undriven_rotor_stops_in_finite_time() {
    let plant = iris();
    let idle = PlantInputs::default();
    // From 50 rad/s, disarmed: stopped exactly within a second, and stays.
    assert!(
        spin(&plant, 50.0, &idle, 100)
            .iter()
            .all(|w| *w > ROTOR_STOP_RADPS)
    );
    assert_eq!(spin(&plant, 50.0, &idle, 1000), vec![0.0; 4]);
    assert_eq!(spin(&plant, 50.0, &idle, 3000), vec![0.0; 4]);
    // A driven rotor is never stopped, even starting from rest.
    let mut driven = PlantInputs::default();
    driven.motor_cmd[..4].fill(0.2);
    assert!(spin(&plant, 0.0, &driven, 1).iter().all(|w| *w > 1.0));
    // A disabled motor is undriven whatever its command.
    let mut failed = driven;
    failed.motor_enabled[2] = false;
    let w = spin(&plant, 50.0, &failed, 1000);
    assert_eq!(w[2], 0.0);
    assert!(w[0] > 100.0);
}
