//! Gravity in the local NED frame.

/// WGS-84 mean Earth radius used by the spherical model, m.
pub const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// How gravity is modelled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gravity {
    /// `(0, 0, g)` everywhere.
    Uniform { g_mps2: f64 },
    /// A point mass at the Earth's centre, `g_mps2` at the surface below the
    /// origin; direction and magnitude follow the vehicle's position.
    Spherical { g_mps2: f64, origin_alt_m: f64 },
}

impl Gravity {
    /// Acceleration (NED, m/s^2) at NED position `p`.
    pub fn at(&self, p: [f64; 3]) -> [f64; 3] {
        match *self {
            Gravity::Uniform { g_mps2 } => [0.0, 0.0, g_mps2],
            Gravity::Spherical {
                g_mps2,
                origin_alt_m,
            } => {
                // The centre lies straight below the origin.
                let c = [-p[0], -p[1], EARTH_RADIUS_M + origin_alt_m - p[2]];
                let r2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
                let r = r2.sqrt();
                let k = g_mps2 * EARTH_RADIUS_M * EARTH_RADIUS_M / (r2 * r);
                [k * c[0], k * c[1], k * c[2]]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spherical_gravity_falls_off_with_the_inverse_square_and_points_at_the_centre() {
        let g = Gravity::Spherical {
            g_mps2: 9.80665,
            origin_alt_m: 0.0,
        };
        let a = g.at([0.0, 0.0, 0.0]);
        assert!(
            a[0] == 0.0 && a[1] == 0.0 && (a[2] - 9.80665).abs() < 1e-12,
            "{a:?}"
        );
        let up = g.at([0.0, 0.0, -10_000.0]);
        let expect = 9.80665 * (EARTH_RADIUS_M / (EARTH_RADIUS_M + 10_000.0)).powi(2);
        assert!((up[2] / expect - 1.0).abs() < 1e-12);
        // 1 km north: gravity tilts back towards the origin's vertical.
        let n = g.at([1000.0, 0.0, 0.0]);
        assert!((n[0] / n[2] + 1000.0 / EARTH_RADIUS_M).abs() < 1e-12);
        assert_eq!(
            Gravity::Uniform { g_mps2: 9.8 }.at([5.0, 6.0, -7.0]),
            [0.0, 0.0, 9.8]
        );
    }
}
