//! `lockstep fly --network-role primary|secondary` and `lockstep ctl`: a
//! fleet stepped across processes and machines (zenoh; in a build with the
//! `distributed` feature).

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::Override;

use crate::run::{Exit, Output};

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

/// The network options of `fly` and `ctl`.
#[derive(Debug, Clone, clap::Args)]
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
pub struct NetArgs {
    /// The run's name on the network: peers of one run give the same one.
    #[arg(long, default_value = "lockstep")]
    pub network_session: String,
    /// An endpoint to listen on (`tcp/0.0.0.0:7447`). Repeatable. With
    /// neither --network-listen nor --network-connect, peers find each
    /// other by UDP multicast scouting.
    #[arg(long)]
    pub network_listen: Vec<String>,
    /// An endpoint to connect to (`tcp/10.0.0.5:7447`, the primary's).
    /// Repeatable.
    #[arg(long)]
    pub network_connect: Vec<String>,
    /// Seconds a silent peer is still alive (its liveliness lease); a peer
    /// silent for longer is gone and the run stops [default: 1].
    #[arg(long, value_parser = crate::positive_seconds)]
    pub network_lease: Option<f64>,
    /// Seconds to wait for the other peers to join [default: 60].
    #[arg(long, value_parser = crate::positive_seconds)]
    pub network_wait: Option<f64>,
}

/// What a distributed `fly` needs.
#[cfg_attr(not(feature = "distributed"), allow(dead_code))]
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
    /// The longest a round may take [default: 60 s].
    pub step_deadline: Option<f64>,
}

#[cfg(not(feature = "distributed"))]
pub fn fly(o: NetFly) -> ExitCode {
    warn!(
        "lockstep {}: this lockstep was built without distributed runs; build it with \
         `cargo build --release --features distributed`",
        o.verb
    );
    Exit::ConfigError.into()
}

#[cfg(not(feature = "distributed"))]
pub fn ctl(_cmd: &str, _net: &NetArgs) -> ExitCode {
    warn!(
        "lockstep ctl: this lockstep was built without distributed runs; build it with \
         `cargo build --release --features distributed`"
    );
    Exit::ConfigError.into()
}

#[cfg(feature = "distributed")]
pub use with_zenoh::{ctl, fly};

#[cfg(feature = "distributed")]
mod with_zenoh {
    use std::path::Path;
    use std::time::{Duration, Instant};

    use lockstep_distributed::protocol::{OverrideSpec, PROTOCOL_VERSION, Setup};
    use lockstep_distributed::zenoh_link::{NetOptions, ZenohPrimary, ZenohSecondary, command};
    use lockstep_distributed::{Primary, PrimaryError, PrimaryOptions, Secondary};
    use lockstep_fleet::FleetScenario;

    use super::*;
    use crate::fleet::{FleetResult, load, make_out, print_header, report};

    fn net_options(n: &NetArgs) -> NetOptions {
        NetOptions {
            session: n.network_session.clone(),
            listen: n.network_listen.clone(),
            connect: n.network_connect.clone(),
            multicast: n.network_listen.is_empty() && n.network_connect.is_empty(),
            lease: Duration::from_secs_f64(n.network_lease.unwrap_or(1.0)),
        }
    }

    fn wait(n: &NetArgs) -> Duration {
        Duration::from_secs_f64(n.network_wait.unwrap_or(60.0))
    }

    pub fn fly(o: NetFly) -> ExitCode {
        match o.role {
            Role::Primary => primary(o),
            Role::Secondary => secondary(o),
        }
    }

    fn refuse(verb: &str, msg: String) -> ExitCode {
        warn!("lockstep {verb}: {msg}");
        Exit::ConfigError.into()
    }

    fn primary(o: NetFly) -> ExitCode {
        let verb = o.verb;
        let Some(n) = o.secondaries.filter(|n| *n > 0) else {
            return refuse(
                verb,
                "--network-role primary needs --network-secondaries N (at least 1)".into(),
            );
        };
        let Some(scenario) = o.scenario.clone() else {
            return refuse(
                verb,
                "the primary flies a fleet scenario: give its path".into(),
            );
        };
        // Secondaries resolve the scenario's paths as the primary does,
        // wherever they were started.
        let scenario = std::fs::canonicalize(&scenario).unwrap_or(scenario);
        let autopilot = std::fs::canonicalize(&o.autopilot).unwrap_or(o.autopilot.clone());
        let fs = match load(verb, &scenario, &o.overrides) {
            Ok(f) => f,
            Err(code) => return code,
        };
        if let Err(code) = make_out(verb, o.out.as_deref()) {
            return code;
        }
        let text = match std::fs::read_to_string(&scenario) {
            Ok(t) => t,
            Err(e) => return refuse(verb, format!("{}: {e}", scenario.display())),
        };
        let (in_process, step_ms, call_ms) = match &o.isolation {
            Isolation::InProcess => (true, 0, 0),
            Isolation::Process(i) => (
                false,
                i.step_timeout.as_millis() as u64,
                i.call_timeout.as_millis() as u64,
            ),
        };
        let overrides: Vec<OverrideSpec> = o
            .overrides
            .iter()
            .map(|v| OverrideSpec {
                key: v.key.clone(),
                value: v.value.to_string(),
                given_as: v.given_as.clone(),
            })
            .collect();
        let setup = |index: u32| Setup {
            protocol: PROTOCOL_VERSION,
            index,
            secondaries: n,
            scenario_path: scenario.display().to_string(),
            scenario_text: text.clone(),
            overrides: overrides.clone(),
            autopilot: autopilot.display().to_string(),
            in_process,
            step_timeout_ms: step_ms,
            call_timeout_ms: call_ms,
        };
        let text_out = o.output == Output::Text;
        let interrupt = crate::run::catch_signals();
        let net = net_options(&o.net);
        if text_out {
            print_header(
                &scenario,
                &fs,
                &format!("primary of {n} secondaries (session `{}`)", net.session),
                &autopilot,
            );
        }
        let link = match ZenohPrimary::discover(&net, n as usize, setup, wait(&o.net), |l| {
            warn!("lockstep {verb}: {l}")
        }) {
            Ok(l) => l,
            Err(e) => {
                warn!("lockstep {verb}: {e}");
                return Exit::RunError.into();
            }
        };
        let options = PrimaryOptions {
            log_dir: o.out.clone(),
            autopilot: autopilot.clone(),
            step_deadline: Duration::from_secs_f64(o.step_deadline.unwrap_or(60.0)),
        };
        let mut primary = match Primary::new(link, fs.clone(), options) {
            Ok(p) => p,
            Err(e) => return refuse(verb, e.to_string()),
        };
        primary.interrupt_on(interrupt);
        primary.on_notice(move |l| warn!("lockstep {verb}: {l}"));
        let started = Instant::now();
        let result = primary.run();
        let wall = started.elapsed().as_secs_f64();
        let simulated = primary.now().0;
        let (run, ending) = match result {
            Ok(out) => {
                let mut rounds: Vec<f64> = out
                    .round_times
                    .iter()
                    .map(|d| d.as_secs_f64() * 1e6)
                    .collect();
                rounds.sort_by(f64::total_cmp);
                let pct = |p: f64| {
                    rounds
                        .get(((rounds.len() as f64 - 1.0) * p).round() as usize)
                        .copied()
                        .unwrap_or(0.0)
                };
                let run = serde_json::json!({
                    "mode": "distributed",
                    "secondaries": n,
                    "session": net.session,
                    "rounds": out.rounds,
                    "migrations": out.migrations,
                    "refused_acks": out.refused_acks,
                    "pinned": out.pinned,
                    "round_latency_us": { "p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99) },
                });
                (
                    run,
                    Ok(FleetResult {
                        vehicles: out.vehicles,
                        encounters: out.encounters,
                        encounters_dropped: out.encounters_dropped,
                        closest: out.closest,
                        collisions: out.collisions,
                    }),
                )
            }
            Err(e) => {
                let status = match &e {
                    PrimaryError::Interrupted { signal, .. } => 128u8.saturating_add(*signal as u8),
                    PrimaryError::Vehicle(_, s) => *s,
                    PrimaryError::Setup { .. } => Exit::ConfigError as u8,
                    _ => Exit::RunError as u8,
                };
                let signal = matches!(e, PrimaryError::Interrupted { .. });
                (
                    serde_json::json!({ "mode": "distributed", "secondaries": n }),
                    Err((e.to_string(), status, signal)),
                )
            }
        };
        report(
            verb,
            &scenario,
            &fs,
            o.out.as_deref(),
            o.output,
            run,
            simulated,
            wall,
            ending,
        )
    }

    fn secondary(o: NetFly) -> ExitCode {
        let verb = o.verb;
        if o.scenario.is_some() {
            return refuse(
                verb,
                "a secondary reads the scenario from the primary: give none".into(),
            );
        }
        if o.secondaries.is_some() || o.out.is_some() || !o.overrides.is_empty() {
            return refuse(
                verb,
                "--network-secondaries, --out and scenario overrides are the primary's".into(),
            );
        }
        let net = net_options(&o.net);
        let (link, setup) = match ZenohSecondary::join(&net, wait(&o.net)) {
            Ok(v) => v,
            Err(e) => {
                warn!("lockstep {verb}: {e}");
                return Exit::RunError.into();
            }
        };
        let overrides: Result<Vec<Override>, String> = setup
            .overrides
            .iter()
            .map(|s| {
                let t: toml::Table = format!("v = {}", s.value)
                    .parse()
                    .map_err(|e| format!("override {}: {e}", s.given_as))?;
                let v = t.get("v").cloned().ok_or("an empty override")?;
                Ok(Override::new(&s.key, v, s.given_as.clone()))
            })
            .collect();
        let fs = overrides.and_then(|ov| {
            FleetScenario::from_toml_str_with(
                &setup.scenario_text,
                Path::new(&setup.scenario_path),
                &ov,
            )
            .map_err(|e| e.to_string())
        });
        let fs = match fs {
            Ok(f) => f,
            Err(e) => {
                warn!("lockstep {verb}: the primary's scenario: {e}");
                return Exit::ConfigError.into();
            }
        };
        let isolation = if setup.in_process {
            Isolation::InProcess
        } else {
            let d = lockstep_abi::IsolationOptions::default();
            Isolation::Process(lockstep_abi::IsolationOptions {
                step_timeout: Duration::from_millis(setup.step_timeout_ms),
                call_timeout: Duration::from_millis(setup.call_timeout_ms),
                ..d
            })
        };
        if o.output == Output::Text {
            say!(
                "secondary     {} of {} in session `{}`: {}",
                setup.index,
                setup.secondaries,
                net.session,
                setup.scenario_path
            );
        }
        let mut s = Secondary::new(link, fs, PathBuf::from(&setup.autopilot), isolation);
        match s.run(crate::run::status_code) {
            Ok(()) => {
                if o.output == Output::Text {
                    say!("done          {} steps answered", s.rounds);
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                warn!("lockstep {verb}: {e}");
                Exit::RunError.into()
            }
        }
    }

    pub fn ctl(cmd: &str, n: &NetArgs) -> ExitCode {
        match command(&net_options(n), cmd, wait(n).min(Duration::from_secs(10))) {
            Ok(answer) => {
                say!("{answer}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                warn!("lockstep ctl: {e}");
                Exit::RunError.into()
            }
        }
    }
}
