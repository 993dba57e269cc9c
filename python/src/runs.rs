//! Whole runs: a flight flown to its end (its report, its log's rows as
//! columns, their digest), a Monte Carlo batch, the integrator study, the
//! built-in aircraft. The GIL is released while they fly; Ctrl-C stops
//! them at the next boundary (everything before it kept) and is raised.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use lockstep_harness::io::log::digest_of;
use lockstep_run::batch::{BatchRequest, Workers};
use lockstep_run::choice::Spelling;
use lockstep_run::flight::{FlightOutputs, FlightRequest};
use lockstep_run::study::StudyRequest;
use lockstep_run::summary::RunSummary;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::args::{RunArgs, none_is_none, path, type_error};
use crate::columns::{log_columns, run_columns};
use crate::errors::{configuration, run_error};

/// Runs `work` without the GIL; `work` gets a flag that a KeyboardInterrupt
/// (or any signal Python turns into an exception) sets to SIGINT, checked
/// from `progress` calls. The exception, if one came, is returned too.
pub fn interruptible<T: Send>(
    py: Python<'_>,
    work: impl FnOnce(Arc<AtomicUsize>, &(dyn Fn() + Sync)) -> T + Send,
) -> (T, Option<PyErr>) {
    let flag = Arc::new(AtomicUsize::new(0));
    let caught: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);
    let progress = || {
        if flag.load(Ordering::Relaxed) != 0 {
            return;
        }
        Python::attach(|py| {
            if let Err(e) = py.check_signals() {
                flag.store(SIGINT, Ordering::Relaxed);
                if let Ok(mut c) = caught.lock() {
                    *c = Some(e);
                }
            }
        });
    };
    let f = Arc::clone(&flag);
    let out = py.detach(|| work(f, &progress));
    let err = caught.into_inner().ok().flatten();
    (out, err)
}

/// The signal a run interrupted from Python reports (what Ctrl-C sends).
const SIGINT: usize = 2;

/// Flies a scenario to its end; `(report_json, columns, digest)`; raises
/// the run layer's error for a run refused or stopped (the parts attached
/// as `flight_parts`).
#[pyfunction]
#[pyo3(signature = (scenario=None, *, seed=None, duration=None, spec=None, mission=None, set=None, params=None, autopilot=None, isolation=None, step_timeout=None, out=None))]
#[allow(clippy::too_many_arguments)]
pub fn _fly<'py>(
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
    out: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
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
    let iso = crate::args::isolation(py, isolation.as_ref(), step_timeout.as_ref())?;
    let out = none_is_none(&out).map(|v| path("out", v)).transpose()?;
    let request = FlightRequest {
        scenario: scenario.into(),
        autopilot,
        overrides,
        outputs: FlightOutputs {
            out,
            ..FlightOutputs::default()
        },
        isolation: iso,
        spelling: Spelling::Python,
    };
    let ((prepared, report, rows, shape), caught) = interruptible(py, |flag, progress| {
        let mut prepared = match lockstep_run::flight::prepare(request) {
            Ok(p) => p,
            Err(e) => return (Err(e), None, Vec::new(), None),
        };
        prepared.interrupt_on(flag);
        let shape = prepared.row_shape();
        let (report, rows) = prepared.fly_keeping_rows(|_| progress());
        (Ok(()), Some(report), rows, Some(shape))
    });
    prepared.map_err(run_error)?;
    let (Some(report), Some(shape)) = (report, shape) else {
        return Err(configuration("the flight produced no report"));
    };
    let digest = if report.log.is_some() || !rows.is_empty() {
        Some(
            digest_of(&shape, &rows)
                .map_err(|e| configuration(format!("the log's digest: {e}")))?,
        )
    } else {
        None
    };
    let columns = log_columns(py, &shape, &rows)?;
    let json = RunSummary::from(report.clone()).to_json_line();
    let parts = PyTuple::new(
        py,
        [
            json.into_pyobject(py)?.into_any(),
            columns.into_any(),
            digest.into_pyobject(py)?.into_any(),
        ],
    )?;
    if let Some(e) = caught {
        let _ = e.value(py).setattr("flight_parts", &parts);
        return Err(e);
    }
    if let Some(class) = report.error_class
        && report.outcome != lockstep_run::flight::Outcome::Completed
    {
        let mut r = lockstep_run::RunError::run_failure(
            report
                .error
                .clone()
                .unwrap_or_else(|| "the run stopped".into()),
        );
        r.class = class;
        let e = run_error(r);
        let _ = e.value(py).setattr("exit_status", report.exit_status);
        let _ = e.value(py).setattr("flight_parts", &parts);
        return Err(e);
    }
    Ok(parts)
}

/// The built-in aircraft: `{name: description}` (the base the others
/// extend is not listed).
#[pyfunction]
pub fn specs(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for (n, _) in lockstep_plant::spec::BUILTIN_SPECS {
        if let Ok(s) = lockstep_plant::AircraftSpec::resolve(n) {
            d.set_item(n, s.description.unwrap_or_default())?;
        }
    }
    Ok(d)
}

/// A built-in aircraft's spec as TOML: as written, or `resolved` (its base
/// merged in).
#[pyfunction]
#[pyo3(signature = (name, *, resolved=false))]
pub fn spec_toml(name: &str, resolved: bool) -> PyResult<String> {
    let specs = lockstep_plant::spec::BUILTIN_SPECS;
    let Some((_, text)) = specs.iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = specs.iter().map(|(n, _)| *n).collect();
        return Err(configuration(format!(
            "`{name}` is not a built-in aircraft ({})",
            names.join(", ")
        )));
    };
    if !resolved {
        return Ok(text.to_string());
    }
    lockstep_plant::AircraftSpec::resolve(name)
        .map(|s| s.to_toml_string())
        .map_err(|e| configuration(e.to_string()))
}

/// A Monte Carlo batch of the scenario's `[montecarlo]` section:
/// `(summary_json, columns)`; its files in `out` (a temporary directory
/// when None, removed after).
#[pyfunction]
#[pyo3(signature = (scenario=None, *, runs=None, jobs=None, workers=None, run_timeout=None, seed=None, duration=None, spec=None, mission=None, set=None, params=None, autopilot=None, out=None))]
#[allow(clippy::too_many_arguments)]
pub fn _montecarlo<'py>(
    py: Python<'py>,
    scenario: Option<Bound<'py, PyAny>>,
    runs: Option<Bound<'py, PyAny>>,
    jobs: Option<Bound<'py, PyAny>>,
    workers: Option<Bound<'py, PyAny>>,
    run_timeout: Option<Bound<'py, PyAny>>,
    seed: Option<Bound<'py, PyAny>>,
    duration: Option<Bound<'py, PyAny>>,
    spec: Option<Bound<'py, PyAny>>,
    mission: Option<Bound<'py, PyAny>>,
    set: Option<Bound<'py, PyAny>>,
    params: Option<Bound<'py, PyAny>>,
    autopilot: Option<Bound<'py, PyAny>>,
    out: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyTuple>> {
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
    let runs = match none_is_none(&runs) {
        Some(r) => count("runs", r, 1)?,
        None => 100,
    };
    let jobs = match none_is_none(&jobs) {
        Some(j) => count("jobs", j, 1)? as usize,
        None => lockstep_harness::engine::cores(),
    };
    let workers = match none_is_none(&workers) {
        None => Workers::Processes,
        Some(w) => match w.extract::<String>().as_deref() {
            Ok("processes") => Workers::Processes,
            Ok("threads") => Workers::Threads,
            _ => {
                return Err(configuration(format!(
                    "workers={}: \"processes\" (each run in a child process: a crash of the \
                     library is that run's failed row) or \"threads\" (in this process: a \
                     re-entrant library only, and a crash ends the interpreter)",
                    w.repr().map(|r| r.to_string()).unwrap_or_default()
                )));
            }
        },
    };
    let run_timeout = match none_is_none(&run_timeout) {
        None => std::time::Duration::from_secs(600),
        Some(t) => {
            let s = crate::args::seconds("run_timeout", t)?;
            if !(s.is_finite() && s > 0.0) {
                return Err(configuration(format!(
                    "run_timeout={s}: a positive number of seconds"
                )));
            }
            std::time::Duration::from_secs_f64(s)
        }
    };
    let (program, worker_args) = crate::host::launcher(py)?;
    let (out, _temp) = match none_is_none(&out) {
        Some(v) => (path("out", v)?, None),
        None => {
            let t = tempfile::tempdir()
                .map_err(|e| configuration(format!("a temporary directory: {e}")))?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let request = BatchRequest {
        scenario,
        autopilot,
        overrides,
        runs,
        jobs: jobs.min(runs.max(1) as usize),
        workers,
        run_timeout,
        out,
        worker_program: Some(program),
        worker_args,
        shard: None,
    };
    let (batch, caught) = interruptible(py, |flag, progress| {
        let prepared = lockstep_run::batch::prepare(request)?;
        Ok::<_, lockstep_run::RunError>(prepared.run(flag, |_, _| progress()))
    });
    if let Some(e) = caught {
        return Err(e);
    }
    let batch = batch.map_err(run_error)?;
    let json = RunSummary::from(batch.report).to_json_line();
    let columns = run_columns(py, &batch.rows)?;
    PyTuple::new(py, [json.into_pyobject(py)?.into_any(), columns.into_any()])
}

/// Run `run` of the scenario's Monte Carlo batch, flown in this process
/// (the autopilot in-process): its row as one-row columns of `runs.csv`.
/// The same row as the batch's run `run`, wherever it is flown.
#[pyfunction]
#[pyo3(signature = (scenario, run, *, seed=None, duration=None, spec=None, mission=None, set=None, params=None, autopilot=None))]
#[allow(clippy::too_many_arguments)]
pub fn _montecarlo_run<'py>(
    py: Python<'py>,
    scenario: Option<Bound<'py, PyAny>>,
    run: Bound<'py, PyAny>,
    seed: Option<Bound<'py, PyAny>>,
    duration: Option<Bound<'py, PyAny>>,
    spec: Option<Bound<'py, PyAny>>,
    mission: Option<Bound<'py, PyAny>>,
    set: Option<Bound<'py, PyAny>>,
    params: Option<Bound<'py, PyAny>>,
    autopilot: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
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
    let k = count("run", &run, 0)?;
    let row = py
        .detach(|| lockstep_run::batch::worker::run(&scenario, &autopilot, &overrides, k))
        .map_err(run_error)?;
    run_columns(py, &[row])
}

/// A positive count (an int at least `min`).
fn count(name: &str, v: &Bound<'_, PyAny>, min: u64) -> PyResult<u64> {
    if v.is_instance_of::<pyo3::types::PyBool>() || !v.is_instance_of::<pyo3::types::PyInt>() {
        return Err(type_error(name, "an int", v));
    }
    match v.extract::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(configuration(format!(
            "{name}={}: an integer of at least {min}",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

/// The integrator study: flies the scenario recorded, replays it with each
/// method; `(rows, csv_path, plots)` with rows as dicts.
#[pyfunction]
#[pyo3(signature = (scenario=None, *, methods=None, steps_us=None, tolerances=None, repeats=1, horizon_s=None, seed=None, duration=None, spec=None, mission=None, set=None, params=None, autopilot=None, isolation=None, out=None))]
#[allow(clippy::too_many_arguments)]
pub fn _compare_integrators<'py>(
    py: Python<'py>,
    scenario: Option<Bound<'py, PyAny>>,
    methods: Option<Vec<String>>,
    steps_us: Option<Vec<u64>>,
    tolerances: Option<Vec<f64>>,
    repeats: u32,
    horizon_s: Option<f64>,
    seed: Option<Bound<'py, PyAny>>,
    duration: Option<Bound<'py, PyAny>>,
    spec: Option<Bound<'py, PyAny>>,
    mission: Option<Bound<'py, PyAny>>,
    set: Option<Bound<'py, PyAny>>,
    params: Option<Bound<'py, PyAny>>,
    autopilot: Option<Bound<'py, PyAny>>,
    isolation: Option<Bound<'py, PyAny>>,
    out: Option<Bound<'py, PyAny>>,
) -> PyResult<String> {
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
    let methods = match methods {
        None => {
            use lockstep_plant::integrate::Method;
            vec![Method::Euler, Method::Rk4, Method::Bs32, Method::Dp54]
        }
        Some(ms) => ms
            .iter()
            .map(|m| {
                lockstep_plant::integrate::Method::from_name(m).ok_or_else(|| {
                    configuration(format!(
                        "methods: no integrator named `{m}` (euler, rk4, bs32, dp54)"
                    ))
                })
            })
            .collect::<PyResult<_>>()?,
    };
    if repeats == 0 {
        return Err(configuration("repeats=0: at least 1"));
    }
    let horizon_us = match horizon_s {
        None => Some(lockstep_run::study::DEFAULT_HORIZON_US),
        Some(h) if h.is_finite() && h > 0.0 => Some((h * 1e6).round() as u64),
        Some(h) if h == f64::INFINITY => None,
        Some(h) => {
            return Err(configuration(format!(
                "horizon_s={h}: a positive number of seconds (inf: never restart)"
            )));
        }
    };
    let (out, _temp): (PathBuf, _) = match none_is_none(&out) {
        Some(v) => (path("out", v)?, None),
        None => {
            let t = tempfile::tempdir()
                .map_err(|e| configuration(format!("a temporary directory: {e}")))?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let request = StudyRequest {
        scenario,
        autopilot,
        overrides,
        methods,
        steps_us: steps_us.unwrap_or_default(),
        tolerances: tolerances.unwrap_or_default(),
        repeats,
        horizon_us,
        out,
        isolation: crate::args::isolation(py, isolation.as_ref(), None)?,
    };
    let (outcome, caught) = interruptible(py, |_flag, _progress| {
        lockstep_run::study::compare(&request, |_| {})
    });
    if let Some(e) = caught {
        return Err(e);
    }
    let outcome = outcome.map_err(run_error)?;
    std::fs::read_to_string(&outcome.csv)
        .map_err(|e| configuration(format!("cannot read {}: {e}", outcome.csv.display())))
}
