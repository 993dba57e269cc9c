//! A participant in another process: its calls as postcard messages (f64
//! values travel as their bits, NaN included, so a remote participant's
//! outputs equal an in-process one's), the end that answers them
//! ([`answer`], [`serve`]) and the end that stands for it in the system
//! ([`RemoteParticipant`]) over any [`Transport`] (`lockstep_remote`'s). Inputs are held here and
//! sent with each step; the step's answer carries every output.

use lockstep_harness::Micros;
pub use lockstep_remote::Transport;
use lockstep_remote::{Postcard, Service};

use crate::participant::{Participant, ParticipantError, Variable};
use crate::report::ParticipantReport;

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WireVariable {
    pub name: String,
    pub start: Vec<f64>,
    pub description: String,
}

impl From<&Variable> for WireVariable {
    fn from(v: &Variable) -> Self {
        WireVariable {
            name: v.name.clone(),
            start: v.start.clone(),
            description: v.description.clone(),
        }
    }
}

impl From<WireVariable> for Variable {
    fn from(v: WireVariable) -> Self {
        Variable {
            name: v.name,
            len: v.start.len(),
            start: v.start,
            description: v.description,
        }
    }
}

/// A call of a participant.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Request {
    Describe,
    CheckPeriod {
        period_us: u64,
    },
    /// Holds `inputs` (every input's values, in index order) and steps.
    Step {
        t_us: u64,
        dt_us: u64,
        inputs: Vec<Vec<f64>>,
    },
    Finish,
}

/// A participant's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Reply {
    Described {
        outputs: Vec<WireVariable>,
        inputs: Vec<WireVariable>,
        notices: Vec<String>,
    },
    Done,
    /// Every output's values, in index order.
    Stepped {
        outputs: Vec<Vec<f64>>,
    },
    /// Its finish value as JSON text.
    Finished {
        json: String,
    },
}

/// A participant as the serving end of its remote calls.
struct Served<'a>(&'a mut dyn Participant);

impl Service for Served<'_> {
    type Codec = Postcard;
    type Request = Request;
    type Reply = Reply;

    fn handle(&mut self, r: Request) -> Result<Reply, String> {
        let p = &mut *self.0;
        match r {
            Request::Describe => Ok(Reply::Described {
                outputs: p.outputs().iter().map(WireVariable::from).collect(),
                inputs: p.inputs().iter().map(WireVariable::from).collect(),
                notices: p.notices(),
            }),
            Request::CheckPeriod { period_us } => {
                p.check_period(Micros(period_us)).map(|()| Reply::Done)
            }
            Request::Step {
                t_us,
                dt_us,
                inputs,
            } => (|| {
                // The request came over the network: its shape is checked
                // before a participant (which may index by it) sees it.
                let held = p.inputs();
                if inputs.len() != held.len() {
                    return Err(format!(
                        "a step with {} inputs; the participant has {}",
                        inputs.len(),
                        held.len()
                    ));
                }
                for (v, h) in inputs.iter().zip(&held) {
                    if v.len() != h.len {
                        return Err(format!(
                            "a step with {} values for input `{}`, which holds {}",
                            v.len(),
                            h.name,
                            h.len
                        ));
                    }
                }
                for (i, v) in inputs.iter().enumerate() {
                    p.set_input(i, v).map_err(|e| e.0)?;
                }
                p.step(Micros(t_us), Micros(dt_us)).map_err(|e| e.0)?;
                let mut outputs = Vec::new();
                for (i, v) in p.outputs().iter().enumerate() {
                    let mut buf = vec![0.0; v.len];
                    p.output(i, &mut buf).map_err(|e| e.0)?;
                    outputs.push(buf);
                }
                Ok(Reply::Stepped { outputs })
            })(),
            Request::Finish => p.finish().map_err(|e| e.0).and_then(|r| {
                serde_json::to_string(&r)
                    .map(|json| Reply::Finished { json })
                    .map_err(|e| e.to_string())
            }),
        }
    }

    fn is_last(r: &Request) -> bool {
        matches!(r, Request::Finish)
    }
}

/// Answers one `request` with `p`: the reply or the participant's error,
/// and whether it was the last call.
pub fn answer(p: &mut dyn Participant, request: &[u8]) -> (Result<Vec<u8>, String>, bool) {
    lockstep_remote::answer(&mut Served(p), request)
}

/// Serves `p` as `name` over zenoh until the run finishes, its caller
/// leaves, or none comes within `wait`.
#[cfg(feature = "zenoh")]
pub fn serve(
    p: &mut dyn Participant,
    o: &lockstep_remote::net::NetOptions,
    name: &str,
    wait: std::time::Duration,
) -> Result<(), String> {
    lockstep_remote::serve(o, name, wait, &mut Served(p))
}

/// A participant in another process, as the system sees it.
#[derive(Debug)]
pub struct RemoteParticipant<T: Transport> {
    transport: T,
    outputs: Vec<Variable>,
    inputs: Vec<Variable>,
    notices: Vec<String>,
    held: Vec<Vec<f64>>,
    values: Vec<Vec<f64>>,
    /// The period the far end agreed to step.
    period: Micros,
}

fn exchange<T: Transport>(t: &mut T, r: &Request) -> Result<Reply, String> {
    lockstep_remote::call::<Postcard, _, _>(t, r)
}

fn unexpected(r: &Reply) -> String {
    format!("an answer out of turn: {r:?}")
}

impl<T: Transport> RemoteParticipant<T> {
    /// Asks the participant for its variables, and whether it can step
    /// `period`.
    pub fn connect(mut transport: T, period: Micros) -> Result<RemoteParticipant<T>, String> {
        match exchange(
            &mut transport,
            &Request::CheckPeriod {
                period_us: period.0,
            },
        )? {
            Reply::Done => {}
            other => return Err(unexpected(&other)),
        }
        match exchange(&mut transport, &Request::Describe)? {
            Reply::Described {
                outputs,
                inputs,
                notices,
            } => {
                if let Some(v) = outputs.iter().chain(&inputs).find(|v| v.start.is_empty()) {
                    return Err(format!(
                        "it described variable `{}` with no values (a variable holds at least one)",
                        v.name
                    ));
                }
                let outputs: Vec<Variable> = outputs.into_iter().map(Variable::from).collect();
                let inputs: Vec<Variable> = inputs.into_iter().map(Variable::from).collect();
                Ok(RemoteParticipant {
                    transport,
                    held: inputs.iter().map(|v| v.start.clone()).collect(),
                    values: outputs.iter().map(|v| v.start.clone()).collect(),
                    outputs,
                    inputs,
                    notices,
                    period,
                })
            }
            other => Err(unexpected(&other)),
        }
    }
}

impl<T: Transport> Participant for RemoteParticipant<T> {
    fn outputs(&self) -> Vec<Variable> {
        self.outputs.clone()
    }

    fn inputs(&self) -> Vec<Variable> {
        self.inputs.clone()
    }

    fn notices(&self) -> Vec<String> {
        self.notices.clone()
    }

    fn check_period(&self, period: Micros) -> Result<(), String> {
        if period != self.period {
            return Err(format!(
                "it agreed to step {} when it connected, not {period}",
                self.period
            ));
        }
        Ok(())
    }

    fn set_input(&mut self, index: usize, value: &[f64]) -> Result<(), ParticipantError> {
        let h = self
            .held
            .get_mut(index)
            .ok_or_else(|| ParticipantError(format!("no input {index}")))?;
        h.clear();
        h.extend_from_slice(value);
        Ok(())
    }

    fn step(&mut self, t: Micros, dt: Micros) -> Result<(), ParticipantError> {
        let r = Request::Step {
            t_us: t.0,
            dt_us: dt.0,
            inputs: self.held.clone(),
        };
        match exchange(&mut self.transport, &r).map_err(ParticipantError)? {
            Reply::Stepped { outputs } => {
                if outputs.len() != self.values.len()
                    || outputs
                        .iter()
                        .zip(&self.values)
                        .any(|(a, b)| a.len() != b.len())
                {
                    return Err(ParticipantError(
                        "its outputs do not match what it described".into(),
                    ));
                }
                self.values = outputs;
                Ok(())
            }
            other => Err(ParticipantError(unexpected(&other))),
        }
    }

    fn output(&self, index: usize, out: &mut [f64]) -> Result<(), ParticipantError> {
        let v = self
            .values
            .get(index)
            .ok_or_else(|| ParticipantError(format!("no output {index}")))?;
        out.copy_from_slice(v);
        Ok(())
    }

    fn finish(&mut self) -> Result<ParticipantReport, ParticipantError> {
        match exchange(&mut self.transport, &Request::Finish).map_err(ParticipantError)? {
            Reply::Finished { json } => serde_json::from_str(&json).map_err(ParticipantError::from),
            other => Err(ParticipantError(unexpected(&other))),
        }
    }
}
