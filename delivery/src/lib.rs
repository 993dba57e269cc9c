//! lockstep-delivery: a delivery fleet as models of the orchestrator
//! (seed 004) — an order stream (produce-only), a no-fly-zone map (steady
//! state), a dispatcher and airspace manager woken by vehicle events, a
//! battery-swap station, a KPI collector (consume-only), and vehicles, each
//! a lockstep engine publishing telemetry at its cadence.
//!
//! - [`file`]: the fleet file (`lockstep orchestrate FLEET.toml`).
//! - [`models`], [`dispatcher`], [`vehicle`]: the models; [`geometry`]:
//!   zones and routes round them.
//! - [`run`]: a fleet file made into models and run; models may run in
//!   their own processes (`process` with the feature `zenoh`).

pub mod dispatcher;
pub mod file;
pub mod geometry;
pub mod models;
#[cfg(feature = "zenoh")]
pub mod process;
pub mod run;
pub mod vehicle;

pub use file::{FileError, FleetFile, ModelDecl, ModelKind};
pub use run::{Report, RunError, check_vehicle_starts, make_model, run, vehicle_scenario};
