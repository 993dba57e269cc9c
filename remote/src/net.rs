//! A zenoh peer session for lockstep: where and how a peer joins
//! ([`NetOptions`]) and the session opened with them ([`open`]). Every
//! networked part (a distributed fleet, remote participants and models)
//! opens its sessions here.

use std::time::Duration;

use zenoh::{Config, Session, Wait};

/// Where and how a peer joins.
#[derive(Debug, Clone, PartialEq)]
pub struct NetOptions {
    /// The key space's name: peers of one run share it.
    pub session: String,
    /// Endpoints to listen on (`tcp/127.0.0.1:7447`); none: any port.
    pub listen: Vec<String>,
    /// Endpoints to connect to.
    pub connect: Vec<String>,
    /// Find peers by UDP multicast scouting (else only the endpoints).
    pub multicast: bool,
    /// How long a silent peer is still alive.
    pub lease: Duration,
}

fn json_list(v: &[String]) -> String {
    let quoted: Vec<String> = v.iter().map(|e| format!("{e:?}")).collect();
    format!("[{}]", quoted.join(","))
}

/// Opens a peer session with `o`'s endpoints, scouting and lease.
pub fn open(o: &NetOptions) -> Result<Session, String> {
    let mut c = Config::default();
    let set = |c: &mut Config, k: &str, v: &str| {
        c.insert_json5(k, v)
            .map_err(|e| format!("zenoh config {k} = {v}: {e}"))
    };
    set(&mut c, "mode", "\"peer\"")?;
    if !o.listen.is_empty() {
        set(&mut c, "listen/endpoints", &json_list(&o.listen))?;
    }
    if !o.connect.is_empty() {
        set(&mut c, "connect/endpoints", &json_list(&o.connect))?;
        // A peer started with (or before) the one it connects to finds no
        // listener at first; zenoh tries again after 1 s by default, which
        // was most of a distributed run's start-up (the secondaries joined
        // 1.04 s after launch, started together with the primary). Again
        // after 50 ms, doubling up to 1 s.
        set(
            &mut c,
            "connect/retry",
            "{period_init_ms: 50, period_max_ms: 1000, period_increase_factor: 2}",
        )?;
    }
    set(
        &mut c,
        "scouting/multicast/enabled",
        if o.multicast { "true" } else { "false" },
    )?;
    let lease_ms = o.lease.as_millis().max(1);
    set(&mut c, "transport/link/tx/lease", &lease_ms.to_string())?;
    set(&mut c, "transport/link/tx/keep_alive", "4")?;
    zenoh::open(c).wait().map_err(|e| e.to_string())
}
