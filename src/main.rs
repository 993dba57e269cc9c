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
mod check_lib;
mod compare;
mod cosim;
mod distributed;
mod fleet;
mod flight;
mod fly;
mod hosted;
mod ident;
mod montecarlo;
mod orchestrate;
mod replay;
mod signals;

/// How a run's report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A text summary on stdout.
    Text,
    /// One JSON object on stdout (the same as `summary.json`).
    Json,
    /// Nothing but errors.
    Quiet,
}

impl Output {
    /// From `--json` and `--quiet`.
    pub fn of(json: bool, quiet: bool) -> Output {
        if json {
            Output::Json
        } else if quiet {
            Output::Quiet
        } else {
            Output::Text
        }
    }
}

/// Prints a run layer's refusal (and the lines that say more); its exit
/// status.
pub fn refused(verb: &str, e: &lockstep_run::RunError) -> ExitCode {
    warn!("lockstep {verb}: {}", e.message);
    for line in &e.context {
        warn!("              {line}");
    }
    ExitCode::from(e.exit_status())
}

/// Prints an argument refused; exit status 2 (a configuration error).
pub fn refuse(verb: &str, message: &str) -> ExitCode {
    refused(verb, &lockstep_run::RunError::configuration(message))
}

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
    /// real-time factor, the timeline, the verdict; with a log, its digest).
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
    /// List the example scenarios the binary carries (every file of the
    /// repository's examples/: scenarios, missions, specs, co-simulation
    /// and orchestration files), or copy them all to a directory.
    Examples {
        /// Copy every example into this directory (created; a file there
        /// with other contents is not overwritten).
        #[arg(long, value_name = "DIR")]
        copy: Option<PathBuf>,
    },
    /// Write the flight viewer: one self-contained HTML page (3D scene,
    /// time slider, plots, timeline, verdict) that opens offline in any
    /// browser, of a `fly` or fleet `--out` directory or a flight log; of a
    /// `montecarlo --out` directory, the batch's page.
    View {
        /// A `fly`, fleet, `orchestrate` or `montecarlo` --out directory, or a flight log.
        target: PathBuf,
        /// The page to write [default: flight.html (montecarlo.html) in
        /// the directory; beside a log, its name with .html].
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
    CompareIntegrators(compare::CompareArgs),
    /// Fly a batch of runs of a scenario with the dispersions of its
    /// [montecarlo] section (mass, inertia, battery capacity, mean wind,
    /// sensor noise, motor failures), each run's seed and draws derived
    /// from the master seed and its number: per-run CSV, aggregate
    /// statistics and histograms. A run whose autopilot crashes or hangs
    /// is a failed row; the batch goes on.
    Montecarlo(montecarlo::MonteCarloArgs),
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
    Replay(replay::ReplayArgs),
    /// Replay a PX4 ULog's motor commands through the plant, open loop
    /// from the logged state over 0.2, 0.5 and 1 s: the prediction error of
    /// body rates, attitude, acceleration and velocity, against constant
    /// rates and the last acceleration held.
    Predict(ident::PredictArgs),
    /// Fit an airframe to a PX4 ULog (least squares on the open-loop
    /// replay's residuals): thrust and torque coefficients, inertia, the
    /// motor time constant, linear drag, each with its 95 % interval; what
    /// the log cannot identify keeps the base spec's value.
    Fit(ident::FitArgs),
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
    // The isolated autopilot's host is this binary started again
    // (`lockstep --serve MEMFD LIFELINE SPIN_NS`): no second file to build
    // or install.
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.first().map(String::as_str) == Some(lockstep_abi::isolate::SERVE_FLAG) {
        let status = lockstep_abi::isolate::host_serve(&args);
        return ExitCode::from(u8::try_from(status).unwrap_or(1));
    }
    if let Ok(own) = lockstep_abi::isolate::HostProgram::this_executable() {
        lockstep_abi::isolate::set_own_host(own);
    }
    let cli = Cli::parse();
    match cli.command {
        Command::CheckLib { path, call_timeout } => {
            let path = match lockstep_run::assets::autopilot_or(path) {
                Ok(p) => p,
                Err(e) => {
                    warn!("lockstep check-lib: {e}");
                    return ExitCode::from(2);
                }
            };
            check_lib::run(&path, Duration::from_secs_f64(call_timeout))
        }
        Command::Fly(a) => fly::command("fly", a),
        Command::Run(a) => fly::command("run", a),
        Command::ExampleFmu { name, out } => match lockstep_run::assets::write_fmu(&name, &out) {
            Ok(()) => {
                say!("{}", out.display());
                ExitCode::SUCCESS
            }
            Err(e) => refuse("example-fmu", &e),
        },
        Command::Cosim(a) => cosim::run(a),
        Command::Orchestrate(a) => orchestrate::run(a),
        Command::ParticipantHost(a) => cosim::participant_host(a),
        Command::ModelHost(a) => orchestrate::model_host(a),
        Command::Ctl { command, net } => distributed::ctl(&command, &net),
        Command::Montecarlo(a) => montecarlo::command(a),
        Command::MontecarloRun {
            scenario,
            autopilot,
            run,
            set,
        } => montecarlo::worker(scenario, autopilot, run, &set),
        Command::CompareIntegrators(a) => compare::command(a),
        Command::Examples { copy: None } => {
            say!("{}", lockstep_run::examples::listing().trim_end());
            ExitCode::SUCCESS
        }
        Command::Examples { copy: Some(dir) } => match lockstep_run::examples::copy_to(&dir) {
            Ok(written) => {
                say!(
                    "examples      {} files written to {} ({} there already); try: lockstep fly {}",
                    written.len(),
                    dir.display(),
                    lockstep_run::examples::EXAMPLES.len() - written.len(),
                    dir.join("scenarios/hover.toml").display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => refuse("examples", &e),
        },
        Command::View { target, out } => match lockstep_run::view::view(&target, out.as_deref()) {
            Ok(page) => {
                say!("viewer        {}", page.display());
                ExitCode::SUCCESS
            }
            Err(e) => refuse("view", &e),
        },
        Command::Plot { log, out } => {
            let stem = out.unwrap_or_else(|| log.with_extension(""));
            match lockstep_run::plots::draw(&log, &stem) {
                Ok(files) => {
                    for f in files {
                        say!("plot          {}", f.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => refuse("plot", &e),
            }
        }
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
            let autopilot = match lockstep_run::assets::autopilot_or(autopilot) {
                Ok(p) => p,
                Err(e) => return refuse("fmu", &e.to_string()),
            };
            match lockstep_run::package::fmu(&scenario, &out, &autopilot, library.as_deref()) {
                Ok(n) => {
                    say!("wrote {} ({n} files)", out.display());
                    ExitCode::SUCCESS
                }
                Err(e) => refused("fmu", &e),
            }
        }
        Command::Replay(a) => replay::command(a),
        Command::Predict(a) => ident::predict(a),
        Command::Fit(a) => ident::fit(a),
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
        return refuse(
            "specs",
            &format!("`{name}` is not a built-in aircraft ({})", names.join(", ")),
        );
    };
    if resolved {
        match AircraftSpec::resolve(name) {
            Ok(s) => say!("{}", s.to_toml_string().trim_end()),
            Err(e) => return refuse("specs", &e.to_string()),
        }
    } else {
        say!("{}", text.trim_end());
    }
    ExitCode::SUCCESS
}
