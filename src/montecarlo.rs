//! `lockstep montecarlo` and the hidden `lockstep montecarlo-run` a worker
//! process runs: the arguments into a batch request, its progress and its
//! summary printed.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_harness::engine::cores;
use lockstep_run::batch::{self, BatchRequest, RunStatus, Workers, worker};

use crate::args::ScenarioArgs;

/// Where the runs fly (`--workers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkersArg {
    /// Each run in a child process of its own (the autopilot in-process
    /// there): a crash or hang of the library is that run's failed row,
    /// and every run starts from a freshly loaded library.
    Processes,
    /// Runs on threads of this process, the autopilot in-process: no
    /// process start per run, but only for a library that declares itself
    /// re-entrant, and a crash of the library ends the batch.
    Threads,
}

#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct MonteCarloArgs {
    #[command(subcommand)]
    action: Option<MonteCarloAction>,
    /// The scenario and its overrides; `--seed` is the batch's master seed.
    #[command(flatten)]
    flight: ScenarioArgs,
    /// How many runs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000), required_unless_present = "rerun")]
    runs: Option<u64>,
    /// Fly run K of the batch again, alone, as `lockstep fly` with the
    /// run's draw as --set overrides (printed, so anyone can type it):
    /// its log, plots, viewer and summary in <OUT>/run-K.
    #[arg(long, value_name = "K", conflicts_with_all = ["runs", "jobs", "workers", "run_timeout", "shard"])]
    rerun: Option<u64>,
    /// Fly only shard K of M (K from 1): an equal share of the runs, in
    /// order, with the whole batch's draws; --out gets its runs.csv,
    /// rows.json and summary.json (no figures: `montecarlo merge` draws
    /// the whole batch).
    #[arg(long, value_name = "K/M", value_parser = batch::shard::Shard::parse)]
    shard: Option<batch::shard::Shard>,
    /// Runs flown at once [default: the number of cores].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// `processes`: each run in a child process (a crash or hang of the
    /// autopilot fails that run only); `threads`: runs on threads of this
    /// process with the autopilot in-process (a re-entrant library only;
    /// a crash ends the batch).
    #[arg(long, value_enum, default_value_t = WorkersArg::Processes)]
    workers: WorkersArg,
    /// Wall-time limit of one run in seconds (processes only): a run
    /// still flying then is killed and reported as hung.
    #[arg(long, default_value_t = 600.0, value_parser = crate::positive_seconds)]
    run_timeout: f64,
    /// The directory written: runs.csv, summary.json, histograms.png and
    /// .svg (passed and failed runs stacked, the [expect] limits as
    /// lines), scatter.png and .svg (each outcome against each drawn
    /// input), and the viewer's page montecarlo.html.
    #[arg(long, default_value = "montecarlo")]
    out: PathBuf,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

/// `lockstep montecarlo merge`.
#[derive(Debug, clap::Subcommand)]
enum MonteCarloAction {
    /// Joins the shards of one batch (`montecarlo --shard K/M` out
    /// directories) into the batch's runs.csv, summary.json, figures and
    /// page, as one batch would have written them; refuses shards of
    /// another batch, overlapping or missing ones.
    Merge {
        /// The shards' out directories.
        #[arg(required = true)]
        shards: Vec<PathBuf>,
        /// The directory written.
        #[arg(long, default_value = "montecarlo")]
        out: PathBuf,
        /// Print nothing but errors.
        #[arg(long, short)]
        quiet: bool,
    },
}

/// `lockstep montecarlo`.
pub fn command(a: MonteCarloArgs) -> ExitCode {
    let verb = "montecarlo";
    if let Some(MonteCarloAction::Merge { shards, out, quiet }) = a.action {
        return match batch::merge(&shards, &out) {
            Ok(b) => {
                if !quiet {
                    say!("merged        {} shards", shards.len());
                }
                summary(verb, &b, b.report.runs as u64, quiet)
            }
            Err(e) => crate::refused("montecarlo merge", &e),
        };
    }
    let (scenario, autopilot, overrides) = match a.flight.resolve() {
        Ok(v) => v,
        Err(e) => return crate::refuse(verb, &e),
    };
    if let Some(k) = a.rerun {
        return rerun(k, scenario, autopilot, &overrides, &a.out, a.quiet);
    }
    let runs = a.runs.expect("clap requires --runs without --rerun");
    let request = BatchRequest {
        scenario,
        autopilot,
        overrides,
        runs,
        jobs: a.jobs.map_or_else(cores, |j| j as usize).min(runs as usize),
        workers: match a.workers {
            WorkersArg::Processes => Workers::Processes,
            WorkersArg::Threads => Workers::Threads,
        },
        run_timeout: std::time::Duration::from_secs_f64(a.run_timeout),
        out: a.out,
        worker_program: std::env::current_exe().ok(),
        worker_args: Vec::new(),
        shard: a.shard,
    };
    let (runs, jobs, workers, quiet) = (request.runs, request.jobs, request.workers, a.quiet);
    let shown = request.scenario.display().to_string();
    let prepared = match batch::prepare(request) {
        Ok(p) => p,
        Err(e) => return crate::refused(verb, &e),
    };
    if !quiet {
        say!(
            "batch         {runs} runs of {shown} (master seed {}), {jobs} workers ({})",
            prepared.master_seed(),
            workers.name()
        );
        if let Some(s) = a.shard {
            let r = s.range(runs);
            match r.end - r.start {
                0 => say!(
                    "shard         {}/{}: no runs (more shards than runs)",
                    s.index,
                    s.of
                ),
                n => say!(
                    "shard         {}/{}: runs {} to {} ({n} runs)",
                    s.index,
                    s.of,
                    r.start,
                    r.end - 1
                ),
            }
        }
    }
    // What this process flies: the shard's runs.
    let runs = a.shard.map_or(runs, |s| {
        let r = s.range(runs);
        r.end - r.start
    });
    // SIGINT/SIGTERM: no new run starts; the rows done are written, the
    // others say why they were not flown (a second signal more than 2 s later
    // ends at once).
    let interrupt = crate::signals::catch();
    let b = prepared.run(interrupt, |row, n| {
        if quiet {
            return;
        }
        if let RunStatus::Failed(why) = &row.status {
            warn!("  run {} (seed {}) failed: {why}", row.run, row.seed);
        }
        if n.is_multiple_of(10) || n == runs {
            warn!("  {n}/{runs} runs");
        }
    });
    summary(verb, &b, runs, quiet)
}

/// The batch's figures printed; its exit status.
fn summary(verb: &str, b: &batch::Batch, runs: u64, quiet: bool) -> ExitCode {
    let r = &b.report;
    if !quiet {
        say!(
            "runs          {}: {} passed their verdict, {} failed it, {} did not complete; {} with a motor failure",
            r.completed + r.failed,
            r.passed,
            r.completed - r.passed,
            r.failed,
            r.motor_failures
        );
        say!(
            "wall time     {:.2} s ({:.2} runs/s)",
            r.wall_s,
            r.runs_per_s
        );
        for line in b.aggregate.table_text().lines() {
            say!("{line}");
        }
        say!("csv           {}", b.csv.display());
        say!("summary       {}", b.summary.display());
        if let Some(v) = &b.report.viewer {
            say!("viewer        {v}");
        }
        for f in &b.histograms {
            say!("histograms    {}", f.display());
        }
        for f in &b.scatter {
            say!("scatter       {}", f.display());
        }
    }
    for e in &r.output_errors {
        warn!("lockstep {verb}: {e}");
    }
    if let Some(signal) = &r.interrupted_by {
        warn!(
            "lockstep {verb}: interrupted by {signal}: {} of {runs} runs flown; the rest are rows that say so",
            r.completed
        );
    }
    ExitCode::from(r.exit_status)
}

/// `lockstep montecarlo --rerun K`: run K flown again alone, as the `fly`
/// command printed first.
fn rerun(
    k: u64,
    scenario: PathBuf,
    autopilot: PathBuf,
    overrides: &[lockstep_harness::inputs::scenario::Override],
    out: &std::path::Path,
    quiet: bool,
) -> ExitCode {
    let verb = "montecarlo";
    let all = match batch::rerun::rerun_overrides(&scenario, overrides, k) {
        Ok(o) => o,
        Err(e) => return crate::refused(verb, &e),
    };
    let dir = out.join(format!("run-{k}"));
    if !quiet {
        say!(
            "rerun         run {k} of {}, the same as:",
            scenario.display()
        );
        say!(
            "              {} --out {}",
            batch::rerun::fly_command(&scenario, &all),
            batch::rerun::shell_word(&dir.display().to_string())
        );
    }
    let request = lockstep_run::flight::FlightRequest {
        scenario: scenario.into(),
        autopilot,
        overrides: all,
        outputs: lockstep_run::flight::FlightOutputs {
            out: Some(dir),
            ..Default::default()
        },
        // As `lockstep fly` flies it by default.
        isolation: lockstep_abi::Isolation::Process(lockstep_abi::IsolationOptions::default()),
        spelling: lockstep_run::choice::Spelling::Cli,
    };
    let output = if quiet {
        crate::Output::Quiet
    } else {
        crate::Output::Text
    };
    crate::flight::fly(verb, request, None, None, output)
}

/// `lockstep montecarlo-run`: one run of a batch in this process, its row
/// printed as JSON.
pub fn worker(scenario: PathBuf, autopilot: PathBuf, run: u64, set: &[String]) -> ExitCode {
    let verb = "montecarlo-run";
    let mut overrides = Vec::new();
    for s in set {
        match lockstep_harness::inputs::scenario::Override::parse("--set", s) {
            Ok(o) => overrides.push(o),
            Err(e) => return crate::refuse(verb, &e),
        }
    }
    match worker::run(&scenario, &autopilot, &overrides, run) {
        Ok(row) => {
            say!("{}", worker::row_line(&row));
            ExitCode::SUCCESS
        }
        Err(e) => crate::refused(verb, &e),
    }
}
