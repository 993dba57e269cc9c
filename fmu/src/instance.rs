//! One FMU instance: the packaged scenario and autopilot, the parameters
//! and inputs the master sets, the whole-vehicle engine they drive, and the
//! outputs read from it. Safe Rust; the fmi2* functions (exports.rs) only
//! translate pointers and statuses.

use std::path::{Path, PathBuf};

use lockstep_abi::Isolation;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::{Action, Scenario, SensorId};
use lockstep_harness::io::log_meta::sidecar_path;
use lockstep_harness::io::paths::{check_outputs, scenario_inputs};

use crate::variables::{Causality, Kind, Slot, Variable, table};

/// The instance's state in FMI's state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Instantiated,
    Initialization,
    Stepping,
    Terminated,
    /// A call returned fmi2Error (a failed step, a refused value, a call
    /// out of order): FMI 2.0's error state, where only the getters (for
    /// debugging), fmi2SetDebugLogging, fmi2Reset and fmi2FreeInstance
    /// may be called.
    Error,
}

/// The current value of an input or parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
    Boolean(bool),
    String(String),
}

#[derive(Debug)]
pub struct Instance {
    pub name: String,
    pub phase: Phase,
    resources: PathBuf,
    scenario: Scenario,
    pub variables: Vec<Variable>,
    /// Parameters and inputs, by value reference (outputs: `None`).
    values: Vec<Option<Value>>,
    /// Inputs as last applied to the engine (for edges and changes).
    applied: Vec<Option<Value>>,
    engine: Option<Engine>,
    /// The engine's run was ended (log flushed, autopilot destroyed).
    finished: bool,
    /// The communication point reached, integer µs.
    now_us: u64,
    /// The strings the last fmi2GetString returned (valid until the next
    /// call, as FMI asks).
    pub strings: Vec<std::ffi::CString>,
    /// A parameter changed since the engine was built.
    dirty: bool,
}

/// The error of an fmi2 call: logged, then returned as fmi2Error.
pub type Failure = String;

impl Instance {
    /// The instance of the FMU unpacked at `resources` (its `resources`
    /// directory: `scenario.toml`, `autopilot.so`, and what the scenario
    /// names).
    pub fn new(name: &str, resources: &Path) -> Result<Instance, Failure> {
        let file = resources.join("scenario.toml");
        let scenario = Scenario::load(&file).map_err(|e| e.to_string())?;
        let runner = lockstep_harness::engine::PlantRunner::from_scenario(&scenario)
            .map_err(|e| e.to_string())?;
        let p = runner.plant();
        let variables = table(
            p.rotors.len(),
            p.batteries.len(),
            scenario.seed,
            scenario.start,
        );
        // The packaged description must state this library's variables, or
        // value references would mean other variables.
        let ours = crate::Description {
            model_name: "",
            description: "",
            guid: "",
            stop_time_s: 0.0,
            step_s: 0.0,
            one_instance_per_process: false,
            variables: &variables,
        }
        .variables_xml();
        let packaged = resources
            .parent()
            .map(|d| d.join("modelDescription.xml"))
            .and_then(|p| std::fs::read_to_string(p).ok());
        if let Some(xml) = packaged
            && !xml.contains(&ours)
        {
            return Err(
                "modelDescription.xml does not list this library's variables: the FMU was \
                 packaged with another build of lockstep's FMU library (package it again)"
                    .into(),
            );
        }
        let values = defaults(&variables);
        Ok(Instance {
            name: name.to_string(),
            phase: Phase::Instantiated,
            resources: resources.to_path_buf(),
            scenario,
            applied: values.clone(),
            values,
            variables,
            engine: None,
            finished: false,
            now_us: 0,
            strings: Vec::new(),
            dirty: false,
        })
    }

    /// Back to the state after instantiation (parameters at their defaults).
    pub fn reset(&mut self) -> Result<(), Failure> {
        let r = self.end();
        self.engine = None;
        self.finished = false;
        self.values = defaults(&self.variables);
        self.applied = self.values.clone();
        self.now_us = 0;
        self.phase = Phase::Instantiated;
        r
    }

    fn variable(&self, vr: u32, kind: Kind) -> Result<&Variable, Failure> {
        let v = self
            .variables
            .get(vr as usize)
            .ok_or_else(|| format!("no variable with value reference {vr}"))?;
        if v.kind != kind {
            return Err(format!(
                "value reference {vr} is `{}`, a {}, not a {}",
                v.name,
                v.kind.name(),
                kind.name()
            ));
        }
        Ok(v)
    }

    /// Sets parameters or inputs of one `kind`: all of them, or none when
    /// one is refused (each is checked before any is set).
    pub fn set_all(&mut self, kind: Kind, items: Vec<(u32, Value)>) -> Result<(), Failure> {
        for (vr, value) in &items {
            self.check_set(*vr, kind, value)?;
        }
        for (vr, value) in items {
            let v = &self.variables[vr as usize];
            if v.causality == Causality::Parameter
                && self.values[vr as usize].as_ref() != Some(&value)
            {
                self.dirty = true;
            }
            self.values[vr as usize] = Some(value);
        }
        Ok(())
    }

    /// Refuses a value the variable `vr` cannot take now: an output, a
    /// fixed parameter after initialization, a number outside its range,
    /// a log path naming one of the FMU's files.
    fn check_set(&self, vr: u32, kind: Kind, value: &Value) -> Result<(), Failure> {
        let v = self.variable(vr, kind)?;
        use crate::variables::Causality::*;
        match (v.causality, self.phase) {
            (Output, _) => return Err(format!("`{}` is an output", v.name)),
            (Parameter, Phase::Instantiated | Phase::Initialization) => {}
            (Parameter, _) => {
                return Err(format!(
                    "`{}` is a fixed parameter: set it before initialization ends",
                    v.name
                ));
            }
            (Input, Phase::Terminated | Phase::Error) => {
                return Err(format!("`{}`: the instance is {:?}", v.name, self.phase));
            }
            (Input, _) => {}
        }
        match (&v.slot, value) {
            (Slot::Seed, Value::Integer(s)) if *s < 0 => {
                return Err(format!("seed {s} is negative"));
            }
            (_, Value::Real(x)) if !x.is_finite() => {
                return Err(format!("`{}` = {x} is not finite", v.name));
            }
            (_, Value::Real(x)) => {
                if let Some((lo, hi)) = v.range
                    && !(lo..=hi).contains(x)
                {
                    return Err(format!(
                        "`{}` = {x:e} is outside [{lo}, {hi}]{}",
                        v.name,
                        v.unit.map(|u| format!(" {u}")).unwrap_or_default()
                    ));
                }
            }
            (Slot::LogPath, Value::String(p)) if !p.is_empty() => {
                self.check_log(Path::new(p))?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Refuses a `log_path` (or its sidecar) naming one of the FMU's own
    /// files: its scenario, autopilot, spec, mission or description.
    fn check_log(&self, log: &Path) -> Result<(), Failure> {
        let autopilot = self.resources.join("autopilot.so");
        let description = self
            .resources
            .parent()
            .map(|d| d.join("modelDescription.xml"));
        let mut inputs = scenario_inputs(&self.scenario.file, &autopilot, &self.scenario);
        if let Some(d) = &description {
            inputs.push(("the FMU's modelDescription.xml", d));
        }
        let sidecar = sidecar_path(log);
        check_outputs(
            &inputs,
            &[("`log_path`", log), ("the log's sidecar", &sidecar)],
        )
    }

    fn scenario_with_parameters(&self) -> (Scenario, Option<PathBuf>) {
        let mut s = self.scenario.clone();
        let mut log = None;
        let mut start = s.start;
        let defaults = defaults(&self.variables);
        for ((v, value), default) in self.variables.iter().zip(&self.values).zip(&defaults) {
            match (v.slot, value) {
                // The default shows a seed past 2^31 - 1 clipped: the
                // scenario's own seed stays unless the master sets one.
                (Slot::Seed, Some(Value::Integer(x))) if value != default => s.seed = *x as u64,
                (Slot::StartNorth, Some(Value::Real(x))) => start.0 = *x,
                (Slot::StartEast, Some(Value::Real(x))) => start.1 = *x,
                (Slot::StartYaw, Some(Value::Real(x))) => start.2 = *x,
                (Slot::LogPath, Some(Value::String(p))) if !p.is_empty() => {
                    log = Some(PathBuf::from(p));
                }
                _ => {}
            }
        }
        s.start = start;
        (s, log)
    }

    /// Builds the engine from the parameters (again, if it exists).
    fn build(&mut self) -> Result<(), Failure> {
        let _ = self.end();
        let (scenario, log) = self.scenario_with_parameters();
        let autopilot = self.resources.join("autopilot.so");
        let engine =
            Engine::with_isolation(&scenario, &autopilot, log.as_deref(), &Isolation::InProcess)
                .map_err(|e| e.to_string())?;
        self.engine = Some(engine);
        self.finished = false;
        Ok(())
    }

    /// fmi2SetupExperiment: once instantiated (or reset), before
    /// initialization; the run starts at 0 and a stop time, when given,
    /// is not before it.
    pub fn setup_experiment(&self, start_s: f64, stop_s: Option<f64>) -> Result<(), Failure> {
        if self.phase != Phase::Instantiated {
            return Err(format!(
                "the experiment is set up after instantiation and before initialization; the instance is {:?}",
                self.phase
            ));
        }
        if start_s != 0.0 {
            return Err(format!("start time {start_s} s: the scenario starts at 0"));
        }
        if let Some(stop) = stop_s
            && !(stop.is_finite() && stop >= start_s)
        {
            return Err(format!(
                "stop time {stop} s is before the start time {start_s} s"
            ));
        }
        Ok(())
    }

    pub fn enter_initialization(&mut self) -> Result<(), Failure> {
        if self.phase != Phase::Instantiated {
            return Err(format!(
                "enter initialization mode: the instance is {:?}",
                self.phase
            ));
        }
        self.phase = Phase::Initialization;
        Ok(())
    }

    pub fn exit_initialization(&mut self) -> Result<(), Failure> {
        if self.phase != Phase::Initialization {
            return Err(format!(
                "exit initialization mode: the instance is {:?}",
                self.phase
            ));
        }
        self.build()?;
        self.apply_inputs()?;
        self.phase = Phase::Stepping;
        Ok(())
    }

    /// Sends what changed on the inputs since they were last applied.
    fn apply_inputs(&mut self) -> Result<(), Failure> {
        let Some(engine) = &mut self.engine else {
            return Ok(());
        };
        let mut wind = [0.0; 3];
        let mut wind_changed = false;
        for (i, v) in self.variables.iter().enumerate() {
            let (now, was) = (&self.values[i], &self.applied[i]);
            let on = |x: &Option<Value>| matches!(x, Some(Value::Boolean(true)));
            match v.slot {
                Slot::Command(action) if on(now) && !on(was) => engine.apply_now(action),
                Slot::MotorFailed(m) if on(now) != on(was) => engine.apply_now(if on(now) {
                    Action::MotorFail { motor: m }
                } else {
                    Action::MotorRestore { motor: m }
                }),
                Slot::BatteryDisconnected(b) if on(now) != on(was) => {
                    engine.apply_now(if on(now) {
                        Action::BatteryDisconnect { battery: b }
                    } else {
                        Action::BatteryReconnect { battery: b }
                    })
                }
                Slot::SensorDropout(k) if on(now) != on(was) => {
                    let sensor = SensorId::ALL[k];
                    engine.apply_now(if on(now) {
                        Action::SensorDropout { sensor }
                    } else {
                        Action::SensorClear { sensor }
                    })
                }
                Slot::WindOffset(axis) => {
                    if let Some(Value::Real(x)) = now {
                        wind[axis] = *x;
                    }
                    wind_changed |= now != was;
                }
                _ => {}
            }
        }
        if wind_changed {
            engine.set_wind_offset(wind);
        }
        self.applied = self.values.clone();
        Ok(())
    }

    /// One communication step from `t_us` over `h_us`: the inputs applied,
    /// then every boundary at or before `t_us + h_us` processed; `false`
    /// when the scenario ended first (the instance is then at its end).
    pub fn step(&mut self, t_us: u64, h_us: u64) -> Result<bool, Failure> {
        if self.phase != Phase::Stepping {
            return Err(format!("do step: the instance is {:?}", self.phase));
        }
        if t_us != self.now_us {
            return Err(format!(
                "do step from {}, but the instance is at {}",
                lockstep_abi::at(t_us),
                lockstep_abi::at(self.now_us)
            ));
        }
        let end = self
            .engine
            .as_ref()
            .expect("an engine while stepping")
            .end();
        let target = t_us
            .checked_add(h_us)
            .ok_or_else(|| format!("do step of {h_us} us from {t_us} us overflows the clock"))?;
        if t_us >= end.0 && h_us > 0 {
            // Nothing left to step: not an error, the end (fmi2Discard,
            // fmi2Terminated true).
            return Ok(false);
        }
        self.apply_inputs()?;
        let reached = target.min(end.0);
        let engine = self.engine.as_mut().expect("an engine while stepping");
        while engine.next_time().is_some_and(|n| n.0 <= reached) {
            if let Err(e) = engine.step() {
                let message = e.to_string();
                let _ = self.end_with(Err(e));
                self.phase = Phase::Error;
                return Err(message);
            }
        }
        self.now_us = reached;
        Ok(reached == target)
    }

    /// Ends the engine's run once (log flushed and joined, autopilot
    /// destroyed).
    fn end(&mut self) -> Result<(), Failure> {
        self.end_with(Ok(()))
    }

    fn end_with(
        &mut self,
        result: Result<(), lockstep_harness::engine::EngineError>,
    ) -> Result<(), Failure> {
        match &mut self.engine {
            Some(e) if !self.finished => {
                self.finished = true;
                e.finish(result).map(|_| ()).map_err(|e| e.to_string())
            }
            _ => Ok(()),
        }
    }

    /// The communication point reached, integer µs.
    pub fn now_us(&self) -> u64 {
        self.now_us
    }

    /// The communication point reached, in seconds (for FMI's status).
    pub fn now_s(&self) -> f64 {
        self.now_us as f64 * 1e-6
    }

    /// The scenario's end has been reached.
    pub fn at_end(&self) -> bool {
        self.engine
            .as_ref()
            .is_some_and(|e| e.next_time().is_none())
    }

    pub fn terminate(&mut self) -> Result<(), Failure> {
        let r = self.end();
        self.phase = Phase::Terminated;
        r
    }

    /// The value of variable `vr`: parameters and inputs as set, outputs
    /// from the engine (their start values before it exists).
    pub fn get(&mut self, vr: u32, kind: Kind) -> Result<Value, Failure> {
        self.variable(vr, kind)?;
        if let Some(x) = &self.values[vr as usize] {
            return Ok(x.clone());
        }
        if self.dirty && self.phase == Phase::Initialization {
            self.build()?;
        }
        let v = self.variable(vr, kind)?;
        let Some(e) = &self.engine else {
            return Ok(match (kind, v.slot) {
                (Kind::Real, Slot::Truth(6) | Slot::Estimate(6)) => Value::Real(1.0),
                (Kind::Real, _) => Value::Real(0.0),
                (Kind::Integer, Slot::MissionCurrent) => Value::Integer(-1),
                (Kind::Integer, _) => Value::Integer(0),
                (Kind::Boolean, _) => Value::Boolean(false),
                (Kind::String, _) => Value::String(String::new()),
            });
        };
        let act = e.actuators();
        let est = &e.sensor_frame().estimate;
        Ok(match v.slot {
            Slot::Truth(i) => Value::Real(e.state()[i]),
            Slot::Estimate(i) => Value::Real(f64::from(match i {
                0..3 => est.position_ned_m[i],
                3..6 => est.velocity_ned_mps[i - 3],
                6..10 => est.attitude_q[i - 6],
                _ => est.rates_frd_radps[i - 10],
            })),
            Slot::Motor(i) => Value::Real(f64::from(act.motors[i])),
            Slot::BatteryVoltage => Value::Real(e.plant_outputs().batteries[0].voltage_v),
            Slot::BatteryCurrent => Value::Real(e.plant_outputs().batteries[0].current_a),
            Slot::BatteryRemaining => Value::Real(e.plant_outputs().batteries[0].soc),
            Slot::Mode => Value::Integer(act.mode as i32),
            Slot::Armed => Value::Boolean(act.armed != 0),
            Slot::MissionCurrent => Value::Integer(act.mission_current),
            Slot::MissionFinished => Value::Boolean(act.mission_finished != 0),
            _ => unreachable!("parameters and inputs have values"),
        })
    }
}

fn defaults(variables: &[Variable]) -> Vec<Option<Value>> {
    variables
        .iter()
        .map(|v| {
            let s = v.start.as_ref()?;
            Some(match v.kind {
                Kind::Real => Value::Real(s.parse().ok()?),
                Kind::Integer => Value::Integer(s.parse().ok()?),
                Kind::Boolean => Value::Boolean(s == "true"),
                Kind::String => Value::String(s.clone()),
            })
        })
        .collect()
}

impl Drop for Instance {
    fn drop(&mut self) {
        // The log writer is joined and the autopilot destroyed before the
        // instance goes.
        let _ = self.end();
    }
}
