//! A distributed run served to ground stations over MAVLink (`lockstep fly
//! fleet.toml --network-role primary --mavlink ...`): the fleet's vehicles
//! are systems 1, 2, ... on the primary's one link, wherever they step.
//!
//! The primary owns the link: its sockets, its signing, the record. Each
//! step carries the frames accepted since the last one, with their target
//! system; each secondary applies those for its vehicles, at the boundary
//! its vehicles are at (after that boundary's collisions, before stepping
//! on: the order of a run in one process), and its ack carries what the
//! vehicles sent and the inputs applied, as record lines. The primary sends
//! the frames (signed, with a key) and writes the lines.
//!
//! A served vehicle stays on its first secondary (its ground station state
//! does not move) and the lookahead is off (an input may come at any sync
//! boundary). The protocols themselves are `lockstep_run::gcs`'s: these
//! traits are how this crate, which does not depend on it, carries them.

use std::collections::BTreeMap;

use lockstep_harness::engine::Engine;

use crate::protocol::Frame;

/// The primary's side: the link to the ground stations.
pub trait Router: Send {
    /// The frames accepted since the last call, and lines every served
    /// vehicle announces (once each).
    fn inbound(&mut self) -> Result<(Vec<Frame>, Vec<String>), String>;
    /// Frames the vehicles sent, to the stations.
    fn outbound(&mut self, frames: &[Frame]);
    /// Record lines a secondary sent, in the order they came.
    fn record(&mut self, lines: &[String]) -> Result<(), String>;
    /// What the link ignored and the sends that failed, one line per kind.
    fn notes(&self) -> Vec<String>;
}

/// What a secondary's vehicles did at one boundary.
#[derive(Debug, Default)]
pub struct Relay {
    pub frames: Vec<Frame>,
    pub recorded: Vec<String>,
}

/// A secondary's side: its vehicles (by performer index) as MAVLink
/// systems.
pub trait Station: Send {
    /// At the boundary every engine is at: the `frames` for these vehicles
    /// applied (or the record's inputs due), `warnings` announced, their
    /// answers and telemetry; what they sent and what was applied.
    fn serve(
        &mut self,
        engines: &mut BTreeMap<u32, Engine>,
        frames: &[Frame],
        warnings: &[String],
    ) -> Result<Relay, String>;
    /// What was ignored, one line per kind.
    fn notes(&self) -> Vec<String>;
}
