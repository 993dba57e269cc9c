//! Reference situations shared by tests and benchmarks, so that every
//! measurement of the plant uses the same well-defined inputs.

use crate::{Multirotor, PlantInputs};

/// Level at NED position `p`, at rest, every rotor at the speed that holds
/// the weight in the air at that altitude.
pub fn hovering_state(plant: &Multirotor, p: [f64; 3]) -> Vec<f64> {
    let mut x = plant.state_at(p, [1.0, 0.0, 0.0, 0.0]);
    let rho = plant.outputs(&x, &PlantInputs::default()).air_density_kgpm3;
    for i in 0..plant.rotors.len() {
        x[plant.layout.rotor_speed(i)] = plant.hover_rotor_speed(rho);
    }
    x
}

/// The inputs of interval `k` of an open-loop manoeuvre of a quadrotor:
/// motor commands around the Iris hover command and a wind, both varying
/// from one interval to the next.
pub fn manoeuvre(k: usize) -> PlantInputs {
    let s = (k as f64 * 0.05).sin();
    let mut u = PlantInputs::default();
    u.motor_cmd[..4].copy_from_slice(&[
        0.53 + 0.06 * s,
        0.51 - 0.05 * s,
        0.52 + 0.04 * s,
        0.51 - 0.03 * s,
    ]);
    u.wind_ned_mps = [2.0, -1.0 + s, 0.3 * s];
    u
}
