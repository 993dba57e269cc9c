//! `lockstep fly` (alias `run`): fly a scenario of one vehicle, print what
//! happened, and exit with a status that says how it went (see [`Exit`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::Instant;

use lockstep_abi::{AbiError, Isolation};
use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::outcome::report::{
    FinalState, FlightReport, LogReport, Outcome, VerdictReport, real_time_factor,
};

/// The exit statuses, documented in the README.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The run completed (and met its expectations).
    Success = 0,
    /// The autopilot failed (it crashed, exited, hung, broke the contract
    /// or refused to create, even while loading), or the run stopped early
    /// (the integration failed, a file could not be written).
    RunError = 1,
    /// An input was refused before the run started: the command line, the
    /// scenario, spec or mission, a log or recording path, or a library the
    /// loader's checks refuse (file, ELF, symbols, ABI version, layout,
    /// capabilities) or whose parameters or mission refuse the scenario's.
    ConfigError = 2,
    /// The run completed but its verdict failed: a crash was detected or an
    /// `[expect]` condition of the scenario was not met.
    ExpectationFailed = 3,
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// The status for an error: inputs refused before the flight are
/// configuration errors; everything the autopilot or the run did is a run
/// error; a signal gives 128 + its number.
fn status_of(e: &EngineError) -> ExitCode {
    ExitCode::from(status_code(e))
}

pub(crate) fn status_code(e: &EngineError) -> u8 {
    match e {
        EngineError::Interrupted { signal, .. } => 128u8.saturating_add(*signal as u8),
        EngineError::Spec(_)
        | EngineError::Mission(_)
        | EngineError::Config(_)
        | EngineError::Invalid { .. }
        | EngineError::RecordTooLate { .. } => Exit::ConfigError as u8,
        EngineError::Abi(
            AbiError::LibraryNotFound { .. }
            | AbiError::LibraryLoad { .. }
            | AbiError::MissingSymbol { .. }
            | AbiError::AbiVersionMismatch { .. }
            | AbiError::UnknownCapabilities { .. }
            | AbiError::InvalidLayoutTable { .. }
            | AbiError::LayoutMismatch { .. }
            | AbiError::NotReentrant { .. }
            | AbiError::HostUnavailable { .. }
            | AbiError::MissionRejected { .. }
            | AbiError::Param { .. }
            | AbiError::Unsupported { .. }
            | AbiError::PartialMigration { .. },
        ) => Exit::ConfigError as u8,
        _ => Exit::RunError as u8,
    }
}

/// SIGINT and SIGTERM set `which` to their number; a second one ends the
/// process at once (status 128 + signal).
pub fn catch_signals() -> Arc<AtomicUsize> {
    let which = Arc::new(AtomicUsize::new(0));
    let again = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let registered =
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&again))
                .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&again)))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)
                });
        if let Err(e) = registered {
            warn!("lockstep: cannot catch signal {sig}: {e}");
        }
    }
    which
}

/// How `fly` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// The text summary on stdout.
    Text,
    /// One JSON object on stdout (the same as `summary.json`).
    Json,
    /// Nothing but errors.
    Quiet,
}

/// Everything `fly` (and its alias `run`) needs.
pub struct FlyOptions {
    /// The verb typed (`fly` or `run`), for messages.
    pub verb: &'static str,
    pub scenario: PathBuf,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    pub log: Option<PathBuf>,
    pub record: Option<PathBuf>,
    /// The log again as ULog.
    pub ulog: Option<PathBuf>,
    /// Plots of the log: <stem>.png and <stem>.svg.
    pub plot: Option<PathBuf>,
    /// A directory for everything the run writes (log.csv, summary.json).
    pub out: Option<PathBuf>,
    pub isolation: Isolation,
    pub output: Output,
}

/// The most timeline lines the text summary prints (all are in the JSON).
const TIMELINE_LINES: usize = 20;

pub fn fly(o: FlyOptions) -> ExitCode {
    let verb = o.verb;
    let text = o.output == Output::Text;
    macro_rules! show {
        ($($t:tt)*) => {
            if text {
                say!($($t)*);
            }
        };
    }
    let interrupt = catch_signals();
    let s = match Scenario::load_with(&o.scenario, &o.overrides) {
        Ok(s) => s,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            return Exit::ConfigError.into();
        }
    };
    let mut log = o.log.clone();
    let mut summary_file = None;
    let mut plot = o.plot.clone();
    if let Some(dir) = &o.out {
        if let Err(e) = std::fs::create_dir_all(dir) {
            warn!(
                "lockstep {verb}: --out {}: cannot create the directory: {e}",
                dir.display()
            );
            return Exit::ConfigError.into();
        }
        if log.is_none() && s.cadence("log").is_some() {
            log = Some(dir.join("log.csv"));
        }
        summary_file = Some(dir.join("summary.json"));
        if plot.is_none() && s.cadence("log").is_some() {
            plot = Some(dir.join("flight"));
        }
    }
    let autopilot = o.autopilot.as_path();
    let scenario = o.scenario.as_path();
    let inputs = crate::args::inputs(scenario, autopilot, &s);
    let sidecar = log
        .as_deref()
        .map(lockstep_harness::io::log_meta::sidecar_path);
    let plot_files: Vec<PathBuf> = plot
        .iter()
        .flat_map(|stem| lockstep_plot::output_files(stem))
        .collect();
    let outputs: Vec<(&str, &Path)> = [
        ("--log", log.as_deref()),
        ("a plot", plot_files.first().map(PathBuf::as_path)),
        ("a plot", plot_files.get(1).map(PathBuf::as_path)),
        ("the log's sidecar", sidecar.as_deref()),
        ("--record", o.record.as_deref()),
        ("--ulog", o.ulog.as_deref()),
        ("the summary", summary_file.as_deref()),
    ]
    .into_iter()
    .filter_map(|(w, p)| p.map(|p| (w, p)))
    .collect();
    if let Err(e) = lockstep_harness::io::paths::check_outputs(&inputs, &outputs) {
        warn!("lockstep {verb}: {e}");
        return Exit::ConfigError.into();
    }
    if o.plot.is_some() && (log.is_none() || s.cadence("log").is_none()) {
        warn!(
            "lockstep {verb}: --plot needs a log: give --log or --out, and a `log` cadence \
             under [cadences] (or --set cadences.log.rate_hz=10)"
        );
        return Exit::ConfigError.into();
    }
    if o.ulog.is_some() && (log.is_none() || s.cadence("log").is_none()) {
        warn!(
            "lockstep {verb}: --ulog needs a log: give --log or --out, and a `log` cadence \
             under [cadences] (or --set cadences.log.rate_hz=100)"
        );
        return Exit::ConfigError.into();
    }
    if o.log.is_some() && s.cadence("log").is_none() {
        warn!(
            "lockstep {verb}: --log given but {} has no `log` cadence under [cadences] \
             (add one, or --set cadences.log.rate_hz=10)",
            scenario.display()
        );
        return Exit::ConfigError.into();
    }
    let mut engine = match Engine::with_isolation(&s, autopilot, log.as_deref(), &o.isolation) {
        Ok(e) => e,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            if matches!(e, EngineError::Abi(_))
                && !e.to_string().contains(&autopilot.display().to_string())
            {
                warn!("              autopilot library: {}", autopilot.display());
            }
            // A log that cannot be created is a refused input.
            return match e {
                EngineError::Log(_) => Exit::ConfigError.into(),
                e => status_of(&e),
            };
        }
    };
    if let Some(r) = &o.record
        && let Err(e) = engine.record_to(r)
    {
        warn!("lockstep {verb}: {e}");
        return Exit::ConfigError.into();
    }
    engine.interrupt_on(interrupt);
    // Read before the run: closing the instance at its end forgets it.
    let isolated = engine.autopilot().is_isolated();
    show!("scenario      {}", scenario.display());
    if let Some(d) = &s.description {
        show!("              {d}");
    }
    show!(
        "autopilot     {}{}",
        autopilot.display(),
        if isolated { "" } else { " (in-process)" }
    );
    show!(
        "vehicle       {} ({} rotors)",
        engine.plant().name,
        engine.plant().rotors.len()
    );
    show!("seed          {}", s.seed);
    let started = Instant::now();
    let mut bar = Progress::new(o.output != Output::Quiet, s.duration.0, started);
    let result = engine.run_observed(|t| bar.update(t.0));
    bar.finish();
    let wall = started.elapsed().as_secs_f64();

    let log_failed = matches!(result, Err(EngineError::Log(_)));
    let log_report = match (&log, engine.log()) {
        (Some(l), Some(flog)) => Some(LogReport {
            path: l.display().to_string(),
            rows: flog.rows(),
            last_time_us: flog.last_time_us(),
            complete: !log_failed,
        }),
        _ => None,
    };
    let mut extras_status = Exit::Success;
    if let (Some(u), Some(l)) = (&o.ulog, &log_report)
        && let Err(e) = lockstep_harness::io::ulog::export(Path::new(&l.path), u)
    {
        warn!("lockstep {verb}: --ulog: {e}");
        extras_status = Exit::RunError;
    }
    let mut plots = Vec::new();
    if let (Some(stem), Some(l)) = (&plot, &log_report) {
        match crate::plots::draw(Path::new(&l.path), stem) {
            Ok(files) => plots = files.iter().map(|f| f.display().to_string()).collect(),
            Err(e) => {
                warn!("lockstep {verb}: plots: {e}");
                extras_status = Exit::RunError;
            }
        }
    }
    // Kept by the log's writer as it wrote (none when writing failed).
    let digest = engine.log().and_then(|l| l.digest());
    let (status, outcome, error) = match &result {
        Ok(sum) if sum.verdict.passed() => (Exit::Success as u8, Outcome::Completed, None),
        Ok(_) => (Exit::ExpectationFailed as u8, Outcome::Completed, None),
        Err(e) => (
            status_code(e),
            if matches!(e, EngineError::Interrupted { .. }) {
                Outcome::Interrupted
            } else {
                Outcome::Stopped
            },
            Some(e.to_string()),
        ),
    };
    let (timeline, timeline_dropped) = match &result {
        Ok(sum) => (sum.timeline.clone(), sum.timeline_dropped),
        Err(_) => engine.timeline(),
    };
    let simulated_us = match &result {
        Ok(sum) => sum.end.0,
        Err(_) => engine.now().0,
    };
    let report = FlightReport {
        report_version: lockstep_harness::outcome::report::REPORT_VERSION,
        scenario: scenario.display().to_string(),
        description: s.description.clone(),
        autopilot: autopilot.display().to_string(),
        isolated,
        vehicle: engine.plant().name.clone(),
        rotors: engine.plant().rotors.len(),
        seed: s.seed,
        outcome,
        error,
        exit_status: status,
        simulated_us,
        boundaries: result.as_ref().map_or(0, |s| s.boundaries),
        wall_time_s: wall,
        real_time_factor: real_time_factor(simulated_us, wall),
        final_state: result.as_ref().ok().map(FinalState::of),
        log: log_report,
        recording: o.record.as_ref().map(|r| r.display().to_string()),
        plots,
        ulog: o
            .ulog
            .as_ref()
            .filter(|_| extras_status == Exit::Success)
            .map(|u| u.display().to_string()),
        digest,
        verdict: result.as_ref().ok().map(VerdictReport::of),
        timeline,
        timeline_dropped,
    };

    if let Err(e) = &result {
        warn!("lockstep {verb}: {e}");
        if !matches!(e, EngineError::Interrupted { .. }) && !log_failed {
            warn!(
                "              the run stopped at {}; what happened up to there is written",
                lockstep_abi::at(engine.now().0)
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
    if let Some(f) = &summary_file
        && let Err(e) = std::fs::write(f, format!("{json}\n"))
    {
        warn!(
            "lockstep {verb}: cannot write the summary {}: {e}",
            f.display()
        );
        return Exit::RunError.into();
    }
    if extras_status != Exit::Success && status == Exit::Success as u8 {
        return extras_status.into();
    }
    if matches!(result, Ok(ref sum) if !sum.verdict.passed()) {
        warn!("lockstep {verb}: the flight did not meet its expectations (see the verdict)");
    }
    ExitCode::from(status)
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
