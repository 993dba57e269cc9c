//! The world origin on the WGS-84 ellipsoid and exact conversions between
//! local NED (a tangent frame at the origin) and geodetic coordinates,
//! through Earth-centred Earth-fixed coordinates. Exact at any distance:
//! no flat-Earth or spherical approximation. Trigonometry comes from the
//! `libm` crate: the same bits on every host.

/// WGS-84 semi-major axis, m.
pub const WGS84_A: f64 = 6_378_137.0;
/// WGS-84 flattening.
pub const WGS84_F: f64 = 1.0 / 298.257_223_563;

const E2: f64 = WGS84_F * (2.0 - WGS84_F);
const B: f64 = WGS84_A * (1.0 - WGS84_F);

/// A geodetic position: latitude and longitude in degrees, height above the
/// ellipsoid in metres.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geodetic {
    pub lat_deg: f64,
    pub lon_deg: f64,
    pub alt_m: f64,
}

/// The NED frame's origin, with its ECEF position and rotation cached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorldOrigin {
    pub geodetic: Geodetic,
    ecef: [f64; 3],
    /// Rows: north, east, down unit vectors in ECEF.
    r: [[f64; 3]; 3],
}

/// ECEF of a geodetic position.
pub fn geodetic_to_ecef(g: Geodetic) -> [f64; 3] {
    let (sl, cl) = libm::sincos(g.lat_deg.to_radians());
    let (so, co) = libm::sincos(g.lon_deg.to_radians());
    let n = WGS84_A / (1.0 - E2 * sl * sl).sqrt();
    [
        (n + g.alt_m) * cl * co,
        (n + g.alt_m) * cl * so,
        (n * (1.0 - E2) + g.alt_m) * sl,
    ]
}

/// Geodetic of an ECEF position (Heikkinen's closed form: exact to well below
/// a millimetre everywhere outside the Earth's centre; no iteration).
pub fn ecef_to_geodetic(p: [f64; 3]) -> Geodetic {
    let (x, y, z) = (p[0], p[1], p[2]);
    let a = WGS84_A;
    let ep2 = (a * a - B * B) / (B * B);
    let r = (x * x + y * y).sqrt();
    let f = 54.0 * B * B * z * z;
    let g = r * r + (1.0 - E2) * z * z - E2 * (a * a - B * B);
    let c = E2 * E2 * f * r * r / (g * g * g);
    let s = libm::cbrt(1.0 + c + (c * c + 2.0 * c).sqrt());
    let k = s + 1.0 + 1.0 / s;
    let pp = f / (3.0 * k * k * g * g);
    let q = (1.0 + 2.0 * E2 * E2 * pp).sqrt();
    let r0 = -pp * E2 * r / (1.0 + q)
        + (0.5 * a * a * (1.0 + 1.0 / q)
            - pp * (1.0 - E2) * z * z / (q * (1.0 + q))
            - 0.5 * pp * r * r)
            .sqrt();
    let rr = r - E2 * r0;
    let u = (rr * rr + z * z).sqrt();
    let v = (rr * rr + (1.0 - E2) * z * z).sqrt();
    let z0 = B * B * z / (a * v);
    Geodetic {
        lat_deg: libm::atan((z + ep2 * z0) / r).to_degrees(),
        lon_deg: libm::atan2(y, x).to_degrees(),
        alt_m: u * (1.0 - B * B / (a * v)),
    }
}

impl WorldOrigin {
    pub fn new(origin: Geodetic) -> Self {
        let (sl, cl) = libm::sincos(origin.lat_deg.to_radians());
        let (so, co) = libm::sincos(origin.lon_deg.to_radians());
        WorldOrigin {
            geodetic: origin,
            ecef: geodetic_to_ecef(origin),
            r: [
                [-sl * co, -sl * so, cl],
                [-so, co, 0.0],
                [-cl * co, -cl * so, -sl],
            ],
        }
    }

    /// Local NED position of a geodetic one.
    pub fn to_ned(&self, g: Geodetic) -> [f64; 3] {
        let p = geodetic_to_ecef(g);
        let d = [
            p[0] - self.ecef[0],
            p[1] - self.ecef[1],
            p[2] - self.ecef[2],
        ];
        let r = &self.r;
        [
            r[0][0] * d[0] + r[0][1] * d[1] + r[0][2] * d[2],
            r[1][0] * d[0] + r[1][1] * d[1] + r[1][2] * d[2],
            r[2][0] * d[0] + r[2][1] * d[1] + r[2][2] * d[2],
        ]
    }

    /// Geodetic position of a local NED one.
    pub fn to_geodetic(&self, ned: [f64; 3]) -> Geodetic {
        let r = &self.r;
        let mut p = self.ecef;
        for (i, pi) in p.iter_mut().enumerate() {
            *pi += r[0][i] * ned[0] + r[1][i] * ned[1] + r[2][i] * ned[2];
        }
        ecef_to_geodetic(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ecef_points() {
        let e = geodetic_to_ecef(Geodetic {
            lat_deg: 0.0,
            lon_deg: 0.0,
            alt_m: 0.0,
        });
        assert_eq!(e, [WGS84_A, 0.0, 0.0]);
        let pole = geodetic_to_ecef(Geodetic {
            lat_deg: 90.0,
            lon_deg: 0.0,
            alt_m: 0.0,
        });
        assert!((pole[2] - B).abs() < 1e-6 && pole[0].abs() < 1e-6);
        let back = ecef_to_geodetic([WGS84_A + 100.0, 0.0, 0.0]);
        assert!(back.lat_deg.abs() < 1e-12 && (back.alt_m - 100.0).abs() < 1e-6);
    }

    #[test]
    fn round_trips_are_exact_far_from_the_origin() {
        let o = WorldOrigin::new(Geodetic {
            lat_deg: 47.397742,
            lon_deg: 8.545594,
            alt_m: 488.0,
        });
        for ned in [
            [0.0, 0.0, 0.0],
            [100.0, -50.0, -20.0],
            [25_000.0, 40_000.0, -3_000.0],
            [-1e5, 2e5, 500.0],
        ] {
            let g = o.to_geodetic(ned);
            let back = o.to_ned(g);
            for k in 0..3 {
                assert!(
                    (back[k] - ned[k]).abs() < 1e-6,
                    "{ned:?} -> {g:?} -> {back:?}"
                );
            }
        }
        // Straight up is altitude, not horizontal motion.
        let up = o.to_geodetic([0.0, 0.0, -1000.0]);
        assert!((up.alt_m - 1488.0).abs() < 1e-6);
        assert!((up.lat_deg - 47.397742).abs() < 1e-12 && (up.lon_deg - 8.545594).abs() < 1e-12);
    }

    #[test]
    fn small_offsets_match_the_meridian_and_prime_vertical_radii() {
        let lat: f64 = 47.397742;
        let o = WorldOrigin::new(Geodetic {
            lat_deg: lat,
            lon_deg: 8.545594,
            alt_m: 0.0,
        });
        let s = lat.to_radians().sin();
        let w = (1.0 - E2 * s * s).sqrt();
        let m = WGS84_A * (1.0 - E2) / (w * w * w);
        let n = WGS84_A / w;
        // At 10 m the second-order (curvature) terms are ~1e-5 m; a spherical
        // Earth would be off by ~3 cm.
        let g = o.to_geodetic([10.0, 10.0, 0.0]);
        let dn = (g.lat_deg - lat).to_radians() * m - 10.0;
        let de = (g.lon_deg - 8.545594).to_radians() * n * lat.to_radians().cos() - 10.0;
        assert!(dn.abs() < 2e-5 && de.abs() < 2e-5, "{dn:e} {de:e}");
    }
}
