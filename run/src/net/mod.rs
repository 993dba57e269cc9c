//! Where a run meets its peers on the network (zenoh, in a build with the
//! `distributed` feature): a distributed fleet's primary and secondaries,
//! and co-simulation participants or orchestrated models in processes of
//! their own.

use std::time::Duration;

/// The message of a front end built without the network.
pub const NO_NETWORK: &str = "this lockstep was built without distributed runs and remote \
                              processes (zenoh); build it with `cargo build --release \
                              --features distributed`";

/// Whether this build can meet peers: `Ok`, or the one refusal (a
/// configuration error with [`NO_NETWORK`]) every networked part gives.
pub fn available() -> Result<(), crate::RunError> {
    if cfg!(feature = "distributed") {
        Ok(())
    } else {
        Err(crate::RunError::configuration(NO_NETWORK))
    }
}

/// A run's place on the network.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The run's name on the network: peers of one run give the same one.
    pub session: String,
    /// Endpoints to listen on (`tcp/0.0.0.0:7447`).
    pub listen: Vec<String>,
    /// Endpoints to connect to (`tcp/10.0.0.5:7447`).
    pub connect: Vec<String>,
    /// How long a silent peer is still alive [default: 1 s].
    pub lease: Option<Duration>,
    /// How long to wait for the other peers [default: 60 s].
    pub wait: Option<Duration>,
}

impl Default for Network {
    fn default() -> Network {
        Network {
            session: "lockstep".into(),
            listen: Vec::new(),
            connect: Vec::new(),
            lease: None,
            wait: None,
        }
    }
}

impl Network {
    /// The liveliness lease.
    pub fn lease(&self) -> Duration {
        self.lease.unwrap_or(Duration::from_secs(1))
    }

    /// How long to wait for peers.
    pub fn wait(&self) -> Duration {
        self.wait.unwrap_or(Duration::from_secs(60))
    }

    /// Peers find each other by UDP multicast scouting only when given no
    /// endpoint.
    pub fn multicast(&self) -> bool {
        self.listen.is_empty() && self.connect.is_empty()
    }

    /// The transport's options.
    #[cfg(feature = "distributed")]
    pub fn options(&self) -> lockstep_distributed::zenoh_link::NetOptions {
        lockstep_distributed::zenoh_link::NetOptions {
            session: self.session.clone(),
            listen: self.listen.clone(),
            connect: self.connect.clone(),
            multicast: self.multicast(),
            lease: self.lease(),
        }
    }
}

/// A build without the network refuses each part of a run that needs it.
#[cfg(all(test, not(feature = "distributed")))]
mod tests;
