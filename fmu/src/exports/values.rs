//! fmi2Get* and fmi2Set*: value references and arrays from the master.

use super::*;

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
                let items = vr
                    .iter()
                    .zip(vals.iter())
                    .map(|(r, $v)| (*r, $value))
                    .collect();
                comp.instance.set_all($kind, items)
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
        let mut items = Vec::with_capacity(vr.len());
        for (r, p) in vr.iter().zip(vals.iter()) {
            if p.is_null() {
                return Err(format!("value reference {r}: NULL string"));
            }
            // SAFETY: a NUL-terminated string from the master.
            let s = unsafe { CStr::from_ptr(*p) }
                .to_str()
                .map_err(|_| format!("value reference {r}: not UTF-8"))?;
            items.push((*r, Value::String(s.to_string())));
        }
        comp.instance.set_all(Kind::String, items)
    })
}
