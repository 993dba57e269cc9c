//! What a fleet run did, as one value, the same whether the fleet flew on
//! threads of one process or across a primary and its secondaries.

use std::path::Path;

use lockstep_fleet::run::{LookaheadStats, log_path};
use lockstep_fleet::{FleetResult, FleetScenario};
use lockstep_harness::io::digest::file_digest;
use lockstep_harness::outcome::class::{Classified, ErrorClass};
use lockstep_harness::outcome::report::VehicleOutcome;
use serde::{Deserialize, Serialize};

use crate::flight::{Outcome, real_time_factor};

/// How the fleet ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum FleetRun {
    /// On threads of one process.
    Threads { threads: usize },
    /// Across a primary and its secondaries.
    Distributed {
        secondaries: u32,
        /// The rounds, when the run ended (not on an error).
        #[serde(flatten)]
        rounds: Option<Rounds>,
    },
}

/// A distributed run's rounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rounds {
    pub session: String,
    pub rounds: u64,
    pub migrations: u64,
    pub refused_acks: u64,
    /// Vehicles kept where they started: their autopilot cannot move, or
    /// they are served to ground stations.
    pub pinned: Vec<String>,
    /// Wall time of a time-advancing round, µs.
    pub round_latency_us: Percentiles,
    /// Where those rounds' wall time went, s, summed over them.
    pub round_parts_s: RoundPartsSeconds,
}

/// A distributed run's round time by part, along each round's critical
/// path (see `lockstep_distributed::RoundParts`), s; the parts add up to
/// the rounds' time.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RoundPartsSeconds {
    /// The step encoded and handed to the link.
    pub send: f64,
    /// The work of the secondary whose ack came last (as its ack says).
    pub secondary: f64,
    /// The rest of the wait for that ack: the messages on their way,
    /// sealed, encoded and decoded.
    pub transit: f64,
    /// The last ack's digest checked.
    pub checks: f64,
    /// The acks' rows read, and written to the logs or held.
    pub rows: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

impl Percentiles {
    /// The 50th, 90th and 99th percentiles of `values` (0 when empty).
    pub fn of(mut values: Vec<f64>) -> Percentiles {
        values.sort_by(f64::total_cmp);
        let pct = |p: f64| {
            values
                .get(((values.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        Percentiles {
            p50: pct(0.5),
            p90: pct(0.9),
            p99: pct(0.99),
        }
    }
}

/// One vehicle of the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetVehicle {
    pub name: String,
    /// Its log in the out directory, when it wrote one.
    pub log: Option<String>,
    pub digest: Option<String>,
    /// Its outcome (absent when the run did not end).
    #[serde(flatten)]
    pub outcome: Option<VehicleOutcome>,
}

/// The stem of a fleet's plot in its out directory.
pub const FLEET_PLOT: &str = "fleet";

/// An encounter of two vehicles (or the closest they came).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EncounterReport {
    pub time_us: u64,
    /// `proximity`, `proximity_end`, `collision` or `closest`.
    pub kind: String,
    pub a: String,
    pub b: String,
    pub separation_m: f64,
}

/// A fleet run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetReport {
    pub scenario: String,
    pub seed: u64,
    pub sync_period_us: u64,
    pub run: FleetRun,
    pub outcome: Outcome,
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    pub exit_status: u8,
    pub simulated_us: u64,
    pub wall_time_s: f64,
    pub real_time_factor: f64,
    pub vehicles: Vec<FleetVehicle>,
    pub encounters: Vec<EncounterReport>,
    pub encounters_dropped: u64,
    pub closest: Option<EncounterReport>,
    pub collisions: usize,
    /// Events dropped because the run was shortened on the command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_events: Vec<String>,
    /// The sync boundaries the vehicles met at, and what the lookahead
    /// did: rounds (barriers, or rounds between a primary and its
    /// secondaries) and stretches redone (absent when the run did not end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lookahead: Option<LookaheadReport>,
    /// The viewer's page (`flight.html`), when one was written.
    pub viewer: Option<String>,
    /// The fleet's plot (`fleet.png` and `.svg`: paths and altitudes),
    /// when the vehicles wrote logs.
    #[serde(default)]
    pub plots: Vec<String>,
    /// Outputs that could not be written (the summary).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_errors: Vec<String>,
    /// A served fleet's link: what it ignored and sends that failed, one
    /// line per kind (a vehicle's begin with its name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_notes: Vec<String>,
}

/// What the lookahead did in a run that ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LookaheadReport {
    /// Sync boundaries the separation was checked at.
    pub syncs: u64,
    #[serde(flatten)]
    pub stats: LookaheadStats,
}

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

    /// Every vehicle's verdict passed.
    pub fn passed(&self) -> bool {
        self.error.is_none()
            && self
                .vehicles
                .iter()
                .all(|v| v.outcome.as_ref().is_some_and(|o| o.passed))
    }

    /// The report as the JSON text `--json` prints and `summary.json` holds.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
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
        shown.viewer = Some(dir.join(crate::view::FLIGHT_PAGE).display().to_string());
        let shown = serde_json::to_value(&shown).expect("a report is JSON");
        let drawn = draw_fleet(dir, &title, &logs, closest.as_ref(), &shown);
        let mut errors = drawn.errors;
        self.plots = drawn.plots;
        self.viewer = drawn.viewer;
        if let Err(e) = crate::write_summary(dir, &self.to_json()) {
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
/// the fleet `shown` describes (its `vehicles`, each with its `name` and
/// `log`, `scenario`, `seed`, `encounters`, `closest`); nothing when no
/// vehicle wrote a log.
pub(crate) fn draw_fleet(
    dir: &Path,
    title: &str,
    logs: &[(&str, &Path)],
    closest: Option<&lockstep_plot::Closest>,
    shown: &serde_json::Value,
) -> Drawn {
    let mut drawn = Drawn {
        plots: Vec::new(),
        viewer: None,
        errors: Vec::new(),
    };
    if logs.is_empty() {
        return drawn;
    }
    match lockstep_plot::fleet_plot(title, logs, closest, &dir.join(FLEET_PLOT)) {
        Ok(files) => drawn.plots = files.iter().map(|f| f.display().to_string()).collect(),
        Err(e) => drawn.errors.push(format!("the fleet's plot: {e}")),
    }
    let page = dir.join(crate::view::FLIGHT_PAGE);
    match crate::view::fleet(dir, shown, &page) {
        Ok(()) => drawn.viewer = Some(page.display().to_string()),
        Err(e) => drawn.errors.push(format!("the viewer's page: {e}")),
    }
    drawn
}
