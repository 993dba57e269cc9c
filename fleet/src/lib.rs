//! lockstep-fleet: many vehicles in one lockstep world.
//!
//! - [`scenario`]: fleet scenarios (`[[vehicles]]`, `[fleet]`), each vehicle
//!   validated as a scenario of its own that shares the file's sections.
//! - [`separation`]: the distance between every pair at each sync boundary,
//!   proximity episodes and collisions.
//! - [`levels`]: regions of airspace a distributed run deals to its
//!   secondaries.
//! - [`lookahead`]: how many sync periods the vehicles may step between
//!   checks, from a bound on their motion, and the check of that bound.
//! - [`run`]: the fleet stepped boundary by boundary on a thread pool, its
//!   results independent of the number of threads and of the lookahead.
//!
//! Vehicles do not see each other between sync boundaries: each one is a
//! whole [`lockstep_harness::engine::Engine`] with its own random streams
//! (derived from the master seed and the vehicle's name), stepped to the
//! boundary alone. At the boundary the world compares every pair, in index
//! order, on one thread. That is what makes the result the same on one
//! thread, on many, and (in the distributed runner) on many machines.

pub mod levels;
pub mod lookahead;
pub mod run;
pub mod scenario;
pub mod separation;
pub mod starts;

pub use run::{Fleet, FleetError, FleetResult, FleetSummary};
pub use scenario::{FleetScenario, FleetVehicle};
pub use separation::{Encounter, EncounterKind, Separation};
pub use starts::{Start, check_starts};
