//! lockstep-distributed: a fleet stepped across processes and machines in
//! lockstep, with results equal to the same fleet in one process bit for
//! bit.
//!
//! - [`protocol`]: the step and ack messages (iteration, sender, digest),
//!   the setup a secondary receives.
//! - [`primary`]: owns time and every vehicle's position, writes the logs,
//!   checks the separation, moves vehicles between secondaries when their
//!   level changes owner; runs no physics.
//! - [`secondary`]: steps the vehicles it is given.
//! - [`link`]: what a transport provides, and an in-process one.
//! - [`served`]: ground stations served over MAVLink from the primary's
//!   link, the vehicles' protocols run where they step.
//! - `zenoh_link` (feature `zenoh`): discovery, liveliness and messages on
//!   zenoh (sessions opened by `lockstep_remote::net`).

pub mod link;
pub mod primary;
pub mod protocol;
pub mod secondary;
pub mod served;
#[cfg(feature = "zenoh")]
pub mod zenoh_link;

pub use primary::{Outcome, Primary, PrimaryError, PrimaryOptions, RoundParts};
pub use secondary::{Secondary, SecondaryError};

use std::path::PathBuf;

use lockstep_abi::Isolation;
use lockstep_fleet::FleetScenario;

/// Runs `fleet` with a primary and `n` secondaries on threads of this
/// process, connected by channels (the protocol of a distributed run
/// without a network: for tests, and for comparing with one).
pub fn run_local(
    fleet: &FleetScenario,
    n: usize,
    isolation: &Isolation,
    options: PrimaryOptions,
) -> Result<Outcome, PrimaryError> {
    let (primary_link, secondary_links, _control) = link::local(n);
    let autopilot: PathBuf = options.autopilot.clone();
    let handles: Vec<_> = secondary_links
        .into_iter()
        .map(|l| {
            let (fleet, autopilot, isolation) =
                (fleet.clone(), autopilot.clone(), isolation.clone());
            std::thread::spawn(move || Secondary::new(l, fleet, autopilot, isolation).run())
        })
        .collect();
    let result = Primary::new(primary_link, fleet.clone(), options).and_then(|mut p| p.run());
    for h in handles {
        // A secondary's own error is the primary's too (it saw the failure
        // or the loss); a panic is a bug.
        let _ = h.join().expect("a secondary thread panicked");
    }
    result
}
