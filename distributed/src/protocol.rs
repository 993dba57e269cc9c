//! The messages between the primary and its secondaries, encoded with
//! postcard (compact, every number exact).
//!
//! A round: the primary sends one [`Step`] to every secondary; each one
//! acts on it and answers with one [`Ack`] carrying the iteration it
//! answers and its own index, so the primary refuses a stale or a
//! duplicate answer, and a digest of its body, so it refuses a damaged
//! one.

use lockstep_harness::inputs::scenario::Override;
use lockstep_harness::outcome::report::VehicleOutcome;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The protocol's version: both sides must speak the same.
pub const PROTOCOL_VERSION: u32 = 5;

/// A collision found at the last boundary, to act on both vehicles before
/// they step on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Collision {
    pub a: u32,
    pub b: u32,
    pub separation_m: f64,
}

/// A vehicle arriving at a secondary with its whole state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Arrival {
    pub performer: u32,
    pub to: u32,
    pub state: Vec<u8>,
}

/// A MAVLink frame between the ground stations and a served vehicle,
/// relayed by the primary (see [`crate::served`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// The primary's link it came on, or goes to (none: every link).
    pub link: Option<u32>,
    /// Its target system (0: every vehicle); a vehicle's own frames: 0.
    pub target: u8,
    pub bytes: Vec<u8>,
}

/// How a secondary serves its vehicles to ground stations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Served {
    /// The MAVLink style (`px4`, `ardupilot`).
    pub style: String,
    /// The primary's links (endpoints).
    pub links: u32,
    /// Inputs recorded here go back to the primary in each ack.
    pub record: bool,
    /// A record to replay (its path, for messages, and its text) instead
    /// of the frames relayed.
    pub replay: Option<(String, String)>,
}

/// What the primary asks of every secondary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub iteration: u64,
    /// Step every vehicle owned through this boundary (a transfer round
    /// repeats the last one: nothing steps).
    pub time_us: u64,
    /// The first boundary of the round: a stretch steps through every
    /// sync period from here to `time_us`, each vehicle's position kept at
    /// each (equal to `time_us`: one boundary).
    pub first_us: u64,
    /// Snapshot every vehicle before stepping: the stretch may be redone.
    pub keep: bool,
    /// Restore every vehicle to its snapshot of the last round (its rows
    /// since dropped) before acting: that stretch is being redone.
    pub redo: bool,
    /// The sync period.
    pub step_us: u64,
    pub paused: bool,
    /// Performer → secondary, for the performers whose owner changes
    /// (every performer at iteration 0).
    pub affinity: Vec<(u32, u32)>,
    pub collisions: Vec<Collision>,
    /// Performers whose owner snapshots them (after the collisions) and
    /// drops them; the ack carries their states.
    pub release: Vec<u32>,
    pub arrivals: Vec<Arrival>,
    /// End every vehicle's run; the ack carries their reports.
    pub stop: bool,
    /// The run is abandoned for this reason (a peer left, a vehicle
    /// failed, the primary was interrupted): end and exit with an error.
    pub abort: Option<String>,
    /// Frames from the ground stations since the last step (a served run):
    /// each secondary takes those for its vehicles.
    pub mavlink: Vec<Frame>,
    /// Lines every served vehicle announces (a refused signature).
    pub warnings: Vec<String>,
}

/// One vehicle in an ack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub performer: u32,
    /// Its position (NED, m) at the boundary.
    pub position_ned_m: [f64; 3],
    /// Its position at each boundary of the round (a stretch), the last
    /// one `position_ned_m`.
    pub positions: Vec<[f64; 3]>,
    /// Its speed and acceleration bounds at the boundary (see
    /// `lockstep_harness::engine::Reach`).
    pub speed_mps: f64,
    pub accel_mps2: f64,
    /// The log rows since the last ack, encoded (see `lockstep_harness::persist`).
    pub rows: Vec<u8>,
    pub row_count: u32,
    /// Its state, when released.
    pub state: Option<Vec<u8>>,
    /// Its autopilot can move (iteration 0).
    pub can_migrate: bool,
    /// Its outcome (on stop).
    pub outcome: Option<VehicleOutcome>,
}

/// A vehicle's engine failed on a secondary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub performer: u32,
    pub message: String,
    /// The exit status the same failure has in one process.
    pub status: u8,
}

/// A secondary's answer to one step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ack {
    pub iteration: u64,
    pub sender: u32,
    pub time_us: u64,
    pub performers: Vec<Report>,
    pub failure: Option<Failure>,
    /// What its served vehicles sent (a served run).
    pub mavlink: Vec<Frame>,
    /// The inputs it applied from the ground stations, as record lines.
    pub recorded: Vec<String>,
    /// What its link ignored, one line per kind (on stop).
    pub link_notes: Vec<String>,
    /// Serving its vehicles failed.
    pub link_error: Option<String>,
    /// The secondary's own time on the step, µs: from the step received to
    /// this ack built, before its digest (a measure of the machine, for the
    /// report's round parts; never part of the results).
    pub work_us: u64,
    /// SHA-256 of the ack encoded with this field zeroed. The last field:
    /// its 32 bytes end the encoding (postcard writes an array as its
    /// bytes), which [`Ack::intact`] zeroes instead of copying the ack.
    pub digest: [u8; 32],
}

impl Ack {
    /// Seals the ack: computes its digest.
    pub fn sealed(mut self) -> Ack {
        self.digest = [0; 32];
        let body = encode(&self);
        self.digest = Sha256::digest(&body).into();
        self
    }

    /// Whether the digest matches the body.
    pub fn intact(&self) -> bool {
        let mut body = encode(self);
        let n = body.len() - 32;
        body[n..].fill(0);
        let d: [u8; 32] = Sha256::digest(&body).into();
        d == self.digest
    }
}

/// Everything a secondary needs to build the run, from the primary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    pub protocol: u32,
    /// This secondary's index and how many there are.
    pub index: u32,
    pub secondaries: u32,
    /// The scenario's path (its relative paths resolve against it: a
    /// secondary on another machine needs the same files at the same
    /// paths) and text.
    pub scenario_path: String,
    pub scenario_text: String,
    /// The primary's overrides, applied to the scenario as it applies them.
    pub overrides: Vec<Override>,
    pub autopilot: String,
    /// The autopilot in-process (else in a host process with these
    /// timeouts, in ms).
    pub in_process: bool,
    pub step_timeout_ms: u64,
    pub call_timeout_ms: u64,
    /// The vehicles are served to ground stations.
    pub served: Option<Served>,
}

/// Encodes a message.
pub fn encode<T: Serialize>(m: &T) -> Vec<u8> {
    postcard::to_stdvec(m).expect("a message encodes")
}

/// Decodes a message; the reason when it is not one.
pub fn decode<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_is_sealed_and_a_damaged_one_is_seen() {
        let ack = Ack {
            iteration: 7,
            sender: 1,
            time_us: 28_000,
            performers: vec![Report {
                performer: 3,
                position_ned_m: [1.0, -2.0, -10.0],
                positions: vec![[1.0, -2.0, -10.0]],
                speed_mps: 0.5,
                accel_mps2: 40.0,
                rows: vec![1, 2, 3],
                row_count: 1,
                state: None,
                can_migrate: true,
                outcome: None,
            }],
            failure: None,
            mavlink: vec![Frame {
                link: None,
                target: 0,
                bytes: vec![0xfd, 9],
            }],
            recorded: vec!["{}".into()],
            link_notes: Vec::new(),
            link_error: None,
            work_us: 120,
            digest: [0; 32],
        }
        .sealed();
        assert!(ack.intact());
        let back: Ack = decode(&encode(&ack)).unwrap();
        assert_eq!(back, ack);
        let mut bad = ack.clone();
        bad.performers[0].position_ned_m[0] = 1.0000001;
        assert!(!bad.intact());
        let mut bad = ack.clone();
        bad.digest[31] ^= 1;
        assert!(!bad.intact());
        // The digest's bytes end the encoding (what `intact` relies on).
        assert!(encode(&ack).ends_with(&ack.digest));
        assert!(decode::<Ack>(&[1, 2]).is_err());
    }
}
