//! `[montecarlo]`: what a Monte Carlo batch disperses ([`Dispersions`],
//! the file's section checked), and the scale factors a run applies to its
//! aircraft ([`SpecAdjust`]).

use lockstep_plant::AircraftSpec;

use super::checks::{KeyError, each_within, within};
use super::file::MonteCarloSection;
use crate::Micros;

/// What a batch disperses (the scenario's `[montecarlo]`). Zero sigmas,
/// a probability of 0 and a noise range of [1, 1] disperse nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dispersions {
    /// Relative standard deviations of the mass, inertia and battery
    /// capacity scale factors (normal, truncated at 3 sigma).
    pub mass_sigma: f64,
    pub inertia_sigma: f64,
    pub battery_capacity_sigma: f64,
    /// Standard deviation per NED axis of the offset to the mean wind, m/s.
    pub wind_mean_sigma_mps: [f64; 3],
    /// Range of the uniform factor on every sensor and estimator noise.
    pub sensor_noise_scale: [f64; 2],
    /// Probability that a run loses one motor, and the window of its time.
    pub motor_failure_probability: f64,
    pub motor_failure_window_us: [u64; 2],
}

/// Scale factors on the aircraft's parameters, applied to its spec when
/// a run's engine builds the plant.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SpecAdjust {
    pub mass: f64,
    pub inertia: f64,
    pub battery_capacity: f64,
}

impl Default for SpecAdjust {
    fn default() -> Self {
        SpecAdjust {
            mass: 1.0,
            inertia: 1.0,
            battery_capacity: 1.0,
        }
    }
}

impl SpecAdjust {
    /// Scales the spec's mass, inertia tensor and every pack's capacity.
    pub fn apply(&self, spec: &mut AircraftSpec) {
        spec.body.mass_kg *= self.mass;
        for row in &mut spec.body.inertia_kgm2 {
            for v in row {
                *v *= self.inertia;
            }
        }
        for b in &mut spec.batteries {
            b.capacity_ah *= self.battery_capacity;
        }
    }
}

/// The largest relative sigma of a scale factor (truncated at 3 sigma, so a
/// factor stays in [0.1, 1.9]).
const MAX_SIGMA: f64 = 0.3;

pub(super) fn dispersions(
    m: &MonteCarloSection,
    duration: Micros,
) -> Result<Dispersions, KeyError> {
    let sigma = |key: &str, v: Option<f64>| -> Result<f64, KeyError> {
        v.map_or(Ok(0.0), |v| {
            within(&format!("montecarlo.{key}"), v, 0.0, MAX_SIGMA)
        })
    };
    let noise = match m.sensor_noise_scale {
        None => [1.0, 1.0],
        Some(r) => {
            let r = each_within("montecarlo.sensor_noise_scale", r, 0.0, 100.0)?;
            if r[0] > r[1] {
                return Err((
                    "montecarlo.sensor_noise_scale".into(),
                    format!(
                        "must be [low, high] with low <= high, is [{}, {}]",
                        r[0], r[1]
                    ),
                ));
            }
            r
        }
    };
    let end_s = duration.0 as f64 / 1e6;
    let window = match m.motor_failure_window_s {
        None => [0.0, end_s],
        Some(w) => {
            let w = each_within("montecarlo.motor_failure_window_s", w, 0.0, end_s)?;
            if w[0] > w[1] {
                return Err((
                    "montecarlo.motor_failure_window_s".into(),
                    format!(
                        "must be [start, end] with start <= end, is [{}, {}]",
                        w[0], w[1]
                    ),
                ));
            }
            w
        }
    };
    if m.motor_failure_window_s.is_some() && m.motor_failure_probability.is_none() {
        return Err((
            "montecarlo.motor_failure_window_s".into(),
            "needs montecarlo.motor_failure_probability".into(),
        ));
    }
    Ok(Dispersions {
        mass_sigma: sigma("mass_sigma", m.mass_sigma)?,
        inertia_sigma: sigma("inertia_sigma", m.inertia_sigma)?,
        battery_capacity_sigma: sigma("battery_capacity_sigma", m.battery_capacity_sigma)?,
        wind_mean_sigma_mps: match m.wind_mean_sigma_mps {
            Some(w) => each_within("montecarlo.wind_mean_sigma_mps", w, 0.0, 20.0)?,
            None => [0.0; 3],
        },
        sensor_noise_scale: noise,
        motor_failure_probability: match m.motor_failure_probability {
            Some(p) => within("montecarlo.motor_failure_probability", p, 0.0, 1.0)?,
            None => 0.0,
        },
        motor_failure_window_us: [
            (window[0] * 1e6).round() as u64,
            (window[1] * 1e6).round() as u64,
        ],
    })
}
