//! `lockstep fly --network-role primary|secondary` and `lockstep ctl`: a
//! fleet stepped across processes and machines (zenoh; in a build with the
//! `distributed` feature), and the network options every networked verb
//! shares.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::Override;
use lockstep_run::fleet::distributed::{self, PrimaryRequest};
use lockstep_run::net::Network;

use crate::Output;

/// A network role (`--network-role`, case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Primary,
    Secondary,
}

/// `primary` or `secondary`, in any case.
pub fn role(s: &str) -> Result<Role, String> {
    match s.to_ascii_lowercase().as_str() {
        "primary" => Ok(Role::Primary),
        "secondary" => Ok(Role::Secondary),
        _ => Err(format!("`{s}` is not a role: primary or secondary")),
    }
}

/// A build without the `distributed` feature hides the network options
/// from `--help` (given, they are refused with the reason).
pub const HIDDEN: bool = !cfg!(feature = "distributed");

/// The network options of `fly`, `ctl`, `cosim`, `orchestrate` and the
/// hosts.
#[derive(Debug, Clone, clap::Args)]
pub struct NetArgs {
    /// The run's name on the network: peers of one run give the same one.
    #[arg(long, default_value = "lockstep", hide = HIDDEN)]
    pub network_session: String,
    /// An endpoint to listen on (`tcp/0.0.0.0:7447`). Repeatable. With
    /// neither --network-listen nor --network-connect, peers find each
    /// other by UDP multicast scouting.
    #[arg(long, hide = HIDDEN)]
    pub network_listen: Vec<String>,
    /// An endpoint to connect to (`tcp/10.0.0.5:7447`, the primary's).
    /// Repeatable.
    #[arg(long, hide = HIDDEN)]
    pub network_connect: Vec<String>,
    /// Seconds a silent peer is still alive (its liveliness lease); a peer
    /// silent for longer is gone and the run stops [default: 1].
    #[arg(long, value_parser = crate::positive_seconds, hide = HIDDEN)]
    pub network_lease: Option<f64>,
    /// Seconds to wait for the other peers to join [default: 60].
    #[arg(long, value_parser = crate::positive_seconds, hide = HIDDEN)]
    pub network_wait: Option<f64>,
}

impl NetArgs {
    /// The run layer's network.
    pub fn network(&self) -> Network {
        Network {
            session: self.network_session.clone(),
            listen: self.network_listen.clone(),
            connect: self.network_connect.clone(),
            lease: self.network_lease.map(Duration::from_secs_f64),
            wait: self.network_wait.map(Duration::from_secs_f64),
        }
    }
}

/// What a distributed `fly` needs.
pub struct NetFly {
    pub verb: &'static str,
    pub role: Role,
    pub secondaries: Option<u32>,
    /// The scenario given on the command line (the primary's; a secondary
    /// takes none).
    pub scenario: Option<PathBuf>,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    pub output: Output,
    pub net: NetArgs,
    pub step_deadline: Option<f64>,
    /// The fleet served to ground stations (the primary's).
    pub gcs: Option<lockstep_run::gcs::GcsOptions>,
    /// Kept to the wall clock (the primary's).
    pub pace: Option<f64>,
}

pub fn fly(o: NetFly) -> ExitCode {
    match o.role {
        Role::Primary => primary(o),
        Role::Secondary => secondary(o),
    }
}

fn primary(o: NetFly) -> ExitCode {
    let verb = o.verb;
    let request = PrimaryRequest {
        scenario: o.scenario,
        autopilot: o.autopilot,
        overrides: o.overrides,
        out: o.out,
        isolation: o.isolation,
        net: o.net.network(),
        secondaries: o.secondaries.unwrap_or(0),
        step_deadline: o.step_deadline.map(Duration::from_secs_f64),
        gcs: o.gcs,
        pace: o.pace,
    };
    let prepared = match distributed::prepare_primary(request) {
        Ok(p) => p,
        Err(e) => return crate::refused(verb, &e),
    };
    if o.output == Output::Text {
        let how = format!(
            "primary of {} secondaries (session `{}`)",
            o.secondaries.unwrap_or(0),
            prepared.session()
        );
        crate::fleet::print_header(&prepared.header(), &how);
    }
    let interrupt = crate::signals::catch();
    match prepared.run(Some(interrupt), move |l| warn!("lockstep {verb}: {l}")) {
        Ok(report) => crate::fleet::print_report(verb, &report, o.output),
        Err(e) => crate::refused(verb, &e),
    }
}

fn secondary(o: NetFly) -> ExitCode {
    let verb = o.verb;
    if o.scenario.is_some() {
        return crate::refuse(
            verb,
            "a secondary reads the scenario from the primary: give none",
        );
    }
    if o.secondaries.is_some() || o.out.is_some() || !o.overrides.is_empty() {
        return crate::refuse(
            verb,
            "--network-secondaries, --out and scenario overrides are the primary's",
        );
    }
    if o.gcs.is_some() || o.pace.is_some() {
        return crate::refuse(
            verb,
            "--mavlink, --mavlink-replay, --realtime and --speed are the primary's (it serves \
             the fleet and keeps its time)",
        );
    }
    let joined = match distributed::join_secondary(&o.net.network()) {
        Ok(j) => j,
        Err(e) => return crate::refused(verb, &e),
    };
    if o.output == Output::Text {
        say!(
            "secondary     {} of {} in session `{}`: {}",
            joined.index,
            joined.secondaries,
            joined.session,
            joined.scenario
        );
    }
    match joined.run() {
        Ok(rounds) => {
            if o.output == Output::Text {
                say!("done          {rounds} steps answered");
            }
            ExitCode::SUCCESS
        }
        Err(e) => crate::refused(verb, &e),
    }
}

/// `lockstep ctl pause|resume`.
pub fn ctl(command: &str, net: &NetArgs) -> ExitCode {
    match distributed::control(&net.network(), command) {
        Ok(answer) => {
            say!("{answer}");
            ExitCode::SUCCESS
        }
        Err(e) => crate::refused("ctl", &e),
    }
}
