//! `lockstep cosim SYSTEM.toml` and `lockstep participant-host`: the
//! arguments into a co-simulation request, and its report printed.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_run::cosim::{self, CosimReport, CosimRequest, HostRequest};

use crate::Output;
use crate::hosted::{HostArgs, ServedArgs};

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
    #[command(flatten)]
    pub host: HostArgs,
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
    #[command(flatten)]
    pub served: ServedArgs,
}

/// `lockstep cosim`.
pub fn run(a: CosimArgs) -> ExitCode {
    let verb = "cosim";
    let autopilot = match lockstep_run::assets::autopilot_or(a.autopilot) {
        Ok(p) => p,
        Err(e) => return crate::refuse(verb, &e.to_string()),
    };
    let output = Output::of(a.json, a.quiet);
    let request = CosimRequest {
        system: a.system,
        autopilot,
        out: a.out,
        isolation: a.host.isolation(),
        serialized: a.serialized,
        threads: a.host.threads(),
        elsewhere: a.host.elsewhere(),
    };
    let remote = request.elsewhere.remote.clone();
    let notice = |l: &str| warn!("lockstep {verb}: {l}");
    // Caught before the system is assembled: a signal while participants
    // start or are awaited stops the run before its first step.
    let interrupt = crate::signals::catch();
    let mut request = request;
    request.elsewhere.interrupt = Some(interrupt.clone());
    let mut prepared = match cosim::prepare(request, &notice) {
        Ok(p) => p,
        Err(e) => return crate::refused(verb, &e),
    };
    prepared.interrupt_on(interrupt);
    let report = prepared.run();
    match output {
        Output::Json => say!("{}", report.to_json()),
        Output::Quiet => {}
        Output::Text => print_text(&report, &remote),
    }
    for e in &report.output_errors {
        warn!("lockstep {verb}: {e}");
    }
    if let Some(e) = &report.error {
        warn!("lockstep {verb}: {e}");
    } else if !report.failed_vehicles().is_empty() {
        warn!(
            "lockstep {verb}: vehicle verdict failed: {}",
            report.failed_vehicles().join(", ")
        );
    }
    ExitCode::from(report.exit_status)
}

fn print_text(r: &CosimReport, remote: &[String]) {
    say!("system      {}", r.system);
    say!(
        "mode        {} ({} thread{}), step {} us, {} participants, {} transfer functions with reports",
        r.mode,
        r.threads,
        if r.threads == 1 { "" } else { "s" },
        r.step_us,
        r.participants.len(),
        r.transfers.len()
    );
    say!(
        "simulated   {:.3} s in {:.3} s wall ({:.1}x real time)",
        r.reached_us as f64 * 1e-6,
        r.wall_s,
        r.real_time_factor
    );
    say!(
        "record      {} ({})",
        r.record,
        r.record_digest.as_deref().unwrap_or("unreadable")
    );
    for (name, p) in &r.participants {
        match p {
            lockstep_run::cosim::ParticipantReport::Vehicle(v) => {
                let Some(passed) = v.passed() else {
                    say!("vehicle     {name}: its run did not end");
                    continue;
                };
                let avoid = match &v.avoidance {
                    Some(a) => format!(", held for traffic at {:.3} s", a.time_us as f64 * 1e-6),
                    None => String::new(),
                };
                // The log as its writer named it: a `--remote` vehicle's
                // is on its host (participant-host --out).
                let log = match &v.log {
                    Some(p) if remote.contains(name) => format!("log {p} on its host"),
                    Some(p) => format!("log {p}"),
                    None => "no log".into(),
                };
                say!(
                    "vehicle     {name}: {}{avoid} ({log})",
                    if passed { "passed" } else { "FAILED" }
                );
            }
            lockstep_run::cosim::ParticipantReport::Fmu(f) => {
                say!("fmu         {name}: {} steps", f.steps)
            }
            lockstep_run::cosim::ParticipantReport::Other(v) => say!("participant {name}: {v}"),
            lockstep_run::cosim::ParticipantReport::None => {}
        }
    }
    for (name, t) in &r.transfers {
        if let lockstep_run::cosim::TransferReport::Radio(radio) = t {
            say!("transfer    {name}: {radio}");
        }
    }
    say!(
        "summary     {}",
        std::path::Path::new(&r.record)
            .with_file_name(lockstep_run::summary::SUMMARY)
            .display()
    );
}

/// `lockstep participant-host`: serves one participant of a system file.
pub fn participant_host(a: ParticipantHostArgs) -> ExitCode {
    let verb = "participant-host";
    let autopilot = match a.served.autopilot() {
        Ok(p) => p,
        Err(e) => return crate::refuse(verb, &e),
    };
    let request = HostRequest {
        system: a.system,
        participant: a.participant,
        autopilot,
        isolation: a.served.isolation.isolation(),
        out: a.served.out,
        net: a.served.net.network(),
    };
    match cosim::host(request) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::refused(verb, &e),
    }
}
