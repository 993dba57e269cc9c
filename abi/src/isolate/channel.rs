//! The shared memory between the harness and an autopilot host process, and
//! the handshake on it.
//!
//! One [`Channel`] lives in a memfd mapped by both processes. The harness
//! writes a request (op and arguments), then bumps `request`; the host runs
//! it, writes the answer, then sets `response` to the same number. Each side
//! spins briefly for the other's number and then sleeps on it as a futex;
//! a side about to sleep says so in its `*_asleep` word, and the other side
//! only makes the wake-up system call when that word is set. The ordering
//! (store the number, then read the flag; set the flag, then re-check the
//! number in the kernel's compare) is sequentially consistent on both sides,
//! so no wake-up is lost.
//!
//! Only one side owns the data fields at a time (the harness between a
//! response and its next request, the host between a request and its
//! response). They are read and written through raw pointers, never through
//! references to the whole struct, and the harness treats every value it
//! reads as untrusted (lengths are bounded, errors parsed, outputs checked).

use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use linux_futex::{AsFutex, Shared as SharedScope};
use memmap2::MmapMut;

use crate::MAX_MISSION_ITEMS;
use crate::backoff::{Backoff, spin_until};
use crate::ffi;

/// Bytes of text a request or answer may carry (paths, names, reports,
/// errors as JSON).
pub(crate) const TEXT_CAP: usize = 1 << 20;
/// Written by the harness before the host starts; the host refuses any
/// other mapping.
pub(crate) const MAGIC: u64 = 0x4C4B_5354_4953_4F32; // "LKSTISO2"

/// What the harness asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum Op {
    /// Load the library at the path in `text` and report on it.
    Inspect = 1,
    /// Load the library at the path in `text` for use.
    Load = 2,
    /// Create the instance from `config`.
    Create = 3,
    /// Step at `time_us` on `sensors` into `actuators`.
    Step = 4,
    /// Upload `count` items from `mission`.
    Mission = 5,
    SetF32 = 6,
    GetF32 = 7,
    SetI32 = 8,
    GetI32 = 9,
    Reset = 10,
    LastError = 11,
    /// Destroy the instance (and unload); the host answers, then exits.
    Exit = 12,
    /// Snapshot the instance into `text`.
    Snapshot = 13,
    /// Restore the instance from `text`.
    Restore = 14,
    /// The parameter table, as JSON in `text`.
    Params = 15,
}

impl Op {
    pub(crate) fn from_u32(v: u32) -> Option<Op> {
        Some(match v {
            1 => Op::Inspect,
            2 => Op::Load,
            3 => Op::Create,
            4 => Op::Step,
            5 => Op::Mission,
            6 => Op::SetF32,
            7 => Op::GetF32,
            8 => Op::SetI32,
            9 => Op::GetI32,
            10 => Op::Reset,
            11 => Op::LastError,
            12 => Op::Exit,
            13 => Op::Snapshot,
            14 => Op::Restore,
            15 => Op::Params,
            _ => return None,
        })
    }
}

/// The answer carries no error.
pub(crate) const OUTCOME_OK: u32 = 0;
/// The answer's `text` holds the error as JSON.
pub(crate) const OUTCOME_ERROR: u32 = 1;

/// The shared page's layout.
#[repr(C)]
pub(crate) struct Channel {
    pub magic: u64,
    pub request: AtomicU32,
    pub response: AtomicU32,
    pub host_asleep: AtomicU32,
    pub harness_asleep: AtomicU32,
    pub op: u32,
    pub outcome: u32,
    pub time_us: u64,
    pub f32_value: f32,
    pub i32_value: i32,
    pub count: u32,
    pub text_len: u32,
    pub sensors: ffi::lockstep_sensor_frame,
    pub actuators: ffi::lockstep_actuator_frame,
    pub config: ffi::lockstep_autopilot_config,
    pub text: [u8; TEXT_CAP],
    pub mission: [ffi::lockstep_mission_item; MAX_MISSION_ITEMS],
}

/// A mapped channel.
#[derive(Debug)]
pub(crate) struct Mapping {
    _map: MmapMut,
    ptr: *mut Channel,
}

// SAFETY: the mapping is owned; access follows the request/response
// protocol, so moving it between threads is as safe as any owned buffer.
unsafe impl Send for Mapping {}

impl Mapping {
    /// A new zeroed channel in a memfd (the harness's side); returns the fd
    /// to hand to the host.
    pub(crate) fn create() -> std::io::Result<(Mapping, OwnedFd)> {
        // SAFETY: memfd_create with a NUL-terminated name and a flag; the
        // returned descriptor is checked, then owned.
        let fd = unsafe { libc::memfd_create(c"lockstep-autopilot".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let file = File::from(owned.try_clone()?);
        file.set_len(std::mem::size_of::<Channel>() as u64)?;
        let m = Mapping::map(&file)?;
        // SAFETY: the mapping is at least size_of::<Channel>() bytes, page
        // aligned, and nobody else maps it yet.
        unsafe { (*m.ptr).magic = MAGIC };
        Ok((m, owned))
    }

    /// Maps an existing channel (the host's side).
    pub(crate) fn map(file: &File) -> std::io::Result<Mapping> {
        let len = file.metadata()?.len();
        if len < std::mem::size_of::<Channel>() as u64 {
            return Err(std::io::Error::other(format!(
                "the shared memory holds {len} bytes, the channel needs {}",
                std::mem::size_of::<Channel>()
            )));
        }
        // SAFETY: a shared mapping of a memfd only the harness and its host
        // map; every access goes through the protocol above.
        let mut map = unsafe { MmapMut::map_mut(file.as_raw_fd())? };
        let ptr = map.as_mut_ptr().cast::<Channel>();
        Ok(Mapping { _map: map, ptr })
    }

    pub(crate) fn ptr(&self) -> *mut Channel {
        self.ptr
    }

    /// Puts `bytes` in the text area; false (nothing written) when they do
    /// not fit.
    pub(crate) fn write_text(&self, bytes: &[u8]) -> bool {
        if bytes.len() > TEXT_CAP {
            return false;
        }
        let p = self.ptr;
        // SAFETY: the caller owns the data fields (protocol above); the copy
        // stays inside the text array, whose length was checked.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                std::ptr::addr_of_mut!((*p).text).cast::<u8>(),
                bytes.len(),
            );
            std::ptr::addr_of_mut!((*p).text_len).write(bytes.len() as u32);
        }
        true
    }

    /// The text area's content, its declared length bounded by the area.
    pub(crate) fn read_text(&self) -> Vec<u8> {
        let p = self.ptr;
        // SAFETY: the caller owns the data fields; the length is bounded by
        // the array before the copy.
        unsafe {
            let len = (std::ptr::addr_of!((*p).text_len).read() as usize).min(TEXT_CAP);
            std::slice::from_raw_parts(std::ptr::addr_of!((*p).text).cast::<u8>(), len).to_vec()
        }
    }

    /// The number cell `which` (request or response) and the sleeping flag
    /// of the side that waits on it.
    fn cells(&self, which: Slot) -> (&AtomicU32, &AtomicU32) {
        let p = self.ptr;
        // SAFETY: the atomics are inside the mapping, which lives as long as
        // self; shared references to atomics are what both sides use.
        unsafe {
            match which {
                Slot::Request => (&(*p).request, &(*p).host_asleep),
                Slot::Response => (&(*p).response, &(*p).harness_asleep),
            }
        }
    }

    /// Publishes `value` in `which` and wakes the side waiting on it if it
    /// sleeps.
    pub(crate) fn post(&self, which: Slot, value: u32) {
        let (cell, asleep) = self.cells(which);
        cell.store(value, Ordering::SeqCst);
        if asleep.load(Ordering::SeqCst) != 0 {
            AsFutex::<SharedScope>::as_futex(cell).wake(1);
        }
    }

    /// Waits until `which` differs from `old`: spins for what `backoff`
    /// allows, then sleeps in slices of at most `slice`, calling `between`
    /// after each slice (which may end the wait with its error). Returns the
    /// new value.
    pub(crate) fn wait_change<E>(
        &self,
        which: Slot,
        old: u32,
        backoff: &mut Backoff,
        slice: Option<Duration>,
        mut between: impl FnMut() -> Result<(), E>,
    ) -> Result<u32, E> {
        let (cell, asleep) = self.cells(which);
        let mut v = old;
        let changed = || {
            v = cell.load(Ordering::Acquire);
            v != old
        };
        if spin_until(backoff.budget(), changed) {
            return Ok(v);
        }
        loop {
            asleep.store(1, Ordering::SeqCst);
            let futex = AsFutex::<SharedScope>::as_futex(cell);
            // The kernel compares the value before sleeping: a post between
            // the flag and here is not lost.
            match slice {
                Some(d) => {
                    let _ = futex.wait_for(old, d);
                }
                None => {
                    let _ = futex.wait(old);
                }
            }
            asleep.store(0, Ordering::SeqCst);
            let v = cell.load(Ordering::Acquire);
            if v != old {
                return Ok(v);
            }
            between()?;
        }
    }
}

/// Which number a side waits on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Slot {
    /// The harness's request number (the host waits on it).
    Request,
    /// The host's answer number (the harness waits on it).
    Response,
}
