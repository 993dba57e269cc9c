//! The `lockstep` command line: parses arguments, calls library code, prints.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};

/// Prints a line on stdout; a closed stdout (`lockstep run | head -1`)
/// loses the line instead of ending the run.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// Prints a line on stderr, ignoring a closed stderr.
macro_rules! warn {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

mod args;
mod bundled;
mod check_lib;
mod compare;
mod cosim;
mod distributed;
mod fleet;
mod fly;
mod fmu;
mod montecarlo;
mod orchestrate;
mod plots;
#[cfg(feature = "distributed")]
mod processes;
mod replay;
mod run;

#[derive(Debug, Parser)]
#[command(
    name = "lockstep",
    version,
    about = "Deterministic lockstep harness for C autopilots"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load an autopilot library and report its ABI version, capabilities,
    /// optional symbols and a per-struct layout verdict. Exits 0 only when
    /// the library is usable.
    CheckLib {
        /// The shared library (default: the bundled reference autopilot).
        path: Option<PathBuf>,
        /// Wall-time limit in seconds for loading the library in the probe
        /// process (its initialisers may hang).
        #[arg(long, default_value_t = 60.0, value_parser = positive_seconds)]
        call_timeout: f64,
    },
    /// Pause or resume a distributed run: a command to its primary
    /// (`lockstep ctl pause --network-connect tcp/HOST:PORT`).
    Ctl {
        /// `pause` or `resume`.
        #[arg(value_parser = ["pause", "resume"])]
        command: String,
        #[command(flatten)]
        net: distributed::NetArgs,
    },
    /// Run a co-simulation (a system file): vehicles, FMUs and transfer
    /// functions stepped together, the participants of a step in parallel,
    /// the transfer functions between steps with a one-step delay. Writes
    /// cosim.csv (the recorded outputs), each vehicle's log and
    /// summary.json to --out.
    Cosim(cosim::CosimArgs),
    /// Run an orchestrated fleet (a fleet file; seed 004): models woken on
    /// a timeline of timestamps or by data they subscribe to, cascading
    /// within a timestamp until quiet — an order stream, no-fly zones, a
    /// dispatcher, a battery-swap station, a KPI collector and lockstep
    /// vehicles. Models may run in processes of their own (--process,
    /// --remote). Writes summary.json to --out.
    Orchestrate(orchestrate::OrchestrateArgs),
    /// Serve one participant of a system file to `lockstep cosim` over
    /// zenoh (started by `cosim --process`, or by hand for `--remote`).
    ParticipantHost(cosim::ParticipantHostArgs),
    /// Serve one model of a fleet file to `lockstep orchestrate` over zenoh
    /// (started by `orchestrate --process`, or by hand for `--remote`).
    ModelHost(orchestrate::ModelHostArgs),
    /// Write an FMU that lockstep carries to a file: `slung_load` (a load on
    /// an elastic tether, source in c_examples/slung_load_fmu). A system
    /// file uses it directly with `path = "bundled:slung_load"`.
    ExampleFmu {
        /// Its name (slung_load).
        name: String,
        /// The .fmu file to write.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Fly a scenario in lockstep and print a summary (wall time,
    /// real-time factor, the log's digest, the timeline, the verdict).
    Fly(fly::FlyArgs),
    /// The same as `fly`.
    Run(fly::FlyArgs),
    /// Draw a flight log (the `fly` CSV) as PNG and SVG: path, altitude,
    /// velocity, attitude, motors, rotor speeds, battery, wind.
    Plot {
        /// The log.
        log: PathBuf,
        /// Write <OUT>.png and <OUT>.svg [default: the log's path without
        /// its extension].
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Print a shell completion script: `lockstep completions bash >
    /// ~/.local/share/bash-completion/completions/lockstep` (bash, zsh,
    /// fish, elvish, powershell).
    Completions { shell: clap_complete::Shell },
    /// Print the scenario format's reference: its JSON Schema, or with
    /// --markdown the Markdown reference (docs/scenario-reference.md).
    Schema {
        #[arg(long)]
        markdown: bool,
    },
    /// Package the scenario's vehicle as an FMI 2.0 co-simulation FMU: the
    /// scenario, its mission and aircraft, and the autopilot inside, with
    /// inputs (commands, wind, faults), outputs (truth, estimate, motor
    /// commands, battery, mode) and parameters (seed, start, log path).
    /// Communication steps must be whole microseconds
    Fmu {
        /// The scenario to package
        scenario: PathBuf,
        /// The FMU file to write
        #[arg(short, long)]
        out: PathBuf,
        /// The autopilot library to package (default: the bundled reference
        /// autopilot)
        #[arg(long)]
        autopilot: Option<PathBuf>,
        /// The FMU library, liblockstep_fmu.so (default: next to this
        /// executable; `cargo build --release -p lockstep-fmu` puts it there)
        #[arg(long)]
        library: Option<PathBuf>,
    },
    /// List the built-in aircraft, or print one: the file as shipped (with
    /// its sources), or with --resolved the complete spec it resolves to.
    Specs {
        name: Option<String>,
        #[arg(long, requires = "name")]
        resolved: bool,
    },
    /// Choose an integrator: fly the scenario once (recorded), replay it
    /// open-loop with euler, rk4, bs32 and dp54 at several steps and
    /// tolerances against a tight dp54 reference (itself checked against
    /// ode_solvers' Dopri5), and report each one's largest and RMS error
    /// per state group, RHS evaluations and median wall time: a table, a
    /// CSV and a work-precision plot.
    CompareIntegrators(CompareArgs),
    /// Fly a batch of runs of a scenario with the dispersions of its
    /// [montecarlo] section (mass, inertia, battery capacity, mean wind,
    /// sensor noise, motor failures), each run's seed and draws derived
    /// from the master seed and its number: per-run CSV, aggregate
    /// statistics and histograms. A run whose autopilot crashes or hangs
    /// is a failed row; the batch goes on.
    Montecarlo(MonteCarloArgs),
    /// One run of a Monte Carlo batch, printed as JSON (what a worker
    /// process of `montecarlo` runs).
    #[command(hide = true)]
    MontecarloRun {
        scenario: PathBuf,
        #[arg(long)]
        autopilot: PathBuf,
        #[arg(long)]
        run: u64,
        #[arg(long = "set")]
        set: Vec<String>,
    },
    /// Replay a recording: drive the plant from it (no autopilot, no
    /// randomness) and print the final state.
    Replay {
        /// The recording made by `run --record`.
        recording: PathBuf,
        /// Refuse the recording unless it was made with this spec (built-in
        /// name or path); default: the spec embedded in the recording.
        #[arg(long)]
        spec: Option<String>,
        /// Integrate with this method instead of the recorded one (euler,
        /// rk4, bs32, dp54).
        #[arg(long)]
        integrator: Option<String>,
        /// Compare the replayed states with this flight log's (the `fly`
        /// log of the recorded run): the largest difference per state group.
        #[arg(long)]
        compare: Option<PathBuf>,
        /// Write the replay as a flight log (the `fly` columns; the
        /// autopilot's are NaN), with its sidecar.
        #[arg(long)]
        log: Option<PathBuf>,
        /// Rows per second of --log (the period must be whole microseconds
        /// of recorded boundaries) [default: 10].
        #[arg(long, requires = "log", default_value_t = 10.0)]
        log_rate: f64,
    },
}

#[derive(Debug, clap::Args)]
struct MonteCarloArgs {
    /// The scenario and its overrides; `--seed` is the batch's master seed.
    #[command(flatten)]
    flight: args::ScenarioArgs,
    /// How many runs.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    runs: u64,
    /// Runs flown at once [default: the number of cores].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// `processes`: each run in a child process (a crash or hang of the
    /// autopilot fails that run only); `threads`: runs on threads of this
    /// process with the autopilot in-process (a re-entrant library only;
    /// a crash ends the batch).
    #[arg(long, value_enum, default_value_t = montecarlo::Workers::Processes)]
    workers: montecarlo::Workers,
    /// Wall-time limit of one run in seconds (processes only): a run
    /// still flying then is killed and reported as hung.
    #[arg(long, default_value_t = 600.0, value_parser = positive_seconds)]
    run_timeout: f64,
    /// The directory written: runs.csv, summary.json, histograms.png and
    /// histograms.svg.
    #[arg(long, default_value = "montecarlo")]
    out: PathBuf,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Debug, clap::Args)]
struct CompareArgs {
    #[command(flatten)]
    flight: args::ScenarioArgs,
    /// The methods to compare, comma-separated (euler, rk4, bs32, dp54).
    #[arg(long, value_delimiter = ',', value_parser = method, default_value = "euler,rk4,bs32,dp54")]
    methods: Vec<lockstep_plant::integrate::Method>,
    /// Substeps of the fixed-step methods (euler, rk4) in microseconds,
    /// comma-separated [default: the flight's longest boundary interval,
    /// and 1/2, 1/4 and 1/8 of it].
    #[arg(long, value_delimiter = ',')]
    steps_us: Vec<u64>,
    /// Tolerances of the adaptive methods (bs32, dp54; atol = rtol for
    /// position, velocity, attitude and rates), comma-separated [default:
    /// bs32 1e-4,1e-6,1e-8; dp54 1e-6,1e-8,1e-10].
    #[arg(long, value_delimiter = ',')]
    tolerances: Vec<f64>,
    /// Restart each replay from the reference's state every this many
    /// seconds of simulated time (0: replay the whole flight open-loop).
    /// A multirotor without its controller is unstable, so over a whole
    /// flight the errors measure that instability as much as the
    /// integrator.
    #[arg(long, default_value_t = 1.0, value_parser = horizon)]
    horizon_s: f64,
    /// Replays per candidate; the wall time reported is their median.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeats: u32,
    /// The directory written: flight.rec, integrators.csv,
    /// work_precision.png and work_precision.svg.
    #[arg(long, default_value = "integrator-study")]
    out: PathBuf,
}

/// A horizon: 0, or whole microseconds of at most a day.
fn horizon(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    let us = v * 1e6;
    if v.is_finite() && (0.0..=86_400.0).contains(&v) && (us - us.round()).abs() < 1e-6 {
        Ok(v)
    } else {
        Err(format!(
            "{s} is not a number of seconds in [0, 86400] in whole microseconds"
        ))
    }
}

/// An integrator by its scenario key.
fn method(s: &str) -> Result<lockstep_plant::integrate::Method, String> {
    lockstep_plant::integrate::Method::from_name(s)
        .ok_or_else(|| format!("`{s}` is not an integrator (euler, rk4, bs32, dp54)"))
}

/// A finite, positive number of seconds of at most a day.
pub(crate) fn positive_seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && v > 0.0 && v <= 86_400.0 {
        Ok(v)
    } else {
        Err(format!("{s} is not a number of seconds in (0, 86400]"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::CheckLib { path, call_timeout } => {
            let path = match path.map_or_else(bundled::autopilot, Ok) {
                Ok(p) => p,
                Err(e) => {
                    warn!("lockstep check-lib: {e}");
                    return ExitCode::from(2);
                }
            };
            check_lib::run(&path, Duration::from_secs_f64(call_timeout))
        }
        Command::Fly(a) => fly::command("fly", a),
        Command::ExampleFmu { name, out } => match bundled::write_fmu(&name, &out) {
            Ok(()) => {
                say!("{}", out.display());
                ExitCode::SUCCESS
            }
            Err(e) => {
                warn!("lockstep example-fmu: {e}");
                run::Exit::ConfigError.into()
            }
        },
        Command::Cosim(a) => cosim::run(a),
        Command::Orchestrate(a) => orchestrate::run(a),
        Command::ParticipantHost(a) => cosim::participant_host(a),
        Command::ModelHost(a) => orchestrate::model_host(a),
        Command::Ctl { command, net } => distributed::ctl(&command, &net),
        Command::Montecarlo(a) => {
            let (scenario, autopilot, overrides) = match a.flight.resolve() {
                Ok(v) => v,
                Err(e) => {
                    warn!("lockstep montecarlo: {e}");
                    return run::Exit::ConfigError.into();
                }
            };
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
            montecarlo::command(montecarlo::Options {
                scenario,
                autopilot,
                overrides,
                runs: a.runs,
                jobs: a.jobs.unwrap_or(cores).min(a.runs) as usize,
                workers: a.workers,
                run_timeout: Duration::from_secs_f64(a.run_timeout),
                out: a.out,
                quiet: a.quiet,
            })
        }
        Command::MontecarloRun {
            scenario,
            autopilot,
            run,
            set,
        } => {
            let mut overrides = Vec::new();
            for s in &set {
                match lockstep_harness::inputs::scenario::Override::parse("--set", s) {
                    Ok(o) => overrides.push(o),
                    Err(e) => {
                        warn!("lockstep montecarlo-run: {e}");
                        return run::Exit::ConfigError.into();
                    }
                }
            }
            montecarlo::worker(&scenario, &autopilot, &overrides, run)
        }
        Command::CompareIntegrators(a) => {
            let (scenario, autopilot, overrides) = match a.flight.resolve() {
                Ok(v) => v,
                Err(e) => {
                    warn!("lockstep compare-integrators: {e}");
                    return run::Exit::ConfigError.into();
                }
            };
            compare::command(compare::CompareOptions {
                scenario,
                autopilot,
                overrides,
                methods: a.methods,
                steps_us: a.steps_us,
                tolerances: a.tolerances,
                repeats: a.repeats,
                horizon_us: (a.horizon_s > 0.0).then(|| (a.horizon_s * 1e6).round() as u64),
                out: a.out,
            })
        }
        Command::Run(a) => fly::command("run", a),
        Command::Plot { log, out } => plots::command(&log, out.as_deref()),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut cmd = Cli::command();
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut cmd, "lockstep", &mut out);
            use std::io::Write as _;
            let _ = std::io::stdout().lock().write_all(&out);
            ExitCode::SUCCESS
        }
        Command::Schema { markdown } => {
            if markdown {
                say!(
                    "{}",
                    lockstep_harness::inputs::scenario::reference::markdown().trim_end()
                );
            } else {
                let schema = lockstep_harness::inputs::scenario::reference::schema();
                say!(
                    "{}",
                    serde_json::to_string_pretty(&schema).expect("a schema is JSON")
                );
            }
            ExitCode::SUCCESS
        }
        Command::Specs { name, resolved } => specs(name.as_deref(), resolved),
        Command::Fmu {
            scenario,
            out,
            autopilot,
            library,
        } => {
            let autopilot = match autopilot.map_or_else(bundled::autopilot, Ok) {
                Ok(p) => p,
                Err(e) => {
                    warn!("lockstep fmu: {e}");
                    return run::Exit::ConfigError.into();
                }
            };
            fmu::command(&scenario, &out, &autopilot, library.as_deref())
        }
        Command::Replay {
            recording,
            spec,
            integrator,
            compare,
            log,
            log_rate,
        } => replay::command(
            &recording,
            spec.as_deref(),
            integrator.as_deref(),
            compare.as_deref(),
            log.as_deref().map(|l| (l, log_rate)),
        ),
    }
}

/// `lockstep specs [NAME] [--resolved]`.
fn specs(name: Option<&str>, resolved: bool) -> ExitCode {
    use lockstep_plant::AircraftSpec;
    use lockstep_plant::spec::BUILTIN_SPECS;
    let Some(name) = name else {
        for (n, _) in BUILTIN_SPECS {
            match AircraftSpec::resolve(n) {
                Ok(s) => say!(
                    "{n:<16} {}",
                    s.description.as_deref().unwrap_or("(no description)")
                ),
                // The base the others extend is not an aircraft alone.
                Err(_) => say!("{n:<16} (a base the others extend; not complete on its own)"),
            }
        }
        return ExitCode::SUCCESS;
    };
    let Some((_, text)) = BUILTIN_SPECS.iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = BUILTIN_SPECS.iter().map(|(n, _)| *n).collect();
        warn!(
            "lockstep specs: `{name}` is not a built-in aircraft ({})",
            names.join(", ")
        );
        return run::Exit::ConfigError.into();
    };
    if resolved {
        match AircraftSpec::resolve(name) {
            Ok(s) => say!("{}", s.to_toml_string().trim_end()),
            Err(e) => {
                warn!("lockstep specs: {e}");
                return run::Exit::ConfigError.into();
            }
        }
    } else {
        say!("{}", text.trim_end());
    }
    ExitCode::SUCCESS
}
