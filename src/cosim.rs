//! `lockstep cosim SYSTEM.toml`: a co-simulation of vehicles, FMUs and
//! transfer functions (lockstep-cosim); the record `cosim.csv`, each
//! vehicle's flight log and `summary.json` in `--out`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_cosim::assemble::{RunOptions, assemble, threads_of};
use lockstep_cosim::file::{FileMode, SystemFile};
use lockstep_cosim::record::Recorder;
use lockstep_harness::report::{file_digest, real_time_factor};

use crate::run::{Exit, Output};
use crate::{IsolationArg, bundled};

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
    /// Print the summary as one JSON object instead of text.
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
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
    let mut c = match assemble(&sf, &ro) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string(), Exit::ConfigError),
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
            return fail(e.to_string(), Exit::ConfigError);
        }
    };
    let started = Instant::now();
    let ran = c.run_until(sf.duration, |c| rec.observe(c));
    let wall_s = started.elapsed().as_secs_f64();
    // Everything is finished and flushed whatever happened.
    let finished = c.finish();
    let rows = rec.finish();
    let reached = c.now();
    let (participants, finish_error) = match finished {
        Ok(p) => (p, None),
        Err(e) => (Vec::new(), Some(e)),
    };
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
                    say!(
                        "vehicle     {name}: {}{avoid} (log {})",
                        if passed { "passed" } else { "FAILED" },
                        out.join(format!("{name}.csv")).display()
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
