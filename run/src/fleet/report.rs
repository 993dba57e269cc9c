//! A fleet run's report made from its result ([`FleetReport::new`]), and
//! written into its out directory with the fleet's plot and page.

use std::path::Path;

use lockstep_fleet::run::{LookaheadStats, log_path};
use lockstep_fleet::{FleetResult, FleetScenario};
use lockstep_harness::io::digest::file_digest;
use lockstep_harness::outcome::class::{Classified, ErrorClass};

use crate::summary::fleet::{
    EncounterReport, FleetReport, FleetRun, FleetVehicle, LookaheadReport,
};
use crate::summary::flight::{Outcome, real_time_factor};
use crate::view::Crowd;

/// How it ended: the result, or the error and its classification.
pub type Ending = Result<FleetResult, (String, Classified)>;

impl FleetReport {
    /// The report of a run of `fs` (from `scenario`) that reached
    /// `simulated_us` in `wall` seconds; logs in `out`.
    pub fn new(
        scenario: &Path,
        fs: &FleetScenario,
        out: Option<&Path>,
        run: FleetRun,
        simulated_us: u64,
        wall: f64,
        ending: Ending,
    ) -> FleetReport {
        let names: Vec<String> = fs.vehicles.iter().map(|v| v.name.clone()).collect();
        let encounter = |t: u64, kind: &str, a: usize, b: usize, d: f64| EncounterReport {
            time_us: t,
            kind: kind.to_string(),
            a: names[a].clone(),
            b: names[b].clone(),
            separation_m: d,
        };
        let (class, outcome, error, r) = match ending {
            Ok(r) => {
                let passed = r
                    .vehicles
                    .iter()
                    .all(|(_, o)| o.as_ref().is_some_and(|o| o.passed));
                let class = (!passed).then_some(ErrorClass::ExpectationFailed);
                (class.map(|c| (c, None)), Outcome::Completed, None, Some(r))
            }
            Err((e, c)) => {
                let outcome = if c.class == ErrorClass::Interrupted {
                    Outcome::Interrupted
                } else {
                    Outcome::Stopped
                };
                (Some((c.class, c.signal)), outcome, Some(e), None)
            }
        };
        let r = r.unwrap_or(FleetResult {
            end: lockstep_harness::Micros(simulated_us),
            vehicles: Vec::new(),
            encounters: Vec::new(),
            encounters_dropped: 0,
            closest: None,
            collisions: 0,
            syncs: 0,
            lookahead: LookaheadStats::default(),
        });
        FleetReport {
            scenario: scenario.display().to_string(),
            seed: fs.seed,
            sync_period_us: fs.sync.0,
            run,
            outcome,
            error,
            error_class: class.map(|(c, _)| c),
            exit_status: class.map_or(0, |(c, s)| c.exit_status(s)),
            simulated_us,
            wall_time_s: wall,
            real_time_factor: real_time_factor(simulated_us, wall),
            vehicles: r
                .vehicles
                .into_iter()
                .map(|(name, outcome)| {
                    let log = out.map(|d| log_path(d, &name)).filter(|l| l.is_file());
                    FleetVehicle {
                        digest: log.as_ref().and_then(|l| file_digest(l).ok()),
                        log: log.map(|l| l.display().to_string()),
                        name,
                        outcome,
                    }
                })
                .collect(),
            encounters: r
                .encounters
                .iter()
                .map(|e| encounter(e.time.0, e.kind.name(), e.a, e.b, e.separation_m))
                .collect(),
            encounters_dropped: r.encounters_dropped,
            closest: r
                .closest
                .map(|c| encounter(c.time.0, "closest", c.a, c.b, c.separation_m)),
            collisions: r.collisions,
            dropped_events: fs.dropped_events.clone(),
            lookahead: (outcome == Outcome::Completed).then(|| LookaheadReport {
                syncs: r.syncs,
                stats: r.lookahead.clone(),
            }),
            viewer: None,
            plots: Vec::new(),
            output_errors: Vec::new(),
            link_notes: Vec::new(),
        }
    }

    /// Writes into `out` (when given) the viewer's page and the plot of
    /// the vehicles' logs (when they wrote any), then `summary.json`; a
    /// failure is an output error and a run failure.
    pub fn write_summary(&mut self, out: Option<&Path>) {
        let Some(dir) = out else {
            return;
        };
        let logs: Vec<(&str, &Path)> = self
            .vehicles
            .iter()
            .filter_map(|v| v.log.as_deref().map(|l| (v.name.as_str(), Path::new(l))))
            .collect();
        let closest = self.closest.as_ref().map(|c| lockstep_plot::Closest {
            a: &c.a,
            b: &c.b,
            time_us: c.time_us,
            separation_m: c.separation_m,
        });
        let scenario = Path::new(&self.scenario)
            .file_name()
            .map_or(self.scenario.clone(), |f| f.to_string_lossy().into_owned());
        let title = format!("{scenario} — {} vehicles, seed {}", logs.len(), self.seed);
        let mut shown = self.clone();
        shown.viewer = Some(dir.join(crate::summary::FLIGHT_PAGE).display().to_string());
        let drawn = draw_fleet(
            dir,
            &title,
            &logs,
            closest.as_ref(),
            &Crowd::of_fleet(&shown),
        );
        let mut errors = drawn.errors;
        self.plots = drawn.plots;
        self.viewer = drawn.viewer;
        if let Err(e) = crate::summary::OutDir::new(dir).write_summary(&self.clone().into()) {
            errors.push(e);
        }
        if !errors.is_empty() {
            self.output_errors.append(&mut errors);
            self.error_class = Some(ErrorClass::RunFailure);
            self.exit_status = ErrorClass::RunFailure.exit_status(None);
        }
    }
}

/// What drawing a fleet's logs wrote.
pub(crate) struct Drawn {
    /// The plot's files (`fleet.png`, `fleet.svg`).
    pub plots: Vec<String>,
    /// The viewer's page.
    pub viewer: Option<String>,
    /// What could not be written.
    pub errors: Vec<String>,
}

/// Draws into `dir` the plot of the vehicles' `logs` (every path
/// top-down, `closest` joined, every altitude) and the viewer's page of
/// `crowd`; nothing when no vehicle wrote a log.
pub(crate) fn draw_fleet(
    dir: &Path,
    title: &str,
    logs: &[(&str, &Path)],
    closest: Option<&lockstep_plot::Closest>,
    crowd: &Crowd,
) -> Drawn {
    let mut drawn = Drawn {
        plots: Vec::new(),
        viewer: None,
        errors: Vec::new(),
    };
    if logs.is_empty() {
        return drawn;
    }
    match lockstep_plot::fleet_plot(title, logs, closest, &dir.join(crate::summary::FLEET_PLOT)) {
        Ok(files) => drawn.plots = files.iter().map(|f| f.display().to_string()).collect(),
        Err(e) => drawn.errors.push(format!("the fleet's plot: {e}")),
    }
    let page = dir.join(crate::summary::FLIGHT_PAGE);
    match crate::view::fleet(dir, crowd, &page) {
        Ok(()) => drawn.viewer = Some(page.display().to_string()),
        Err(e) => drawn.errors.push(format!("the viewer's page: {e}")),
    }
    drawn
}
