//! Components as handles: what a master holds is not a pointer to the
//! instance but a number (a tag, a slot, a generation) that is never
//! dereferenced. Every call looks it up, so a call after fmi2FreeInstance,
//! a second free, or a pointer that was never a component is fmi2Error
//! instead of undefined behaviour: FMI calls those the master's fault, and
//! refusing them costs one lookup. A slot reused after a free gets a new
//! generation, so an old handle to it stays dead.
//!
//! Each instance sits behind its own mutex, taken without waiting: FMI
//! forbids concurrent calls on one instance, so a call that finds it busy
//! (another thread's, or the master's logger calling back from inside a
//! call) is refused rather than left to deadlock.

use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use super::{Component, fmi2Component};

type Shared = Arc<Mutex<Component>>;

struct Slot {
    generation: u32,
    component: Option<Shared>,
}

static SLOTS: Mutex<(Vec<Slot>, u32)> = Mutex::new((Vec::new(), 0));

/// High byte of every handle: makes a small integer or a real pointer
/// passed by mistake unlikely to decode.
const TAG: usize = 0x4c;
const SLOT_BITS: u32 = 24;
const GEN_BITS: u32 = 32;

fn slots() -> MutexGuard<'static, (Vec<Slot>, u32)> {
    // Only Vec and integer operations run under this lock: a poisoned lock
    // is still consistent.
    SLOTS.lock().unwrap_or_else(|p| p.into_inner())
}

fn decode(c: fmi2Component) -> Option<(usize, u32)> {
    let h = c as usize;
    if h >> (SLOT_BITS + GEN_BITS) != TAG {
        return None;
    }
    let slot = (h & ((1 << SLOT_BITS) - 1)).checked_sub(1)?;
    Some((slot, ((h >> SLOT_BITS) & ((1 << GEN_BITS) - 1)) as u32))
}

/// Registers `component`; its handle (NULL when the table is full).
pub(super) fn insert(component: Component) -> fmi2Component {
    let mut g = slots();
    let (table, counter) = &mut *g;
    *counter = counter.wrapping_add(1);
    let generation = *counter;
    let slot = match table.iter().position(|s| s.component.is_none()) {
        Some(i) => i,
        None if table.len() < (1 << SLOT_BITS) - 1 => {
            table.push(Slot {
                generation: 0,
                component: None,
            });
            table.len() - 1
        }
        None => return std::ptr::null_mut(),
    };
    table[slot] = Slot {
        generation,
        component: Some(Arc::new(Mutex::new(component))),
    };
    std::ptr::without_provenance_mut(
        (TAG << (SLOT_BITS + GEN_BITS)) | ((generation as usize) << SLOT_BITS) | (slot + 1),
    )
}

/// The live instance behind `c`.
pub(super) fn get(c: fmi2Component) -> Option<Shared> {
    let (slot, generation) = decode(c)?;
    match slots().0.get(slot) {
        Some(Slot {
            generation: g,
            component: Some(s),
        }) if *g == generation => Some(Arc::clone(s)),
        _ => None,
    }
}

/// Unregisters `c`; the instance (dropped when the last call holding it
/// returns).
pub(super) fn remove(c: fmi2Component) -> Option<Shared> {
    let (slot, generation) = decode(c)?;
    match slots().0.get_mut(slot) {
        Some(s) if s.generation == generation => s.component.take(),
        _ => None,
    }
}

/// The instance locked for one call, or `None` while another call holds it.
pub(super) fn lock(s: &Shared) -> Option<MutexGuard<'_, Component>> {
    match s.try_lock() {
        Ok(g) => Some(g),
        // A panic is caught inside the call that held the lock; what it
        // left is the instance's own failed state.
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}
