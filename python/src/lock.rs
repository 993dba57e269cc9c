//! Taking an object's lock from Python without deadlocking: a call that
//! holds an object's lock releases the GIL while it steps, so a second
//! thread that waited for that lock while holding the GIL would keep the
//! first from ever taking the GIL back. Waiting therefore happens without
//! the GIL.

use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Duration;

use pyo3::Python;

/// `m`'s guard, waited for with the GIL released (a lock a panic
/// poisoned is taken as it is: the object reports its own state).
pub fn lock<'a, T>(py: Python<'_>, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    loop {
        match m.try_lock() {
            Ok(g) => return g,
            Err(TryLockError::Poisoned(p)) => return p.into_inner(),
            Err(TryLockError::WouldBlock) => {
                py.detach(|| std::thread::sleep(Duration::from_micros(20)));
            }
        }
    }
}
