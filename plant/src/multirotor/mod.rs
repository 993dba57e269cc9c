//! The multirotor plant: parameters, state layout, held inputs, outputs.
//!
//! State (f64), in this order: NED position (3), NED velocity (3), attitude
//! quaternion body->NED (w x y z), body rates FRD (3), rotor speeds (one per
//! rotor, rad/s, >= 0), actuator states (0, 1 or 2 per rotor), and per
//! battery its state of charge and V1.

mod outputs;
mod rhs;
mod system;

pub use outputs::{BatteryOutput, PlantOutputs, RotorOutput};
pub use system::{HeldPlant, ROTOR_STOP_RADPS, Tolerances};

use nalgebra::{Matrix3, Vector3};

use crate::actuator::Actuator;
use crate::battery::{Battery, BatteryModel};
use crate::bus::Sharing;
use crate::contact::Contact;
use crate::env::atmosphere::DensityTable;
use crate::env::geodesy::WorldOrigin;
use crate::env::gravity::Gravity;
use crate::integrate::ErrorGroup;
use crate::propulsion::{Esc, GroundEffect, Motor, Propeller, RHO_REF};

/// Most rotors a plant may have.
pub const MAX_ROTORS: usize = 12;
/// Most batteries a plant may have.
pub const MAX_BATTERIES: usize = 8;
/// Most states a plant may have: the rigid body, and [`MAX_ROTORS`] rotors
/// each with its speed and the largest actuator model's states, and
/// [`MAX_BATTERIES`] batteries with two each (13 + 12 x 3 + 8 x 2 = 65).
pub const MAX_STATES: usize =
    StateLayout::RIGID + MAX_ROTORS * (1 + Actuator::MAX_STATES) + 2 * MAX_BATTERIES;

/// One rotor's geometry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rotor {
    pub position_m: Vector3<f64>,
    /// Unit thrust direction, body FRD.
    pub thrust_axis: Vector3<f64>,
    /// +1 or -1: the rotor spins about `spin_dir * thrust_axis`.
    pub spin_dir: f64,
    /// Derived: `spin_dir * thrust_axis`, the spin axis.
    pub spin_axis: Vector3<f64>,
    /// Derived: `position x thrust_axis`, moment per newton of thrust.
    pub moment_arm_m: Vector3<f64>,
}

impl Rotor {
    pub fn new(position_m: Vector3<f64>, thrust_axis: Vector3<f64>, spin_dir: f64) -> Self {
        Rotor {
            position_m,
            thrust_axis,
            spin_dir,
            spin_axis: thrust_axis * spin_dir,
            moment_arm_m: position_m.cross(&thrust_axis),
        }
    }
}

/// Constants of the right-hand side, derived once from the parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Derived {
    pub inv_mass: f64,
    pub ke: f64,
    pub inv_r: f64,
    pub inv_eta: f64,
    /// The ESC's deadzone and `1 / (1 - deadzone)`.
    pub deadzone: f64,
    pub inv_duty_span: f64,
    pub inv_j: f64,
    pub i_max: f64,
    pub ke_i0: f64,
    pub viscous: f64,
    /// Thrust per (rad/s)^2 per (kg/m^3), static.
    pub kt_per_rho: f64,
    /// Static reaction torque per unit thrust.
    pub kq: f64,
    /// Advance ratio per (m/s / (rad/s)).
    pub j_factor: f64,
    pub j_lo: f64,
    pub j_hi: f64,
    pub inv_j0: f64,
    pub q1: f64,
    pub q2: f64,
    pub ground_effect: Option<GroundEffect>,
    /// Every thrust axis is exactly (0, 0, -1): the right-hand side takes
    /// the flat-rotor path (the same arithmetic with the zero terms left out).
    pub flat: bool,
    /// Per rotor: thrust axis, moment arm `r x a`, spin axis, hub position.
    pub axis: [[f64; 3]; MAX_ROTORS],
    pub arm: [[f64; 3]; MAX_ROTORS],
    pub spin: [[f64; 3]; MAX_ROTORS],
    pub position: [[f64; 3]; MAX_ROTORS],
    pub rotor_inertia: f64,
    /// Per body axis: linear and quadratic drag, angular damping.
    pub drag_lin: [f64; 3],
    pub drag_quad: [f64; 3],
    pub damping: [f64; 3],
    /// The inertia tensor and its inverse, row-major.
    pub inertia: [[f64; 3]; 3],
    pub inertia_inv: [[f64; 3]; 3],
    /// Farthest contact point from the centre of mass (0 without contact).
    pub contact_reach_m: f64,
    /// Farthest rotor hub from the centre of mass.
    pub rotor_reach_m: f64,
    /// Per battery: conductance 1/R0 (infinite for R0 = 0), 1/(3600 C),
    /// 1/C1 and 1/(R1 C1) (0 for an ideal battery).
    pub g0: [f64; MAX_BATTERIES],
    pub inv_charge: [f64; MAX_BATTERIES],
    pub inv_c1: [f64; MAX_BATTERIES],
    pub inv_tau1: [f64; MAX_BATTERIES],
}

/// The body's constants the right-hand side reads: mass, inertia and its
/// inverse, drag per axis and angular damping.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyConstants {
    pub mass_kg: f64,
    pub inertia: Matrix3<f64>,
    pub inertia_inv: Matrix3<f64>,
    pub drag_lin: Vector3<f64>,
    pub drag_quad: Vector3<f64>,
    pub damping: Vector3<f64>,
}

fn rows(m: &Matrix3<f64>) -> [[f64; 3]; 3] {
    [
        [m[(0, 0)], m[(0, 1)], m[(0, 2)]],
        [m[(1, 0)], m[(1, 1)], m[(1, 2)]],
        [m[(2, 0)], m[(2, 1)], m[(2, 2)]],
    ]
}

impl Derived {
    #[allow(clippy::too_many_arguments)]
    pub fn of(
        body: &BodyConstants,
        motor: &Motor,
        esc: &Esc,
        prop: &Propeller,
        ground_effect: bool,
        rotors: &[Rotor],
        batteries: &[Battery],
        contact: Option<&Contact>,
    ) -> Self {
        let mut axis = [[0.0; 3]; MAX_ROTORS];
        let mut arm = [[0.0; 3]; MAX_ROTORS];
        let mut spin = [[0.0; 3]; MAX_ROTORS];
        let mut position = [[0.0; 3]; MAX_ROTORS];
        for (i, r) in rotors.iter().enumerate() {
            axis[i] = r.thrust_axis.into();
            arm[i] = r.moment_arm_m.into();
            spin[i] = r.spin_axis.into();
            position[i] = r.position_m.into();
        }
        let mut g0 = [0.0; MAX_BATTERIES];
        let mut inv_charge = [0.0; MAX_BATTERIES];
        let mut inv_c1 = [0.0; MAX_BATTERIES];
        let mut inv_tau1 = [0.0; MAX_BATTERIES];
        for (j, b) in batteries.iter().enumerate() {
            g0[j] = if b.r0() > 0.0 {
                1.0 / b.r0()
            } else {
                f64::INFINITY
            };
            inv_charge[j] = 1.0 / (3600.0 * b.capacity_ah);
            if let BatteryModel::Thevenin { r1_ohm, c1_f, .. } = b.model {
                inv_c1[j] = 1.0 / c1_f;
                inv_tau1[j] = 1.0 / (r1_ohm * c1_f);
            }
        }
        let j0 = prop.zero_thrust_advance_ratio;
        Derived {
            inv_mass: 1.0 / body.mass_kg,
            ke: motor.ke(),
            inv_r: 1.0 / motor.resistance_ohm,
            inv_eta: 1.0 / esc.efficiency,
            deadzone: esc.deadzone,
            inv_duty_span: 1.0 / (1.0 - esc.deadzone),
            inv_j: 1.0 / motor.rotor_inertia_kgm2,
            i_max: motor.current_limit_a,
            ke_i0: motor.ke() * motor.no_load_current_a,
            viscous: motor.viscous_friction_nms_per_rad,
            kt_per_rho: prop.thrust_coeff / RHO_REF,
            kq: prop.torque_coeff_m,
            j_factor: prop.advance_ratio_factor(),
            j_lo: -0.5 * j0,
            j_hi: j0,
            inv_j0: 1.0 / j0,
            q1: prop.torque_inflow[0],
            q2: prop.torque_inflow[1],
            ground_effect: ground_effect.then(|| GroundEffect::new(prop.radius_m)),
            flat: rotors
                .iter()
                .all(|r| r.thrust_axis == Vector3::new(0.0, 0.0, -1.0)),
            axis,
            arm,
            spin,
            position,
            rotor_inertia: motor.rotor_inertia_kgm2,
            drag_lin: body.drag_lin.into(),
            drag_quad: body.drag_quad.into(),
            damping: body.damping.into(),
            inertia: rows(&body.inertia),
            inertia_inv: rows(&body.inertia_inv),
            contact_reach_m: contact
                .map(|c| {
                    c.points_m
                        .iter()
                        .map(|p| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt())
                        .fold(0.0, f64::max)
                })
                .unwrap_or(0.0),
            rotor_reach_m: rotors
                .iter()
                .map(|r| r.position_m.norm())
                .fold(0.0, f64::max),
            g0,
            inv_charge,
            inv_c1,
            inv_tau1,
        }
    }
}

/// Where each state lives in the state vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLayout {
    pub rotors: usize,
    pub actuator_states: usize,
    pub batteries: usize,
}

impl StateLayout {
    pub const POS: usize = 0;
    pub const VEL: usize = 3;
    pub const QUAT: usize = 6;
    pub const RATES: usize = 10;
    const RIGID: usize = 13;

    pub fn rotor_speed(&self, i: usize) -> usize {
        Self::RIGID + i
    }
    pub fn actuator(&self, i: usize) -> usize {
        Self::RIGID + self.rotors + i * self.actuator_states
    }
    pub fn soc(&self, j: usize) -> usize {
        Self::RIGID + self.rotors * (1 + self.actuator_states) + 2 * j
    }
    pub fn v1(&self, j: usize) -> usize {
        self.soc(j) + 1
    }
    pub fn dim(&self) -> usize {
        Self::RIGID + self.rotors * (1 + self.actuator_states) + 2 * self.batteries
    }
}

/// Inputs held constant over an integration interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlantInputs {
    /// Motor commands in [0, 1] (index = rotor).
    pub motor_cmd: [f64; MAX_ROTORS],
    /// Air mass velocity, NED.
    pub wind_ned_mps: [f64; 3],
    /// A disabled motor gets zero duty (motor failure).
    pub motor_enabled: [bool; MAX_ROTORS],
    /// Thrust (and torque) multiplier per rotor: 1 - thrust-loss fraction.
    pub thrust_scale: [f64; MAX_ROTORS],
    pub battery_connected: [bool; MAX_BATTERIES],
    /// A force from outside the vehicle acting at its centre of mass, NED,
    /// N (a co-simulated tether or payload). `None` when there is none: the
    /// right-hand side then tests one tag instead of three numbers.
    pub external_force_ned_n: Option<[f64; 3]>,
}

impl Default for PlantInputs {
    fn default() -> Self {
        PlantInputs {
            motor_cmd: [0.0; MAX_ROTORS],
            wind_ned_mps: [0.0; 3],
            motor_enabled: [true; MAX_ROTORS],
            thrust_scale: [1.0; MAX_ROTORS],
            battery_connected: [true; MAX_BATTERIES],
            external_force_ned_n: None,
        }
    }
}

/// A validated multirotor (built by `AircraftSpec::build`).
#[derive(Debug, Clone, PartialEq)]
pub struct Multirotor {
    pub name: String,
    pub mass_kg: f64,
    pub inertia_kgm2: Matrix3<f64>,
    pub linear_drag_ns_per_m: Vector3<f64>,
    /// Per body axis `i`: force `-c_i |v_i| v_i` on the air-relative
    /// velocity's component (not on its norm).
    pub quadratic_drag_ns2_per_m2: Vector3<f64>,
    pub angular_damping_nms_per_rad: Vector3<f64>,
    pub rotors: Vec<Rotor>,
    pub esc: Esc,
    pub motor: Motor,
    pub propeller: Propeller,
    /// Cheeseman-Bennett ground effect on each rotor's thrust.
    pub ground_effect: bool,
    pub actuator: Actuator,
    pub batteries: Vec<Battery>,
    pub sharing: Sharing,
    pub avionics_power_w: f64,
    pub contact: Option<Contact>,
    pub gravity: Gravity,
    pub origin: WorldOrigin,
    pub layout: StateLayout,
    pub(crate) groups: Vec<ErrorGroup>,
    pub(crate) k: Derived,
    pub(crate) density: std::sync::Arc<DensityTable>,
}

impl Multirotor {
    /// Number of states.
    pub fn dim(&self) -> usize {
        self.layout.dim()
    }

    /// Gravity magnitude at the origin.
    pub fn gravity_mps2(&self) -> f64 {
        self.gravity.at([0.0; 3])[2]
    }

    /// Per-rotor thrust that holds the weight at sea-level density.
    pub fn hover_thrust_per_rotor_n(&self) -> f64 {
        self.mass_kg * self.gravity_mps2() / self.rotors.len() as f64
    }

    /// Rotor speed that gives the hover thrust at density `rho`.
    pub fn hover_rotor_speed(&self, rho: f64) -> f64 {
        (self.hover_thrust_per_rotor_n() / (self.propeller.thrust_coeff * rho / RHO_REF)).sqrt()
    }

    /// Small-signal time constant of one rotor's speed about the speed that
    /// holds the weight at density `rho` (no inflow, motor current below
    /// its limit): `J / (Kt Ke / R + dQ/dw + dloss/dw)`.
    pub fn hover_rotor_time_constant_s(&self, rho: f64) -> f64 {
        let m = &self.motor;
        let w = self.hover_rotor_speed(rho);
        let dq = 2.0 * self.propeller.torque(w, rho, 0.0) / w;
        let h = 1e-3 * w;
        let dloss = (m.loss_torque(w + h) - m.loss_torque(w - h)) / (2.0 * h);
        m.rotor_inertia_kgm2 / (m.ke() * m.ke() / m.resistance_ohm + dq + dloss)
    }

    /// Steady-state thrust of one rotor at `duty`, bus voltage `voltage_v`
    /// and air density `rho` (no inflow): the torque balance solved by a
    /// fixed-count bisection.
    pub fn steady_state_thrust_n(&self, duty: f64, voltage_v: f64, rho: f64) -> f64 {
        let m = &self.motor;
        let p = &self.propeller;
        let v = duty.clamp(0.0, 1.0) * voltage_v;
        let net = |w: f64| m.ke() * m.current(v, w) - m.loss_torque(w) - p.torque(w, rho, 0.0);
        let (mut lo, mut hi) = (0.0, voltage_v / m.ke());
        if net(lo + 1e-9) <= 0.0 {
            return 0.0;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if net(mid) > 0.0 {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        p.thrust(lo, rho, 0.0)
    }

    /// A state at NED position `p` with attitude `q` (w x y z), at rest,
    /// rotors stopped, batteries at their initial charge.
    pub fn state_at(&self, p: [f64; 3], q: [f64; 4]) -> Vec<f64> {
        let mut x = vec![0.0; self.dim()];
        x[StateLayout::POS..StateLayout::POS + 3].copy_from_slice(&p);
        let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        for k in 0..4 {
            x[StateLayout::QUAT + k] = q[k] / n;
        }
        for (j, b) in self.batteries.iter().enumerate() {
            x[self.layout.soc(j)] = b.initial_soc;
        }
        x
    }

    /// A level state resting on the ground contact at (north, east) with
    /// heading `yaw_rad`: the contact springs carry the weight.
    pub fn resting_state(&self, north_m: f64, east_m: f64, yaw_rad: f64) -> Vec<f64> {
        let (s, c) = libm::sincos(0.5 * yaw_rad);
        let q = [c, 0.0, 0.0, s];
        let z = match &self.contact {
            Some(c) => {
                let lowest = c
                    .points_m
                    .iter()
                    .map(|p| p[2])
                    .fold(f64::NEG_INFINITY, f64::max);
                let touching = c.points_m.iter().filter(|p| p[2] == lowest).count() as f64;
                let sag = self.mass_kg * self.gravity_mps2() / (touching * c.stiffness_n_per_m);
                -lowest + sag
            }
            None => 0.0,
        };
        self.state_at([north_m, east_m, z], q)
    }

    /// Error groups of the adaptive norm for these tolerances.
    pub fn set_tolerances(&mut self, t: &Tolerances) {
        self.groups = t.groups(&self.layout);
    }

    pub fn error_groups(&self) -> &[ErrorGroup] {
        &self.groups
    }
}
