//! `lockstep montecarlo`: a batch of runs over one scenario with the
//! dispersions of its `[montecarlo]` section, on `--jobs` workers; and
//! `lockstep montecarlo-run`, the hidden verb a worker process runs.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::montecarlo::{self as mc, Aggregate, Draw, RunRow, RunStatus};

use crate::run::Exit;

/// Where the runs fly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Workers {
    /// Each run in a child process of its own (the autopilot in-process
    /// there): a crash or hang of the library is that run's failed row,
    /// and every run starts from a freshly loaded library.
    Processes,
    /// Runs on threads of this process, the autopilot in-process: no
    /// process start per run, but only for a library that declares itself
    /// re-entrant, and a crash of the library ends the batch.
    Threads,
}

/// What `montecarlo` was asked.
pub struct Options {
    pub scenario: PathBuf,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    pub runs: u64,
    pub jobs: usize,
    pub workers: Workers,
    /// Wall-time limit of one run in a worker process.
    pub run_timeout: Duration,
    pub out: PathBuf,
    pub quiet: bool,
}

pub const RUNS_CSV: &str = "runs.csv";
pub const SUMMARY: &str = "summary.json";
pub const HISTOGRAMS: &str = "histograms";

pub fn command(o: Options) -> ExitCode {
    let verb = "montecarlo";
    let refuse = |msg: String| -> ExitCode {
        warn!("lockstep {verb}: {msg}");
        Exit::ConfigError.into()
    };
    let s = match Scenario::load_with(&o.scenario, &o.overrides) {
        Ok(s) => s,
        Err(e) => return refuse(e.to_string()),
    };
    let Some(dispersions) = s.montecarlo else {
        return refuse(format!(
            "{} has no [montecarlo] section: say what to disperse (mass_sigma, inertia_sigma, \
             battery_capacity_sigma, wind_mean_sigma_mps, sensor_noise_scale, \
             motor_failure_probability, motor_failure_window_s; see docs/scenario-reference.md)",
            o.scenario.display()
        ));
    };
    // The rotor count names each run's failing motor, in failed rows too.
    let rotors = match lockstep_plant::AircraftSpec::resolve(&s.spec) {
        Ok(spec) => spec.rotors.len(),
        Err(e) => return refuse(e.to_string()),
    };
    if o.workers == Workers::Threads {
        match lockstep_abi::AutopilotLibrary::load(&o.autopilot) {
            Ok(lib) if lib.is_reentrant() => {}
            Ok(_) => {
                return refuse(format!(
                    "--workers threads: {} is not re-entrant (its capabilities lack \
                     LOCKSTEP_AP_CAP_REENTRANT); use --workers processes",
                    o.autopilot.display()
                ));
            }
            Err(e) => return refuse(e.to_string()),
        }
    }
    if let Err(e) = std::fs::create_dir_all(&o.out) {
        return refuse(format!(
            "--out {}: cannot create the directory: {e}",
            o.out.display()
        ));
    }
    let csv_path = o.out.join(RUNS_CSV);
    let summary_path = o.out.join(SUMMARY);
    let plots = lockstep_plot::output_files(&o.out.join(HISTOGRAMS));
    let inputs = crate::args::inputs(&o.scenario, &o.autopilot, &s);
    let outputs = [
        ("the runs' CSV", csv_path.as_path()),
        ("the summary", summary_path.as_path()),
        ("a histogram", plots[0].as_path()),
        ("a histogram", plots[1].as_path()),
    ];
    if let Err(e) = lockstep_harness::io::paths::check_outputs(&inputs, &outputs) {
        return refuse(e.to_string());
    }

    let master = s.seed;
    let draws: Vec<Draw> = (0..o.runs)
        .map(|k| Draw::new(&dispersions, master, k, s.tick))
        .collect();
    if !o.quiet {
        say!(
            "batch         {} runs of {} (master seed {master}), {} {:?} workers",
            o.runs,
            o.scenario.display(),
            o.jobs,
            o.workers
        );
    }
    // SIGINT/SIGTERM: no new run starts; the rows done are written, the
    // others say why they were not flown (a second signal ends at once).
    let interrupt = crate::run::catch_signals();
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let rows: Mutex<Vec<Option<RunRow>>> = Mutex::new(vec![None; o.runs as usize]);
    std::thread::scope(|scope| {
        for _ in 0..o.jobs {
            scope.spawn(|| {
                loop {
                    if interrupt.load(Ordering::Relaxed) != 0 {
                        break;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    if k >= o.runs {
                        break;
                    }
                    let draw = &draws[k as usize];
                    let row = match o.workers {
                        Workers::Threads => mc::fly(
                            &s,
                            &o.autopilot,
                            &Isolation::InProcess,
                            draw,
                            Some(Arc::clone(&interrupt)),
                        ),
                        Workers::Processes => in_child(&o, draw, rotors, &interrupt),
                    };
                    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if !o.quiet
                        && let RunStatus::Failed(why) = &row.status
                    {
                        warn!("  run {k} (seed {}) failed: {why}", row.seed);
                    }
                    if !o.quiet && (n.is_multiple_of(10) || n == o.runs) {
                        warn!("  {n}/{} runs", o.runs);
                    }
                    if let Ok(mut r) = rows.lock() {
                        r[k as usize] = Some(row);
                    }
                }
            });
        }
    });
    let wall = started.elapsed().as_secs_f64();
    let signal = interrupt.load(Ordering::Relaxed);
    let rows: Vec<RunRow> = rows
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .zip(&draws)
        .map(|(r, d)| {
            r.unwrap_or_else(|| {
                let why = if signal != 0 {
                    format!("not flown: {}", interrupted(signal))
                } else {
                    "the worker never reported".into()
                };
                RunRow::failed(d, rotors, why)
            })
        })
        .collect();

    let agg = Aggregate::of(&rows);
    let mut status = Exit::Success;
    if let Err(e) = std::fs::write(&csv_path, mc::report::csv_text(&rows)) {
        warn!("lockstep {verb}: cannot write {}: {e}", csv_path.display());
        status = Exit::RunError;
    }
    let summary = serde_json::json!({
        "scenario": o.scenario.display().to_string(),
        "master_seed": master,
        "runs": agg.runs,
        "completed": agg.completed,
        "failed": agg.failed,
        "passed": agg.passed,
        "motor_failures": agg.motor_failures,
        "jobs": o.jobs,
        "workers": format!("{:?}", o.workers).to_lowercase(),
        "wall_s": wall,
        "runs_per_s": o.runs as f64 / wall.max(1e-9),
        "interrupted_by": (signal != 0).then(|| lockstep_abi::signal_name(signal as i32)),
        "stats": agg.stats,
    });
    let text = serde_json::to_string_pretty(&summary).expect("a summary is JSON");
    if let Err(e) = std::fs::write(&summary_path, text + "\n") {
        warn!(
            "lockstep {verb}: cannot write {}: {e}",
            summary_path.display()
        );
        status = Exit::RunError;
    }
    let series: Vec<(String, Vec<f64>)> = mc::report::MEASURED
        .iter()
        .map(|n| (n.to_string(), mc::report::values(&rows, n)))
        .collect();
    let drawn = match lockstep_plot::histograms(&series, &o.out.join(HISTOGRAMS)) {
        Ok(files) => files,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            status = Exit::RunError;
            Vec::new()
        }
    };
    if !o.quiet {
        say!(
            "runs          {} completed ({} passed their verdict), {} failed, {} with a motor failure",
            agg.completed,
            agg.passed,
            agg.failed,
            agg.motor_failures
        );
        say!(
            "wall time     {wall:.2} s ({:.2} runs/s)",
            o.runs as f64 / wall.max(1e-9)
        );
        for line in agg.table_text().lines() {
            say!("{line}");
        }
        say!("csv           {}", csv_path.display());
        say!("summary       {}", summary_path.display());
        for f in drawn {
            say!("histograms    {}", f.display());
        }
    }
    if signal != 0 {
        warn!(
            "lockstep {verb}: interrupted by {}: {} of {} runs flown; the rest are rows that say so",
            lockstep_abi::signal_name(signal as i32),
            agg.completed,
            o.runs
        );
        return ExitCode::from(128 + signal as u8);
    }
    status.into()
}

/// The reason of a run a signal stopped.
fn interrupted(signal: usize) -> String {
    format!(
        "the batch was interrupted by {}",
        lockstep_abi::signal_name(signal as i32)
    )
}

/// What starts a worker's row on its stdout: the row is found by this
/// prefix, since an autopilot may print there too (and C's buffered
/// output reaches the pipe at exit, after the row).
pub const ROW_PREFIX: &str = "lockstep-montecarlo-row ";

/// Flies one run in a child `lockstep montecarlo-run` and reads its row;
/// a child that dies, hangs past the limit or prints no row is a failed
/// row naming why. A signal stored in `interrupt` kills the child: the
/// row says the batch was interrupted.
fn in_child(o: &Options, draw: &Draw, rotors: usize, interrupt: &AtomicUsize) -> RunRow {
    let failed = |why: String| RunRow::failed(draw, rotors, why);
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return failed(format!("cannot find lockstep itself: {e}")),
    };
    let mut cmd = Command::new(exe);
    cmd.arg("montecarlo-run")
        .arg(&o.scenario)
        .arg("--autopilot")
        .arg(&o.autopilot)
        .arg("--run")
        .arg(draw.run.to_string());
    for ov in &o.overrides {
        cmd.arg("--set").arg(format!("{}={}", ov.key, ov.value));
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start a worker process: {e}")),
    };
    // Read both pipes on threads so that a chatty child never blocks.
    let out_t = read_all(child.stdout.take().expect("piped"));
    let err_t = read_all(child.stderr.take().expect("piped"));
    let started = Instant::now();
    enum End {
        Exited(std::process::ExitStatus),
        Hung,
        Interrupted(usize),
        Lost(std::io::Error),
    }
    let end = loop {
        let signal = interrupt.load(Ordering::Relaxed);
        match child.try_wait() {
            Ok(Some(st)) => break End::Exited(st),
            Ok(None) if signal != 0 => break End::Interrupted(signal),
            Ok(None) if started.elapsed() >= o.run_timeout => break End::Hung,
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => break End::Lost(e),
        }
    };
    if !matches!(end, End::Exited(_)) {
        let _ = child.kill();
        let _ = child.wait();
    }
    let stdout = out_t.join().unwrap_or_default();
    let stderr = err_t.join().unwrap_or_default();
    let status = match end {
        End::Exited(st) => st,
        End::Hung => {
            return failed(format!(
                "hung: no result within {} s of wall time (the worker was killed)",
                o.run_timeout.as_secs_f64()
            ));
        }
        End::Interrupted(sig) => return failed(interrupted(sig)),
        End::Lost(e) => return failed(format!("cannot wait for the worker: {e}")),
    };
    let row = stdout
        .lines()
        .rev()
        .find_map(|l| l.find(ROW_PREFIX).map(|at| &l[at + ROW_PREFIX.len()..]));
    if status.success()
        && let Some(Ok(row)) = row.map(serde_json::from_str::<RunRow>)
    {
        return row;
    }
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(sig) = status.signal()
        && (sig == signal_hook::consts::SIGINT || sig == signal_hook::consts::SIGTERM)
    {
        // The terminal's Ctrl-C reaches the whole process group: the
        // worker may die of it before this process's handler has run, so
        // give the handler a moment (100 ms) to say so.
        for _ in 0..50 {
            let signal = interrupt.load(Ordering::Relaxed);
            if signal != 0 {
                return failed(interrupted(signal));
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let last_err = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let how = match (status.code(), status.signal()) {
        (_, Some(sig)) => format!(
            "the worker was killed by signal {}",
            lockstep_abi::signal_name(sig)
        ),
        (Some(c), None) => format!("the worker exited with status {c}"),
        (None, None) => "the worker ended".to_string(),
    };
    let reason = if last_err.is_empty() {
        how
    } else {
        format!(
            "{how}: {}",
            last_err.trim_start_matches("lockstep montecarlo-run: ")
        )
    };
    failed(reason)
}

/// Reads a pipe to its end on a thread of its own.
fn read_all(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// `lockstep montecarlo-run`: run `run` of the batch over the scenario
/// (with its overrides), in this process; prints its row as JSON.
pub fn worker(scenario: &Path, autopilot: &Path, overrides: &[Override], run: u64) -> ExitCode {
    let s = match Scenario::load_with(scenario, overrides) {
        Ok(s) => s,
        Err(e) => {
            warn!("lockstep montecarlo-run: {e}");
            return Exit::ConfigError.into();
        }
    };
    let Some(d) = s.montecarlo else {
        warn!(
            "lockstep montecarlo-run: {} has no [montecarlo] section",
            scenario.display()
        );
        return Exit::ConfigError.into();
    };
    let draw = Draw::new(&d, s.seed, run, s.tick);
    let row = mc::fly(&s, autopilot, &Isolation::InProcess, &draw, None);
    say!(
        "{ROW_PREFIX}{}",
        serde_json::to_string(&row).expect("a row is JSON")
    );
    ExitCode::SUCCESS
}
