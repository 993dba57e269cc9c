//! Handles: what C holds is not a pointer to our object but a number
//! (type tag, slot, generation) that looks like one and is never
//! dereferenced. Every call looks it up here, so a freed, never-created or
//! wrong-type handle is `LOCKSTEP_ERR_HANDLE`, and a slot reused after a
//! free gets a new generation (an old handle to it stays stale).
//!
//! Each live object sits behind its own mutex: calls on one handle from
//! several threads are serialized, calls on different handles run in
//! parallel.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::boundary::{Failure, Outcome, copy_message, guard, lockstep_status, null, quiet};

/// A live object, the last error on it, and whether an error left it
/// unusable.
#[derive(Debug)]
pub(crate) struct Entry<T> {
    pub(crate) value: T,
    pub(crate) last_error: String,
    /// The error that left the object unusable for stepping.
    pub(crate) failed: Option<Failure>,
}

#[derive(Debug)]
struct Slot<T> {
    generation: u32,
    entry: Option<Arc<Mutex<Entry<T>>>>,
}

#[derive(Debug)]
pub(crate) struct Registry<T> {
    tag: u8,
    what: &'static str,
    slots: Mutex<(Vec<Slot<T>>, u32)>,
}

const SLOT_BITS: u32 = 24;
const GEN_BITS: u32 = 32;

impl<T> Registry<T> {
    pub(crate) const fn new(tag: u8, what: &'static str) -> Registry<T> {
        Registry {
            tag,
            what,
            slots: Mutex::new((Vec::new(), 0)),
        }
    }

    fn slots(&self) -> MutexGuard<'_, (Vec<Slot<T>>, u32)> {
        // A panic never happens while this lock is held (only Vec and
        // integer operations), but a poisoned lock is still usable.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn encode(&self, slot: usize, generation: u32) -> usize {
        (usize::from(self.tag) << (SLOT_BITS + GEN_BITS))
            | ((generation as usize) << SLOT_BITS)
            | (slot + 1)
    }

    /// The slot and generation of `handle`, if it carries this type's tag.
    fn decode(&self, handle: usize) -> Option<(usize, u32)> {
        if handle >> (SLOT_BITS + GEN_BITS) != usize::from(self.tag) {
            return None;
        }
        let slot = (handle & ((1 << SLOT_BITS) - 1)).checked_sub(1)?;
        let generation = ((handle >> SLOT_BITS) & ((1 << GEN_BITS) - 1)) as u32;
        Some((slot, generation))
    }

    /// Registers `value`; its handle.
    pub(crate) fn insert(&self, value: T) -> Result<usize, Failure> {
        let mut guard = self.slots();
        let (slots, counter) = &mut *guard;
        *counter = counter.wrapping_add(1);
        let generation = *counter;
        let entry = Some(Arc::new(Mutex::new(Entry {
            value,
            last_error: String::new(),
            failed: None,
        })));
        let slot = match slots.iter().position(|s| s.entry.is_none()) {
            Some(i) => i,
            None if slots.len() < (1 << SLOT_BITS) - 1 => {
                slots.push(Slot {
                    generation: 0,
                    entry: None,
                });
                slots.len() - 1
            }
            None => {
                return Err(Failure::new(
                    lockstep_status::LOCKSTEP_ERR_ARGUMENT,
                    format!("too many live {} handles", self.what),
                ));
            }
        };
        slots[slot] = Slot { generation, entry };
        Ok(self.encode(slot, generation))
    }

    fn stale(&self, handle: usize) -> Failure {
        Failure::new(
            lockstep_status::LOCKSTEP_ERR_HANDLE,
            format!(
                "{:#x} is not a live {} handle (never created, already freed, or of another type)",
                handle, self.what
            ),
        )
    }

    /// The object behind `handle`.
    pub(crate) fn get(&self, handle: usize) -> Result<Arc<Mutex<Entry<T>>>, Failure> {
        let (slot, generation) = self.decode(handle).ok_or_else(|| self.stale(handle))?;
        let slots = self.slots();
        match slots.0.get(slot) {
            Some(Slot {
                generation: g,
                entry: Some(e),
            }) if *g == generation => Ok(Arc::clone(e)),
            _ => Err(self.stale(handle)),
        }
    }

    /// Unregisters `handle`; the object (dropped when the last call that
    /// holds it returns).
    pub(crate) fn remove(&self, handle: usize) -> Result<Arc<Mutex<Entry<T>>>, Failure> {
        let (slot, generation) = self.decode(handle).ok_or_else(|| self.stale(handle))?;
        let mut slots = self.slots();
        match slots.0.get_mut(slot) {
            Some(s) if s.generation == generation && s.entry.is_some() => {
                Ok(s.entry.take().expect("checked just above"))
            }
            _ => Err(self.stale(handle)),
        }
    }
}

impl<T> Entry<T> {
    /// Refuses a step on the `what` (simulation, bridge, plant) an earlier
    /// error left unusable.
    pub(crate) fn usable(&self, what: &str) -> Outcome {
        match &self.failed {
            Some(f) => Err(Failure::new(
                lockstep_status::LOCKSTEP_ERR_FAILED,
                format!("an earlier error left this {what} unusable: {}", f.message),
            )),
            None => Ok(()),
        }
    }
}

impl<T> Registry<T> {
    /// Runs `f` on the object behind `handle` (0: the argument `what` is
    /// NULL) inside the panic guard; a failure becomes its last error.
    pub(crate) fn with(
        &self,
        handle: usize,
        what: &str,
        f: impl FnOnce(&mut Entry<T>) -> Outcome,
    ) -> lockstep_status {
        guard(|| {
            if handle == 0 {
                return Err(null(what));
            }
            let e = self.get(handle)?;
            let mut g = lock(&e)?;
            let r = f(&mut g);
            if let Err(err) = &r {
                g.last_error = err.message.clone();
            }
            r
        })
    }

    /// Copies the last error on the object behind `handle` out, as
    /// `lockstep_thread_last_error` does, without replacing the thread's.
    ///
    /// # Safety
    /// `buf` is NULL or valid for `len` bytes; `out_len` is NULL or writable.
    pub(crate) unsafe fn last_error(
        &self,
        handle: usize,
        what: &str,
        buf: *mut std::ffi::c_char,
        len: usize,
        out_len: *mut usize,
    ) -> lockstep_status {
        quiet(|| {
            if handle == 0 {
                return Err(null(what));
            }
            let e = self.get(handle)?;
            let g = lock(&e)?;
            // SAFETY: the caller's promises on `buf`, `len`, `out_len`.
            unsafe { copy_message(&g.last_error, buf, len, out_len) }
        })
    }
}

/// Locks an entry; a lock poisoned by an earlier panic is reported as that.
pub(crate) fn lock<T>(e: &Mutex<Entry<T>>) -> Result<MutexGuard<'_, Entry<T>>, Failure> {
    e.lock().map_err(|_| {
        Failure::new(
            lockstep_status::LOCKSTEP_ERR_PANIC,
            "an earlier call on this handle panicked; it is unusable (free it)",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_double_freed_and_foreign_handles_are_refused() {
        let a: Registry<i32> = Registry::new(1, "test");
        let b: Registry<i32> = Registry::new(2, "other");
        let h = a.insert(7).unwrap();
        assert_eq!(a.get(h).unwrap().lock().unwrap().value, 7);
        assert_eq!(
            b.get(h).unwrap_err().status,
            lockstep_status::LOCKSTEP_ERR_HANDLE
        );
        a.remove(h).unwrap();
        assert!(a.get(h).is_err());
        assert!(a.remove(h).is_err(), "double free");
        // The slot is reused under a new generation: the old handle stays stale.
        let h2 = a.insert(8).unwrap();
        assert_ne!(h, h2);
        assert!(a.get(h).is_err());
        assert_eq!(a.get(h2).unwrap().lock().unwrap().value, 8);
        for bogus in [0usize, 1, usize::MAX, h2 + (1 << SLOT_BITS)] {
            assert!(a.get(bogus).is_err(), "{bogus:#x}");
        }
    }
}
