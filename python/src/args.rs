//! Python's arguments in run-layer terms: what to fly ([`Choice`]), the
//! isolation, scenario values from Python values. Wrong types are
//! `TypeError`s naming the argument.

use std::path::PathBuf;

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::Override;
use lockstep_run::choice::{Choice, Param, Resolved, Spelling};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::configuration;

/// The arguments every run takes, as Python gave them.
#[derive(Debug, Default)]
pub struct RunArgs<'py> {
    pub scenario: Option<Bound<'py, PyAny>>,
    pub seed: Option<Bound<'py, PyAny>>,
    pub duration: Option<Bound<'py, PyAny>>,
    pub spec: Option<Bound<'py, PyAny>>,
    pub mission: Option<Bound<'py, PyAny>>,
    pub set: Option<Bound<'py, PyAny>>,
    pub params: Option<Bound<'py, PyAny>>,
    pub autopilot: Option<Bound<'py, PyAny>>,
}

/// A path argument: `str` or `os.PathLike`.
pub fn path(name: &str, v: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyInt>() {
        return Err(type_error(name, "a path (str or os.PathLike)", v));
    }
    v.extract::<PathBuf>()
        .map_err(|_| type_error(name, "a path (str or os.PathLike)", v))
}

fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// `TypeError: {name} must be {what}, not {type}`.
pub fn type_error(name: &str, what: &str, v: &Bound<'_, PyAny>) -> PyErr {
    PyTypeError::new_err(format!("{name} must be {what}, not {}", type_name(v)))
}

/// A seed: an int in [0, 2^63 - 1].
pub fn seed(v: &Bound<'_, PyAny>) -> PyResult<i64> {
    if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
        return Err(type_error("seed", "an int", v));
    }
    match v.extract::<i64>() {
        Ok(s) if s >= 0 => Ok(s),
        _ => Err(configuration(format!(
            "seed={}: not an integer in [0, 9223372036854775807]",
            v.repr().map(|r| r.to_string()).unwrap_or_default()
        ))),
    }
}

/// A number of seconds (int or float).
pub fn seconds(name: &str, v: &Bound<'_, PyAny>) -> PyResult<f64> {
    if v.is_instance_of::<PyBool>()
        || !(v.is_instance_of::<PyInt>() || v.is_instance_of::<PyFloat>())
    {
        return Err(type_error(name, "a number of seconds (int or float)", v));
    }
    v.extract::<f64>()
        .map_err(|_| type_error(name, "a number of seconds (int or float)", v))
}

/// A Python value as a scenario (TOML) value; `at` names it in errors.
pub fn toml_value(at: &str, v: &Bound<'_, PyAny>) -> PyResult<toml::Value> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(v.extract()?));
    }
    if v.is_instance_of::<PyInt>() {
        return v.extract::<i64>().map(toml::Value::Integer).map_err(|_| {
            PyValueError::new_err(format!(
                "{at}: {} does not fit a scenario integer (64-bit signed)",
                v.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        });
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(v.extract()?));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for (i, item) in v.try_iter()?.enumerate() {
            out.push(toml_value(&format!("{at}[{i}]"), &item?)?);
        }
        return Ok(toml::Value::Array(out));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, item) in d.iter() {
            let key: String = k
                .extract()
                .map_err(|_| type_error(&format!("{at}'s keys"), "str", &k))?;
            let value = toml_value(&format!("{at}[{}]", repr(&k)), &item)?;
            t.insert(key, value);
        }
        return Ok(toml::Value::Table(t));
    }
    // numpy scalars and other numbers: by their protocol.
    if v.hasattr("__index__")?
        && let Ok(i) = v.extract::<i64>()
    {
        return Ok(toml::Value::Integer(i));
    }
    if v.hasattr("__float__")?
        && let Ok(f) = v.extract::<f64>()
    {
        return Ok(toml::Value::Float(f));
    }
    Err(type_error(
        at,
        "a scenario value (bool, int, float, str, list or dict)",
        v,
    ))
}

fn repr(v: &Bound<'_, PyAny>) -> String {
    v.repr().map(|r| r.to_string()).unwrap_or_default()
}

/// `{key: value}` pairs of a mapping argument, in its order, each key
/// with its Python repr (for messages).
type Pairs<'py> = Vec<(String, String, Bound<'py, PyAny>)>;

fn mapping<'py>(name: &str, v: &Bound<'py, PyAny>) -> PyResult<Pairs<'py>> {
    let d = v
        .cast::<PyDict>()
        .map_err(|_| type_error(name, "a dict", v))?;
    let mut out = Vec::new();
    for (k, item) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| type_error(&format!("{name}'s keys"), "str", &k))?;
        out.push((key, repr(&k), item));
    }
    Ok(out)
}

impl RunArgs<'_> {
    /// What to fly.
    pub fn choice(&self) -> PyResult<Choice> {
        let mut c = Choice::default();
        if let Some(v) = none_is_none(&self.scenario) {
            c.scenario = Some(path("scenario", v)?);
        }
        if let Some(v) = none_is_none(&self.autopilot) {
            c.autopilot = Some(path("autopilot", v)?);
        }
        if let Some(v) = none_is_none(&self.seed) {
            c.seed = Some(seed(v)?);
        }
        if let Some(v) = none_is_none(&self.duration) {
            c.duration_s = Some(seconds("duration", v)?);
        }
        if let Some(v) = none_is_none(&self.spec) {
            if v.is_instance_of::<PyString>() {
                c.spec = Some(v.extract()?);
            } else {
                c.spec = Some(path("spec", v)?.display().to_string());
            }
        }
        if let Some(v) = none_is_none(&self.mission) {
            c.mission = Some(path("mission", v)?);
        }
        if let Some(v) = none_is_none(&self.params) {
            for (name, shown, item) in mapping("params", v)? {
                let at = format!("params[{shown}]");
                let value = toml_value(&at, &item)?;
                c.params.push(Param {
                    given_as: format!("{at}={}", repr(&item)),
                    name,
                    value,
                });
            }
        }
        if let Some(v) = none_is_none(&self.set) {
            for (key, shown, item) in mapping("set", v)? {
                let at = format!("set[{shown}]");
                let value = toml_value(&at, &item)?;
                let (k, given) = (key.trim(), format!("{at}={}", repr(&item)));
                if k.is_empty() || k.split('.').any(|s| s.trim().is_empty()) {
                    return Err(configuration(format!(
                        "{given}: `{k}` is not a key path (parts joined by dots)"
                    )));
                }
                c.sets.push(Override::new(k, value, given));
            }
        }
        Ok(c)
    }

    /// The scenario, autopilot and overrides.
    pub fn resolve(&self) -> PyResult<Resolved> {
        self.choice()?
            .resolve(Spelling::Python)
            .map_err(configuration)
    }
}

/// `None` given as a value is no value.
pub fn none_is_none<'a, 'py>(v: &'a Option<Bound<'py, PyAny>>) -> Option<&'a Bound<'py, PyAny>> {
    v.as_ref().filter(|v| !v.is_none())
}

/// The isolation an `isolation=` argument names: `"process"` (the
/// autopilot in a child process: a crash is an exception) or
/// `"in-process"`; `step_timeout` (s) for the former.
pub fn isolation(
    py: Python<'_>,
    v: Option<&Bound<'_, PyAny>>,
    step_timeout: Option<&Bound<'_, PyAny>>,
) -> PyResult<Isolation> {
    let name: String = match v.filter(|v| !v.is_none()) {
        None => "process".into(),
        Some(v) => v
            .extract()
            .map_err(|_| type_error("isolation", "\"process\" or \"in-process\"", v))?,
    };
    let timeout = step_timeout
        .filter(|v| !v.is_none())
        .map(|v| seconds("step_timeout", v))
        .transpose()?;
    match name.as_str() {
        "process" => {
            let mut o = crate::host::options(py)?;
            if let Some(t) = timeout {
                if !(t.is_finite() && t > 0.0) {
                    return Err(configuration(format!(
                        "step_timeout={t}: a positive number of seconds"
                    )));
                }
                o.step_timeout = std::time::Duration::from_secs_f64(t);
            }
            Ok(Isolation::Process(o))
        }
        "in-process" => {
            if timeout.is_some() {
                return Err(configuration(
                    "step_timeout applies to isolation=\"process\" only (in-process, nothing can \
                     stop a call that hangs)",
                ));
            }
            Ok(Isolation::InProcess)
        }
        other => Err(configuration(format!(
            "isolation={other:?}: \"process\" (the autopilot in a child process; a crash is an \
             exception) or \"in-process\""
        ))),
    }
}
