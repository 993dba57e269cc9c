//! How long a waiting side may spin before it sleeps, from the machine's
//! load: used by the isolated autopilot's channel (both processes) and by
//! the co-simulation's worker team.

use std::time::Duration;

/// How long a side may busy-wait. Spinning pays when each process has a
/// core to itself: the answer comes within microseconds and no system call
/// is made. When the cores are all busy (parallel runs, a build), a
/// spinning process takes time from the others and every wait gets slower
/// (measured: two runs in parallel on two cores took 5.2 times as long as
/// in-process with spinning, 2.7 times with sleeping). So a side spins only
/// while the machine has about a core for every runnable task: it reads the
/// kernel's count of runnable tasks (in `/proc/loadavg`) every
/// [`LOOK_EVERY`] waits and compares it with the cores it may use.
#[derive(Debug)]
pub struct Backoff {
    spin: Duration,
    waits: u32,
    allowed: bool,
    cores: usize,
}

/// Waits between two looks at the machine's load.
const LOOK_EVERY: u32 = 1024;

impl Backoff {
    /// A side that may spin for `spin` (zero: never) when the machine has
    /// the cores for it.
    pub fn new(spin: Duration) -> Backoff {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut b = Backoff {
            spin,
            waits: 0,
            allowed: false,
            cores,
        };
        b.look();
        b
    }

    fn look(&mut self) {
        // The count includes this side and the other (running or
        // spinning) and, often, the harness's log writer: one more than
        // the cores is still "a core each".
        self.allowed = runnable_tasks().is_some_and(|n| n <= self.cores + 1);
    }

    /// The spin allowed for the next wait.
    pub fn budget(&mut self) -> Duration {
        if self.spin.is_zero() {
            return Duration::ZERO;
        }
        self.waits = self.waits.wrapping_add(1);
        if self.waits.is_multiple_of(LOOK_EVERY) {
            self.look();
        }
        if self.allowed {
            self.spin
        } else {
            Duration::ZERO
        }
    }
}

/// Busy-wait iterations (1 to 15 µs: a `pause` takes 10 to 140 cycles,
/// by CPU) before a waiting side starts yielding its core: when both sides share one core, pure spinning would
/// keep the other from answering until the spin ends.
const SPIN_BEFORE_YIELD: u32 = 256;

/// Spins until `done` holds or `spin` has passed (pausing, then yielding
/// the core after [`SPIN_BEFORE_YIELD`] rounds); whether `done` held. The
/// caller sleeps when it did not.
pub fn spin_until(spin: Duration, mut done: impl FnMut() -> bool) -> bool {
    if done() {
        return true;
    }
    if spin.is_zero() {
        return false;
    }
    let start = std::time::Instant::now();
    let mut n = 0u32;
    loop {
        if done() {
            return true;
        }
        n = n.wrapping_add(1);
        if n < SPIN_BEFORE_YIELD {
            std::hint::spin_loop();
        } else {
            // The other side may share this core: let it run.
            std::thread::yield_now();
        }
        if n.is_multiple_of(64) && start.elapsed() >= spin {
            return false;
        }
    }
}

/// The number of runnable tasks on the machine now, the caller included:
/// the `2` of `2/250` in `/proc/loadavg`. Read into a buffer on the stack
/// (no allocation: the engine's steady state allocates nothing).
fn runnable_tasks() -> Option<usize> {
    use std::io::Read;
    let mut buf = [0u8; 256];
    let mut f = std::fs::File::open("/proc/loadavg").ok()?;
    let n = f.read(&mut buf).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    let field = text.split_ascii_whitespace().nth(3)?;
    field.split_once('/')?.0.parse().ok()
}
