//! What this FMU does not offer (FMU states, directional and input
//! derivatives), and statuses it cannot give.

use super::*;

/// A status this FMU cannot give: fmi2Discard (FMI 2.0: the slave cannot
/// return the status asked for), the instance stays usable; logged only
/// with logging on.
pub(super) fn no_status(c: fmi2Component, what: &str) -> fmi2Status {
    with_status(c, what, |comp| {
        if comp.logging_on {
            comp.log(
                FMI2_DISCARD,
                "logStatusError",
                &format!("{what}: no such status here"),
            );
        }
        Ok(FMI2_DISCARD)
    })
}

/// Refused: this FMU does not offer what `what` asks.
pub(super) fn unsupported(c: fmi2Component, what: &str) -> fmi2Status {
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
