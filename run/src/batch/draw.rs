//! One run's draw: its seed and the dispersions drawn for it, from a
//! stream derived from the master seed and the run's number only.

use lockstep_harness::Micros;
use lockstep_harness::environment::wind::WindModel;
use lockstep_harness::inputs::scenario::{
    Action, Dispersions, Event, Override, Scenario, SpecAdjust, Trigger,
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

    /// The scenario's own spec scales times the drawn ones.
    fn adjusted(&self, s: &Scenario) -> SpecAdjust {
        SpecAdjust {
            mass: s.adjust.mass * self.adjust.mass,
            inertia: s.adjust.inertia * self.adjust.inertia,
            battery_capacity: s.adjust.battery_capacity * self.adjust.battery_capacity,
        }
    }

    /// The `--set` overrides that make `base` (the batch's scenario, loaded
    /// with the batch's own overrides) this run's: `lockstep fly SCENARIO`
    /// with the batch's overrides and these flies the run alone, bit for
    /// bit (`lockstep montecarlo --rerun`). The values are those
    /// [`Draw::apply`] sets, written so that TOML reads them back exactly.
    pub fn overrides(&self, base: &Scenario, rotors: usize) -> Vec<Override> {
        let mut s = base.clone();
        self.apply(&mut s, rotors);
        let v = |x: f64| format!("{x:?}");
        let vec = |a: [f64; 3]| format!("[{}, {}, {}]", v(a[0]), v(a[1]), v(a[2]));
        let mut sets = vec![
            format!("simulation.seed={}", s.seed),
            format!("vehicle.mass_scale={}", v(s.adjust.mass)),
            format!("vehicle.inertia_scale={}", v(s.adjust.inertia)),
            format!(
                "vehicle.battery_capacity_scale={}",
                v(s.adjust.battery_capacity)
            ),
            format!("sensors.noise_scale={}", v(s.noise_scale)),
        ];
        match &s.wind {
            // A scenario without [wind] has a constant calm: the section
            // is made whole.
            WindModel::Constant { ned_mps } => {
                sets.push("wind.model=constant".into());
                sets.push(format!("wind.mean_ned_mps={}", vec(*ned_mps)));
            }
            WindModel::OrnsteinUhlenbeck { mean_ned_mps, .. }
            | WindModel::Dryden { mean_ned_mps, .. } => {
                sets.push(format!("wind.mean_ned_mps={}", vec(*mean_ned_mps)));
            }
        }
        if let Some((motor, at)) = self.failed_motor(rotors) {
            // One past the scenario's own events: appended, as apply does.
            sets.push(format!(
                "events.{}={{ at_us = {}, action = \"motor_fail\", motor = {motor} }}",
                base.events.len(),
                at.0
            ));
        }
        sets.iter()
            .map(|t| Override::parse("--set", t).expect("a draw's override parses"))
            .collect()
    }

    /// Applies the draw to `s`: its seed, spec scales, mean wind, noise and
    /// the motor failure (an event at its time) for `rotors` rotors.
    pub fn apply(&self, s: &mut Scenario, rotors: usize) {
        s.seed = self.seed;
        s.adjust = self.adjusted(s);
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
        s.noise_scale *= self.noise_scale;
        if let Some((motor, at)) = self.failed_motor(rotors) {
            s.events.push(Event {
                trigger: Trigger::At(at),
                action: Action::MotorFail { motor },
            });
        }
    }
}
