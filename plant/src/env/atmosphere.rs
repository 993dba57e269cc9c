//! The 1976 U.S. Standard Atmosphere (ISA) from -5 km to 32 km.
//!
//! Input is geometric altitude above mean sea level; the layers are defined
//! in geopotential altitude `H = r0 z / (r0 + z)`. Below -5 km and above
//! 32 km the nearest bound's values are returned (a multirotor never gets
//! there; [`Isa::in_range`] says when that happens).

/// Sea-level standard values.
pub const P0_PA: f64 = 101_325.0;
pub const T0_K: f64 = 288.15;
pub const RHO0_KGPM3: f64 = 1.225;
/// Specific gas constant of dry air, J/(kg K) (R* / M0 of the 1976 standard).
pub const R_AIR: f64 = 8.314_32 / 0.028_964_4;
/// Standard gravity, m/s^2.
pub const G0: f64 = 9.806_65;
/// Effective Earth radius for geopotential altitude, m.
pub const R0_GEOPOTENTIAL_M: f64 = 6_356_766.0;

const MIN_ALT_M: f64 = -5_000.0;
const MAX_ALT_M: f64 = 32_000.0;

/// Temperature, pressure and density at one altitude.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Isa {
    pub temperature_k: f64,
    pub pressure_pa: f64,
    pub density_kgpm3: f64,
}

impl Isa {
    /// True when `alt_m` lies in the modelled range.
    pub fn in_range(alt_m: f64) -> bool {
        (MIN_ALT_M..=MAX_ALT_M).contains(&alt_m)
    }

    /// At geometric altitude `alt_m` above mean sea level.
    pub fn at_altitude(alt_m: f64) -> Isa {
        let z = alt_m.clamp(MIN_ALT_M, MAX_ALT_M);
        Isa::at_geopotential(R0_GEOPOTENTIAL_M * z / (R0_GEOPOTENTIAL_M + z))
    }

    /// Density only, at geometric altitude `alt_m` (the plant's hot path:
    /// one `pow` in the troposphere). Same value as `at_altitude(..).density_kgpm3`.
    pub fn density_at(alt_m: f64) -> f64 {
        let z = alt_m.clamp(MIN_ALT_M, MAX_ALT_M);
        let h = R0_GEOPOTENTIAL_M * z / (R0_GEOPOTENTIAL_M + z);
        if h <= 11_000.0 {
            let t = T0_K - 0.0065 * h;
            P0_PA * libm::pow(t / T0_K, G0 / (R_AIR * 0.0065)) / (R_AIR * t)
        } else {
            Isa::at_geopotential(h).density_kgpm3
        }
    }

    /// At geopotential altitude `h_m`.
    pub fn at_geopotential(h_m: f64) -> Isa {
        // Layer bases: (H, T, lapse K/m); base pressures follow from the
        // layers below (computed, not tabulated, so they are self-consistent).
        const L0: f64 = -0.0065;
        const H1: f64 = 11_000.0;
        const T1: f64 = T0_K + L0 * H1; // 216.65
        const H2: f64 = 20_000.0;
        const L2: f64 = 0.001;
        let gmr = G0 / R_AIR;
        let (t, p) = if h_m <= H1 {
            let t = T0_K + L0 * h_m;
            (t, P0_PA * libm::pow(t / T0_K, -gmr / L0))
        } else {
            let p1 = P0_PA * libm::pow(T1 / T0_K, -gmr / L0);
            if h_m <= H2 {
                (T1, p1 * libm::exp(-gmr * (h_m - H1) / T1))
            } else {
                let p2 = p1 * libm::exp(-gmr * (H2 - H1) / T1);
                let t = T1 + L2 * (h_m - H2);
                (t, p2 * libm::pow(t / T1, -gmr / L2))
            }
        };
        Isa {
            temperature_k: t,
            pressure_pa: p,
            density_kgpm3: p / (R_AIR * t),
        }
    }
}

/// Layer bases in geopotential altitude and their lapse rates (K/m).
const LAYERS: [(f64, f64); 3] = [(0.0, -0.0065), (11_000.0, 0.0), (20_000.0, 0.001)];

/// Geopotential altitude of geometric altitude `z`.
fn geopotential(z: f64) -> f64 {
    R0_GEOPOTENTIAL_M * z / (R0_GEOPOTENTIAL_M + z)
}

/// Geometric altitude of geopotential altitude `h`.
fn geometric(h: f64) -> f64 {
    R0_GEOPOTENTIAL_M * h / (R0_GEOPOTENTIAL_M - h)
}

/// Density over geometric altitude as a cubic Hermite table with exact
/// values and derivatives at 25 m knots (relative error ~1e-14); intervals
/// holding a layer boundary (a kink in the profile) use the exact formula.
/// Each cell stores its cubic in powers of the position within the cell, so
/// a lookup is one index and a Horner evaluation. Same range and clamping
/// as [`Isa::at_altitude`].
#[derive(Debug, Clone, PartialEq)]
pub struct DensityTable {
    /// Per cell: `c0 + t (c1 + t (c2 + t c3))`, `t` in [0, 1]; `exact`
    /// cells use the formula instead.
    cells: Vec<DensityCell>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct DensityCell {
    c: [f64; 4],
    exact: bool,
}

const STEP_M: f64 = 25.0;

impl DensityTable {
    pub fn new() -> Self {
        let n = ((MAX_ALT_M - MIN_ALT_M) / STEP_M) as usize;
        let mut rho = Vec::with_capacity(n + 1);
        let mut slope = Vec::with_capacity(n + 1);
        for k in 0..=n {
            let z = MIN_ALT_M + k as f64 * STEP_M;
            let h = geopotential(z);
            let a = Isa::at_geopotential(h);
            let lapse = LAYERS
                .iter()
                .rev()
                .find(|(base, _)| h >= *base)
                .map_or(LAYERS[0].1, |l| l.1);
            let gmr = G0 / R_AIR;
            let drho_dh = -a.density_kgpm3 * (gmr + lapse) / a.temperature_k;
            let ratio = R0_GEOPOTENTIAL_M / (R0_GEOPOTENTIAL_M + z);
            let dh_dz = ratio * ratio;
            rho.push(a.density_kgpm3);
            slope.push(drho_dh * dh_dz * STEP_M);
        }
        let cells = (0..n)
            .map(|k| {
                let (z0, z1) = (
                    MIN_ALT_M + k as f64 * STEP_M,
                    MIN_ALT_M + (k + 1) as f64 * STEP_M,
                );
                let exact = LAYERS[1..].iter().any(|(base, _)| {
                    let zb = geometric(*base);
                    zb > z0 && zb < z1
                });
                // Cubic Hermite in the power basis.
                let (p0, p1, m0, m1) = (rho[k], rho[k + 1], slope[k], slope[k + 1]);
                DensityCell {
                    c: [
                        p0,
                        m0,
                        -3.0 * p0 - 2.0 * m0 + 3.0 * p1 - m1,
                        2.0 * p0 + m0 - 2.0 * p1 + m1,
                    ],
                    exact,
                }
            })
            .collect();
        DensityTable { cells }
    }

    /// Density at geometric altitude `alt_m`.
    #[inline]
    pub fn density(&self, alt_m: f64) -> f64 {
        let z = alt_m.clamp(MIN_ALT_M, MAX_ALT_M);
        let pos = (z - MIN_ALT_M) * (1.0 / STEP_M);
        let k = (pos as usize).min(self.cells.len() - 1);
        let cell = &self.cells[k];
        if cell.exact {
            return Isa::density_at(z);
        }
        let t = pos - k as f64;
        let c = &cell.c;
        c[0] + t * (c[1] + t * (c[2] + t * c[3]))
    }
}

impl Default for DensityTable {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn density_table_matches_the_exact_profile() {
        let t = DensityTable::new();
        let mut worst = 0.0f64;
        let mut z = -5_000.0;
        while z <= 32_000.0 {
            let exact = Isa::density_at(z);
            worst = worst.max((t.density(z) / exact - 1.0).abs());
            z += 0.37;
        }
        assert!(worst < 1e-12, "worst relative error {worst:e}");
        assert_eq!(t.density(-9_000.0), Isa::density_at(-5_000.0));
        assert_eq!(t.density(50_000.0), Isa::density_at(32_000.0));
    }

    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a / b - 1.0).abs() < rel
    }

    #[test]
    fn sea_level_matches_the_standard() {
        let a = Isa::at_altitude(0.0);
        assert!(close(a.temperature_k, 288.15, 1e-12));
        assert!(close(a.pressure_pa, 101_325.0, 1e-12));
        assert!(close(a.density_kgpm3, 1.2250, 1e-4), "{}", a.density_kgpm3);
    }

    #[test]
    fn tropopause_matches_the_1976_tables() {
        // Geopotential 11 km: 216.65 K, 22 632.1 Pa, 0.363 918 kg/m^3.
        let a = Isa::at_geopotential(11_000.0);
        assert!(close(a.temperature_k, 216.65, 1e-12));
        assert!(close(a.pressure_pa, 22_632.1, 1e-5), "{}", a.pressure_pa);
        assert!(
            close(a.density_kgpm3, 0.363_918, 1e-5),
            "{}",
            a.density_kgpm3
        );
        // Geometric 11 km (geopotential 10 981 m): 216.774 K, 22 699.9 Pa, 0.364 801 kg/m^3.
        let g = Isa::at_altitude(11_000.0);
        assert!(close(g.temperature_k, 216.774, 1e-5), "{}", g.temperature_k);
        assert!(close(g.pressure_pa, 22_699.9, 1e-4), "{}", g.pressure_pa);
        assert!(
            close(g.density_kgpm3, 0.364_801, 1e-4),
            "{}",
            g.density_kgpm3
        );
    }

    #[test]
    fn fast_density_is_the_same_number() {
        for alt in [
            -5000.0, -10.0, 0.0, 488.0, 5000.0, 10_999.0, 11_050.0, 25_000.0,
        ] {
            assert_eq!(
                Isa::density_at(alt),
                Isa::at_altitude(alt).density_kgpm3,
                "{alt}"
            );
        }
    }

    #[test]
    fn stratosphere_matches_the_1976_tables() {
        // Geopotential 20 km: 216.65 K, 5474.89 Pa; 32 km: 228.65 K, 868.019 Pa.
        let a = Isa::at_geopotential(20_000.0);
        assert!(close(a.pressure_pa, 5_474.89, 1e-5), "{}", a.pressure_pa);
        let b = Isa::at_geopotential(32_000.0);
        assert!(close(b.temperature_k, 228.65, 1e-12));
        assert!(close(b.pressure_pa, 868.019, 1e-4), "{}", b.pressure_pa);
        assert!(!Isa::in_range(40_000.0) && Isa::in_range(1_000.0));
        assert_eq!(Isa::at_altitude(40_000.0), Isa::at_altitude(32_000.0));
    }
}
