//! A flight of one vehicle: the scenario with its overrides, the outputs
//! the request names (an out directory gives the log, the plots and the
//! summary their places), their preconditions checked before the engine is
//! built, the flight, the exports after it, and a typed [`FlightReport`].
//!
//! Two steps, so a front end can say what is about to fly: [`prepare`]
//! (everything that can be refused is refused here) and
//! [`Prepared::fly`]; [`fly`] does both.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::io::log::LogRow;
use lockstep_harness::io::log_meta::sidecar_path;
use lockstep_harness::outcome::class::ErrorClass;
use lockstep_harness::outcome::{Summary, class::EXIT_SUCCESS};

pub use crate::summary::flight::{
    FlightReport, LogReport, Outcome, REPORT_VERSION, ReportContext, real_time_factor, report,
};

use crate::RunError;
use crate::choice::Spelling;
use crate::outputs::{check_against_inputs, make_dir, scenario_inputs};
use crate::summary::OutDir;

/// What to fly and what to write.
#[derive(Debug, Clone)]
pub struct FlightRequest {
    pub scenario: ScenarioSource,
    pub autopilot: PathBuf,
    /// Applied to the scenario's keys before validation, in order (a
    /// scenario already loaded takes none).
    pub overrides: Vec<Override>,
    pub outputs: FlightOutputs,
    pub isolation: Isolation,
    /// How the front end spells the outputs in messages (`--log`,
    /// `log=`, `options.log_path`).
    pub spelling: Spelling,
}

/// The scenario of a flight: a file read (with the overrides), or one a
/// front end loaded itself (a C host's text, an environment's episode with
/// its draw applied), its relative paths already resolved.
#[derive(Debug, Clone)]
pub enum ScenarioSource {
    File(PathBuf),
    Loaded(Box<Scenario>),
}

impl ScenarioSource {
    /// The scenario, read with `overrides` applied (a loaded one takes
    /// none).
    pub fn load(self, overrides: &[Override]) -> Result<Scenario, RunError> {
        match self {
            ScenarioSource::File(path) => Scenario::load_with(&path, overrides)
                .map_err(|e| RunError::configuration(e.to_string())),
            ScenarioSource::Loaded(_) if !overrides.is_empty() => {
                Err(RunError::configuration(format!(
                    "{}: a scenario already loaded takes no overrides",
                    overrides[0].key
                )))
            }
            ScenarioSource::Loaded(s) => Ok(*s),
        }
    }

    /// The scenario's file (for a text, the file it stands for).
    pub fn path(&self) -> &Path {
        match self {
            ScenarioSource::File(p) => p,
            ScenarioSource::Loaded(s) => &s.file,
        }
    }
}

impl From<PathBuf> for ScenarioSource {
    fn from(p: PathBuf) -> ScenarioSource {
        ScenarioSource::File(p)
    }
}

/// The files a flight writes. With `out`, the log (when the scenario has a
/// `log` cadence and no `log` is given) is `out/log.csv`, the plots
/// `out/flight.png` and `.svg`, the viewer's page `out/flight.html`, and
/// the report `out/summary.json`.
#[derive(Debug, Clone, Default)]
pub struct FlightOutputs {
    /// The CSV log (needs a `log` cadence).
    pub log: Option<PathBuf>,
    /// The plant's inputs at every boundary, for a replay.
    pub record: Option<PathBuf>,
    /// The log again as ULog (needs a log).
    pub ulog: Option<PathBuf>,
    /// Plots of the log as `<stem>.png` and `<stem>.svg` (needs a log).
    pub plot: Option<PathBuf>,
    /// A directory for everything the run writes.
    pub out: Option<PathBuf>,
}

/// What is about to fly, for a front end to say so.
#[derive(Debug, Clone, PartialEq)]
pub struct FlightHeader {
    pub scenario: PathBuf,
    pub description: Option<String>,
    pub autopilot: PathBuf,
    pub isolated: bool,
    /// A flight stack flies (over its simulator link), not a library.
    pub flight_stack: bool,
    pub vehicle: String,
    pub rotors: usize,
    pub seed: u64,
    pub duration_us: u64,
}

/// A flight built and ready: the engine is built (library loaded and
/// validated, outputs opened).
pub struct Prepared {
    request: FlightRequest,
    scenario: Scenario,
    engine: Engine,
    log: Option<PathBuf>,
    plot: Option<PathBuf>,
    /// The viewer's page (with `out` and a log).
    page: Option<PathBuf>,
    /// Where the summary goes (`out`).
    out: Option<OutDir>,
    isolated: bool,
    /// The flight stack flying instead of a library (kind and address).
    stack: Option<String>,
    /// The ground stations served, if any.
    gcs: Option<crate::gcs::Gcs>,
}

impl std::fmt::Debug for Prepared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prepared")
            .field("scenario", &self.request.scenario.path())
            .finish_non_exhaustive()
    }
}

/// Flies `request`, reporting progress (simulated µs) to `observe`.
pub fn fly(request: FlightRequest, observe: impl FnMut(u64)) -> Result<FlightReport, RunError> {
    Ok(prepare(request)?.fly(observe))
}

/// The run's id, a ULog's `sys_uuid`: a digest of what decides the flight
/// (the scenario file's text, the overrides, the seed, the autopilot's
/// file name), so the same run has the same id.
fn run_id(request: &FlightRequest, s: &Scenario) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(std::fs::read(request.scenario.path()).unwrap_or_default());
    for o in &request.overrides {
        h.update(o.given_as.as_bytes());
        h.update([0]);
    }
    h.update(s.seed.to_le_bytes());
    h.update(
        request
            .autopilot
            .file_name()
            .map(|f| f.as_encoded_bytes())
            .unwrap_or_default(),
    );
    let d = h.finalize();
    d[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// Loads the scenario, derives and checks the outputs, builds the engine:
/// every flight a front end flies or steps (the CLI, the C ABI, Python's
/// runs, `Sim` and environments) is prepared here, so a check added here
/// reaches them all.
pub fn prepare(mut request: FlightRequest) -> Result<Prepared, RunError> {
    let config = RunError::configuration;
    // Loaded here once; the request keeps the scenario's path.
    let scenario_path = request.scenario.path().to_path_buf();
    let source = std::mem::replace(
        &mut request.scenario,
        ScenarioSource::File(scenario_path.clone()),
    );
    let s = source.load(&request.overrides)?;
    let arg = |name: &str| request.spelling.arg(name);
    let o = &request.outputs;
    let has_log_cadence = s.cadence("log").is_some();
    let mut log = o.log.clone();
    let mut plot = o.plot.clone();
    let mut page = None;
    let out = o.out.as_ref().map(OutDir::new);
    if let Some(dir) = &out {
        make_dir(&arg("out"), dir.path())?;
        if log.is_none() && has_log_cadence {
            log = Some(dir.log());
        }
        if plot.is_none() && has_log_cadence {
            plot = Some(dir.file(crate::summary::FLIGHT_PLOT));
        }
        if log.is_some() && has_log_cadence {
            page = Some(dir.flight_page());
        }
    }
    let summary = out.as_ref().map(OutDir::summary);
    let sidecar = log.as_deref().map(sidecar_path);
    let plot_files: Vec<PathBuf> = plot
        .iter()
        .flat_map(|stem| lockstep_plot::output_files(stem))
        .collect();
    let (log_arg, record_arg, ulog_arg) = (arg("log"), arg("record"), arg("ulog"));
    let outputs: Vec<(&str, &Path)> = [
        (log_arg.as_str(), log.as_deref()),
        ("a plot", plot_files.first().map(PathBuf::as_path)),
        ("a plot", plot_files.get(1).map(PathBuf::as_path)),
        ("the viewer's page", page.as_deref()),
        ("the log's sidecar", sidecar.as_deref()),
        (record_arg.as_str(), o.record.as_deref()),
        (ulog_arg.as_str(), o.ulog.as_deref()),
        ("the summary", summary.as_deref()),
    ]
    .into_iter()
    .filter_map(|(w, p)| p.map(|p| (w, p)))
    .collect();
    let inputs = scenario_inputs(&scenario_path, &request.autopilot, &s);
    check_against_inputs(&inputs, &outputs)?;
    // "or --set cadences.log.rate_hz=10", where the front end can set keys.
    let or_set = |hz: &str| {
        request
            .spelling
            .set_key("cadences.log.rate_hz", hz)
            .map_or_else(String::new, |s| format!(", or {s}"))
    };
    if o.plot.is_some() && (log.is_none() || !has_log_cadence) {
        return Err(config(format!(
            "{} needs a log: give {log_arg} or {}, and a `log` cadence under [cadences] (add \
             one{})",
            arg("plot"),
            arg("out"),
            or_set("10")
        )));
    }
    if o.ulog.is_some() && !has_log_cadence {
        return Err(config(format!(
            "{ulog_arg} writes its state topics at the `log` cadence, and {} has none under \
             [cadences] (add one{})",
            scenario_path.display(),
            or_set("100")
        )));
    }
    if o.log.is_some() && !has_log_cadence {
        return Err(config(format!(
            "{log_arg} given but {} has no `log` cadence under [cadences] (add one{})",
            scenario_path.display(),
            or_set("10")
        )));
    }
    let autopilot = request.autopilot.as_path();
    let mut engine = Engine::with_isolation(&s, autopilot, log.as_deref(), &request.isolation)
        .map_err(|e| {
            let mut r = RunError::of_build(&e);
            if matches!(e, EngineError::Abi(_))
                && s.stack.is_none()
                && !r.message.contains(&autopilot.display().to_string())
            {
                r.context
                    .push(format!("autopilot library: {}", autopilot.display()));
            }
            r
        })?;
    if let Some(r) = &o.record {
        engine.record_to(r).map_err(|e| RunError::of_build(&e))?;
    }
    if let Some(u) = &o.ulog {
        engine
            .ulog_to(u, &s.autopilot_params, &run_id(&request, &s))
            .map_err(|e| RunError::of_build(&e))?;
    }
    // Read before the run: closing the instance at its end forgets it.
    let isolated = engine.autopilot().is_isolated();
    let stack = engine.autopilot().stack_description();
    Ok(Prepared {
        stack,
        gcs: None,
        request,
        scenario: s,
        engine,
        log,
        plot,
        page,
        out,
        isolated,
    })
}

impl Prepared {
    /// What is about to fly.
    pub fn header(&self) -> FlightHeader {
        FlightHeader {
            scenario: self.request.scenario.path().to_path_buf(),
            description: self.scenario.description.clone(),
            autopilot: self
                .stack
                .as_ref()
                .map_or_else(|| self.request.autopilot.clone(), PathBuf::from),
            isolated: self.isolated,
            flight_stack: self.stack.is_some(),
            vehicle: self.engine.plant().name.clone(),
            rotors: self.engine.plant().rotors.len(),
            seed: self.scenario.seed,
            duration_us: self.scenario.duration.0,
        }
    }

    /// A signal number stored in `flag` stops the flight at its next
    /// boundary (everything up to there is written).
    pub fn interrupt_on(&mut self, flag: Arc<AtomicUsize>) {
        self.engine.interrupt_on(flag);
    }

    /// Serves the flight to ground stations over MAVLink (or replays the
    /// inputs they gave a flight before): see [`crate::gcs`].
    pub fn serve(&mut self, options: &crate::gcs::GcsOptions) -> Result<(), RunError> {
        let config = RunError::configuration;
        if self.stack.is_some() {
            return Err(config(String::from(
                "a flight stack has ground-station links of its own (PX4's and ArduPilot's \
                 MAVLink ports): --mavlink serves an autopilot.h library's flight",
            )));
        }
        if let Some(record) = &options.record {
            let mut inputs = scenario_inputs(
                self.request.scenario.path(),
                &self.request.autopilot,
                &self.scenario,
            );
            if let Some(r) = &options.replay {
                inputs.push(("--mavlink-replay", r.as_path()));
            }
            let sidecar = self.log.as_deref().map(sidecar_path);
            let summary = self.out.as_ref().map(OutDir::summary);
            // The record last: checked against the outputs before it.
            let mut outputs: Vec<(&str, &Path)> = Vec::new();
            for (what, p) in [
                ("the log", self.log.as_deref()),
                ("the log's sidecar", sidecar.as_deref()),
                ("the summary", summary.as_deref()),
                ("--record", self.request.outputs.record.as_deref()),
                ("--ulog", self.request.outputs.ulog.as_deref()),
            ] {
                if let Some(p) = p {
                    outputs.push((what, p));
                }
            }
            outputs.push(("--mavlink-record", record.as_path()));
            check_against_inputs(&inputs, &outputs)?;
        }
        let names = self.scenario.autopilot_params.keys().cloned().collect();
        self.gcs = Some(crate::gcs::Gcs::open(options, names).map_err(RunError::configuration)?);
        Ok(())
    }

    /// Keeps the flight to the wall clock: `speed` simulated seconds per
    /// second (1: real time); the outputs do not change.
    pub fn pace(&mut self, speed: f64) {
        self.engine.pace(speed);
    }

    /// Flies to the end (or the first error), then writes the exports and
    /// the summary; `observe` sees the simulated time now and then.
    pub fn fly(mut self, observe: impl FnMut(u64)) -> FlightReport {
        self.fly_here(observe)
    }

    /// [`Prepared::fly`], keeping the log's rows in memory as well (whether
    /// or not a log file is written): for a front end that hands them over
    /// as columns. Their digest ([`lockstep_harness::io::log::digest_of`])
    /// is the log file's.
    pub fn fly_keeping_rows(mut self, observe: impl FnMut(u64)) -> (FlightReport, Vec<LogRow>) {
        self.engine.capture_rows();
        let report = self.fly_here(observe);
        (report, self.engine.take_rows())
    }

    /// The flight to be stepped by its front end instead of flown in one
    /// call (the plots, ULog and summary, written after a whole flight, are
    /// not written then).
    pub fn into_session(self) -> crate::session::Session {
        let context = self.context();
        crate::session::Session::new(self.engine, context)
    }

    /// The engine built, for a run layer's own loop over it (a Monte Carlo
    /// run measures its end state; nothing of the report is made).
    pub(crate) fn into_engine(self) -> Engine {
        self.engine
    }

    /// An empty log row shaped for this vehicle.
    pub fn row_shape(&self) -> LogRow {
        self.engine.row_shape()
    }

    fn fly_here(&mut self, mut observe: impl FnMut(u64)) -> FlightReport {
        let started = Instant::now();
        let result = match &mut self.gcs {
            Some(gcs) => self.engine.run_with(
                |t| observe(t.0),
                |e| {
                    gcs.serve_one(e)
                        .map_err(|reason| EngineError::GroundStation { reason })
                },
            ),
            None => self.engine.run_observed(|t| observe(t.0)),
        };
        let wall = started.elapsed().as_secs_f64();
        let mut report = self.report(&result, wall);
        if let Some(gcs) = &self.gcs {
            report.link_notes.extend(gcs.notes());
        }
        self.write_exports(&mut report);
        if let Some(out) = &self.out
            && let Err(e) = out.write_summary(&report.clone().into())
        {
            report.output_errors.push(e);
            report.exit_status = ErrorClass::RunFailure.exit_status(None);
            report.error_class = Some(ErrorClass::RunFailure);
        }
        report
    }

    fn report(&self, result: &Result<Summary, EngineError>, wall: f64) -> FlightReport {
        let mut r = report(&self.context(), &self.engine, result, wall);
        r.dropped_events.clone_from(&self.scenario.dropped_events);
        // The ULog is written as the run flies: there unless writing it
        // failed (that error is the run's).
        if !matches!(result, Err(EngineError::Ulog(_))) {
            r.ulog = self
                .request
                .outputs
                .ulog
                .as_ref()
                .map(|u| u.display().to_string());
        }
        r
    }

    fn context(&self) -> ReportContext {
        ReportContext {
            scenario: self.request.scenario.path().display().to_string(),
            description: self.scenario.description.clone(),
            overrides: self.request.overrides.clone(),
            autopilot: self
                .stack
                .clone()
                .unwrap_or_else(|| self.request.autopilot.display().to_string()),
            isolated: self.isolated,
            seed: self.scenario.seed,
            log: self.log.clone(),
            recording: self.request.outputs.record.clone(),
        }
    }

    /// The plots and the viewer's page, from the log as written; a failure
    /// is an output error (and a run failure when the flight itself
    /// succeeded).
    fn write_exports(&self, report: &mut FlightReport) {
        let Some(l) = report.log.as_ref() else {
            return;
        };
        let log = PathBuf::from(&l.path);
        // A log whose writing failed before its first row: the exports
        // say why they are missing (the log's own error, reported first,
        // says what failed), not that the log is empty.
        if !l.complete && l.rows == 0 {
            let why = "not written: writing the flight log failed before its first row";
            if self.plot.is_some() {
                report.output_errors.push(format!("plots: {why}"));
            }
            if self.page.is_some() {
                report
                    .output_errors
                    .push(format!("the viewer's page: {why}"));
            }
            return;
        }
        let mut failed = false;
        if let Some(stem) = &self.plot {
            match crate::plots::draw(&log, stem) {
                Ok(files) => report.plots = files.iter().map(|f| f.display().to_string()).collect(),
                Err(e) => {
                    report.output_errors.push(format!("plots: {e}"));
                    failed = true;
                }
            }
        }
        if let Some(page) = &self.page {
            // The page shows the report as summary.json will hold it.
            let mut shown = report.clone();
            shown.viewer = Some(page.display().to_string());
            match crate::view::flight(&log, Some(&shown), page) {
                Ok(()) => report.viewer = shown.viewer,
                Err(e) => {
                    report.output_errors.push(format!("the viewer's page: {e}"));
                    failed = true;
                }
            }
        }
        if failed && report.exit_status == EXIT_SUCCESS {
            report.exit_status = ErrorClass::RunFailure.exit_status(None);
            report.error_class = Some(ErrorClass::RunFailure);
        }
    }
}
