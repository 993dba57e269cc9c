//! The plant as an ODE system for the integrators, and its error norm.

use super::{Multirotor, PlantInputs, StateLayout};
use crate::integrate::{ErrorGroup, GroupKind, System};

/// Tolerances of the adaptive error norm per state group. Rotor speeds,
/// state of charge and V1 are opt-in (`None`: not measured).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    pub position: (f64, f64),
    pub velocity: (f64, f64),
    pub attitude_rad: f64,
    pub rates: (f64, f64),
    pub rotor_speeds: Option<(f64, f64)>,
    pub soc: Option<(f64, f64)>,
    pub v1: Option<(f64, f64)>,
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances {
            position: (1e-5, 1e-6),
            velocity: (1e-5, 1e-6),
            attitude_rad: 1e-6,
            rates: (1e-5, 1e-6),
            rotor_speeds: None,
            soc: None,
            v1: None,
        }
    }
}

impl Tolerances {
    /// The same relative and absolute tolerance for every always-measured
    /// group (attitude uses `atol` in radians).
    pub fn uniform(atol: f64, rtol: f64) -> Self {
        Tolerances {
            position: (atol, rtol),
            velocity: (atol, rtol),
            attitude_rad: atol,
            rates: (atol, rtol),
            ..Tolerances::default()
        }
    }

    pub(crate) fn groups(&self, l: &StateLayout) -> Vec<ErrorGroup> {
        let vec = |name, start, len, (atol, rtol): (f64, f64)| ErrorGroup {
            name,
            start,
            len,
            kind: GroupKind::Vector { atol, rtol },
        };
        let mut g = vec![
            vec("position", StateLayout::POS, 3, self.position),
            vec("velocity", StateLayout::VEL, 3, self.velocity),
            ErrorGroup {
                name: "attitude",
                start: StateLayout::QUAT,
                len: 4,
                kind: GroupKind::Quaternion {
                    atol_rad: self.attitude_rad,
                },
            },
            vec("rates", StateLayout::RATES, 3, self.rates),
        ];
        if let Some(t) = self.rotor_speeds {
            g.push(vec("rotor_speeds", l.rotor_speed(0), l.rotors, t));
        }
        for j in 0..l.batteries {
            if let Some(t) = self.soc {
                g.push(vec("soc", l.soc(j), 1, t));
            }
            if let Some(t) = self.v1 {
                g.push(vec("v1", l.v1(j), 1, t));
            }
        }
        g
    }
}

/// The plant with its inputs held: what an integrator steps.
#[derive(Debug, Clone, Copy)]
pub struct HeldPlant<'a> {
    pub plant: &'a Multirotor,
    pub inputs: &'a PlantInputs,
}

impl System for HeldPlant<'_> {
    fn dim(&self) -> usize {
        self.plant.dim()
    }

    fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
        self.plant.rhs(x, self.inputs, dx);
    }

    fn error_groups(&self) -> &[ErrorGroup] {
        &self.plant.groups
    }

    /// Unit quaternion, non-negative rotor speeds, state of charge in [0, 1].
    fn project(&self, x: &mut [f64]) {
        let q = &mut x[StateLayout::QUAT..StateLayout::QUAT + 4];
        let inv = 1.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        for v in q.iter_mut() {
            *v *= inv;
        }
        let l = &self.plant.layout;
        let r0 = l.rotor_speed(0);
        // (NaN becomes 0, as f64::max would make it.)
        for w in &mut x[r0..r0 + l.rotors] {
            *w = if *w > 0.0 { *w } else { 0.0 };
        }
        for j in 0..l.batteries {
            let soc = &mut x[l.soc(j)];
            *soc = if *soc > 1.0 {
                1.0
            } else if *soc > 0.0 {
                *soc
            } else {
                0.0
            };
        }
    }
}
