//! The `lockstep` command line: parses arguments, calls library code, prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::CheckLib { path } => {
            let path = path.unwrap_or_else(|| PathBuf::from(BUNDLED_AUTOPILOT));
            check_lib::run(&path)
        }
        Command::Run {
            scenario,
            autopilot,
            log,
            record,
        } => run::run(
            &scenario.unwrap_or_else(|| PathBuf::from(DEFAULT_SCENARIO)),
            &autopilot.unwrap_or_else(|| PathBuf::from(BUNDLED_AUTOPILOT)),
            log.as_deref(),
            record.as_deref(),
        ),
        Command::Replay { recording, spec } => run::replay(&recording, spec.as_deref()),
    }
}
