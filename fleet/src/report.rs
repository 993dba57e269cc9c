//! A vehicle's outcome as JSON: what `lockstep fly` reports for each
//! vehicle of a fleet (shared with the co-simulation, so it lives in the
//! harness).

pub use lockstep_harness::outcome::report::summary_json;
