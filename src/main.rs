//! The `lockstep` command line: parses arguments, calls library code, prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check_lib;

/// The reference autopilot built by build.rs from c_examples/autopilot.
pub const BUNDLED_AUTOPILOT: &str = env!("LOCKSTEP_BUNDLED_AUTOPILOT");

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::CheckLib { path } => {
            let path = path.unwrap_or_else(|| PathBuf::from(BUNDLED_AUTOPILOT));
            check_lib::run(&path)
        }
    }
}
