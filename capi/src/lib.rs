//! lockstep-capi: the harness's own C ABI, `include/lockstep/harness.h`
//! (generated from this crate by cbindgen; the conventions are written at
//! the top of the header, in `cbindgen.toml`).
//!
//! Three ways a host uses it, each an opaque handle type:
//! - [`sim`]: a whole vehicle (`lockstep_sim`): plant, sensors, estimator,
//!   autopilot, world, log and recording, built from a scenario;
//! - [`bridge`]: an autopilot in the loop against a host-owned plant
//!   (`lockstep_bridge`): truth in, actuator commands out;
//! - [`plant`]: the plant alone (`lockstep_plant`), stepped with given
//!   actuator commands;
//! - [`cosim`]: a co-simulation from a system file (`lockstep_cosim`), its
//!   external participants stepped by the host's callbacks.
//!
//! Every export runs inside [`boundary::guard`] (no panic crosses into C),
//! checks every pointer and every caller struct's size, and looks its handle
//! up in a registry (a stale, freed or never-created handle is an error code,
//! not undefined behaviour).
#![allow(non_camel_case_types)]

#[cfg(not(target_pointer_width = "64"))]
compile_error!("the handle encoding needs 64-bit pointers");

pub mod boundary;
pub mod bridge;
pub mod cosim;
mod options;
pub mod plant;
mod registry;
mod serve;
pub mod sim;
pub mod types;

pub use boundary::lockstep_status;
pub use types::*;

/// The harness C ABI's version: bumped on any change to a function's
/// signature or a shared struct's layout. A host compiled against
/// `LOCKSTEP_HARNESS_ABI_VERSION` checks [`lockstep_harness_abi_version`]
/// at start-up.
pub const LOCKSTEP_HARNESS_ABI_VERSION: u32 = 1;

/// The crate's version, NUL-terminated (for [`lockstep_version`]).
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");

/// The library's version, e.g. `"0.1.0"`: a static NUL-terminated string.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn lockstep_version() -> *const std::ffi::c_char {
    VERSION.as_ptr().cast()
}

/// The ABI version this library implements; compare it with
/// `LOCKSTEP_HARNESS_ABI_VERSION` from the header the host was compiled
/// against. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn lockstep_harness_abi_version() -> u32 {
    LOCKSTEP_HARNESS_ABI_VERSION
}
