//! A fleet file made into models and run by the orchestrator.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use lockstep_fleet::run::log_path;
use lockstep_fleet::{Start, check_starts};
use lockstep_harness::engine::{PlantRunner, RunOptions};
use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::time::rng::RngStreams;
use lockstep_orchestrator::{Call, Model, Orchestrator, OrchestratorError, Stats};
use serde_json::Value;

use crate::dispatcher::Dispatcher;
use crate::file::{FleetFile, ModelDecl, ModelKind};
use crate::models::{Kpi, NoFlyZones, Orders, SwapStation, to_timestamps};
use crate::vehicle::Vehicle;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("model `{model}`: {reason}")]
    Setup { model: String, reason: String },
    #[error(transparent)]
    Orchestrator(#[from] OrchestratorError),
    /// Two vehicles start where the other is.
    #[error("{0}")]
    Overlap(String),
}

/// The scenario vehicle model `d` flies (`None`: not a vehicle): its file
/// with the fleet's seed, the timeline's duration and its pad.
pub fn vehicle_scenario(ff: &FleetFile, d: &ModelDecl) -> Result<Option<Scenario>, RunError> {
    let ModelKind::Vehicle {
        scenario,
        pad_north_m,
        pad_east_m,
        telemetry_s,
        ..
    } = &d.kind
    else {
        return Ok(None);
    };
    let label = format!("models `{}` of {}", d.name, ff.path.display());
    let duration_s = ff.info.micros(ff.info.duration) as f64 * 1e-6 + telemetry_s;
    let set = |k: &str, v: toml::Value, why: &str| Override::new(k, v, format!("{why} ({label})"));
    let overrides = [
        set(
            "simulation.seed",
            toml::Value::Integer(
                RngStreams::new(ff.seed).member_seed("orchestrate.vehicle", &d.name) as i64
                    & i64::MAX,
            ),
            "the vehicle's seed derived from timeline.seed",
        ),
        set(
            "simulation.duration_s",
            toml::Value::Float(duration_s),
            "the timeline's duration",
        ),
        set(
            "vehicle.start_north_m",
            toml::Value::Float(*pad_north_m),
            "pad_north_m",
        ),
        set(
            "vehicle.start_east_m",
            toml::Value::Float(*pad_east_m),
            "pad_east_m",
        ),
    ];
    Scenario::load_with(scenario, &overrides)
        .map(Some)
        .map_err(|e| RunError::Setup {
            model: d.name.clone(),
            reason: e.to_string(),
        })
}

/// Refuses vehicles whose pads put them where another one is, before any
/// model is made (wherever each is made: its scenario and pad are the
/// file's).
pub fn check_vehicle_starts(ff: &FleetFile) -> Result<(), RunError> {
    let mut starts = Vec::new();
    for d in &ff.models {
        let Some(s) = vehicle_scenario(ff, d)? else {
            continue;
        };
        let runner = PlantRunner::from_scenario(&s).map_err(|e| RunError::Setup {
            model: d.name.clone(),
            reason: e.to_string(),
        })?;
        starts.push(Start::new(
            &d.name,
            runner.plant(),
            [s.start.0, s.start.1, 0.0],
            None,
        ));
    }
    check_starts(&starts).map_err(RunError::Overlap)
}

/// Makes model `d` of `ff` in this process.
pub fn make_model(
    ff: &FleetFile,
    d: &ModelDecl,
    o: &RunOptions,
) -> Result<Box<dyn Model>, RunError> {
    let setup = |reason: String| RunError::Setup {
        model: d.name.clone(),
        reason,
    };
    let scale = ff.info.time_scale_us;
    Ok(match &d.kind {
        ModelKind::Orders {
            mean_interval_s,
            radius_m,
            first_s,
            max_orders,
        } => Box::new(Orders::new(
            &d.name,
            ff.seed,
            *mean_interval_s,
            *radius_m,
            *first_s,
            *max_orders,
        )),
        ModelKind::NoFlyZones { zones } => Box::new(NoFlyZones::new(&d.name, zones.clone())),
        ModelKind::Dispatcher {
            cruise_alt_m,
            alt_step_m,
            swap_below_soc,
            zone_margin_m,
        } => Box::new(Dispatcher::new(
            *cruise_alt_m,
            *alt_step_m,
            *swap_below_soc,
            *zone_margin_m,
        )),
        ModelKind::SwapStation { swap_s, bays } => Box::new(SwapStation::new(
            &d.name,
            to_timestamps(*swap_s, scale),
            *bays,
        )),
        ModelKind::Kpi => Box::<Kpi>::default(),
        ModelKind::Vehicle {
            autopilot,
            telemetry_s,
            ..
        } => {
            let s = vehicle_scenario(ff, d)?.expect("a vehicle");
            let ap: &Path = autopilot.as_deref().unwrap_or(&o.autopilot);
            let every = to_timestamps(*telemetry_s, scale);
            let log = match (&o.log_dir, s.cadence("log")) {
                (Some(dir), Some(_)) => Some(log_path(dir, &d.name)),
                _ => None,
            };
            Box::new(
                Vehicle::new(&d.name, &s, ap, &o.isolation, every, log.as_deref())
                    .map_err(setup)?,
            )
        }
    })
}

/// What a run did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    pub stats: Stats,
    /// The last timestamp processed.
    pub last_timestamp: u64,
    /// What each model said at the end, in id order (empty when a model
    /// failed to finish).
    pub models: Vec<(String, Value)>,
    pub wall_s: f64,
    /// What ended the run early, if anything.
    pub error: Option<String>,
    /// The signal (SIGINT, SIGTERM) that stopped the run, if one did.
    pub interrupted: Option<i32>,
    /// Every call, when asked for.
    pub trace: Vec<Call>,
}

impl Report {
    /// Model calls per second of wall time.
    pub fn calls_per_s(&self) -> f64 {
        self.stats.calls as f64 / self.wall_s.max(1e-9)
    }
}

/// Runs `models` (in id order: the file's order) on `ff`'s timeline; a
/// model's failure ends the run and is the report's `error` (every model
/// is still finished). A signal number stored in `interrupt` stops the run
/// before its next timestamp, as a failure would.
pub fn run(
    ff: &FleetFile,
    threads: usize,
    models: Vec<(String, Box<dyn Model>)>,
    trace: bool,
    interrupt: Option<&AtomicUsize>,
) -> Result<Report, RunError> {
    let mut orch = Orchestrator::new(ff.info, ff.pass_limit, threads)?;
    for (name, m) in models {
        orch.register(&name, m)?;
    }
    if trace {
        orch.keep_trace();
    }
    let start = Instant::now();
    let mut interrupted = None;
    let ran = loop {
        if let Some(sig) = interrupt
            .map(|f| f.load(Ordering::SeqCst))
            .filter(|s| *s != 0)
        {
            interrupted = Some(sig as i32);
            break Ok(());
        }
        match orch.step() {
            Ok(Some(_)) => {}
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        }
    };
    let wall_s = start.elapsed().as_secs_f64();
    let (models, finish_error) = orch.finish_all();
    // The first failure: the run's, else finishing's.
    let error = ran.err().or(finish_error).map(|e| e.to_string());
    Ok(Report {
        stats: orch.stats(),
        last_timestamp: orch.now().unwrap_or(ff.info.start_time),
        models,
        wall_s,
        error: error.or_else(|| {
            interrupted.map(|s| {
                let at = match orch.now() {
                    Some(t) => format!("after timestamp {t}"),
                    None => "before the first timestamp".into(),
                };
                format!("interrupted by {} {at}", lockstep_abi::signal_name(s))
            })
        }),
        interrupted,
        trace: orch.trace().to_vec(),
    })
}
