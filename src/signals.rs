//! SIGINT and SIGTERM: a run stops at its next boundary with everything up
//! to there written. A second signal within [`GRACE_NS`] of the first is
//! the same request: GNU `timeout` signals its child and then the child's
//! group, and a terminal's Ctrl-C reaches every process of the group, so
//! two arrive at once and ending at the second lost the end of the run. A
//! signal after that ends the process at once, saying so on stderr.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// How long after the first signal another one is taken as the same
/// request: 2 s.
pub const GRACE_NS: u64 = 2_000_000_000;

/// Installs the handlers; the flag they set holds the first signal's number.
pub fn catch() -> Arc<AtomicUsize> {
    let which = Arc::new(AtomicUsize::new(0));
    // When the first signal came (monotonic ns, at least 1; 0: none yet).
    let first = Arc::new(AtomicU64::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let (which, first) = (Arc::clone(&which), Arc::clone(&first));
        // SAFETY: the action is async-signal-safe: it reads the monotonic
        // clock (clock_gettime), loads and stores atomics, and may call
        // write(2) and _exit(2); it allocates nothing and takes no lock.
        let registered = unsafe {
            signal_hook::low_level::register(sig, move || on_signal(sig, &which, &first))
        };
        if let Err(e) = registered {
            warn!("lockstep: cannot catch signal {sig}: {e}");
        }
    }
    which
}

/// What a signal does: the first asks the run to stop; another within the
/// grace period is the same request; a later one ends the process.
fn on_signal(sig: i32, which: &AtomicUsize, first: &AtomicU64) {
    match take(first, monotonic_ns().max(1)) {
        Taken::Stop => which.store(sig as usize, Ordering::SeqCst),
        Taken::Same => {}
        Taken::End => {
            let say = b"lockstep: a second signal: ending at once, the outputs as they are now \
                        (the log's last rows, the recording and the summary may be missing)\n";
            // SAFETY: write(2) of a static buffer and _exit(2) are
            // async-signal-safe.
            unsafe {
                libc::write(2, say.as_ptr().cast(), say.len());
                libc::_exit(128 + sig);
            }
        }
    }
}

/// What a signal at `now` (ns) means, `first` holding when the first came.
#[derive(Debug, PartialEq, Eq)]
enum Taken {
    /// The first: stop the run at its next boundary.
    Stop,
    /// Within the grace period of the first: the same request.
    Same,
    /// Later: end the process now.
    End,
}

fn take(first: &AtomicU64, now: u64) -> Taken {
    match first.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => Taken::Stop,
        Err(t0) if now.saturating_sub(t0) < GRACE_NS => Taken::Same,
        Err(_) => Taken::End,
    }
}

/// The monotonic clock in ns (0 if it cannot be read).
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to write; clock_gettime is
    // async-signal-safe.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_signal_is_the_same_request_for_two_seconds_then_ends_the_process() {
        let first = AtomicU64::new(0);
        let t0 = 5_000_000_000;
        assert_eq!(take(&first, t0), Taken::Stop);
        assert_eq!(take(&first, t0), Taken::Same, "at the same instant");
        assert_eq!(take(&first, t0 + GRACE_NS - 1), Taken::Same);
        assert_eq!(take(&first, t0 + GRACE_NS), Taken::End);
        assert_eq!(take(&first, t0 + 10 * GRACE_NS), Taken::End);
    }
}
