//! The pure right-hand side. No allocation, no state, no randomness: every
//! intermediate lives on the stack in fixed-size arrays, and every constant
//! that does not depend on the state was derived once at build time.

use nalgebra::{Matrix3, Vector3};

use super::{MAX_BATTERIES, MAX_ROTORS, Multirotor, PlantInputs, PlantOutputs, StateLayout};
use crate::battery::Battery;
use crate::bus::{self, MotorLoads, Source};
use crate::propulsion::{LOSS_SMOOTHING_RADPS, smooth_sign};

impl Multirotor {
    /// Writes `dx/dt` at state `x` with inputs `u` held.
    pub fn rhs(&self, x: &[f64], u: &PlantInputs, dx: &mut [f64]) {
        self.evaluate(x, u, dx, None);
    }

    /// Algebraic outputs at state `x` with inputs `u` (the same computation
    /// as the right-hand side).
    pub fn outputs(&self, x: &[f64], u: &PlantInputs) -> PlantOutputs {
        let mut dx = [0.0; 64];
        let mut out = PlantOutputs::default();
        self.evaluate(x, u, &mut dx[..self.dim()], Some(&mut out));
        out
    }

    fn evaluate(
        &self,
        x: &[f64],
        u: &PlantInputs,
        dx: &mut [f64],
        mut out: Option<&mut PlantOutputs>,
    ) {
        let l = &self.layout;
        let k = &self.k;
        let n = self.rotors.len();
        let p = Vector3::new(x[0], x[1], x[2]);
        let v = Vector3::new(x[3], x[4], x[5]);
        // Body -> NED rotation of the (nearly unit) state quaternion, exact
        // for any norm: R = I + s [...], s = 2 / |q|^2.
        let (qw, qx, qy, qz) = (x[6], x[7], x[8], x[9]);
        let s2 = 2.0 / (qw * qw + qx * qx + qy * qy + qz * qz);
        let r = Matrix3::new(
            1.0 - s2 * (qy * qy + qz * qz),
            s2 * (qx * qy - qw * qz),
            s2 * (qx * qz + qw * qy),
            s2 * (qx * qy + qw * qz),
            1.0 - s2 * (qx * qx + qz * qz),
            s2 * (qy * qz - qw * qx),
            s2 * (qx * qz - qw * qy),
            s2 * (qy * qz + qw * qx),
            1.0 - s2 * (qx * qx + qy * qy),
        );
        let w = Vector3::new(x[10], x[11], x[12]);

        // Environment.
        let alt = self.origin.geodetic.alt_m - p.z;
        let rho = self.density.density(alt);
        let g = Vector3::from(self.gravity.at([p.x, p.y, p.z]));
        let wind = Vector3::new(u.wind_ned_mps[0], u.wind_ned_mps[1], u.wind_ned_mps[2]);
        let v_air_b = r.tr_mul(&(v - wind));

        // Actuators, ESC duty, rotor aerodynamics.
        let mut duty = [0.0f64; MAX_ROTORS];
        let mut speed = [0.0f64; MAX_ROTORS];
        let mut back_emf = [0.0f64; MAX_ROTORS];
        let mut thrust = [0.0f64; MAX_ROTORS];
        let mut torque = [0.0f64; MAX_ROTORS];
        let na = self.actuator.states();
        let rho_kt = k.kt_per_rho * rho;
        // Hub heights matter only within the ground effect's reach.
        let ge = k
            .ground_effect
            .filter(|g| -p.z - k.rotor_reach_m < g.reach_m);
        for (i, rot) in self.rotors.iter().enumerate() {
            let cmd = u.motor_cmd[i];
            let eff = if na == 0 {
                cmd.clamp(0.0, 1.0)
            } else {
                let a0 = l.actuator(i);
                self.actuator
                    .derivatives(cmd, &x[a0..a0 + na], &mut dx[a0..a0 + na]);
                self.actuator.output(cmd, &x[a0..a0 + na])
            };
            duty[i] = if u.motor_enabled[i] {
                self.esc.duty(eff)
            } else {
                0.0
            };
            let wi = x[l.rotor_speed(i)].max(0.0);
            speed[i] = wi;
            back_emf[i] = k.ke * wi;
            // Axial inflow at the hub: a . (v_air + w x r) = a . v_air + w . (r x a),
            // as an advance ratio in the modelled range.
            let v_axial = rot.thrust_axis.dot(&v_air_b) + w.dot(&rot.moment_arm_m);
            let j = if wi > 0.0 {
                (v_axial * k.j_factor / wi).clamp(k.j_lo, k.j_hi)
            } else {
                0.0
            };
            let static_thrust = rho_kt * wi * wi * u.thrust_scale[i];
            let f_t = 1.0 - j * k.inv_j0;
            let f_q = (1.0 + j * (k.q1 + k.q2 * j)).max(0.0);
            let f_ge = match &ge {
                Some(g) => g.factor(-(p.z + r.row(2).transpose().dot(&rot.position_m))),
                None => 1.0,
            };
            thrust[i] = static_thrust * f_t * f_ge;
            torque[i] = k.kq * static_thrust * f_q;
        }

        // Bus: batteries in parallel against motors and avionics. An empty
        // pack is cut off.
        let nb = self.batteries.len();
        let mut emf = [0.0f64; MAX_BATTERIES];
        let mut on = [false; MAX_BATTERIES];
        let mut floor = 0.0f64;
        for (j, b) in self.batteries.iter().enumerate() {
            let soc = x[l.soc(j)];
            emf[j] = b.emf(soc, x[l.v1(j)]);
            on[j] = u.battery_connected[j] && !Battery::is_empty(soc);
            if on[j] {
                floor = floor.max(b.voltage_floor_v);
            }
        }
        let source = Source::combine(self.sharing, &emf[..nb], &k.g0[..nb], &on[..nb]);
        let loads = MotorLoads {
            duty: &duty[..n],
            back_emf_v: &back_emf[..n],
            inv_resistance: k.inv_r,
            current_limit_a: k.i_max,
            inv_efficiency: k.inv_eta,
        };
        let mut current = [0.0f64; MAX_ROTORS];
        let bus = bus::solve(
            &source,
            floor,
            &loads,
            self.avionics_power_w,
            &mut current[..n],
        );

        // Rotor dynamics, body forces and torques.
        let mut f_b = Vector3::zeros();
        let mut tau_b = Vector3::zeros();
        let mut h = Vector3::zeros();
        let mut h_dot = Vector3::zeros();
        let j_r = self.motor.rotor_inertia_kgm2;
        for (i, rot) in self.rotors.iter().enumerate() {
            let loss = k.ke_i0 * smooth_sign(speed[i] * (1.0 / LOSS_SMOOTHING_RADPS))
                + k.viscous * speed[i];
            let mut acc = (k.ke * current[i] - loss - torque[i]) * k.inv_j;
            if speed[i] <= 0.0 && acc < 0.0 {
                acc = 0.0; // rotors do not spin backwards
            }
            dx[l.rotor_speed(i)] = acc;
            f_b += rot.thrust_axis * thrust[i];
            tau_b += rot.moment_arm_m * thrust[i] - rot.spin_axis * torque[i];
            h += rot.spin_axis * (j_r * speed[i]);
            h_dot += rot.spin_axis * (j_r * acc);
            if let Some(o) = out.as_deref_mut() {
                o.rotors[i] = super::RotorOutput {
                    speed_radps: speed[i],
                    thrust_n: thrust[i],
                    torque_nm: torque[i],
                    current_a: current[i],
                    duty: duty[i] * bus.duty_scale,
                };
            }
        }
        // Drag per body axis: linear (rotor drag) plus quadratic (body).
        let lin = &self.linear_drag_ns_per_m;
        let quad = &self.quadratic_drag_ns2_per_m2;
        for a in 0..3 {
            let va = v_air_b[a];
            f_b[a] -= (lin[a] + quad[a] * va.abs()) * va;
        }
        tau_b -= self.angular_damping_nms_per_rad.component_mul(&w);

        // Ground contact at each point (skipped when no point can reach z = 0).
        let mut f_contact = Vector3::zeros();
        let mut touching = 0;
        if let Some(c) = &self.contact
            && p.z + k.contact_reach_m > 0.0
        {
            for pt in &c.points_m {
                let rc = Vector3::new(pt[0], pt[1], pt[2]);
                let arm = r * rc;
                let pc = p + arm;
                if pc.z <= 0.0 {
                    continue;
                }
                touching += 1;
                let vc = v + r * w.cross(&rc);
                let fc = Vector3::from(c.force([pc.x, pc.y, pc.z], [vc.x, vc.y, vc.z]));
                f_contact += fc;
                tau_b += rc.cross(&r.tr_mul(&fc));
            }
        }

        // Batteries: SOC and the R1 || C1 voltage.
        for j in 0..nb {
            let ij = if on[j] {
                source.battery_current(self.sharing, emf[j], k.g0[j], bus.voltage_v, bus.load_a)
            } else {
                0.0
            };
            let v1 = x[l.v1(j)];
            dx[l.soc(j)] = -ij * k.inv_charge[j];
            dx[l.v1(j)] = ij * k.inv_c1[j] - v1 * k.inv_tau1[j];
            if let Some(o) = out.as_deref_mut() {
                let soc = x[l.soc(j)];
                o.batteries[j] = super::BatteryOutput {
                    voltage_v: if on[j] { bus.voltage_v } else { emf[j] },
                    current_a: ij,
                    soc,
                    warning: self.batteries[j].warnings.at(soc),
                    connected: on[j],
                };
            }
        }

        // Rigid body.
        let f_ned = r * f_b + f_contact;
        let a = g + f_ned * k.inv_mass;
        let iw = self.inertia_kgm2 * w;
        let w_dot = self.inertia_inv * (tau_b - w.cross(&(iw + h)) - h_dot);
        dx[StateLayout::POS] = v.x;
        dx[StateLayout::POS + 1] = v.y;
        dx[StateLayout::POS + 2] = v.z;
        dx[StateLayout::VEL] = a.x;
        dx[StateLayout::VEL + 1] = a.y;
        dx[StateLayout::VEL + 2] = a.z;
        dx[StateLayout::QUAT] = -0.5 * (qx * w.x + qy * w.y + qz * w.z);
        dx[StateLayout::QUAT + 1] = 0.5 * (qw * w.x + qy * w.z - qz * w.y);
        dx[StateLayout::QUAT + 2] = 0.5 * (qw * w.y + qz * w.x - qx * w.z);
        dx[StateLayout::QUAT + 3] = 0.5 * (qw * w.z + qx * w.y - qy * w.x);
        dx[StateLayout::RATES] = w_dot.x;
        dx[StateLayout::RATES + 1] = w_dot.y;
        dx[StateLayout::RATES + 2] = w_dot.z;

        if let Some(o) = out {
            o.bus_voltage_v = bus.voltage_v;
            o.bus_current_a = bus.load_a;
            o.duty_scale = bus.duty_scale;
            o.air_density_kgpm3 = rho;
            o.altitude_msl_m = alt;
            o.accel_ned_mps2 = [a.x, a.y, a.z];
            let sf = r.tr_mul(&(f_ned * k.inv_mass));
            o.specific_force_frd_mps2 = [sf.x, sf.y, sf.z];
            o.gravity_ned_mps2 = [g.x, g.y, g.z];
            o.contact_force_ned_n = [f_contact.x, f_contact.y, f_contact.z];
            o.contact_points = touching;
        }
    }
}
