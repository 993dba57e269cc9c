//! The `lockstep` command line: parses arguments, calls library code, prints.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use lockstep_abi::{Isolation, IsolationOptions};

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

mod check_lib;
mod run;

/// The reference autopilot built by build.rs from c_examples/autopilot.
pub const BUNDLED_AUTOPILOT: &str = env!("LOCKSTEP_BUNDLED_AUTOPILOT");

/// The default flight: the example scenario shipped in the repository.
pub const DEFAULT_SCENARIO: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/scenarios/square.toml"
);

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
    /// Fly a scenario in lockstep and print a summary.
    Run {
        /// The scenario file (default: examples/scenarios/square.toml, the
        /// Iris flying the square mission in wind on noisy estimates).
        scenario: Option<PathBuf>,
        /// The autopilot library (default: the bundled reference autopilot).
        #[arg(long)]
        autopilot: Option<PathBuf>,
        /// Write the CSV log here (needs a `log` cadence in the scenario).
        #[arg(long)]
        log: Option<PathBuf>,
        /// Record the plant's inputs at every boundary here, for `replay`.
        #[arg(long)]
        record: Option<PathBuf>,
        /// Where the autopilot runs: `process` (a child process; a crash,
        /// exit or hang of the library is reported with its signal,
        /// function and time, and the log stays complete) or `in-process`
        /// (cheaper; a crash ends the harness after one line).
        #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
        isolation: IsolationArg,
        /// Wall-time limit of one autopilot step in seconds, enforced by the
        /// watchdog of the isolated mode [default: 5].
        #[arg(long, value_parser = positive_seconds)]
        step_timeout: Option<f64>,
        /// Wall-time limit in seconds of the autopilot's other calls (load,
        /// create, mission upload, parameters, destroy) [default: 60].
        #[arg(long, value_parser = positive_seconds)]
        call_timeout: Option<f64>,
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
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum IsolationArg {
    Process,
    InProcess,
}

/// A finite, positive number of seconds of at most a day.
fn positive_seconds(s: &str) -> Result<f64, String> {
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
            let path = path.unwrap_or_else(|| PathBuf::from(BUNDLED_AUTOPILOT));
            check_lib::run(&path, Duration::from_secs_f64(call_timeout))
        }
        Command::Run {
            scenario,
            autopilot,
            log,
            record,
            isolation,
            step_timeout,
            call_timeout,
        } => {
            let isolation = match isolation {
                IsolationArg::InProcess => {
                    if step_timeout.is_some() || call_timeout.is_some() {
                        warn!(
                            "lockstep run: --step-timeout and --call-timeout apply to --isolation process \
                             only (in-process, nothing can stop a call that hangs)"
                        );
                        return run::Exit::ConfigError.into();
                    }
                    Isolation::InProcess
                }
                IsolationArg::Process => {
                    let d = IsolationOptions::default();
                    Isolation::Process(IsolationOptions {
                        step_timeout: step_timeout.map_or(d.step_timeout, Duration::from_secs_f64),
                        call_timeout: call_timeout.map_or(d.call_timeout, Duration::from_secs_f64),
                        ..d
                    })
                }
            };
            run::run(
                &scenario.unwrap_or_else(|| PathBuf::from(DEFAULT_SCENARIO)),
                &autopilot.unwrap_or_else(|| PathBuf::from(BUNDLED_AUTOPILOT)),
                log.as_deref(),
                record.as_deref(),
                &isolation,
            )
        }
        Command::Replay { recording, spec } => run::replay(&recording, spec.as_deref()),
    }
}
