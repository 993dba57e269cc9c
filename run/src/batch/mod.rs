//! Monte Carlo batches: many runs of one scenario, each with the
//! dispersions of its `[montecarlo]` section drawn from a stream derived
//! from the master seed and the run's number ([`Draw`]), flown by a pool of
//! workers (threads of this process, or a child process per run so that a
//! crash or hang of the autopilot fails that run only), into `runs.csv`,
//! `summary.json` and histograms, as a typed [`BatchReport`].
//!
//! - [`draw`]: a run's seed and drawn values, independent of the worker.
//! - [`fly`]: one run in this process, as a [`RunRow`].
//! - [`report`]: the rows as CSV, and their aggregate statistics.
//! - [`worker`]: the entry point of a worker process (`lockstep
//!   montecarlo-run`), and the line its row is printed on.
//! - [`shard`]: a batch split over machines (`--shard K/M`) and joined
//!   again ([`merge`]).

mod draw;
mod fly;
mod pool;
pub mod report;
pub mod rerun;
pub mod shard;
#[cfg(test)]
mod tests;
pub mod worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lockstep_abi::Isolation;
use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::outcome::class::ErrorClass;

pub use draw::Draw;
pub use fly::fly;
pub use report::{Aggregate, RunRow, RunStatus};

use crate::RunError;
use crate::outputs::{check_against_inputs, make_dir, scenario_inputs};
use crate::summary::OutDir;
pub use crate::summary::batch::{BatchReport, Stat, Workers};

// The files a batch writes into its out directory.
pub use crate::summary::{FIGURES, HISTOGRAMS, RUNS_CSV, SCATTER, SUMMARY};

/// A batch to fly.
#[derive(Debug, Clone)]
pub struct BatchRequest {
    pub scenario: PathBuf,
    pub autopilot: PathBuf,
    /// Applied to the scenario before the draws (`simulation.seed` is the
    /// batch's master seed).
    pub overrides: Vec<Override>,
    pub runs: u64,
    /// Runs flown at once (at least 1, at most `runs`).
    pub jobs: usize,
    pub workers: Workers,
    /// Wall-time limit of one run in a worker process.
    pub run_timeout: Duration,
    /// The directory written: runs.csv, summary.json, histograms.
    pub out: PathBuf,
    /// The program a worker process runs (`lockstep`, whose
    /// `montecarlo-run` calls [`worker::run`]); needed for
    /// [`Workers::Processes`].
    pub worker_program: Option<PathBuf>,
    /// Arguments the worker program takes before `montecarlo-run` (a
    /// launcher, such as the Python interpreter running lockstep's
    /// extension module, which calls [`worker::main`]).
    pub worker_args: Vec<std::ffi::OsString>,
    /// Fly only this shard's runs (their draws those of the whole batch).
    pub shard: Option<shard::Shard>,
}

/// What a batch produced: its summary, its rows, the files written.
#[derive(Debug, Clone)]
pub struct Batch {
    pub report: BatchReport,
    pub rows: Vec<RunRow>,
    pub aggregate: Aggregate,
    pub csv: PathBuf,
    pub summary: PathBuf,
    /// The histograms drawn (PNG and SVG).
    pub histograms: Vec<PathBuf>,
    /// Each outcome against each drawn input (PNG and SVG; none when no
    /// input varies).
    pub scatter: Vec<PathBuf>,
}

/// A batch checked and ready to fly: its scenario, its draws.
#[derive(Debug)]
pub struct PreparedBatch {
    request: BatchRequest,
    scenario: Scenario,
    draws: Vec<Draw>,
    rotors: usize,
    shard: Option<crate::summary::batch::ShardInfo>,
}

/// Loads the scenario, checks its `[montecarlo]` section, the library
/// (threads need a re-entrant one), the outputs; draws every run.
pub fn prepare(request: BatchRequest) -> Result<PreparedBatch, RunError> {
    check_workers(&request)?;
    prepare_outputs(request)
}

/// Joins the shards in `dirs` into one batch in `out` (see [`shard`]).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Batch, RunError> {
    let (request, rows, wall) = shard::joined(dirs, out)?;
    Ok(prepare_outputs(request)?.finish(rows, wall, 0))
}

/// The workers can fly the batch (threads need a re-entrant library, and
/// processes a program).
fn check_workers(request: &BatchRequest) -> Result<(), RunError> {
    let config = RunError::configuration;
    match request.workers {
        Workers::Threads => match lockstep_abi::AutopilotLibrary::load(&request.autopilot) {
            Ok(lib) if lib.is_reentrant() => Ok(()),
            Ok(_) => Err(config(format!(
                "--workers threads: {} is not re-entrant (its capabilities lack \
                 LOCKSTEP_AP_CAP_REENTRANT); use --workers processes",
                request.autopilot.display()
            ))),
            Err(e) => Err(config(e.to_string())),
        },
        Workers::Processes if request.worker_program.is_none() => Err(config(
            "--workers processes: no worker program was given (the lockstep executable)".into(),
        )),
        Workers::Processes => Ok(()),
    }
}

/// The scenario, its draws (the shard's), the outputs checked.
fn prepare_outputs(request: BatchRequest) -> Result<PreparedBatch, RunError> {
    let config = RunError::configuration;
    let s = Scenario::load_with(&request.scenario, &request.overrides)
        .map_err(|e| config(e.to_string()))?;
    let Some(dispersions) = s.montecarlo else {
        return Err(config(format!(
            "{} has no [montecarlo] section: say what to disperse (mass_sigma, inertia_sigma, \
             battery_capacity_sigma, wind_mean_sigma_mps, sensor_noise_scale, \
             motor_failure_probability, motor_failure_window_s; see docs/scenario-reference.md)",
            request.scenario.display()
        )));
    };
    if let Some(st) = &s.stack {
        return Err(config(format!(
            "{}: `autopilot.kind = \"{}\"`: a Monte Carlo batch flies many runs at once and \
             a flight stack serves one flight on its port; fly it with `lockstep fly`",
            request.scenario.display(),
            st.kind.name()
        )));
    }
    // The rotor count names each run's failing motor, in failed rows too.
    let rotors = lockstep_plant::AircraftSpec::resolve(&s.spec)
        .map_err(|e| config(e.to_string()))?
        .rotors
        .len();
    make_dir("--out", &request.out)?;
    let out = &request.out;
    let plots = lockstep_plot::output_files(&out.join(HISTOGRAMS));
    let scatter = lockstep_plot::output_files(&out.join(SCATTER));
    let (csv, summary) = (out.join(RUNS_CSV), out.join(SUMMARY));
    let page = out.join(crate::summary::BATCH_PAGE);
    let outputs = [
        ("the runs' CSV", csv.as_path()),
        ("the summary", summary.as_path()),
        ("the viewer's page", page.as_path()),
        ("a histogram", plots[0].as_path()),
        ("a histogram", plots[1].as_path()),
        ("a scatter plot", scatter[0].as_path()),
        ("a scatter plot", scatter[1].as_path()),
    ];
    check_against_inputs(
        &scenario_inputs(&request.scenario, &request.autopilot, &s),
        &outputs,
    )?;
    let (runs, shard) = match request.shard {
        Some(sh) => (sh.range(request.runs), Some(shard::info(&request, &s, sh)?)),
        None => (0..request.runs, None),
    };
    let draws = runs
        .map(|k| Draw::new(&dispersions, s.seed, k, s.tick))
        .collect();
    Ok(PreparedBatch {
        request,
        scenario: s,
        draws,
        rotors,
        shard,
    })
}

impl PreparedBatch {
    /// The master seed.
    pub fn master_seed(&self) -> u64 {
        self.scenario.seed
    }

    /// Flies every run on the pool; `done` hears each row as it arrives
    /// (with how many are done). A signal number stored in `interrupt`
    /// starts no new run: the runs not flown are failed rows that say so.
    /// Then writes the CSV, the summary and the histograms.
    pub fn run(self, interrupt: Arc<AtomicUsize>, done: impl Fn(&RunRow, u64) + Sync) -> Batch {
        let r = &self.request;
        let started = Instant::now();
        let next = AtomicU64::new(0);
        let count = AtomicU64::new(0);
        let n = self.draws.len() as u64;
        let rows: Mutex<Vec<Option<RunRow>>> = Mutex::new(vec![None; n as usize]);
        std::thread::scope(|scope| {
            for _ in 0..r.jobs.clamp(1, n.max(1) as usize) {
                scope.spawn(|| {
                    while interrupt.load(Ordering::Relaxed) == 0 {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n {
                            break;
                        }
                        let draw = &self.draws[k as usize];
                        let row = match r.workers {
                            Workers::Threads => fly(
                                &self.scenario,
                                &r.autopilot,
                                &Isolation::InProcess,
                                draw,
                                Some(Arc::clone(&interrupt)),
                            ),
                            Workers::Processes => pool::in_child(r, draw, self.rotors, &interrupt),
                        };
                        let n = count.fetch_add(1, Ordering::Relaxed) + 1;
                        done(&row, n);
                        if let Ok(mut all) = rows.lock() {
                            all[k as usize] = Some(row);
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
            .zip(&self.draws)
            .map(|(row, d)| {
                row.unwrap_or_else(|| {
                    let why = if signal != 0 {
                        format!("not flown: {}", pool::interrupted(signal))
                    } else {
                        "the worker never reported".into()
                    };
                    RunRow::failed(d, self.rotors, why)
                })
            })
            .collect();
        self.finish(rows, wall, signal)
    }

    fn finish(self, rows: Vec<RunRow>, wall: f64, signal: usize) -> Batch {
        let r = &self.request;
        let aggregate = Aggregate::of(&rows);
        let csv = r.out.join(RUNS_CSV);
        let (class, signal) = if signal != 0 {
            (Some(ErrorClass::Interrupted), Some(signal as i32))
        } else {
            (None, None)
        };
        let mut report = BatchReport {
            scenario: r.scenario.display().to_string(),
            master_seed: self.scenario.seed,
            runs: aggregate.runs,
            completed: aggregate.completed,
            failed: aggregate.failed,
            passed: aggregate.passed,
            motor_failures: aggregate.motor_failures,
            jobs: r.jobs,
            workers: r.workers,
            wall_s: wall,
            runs_per_s: rows.len() as f64 / wall.max(1e-9),
            interrupted_by: signal.map(lockstep_abi::signal_name),
            stats: aggregate.stats.clone(),
            viewer: None,
            error_class: class,
            exit_status: class.map_or(0, |c| c.exit_status(signal)),
            shard: self.shard.clone(),
            output_errors: Vec::new(),
        };
        let mut failed = Vec::new();
        if let Err(e) = std::fs::write(&csv, report::csv_text(&rows)) {
            failed.push(format!("cannot write {}: {e}", csv.display()));
        }
        if self.shard.is_some() {
            // A shard's rows, exactly, for the merge; its figures and page
            // would show a part: the merge draws the whole.
            let at = r.out.join(crate::summary::ROWS_JSON);
            let text = serde_json::to_string(&rows).expect("rows are JSON");
            if let Err(e) = std::fs::write(&at, text) {
                failed.push(format!("cannot write {}: {e}", at.display()));
            }
            report.output_errors.append(&mut failed);
            return self.write_summary(report, rows, aggregate, Vec::new(), Vec::new());
        }
        let values: Vec<(&str, Vec<f64>)> = report::MEASURED
            .iter()
            .map(|n| (*n, report::values(&rows, n)))
            .collect();
        let outcomes: Vec<lockstep_plot::Outcome> = values
            .iter()
            .map(|(n, v)| lockstep_plot::Outcome {
                name: n,
                values: v,
                threshold: self.threshold(n),
            })
            .collect();
        let passed = report::verdicts(&rows);
        let inputs = report::drawn_inputs(&rows);
        let inputs: Vec<(&str, &[f64])> = inputs.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        // Written before the summary so that it says how they went.
        let mut draw = |files: Result<Vec<PathBuf>, lockstep_plot::PlotError>| match files {
            Ok(files) => files,
            Err(e) => {
                failed.push(e.to_string());
                Vec::new()
            }
        };
        let histograms = draw(lockstep_plot::histograms(
            &outcomes,
            &passed,
            &r.out.join(HISTOGRAMS),
        ));
        let scatter = if inputs.is_empty() {
            Vec::new()
        } else {
            draw(lockstep_plot::scatter(
                &outcomes,
                &inputs,
                &passed,
                &r.out.join(SCATTER),
            ))
        };
        if !failed.is_empty() {
            report.output_errors.append(&mut failed);
        }
        // The page shows the summary as it is about to be written.
        let page = r.out.join(crate::summary::BATCH_PAGE);
        let mut shown = report.clone();
        shown.viewer = Some(page.display().to_string());
        match crate::view::batch(&r.out, &shown, &page) {
            Ok(()) => report.viewer = shown.viewer,
            Err(e) => report.output_errors.push(format!("the viewer's page: {e}")),
        }
        self.write_summary(report, rows, aggregate, histograms, scatter)
    }

    /// Writes `summary.json` (a failure to is an output error, and every
    /// output error a run failure); the batch.
    fn write_summary(
        &self,
        mut report: BatchReport,
        rows: Vec<RunRow>,
        aggregate: Aggregate,
        histograms: Vec<PathBuf>,
        scatter: Vec<PathBuf>,
    ) -> Batch {
        let r = &self.request;
        let (csv, summary) = (r.out.join(RUNS_CSV), r.out.join(SUMMARY));
        if let Err(e) = OutDir::new(&r.out).write_summary(&report.clone().into()) {
            report.output_errors.push(e);
        }
        if !report.output_errors.is_empty() && report.error_class.is_none() {
            report.error_class = Some(ErrorClass::RunFailure);
            report.exit_status = ErrorClass::RunFailure.exit_status(None);
        }
        Batch {
            report,
            rows,
            aggregate,
            csv,
            summary,
            histograms,
            scatter,
        }
    }

    /// The `[expect]` limit on measurement `name`, if the scenario sets
    /// one that the measurement is checked against.
    fn threshold(&self, name: &str) -> Option<(f64, String)> {
        let x = &self.scenario.expect;
        match name {
            "max_tilt_deg" => x.max_tilt_deg.map(|t| (t, "expect.max_tilt_deg".into())),
            "min_soc" => x.min_soc.map(|t| (t, "expect.min_soc".into())),
            // The landing error is measured from the start: the limit
            // applies when the spot is the start.
            "landing_error_m" => x
                .landed_within
                .filter(|s| (s.north_m, s.east_m) == (self.scenario.start.0, self.scenario.start.1))
                .map(|s| (s.radius_m, "expect.landed_within radius".into())),
            _ => None,
        }
    }
}
