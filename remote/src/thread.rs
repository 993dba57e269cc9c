//! A far end in a thread of this process: every call goes through the
//! encoded wire format and the serving side's `answer`, with no network
//! (tests of a wire, and hosts that keep a part in process but want the
//! calls exactly as a remote run makes them).

use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use crate::Transport;

/// The error of a call whose thread has ended (its last call answered, or
/// its answering function panicked).
pub const GONE: &str = "the far end is gone";

/// A [`Transport`] to a thread that answers each request with a function.
#[derive(Debug)]
pub struct InThread {
    to: Option<Sender<Vec<u8>>>,
    from: Receiver<Result<Vec<u8>, String>>,
    thread: Option<JoinHandle<()>>,
}

impl InThread {
    /// Starts the thread; `answer` returns a request's reply and whether it
    /// was the last call (the thread ends after answering it).
    pub fn serve<F>(mut answer: F) -> InThread
    where
        F: FnMut(&[u8]) -> (Result<Vec<u8>, String>, bool) + Send + 'static,
    {
        let (to, requests) = channel::<Vec<u8>>();
        let (replies, from) = channel();
        let thread = std::thread::spawn(move || {
            while let Ok(request) = requests.recv() {
                let (reply, last) = answer(&request);
                if replies.send(reply).is_err() || last {
                    break;
                }
            }
        });
        InThread {
            to: Some(to),
            from,
            thread: Some(thread),
        }
    }
}

impl Transport for InThread {
    fn call(&mut self, request: Vec<u8>) -> Result<Vec<u8>, String> {
        let to = self.to.as_ref().ok_or(GONE)?;
        let reply = match to.send(request) {
            Ok(()) => self.from.recv().ok(),
            Err(_) => None,
        };
        reply.unwrap_or_else(|| {
            self.end();
            Err(GONE.into())
        })
    }

    fn alive(&self) -> Result<(), String> {
        match &self.thread {
            Some(t) if self.to.is_some() && !t.is_finished() => Ok(()),
            _ => Err(GONE.into()),
        }
    }
}

impl InThread {
    /// Closes the request channel (the thread's loop ends) and waits for
    /// the thread, so nothing it owns outlives the caller.
    fn end(&mut self) {
        self.to = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for InThread {
    fn drop(&mut self) {
        self.end();
    }
}
