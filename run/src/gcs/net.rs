//! The link a run's vehicles share: its endpoints, MAVLink 2 framing (each
//! vehicle with its own header: system id and sequence), signing, and what
//! arrived that no vehicle took (counted). One flight has one vehicle on
//! it; a fleet has one per system id.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mavlink::MAVLinkMessageRaw;
use mavlink::MavHeader;
use mavlink::dialects::common::MavMessage;

use super::endpoint::{Endpoint, Link};
use super::signing::Signing;

/// The link, as each vehicle holds it (to send).
pub(crate) type Shared = Arc<Mutex<Net>>;

#[derive(Debug)]
pub(crate) struct Net {
    links: Vec<Link>,
    buf: Vec<u8>,
    out: Vec<u8>,
    /// The link's signing, with a key.
    signing: Option<Signing>,
    /// What arrived that no vehicle took, by kind.
    ignored: BTreeMap<String, u64>,
}

impl Net {
    /// The endpoints opened (none: a replay, nothing is sent).
    pub(crate) fn open(endpoints: &[Endpoint], key: Option<[u8; 32]>) -> Result<Net, String> {
        Ok(Net {
            links: endpoints.iter().map(Link::open).collect::<Result<_, _>>()?,
            buf: vec![0; 65_536],
            out: Vec::with_capacity(300),
            signing: key.map(Signing::new),
            ignored: BTreeMap::new(),
        })
    }

    pub(crate) fn links(&self) -> usize {
        self.links.len()
    }

    /// The next datagram waiting on `link`, and who sent it.
    pub(crate) fn poll(&mut self, link: usize) -> Result<Option<(Vec<u8>, SocketAddr)>, String> {
        Ok(self.links[link]
            .poll(&mut self.buf)?
            .map(|(n, from)| (self.buf[..n].to_vec(), from)))
    }

    /// A station heard on `link` (a `listen:` endpoint answers it).
    pub(crate) fn heard(&mut self, link: usize, from: SocketAddr) {
        self.links[link].heard(from);
    }

    /// Whether a frame may be applied: signed with the key (when the link
    /// has one).
    pub(crate) fn accepts(&self, raw: &MAVLinkMessageRaw) -> bool {
        self.signing.as_ref().is_none_or(|s| s.accepts(raw))
    }

    /// Counts what no vehicle took; whether it is the first of its kind.
    pub(crate) fn ignore(&mut self, what: &str) -> bool {
        let n = self.ignored.entry(what.to_string()).or_insert(0);
        *n += 1;
        *n == 1
    }

    fn frame(&mut self, header: &mut MavHeader, msg: &MavMessage) {
        self.out.clear();
        // Writing into a Vec cannot fail.
        let _ = mavlink::write_v2_msg_signed(
            &mut self.out,
            *header,
            msg,
            self.signing.as_ref().map(Signing::data),
        );
        header.sequence = header.sequence.wrapping_add(1);
    }

    /// `msg` from the vehicle of `header` to the station on `link`.
    pub(crate) fn send(&mut self, link: usize, header: &mut MavHeader, msg: &MavMessage) {
        self.frame(header, msg);
        self.links[link].send(&self.out);
    }

    /// `msg` from the vehicle of `header` to every station.
    pub(crate) fn broadcast(&mut self, header: &mut MavHeader, msg: &MavMessage) {
        if self.links.is_empty() {
            return;
        }
        self.frame(header, msg);
        for l in &mut self.links {
            l.send(&self.out);
        }
    }

    /// What no vehicle took, and the sends that failed, one line per kind.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .ignored
            .iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        for l in &self.links {
            if l.send_failures > 0 {
                notes.push(format!(
                    "{} sends to {} failed (no ground station listening?)",
                    l.send_failures, l.endpoint
                ));
            }
        }
        notes
    }
}
