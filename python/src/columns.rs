//! Rows as columns: a flight's log rows as one numpy array per CSV column
//! (the same names, the same values, in the same order), and a Monte Carlo
//! batch's rows as the columns of its `runs.csv`.

use lockstep_harness::io::log::{LogRow, header};
use lockstep_run::batch::{RunRow, RunStatus};
use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// One column's values, typed as the log holds them.
enum Column {
    U64(Vec<u64>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    F32(Vec<f32>),
    Bool(Vec<bool>),
    Text(Vec<String>),
}

fn array<'py, T: Element>(py: Python<'py>, v: Vec<T>) -> Bound<'py, PyAny> {
    PyArray1::from_vec(py, v).into_any()
}

impl Column {
    fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
        Ok(match self {
            Column::U64(v) => array(py, v),
            Column::U32(v) => array(py, v),
            Column::I32(v) => array(py, v),
            Column::I64(v) => array(py, v),
            Column::F64(v) => array(py, v),
            Column::F32(v) => array(py, v),
            Column::Bool(v) => array(py, v),
            // Text as a numpy array of Python str (dtype object).
            Column::Text(v) => py.import("numpy")?.call_method1("array", (v, "object"))?,
        })
    }
}

/// The log's rows as `{column: array}` in the log's column order.
pub fn log_columns<'py>(
    py: Python<'py>,
    shape: &LogRow,
    rows: &[LogRow],
) -> PyResult<Bound<'py, PyDict>> {
    let (nr, nb) = (shape.motors.len(), shape.batteries.len());
    let names = header(nr, nb);
    let f64s = |f: &dyn Fn(&LogRow) -> f64| Column::F64(rows.iter().map(f).collect());
    let f32s = |f: &dyn Fn(&LogRow) -> f32| Column::F32(rows.iter().map(f).collect());
    let mut cols: Vec<Column> = Vec::with_capacity(names.len());
    cols.push(Column::U64(rows.iter().map(|r| r.time_us).collect()));
    for i in 0..13 {
        cols.push(f64s(&|r| r.truth[i]));
    }
    for i in 0..3 {
        cols.push(f64s(&|r| r.geodetic[i]));
    }
    for i in 0..13 {
        cols.push(f32s(&|r| r.estimate[i]));
    }
    for i in 0..11 {
        cols.push(f32s(&|r| r.setpoints[i]));
    }
    for i in 0..nr {
        cols.push(f32s(&|r| r.motors[i]));
    }
    for i in 0..nr {
        cols.push(f64s(&|r| r.rotor_speed[i]));
    }
    for i in 0..nr {
        cols.push(f64s(&|r| r.rotor_thrust[i]));
    }
    for i in 0..3 {
        cols.push(f64s(&|r| r.wind[i]));
    }
    cols.push(f64s(&|r| r.air_density));
    cols.push(f64s(&|r| r.bus[0]));
    cols.push(f64s(&|r| r.bus[1]));
    for j in 0..nb {
        for k in 0..3 {
            cols.push(f64s(&|r| r.batteries[j][k]));
        }
    }
    cols.push(Column::U32(rows.iter().map(|r| r.mode).collect()));
    cols.push(Column::U32(rows.iter().map(|r| r.armed).collect()));
    cols.push(Column::I32(
        rows.iter().map(|r| r.mission_current).collect(),
    ));
    cols.push(Column::U32(
        rows.iter().map(|r| r.mission_finished).collect(),
    ));
    cols.push(Column::U64(rows.iter().map(|r| r.faults).collect()));
    cols.push(Column::Text(
        rows.iter()
            .map(|r| lockstep_abi::mode_name(r.mode).to_string())
            .collect(),
    ));
    debug_assert_eq!(cols.len(), names.len(), "a column for every name");
    let d = PyDict::new(py);
    for (name, c) in names.into_iter().zip(cols) {
        d.set_item(name, c.into_py(py)?)?;
    }
    Ok(d)
}

/// A batch's rows as the columns of its `runs.csv` (same names, same
/// order); a failed run's measurements are NaN (numbers) or False, its
/// `failed_motor` -1 and `motor_failure_s` NaN when no motor failed, its
/// digest empty.
pub fn run_columns<'py>(py: Python<'py>, rows: &[RunRow]) -> PyResult<Bound<'py, PyDict>> {
    let m = |f: &dyn Fn(&lockstep_run::batch::report::Metrics) -> f64| {
        Column::F64(
            rows.iter()
                .map(|r| r.metrics.as_ref().map_or(f64::NAN, f))
                .collect(),
        )
    };
    let b = |f: &dyn Fn(&lockstep_run::batch::report::Metrics) -> bool| {
        Column::Bool(
            rows.iter()
                .map(|r| r.metrics.as_ref().is_some_and(f))
                .collect(),
        )
    };
    let f = |f: &dyn Fn(&RunRow) -> f64| Column::F64(rows.iter().map(f).collect());
    let cols: Vec<(&str, Column)> = vec![
        ("run", Column::U64(rows.iter().map(|r| r.run).collect())),
        ("seed", Column::U64(rows.iter().map(|r| r.seed).collect())),
        (
            "status",
            Column::Text(
                rows.iter()
                    .map(|r| match r.status {
                        RunStatus::Completed => "completed".into(),
                        RunStatus::Failed(_) => "failed".into(),
                    })
                    .collect(),
            ),
        ),
        (
            "reason",
            Column::Text(
                rows.iter()
                    .map(|r| match &r.status {
                        RunStatus::Completed => String::new(),
                        RunStatus::Failed(why) => why.clone(),
                    })
                    .collect(),
            ),
        ),
        ("passed", b(&|m| m.passed)),
        (
            "crashes",
            Column::I64(
                rows.iter()
                    .map(|r| r.metrics.as_ref().map_or(-1, |m| m.crashes as i64))
                    .collect(),
            ),
        ),
        ("end_s", m(&|m| m.end_s)),
        ("landing_error_m", m(&|m| m.landing_error_m)),
        ("altitude_m", m(&|m| m.altitude_m)),
        ("on_ground", b(&|m| m.on_ground)),
        ("max_tilt_deg", m(&|m| m.max_tilt_deg)),
        ("min_soc", m(&|m| m.min_soc)),
        ("mission_finished", b(&|m| m.mission_finished)),
        ("mass_scale", f(&|r| r.adjust.mass)),
        ("inertia_scale", f(&|r| r.adjust.inertia)),
        ("battery_capacity_scale", f(&|r| r.adjust.battery_capacity)),
        ("wind_offset_n_mps", f(&|r| r.wind_offset_ned_mps[0])),
        ("wind_offset_e_mps", f(&|r| r.wind_offset_ned_mps[1])),
        ("wind_offset_d_mps", f(&|r| r.wind_offset_ned_mps[2])),
        ("sensor_noise_scale", f(&|r| r.noise_scale)),
        (
            "failed_motor",
            Column::I64(
                rows.iter()
                    .map(|r| r.failed_motor.map_or(-1, |(m, _)| m as i64))
                    .collect(),
            ),
        ),
        (
            "motor_failure_s",
            f(&|r| r.failed_motor.map_or(f64::NAN, |(_, t)| t as f64 * 1e-6)),
        ),
        (
            "digest",
            Column::Text(
                rows.iter()
                    .map(|r| {
                        r.metrics
                            .as_ref()
                            .map_or(String::new(), |m| m.digest.clone())
                    })
                    .collect(),
            ),
        ),
    ];
    debug_assert!(
        cols.iter()
            .map(|(n, _)| *n)
            .eq(lockstep_run::batch::report::COLUMNS),
        "the CSV's columns"
    );
    let d = PyDict::new(py);
    for (name, c) in cols {
        d.set_item(name, c.into_py(py)?)?;
    }
    Ok(d)
}
