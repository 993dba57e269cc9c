//! What the primary and a secondary need of a transport, and an in-process
//! transport (channels) for tests and for running every role in one
//! process. The zenoh transport is in `zenoh_link` (feature `zenoh`).

use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use crate::protocol::{Ack, Step, decode, encode};

/// Why a peer could not be reached.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LinkError {
    /// A peer left: it shut down, crashed, was killed, stopped answering
    /// (its liveliness lease expired) or the network lost it.
    #[error("{peer} left: {reason}")]
    PeerLost { peer: String, reason: String },
    /// A message that does not decode.
    #[error("a malformed message from {peer}: {reason}")]
    Malformed { peer: String, reason: String },
    #[error("the transport failed: {0}")]
    Transport(String),
}

/// A command to the primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Pause,
    Resume,
}

/// The primary's side.
pub trait PrimaryLink {
    fn secondaries(&self) -> usize;
    /// How messages name secondary `index` (with its transport identity).
    fn peer_name(&self, index: u32) -> String;
    /// Sends `step` to every secondary.
    fn broadcast(&mut self, step: &Step) -> Result<(), LinkError>;
    /// The next ack to arrive within `timeout` (`None` when none did); a
    /// lost peer is an error.
    fn next_ack(&mut self, timeout: Duration) -> Result<Option<Ack>, LinkError>;
    /// Waits up to `timeout` for a command (a lost peer is an error).
    fn control(&mut self, timeout: Duration) -> Result<Option<Control>, LinkError>;
}

/// A secondary's side.
pub trait SecondaryLink {
    fn index(&self) -> u32;
    /// The next step (blocking); losing the primary is an error.
    fn next_step(&mut self) -> Result<Step, LinkError>;
    fn ack(&mut self, ack: &Ack) -> Result<(), LinkError>;
}

/// The primary's end of an in-process network.
#[derive(Debug)]
pub struct LocalPrimary {
    to: Vec<Sender<Vec<u8>>>,
    acks: Receiver<Vec<u8>>,
    control: Receiver<Control>,
}

/// A secondary's end of an in-process network.
#[derive(Debug)]
pub struct LocalSecondary {
    index: u32,
    steps: Receiver<Vec<u8>>,
    acks: Sender<Vec<u8>>,
}

/// An in-process network of a primary, `n` secondaries and a control
/// handle (the channels carry the encoded messages).
pub fn local(n: usize) -> (LocalPrimary, Vec<LocalSecondary>, Sender<Control>) {
    let (ack_tx, ack_rx) = channel();
    let (ctl_tx, ctl_rx) = channel();
    let mut to = Vec::new();
    let mut secondaries = Vec::new();
    for i in 0..n {
        let (tx, rx) = channel();
        to.push(tx);
        secondaries.push(LocalSecondary {
            index: i as u32,
            steps: rx,
            acks: ack_tx.clone(),
        });
    }
    (
        LocalPrimary {
            to,
            acks: ack_rx,
            control: ctl_rx,
        },
        secondaries,
        ctl_tx,
    )
}

impl PrimaryLink for LocalPrimary {
    fn secondaries(&self) -> usize {
        self.to.len()
    }

    fn peer_name(&self, index: u32) -> String {
        format!("secondary {index}")
    }

    fn broadcast(&mut self, step: &Step) -> Result<(), LinkError> {
        let bytes = encode(step);
        for (i, tx) in self.to.iter().enumerate() {
            tx.send(bytes.clone()).map_err(|_| LinkError::PeerLost {
                peer: format!("secondary {i}"),
                reason: "its channel closed".into(),
            })?;
        }
        Ok(())
    }

    fn next_ack(&mut self, timeout: Duration) -> Result<Option<Ack>, LinkError> {
        match self.acks.recv_timeout(timeout) {
            Ok(bytes) => decode(&bytes)
                .map(Some)
                .map_err(|reason| LinkError::Malformed {
                    peer: "a secondary".into(),
                    reason,
                }),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(LinkError::PeerLost {
                peer: "every secondary".into(),
                reason: "their channels closed".into(),
            }),
        }
    }

    fn control(&mut self, timeout: Duration) -> Result<Option<Control>, LinkError> {
        match self.control.recv_timeout(timeout) {
            Ok(c) => Ok(Some(c)),
            Err(_) => Ok(None),
        }
    }
}

impl SecondaryLink for LocalSecondary {
    fn index(&self) -> u32 {
        self.index
    }

    fn next_step(&mut self) -> Result<Step, LinkError> {
        let bytes = self.steps.recv().map_err(|_| LinkError::PeerLost {
            peer: "the primary".into(),
            reason: "its channel closed".into(),
        })?;
        decode(&bytes).map_err(|reason| LinkError::Malformed {
            peer: "the primary".into(),
            reason,
        })
    }

    fn ack(&mut self, ack: &Ack) -> Result<(), LinkError> {
        self.acks
            .send(encode(ack))
            .map_err(|_| LinkError::PeerLost {
                peer: "the primary".into(),
                reason: "its channel closed".into(),
            })
    }
}
