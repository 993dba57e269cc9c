//! `compare-integrators` as one call: the closed-loop flight recorded, the
//! candidates chosen (given steps and tolerances, else each method's
//! defaults for the flight's boundary interval), the study run, the CSV and
//! the work–precision plot written.

use std::path::PathBuf;

use lockstep_abi::Isolation;

use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_plant::integrate::Method;
use lockstep_plot::{WorkPoint, WorkSeries};

use super::{Candidate, Flight, GROUPS, Results, Setting, Study, default_candidates};
use crate::RunError;
use crate::choice::Spelling;
use crate::flight::{FlightOutputs, FlightRequest, ScenarioSource};
use crate::outputs::{check_against_inputs, make_dir, scenario_inputs};

/// The files written into the output directory.
pub const RECORDING: &str = "flight.rec";
pub const CSV: &str = "integrators.csv";
pub const PLOT_STEM: &str = "work_precision";

/// What to compare.
#[derive(Debug, Clone)]
pub struct StudyRequest {
    pub scenario: PathBuf,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    /// Methods to compare, in order.
    pub methods: Vec<Method>,
    /// Fixed-step methods' steps (empty: the interval and 1/2, 1/4, 1/8).
    pub steps_us: Vec<u64>,
    /// Adaptive methods' tolerances (empty: a range per method).
    pub tolerances: Vec<f64>,
    pub repeats: u32,
    /// Restart from the reference every this many µs (`None`: never).
    pub horizon_us: Option<u64>,
    /// The directory written: flight.rec, integrators.csv, the plots.
    pub out: PathBuf,
    /// Where the recorded flight's autopilot runs.
    pub isolation: Isolation,
}

/// How the study goes, for a front end to say so.
#[derive(Debug, Clone, PartialEq)]
pub enum StudyEvent<'a> {
    /// The closed-loop flight is about to fly, recorded.
    Flying { recording: &'a std::path::Path },
    /// The replays are about to start.
    Replaying {
        boundaries: usize,
        span_us: u64,
        max_interval_us: u64,
        candidates: usize,
        repeats: u32,
        horizon_us: Option<u64>,
    },
    /// Candidate `index` of `of` is about to replay.
    Candidate {
        index: usize,
        of: usize,
        method: &'static str,
        setting: String,
    },
}

/// What the study found and wrote.
#[derive(Debug, Clone)]
pub struct StudyOutcome {
    pub results: Results,
    pub csv: PathBuf,
    pub recording: PathBuf,
    /// The work–precision plot (PNG and SVG).
    pub plots: Vec<PathBuf>,
}

impl StudyOutcome {
    /// Candidates that failed (their rows say why and when).
    pub fn failed(&self) -> usize {
        self.results
            .rows
            .iter()
            .filter(|r| r.outcome.is_err())
            .count()
    }
}

/// The candidates asked for, in method order then setting order.
fn candidates(r: &StudyRequest, interval: u64) -> Result<Vec<Candidate>, String> {
    let defaults = default_candidates(interval);
    let mut out = Vec::new();
    for &m in &r.methods {
        if m.is_adaptive() && !r.tolerances.is_empty() {
            for &t in &r.tolerances {
                out.push(
                    Candidate::new(m, Setting::Tolerance(t))
                        .map_err(|e| format!("--tolerances: {e}"))?,
                );
            }
        } else if !m.is_adaptive() && !r.steps_us.is_empty() {
            for &s in &r.steps_us {
                out.push(
                    Candidate::new(m, Setting::StepUs(s))
                        .map_err(|e| format!("--steps-us: {e}"))?,
                );
            }
        } else {
            out.extend(defaults.iter().filter(|c| c.method == m));
        }
    }
    Ok(out)
}

/// Flies, records, replays each candidate, writes the CSV and the plot.
pub fn compare(
    r: &StudyRequest,
    mut notice: impl FnMut(StudyEvent),
) -> Result<StudyOutcome, RunError> {
    let config = RunError::configuration;
    // The given steps and tolerances are checked before the flight (the
    // defaults depend on its boundary interval).
    candidates(r, 1).map_err(config)?;
    let s = Scenario::load_with(&r.scenario, &r.overrides).map_err(|e| config(e.to_string()))?;
    make_dir("--out", &r.out)?;
    let recording = r.out.join(RECORDING);
    let csv = r.out.join(CSV);
    let plot_files = lockstep_plot::output_files(&r.out.join(PLOT_STEM));
    let outputs = [
        ("the recording", recording.as_path()),
        ("the CSV", csv.as_path()),
        ("the plot", plot_files[0].as_path()),
        ("the plot", plot_files[1].as_path()),
    ];
    check_against_inputs(&scenario_inputs(&r.scenario, &r.autopilot, &s), &outputs)?;

    // 1. The closed-loop flight, recorded.
    notice(StudyEvent::Flying {
        recording: &recording,
    });
    // Prepared as every flight is, recording.
    let request = FlightRequest {
        scenario: ScenarioSource::Loaded(Box::new(s.clone())),
        autopilot: r.autopilot.clone(),
        overrides: Vec::new(),
        outputs: FlightOutputs {
            record: Some(recording.clone()),
            ..FlightOutputs::default()
        },
        isolation: r.isolation.clone(),
        spelling: Spelling::Cli,
    };
    let mut engine = crate::flight::prepare(request)
        .map_err(|e| config(e.message))?
        .into_engine();
    engine
        .run()
        .map_err(|e| RunError::run_failure(format!("the flight to compare on stopped: {e}")))?;
    drop(engine);
    let flight =
        Flight::from_recording(&recording).map_err(|e| RunError::run_failure(e.to_string()))?;

    // 2. The candidates.
    let candidates = candidates(r, flight.max_interval_us()).map_err(config)?;
    notice(StudyEvent::Replaying {
        boundaries: flight.boundaries.len(),
        span_us: flight.span_us(),
        max_interval_us: flight.max_interval_us(),
        candidates: candidates.len(),
        repeats: r.repeats,
        horizon_us: r.horizon_us,
    });
    let study = Study {
        candidates: candidates.clone(),
        repeats: r.repeats,
        horizon_us: r.horizon_us,
    };
    let results = study
        .run(&flight, |i, n| {
            notice(StudyEvent::Candidate {
                index: i,
                of: n,
                method: candidates[i].method.name(),
                setting: candidates[i].setting_text(),
            })
        })
        .map_err(|e| RunError::run_failure(e.to_string()))?;

    // 3. CSV, plot.
    std::fs::write(&csv, super::csv_text(&results))
        .map_err(|e| RunError::run_failure(format!("cannot write {}: {e}", csv.display())))?;
    let title = format!(
        "work-precision: {} ({:.1} s replayed open-loop{})",
        r.scenario.file_name().map_or_else(
            || r.scenario.display().to_string(),
            |f| f.to_string_lossy().into_owned()
        ),
        flight.span_us() as f64 * 1e-6,
        match r.horizon_us {
            Some(h) => format!(", restarted from the reference every {} s", h as f64 * 1e-6),
            None => String::new(),
        }
    );
    let plots = lockstep_plot::work_precision(
        &plot_series(&results),
        "largest position error (m)",
        &title,
        &r.out.join(PLOT_STEM),
    )
    .map_err(|e| RunError::run_failure(e.to_string()))?;
    Ok(StudyOutcome {
        results,
        csv,
        recording,
        plots,
    })
}

/// One line per method through its settings that completed.
fn plot_series(r: &Results) -> Vec<WorkSeries> {
    let sim_s = (r.span_us as f64 * 1e-6).max(1e-9);
    let mut series: Vec<WorkSeries> = Vec::new();
    for row in &r.rows {
        let Ok(e) = &row.outcome else { continue };
        let name = row.candidate.method.name();
        let label = match row.candidate.setting {
            Setting::StepUs(s) => format!("{s} us"),
            Setting::Tolerance(t) => format!("{t:.0e}"),
        };
        let point = WorkPoint {
            rhs_per_s: row.stats.rhs_evals as f64 / sim_s,
            wall_ms: row.wall_median_s * 1e3,
            error: e.max[0],
            label,
        };
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(WorkSeries {
                name: name.to_string(),
                points: vec![point],
            }),
        }
    }
    debug_assert_eq!(GROUPS[0], "position_m");
    series
}
