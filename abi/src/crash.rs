//! What the process says when an autopilot kills it in-process.
//!
//! In the in-process mode a fault inside the library (segfault, `abort()`,
//! stack overflow, illegal instruction) takes the harness with it. Before it
//! goes, a handler prints one line naming the signal, the library function
//! that was running and the simulated time, e.g.
//!
//! ```text
//! lockstep: the autopilot was killed by signal SIGSEGV (segmentation fault) in step at t = 5.000000 s; run it with --isolation process to keep the harness alive and the log complete
//! ```
//!
//! Every call into a library goes through [`in_call`], which records the
//! function and time in thread-local cells (synchronous signals are delivered
//! to the thread that faulted). A fault outside any library call is handed to
//! the handler that was installed before (Rust's stack-overflow report, or
//! the default action), untouched.

use std::cell::Cell;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// The library function running (for messages and the crash line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum Function {
    /// Loading: the library's initialisers (constructors) and the handshake.
    Load = 1,
    Create = 2,
    Step = 3,
    Destroy = 4,
    Reset = 5,
    MissionUpload = 6,
    Param = 7,
    LastError = 8,
    Snapshot = 9,
    Restore = 10,
}

impl Function {
    /// The name messages use.
    pub fn name(self) -> &'static str {
        match self {
            Function::Load => "library load",
            Function::Create => "create",
            Function::Step => "step",
            Function::Destroy => "destroy",
            Function::Reset => "reset",
            Function::MissionUpload => "mission upload",
            Function::Param => "a parameter call",
            Function::LastError => "last_error",
            Function::Snapshot => "snapshot",
            Function::Restore => "restore",
        }
    }

    pub(crate) fn from_u8(v: u8) -> Option<Function> {
        Some(match v {
            1 => Function::Load,
            2 => Function::Create,
            3 => Function::Step,
            4 => Function::Destroy,
            5 => Function::Reset,
            6 => Function::MissionUpload,
            7 => Function::Param,
            8 => Function::LastError,
            9 => Function::Snapshot,
            10 => Function::Restore,
            _ => return None,
        })
    }
}

/// No simulated time (calls outside a step).
const NO_TIME: u64 = u64::MAX;

thread_local! {
    static CURRENT: Cell<u8> = const { Cell::new(0) };
    static TIME: Cell<u64> = const { Cell::new(NO_TIME) };
}

/// Runs `call` (a call into the library) with the function and time
/// recorded for the crash line.
#[inline(always)]
pub(crate) fn in_call<R>(function: Function, time_us: Option<u64>, call: impl FnOnce() -> R) -> R {
    CURRENT.with(|c| c.set(function as u8));
    TIME.with(|t| t.set(time_us.unwrap_or(NO_TIME)));
    let r = call();
    CURRENT.with(|c| c.set(0));
    r
}

/// Signals that mean the code running faulted.
const FATAL: [(libc::c_int, &str, &str); 7] = [
    (libc::SIGSEGV, "SIGSEGV", "segmentation fault"),
    (libc::SIGBUS, "SIGBUS", "bus error"),
    (libc::SIGILL, "SIGILL", "illegal instruction"),
    (libc::SIGFPE, "SIGFPE", "arithmetic exception"),
    (libc::SIGABRT, "SIGABRT", "abort"),
    (libc::SIGTRAP, "SIGTRAP", "trap"),
    (libc::SIGSYS, "SIGSYS", "bad system call"),
];

/// The name and meaning of a signal number, e.g. `SIGSEGV (segmentation
/// fault)`; other signals by number.
pub fn signal_name(sig: i32) -> String {
    let named: [(libc::c_int, &str, &str); 6] = [
        (libc::SIGKILL, "SIGKILL", "killed"),
        (libc::SIGTERM, "SIGTERM", "terminated"),
        (libc::SIGINT, "SIGINT", "interrupted"),
        (libc::SIGHUP, "SIGHUP", "hang-up"),
        (libc::SIGPIPE, "SIGPIPE", "broken pipe"),
        (libc::SIGXCPU, "SIGXCPU", "CPU time limit"),
    ];
    FATAL
        .iter()
        .chain(named.iter())
        .find(|(s, _, _)| *s == sig)
        .map_or_else(|| format!("signal {sig}"), |(_, n, m)| format!("{n} ({m})"))
}

/// Writes in progress that must not be torn by the process's death (the
/// flight log's chunks), and whether the process is dying.
static WRITES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
static DYING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Brackets a write that a fatal signal inside the autopilot must not cut
/// in the middle: the crash handler waits (up to about a second) for it to
/// end before the process dies. Returns None once the process is dying:
/// then nothing more may be written.
pub fn whole_write() -> Option<WholeWrite> {
    use std::sync::atomic::Ordering::SeqCst;
    WRITES.fetch_add(1, SeqCst);
    if DYING.load(SeqCst) {
        WRITES.fetch_sub(1, SeqCst);
        return None;
    }
    Some(WholeWrite(()))
}

/// Ends the bracket of [`whole_write`] when dropped.
#[derive(Debug)]
pub struct WholeWrite(());

impl Drop for WholeWrite {
    fn drop(&mut self) {
        WRITES.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// In the handler: no new bracketed write starts; waits for those under
/// way (each is one write of at most a chunk) for up to about a second.
fn fence_writes() {
    use std::sync::atomic::Ordering::SeqCst;
    DYING.store(true, SeqCst);
    for _ in 0..1_000_000 {
        if WRITES.load(SeqCst) == 0 {
            return;
        }
        // SAFETY: sched_yield has no arguments and no effect on memory.
        unsafe {
            libc::sched_yield();
        }
    }
}

/// The handlers that were installed before ours, by index in [`FATAL`].
static PREVIOUS: OnceLock<Vec<libc::sigaction>> = OnceLock::new();

/// Set in an isolation host process: its death is reported by the harness,
/// which knows better than a line printed here.
static DISABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Keeps [`install_handler`] from installing anything in this process.
pub(crate) fn disable_handler() {
    DISABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Installs the crash-line handler for the fatal signals, once per process.
pub(crate) fn install_handler() {
    if DISABLED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    PREVIOUS.get_or_init(|| {
        FATAL
            .iter()
            .map(|(sig, _, _)| {
                // SAFETY: sigaction with a zeroed, then filled struct; the
                // handler only calls async-signal-safe functions (write,
                // sigaction, raise) and reads thread-local cells and the
                // already initialised PREVIOUS.
                unsafe {
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = handler as *const () as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(*sig, &new, &mut old);
                    old
                }
            })
            .collect()
    });
}

extern "C" fn handler(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let function = CURRENT.with(|c| c.get());
    let time = TIME.with(|t| t.get());
    let index = FATAL.iter().position(|(s, _, _)| *s == sig);
    let previous = PREVIOUS.get().zip(index).map(|(p, i)| p[i]);
    let in_autopilot = Function::from_u8(function).is_some();
    if let (Some(f), Some(i)) = (Function::from_u8(function), index) {
        let mut line = Line::default();
        line.push(b"lockstep: the autopilot was killed by signal ");
        line.push(FATAL[i].1.as_bytes());
        line.push(b" (");
        line.push(FATAL[i].2.as_bytes());
        line.push(b") in ");
        line.push(f.name().as_bytes());
        if time != NO_TIME {
            line.push(b" at t = ");
            line.number(time / 1_000_000);
            line.push(b".");
            line.fraction(time % 1_000_000);
            line.push(b" s");
        }
        line.push(
            b"; run it with --isolation process to keep the harness alive and the log complete\n",
        );
        // SAFETY: write(2) is async-signal-safe; the buffer is on this stack.
        unsafe {
            libc::write(2, line.buf.as_ptr().cast(), line.len);
        }
        // The log on disk ends on a whole row: a chunk being written when
        // the fault hit is finished first (a dying process's write to a
        // file can otherwise stop at any page).
        fence_writes();
    }
    // Hand the signal on. A fault inside the autopilot has its line: the
    // process dies by the signal itself (Rust's stack-overflow handler
    // would add a second report and turn a SIGSEGV into SIGABRT whenever
    // the fault address happens to fall in the guard page). Elsewhere the
    // previous handler runs if it was a function, else the disposition.
    // SAFETY: restoring a sigaction obtained from the system; calling a
    // previous SA_SIGINFO handler with the arguments this one received;
    // raise is async-signal-safe.
    unsafe {
        match previous {
            Some(p)
                if !in_autopilot
                    && p.sa_sigaction != libc::SIG_DFL
                    && p.sa_sigaction != libc::SIG_IGN =>
            {
                libc::sigaction(sig, &p, std::ptr::null_mut());
                if p.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(p.sa_sigaction);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(p.sa_sigaction);
                    f(sig);
                }
            }
            _ => {
                libc::signal(sig, libc::SIG_DFL);
                // A signal sent by raise/kill (abort) is re-sent; a fault
                // recurs when the instruction re-executes on return.
                libc::raise(sig);
            }
        }
    }
}

/// A fixed buffer for the crash line (no allocation in a signal handler).
struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Default for Line {
    fn default() -> Self {
        Line {
            buf: [0; 256],
            len: 0,
        }
    }
}

impl Line {
    fn push(&mut self, s: &[u8]) {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
    }

    /// Six digits, zero-padded (the microseconds of a time in seconds).
    fn fraction(&mut self, v: u64) {
        let mut digits = [b'0'; 6];
        let mut v = v % 1_000_000;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        self.push(&digits);
    }

    fn number(&mut self, mut v: u64) {
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.push(&digits[i..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crash_line_formats_numbers_without_allocating() {
        let mut l = Line::default();
        l.push(b"t=");
        l.number(0);
        l.push(b",");
        l.number(5_000_000);
        l.push(b",");
        l.number(u64::MAX);
        l.push(b",");
        l.fraction(4_900);
        assert_eq!(
            std::str::from_utf8(&l.buf[..l.len]).unwrap(),
            "t=0,5000000,18446744073709551615,004900"
        );
    }

    #[test]
    fn signals_are_named_with_their_meaning() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV (segmentation fault)");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL (killed)");
        assert_eq!(signal_name(64), "signal 64");
    }
}
