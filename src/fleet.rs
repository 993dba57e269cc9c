//! `lockstep fly` of a fleet scenario (`[[vehicles]]`): every vehicle's
//! log in `--out`, the fleet's encounters, each vehicle's verdict.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use lockstep_abi::Isolation;
use lockstep_fleet::run::{FleetError, FleetOptions, log_path};
use lockstep_fleet::{Fleet, FleetScenario, FleetSummary};
use lockstep_harness::report::{FinalState, VerdictReport, file_digest, real_time_factor};
use lockstep_harness::scenario::Override;

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

#[derive(Debug, serde::Serialize)]
struct VehicleReport {
    name: String,
    log: Option<String>,
    digest: Option<String>,
    final_state: FinalState,
    verdict: VerdictReport,
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
    threads: usize,
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

pub fn fly(o: FleetFly) -> ExitCode {
    let verb = o.verb;
    let text = o.output == Output::Text;
    let fs = match FleetScenario::load_with(&o.scenario, &o.overrides) {
        Ok(f) => f,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            return Exit::ConfigError.into();
        }
    };
    if let Some(dir) = &o.out
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        warn!(
            "lockstep {verb}: --out {}: cannot create the directory: {e}",
            dir.display()
        );
        return Exit::ConfigError.into();
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
    if text {
        say!("scenario      {}", o.scenario.display());
        if let Some(d) = &fs.description {
            say!("              {d}");
        }
        say!(
            "fleet         {} vehicles, meeting every {} us, on {} thread{}",
            fs.vehicles.len(),
            fs.sync.0,
            o.threads,
            if o.threads == 1 { "" } else { "s" }
        );
        say!("autopilot     {}", o.autopilot.display());
        say!("seed          {}", fs.seed);
    }
    let started = Instant::now();
    let result = fleet.run();
    let wall = started.elapsed().as_secs_f64();
    let names = fleet.names().to_vec();
    let (status, outcome, error) = match &result {
        Ok(s) if s.passed() => (Exit::Success as u8, "completed", None),
        Ok(_) => (Exit::ExpectationFailed as u8, "completed", None),
        Err(e) => (
            match e {
                FleetError::Vehicle { source, .. } => status_code(source),
                FleetError::Interrupted { signal, .. } => 128u8.saturating_add(*signal as u8),
                FleetError::Threads { .. } | FleetError::LogDir { .. } => Exit::RunError as u8,
            },
            if matches!(e, FleetError::Interrupted { .. }) {
                "interrupted"
            } else {
                "stopped"
            },
            Some(e.to_string()),
        ),
    };
    let encounter = |t: u64, kind: &'static str, a: usize, b: usize, d: f64| EncounterReport {
        time_us: t,
        kind,
        a: names[a].clone(),
        b: names[b].clone(),
        separation_m: d,
    };
    let simulated_us = fleet.now().0;
    let report = FleetReport {
        scenario: o.scenario.display().to_string(),
        seed: fs.seed,
        sync_period_us: fs.sync.0,
        threads: o.threads,
        outcome,
        error,
        exit_status: status,
        simulated_us,
        wall_time_s: wall,
        real_time_factor: real_time_factor(simulated_us, wall),
        vehicles: result.as_ref().map_or_else(
            |_| Vec::new(),
            |s: &FleetSummary| {
                s.vehicles
                    .iter()
                    .map(|(name, sum)| {
                        let log = o
                            .out
                            .as_ref()
                            .filter(|_| sum.log_rows > 0)
                            .map(|d| log_path(d, name));
                        VehicleReport {
                            name: name.clone(),
                            digest: log.as_ref().and_then(|l| file_digest(l).ok()),
                            log: log.map(|l| l.display().to_string()),
                            final_state: FinalState::of(sum),
                            verdict: VerdictReport::of(sum),
                        }
                    })
                    .collect()
            },
        ),
        encounters: result.as_ref().map_or_else(
            |_| Vec::new(),
            |s| {
                s.encounters
                    .iter()
                    .map(|e| encounter(e.time.0, e.kind.name(), e.a, e.b, e.separation_m))
                    .collect()
            },
        ),
        encounters_dropped: result.as_ref().map_or(0, |s| s.encounters_dropped),
        closest: result
            .as_ref()
            .ok()
            .and_then(|s| s.closest)
            .map(|c| encounter(c.time.0, "closest", c.a, c.b, c.separation_m)),
        collisions: result.as_ref().map_or(0, |s| s.collisions),
    };
    if let Err(e) = &result {
        warn!("lockstep {verb}: {e}");
        if !matches!(e, FleetError::Interrupted { .. }) {
            warn!(
                "              the fleet stopped at {}; every log is written up to there",
                lockstep_abi::at(simulated_us)
            );
        }
    }
    if text {
        print_text(&report);
    }
    let json = serde_json::to_string_pretty(&report).expect("a report serializes");
    if o.output == Output::Json {
        say!("{json}");
    }
    if let Some(dir) = &o.out {
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
        let f = &v.final_state;
        let p = f.position_ned_m;
        say!(
            "{:<16} {:>9.2} {:>9.2} {:>8.2}  {:<8} {:>6.1}  {}",
            v.name,
            p[0],
            p[1],
            -p[2],
            f.mode,
            100.0 * f.soc,
            if v.verdict.passed { "pass" } else { "FAIL" }
        );
        for c in &v.verdict.crashes {
            say!("                 crash: {}", c.what);
        }
        for c in v.verdict.checks.iter().filter(|c| !c.passed) {
            say!("                 failed: {} ({})", c.key, c.detail);
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
