//! How far a vehicle can go: its speed now and a bound on its acceleration
//! from its spec (every rotor at the most thrust its batteries can drive,
//! gravity, drag at a generous air speed, the external force held on it),
//! for a fleet's lookahead. A bound, not a prediction: the fleet checks
//! every position against it after the stretch it granted, and redoes a
//! stretch that broke it.

use super::Engine;

/// Air speed, m/s, the drag bound allows beyond the vehicle's own speed
/// and the wind now: gusts and turbulence to come.
pub const WIND_MARGIN_MPS: f64 = 10.0;

/// Thrust allowed beyond a rotor's at the full batteries' no-load speed
/// (ground effect, a rotor windmilling faster), as a factor.
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
        let d = [
            p[0] - self.position_ned_m[0],
            p[1] - self.position_ned_m[1],
            p[2] - self.position_ned_m[2],
        ];
        (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

impl Engine {
    /// The vehicle's reach over stretches of at most `horizon_s` seconds.
    pub fn reach(&self, horizon_s: f64) -> Reach {
        let p = &self.vehicle.physics;
        let plant = &p.plant;
        let x = &p.x;
        let m = plant.mass_kg;
        let speed = norm([x[3], x[4], x[5]]);
        // Thrust: the bus can drive no rotor past the batteries' full EMF
        // over the back-EMF constant (every pack counted, as if in series).
        let bus_v: f64 = plant
            .batteries
            .iter()
            .map(|b| b.emf(1.0, 0.0).max(b.nominal_voltage_v))
            .sum();
        let w_max = bus_v / plant.motor.ke();
        let rho = self
            .vehicle
            .outputs
            .air_density_kgpm3
            .max(MAX_DENSITY_KGPM3);
        let rotor_n = plant.propeller.thrust(w_max, rho, 0.0);
        let thrust = THRUST_MARGIN * rotor_n * plant.rotors.len() as f64 / m;
        let gravity = plant.gravity_mps2();
        let external = p.inputs.external_force_ned_n.map_or(0.0, |f| norm(f) / m);
        // Drag at the most air speed the stretch allows: the speed now,
        // what thrust and gravity can add, the wind now and a margin.
        let air = speed
            + (thrust + gravity + external) * horizon_s
            + norm(self.world.wind_now)
            + norm(self.wind_offset)
            + WIND_MARGIN_MPS;
        let mut drag = 0.0;
        for c in 0..3 {
            drag +=
                (plant.linear_drag_ns_per_m[c] + plant.quadratic_drag_ns2_per_m2[c] * air) * air;
        }
        Reach {
            position_ned_m: [x[0], x[1], x[2]],
            speed_mps: speed,
            accel_mps2: thrust + gravity + external + drag / m,
        }
    }
}
