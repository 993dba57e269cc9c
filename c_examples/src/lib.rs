//! The C libraries of `c_examples/`, built by the repository's `build.rs`:
//! where they are, for the run layer (which carries the reference
//! autopilot and the slung-load FMU in the binary) and for every crate's
//! tests (a dev-dependency).

use std::path::PathBuf;

/// The reference autopilot (`c_examples/autopilot`), re-entrant.
pub const REFERENCE_AUTOPILOT: &str = env!("LOCKSTEP_BUNDLED_AUTOPILOT");

/// The reference autopilot built to report no `LOCKSTEP_AP_CAP_REENTRANT`
/// and to refuse a second instance itself.
pub const SINGLE_INSTANCE_AUTOPILOT: &str = env!("LOCKSTEP_SINGLE_INSTANCE_AUTOPILOT");

/// `c_examples/skeleton`: the smallest library the harness accepts.
pub const SKELETON_AUTOPILOT: &str = env!("LOCKSTEP_SKELETON_AUTOPILOT");

/// The reference autopilot built against the header as it was at ABI 3:
/// an old library the harness still loads.
pub const ABI3_AUTOPILOT: &str = env!("LOCKSTEP_ABI3_AUTOPILOT");

/// The slung-load FMU's binary (`c_examples/slung_load_fmu`), to be packed
/// into an FMU next to its `modelDescription.xml`.
pub const SLUNG_LOAD_FMU_BINARY: &str = env!("LOCKSTEP_SLUNG_LOAD_FMU_BINARY");

/// The slung-load FMU's model description.
pub const SLUNG_LOAD_FMU_DESCRIPTION: &str = include_str!("../slung_load_fmu/modelDescription.xml");

/// The directory of the libraries the loader must refuse.
pub const BROKEN_DIR: &str = env!("LOCKSTEP_BROKEN_DIR");

/// The bytes of [`REFERENCE_AUTOPILOT`], for a binary that carries it.
pub const REFERENCE_AUTOPILOT_BYTES: &[u8] = include_bytes!(env!("LOCKSTEP_BUNDLED_AUTOPILOT"));

/// The bytes of [`SLUNG_LOAD_FMU_BINARY`], for a binary that carries it.
pub const SLUNG_LOAD_FMU_BINARY_BYTES: &[u8] =
    include_bytes!(env!("LOCKSTEP_SLUNG_LOAD_FMU_BINARY"));

/// The broken library `case` (`<prefix>lockstep_broken_<case><suffix>` in
/// [`BROKEN_DIR`]).
pub fn broken(case: &str) -> PathBuf {
    PathBuf::from(BROKEN_DIR).join(format!(
        "{}lockstep_broken_{case}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ))
}
