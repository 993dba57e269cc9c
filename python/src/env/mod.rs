//! The Gymnasium environments' native core: one environment (`_Env`, which
//! `lockstep.envs.LockstepEnv` wraps) and N of them stepped on threads with
//! the GIL released (`_VectorEnv`, which `lockstep.envs.LockstepVectorEnv`
//! wraps). Both step the same [`lane::Lane`], so lane i of a vector equals a
//! single environment reset with the same seeds, bit for bit.

mod config;
mod lane;
mod pool;

use std::sync::Mutex;

use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::args::RunArgs;
use crate::errors::run_error;
use config::{EnvArgs, EnvConfig};
use lane::{Lane, Outcome};
use pool::{Command, Pool};

/// The environment arguments every constructor takes, with their defaults.
macro_rules! env_args {
    ($py:expr, $scenario:expr, $seed:expr, $spec:expr, $set:expr, $params:expr, $autopilot:expr,
     $task:expr, $action:expr, $observation:expr, $control_hz:expr, $episode_s:expr, $target:expr,
     $waypoints:expr, $radius_m:expr, $bounds_m:expr, $max_speed_mps:expr, $max_rate_radps:expr,
     $isolation:expr) => {
        EnvArgs {
            run: RunArgs {
                scenario: $scenario,
                seed: $seed,
                spec: $spec,
                set: $set,
                params: $params,
                autopilot: $autopilot,
                ..RunArgs::default()
            },
            task: $task,
            action: $action,
            observation: $observation,
            control_hz: $control_hz,
            episode_s: $episode_s,
            target: $target,
            waypoints: $waypoints,
            radius_m: $radius_m,
            bounds_m: $bounds_m,
            max_speed_mps: $max_speed_mps,
            max_rate_radps: $max_rate_radps,
            isolation: $isolation,
        }
        .config($py)?
    };
}

/// The facts of a configuration Python's spaces are built from.
fn describe<'py>(py: Python<'py>, c: &EnvConfig) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("obs_len", c.obs_len())?;
    d.set_item("action_low", PyArray1::from_slice(py, &c.low))?;
    d.set_item("action_high", PyArray1::from_slice(py, &c.high))?;
    d.set_item("control_us", c.control_us)?;
    d.set_item("episode_us", c.episode_us)?;
    d.set_item("rotors", c.rotors)?;
    Ok(d)
}

fn info<'py>(py: Python<'py>, lane: &Lane) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time_us", lane.elapsed_us())?;
    d.set_item("distance_m", lane.distance_m())?;
    d.set_item("waypoint", lane.waypoint())?;
    d.set_item("seed", lane.seed())?;
    Ok(d)
}

/// A seed argument of reset.
fn seed_of(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    match v.filter(|v| !v.is_none()) {
        None => Ok(None),
        Some(s) => crate::args::seed(s).map(|s| Some(s as u64)),
    }
}

/// One environment.
#[derive(Debug)]
#[pyclass(module = "lockstep._native", name = "_Env")]
pub struct Env {
    config: EnvConfig,
    lane: Mutex<Lane>,
}

#[pymethods]
impl Env {
    #[new]
    #[pyo3(signature = (scenario=None, *, seed=None, spec=None, set=None, params=None, autopilot=None, task="hover".to_string(), action="velocity".to_string(), observation="estimate".to_string(), control_hz=250.0, episode_s=10.0, target=None, waypoints=None, radius_m=1.0, bounds_m=50.0, max_speed_mps=5.0, max_rate_radps=6.0, isolation=None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        scenario: Option<Bound<'py, PyAny>>,
        seed: Option<Bound<'py, PyAny>>,
        spec: Option<Bound<'py, PyAny>>,
        set: Option<Bound<'py, PyAny>>,
        params: Option<Bound<'py, PyAny>>,
        autopilot: Option<Bound<'py, PyAny>>,
        task: String,
        action: String,
        observation: String,
        control_hz: f64,
        episode_s: f64,
        target: Option<Bound<'py, PyAny>>,
        waypoints: Option<Bound<'py, PyAny>>,
        radius_m: f64,
        bounds_m: f64,
        max_speed_mps: f64,
        max_rate_radps: f64,
        isolation: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Env> {
        let base = seed_of(seed.as_ref())?.unwrap_or(0);
        let config = env_args!(
            py,
            scenario,
            None,
            spec,
            set,
            params,
            autopilot,
            task,
            action,
            observation,
            control_hz,
            episode_s,
            target,
            waypoints,
            radius_m,
            bounds_m,
            max_speed_mps,
            max_rate_radps,
            isolation
        );
        Ok(Env {
            config,
            lane: Mutex::new(Lane::new(base)),
        })
    }

    /// What the spaces are built from.
    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        describe(py, &self.config)
    }

    /// Starts an episode; `(observation, info)`.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(
        &self,
        py: Python<'py>,
        seed: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let seed = seed_of(seed.as_ref())?;
        let mut guard = crate::lock::lock(py, &self.lane);
        let lane: &mut Lane = &mut guard;
        let c = &self.config;
        py.detach(|| lane.reset(c, seed)).map_err(run_error)?;
        let mut obs = vec![0.0f32; c.obs_len()];
        lane.observe(c, &mut obs);
        PyTuple::new(
            py,
            [
                PyArray1::from_vec(py, obs).into_any(),
                info(py, lane)?.into_any(),
            ],
        )
    }

    /// One control period; `(observation, reward, terminated, truncated,
    /// info)`.
    fn step<'py>(
        &self,
        py: Python<'py>,
        action: PyReadonlyArray1<'py, f32>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let a = action.as_slice()?;
        let c = &self.config;
        c.check_action(a).map_err(PyValueError::new_err)?;
        let mut guard = crate::lock::lock(py, &self.lane);
        let lane: &mut Lane = &mut guard;
        let out = py.detach(|| lane.step(c, a)).map_err(run_error)?;
        let mut obs = vec![0.0f32; c.obs_len()];
        lane.observe(c, &mut obs);
        PyTuple::new(
            py,
            [
                PyArray1::from_vec(py, obs).into_any(),
                out.reward.into_pyobject(py)?.into_any(),
                pyo3::types::PyBool::new(py, out.terminated)
                    .to_owned()
                    .into_any(),
                pyo3::types::PyBool::new(py, out.truncated)
                    .to_owned()
                    .into_any(),
                info(py, lane)?.into_any(),
            ],
        )
    }
}

/// N environments stepped on threads; autoreset in the next step.
#[derive(Debug)]
#[pyclass(module = "lockstep._native", name = "_VectorEnv")]
pub struct VectorEnv {
    pool: Mutex<Pool>,
    num_envs: usize,
}

impl VectorEnv {
    /// Runs `commands` (one per chunk) without the GIL; the results in lane
    /// order, or the first failing lane's error named by its index.
    fn run(&self, py: Python<'_>, commands: Vec<Command>) -> PyResult<Vec<(Outcome, bool)>> {
        let mut pool = crate::lock::lock(py, &self.pool);
        let pool: &mut Pool = &mut pool;
        py.detach(|| pool.run(commands));
        let mut results = Vec::with_capacity(self.num_envs);
        for chunk in pool.each(|io| std::mem::take(&mut io.results)) {
            results.extend(chunk);
        }
        if results.len() != self.num_envs {
            return Err(crate::errors::configuration(
                "an environment thread gave no result",
            ));
        }
        lane_errors(results)
    }

    /// Every lane's observation, in lane order.
    fn observations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let pool = crate::lock::lock(py, &self.pool);
        let k = pool.config().obs_len();
        let mut flat = Vec::with_capacity(self.num_envs * k);
        pool.each(|io| flat.extend_from_slice(&io.obs));
        PyArray1::from_vec(py, flat)
            .reshape([self.num_envs, k])
            .expect("the observations fill the array")
    }

    /// `f` of every lane, in lane order.
    fn per_lane<T>(&self, py: Python<'_>, f: impl Fn(&Lane) -> T) -> Vec<T> {
        let pool = crate::lock::lock(py, &self.pool);
        let mut out = Vec::with_capacity(self.num_envs);
        pool.each(|io| out.extend(io.lanes.iter().map(|(l, _)| f(l))));
        out
    }

    /// The lanes' values split per chunk.
    fn split<T: Clone>(&self, py: Python<'_>, all: &[T]) -> Vec<Vec<T>> {
        let pool = crate::lock::lock(py, &self.pool);
        let mut rest = all;
        pool.sizes()
            .into_iter()
            .map(|n| {
                let (head, tail) = rest.split_at(n);
                rest = tail;
                head.to_vec()
            })
            .collect()
    }

    /// Gymnasium's vector info: arrays with a `_key` mask each.
    fn infos<'py>(
        &self,
        py: Python<'py>,
        reset: Option<Vec<bool>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        let all = vec![true; self.num_envs];
        let put = |name: &str, v: Bound<'py, PyAny>| -> PyResult<()> {
            d.set_item(name, v)?;
            d.set_item(format!("_{name}"), PyArray1::from_slice(py, &all))
        };
        put(
            "time_us",
            PyArray1::from_vec(py, self.per_lane(py, Lane::elapsed_us)).into_any(),
        )?;
        put(
            "distance_m",
            PyArray1::from_vec(py, self.per_lane(py, Lane::distance_m)).into_any(),
        )?;
        put(
            "waypoint",
            PyArray1::from_vec(py, self.per_lane(py, |l| l.waypoint() as i64)).into_any(),
        )?;
        put(
            "seed",
            PyArray1::from_vec(py, self.per_lane(py, Lane::seed)).into_any(),
        )?;
        if let Some(r) = reset {
            put("reset", PyArray1::from_vec(py, r).into_any())?;
        }
        Ok(d)
    }
}

#[pymethods]
impl VectorEnv {
    #[new]
    #[pyo3(signature = (num_envs, scenario=None, *, threads=None, seed=None, spec=None, set=None, params=None, autopilot=None, task="hover".to_string(), action="velocity".to_string(), observation="estimate".to_string(), control_hz=250.0, episode_s=10.0, target=None, waypoints=None, radius_m=1.0, bounds_m=50.0, max_speed_mps=5.0, max_rate_radps=6.0, isolation=None))]
    #[allow(clippy::too_many_arguments)]
    fn new<'py>(
        py: Python<'py>,
        num_envs: usize,
        scenario: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
        seed: Option<Bound<'py, PyAny>>,
        spec: Option<Bound<'py, PyAny>>,
        set: Option<Bound<'py, PyAny>>,
        params: Option<Bound<'py, PyAny>>,
        autopilot: Option<Bound<'py, PyAny>>,
        task: String,
        action: String,
        observation: String,
        control_hz: f64,
        episode_s: f64,
        target: Option<Bound<'py, PyAny>>,
        waypoints: Option<Bound<'py, PyAny>>,
        radius_m: f64,
        bounds_m: f64,
        max_speed_mps: f64,
        max_rate_radps: f64,
        isolation: Option<Bound<'py, PyAny>>,
    ) -> PyResult<VectorEnv> {
        if num_envs == 0 {
            return Err(PyValueError::new_err("num_envs=0: at least 1"));
        }
        let threads = threads.unwrap_or_else(lockstep_harness::engine::cores);
        if threads == 0 {
            return Err(PyValueError::new_err("threads=0: at least 1"));
        }
        let base = seed_of(seed.as_ref())?.unwrap_or(0);
        let config = env_args!(
            py,
            scenario,
            None,
            spec,
            set,
            params,
            autopilot,
            task,
            action,
            observation,
            control_hz,
            episode_s,
            target,
            waypoints,
            radius_m,
            bounds_m,
            max_speed_mps,
            max_rate_radps,
            isolation
        );
        let lanes = (0..num_envs)
            .map(|i| Lane::new(base.wrapping_add(i as u64)))
            .collect();
        let pool = Pool::new(config, lanes, threads)
            .map_err(|e| PyValueError::new_err(format!("cannot start the threads: {e}")))?;
        Ok(VectorEnv {
            pool: Mutex::new(pool),
            num_envs,
        })
    }

    fn describe<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let pool = crate::lock::lock(py, &self.pool);
        describe(py, pool.config())
    }

    /// Starts every lane's episode: with `seed`, lane i under `seed + i`
    /// (a list gives each its own); `(observations, infos)`.
    #[pyo3(signature = (seed=None))]
    fn reset<'py>(
        &self,
        py: Python<'py>,
        seed: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let n = self.num_envs;
        let seeds: Vec<Option<u64>> = match seed.as_ref().filter(|s| !s.is_none()) {
            None => vec![None; n],
            Some(s) if s.is_instance_of::<pyo3::types::PyInt>() => {
                let s = seed_of(Some(s))?.unwrap_or(0);
                (0..n).map(|i| Some(s.wrapping_add(i as u64))).collect()
            }
            Some(s) => {
                let list: Vec<Bound<'py, PyAny>> = s
                    .try_iter()?
                    .collect::<PyResult<_>>()
                    .map_err(|_| crate::args::type_error("seed", "an int or a list of ints", s))?;
                if list.len() != n {
                    return Err(PyValueError::new_err(format!(
                        "seed: {} seeds for {n} environments",
                        list.len()
                    )));
                }
                list.iter()
                    .map(|s| seed_of(Some(s)))
                    .collect::<PyResult<_>>()?
            }
        };
        let commands = self
            .split(py, &seeds)
            .into_iter()
            .map(Command::Reset)
            .collect();
        self.run(py, commands)?;
        let obs = self.observations(py);
        PyTuple::new(py, [obs.into_any(), self.infos(py, None)?.into_any()])
    }

    /// One control period for every lane (a lane whose episode ended at
    /// the last step starts its next episode instead, its action ignored:
    /// Gymnasium's next-step autoreset); `(observations, rewards,
    /// terminations, truncations, infos)`.
    fn step<'py>(
        &self,
        py: Python<'py>,
        actions: PyReadonlyArray2<'py, f32>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let n = self.num_envs;
        let a = actions.as_array();
        let (k, ended) = {
            let pool = crate::lock::lock(py, &self.pool);
            let mut ended = Vec::with_capacity(n);
            pool.each(|io| ended.extend(io.lanes.iter().map(|(_, e)| *e)));
            (pool.config().low.len(), ended)
        };
        if a.shape() != [n, k] {
            return Err(PyValueError::new_err(format!(
                "actions have shape {:?}; the action space's is [{n}, {k}]",
                a.shape()
            )));
        }
        let flat: Vec<f32> = a.iter().copied().collect();
        {
            let pool = crate::lock::lock(py, &self.pool);
            for (i, (row, ended)) in flat.chunks(k).zip(&ended).enumerate() {
                if !ended {
                    pool.config()
                        .check_action(row)
                        .map_err(|e| PyValueError::new_err(format!("environment {i}: {e}")))?;
                }
            }
        }
        let sizes = crate::lock::lock(py, &self.pool).sizes();
        let mut rest = flat.as_slice();
        let commands = sizes
            .into_iter()
            .map(|m| {
                let (head, tail) = rest.split_at(m * k);
                rest = tail;
                Command::Step(head.to_vec())
            })
            .collect();
        let outcomes = self.run(py, commands)?;
        let obs = self.observations(py);
        let rewards: Vec<f64> = outcomes.iter().map(|(o, _)| o.reward).collect();
        let term: Vec<bool> = outcomes.iter().map(|(o, _)| o.terminated).collect();
        let trunc: Vec<bool> = outcomes.iter().map(|(o, _)| o.truncated).collect();
        let reset: Vec<bool> = outcomes.iter().map(|(_, r)| *r).collect();
        PyTuple::new(
            py,
            [
                obs.into_any(),
                PyArray1::from_vec(py, rewards).into_any(),
                PyArray1::from_vec(py, term).into_any(),
                PyArray1::from_vec(py, trunc).into_any(),
                self.infos(py, Some(reset))?.into_any(),
            ],
        )
    }
}

/// The lanes' results, or the first lane's error named by its index.
fn lane_errors<T>(results: Vec<Result<T, lockstep_run::RunError>>) -> PyResult<Vec<T>> {
    let mut out = Vec::with_capacity(results.len());
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(v) => out.push(v),
            Err(mut e) => {
                e.message = format!("environment {i}: {}", e.message);
                return Err(run_error(e));
            }
        }
    }
    Ok(out)
}
