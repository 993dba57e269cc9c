//! What a run is given: the scenario file and its overrides, the mission,
//! the world origin, the autopilot's parameters.
//!
//! - [`scenario`]: scenario files (TOML), checked into a [`scenario::Scenario`].
//! - [`mission`]: QGroundControl plans and MAVLink WPL missions.
//! - [`origin`]: the geodetic origin of the local frame, and how far a
//!   mission may reach from it.
//! - [`autopilot_params`]: `[autopilot.params]`, set by name.

pub mod autopilot_params;
pub mod mission;
pub mod origin;
pub mod scenario;
