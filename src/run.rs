//! `lockstep run`: fly a scenario and print what happened.

use std::path::Path;
use std::process::ExitCode;

use lockstep_abi::mode_name;
use lockstep_harness::engine::Engine;
use lockstep_harness::record::Replay;
use lockstep_harness::scenario::Scenario;
use lockstep_plant::AircraftSpec;

pub fn run(
    scenario: &Path,
    autopilot: &Path,
    log: Option<&Path>,
    record: Option<&Path>,
) -> ExitCode {
    let s = match Scenario::load(scenario) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockstep run: {e}");
            return ExitCode::from(2);
        }
    };
    if log.is_some() && s.cadence("log").is_none() {
        eprintln!(
            "lockstep run: --log given but {} has no `log` cadence under [cadences]",
            scenario.display()
        );
        return ExitCode::from(2);
    }
    let mut engine = match Engine::new(&s, autopilot, log) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("lockstep run: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(r) = record
        && let Err(e) = engine.record_to(r)
    {
        eprintln!("lockstep run: {e}");
        return ExitCode::from(2);
    }
    println!("scenario      {}", scenario.display());
    if let Some(d) = &s.description {
        println!("              {d}");
    }
    println!(
        "vehicle       {} ({} rotors)",
        engine.plant().name,
        engine.plant().rotors.len()
    );
    println!("seed          {}", s.seed);
    match engine.run() {
        Ok(sum) => {
            let p = sum.position_ned_m;
            println!(
                "simulated     {:.3} s in {} boundaries",
                sum.end.as_secs_f64(),
                sum.boundaries
            );
            println!(
                "final         mode {} ({})",
                mode_name(sum.mode),
                if sum.armed { "armed" } else { "not armed" }
            );
            println!(
                "position      N {:.2} m, E {:.2} m, altitude {:.2} m",
                p[0], p[1], -p[2]
            );
            println!(
                "mission       {}",
                if sum.mission_finished {
                    "finished"
                } else {
                    "not finished"
                }
            );
            println!("battery       {:.1} % left", 100.0 * sum.soc);
            if let Some(l) = log {
                println!("log           {} ({} rows)", l.display(), sum.log_rows);
            }
            if let Some(r) = record {
                println!("recording     {}", r.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lockstep run: stopped at t = {} us: {e}", engine.now().0);
            ExitCode::from(1)
        }
    }
}

pub fn replay(recording: &Path, spec: Option<&str>) -> ExitCode {
    let spec = match spec.map(AircraftSpec::resolve).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("lockstep replay: {e}");
            return ExitCode::from(2);
        }
    };
    let replay = match Replay::open(recording, spec.as_ref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lockstep replay: {e}");
            return ExitCode::from(2);
        }
    };
    println!("recording     {}", recording.display());
    println!("vehicle       {}", replay.plant().name);
    let mut last = 0;
    let mut boundaries = 0u64;
    match replay.run(|t, _| {
        last = t.0;
        boundaries += 1;
    }) {
        Ok(x) => {
            println!(
                "replayed      {:.3} s in {boundaries} boundaries",
                last as f64 * 1e-6
            );
            println!(
                "position      N {:.6} m, E {:.6} m, altitude {:.6} m",
                x[0], x[1], -x[2]
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("lockstep replay: {e}");
            ExitCode::from(1)
        }
    }
}
