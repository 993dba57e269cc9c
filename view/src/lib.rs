//! The flight viewer: one self-contained HTML page that opens offline in
//! any browser, of a flight, a fleet, a Monte Carlo batch or a log's
//! prediction (`lockstep predict --out`).
//!
//! A flight or fleet page holds a three.js scene (ground grid, home,
//! waypoints, each vehicle's path and the vehicle itself with its attitude
//! and rotor layout, the wind arrow), a time slider with play and speed,
//! uPlot plots synchronised with the slider, the mode, arming and event
//! timeline as bands, and the verdict. A Monte Carlo page holds the batch's
//! outcome, its figures and every run with its verdict and reason; a
//! prediction page the error table and the log-against-prediction figures.
//!
//! | file | what |
//! |---|---|
//! | `track.rs` | one vehicle's log and sidecar, as the page's data |
//! | `page.rs` | the HTML: the template filled with the data and scripts |
//! | `montecarlo.rs` | the Monte Carlo page |
//! | `prediction.rs` | `lockstep predict`'s page: errors per horizon, figures |
//! | `assets/` | the template, its stylesheet, `viewer.js`, the Monte Carlo and prediction pages' scripts and the figure code they share (`figures.js`) |
//! | `vendor/` | three.js and uPlot bundled by `vendor/build.sh` from the npm registry at pinned versions, with their licences |
//!
//! No network is used at view time: everything is inlined.

mod montecarlo;
mod page;
mod prediction;
mod track;

pub use montecarlo::{Batch, montecarlo_page};
pub use page::{Fleet, Flight, fleet_page, flight_page, write_page};
pub use prediction::{Prediction, prediction_page};
pub use track::{Sidecar, Vehicle};

/// What went wrong, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}: {reason}")]
    Invalid { path: String, reason: String },
    /// A log's sidecar that could not be read (the message names it).
    #[error("{0}")]
    Sidecar(String),
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    /// The log itself (the error names it).
    #[error(transparent)]
    Log(#[from] lockstep_plot::PlotError),
}
