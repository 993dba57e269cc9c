//! The boundary with C: status codes, the panic guard every export runs in,
//! the last-error messages, and the checks on what C hands over (pointers,
//! strings, struct sizes, numbers).

use std::cell::RefCell;
use std::ffi::{CStr, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

/// What every function returns: `LOCKSTEP_OK` (0) or a negative error code.
/// The values are stable: a code keeps its number in every later version.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum lockstep_status {
    /// Success; the out-parameters were written.
    LOCKSTEP_OK = 0,
    /// A required pointer argument was NULL.
    LOCKSTEP_ERR_NULL = -1,
    /// The handle is not a live handle of this type: never created, already
    /// freed, or of another type.
    LOCKSTEP_ERR_HANDLE = -2,
    /// A struct's `size` field is not this library's `sizeof` of it (a host
    /// compiled against another version of the header).
    LOCKSTEP_ERR_STRUCT_SIZE = -3,
    /// An argument is out of range: a non-finite number, an unknown enum
    /// value, a string that is not UTF-8, a wrong count.
    LOCKSTEP_ERR_ARGUMENT = -4,
    /// A scenario, spec or mission could not be read or is invalid.
    LOCKSTEP_ERR_CONFIG = -5,
    /// The autopilot library failed: loading, validation, or a call
    /// (including a crash or hang in the isolated mode).
    LOCKSTEP_ERR_AUTOPILOT = -6,
    /// The plant's integration failed (a non-finite state, a step that
    /// became too small).
    LOCKSTEP_ERR_PLANT = -7,
    /// A time before the current one, or not the boundary awaited.
    LOCKSTEP_ERR_TIME = -8,
    /// The run has ended: nothing is left to step.
    LOCKSTEP_ERR_ENDED = -9,
    /// Reading or writing a file failed (log, recording).
    LOCKSTEP_ERR_IO = -10,
    /// The caller's buffer is too small; the size needed was written.
    LOCKSTEP_ERR_BUFFER = -11,
    /// An earlier error left the handle unusable (a failed step of the
    /// autopilot or the plant); the message is that error's. Reading state
    /// and freeing still work.
    LOCKSTEP_ERR_FAILED = -12,
    /// Not possible on this handle (a plant fault on a host-owned plant).
    LOCKSTEP_ERR_UNSUPPORTED = -13,
    /// A bug: the library panicked. The call did nothing else; the handle
    /// is unusable.
    LOCKSTEP_ERR_PANIC = -14,
    /// The run has not ended: what is asked is known at its end (run it to
    /// its end, or end it with `lockstep_sim_finish`).
    LOCKSTEP_ERR_NOT_ENDED = -15,
}

use lockstep_status::*;

/// An error on its way to C: a code and the message the last-error
/// functions return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: lockstep_status,
    pub message: String,
}

impl Failure {
    pub fn new(status: lockstep_status, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
        }
    }
}

pub type Outcome = Result<(), Failure>;

thread_local! {
    /// The message of the last failed call on this thread.
    static LAST: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Runs `f` with panics caught; returns its status, keeping a failure's
/// message as this thread's last error.
pub(crate) fn guard(f: impl FnOnce() -> Outcome) -> lockstep_status {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(Failure::new(
            LOCKSTEP_ERR_PANIC,
            format!("internal error (a bug in lockstep, please report it): {what}"),
        ))
    });
    match r {
        Ok(()) => LOCKSTEP_OK,
        Err(e) => {
            let status = e.status;
            // `try_with`: during the thread's teardown the message is lost,
            // not a panic across the boundary.
            let _ = LAST.try_with(|l| *l.borrow_mut() = e.message);
            status
        }
    }
}

/// Copies `message` (and a NUL) into `buf` of `len` bytes, writing the
/// length without the NUL to `out_len`; `LOCKSTEP_ERR_BUFFER` when it does
/// not fit (then `out_len` holds the length needed, without the NUL, and
/// `buf` is untouched).
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is NULL or valid.
pub(crate) unsafe fn copy_message(
    message: &str,
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> Outcome {
    let out_len = non_null_mut(out_len, "out_len")?;
    let n = message.len();
    // SAFETY: `out_len` is non-NULL and the caller promises it is valid.
    unsafe { *out_len = n };
    if buf.is_null() || len < n + 1 {
        return Err(Failure::new(
            LOCKSTEP_ERR_BUFFER,
            format!("the message needs {} bytes with its NUL", n + 1),
        ));
    }
    // SAFETY: `buf` is valid for `len >= n + 1` bytes (the caller's
    // promise), and the message cannot overlap a buffer the caller owns.
    unsafe {
        std::ptr::copy_nonoverlapping(message.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    Ok(())
}

/// The last error message of a call that failed on this thread (whatever the
/// handle), copied into `buf` of `len` bytes with its NUL; its length
/// without the NUL in `*out_len`. `LOCKSTEP_ERR_BUFFER` (with the length
/// needed in `*out_len`) when `buf` is too small or NULL. Thread-safe: each
/// thread has its own.
///
/// # Safety
/// `buf` is NULL or valid for `len` bytes; `out_len` is valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_thread_last_error(
    buf: *mut c_char,
    len: usize,
    out_len: *mut usize,
) -> lockstep_status {
    let message = LAST.try_with(|l| l.borrow().clone()).unwrap_or_default();
    // Not through `guard`: a failure here must not replace the message.
    catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller's promises on `buf`, `len` and `out_len`.
        match unsafe { copy_message(&message, buf, len, out_len) } {
            Ok(()) => LOCKSTEP_OK,
            Err(e) => e.status,
        }
    }))
    .unwrap_or(LOCKSTEP_ERR_PANIC)
}

/// Runs `f` with panics caught, without touching the thread's last error
/// (for the functions that copy messages out: a too-small buffer must not
/// replace the message being read).
pub(crate) fn quiet(f: impl FnOnce() -> Outcome) -> lockstep_status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => LOCKSTEP_OK,
        Ok(Err(e)) => e.status,
        Err(_) => LOCKSTEP_ERR_PANIC,
    }
}

/// The name of a status code, e.g. `"LOCKSTEP_ERR_HANDLE"`: a static
/// NUL-terminated string (`"LOCKSTEP_UNKNOWN_STATUS"` for a value that is
/// not one). Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn lockstep_status_name(status: i32) -> *const c_char {
    let name: &'static str = match status {
        0 => "LOCKSTEP_OK\0",
        -1 => "LOCKSTEP_ERR_NULL\0",
        -2 => "LOCKSTEP_ERR_HANDLE\0",
        -3 => "LOCKSTEP_ERR_STRUCT_SIZE\0",
        -4 => "LOCKSTEP_ERR_ARGUMENT\0",
        -5 => "LOCKSTEP_ERR_CONFIG\0",
        -6 => "LOCKSTEP_ERR_AUTOPILOT\0",
        -7 => "LOCKSTEP_ERR_PLANT\0",
        -8 => "LOCKSTEP_ERR_TIME\0",
        -9 => "LOCKSTEP_ERR_ENDED\0",
        -10 => "LOCKSTEP_ERR_IO\0",
        -11 => "LOCKSTEP_ERR_BUFFER\0",
        -12 => "LOCKSTEP_ERR_FAILED\0",
        -13 => "LOCKSTEP_ERR_UNSUPPORTED\0",
        -14 => "LOCKSTEP_ERR_PANIC\0",
        -15 => "LOCKSTEP_ERR_NOT_ENDED\0",
        _ => "LOCKSTEP_UNKNOWN_STATUS\0",
    };
    name.as_ptr().cast()
}

pub(crate) fn null(what: &str) -> Failure {
    Failure::new(LOCKSTEP_ERR_NULL, format!("`{what}` is NULL"))
}

pub(crate) fn argument(message: impl Into<String>) -> Failure {
    Failure::new(LOCKSTEP_ERR_ARGUMENT, message)
}

pub(crate) fn non_null_mut<T>(p: *mut T, what: &str) -> Result<*mut T, Failure> {
    if p.is_null() { Err(null(what)) } else { Ok(p) }
}

/// A C string argument as UTF-8 text.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string valid for reads.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: non-NULL and NUL-terminated (the caller's promise).
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str()
        .map_err(|_| argument(format!("`{what}` is not UTF-8")))
}

/// An optional C string argument (NULL: none) as a path.
///
/// # Safety
/// As [`text`].
pub(crate) unsafe fn optional_path(
    p: *const c_char,
    what: &str,
) -> Result<Option<PathBuf>, Failure> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's promise, passed on.
    let s = unsafe { text(p, what) }?;
    if s.is_empty() {
        return Err(argument(format!("`{what}` is empty")));
    }
    Ok(Some(PathBuf::from(s)))
}

/// Every struct that crosses the boundary starts with its `size`.
pub(crate) trait Versioned {
    const NAME: &'static str;
}

/// A caller's struct for reading, after checking its size.
///
/// # Safety
/// `p` is NULL or valid for reads of at least its first 4 bytes and, if its
/// size field is right, of the whole struct.
pub(crate) unsafe fn input<'a, T: Versioned>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: every such struct is `repr(C)` with `size: u32` first, so
    // reading the first field reads only the 4 bytes a struct of any
    // version has.
    let size = unsafe { *p.cast::<u32>() };
    check_size::<T>(size)?;
    // SAFETY: the size matches this library's struct: the caller's struct
    // is one (its promise), valid for reads.
    Ok(unsafe { &*p })
}

/// Checks the size a caller put in its out-struct, then writes `value`
/// (whose own size field is right) over it.
///
/// # Safety
/// `p` is NULL or valid for reads of its first 4 bytes and, if its size
/// field is right, for writes of the whole struct.
pub(crate) unsafe fn output<T: Versioned>(p: *mut T, what: &str, value: T) -> Outcome {
    if p.is_null() {
        return Err(null(what));
    }
    // SAFETY: as in `input`: the first 4 bytes are the size of any version.
    let size = unsafe { *p.cast::<u32>() };
    check_size::<T>(size)?;
    // SAFETY: the caller's struct is this one (its size says so) and
    // writable (its promise).
    unsafe { p.write(value) };
    Ok(())
}

pub(crate) fn check_size<T: Versioned>(size: u32) -> Outcome {
    let ours = std::mem::size_of::<T>();
    if size as usize != ours {
        return Err(Failure::new(
            LOCKSTEP_ERR_STRUCT_SIZE,
            format!(
                "{}.size is {size}, but this library's {} is {ours} bytes: set size = sizeof({}) \
                 and build against the header of this library (ABI version {})",
                T::NAME,
                T::NAME,
                T::NAME,
                crate::LOCKSTEP_HARNESS_ABI_VERSION
            ),
        ));
    }
    Ok(())
}

/// Finite numbers only.
pub(crate) fn finite(values: &[f64], what: &str) -> Outcome {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) if values.len() == 1 => Err(argument(format!(
            "`{what}` is {}, not a finite number",
            values[i]
        ))),
        Some(i) => Err(argument(format!(
            "`{what}[{i}]` is {}, not a finite number",
            values[i]
        ))),
    }
}

use lockstep_harness::engine::EngineError;

/// An engine error as a status and message: the status names the part
/// that failed, as the one classification says
/// ([`lockstep_harness::outcome::class`]).
pub(crate) fn engine_failure(e: &EngineError) -> Failure {
    let part = lockstep_harness::engine::classify::classify(e).part;
    Failure::new(status_of(part), e.to_string())
}

/// The status that names `part`.
fn status_of(part: lockstep_harness::outcome::class::Part) -> lockstep_status {
    use lockstep_harness::outcome::class::Part;
    match part {
        Part::Input => LOCKSTEP_ERR_CONFIG,
        Part::Argument => LOCKSTEP_ERR_ARGUMENT,
        Part::Autopilot => LOCKSTEP_ERR_AUTOPILOT,
        Part::Plant => LOCKSTEP_ERR_PLANT,
        Part::Output => LOCKSTEP_ERR_IO,
        Part::Time => LOCKSTEP_ERR_TIME,
        Part::Ended => LOCKSTEP_ERR_ENDED,
        Part::Unsupported => LOCKSTEP_ERR_UNSUPPORTED,
        Part::Signal => LOCKSTEP_ERR_FAILED,
    }
}

/// The run layer's refusal (a flight prepared): the status of the part it
/// names (a refused input without one is `LOCKSTEP_ERR_CONFIG`), the
/// message with the lines that say more.
impl From<lockstep_run::RunError> for Failure {
    fn from(e: lockstep_run::RunError) -> Failure {
        use lockstep_harness::outcome::class::ErrorClass;
        let status = match (e.part, e.class) {
            (Some(p), _) => status_of(p),
            (None, ErrorClass::Configuration) => LOCKSTEP_ERR_CONFIG,
            (None, _) => LOCKSTEP_ERR_FAILED,
        };
        let mut message = e.message;
        for line in e.context {
            message.push('\n');
            message.push_str(&line);
        }
        Failure::new(status, message)
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Failure {
        engine_failure(&e)
    }
}

impl From<lockstep_harness::inputs::scenario::ScenarioError> for Failure {
    fn from(e: lockstep_harness::inputs::scenario::ScenarioError) -> Failure {
        Failure::new(LOCKSTEP_ERR_CONFIG, e.to_string())
    }
}
