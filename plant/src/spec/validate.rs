//! The rules a spec's values keep, each error naming the key it breaks
//! (`build.rs` builds the plant with them).

use nalgebra::{Matrix3, Vector3};

use super::{ActuatorModel, BatteryKind, BatterySpec, SpecError};
use crate::actuator::Actuator;
use crate::battery::{Battery, BatteryModel, OcvTable, WarningLevels};
use crate::multirotor::Rotor;
use crate::propulsion::{Motor, Propeller};

pub(super) struct Check<'a> {
    pub source: &'a str,
}

impl Check<'_> {
    pub(super) fn err(&self, key: impl Into<String>, reason: impl Into<String>) -> SpecError {
        lockstep_config::ConfigError::invalid(
            &lockstep_config::Source::unlocated(self.source),
            key,
            reason,
        )
        .into()
    }
    pub(super) fn positive(&self, key: &str, v: f64) -> Result<f64, SpecError> {
        if v.is_finite() && v > 0.0 {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be positive and finite, is {v}")))
        }
    }
    pub(super) fn non_negative(&self, key: &str, v: f64) -> Result<f64, SpecError> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be >= 0 and finite, is {v}")))
        }
    }
    pub(super) fn in_range(&self, key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, SpecError> {
        if v.is_finite() && v >= lo && v <= hi {
            Ok(v)
        } else {
            Err(self.err(key, format!("must be in [{lo}, {hi}], is {v}")))
        }
    }
    pub(super) fn finite3(&self, key: &str, v: [f64; 3]) -> Result<Vector3<f64>, SpecError> {
        if v.iter().all(|x| x.is_finite()) {
            Ok(Vector3::from(v))
        } else {
            Err(self.err(key, "must be finite"))
        }
    }
    fn required(&self, key: &str, v: Option<f64>, model: &str) -> Result<f64, SpecError> {
        v.ok_or_else(|| self.err(key, format!("is required by model \"{model}\"")))
    }
    fn absent<T>(&self, key: &str, v: &Option<T>, model: &str) -> Result<(), SpecError> {
        match v {
            Some(_) => Err(self.err(key, format!("does not apply to model \"{model}\""))),
            None => Ok(()),
        }
    }
}

/// Symmetric positive definite by Sylvester's criterion.
pub(super) fn inertia(c: &Check, m: [[f64; 3]; 3]) -> Result<Matrix3<f64>, SpecError> {
    let key = "body.inertia_kgm2";
    let i = Matrix3::from_fn(|r, k| m[r][k]);
    if i.iter().any(|v| !v.is_finite()) {
        return Err(c.err(key, "must be finite"));
    }
    let scale = i.abs().max();
    for (r, k) in [(0, 1), (0, 2), (1, 2)] {
        if (i[(r, k)] - i[(k, r)]).abs() > 1e-12 * scale {
            return Err(c.err(
                key,
                format!(
                    "must be symmetric: [{r}][{k}] = {} but [{k}][{r}] = {}",
                    i[(r, k)],
                    i[(k, r)]
                ),
            ));
        }
    }
    let m1 = i[(0, 0)];
    let m2 = i[(0, 0)] * i[(1, 1)] - i[(0, 1)] * i[(1, 0)];
    let m3 = i.determinant();
    if !(m1 > 0.0 && m2 > 0.0 && m3 > 0.0) {
        return Err(c.err(
            key,
            "must be positive definite (leading principal minors all > 0)",
        ));
    }
    Ok(i)
}

pub(super) fn actuator(c: &Check, s: &super::ActuatorSpec) -> Result<Actuator, SpecError> {
    Ok(match s.model {
        ActuatorModel::Direct => {
            c.absent("actuator.time_constant_s", &s.time_constant_s, "direct")?;
            c.absent(
                "actuator.natural_freq_radps",
                &s.natural_freq_radps,
                "direct",
            )?;
            c.absent("actuator.damping_ratio", &s.damping_ratio, "direct")?;
            c.absent("actuator.rate_limit_per_s", &s.rate_limit_per_s, "direct")?;
            Actuator::Direct
        }
        ActuatorModel::FirstOrder => {
            c.absent(
                "actuator.natural_freq_radps",
                &s.natural_freq_radps,
                "first_order",
            )?;
            c.absent("actuator.damping_ratio", &s.damping_ratio, "first_order")?;
            c.absent(
                "actuator.rate_limit_per_s",
                &s.rate_limit_per_s,
                "first_order",
            )?;
            let t = c.required("actuator.time_constant_s", s.time_constant_s, "first_order")?;
            Actuator::FirstOrder {
                time_constant_s: c.positive("actuator.time_constant_s", t)?,
            }
        }
        ActuatorModel::SecondOrder => {
            c.absent(
                "actuator.time_constant_s",
                &s.time_constant_s,
                "second_order",
            )?;
            let wn = c.required(
                "actuator.natural_freq_radps",
                s.natural_freq_radps,
                "second_order",
            )?;
            let z = c.required("actuator.damping_ratio", s.damping_ratio, "second_order")?;
            let rate = match s.rate_limit_per_s {
                Some(r) => Some(c.positive("actuator.rate_limit_per_s", r)?),
                None => None,
            };
            Actuator::SecondOrder {
                natural_freq_radps: c.positive("actuator.natural_freq_radps", wn)?,
                damping_ratio: c.positive("actuator.damping_ratio", z)?,
                rate_limit_per_s: rate,
            }
        }
    })
}

pub(super) fn battery(c: &Check, j: usize, s: &BatterySpec) -> Result<Battery, SpecError> {
    let k = |f: &str| format!("batteries[{j}].{f}");
    let capacity_ah = c.positive(&k("capacity_ah"), s.capacity_ah)?;
    let initial_soc = c.in_range(&k("initial_soc"), s.initial_soc, 0.0, 1.0)?;
    let voltage_floor_v = c.non_negative(&k("voltage_floor_v"), s.voltage_floor_v)?;
    let nominal_voltage_v = c.positive(&k("nominal_voltage_v"), s.nominal_voltage_v)?;
    if nominal_voltage_v <= voltage_floor_v {
        return Err(c.err(
            k("nominal_voltage_v"),
            format!("must exceed voltage_floor_v ({voltage_floor_v})"),
        ));
    }
    let r0_ohm = c.non_negative(&k("r0_ohm"), s.r0_ohm)?;
    let (low, crit, emer) = (
        s.warning_low_soc,
        s.warning_critical_soc,
        s.warning_emergency_soc,
    );
    if !(0.0 <= emer && emer < crit && crit < low && low < 1.0) {
        return Err(c.err(
            k("warning_low_soc"),
            format!("warnings must satisfy 0 <= emergency ({emer}) < critical ({crit}) < low ({low}) < 1"),
        ));
    }
    let model = match s.model {
        BatteryKind::Thevenin => {
            c.absent(&k("voltage_v"), &s.voltage_v, "thevenin")?;
            let soc = s
                .ocv_soc
                .clone()
                .ok_or_else(|| c.err(k("ocv_soc"), "is required by model \"thevenin\""))?;
            let volts = s
                .ocv_v
                .clone()
                .ok_or_else(|| c.err(k("ocv_v"), "is required by model \"thevenin\""))?;
            if soc.len() < 2 || soc.len() != volts.len() {
                return Err(c.err(
                    k("ocv_v"),
                    format!(
                        "needs as many entries as ocv_soc ({}), at least 2",
                        soc.len()
                    ),
                ));
            }
            if soc.len() > OcvTable::MAX_KNOTS {
                return Err(c.err(
                    k("ocv_soc"),
                    format!(
                        "has {} knots, at most {} are allowed",
                        soc.len(),
                        OcvTable::MAX_KNOTS
                    ),
                ));
            }
            if soc[0] != 0.0
                || soc[soc.len() - 1] != 1.0
                || soc.iter().any(|v| !v.is_finite())
                || soc.windows(2).any(|w| w[1] <= w[0])
            {
                return Err(c.err(k("ocv_soc"), "must increase strictly from 0 to 1"));
            }
            if volts.iter().any(|v| !(v.is_finite() && *v > 0.0))
                || volts.windows(2).any(|w| w[1] < w[0])
            {
                return Err(c.err(k("ocv_v"), "must be positive and non-decreasing"));
            }
            let r1 = c.required(&k("r1_ohm"), s.r1_ohm, "thevenin")?;
            let c1 = c.required(&k("c1_f"), s.c1_f, "thevenin")?;
            BatteryModel::Thevenin {
                ocv: OcvTable::new(soc, volts),
                r0_ohm,
                r1_ohm: c.positive(&k("r1_ohm"), r1)?,
                c1_f: c.positive(&k("c1_f"), c1)?,
            }
        }
        BatteryKind::Ideal => {
            for (name, v) in [
                ("ocv_soc", s.ocv_soc.is_some()),
                ("ocv_v", s.ocv_v.is_some()),
            ] {
                if v {
                    return Err(c.err(k(name), "does not apply to model \"ideal\""));
                }
            }
            c.absent(&k("r1_ohm"), &s.r1_ohm, "ideal")?;
            c.absent(&k("c1_f"), &s.c1_f, "ideal")?;
            let v = c.required(&k("voltage_v"), s.voltage_v, "ideal")?;
            BatteryModel::Ideal {
                voltage_v: c.positive(&k("voltage_v"), v)?,
                r0_ohm,
            }
        }
    };
    Ok(Battery {
        model,
        capacity_ah,
        initial_soc,
        voltage_floor_v,
        nominal_voltage_v,
        warnings: WarningLevels {
            low_soc: low,
            critical_soc: crit,
            emergency_soc: emer,
        },
    })
}

/// Plausible ranges of the propulsion checks (static thrust coefficient,
/// figure of merit, hover winding current over the current limit).
pub const PLAUSIBLE_CT: (f64, f64) = (0.07, 0.16);
pub const PLAUSIBLE_FM: (f64, f64) = (0.45, 0.80);
pub const MAX_HOVER_CURRENT_FRACTION: f64 = 0.6;

/// Refuses propeller and motor parameters that no real propulsion unit has:
/// a static thrust coefficient `CT = kT 4 pi^2 / (rho D^4)` outside 0.07-0.16,
/// a figure of merit `sqrt(kT / (2 rho A)) / (Q/T)` outside 0.45-0.80, or a
/// winding current in hover (at the origin's air density) above 60 % of the
/// current limit. `calibrated`: the coefficient came from
/// `max_thrust_to_hover_ratio`, which the CT error then names.
pub(super) fn plausible_propulsion(
    c: &Check,
    calibrated: bool,
    p: &Propeller,
    m: &Motor,
    weight_n: f64,
    rotors: &[Rotor],
    env: &super::EnvironmentSpec,
) -> Result<(), SpecError> {
    let ct = p.static_ct();
    if calibrated && !(PLAUSIBLE_CT.0..=PLAUSIBLE_CT.1).contains(&ct) {
        return Err(c.err(
            "propeller.max_thrust_to_hover_ratio",
            format!(
                "calibrates the thrust coefficient to kT = {:.4e} N s^2, a static thrust \
                 coefficient CT = kT 4 pi^2 / (rho D^4) = {ct:.4} (rho = 1.225 kg/m^3, \
                 D = {:.3} m); real propellers have {} to {}: the motor, radius_m and this \
                 ratio do not fit together",
                p.thrust_coeff,
                2.0 * p.radius_m,
                PLAUSIBLE_CT.0,
                PLAUSIBLE_CT.1
            ),
        ));
    }
    if !(PLAUSIBLE_CT.0..=PLAUSIBLE_CT.1).contains(&ct) {
        return Err(c.err(
            "propeller.thrust_coeff_n_s2",
            format!(
                "implies a static thrust coefficient CT = kT 4 pi^2 / (rho D^4) = {ct:.4} \
                 (rho = 1.225 kg/m^3, D = {:.3} m); real propellers have {} to {}: \
                 check the coefficient's units (N s^2 per (rad/s)^2) and radius_m",
                2.0 * p.radius_m,
                PLAUSIBLE_CT.0,
                PLAUSIBLE_CT.1
            ),
        ));
    }
    if p.torque_coeff_m > 0.0 {
        let fm = p.figure_of_merit();
        if !(PLAUSIBLE_FM.0..=PLAUSIBLE_FM.1).contains(&fm) {
            return Err(c.err(
                "propeller.torque_coeff_m",
                format!(
                    "with {} thrust coefficient the figure of merit \
                     sqrt(kT / (2 rho A)) / torque_coeff_m is {fm:.3}; real propellers \
                     have {} to {}: torque_coeff_m is CP D / (2 pi CT)",
                    if calibrated {
                        "the calibrated (max_thrust_to_hover_ratio)"
                    } else {
                        "this"
                    },
                    PLAUSIBLE_FM.0,
                    PLAUSIBLE_FM.1
                ),
            ));
        }
    }
    // Hover: each rotor carries its share of the weight along its axis.
    let lift_per_n: f64 = rotors.iter().map(|r| -r.thrust_axis.z).sum();
    if lift_per_n > 0.0 {
        let rho = crate::env::atmosphere::Isa::at_altitude(env.origin_alt_m).density_kgpm3;
        let t = weight_n / lift_per_n;
        let w = (t / (p.thrust_coeff * rho / crate::propulsion::RHO_REF)).sqrt();
        let torque = p.torque(w, rho, 0.0);
        let current = (torque + m.loss_torque(w)) / m.ke();
        let limit = MAX_HOVER_CURRENT_FRACTION * m.current_limit_a;
        if current > limit {
            return Err(c.err(
                "motor.current_limit_a",
                format!(
                    "hovering needs {current:.1} A per motor ({t:.2} N per rotor at \
                     {:.0} rpm), above {:.0} % of the {} A limit: the motor or \
                     propeller is too small for the weight",
                    w * 60.0 / (2.0 * std::f64::consts::PI),
                    100.0 * MAX_HOVER_CURRENT_FRACTION,
                    m.current_limit_a
                ),
            ));
        }
    }
    Ok(())
}
