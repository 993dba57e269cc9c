//! `lockstep cosim SYSTEM.toml`: a co-simulation of vehicles, FMUs and
//! transfer functions (lockstep-cosim); the record `cosim.csv`, each
//! vehicle's flight log and `summary.json` in `--out`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_cosim::CosimError;
use lockstep_cosim::assemble::{RunOptions, assemble_with, make_participant, threads_of};
use lockstep_cosim::file::{FileMode, SystemFile};
use lockstep_cosim::record::Recorder;
use lockstep_harness::outcome::report::{file_digest, real_time_factor};

use crate::bundled;
use crate::fly::IsolationArg;
use crate::run::{Exit, Output};

#[derive(Debug, clap::Args)]
pub struct CosimArgs {
    /// The system file (TOML: [cosim], [[participants]], [[transfers]]).
    pub system: PathBuf,
    /// Where the record, the vehicles' logs and summary.json go
    /// [default: <system's stem>.cosim in the current directory].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// The autopilot of vehicles whose entry names none (default: the
    /// bundled reference autopilot).
    #[arg(long)]
    pub autopilot: Option<PathBuf>,
    /// Step the participants one after another (the same bits as in
    /// parallel, on one thread).
    #[arg(long, conflicts_with = "threads")]
    pub serialized: bool,
    /// Worker threads of the parallel mode [default: the file's, else the
    /// machine's cores].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Where vehicles' autopilots run: `process` (isolated) or `in-process`.
    #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
    pub isolation: IsolationArg,
    /// Run participant NAME in a process of its own, started here
    /// (`lockstep participant-host`) and called over zenoh. Repeatable.
    #[arg(long, value_name = "NAME")]
    pub process: Vec<String>,
    /// Call participant NAME in a process started elsewhere (`lockstep
    /// participant-host SYSTEM --participant NAME --network-connect ...` on
    /// this or another machine). Repeatable.
    #[arg(long, value_name = "NAME")]
    pub remote: Vec<String>,
    /// Seconds a participant process may take to answer one call before
    /// the run ends [default: 30].
    #[arg(long, value_parser = crate::positive_seconds)]
    pub call_deadline: Option<f64>,
    #[command(flatten)]
    pub net: crate::distributed::NetArgs,
    /// Print the summary as one JSON object instead of text.
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, clap::Args)]
pub struct ParticipantHostArgs {
    /// The system file the participant is declared in.
    pub system: PathBuf,
    /// The participant to serve.
    #[arg(long)]
    pub participant: String,
    /// The autopilot of a vehicle whose entry names none (default: the
    /// bundled reference autopilot).
    #[arg(long)]
    pub autopilot: Option<PathBuf>,
    /// Where a vehicle's autopilot runs.
    #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
    pub isolation: IsolationArg,
    /// Where a vehicle participant writes its log, as `<OUT>/<name>.csv`
    /// (created if needed; `lockstep cosim --process` gives its own --out)
    /// [default: no log].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub net: crate::distributed::NetArgs,
}

/// `lockstep cosim`: the arguments into options.
pub fn run(a: CosimArgs) -> ExitCode {
    let autopilot = match a.autopilot.map_or_else(bundled::autopilot, Ok) {
        Ok(p) => p,
        Err(e) => {
            warn!("lockstep cosim: {e}");
            return Exit::ConfigError.into();
        }
    };
    command(CosimOptions {
        system: a.system,
        autopilot,
        out: a.out,
        isolation: match a.isolation {
            IsolationArg::InProcess => Isolation::InProcess,
            IsolationArg::Process => Isolation::Process(lockstep_abi::IsolationOptions::default()),
        },
        serialized: a.serialized,
        threads: a.threads.map(|t| t as usize),
        process: a.process,
        remote: a.remote,
        call_deadline: a.call_deadline,
        net: a.net,
        output: if a.json {
            Output::Json
        } else if a.quiet {
            Output::Quiet
        } else {
            Output::Text
        },
    })
}

pub struct CosimOptions {
    pub system: PathBuf,
    pub autopilot: PathBuf,
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    pub serialized: bool,
    pub threads: Option<usize>,
    pub process: Vec<String>,
    pub remote: Vec<String>,
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub call_deadline: Option<f64>,
    #[cfg_attr(not(feature = "distributed"), allow(dead_code))]
    pub net: crate::distributed::NetArgs,
    pub output: Output,
}

/// The output directory when `--out` is not given: `<stem>.cosim` here.
fn default_out(system: &Path) -> PathBuf {
    let stem = system
        .file_stem()
        .map_or("system".into(), |s| s.to_string_lossy().into_owned());
    PathBuf::from(format!("{stem}.cosim"))
}

pub fn command(o: CosimOptions) -> ExitCode {
    let fail = |msg: String, code: Exit| -> ExitCode {
        warn!("lockstep cosim: {msg}");
        code.into()
    };
    let sf = match SystemFile::load(&o.system) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string(), Exit::ConfigError),
    };
    let out = o.out.clone().unwrap_or_else(|| default_out(&o.system));
    if let Err(e) = std::fs::create_dir_all(&out) {
        return fail(
            format!("cannot create {}: {e}", out.display()),
            Exit::ConfigError,
        );
    }
    let ro = RunOptions {
        autopilot: o.autopilot.clone(),
        isolation: o.isolation.clone(),
        log_dir: Some(out.clone()),
        mode: o.serialized.then_some(FileMode::Serialized),
        threads: o.threads,
        bundled_fmu: Some(crate::bundled::fmu),
    };
    let mode = ro.mode.unwrap_or(sf.mode);
    let threads = match mode {
        FileMode::Serialized => 1,
        FileMode::Parallel => threads_of(&sf, &ro),
    };
    for n in o.process.iter().chain(&o.remote) {
        if !sf.participants.iter().any(|p| &p.name == n) {
            let names: Vec<&str> = sf.participants.iter().map(|p| p.name.as_str()).collect();
            return fail(
                format!(
                    "{} has no participant `{n}` (its participants: {})",
                    o.system.display(),
                    names.join(", ")
                ),
                Exit::ConfigError,
            );
        }
    }
    let mut processes = if o.process.is_empty() && o.remote.is_empty() {
        None
    } else {
        match processes::open(&o, &sf, &ro) {
            Ok(p) => Some(p),
            Err(e) => return fail(e, Exit::ConfigError),
        }
    };
    let assembled = assemble_with(&sf, &ro, &mut |d| {
        let p = processes.as_mut()?;
        if !o.process.contains(&d.name) && !o.remote.contains(&d.name) {
            return None;
        }
        Some(processes::participant(
            p,
            &d.name,
            d.period.unwrap_or(sf.step),
        ))
    });
    // An inconsistent system (unknown variables, widths, periods, cycles)
    // is the system file's fault: name it.
    let in_file = |e: CosimError| match e {
        CosimError::Build { .. } => format!("{}: {e}", o.system.display()),
        other => other.to_string(),
    };
    let mut c = match assembled {
        Ok(c) => c,
        Err(e) => return fail(in_file(e), Exit::ConfigError),
    };
    for (name, lines) in c.notices() {
        for l in lines {
            warn!("lockstep cosim: note: participant `{name}`: {l}");
        }
    }
    let record_path = out.join("cosim.csv");
    let mut rec = match Recorder::new(&record_path, &c, sf.record.as_deref(), sf.record_period) {
        Ok(r) => r,
        Err(e) => {
            let _ = c.finish();
            return fail(in_file(e), Exit::ConfigError);
        }
    };
    let started = Instant::now();
    let ran = c.run_until(sf.duration, |c| rec.observe(c));
    let wall_s = started.elapsed().as_secs_f64();
    // Everything is finished and flushed whatever happened.
    let (participants, finish_error) = c.finish_all();
    let rows = rec.finish();
    if let Some(p) = &mut processes {
        processes::end(p, ran.is_ok());
    }
    let reached = c.now();
    // The first failure: the run's, else finishing's, else the record's.
    let error = ran.err().or(finish_error).or(rows.err());
    let failed_vehicles: Vec<&str> = participants
        .iter()
        .filter(|(_, v)| v["outcome"]["passed"] == serde_json::Value::Bool(false))
        .map(|(n, _)| n.as_str())
        .collect();
    let digest = file_digest(&record_path).ok();
    let summary = serde_json::json!({
        "system": sf.file.display().to_string(),
        "description": sf.description,
        "mode": match mode { FileMode::Serialized => "serialized", FileMode::Parallel => "parallel" },
        "threads": threads,
        "step_us": sf.step.0,
        "duration_us": sf.duration.0,
        "reached_us": reached.0,
        "wall_s": wall_s,
        "real_time_factor": real_time_factor(reached.0, wall_s),
        "record": record_path.display().to_string(),
        "record_digest": digest,
        "error": error.as_ref().map(|e| e.to_string()),
        "participants": participants.iter().cloned().collect::<serde_json::Map<_, _>>(),
        "transfers": c.transfer_reports().into_iter().collect::<serde_json::Map<_, _>>(),
    });
    let text = serde_json::to_string_pretty(&summary).expect("a summary is JSON");
    let summary_path = out.join("summary.json");
    if let Err(e) = std::fs::write(&summary_path, format!("{text}\n")) {
        return fail(
            format!("cannot write {}: {e}", summary_path.display()),
            Exit::RunError,
        );
    }
    match o.output {
        Output::Json => say!("{text}"),
        Output::Quiet => {}
        Output::Text => {
            say!("system      {}", sf.file.display());
            say!(
                "mode        {} ({} thread{}), step {}, {} participants, {} transfer functions",
                if mode == FileMode::Serialized {
                    "serialized"
                } else {
                    "parallel"
                },
                threads,
                if threads == 1 { "" } else { "s" },
                sf.step,
                sf.participants.len(),
                sf.transfers.len()
            );
            say!(
                "simulated   {:.3} s in {:.3} s wall ({:.1}x real time)",
                reached.as_secs_f64(),
                wall_s,
                real_time_factor(reached.0, wall_s)
            );
            say!(
                "record      {} ({})",
                record_path.display(),
                digest.as_deref().unwrap_or("unreadable")
            );
            for (name, v) in &participants {
                if let Some(passed) = v["outcome"]["passed"].as_bool() {
                    let avoid = match v["avoidance"]["time_us"].as_u64() {
                        Some(t) => format!(", held for traffic at {:.3} s", t as f64 * 1e-6),
                        None => String::new(),
                    };
                    // The log as its writer named it: a `--remote`
                    // vehicle's is on its host (participant-host --out).
                    let log = match v["outcome"]["log"]["path"].as_str() {
                        Some(p) if o.remote.contains(name) => format!("log {p} on its host"),
                        Some(p) => format!("log {p}"),
                        None => "no log".into(),
                    };
                    say!(
                        "vehicle     {name}: {}{avoid} ({log})",
                        if passed { "passed" } else { "FAILED" }
                    );
                } else if let Some(steps) = v["steps"].as_u64() {
                    say!("fmu         {name}: {steps} steps");
                }
            }
            for (name, r) in c.transfer_reports() {
                say!("transfer    {name}: {r}");
            }
            say!("summary     {}", summary_path.display());
        }
    }
    if let Some(e) = error {
        return fail(e.to_string(), Exit::RunError);
    }
    if !failed_vehicles.is_empty() {
        warn!(
            "lockstep cosim: vehicle verdict failed: {}",
            failed_vehicles.join(", ")
        );
        return Exit::ExpectationFailed.into();
    }
    ExitCode::SUCCESS
}

/// `lockstep participant-host`: serves one participant of a system file.
pub fn participant_host(a: ParticipantHostArgs) -> ExitCode {
    let fail = |msg: String, code: Exit| -> ExitCode {
        warn!("lockstep participant-host: {msg}");
        code.into()
    };
    let autopilot = match a.autopilot.clone().map_or_else(bundled::autopilot, Ok) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string(), Exit::ConfigError),
    };
    let sf = match SystemFile::load(&a.system) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string(), Exit::ConfigError),
    };
    let Some(d) = sf.participants.iter().find(|p| p.name == a.participant) else {
        let names: Vec<&str> = sf.participants.iter().map(|p| p.name.as_str()).collect();
        return fail(
            format!(
                "{} has no participant `{}` (its participants: {})",
                a.system.display(),
                a.participant,
                names.join(", ")
            ),
            Exit::ConfigError,
        );
    };
    let ro = RunOptions {
        autopilot,
        isolation: match a.isolation {
            IsolationArg::InProcess => Isolation::InProcess,
            IsolationArg::Process => Isolation::Process(lockstep_abi::IsolationOptions::default()),
        },
        log_dir: a.out.clone(),
        mode: None,
        threads: Some(1),
        bundled_fmu: Some(crate::bundled::fmu),
    };
    if let Some(out) = &a.out
        && let Err(e) = std::fs::create_dir_all(out)
    {
        return fail(
            format!("cannot create {}: {e}", out.display()),
            Exit::ConfigError,
        );
    }
    let p = match make_participant(d, &ro) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string(), Exit::ConfigError),
    };
    match processes::host(p, &a.participant, &a.net) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(
            format!("participant `{}`: {e}", a.participant),
            Exit::RunError,
        ),
    }
}

#[cfg(not(feature = "distributed"))]
mod processes {
    use super::*;
    use lockstep_cosim::Participant;

    const NO_ZENOH: &str = "this lockstep was built without participant processes (zenoh); \
                            build it with `cargo build --release --features distributed`";

    pub struct Processes;

    pub fn open(_: &CosimOptions, _: &SystemFile, _: &RunOptions) -> Result<Processes, String> {
        Err(format!("--process/--remote: {NO_ZENOH}"))
    }

    pub fn participant(
        _: &mut Processes,
        _: &str,
        _: lockstep_harness::Micros,
    ) -> Result<Box<dyn Participant>, String> {
        Err(NO_ZENOH.into())
    }

    pub fn end(_: &mut Processes, _: bool) {}

    pub fn host(
        _: Box<dyn Participant>,
        _: &str,
        _: &crate::distributed::NetArgs,
    ) -> Result<(), String> {
        Err(NO_ZENOH.into())
    }
}

#[cfg(feature = "distributed")]
mod processes {
    use lockstep_cosim::Participant;
    use lockstep_cosim::wire::{RemoteParticipant, Transport, answer};
    use lockstep_distributed::remote::{Flow, Link, Processes, RemoteError, Server};

    use super::*;
    use crate::processes::{Hosted, net_options, spawn_all};

    pub fn open(o: &CosimOptions, sf: &SystemFile, ro: &RunOptions) -> Result<Processes, String> {
        spawn_all(&Hosted {
            verb: "cosim",
            host_command: "participant-host",
            name_flag: "--participant",
            what: "participant",
            file: &sf.file,
            net: &o.net,
            deadline: o.call_deadline,
            process: &o.process,
            remote: &o.remote,
            autopilot: &ro.autopilot,
            isolation: &ro.isolation,
            out: ro.log_dir.as_deref(),
        })
    }

    /// A participant's process as the system calls it.
    #[derive(Debug)]
    struct LinkTransport(Link);

    impl Transport for LinkTransport {
        fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
            self.0.call(request).map_err(|e| match e {
                RemoteError::Refused(m) => m,
                other => other.to_string(),
            })
        }
    }

    pub fn participant(
        p: &mut Processes,
        name: &str,
        period: lockstep_harness::Micros,
    ) -> Result<Box<dyn Participant>, String> {
        let link = p.link(name, &format!("participant `{name}`"))?;
        Ok(Box::new(RemoteParticipant::connect(
            LinkTransport(link),
            period,
        )?))
    }

    pub fn end(p: &mut Processes, finished: bool) {
        p.end(finished);
    }

    pub fn host(
        mut participant: Box<dyn Participant>,
        name: &str,
        n: &crate::distributed::NetArgs,
    ) -> Result<(), String> {
        let (net, wait) = net_options(n);
        let server = Server::open(&net, name).map_err(|e| e.to_string())?;
        server
            .serve(wait, |request| {
                let (reply, last) = answer(participant.as_mut(), request);
                (reply, if last { Flow::Stop } else { Flow::Continue })
            })
            .map_err(|e| e.to_string())
    }
}
