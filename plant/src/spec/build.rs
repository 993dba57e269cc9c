//! A spec built into a plant, section by section in the order the checks
//! run (the body, the rotors, the ESC and motor, the power, the propeller,
//! the actuator, the contact, the world), each checked by `validate.rs`'s
//! rules with an error naming its key.

use nalgebra::Vector3;

use super::validate::{Check, actuator, battery, inertia, plausible_propulsion};
use super::{AircraftSpec, GravityModel, SharingSpec, SpecError};
use crate::battery::Battery;
use crate::bus::Sharing;
use crate::contact::Contact;
use crate::env::geodesy::{Geodetic, WorldOrigin};
use crate::env::gravity::Gravity;
use crate::multirotor::{
    BodyConstants, Derived, MAX_BATTERIES, MAX_ROTORS, Multirotor, Rotor, StateLayout, Tolerances,
};
use crate::propulsion::{Esc, Motor, Propeller, calibrate_thrust_coeff};

/// The power system: the packs, how they share the load, the avionics'
/// draw.
struct Power {
    batteries: Vec<Battery>,
    sharing: Sharing,
    avionics_power_w: f64,
}

impl AircraftSpec {
    /// Validates the spec and builds the plant. `source` names the spec in
    /// errors (a file path or `builtin:NAME`).
    pub fn build_named(&self, source: &str) -> Result<Multirotor, SpecError> {
        let c = Check { source };
        let body = self.body_constants(&c)?;
        let rotors = self.rotor_set(&c)?;
        let (esc, motor) = self.esc_and_motor(&c)?;
        let power = self.power(&c)?;
        let (propeller, g) = self.propeller_of(&c, &body, &rotors, &motor, &power.batteries)?;
        let actuator = actuator(&c, &self.actuator)?;
        let contact = self.contact_of(&c)?;
        let (origin, gravity) = self.world(&c, g)?;
        let layout = StateLayout {
            rotors: rotors.len(),
            actuator_states: actuator.states(),
            batteries: power.batteries.len(),
        };
        let groups = Tolerances::default().groups(&layout);
        let ground_effect = self.propeller.ground_effect;
        let k = Derived::of(
            &body,
            &motor,
            &esc,
            &propeller,
            ground_effect,
            &rotors,
            &power.batteries,
            contact.as_ref(),
        );
        Ok(Multirotor {
            name: self.name.clone(),
            mass_kg: body.mass_kg,
            inertia_kgm2: body.inertia,
            linear_drag_ns_per_m: body.drag_lin,
            quadratic_drag_ns2_per_m2: body.drag_quad,
            angular_damping_nms_per_rad: body.damping,
            rotors,
            esc,
            motor,
            propeller,
            ground_effect,
            actuator,
            batteries: power.batteries,
            sharing: power.sharing,
            avionics_power_w: power.avionics_power_w,
            contact,
            gravity,
            origin,
            layout,
            groups,
            k,
            density: std::sync::Arc::new(crate::env::atmosphere::DensityTable::new()),
        })
    }

    /// Validates and builds, naming the spec by its `name` in errors.
    pub fn build(&self) -> Result<Multirotor, SpecError> {
        self.build_named(&self.name)
    }

    /// `[body]`: mass, inertia (invertible), drag and damping (none
    /// negative).
    fn body_constants(&self, c: &Check) -> Result<BodyConstants, SpecError> {
        let mass_kg = c.positive("body.mass_kg", self.body.mass_kg)?;
        let inertia_kgm2 = inertia(c, self.body.inertia_kgm2)?;
        let inertia_inv = inertia_kgm2
            .try_inverse()
            .ok_or_else(|| c.err("body.inertia_kgm2", "is singular"))?;
        let non_negative = |key: &str, v: [f64; 3]| -> Result<Vector3<f64>, SpecError> {
            let v = c.finite3(key, v)?;
            if v.iter().any(|x| *x < 0.0) {
                return Err(c.err(key, "must be >= 0"));
            }
            Ok(v)
        };
        Ok(BodyConstants {
            mass_kg,
            inertia: inertia_kgm2,
            inertia_inv,
            drag_lin: non_negative("body.linear_drag_ns_per_m", self.body.linear_drag_ns_per_m)?,
            drag_quad: non_negative(
                "body.quadratic_drag_ns2_per_m2",
                self.body.quadratic_drag_ns2_per_m2,
            )?,
            damping: non_negative(
                "body.angular_damping_nms_per_rad",
                self.body.angular_damping_nms_per_rad,
            )?,
        })
    }

    /// `[[rotors]]`: 1 to MAX_ROTORS, each placed, with a unit thrust axis
    /// and a spin direction of ±1.
    fn rotor_set(&self, c: &Check) -> Result<Vec<Rotor>, SpecError> {
        if self.rotors.is_empty() || self.rotors.len() > MAX_ROTORS {
            return Err(c.err(
                "rotors",
                format!("needs 1 to {MAX_ROTORS} rotors, has {}", self.rotors.len()),
            ));
        }
        let mut rotors = Vec::with_capacity(self.rotors.len());
        for (i, r) in self.rotors.iter().enumerate() {
            let position_m = c.finite3(&format!("rotors[{i}].position_m"), r.position_m)?;
            let axis = c.finite3(&format!("rotors[{i}].thrust_axis"), r.thrust_axis)?;
            if (axis.norm() - 1.0).abs() > 1e-3 {
                return Err(c.err(
                    format!("rotors[{i}].thrust_axis"),
                    format!("must be a unit vector, has length {}", axis.norm()),
                ));
            }
            if r.spin_dir != 1 && r.spin_dir != -1 {
                return Err(c.err(
                    format!("rotors[{i}].spin_dir"),
                    format!("must be 1 or -1, is {}", r.spin_dir),
                ));
            }
            rotors.push(Rotor::new(
                position_m,
                axis.normalize(),
                f64::from(r.spin_dir),
            ));
        }
        Ok(rotors)
    }

    /// `[esc]` and `[motor]`.
    fn esc_and_motor(&self, c: &Check) -> Result<(Esc, Motor), SpecError> {
        let eta = self.esc.efficiency;
        if !(eta.is_finite() && eta > 0.0 && eta <= 1.0) {
            return Err(c.err("esc.efficiency", format!("must be in (0, 1], is {eta}")));
        }
        let esc = Esc {
            efficiency: eta,
            deadzone: c.in_range("esc.deadzone", self.esc.deadzone, 0.0, 0.5)?,
        };
        let ms = &self.motor;
        let motor = Motor {
            kv_rpm_per_v: c.positive("motor.kv_rpm_per_v", ms.kv_rpm_per_v)?,
            resistance_ohm: c.positive("motor.resistance_ohm", ms.resistance_ohm)?,
            no_load_current_a: c.non_negative("motor.no_load_current_a", ms.no_load_current_a)?,
            rotor_inertia_kgm2: c.positive("motor.rotor_inertia_kgm2", ms.rotor_inertia_kgm2)?,
            viscous_friction_nms_per_rad: c.non_negative(
                "motor.viscous_friction_nms_per_rad",
                ms.viscous_friction_nms_per_rad,
            )?,
            current_limit_a: c.positive("motor.current_limit_a", ms.current_limit_a)?,
        };
        Ok((esc, motor))
    }

    /// `[[batteries]]` (1 to MAX_BATTERIES) and `[power]`: resistance
    /// sharing needs every pack's r0.
    fn power(&self, c: &Check) -> Result<Power, SpecError> {
        if self.batteries.is_empty() || self.batteries.len() > MAX_BATTERIES {
            return Err(c.err(
                "batteries",
                format!(
                    "needs 1 to {MAX_BATTERIES} batteries, has {}",
                    self.batteries.len()
                ),
            ));
        }
        let batteries = self
            .batteries
            .iter()
            .enumerate()
            .map(|(j, b)| battery(c, j, b))
            .collect::<Result<Vec<_>, _>>()?;
        let sharing = match self.power.sharing {
            SharingSpec::Resistance => Sharing::Resistance,
            SharingSpec::Equal => Sharing::Equal,
        };
        if sharing == Sharing::Resistance
            && batteries.len() > 1
            && batteries.iter().any(|b| b.r0() == 0.0)
        {
            return Err(c.err(
                "power.sharing",
                "\"resistance\" sharing needs r0_ohm > 0 on every battery",
            ));
        }
        let avionics_power_w =
            c.non_negative("power.avionics_power_w", self.power.avionics_power_w)?;
        Ok(Power {
            batteries,
            sharing,
            avionics_power_w,
        })
    }

    /// `[propeller]`: its thrust coefficient given, or calibrated to a
    /// thrust-to-hover ratio (for `body`'s weight under the environment's
    /// gravity, shared by `rotors`, on the first pack's nominal voltage);
    /// the propulsion's plausibility when asked. With that gravity (checked
    /// here, after the propeller's own keys).
    fn propeller_of(
        &self,
        c: &Check,
        body: &BodyConstants,
        rotors: &[Rotor],
        motor: &Motor,
        batteries: &[Battery],
    ) -> Result<(Propeller, f64), SpecError> {
        let ps = &self.propeller;
        let radius_m = c.positive("propeller.radius_m", ps.radius_m)?;
        let torque_coeff_m = c.non_negative("propeller.torque_coeff_m", ps.torque_coeff_m)?;
        let j0 = c.positive(
            "propeller.zero_thrust_advance_ratio",
            ps.zero_thrust_advance_ratio,
        )?;
        let g = c.positive("environment.gravity_mps2", self.environment.gravity_mps2)?;
        let thrust_coeff = match (ps.thrust_coeff_n_s2, ps.max_thrust_to_hover_ratio) {
            (Some(k), None) => c.positive("propeller.thrust_coeff_n_s2", k)?,
            (None, Some(ratio)) => {
                if !(ratio.is_finite() && ratio > 1.0) {
                    return Err(c.err(
                        "propeller.max_thrust_to_hover_ratio",
                        format!("must be > 1, is {ratio}"),
                    ));
                }
                let target = ratio * body.mass_kg * g / rotors.len() as f64;
                calibrate_thrust_coeff(
                    motor,
                    torque_coeff_m,
                    batteries[0].nominal_voltage_v,
                    target,
                )
                .map_err(|e| c.err("propeller.max_thrust_to_hover_ratio", e))?
            }
            _ => {
                return Err(c.err(
                    "propeller",
                    "give exactly one of thrust_coeff_n_s2 and max_thrust_to_hover_ratio",
                ));
            }
        };
        let q = ps.torque_inflow_coeffs;
        if q.iter().any(|v| !v.is_finite()) {
            return Err(c.err("propeller.torque_inflow_coeffs", "must be finite"));
        }
        let propeller = Propeller {
            radius_m,
            thrust_coeff,
            torque_coeff_m,
            zero_thrust_advance_ratio: j0,
            torque_inflow: q,
        };
        if ps.plausibility_checks {
            plausible_propulsion(
                c,
                ps.max_thrust_to_hover_ratio.is_some(),
                &propeller,
                motor,
                body.mass_kg * g,
                rotors,
                &self.environment,
            )?;
        }
        Ok((propeller, g))
    }

    /// `[contact]`, when given: at least one finite point.
    fn contact_of(&self, c: &Check) -> Result<Option<Contact>, SpecError> {
        let Some(cs) = &self.contact else {
            return Ok(None);
        };
        if cs.points_m.is_empty() || cs.points_m.iter().flatten().any(|v| !v.is_finite()) {
            return Err(c.err("contact.points_m", "needs at least one finite point"));
        }
        Ok(Some(Contact {
            points_m: cs.points_m.clone(),
            stiffness_n_per_m: c.positive("contact.stiffness_n_per_m", cs.stiffness_n_per_m)?,
            damping_ns_per_m: c.non_negative("contact.damping_ns_per_m", cs.damping_ns_per_m)?,
            friction_coeff: c.non_negative("contact.friction_coeff", cs.friction_coeff)?,
            friction_smoothing_mps: c
                .positive("contact.friction_smoothing_mps", cs.friction_smoothing_mps)?,
        }))
    }

    /// `[environment]`: the world's origin and gravity (`g` at it).
    fn world(&self, c: &Check, g: f64) -> Result<(WorldOrigin, Gravity), SpecError> {
        let e = &self.environment;
        let origin = WorldOrigin::new(Geodetic {
            lat_deg: c.in_range("environment.origin_lat_deg", e.origin_lat_deg, -90.0, 90.0)?,
            lon_deg: c.in_range(
                "environment.origin_lon_deg",
                e.origin_lon_deg,
                -180.0,
                180.0,
            )?,
            alt_m: c.in_range(
                "environment.origin_alt_m",
                e.origin_alt_m,
                -1000.0,
                20_000.0,
            )?,
        });
        let gravity = match e.gravity_model {
            GravityModel::Uniform => Gravity::Uniform { g_mps2: g },
            GravityModel::Spherical => Gravity::Spherical {
                g_mps2: g,
                origin_alt_m: e.origin_alt_m,
            },
        };
        Ok((origin, gravity))
    }
}
