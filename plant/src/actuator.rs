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
    /// States per rotor.
    pub fn states(&self) -> usize {
        match self {
            Actuator::Direct => 0,
            Actuator::FirstOrder { .. } => 1,
            Actuator::SecondOrder { .. } => 2,
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
