//! Remote calls over zenoh, for a process that serves something (a model,
//! a participant) to a caller that drives it: request and answer, each call
//! within a deadline, a peer that dies or stops seen within the lease.
//! A [`Link`] is a [`crate::Transport`].
//!
//! Keys under `lockstep/<session>/`:
//! - `serve/<name>`: the server's queryable; a call is a query carrying the
//!   request, answered with the reply or an error text.
//! - `alive/served/<name>`: the server's liveliness token; the caller
//!   watches it and fails a call at once when it vanishes (the server
//!   closed, crashed, was killed, or was stopped for longer than the lease).
//! - `alive/caller`: the caller's token; a server whose caller left stops
//!   serving (nothing is left running when the caller dies).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use zenoh::handlers::FifoChannelHandler;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Subscriber;
use zenoh::query::{Query, Queryable};
use zenoh::sample::{Sample, SampleKind};
use zenoh::{Session, Wait};

use crate::net::{NetOptions, open};

/// Why a remote call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RemoteError {
    /// The peer's liveliness token vanished (or never came).
    #[error("{peer} left: {reason}")]
    Left { peer: String, reason: String },
    /// No answer within the deadline while the peer still looked alive
    /// (hung in its own code).
    #[error("{peer} did not answer within the deadline of {secs} s")]
    Deadline { peer: String, secs: f64 },
    /// The peer answered with an error.
    #[error("{0}")]
    Refused(String),
    #[error("the transport failed: {0}")]
    Transport(String),
    /// Not called: an earlier call of this link missed its deadline or
    /// found the peer gone, and a run does not wait on such a peer again.
    #[error("{peer} is not called again after: {earlier}")]
    Abandoned { peer: String, earlier: String },
}

fn transport(e: impl std::fmt::Display) -> RemoteError {
    RemoteError::Transport(e.to_string())
}

fn key(o: &NetOptions, rest: &str) -> String {
    format!("lockstep/{}/{rest}", o.session)
}

/// What a server's handler says after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The last call: the server returns once it has answered.
    Stop,
}

/// The serving end: its token, its queryable, and its caller's token.
pub struct Server {
    session: Session,
    _token: LivelinessToken,
    calls: Queryable<FifoChannelHandler<Query>>,
    caller: Subscriber<FifoChannelHandler<Sample>>,
    name: String,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Serves under `name` in `o`'s session.
    pub fn open(o: &NetOptions, name: &str) -> Result<Server, RemoteError> {
        let session = open(o).map_err(transport)?;
        let caller = session
            .liveliness()
            .declare_subscriber(key(o, "alive/caller"))
            .history(true)
            .wait()
            .map_err(transport)?;
        let calls = session
            .declare_queryable(key(o, &format!("serve/{name}")))
            .complete(true)
            .wait()
            .map_err(transport)?;
        let token = session
            .liveliness()
            .declare_token(key(o, &format!("alive/served/{name}")))
            .wait()
            .map_err(transport)?;
        Ok(Server {
            session,
            _token: token,
            calls,
            caller,
            name: name.to_string(),
        })
    }

    /// Answers calls with `handler` (its `Err` goes back as the call's
    /// error) until it says [`Flow::Stop`]. Fails when no caller comes
    /// within `wait`, or when the caller leaves.
    pub fn serve(
        &self,
        wait: Duration,
        mut handler: impl FnMut(&[u8]) -> (Result<Vec<u8>, String>, Flow),
    ) -> Result<(), RemoteError> {
        let start = Instant::now();
        let mut caller_seen = false;
        loop {
            while let Some(s) = self.caller.try_recv().map_err(transport)? {
                match s.kind() {
                    SampleKind::Put => caller_seen = true,
                    SampleKind::Delete => {
                        return Err(RemoteError::Left {
                            peer: "the caller".into(),
                            reason: "its liveliness token vanished".into(),
                        });
                    }
                }
            }
            if !caller_seen && start.elapsed() > wait {
                return Err(RemoteError::Left {
                    peer: "the caller".into(),
                    reason: format!("it did not appear within {} s", wait.as_secs_f64()),
                });
            }
            let Some(q) = self
                .calls
                .recv_timeout(Duration::from_millis(50))
                .map_err(transport)?
            else {
                continue;
            };
            let request = q.payload().map(|p| p.to_bytes()).unwrap_or_default();
            let (answer, flow) = handler(&request);
            match answer {
                Ok(bytes) => q.reply(q.key_expr().clone(), bytes).wait(),
                Err(text) => q.reply_err(text).wait(),
            }
            .map_err(transport)?;
            if flow == Flow::Stop {
                // Let the answer leave before the session closes.
                std::thread::sleep(Duration::from_millis(50));
                return Ok(());
            }
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }
}

/// States of a watched server.
const UNSEEN: u8 = 0;
const ALIVE: u8 = 1;
const LEFT: u8 = 2;

/// A server the caller watches.
pub struct Target {
    name: String,
    key: String,
    /// Called in messages (`model `x``).
    peer: String,
    state: Arc<AtomicU8>,
    _watch: Subscriber<()>,
    lease: Duration,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("name", &self.name)
            .field("state", &self.state.load(Ordering::Acquire))
            .finish_non_exhaustive()
    }
}

/// The calling end: its token, and the servers it watches.
pub struct Caller {
    session: Session,
    _token: LivelinessToken,
    options: NetOptions,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("session", &self.options.session)
            .finish_non_exhaustive()
    }
}

impl Caller {
    pub fn open(o: &NetOptions) -> Result<Caller, RemoteError> {
        let session = open(o).map_err(transport)?;
        let token = session
            .liveliness()
            .declare_token(key(o, "alive/caller"))
            .wait()
            .map_err(transport)?;
        Ok(Caller {
            session,
            _token: token,
            options: o.clone(),
        })
    }

    /// Watches server `name` (called `peer` in messages) and waits until it
    /// is alive, at most `wait`.
    pub fn target(&self, name: &str, peer: &str, wait: Duration) -> Result<Target, RemoteError> {
        self.target_while(name, peer, wait, || true)
    }

    /// As [`Caller::target`], giving up as soon as `there` says the server
    /// cannot come any more (its process ended).
    pub fn target_while(
        &self,
        name: &str,
        peer: &str,
        wait: Duration,
        mut there: impl FnMut() -> bool,
    ) -> Result<Target, RemoteError> {
        let state = Arc::new(AtomicU8::new(UNSEEN));
        let s = state.clone();
        let watch = self
            .session
            .liveliness()
            .declare_subscriber(key(&self.options, &format!("alive/served/{name}")))
            .history(true)
            .callback(move |sample: Sample| {
                let v = match sample.kind() {
                    SampleKind::Put => ALIVE,
                    SampleKind::Delete => LEFT,
                };
                // Once left, always left: a server does not come back.
                let _ = s.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
                    (old != LEFT).then_some(v)
                });
            })
            .wait()
            .map_err(transport)?;
        let t = Target {
            name: name.to_string(),
            key: key(&self.options, &format!("serve/{name}")),
            peer: peer.to_string(),
            state,
            _watch: watch,
            lease: self.options.lease,
        };
        let start = Instant::now();
        loop {
            match t.state.load(Ordering::Acquire) {
                ALIVE => return Ok(t),
                LEFT => return Err(t.left()),
                _ if !there() => {
                    return Err(RemoteError::Left {
                        peer: peer.to_string(),
                        reason: "its process ended before it served".into(),
                    });
                }
                _ if start.elapsed() > wait => {
                    return Err(RemoteError::Left {
                        peer: peer.to_string(),
                        reason: format!(
                            "it did not appear within {} s (session `{}`)",
                            wait.as_secs_f64(),
                            self.options.session
                        ),
                    });
                }
                _ => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }

    /// Calls `t` with `request`; its answer, or why there is none: the
    /// server left (seen within its lease), `deadline` passed, or it
    /// answered with an error.
    pub fn call(
        &self,
        t: &Target,
        request: Vec<u8>,
        deadline: Duration,
    ) -> Result<Vec<u8>, RemoteError> {
        if t.state.load(Ordering::Acquire) == LEFT {
            return Err(t.left());
        }
        // The deadline is this loop's to call: zenoh's own query timeout is
        // set a second later, as its timeout arrives as an error reply
        // ("Timeout") that would pass for the server's refusal.
        let start = Instant::now();
        let replies = self
            .session
            .get(&t.key)
            .payload(request)
            .timeout(deadline + Duration::from_secs(1))
            .wait()
            .map_err(transport)?;
        loop {
            if t.state.load(Ordering::Acquire) == LEFT {
                return Err(t.left());
            }
            let left = deadline.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(RemoteError::Deadline {
                    peer: t.peer.clone(),
                    secs: deadline.as_secs_f64(),
                });
            }
            match replies.recv_timeout(left.min(Duration::from_millis(20))) {
                Ok(Some(r)) => {
                    return match r.result() {
                        Ok(s) => Ok(s.payload().to_bytes().into_owned()),
                        Err(e) => Err(RemoteError::Refused(
                            String::from_utf8_lossy(&e.payload().to_bytes()).into_owned(),
                        )),
                    };
                }
                Ok(None) => {}
                // The query ended without a reply: its timeout, or the
                // server vanished mid-call (the token says which).
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(20));
                    if start.elapsed() >= deadline {
                        return Err(RemoteError::Deadline {
                            peer: t.peer.clone(),
                            secs: deadline.as_secs_f64(),
                        });
                    }
                }
            }
        }
    }
}

impl Target {
    /// `Ok` while the server's token is there.
    pub fn alive(&self) -> Result<(), RemoteError> {
        if self.state.load(Ordering::Acquire) == LEFT {
            Err(self.left())
        } else {
            Ok(())
        }
    }

    fn left(&self) -> RemoteError {
        RemoteError::Left {
            peer: self.peer.clone(),
            reason: format!(
                "its liveliness token vanished (it closed, crashed, was killed, or stopped answering for the lease of {} s)",
                self.lease.as_secs_f64()
            ),
        }
    }
}

/// One server as its caller calls it: each call within the deadline, the
/// server's liveliness watched.
pub struct Link {
    pub(crate) caller: Arc<Caller>,
    pub(crate) target: Target,
    pub(crate) deadline: Duration,
    /// The failure (deadline missed, peer gone) after which this link
    /// calls no more: a run's finish does not wait a second deadline on a
    /// peer that hung.
    pub(crate) abandoned: std::sync::Mutex<Option<String>>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl Link {
    pub fn call(&self, request: Vec<u8>) -> Result<Vec<u8>, RemoteError> {
        let mut abandoned = self
            .abandoned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(earlier) = abandoned.as_ref() {
            return Err(RemoteError::Abandoned {
                peer: self.target.peer.clone(),
                earlier: earlier.clone(),
            });
        }
        let r = self.caller.call(&self.target, request, self.deadline);
        if let Err(e @ (RemoteError::Deadline { .. } | RemoteError::Left { .. })) = &r {
            *abandoned = Some(e.to_string());
        }
        r
    }

    pub fn alive(&self) -> Result<(), RemoteError> {
        self.target.alive()
    }
}

/// A link carries the remote calls of a co-simulation participant or an
/// orchestrated model: the peer's refusal is its own message, any other
/// failure says what happened to the peer.
impl crate::Transport for Link {
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
        Link::call(self, request).map_err(|e| match e {
            RemoteError::Refused(m) => m,
            other => other.to_string(),
        })
    }

    fn alive(&self) -> Result<(), String> {
        Link::alive(self).map_err(|e| e.to_string())
    }
}
