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
            (t, P0_PA * (t / T0_K).powf(-gmr / L0))
        } else {
            let p1 = P0_PA * (T1 / T0_K).powf(-gmr / L0);
            if h_m <= H2 {
                (T1, p1 * (-gmr * (h_m - H1) / T1).exp())
            } else {
                let p2 = p1 * (-gmr * (H2 - H1) / T1).exp();
                let t = T1 + L2 * (h_m - H2);
                (t, p2 * (t / T1).powf(-gmr / L2))
            }
        };
        Isa {
            temperature_k: t,
            pressure_pa: p,
            density_kgpm3: p / (R_AIR * t),
        }
    }
}

#[cfg(test)]
mod tests {
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
