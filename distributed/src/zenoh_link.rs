//! The zenoh transport: peers in one key space `lockstep/<session>/`.
//!
//! - Liveliness: the primary holds the token `alive/primary`, secondary
//!   `z` holds `alive/secondary/<z>` (`z` its zenoh id). A token vanishes
//!   when its peer closes, crashes, is killed or stops answering for a
//!   lease (`transport/link/tx/lease`, 1 s by default here): every peer
//!   watches the others' tokens.
//! - Discovery: a secondary that sees the primary's token asks the
//!   primary's queryable `setup` for its index and the run; it subscribes
//!   to `step` and then says `ready/<index>`. The primary starts when it
//!   has N ready secondaries.
//! - Rounds: the primary publishes on `step`, secondaries on `ack/<index>`
//!   (reliable, blocking congestion control, express: nothing is dropped or
//!   held back).
//! - Control: the primary's queryable `ctl` takes `pause` and `resume`
//!   (`lockstep ctl`).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use zenoh::handlers::FifoChannelHandler;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::CongestionControl;
use zenoh::query::{Query, Queryable};
use zenoh::sample::{Sample, SampleKind};
use zenoh::{Session, Wait};

pub use lockstep_remote::net::NetOptions;

use crate::link::{Control, LinkError, PrimaryLink, SecondaryLink};
use crate::protocol::{Ack, PROTOCOL_VERSION, Setup, Step, decode, encode};

fn transport(e: impl std::fmt::Display) -> LinkError {
    LinkError::Transport(e.to_string())
}

/// Opens a peer session with `o`'s endpoints, scouting and lease.
fn open(o: &NetOptions) -> Result<Session, LinkError> {
    lockstep_remote::net::open(o).map_err(LinkError::Transport)
}

fn key(o: &NetOptions, rest: &str) -> String {
    format!("lockstep/{}/{rest}", o.session)
}

type Sub = Subscriber<FifoChannelHandler<Sample>>;

/// The primary's end: its token, the secondaries' tokens, acks, steps and
/// commands.
pub struct ZenohPrimary {
    _session: Session,
    _token: LivelinessToken,
    alive: Sub,
    acks: Sub,
    steps: Publisher<'static>,
    ctl: Queryable<FifoChannelHandler<Query>>,
    /// Zenoh id of each secondary, by index.
    secondaries: Vec<String>,
    /// A secondary's loss seen while its last ack was still arriving: the
    /// ack is taken, the loss reported at the next call.
    lost: Option<LinkError>,
}

/// How long an ack may trail its sender's vanished token (they travel
/// apart: a secondary's last ack can arrive after its token's end).
const ACK_GRACE: Duration = Duration::from_millis(250);

impl std::fmt::Debug for ZenohPrimary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohPrimary")
            .field("secondaries", &self.secondaries)
            .finish_non_exhaustive()
    }
}

/// The zenoh id in a token's key (its last chunk).
fn zid_of(sample: &Sample) -> String {
    sample
        .key_expr()
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .to_string()
}

impl ZenohPrimary {
    /// Waits for `n` secondaries (at most `wait`), gives each its index and
    /// `setup(index)`, and returns once every one is ready. `notify` gets a
    /// line per secondary that joins.
    pub fn discover(
        o: &NetOptions,
        n: usize,
        setup: impl Fn(u32) -> Setup,
        wait: Duration,
        mut notify: impl FnMut(&str),
    ) -> Result<ZenohPrimary, LinkError> {
        let session = open(o)?;
        let alive = session
            .liveliness()
            .declare_subscriber(key(o, "alive/secondary/*"))
            .history(true)
            .wait()
            .map_err(transport)?;
        let acks = session
            .declare_subscriber(key(o, "ack/*"))
            .wait()
            .map_err(transport)?;
        let ready = session
            .declare_subscriber(key(o, "ready/*"))
            .wait()
            .map_err(transport)?;
        let steps = session
            .declare_publisher(key(o, "step"))
            .congestion_control(CongestionControl::Block)
            .express(true)
            .wait()
            .map_err(transport)?;
        let setup_q = session
            .declare_queryable(key(o, "setup"))
            .wait()
            .map_err(transport)?;
        let ctl = session
            .declare_queryable(key(o, "ctl"))
            .wait()
            .map_err(transport)?;
        let token = session
            .liveliness()
            .declare_token(key(o, "alive/primary"))
            .wait()
            .map_err(transport)?;
        let start = Instant::now();
        let mut assigned: Vec<String> = Vec::new();
        let mut is_ready = vec![false; n];
        let mut seen: BTreeMap<String, bool> = BTreeMap::new();
        while is_ready.iter().any(|r| !r) {
            if start.elapsed() > wait {
                return Err(LinkError::Transport(format!(
                    "{} of {n} secondaries ready after {} s (session `{}`)",
                    is_ready.iter().filter(|r| **r).count(),
                    wait.as_secs_f64(),
                    o.session
                )));
            }
            while let Some(s) = alive.try_recv().map_err(transport)? {
                let z = zid_of(&s);
                match s.kind() {
                    SampleKind::Put => {
                        seen.insert(z, true);
                    }
                    SampleKind::Delete => {
                        if let Some(i) = assigned.iter().position(|a| *a == z) {
                            return Err(LinkError::PeerLost {
                                peer: format!("secondary {i} (zenoh id {z})"),
                                reason: "it left before the start".into(),
                            });
                        }
                        seen.remove(&z);
                    }
                }
            }
            while let Some(q) = setup_q.try_recv().map_err(transport)? {
                let z = q.parameters().get("zid").unwrap_or_default().to_string();
                let reply = match assigned.iter().position(|a| *a == z) {
                    Some(i) => Ok(i),
                    None if assigned.len() < n => {
                        assigned.push(z.clone());
                        notify(&format!(
                            "secondary {} joined (zenoh id {z})",
                            assigned.len() - 1
                        ));
                        Ok(assigned.len() - 1)
                    }
                    None => Err(format!("the run has its {n} secondaries already")),
                };
                let r = match reply {
                    Ok(i) => q
                        .reply(q.key_expr().clone(), encode(&setup(i as u32)))
                        .wait(),
                    Err(e) => q.reply_err(e).wait(),
                };
                r.map_err(transport)?;
            }
            while let Some(s) = ready.try_recv().map_err(transport)? {
                if let Ok(i) = zid_of(&s).parse::<usize>()
                    && i < n
                {
                    is_ready[i] = true;
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(ready);
        drop(setup_q);
        Ok(ZenohPrimary {
            _session: session,
            _token: token,
            alive,
            acks,
            steps,
            ctl,
            secondaries: assigned,
            lost: None,
        })
    }

    /// A secondary's token vanished: which one.
    fn check_alive(&mut self) -> Result<(), LinkError> {
        check_alive(&self.alive, &self.secondaries, &mut self.lost)
    }
}

/// The loss kept from an earlier call, or a secondary (of `secondaries`,
/// by zenoh id) whose token has vanished since.
fn check_alive(
    alive: &Sub,
    secondaries: &[String],
    lost: &mut Option<LinkError>,
) -> Result<(), LinkError> {
    if let Some(e) = lost.take() {
        return Err(e);
    }
    while let Some(s) = alive.try_recv().map_err(transport)? {
        if s.kind() == SampleKind::Delete {
            let z = zid_of(&s);
            if let Some(i) = secondaries.iter().position(|a| *a == z) {
                return Err(LinkError::PeerLost {
                    peer: format!("secondary {i} (zenoh id {z})"),
                    reason: "its liveliness token vanished (it exited, crashed, was killed, \
                             stopped answering for a lease, or the network lost it)"
                        .into(),
                });
            }
        }
    }
    Ok(())
}

/// Polls `f` in slices of at most 20 ms until `timeout`, checking `alive`
/// between slices.
fn poll<T>(
    timeout: Duration,
    mut alive: impl FnMut() -> Result<(), LinkError>,
    mut f: impl FnMut(Duration) -> Result<Option<T>, LinkError>,
) -> Result<Option<T>, LinkError> {
    let end = Instant::now() + timeout;
    loop {
        alive()?;
        let now = Instant::now();
        let slice = end
            .saturating_duration_since(now)
            .min(Duration::from_millis(20));
        if let Some(v) = f(slice)? {
            return Ok(Some(v));
        }
        if Instant::now() >= end {
            return Ok(None);
        }
    }
}

impl PrimaryLink for ZenohPrimary {
    fn secondaries(&self) -> usize {
        self.secondaries.len()
    }

    fn peer_name(&self, index: u32) -> String {
        match self.secondaries.get(index as usize) {
            Some(z) => format!("secondary {index} (zenoh id {z})"),
            None => format!("secondary {index}"),
        }
    }

    fn broadcast(&mut self, step: &Step) -> Result<(), LinkError> {
        self.check_alive()?;
        self.steps.put(encode(step)).wait().map_err(transport)
    }

    fn next_ack(&mut self, timeout: Duration) -> Result<Option<Ack>, LinkError> {
        let end = Instant::now() + timeout;
        let got = loop {
            // An ack already here counts even if its sender has left since.
            if let Some(s) = self.acks.try_recv().map_err(transport)? {
                break Some(s);
            }
            if let Err(e) = self.check_alive() {
                // Its last ack may still be on its way.
                match self.acks.recv_timeout(ACK_GRACE).map_err(transport)? {
                    Some(s) => {
                        self.lost = Some(e);
                        break Some(s);
                    }
                    None => return Err(e),
                }
            }
            let slice = end
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(20));
            if let Some(s) = self.acks.recv_timeout(slice).map_err(transport)? {
                break Some(s);
            }
            if Instant::now() >= end {
                break None;
            }
        };
        match got {
            None => Ok(None),
            Some(s) => {
                decode(&s.payload().to_bytes())
                    .map(Some)
                    .map_err(|reason| LinkError::Malformed {
                        peer: s.key_expr().to_string(),
                        reason,
                    })
            }
        }
    }

    fn control(&mut self, timeout: Duration) -> Result<Option<Control>, LinkError> {
        let (alive, secondaries, lost, ctl) =
            (&self.alive, &self.secondaries, &mut self.lost, &self.ctl);
        let q = poll(
            timeout,
            || check_alive(alive, secondaries, lost),
            |d| ctl.recv_timeout(d).map_err(transport),
        )?;
        let Some(q) = q else { return Ok(None) };
        let cmd = q.parameters().get("cmd").unwrap_or_default().to_string();
        let c = match cmd.as_str() {
            "pause" => Some(Control::Pause),
            "resume" => Some(Control::Resume),
            _ => None,
        };
        let answer = match c {
            Some(_) => q.reply(q.key_expr().clone(), format!("{cmd}: ok")).wait(),
            None => q
                .reply_err(format!("`{cmd}` is not a command (pause, resume)"))
                .wait(),
        };
        answer.map_err(transport)?;
        Ok(c)
    }
}

/// A secondary's end.
pub struct ZenohSecondary {
    session: Session,
    /// `ready/<index>`, said again until the first step arrives (a
    /// declaration still on its way can miss one put).
    ready: Option<String>,
    _token: LivelinessToken,
    primary_alive: Sub,
    primary: String,
    steps: Sub,
    acks: Publisher<'static>,
    index: u32,
}

impl std::fmt::Debug for ZenohSecondary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohSecondary")
            .field("index", &self.index)
            .finish_non_exhaustive()
    }
}

impl ZenohSecondary {
    /// Joins the run of session `o.session`: waits for the primary (at
    /// most `wait`), gets its index and the run's setup, and says ready.
    pub fn join(o: &NetOptions, wait: Duration) -> Result<(ZenohSecondary, Setup), LinkError> {
        let session = open(o)?;
        let zid = session.zid().to_string();
        let token = session
            .liveliness()
            .declare_token(key(o, &format!("alive/secondary/{zid}")))
            .wait()
            .map_err(transport)?;
        let primary_alive = session
            .liveliness()
            .declare_subscriber(key(o, "alive/primary"))
            .history(true)
            .wait()
            .map_err(transport)?;
        let start = Instant::now();
        loop {
            let left = wait.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(LinkError::Transport(format!(
                    "no primary in session `{}` after {} s",
                    o.session,
                    wait.as_secs_f64()
                )));
            }
            if let Some(s) = primary_alive
                .recv_timeout(left.min(Duration::from_millis(100)))
                .map_err(transport)?
                && s.kind() == SampleKind::Put
            {
                break;
            }
        }
        let steps = session
            .declare_subscriber(key(o, "step"))
            .wait()
            .map_err(transport)?;
        let setup = loop {
            let replies = session
                .get(format!("{}?zid={zid}", key(o, "setup")))
                .timeout(Duration::from_secs(5))
                .wait()
                .map_err(transport)?;
            match replies.recv() {
                Ok(r) => match r.result() {
                    Ok(s) => {
                        let setup: Setup = decode(&s.payload().to_bytes()).map_err(|reason| {
                            LinkError::Malformed {
                                peer: "the primary".into(),
                                reason,
                            }
                        })?;
                        break setup;
                    }
                    Err(e) => {
                        return Err(LinkError::Transport(format!(
                            "the primary refused this secondary: {}",
                            String::from_utf8_lossy(&e.payload().to_bytes())
                        )));
                    }
                },
                // No reply yet (the primary's queryable not reached): again.
                Err(_) if start.elapsed() < wait => std::thread::sleep(Duration::from_millis(50)),
                Err(_) => {
                    return Err(LinkError::Transport(
                        "the primary did not answer the setup query".into(),
                    ));
                }
            }
        };
        if setup.protocol != PROTOCOL_VERSION {
            return Err(LinkError::Transport(format!(
                "the primary speaks protocol {}, this secondary {PROTOCOL_VERSION}",
                setup.protocol
            )));
        }
        let acks = session
            .declare_publisher(key(o, &format!("ack/{}", setup.index)))
            .congestion_control(CongestionControl::Block)
            .express(true)
            .wait()
            .map_err(transport)?;
        session
            .put(key(o, &format!("ready/{}", setup.index)), Vec::<u8>::new())
            .congestion_control(CongestionControl::Block)
            .wait()
            .map_err(transport)?;
        Ok((
            ZenohSecondary {
                index: setup.index,
                ready: Some(key(o, &format!("ready/{}", setup.index))),
                session,
                _token: token,
                primary_alive,
                primary: "the primary".into(),
                steps,
                acks,
            },
            setup,
        ))
    }

    fn check_primary(&self) -> Result<(), LinkError> {
        while let Some(s) = self.primary_alive.try_recv().map_err(transport)? {
            if s.kind() == SampleKind::Delete {
                return Err(LinkError::PeerLost {
                    peer: self.primary.clone(),
                    reason: "its liveliness token vanished (it exited, crashed, was killed, \
                             stopped answering for a lease, or the network lost it)"
                        .into(),
                });
            }
        }
        Ok(())
    }
}

impl SecondaryLink for ZenohSecondary {
    fn index(&self) -> u32 {
        self.index
    }

    fn next_step(&mut self) -> Result<Step, LinkError> {
        loop {
            let wait = match &self.ready {
                Some(k) => {
                    self.session
                        .put(k.as_str(), Vec::<u8>::new())
                        .congestion_control(CongestionControl::Block)
                        .wait()
                        .map_err(transport)?;
                    Duration::from_millis(200)
                }
                None => Duration::from_secs(3600),
            };
            let got = poll(
                wait,
                || self.check_primary(),
                |d| self.steps.recv_timeout(d).map_err(transport),
            )?;
            if let Some(s) = got {
                self.ready = None;
                return decode(&s.payload().to_bytes()).map_err(|reason| LinkError::Malformed {
                    peer: "the primary".into(),
                    reason,
                });
            }
        }
    }

    fn ack(&mut self, ack: &Ack) -> Result<(), LinkError> {
        self.check_primary()?;
        self.acks.put(encode(ack)).wait().map_err(transport)
    }
}

/// `lockstep ctl`: sends `cmd` (pause, resume) to the primary of session
/// `o.session`; its answer.
pub fn command(o: &NetOptions, cmd: &str, wait: Duration) -> Result<String, LinkError> {
    let session = open(o)?;
    let start = Instant::now();
    loop {
        let replies = session
            .get(format!("{}?cmd={cmd}", key(o, "ctl")))
            .timeout(Duration::from_secs(2))
            .wait()
            .map_err(transport)?;
        match replies.recv() {
            Ok(r) => {
                return match r.result() {
                    Ok(s) => Ok(String::from_utf8_lossy(&s.payload().to_bytes()).into_owned()),
                    Err(e) => Err(LinkError::Transport(
                        String::from_utf8_lossy(&e.payload().to_bytes()).into_owned(),
                    )),
                };
            }
            Err(_) if start.elapsed() < wait => std::thread::sleep(Duration::from_millis(100)),
            Err(_) => {
                return Err(LinkError::Transport(format!(
                    "no primary answered in session `{}` within {} s",
                    o.session,
                    wait.as_secs_f64()
                )));
            }
        }
    }
}
