//! Aircraft specs in TOML: strict (unknown keys are errors naming the key
//! path), versioned (`schema_version`), composable (`extends = [..]`
//! deep-merges base specs: tables merge, everything else is replaced), every
//! quantity with its unit in the key. [`AircraftSpec::build`] validates a spec
//! into a [`crate::Multirotor`].
//!
//! `extends` entries name a built-in spec (`"iris"`) or a file path relative
//! to the extending file (`"./base.toml"`, anything with a `/` or ending in
//! `.toml`).

mod build;
mod builtin;
mod data;
mod error;
mod load;
mod validate;

pub use builtin::{BUILTIN_SPECS, flyable_builtins, nearest_builtin};
pub use data::*;
pub use error::SpecError;

/// The schema version this build reads.
pub const SCHEMA_VERSION: u32 = 1;
