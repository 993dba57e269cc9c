//! Parts of a run served by processes of their own (co-simulation
//! participants, orchestrated models), over zenoh: the run listens (on a
//! free loopback port unless told where), starts the `process` ones as
//! children (`lockstep participant-host` / `model-host`) and waits for the
//! `remote` ones started elsewhere. A build without the `distributed`
//! feature refuses them with [`NO_NETWORK`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use lockstep_abi::Isolation;

use crate::net::Network;

/// The parts a run serves elsewhere, and how.
#[derive(Debug, Clone, Default)]
pub struct Elsewhere {
    /// Parts started here as child processes.
    pub process: Vec<String>,
    /// Parts started elsewhere, which this run waits for.
    pub remote: Vec<String>,
    /// How long one call may take [default: 30 s].
    pub call_deadline: Option<Duration>,
    pub net: Network,
    /// The `lockstep` executable the children run (needed for `process`).
    pub program: Option<PathBuf>,
    /// A signal number stored here gives up the wait for a part at once
    /// (the run is then interrupted before its first step).
    pub interrupt: Option<Arc<AtomicUsize>>,
}

impl Elsewhere {
    /// The signal that interrupted the run while its parts were started
    /// or awaited, as an error (`None`: none did).
    pub(crate) fn interrupted(&self, what: &str) -> Option<crate::RunError> {
        let sig = self
            .interrupt
            .as_ref()?
            .load(std::sync::atomic::Ordering::SeqCst) as i32;
        (sig != 0).then(|| {
            crate::RunError::classified(
                lockstep_harness::outcome::class::Classified {
                    class: lockstep_harness::outcome::class::ErrorClass::Interrupted,
                    part: lockstep_harness::outcome::class::Part::Signal,
                    signal: Some(sig),
                },
                format!(
                    "interrupted by {} while its {what}s were started or awaited, before the first step",
                    lockstep_abi::signal_name(sig)
                ),
            )
        })
    }

    /// Nothing is served elsewhere.
    pub fn is_empty(&self) -> bool {
        self.process.is_empty() && self.remote.is_empty()
    }

    /// Whether part `name` is served elsewhere.
    pub fn has(&self, name: &str) -> bool {
        self.process.iter().chain(&self.remote).any(|n| n == name)
    }

    /// Refuses a name the file does not declare (`what`: participant,
    /// model; `names`: the declared ones).
    pub fn check_names(&self, file: &Path, what: &str, names: &[&str]) -> Result<(), String> {
        for n in self.process.iter().chain(&self.remote) {
            if !names.contains(&n.as_str()) {
                return Err(format!(
                    "{} has no {what} `{n}` (its {what}s: {})",
                    file.display(),
                    names.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// What kind of part is hosted.
/// (Read only by a build with the network.)
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
pub(crate) struct HostKind {
    /// `orchestrate`, `cosim`: names the session.
    pub verb: &'static str,
    /// The subcommand that serves one (`model-host`).
    pub host_command: &'static str,
    /// Its flag naming the one it serves (`--model`).
    pub name_flag: &'static str,
    /// `model`, `participant`: for messages.
    pub what: &'static str,
}

impl HostKind {
    /// A co-simulation's participants (`lockstep participant-host`).
    pub(crate) const PARTICIPANT: HostKind = HostKind {
        verb: "cosim",
        host_command: "participant-host",
        name_flag: "--participant",
        what: "participant",
    };
    /// An orchestration's models (`lockstep model-host`).
    pub(crate) const MODEL: HostKind = HostKind {
        verb: "orchestrate",
        host_command: "model-host",
        name_flag: "--model",
        what: "model",
    };
}

/// The processes serving the parts `e` names, started or reached (`None`
/// when it names none); a signal meanwhile is the run's interruption, and
/// a part that cannot be served refuses the run.
pub(crate) fn open_for(
    e: &Elsewhere,
    kind: HostKind,
    child: ChildSetup,
    notice: &dyn Fn(&str),
) -> Result<Option<Hosts>, crate::RunError> {
    if e.is_empty() {
        return Ok(None);
    }
    let opened = open(e, kind, child, notice);
    if let Some(stop) = e.interrupted(kind.what) {
        return Err(stop);
    }
    opened.map(Some).map_err(crate::RunError::configuration)
}

/// What the children need besides their part's name.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
pub(crate) struct ChildSetup<'a> {
    pub file: &'a Path,
    pub autopilot: &'a Path,
    pub isolation: &'a Isolation,
    /// Given to each child as `--out` (where a vehicle writes its log).
    pub out: Option<&'a Path>,
}

#[cfg(feature = "distributed")]
pub(crate) use with_network::{Hosts, open};

#[cfg(not(feature = "distributed"))]
pub(crate) use without_network::{Hosts, open};

#[cfg(not(feature = "distributed"))]
mod without_network {
    use super::*;
    use crate::net::NO_NETWORK;

    /// No processes in a build without the network.
    #[derive(Debug)]
    pub(crate) struct Hosts;

    pub(crate) fn open(
        _: &Elsewhere,
        _: HostKind,
        _: ChildSetup,
        _: &dyn Fn(&str),
    ) -> Result<Hosts, String> {
        Err(format!("--process/--remote: {NO_NETWORK}"))
    }

    impl Hosts {
        pub(crate) fn end(&mut self, _finished: bool) {}
    }
}

#[cfg(feature = "distributed")]
mod with_network {
    use lockstep_remote::net::NetOptions;
    use lockstep_remote::processes::{ProcessOptions, Processes};

    use super::*;

    /// The processes of a run, started and reached.
    pub(crate) type Hosts = Processes;

    /// Opens the run's end of the session (a session name of its own when
    /// only children join) and starts the children; `notice` hears their
    /// pids and whom the run waits for.
    pub(crate) fn open(
        e: &Elsewhere,
        kind: HostKind,
        child: ChildSetup,
        notice: &dyn Fn(&str),
    ) -> Result<Hosts, String> {
        let n = &e.net;
        let mut listen = n.listen.clone();
        if listen.is_empty() && n.connect.is_empty() {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("cannot find a free port on the loopback: {e}"))?
                .port();
            listen.push(format!("tcp/127.0.0.1:{port}"));
        }
        let session = if e.remote.is_empty() && n.session == "lockstep" {
            format!("lockstep-{}-{}", kind.verb, std::process::id())
        } else {
            n.session.clone()
        };
        let mut p = Processes::open(ProcessOptions {
            net: NetOptions {
                session: session.clone(),
                listen: listen.clone(),
                connect: n.connect.clone(),
                multicast: false,
                lease: n.lease(),
            },
            deadline: e.call_deadline.unwrap_or(Duration::from_secs(30)),
            wait: n.wait(),
            stop: e.interrupt.clone(),
        })?;
        // Children connect where this one listens (a wildcard address is
        // reached on the loopback).
        let connect: Vec<String> = listen
            .iter()
            .map(|e| e.replace("0.0.0.0", "127.0.0.1"))
            .collect();
        if !e.process.is_empty() && e.program.is_none() {
            return Err(format!(
                "--process: no lockstep program was given to start {} processes",
                kind.what
            ));
        }
        for name in &e.process {
            let program = e.program.as_deref().expect("checked above");
            let mut args = vec![
                kind.host_command.to_string(),
                child.file.display().to_string(),
                kind.name_flag.into(),
                name.clone(),
                "--autopilot".into(),
                child.autopilot.display().to_string(),
                "--isolation".into(),
                match child.isolation {
                    Isolation::InProcess => "in-process".into(),
                    Isolation::Process(_) => "process".into(),
                },
                "--network-session".into(),
                session.clone(),
                "--network-lease".into(),
                n.lease().as_secs_f64().to_string(),
                "--network-wait".into(),
                n.wait().as_secs_f64().to_string(),
            ];
            for c in &connect {
                args.push("--network-connect".into());
                args.push(c.clone());
            }
            if let Some(out) = child.out {
                args.push("--out".into());
                args.push(out.display().to_string());
            }
            let pid = p.spawn(name, program, &args)?;
            notice(&format!("{} `{name}` runs in process {pid}", kind.what));
        }
        if !e.remote.is_empty() {
            notice(&format!(
                "waiting for {}(s) {} in session `{session}` at {}",
                kind.what,
                e.remote.join(", "),
                listen.join(", ")
            ));
        }
        Ok(p)
    }
}

/// A serving process's network: multicast scouting when given no endpoint.
#[cfg(feature = "distributed")]
pub(crate) fn serving(n: &Network) -> lockstep_remote::net::NetOptions {
    n.options()
}

/// Refuses serving in a build without the network.
#[cfg(not(feature = "distributed"))]
pub(crate) fn refuse_serving() -> String {
    crate::net::NO_NETWORK.to_string()
}
