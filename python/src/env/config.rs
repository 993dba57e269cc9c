//! What an environment is: its task, how the agent acts and what it
//! observes, its control period and episode, the scenario it flies; read
//! from Python's keyword arguments with errors that name them.

use std::path::PathBuf;

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::Scenario;
use lockstep_run::choice::Spelling;
use lockstep_run::flight::{FlightOutputs, FlightRequest, ScenarioSource};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::args::{RunArgs, isolation};
use crate::errors::configuration;

/// What the agent flies to.
#[derive(Debug, Clone, PartialEq)]
pub enum Task {
    /// Reach and hold a point (NED, m).
    Hover { target: [f64; 3] },
    /// Fly through the points in order, each reached within `radius_m`.
    Waypoints {
        points: Vec<[f64; 3]>,
        radius_m: f64,
    },
}

/// How the agent acts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionMode {
    /// A position setpoint (NED, m) for the autopilot.
    Position,
    /// A velocity setpoint (NED, m/s) for the autopilot.
    Velocity,
    /// Collective thrust (fraction of the total) and body rates (FRD,
    /// rad/s) for the autopilot's rate loop.
    Rates,
    /// Motor commands in [0, 1], the autopilot bypassed.
    Motors,
}

impl ActionMode {
    pub fn parse(s: &str) -> PyResult<ActionMode> {
        Ok(match s {
            "position" => ActionMode::Position,
            "velocity" => ActionMode::Velocity,
            "rates" => ActionMode::Rates,
            "motors" => ActionMode::Motors,
            other => {
                return Err(PyValueError::new_err(format!(
                    "action={other:?}: \"position\" or \"velocity\" (setpoints for the autopilot), \
                     \"rates\" (thrust and body rates for its rate loop) or \"motors\" (the \
                     autopilot bypassed)"
                )));
            }
        })
    }

    /// The agent's actions go through the autopilot (which is armed first).
    pub fn through_autopilot(self) -> bool {
        self != ActionMode::Motors
    }
}

/// What the agent observes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObsSource {
    /// The estimate the autopilot receives (noisy, delayed).
    Estimate,
    /// The true state.
    Truth,
}

/// Everything an environment needs; shared by every lane of a vector.
#[derive(Debug, Clone)]
pub struct EnvConfig {
    /// The scenario with its overrides, loaded once; each episode flies it
    /// under its own seed (and its own draw of the scenario's
    /// `[montecarlo]` dispersions, when it has them).
    pub scenario: Scenario,
    pub autopilot: PathBuf,
    pub isolation: Isolation,
    pub task: Task,
    pub action: ActionMode,
    pub observe: ObsSource,
    pub control_us: u64,
    pub episode_us: u64,
    /// Terminated beyond this distance from the goal, m.
    pub bounds_m: f64,
    pub crash_penalty: f64,
    /// The action space's bounds, per component.
    pub low: Vec<f32>,
    pub high: Vec<f32>,
    pub rotors: usize,
}

impl EnvConfig {
    /// The observation's length: the position relative to the goal (3),
    /// velocity (3), attitude quaternion (4), body rates (3); Waypoints adds
    /// the position relative to the waypoint after (3) and the fraction of
    /// the route flown (1).
    pub fn obs_len(&self) -> usize {
        match self.task {
            Task::Hover { .. } => 13,
            Task::Waypoints { .. } => 17,
        }
    }

    /// Checks an action: its length, finite, within the space.
    pub fn check_action(&self, a: &[f32]) -> Result<(), String> {
        if a.len() != self.low.len() {
            return Err(format!(
                "the action has {} values; the action space has {}",
                a.len(),
                self.low.len()
            ));
        }
        for (i, v) in a.iter().enumerate() {
            if !v.is_finite() {
                return Err(format!("action[{i}] is {v}: not a finite number"));
            }
            if *v < self.low[i] || *v > self.high[i] {
                return Err(format!(
                    "action[{i}] is {v}, outside the action space's {}..{}",
                    self.low[i], self.high[i]
                ));
            }
        }
        Ok(())
    }
}

/// A 3-vector argument.
fn vec3(name: &str, v: &Bound<'_, PyAny>) -> PyResult<[f64; 3]> {
    let x: Vec<f64> = v
        .extract()
        .map_err(|_| crate::args::type_error(name, "3 numbers", v))?;
    match x.as_slice() {
        [a, b, c] if x.iter().all(|v| v.is_finite()) => Ok([*a, *b, *c]),
        _ => Err(PyValueError::new_err(format!(
            "{name}: 3 finite numbers (NED, m), got {x:?}"
        ))),
    }
}

/// The keyword arguments an environment takes.
#[derive(Debug, Default)]
pub struct EnvArgs<'py> {
    pub run: RunArgs<'py>,
    pub task: String,
    pub action: String,
    pub observation: String,
    pub control_hz: f64,
    pub episode_s: f64,
    pub target: Option<Bound<'py, PyAny>>,
    pub waypoints: Option<Bound<'py, PyAny>>,
    pub radius_m: f64,
    pub bounds_m: f64,
    pub max_speed_mps: f64,
    pub max_rate_radps: f64,
    pub isolation: Option<Bound<'py, PyAny>>,
}

impl EnvArgs<'_> {
    pub fn config(&self, py: Python<'_>) -> PyResult<EnvConfig> {
        let (scenario, autopilot, mut overrides) = self.run.resolve()?;
        let action = ActionMode::parse(&self.action)?;
        let observe = match self.observation.as_str() {
            "estimate" => ObsSource::Estimate,
            "truth" => ObsSource::Truth,
            other => {
                return Err(PyValueError::new_err(format!(
                    "observation={other:?}: \"estimate\" (noisy, delayed: what the autopilot \
                     sees) or \"truth\""
                )));
            }
        };
        if !(self.control_hz.is_finite() && self.control_hz > 0.0) {
            return Err(PyValueError::new_err(format!(
                "control_hz={}: a positive rate",
                self.control_hz
            )));
        }
        let period = 1e6 / self.control_hz;
        let control_us = period.round() as u64;
        if (period - control_us as f64).abs() > 1e-6 || control_us == 0 {
            return Err(configuration(format!(
                "control_hz={}: its period, {period} us, is not a whole number of microseconds",
                self.control_hz
            )));
        }
        if !(self.episode_s.is_finite() && self.episode_s > 0.0 && self.episode_s <= 86_400.0) {
            return Err(PyValueError::new_err(format!(
                "episode_s={}: a positive number of seconds (at most a day)",
                self.episode_s
            )));
        }
        let episode_us = (self.episode_s * 1e6).round() as u64;
        for (name, v) in [
            ("radius_m", self.radius_m),
            ("bounds_m", self.bounds_m),
            ("max_speed_mps", self.max_speed_mps),
            ("max_rate_radps", self.max_rate_radps),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(PyValueError::new_err(format!(
                    "{name}={v}: a positive number"
                )));
            }
        }
        let task = match self.task.as_str() {
            "hover" => Task::Hover {
                target: match crate::args::none_is_none(&self.target) {
                    Some(t) => vec3("target", t)?,
                    None => [0.0, 0.0, -10.0],
                },
            },
            "waypoints" => {
                let points = match crate::args::none_is_none(&self.waypoints) {
                    None => vec![
                        [0.0, 0.0, -10.0],
                        [20.0, 0.0, -10.0],
                        [20.0, 20.0, -10.0],
                        [0.0, 20.0, -10.0],
                    ],
                    Some(w) => {
                        let mut out = Vec::new();
                        for (i, p) in w.try_iter()?.enumerate() {
                            out.push(vec3(&format!("waypoints[{i}]"), &p?)?);
                        }
                        out
                    }
                };
                if points.is_empty() {
                    return Err(PyValueError::new_err("waypoints: at least one point"));
                }
                Task::Waypoints {
                    points,
                    radius_m: self.radius_m,
                }
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "task={other:?}: \"hover\" or \"waypoints\""
                )));
            }
        };
        // The run lasts the episode and the arming before it, and a margin.
        overrides.push(lockstep_harness::inputs::scenario::Override::new(
            "simulation.duration_s",
            toml::Value::Float(self.episode_s + 6.0),
            "the environment's episode_s".into(),
        ));
        let iso = isolation(py, self.isolation.as_ref(), None)?;
        let loaded =
            Scenario::load_with(&scenario, &overrides).map_err(|e| configuration(e.to_string()))?;
        // Prepared once here, as each episode is, so a scenario, spec or
        // library the run layer refuses is refused at construction (and
        // the rotor count is known).
        let request = FlightRequest {
            scenario: ScenarioSource::Loaded(Box::new(loaded.clone())),
            autopilot: autopilot.clone(),
            overrides: Vec::new(),
            outputs: FlightOutputs::default(),
            isolation: iso.clone(),
            spelling: Spelling::Python,
        };
        let rotors = {
            let p = py
                .detach(|| lockstep_run::flight::prepare(request))
                .map_err(crate::errors::run_error)?;
            p.header().rotors
        };
        let (low, high) = match action {
            ActionMode::Position => (
                vec![-self.bounds_m as f32; 3],
                vec![self.bounds_m as f32; 3],
            ),
            ActionMode::Velocity => (
                vec![-self.max_speed_mps as f32; 3],
                vec![self.max_speed_mps as f32; 3],
            ),
            ActionMode::Rates => {
                let r = self.max_rate_radps as f32;
                (vec![0.0, -r, -r, -r], vec![1.0, r, r, r])
            }
            ActionMode::Motors => (vec![0.0; rotors], vec![1.0; rotors]),
        };
        Ok(EnvConfig {
            scenario: loaded,
            autopilot,
            isolation: iso,
            task,
            action,
            observe,
            control_us,
            episode_us,
            bounds_m: self.bounds_m,
            crash_penalty: 10.0,
            low,
            high,
            rotors,
        })
    }
}
