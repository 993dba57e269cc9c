//! Wind: the air mass velocity the plant reads, sampled at the wind cadence
//! and held in between.
//!
//! - Constant.
//! - Ornstein–Uhlenbeck per NED axis around a mean, with the exact discrete
//!   update `x' = m + (x - m) e^(-dt/tau) + sigma sqrt(1 - e^(-2 dt/tau)) n`,
//!   so its statistics do not depend on the wind cadence.
//! - Gusts (from the scenario) add on top: piecewise linear in time (a step
//!   when the rise and fall are 0), exact at integer microseconds.
//!
//! - Dryden turbulence ([`crate::environment::dryden`]) on top of a mean wind, driven by
//!   the vehicle's altitude and airspeed.

use crate::Micros;
use crate::time::rng::Stream;

/// How the base wind evolves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WindModel {
    Constant {
        ned_mps: [f64; 3],
    },
    OrnsteinUhlenbeck {
        mean_ned_mps: [f64; 3],
        sigma_mps: [f64; 3],
        tau_s: [f64; 3],
    },
    /// Mean wind plus Dryden turbulence for the wind speed `w20_mps` at 20 ft.
    Dryden {
        mean_ned_mps: [f64; 3],
        w20_mps: f64,
    },
}

/// A gust: 0 before `start`, rises linearly to `amplitude_ned_mps` over
/// `rise`, holds for `hold`, falls back to 0 over `fall`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gust {
    pub start: Micros,
    pub rise: Micros,
    pub hold: Micros,
    pub fall: Micros,
    pub amplitude_ned_mps: [f64; 3],
}

impl Gust {
    /// The gust's fraction of its amplitude at `t`.
    pub fn fraction(&self, t: Micros) -> f64 {
        if t < self.start {
            return 0.0;
        }
        let dt = (t - self.start).0;
        let (r, h, f) = (self.rise.0, self.hold.0, self.fall.0);
        if dt < r {
            dt as f64 / r as f64
        } else if dt < r + h {
            1.0
        } else if dt < r + h + f {
            1.0 - (dt - r - h) as f64 / f as f64
        } else {
            0.0
        }
    }

    pub fn end(&self) -> Micros {
        self.start + self.rise + self.hold + self.fall
    }
}

/// Most gusts active at once.
pub const MAX_GUSTS: usize = 16;

/// The wind source: base model state and active gusts (no allocation after
/// construction).
#[derive(Debug, Clone)]
pub struct Wind {
    model: WindModel,
    state: [f64; 3],
    rng: Stream,
    dryden: Option<crate::environment::dryden::Dryden>,
    gusts: [Option<Gust>; MAX_GUSTS],
    last: Option<Micros>,
}

impl Wind {
    /// The wind starts at the model's mean.
    pub fn new(model: WindModel, rng: Stream) -> Self {
        let (state, dryden) = match model {
            WindModel::Constant { ned_mps } => (ned_mps, None),
            WindModel::OrnsteinUhlenbeck { mean_ned_mps, .. } => (mean_ned_mps, None),
            WindModel::Dryden {
                mean_ned_mps,
                w20_mps,
            } => (
                mean_ned_mps,
                Some(crate::environment::dryden::Dryden::new(w20_mps)),
            ),
        };
        Wind {
            model,
            state,
            rng,
            dryden,
            gusts: [None; MAX_GUSTS],
            last: None,
        }
    }

    /// Adds a gust; `false` when `MAX_GUSTS` are already active.
    pub fn add_gust(&mut self, g: Gust) -> bool {
        match self.gusts.iter_mut().find(|s| s.is_none()) {
            Some(slot) => {
                *slot = Some(g);
                true
            }
            None => false,
        }
    }

    /// The wind at `t` (times must not decrease) for a vehicle at
    /// `altitude_m` moving at `velocity_ned_mps`: advances the base model by
    /// the time since the last sample and adds the gusts.
    pub fn sample(&mut self, t: Micros, altitude_m: f64, velocity_ned_mps: [f64; 3]) -> [f64; 3] {
        if let (
            Some(last),
            WindModel::OrnsteinUhlenbeck {
                mean_ned_mps,
                sigma_mps,
                tau_s,
            },
        ) = (self.last, self.model)
            && t > last
        {
            let dt = (t - last).as_secs_f64();
            for k in 0..3 {
                let a = libm::exp(-dt / tau_s[k]);
                let s = sigma_mps[k] * libm::sqrt(1.0 - a * a);
                self.state[k] = mean_ned_mps[k]
                    + (self.state[k] - mean_ned_mps[k]) * a
                    + s * self.rng.standard_normal();
            }
        }
        let mut w = self.state;
        if let (Some(d), WindModel::Dryden { mean_ned_mps, .. }) = (&mut self.dryden, self.model) {
            let dt = self.last.map_or(0.0, |last| (t - last).as_secs_f64());
            let rel = [
                velocity_ned_mps[0] - mean_ned_mps[0],
                velocity_ned_mps[1] - mean_ned_mps[1],
                velocity_ned_mps[2] - mean_ned_mps[2],
            ];
            let airspeed = (rel[0] * rel[0] + rel[1] * rel[1] + rel[2] * rel[2]).sqrt();
            let g = crate::environment::dryden::to_ned(
                d.step(&mut self.rng, dt, altitude_m, airspeed),
                mean_ned_mps,
            );
            for k in 0..3 {
                w[k] += g[k];
            }
        }
        self.last = Some(t);
        for slot in &mut self.gusts {
            if let Some(g) = slot {
                let f = g.fraction(t);
                for (wk, ak) in w.iter_mut().zip(g.amplitude_ned_mps) {
                    *wk += f * ak;
                }
                if t >= g.end() {
                    *slot = None;
                }
            }
        }
        w
    }
}

// The state a vehicle carries to another process (see crate::persist).
crate::persist::persist_fields!(Gust {
    start,
    rise,
    hold,
    fall,
    amplitude_ned_mps
});

impl crate::persist::Persist for Wind {
    fn save(&self, w: &mut Vec<u8>) {
        self.state.save(w);
        self.rng.save(w);
        if let Some(d) = &self.dryden {
            d.save(w);
        }
        self.gusts.save(w);
        self.last.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        self.state.load(r)?;
        self.rng.load(r)?;
        // Whether there is a Dryden filter is the scenario's (both sides
        // built the same model).
        if let Some(d) = &mut self.dryden {
            d.load(r)?;
        }
        self.gusts.load(r)?;
        self.last.load(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::rng::RngStreams;

    #[test]
    fn ornstein_uhlenbeck_has_the_stationary_variance_and_autocorrelation() {
        let (sigma, tau, dt) = (1.5, 2.0, 0.01);
        let model = WindModel::OrnsteinUhlenbeck {
            mean_ned_mps: [3.0, -1.0, 0.0],
            sigma_mps: [sigma; 3],
            tau_s: [tau; 3],
        };
        let mut w = Wind::new(model, RngStreams::new(11).stream("wind"));
        let n = 200_000usize;
        let mut xs = Vec::with_capacity(n);
        for k in 0..n {
            xs.push(w.sample(Micros(k as u64 * 10_000), 10.0, [0.0; 3])[0]);
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let lag = 50; // 0.5 s
        let cov = (0..n - lag)
            .map(|k| (xs[k] - mean) * (xs[k + lag] - mean))
            .sum::<f64>()
            / (n - lag) as f64;
        // 2000 s is 1000 time constants: sampling errors of a few percent.
        assert!((mean - 3.0).abs() < 0.1, "mean {mean}");
        assert!((var / (sigma * sigma) - 1.0).abs() < 0.1, "variance {var}");
        let rho = cov / var;
        let expect = (-(lag as f64) * dt / tau).exp();
        assert!(
            (rho - expect).abs() < 0.04,
            "autocorrelation {rho} vs {expect}"
        );
    }

    #[test]
    fn the_exact_update_does_not_depend_on_the_cadence() {
        // The variance reached after 1 s from the mean is the same whether
        // sampled every 10 ms or once: sigma^2 (1 - e^(-2 t / tau)).
        // 4000 runs: the variance's sampling error is ~2.2 %.
        let model = WindModel::OrnsteinUhlenbeck {
            mean_ned_mps: [0.0; 3],
            sigma_mps: [1.0; 3],
            tau_s: [0.5; 3],
        };
        let expect = 1.0 - (-2.0f64 * 1.0 / 0.5).exp();
        for step_us in [10_000u64, 1_000_000] {
            let mut sq = 0.0;
            let runs = 4_000;
            for r in 0..runs {
                let mut w = Wind::new(model, RngStreams::new(r).stream("wind"));
                let mut t = 0;
                w.sample(Micros(0), 10.0, [0.0; 3]);
                let mut last = [0.0; 3];
                while t < 1_000_000 {
                    t += step_us;
                    last = w.sample(Micros(t), 10.0, [0.0; 3]);
                }
                sq += last[1] * last[1];
            }
            let var = sq / runs as f64;
            assert!(
                (var / expect - 1.0).abs() < 0.09,
                "step {step_us}: {var} vs {expect}"
            );
        }
    }

    #[test]
    fn dryden_wind_varies_around_its_mean() {
        let model = WindModel::Dryden {
            mean_ned_mps: [4.0, 0.0, 0.0],
            w20_mps: 8.0,
        };
        let mut w = Wind::new(model, RngStreams::new(2).stream("wind"));
        // The vertical scale length at 30 m is 30 m, swept at 4 m/s: a
        // correlation time of about 7.5 s. 2e5 samples 0.1 s apart hold about
        // 2700 of them, so the variance is known to about 2.7 % (one sigma)
        // and the 10 % bound is near 4 sigma.
        let n = 200_000;
        let xs: Vec<[f64; 3]> = (0..n)
            .map(|k| w.sample(Micros(k * 100_000), 30.0, [0.0; 3]))
            .collect();
        let mean = xs.iter().map(|x| x[0]).sum::<f64>() / n as f64;
        let var_w = xs.iter().map(|x| x[2] * x[2]).sum::<f64>() / n as f64;
        assert!((mean - 4.0).abs() < 0.3, "{mean}");
        let sw = 0.1 * 8.0;
        assert!(
            (var_w / (sw * sw) - 1.0).abs() < 0.1,
            "vertical variance {var_w}"
        );
    }

    #[test]
    fn constant_wind_and_gusts_are_exact() {
        let mut w = Wind::new(
            WindModel::Constant {
                ned_mps: [1.0, 2.0, 0.0],
            },
            RngStreams::new(1).stream("wind"),
        );
        assert!(w.add_gust(Gust {
            start: Micros(1_000_000),
            rise: Micros(500_000),
            hold: Micros(1_000_000),
            fall: Micros(0),
            amplitude_ned_mps: [4.0, 0.0, -2.0],
        }));
        let at = |w: &mut Wind, us: u64| w.sample(Micros(us), 10.0, [0.0; 3]);
        assert_eq!(at(&mut w, 0), [1.0, 2.0, 0.0]);
        assert_eq!(at(&mut w, 1_250_000), [3.0, 2.0, -1.0]);
        assert_eq!(at(&mut w, 2_000_000), [5.0, 2.0, -2.0]);
        assert_eq!(at(&mut w, 2_499_999), [5.0, 2.0, -2.0]);
        assert_eq!(
            at(&mut w, 2_500_000),
            [1.0, 2.0, 0.0],
            "a step down: fall 0"
        );
        // The slot is free again.
        for _ in 0..MAX_GUSTS {
            assert!(w.add_gust(Gust {
                start: Micros(9_000_000),
                rise: Micros(0),
                hold: Micros(1),
                fall: Micros(0),
                amplitude_ned_mps: [0.0; 3]
            }));
        }
        assert!(!w.add_gust(Gust {
            start: Micros(0),
            rise: Micros(0),
            hold: Micros(0),
            fall: Micros(0),
            amplitude_ned_mps: [0.0; 3]
        }));
    }
}
