//! The pure right-hand side. No allocation, no state, no randomness: every
//! intermediate lives on the stack in fixed-size arrays, and every constant
//! that does not depend on the state was derived once at build time.

use nalgebra::{Matrix3, Vector3};

use super::{MAX_BATTERIES, MAX_ROTORS, Multirotor, PlantInputs, PlantOutputs, StateLayout};
use crate::bus::{self, MotorLoads, Source};
use crate::propulsion::{LOSS_SMOOTHING_RADPS, inflow_factor, smooth_sign};

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
        let na = self.actuator.states();
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
            // Axial inflow at the hub: a . (v_air + w x r) = a . v_air + w . (r x a).
            let v_axial = rot.thrust_axis.dot(&v_air_b) + w.dot(&rot.moment_arm_m);
            let factor = inflow_factor(wi * k.inflow_c, v_axial);
            thrust[i] = k.kt_per_rho * rho * wi * wi * factor * u.thrust_scale[i];
        }

        // Bus: batteries in parallel against motors and avionics.
        let nb = self.batteries.len();
        let mut emf = [0.0f64; MAX_BATTERIES];
        let mut r0 = [0.0f64; MAX_BATTERIES];
        let mut floor = 0.0f64;
        for (j, b) in self.batteries.iter().enumerate() {
            emf[j] = b.emf(x[l.soc(j)], x[l.v1(j)]);
            r0[j] = b.r0();
            if u.battery_connected[j] {
                floor = floor.max(b.voltage_floor_v);
            }
        }
        let source = Source::combine(
            self.sharing,
            &emf[..nb],
            &r0[..nb],
            &u.battery_connected[..nb],
        );
        let loads = MotorLoads {
            duty: &duty[..n],
            back_emf_v: &back_emf[..n],
            inv_resistance: k.inv_r,
            current_limit_a: k.i_max,
            inv_efficiency: k.inv_eta,
        };
        let (bus_v, bus_i) = bus::solve(&source, floor, &loads, self.avionics_power_w);

        // Rotor dynamics, body forces and torques.
        let mut f_b = Vector3::zeros();
        let mut tau_b = Vector3::zeros();
        let mut h = Vector3::zeros();
        let mut h_dot = Vector3::zeros();
        let j_r = self.motor.rotor_inertia_kgm2;
        for (i, rot) in self.rotors.iter().enumerate() {
            let current = loads.current(i, bus_v);
            let torque = k.kq * thrust[i];
            let loss = k.ke_i0 * smooth_sign(speed[i] * (1.0 / LOSS_SMOOTHING_RADPS))
                + k.viscous * speed[i];
            let mut acc = (k.ke * current - loss - torque) * k.inv_j;
            if speed[i] <= 0.0 && acc < 0.0 {
                acc = 0.0; // rotors do not spin backwards
            }
            dx[l.rotor_speed(i)] = acc;
            f_b += rot.thrust_axis * thrust[i];
            tau_b += rot.moment_arm_m * thrust[i] - rot.spin_axis * torque;
            h += rot.spin_axis * (j_r * speed[i]);
            h_dot += rot.spin_axis * (j_r * acc);
            if let Some(o) = out.as_deref_mut() {
                o.rotors[i] = super::RotorOutput {
                    speed_radps: speed[i],
                    thrust_n: thrust[i],
                    torque_nm: torque,
                    current_a: current,
                    duty: duty[i],
                };
            }
        }
        f_b -= self.linear_drag_ns_per_m.component_mul(&v_air_b);
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

        // Batteries.
        for (j, b) in self.batteries.iter().enumerate() {
            let connected = u.battery_connected[j];
            let ij = if connected {
                source.battery_current(self.sharing, emf[j], r0[j], bus_v, bus_i)
            } else {
                0.0
            };
            let (dsoc, dv1) = b.derivatives(x[l.v1(j)], ij);
            dx[l.soc(j)] = dsoc;
            dx[l.v1(j)] = dv1;
            if let Some(o) = out.as_deref_mut() {
                let soc = x[l.soc(j)];
                o.batteries[j] = super::BatteryOutput {
                    voltage_v: if connected { bus_v } else { emf[j] },
                    current_a: ij,
                    soc,
                    warning: b.warnings.at(soc),
                    connected,
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
            o.bus_voltage_v = bus_v;
            o.bus_current_a = bus_i;
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
