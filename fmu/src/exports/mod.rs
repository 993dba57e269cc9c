//! The 34 functions of the FMI 2.0 co-simulation interface (the common
//! ones and the co-simulation ones). Each runs behind one panic boundary;
//! errors are logged through the master's logger with the instance's name
//! and returned as fmi2Error. What this FMU does not offer (FMU states,
//! directional derivatives, input derivatives, asynchronous steps) returns
//! fmi2Error with a logged message, as its modelDescription.xml says.
//!
//! Here: the types, the panic boundary and the lifecycle (instantiate,
//! set up, initialize, terminate, reset, free); in `values` the getters
//! and setters, in `stepping` fmi2DoStep and the status queries, in
//! `unsupported` what this FMU refuses.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use crate::instance::{Instance, Phase, Value};
use crate::variables::Kind;

pub type fmi2Status = c_int;
pub const FMI2_OK: fmi2Status = 0;
pub const FMI2_WARNING: fmi2Status = 1;
pub const FMI2_DISCARD: fmi2Status = 2;
pub const FMI2_ERROR: fmi2Status = 3;
pub const FMI2_FATAL: fmi2Status = 4;

type fmi2Component = *mut c_void;
type fmi2String = *const c_char;
type fmi2Boolean = c_int;
type fmi2Real = f64;
type fmi2Integer = c_int;
type fmi2ValueReference = u32;

/// `fmi2CallbackLogger`: variadic (printf-style message).
type Logger =
    Option<unsafe extern "C" fn(*mut c_void, fmi2String, fmi2Status, fmi2String, fmi2String, ...)>;

#[repr(C)]
#[derive(Debug)]
pub struct fmi2CallbackFunctions {
    logger: Logger,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, fmi2Status)>,
    component_environment: *mut c_void,
}

/// An instance with the master's logger.
struct Component {
    instance: Instance,
    logger: Logger,
    environment: *mut c_void,
    logging_on: bool,
}

// SAFETY: FMI lets a master call an instance from any thread, one call at
// a time (the handle table's mutex enforces it); `environment` is only
// handed back to the master's logger.
unsafe impl Send for Component {}

impl Component {
    fn log(&self, status: fmi2Status, category: &str, message: &str) {
        let Some(logger) = self.logger else { return };
        if status == FMI2_OK && !self.logging_on {
            return;
        }
        let name = CString::new(self.instance.name.as_str()).unwrap_or_default();
        let category = CString::new(category).unwrap_or_default();
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // SAFETY: the master's logger, called as FMI specifies, with
        // NUL-terminated strings; the message goes through "%s" so no
        // `%` in it is taken for a format.
        unsafe {
            logger(
                self.environment,
                name.as_ptr(),
                status,
                category.as_ptr(),
                c"%s".as_ptr(),
                message.as_ptr(),
            )
        };
    }
}

/// Runs `f` on the component; a failure is logged and is fmi2Error, a
/// panic fmi2Fatal.
fn with(
    c: fmi2Component,
    what: &str,
    f: impl FnOnce(&mut Component) -> Result<(), String>,
) -> fmi2Status {
    with_status(c, what, |comp| f(comp).map(|()| FMI2_OK))
}

/// `with` for a call whose success has more than one status. A handle
/// that is not a live instance, or one busy with another call, is
/// fmi2Error (with no logger to tell).
fn with_status(
    c: fmi2Component,
    what: &str,
    f: impl FnOnce(&mut Component) -> Result<fmi2Status, String>,
) -> fmi2Status {
    let Some(shared) = handles::get(c) else {
        return FMI2_ERROR;
    };
    // The instance may be dropped here (freed during this call): inside
    // the panic boundary too.
    catch_unwind(AssertUnwindSafe(move || {
        let Some(mut guard) = handles::lock(&shared) else {
            return FMI2_ERROR;
        };
        let comp = &mut *guard;
        if comp.instance.phase == Phase::Error && !allowed_in_error(what) {
            comp.log(
                FMI2_ERROR,
                "logStatusError",
                &format!(
                    "{what}: the instance is in FMI's error state (an earlier call returned fmi2Error): only the fmi2Get functions, fmi2SetDebugLogging, fmi2Reset and fmi2FreeInstance may be called"
                ),
            );
            return FMI2_ERROR;
        }
        match catch_unwind(AssertUnwindSafe(|| f(comp))) {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                comp.log(FMI2_ERROR, "logStatusError", &format!("{what}: {e}"));
                comp.instance.phase = Phase::Error;
                FMI2_ERROR
            }
            Err(_) => {
                comp.log(
                    FMI2_FATAL,
                    "logStatusFatal",
                    &format!("{what}: internal error (a bug in lockstep)"),
                );
                FMI2_FATAL
            }
        }
    }))
    .unwrap_or(FMI2_FATAL)
}

/// What FMI 2.0 allows in its error state: the getters (their values for
/// debugging only), the status queries, fmi2SetDebugLogging, fmi2Reset
/// (which leaves it) and fmi2FreeInstance.
fn allowed_in_error(what: &str) -> bool {
    what.starts_with("fmi2Get") || matches!(what, "fmi2SetDebugLogging" | "fmi2Reset")
}

const TYPES_PLATFORM: &CStr = c"default";
const VERSION: &CStr = c"2.0";

#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    TYPES_PLATFORM.as_ptr()
}

#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    VERSION.as_ptr()
}

/// # Safety
/// `c` is an instance; `categories` holds `n` strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: fmi2Component,
    logging_on: fmi2Boolean,
    _n: usize,
    _categories: *const fmi2String,
) -> fmi2Status {
    with(c, "fmi2SetDebugLogging", |comp| {
        comp.logging_on = logging_on != 0;
        Ok(())
    })
}

/// The resources directory from FMI's `fmuResourceLocation` URI
/// (`file:///path/to/resources`, percent-encoded).
fn resources_dir(uri: &str) -> Result<PathBuf, String> {
    let rest = uri
        .strip_prefix("file:")
        .ok_or_else(|| format!("fmuResourceLocation `{uri}` is not a file URI"))?;
    // `file:///path`, `file://localhost/path` or `file:/path`.
    let path = match rest.strip_prefix("//") {
        Some(r) => r.strip_prefix("localhost").unwrap_or(r),
        None => rest,
    };
    if !path.starts_with('/') {
        return Err(format!(
            "fmuResourceLocation `{uri}` is not a local file URI"
        ));
    }
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).map_err(|e| e.to_string())?;
            let b = u8::from_str_radix(hex, 16)
                .map_err(|_| format!("fmuResourceLocation `{uri}`: bad escape %{hex}"))?;
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let s =
        String::from_utf8(out).map_err(|_| format!("fmuResourceLocation `{uri}` is not UTF-8"))?;
    Ok(PathBuf::from(s))
}

/// # Safety
/// FMI's: NUL-terminated strings, `functions` valid for the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: fmi2String,
    fmu_type: c_int,
    guid: fmi2String,
    resource_location: fmi2String,
    functions: *const fmi2CallbackFunctions,
    _visible: fmi2Boolean,
    logging_on: fmi2Boolean,
) -> fmi2Component {
    let r = catch_unwind(AssertUnwindSafe(|| {
        if functions.is_null() || instance_name.is_null() {
            return std::ptr::null_mut();
        }
        // SAFETY: non-NULL; the master's callbacks outlive the instance.
        let f = unsafe { &*functions };
        let text = |p: fmi2String| -> String {
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: a NUL-terminated string from the master.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        };
        let name = text(instance_name);
        let fail = |message: String| {
            if let Some(logger) = f.logger {
                let n = CString::new(name.as_str()).unwrap_or_default();
                let m = CString::new(message.replace('\0', " ")).unwrap_or_default();
                // SAFETY: as in `Component::log`.
                unsafe {
                    logger(
                        f.component_environment,
                        n.as_ptr(),
                        FMI2_ERROR,
                        c"logStatusError".as_ptr(),
                        c"%s".as_ptr(),
                        m.as_ptr(),
                    )
                };
            }
            std::ptr::null_mut()
        };
        if fmu_type != 1 {
            return fail(
                "fmi2Instantiate: this FMU is for co-simulation only (fmi2CoSimulation)".into(),
            );
        }
        let resources = match resources_dir(&text(resource_location)) {
            Ok(r) => r,
            Err(e) => return fail(format!("fmi2Instantiate: {e}")),
        };
        // A resources directory that is missing or is not this FMU's says
        // so (it was reported as a wrong GUID, the expected one empty).
        let guid_file = resources.join("guid");
        let expected = match std::fs::read_to_string(&guid_file) {
            Ok(g) => g,
            Err(e) => {
                return fail(format!(
                    "fmi2Instantiate: the resources at {} are not this FMU's: cannot read {}: {e}",
                    text(resource_location),
                    guid_file.display()
                ));
            }
        };
        if text(guid) != expected.trim() {
            return fail(format!(
                "fmi2Instantiate: GUID {} is not this FMU's ({})",
                text(guid),
                expected.trim()
            ));
        }
        match Instance::new(&name, &resources) {
            Ok(instance) => {
                let c = handles::insert(Component {
                    instance,
                    logger: f.logger,
                    environment: f.component_environment,
                    logging_on: logging_on != 0,
                });
                if c.is_null() {
                    return fail("fmi2Instantiate: too many live instances".into());
                }
                c
            }
            Err(e) => fail(format!("fmi2Instantiate: {e}")),
        }
    }));
    r.unwrap_or(std::ptr::null_mut())
}

/// Frees the instance (ending its run: the log writer joined first). A
/// handle already freed, or never an instance, is ignored: FMI gives this
/// function no status to refuse it with.
#[unsafe(no_mangle)]
pub extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    let _ = catch_unwind(AssertUnwindSafe(|| drop(handles::remove(c))));
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: fmi2Component,
    _tolerance_defined: fmi2Boolean,
    _tolerance: fmi2Real,
    start_time: fmi2Real,
    stop_time_defined: fmi2Boolean,
    stop_time: fmi2Real,
) -> fmi2Status {
    with(c, "fmi2SetupExperiment", |comp| {
        comp.instance
            .setup_experiment(start_time, (stop_time_defined != 0).then_some(stop_time))
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: fmi2Component) -> fmi2Status {
    with(c, "fmi2EnterInitializationMode", |comp| {
        comp.instance.enter_initialization()
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: fmi2Component) -> fmi2Status {
    with(c, "fmi2ExitInitializationMode", |comp| {
        comp.instance.exit_initialization()
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: fmi2Component) -> fmi2Status {
    with(c, "fmi2Terminate", |comp| comp.instance.terminate())
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: fmi2Component) -> fmi2Status {
    with(c, "fmi2Reset", |comp| comp.instance.reset())
}

mod handles;
mod stepping;
mod unsupported;
mod values;

pub use stepping::{same_point, whole_micros};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_locations_are_file_uris() {
        assert_eq!(
            resources_dir("file:///tmp/a%20b/resources").unwrap(),
            PathBuf::from("/tmp/a b/resources")
        );
        assert_eq!(
            resources_dir("file://localhost/x/resources").unwrap(),
            PathBuf::from("/x/resources")
        );
        assert_eq!(resources_dir("file:/x/r").unwrap(), PathBuf::from("/x/r"));
        assert!(resources_dir("http://x/resources").is_err());
        assert!(resources_dir("file://server/x").is_err());
    }
}
