//! Actuator dynamics between the autopilot's motor command and the ESC.

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Actuator {
    /// The command passes through.
    Direct,
    /// `du/dt = (cmd - u) / tau`; one state.
    FirstOrder { time_constant_s: f64 },
    /// `du/dt = sat(r)`, `dr/dt = wn^2 (cmd - u) - 2 zeta wn r`; two states.
    /// `sat` limits the output rate when `rate_limit_per_s` is set.
    SecondOrder {
        natural_freq_radps: f64,
        damping_ratio: f64,
        rate_limit_per_s: Option<f64>,
    },
}

impl Actuator {
    /// The most states per rotor any model has.
    pub const MAX_STATES: usize = 2;

    /// States per rotor (at most [`Actuator::MAX_STATES`]).
    pub fn states(&self) -> usize {
        match self {
            Actuator::Direct => 0,
            Actuator::FirstOrder { .. } => 1,
            Actuator::SecondOrder { .. } => 2,
        }
    }

    /// Equivalent first-order lag of the command path, s (`2 zeta / wn`
    /// for the second-order model, 0 for a direct path).
    pub fn equivalent_lag_s(&self) -> f64 {
        match *self {
            Actuator::Direct => 0.0,
            Actuator::FirstOrder { time_constant_s } => time_constant_s,
            Actuator::SecondOrder {
                natural_freq_radps,
                damping_ratio,
                ..
            } => 2.0 * damping_ratio / natural_freq_radps,
        }
    }

    /// The effective command in [0, 1] from the held command and the states.
    pub fn output(&self, cmd: f64, s: &[f64]) -> f64 {
        match self {
            Actuator::Direct => cmd.clamp(0.0, 1.0),
            _ => s[0].clamp(0.0, 1.0),
        }
    }

    /// Writes the state derivatives.
    pub fn derivatives(&self, cmd: f64, s: &[f64], ds: &mut [f64]) {
        match *self {
            Actuator::Direct => {}
            Actuator::FirstOrder { time_constant_s } => ds[0] = (cmd - s[0]) / time_constant_s,
            Actuator::SecondOrder {
                natural_freq_radps: wn,
                damping_ratio: z,
                rate_limit_per_s,
            } => {
                ds[0] = match rate_limit_per_s {
                    Some(l) => s[1].clamp(-l, l),
                    None => s[1],
                };
                ds[1] = wn * wn * (cmd - s[0]) - 2.0 * z * wn * s[1];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrate::{Integrator, Method, Options, System};

    /// An actuator alone with a held unit step command.
    struct Step(Actuator);
    impl System for Step {
        fn dim(&self) -> usize {
            self.0.states()
        }
        fn rhs(&self, _t: f64, x: &[f64], dx: &mut [f64]) {
            self.0.derivatives(1.0, x, dx);
        }
    }

    fn response(a: Actuator, seconds: f64) -> Vec<f64> {
        let mut x = vec![0.0; a.states()];
        let mut integ = Integrator::new(
            Method::Rk4,
            a.states(),
            Options {
                max_step_ticks: 100,
                ..Options::default()
            },
        )
        .unwrap();
        let sys = Step(a);
        let n = (seconds * 1e6 / 1000.0).round() as u64;
        for k in 0..n {
            integ.step_interval(&sys, k * 1000, 1000, &mut x).unwrap();
        }
        x
    }

    #[test]
    fn first_order_step_response_is_exponential() {
        let x = response(
            Actuator::FirstOrder {
                time_constant_s: 0.05,
            },
            0.1,
        );
        assert!((x[0] - (1.0 - (-2.0f64).exp())).abs() < 1e-9, "{}", x[0]);
        assert_eq!(Actuator::Direct.output(1.7, &[]), 1.0);
    }

    #[test]
    fn second_order_step_response_matches_the_underdamped_closed_form() {
        let (wn, z, t) = (40.0f64, 0.4f64, 0.07f64);
        let x = response(
            Actuator::SecondOrder {
                natural_freq_radps: wn,
                damping_ratio: z,
                rate_limit_per_s: None,
            },
            t,
        );
        let wd = wn * (1.0 - z * z).sqrt();
        let u = 1.0
            - (-z * wn * t).exp() * ((wd * t).cos() + z / (1.0 - z * z).sqrt() * (wd * t).sin());
        assert!((x[0] - u).abs() < 1e-8, "{} vs {u}", x[0]);
        assert!(x[0] > 1.0, "underdamped: it overshoots at t = {t}");
    }

    #[test]
    fn rate_limit_bounds_the_output_rate() {
        let limit = 2.0;
        let a = Actuator::SecondOrder {
            natural_freq_radps: 100.0,
            damping_ratio: 0.7,
            rate_limit_per_s: Some(limit),
        };
        for t in [0.05, 0.1, 0.2, 0.4] {
            let x = response(a, t);
            assert!(
                x[0] <= limit * t + 1e-12,
                "u({t}) = {} above {}",
                x[0],
                limit * t
            );
        }
        // Without the limit the same actuator is far faster.
        let free = response(
            Actuator::SecondOrder {
                natural_freq_radps: 100.0,
                damping_ratio: 0.7,
                rate_limit_per_s: None,
            },
            0.05,
        );
        assert!(free[0] > 0.9);
        assert!(response(a, 0.05)[0] < 0.11);
    }
}
