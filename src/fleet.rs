//! `lockstep fly` of a fleet scenario (`[[vehicles]]`): every vehicle's
//! log in `--out`, the fleet's encounters, each vehicle's verdict. The
//! report is the same whether the fleet ran on threads of this process or
//! across a primary and its secondaries (`crate::distributed`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_fleet::run::{FleetError, FleetOptions, log_path};
use lockstep_fleet::separation::{Closest, Encounter};
use lockstep_fleet::{Fleet, FleetScenario};
use lockstep_harness::inputs::scenario::Override;
use lockstep_harness::outcome::report::{file_digest, real_time_factor};

use crate::run::{Exit, Output, status_code};

/// Everything `fly` needs for a fleet.
pub struct FleetFly {
    pub verb: &'static str,
    pub scenario: PathBuf,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    pub output: Output,
    pub threads: usize,
}

/// What a fleet run (threaded or distributed) produced.
pub struct FleetResult {
    /// Each vehicle's name and outcome JSON (`lockstep_fleet::report`).
    pub vehicles: Vec<(String, Option<String>)>,
    pub encounters: Vec<Encounter>,
    pub encounters_dropped: u64,
    pub closest: Option<Closest>,
    pub collisions: usize,
}

/// How it ended: the result, or the error, its exit status and whether a
/// signal stopped it.
pub type Ending = Result<FleetResult, (String, u8, bool)>;

#[derive(Debug, serde::Serialize)]
struct VehicleReport {
    name: String,
    log: Option<String>,
    digest: Option<String>,
    #[serde(flatten)]
    outcome: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, serde::Serialize)]
struct EncounterReport {
    time_us: u64,
    kind: &'static str,
    a: String,
    b: String,
    separation_m: f64,
}

#[derive(Debug, serde::Serialize)]
struct FleetReport {
    scenario: String,
    seed: u64,
    sync_period_us: u64,
    /// `threads` (with their number) or `distributed` (with the
    /// secondaries, migrations and rounds).
    run: serde_json::Value,
    outcome: &'static str,
    error: Option<String>,
    exit_status: u8,
    simulated_us: u64,
    wall_time_s: f64,
    real_time_factor: f64,
    vehicles: Vec<VehicleReport>,
    encounters: Vec<EncounterReport>,
    encounters_dropped: u64,
    closest: Option<EncounterReport>,
    collisions: usize,
}

/// Loads the fleet (an error is printed and its status returned).
pub fn load(
    verb: &str,
    scenario: &Path,
    overrides: &[Override],
) -> Result<FleetScenario, ExitCode> {
    FleetScenario::load_with(scenario, overrides).map_err(|e| {
        warn!("lockstep {verb}: {e}");
        Exit::ConfigError.into()
    })
}

/// Creates `--out` (an error is printed and its status returned).
pub fn make_out(verb: &str, out: Option<&Path>) -> Result<(), ExitCode> {
    if let Some(dir) = out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        warn!(
            "lockstep {verb}: --out {}: cannot create the directory: {e}",
            dir.display()
        );
        return Err(Exit::ConfigError.into());
    }
    Ok(())
}

/// The header lines before a fleet flies.
pub fn print_header(scenario: &Path, fs: &FleetScenario, how: &str, autopilot: &Path) {
    say!("scenario      {}", scenario.display());
    if let Some(d) = &fs.description {
        say!("              {d}");
    }
    say!(
        "fleet         {} vehicles, meeting every {} us, {how}",
        fs.vehicles.len(),
        fs.sync.0
    );
    say!("autopilot     {}", autopilot.display());
    say!("seed          {}", fs.seed);
}

pub fn fly(o: FleetFly) -> ExitCode {
    let verb = o.verb;
    let fs = match load(verb, &o.scenario, &o.overrides) {
        Ok(f) => f,
        Err(code) => return code,
    };
    if let Err(code) = make_out(verb, o.out.as_deref()) {
        return code;
    }
    let options = FleetOptions {
        autopilot: o.autopilot.clone(),
        log_dir: o.out.clone(),
        isolation: o.isolation.clone(),
        threads: o.threads,
    };
    let mut fleet = match Fleet::new(&fs, &options) {
        Ok(f) => f,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            return match &e {
                FleetError::Vehicle { source, .. } => ExitCode::from(status_code(source)),
                _ => Exit::ConfigError.into(),
            };
        }
    };
    fleet.interrupt_on(crate::run::catch_signals());
    if o.output == Output::Text {
        let how = format!(
            "on {} thread{}",
            o.threads,
            if o.threads == 1 { "" } else { "s" }
        );
        print_header(&o.scenario, &fs, &how, &o.autopilot);
    }
    let started = Instant::now();
    let result = fleet.run();
    let wall = started.elapsed().as_secs_f64();
    let ending: Ending = match result {
        Ok(s) => Ok(FleetResult {
            vehicles: s
                .vehicles
                .iter()
                .map(|(n, sum)| (n.clone(), Some(lockstep_fleet::report::summary_json(sum))))
                .collect(),
            encounters: s.encounters,
            encounters_dropped: s.encounters_dropped,
            closest: s.closest,
            collisions: s.collisions,
        }),
        Err(e) => {
            let status = match &e {
                FleetError::Vehicle { source, .. } => status_code(source),
                FleetError::Interrupted { signal, .. } => 128u8.saturating_add(*signal as u8),
                FleetError::Threads { .. } | FleetError::LogDir { .. } => Exit::RunError as u8,
            };
            let signal = matches!(e, FleetError::Interrupted { .. });
            Err((e.to_string(), status, signal))
        }
    };
    let run = serde_json::json!({ "mode": "threads", "threads": o.threads });
    report(
        verb,
        &o.scenario,
        &fs,
        o.out.as_deref(),
        o.output,
        run,
        fleet.now().0,
        wall,
        ending,
    )
}

/// Prints and writes the report of a fleet run; its exit status.
#[allow(clippy::too_many_arguments)]
pub fn report(
    verb: &str,
    scenario: &Path,
    fs: &FleetScenario,
    out: Option<&Path>,
    output: Output,
    run: serde_json::Value,
    simulated_us: u64,
    wall: f64,
    ending: Ending,
) -> ExitCode {
    let names: Vec<String> = fs.vehicles.iter().map(|v| v.name.clone()).collect();
    let encounter = |t: u64, kind: &'static str, a: usize, b: usize, d: f64| EncounterReport {
        time_us: t,
        kind,
        a: names[a].clone(),
        b: names[b].clone(),
        separation_m: d,
    };
    let (status, outcome, error) = match &ending {
        Ok(r) => {
            let passed = r.vehicles.iter().all(|(_, j)| {
                j.as_deref()
                    .and_then(|j| serde_json::from_str::<serde_json::Value>(j).ok())
                    .is_some_and(|v| v["passed"] == true)
            });
            let status = if passed {
                Exit::Success as u8
            } else {
                Exit::ExpectationFailed as u8
            };
            (status, "completed", None)
        }
        Err((e, status, signal)) => (
            *status,
            if *signal { "interrupted" } else { "stopped" },
            Some(e.clone()),
        ),
    };
    let empty = FleetResult {
        vehicles: Vec::new(),
        encounters: Vec::new(),
        encounters_dropped: 0,
        closest: None,
        collisions: 0,
    };
    let r = ending.as_ref().unwrap_or(&empty);
    let report = FleetReport {
        scenario: scenario.display().to_string(),
        seed: fs.seed,
        sync_period_us: fs.sync.0,
        run,
        outcome,
        error,
        exit_status: status,
        simulated_us,
        wall_time_s: wall,
        real_time_factor: real_time_factor(simulated_us, wall),
        vehicles: r
            .vehicles
            .iter()
            .map(|(name, json)| {
                let log = out.map(|d| log_path(d, name)).filter(|l| l.is_file());
                VehicleReport {
                    name: name.clone(),
                    digest: log.as_ref().and_then(|l| file_digest(l).ok()),
                    log: log.map(|l| l.display().to_string()),
                    outcome: json
                        .as_deref()
                        .and_then(|j| serde_json::from_str(j).ok())
                        .unwrap_or_default(),
                }
            })
            .collect(),
        encounters: r
            .encounters
            .iter()
            .map(|e| encounter(e.time.0, e.kind.name(), e.a, e.b, e.separation_m))
            .collect(),
        encounters_dropped: r.encounters_dropped,
        closest: r
            .closest
            .map(|c| encounter(c.time.0, "closest", c.a, c.b, c.separation_m)),
        collisions: r.collisions,
    };
    if let Err((e, _, signal)) = &ending {
        warn!("lockstep {verb}: {e}");
        if !signal {
            warn!(
                "              the fleet stopped at {}; every log is written up to there",
                lockstep_abi::at(simulated_us)
            );
        }
    }
    if output == Output::Text {
        print_text(&report);
    }
    let json = serde_json::to_string_pretty(&report).expect("a report serializes");
    if output == Output::Json {
        say!("{json}");
    }
    if let Some(dir) = out {
        let f = dir.join("summary.json");
        if let Err(e) = std::fs::write(&f, format!("{json}\n")) {
            warn!(
                "lockstep {verb}: cannot write the summary {}: {e}",
                f.display()
            );
            return Exit::RunError.into();
        }
    }
    if status == Exit::ExpectationFailed as u8 {
        warn!("lockstep {verb}: a vehicle did not meet its expectations (see the verdicts)");
    }
    ExitCode::from(status)
}

fn print_text(r: &FleetReport) {
    say!(
        "simulated     {:.3} s; wall time {:.3} s (real-time factor {:.0})",
        r.simulated_us as f64 * 1e-6,
        r.wall_time_s,
        r.real_time_factor
    );
    if !r.vehicles.is_empty() {
        say!(
            "{:<16} {:>9} {:>9} {:>8}  {:<8} {:>6}  verdict",
            "vehicle",
            "north m",
            "east m",
            "alt m",
            "mode",
            "soc %"
        );
    }
    for v in &r.vehicles {
        let f = &v.outcome["final_state"];
        let p = |i: usize| f["position_ned_m"][i].as_f64().unwrap_or(f64::NAN);
        say!(
            "{:<16} {:>9.2} {:>9.2} {:>8.2}  {:<8} {:>6.1}  {}",
            v.name,
            p(0),
            p(1),
            -p(2),
            f["mode"].as_str().unwrap_or("?"),
            100.0 * f["soc"].as_f64().unwrap_or(f64::NAN),
            if v.outcome["passed"] == true {
                "pass"
            } else {
                "FAIL"
            }
        );
        let verdict = &v.outcome["verdict"];
        for c in verdict["crashes"].as_array().into_iter().flatten() {
            say!(
                "                 crash: {}",
                c["what"].as_str().unwrap_or("?")
            );
        }
        for c in verdict["checks"].as_array().into_iter().flatten() {
            if c["passed"] != true {
                say!(
                    "                 failed: {} ({})",
                    c["key"].as_str().unwrap_or("?"),
                    c["detail"].as_str().unwrap_or("")
                );
            }
        }
    }
    for e in &r.encounters {
        say!(
            "{:<13} {} and {}, {:.2} m apart at {}",
            e.kind,
            e.a,
            e.b,
            e.separation_m,
            lockstep_abi::at(e.time_us)
        );
    }
    if r.encounters_dropped > 0 {
        say!(
            "              ({} more encounters not kept)",
            r.encounters_dropped
        );
    }
    if let Some(c) = &r.closest {
        say!(
            "closest       {} and {}, {:.2} m apart at {}",
            c.a,
            c.b,
            c.separation_m,
            lockstep_abi::at(c.time_us)
        );
    }
    say!("collisions    {}", r.collisions);
}
