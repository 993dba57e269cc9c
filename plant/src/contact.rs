//! Flat ground at z = 0 (NED): penalty spring-damper normal force with smooth
//! Coulomb friction, applied at contact points of the airframe.
//!
//! The damping ramps in over the first [`DAMPING_RAMP_M`] of penetration, so
//! the normal force is continuous at touchdown (a plain `k d + c v` jumps by
//! `c v` at first contact, which no error-controlled step can resolve).

/// Penetration over which the contact damping ramps in, m.
pub const DAMPING_RAMP_M: f64 = 0.002;

#[derive(Debug, Clone, PartialEq)]
pub struct Contact {
    /// Contact points in body FRD relative to the centre of mass.
    pub points_m: Vec<[f64; 3]>,
    /// Per point.
    pub stiffness_n_per_m: f64,
    pub damping_ns_per_m: f64,
    pub friction_coeff: f64,
    /// Slip speed over which friction reaches about 70 % of Coulomb.
    pub friction_smoothing_mps: f64,
}

impl Contact {
    /// Force (NED) at a point at NED position `p` moving with NED velocity
    /// `v`; zero above the ground.
    pub fn force(&self, p: [f64; 3], v: [f64; 3]) -> [f64; 3] {
        let depth = p[2];
        if depth <= 0.0 {
            return [0.0; 3];
        }
        let ramp = (depth * (1.0 / DAMPING_RAMP_M)).min(1.0);
        let normal =
            (self.stiffness_n_per_m * depth + ramp * self.damping_ns_per_m * v[2]).max(0.0);
        let slip =
            (v[0] * v[0] + v[1] * v[1] + self.friction_smoothing_mps * self.friction_smoothing_mps)
                .sqrt();
        let k = -self.friction_coeff * normal / slip;
        [k * v[0], k * v[1], -normal]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spring_damper_and_friction() {
        let c = Contact {
            points_m: vec![],
            stiffness_n_per_m: 1000.0,
            damping_ns_per_m: 10.0,
            friction_coeff: 0.5,
            friction_smoothing_mps: 0.01,
        };
        assert_eq!(c.force([0.0, 0.0, -0.1], [1.0, 0.0, 1.0]), [0.0; 3]);
        let f = c.force([0.0, 0.0, 0.01], [0.0, 0.0, 0.0]);
        assert_eq!(f, [0.0, 0.0, -10.0]);
        // Continuous at touchdown: the damping ramps in with depth.
        let f = c.force([0.0, 0.0, 1e-6], [0.0, 0.0, 10.0]);
        assert!(
            (f[2] + 1000.0 * 1e-6 + 10.0 * 10.0 * 1e-6 / DAMPING_RAMP_M).abs() < 1e-12,
            "{f:?}"
        );
        let f = c.force([0.0, 0.0, 0.005], [0.0, 0.0, 1.0]);
        assert_eq!(f, [0.0, 0.0, -15.0], "full damping past the ramp");
        // Pulling out fast never pulls the vehicle down.
        assert_eq!(
            c.force([0.0, 0.0, 0.01], [0.0, 0.0, -5.0]),
            [0.0, 0.0, -0.0]
        );
        // Sliding: friction opposes and approaches mu * N.
        let f = c.force([0.0, 0.0, 0.01], [2.0, 0.0, 0.0]);
        assert!(f[0] < 0.0 && (f[0] + 5.0).abs() < 1e-4 && f[1] == 0.0);
    }
}
