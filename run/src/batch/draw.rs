//! One run's draw: its seed and the dispersions drawn for it, from a
//! stream derived from the master seed and the run's number only.

use lockstep_harness::Micros;
use lockstep_harness::environment::wind::WindModel;
use lockstep_harness::inputs::scenario::{
    Action, Dispersions, Event, Scenario, SpecAdjust, Trigger,
};
use lockstep_harness::time::rng::RngStreams;

/// One run's seed and drawn values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draw {
    pub run: u64,
    /// The run's `simulation.seed` (every stream of its flight derives
    /// from it).
    pub seed: u64,
    pub adjust: SpecAdjust,
    pub wind_offset_ned_mps: [f64; 3],
    pub noise_scale: f64,
    /// The failing motor's share in [0, 1) (the motor is this times the
    /// rotor count) and the failure's time, when the run loses one.
    pub motor_failure: Option<(f64, Micros)>,
}

/// The name of run `run`'s stream.
pub fn stream_name(run: u64) -> String {
    format!("montecarlo.run.{run}")
}

impl Draw {
    /// Run `run` of the batch with master seed `master`. Every value is
    /// drawn, in a fixed order, whether or not it is dispersed, so that a
    /// dispersion added to a scenario does not change the others' values.
    pub fn new(d: &Dispersions, master: u64, run: u64, tick: Micros) -> Draw {
        let mut s = RngStreams::new(master).stream(&stream_name(run));
        // TOML integers are signed: seeds stay below 2^63.
        let seed = s.next_u64() >> 1;
        let scale = |sigma: f64, z: f64| 1.0 + sigma * z.clamp(-3.0, 3.0);
        let (zm, zi, zc) = (
            s.standard_normal(),
            s.standard_normal(),
            s.standard_normal(),
        );
        let adjust = SpecAdjust {
            mass: scale(d.mass_sigma, zm),
            inertia: scale(d.inertia_sigma, zi),
            battery_capacity: scale(d.battery_capacity_sigma, zc),
        };
        let mut wind = [0.0; 3];
        for (w, sigma) in wind.iter_mut().zip(d.wind_mean_sigma_mps) {
            *w = sigma * s.standard_normal();
        }
        let [lo, hi] = d.sensor_noise_scale;
        let noise_scale = lo + (hi - lo) * s.uniform();
        let (fails, which, when) = (s.uniform(), s.uniform(), s.uniform());
        let motor_failure = (fails < d.motor_failure_probability).then(|| {
            let [a, b] = d.motor_failure_window_us;
            let t = a + ((b - a) as f64 * when) as u64;
            // On the base tick, where every boundary lies.
            (which, Micros(t / tick.0.max(1) * tick.0.max(1)))
        });
        Draw {
            run,
            seed,
            adjust,
            wind_offset_ned_mps: wind,
            noise_scale,
            motor_failure,
        }
    }

    /// The failing motor, for an aircraft of `rotors` rotors.
    pub fn failed_motor(&self, rotors: usize) -> Option<(usize, Micros)> {
        self.motor_failure.map(|(u, t)| {
            (
                ((u * rotors as f64) as usize).min(rotors.saturating_sub(1)),
                t,
            )
        })
    }

    /// Applies the draw to `s`: its seed, spec scales, mean wind, noise and
    /// the motor failure (an event at its time) for `rotors` rotors.
    pub fn apply(&self, s: &mut Scenario, rotors: usize) {
        s.seed = self.seed;
        s.adjust = self.adjust;
        let add = |m: &mut [f64; 3]| {
            for (v, o) in m.iter_mut().zip(self.wind_offset_ned_mps) {
                *v += o;
            }
        };
        match &mut s.wind {
            WindModel::Constant { ned_mps } => add(ned_mps),
            WindModel::OrnsteinUhlenbeck { mean_ned_mps, .. } => add(mean_ned_mps),
            WindModel::Dryden { mean_ned_mps, .. } => add(mean_ned_mps),
        }
        let k = self.noise_scale;
        let sn = &mut s.sensors;
        sn.imu.accel_noise_mps2 *= k;
        sn.imu.gyro_noise_radps *= k;
        sn.mag_noise_gauss *= k;
        sn.baro_noise_pa *= k;
        sn.gps.horizontal_noise_m *= k;
        sn.gps.vertical_noise_m *= k;
        sn.gps.velocity_noise_mps *= k;
        sn.estimator.position_noise_m *= k;
        sn.estimator.velocity_noise_mps *= k;
        sn.estimator.attitude_noise_rad *= k;
        sn.estimator.rates_noise_radps *= k;
        if let Some((motor, at)) = self.failed_motor(rotors) {
            s.events.push(Event {
                trigger: Trigger::At(at),
                action: Action::MotorFail { motor },
            });
        }
    }
}
