//! Vehicles that start where another one is: refused before a run,
//! wherever vehicles share a world (a fleet scenario, a co-simulation's
//! system, an orchestrated fleet). Two airframes cannot occupy one place;
//! without the check a fleet reported a collision at t = 0 and a system or
//! an orchestrated fleet flew through each other without a word.
//!
//! Each vehicle is placed in ECEF from its own world origin, so vehicles
//! whose scenarios name different origins are compared where they really
//! are.

use lockstep_plant::Multirotor;
use lockstep_plant::env::geodesy::geodetic_to_ecef;

/// Where a vehicle starts and how far its airframe reaches.
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    pub name: String,
    /// Earth-centred, Earth-fixed, m.
    pub ecef_m: [f64; 3],
    /// The collision radius (the fleet's `radius_m`, else the rotor tips').
    pub radius_m: f64,
}

impl Start {
    /// Vehicle `name` with plant `plant` at `ned_m` (its own NED frame),
    /// its radius `radius_m` or else its rotor tips'.
    pub fn new(name: &str, plant: &Multirotor, ned_m: [f64; 3], radius_m: Option<f64>) -> Start {
        Start {
            name: name.to_string(),
            ecef_m: geodetic_to_ecef(plant.origin.to_geodetic(ned_m)),
            radius_m: radius_m.unwrap_or_else(|| crate::run::rotor_tip_radius_m(plant)),
        }
    }
}

/// Refuses the first pair (in the given order) that starts closer than
/// their radii together.
pub fn check_starts(starts: &[Start]) -> Result<(), String> {
    for (i, a) in starts.iter().enumerate() {
        for b in &starts[i + 1..] {
            let d = (0..3)
                .map(|k| (a.ecef_m[k] - b.ecef_m[k]).powi(2))
                .sum::<f64>()
                .sqrt();
            let contact = a.radius_m + b.radius_m;
            if d < contact {
                return Err(format!(
                    "vehicles `{}` and `{}` start {d:.3} m apart, closer than their radii together ({contact:.3} m): they would collide at once; give them different starts",
                    a.name, b.name
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(name: &str, ecef_m: [f64; 3]) -> Start {
        Start {
            name: name.into(),
            ecef_m,
            radius_m: 0.25,
        }
    }

    #[test]
    fn the_first_overlapping_pair_is_named() {
        let apart = [
            at("a", [0.0; 3]),
            at("b", [0.6, 0.0, 0.0]),
            at("c", [0.0, 0.0, 1.0]),
        ];
        assert_eq!(check_starts(&apart), Ok(()));
        let touching = [
            at("a", [0.0; 3]),
            at("b", [3.0, 0.0, 0.0]),
            at("c", [3.0, 0.4, 0.0]),
        ];
        assert_eq!(
            check_starts(&touching),
            Err("vehicles `b` and `c` start 0.400 m apart, closer than their radii together (0.500 m): they would collide at once; give them different starts".into())
        );
    }
}
