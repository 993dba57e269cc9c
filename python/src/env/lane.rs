//! One environment's episode: the vehicle built for it (a stepped flight
//! of the task's scenario under the episode's seed), armed before the
//! agent's first step where its actions go through the autopilot, then
//! stepped one control period per action. A single environment has one
//! lane; the vector environment has N, stepped on threads, each exactly
//! as a single environment with the same seeds.

use lockstep_harness::inputs::scenario::{Action, SetpointKind};
use lockstep_harness::time::rng::RngStreams;
use lockstep_run::RunError;
use lockstep_run::batch::Draw;
use lockstep_run::choice::Spelling;
use lockstep_run::flight::{FlightOutputs, FlightRequest, ScenarioSource};
use lockstep_run::session::{Session, SessionError};

use super::config::{ActionMode, EnvConfig, ObsSource, Task};

/// What one step gave.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Outcome {
    pub reward: f64,
    pub terminated: bool,
    pub truncated: bool,
}

/// One environment.
#[derive(Debug)]
pub struct Lane {
    session: Option<Session>,
    /// The seed episodes are drawn from (set by a seeded reset).
    base_seed: u64,
    /// Episodes begun since the last seeded reset.
    episode: u64,
    /// The episode's seed.
    seed: u64,
    /// When the agent's first action applied, µs.
    t0: u64,
    /// The waypoint being flown to (Waypoints).
    waypoint: usize,
    /// Distance to the goal after the last step, m.
    distance_m: f64,
}

fn step_error(e: SessionError) -> RunError {
    match e {
        SessionError::Step(r) | SessionError::End(r) => r,
        other => RunError::run_failure(other.to_string()),
    }
}

/// Seeds a scenario can hold (TOML integers are signed).
fn toml_seed(s: u64) -> u64 {
    s & (i64::MAX as u64)
}

impl Lane {
    pub fn new(base_seed: u64) -> Lane {
        Lane {
            session: None,
            base_seed: toml_seed(base_seed),
            episode: 0,
            seed: 0,
            t0: 0,
            waypoint: 0,
            distance_m: 0.0,
        }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn waypoint(&self) -> usize {
        self.waypoint
    }

    pub fn distance_m(&self) -> f64 {
        self.distance_m
    }

    /// The time since the episode's start, µs.
    pub fn elapsed_us(&self) -> u64 {
        self.session
            .as_ref()
            .map_or(0, |s| s.engine().now().0.saturating_sub(self.t0))
    }

    /// Starts an episode: with `seed`, the first of a new sequence (the
    /// episode's seed is `seed` itself); without, the next of the current
    /// sequence (episode k's seed derived from the sequence's by name).
    pub fn reset(&mut self, cfg: &EnvConfig, seed: Option<u64>) -> Result<(), RunError> {
        if let Some(s) = seed {
            self.base_seed = toml_seed(s);
            self.episode = 0;
        }
        self.seed = match self.episode {
            0 => self.base_seed,
            k => toml_seed(
                RngStreams::new(self.base_seed).member_seed("env.episode", &k.to_string()),
            ),
        };
        self.episode += 1;
        if let Some(mut old) = self.session.take() {
            let _ = old.finish();
        }
        let mut session = episode(cfg, self.seed)?;
        if cfg.action.through_autopilot() {
            arm(&mut session)?;
        }
        self.t0 = session.engine().now().0;
        self.waypoint = 0;
        self.session = Some(session);
        self.distance_m = self.goal_distance(cfg);
        Ok(())
    }

    fn session(&mut self) -> &mut Session {
        self.session
            .as_mut()
            .expect("an environment is reset before it is stepped")
    }

    /// The goal now: the hover point, or the waypoint being flown to.
    fn goal(&self, cfg: &EnvConfig) -> [f64; 3] {
        match &cfg.task {
            Task::Hover { target } => *target,
            Task::Waypoints { points, .. } => points[self.waypoint.min(points.len() - 1)],
        }
    }

    fn goal_distance(&self, cfg: &EnvConfig) -> f64 {
        let Some(s) = &self.session else { return 0.0 };
        let x = s.engine().state();
        let g = self.goal(cfg);
        ((x[0] - g[0]).powi(2) + (x[1] - g[1]).powi(2) + (x[2] - g[2]).powi(2)).sqrt()
    }

    /// Applies `action` (already checked against the space) for one control
    /// period.
    pub fn step(&mut self, cfg: &EnvConfig, action: &[f32]) -> Result<Outcome, RunError> {
        let act = match cfg.action {
            ActionMode::Motors => None,
            ActionMode::Position => Some(setpoint(SetpointKind::Position, action, 0.0)),
            ActionMode::Velocity => Some(setpoint(SetpointKind::Velocity, action, 0.0)),
            ActionMode::Rates => Some(setpoint(
                SetpointKind::Rates,
                &action[1..4],
                f64::from(action[0]),
            )),
        };
        let control_us = cfg.control_us;
        let s = self.session();
        match act {
            Some(a) => s.engine_mut().apply_now(a),
            None => s
                .engine_mut()
                .set_motor_override(Some(action))
                .map_err(RunError::configuration)?,
        }
        let until = s.engine().now().0 + control_us;
        let end = s.engine().end().0;
        s.run_until(until.min(end)).map_err(step_error)?;
        let crashed = s.engine().crashed();
        let at_end = s.engine().next_time().is_none();
        let before = self.distance_m;
        self.distance_m = self.goal_distance(cfg);
        let dt_s = control_us as f64 * 1e-6;
        // No copy of the state on this per-step path.
        let speed = self.session.as_ref().map_or(0.0, |s| {
            let x = s.engine().state();
            (x[3] * x[3] + x[4] * x[4] + x[5] * x[5]).sqrt()
        });
        let mut out = Outcome::default();
        match &cfg.task {
            Task::Hover { .. } => {
                out.reward = -(self.distance_m + 0.1 * speed) * dt_s;
            }
            Task::Waypoints { points, radius_m } => {
                out.reward = before - self.distance_m - 0.1 * dt_s;
                if self.distance_m <= *radius_m && self.waypoint < points.len() {
                    out.reward += 10.0;
                    self.waypoint += 1;
                    if self.waypoint == points.len() {
                        out.terminated = true;
                    } else {
                        self.distance_m = self.goal_distance(cfg);
                    }
                }
            }
        }
        if crashed {
            out.reward -= cfg.crash_penalty;
            out.terminated = true;
        }
        if self.distance_m > cfg.bounds_m {
            // Flown away from the task.
            out.terminated = true;
        }
        out.truncated = !out.terminated && (self.elapsed_us() >= cfg.episode_us || at_end);
        Ok(out)
    }

    /// The observation into `out` (see [`super::config::EnvConfig::obs_len`]).
    pub fn observe(&self, cfg: &EnvConfig, out: &mut [f32]) {
        let Some(s) = &self.session else { return };
        let e = s.engine();
        let mut v = [0.0f64; 13];
        match cfg.observe {
            ObsSource::Truth => v.copy_from_slice(&e.state()[..13]),
            ObsSource::Estimate => {
                let est = &e.sensor_frame().estimate;
                let all = est
                    .position_ned_m
                    .iter()
                    .chain(&est.velocity_ned_mps)
                    .chain(&est.attitude_q)
                    .chain(&est.rates_frd_radps);
                for (o, x) in v.iter_mut().zip(all) {
                    *o = f64::from(*x);
                }
            }
        }
        let g = self.goal(cfg);
        for i in 0..3 {
            out[i] = (v[i] - g[i]) as f32;
        }
        for i in 3..13 {
            out[i] = v[i] as f32;
        }
        if let Task::Waypoints { points, .. } = &cfg.task {
            // The waypoint after this one (this one again at the last), and
            // the fraction of the route flown.
            let next = points[(self.waypoint + 1).min(points.len() - 1)];
            for i in 0..3 {
                out[13 + i] = (v[i] - next[i]) as f32;
            }
            out[16] = self.waypoint as f32 / points.len() as f32;
        }
    }
}

/// The flight of an episode under `seed`: the scenario under that seed,
/// with its own draw of the scenario's `[montecarlo]` dispersions (mass,
/// inertia, battery, mean wind, sensor noise, a motor failure) when it has
/// them, as run 0 of a batch whose master seed is `seed`.
fn episode(cfg: &EnvConfig, seed: u64) -> Result<Session, RunError> {
    let mut s = cfg.scenario.clone();
    s.seed = seed;
    if let Some(d) = &s.montecarlo {
        Draw::new(d, seed, 0, s.tick).apply(&mut s, cfg.rotors);
    }
    let request = FlightRequest {
        scenario: ScenarioSource::Loaded(Box::new(s)),
        autopilot: cfg.autopilot.clone(),
        overrides: Vec::new(),
        outputs: FlightOutputs::default(),
        isolation: cfg.isolation.clone(),
        spelling: Spelling::Python,
    };
    Ok(lockstep_run::flight::prepare(request)?.into_session())
}

fn setpoint(kind: SetpointKind, v: &[f32], thrust: f64) -> Action {
    Action::Setpoint {
        kind,
        vector: [f64::from(v[0]), f64::from(v[1]), f64::from(v[2])],
        yaw_rad: None,
        thrust,
    }
}

/// Arms the vehicle once the estimator has given the autopilot its first
/// estimate (the autopilot refuses to arm before): within 5 s, or the
/// autopilot's refusal is the error.
fn arm(s: &mut Session) -> Result<(), RunError> {
    let limit = 5_000_000;
    while s.engine().sensor_frame().estimate.timestamp_us == 0 {
        if s.engine().now().0 >= limit || s.step(1).map_err(step_error)? == 0 {
            return Err(RunError::run_failure(
                "the estimator gave no estimate within 5 s: the environment cannot arm the vehicle",
            ));
        }
    }
    s.engine_mut().apply_now(Action::Arm);
    while s.engine().actuators().armed == 0 {
        if s.engine().now().0 >= limit || s.step(1).map_err(step_error)? == 0 {
            let mut why = s.engine_mut().autopilot().last_error();
            if why.is_empty() {
                why = "it gave no reason".into();
            }
            return Err(RunError::run_failure(format!(
                "the autopilot did not arm within 5 s: {why}"
            )));
        }
    }
    Ok(())
}
