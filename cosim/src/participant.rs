//! The one interface every participant implements: held inputs, one step
//! over an integer-microsecond interval, named outputs.

use lockstep_harness::Micros;

use crate::report::ParticipantReport;

/// A named value a participant reads or writes: a scalar (`len` 1) or a
/// vector of `len` f64s.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub len: usize,
    /// The value held before anything writes it (`len` entries).
    pub start: Vec<f64>,
    pub description: String,
}

impl Variable {
    pub fn scalar(name: &str, start: f64, description: &str) -> Variable {
        Variable {
            name: name.to_string(),
            len: 1,
            start: vec![start],
            description: description.to_string(),
        }
    }

    pub fn vector(name: &str, start: &[f64], description: &str) -> Variable {
        Variable {
            name: name.to_string(),
            len: start.len(),
            start: start.to_vec(),
            description: description.to_string(),
        }
    }
}

/// What a participant reports when it fails: the master adds its name,
/// what it was doing and the time.
#[derive(Debug, Clone, PartialEq)]
pub struct ParticipantError(pub String);

impl<T: std::fmt::Display> From<T> for ParticipantError {
    fn from(e: T) -> Self {
        ParticipantError(e.to_string())
    }
}

/// A simulator taking part in a co-simulation. The master calls, for each
/// of its steps: `set_input` for every connected input (the value holds for
/// the whole step), `step(t, dt)`, then `output` for every output. Calls
/// never overlap on one participant; different participants may step on
/// different threads at the same time.
pub trait Participant: Send {
    /// Its outputs, in index order (fixed for its life).
    fn outputs(&self) -> Vec<Variable>;
    /// Its inputs, in index order (fixed for its life).
    fn inputs(&self) -> Vec<Variable>;
    /// What the user should know about this participant before it runs
    /// (an FMU's tolerated defects), one line each.
    fn notices(&self) -> Vec<String> {
        Vec::new()
    }
    /// Refuses a step period it cannot keep (checked once, when the system
    /// is built): a vehicle steps whole autopilot periods.
    fn check_period(&self, _period: Micros) -> Result<(), String> {
        Ok(())
    }
    /// Holds `value` (the input's `len` values) on input `index` from the
    /// next step on.
    fn set_input(&mut self, index: usize, value: &[f64]) -> Result<(), ParticipantError>;
    /// Advances from `t` to `t + dt`, µs.
    fn step(&mut self, t: Micros, dt: Micros) -> Result<(), ParticipantError>;
    /// Writes output `index` (its `len` values) into `out`.
    fn output(&self, index: usize, out: &mut [f64]) -> Result<(), ParticipantError>;
    /// The end of the run: flush what it writes, say how it went.
    fn finish(&mut self) -> Result<ParticipantReport, ParticipantError> {
        Ok(ParticipantReport::None)
    }
}

type StepFn = dyn FnMut(Micros, Micros, &[f64], &mut [f64]) -> Result<(), String> + Send;

/// A participant made of a Rust closure over flat input and output
/// buffers: `f(t, dt, inputs, outputs)` advances from `t` to `t + dt`
/// reading the held inputs and writing the outputs (the variables' values
/// one after another, in declaration order).
pub struct FnParticipant {
    inputs: Vec<Variable>,
    outputs: Vec<Variable>,
    in_off: Vec<usize>,
    out_off: Vec<usize>,
    in_vals: Vec<f64>,
    out_vals: Vec<f64>,
    f: Box<StepFn>,
}

impl std::fmt::Debug for FnParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnParticipant")
            .field("inputs", &self.inputs)
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

/// Where each variable starts in a flat buffer (and one past the last),
/// and the buffer holding their start values.
pub(crate) fn offsets(vars: &[Variable]) -> (Vec<usize>, Vec<f64>) {
    let mut off = Vec::with_capacity(vars.len() + 1);
    let mut vals = Vec::new();
    for v in vars {
        off.push(vals.len());
        vals.extend_from_slice(&v.start);
    }
    off.push(vals.len());
    (off, vals)
}

impl FnParticipant {
    /// The outputs start at their variables' `start` values.
    pub fn new(
        inputs: Vec<Variable>,
        outputs: Vec<Variable>,
        f: impl FnMut(Micros, Micros, &[f64], &mut [f64]) -> Result<(), String> + Send + 'static,
    ) -> FnParticipant {
        let (in_off, in_vals) = offsets(&inputs);
        let (out_off, out_vals) = offsets(&outputs);
        FnParticipant {
            inputs,
            outputs,
            in_off,
            out_off,
            in_vals,
            out_vals,
            f: Box::new(f),
        }
    }
}

impl Participant for FnParticipant {
    fn outputs(&self) -> Vec<Variable> {
        self.outputs.clone()
    }

    fn inputs(&self) -> Vec<Variable> {
        self.inputs.clone()
    }

    fn set_input(&mut self, index: usize, value: &[f64]) -> Result<(), ParticipantError> {
        let r = self.in_off[index]..self.in_off[index + 1];
        self.in_vals[r].copy_from_slice(value);
        Ok(())
    }

    fn step(&mut self, t: Micros, dt: Micros) -> Result<(), ParticipantError> {
        (self.f)(t, dt, &self.in_vals, &mut self.out_vals).map_err(ParticipantError)
    }

    fn output(&self, index: usize, out: &mut [f64]) -> Result<(), ParticipantError> {
        out.copy_from_slice(&self.out_vals[self.out_off[index]..self.out_off[index + 1]]);
        Ok(())
    }
}
