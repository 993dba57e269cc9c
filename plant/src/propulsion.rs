//! One rotor's drive train: ESC -> BLDC motor -> quadratic propeller.
//!
//! The motor current is quasi-static (no inductance state):
//! `I = clamp((d V_bus - Ke w) / R, 0, I_max)`, the shaft torque `Kt I`, the
//! losses `Kt I0 s(w / w_s) + b w` with a C1 smooth sign `s` (see [`smooth_sign`]);
//! the rotor speed `w` is a state with
//! `J dw/dt = Kt I - losses - Q`. Thrust and torque are `kT (rho/rho_ref) w^2`
//! and `(Q/T) * thrust`, scaled by an axial-inflow factor.

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
    /// Thrust per (rad/s)^2 at `RHO_REF`, N s^2.
    pub thrust_coeff: f64,
    /// Reaction torque per unit thrust, m.
    pub torque_coeff_m: f64,
    /// Advance ratio J = V / (n D) at which thrust vanishes.
    pub zero_thrust_advance_ratio: f64,
}

impl Propeller {
    /// Thrust factor for axial inflow `v_axial` (m/s, positive when the air
    /// enters the disc from the thrust side, i.e. climbing): `1 - J / J0`,
    /// kept in [0, 1.5].
    pub fn inflow_factor(&self, w: f64, v_axial: f64) -> f64 {
        inflow_factor(w * self.inflow_speed_per_radps(), v_axial)
    }

    /// `J0 n D` per rad/s of rotor speed: the axial speed at which thrust vanishes.
    pub fn inflow_speed_per_radps(&self) -> f64 {
        self.zero_thrust_advance_ratio * self.radius_m / std::f64::consts::PI
    }

    /// Thrust at speed `w`, density `rho` and inflow factor.
    pub fn thrust(&self, w: f64, rho: f64, factor: f64) -> f64 {
        self.thrust_coeff * (rho / RHO_REF) * w * w * factor
    }
}

/// `1 - v_axial / v_zero` in [0, 1.5]; 1 when the rotor (nearly) stands.
pub fn inflow_factor(v_zero: f64, v_axial: f64) -> f64 {
    if v_zero < 1e-6 {
        return 1.0;
    }
    (1.0 - v_axial / v_zero).clamp(0.0, 1.5)
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
        };
        let net = |w: f64| {
            m.ke() * m.current(11.1, w) - m.loss_torque(w) - 0.05 * p.thrust(w, RHO_REF, 1.0)
        };
        let (mut lo, mut hi) = (1.0, 2000.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if net(mid) > 0.0 { lo = mid } else { hi = mid }
        }
        assert!((p.thrust(lo, RHO_REF, 1.0) / target - 1.0).abs() < 1e-9);
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
    fn inflow_reduces_thrust_when_climbing() {
        let p = Propeller {
            radius_m: 0.127,
            thrust_coeff: 1e-5,
            torque_coeff_m: 0.02,
            zero_thrust_advance_ratio: 0.8,
        };
        assert_eq!(p.inflow_factor(500.0, 0.0), 1.0);
        let w: f64 = 500.0;
        let nd = w / (2.0 * std::f64::consts::PI) * 0.254;
        assert!((p.inflow_factor(w, 0.4 * nd) - 0.5).abs() < 1e-12);
        assert!(p.inflow_factor(w, -1.0) > 1.0);
        assert_eq!(p.inflow_factor(w, 10.0 * nd), 0.0);
        assert_eq!(p.inflow_factor(0.0, 5.0), 1.0);
    }
}
