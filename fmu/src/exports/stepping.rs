//! fmi2DoStep in integer microseconds, and the co-simulation status
//! queries.

use super::unsupported::{no_status, unsupported};
use super::*;

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
}
