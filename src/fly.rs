//! `lockstep fly` and its alias `run`: the options, checked against each
//! other, and the flight they choose: one vehicle (`run`), a fleet in one
//! process (`fleet`) or a distributed fleet (`distributed`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use lockstep_abi::{Isolation, IsolationOptions};
use lockstep_harness::engine::cores;
use lockstep_run::fleet::FleetRequest;
use lockstep_run::flight::{FlightOutputs, FlightRequest};

use crate::{Output, args, distributed, fleet, flight, positive_seconds};

#[derive(Debug, clap::Args)]
pub struct FlyArgs {
    #[command(flatten)]
    flight: args::ScenarioArgs,
    /// Write the CSV log here (needs a `log` cadence in the scenario).
    #[arg(long)]
    log: Option<PathBuf>,
    /// Record the plant's inputs at every boundary here, for `replay`.
    #[arg(long)]
    record: Option<PathBuf>,
    /// Also draw the log as <PLOT>.png and <PLOT>.svg (with --out: always,
    /// as DIR/flight.png and DIR/flight.svg). Needs a log.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Also write the flight as ULog here, as it flies (PX4 topic names:
    /// state, status, landing, sensor samples, parameters, the timeline as
    /// logged messages; pyulog, Flight Review and PlotJuggler read it).
    /// Needs a `log` cadence (its state topics' rate), not a log file.
    #[arg(long)]
    ulog: Option<PathBuf>,
    /// Write everything the run writes into this directory (created if
    /// needed): log.csv (when the scenario has a `log` cadence and no
    /// --log is given) and summary.json.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Join a distributed run of a fleet scenario: `primary` (give the
    /// scenario and --network-secondaries; it writes the logs and the
    /// report) or `secondary` (give no scenario: it reads the primary's).
    /// Case-insensitive. Needs a build with `--features distributed`.
    #[arg(long, value_parser = distributed::role, hide = distributed::HIDDEN)]
    network_role: Option<distributed::Role>,
    /// The primary: how many secondaries to wait for before starting.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256), hide = distributed::HIDDEN)]
    network_secondaries: Option<u32>,
    /// The primary: seconds one step may take before the run stops (apart
    /// from the liveliness lease) [default: 60].
    #[arg(long, value_parser = positive_seconds, hide = distributed::HIDDEN)]
    step_deadline: Option<f64>,
    #[command(flatten)]
    net: distributed::NetArgs,
    /// A fleet scenario ([[vehicles]]): threads stepping the vehicles
    /// [default: the number of cores]. The result does not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Keep to the wall clock: one simulated second per second of wall
    /// time (for a ground station or a person watching). Time is still the
    /// simulation's: the outputs are those of a run as fast as possible.
    #[arg(long, conflicts_with = "speed")]
    realtime: bool,
    /// Keep to X simulated seconds per second of wall time (`--speed 10`:
    /// ten times real time) [default: as fast as possible].
    #[arg(long, value_name = "X", value_parser = speed)]
    speed: Option<f64>,
    /// Serve the flight to ground stations over MAVLink: `udp:HOST:PORT`
    /// sends to one listening there (QGroundControl: udp:127.0.0.1:14550,
    /// MAVSDK: udp:127.0.0.1:14540), `listen:HOST:PORT` waits for one to
    /// send first. Repeatable. A fleet's vehicles are systems 1, 2, ... in
    /// its order, on the one link (a distributed run's, on its primary's).
    /// The flight keeps to the wall clock
    /// (--realtime) unless --speed says otherwise; with --out, the inputs
    /// received are recorded in DIR/mavlink-inputs.jsonl.
    #[arg(long, value_name = "ENDPOINT", value_parser = gcs_endpoint)]
    mavlink: Vec<lockstep_run::gcs::Endpoint>,
    /// How the MAVLink vehicle reads: `px4` (PX4's custom modes) or
    /// `ardupilot` (ArduCopter's modes, home as mission item 0, and
    /// MAVFTP's parameter and mission files) [default: px4].
    #[arg(long, value_name = "STYLE", value_parser = ["px4", "ardupilot"])]
    mavlink_style: Option<String>,
    /// Record the ground stations' inputs here (with --out: by default
    /// DIR/mavlink-inputs.jsonl).
    #[arg(long, value_name = "FILE")]
    mavlink_record: Option<PathBuf>,
    /// MAVLink 2 signing: a file holding the link's secret key (32 bytes,
    /// or 64 hexadecimal digits). Every message sent is signed; only
    /// messages signed with the key are applied (the others are counted
    /// in the report). The key is never printed or logged.
    #[arg(long, value_name = "FILE")]
    mavlink_key: Option<PathBuf>,
    /// Replay the inputs an earlier --mavlink flight recorded: the same
    /// flight bit for bit, with no ground station, as fast as possible.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["mavlink", "mavlink_record"])]
    mavlink_replay: Option<PathBuf>,
    /// Print the summary as one JSON object instead of text.
    #[arg(long, conflicts_with = "quiet")]
    json: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    quiet: bool,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum IsolationArg {
    Process,
    InProcess,
}

impl IsolationArg {
    /// The isolation with the default timeouts.
    pub fn isolation(self) -> Isolation {
        match self {
            IsolationArg::InProcess => Isolation::InProcess,
            IsolationArg::Process => Isolation::Process(IsolationOptions::default()),
        }
    }
}

/// `lockstep fly` and its alias `run`: the options into library terms.
pub fn command(verb: &'static str, a: FlyArgs) -> ExitCode {
    let refuse = |msg: &str| crate::refuse(verb, msg);
    let isolation = match isolation(&a) {
        Ok(i) => i,
        Err(e) => return refuse(e),
    };
    let (scenario, autopilot, overrides) = match a.flight.resolve() {
        Ok(v) => v,
        Err(e) => return refuse(&e),
    };
    if a.network_role.is_none() && (a.network_secondaries.is_some() || a.step_deadline.is_some()) {
        return refuse("--network-secondaries and --step-deadline are for --network-role primary");
    }
    let output = Output::of(a.json, a.quiet);
    let (gcs, pace) = match ground_stations(verb, &a) {
        Ok(g) => g,
        Err(e) => return refuse(&e),
    };
    // The options of one vehicle's flight: a fleet's (and a distributed
    // run's) vehicles take theirs from the scenario and --out.
    let single = [
        ("--log", a.log.is_some()),
        ("--record", a.record.is_some()),
        ("--plot", a.plot.is_some()),
        ("--ulog", a.ulog.is_some()),
        ("--spec", a.flight.has_spec()),
        ("--mission", a.flight.has_mission()),
    ];
    let one_vehicle = single
        .iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| *flag);
    if let Some(role) = a.network_role {
        let threads = a.threads.is_some().then_some("--threads");
        if let Some(flag) = one_vehicle.or(threads) {
            return refuse(&format!(
                "{flag} is not for a distributed run: its vehicles' logs are the primary's \
                 (--out DIR), their specs and missions the fleet scenario's"
            ));
        }
        return distributed::fly(distributed::NetFly {
            verb,
            role,
            secondaries: a.network_secondaries,
            scenario: a.flight.has_scenario().then(|| scenario.clone()),
            autopilot,
            overrides,
            out: a.out,
            isolation,
            output,
            net: a.net,
            step_deadline: a.step_deadline,
            gcs,
            pace,
        });
    }
    match lockstep_run::fleet::is_fleet(&scenario) {
        Ok(true) => {
            if let Some(flag) = one_vehicle {
                return refuse(&format!(
                    "{flag} is for a scenario of one vehicle; {} is a fleet ([[vehicles]]): \
                     give --out DIR for every vehicle's log",
                    scenario.display()
                ));
            }
            return fleet::fly(
                verb,
                FleetRequest {
                    scenario,
                    autopilot,
                    overrides,
                    out: a.out,
                    isolation,
                    threads: a.threads.map_or_else(cores, |t| t as usize),
                },
                pace,
                gcs,
                output,
            );
        }
        Ok(false) => {}
        Err(e) => return crate::refused(verb, &e),
    }
    if a.threads.is_some() {
        return refuse(&format!(
            "--threads is for a fleet scenario ([[vehicles]]); {} has one vehicle",
            scenario.display()
        ));
    }
    flight::fly(
        verb,
        FlightRequest {
            scenario: scenario.into(),
            autopilot,
            overrides,
            outputs: FlightOutputs {
                log: a.log,
                record: a.record,
                ulog: a.ulog,
                plot: a.plot,
                out: a.out,
            },
            isolation,
            spelling: lockstep_run::choice::Spelling::Cli,
        },
        pace,
        gcs,
        output,
    )
}

/// `--isolation` with its timeouts (which only a process can keep).
fn isolation(a: &FlyArgs) -> Result<Isolation, &'static str> {
    Ok(match a.isolation {
        IsolationArg::InProcess => {
            if a.step_timeout.is_some() || a.call_timeout.is_some() {
                return Err(
                    "--step-timeout and --call-timeout apply to --isolation process only \
                     (in-process, nothing can stop a call that hangs)",
                );
            }
            Isolation::InProcess
        }
        IsolationArg::Process => {
            let d = IsolationOptions::default();
            Isolation::Process(IsolationOptions {
                step_timeout: a
                    .step_timeout
                    .map_or(d.step_timeout, Duration::from_secs_f64),
                call_timeout: a
                    .call_timeout
                    .map_or(d.call_timeout, Duration::from_secs_f64),
                ..d
            })
        }
    })
}

/// The ground stations served (`--mavlink` and its options, or a replay
/// of their inputs) and the pace (a served flight keeps to the wall clock
/// unless `--speed` says otherwise).
fn ground_stations(
    verb: &str,
    a: &FlyArgs,
) -> Result<(Option<lockstep_run::gcs::GcsOptions>, Option<f64>), String> {
    let served = !a.mavlink.is_empty();
    let pace = if a.realtime {
        Some(1.0)
    } else if a.speed.is_none() && served {
        // A ground station runs on the wall clock.
        Some(1.0)
    } else {
        a.speed
    };
    if a.mavlink_style.is_some() && !served {
        return Err("--mavlink-style is for --mavlink".into());
    }
    if a.mavlink_record.is_some() && !served {
        return Err("--mavlink-record is for --mavlink".into());
    }
    if a.mavlink_key.is_some() && !served {
        return Err("--mavlink-key is for --mavlink".into());
    }
    let key = match a
        .mavlink_key
        .as_deref()
        .map(lockstep_run::gcs::signing::read_key)
    {
        Some(Err(e)) => return Err(e),
        Some(Ok(k)) => Some(k),
        None => None,
    };
    if key.is_none() {
        for e in &a.mavlink {
            if let lockstep_run::gcs::Endpoint::Listen(addr) = e
                && !addr.ip().is_loopback()
            {
                warn!(
                    "lockstep {verb}: --mavlink listen:{addr} takes commands from anyone who can \
                     reach it, with no key: give --mavlink-key FILE to sign the link, or listen \
                     on 127.0.0.1"
                );
            }
        }
    }
    let gcs = (served || a.mavlink_replay.is_some()).then(|| lockstep_run::gcs::GcsOptions {
        endpoints: a.mavlink.clone(),
        style: a
            .mavlink_style
            .as_deref()
            .and_then(lockstep_run::gcs::Style::from_name)
            .unwrap_or(lockstep_run::gcs::Style::Px4),
        record: a.mavlink_record.clone().or_else(|| {
            served
                .then(|| a.out.as_ref().map(|d| d.join("mavlink-inputs.jsonl")))
                .flatten()
        }),
        replay: a.mavlink_replay.clone(),
        key,
    });
    Ok((gcs, pace))
}

/// A pace: simulated seconds per wall-clock second, in [0.001, 1e6].
fn speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (1e-3..=1e6).contains(&v) => Ok(v),
        _ => Err(format!(
            "{s} is not a speed in [0.001, 1000000] (simulated seconds per second)"
        )),
    }
}

/// A `--mavlink` endpoint.
fn gcs_endpoint(s: &str) -> Result<lockstep_run::gcs::Endpoint, String> {
    lockstep_run::gcs::Endpoint::parse(s)
}
