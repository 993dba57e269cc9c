//! The 34 functions of the FMI 2.0 co-simulation interface (the common
//! ones and the co-simulation ones). Each runs behind one panic boundary;
//! errors are logged through the master's logger with the instance's name
//! and returned as fmi2Error. What this FMU does not offer (FMU states,
//! directional derivatives, input derivatives, asynchronous steps) returns
//! fmi2Error with a logged message, as its modelDescription.xml says.
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use crate::instance::{Instance, Value};
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

/// `with` for a call whose success has more than one status.
fn with_status(
    c: fmi2Component,
    what: &str,
    f: impl FnOnce(&mut Component) -> Result<fmi2Status, String>,
) -> fmi2Status {
    if c.is_null() {
        return FMI2_ERROR;
    }
    // SAFETY: a non-NULL fmi2Component is one fmi2Instantiate returned and
    // fmi2FreeInstance has not freed (FMI's rule for masters).
    let comp = unsafe { &mut *c.cast::<Component>() };
    match catch_unwind(AssertUnwindSafe(|| f(comp))) {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => {
            comp.log(FMI2_ERROR, "logStatusError", &format!("{what}: {e}"));
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
        let expected = std::fs::read_to_string(resources.join("guid")).unwrap_or_default();
        if text(guid) != expected.trim() {
            return fail(format!(
                "fmi2Instantiate: GUID {} is not this FMU's ({})",
                text(guid),
                expected.trim()
            ));
        }
        match Instance::new(&name, &resources) {
            Ok(instance) => Box::into_raw(Box::new(Component {
                instance,
                logger: f.logger,
                environment: f.component_environment,
                logging_on: logging_on != 0,
            }))
            .cast(),
            Err(e) => fail(format!("fmi2Instantiate: {e}")),
        }
    }));
    r.unwrap_or(std::ptr::null_mut())
}

/// # Safety
/// `c` is an instance not freed before (or NULL).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: fmi2Component) {
    if c.is_null() {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: an instance from fmi2Instantiate, freed once (FMI's rule);
        // dropping it ends the run (the log writer joined first).
        drop(unsafe { Box::from_raw(c.cast::<Component>()) });
    }));
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: fmi2Component,
    _tolerance_defined: fmi2Boolean,
    _tolerance: fmi2Real,
    start_time: fmi2Real,
    _stop_time_defined: fmi2Boolean,
    _stop_time: fmi2Real,
) -> fmi2Status {
    with(c, "fmi2SetupExperiment", |_| {
        if start_time != 0.0 {
            return Err(format!("start time {start_time}: the scenario starts at 0"));
        }
        Ok(())
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

/// The slices of a get/set call.
///
/// # Safety
/// `vr` and `values` are valid for `n` elements (or `n` is 0).
unsafe fn slices<'a, T>(
    vr: *const fmi2ValueReference,
    n: usize,
    values: *mut T,
) -> Result<(&'a [u32], &'a mut [T]), String> {
    if n == 0 {
        return Ok((&[], &mut []));
    }
    if vr.is_null() || values.is_null() {
        return Err("NULL value references or values".into());
    }
    // SAFETY: non-NULL and valid for `n` elements (the master's promise).
    Ok(unsafe {
        (
            std::slice::from_raw_parts(vr, n),
            std::slice::from_raw_parts_mut(values, n),
        )
    })
}

macro_rules! getter {
    ($name:ident, $t:ty, $kind:expr, $pat:pat => $out:expr) => {
        /// # Safety
        /// `vr` and `value` valid for `n` elements.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            n: usize,
            value: *mut $t,
        ) -> fmi2Status {
            with(c, stringify!($name), |comp| {
                // SAFETY: the master's promise on the arrays.
                let (vr, out) = unsafe { slices(vr, n, value) }?;
                for (r, o) in vr.iter().zip(out.iter_mut()) {
                    match comp.instance.get(*r, $kind)? {
                        $pat => *o = $out,
                        _ => unreachable!("get returns the kind asked for"),
                    }
                }
                Ok(())
            })
        }
    };
}

/// The read-only slices of a set call.
///
/// # Safety
/// `vr` and `values` are valid for `n` elements (or `n` is 0).
unsafe fn slices_ref<'a, T>(
    vr: *const fmi2ValueReference,
    n: usize,
    values: *const T,
) -> Result<(&'a [u32], &'a [T]), String> {
    if n == 0 {
        return Ok((&[], &[]));
    }
    if vr.is_null() || values.is_null() {
        return Err("NULL value references or values".into());
    }
    // SAFETY: non-NULL and valid for `n` elements (the master's promise).
    Ok(unsafe {
        (
            std::slice::from_raw_parts(vr, n),
            std::slice::from_raw_parts(values, n),
        )
    })
}

macro_rules! setter {
    ($name:ident, $t:ty, $kind:expr, $v:ident => $value:expr) => {
        /// # Safety
        /// `vr` and `value` valid for `n` elements.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            c: fmi2Component,
            vr: *const fmi2ValueReference,
            n: usize,
            value: *const $t,
        ) -> fmi2Status {
            with(c, stringify!($name), |comp| {
                // SAFETY: the master's promise on the arrays (only read).
                let (vr, vals) = unsafe { slices_ref(vr, n, value) }?;
                for (r, $v) in vr.iter().zip(vals.iter()) {
                    comp.instance.set(*r, $kind, $value)?;
                }
                Ok(())
            })
        }
    };
}

getter!(fmi2GetReal, fmi2Real, Kind::Real, Value::Real(x) => x);
getter!(fmi2GetInteger, fmi2Integer, Kind::Integer, Value::Integer(x) => x);
getter!(fmi2GetBoolean, fmi2Boolean, Kind::Boolean, Value::Boolean(x) => c_int::from(x));
setter!(fmi2SetReal, fmi2Real, Kind::Real, v => Value::Real(*v));
setter!(fmi2SetInteger, fmi2Integer, Kind::Integer, v => Value::Integer(*v));
setter!(fmi2SetBoolean, fmi2Boolean, Kind::Boolean, v => Value::Boolean(*v != 0));

/// # Safety
/// `vr` and `value` valid for `n` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetString(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    n: usize,
    value: *mut fmi2String,
) -> fmi2Status {
    with(c, "fmi2GetString", |comp| {
        // SAFETY: the master's promise on the arrays.
        let (vr, out) = unsafe { slices(vr, n, value) }?;
        // The strings stay valid until the next call on this instance.
        comp.instance.strings.clear();
        for (r, o) in vr.iter().zip(out.iter_mut()) {
            let Value::String(s) = comp.instance.get(*r, Kind::String)? else {
                unreachable!("get returns the kind asked for")
            };
            let s = CString::new(s).map_err(|_| "a string with a NUL".to_string())?;
            *o = s.as_ptr();
            comp.instance.strings.push(s);
        }
        Ok(())
    })
}

/// # Safety
/// `vr` and `value` valid for `n` elements, each a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetString(
    c: fmi2Component,
    vr: *const fmi2ValueReference,
    n: usize,
    value: *const fmi2String,
) -> fmi2Status {
    with(c, "fmi2SetString", |comp| {
        // SAFETY: the master's promise on the arrays (only read).
        let (vr, vals) = unsafe { slices_ref(vr, n, value) }?;
        for (r, p) in vr.iter().zip(vals.iter()) {
            if p.is_null() {
                return Err(format!("value reference {r}: NULL string"));
            }
            // SAFETY: a NUL-terminated string from the master.
            let s = unsafe { CStr::from_ptr(*p) }
                .to_str()
                .map_err(|_| format!("value reference {r}: not UTF-8"))?;
            comp.instance
                .set(*r, Kind::String, Value::String(s.to_string()))?;
        }
        Ok(())
    })
}

/// A status this FMU cannot give: fmi2Discard (FMI 2.0: the slave cannot
/// return the status asked for), the instance stays usable; logged only
/// with logging on.
fn no_status(c: fmi2Component, what: &str) -> fmi2Status {
    if c.is_null() {
        return FMI2_ERROR;
    }
    // SAFETY: as in `with_status`.
    let comp = unsafe { &*c.cast::<Component>() };
    if comp.logging_on {
        comp.log(
            FMI2_DISCARD,
            "logStatusError",
            &format!("{what}: no such status here"),
        );
    }
    FMI2_DISCARD
}

/// Refused: this FMU does not offer what `what` asks.
fn unsupported(c: fmi2Component, what: &str) -> fmi2Status {
    with(c, what, |_| {
        Err("not supported by this FMU (see modelDescription.xml)".into())
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(c: fmi2Component, _s: *mut *mut c_void) -> fmi2Status {
    unsupported(c, "fmi2GetFMUstate")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(c: fmi2Component, _s: *mut c_void) -> fmi2Status {
    unsupported(c, "fmi2SetFMUstate")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: fmi2Component, _s: *mut *mut c_void) -> fmi2Status {
    unsupported(c, "fmi2FreeFMUstate")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: fmi2Component,
    _s: *mut c_void,
    _size: *mut usize,
) -> fmi2Status {
    unsupported(c, "fmi2SerializedFMUstateSize")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: fmi2Component,
    _s: *mut c_void,
    _bytes: *mut u8,
    _size: usize,
) -> fmi2Status {
    unsupported(c, "fmi2SerializeFMUstate")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: fmi2Component,
    _bytes: *const u8,
    _size: usize,
    _s: *mut *mut c_void,
) -> fmi2Status {
    unsupported(c, "fmi2DeSerializeFMUstate")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: fmi2Component,
    _unknowns: *const fmi2ValueReference,
    _n_unknowns: usize,
    _knowns: *const fmi2ValueReference,
    _n_knowns: usize,
    _dv_known: *const fmi2Real,
    _dv_unknown: *mut fmi2Real,
) -> fmi2Status {
    unsupported(c, "fmi2GetDirectionalDerivative")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: fmi2Component,
    _vr: *const fmi2ValueReference,
    _n: usize,
    _order: *const fmi2Integer,
    _value: *const fmi2Real,
) -> fmi2Status {
    unsupported(c, "fmi2SetRealInputDerivatives")
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: fmi2Component,
    _vr: *const fmi2ValueReference,
    _n: usize,
    _order: *const fmi2Integer,
    _value: *mut fmi2Real,
) -> fmi2Status {
    unsupported(c, "fmi2GetRealOutputDerivatives")
}

/// A communication step as integer microseconds, if it is one within a
/// nanosecond (FMI's times are doubles; the harness's are integer µs).
pub fn whole_micros(t_s: f64) -> Option<u64> {
    let us = t_s * 1e6;
    let r = us.round();
    (t_s.is_finite() && r >= 0.0 && (us - r).abs() <= 1e-3 && r < 1.8e19).then_some(r as u64)
}

/// Whether a master's communication point `t_s` is the instance's time
/// `now_us`: within a nanosecond, or a relative 1e-9 for long runs (a
/// master that accumulates `t += h` drifts by about 17 ns over 10^6 steps
/// of 1 ms). The instance steps from its own integer time.
pub fn same_point(t_s: f64, now_us: u64) -> bool {
    let now = now_us as f64;
    t_s.is_finite() && (t_s * 1e6 - now).abs() <= 1e-3f64.max(now * 1e-9)
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(
    c: fmi2Component,
    current: fmi2Real,
    step: fmi2Real,
    _no_set_prior: fmi2Boolean,
) -> fmi2Status {
    with_status(c, "fmi2DoStep", |comp| {
        let t = comp.instance.now_us();
        if !same_point(current, t) {
            return Err(format!(
                "the communication point {current} s is not the instance's time, {} s",
                comp.instance.now_s()
            ));
        }
        let h = whole_micros(step).ok_or_else(|| {
            format!("the communication step {step} s is not a whole number of microseconds")
        })?;
        if comp.instance.step(t, h)? {
            Ok(FMI2_OK)
        } else {
            // Stepped to the scenario's end, short of the communication
            // point: fmi2LastSuccessfulTime and fmi2Terminated tell where.
            comp.log(
                FMI2_DISCARD,
                "logStatusError",
                &format!(
                    "fmi2DoStep: the scenario ends at {} s, before {} s",
                    comp.instance.now_s(),
                    current + step
                ),
            );
            Ok(FMI2_DISCARD)
        }
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(c: fmi2Component) -> fmi2Status {
    unsupported(c, "fmi2CancelStep (steps are never asynchronous)")
}

/// # Safety
/// `c` is an instance; `value` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(
    c: fmi2Component,
    _kind: c_int,
    _value: *mut fmi2Status,
) -> fmi2Status {
    no_status(c, "fmi2GetStatus (steps are never asynchronous)")
}

/// # Safety
/// `c` is an instance; `value` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(
    c: fmi2Component,
    kind: c_int,
    value: *mut fmi2Real,
) -> fmi2Status {
    // fmi2LastSuccessfulTime (2): the communication point reached.
    if kind != 2 {
        return no_status(c, "fmi2GetRealStatus");
    }
    with(c, "fmi2GetRealStatus", |comp| {
        if value.is_null() {
            return Err("NULL value".into());
        }
        // SAFETY: non-NULL and writable (the master's promise).
        unsafe { *value = comp.instance.now_s() };
        Ok(())
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: fmi2Component,
    _kind: c_int,
    _value: *mut fmi2Integer,
) -> fmi2Status {
    no_status(c, "fmi2GetIntegerStatus")
}

/// # Safety
/// `c` is an instance; `value` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: fmi2Component,
    kind: c_int,
    value: *mut fmi2Boolean,
) -> fmi2Status {
    // fmi2Terminated (3): the scenario has reached its end.
    if kind != 3 {
        return no_status(c, "fmi2GetBooleanStatus");
    }
    with(c, "fmi2GetBooleanStatus", |comp| {
        if value.is_null() {
            return Err("NULL value".into());
        }
        // SAFETY: non-NULL and writable (the master's promise).
        unsafe { *value = c_int::from(comp.instance.at_end()) };
        Ok(())
    })
}

/// # Safety
/// `c` is an instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: fmi2Component,
    _kind: c_int,
    _value: *mut fmi2String,
) -> fmi2Status {
    no_status(c, "fmi2GetStringStatus")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn communication_steps_must_be_whole_microseconds() {
        assert_eq!(whole_micros(0.001), Some(1000));
        assert_eq!(whole_micros(0.1 + 0.2), Some(300_000));
        assert_eq!(whole_micros(1234.567891), Some(1_234_567_891));
        assert_eq!(whole_micros(0.0000005), None);
        assert_eq!(whole_micros(0.000_001_005), None, "5 ns off");
        assert_eq!(whole_micros(-0.001), None);
        assert_eq!(whole_micros(f64::NAN), None);
    }

    #[test]
    fn a_masters_accumulated_time_is_the_instances() {
        // t += 0.001 a million times: 16.7 ns off 1000 s.
        let t = (0..1_000_000).fold(0.0f64, |t, _| t + 0.001);
        assert!(same_point(t, 1_000_000_000));
        assert!(!same_point(t, 999_999_000));
        assert!(same_point(0.003, 3000));
        assert!(!same_point(0.003, 3001));
        assert!(!same_point(f64::NAN, 0));
    }

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
