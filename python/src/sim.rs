//! `lockstep.Sim`: a whole vehicle (plant, sensors, estimator, the C
//! autopilot, world) stepped from Python over the run layer's stepped
//! flight: its state read, commands, faults and missions sent, its state
//! saved and restored, new episodes started. The GIL is released while it
//! steps; one Sim is used by one thread at a time (a second waits).

use std::sync::Mutex;

use lockstep_harness::inputs::mission::Mission;
use lockstep_harness::inputs::scenario::{Action, Override, action_now};
use lockstep_run::choice::Spelling;
use lockstep_run::flight::{FlightOutputs, FlightRequest};
use lockstep_run::session::{Session, SessionError};
use numpy::PyArray1;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::args::{RunArgs, none_is_none, path, seed as seed_arg};
use crate::errors::{configuration, run_error, session_error};

/// What a Sim was built from: rebuilt from it at each reset.
#[derive(Debug)]
struct Built {
    request: FlightRequest,
    session: Session,
}

/// A whole vehicle (plant, sensors, estimator, the C autopilot, world)
/// stepped from Python: `Sim(scenario=None, *, seed, duration, spec,
/// mission, set, params, autopilot, isolation, step_timeout, log, record)`
/// takes `lockstep.fly`'s arguments and files to write. Step it
/// (`step`, `run_until`, `run`), read it (`truth`, `estimate`,
/// `actuators`, `battery`, `state`, `time_us`), act on it (`command`,
/// `fault`, `setpoint`, `upload_mission`), save and restore it
/// (`snapshot`, `restore`), start again (`reset`), end it (`finish`,
/// `report`). Time is integer microseconds; the GIL is released while it
/// steps.
#[derive(Debug)]
#[pyclass(module = "lockstep._native", name = "Sim")]
pub struct Sim {
    inner: Mutex<Built>,
}

/// Builds the stepped flight of `request`.
fn build(py: Python<'_>, request: &FlightRequest) -> PyResult<Session> {
    let r = request.clone();
    py.detach(|| lockstep_run::flight::prepare(r).map(|p| p.into_session()))
        .map_err(run_error)
}

impl Sim {
    /// Applies scenario action `action` with `keys` now; `what` names the
    /// call in errors.
    fn act(
        &self,
        py: Python<'_>,
        action: &str,
        what: &str,
        keys: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let mut table = toml::Table::new();
        table.insert("action".into(), toml::Value::String(action.into()));
        if let Some(k) = keys {
            for (name, v) in k.iter() {
                let name: String = name.extract()?;
                let value = crate::args::toml_value(&format!("{what} {name}"), &v)?;
                table.insert(name, value);
            }
        }
        let a = action_now(table, what).map_err(configuration)?;
        self.with(py, |b| {
            let p = b.session.engine().plant();
            check_indices(&a, p.rotors.len(), p.batteries.len())?;
            b.session.usable().map_err(session_error)?;
            b.session.engine_mut().apply_now(a);
            Ok(())
        })
    }

    fn with<T>(&self, py: Python<'_>, f: impl FnOnce(&mut Built) -> PyResult<T>) -> PyResult<T> {
        let mut g = crate::lock::lock(py, &self.inner);
        f(&mut g)
    }
}

/// The motor or battery an action names, checked against the vehicle.
fn check_indices(a: &Action, rotors: usize, batteries: usize) -> PyResult<()> {
    let (what, i, n) = match a {
        Action::MotorFail { motor }
        | Action::MotorRestore { motor }
        | Action::ThrustLoss { motor, .. } => ("motor", *motor, rotors),
        Action::BatteryDisconnect { battery } | Action::BatteryReconnect { battery } => {
            ("battery", *battery, batteries)
        }
        _ => return Ok(()),
    };
    if i >= n {
        return Err(PyIndexError::new_err(format!(
            "{what} {i}, but the vehicle has {n} (0 to {})",
            n.saturating_sub(1)
        )));
    }
    Ok(())
}

#[pymethods]
impl Sim {
    /// Builds the vehicle of a scenario (default: the bundled one) with the
    /// same arguments as `lockstep.fly`; `log` and `record` name files to
    /// write (the log needs a `log` cadence).
    #[new]
    #[pyo3(signature = (scenario=None, *, seed=None, duration=None, spec=None, mission=None, set=None, params=None, autopilot=None, isolation=None, step_timeout=None, log=None, record=None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        scenario: Option<Bound<'py, PyAny>>,
        seed: Option<Bound<'py, PyAny>>,
        duration: Option<Bound<'py, PyAny>>,
        spec: Option<Bound<'py, PyAny>>,
        mission: Option<Bound<'py, PyAny>>,
        set: Option<Bound<'py, PyAny>>,
        params: Option<Bound<'py, PyAny>>,
        autopilot: Option<Bound<'py, PyAny>>,
        isolation: Option<Bound<'py, PyAny>>,
        step_timeout: Option<Bound<'py, PyAny>>,
        log: Option<Bound<'py, PyAny>>,
        record: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Sim> {
        let args = RunArgs {
            scenario,
            seed,
            duration,
            spec,
            mission,
            set,
            params,
            autopilot,
        };
        let (scenario, autopilot, overrides) = args.resolve()?;
        let isolation = crate::args::isolation(py, isolation.as_ref(), step_timeout.as_ref())?;
        let request = FlightRequest {
            scenario: scenario.into(),
            autopilot,
            overrides,
            outputs: FlightOutputs {
                log: none_is_none(&log).map(|v| path("log", v)).transpose()?,
                record: none_is_none(&record)
                    .map(|v| path("record", v))
                    .transpose()?,
                ..FlightOutputs::default()
            },
            isolation,
            spelling: Spelling::Python,
        };
        let session = build(py, &request)?;
        Ok(Sim {
            inner: Mutex::new(Built { request, session }),
        })
    }

    /// Processes up to `n` boundaries (each tick of the finest cadence is
    /// one); returns how many were (fewer at the end of the run). Raises
    /// EndedError when none was left, the run's error when a step fails
    /// (the run then ends there, everything before it written).
    #[pyo3(signature = (n=1))]
    fn step(&self, py: Python<'_>, n: u64) -> PyResult<u64> {
        self.with(py, |b| {
            if n == 0 {
                return b.session.step(0).map_err(session_error);
            }
            let mut done = 0;
            while done < n {
                let k = (n - done).min(CHUNK_BOUNDARIES);
                match py.detach(|| b.session.step(k)) {
                    Ok(d) => {
                        done += d;
                        if d < k {
                            break;
                        }
                    }
                    // The end reached exactly at the last chunk's end.
                    Err(SessionError::Ended(_)) if done > 0 => break,
                    Err(e) => return Err(session_error(e)),
                }
                // Ctrl-C between chunks: raised with the Sim where it is.
                py.check_signals()?;
            }
            Ok(done)
        })
    }

    /// Processes every boundary at or before `time_us` (up to the run's
    /// end). ValueError for a time already passed.
    fn run_until(&self, py: Python<'_>, time_us: u64) -> PyResult<()> {
        self.with(py, |b| run_until(py, &mut b.session, time_us))
    }

    /// Steps to the end of the run and ends it; returns the report (as
    /// `lockstep fly --json` prints it) as a dict.
    fn run<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(py, |b| {
            let end = b.session.engine().end().0;
            if b.session.engine().now().0 < end && !b.session.is_finished() {
                run_until(py, &mut b.session, end)?;
            }
            py.detach(|| b.session.finish()).map_err(session_error)?;
            report(py, &b.session)
        })
    }

    /// The time of the last boundary processed, µs (0 before the first).
    #[getter]
    fn time_us(&self, py: Python<'_>) -> u64 {
        self.with(py, |b| Ok(b.session.engine().now().0))
            .unwrap_or(0)
    }

    /// The time the run ends (the scenario's duration), µs.
    #[getter]
    fn end_us(&self, py: Python<'_>) -> u64 {
        self.with(py, |b| Ok(b.session.engine().end().0))
            .unwrap_or(0)
    }

    /// The number of rotors.
    #[getter]
    fn rotors(&self, py: Python<'_>) -> usize {
        self.with(py, |b| Ok(b.session.engine().plant().rotors.len()))
            .unwrap_or(0)
    }

    /// The true state at the last boundary: time_us, position_ned_m,
    /// velocity_ned_mps, attitude_q (w, x, y, z; body to NED),
    /// rates_frd_radps, specific_force_frd_mps2, on_ground.
    #[getter]
    fn truth<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |b| {
            let e = b.session.engine();
            crate::state::truth(py, e.now().0, e.state(), &e.plant_outputs())
        })
    }

    /// The estimate the autopilot last received (noisy and delayed as the
    /// scenario's sensors and estimator make it).
    #[getter]
    fn estimate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |b| {
            crate::state::estimate(py, b.session.engine().sensor_frame())
        })
    }

    /// The autopilot's last outputs: motors (commands in [0, 1]), mode,
    /// mode_name, armed, mission_current, mission_finished.
    #[getter]
    fn actuators<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |b| {
            let e = b.session.engine();
            crate::state::actuators(
                py,
                e.actuators(),
                e.plant().rotors.len(),
                e.sensor_frame().time_us,
            )
        })
    }

    /// Battery `index` at the last boundary: voltage_v, current_a, soc,
    /// warning, connected.
    #[pyo3(signature = (index=0))]
    fn battery<'py>(&self, py: Python<'py>, index: usize) -> PyResult<Bound<'py, PyDict>> {
        self.with(py, |b| {
            let e = b.session.engine();
            crate::state::battery(py, &e.plant_outputs(), e.plant().batteries.len(), index)
        })
    }

    /// The autopilot's whole parameter table, by name: each a dict with
    /// "type" ("f32" or "i32"), "value" (now) and "default" (after
    /// create()); None when the library does not enumerate its parameters
    /// (an ABI-3 library, or one without lockstep_autopilot_param_count /
    /// param_info) or the autopilot is a flight stack. A failing listing
    /// raises RunFailure with the library's message.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let table = self.with(py, |b| {
            b.session.usable().map_err(session_error)?;
            b.session
                .engine_mut()
                .autopilot()
                .params()
                .map_err(|e| run_error(lockstep_run::RunError::run_failure(e.to_string())))
        })?;
        let Some(table) = table else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        for p in table {
            let entry = PyDict::new(py);
            match p.param.kind {
                lockstep_abi::ParamKind::F32 => {
                    entry.set_item("type", "f32")?;
                    entry.set_item("value", p.param.value)?;
                    entry.set_item("default", p.param.default)?;
                }
                lockstep_abi::ParamKind::I32 => {
                    entry.set_item("type", "i32")?;
                    entry.set_item("value", p.param.value as i64)?;
                    entry.set_item("default", p.param.default as i64)?;
                }
            }
            d.set_item(p.name, entry)?;
        }
        Ok(Some(d))
    }

    /// The plant's whole state vector: 13 rigid-body states, then per
    /// rotor its speed, then per battery its charge and polarization
    /// voltage.
    #[getter]
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        self.with(py, |b| {
            Ok(PyArray1::from_slice(py, b.session.engine().state()))
        })
    }

    /// Sends a command to the autopilot for its next step, as a scenario
    /// event now would: "arm", "disarm", "mission_start", "takeoff", "rtl", "land",
    /// "hold".
    fn command(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let Some(a) = Action::command(name) else {
            let names: Vec<String> = Action::COMMANDS
                .iter()
                .map(|(n, _)| format!("{n:?}"))
                .collect();
            return Err(PyValueError::new_err(format!(
                "command {name:?}: one of {}",
                names.join(", ")
            )));
        };
        self.with(py, |b| {
            b.session.usable().map_err(session_error)?;
            b.session.engine_mut().apply_now(a);
            Ok(())
        })
    }

    /// Injects a fault (or any scenario action) now, as a scenario event
    /// would; it acts from the next boundary. The keywords are the event's
    /// keys: `fault("motor_fail", motor=2)`, `fault("thrust_loss", motor=0,
    /// fraction=0.3)`, `fault("sensor_bias_step", sensor="baro",
    /// value=2.0)`, `fault("wind_gust", gust={...})`.
    #[pyo3(signature = (action, **keys))]
    fn fault(
        &self,
        py: Python<'_>,
        action: &str,
        keys: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        self.act(py, action, "fault", keys)
    }

    /// Sends the autopilot a setpoint to fly in its OFFBOARD mode (from
    /// the ground once armed, or from any flying mode), as a scenario's
    /// `setpoint` event would: exactly one of `position_ned_m` (m, NED from
    /// the world origin), `velocity_ned_mps` (m/s, NED) or
    /// `rates_frd_radps` (rad/s, body FRD, with `thrust`, a fraction of the
    /// rotors' total at full command); `yaw_deg` (a heading, with a
    /// position or a velocity).
    #[pyo3(signature = (**keys))]
    fn setpoint(&self, py: Python<'_>, keys: Option<&Bound<'_, PyDict>>) -> PyResult<()> {
        self.act(py, "setpoint", "setpoint", keys)
    }

    /// Uploads the mission in a QGC file (`.waypoints` or `.plan`) to the
    /// autopilot, replacing its mission.
    fn upload_mission(&self, py: Python<'_>, mission: Bound<'_, PyAny>) -> PyResult<()> {
        let p = path("mission", &mission)?;
        let m = Mission::load(&p).map_err(|e| configuration(e.to_string()))?;
        self.with(py, |b| {
            b.session.usable().map_err(session_error)?;
            py.detach(|| b.session.engine_mut().upload_mission(&m.items))
                .map_err(|e| engine_error(&e.into()))
        })
    }

    /// The vehicle's whole running state at the last boundary (world,
    /// plant, sensors and their random streams, estimator, faults,
    /// timeline, and the autopilot's own state), as bytes for `restore`.
    fn snapshot<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.with(py, |b| {
            b.session.usable().map_err(session_error)?;
            py.detach(|| b.session.engine_mut().snapshot())
                .map_err(|e| engine_error(&e))
        })?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Continues from a `snapshot` of this Sim (or of one built from the
    /// same scenario): it then steps exactly as it did from there. The
    /// log, if any, goes on where it is. A state that cannot be loaded
    /// (not a snapshot, another scenario's, another version's) may have
    /// been loaded in part, so the run ends there: the error says so, and
    /// `reset()` starts a new episode.
    fn restore(&self, py: Python<'_>, state: &[u8]) -> PyResult<()> {
        self.with(py, |b| {
            b.session.usable().map_err(session_error)?;
            let loaded = py.detach(|| b.session.engine_mut().restore(state));
            let Err(e) = loaded else { return Ok(()) };
            let _ = py.detach(|| b.session.finish());
            let mut r = lockstep_run::RunError::of_run(&e);
            r.context.push(
                "the Sim has ended (the state may have been loaded in part); reset() starts a \
                 new episode"
                    .into(),
            );
            Err(run_error(r))
        })
    }

    /// Ends this episode and starts a new one at t = 0 from the same
    /// scenario and arguments; with `seed`, under that seed (the same seed
    /// gives the same episode, bit for bit).
    #[pyo3(signature = (*, seed=None))]
    fn reset(&self, py: Python<'_>, seed: Option<Bound<'_, PyAny>>) -> PyResult<()> {
        let seed = none_is_none(&seed).map(seed_arg).transpose()?;
        self.with(py, |b| {
            let mut request = b.request.clone();
            if let Some(s) = seed {
                request.overrides.push(Override::new(
                    "simulation.seed",
                    toml::Value::Integer(s),
                    format!("reset(seed={s})"),
                ));
            }
            // The old episode ends first (its log is complete before the
            // new one opens the same file).
            let _ = b.session.finish();
            b.session = build(py, &request)?;
            Ok(())
        })
    }

    /// Ends the run where it is: the log flushed and its sidecar
    /// completed, the autopilot destroyed, the recording closed. Reading
    /// state still works; stepping raises EndedError.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        self.with(py, |b| {
            py.detach(|| b.session.finish()).map_err(session_error)
        })
    }

    /// The report of the run once it has ended, as a dict (the object
    /// `lockstep fly --json` prints).
    fn report<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.with(py, |b| report(py, &b.session))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, py: Python<'_>, _args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.finish(py)?;
        Ok(false)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.with(py, |b| {
            let e = b.session.engine();
            Ok(format!(
                "Sim({}, {}, t={} us of {} us{})",
                b.request.scenario.path().display(),
                e.plant().name,
                e.now().0,
                e.end().0,
                if b.session.is_finished() {
                    ", finished"
                } else {
                    ""
                }
            ))
        })
        .unwrap_or_default()
    }
}

/// Boundaries stepped between two looks at Python's signals (a few ms).
const CHUNK_BOUNDARIES: u64 = 4096;
/// Simulated time run between two looks at Python's signals.
const CHUNK_US: u64 = 1_000_000;

/// `Session::run_until` in chunks of simulated time, the GIL released
/// for each, Python's signals looked at between them (Ctrl-C raises with
/// the Sim at a boundary, usable).
fn run_until(py: Python<'_>, s: &mut Session, time_us: u64) -> PyResult<()> {
    let mut first = true;
    loop {
        let now = s.engine().now().0;
        let until = time_us.min(now.saturating_add(CHUNK_US));
        match py.detach(|| s.run_until(until)) {
            Ok(()) => {}
            Err(SessionError::Ended(_)) if !first => return Ok(()),
            Err(e) => return Err(session_error(e)),
        }
        first = false;
        if until >= time_us || s.engine().next_time().is_none() {
            return Ok(());
        }
        py.check_signals()?;
    }
}

fn engine_error(e: &lockstep_harness::engine::EngineError) -> PyErr {
    run_error(lockstep_run::RunError::of_run(e))
}

fn report<'py>(py: Python<'py>, s: &Session) -> PyResult<Bound<'py, PyAny>> {
    let r = s.report("finish()").map_err(crate::errors::session_error)?;
    let json = lockstep_run::summary::RunSummary::from(r).to_json_line();
    py.import("json")?.call_method1("loads", (json,))
}
