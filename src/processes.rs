//! Processes a run calls over zenoh (feature `distributed`): `orchestrate`'s
//! model processes and `cosim`'s participant processes. The caller listens
//! (on a free loopback port unless told where), starts the `--process`
//! ones as children of its own (`lockstep model-host` / `participant-host`)
//! and waits for the `--remote` ones started elsewhere.

use std::path::Path;
use std::time::Duration;

use lockstep_abi::Isolation;
use lockstep_distributed::remote::{ProcessOptions, Processes};
use lockstep_distributed::zenoh_link::NetOptions;

use crate::distributed::NetArgs;

/// What a run serves elsewhere, and how.
pub struct Hosted<'a> {
    /// `orchestrate`, `cosim`: for messages.
    pub verb: &'static str,
    /// The subcommand that serves one (`model-host`).
    pub host_command: &'static str,
    /// Its flag naming the one it serves (`--model`).
    pub name_flag: &'static str,
    /// `model`, `participant`: for messages.
    pub what: &'static str,
    pub file: &'a Path,
    pub net: &'a NetArgs,
    /// Seconds one call may take [default: 30].
    pub deadline: Option<f64>,
    pub process: &'a [String],
    pub remote: &'a [String],
    pub autopilot: &'a Path,
    pub isolation: &'a Isolation,
    /// Given to each child as `--out` (where a vehicle writes its log).
    pub out: Option<&'a Path>,
}

fn lease(n: &NetArgs) -> Duration {
    Duration::from_secs_f64(n.network_lease.unwrap_or(1.0))
}

fn wait(n: &NetArgs) -> Duration {
    Duration::from_secs_f64(n.network_wait.unwrap_or(60.0))
}

/// A serving process's network options (multicast scouting when given no
/// endpoint) and how long it waits for its caller.
pub fn net_options(n: &NetArgs) -> (NetOptions, Duration) {
    (
        NetOptions {
            session: n.network_session.clone(),
            listen: n.network_listen.clone(),
            connect: n.network_connect.clone(),
            multicast: n.network_listen.is_empty() && n.network_connect.is_empty(),
            lease: lease(n),
        },
        wait(n),
    )
}

/// The caller's session (a session name of its own when only children
/// join), the children started; their pids are said on stderr.
pub fn spawn_all(h: &Hosted) -> Result<Processes, String> {
    let n = h.net;
    let mut listen = n.network_listen.clone();
    if listen.is_empty() && n.network_connect.is_empty() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot find a free port on the loopback: {e}"))?
            .port();
        listen.push(format!("tcp/127.0.0.1:{port}"));
    }
    let session = if h.remote.is_empty() && n.network_session == "lockstep" {
        format!("lockstep-{}-{}", h.verb, std::process::id())
    } else {
        n.network_session.clone()
    };
    let mut p = Processes::open(ProcessOptions {
        net: NetOptions {
            session: session.clone(),
            listen: listen.clone(),
            connect: n.network_connect.clone(),
            multicast: false,
            lease: lease(n),
        },
        deadline: Duration::from_secs_f64(h.deadline.unwrap_or(30.0)),
        wait: wait(n),
    })?;
    // Children connect where this one listens (a wildcard address is
    // reached on the loopback).
    let connect: Vec<String> = listen
        .iter()
        .map(|e| e.replace("0.0.0.0", "127.0.0.1"))
        .collect();
    let exe = std::env::current_exe().map_err(|e| {
        format!(
            "cannot find this program to start {} processes: {e}",
            h.what
        )
    })?;
    for name in h.process {
        let mut args = vec![
            h.host_command.to_string(),
            h.file.display().to_string(),
            h.name_flag.into(),
            name.clone(),
            "--autopilot".into(),
            h.autopilot.display().to_string(),
            "--isolation".into(),
            match h.isolation {
                Isolation::InProcess => "in-process".into(),
                Isolation::Process(_) => "process".into(),
            },
            "--network-session".into(),
            session.clone(),
            "--network-lease".into(),
            lease(n).as_secs_f64().to_string(),
            "--network-wait".into(),
            wait(n).as_secs_f64().to_string(),
        ];
        for c in &connect {
            args.push("--network-connect".into());
            args.push(c.clone());
        }
        if let Some(out) = h.out {
            args.push("--out".into());
            args.push(out.display().to_string());
        }
        let pid = p.spawn(name, &exe, &args)?;
        warn!(
            "lockstep {}: {} `{name}` runs in process {pid}",
            h.verb, h.what
        );
    }
    if !h.remote.is_empty() {
        warn!(
            "lockstep {}: waiting for {}(s) {} in session `{session}` at {}",
            h.verb,
            h.what,
            h.remote.join(", "),
            listen.join(", ")
        );
    }
    Ok(p)
}
