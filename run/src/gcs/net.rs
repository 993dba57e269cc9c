//! The link a run's vehicles share: its endpoints, MAVLink 2 framing (each
//! vehicle with its own header: system id and sequence), signing, and what
//! arrived that no vehicle took (counted). One flight has one vehicle on
//! it; a fleet has one per system id.
//!
//! On a distributed run's secondary the link is relayed: the primary owns
//! the sockets and the signing, and hands over the frames it accepted for
//! this secondary's vehicles; what they send goes back to it unsigned
//! ([`super::relay`]).

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use mavlink::dialects::common::MavMessage;
use mavlink::{MAVLinkMessageRaw, MavHeader, Message};

use super::endpoint::{Endpoint, Link};
use super::signing::Signing;

/// The link, as each vehicle holds it (to send).
pub(crate) type Shared = Arc<Mutex<Net>>;

/// What carries the frames.
#[derive(Debug)]
enum Wire {
    /// Ground stations' sockets.
    Sockets(Vec<Link>),
    /// Frames relayed by a distributed run's primary: those received, per
    /// link, and those to send (on a link, or on every one).
    Relayed {
        inbox: Vec<VecDeque<Vec<u8>>>,
        outbox: Vec<(Option<usize>, Vec<u8>)>,
    },
}

/// A message from a station, accepted (signed with the key when the link
/// has one, and parsed): who sent it, and its frame as it came.
#[derive(Debug)]
pub(crate) struct Received {
    pub(crate) sender: (u8, u8),
    pub(crate) msg: MavMessage,
    pub(crate) frame: Vec<u8>,
}

/// One datagram's messages.
#[derive(Debug, Default)]
pub(crate) struct Datagram {
    pub(crate) messages: Vec<Received>,
    /// A frame in it was the first the key refused (to be announced once).
    pub(crate) first_refusal: bool,
}

#[derive(Debug)]
pub(crate) struct Net {
    wire: Wire,
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
        let links = endpoints.iter().map(Link::open).collect::<Result<_, _>>()?;
        Ok(Net::on(Wire::Sockets(links), key))
    }

    /// A relayed link of `links` endpoints (a distributed run's
    /// secondary): nothing signed here, nothing checked (the primary did).
    pub(crate) fn relayed(links: usize) -> Net {
        Net::on(
            Wire::Relayed {
                inbox: vec![VecDeque::new(); links],
                outbox: Vec::new(),
            },
            None,
        )
    }

    fn on(wire: Wire, key: Option<[u8; 32]>) -> Net {
        Net {
            wire,
            buf: vec![0; 65_536],
            out: Vec::with_capacity(300),
            signing: key.map(Signing::new),
            ignored: BTreeMap::new(),
        }
    }

    pub(crate) fn links(&self) -> usize {
        match &self.wire {
            Wire::Sockets(l) => l.len(),
            Wire::Relayed { inbox, .. } => inbox.len(),
        }
    }

    /// A frame the primary relayed, received on `link` (one datagram).
    pub(crate) fn relay_in(&mut self, link: usize, frame: Vec<u8>) -> Result<(), String> {
        match &mut self.wire {
            Wire::Relayed { inbox, .. } => match inbox.get_mut(link) {
                Some(q) => {
                    q.push_back(frame);
                    Ok(())
                }
                None => Err(format!(
                    "the primary relayed a frame from link {link}; it has {} links",
                    inbox.len()
                )),
            },
            Wire::Sockets(_) => Err("a frame relayed to a link with sockets".into()),
        }
    }

    /// The frames sent since the last call (relayed), each with its link
    /// (none: every link).
    pub(crate) fn relay_out(&mut self) -> Vec<(Option<usize>, Vec<u8>)> {
        match &mut self.wire {
            Wire::Relayed { outbox, .. } => std::mem::take(outbox),
            Wire::Sockets(_) => Vec::new(),
        }
    }

    /// The next datagram waiting on `link` (`None`: none waiting), its
    /// messages accepted. Frames not signed with the key, that do not
    /// parse, and datagrams without a frame are counted and left out; a
    /// station heard on a `listen:` endpoint is answered from now on.
    pub(crate) fn datagram(&mut self, link: usize) -> Result<Option<Datagram>, String> {
        let (bytes, from) = match &mut self.wire {
            Wire::Sockets(links) => match links[link].poll(&mut self.buf)? {
                Some((n, from)) => (self.buf[..n].to_vec(), Some(from)),
                None => return Ok(None),
            },
            Wire::Relayed { inbox, .. } => {
                match inbox.get_mut(link).and_then(VecDeque::pop_front) {
                    Some(frame) => (frame, None),
                    None => return Ok(None),
                }
            }
        };
        let mut datagram = Datagram::default();
        let mut reader = mavlink::MavlinkReader::new(&bytes[..]);
        let mut frames = 0;
        while let Ok(raw) = reader.read_any_raw_message::<MavMessage>() {
            frames += 1;
            if !self.accepts(&raw) {
                let what = "MAVLink messages refused: not signed with the link's key, or an old \
                            signature timestamp";
                datagram.first_refusal |= self.ignore(what);
                continue;
            }
            let Ok(msg) = MavMessage::parse(raw.version(), raw.message_id(), raw.payload()) else {
                self.ignore("MAVLink messages that did not parse (ignored)");
                continue;
            };
            if let (Wire::Sockets(links), Some(from)) = (&mut self.wire, from) {
                links[link].heard(from);
            }
            let frame = match &raw {
                MAVLinkMessageRaw::V1(m) => m.raw_bytes().to_vec(),
                MAVLinkMessageRaw::V2(m) => m.raw_bytes().to_vec(),
            };
            datagram.messages.push(Received {
                sender: (raw.system_id() as u8, raw.component_id()),
                msg,
                frame,
            });
        }
        if frames == 0 {
            self.ignore("datagrams with no valid MAVLink frame (ignored)");
        }
        Ok(Some(datagram))
    }

    /// Whether a frame may be applied: signed with the key (when the link
    /// has one).
    fn accepts(&self, raw: &MAVLinkMessageRaw) -> bool {
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
        self.put(Some(link));
    }

    /// `msg` from the vehicle of `header` to every station.
    pub(crate) fn broadcast(&mut self, header: &mut MavHeader, msg: &MavMessage) {
        if self.links() == 0 {
            return;
        }
        self.frame(header, msg);
        self.put(None);
    }

    /// The frame just built, onto `link` (none: every link).
    fn put(&mut self, link: Option<usize>) {
        match &mut self.wire {
            Wire::Sockets(links) => match link {
                Some(l) => match links.get_mut(l) {
                    Some(l) => l.send(&self.out),
                    None => {
                        self.ignore("frames from a secondary for a link not open (not sent)");
                    }
                },
                None => links.iter_mut().for_each(|l| l.send(&self.out)),
            },
            Wire::Relayed { outbox, .. } => outbox.push((link, self.out.clone())),
        }
    }

    /// A frame a secondary's vehicle sent (unsigned, its header as that
    /// vehicle numbered it), onto `link` (none: every link), signed here
    /// when the link has a key. A frame that does not parse is counted.
    pub(crate) fn forward(&mut self, link: Option<usize>, frame: &[u8]) {
        let Some(signing) = &self.signing else {
            self.out.clear();
            self.out.extend_from_slice(frame);
            self.put(link);
            return;
        };
        let mut reader = mavlink::MavlinkReader::new(frame);
        let parsed = reader
            .read_any_raw_message::<MavMessage>()
            .ok()
            .and_then(|raw| {
                let msg = MavMessage::parse(raw.version(), raw.message_id(), raw.payload()).ok()?;
                let header = MavHeader {
                    system_id: raw.system_id(),
                    component_id: raw.component_id(),
                    sequence: raw.sequence(),
                };
                Some((header, msg))
            });
        let Some((header, msg)) = parsed else {
            self.ignore("frames from a secondary that did not parse (not sent)");
            return;
        };
        self.out.clear();
        let _ = mavlink::write_v2_msg_signed(&mut self.out, header, &msg, Some(signing.data()));
        self.put(link);
    }

    /// What no vehicle took, and the sends that failed, one line per kind.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = self
            .ignored
            .iter()
            .map(|(what, n)| format!("{n} {what}"))
            .collect();
        if let Wire::Sockets(links) = &self.wire {
            for l in links {
                if l.send_failures > 0 {
                    notes.push(format!(
                        "{} sends to {} failed (no ground station listening?)",
                        l.send_failures, l.endpoint
                    ));
                }
            }
        }
        notes
    }
}
