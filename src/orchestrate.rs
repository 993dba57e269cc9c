//! `lockstep orchestrate FLEET.toml` and `lockstep model-host`: the
//! arguments into an orchestration request, and its report printed.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_run::orchestrate::{self, HostRequest, OrchestrateReport, OrchestrateRequest};

use crate::Output;
use crate::hosted::{HostArgs, ServedArgs};

#[derive(Debug, clap::Args)]
pub struct OrchestrateArgs {
    /// The fleet file (TOML: [timeline], [[models]]).
    pub fleet: PathBuf,
    /// Where summary.json (and trace.jsonl), the vehicles' logs
    /// (<name>.csv), the plot and the viewer's page go [default: <fleet's
    /// stem>.orchestrate in the current directory].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    /// The autopilot of vehicles whose entry names none (default: the
    /// bundled reference autopilot).
    #[arg(long)]
    pub autopilot: Option<PathBuf>,
    #[command(flatten)]
    pub host: HostArgs,
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
    #[command(flatten)]
    pub served: ServedArgs,
}

/// `lockstep orchestrate`.
pub fn run(a: OrchestrateArgs) -> ExitCode {
    let verb = "orchestrate";
    let autopilot = match lockstep_run::assets::autopilot_or(a.autopilot) {
        Ok(p) => p,
        Err(e) => return crate::refuse(verb, &e.to_string()),
    };
    let output = Output::of(a.json, a.quiet);
    let request = OrchestrateRequest {
        fleet: a.fleet,
        autopilot,
        out: a.out,
        isolation: a.host.isolation(),
        threads: a.host.threads(),
        trace: a.trace,
        elsewhere: a.host.elsewhere(),
        interrupt: Some(crate::signals::catch()),
    };
    let mut request = request;
    request.elsewhere.interrupt = request.interrupt.clone();
    let out = request.out_dir();
    let report = match orchestrate::run(request, &|l| warn!("lockstep {verb}: {l}")) {
        Ok(r) => r,
        Err(e) => return crate::refused(verb, &e),
    };
    match output {
        Output::Json => say!("{}", report.to_json()),
        Output::Quiet => {}
        Output::Text => print_text(&report, &out),
    }
    for e in &report.output_errors {
        warn!("lockstep {verb}: {e}");
    }
    if let Some(e) = &report.error {
        warn!("lockstep {verb}: {e}");
    }
    ExitCode::from(report.exit_status)
}

fn print_text(r: &OrchestrateReport, out: &std::path::Path) {
    say!("fleet       {}", r.fleet);
    say!(
        "timeline    {} timestamps of {} us, reached {} ({:.1} s)",
        r.timeline.duration,
        r.timeline.time_scale_us,
        r.last_timestamp,
        r.simulated_s()
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
        r.calls_per_s,
        r.simulated_s() / r.wall_s.max(1e-9),
        r.threads,
        if r.threads == 1 { "" } else { "s" }
    );
    for (name, v) in &r.models {
        if !v.is_null() {
            say!("{name:<11} {v}");
        }
    }
    let logs = r.models.values().filter(|v| v["log"].is_string()).count();
    if logs > 0 {
        say!(
            "logs        {logs} vehicle log{} in {}",
            if logs == 1 { "" } else { "s" },
            out.display()
        );
    }
    for p in &r.plots {
        say!("plot        {p}");
    }
    if let Some(v) = &r.viewer {
        say!("viewer      {v}");
    }
    say!(
        "summary     {}",
        out.join(lockstep_run::summary::SUMMARY).display()
    );
}

/// `lockstep model-host`: serves one model of a fleet file.
pub fn model_host(a: ModelHostArgs) -> ExitCode {
    let verb = "model-host";
    let autopilot = match a.served.autopilot() {
        Ok(p) => p,
        Err(e) => return crate::refuse(verb, &e),
    };
    let request = HostRequest {
        fleet: a.fleet,
        model: a.model,
        autopilot,
        isolation: a.served.isolation.isolation(),
        out: a.served.out,
        net: a.served.net.network(),
    };
    match orchestrate::host(request) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => crate::refused(verb, &e),
    }
}
