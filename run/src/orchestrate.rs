//! An orchestrated run of models (a delivery fleet file; seed 004): the
//! order stream, no-fly zones, dispatcher, swap station, KPI collector and
//! vehicles, some in processes of their own ([`Elsewhere`]); in the out
//! directory `summary.json` (and `trace.jsonl`) as a typed
//! [`OrchestrateReport`], each vehicle's flight log `<name>.csv` with its
//! sidecar (written by whichever process flies it), the fleet's plot and
//! the viewer's page of the vehicles. A model can also be served to a run
//! elsewhere ([`host`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use lockstep_abi::Isolation;
use lockstep_delivery::{FleetFile, make_model, vehicle_scenario};
use lockstep_harness::engine::RunOptions;
use lockstep_harness::io::log_meta::sidecar_path;
use lockstep_harness::io::paths::scenario_inputs;
use lockstep_harness::outcome::class::ErrorClass;
use lockstep_orchestrator::Model;

use crate::RunError;
use crate::hosts::{ChildSetup, Elsewhere, HostKind};
use crate::net::Network;
pub use crate::summary::orchestrate::OrchestrateReport;

/// An orchestrated run to make.
#[derive(Debug, Clone)]
pub struct OrchestrateRequest {
    /// The fleet file (TOML: `[timeline]`, `[[models]]`).
    pub fleet: PathBuf,
    /// The autopilot of vehicles whose entry names none.
    pub autopilot: PathBuf,
    /// Where `summary.json` (and `trace.jsonl`), the vehicles' logs, the
    /// plot and the viewer's page go [default: `<fleet's stem>.orchestrate`
    /// in the working directory].
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    /// Threads a cascade's pass is called on [default: the file's, else
    /// the cores].
    pub threads: Option<usize>,
    /// Also write every model call to `trace.jsonl`.
    pub trace: bool,
    /// Models served by processes of their own.
    pub elsewhere: Elsewhere,
    /// A signal number stored here stops the run before its next
    /// timestamp, with everything up to there written.
    pub interrupt: Option<Arc<AtomicUsize>>,
}

impl OrchestrateRequest {
    /// The output directory: the one given, else `<fleet's
    /// stem>.orchestrate` in the working directory.
    pub fn out_dir(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| {
            let stem = self
                .fleet
                .file_stem()
                .map_or("fleet".into(), |s| s.to_string_lossy().into_owned());
            PathBuf::from(format!("{stem}.orchestrate"))
        })
    }
}

/// Runs the fleet file's models to the end of the timeline (or the first
/// failure) and writes the summary (and the trace). `notice` hears lines
/// for the user (processes started, models awaited).
pub fn run(
    request: OrchestrateRequest,
    notice: &dyn Fn(&str),
) -> Result<OrchestrateReport, RunError> {
    let config = RunError::configuration;
    let ff = FleetFile::load(&request.fleet).map_err(|e| config(e.to_string()))?;
    lockstep_delivery::check_vehicle_starts(&ff).map_err(|e| config(e.to_string()))?;
    let names: Vec<&str> = ff.models.iter().map(|m| m.name.as_str()).collect();
    let e = &request.elsewhere;
    e.check_names(&request.fleet, "model", &names)
        .map_err(config)?;
    let out = request.out_dir();
    crate::outputs::make_dir("--out", &out)?;
    check_logs(&ff, &request.autopilot, &out)?;
    let options = RunOptions {
        autopilot: request.autopilot.clone(),
        isolation: request.isolation.clone(),
        log_dir: Some(out.clone()),
        threads: request.threads,
    };
    let threads = options.threads_or(ff.threads);
    let child = ChildSetup {
        file: &ff.path,
        autopilot: &request.autopilot,
        isolation: &request.isolation,
        out: Some(&out),
    };
    let mut hosts = crate::hosts::open_for(e, HostKind::MODEL, child, notice)?;
    let mut models: Vec<(String, Box<dyn Model>)> = Vec::with_capacity(ff.models.len());
    for d in &ff.models {
        let m = match &mut hosts {
            Some(h) if e.has(&d.name) => remote_model(h, &d.name),
            _ => make_model(&ff, d, &options).map_err(|e| e.to_string()),
        };
        match m {
            Ok(m) => models.push((d.name.clone(), m)),
            Err(err) => {
                return Err(e
                    .interrupted("model")
                    .unwrap_or_else(|| config(format!("model `{}`: {err}", d.name))));
            }
        }
    }
    let r = lockstep_delivery::run(
        &ff,
        threads,
        models,
        request.trace,
        request.interrupt.as_deref(),
    )
    .map_err(|e| config(e.to_string()))?;
    if let Some(h) = &mut hosts {
        h.end(r.error.is_none());
    }
    let class = match (r.interrupted, &r.error) {
        (Some(_), _) => Some(ErrorClass::Interrupted),
        (None, Some(_)) => Some(ErrorClass::RunFailure),
        (None, None) => None,
    };
    let mut report = OrchestrateReport {
        fleet: ff.path.display().to_string(),
        description: ff.description.clone(),
        timeline: ff.info,
        seed: ff.seed,
        threads,
        processes: e.process.clone(),
        remote: e.remote.clone(),
        last_timestamp: r.last_timestamp,
        stats: r.stats,
        wall_s: r.wall_s,
        calls_per_s: r.calls_per_s(),
        error: r.error.clone(),
        error_class: class,
        exit_status: class.map_or(0, |c| c.exit_status(r.interrupted)),
        models: r.models.iter().cloned().collect(),
        viewer: None,
        plots: Vec::new(),
        output_errors: Vec::new(),
    };
    let mut failed = Vec::new();
    let logs = vehicle_logs(&report.models);
    if !logs.is_empty() {
        let title = format!(
            "{} — {} vehicles, seed {}",
            file_name(&report.fleet),
            logs.len(),
            report.seed
        );
        let named: Vec<(&str, &Path)> = logs
            .iter()
            .map(|(n, p)| (n.as_str(), p.as_path()))
            .collect();
        let mut shown = report.clone();
        shown.viewer = Some(out.join(crate::summary::FLIGHT_PAGE).display().to_string());
        let drawn = crate::fleet::report::draw_fleet(
            &out,
            &title,
            &named,
            None,
            &crate::view::Crowd::of_orchestration(&shown),
        );
        report.viewer = drawn.viewer;
        report.plots = drawn.plots;
        failed.extend(drawn.errors);
    }
    if let Err(e) = crate::summary::OutDir::new(&out).write_summary(&report.clone().into()) {
        failed.push(e);
    }
    if request.trace {
        let mut lines = String::new();
        for c in &r.trace {
            lines.push_str(&serde_json::to_string(c).expect("a call is JSON"));
            lines.push('\n');
        }
        let p = out.join(crate::summary::TRACE);
        if let Err(e) = std::fs::write(&p, lines) {
            failed.push(format!("cannot write {}: {e}", p.display()));
        }
    }
    if !failed.is_empty() {
        report.output_errors = failed;
        report.error_class = Some(ErrorClass::RunFailure);
        report.exit_status = ErrorClass::RunFailure.exit_status(None);
    }
    Ok(report)
}

/// A path's file name (the whole path when it has none).
fn file_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .map_or(path.to_string(), |f| f.to_string_lossy().into_owned())
}

/// The vehicles' logs the models' last words name (those that exist: a
/// vehicle served elsewhere wrote its log on its own machine).
fn vehicle_logs(models: &BTreeMap<String, serde_json::Value>) -> Vec<(String, PathBuf)> {
    models
        .iter()
        .filter_map(|(name, said)| Some((name.clone(), PathBuf::from(said["log"].as_str()?))))
        .filter(|(_, p)| p.exists())
        .collect()
}

/// Refuses a vehicle's log (or its sidecar) that would overwrite one of
/// its inputs or another output, before any model is made.
fn check_logs(ff: &FleetFile, autopilot: &Path, dir: &Path) -> Result<(), RunError> {
    let config = |e: lockstep_delivery::RunError| RunError::configuration(e.to_string());
    let summary = dir.join(crate::summary::SUMMARY);
    let trace = dir.join(crate::summary::TRACE);
    let page = dir.join(crate::summary::FLIGHT_PAGE);
    let [png, svg] = lockstep_plot::output_files(&dir.join(crate::summary::FLEET_PLOT));
    for d in &ff.models {
        let Some(s) = vehicle_scenario(ff, d).map_err(config)? else {
            continue;
        };
        if s.cadence("log").is_none() {
            continue;
        }
        let lockstep_delivery::ModelKind::Vehicle {
            scenario,
            autopilot: own,
            ..
        } = &d.kind
        else {
            continue;
        };
        let ap = own.as_deref().unwrap_or(autopilot);
        let log = lockstep_fleet::run::log_path(dir, &d.name);
        let sidecar = sidecar_path(&log);
        let what = format!("model `{}`'s log", d.name);
        let mut inputs = scenario_inputs(scenario, ap, &s);
        inputs.push(("the fleet file", &ff.path));
        crate::outputs::check_against_inputs(
            &inputs,
            &[
                ("the summary", &summary),
                ("the trace", &trace),
                ("the viewer's page", &page),
                ("the fleet's plot", &png),
                ("the fleet's plot", &svg),
                (&what, &log),
                ("its sidecar", &sidecar),
            ],
        )?;
    }
    Ok(())
}

/// Model `name` served by another process.
#[cfg(feature = "distributed")]
fn remote_model(h: &mut crate::hosts::Hosts, name: &str) -> Result<Box<dyn Model>, String> {
    lockstep_delivery::process::model(h, name)
}

#[cfg(not(feature = "distributed"))]
fn remote_model(_: &mut crate::hosts::Hosts, _: &str) -> Result<Box<dyn Model>, String> {
    Err(crate::net::NO_NETWORK.into())
}

/// One model of a fleet file served to a run elsewhere.
#[derive(Debug, Clone)]
pub struct HostRequest {
    pub fleet: PathBuf,
    pub model: String,
    pub autopilot: PathBuf,
    pub isolation: Isolation,
    /// Where a vehicle model writes its log, as `<out>/<name>.csv`.
    pub out: Option<PathBuf>,
    pub net: Network,
}

/// Serves one model until the run finishes, its caller leaves, or none
/// comes within the network's wait.
pub fn host(request: HostRequest) -> Result<(), RunError> {
    crate::net::available()?;
    let ff = FleetFile::load(&request.fleet).map_err(|e| RunError::configuration(e.to_string()))?;
    if let Some(out) = &request.out {
        crate::outputs::make_dir("--out", out)?;
        check_logs(&ff, &request.autopilot, out)?;
    }
    let options = RunOptions {
        autopilot: request.autopilot.clone(),
        isolation: request.isolation.clone(),
        log_dir: request.out.clone(),
        threads: Some(1),
    };
    serve(&ff, &request.model, &options, &request.net)
        .map_err(|e| RunError::run_failure(format!("model `{}`: {e}", request.model)))
}

#[cfg(feature = "distributed")]
fn serve(ff: &FleetFile, name: &str, o: &RunOptions, net: &Network) -> Result<(), String> {
    lockstep_delivery::process::host(ff, name, o, &crate::hosts::serving(net), net.wait())
}

#[cfg(not(feature = "distributed"))]
fn serve(_: &FleetFile, _: &str, _: &RunOptions, _: &Network) -> Result<(), String> {
    Err(crate::hosts::refuse_serving())
}
