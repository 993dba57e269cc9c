//! SIGINT and SIGTERM: a run stops at its next boundary with everything up
//! to there written; a second signal ends the process at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Installs the handlers; the flag they set holds the signal's number.
pub fn catch() -> Arc<AtomicUsize> {
    let which = Arc::new(AtomicUsize::new(0));
    let again = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let registered =
            signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&again))
                .and_then(|_| signal_hook::flag::register(sig, Arc::clone(&again)))
                .and_then(|_| {
                    signal_hook::flag::register_usize(sig, Arc::clone(&which), sig as usize)
                });
        if let Err(e) = registered {
            warn!("lockstep: cannot catch signal {sig}: {e}");
        }
    }
    which
}
