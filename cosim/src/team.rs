//! The worker team of the parallel mode: threads that live as long as the
//! system and step the participants of each wave together with the thread
//! that calls [`crate::Cosim::step`] (the leader).
//!
//! Why not a rayon pool: at a 4 ms step a wave of radio_swarm's four
//! vehicles is ~10 µs of work, and handing it to a pool from outside (the
//! caller blocks on a latch, an idle worker is woken from its sleep) cost
//! as much again: the parallel mode ran at 0.55× the serialized one. The
//! team's workers do not sleep between waves: each spins on the wave
//! number for up to [`SPIN`] (yielding its core after the first few
//! microseconds, as the isolated channel does: with autopilots in host
//! processes, a host may be waiting for it) and only then parks; the leader steps
//! participants itself and waits for the last one back the same way. Slot
//! `i` belongs to member `i mod members`, so a participant's state stays in
//! one core's caches from step to step; a member done with its own steps
//! what another has not started (a slow participant holds up no other).
//!
//! The slots move (boxed: a move is a pointer): the leader puts a
//! wave's slots in the members' lists, whoever takes one steps it and puts
//! it back with its outcome, and the leader restores declaration order.
//! Nothing is shared while it is stepped, so no `unsafe` is needed. Which
//! thread steps a participant changes nothing it computes (its work
//! depends only on its own state and held inputs), and the failure
//! reported is the first in declaration order, whoever finished first.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{JoinHandle, Thread, ThreadId};
use std::time::Duration;

use crossbeam_utils::CachePadded;
use lockstep_abi::backoff::{Backoff, spin_until};
use lockstep_harness::Micros;

use crate::error::CosimError;
use crate::system::Slot;

/// How long a thread spins for the other side before it parks: longer than
/// the leader's work between two waves (the transfer functions, the
/// record), short enough that an idle team soon stops using the cores. A
/// thread spins only while the machine has a core for each runnable task
/// ([`Backoff`]): with vehicles' autopilots isolated, their host processes
/// need the cores the team would spin on.
const SPIN: Duration = Duration::from_micros(200);

/// The spin on a busy machine: the gap between two waves (a few µs of the
/// leader's work) without sleeping, no longer.
const SPIN_BUSY: Duration = Duration::from_micros(5);

/// What steps one slot (`run::advance`).
pub(crate) type StepFn = fn(&mut Slot, Micros) -> Result<(), CosimError>;

/// A slot stepped: its index, itself, and how its step ended (a panic is
/// carried back and resumed on the leader, as a rayon pool did).
type Done = (
    usize,
    Box<Slot>,
    Result<Result<(), CosimError>, Box<dyn Any + Send>>,
);

/// One member's part of a wave: its slots to step (with the wave's time)
/// and those it stepped, each list under its own lock.
#[derive(Default)]
struct Member {
    todo: Mutex<Vec<(usize, Box<Slot>, Micros)>>,
    back: Mutex<Vec<Done>>,
    /// A worker parked, or about to park, waiting for a wave.
    asleep: AtomicBool,
}

/// A lock whatever a panicking thread left: what it guards are whole
/// slots, moved in and out under the lock, never half-written.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Shared {
    /// Bumped by the leader once a wave's slots are in the lists; the
    /// workers spin on it (a cache line of its own, as `left` has).
    wave: CachePadded<AtomicU64>,
    /// Slots of the current wave not yet back.
    left: CachePadded<AtomicUsize>,
    stop: AtomicBool,
    /// The leader (0) and the workers (1..), each on its own cache lines.
    members: Vec<CachePadded<Member>>,
    step: StepFn,
    /// The leader parked waiting for the last slot, and who it is.
    leader_asleep: AtomicBool,
    leader: Mutex<Option<Thread>>,
}

impl Shared {
    /// Steps slots until every list is empty: member `me`'s own first,
    /// then what is left in the others'.
    fn work(&self, me: usize) {
        let members = self.members.len();
        for k in 0..members {
            let from = &self.members[(me + k) % members];
            loop {
                // (Its own statement: the guard must not live on through
                // the step, as a `while let` scrutinee's would.)
                let next = lock(&from.todo).pop();
                let Some((i, mut slot, t)) = next else {
                    break;
                };
                let step = self.step;
                let outcome = catch_unwind(AssertUnwindSafe(|| step(&mut slot, t)));
                lock(&self.members[me].back).push((i, slot, outcome));
                if self.left.fetch_sub(1, Ordering::SeqCst) == 1
                    && self.leader_asleep.load(Ordering::SeqCst)
                    && self.leader_asleep.swap(false, Ordering::SeqCst)
                    && let Some(leader) = lock(&self.leader).as_ref()
                {
                    leader.unpark();
                }
            }
        }
    }
}

/// Spins until `done` holds for what `backoff` allows, then parks with
/// `asleep` set (re-checking `done` after setting it, so a wake-up between
/// the two is not lost).
fn wait(done: impl Fn() -> bool, asleep: &AtomicBool, backoff: &mut Backoff) {
    if spin_until(backoff.budget().max(SPIN_BUSY), &done) {
        return;
    }
    loop {
        asleep.store(true, Ordering::SeqCst);
        if done() {
            asleep.store(false, Ordering::SeqCst);
            return;
        }
        std::thread::park();
    }
}

/// The team: worker threads besides the leader.
pub(crate) struct Team {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// The slots of a wave that are not due, and then all, in the leader's
    /// hands.
    aside: Vec<(usize, Box<Slot>)>,
    /// Each member's slots of the next wave, and what each stepped, in the
    /// leader's hands (kept to be used again).
    staged: Vec<Vec<(usize, Box<Slot>, Micros)>>,
    back: Vec<Vec<Done>>,
    /// The thread registered as the leader.
    leader: Option<ThreadId>,
    backoff: Backoff,
}

impl Team {
    /// Starts `workers` threads that step slots with `step`.
    pub(crate) fn start(workers: usize, step: StepFn) -> Result<Team, CosimError> {
        let shared = Arc::new(Shared {
            wave: CachePadded::new(AtomicU64::new(0)),
            left: CachePadded::new(AtomicUsize::new(0)),
            stop: AtomicBool::new(false),
            members: (0..=workers)
                .map(|_| CachePadded::new(Member::default()))
                .collect(),
            step,
            leader_asleep: AtomicBool::new(false),
            leader: Mutex::new(None),
        });
        let mut team = Team {
            shared,
            workers: Vec::with_capacity(workers),
            aside: Vec::new(),
            staged: (0..=workers).map(|_| Vec::new()).collect(),
            back: (0..=workers).map(|_| Vec::new()).collect(),
            leader: None,
            backoff: Backoff::new(SPIN),
        };
        for k in 1..=workers {
            let shared = Arc::clone(&team.shared);
            let handle = std::thread::Builder::new()
                .name(format!("lockstep-cosim-{k}"))
                .spawn(move || worker(&shared, k))
                .map_err(|e| CosimError::Threads {
                    threads: workers + 1,
                    reason: e.to_string(),
                })?;
            // (On an error, dropping `team` stops the threads started.)
            team.workers.push(handle);
        }
        Ok(team)
    }

    /// Steps every slot for which `due` holds at `t`, on the team and this
    /// thread; the slots keep their order. Every due slot is stepped
    /// whatever another's outcome; the first failure in declaration order
    /// is returned (a panic is resumed here, once every slot is back).
    #[allow(clippy::vec_box)] // (see `Cosim::slots`)
    pub(crate) fn wave(
        &mut self,
        slots: &mut Vec<Box<Slot>>,
        t: Micros,
        due: impl Fn(&Slot) -> bool,
    ) -> Result<(), CosimError> {
        let shared = &*self.shared;
        let me = std::thread::current().id();
        if self.leader != Some(me) {
            *lock(&shared.leader) = Some(std::thread::current());
            self.leader = Some(me);
        }
        let members = shared.members.len();
        // Counted before any slot is in a list: a worker still looking at
        // the lists after the last wave can only take a slot, and count it
        // off, once the count is this wave's.
        shared
            .left
            .store(slots.iter().filter(|s| due(s)).count(), Ordering::SeqCst);
        for (i, s) in slots.drain(..).enumerate().rev() {
            if due(&s) {
                // In reverse: each member pops its first declared first.
                self.staged[i % members].push((i, s, t));
            } else {
                self.aside.push((i, s));
            }
        }
        // One lock a member: its list (empty) and the staged one trade
        // places, so neither is allocated again.
        for (m, staged) in shared.members.iter().zip(&mut self.staged) {
            std::mem::swap(&mut *lock(&m.todo), staged);
        }
        shared.wave.fetch_add(1, Ordering::SeqCst);
        for (k, w) in self.workers.iter().enumerate() {
            // (Read first: a swap would take the line from the worker.)
            let asleep = &shared.members[k + 1].asleep;
            if asleep.load(Ordering::SeqCst) && asleep.swap(false, Ordering::SeqCst) {
                w.thread().unpark();
            }
        }
        shared.work(0);
        wait(
            || shared.left.load(Ordering::SeqCst) == 0,
            &shared.leader_asleep,
            &mut self.backoff,
        );

        let mut first: Option<(usize, CosimError)> = None;
        let mut panic = None;
        for (m, back) in shared.members.iter().zip(&mut self.back) {
            std::mem::swap(&mut *lock(&m.back), back);
            for (i, s, outcome) in back.drain(..) {
                match outcome {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) if first.as_ref().is_none_or(|(j, _)| i < *j) => {
                        first = Some((i, e));
                    }
                    Ok(Err(_)) => {}
                    Err(p) => {
                        panic.get_or_insert(p);
                    }
                }
                self.aside.push((i, s));
            }
        }
        self.aside.sort_unstable_by_key(|(i, _)| *i);
        slots.extend(self.aside.drain(..).map(|(_, s)| s));
        if let Some(p) = panic {
            resume_unwind(p);
        }
        first.map_or(Ok(()), |(_, e)| Err(e))
    }
}

fn worker(shared: &Shared, me: usize) {
    let mut seen = 0u64;
    let mut backoff = Backoff::new(SPIN);
    loop {
        wait(
            || shared.wave.load(Ordering::SeqCst) != seen || shared.stop.load(Ordering::SeqCst),
            &shared.members[me].asleep,
            &mut backoff,
        );
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        seen = shared.wave.load(Ordering::SeqCst);
        shared.work(me);
    }
}

impl Drop for Team {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        for w in &self.workers {
            w.thread().unpark();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}
