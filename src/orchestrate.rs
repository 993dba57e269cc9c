//! `lockstep orchestrate FLEET.toml`: an event-driven run of models (seed
//! 004) — the delivery fleet's order stream, no-fly zones, dispatcher, swap
//! station, KPI collector and vehicles — some in their own processes
//! (`--process`, `--remote`; zenoh, in a build with `distributed`), and
//! `lockstep model-host`, the process that serves one model.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use lockstep_abi::Isolation;
use lockstep_delivery::{FleetFile, Report, RunOptions, make_model, threads_of};
use lockstep_orchestrator::Model;

use crate::bundled;
use crate::distributed::NetArgs;
use crate::fly::IsolationArg;
use crate::run::{Exit, Output};

#[derive(Debug, clap::Args)]
pub struct OrchestrateArgs {
    /// The fleet file (TOML: [timeline], [[models]]).
    pub fleet: PathBuf,
    /// Where summary.json (and trace.jsonl) go [default: <fleet's
    /// stem>.orchestrate in the current directory].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// The autopilot of vehicles whose entry names none (default: the
    /// bundled reference autopilot).
    #[arg(long)]
    pub autopilot: Option<PathBuf>,
    /// Threads the models of a cascade's pass are called on [default: the
    /// file's, else the machine's cores].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Where vehicles' autopilots run: `process` (isolated) or `in-process`.
    #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
    pub isolation: IsolationArg,
    /// Run model NAME in a process of its own, started here (`lockstep
    /// model-host`) and called over zenoh. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub process: Vec<String>,
    /// Call model NAME in a process started elsewhere (`lockstep
    /// model-host FLEET --model NAME --network-connect ...` on this or
    /// another machine). Repeatable.
    #[arg(long, value_name = "NAME")]
    pub remote: Vec<String>,
    /// Seconds a model process may take to answer one call before the run
    /// ends [default: 30].
    #[arg(long, value_parser = crate::positive_seconds)]
    pub call_deadline: Option<f64>,
    #[command(flatten)]
    pub net: NetArgs,
    /// Also write every model call to trace.jsonl.
    #[arg(long)]
    pub trace: bool,
    /// Print the summary as one JSON object instead of text.
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, clap::Args)]
pub struct ModelHostArgs {
    /// The fleet file the model is declared in.
    pub fleet: PathBuf,
    /// The model to serve.
    #[arg(long)]
    pub model: String,
    /// The autopilot of a vehicle whose entry names none (default: the
    /// bundled reference autopilot).
    #[arg(long)]
    pub autopilot: Option<PathBuf>,
    /// Where a vehicle's autopilot runs.
    #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
    pub isolation: IsolationArg,
    #[command(flatten)]
    pub net: NetArgs,
}

fn isolation(a: IsolationArg) -> Isolation {
    match a {
        IsolationArg::InProcess => Isolation::InProcess,
        IsolationArg::Process => Isolation::Process(lockstep_abi::IsolationOptions::default()),
    }
}

/// The output directory when `--out` is not given: `<stem>.orchestrate`.
fn default_out(fleet: &Path) -> PathBuf {
    let stem = fleet
        .file_stem()
        .map_or("fleet".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.orchestrate"))
}

fn fail(verb: &str, msg: String, code: Exit) -> ExitCode {
    warn!("lockstep {verb}: {msg}");
    code.into()
}

pub fn run(a: OrchestrateArgs) -> ExitCode {
    let verb = "orchestrate";
    let autopilot = match a.autopilot.clone().map_or_else(bundled::autopilot, Ok) {
        Ok(p) => p,
        Err(e) => return fail(verb, e.to_string(), Exit::ConfigError),
    };
    let ff = match FleetFile::load(&a.fleet) {
        Ok(f) => f,
        Err(e) => return fail(verb, e.to_string(), Exit::ConfigError),
    };
    for n in a.process.iter().chain(&a.remote) {
        if ff.model(n).is_none() {
            let names: Vec<&str> = ff.models.iter().map(|m| m.name.as_str()).collect();
            return fail(
                verb,
                format!(
                    "{} has no model `{n}` (its models: {})",
                    a.fleet.display(),
                    names.join(", ")
                ),
                Exit::ConfigError,
            );
        }
    }
    let out = a.out.clone().unwrap_or_else(|| default_out(&a.fleet));
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(
            verb,
            format!("cannot create {}: {e}", out.display()),
            Exit::ConfigError,
        );
    }
    let ro = RunOptions {
        autopilot,
        isolation: isolation(a.isolation),
        threads: a.threads.map(|t| t as usize),
    };
    let threads = threads_of(&ff, &ro);
    let output = if a.json {
        Output::Json
    } else if a.quiet {
        Output::Quiet
    } else {
        Output::Text
    };
    let elsewhere = !a.process.is_empty() || !a.remote.is_empty();
    let mut processes = if elsewhere {
        match processes::open(&a, &ff, &ro) {
            Ok(p) => Some(p),
            Err(e) => return fail(verb, e.to_string(), Exit::ConfigError),
        }
    } else {
        None
    };
    let mut models: Vec<(String, Box<dyn Model>)> = Vec::with_capacity(ff.models.len());
    for d in &ff.models {
        let m = match &mut processes {
            Some(p) if a.process.contains(&d.name) || a.remote.contains(&d.name) => {
                processes::model(p, &d.name)
            }
            _ => make_model(&ff, d, &ro).map_err(|e| e.to_string()),
        };
        match m {
            Ok(m) => models.push((d.name.clone(), m)),
            Err(e) => return fail(verb, format!("model `{}`: {e}", d.name), Exit::ConfigError),
        }
    }
    let report = match lockstep_delivery::run(&ff, threads, models, a.trace) {
        Ok(r) => r,
        Err(e) => return fail(verb, e.to_string(), Exit::ConfigError),
    };
    if let Some(p) = &mut processes {
        processes::end(p, report.error.is_none());
    }
    write_and_print(&ff, &out, threads, &a, &report, output)
}

fn write_and_print(
    ff: &FleetFile,
    out: &Path,
    threads: usize,
    a: &OrchestrateArgs,
    r: &Report,
    output: Output,
) -> ExitCode {
    let verb = "orchestrate";
    let info = ff.info;
    let summary = serde_json::json!({
        "fleet": ff.path.display().to_string(),
        "description": ff.description,
        "timeline": info,
        "seed": ff.seed,
        "threads": threads,
        "processes": a.process,
        "remote": a.remote,
        "last_timestamp": r.last_timestamp,
        "stats": r.stats,
        "wall_s": r.wall_s,
        "calls_per_s": r.calls_per_s(),
        "error": r.error,
        "models": r.models.iter().cloned().collect::<serde_json::Map<_, _>>(),
    });
    let text = serde_json::to_string_pretty(&summary).expect("a summary is JSON");
    let summary_path = out.join("summary.json");
    if let Err(e) = std::fs::write(&summary_path, format!("{text}\n")) {
        return fail(
            verb,
            format!("cannot write {}: {e}", summary_path.display()),
            Exit::RunError,
        );
    }
    if a.trace {
        let mut lines = String::new();
        for c in &r.trace {
            lines.push_str(&serde_json::to_string(c).expect("a call is JSON"));
            lines.push('\n');
        }
        let p = out.join("trace.jsonl");
        if let Err(e) = std::fs::write(&p, lines) {
            return fail(
                verb,
                format!("cannot write {}: {e}", p.display()),
                Exit::RunError,
            );
        }
    }
    match output {
        Output::Json => say!("{text}"),
        Output::Quiet => {}
        Output::Text => {
            let simulated = info.micros(r.last_timestamp) as f64 * 1e-6;
            say!("fleet       {}", ff.path.display());
            say!(
                "timeline    {} timestamps of {} us, reached {} ({:.1} s)",
                info.duration,
                info.time_scale_us,
                r.last_timestamp,
                simulated
            );
            say!(
                "calls       {} model calls at {} timestamps, {} updates, {} deliveries, at most {} passes",
                r.stats.calls,
                r.stats.timestamps,
                r.stats.updates,
                r.stats.deliveries,
                r.stats.max_passes
            );
            say!(
                "speed       {:.3} s wall, {:.0} calls/s, {:.1}x real time ({} thread{})",
                r.wall_s,
                r.calls_per_s(),
                simulated / r.wall_s.max(1e-9),
                threads,
                if threads == 1 { "" } else { "s" }
            );
            for (name, v) in &r.models {
                if !v.is_null() {
                    say!("{name:<11} {v}");
                }
            }
            say!("summary     {}", summary_path.display());
        }
    }
    if let Some(e) = &r.error {
        return fail(verb, e.clone(), Exit::RunError);
    }
    ExitCode::SUCCESS
}

/// `lockstep model-host`: serves one model of a fleet file.
pub fn model_host(a: ModelHostArgs) -> ExitCode {
    let verb = "model-host";
    let autopilot = match a.autopilot.clone().map_or_else(bundled::autopilot, Ok) {
        Ok(p) => p,
        Err(e) => return fail(verb, e.to_string(), Exit::ConfigError),
    };
    let ff = match FleetFile::load(&a.fleet) {
        Ok(f) => f,
        Err(e) => return fail(verb, e.to_string(), Exit::ConfigError),
    };
    let ro = RunOptions {
        autopilot,
        isolation: isolation(a.isolation),
        threads: Some(1),
    };
    match processes::host(&ff, &a.model, &ro, &a.net) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(verb, format!("model `{}`: {e}", a.model), Exit::RunError),
    }
}

#[cfg(not(feature = "distributed"))]
mod processes {
    use super::*;

    const NO_ZENOH: &str = "this lockstep was built without model processes (zenoh); build it \
                            with `cargo build --release --features distributed`";

    pub struct Processes;

    pub fn open(_: &OrchestrateArgs, _: &FleetFile, _: &RunOptions) -> Result<Processes, String> {
        Err(format!("--process/--remote: {NO_ZENOH}"))
    }

    pub fn model(_: &mut Processes, _: &str) -> Result<Box<dyn Model>, String> {
        Err(NO_ZENOH.into())
    }

    pub fn end(_: &mut Processes, _: bool) {}

    pub fn host(_: &FleetFile, _: &str, _: &RunOptions, _: &NetArgs) -> Result<(), String> {
        Err(NO_ZENOH.into())
    }
}

#[cfg(feature = "distributed")]
mod processes {
    use lockstep_delivery::process::host as serve;
    use lockstep_distributed::remote::Processes;

    use super::*;
    use crate::processes::{Hosted, net_options, spawn_all};

    pub fn open(a: &OrchestrateArgs, ff: &FleetFile, ro: &RunOptions) -> Result<Processes, String> {
        spawn_all(&Hosted {
            verb: "orchestrate",
            host_command: "model-host",
            name_flag: "--model",
            file: &ff.path,
            net: &a.net,
            deadline: a.call_deadline,
            process: &a.process,
            remote: &a.remote,
            autopilot: &ro.autopilot,
            isolation: &ro.isolation,
            out: None,
            what: "model",
        })
    }

    pub fn model(p: &mut Processes, name: &str) -> Result<Box<dyn Model>, String> {
        lockstep_delivery::process::model(p, name)
    }

    pub fn end(p: &mut Processes, finished: bool) {
        p.end(finished);
    }

    pub fn host(ff: &FleetFile, name: &str, ro: &RunOptions, n: &NetArgs) -> Result<(), String> {
        let (net, wait) = net_options(n);
        serve(ff, name, ro, &net, wait)
    }
}
