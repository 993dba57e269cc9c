//! `lockstep compare-integrators`: record one closed-loop flight, replay
//! it open-loop with each integrator, print the table, write the CSV and
//! the work–precision plot.

use std::path::PathBuf;
use std::process::ExitCode;

use lockstep_abi::Isolation;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_harness::integrator_study::{
    self as study, Candidate, Flight, GROUPS, Setting, Study, default_candidates,
};
use lockstep_plant::integrate::Method;
use lockstep_plot::{WorkPoint, WorkSeries};

use crate::run::Exit;

/// What `compare-integrators` was asked.
pub struct CompareOptions {
    pub scenario: PathBuf,
    pub autopilot: PathBuf,
    pub overrides: Vec<Override>,
    /// Methods to compare, in order (default: all four).
    pub methods: Vec<Method>,
    /// Fixed-step methods' steps (default: the interval and 1/2, 1/4, 1/8).
    pub steps_us: Vec<u64>,
    /// Adaptive methods' tolerances (default: a range per method).
    pub tolerances: Vec<f64>,
    pub repeats: u32,
    /// Restart from the reference every this many µs (None: never).
    pub horizon_us: Option<u64>,
    pub out: PathBuf,
}

/// The files written into the output directory.
pub const RECORDING: &str = "flight.rec";
pub const CSV: &str = "integrators.csv";
pub const PLOT_STEM: &str = "work_precision";

pub fn command(o: CompareOptions) -> ExitCode {
    let verb = "compare-integrators";
    let refuse = |msg: String| -> ExitCode {
        warn!("lockstep {verb}: {msg}");
        Exit::ConfigError.into()
    };
    // The given steps and tolerances are checked before the flight (the
    // defaults depend on its boundary interval).
    if let Err(e) = candidates(&o, 1) {
        return refuse(e);
    }

    let s = match Scenario::load_with(&o.scenario, &o.overrides) {
        Ok(s) => s,
        Err(e) => return refuse(e.to_string()),
    };
    if let Err(e) = std::fs::create_dir_all(&o.out) {
        return refuse(format!(
            "--out {}: cannot create the directory: {e}",
            o.out.display()
        ));
    }
    let recording = o.out.join(RECORDING);
    let csv_path = o.out.join(CSV);
    let plot_files = lockstep_plot::output_files(&o.out.join(PLOT_STEM));
    let inputs = crate::args::inputs(&o.scenario, &o.autopilot, &s);
    let outputs = [
        ("the recording", recording.as_path()),
        ("the CSV", csv_path.as_path()),
        ("the plot", plot_files[0].as_path()),
        ("the plot", plot_files[1].as_path()),
    ];
    if let Err(e) = lockstep_harness::io::paths::check_outputs(&inputs, &outputs) {
        return refuse(e.to_string());
    }

    // 1. The closed-loop flight, recorded.
    say!(
        "flying        {} (recording {})",
        o.scenario.display(),
        recording.display()
    );
    let mut engine = match Engine::with_isolation(&s, &o.autopilot, None, &Isolation::default()) {
        Ok(e) => e,
        Err(e) => return refuse(e.to_string()),
    };
    if let Err(e) = engine.record_to(&recording) {
        return refuse(e.to_string());
    }
    if let Err(e) = engine.run() {
        warn!("lockstep {verb}: the flight to compare on stopped: {e}");
        return Exit::RunError.into();
    }
    drop(engine);
    let flight = match Flight::from_recording(&recording) {
        Ok(f) => f,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            return Exit::RunError.into();
        }
    };

    // 2. The candidates.
    let candidates = match candidates(&o, flight.max_interval_us()) {
        Ok(c) => c,
        Err(e) => return refuse(e),
    };
    say!(
        "replaying     {} boundaries over {:.3} s (longest interval {} us), {} candidates, {} repeats",
        flight.boundaries.len(),
        flight.span_us() as f64 * 1e-6,
        flight.max_interval_us(),
        candidates.len(),
        o.repeats
    );
    match o.horizon_us {
        Some(h) => say!(
            "horizon       {:.6} s (each replay restarts from the reference's state)",
            h as f64 * 1e-6
        ),
        None => say!("horizon       the whole flight, open-loop"),
    }
    let study = Study {
        candidates: candidates.clone(),
        repeats: o.repeats,
        horizon_us: o.horizon_us,
    };
    let results = match study.run(&flight, |i, n| {
        warn!(
            "  {}/{}: {} {}",
            i + 1,
            n,
            candidates[i].method.name(),
            candidates[i].setting_text()
        );
    }) {
        Ok(r) => r,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            return Exit::RunError.into();
        }
    };

    // 3. Table, CSV, plot.
    say!("");
    for line in study::table_text(&results).lines() {
        say!("{line}");
    }
    if let Err(e) = std::fs::write(&csv_path, study::csv_text(&results)) {
        warn!("lockstep {verb}: cannot write {}: {e}", csv_path.display());
        return Exit::RunError.into();
    }
    let series = plot_series(&results);
    let title = format!(
        "work-precision: {} ({:.1} s replayed open-loop{})",
        o.scenario.file_name().map_or_else(
            || o.scenario.display().to_string(),
            |f| f.to_string_lossy().into_owned()
        ),
        flight.span_us() as f64 * 1e-6,
        match o.horizon_us {
            Some(h) => format!(", restarted from the reference every {} s", h as f64 * 1e-6),
            None => String::new(),
        }
    );
    let plots = match lockstep_plot::work_precision(
        &series,
        "largest position error (m)",
        &title,
        &o.out.join(PLOT_STEM),
    ) {
        Ok(p) => p,
        Err(e) => {
            warn!("lockstep {verb}: {e}");
            return Exit::RunError.into();
        }
    };
    say!("");
    say!("csv           {}", csv_path.display());
    for p in plots {
        say!("plot          {}", p.display());
    }
    let failed = results.rows.iter().filter(|r| r.outcome.is_err()).count();
    if failed > 0 {
        say!("failed        {failed} candidate(s) (see the table)");
    }
    ExitCode::SUCCESS
}

/// The candidates asked for, in method order then setting order.
fn candidates(o: &CompareOptions, interval: u64) -> Result<Vec<Candidate>, String> {
    let defaults = default_candidates(interval);
    let mut out = Vec::new();
    for &m in &o.methods {
        if m.is_adaptive() && !o.tolerances.is_empty() {
            for &t in &o.tolerances {
                out.push(
                    Candidate::new(m, Setting::Tolerance(t))
                        .map_err(|e| format!("--tolerances: {e}"))?,
                );
            }
        } else if !m.is_adaptive() && !o.steps_us.is_empty() {
            for &s in &o.steps_us {
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

/// One line per method through its settings that completed.
fn plot_series(r: &study::Results) -> Vec<WorkSeries> {
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
