//! `lockstep fly` of one vehicle: the request to the run layer, a header
//! before the flight, a progress bar during it, the report after it (text,
//! JSON or nothing), and the report's exit status.

use std::process::ExitCode;
use std::time::Instant;

use lockstep_run::flight::{self, FlightHeader, FlightReport, FlightRequest, real_time_factor};

use crate::Output;

/// The most timeline lines the text summary prints (all are in the JSON).
const TIMELINE_LINES: usize = 20;

pub fn fly(
    verb: &str,
    request: FlightRequest,
    pace: Option<f64>,
    gcs: Option<lockstep_run::gcs::GcsOptions>,
    output: Output,
) -> ExitCode {
    let interrupt = crate::signals::catch();
    let mut prepared = match flight::prepare(request) {
        Ok(p) => p,
        Err(e) => return crate::refused(verb, &e),
    };
    prepared.interrupt_on(interrupt);
    if let Some(g) = &gcs
        && let Err(e) = prepared.serve(g)
    {
        return crate::refused(verb, &e);
    }
    if let Some(speed) = pace {
        prepared.pace(speed);
    }
    let header = prepared.header();
    if output == Output::Text {
        print_header(&header);
        if let Some(g) = &gcs {
            for e in &g.endpoints {
                say!("mavlink       {e} ({:?} modes)", g.style);
            }
            if let Some(r) = &g.replay {
                say!("mavlink       replaying {}", r.display());
            }
        }
    }
    let mut bar = Progress::new(output != Output::Quiet, header.duration_us, Instant::now());
    let report = prepared.fly(|t| bar.update(t));
    bar.finish();
    if let Some(e) = &report.error {
        warn!("lockstep {verb}: {e}");
        let log_failed = report.log.as_ref().is_some_and(|l| !l.complete);
        if report.outcome != flight::Outcome::Interrupted && !log_failed {
            warn!(
                "              the run stopped at {}; what happened up to there is written",
                lockstep_abi::at(report.simulated_us)
            );
        }
    }
    match output {
        Output::Text => print_text(&report),
        Output::Json => say!("{}", report.to_json()),
        Output::Quiet => {}
    }
    for e in &report.output_errors {
        warn!("lockstep {verb}: {e}");
    }
    if report.error.is_none() && !report.passed() {
        warn!("lockstep {verb}: the flight did not meet its expectations (see the verdict)");
    }
    ExitCode::from(report.exit_status)
}

fn print_header(h: &FlightHeader) {
    say!("scenario      {}", h.scenario.display());
    if let Some(d) = &h.description {
        say!("              {d}");
    }
    say!(
        "autopilot     {}{}",
        h.autopilot.display(),
        if h.flight_stack {
            ", waiting for it to connect"
        } else if h.isolated {
            ""
        } else {
            " (in-process)"
        }
    );
    say!("vehicle       {} ({} rotors)", h.vehicle, h.rotors);
    say!("seed          {}", h.seed);
}

/// A progress bar on stderr (simulated time, real-time factor), drawn
/// only when stderr is a terminal and the run has taken half a second of
/// wall time already: short runs and pipes see nothing.
struct Progress {
    enabled: bool,
    total_us: u64,
    started: Instant,
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(wanted: bool, total_us: u64, started: Instant) -> Progress {
        use std::io::IsTerminal;
        Progress {
            enabled: wanted && std::io::stderr().is_terminal(),
            total_us,
            started,
            bar: None,
        }
    }

    fn update(&mut self, now_us: u64) {
        if !self.enabled {
            return;
        }
        let wall = self.started.elapsed();
        if self.bar.is_none() && wall < std::time::Duration::from_millis(500) {
            return;
        }
        let total = self.total_us;
        let bar = self.bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40.cyan/blue} {msg}") {
                b.set_style(style);
            }
            b
        });
        bar.set_position(now_us);
        bar.set_message(format!(
            "{:.1} of {:.1} s simulated, real-time factor {:.0}",
            now_us as f64 * 1e-6,
            total as f64 * 1e-6,
            real_time_factor(now_us, wall.as_secs_f64())
        ));
    }

    fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

/// The text summary after the flight.
fn print_text(r: &FlightReport) {
    if let Some(f) = &r.final_state {
        say!(
            "simulated     {:.3} s in {} boundaries",
            r.simulated_us as f64 * 1e-6,
            r.boundaries
        );
        say!(
            "final         mode {} ({})",
            f.mode,
            if f.armed { "armed" } else { "not armed" }
        );
        let p = f.position_ned_m;
        say!(
            "position      N {:.2} m, E {:.2} m, altitude {:.2} m",
            p[0],
            p[1],
            -p[2]
        );
        say!(
            "mission       {}",
            if f.mission_finished {
                "finished"
            } else {
                "not finished"
            }
        );
        say!("battery       {:.1} % left", 100.0 * f.soc);
    }
    for n in &r.link_notes {
        say!("link          {n}");
    }
    say!(
        "wall time     {:.3} s (real-time factor {:.0})",
        r.wall_time_s,
        r.real_time_factor
    );
    if let Some(l) = &r.log {
        if !l.complete {
            say!("log           {} (incomplete: writing it failed)", l.path);
        } else {
            let upto = l
                .last_time_us
                .map(|t| format!(", the last at {}", lockstep_abi::at(t)))
                .unwrap_or_default();
            say!("log           {} ({} rows{upto})", l.path, l.rows);
        }
    }
    if let Some(d) = &r.digest {
        say!("digest        {d} (of the log)");
    }
    if let Some(rec) = &r.recording {
        say!("recording     {rec}");
    }
    if let Some(u) = &r.ulog {
        say!("ulog          {u}");
    }
    for p in &r.plots {
        say!("plot          {p}");
    }
    if let Some(v) = &r.viewer {
        say!("viewer        {v}");
    }
    for d in &r.dropped_events {
        say!("dropped       {d}");
    }
    let mut first = true;
    for e in r.timeline.iter().take(TIMELINE_LINES) {
        say!(
            "{:<13} {:>14}  {:<8}  {}",
            if first { "timeline" } else { "" },
            format!("{:.6} s", e.time_us as f64 * 1e-6),
            e.kind.name(),
            e.what
        );
        first = false;
    }
    let more = (r.timeline.len().saturating_sub(TIMELINE_LINES)) as u64 + r.timeline_dropped;
    if more > 0 {
        say!("              ... {more} more entries (all in --json)");
    }
    if let Some(v) = &r.verdict {
        for c in &v.crashes {
            say!(
                "crash         {}{}",
                c.what,
                if v.crashes_allowed { " (allowed)" } else { "" }
            );
        }
        for c in &v.checks {
            say!(
                "{:<13} {}: {}",
                if c.passed {
                    "expect ok"
                } else {
                    "expect FAILED"
                },
                c.key,
                c.detail
            );
        }
        say!("verdict       {}", if v.passed { "ok" } else { "FAILED" });
    }
}
