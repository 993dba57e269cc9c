//! The options of a run whose parts may be served elsewhere (`cosim`'s
//! participants, `orchestrate`'s models): the threads, where vehicles'
//! autopilots run, and which parts run in processes of their own, started
//! here or elsewhere, called over zenoh; and those of the process that
//! serves one such part (`participant-host`, `model-host`). Declared once,
//! flattened into both commands of each side.

use std::path::PathBuf;

use lockstep_abi::Isolation;
use lockstep_run::hosts::Elsewhere;

use crate::distributed::NetArgs;
use crate::fly::IsolationArg;

#[derive(Debug, clap::Args)]
pub struct HostArgs {
    /// Threads the parts are stepped on, this one among them (a
    /// co-simulation's participants of a wave, an orchestration's models of
    /// a cascade's pass) [default: the file's, else the machine's cores].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    pub threads: Option<u64>,
    /// Where vehicles' autopilots run: `process` (isolated) or `in-process`.
    #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
    pub isolation: IsolationArg,
    /// Run part NAME (a participant, a model) in a process of its own,
    /// started here (`lockstep participant-host`, `lockstep model-host`)
    /// and called over zenoh. Repeatable.
    #[arg(long, value_name = "NAME", hide = crate::distributed::HIDDEN)]
    pub process: Vec<String>,
    /// Call part NAME in a process started elsewhere (`lockstep
    /// participant-host SYSTEM --participant NAME`, `lockstep model-host
    /// FLEET --model NAME`, with `--network-connect ...`, on this or
    /// another machine). Repeatable.
    #[arg(long, value_name = "NAME", hide = crate::distributed::HIDDEN)]
    pub remote: Vec<String>,
    /// Seconds a part's process may take to answer one call before the run
    /// ends [default: 30].
    #[arg(long, value_parser = crate::positive_seconds, hide = crate::distributed::HIDDEN)]
    pub call_deadline: Option<f64>,
    #[command(flatten)]
    pub net: NetArgs,
}

impl HostArgs {
    pub fn isolation(&self) -> Isolation {
        self.isolation.isolation()
    }

    pub fn threads(&self) -> Option<usize> {
        self.threads.map(|t| t as usize)
    }

    /// What the run serves elsewhere: `--process`, `--remote` and the
    /// network options.
    pub fn elsewhere(self) -> Elsewhere {
        Elsewhere {
            process: self.process,
            remote: self.remote,
            call_deadline: self.call_deadline.map(std::time::Duration::from_secs_f64),
            net: self.net.network(),
            program: std::env::current_exe().ok(),
            interrupt: None,
        }
    }
}

/// The options of a process serving one part to a run elsewhere.
#[derive(Debug, clap::Args)]
pub struct ServedArgs {
    /// The autopilot of a vehicle whose entry names none (default: the
    /// bundled reference autopilot).
    #[arg(long)]
    pub autopilot: Option<PathBuf>,
    /// Where a vehicle's autopilot runs.
    #[arg(long, value_enum, default_value_t = IsolationArg::Process)]
    pub isolation: IsolationArg,
    /// Where a vehicle writes its flight log, as `<OUT>/<name>.csv`
    /// (created if needed; the run that starts this process with
    /// `--process` gives its own --out) [default: no log].
    #[arg(long, short)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub net: NetArgs,
}

impl ServedArgs {
    /// The autopilot (the bundled one when none is given); the reason when
    /// the bundled one cannot be written out.
    pub fn autopilot(&self) -> Result<PathBuf, String> {
        lockstep_run::assets::autopilot_or(self.autopilot.clone()).map_err(|e| e.to_string())
    }
}
