//! Algebraic outputs of the plant at a state and held inputs (what sensors,
//! logs and the autopilot's battery block read at boundaries).

use super::{MAX_BATTERIES, MAX_ROTORS};
use crate::battery::BatteryWarning;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotorOutput {
    pub speed_radps: f64,
    pub thrust_n: f64,
    /// Aerodynamic torque on the rotor, N m.
    pub torque_nm: f64,
    pub current_a: f64,
    /// Duty applied, after the low-voltage limiter.
    pub duty: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BatteryOutput {
    pub voltage_v: f64,
    pub current_a: f64,
    pub soc: f64,
    pub warning: BatteryWarning,
    pub connected: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlantOutputs {
    pub bus_voltage_v: f64,
    /// Current drawn from the batteries (equal to the sum of their currents).
    pub bus_current_a: f64,
    /// The ESCs' low-voltage limiter: the factor on every duty (1: not acting).
    pub duty_scale: f64,
    pub rotors: [RotorOutput; MAX_ROTORS],
    pub batteries: [BatteryOutput; MAX_BATTERIES],
    pub air_density_kgpm3: f64,
    pub altitude_msl_m: f64,
    /// NED acceleration of the centre of mass.
    pub accel_ned_mps2: [f64; 3],
    /// What an accelerometer at the centre of mass reads (body FRD).
    pub specific_force_frd_mps2: [f64; 3],
    pub gravity_ned_mps2: [f64; 3],
    pub contact_force_ned_n: [f64; 3],
    /// Contact points below the ground surface.
    pub contact_points: usize,
}

/// All zeros, no contact, every warning `Ok`, and the limiter not acting
/// (`duty_scale` 1, its neutral value).
impl Default for PlantOutputs {
    fn default() -> Self {
        let r = RotorOutput {
            speed_radps: 0.0,
            thrust_n: 0.0,
            torque_nm: 0.0,
            current_a: 0.0,
            duty: 0.0,
        };
        let b = BatteryOutput {
            voltage_v: 0.0,
            current_a: 0.0,
            soc: 0.0,
            warning: BatteryWarning::Ok,
            connected: false,
        };
        PlantOutputs {
            bus_voltage_v: 0.0,
            bus_current_a: 0.0,
            duty_scale: 1.0,
            rotors: [r; MAX_ROTORS],
            batteries: [b; MAX_BATTERIES],
            air_density_kgpm3: 0.0,
            altitude_msl_m: 0.0,
            accel_ned_mps2: [0.0; 3],
            specific_force_frd_mps2: [0.0; 3],
            gravity_ned_mps2: [0.0; 3],
            contact_force_ned_n: [0.0; 3],
            contact_points: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PlantOutputs;

    #[test]
    fn default_outputs_have_the_limiter_not_acting() {
        // 0 would read as "limiter fully acting" (every duty cut).
        assert_eq!(PlantOutputs::default().duty_scale, 1.0);
    }
}
