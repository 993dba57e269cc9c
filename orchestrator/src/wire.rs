//! A model in another process: the calls of [`Model`] as JSON messages
//! (floats round-trip exactly, so a remote model's data equal an
//! in-process one's), the end that answers them ([`answer`], [`serve`])
//! and the end that stands for the model in the orchestrator
//! ([`RemoteModel`]) over any [`Transport`] (`lockstep_remote`'s).

pub use lockstep_remote::Transport;
use lockstep_remote::{Json, Service};

use crate::mask::DataMask;
use crate::model::{Model, Moment, Outcome, TimelineInfo, Timestamp, Update};

/// A call of a model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Request {
    Mask,
    Initialize {
        timestamp: Timestamp,
        info: TimelineInfo,
    },
    Update {
        timestamp: Timestamp,
        info: TimelineInfo,
        inbox: Vec<Update>,
    },
    /// The end of the run: the model says what it has to say and its
    /// process ends.
    Finish,
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Reply {
    Mask(DataMask),
    Outcome(Outcome),
    Finished(serde_json::Value),
}

/// A model as the serving end of its remote calls.
struct Served<'a>(&'a mut dyn Model);

impl Service for Served<'_> {
    type Codec = Json;
    type Request = Request;
    type Reply = Reply;

    fn handle(&mut self, r: Request) -> Result<Reply, String> {
        let model = &mut *self.0;
        match r {
            Request::Mask => Ok(Reply::Mask(model.mask())),
            Request::Initialize { timestamp, info } => model
                .initialize(Moment { timestamp, info })
                .map(Reply::Outcome),
            Request::Update {
                timestamp,
                info,
                inbox,
            } => model
                .update(Moment { timestamp, info }, &inbox)
                .map(Reply::Outcome),
            Request::Finish => model.finish().map(Reply::Finished),
        }
    }

    fn is_last(r: &Request) -> bool {
        matches!(r, Request::Finish)
    }
}

/// Answers one `request` (JSON) with `model`: the reply (JSON) or the
/// model's error, and whether it was the last call.
pub fn answer(model: &mut dyn Model, request: &[u8]) -> (Result<Vec<u8>, String>, bool) {
    lockstep_remote::answer(&mut Served(model), request)
}

/// Serves `model` as `name` over zenoh until the run finishes, its caller
/// leaves, or none comes within `wait`.
#[cfg(feature = "zenoh")]
pub fn serve(
    model: &mut dyn Model,
    o: &lockstep_remote::net::NetOptions,
    name: &str,
    wait: std::time::Duration,
) -> Result<(), String> {
    lockstep_remote::serve(o, name, wait, &mut Served(model))
}

/// A model in another process, as the orchestrator sees it.
#[derive(Debug)]
pub struct RemoteModel<T: Transport> {
    transport: T,
    mask: DataMask,
}

impl<T: Transport> RemoteModel<T> {
    /// Asks the model for its mask.
    pub fn connect(mut transport: T) -> Result<RemoteModel<T>, String> {
        match exchange(&mut transport, &Request::Mask)? {
            Reply::Mask(mask) => Ok(RemoteModel { transport, mask }),
            other => Err(unexpected(&other, "its mask")),
        }
    }
}

fn exchange<T: Transport>(t: &mut T, r: &Request) -> Result<Reply, String> {
    lockstep_remote::call::<Json, _, _>(t, r)
}

fn unexpected(r: &Reply, wanted: &str) -> String {
    let got = match r {
        Reply::Mask(_) => "a mask",
        Reply::Outcome(_) => "an outcome",
        Reply::Finished(_) => "a finish",
    };
    format!("it answered with {got} where {wanted} was due")
}

impl<T: Transport> RemoteModel<T> {
    fn outcome(&mut self, r: &Request) -> Result<Outcome, String> {
        match exchange(&mut self.transport, r)? {
            Reply::Outcome(o) => Ok(o),
            other => Err(unexpected(&other, "an outcome")),
        }
    }
}

impl<T: Transport> Model for RemoteModel<T> {
    fn mask(&self) -> DataMask {
        self.mask.clone()
    }

    fn initialize(&mut self, at: Moment) -> Result<Outcome, String> {
        self.outcome(&Request::Initialize {
            timestamp: at.timestamp,
            info: at.info,
        })
    }

    fn update(&mut self, at: Moment, inbox: &[Update]) -> Result<Outcome, String> {
        self.outcome(&Request::Update {
            timestamp: at.timestamp,
            info: at.info,
            inbox: inbox.to_vec(),
        })
    }

    fn alive(&self) -> Result<(), String> {
        self.transport.alive()
    }

    fn finish(&mut self) -> Result<serde_json::Value, String> {
        match exchange(&mut self.transport, &Request::Finish)? {
            Reply::Finished(v) => Ok(v),
            other => Err(unexpected(&other, "a finish")),
        }
    }
}
