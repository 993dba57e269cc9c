//! What a run leaves behind, named once: [`OutDir`], the file of every
//! output a run writes into its out directory, and [`RunSummary`], its
//! `summary.json`: one report type per kind of run, tagged with the kind
//! (`"kind": "flight"`, ...). Every writer writes a summary through it and
//! every reader (`lockstep view`, `montecarlo merge`) reads one back
//! through it, so none guesses a run's kind from the keys it finds.
//!
//! The reports are plain values here, below the modules that make them
//! (`crate::flight`, `crate::fleet`, ...) and the viewer that reads them.

pub mod batch;
pub mod cosim;
pub mod fleet;
pub mod flight;
pub mod orchestrate;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use batch::BatchReport;
use cosim::CosimReport;
use fleet::FleetReport;
use flight::FlightReport;
use orchestrate::OrchestrateReport;

/// The summary of every kind of run.
pub const SUMMARY: &str = "summary.json";
/// A flight's log.
pub const LOG: &str = "log.csv";
/// The stem of a flight's plots (`flight.png`, `flight.svg`).
pub const FLIGHT_PLOT: &str = "flight";
/// The viewer's page of a flight, a fleet, an orchestration or a
/// co-simulation.
pub const FLIGHT_PAGE: &str = "flight.html";
/// The viewer's page of a Monte Carlo batch.
pub const BATCH_PAGE: &str = "montecarlo.html";
/// A batch's rows, one per run.
pub const RUNS_CSV: &str = "runs.csv";
/// A shard's rows, exactly, as `montecarlo merge` reads them back.
pub const ROWS_JSON: &str = "rows.json";
/// The stem of a batch's histograms.
pub const HISTOGRAMS: &str = "histograms";
/// The stem of a batch's outcomes against its drawn inputs.
pub const SCATTER: &str = "scatter";
/// A batch's figures (stems), as its page shows them.
pub const FIGURES: [&str; 2] = [HISTOGRAMS, SCATTER];
/// The stem of a fleet's plot (every path top-down, every altitude).
pub const FLEET_PLOT: &str = "fleet";
/// An orchestration's trace of model calls.
pub const TRACE: &str = "trace.jsonl";
/// A co-simulation's record of every participant's outputs.
pub const COSIM_RECORD: &str = "cosim.csv";

/// An out directory: where each file a run writes there goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutDir(PathBuf);

impl OutDir {
    pub fn new(dir: impl Into<PathBuf>) -> OutDir {
        OutDir(dir.into())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The file named `name` in it (or the stem of a plot's files, for
    /// `lockstep_plot::output_files`).
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    pub fn summary(&self) -> PathBuf {
        self.file(SUMMARY)
    }

    pub fn log(&self) -> PathBuf {
        self.file(LOG)
    }

    /// A fleet vehicle's log (`<name>.csv`).
    pub fn vehicle_log(&self, name: &str) -> PathBuf {
        lockstep_fleet::run::log_path(&self.0, name)
    }

    pub fn flight_page(&self) -> PathBuf {
        self.file(FLIGHT_PAGE)
    }

    pub fn batch_page(&self) -> PathBuf {
        self.file(BATCH_PAGE)
    }

    /// Writes `summary` (pretty JSON and a newline) as its `summary.json`;
    /// the reason when it cannot.
    pub fn write_summary(&self, summary: &RunSummary) -> Result<(), String> {
        let f = self.summary();
        std::fs::write(&f, format!("{}\n", summary.to_json()))
            .map_err(|e| format!("cannot write the summary {}: {e}", f.display()))
    }

    /// Its `summary.json` read back (`None`: there is none); the reason
    /// when it cannot be read or is no run's summary.
    pub fn read_summary(&self) -> Result<Option<RunSummary>, String> {
        let f = self.summary();
        if !f.exists() {
            return Ok(None);
        }
        let text =
            std::fs::read_to_string(&f).map_err(|e| format!("cannot read {}: {e}", f.display()))?;
        RunSummary::from_json(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", f.display()))
    }
}

/// A run's summary: its report, tagged with its kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunSummary {
    Flight(FlightReport),
    Fleet(FleetReport),
    Batch(BatchReport),
    Cosim(CosimReport),
    Orchestrate(OrchestrateReport),
}

/// The kinds, as the JSON's `kind` spells them.
pub const KINDS: [&str; 5] = ["flight", "fleet", "batch", "cosim", "orchestrate"];

impl RunSummary {
    /// Its kind, as the JSON's `kind` spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            RunSummary::Flight(_) => KINDS[0],
            RunSummary::Fleet(_) => KINDS[1],
            RunSummary::Batch(_) => KINDS[2],
            RunSummary::Cosim(_) => KINDS[3],
            RunSummary::Orchestrate(_) => KINDS[4],
        }
    }

    /// The JSON text `--json` prints and `summary.json` holds.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serializes")
    }

    /// The same on one line (the C ABI's, Python's).
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self).expect("a report serializes")
    }

    /// A summary from its JSON text; what is wrong with it, said for a
    /// reader who did not write it.
    pub fn from_json(text: &str) -> Result<RunSummary, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let kind = value.as_object().map(|o| o.get("kind"));
        match kind {
            Some(None) => {
                return Err(format!(
                    "no `kind` in it: not a summary, or one written by a lockstep before summaries \
                     said their kind (run it again); a summary's kind is one of {}",
                    KINDS.join(", ")
                ));
            }
            Some(Some(k)) if !KINDS.iter().any(|n| k == *n) => {
                return Err(format!(
                    "its kind {k} is none this lockstep knows ({})",
                    KINDS.join(", ")
                ));
            }
            _ => {}
        }
        serde_json::from_value(value).map_err(|e| format!("not a run's summary: {e}"))
    }
}

macro_rules! summary_of {
    ($($report:ty => $kind:ident),*) => {$(
        impl From<$report> for RunSummary {
            fn from(r: $report) -> RunSummary {
                RunSummary::$kind(r)
            }
        }

        impl $report {
            /// Its summary's JSON text: what `--json` prints and
            /// `summary.json` holds.
            pub fn to_json(&self) -> String {
                RunSummary::from(self.clone()).to_json()
            }
        }
    )*};
}

summary_of!(
    FlightReport => Flight,
    FleetReport => Fleet,
    BatchReport => Batch,
    CosimReport => Cosim,
    OrchestrateReport => Orchestrate
);

#[cfg(test)]
mod tests;
