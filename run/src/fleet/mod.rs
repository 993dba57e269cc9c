//! A fleet scenario (`[[vehicles]]`): every vehicle's log in the out
//! directory, the fleet's encounters, each vehicle's verdict, as a
//! [`FleetReport`] that is the same whether the fleet ran on threads of
//! this process ([`prepare`]) or across a primary and its secondaries
//! ([`distributed`], feature `distributed`).

pub mod distributed;
pub(crate) mod report;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_fleet::{Fleet, FleetError, FleetScenario};
use lockstep_harness::engine::RunOptions;
use lockstep_harness::inputs::scenario::Override;
use lockstep_harness::io::log_meta::sidecar_path;
use lockstep_harness::outcome::class::{Classified, ErrorClass, Part};

pub use crate::summary::fleet::{
    EncounterReport, FleetReport, FleetRun, FleetVehicle, Percentiles, RoundPartsSeconds, Rounds,
};
pub use report::Ending;

use crate::RunError;
use crate::outputs::{check_against_inputs, make_dir, scenario_inputs};

/// Whether the scenario at `path` is a fleet (has `[[vehicles]]`).
pub fn is_fleet(path: &Path) -> Result<bool, RunError> {
    lockstep_fleet::scenario::is_fleet(path).map_err(|e| RunError::configuration(e.to_string()))
}

/// A fleet to fly on threads of this process.
#[derive(Debug, Clone)]
pub struct FleetRequest {
    pub scenario: PathBuf,
    /// The autopilot of vehicles that name none.
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    /// Every vehicle's log (`<name>.csv`) and `summary.json`.
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    /// Threads stepping the vehicles (the result does not depend on it).
    pub threads: usize,
}

/// What is about to fly.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetHeader {
    pub scenario: PathBuf,
    pub description: Option<String>,
    pub vehicles: usize,
    pub sync_period_us: u64,
    pub autopilot: PathBuf,
    pub seed: u64,
}

impl FleetHeader {
    fn of(scenario: &Path, fs: &FleetScenario, autopilot: &Path) -> FleetHeader {
        FleetHeader {
            scenario: scenario.to_path_buf(),
            description: fs.description.clone(),
            vehicles: fs.vehicles.len(),
            sync_period_us: fs.sync.0,
            autopilot: autopilot.to_path_buf(),
            seed: fs.seed,
        }
    }
}

/// Loads the fleet scenario with its overrides.
pub fn load(scenario: &Path, overrides: &[Override]) -> Result<FleetScenario, RunError> {
    FleetScenario::load_with(scenario, overrides)
        .map_err(|e| RunError::configuration(e.to_string()))
}

/// A fleet built and ready to fly.
pub struct PreparedFleet {
    request: FleetRequest,
    fs: FleetScenario,
    fleet: Fleet,
    /// Served to ground stations: each vehicle its own system id.
    gcs: Option<crate::gcs::Gcs>,
}

impl std::fmt::Debug for PreparedFleet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedFleet")
            .field("scenario", &self.request.scenario)
            .finish_non_exhaustive()
    }
}

/// The classification of a fleet's error.
fn classify(e: &FleetError, building: bool) -> Classified {
    match e {
        FleetError::Vehicle { source, .. } if building => {
            lockstep_harness::engine::classify::classify_build(source)
        }
        FleetError::Vehicle { source, .. } => lockstep_harness::engine::classify::classify(source),
        FleetError::Interrupted { signal, .. } => Classified {
            class: ErrorClass::Interrupted,
            part: Part::Signal,
            signal: Some(*signal),
        },
        FleetError::Overlap(_) => Classified {
            class: ErrorClass::Configuration,
            part: Part::Input,
            signal: None,
        },
        FleetError::Threads { .. }
        | FleetError::LogDir { .. }
        | FleetError::GroundStation { .. } => Classified {
            class: ErrorClass::RunFailure,
            part: Part::Output,
            signal: None,
        },
    }
}

/// Refuses a vehicle's log (or its sidecar) that would overwrite one of
/// its inputs or the summary, as `fly` refuses its own.
pub(crate) fn check_logs(
    scenario: &Path,
    autopilot: &Path,
    fs: &FleetScenario,
    dir: &Path,
) -> Result<(), RunError> {
    let summary = dir.join(crate::summary::SUMMARY);
    let page = dir.join(crate::summary::FLIGHT_PAGE);
    let [plot_png, plot_svg] = lockstep_plot::output_files(&dir.join(crate::summary::FLEET_PLOT));
    for v in fs
        .vehicles
        .iter()
        .filter(|v| v.scenario.cadence("log").is_some())
    {
        let log = lockstep_fleet::run::log_path(dir, &v.name);
        let sidecar = sidecar_path(&log);
        let what = format!("vehicle `{}`'s log", v.name);
        let autopilot = v.autopilot.as_deref().unwrap_or(autopilot);
        check_against_inputs(
            &scenario_inputs(scenario, autopilot, &v.scenario),
            &[
                ("the summary", &summary),
                ("the viewer's page", &page),
                ("the fleet's plot", &plot_png),
                ("the fleet's plot", &plot_svg),
                (&what, &log),
                ("its sidecar", &sidecar),
            ],
        )?;
    }
    Ok(())
}

/// Loads the fleet, creates the out directory, builds every vehicle.
pub fn prepare(request: FleetRequest) -> Result<PreparedFleet, RunError> {
    let fs = load(&request.scenario, &request.overrides)?;
    if let Some(dir) = &request.out {
        make_dir("--out", dir)?;
        check_logs(&request.scenario, &request.autopilot, &fs, dir)?;
    }
    let options = RunOptions {
        autopilot: request.autopilot.clone(),
        log_dir: request.out.clone(),
        isolation: request.isolation.clone(),
        threads: Some(request.threads),
    };
    let fleet = Fleet::new(&fs, &options)
        .map_err(|e| RunError::classified(classify(&e, true), e.to_string()))?;
    Ok(PreparedFleet {
        request,
        fs,
        fleet,
        gcs: None,
    })
}

impl PreparedFleet {
    pub fn header(&self) -> FleetHeader {
        FleetHeader::of(&self.request.scenario, &self.fs, &self.request.autopilot)
    }

    /// A signal number stored in `flag` stops the fleet at its next sync
    /// boundary.
    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.fleet.interrupt_on(flag);
    }

    /// Serves the fleet to ground stations over MAVLink: the vehicles are
    /// systems 1, 2, ... in the scenario's order, on one link; inputs are
    /// recorded with the vehicle's name (`DIR/mavlink-inputs.jsonl` with
    /// `--out`) and replayed by it.
    pub fn serve(&mut self, options: &crate::gcs::GcsOptions) -> Result<(), RunError> {
        check_record(
            &self.request.scenario,
            &self.request.autopilot,
            self.request.out.as_deref(),
            &self.fs,
            options,
        )?;
        let vehicles = self
            .fs
            .vehicles
            .iter()
            .map(|v| {
                let params = v.scenario.autopilot_params.keys().cloned().collect();
                (v.name.clone(), params)
            })
            .collect();
        self.gcs =
            Some(crate::gcs::Gcs::open_fleet(options, vehicles).map_err(RunError::configuration)?);
        Ok(())
    }

    /// Keeps the fleet to the wall clock: `speed` simulated seconds per
    /// second; the outputs do not change.
    pub fn pace(&mut self, speed: f64) {
        self.fleet.pace(speed);
    }

    /// Flies the fleet to its end (or the first error), then writes the
    /// summary.
    pub fn run(mut self) -> FleetReport {
        let started = Instant::now();
        let result = match &mut self.gcs {
            Some(gcs) => self.fleet.run_with(|_| {}, |engines| gcs.serve(engines)),
            None => self.fleet.run(),
        };
        let wall = started.elapsed().as_secs_f64();
        let ending: Ending = match result {
            Ok(s) => Ok(s.fleet),
            Err(e) => Err((e.to_string(), classify(&e, false))),
        };
        let out = self.request.out.as_deref();
        let mut report = FleetReport::new(
            &self.request.scenario,
            &self.fs,
            out,
            FleetRun::Threads {
                threads: self.request.threads,
            },
            self.fleet.now().0,
            wall,
            ending,
        );
        if let Some(gcs) = &self.gcs {
            report.link_notes = gcs.notes();
        }
        report.write_summary(out);
        report
    }
}

/// Neither an input (each vehicle's scenario and autopilot, the replay)
/// nor another output of the fleet may be the record of `options`.
pub(crate) fn check_record(
    scenario: &Path,
    autopilot: &Path,
    out: Option<&Path>,
    fs: &FleetScenario,
    options: &crate::gcs::GcsOptions,
) -> Result<(), RunError> {
    if let Some(record) = &options.record {
        let dir = out.map(Path::to_path_buf);
        let summary = dir.as_ref().map(|d| d.join(crate::summary::SUMMARY));
        let page = dir.as_ref().map(|d| d.join(crate::summary::FLIGHT_PAGE));
        let plots = dir
            .as_ref()
            .map(|d| lockstep_plot::output_files(&d.join(crate::summary::FLEET_PLOT)));
        for v in &fs.vehicles {
            let autopilot = v.autopilot.as_deref().unwrap_or(autopilot);
            let mut inputs = scenario_inputs(scenario, autopilot, &v.scenario);
            if let Some(r) = &options.replay {
                inputs.push(("--mavlink-replay", r.as_path()));
            }
            let log = dir
                .as_ref()
                .map(|d| lockstep_fleet::run::log_path(d, &v.name));
            let sidecar = log.as_deref().map(sidecar_path);
            let mut outputs: Vec<(&str, &Path)> = Vec::new();
            for (what, p) in [
                ("the summary", summary.as_deref()),
                ("the viewer's page", page.as_deref()),
                ("the fleet's plot", plots.as_ref().map(|p| p[0].as_path())),
                ("the fleet's plot", plots.as_ref().map(|p| p[1].as_path())),
                ("a vehicle's log", log.as_deref()),
                ("its sidecar", sidecar.as_deref()),
            ] {
                if let Some(p) = p {
                    outputs.push((what, p));
                }
            }
            // The record last: checked against the outputs before it.
            outputs.push(("--mavlink-record", record.as_path()));
            check_against_inputs(&inputs, &outputs)?;
        }
    }
    Ok(())
}
