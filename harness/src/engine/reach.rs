//! How far a vehicle can go: a bound on its speed and on its acceleration
//! from its spec, for a fleet's lookahead. A bound, not a prediction: the
//! fleet checks every position against it after the stretch it granted,
//! and redoes a stretch that broke it.
//!
//! Drag only ever slows the vehicle relative to the air (the force
//! opposes the air-relative velocity through a positive semi-definite
//! matrix), so the air-relative speed grows only by the other forces:
//! every rotor at the most thrust its batteries can drive, gravity and an
//! external force held on it. With the wind within a margin of what it is
//! now, the ground speed stays under |v − w| + |w| + 2 × margin plus what
//! those forces add.

use super::Engine;

/// How far, m/s, the wind may move from what it is now during a stretch:
/// gusts and turbulence to come.
pub const WIND_MARGIN_MPS: f64 = 5.0;

/// Thrust allowed beyond a rotor's steady state at full command and the
/// batteries' full voltage (ground effect, a rotor windmilling), a factor.
pub const THRUST_MARGIN: f64 = 1.5;

/// Air density the thrust bound assumes at least, kg/m³ (cold air at sea
/// level, 1.225 × 1.2).
const MAX_DENSITY_KGPM3: f64 = 1.47;

/// Where a vehicle is and how fast it can leave: within `tau` seconds it
/// stays within [`Reach::within`] of `position_ned_m`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reach {
    pub position_ned_m: [f64; 3],
    pub speed_mps: f64,
    pub accel_mps2: f64,
}

impl Reach {
    /// The farthest from its position the vehicle can be `tau_s` seconds
    /// on, m.
    pub fn within(&self, tau_s: f64) -> f64 {
        self.speed_mps * tau_s + 0.5 * self.accel_mps2 * tau_s * tau_s
    }

    /// How far `p` is from its position, m.
    pub fn moved(&self, p: [f64; 3]) -> f64 {
        norm([
            p[0] - self.position_ned_m[0],
            p[1] - self.position_ned_m[1],
            p[2] - self.position_ned_m[2],
        ])
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

impl Engine {
    /// The vehicle's reach from where it is now.
    pub fn reach(&self) -> Reach {
        let p = &self.vehicle.physics;
        let plant = &p.plant;
        let x = &p.x;
        let m = plant.mass_kg;
        // Thrust: each rotor's steady state at full command on the
        // batteries' full EMF (every pack counted, as if in series).
        let bus_v: f64 = plant
            .batteries
            .iter()
            .map(|b| b.emf(1.0, 0.0).max(b.nominal_voltage_v))
            .sum();
        let rho = self
            .vehicle
            .outputs
            .air_density_kgpm3
            .max(MAX_DENSITY_KGPM3);
        let rotor_n = plant.steady_state_thrust_n(1.0, bus_v, rho);
        let thrust = THRUST_MARGIN * rotor_n * plant.rotors.len() as f64 / m;
        let external = p.inputs.external_force_ned_n.map_or(0.0, |f| norm(f) / m);
        let w = p.inputs.wind_ned_mps;
        let air = norm([x[3] - w[0], x[4] - w[1], x[5] - w[2]]);
        Reach {
            position_ned_m: [x[0], x[1], x[2]],
            speed_mps: air + norm(w) + 2.0 * WIND_MARGIN_MPS,
            accel_mps2: thrust + plant.gravity_mps2() + external,
        }
    }
}
