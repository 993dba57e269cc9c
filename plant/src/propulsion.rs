//! One rotor's drive train: ESC -> BLDC motor -> quadratic propeller.
//!
//! The motor current is quasi-static (no inductance state):
//! `I = clamp((d V_bus - Ke w) / R, 0, I_max)`, the shaft torque `Kt I`, the
//! losses `Kt I0 s(w / w_s) + b w` with a C1 smooth sign `s` (see [`smooth_sign`]);
//! the rotor speed `w` is a state with
//! `J dw/dt = Kt I - losses - Q`.
//!
//! The propeller: thrust `kT (rho/rho_ref) w^2 fT(J)` and torque
//! `(Q/T)_0 kT (rho/rho_ref) w^2 fQ(J)`, where `J = V / (n D)` is the advance
//! ratio of the axial inflow `V`. The thrust and power coefficients fall off
//! with `J` differently, as propeller data show: `fT = CT(J)/CT(0) = 1 - J/J0`
//! (linear to the zero-thrust advance ratio `J0`) and `fQ = CP(J)/CP(0) =
//! 1 + q1 J + q2 J^2`. `J` is kept in `[-J0/2, J0]`: descent beyond that
//! (towards the vortex-ring state) is not modelled.

/// Rotor speed over which the no-load loss fades in, rad/s.
pub const LOSS_SMOOTHING_RADPS: f64 = 4.0;

/// A continuously differentiable sign: `x (2 - |x|)` on [-1, 1], `sign(x)`
/// outside (multiplications only: cheap, and the same bits everywhere).
pub fn smooth_sign(x: f64) -> f64 {
    if x >= 1.0 {
        1.0
    } else if x <= -1.0 {
        -1.0
    } else {
        x * (2.0 - x.abs())
    }
}
/// Air density the thrust coefficient refers to (ISA sea level).
pub const RHO_REF: f64 = 1.225;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Esc {
    /// Output power over input power.
    pub efficiency: f64,
    /// Commands at or below this give zero duty.
    pub deadzone: f64,
}

impl Esc {
    /// Duty cycle in [0, 1] for a command in [0, 1].
    pub fn duty(&self, command: f64) -> f64 {
        let u = command.clamp(0.0, 1.0);
        if u <= self.deadzone {
            0.0
        } else {
            (u - self.deadzone) / (1.0 - self.deadzone)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Motor {
    pub kv_rpm_per_v: f64,
    pub resistance_ohm: f64,
    pub no_load_current_a: f64,
    /// Rotor plus propeller inertia about the spin axis.
    pub rotor_inertia_kgm2: f64,
    pub viscous_friction_nms_per_rad: f64,
    pub current_limit_a: f64,
}

impl Motor {
    /// Back-EMF and torque constant, V s/rad = N m/A.
    pub fn ke(&self) -> f64 {
        60.0 / (2.0 * std::f64::consts::PI * self.kv_rpm_per_v)
    }

    /// Winding current at motor voltage `v` and speed `w`.
    pub fn current(&self, v: f64, w: f64) -> f64 {
        ((v - self.ke() * w) / self.resistance_ohm).clamp(0.0, self.current_limit_a)
    }

    /// Friction and no-load losses as a torque, N m.
    pub fn loss_torque(&self, w: f64) -> f64 {
        self.ke() * self.no_load_current_a * smooth_sign(w / LOSS_SMOOTHING_RADPS)
            + self.viscous_friction_nms_per_rad * w
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Propeller {
    pub radius_m: f64,
    /// Thrust per (rad/s)^2 at `RHO_REF` and no inflow, N s^2.
    pub thrust_coeff: f64,
    /// Reaction torque per unit thrust at no inflow, m (`CP / (2 pi CT) D`).
    pub torque_coeff_m: f64,
    /// Advance ratio J = V / (n D) at which thrust vanishes.
    pub zero_thrust_advance_ratio: f64,
    /// `[q1, q2]` of the power coefficient's inflow dependence
    /// `CP(J)/CP(0) = 1 + q1 J + q2 J^2`.
    pub torque_inflow: [f64; 2],
}

impl Propeller {
    /// Advance ratio per (m/s of axial inflow) per (1 / rotor speed in rad/s):
    /// `J = V / (n D) = (pi / R) V / w`.
    pub fn advance_ratio_factor(&self) -> f64 {
        std::f64::consts::PI / self.radius_m
    }

    /// The advance ratio at rotor speed `w` and axial inflow `v_axial` (m/s,
    /// positive when the air enters the disc from the thrust side, i.e.
    /// climbing), kept in the modelled range `[-J0/2, J0]`; 0 for a
    /// standing rotor.
    pub fn advance_ratio(&self, w: f64, v_axial: f64) -> f64 {
        if w <= 0.0 {
            return 0.0;
        }
        let j0 = self.zero_thrust_advance_ratio;
        (v_axial * self.advance_ratio_factor() / w).clamp(-0.5 * j0, j0)
    }

    /// `CT(J)/CT(0)`.
    pub fn thrust_factor(&self, j: f64) -> f64 {
        1.0 - j / self.zero_thrust_advance_ratio
    }

    /// `CP(J)/CP(0)`, never negative.
    pub fn torque_factor(&self, j: f64) -> f64 {
        let [q1, q2] = self.torque_inflow;
        (1.0 + j * (q1 + q2 * j)).max(0.0)
    }

    /// Thrust at speed `w`, density `rho` and advance ratio `j`.
    pub fn thrust(&self, w: f64, rho: f64, j: f64) -> f64 {
        self.thrust_coeff * (rho / RHO_REF) * w * w * self.thrust_factor(j)
    }

    /// Reaction torque at speed `w`, density `rho` and advance ratio `j`.
    pub fn torque(&self, w: f64, rho: f64, j: f64) -> f64 {
        self.torque_coeff_m * self.thrust_coeff * (rho / RHO_REF) * w * w * self.torque_factor(j)
    }

    /// Static thrust coefficient `CT = T / (rho n^2 D^4) = kT 4 pi^2 / (rho D^4)`.
    pub fn static_ct(&self) -> f64 {
        let d = 2.0 * self.radius_m;
        let pi = std::f64::consts::PI;
        self.thrust_coeff * 4.0 * (pi * pi) / (RHO_REF * ((d * d) * (d * d)))
    }

    /// Static figure of merit, ideal over actual power at any speed:
    /// `T^1.5 / (P sqrt(2 rho A)) = sqrt(kT / (2 rho A)) / (Q/T)`.
    pub fn figure_of_merit(&self) -> f64 {
        let area = std::f64::consts::PI * self.radius_m * self.radius_m;
        (self.thrust_coeff / (2.0 * RHO_REF * area)).sqrt() / self.torque_coeff_m
    }
}

/// Ground effect on one rotor after Cheeseman and Bennett (1955): at constant
/// power, `T_IGE / T_OGE = 1 / (1 - (R / 4z)^2)` at hub height `z` above
/// the ground. The height is held at `R/2` below (the formula's validity
/// limit, ratio 4/3), and the correction fades out smoothly between `3R`
/// and `5R` (where it is under 0.7 % and 0.25 %), so the thrust is exactly
/// the free-air value above `5R`.
///
/// Smoothness: the factor is continuous everywhere and continuously
/// differentiable everywhere except at `z = R/2`, where the hold begins:
/// its slope jumps there from `-2 (R/4)^2 / z^3 / (1 - (R/4z)^2)^2 = -16/(9R)`
/// to 0. The built-in airframes' hubs stay above `R/2` at rest (the Iris's
/// at 0.123 m against 0.064 m); a hub below it (a hard landing, a
/// tip-over) meets the kink, which an adaptive integrator passes by
/// shortening its step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroundEffect {
    r_over_4_sq: f64,
    z_min: f64,
    fade_start: f64,
    inv_fade_width: f64,
    /// Above this hub height the factor is exactly 1.
    pub reach_m: f64,
}

impl GroundEffect {
    pub fn new(radius_m: f64) -> Self {
        // A plain product: `powi`'s precision is not specified across
        // platforms, and this constant feeds the right-hand side.
        let r_over_4 = 0.25 * radius_m;
        GroundEffect {
            r_over_4_sq: r_over_4 * r_over_4,
            z_min: 0.5 * radius_m,
            fade_start: 3.0 * radius_m,
            inv_fade_width: 1.0 / (2.0 * radius_m),
            reach_m: 5.0 * radius_m,
        }
    }

    /// Thrust multiplier at hub height `z_m` above the ground.
    pub fn factor(&self, z_m: f64) -> f64 {
        if z_m >= self.reach_m {
            return 1.0;
        }
        let z = z_m.max(self.z_min);
        let mut c = self.r_over_4_sq / (z * z);
        if z > self.fade_start {
            let s = (z - self.fade_start) * self.inv_fade_width;
            c *= 1.0 - s * s * (3.0 - 2.0 * s);
        }
        1.0 / (1.0 - c)
    }
}

/// The thrust coefficient that makes full duty at `voltage_v` (sea level,
/// no inflow, steady state) produce `thrust_n`. The steady state does not
/// depend on the coefficient: the torque balance
/// `Kt (V - Ke w)/R - losses(w) = (Q/T) thrust_n` fixes `w` (found by a
/// fixed-count bisection), then `kT = thrust_n / w^2`. Errors say why the
/// motor cannot.
pub fn calibrate_thrust_coeff(
    motor: &Motor,
    torque_coeff_m: f64,
    voltage_v: f64,
    thrust_n: f64,
) -> Result<f64, String> {
    let (ke, r) = (motor.ke(), motor.resistance_ohm);
    let q = torque_coeff_m * thrust_n;
    let net = |w: f64| ke * (voltage_v - ke * w) / r - motor.loss_torque(w) - q;
    let (mut lo, mut hi) = (0.0, voltage_v / ke);
    let margin = net(20.0 * LOSS_SMOOTHING_RADPS);
    if margin.is_nan() || margin <= 0.0 {
        return Err(format!(
            "the motor cannot turn a propeller making {thrust_n:.3} N (reaction torque {q:.3} N m) at {voltage_v} V"
        ));
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if net(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let w = lo;
    let current = (voltage_v - ke * w) / r;
    if current > motor.current_limit_a {
        return Err(format!(
            "{thrust_n:.3} N at full throttle needs {current:.1} A, above the motor's current limit of {} A",
            motor.current_limit_a
        ));
    }
    Ok(thrust_n / (w * w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iris_motor() -> Motor {
        Motor {
            kv_rpm_per_v: 920.0,
            resistance_ohm: 0.25,
            no_load_current_a: 0.6,
            rotor_inertia_kgm2: 1.2e-5,
            viscous_friction_nms_per_rad: 0.0,
            current_limit_a: 60.0,
        }
    }

    #[test]
    fn esc_deadzone_and_scaling() {
        let esc = Esc {
            efficiency: 0.98,
            deadzone: 0.02,
        };
        assert_eq!(esc.duty(0.01), 0.0);
        assert_eq!(esc.duty(0.02), 0.0);
        assert_eq!(esc.duty(1.0), 1.0);
        assert_eq!(esc.duty(2.0), 1.0);
        assert!((esc.duty(0.51) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn calibration_reaches_the_requested_thrust_in_steady_state() {
        let m = iris_motor();
        let target = 7.35;
        let kt = calibrate_thrust_coeff(&m, 0.05, 11.1, target).unwrap();
        // Steady state by bisection on the torque balance at full duty.
        let p = Propeller {
            radius_m: 0.127,
            thrust_coeff: kt,
            torque_coeff_m: 0.05,
            zero_thrust_advance_ratio: 0.8,
            torque_inflow: [0.0, 0.0],
        };
        let net =
            |w: f64| m.ke() * m.current(11.1, w) - m.loss_torque(w) - p.torque(w, RHO_REF, 0.0);
        let (mut lo, mut hi) = (1.0, 2000.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if net(mid) > 0.0 { lo = mid } else { hi = mid }
        }
        assert!((p.thrust(lo, RHO_REF, 0.0) / target - 1.0).abs() < 1e-9);
    }

    #[test]
    fn calibration_refuses_what_the_motor_cannot_do() {
        let m = iris_motor();
        let e = calibrate_thrust_coeff(&m, 0.05, 11.1, 50.0).unwrap_err();
        assert!(e.contains("cannot turn"), "{e}");
        let weak = Motor {
            current_limit_a: 10.0,
            ..m
        };
        let e = calibrate_thrust_coeff(&weak, 0.05, 11.1, 7.35).unwrap_err();
        assert!(e.contains("above the motor's current limit of 10 A"), "{e}");
    }

    #[test]
    fn inflow_reduces_thrust_and_torque_differently_when_climbing() {
        let p = Propeller {
            radius_m: 0.127,
            thrust_coeff: 1e-5,
            torque_coeff_m: 0.02,
            zero_thrust_advance_ratio: 0.8,
            torque_inflow: [0.3, -1.5],
        };
        let w: f64 = 500.0;
        let nd = w / (2.0 * std::f64::consts::PI) * 0.254;
        assert_eq!(p.advance_ratio(w, 0.0), 0.0);
        assert!((p.advance_ratio(w, 0.4 * nd) - 0.4).abs() < 1e-12);
        assert!((p.thrust_factor(0.4) - 0.5).abs() < 1e-12);
        // CP(J)/CP(0) = 1 + 0.3 J - 1.5 J^2: 0.88 at J = 0.4, while CT halves,
        // so the torque per unit thrust grows in a climb.
        assert!((p.torque_factor(0.4) - 0.88).abs() < 1e-12);
        let static_ratio = p.torque(w, RHO_REF, 0.0) / p.thrust(w, RHO_REF, 0.0);
        let climb_ratio = p.torque(w, RHO_REF, 0.4) / p.thrust(w, RHO_REF, 0.4);
        assert!((static_ratio - 0.02).abs() < 1e-15);
        assert!((climb_ratio / static_ratio - 0.88 / 0.5).abs() < 1e-12);
        // The modelled range: [-J0/2, J0]; a standing rotor has J = 0.
        assert_eq!(p.advance_ratio(w, 10.0 * nd), 0.8);
        assert_eq!(p.advance_ratio(w, -10.0 * nd), -0.4);
        assert_eq!(p.thrust_factor(0.8), 0.0);
        assert_eq!(p.advance_ratio(0.0, 5.0), 0.0);
        assert_eq!(p.torque_factor(10.0), 0.0, "never negative");
    }

    #[test]
    fn static_ct_and_figure_of_merit_follow_their_definitions() {
        // APC 10x4.7 SF class: kT = 1.5e-5 N s^2, Q/T = 0.0164 m.
        let p = Propeller {
            radius_m: 0.127,
            thrust_coeff: 1.5e-5,
            torque_coeff_m: 0.0164,
            zero_thrust_advance_ratio: 0.8,
            torque_inflow: [0.0, 0.0],
        };
        // CT = T / (rho n^2 D^4) at any speed.
        let w = 500.0;
        let n = w / (2.0 * std::f64::consts::PI);
        let t = p.thrust(w, RHO_REF, 0.0);
        assert!((p.static_ct() - t / (RHO_REF * n * n * 0.254f64.powi(4))).abs() < 1e-12);
        // FM = T^1.5 / (P sqrt(2 rho A)) with P = Q w.
        let power = p.torque(w, RHO_REF, 0.0) * w;
        let area = std::f64::consts::PI * 0.127 * 0.127;
        let fm = t.powf(1.5) / (power * (2.0 * RHO_REF * area).sqrt());
        assert!((p.figure_of_merit() - fm).abs() < 1e-12, "{fm}");
    }

    #[test]
    fn ground_effect_is_cheeseman_bennett_near_the_ground_and_fades_out() {
        let r = 0.127;
        let ge = GroundEffect::new(r);
        // At z = R: 1 / (1 - 1/16).
        assert!((ge.factor(r) - 16.0 / 15.0).abs() < 1e-15);
        assert!((ge.factor(2.0 * r) - 64.0 / 63.0).abs() < 1e-15);
        // Held at z = R/2 below: 4/3.
        assert!((ge.factor(0.5 * r) - 4.0 / 3.0).abs() < 1e-15);
        assert_eq!(ge.factor(0.0), ge.factor(0.5 * r));
        assert_eq!(ge.factor(-1.0), ge.factor(0.5 * r));
        // Exactly free air from 5R up, continuous on the way there.
        assert_eq!(ge.factor(5.0 * r), 1.0);
        assert_eq!(ge.factor(100.0), 1.0);
        // C1 at the fade's ends, a slope jump at R/2 (the hold): one-sided
        // differences against the analytic slopes.
        let h = 1e-7;
        let slope_below = |z: f64| (ge.factor(z) - ge.factor(z - h)) / h;
        let slope_above = |z: f64| (ge.factor(z + h) - ge.factor(z)) / h;
        for z in [3.0 * r, 5.0 * r] {
            let (lo, hi) = (slope_below(z), slope_above(z));
            assert!((lo - hi).abs() < 1e-5, "C1 at {z}: {lo} vs {hi}");
        }
        assert_eq!(slope_below(0.5 * r), 0.0, "held below R/2");
        let analytic = -16.0 / (9.0 * r);
        assert!(
            (slope_above(0.5 * r) / analytic - 1.0).abs() < 1e-4,
            "{} vs {analytic}",
            slope_above(0.5 * r)
        );
        let mut prev = ge.factor(2.9 * r);
        let mut z = 2.9 * r;
        while z < 5.1 * r {
            z += 1e-4;
            let f = ge.factor(z);
            assert!(
                f <= prev && prev - f < 1e-5,
                "monotone and continuous at {z}"
            );
            prev = f;
        }
    }
}
