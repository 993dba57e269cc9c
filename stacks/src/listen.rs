//! What both links share: a wall-clock deadline waited for in short slices
//! (so Ctrl-C is seen while a stack is silent), and counting what is ignored.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lockstep_abi::{AbiError, StackNotes};

/// The longest a blocking read waits before the interrupt flag and the
/// deadline are looked at again.
pub(crate) const SLICE: Duration = Duration::from_millis(50);

/// A deadline on the wall clock, and the run's interrupt flag.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interrupt {
    flag: Option<Arc<AtomicUsize>>,
}

impl Interrupt {
    pub(crate) fn set(&mut self, flag: Arc<AtomicUsize>) {
        self.flag = Some(flag);
    }

    /// The error that ends a wait when a signal has arrived.
    pub(crate) fn check(&self) -> Result<(), AbiError> {
        match &self.flag {
            Some(f) if f.load(Ordering::Relaxed) != 0 => Err(AbiError::WaitInterrupted {
                signal: f.load(Ordering::Relaxed) as i32,
            }),
            _ => Ok(()),
        }
    }
}

/// How long a read may block now: a slice, or what is left until `until`
/// (`None` once it has passed).
pub(crate) fn slice_until(until: Instant) -> Option<Duration> {
    let left = until.checked_duration_since(Instant::now())?;
    if left.is_zero() {
        return None;
    }
    Some(left.min(SLICE))
}

/// How often the wait for a stack's first connection says so.
const COUNTDOWN_EVERY: Duration = Duration::from_secs(10);

/// The wait for a stack's first connection, said on the terminal every
/// [`COUNTDOWN_EVERY`] (a person starting the stack by hand sees that
/// lockstep is waiting and for how long more).
#[derive(Debug)]
pub(crate) struct Countdown {
    name: String,
    hint: &'static str,
    started: Instant,
    timeout: Duration,
    said: u64,
}

impl Countdown {
    pub(crate) fn new(name: &str, hint: &'static str, timeout: Duration) -> Countdown {
        Countdown {
            name: name.to_string(),
            hint,
            started: Instant::now(),
            timeout,
            said: 0,
        }
    }

    /// Called while waiting: a line each [`COUNTDOWN_EVERY`].
    pub(crate) fn tick(&mut self) {
        let elapsed = self.started.elapsed();
        let n = elapsed.as_secs() / COUNTDOWN_EVERY.as_secs();
        if n > self.said {
            self.said = n;
            let left = self.timeout.saturating_sub(elapsed).as_secs_f64().round();
            eprintln!(
                "lockstep: waiting for {} ({} s so far, {left} s left; {}; Ctrl-C stops)",
                self.name,
                n * COUNTDOWN_EVERY.as_secs(),
                self.hint
            );
        }
    }
}

/// Counts of what a link ignored or noticed, by what it was.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    counts: BTreeMap<String, u64>,
}

impl Tally {
    pub(crate) fn add(&mut self, what: &str, n: u64) {
        if n == 0 {
            return;
        }
        match self.counts.get_mut(what) {
            Some(c) => *c += n,
            None => {
                self.counts.insert(what.to_string(), n);
            }
        }
    }

    pub(crate) fn notes(&self) -> StackNotes {
        StackNotes {
            lines: self
                .counts
                .iter()
                .map(|(what, n)| format!("{n} {what}"))
                .collect(),
        }
    }
}

/// Seconds as the error messages say them.
pub(crate) fn seconds(d: Duration) -> f64 {
    d.as_secs_f64()
}
