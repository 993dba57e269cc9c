//! The pure right-hand side. No allocation, no state, no randomness: every
//! intermediate lives on the stack in fixed-size arrays, and every constant
//! that does not depend on the state was derived once at build time (the
//! per-rotor geometry in flat arrays, so the hot loops read no `Vec`).
//!
//! One function computes both the derivatives and the algebraic outputs;
//! `rhs`, which the integrators call, inlines it without outputs, so the
//! output code is compiled away there. It is a sequence of named stages
//! (kinematics, air, rotors, electrics, rotor dynamics, drag, contact,
//! batteries, rigid body), each `#[inline(always)]`: the same arithmetic
//! in the same order as one function, so the same bits.

use super::{
    MAX_BATTERIES, MAX_ROTORS, MAX_STATES, Multirotor, PlantInputs, PlantOutputs, StateLayout,
};
use crate::battery::Battery;
use crate::bus::{self, BusSolution, MotorLoads, Source};
use crate::propulsion::{LOSS_SMOOTHING_RADPS, smooth_sign};

#[inline(always)]
fn dot(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
fn cross(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Stopped, undriven rotors: no acceleration, and outputs of zero speed,
/// thrust, torque and duty (apart from the hot path, which it would crowd).
#[cold]
#[inline(never)]
fn idle_rotors<const DERIVATIVES: bool>(
    rotor_acc: &mut [f64],
    current: &[f64],
    out: Option<&mut PlantOutputs>,
) {
    if DERIVATIVES {
        rotor_acc.fill(0.0);
    }
    if let Some(out) = out {
        for (i, c) in current.iter().enumerate() {
            out.rotors[i] = super::RotorOutput {
                speed_radps: 0.0,
                thrust_n: 0.0,
                torque_nm: 0.0,
                current_a: *c,
                duty: 0.0,
            };
        }
    }
}

/// `x` if positive, else 0 (NaN gives 0, as `f64::max(x, 0.0)` does, in one
/// comparison).
#[inline(always)]
fn pos(x: f64) -> f64 {
    if x > 0.0 { x } else { 0.0 }
}

/// `M v` for a row-major 3 x 3 matrix.
#[inline(always)]
fn mul(m: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    [dot(&m[0], v), dot(&m[1], v), dot(&m[2], v)]
}

/// `M^T v` for a row-major 3 x 3 matrix.
#[inline(always)]
fn mul_t(m: &[[f64; 3]; 3], v: &[f64; 3]) -> [f64; 3] {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

/// The rigid body's kinematic state: position, velocity, attitude (the
/// quaternion and its rotation matrix) and body rates.
struct Frame {
    p: [f64; 3],
    v: [f64; 3],
    /// Body-to-NED quaternion, scalar first.
    q: [f64; 4],
    /// Body-to-NED rotation.
    r: [[f64; 3]; 3],
    w: [f64; 3],
}

/// The air the vehicle flies in at its position.
struct Air {
    /// Altitude above mean sea level.
    alt: f64,
    rho: f64,
    /// Gravity (NED).
    g: [f64; 3],
    /// Air-relative velocity in the body frame.
    v_air_b: [f64; 3],
}

/// What each rotor does: its ESC's duty, speed, back-EMF, thrust and
/// torque (zeros when `stopped`). The arrays are `evaluate`'s locals, one
/// each (a struct of them would be zeroed by a call to `memset` on every
/// evaluation).
struct Rotors<'a> {
    duty: &'a mut [f64; MAX_ROTORS],
    speed: &'a mut [f64; MAX_ROTORS],
    back_emf: &'a mut [f64; MAX_ROTORS],
    thrust: &'a mut [f64; MAX_ROTORS],
    torque: &'a mut [f64; MAX_ROTORS],
    /// Every rotor stopped and undriven.
    stopped: bool,
}

/// The electrical bus: the batteries' EMFs and connections, their
/// equivalent source, the solved bus and each motor's current (the
/// arrays `evaluate`'s locals, as for [`Rotors`]).
struct Electrics<'a> {
    emf: &'a [f64; MAX_BATTERIES],
    on: &'a [bool; MAX_BATTERIES],
    source: Source,
    bus: BusSolution,
    current: &'a [f64; MAX_ROTORS],
}

/// Forces and torques on the body, and the rotors' angular momentum.
struct Loads {
    /// Body-frame force and torque.
    f_b: [f64; 3],
    tau_b: [f64; 3],
    /// The rotors' angular momentum and its rate (body frame).
    h: [f64; 3],
    h_dot: [f64; 3],
}

impl Loads {
    /// No force, torque or momentum yet (+0.0: the sums start there).
    #[inline(always)]
    fn none() -> Loads {
        Loads {
            f_b: [0.0; 3],
            tau_b: [0.0; 3],
            h: [0.0; 3],
            h_dot: [0.0; 3],
        }
    }
}

impl Multirotor {
    /// Writes `dx/dt` at state `x` with inputs `u` held.
    pub fn rhs(&self, x: &[f64], u: &PlantInputs, dx: &mut [f64]) {
        self.evaluate::<true>(x, u, dx, None);
    }

    /// Algebraic outputs at state `x` with inputs `u` (the same computation
    /// as the right-hand side).
    pub fn outputs(&self, x: &[f64], u: &PlantInputs) -> PlantOutputs {
        // Scratch for the derivatives the outputs do not need, sized for the
        // largest plant validation admits.
        let mut dx = [0.0; MAX_STATES];
        let mut out = PlantOutputs::default();
        self.evaluate::<false>(x, u, &mut dx[..self.dim()], Some(&mut out));
        out
    }

    /// Inlined into `rhs` (with `None`, so the output code vanishes) and
    /// into `outputs` (without the work only the derivatives need: rotor
    /// accelerations, gyroscopic terms, angular acceleration, attitude and
    /// battery derivatives). The stages, in order: kinematics, air,
    /// rotors, bus, rotor dynamics, drag, ground contact, batteries, rigid
    /// body, outputs.
    #[inline(always)]
    fn evaluate<const DERIVATIVES: bool>(
        &self,
        x: &[f64],
        u: &PlantInputs,
        dx: &mut [f64],
        mut out: Option<&mut PlantOutputs>,
    ) {
        let l = &self.layout;
        // At most MAX_ROTORS: the per-rotor arrays need no bounds checks.
        let n = l.rotors.min(MAX_ROTORS);
        let x = &x[..l.dim()];
        let dx = &mut dx[..l.dim()];
        let frame = kinematics(x);
        let air = self.air(&frame, u);
        // The stages write into these (built here, so that the arrays live
        // in this frame as the one function's locals did).
        let (mut duty, mut speed, mut back_emf) =
            ([0.0f64; MAX_ROTORS], [0.0; MAX_ROTORS], [0.0; MAX_ROTORS]);
        let (mut thrust, mut torque) = ([0.0f64; MAX_ROTORS], [0.0; MAX_ROTORS]);
        let mut rotors = Rotors {
            duty: &mut duty,
            speed: &mut speed,
            back_emf: &mut back_emf,
            thrust: &mut thrust,
            torque: &mut torque,
            stopped: true,
        };
        self.rotors(x, u, &frame, &air, dx, n, &mut rotors);
        let (mut emf, mut on, mut current) = (
            [0.0f64; MAX_BATTERIES],
            [false; MAX_BATTERIES],
            [0.0f64; MAX_ROTORS],
        );
        let (source, bus) = self.electrics(x, u, &rotors, n, &mut emf, &mut on, &mut current);
        let el = Electrics {
            emf: &emf,
            on: &on,
            source,
            bus,
            current: &current,
        };
        let mut loads = Loads::none();
        self.rotor_dynamics::<DERIVATIVES>(&rotors, &el, dx, n, &mut loads, out.as_deref_mut());
        self.drag(&frame, &air, &mut loads);
        let (f_contact, touching) = self.contact(&frame, &mut loads);
        self.batteries::<DERIVATIVES>(x, &el, dx, out.as_deref_mut());
        let (f_ned, a) = self.rigid_body::<DERIVATIVES>(&frame, &air, &loads, f_contact, u, dx);
        if let Some(out) = out {
            out.bus_voltage_v = el.bus.voltage_v;
            out.bus_current_a = el.bus.load_a;
            out.duty_scale = el.bus.duty_scale;
            out.air_density_kgpm3 = air.rho;
            out.altitude_msl_m = air.alt;
            out.accel_ned_mps2 = a;
            let sf = mul_t(
                &frame.r,
                &[
                    f_ned[0] * self.k.inv_mass,
                    f_ned[1] * self.k.inv_mass,
                    f_ned[2] * self.k.inv_mass,
                ],
            );
            out.specific_force_frd_mps2 = sf;
            out.gravity_ned_mps2 = air.g;
            out.contact_force_ned_n = f_contact;
            out.contact_points = touching;
        }
    }

    /// The air at the vehicle: density at its altitude, gravity at its
    /// position, and the air-relative velocity in the body frame.
    #[inline(always)]
    fn air(&self, f: &Frame, u: &PlantInputs) -> Air {
        let alt = self.origin.geodetic.alt_m - f.p[2];
        let rho = self.density.density(alt);
        let g = self.gravity.at(f.p);
        let wind = u.wind_ned_mps;
        let v_air_b = mul_t(
            &f.r,
            &[f.v[0] - wind[0], f.v[1] - wind[1], f.v[2] - wind[2]],
        );
        Air {
            alt,
            rho,
            g,
            v_air_b,
        }
    }

    /// Actuators, ESC duty and rotor aerodynamics (thrust and torque with
    /// inflow and ground effect); the actuators' derivatives into `dx`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn rotors(
        &self,
        x: &[f64],
        u: &PlantInputs,
        f: &Frame,
        air: &Air,
        dx: &mut [f64],
        n: usize,
        rotors: &mut Rotors,
    ) {
        let l = &self.layout;
        let k = &self.k;
        let (p, r, w, v_air_b) = (&f.p, &f.r, &f.w, &air.v_air_b);
        let Rotors {
            duty,
            speed,
            back_emf,
            thrust,
            torque,
            stopped: all_stopped,
        } = rotors;
        let na = l.actuator_states;
        let rho_kt = k.kt_per_rho * air.rho;
        // Hub heights matter only within the ground effect's reach.
        let ge = k
            .ground_effect
            .filter(|g| -p[2] - k.rotor_reach_m < g.reach_m);
        let rs = l.rotor_speed(0);
        let rotor_speed = &x[rs..rs + n];
        // Every rotor stopped and undriven (resting on the ground,
        // disarmed): duty, speed, back-EMF, thrust and torque all stay at
        // the zeros they start at, which is what the loop below would
        // compute for them bit for bit.
        let stopped = na == 0
            && (0..n).all(|i| {
                rotor_speed[i] == 0.0 && !(u.motor_enabled[i] && u.motor_cmd[i] > k.deadzone)
            });
        if !stopped {
            for i in 0..n {
                let cmd = u.motor_cmd[i];
                let eff = if na == 0 {
                    cmd.clamp(0.0, 1.0)
                } else {
                    let a0 = l.actuator(i);
                    self.actuator
                        .derivatives(cmd, &x[a0..a0 + na], &mut dx[a0..a0 + na]);
                    self.actuator.output(cmd, &x[a0..a0 + na])
                };
                // The ESC: no output up to the deadzone, then linear to full.
                duty[i] = if u.motor_enabled[i] && eff > k.deadzone {
                    (eff - k.deadzone) * k.inv_duty_span
                } else {
                    0.0
                };
                let wi = pos(rotor_speed[i]);
                speed[i] = wi;
                back_emf[i] = k.ke * wi;
                // Axial inflow at the hub: a . (v_air + w x r) = a . v_air + w . (r x a),
                // as an advance ratio in the modelled range. A flat rotor's axis
                // is -z and its arm (-y, x, 0).
                let m = &k.arm[i];
                let v_axial = if k.flat {
                    -v_air_b[2] + w[0] * m[0] + w[1] * m[1]
                } else {
                    dot(&k.axis[i], v_air_b) + dot(w, m)
                };
                let j = if wi > 0.0 {
                    let j = v_axial * k.j_factor / wi;
                    if j < k.j_lo {
                        k.j_lo
                    } else if j > k.j_hi {
                        k.j_hi
                    } else {
                        j
                    }
                } else {
                    0.0
                };
                let static_thrust = rho_kt * wi * wi * u.thrust_scale[i];
                let f_t = 1.0 - j * k.inv_j0;
                let f_q = pos(1.0 + j * (k.q1 + k.q2 * j));
                let f_ge = match &ge {
                    Some(g) if static_thrust != 0.0 => {
                        g.factor(-(p[2] + dot(&r[2], &k.position[i])))
                    }
                    _ => 1.0,
                };
                thrust[i] = static_thrust * f_t * f_ge;
                torque[i] = k.kq * static_thrust * f_q;
            }
        }
        *all_stopped = stopped;
    }

    /// The bus: batteries in parallel against motors and avionics (an
    /// empty pack is cut off).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn electrics(
        &self,
        x: &[f64],
        u: &PlantInputs,
        rotors: &Rotors,
        n: usize,
        emf: &mut [f64; MAX_BATTERIES],
        on: &mut [bool; MAX_BATTERIES],
        current: &mut [f64; MAX_ROTORS],
    ) -> (Source, BusSolution) {
        let l = &self.layout;
        let k = &self.k;
        let nb = l.batteries;
        let mut floor = 0.0f64;
        for (j, b) in self.batteries.iter().enumerate().take(nb) {
            let soc = x[l.soc(j)];
            emf[j] = b.emf(soc, x[l.v1(j)]);
            on[j] = u.battery_connected[j] && !Battery::is_empty(soc);
            if on[j] {
                floor = floor.max(b.voltage_floor_v);
            }
        }
        let source = if nb == 1 {
            Source::single(emf[0], k.g0[0], on[0])
        } else {
            Source::combine(self.sharing, &emf[..nb], &k.g0[..nb], &on[..nb])
        };
        let loads = MotorLoads {
            duty: &rotors.duty[..n],
            back_emf_v: &rotors.back_emf[..n],
            inv_resistance: k.inv_r,
            current_limit_a: k.i_max,
            inv_efficiency: k.inv_eta,
        };
        let bus = bus::solve(
            &source,
            floor,
            &loads,
            self.avionics_power_w,
            &mut current[..n],
        );
        (source, bus)
    }

    /// Rotor dynamics (accelerations into `dx`), the rotors' forces and
    /// torques on the body and their angular momentum; each rotor's
    /// outputs.
    #[inline(always)]
    fn rotor_dynamics<const DERIVATIVES: bool>(
        &self,
        rotors: &Rotors,
        el: &Electrics,
        dx: &mut [f64],
        n: usize,
        loads: &mut Loads,
        out: Option<&mut PlantOutputs>,
    ) {
        let k = &self.k;
        let Loads {
            f_b,
            tau_b,
            h,
            h_dot,
        } = loads;
        let j_r = k.rotor_inertia;
        let rs = self.layout.rotor_speed(0);
        let rotor_acc = &mut dx[rs..rs + n];
        let current = &el.current;
        // Stopped rotors drawing no current add nothing (the sums start at
        // +0.0, so adding zeros changes no bit) and do not accelerate.
        let idle = rotors.stopped && current[..n].iter().all(|c| *c == 0.0);
        if idle {
            idle_rotors::<DERIVATIVES>(rotor_acc, &current[..n], out);
        } else {
            let mut out = out;
            for i in 0..n {
                let wi = rotors.speed[i];
                let loss = if wi >= LOSS_SMOOTHING_RADPS {
                    k.ke_i0 + k.viscous * wi
                } else {
                    k.ke_i0 * smooth_sign(wi * (1.0 / LOSS_SMOOTHING_RADPS)) + k.viscous * wi
                };
                let (a, m, s) = (&k.axis[i], &k.arm[i], &k.spin[i]);
                let (t, q) = (rotors.thrust[i], rotors.torque[i]);
                let mut acc = 0.0;
                if DERIVATIVES {
                    acc = (k.ke * current[i] - loss - rotors.torque[i]) * k.inv_j;
                    if wi <= 0.0 && acc < 0.0 {
                        acc = 0.0; // rotors do not spin backwards
                    }
                    rotor_acc[i] = acc;
                }
                let (jw, ja) = (j_r * wi, j_r * acc);
                if k.flat {
                    // Axis (0, 0, -1): thrust along -z, the spin axis along z.
                    f_b[2] -= t;
                    tau_b[0] += m[0] * t;
                    tau_b[1] += m[1] * t;
                    tau_b[2] -= s[2] * q;
                    h[2] += s[2] * jw;
                    h_dot[2] += s[2] * ja;
                } else {
                    for c in 0..3 {
                        f_b[c] += a[c] * t;
                        tau_b[c] += m[c] * t - s[c] * q;
                        h[c] += s[c] * jw;
                        h_dot[c] += s[c] * ja;
                    }
                }
                if let Some(out) = out.as_deref_mut() {
                    out.rotors[i] = super::RotorOutput {
                        speed_radps: wi,
                        thrust_n: t,
                        torque_nm: q,
                        current_a: current[i],
                        duty: rotors.duty[i] * el.bus.duty_scale,
                    };
                }
            }
        }
    }

    /// Drag per body axis: linear (rotor drag) plus quadratic (body),
    /// `c_i |v_i| v_i` on each axis (not on the airspeed's norm: 29 % less
    /// at 45 degrees between two equal axes); angular damping.
    #[inline(always)]
    fn drag(&self, f: &Frame, air: &Air, loads: &mut Loads) {
        let k = &self.k;
        for c in 0..3 {
            let va = air.v_air_b[c];
            loads.f_b[c] -= (k.drag_lin[c] + k.drag_quad[c] * va.abs()) * va;
            loads.tau_b[c] -= k.damping[c] * f.w[c];
        }
    }

    /// Ground contact at each point (skipped when no point can reach
    /// z = 0): the world-frame force, its moment added to the body torque,
    /// and how many points touch. In the world frame: a point at arm
    /// r_n = R r_b moves with v + w_n x r_n, and its force makes the moment
    /// r_n x F; the sum is rotated into the body once.
    #[inline(always)]
    fn contact(&self, f: &Frame, loads: &mut Loads) -> ([f64; 3], usize) {
        let (p, v, r, w) = (&f.p, &f.v, &f.r, &f.w);
        let mut f_contact = [0.0f64; 3];
        let mut touching = 0;
        if let Some(c) = &self.contact
            && p[2] + self.k.contact_reach_m > 0.0
        {
            let w_n = mul(r, w);
            let mut tau_n = [0.0f64; 3];
            for pt in &c.points_m {
                let arm = mul(r, pt);
                let pc = [p[0] + arm[0], p[1] + arm[1], p[2] + arm[2]];
                if pc[2] <= 0.0 {
                    continue;
                }
                touching += 1;
                let wr = cross(&w_n, &arm);
                let vc = [v[0] + wr[0], v[1] + wr[1], v[2] + wr[2]];
                let fc = c.force(pc, vc);
                let m = cross(&arm, &fc);
                for d in 0..3 {
                    f_contact[d] += fc[d];
                    tau_n[d] += m[d];
                }
            }
            let tb = mul_t(r, &tau_n);
            for (t, b) in loads.tau_b.iter_mut().zip(tb) {
                *t += b;
            }
        }
        (f_contact, touching)
    }

    /// Batteries: the SOC and R1 || C1 voltage derivatives into `dx`, each
    /// pack's outputs.
    #[inline(always)]
    fn batteries<const DERIVATIVES: bool>(
        &self,
        x: &[f64],
        el: &Electrics,
        dx: &mut [f64],
        mut out: Option<&mut PlantOutputs>,
    ) {
        let l = &self.layout;
        let k = &self.k;
        let bus = &el.bus;
        for j in 0..l.batteries {
            let ij = if el.on[j] {
                el.source.battery_current(
                    self.sharing,
                    el.emf[j],
                    k.g0[j],
                    bus.voltage_v,
                    bus.load_a,
                )
            } else {
                0.0
            };
            if DERIVATIVES {
                let v1 = x[l.v1(j)];
                dx[l.soc(j)] = -ij * k.inv_charge[j];
                dx[l.v1(j)] = ij * k.inv_c1[j] - v1 * k.inv_tau1[j];
            }
            if let Some(out) = out.as_deref_mut() {
                let soc = x[l.soc(j)];
                out.batteries[j] = super::BatteryOutput {
                    voltage_v: if el.on[j] { bus.voltage_v } else { el.emf[j] },
                    current_a: ij,
                    soc,
                    warning: self.batteries[j].warnings.at(soc),
                    connected: el.on[j],
                };
            }
        }
    }

    /// The rigid body: the world-frame force (rotors, drag, contact and an
    /// external force) and the acceleration; with derivatives, the
    /// position, velocity, attitude and rate derivatives into `dx`.
    #[inline(always)]
    fn rigid_body<const DERIVATIVES: bool>(
        &self,
        f: &Frame,
        air: &Air,
        loads: &Loads,
        f_contact: [f64; 3],
        u: &PlantInputs,
        dx: &mut [f64],
    ) -> ([f64; 3], [f64; 3]) {
        let k = &self.k;
        let g = air.g;
        let f_r = mul(&f.r, &loads.f_b);
        let mut f_ned = [
            f_r[0] + f_contact[0],
            f_r[1] + f_contact[1],
            f_r[2] + f_contact[2],
        ];
        // Skipped when absent: adding +0.0 would turn a -0.0 sum into +0.0,
        // and a run without an external force stays the run it was, bit
        // for bit.
        if let Some(fx) = u.external_force_ned_n {
            for d in 0..3 {
                f_ned[d] += fx[d];
            }
        }
        let a = [
            g[0] + f_ned[0] * k.inv_mass,
            g[1] + f_ned[1] * k.inv_mass,
            g[2] + f_ned[2] * k.inv_mass,
        ];
        if DERIVATIVES {
            let (w, h, h_dot, tau_b) = (&f.w, &loads.h, &loads.h_dot, &loads.tau_b);
            let [qw, qx, qy, qz] = f.q;
            let iw = mul(&k.inertia, w);
            let gyro = cross(w, &[iw[0] + h[0], iw[1] + h[1], iw[2] + h[2]]);
            let w_dot = mul(
                &k.inertia_inv,
                &[
                    tau_b[0] - gyro[0] - h_dot[0],
                    tau_b[1] - gyro[1] - h_dot[1],
                    tau_b[2] - gyro[2] - h_dot[2],
                ],
            );
            let d: &mut [f64; 13] = (&mut dx[..13]).try_into().expect("13 rigid-body states");
            d[StateLayout::POS..StateLayout::POS + 3].copy_from_slice(&f.v);
            d[StateLayout::VEL..StateLayout::VEL + 3].copy_from_slice(&a);
            d[StateLayout::QUAT] = -0.5 * (qx * w[0] + qy * w[1] + qz * w[2]);
            d[StateLayout::QUAT + 1] = 0.5 * (qw * w[0] + qy * w[2] - qz * w[1]);
            d[StateLayout::QUAT + 2] = 0.5 * (qw * w[1] + qz * w[0] - qx * w[2]);
            d[StateLayout::QUAT + 3] = 0.5 * (qw * w[2] + qx * w[1] - qy * w[0]);
            d[StateLayout::RATES..StateLayout::RATES + 3].copy_from_slice(&w_dot);
        }
        (f_ned, a)
    }
}

/// Position, velocity, attitude and rates from the state; the body ->
/// NED rotation of the (nearly unit) state quaternion, exact for any norm:
/// R = I + s [...], s = 2 / |q|^2.
#[inline(always)]
fn kinematics(x: &[f64]) -> Frame {
    let rigid: &[f64; 13] = x[..13].try_into().expect("13 rigid-body states");
    let (qw, qx, qy, qz) = (rigid[6], rigid[7], rigid[8], rigid[9]);
    let s2 = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz);
    let r = [
        [
            1.0 - s2 * (qy * qy + qz * qz),
            s2 * (qx * qy - qw * qz),
            s2 * (qx * qz + qw * qy),
        ],
        [
            s2 * (qx * qy + qw * qz),
            1.0 - s2 * (qx * qx + qz * qz),
            s2 * (qy * qz - qw * qx),
        ],
        [
            s2 * (qx * qz - qw * qy),
            s2 * (qy * qz + qw * qx),
            1.0 - s2 * (qx * qx + qy * qy),
        ],
    ];
    Frame {
        p: [rigid[0], rigid[1], rigid[2]],
        v: [rigid[3], rigid[4], rigid[5]],
        q: [qw, qx, qy, qz],
        r,
        w: [rigid[10], rigid[11], rigid[12]],
    }
}

#[cfg(test)]
mod tests {
    use crate::fixtures::{hovering_state, manoeuvre};
    use crate::{AircraftSpec, PlantInputs};

    #[test]
    fn the_flat_rotor_path_agrees_with_the_general_one() {
        // Same physics, the zero terms left out: equal to rounding, in
        // flight (inflow, wind, rates) and on the ground (contact).
        for name in ["iris", "hexa", "octa"] {
            let flat = AircraftSpec::builtin(name).unwrap().build().unwrap();
            assert!(flat.k.flat, "{name}");
            let mut general = flat.clone();
            general.k.flat = false;
            let mut x = hovering_state(&flat, [1.0, 2.0, -3.0]);
            x[3..6].copy_from_slice(&[2.0, -1.0, 0.7]);
            x[10..13].copy_from_slice(&[0.3, -0.2, 0.5]);
            for (k, u) in [manoeuvre(3), manoeuvre(40), PlantInputs::default()]
                .iter()
                .enumerate()
            {
                let (mut a, mut b) = (vec![0.0; flat.dim()], vec![0.0; flat.dim()]);
                flat.rhs(&x, u, &mut a);
                general.rhs(&x, u, &mut b);
                for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                    assert!(
                        (p - q).abs() <= 1e-12 * (1.0 + q.abs()),
                        "{name}, inputs {k}, state {i}: {p} vs {q}"
                    );
                }
            }
        }
    }
}
