//! Our plant, integrated between boundaries with its inputs held: the
//! physics of a whole vehicle, and on its own the plant-only mode (a host
//! with its own controller sets the actuator commands and steps it).

use lockstep_plant::integrate::{Integrator, IntegratorError, Method, Options, Stats};
use lockstep_plant::{HeldPlant, Multirotor, PlantInputs, PlantOutputs};

use crate::Micros;

/// A plant, its state, the inputs it holds, and the integrator that steps it.
#[derive(Debug, Clone)]
pub struct PlantRunner {
    pub(crate) plant: Multirotor,
    pub(crate) x: Vec<f64>,
    pub(crate) inputs: PlantInputs,
    integ: Integrator,
    now: Micros,
}

/// The longest interval one [`PlantRunner::advance_by`] covers: 10 s.
/// A host with its own controller steps at its control rate (ms); a longer
/// request is a mistake (seconds for microseconds), and integrating it
/// would hold the caller for minutes or hours. 10 s takes about 0.1 s.
pub const MAX_STEP_US: u64 = 10_000_000;

impl PlantRunner {
    /// The time `dt_us` from now, when one step may cover it
    /// ([`MAX_STEP_US`]); else why not, naming `dt_us`.
    pub fn step_end(&self, dt_us: u64) -> Result<Micros, String> {
        if dt_us > MAX_STEP_US {
            return Err(format!(
                "dt_us = {dt_us}: one step covers at most {MAX_STEP_US} us (10 s); step in parts"
            ));
        }
        self.now
            .0
            .checked_add(dt_us)
            .map(Micros)
            .ok_or_else(|| format!("{dt_us} us past now overflows the clock"))
    }

    /// `plant` at state `x` (at time 0), stepped by `method` with `options`;
    /// every input at its default (motors enabled at zero command, batteries
    /// connected, no wind).
    pub fn new(
        plant: Multirotor,
        x: Vec<f64>,
        method: Method,
        options: Options,
    ) -> Result<PlantRunner, IntegratorError> {
        if x.len() != plant.dim() {
            return Err(IntegratorError::DimensionMismatch {
                expected: plant.dim(),
                found: x.len(),
            });
        }
        let integ = Integrator::new(method, plant.dim(), options)?;
        Ok(PlantRunner {
            plant,
            x,
            inputs: PlantInputs::default(),
            integ,
            now: Micros::ZERO,
        })
    }

    /// Integrates from the current time to `to` with the inputs held; the
    /// work of this interval. `to` before now is refused; `to` equal to now
    /// does nothing. On error the state is the last accepted one and the
    /// time does not move.
    pub fn advance_to(&mut self, to: Micros) -> Result<Stats, IntegratorError> {
        if to <= self.now {
            return Ok(Stats::default());
        }
        let sys = HeldPlant {
            plant: &self.plant,
            inputs: &self.inputs,
        };
        let stats = self
            .integ
            .step_interval(&sys, self.now.0, (to - self.now).0, &mut self.x)?;
        self.now = to;
        Ok(stats)
    }

    pub fn now(&self) -> Micros {
        self.now
    }

    pub fn plant(&self) -> &Multirotor {
        &self.plant
    }

    pub fn state(&self) -> &[f64] {
        &self.x
    }

    /// Replaces the state (same length as the plant's).
    pub fn set_state(&mut self, x: &[f64]) -> Result<(), IntegratorError> {
        if x.len() != self.x.len() {
            return Err(IntegratorError::DimensionMismatch {
                expected: self.x.len(),
                found: x.len(),
            });
        }
        self.x.copy_from_slice(x);
        Ok(())
    }

    pub fn inputs(&self) -> &PlantInputs {
        &self.inputs
    }

    /// The inputs held from now to the next `advance_to`.
    pub fn inputs_mut(&mut self) -> &mut PlantInputs {
        &mut self.inputs
    }

    /// Algebraic outputs (bus, batteries, rotors, specific force) at the
    /// current state with the held inputs: one right-hand side.
    pub fn outputs(&self) -> PlantOutputs {
        self.plant.outputs(&self.x, &self.inputs)
    }

    /// The integrator's work since it was built.
    pub fn stats(&self) -> Stats {
        self.integ.total_stats()
    }

    pub fn method(&self) -> Method {
        self.integ.method()
    }

    pub fn options(&self) -> &Options {
        self.integ.options()
    }
}

// The plant's running state (see crate::persist): its state vector, the
// inputs it holds, the integrator's memory and its time.
crate::persist::persist_fields!(PlantInputs {
    motor_cmd,
    wind_ned_mps,
    motor_enabled,
    thrust_scale,
    battery_connected,
    external_force_ned_n
});

impl crate::persist::Persist for PlantRunner {
    fn save(&self, w: &mut Vec<u8>) {
        self.x.save(w);
        self.inputs.save(w);
        let (h, e, s) = self.integ.memory();
        h.save(w);
        e.save(w);
        [s.rhs_evals, s.accepted, s.rejected].save(w);
        self.now.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        self.x.load(r)?;
        self.inputs.load(r)?;
        let (mut h, mut e, mut s) = (None::<u64>, 0.0f64, [0u64; 3]);
        h.load(r)?;
        e.load(r)?;
        s.load(r)?;
        self.integ.set_memory((
            h,
            e,
            Stats {
                rhs_evals: s[0],
                accepted: s[1],
                rejected: s[2],
            },
        ));
        self.now.load(r)
    }
}
