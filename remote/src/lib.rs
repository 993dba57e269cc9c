//! lockstep-remote: one way to call something in another process. A
//! co-simulation participant and an orchestrated model are called the same
//! way: a request encoded by a [`Codec`], carried by a [`Transport`],
//! answered by a [`Service`] ([`answer`]) and read back ([`call`]).
//!
//! With the `zenoh` feature: the zenoh session every networked part opens
//! ([`net`]), the serving and calling ends of a remote call with per-call
//! deadlines and liveliness ([`link`], [`serve`]), and the child
//! processes a run starts to serve its parts ([`processes`]). Without a
//! network: a far end in a thread of this process ([`thread`]).

use serde::Serialize;
use serde::de::DeserializeOwned;

#[cfg(feature = "zenoh")]
pub mod link;
#[cfg(feature = "zenoh")]
pub mod net;
#[cfg(feature = "zenoh")]
pub mod processes;
pub mod thread;

/// How a caller reaches the other process.
pub trait Transport: Send {
    /// Sends `request`; the answer, or why there is none (the other side's
    /// error, its process gone, no answer in time).
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String>;
    /// Whether the other end is still there (checked between calls).
    fn alive(&self) -> Result<(), String> {
        Ok(())
    }
}

/// How messages are written on the wire.
pub trait Codec {
    fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String>;
    fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String>;
}

/// postcard: compact, every number exact (NaN kept), no self-description
/// (the co-simulation's participants).
#[derive(Debug, Clone, Copy)]
pub struct Postcard;

impl Codec for Postcard {
    fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
        postcard::to_stdvec(value).map_err(|e| e.to_string())
    }

    fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
        postcard::from_bytes(bytes).map_err(|e| e.to_string())
    }
}

/// JSON: self-describing (the orchestrator's models exchange JSON values);
/// floats round-trip exactly.
#[derive(Debug, Clone, Copy)]
pub struct Json;

impl Codec for Json {
    fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
        serde_json::to_vec(value).map_err(|e| e.to_string())
    }

    fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }
}

/// What answers the calls in the serving process.
pub trait Service {
    type Codec: Codec;
    type Request: DeserializeOwned;
    type Reply: Serialize;
    /// Answers one request (an `Err` goes back as the call's error).
    fn handle(&mut self, request: Self::Request) -> Result<Self::Reply, String>;
    /// Whether `request` is the last call of the run.
    fn is_last(request: &Self::Request) -> bool;
}

/// Answers one encoded `request` with `service`: the encoded reply or the
/// error, and whether it was the last call.
pub fn answer<S: Service>(service: &mut S, request: &[u8]) -> (Result<Vec<u8>, String>, bool) {
    let r: S::Request = match S::Codec::decode(request) {
        Ok(r) => r,
        Err(e) => return (Err(format!("a malformed request: {e}")), false),
    };
    let last = S::is_last(&r);
    let reply = service.handle(r).and_then(|reply| S::Codec::encode(&reply));
    (reply, last)
}

/// Calls the other process through `transport` with `request`; its reply.
pub fn call<C: Codec, Req: Serialize, Rep: DeserializeOwned>(
    transport: &mut dyn Transport,
    request: &Req,
) -> Result<Rep, String> {
    let bytes = C::encode(request)?;
    let answer = transport.call(bytes)?;
    C::decode(&answer).map_err(|e| format!("a malformed answer: {e}"))
}

/// Serves `service` as `name` in `o`'s session until its last call, its
/// caller leaves, or no caller comes within `wait`.
#[cfg(feature = "zenoh")]
pub fn serve<S: Service>(
    o: &net::NetOptions,
    name: &str,
    wait: std::time::Duration,
    service: &mut S,
) -> Result<(), String> {
    let server = link::Server::open(o, name).map_err(|e| e.to_string())?;
    server
        .serve(wait, |request| {
            let (reply, last) = answer(service, request);
            let flow = if last {
                link::Flow::Stop
            } else {
                link::Flow::Continue
            };
            (reply, flow)
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Doubles a number; `None` ends the run.
    struct Doubler;

    impl Service for Doubler {
        type Codec = Postcard;
        type Request = Option<f64>;
        type Reply = f64;
        fn handle(&mut self, r: Option<f64>) -> Result<f64, String> {
            r.map(|v| 2.0 * v).ok_or_else(|| "no number".to_string())
        }
        fn is_last(r: &Option<f64>) -> bool {
            r.is_none()
        }
    }

    /// A transport that answers in place.
    struct InPlace<S>(S);

    impl<S: Service + Send> Transport for InPlace<S> {
        fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
            answer(&mut self.0, &request).0
        }
    }

    #[test]
    fn a_call_is_answered_bit_for_bit_and_errors_come_back() {
        let mut t = InPlace(Doubler);
        let v: f64 = call::<Postcard, _, _>(&mut t, &Some(f64::MIN_POSITIVE)).unwrap();
        assert_eq!(v.to_bits(), (2.0 * f64::MIN_POSITIVE).to_bits());
        let nan: f64 = call::<Postcard, _, _>(&mut t, &Some(f64::NAN)).unwrap();
        assert!(nan.is_nan());
        let e = call::<Postcard, _, f64>(&mut t, &None::<f64>).unwrap_err();
        assert_eq!(e, "no number");
        let (reply, last) = answer(&mut Doubler, &[0xff, 0xff]);
        assert!(!last);
        assert!(reply.unwrap_err().starts_with("a malformed request: "));
        let (_, last) = answer(&mut Doubler, &Postcard::encode(&None::<f64>).unwrap());
        assert!(last);
    }

    #[test]
    fn a_far_end_in_a_thread_answers_until_its_last_call_then_is_gone() {
        use thread::{GONE, InThread};
        let mut t = InThread::serve(|r| answer(&mut Doubler, r));
        assert_eq!(t.alive(), Ok(()));
        let v: f64 = call::<Postcard, _, _>(&mut t, &Some(1.25)).unwrap();
        assert_eq!(v, 2.5);
        let e = call::<Postcard, _, f64>(&mut t, &None::<f64>).unwrap_err();
        assert_eq!(e, "no number", "the last call is still answered");
        let e = call::<Postcard, _, f64>(&mut t, &Some(1.0)).unwrap_err();
        assert_eq!(e, GONE);
        assert_eq!(t.alive(), Err(GONE.to_string()));
    }

    #[test]
    fn a_far_end_whose_answer_panics_is_gone_not_a_hang() {
        use thread::{GONE, InThread};
        let mut t = InThread::serve(|_| panic!("the far end failed"));
        let e = call::<Postcard, _, f64>(&mut t, &Some(1.0)).unwrap_err();
        assert_eq!(e, GONE);
    }
}
