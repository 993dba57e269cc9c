//! The FMI 2.0 co-simulation functions of an FMU's shared library, loaded
//! with libloading. Every call into the library is here, each `unsafe`
//! block with its reasons; the rest of the importer sees safe methods.

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::path::Path;
use std::sync::Mutex;

/// FMI 2.0 status codes.
pub const OK: c_int = 0;
pub const WARNING: c_int = 1;
pub const DISCARD: c_int = 2;
pub const ERROR: c_int = 3;
pub const FATAL: c_int = 4;
pub const PENDING: c_int = 5;
const CO_SIMULATION: c_int = 1;

/// The most log lines kept per instance (the newest win).
const MAX_LOG: usize = 64;

pub fn status_name(s: c_int) -> String {
    match s {
        OK => "fmi2OK".into(),
        WARNING => "fmi2Warning".into(),
        DISCARD => "fmi2Discard".into(),
        ERROR => "fmi2Error".into(),
        FATAL => "fmi2Fatal".into(),
        PENDING => "fmi2Pending".into(),
        other => format!("status {other} (not FMI 2.0's)"),
    }
}

type Component = *mut c_void;
/// FMI 2.0's logger: printf-style arguments follow the message.
type Logger =
    unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char, *const c_char, ...);

unsafe extern "C" {
    /// The C shim (logger.c) that formats the message and calls
    /// [`lockstep_cosim_fmu_log`].
    fn lockstep_cosim_fmi2_logger(
        env: *mut c_void,
        instance: *const c_char,
        status: c_int,
        category: *const c_char,
        message: *const c_char,
        ...
    );
}

#[repr(C)]
struct CallbackFunctions {
    logger: Logger,
    allocate_memory: unsafe extern "C" fn(usize, usize) -> *mut c_void,
    free_memory: unsafe extern "C" fn(*mut c_void),
    step_finished: Option<unsafe extern "C" fn(*mut c_void, c_int)>,
    component_environment: *mut c_void,
}

/// What the logger writes into: the instance's environment.
#[derive(Debug, Default)]
pub struct Log {
    pub lines: Mutex<Vec<String>>,
}

/// Called by the C shim with the formatted message.
///
/// # Safety
/// `env` is the `Log` lockstep passed as the component environment (alive
/// as long as the instance) or NULL; `category` and `text` are
/// NUL-terminated or NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lockstep_cosim_fmu_log(
    env: *mut c_void,
    status: c_int,
    category: *const c_char,
    text: *const c_char,
) {
    let read = |p: *const c_char| -> String {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: NUL-terminated (the caller's contract), valid for the
            // call.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    };
    let line = format!(
        "[{}] {}: {}",
        status_name(status),
        read(category),
        read(text)
    );
    // No panic may unwind into the FMU: a poisoned lock or a null
    // environment just drops the line.
    let _ = std::panic::catch_unwind(|| {
        if env.is_null() {
            return;
        }
        // SAFETY: `env` is the `Log` boxed by `Instance` and freed only
        // after fmi2FreeInstance.
        let log = unsafe { &*(env as *const Log) };
        if let Ok(mut l) = log.lines.lock() {
            if l.len() == MAX_LOG {
                l.remove(0);
            }
            l.push(line);
        }
    });
}

unsafe extern "C" fn allocate(n: usize, size: usize) -> *mut c_void {
    // SAFETY: calloc has no preconditions; FMI asks for zeroed memory.
    unsafe { libc::calloc(n, size) }
}

unsafe extern "C" fn free(p: *mut c_void) {
    // SAFETY: `p` came from `allocate` (calloc) or is NULL (FMI 2.0).
    unsafe { libc::free(p) }
}

type Instantiate = unsafe extern "C" fn(
    *const c_char,
    c_int,
    *const c_char,
    *const c_char,
    *const CallbackFunctions,
    c_int,
    c_int,
) -> Component;
type FreeInstance = unsafe extern "C" fn(Component);
type SetupExperiment = unsafe extern "C" fn(Component, c_int, f64, f64, c_int, f64) -> c_int;
type Unary = unsafe extern "C" fn(Component) -> c_int;
type GetReal = unsafe extern "C" fn(Component, *const c_uint, usize, *mut f64) -> c_int;
type SetReal = unsafe extern "C" fn(Component, *const c_uint, usize, *const f64) -> c_int;
type GetInt = unsafe extern "C" fn(Component, *const c_uint, usize, *mut c_int) -> c_int;
type SetInt = unsafe extern "C" fn(Component, *const c_uint, usize, *const c_int) -> c_int;
type DoStep = unsafe extern "C" fn(Component, f64, f64, c_int) -> c_int;

struct Functions {
    instantiate: Instantiate,
    free_instance: FreeInstance,
    setup_experiment: SetupExperiment,
    enter_initialization_mode: Unary,
    exit_initialization_mode: Unary,
    terminate: Unary,
    get_real: GetReal,
    set_real: SetReal,
    get_integer: GetInt,
    set_integer: SetInt,
    get_boolean: GetInt,
    set_boolean: SetInt,
    do_step: DoStep,
}

/// One instance of an FMU's co-simulation slave.
pub struct Instance {
    c: Component,
    f: Functions,
    // Both outlive the instance: FMI lets the FMU keep the callbacks'
    // address and the environment.
    callbacks: Box<CallbackFunctions>,
    log: Box<Log>,
    freed: bool,
    /// The worst status a call returned: after fmi2Error FMI 2.0 allows
    /// only get functions, fmi2Reset and fmi2FreeInstance; after fmi2Fatal
    /// no call at all.
    worst: std::cell::Cell<Worst>,
    lib: libloading::Library,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Worst {
    Fine,
    Error,
    Fatal,
}

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("freed", &self.freed)
            .finish_non_exhaustive()
    }
}

// SAFETY: the calls on one instance never overlap (`&mut self` on every
// call, and the master steps a participant from one worker at a time).
// FMI 2.0 does not tie an instance to the thread that created it (masters
// such as FMPy call from any thread); an FMU that keeps state per thread
// is run with `mode = "serialized"` (every call from one thread).
unsafe impl Send for Instance {}

/// An error with its sources (libloading keeps dlerror's text in the
/// source).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// The shared libpython of the `python3` on PATH (what FMUs built with
/// pythonfmu call into without linking it).
fn libpython() -> Result<String, String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sysconfig; print(os.path.join(sysconfig.get_config_var('LIBDIR'), sysconfig.get_config_var('LDLIBRARY')))",
        ])
        .output()
        .map_err(|e| format!("cannot run python3 to find libpython: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 could not say where libpython is: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A library loaded with its symbols global before an FMU's binary, for a
/// binary that uses symbols it does not link (`python`: the shared
/// libpython of the `python3` on PATH).
#[cfg(unix)]
pub fn preload(name: &str) -> Result<libloading::os::unix::Library, String> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    let path = if name == "python" {
        libpython()?
    } else {
        name.to_string()
    };
    // SAFETY: as for the FMU's binary: code the user chose to run.
    unsafe { Library::open(Some(&path), RTLD_NOW | RTLD_GLOBAL) }
        .map_err(|e| format!("cannot preload {path}: {}", chain(&e)))
}

#[cfg(not(unix))]
pub fn preload(name: &str) -> Result<(), String> {
    Err(format!("preloading {name} is supported on Unix only"))
}

fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
    // SAFETY: the symbol is one of FMI 2.0's functions, whose C signature
    // `T` spells out (see the types above); a library exporting the name
    // with another signature breaks the FMI contract.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| {
            format!("the library does not export {name} (an FMI 2.0 co-simulation function)")
        })
}

impl Instance {
    /// Loads `binary`, instantiates it as `instance` and sets up an
    /// experiment starting at 0 s.
    pub fn new(
        binary: &Path,
        instance: &str,
        guid: &str,
        resource_uri: &str,
    ) -> Result<Instance, String> {
        // SAFETY: loading runs the library's initialisers: an FMU is code
        // the user chose to run, as an autopilot library is.
        let lib = unsafe { libloading::Library::new(binary) }
            .map_err(|e| format!("cannot load {}: {}", binary.display(), chain(&e)))?;
        let f = Functions {
            instantiate: symbol(&lib, "fmi2Instantiate")?,
            free_instance: symbol(&lib, "fmi2FreeInstance")?,
            setup_experiment: symbol(&lib, "fmi2SetupExperiment")?,
            enter_initialization_mode: symbol(&lib, "fmi2EnterInitializationMode")?,
            exit_initialization_mode: symbol(&lib, "fmi2ExitInitializationMode")?,
            terminate: symbol(&lib, "fmi2Terminate")?,
            get_real: symbol(&lib, "fmi2GetReal")?,
            set_real: symbol(&lib, "fmi2SetReal")?,
            get_integer: symbol(&lib, "fmi2GetInteger")?,
            set_integer: symbol(&lib, "fmi2SetInteger")?,
            get_boolean: symbol(&lib, "fmi2GetBoolean")?,
            set_boolean: symbol(&lib, "fmi2SetBoolean")?,
            do_step: symbol(&lib, "fmi2DoStep")?,
        };
        let log = Box::new(Log::default());
        let callbacks = Box::new(CallbackFunctions {
            logger: lockstep_cosim_fmi2_logger,
            allocate_memory: allocate,
            free_memory: free,
            step_finished: None,
            component_environment: &*log as *const Log as *mut c_void,
        });
        let cstr = |s: &str, what: &str| {
            CString::new(s).map_err(|_| format!("the {what} holds a NUL byte"))
        };
        let (name, guid, uri) = (
            cstr(instance, "instance name")?,
            cstr(guid, "guid")?,
            cstr(resource_uri, "resource location")?,
        );
        // SAFETY: the strings are NUL-terminated and live through the call;
        // the callbacks live as long as the instance (boxed in it).
        let c = unsafe {
            (f.instantiate)(
                name.as_ptr(),
                CO_SIMULATION,
                guid.as_ptr(),
                uri.as_ptr(),
                &*callbacks,
                0,
                0,
            )
        };
        let inst = Instance {
            c,
            f,
            callbacks,
            log,
            freed: c.is_null(),
            worst: std::cell::Cell::new(Worst::Fine),
            lib,
        };
        if c.is_null() {
            return Err(format!("fmi2Instantiate returned NULL{}", inst.log_tail()));
        }
        // SAFETY: `c` is a live instance.
        let s = unsafe { (inst.f.setup_experiment)(inst.c, 0, 0.0, 0.0, 0, 0.0) };
        inst.check("fmi2SetupExperiment", s)?;
        Ok(inst)
    }

    /// The last lines the FMU logged, for an error message.
    pub fn log_tail(&self) -> String {
        let lines = self.log.lines.lock().map(|l| l.clone()).unwrap_or_default();
        if lines.is_empty() {
            String::new()
        } else {
            let from = lines.len().saturating_sub(3);
            format!(" (its log: {})", lines[from..].join(" | "))
        }
    }

    /// Every line logged so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lines.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// `Ok(true)` for a warning, an error naming `what` for worse.
    pub fn check(&self, what: &str, s: c_int) -> Result<bool, String> {
        match s {
            OK => Ok(false),
            WARNING => Ok(true),
            other => {
                // Not FMI 2.0's statuses count as fmi2Error.
                let w = if other == FATAL {
                    Worst::Fatal
                } else {
                    Worst::Error
                };
                self.worst.set(self.worst.get().max(w));
                Err(format!(
                    "{what} returned {}{}",
                    status_name(other),
                    self.log_tail()
                ))
            }
        }
    }

    fn live(&self) -> Result<Component, String> {
        if self.freed {
            Err("the FMU instance has been freed".into())
        } else if self.worst.get() == Worst::Fatal {
            Err("the FMU returned fmi2Fatal: FMI 2.0 allows no further call".into())
        } else {
            Ok(self.c)
        }
    }

    pub fn enter_initialization(&mut self) -> Result<bool, String> {
        let c = self.live()?;
        // SAFETY: `c` is a live instance.
        let s = unsafe { (self.f.enter_initialization_mode)(c) };
        self.check("fmi2EnterInitializationMode", s)
    }

    pub fn exit_initialization(&mut self) -> Result<bool, String> {
        let c = self.live()?;
        // SAFETY: `c` is a live instance.
        let s = unsafe { (self.f.exit_initialization_mode)(c) };
        self.check("fmi2ExitInitializationMode", s)
    }

    pub fn get_real(&mut self, vr: &[c_uint], out: &mut [f64]) -> Result<bool, String> {
        assert_eq!(vr.len(), out.len());
        if vr.is_empty() {
            return Ok(false);
        }
        let c = self.live()?;
        // SAFETY: both arrays hold `vr.len()` elements; `c` is live.
        let s = unsafe { (self.f.get_real)(c, vr.as_ptr(), vr.len(), out.as_mut_ptr()) };
        self.check("fmi2GetReal", s)
    }

    pub fn set_real(&mut self, vr: &[c_uint], v: &[f64]) -> Result<bool, String> {
        assert_eq!(vr.len(), v.len());
        let c = self.live()?;
        // SAFETY: both arrays hold `vr.len()` elements; `c` is live.
        let s = unsafe { (self.f.set_real)(c, vr.as_ptr(), vr.len(), v.as_ptr()) };
        self.check("fmi2SetReal", s)
    }

    /// Integer (`boolean` false) or Boolean values.
    pub fn get_int(
        &mut self,
        boolean: bool,
        vr: &[c_uint],
        out: &mut [c_int],
    ) -> Result<bool, String> {
        assert_eq!(vr.len(), out.len());
        if vr.is_empty() {
            return Ok(false);
        }
        let c = self.live()?;
        let (f, what) = if boolean {
            (self.f.get_boolean, "fmi2GetBoolean")
        } else {
            (self.f.get_integer, "fmi2GetInteger")
        };
        // SAFETY: both arrays hold `vr.len()` elements; `c` is live.
        let s = unsafe { f(c, vr.as_ptr(), vr.len(), out.as_mut_ptr()) };
        self.check(what, s)
    }

    pub fn set_int(&mut self, boolean: bool, vr: &[c_uint], v: &[c_int]) -> Result<bool, String> {
        assert_eq!(vr.len(), v.len());
        let c = self.live()?;
        let (f, what) = if boolean {
            (self.f.set_boolean, "fmi2SetBoolean")
        } else {
            (self.f.set_integer, "fmi2SetInteger")
        };
        // SAFETY: both arrays hold `vr.len()` elements; `c` is live.
        let s = unsafe { f(c, vr.as_ptr(), vr.len(), v.as_ptr()) };
        self.check(what, s)
    }

    /// One communication step from `t_s` over `dt_s` seconds.
    pub fn do_step(&mut self, t_s: f64, dt_s: f64) -> Result<bool, String> {
        let c = self.live()?;
        // SAFETY: `c` is a live instance.
        let s = unsafe { (self.f.do_step)(c, t_s, dt_s, 1) };
        match s {
            DISCARD => Err(format!(
                "fmi2DoStep from {t_s} s over {dt_s} s returned fmi2Discard: the FMU could not complete the step{}",
                self.log_tail()
            )),
            PENDING => Err(format!(
                "fmi2DoStep returned fmi2Pending: asynchronous steps are not supported{}",
                self.log_tail()
            )),
            s => self.check("fmi2DoStep", s),
        }
    }

    /// fmi2Terminate, then fmi2FreeInstance (once; the instance is unusable
    /// after). After an fmi2Error only fmi2FreeInstance is called, after an
    /// fmi2Fatal nothing (the instance is left: FMI 2.0 allows no call).
    pub fn terminate(&mut self) -> Result<bool, String> {
        if self.freed {
            return Err("the FMU instance has been freed".into());
        }
        let r = match self.worst.get() {
            Worst::Fine => {
                // SAFETY: `c` is a live instance.
                let s = unsafe { (self.f.terminate)(self.c) };
                self.check("fmi2Terminate", s)
            }
            Worst::Error | Worst::Fatal => Ok(false),
        };
        self.free();
        r
    }

    fn free(&mut self) {
        if !self.freed {
            self.freed = true;
            if self.worst.get() != Worst::Fatal {
                // SAFETY: `c` is live and freed once; nothing uses it after.
                unsafe { (self.f.free_instance)(self.c) };
            }
        }
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.free();
        // The callbacks, the log and then the library go after the
        // instance (field order: `lib` last).
        let _ = (&self.callbacks, &self.lib);
    }
}
