//! `lockstep replay`: a recording's inputs flown again through the plant,
//! compared with a log, written as a log; what it did printed.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_run::replay::{self, ReplayRequest};

#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The recording made by `fly --record`.
    recording: PathBuf,
    /// Refuse the recording unless it was made with this spec (built-in
    /// name or path); default: the spec embedded in the recording.
    #[arg(long)]
    spec: Option<String>,
    /// Integrate with this method instead of the recorded one (euler,
    /// rk4, bs32, dp54).
    #[arg(long)]
    integrator: Option<String>,
    /// Compare the replayed states with this flight log's (the `fly` log
    /// of the recorded run): the largest difference per state group.
    #[arg(long)]
    compare: Option<PathBuf>,
    /// Write the replay as a flight log (the `fly` columns; the
    /// autopilot's are NaN), with its sidecar.
    #[arg(long)]
    log: Option<PathBuf>,
    /// Rows per second of --log (the period must be whole microseconds
    /// of recorded boundaries) [default: 10].
    #[arg(long, requires = "log", default_value_t = 10.0)]
    log_rate: f64,
}

pub fn command(a: ReplayArgs) -> ExitCode {
    let verb = "replay";
    let request = ReplayRequest {
        recording: a.recording.clone(),
        spec: a.spec,
        integrator: a.integrator,
        compare: a.compare,
        log: a.log.map(|l| (l, a.log_rate)),
    };
    let prepared = match replay::prepare(request) {
        Ok(p) => p,
        Err(e) => return crate::refused(verb, &e),
    };
    let h = prepared.header();
    say!("recording     {}", a.recording.display());
    say!("vehicle       {}", h.vehicle);
    if h.completed {
        say!("recorded run  completed");
    } else {
        say!("recorded run  {}; the recording ends there", h.recorded);
    }
    say!("integrator    {}", h.integrator);
    let r = prepared.run();
    match &r.log {
        Some(Ok((path, rows))) => say!("log           {} ({rows} rows)", path.display()),
        Some(Err(e)) => warn!("lockstep {verb}: {e}"),
        None => {}
    }
    if let Some(c) = &r.comparison {
        say!(
            "compared      {} rows of {} ({} not reached)",
            c.compared,
            c.log.display(),
            c.unmatched
        );
        for (group, m) in &c.max_abs {
            say!("  max |diff|  {group:<20} {m:.3e}");
        }
    }
    match &r.result {
        Ok(x) => {
            say!(
                "replayed      {:.3} s in {} boundaries",
                r.last_us as f64 * 1e-6,
                r.boundaries
            );
            say!(
                "position      N {:.6} m, E {:.6} m, altitude {:.6} m",
                x[0],
                x[1],
                -x[2]
            );
        }
        Err(e) => warn!("lockstep {verb}: {e}"),
    }
    ExitCode::from(r.exit_status())
}
