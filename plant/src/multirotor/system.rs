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

/// Below this speed a rotor whose ESC gives it no duty has stopped
/// (1e-6 rad/s is 1e-5 RPM; its thrust, kT·ω², is below 1e-19 N).
pub const ROTOR_STOP_RADPS: f64 = 1e-6;

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

    /// Unit quaternion, non-negative rotor speeds (an undriven rotor below
    /// [`ROTOR_STOP_RADPS`] stopped), state of charge in [0, 1].
    ///
    /// Only finite values are projected: a NaN or infinite rotor speed or
    /// state of charge stays as it is, so that the integrator's finiteness
    /// check reports it as [`IntegratorError::NonFinite`] (an empty, cut-off
    /// pack is SOC 0, never a NaN turned into 0).
    ///
    /// The clamp at 1 discards charge: a pack already full that another
    /// parallel pack charges (after a reconnect, say) stays at 1 and the
    /// charging current is lost from the energy bookkeeping. The model has
    /// no overcharge.
    ///
    /// [`IntegratorError::NonFinite`]: crate::integrate::IntegratorError::NonFinite
    fn project(&self, x: &mut [f64]) {
        let q = &mut x[StateLayout::QUAT..StateLayout::QUAT + 4];
        let inv = 1.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        for v in q.iter_mut() {
            *v *= inv;
        }
        let l = &self.plant.layout;
        let r0 = l.rotor_speed(0);
        // `v - v` is 0 for a finite `v` and NaN otherwise: adding it keeps a
        // non-finite value non-finite (for the check) without a branch, and
        // leaves finite results as they are (-0 becomes +0). A branch here
        // cost 80 instructions per step; this keeps the loop vectorized.
        for w in &mut x[r0..r0 + l.rotors] {
            #[allow(clippy::eq_op)] // the point: 0, or NaN when not finite
            let poison = *w - *w;
            *w = w.max(0.0) + poison;
        }
        // An undriven rotor below ROTOR_STOP_RADPS has stopped: its
        // friction is smoothed near zero speed (so the right-hand side
        // stays continuous), which alone would leave it decaying
        // exponentially for ever, through subnormal speeds. (A separate
        // pass, rarely entered, keeps the clamp above vectorized.)
        // (Not with actuator states: a lagging actuator may still drive a
        // rotor whose command has fallen to the deadzone.)
        let rotors = &mut x[r0..r0 + l.rotors];
        if l.actuator_states == 0 && rotors.iter().any(|w| *w > 0.0 && *w < ROTOR_STOP_RADPS) {
            let dz = self.plant.k.deadzone;
            for (i, w) in rotors.iter_mut().enumerate() {
                let undriven = !self.inputs.motor_enabled[i] || self.inputs.motor_cmd[i] <= dz;
                if undriven && *w < ROTOR_STOP_RADPS {
                    *w = 0.0;
                }
            }
        }
        for j in 0..l.batteries {
            let soc = &mut x[l.soc(j)];
            #[allow(clippy::eq_op)] // as above
            let poison = *soc - *soc;
            *soc = soc.clamp(0.0, 1.0) + poison;
        }
    }
}
