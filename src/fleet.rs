//! `lockstep fly` of a fleet scenario (`[[vehicles]]`), on threads of this
//! process or across a primary and its secondaries (`crate::distributed`):
//! the header before it flies, the report after it (text, JSON or nothing).

use std::process::ExitCode;

use lockstep_run::fleet::{self, FleetHeader, FleetReport, FleetRequest};

use crate::Output;

/// The header lines before a fleet flies.
pub fn print_header(h: &FleetHeader, how: &str) {
    say!("scenario      {}", h.scenario.display());
    if let Some(d) = &h.description {
        say!("              {d}");
    }
    say!(
        "fleet         {} vehicles, meeting every {} us, {how}",
        h.vehicles,
        h.sync_period_us
    );
    say!("autopilot     {}", h.autopilot.display());
    say!("seed          {}", h.seed);
}

pub fn fly(
    verb: &str,
    request: FleetRequest,
    pace: Option<f64>,
    gcs: Option<lockstep_run::gcs::GcsOptions>,
    output: Output,
) -> ExitCode {
    let threads = request.threads;
    let mut prepared = match fleet::prepare(request) {
        Ok(f) => f,
        Err(e) => return crate::refused(verb, &e),
    };
    prepared.interrupt_on(crate::signals::catch());
    if let Some(g) = &gcs
        && let Err(e) = prepared.serve(g)
    {
        return crate::refused(verb, &e);
    }
    if let Some(speed) = pace {
        prepared.pace(speed);
    }
    if output == Output::Text {
        let how = format!("on {threads} thread{}", if threads == 1 { "" } else { "s" });
        print_header(&prepared.header(), &how);
        if let Some(g) = &gcs {
            for e in &g.endpoints {
                say!(
                    "mavlink       {e} ({:?} modes; systems 1 to {})",
                    g.style,
                    prepared.header().vehicles
                );
            }
            if let Some(r) = &g.replay {
                say!("mavlink       replaying {}", r.display());
            }
        }
    }
    let report = prepared.run();
    print_report(verb, &report, output)
}

/// Prints the report of a fleet run (threaded or distributed); its exit
/// status.
pub fn print_report(verb: &str, r: &FleetReport, output: Output) -> ExitCode {
    if let Some(e) = &r.error {
        warn!("lockstep {verb}: {e}");
        if r.outcome != lockstep_run::flight::Outcome::Interrupted {
            warn!(
                "              the fleet stopped at {}; every log is written up to there",
                lockstep_abi::at(r.simulated_us)
            );
        }
    }
    match output {
        Output::Text => print_text(r),
        Output::Json => say!("{}", r.to_json()),
        Output::Quiet => {}
    }
    for e in &r.output_errors {
        warn!("lockstep {verb}: {e}");
    }
    if r.error.is_none() && !r.passed() {
        warn!("lockstep {verb}: a vehicle did not meet its expectations (see the verdicts)");
    }
    ExitCode::from(r.exit_status)
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
        let Some(o) = &v.outcome else {
            say!("{:<16} (no outcome: its run did not end)", v.name);
            continue;
        };
        let f = &o.final_state;
        let p = f.position_ned_m;
        say!(
            "{:<16} {:>9.2} {:>9.2} {:>8.2}  {:<8} {:>6.1}  {}",
            v.name,
            p[0],
            p[1],
            -p[2],
            f.mode,
            100.0 * f.soc,
            if o.passed { "pass" } else { "FAIL" }
        );
        for c in &o.verdict.crashes {
            say!("                 crash: {}", c.what);
        }
        for c in o.verdict.checks.iter().filter(|c| !c.passed) {
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
    for d in &r.dropped_events {
        say!("dropped       {d}");
    }
    if let Some(l) = &r.lookahead {
        match &l.stats.off {
            None => say!(
                "lookahead     {} sync boundaries in {} rounds ({} redone)",
                l.syncs,
                l.stats.rounds,
                l.stats.redone
            ),
            Some(why) => say!("lookahead     off: {why}"),
        }
    }
    for p in &r.plots {
        say!("plot          {p}");
    }
    if let Some(v) = &r.viewer {
        say!("viewer        {v}");
    }
}
