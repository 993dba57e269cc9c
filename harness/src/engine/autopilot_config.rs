//! What the autopilot is told about the vehicle, derived from the plant.

use lockstep_abi::config_zeroed;
use lockstep_abi::ffi::{lockstep_autopilot_config, lockstep_rotor_geometry};
use lockstep_plant::Multirotor;
use lockstep_plant::env::atmosphere::Isa;

use crate::Micros;

/// Command samples of the thrust-curve fit.
const FIT_SAMPLES: usize = 20;

/// Thrust of one rotor, as a fraction of full command, at command `u`
/// (ESC deadzone included), steady state at the nominal voltage and the
/// origin's air density.
fn thrust_fraction(plant: &Multirotor, u: f64, v: f64, rho: f64, full: f64) -> f64 {
    plant.steady_state_thrust_n(plant.esc.duty(u), v, rho) / full
}

/// The least-squares `f` of `T/Tmax = f u^2 + (1 - f) u` over the plant's
/// steady-state command-to-thrust map, clamped to [0, 1].
pub fn fit_thrust_model_factor(plant: &Multirotor) -> f64 {
    let (v, rho) = nominal_conditions(plant);
    let full = plant.steady_state_thrust_n(1.0, v, rho);
    let (mut num, mut den) = (0.0, 0.0);
    for k in 1..=FIT_SAMPLES {
        let u = k as f64 / FIT_SAMPLES as f64;
        let y = thrust_fraction(plant, u, v, rho, full);
        let basis = u * u - u;
        num += (y - u) * basis;
        den += basis * basis;
    }
    (num / den).clamp(0.0, 1.0)
}

/// Nominal bus voltage (first battery) and air density at the origin.
fn nominal_conditions(plant: &Multirotor) -> (f64, f64) {
    let v = plant.batteries[0].nominal_voltage_v;
    let rho = Isa::at_altitude(plant.origin.geodetic.alt_m).density_kgpm3;
    (v, rho)
}

/// The autopilot config for `plant`, stepped every `period`.
pub fn autopilot_config(plant: &Multirotor, period: Micros) -> lockstep_autopilot_config {
    let (v, rho) = nominal_conditions(plant);
    let max_thrust = plant.steady_state_thrust_n(1.0, v, rho);
    let mut c = config_zeroed();
    c.rotor_count = plant.rotors.len() as u32;
    for (i, r) in plant.rotors.iter().enumerate() {
        c.rotors[i] = lockstep_rotor_geometry {
            position_m: [
                r.position_m.x as f32,
                r.position_m.y as f32,
                r.position_m.z as f32,
            ],
            thrust_axis: [
                r.thrust_axis.x as f32,
                r.thrust_axis.y as f32,
                r.thrust_axis.z as f32,
            ],
            spin_dir: r.spin_dir as i32,
            torque_coeff_m: plant.propeller.torque_coeff_m as f32,
            max_thrust_n: max_thrust as f32,
        };
    }
    c.thrust_model_factor = fit_thrust_model_factor(plant) as f32;
    c.mass_kg = plant.mass_kg as f32;
    let i = &plant.inertia_kgm2;
    c.inertia_diag_kgm2 = [i[(0, 0)] as f32, i[(1, 1)] as f32, i[(2, 2)] as f32];
    c.gravity_mps2 = plant.gravity_mps2() as f32;
    c.autopilot_period_us = period.0 as u32;
    c.rotor_time_constant_s =
        (plant.hover_rotor_time_constant_s(rho) + plant.actuator.equivalent_lag_s()) as f32;
    let o = plant.origin.geodetic;
    c.origin_lat_deg = o.lat_deg;
    c.origin_lon_deg = o.lon_deg;
    c.origin_alt_m = o.alt_m;
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_plant::AircraftSpec;

    #[test]
    fn config_describes_the_plant_and_the_fit_follows_its_thrust_map() {
        for name in ["iris", "hexa", "octa"] {
            let p = AircraftSpec::builtin(name).unwrap().build().unwrap();
            let c = autopilot_config(&p, Micros(4000));
            assert_eq!(c.rotor_count as usize, p.rotors.len());
            for (i, r) in p.rotors.iter().enumerate() {
                assert_eq!(c.rotors[i].spin_dir as f64, r.spin_dir);
                assert_eq!(c.rotors[i].position_m[0], r.position_m.x as f32);
            }
            assert_eq!((c.mass_kg as f64, c.autopilot_period_us), (p.mass_kg, 4000));
            // Full thrust: the drive train's steady state at full duty, the
            // first pack's nominal voltage and the origin's air density.
            let (v, rho) = nominal_conditions(&p);
            assert_eq!(
                c.rotors[0].max_thrust_n,
                p.steady_state_thrust_n(1.0, v, rho) as f32
            );
            let tau = p.hover_rotor_time_constant_s(rho) + p.actuator.equivalent_lag_s();
            assert_eq!(c.rotor_time_constant_s, tau as f32);
            // The fitted curve reproduces the plant's steady state within 4 %
            // of full thrust everywhere.
            let f = c.thrust_model_factor as f64;
            let full = p.steady_state_thrust_n(1.0, v, rho);
            for k in 0..=40 {
                let u = k as f64 / 40.0;
                let model = f * u * u + (1.0 - f) * u;
                let real = thrust_fraction(&p, u, v, rho, full);
                assert!(
                    (model - real).abs() < 0.04,
                    "{name}: u {u}: model {model} real {real} (f {f})"
                );
            }
        }
    }
}
