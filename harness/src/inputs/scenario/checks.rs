//! Number checks with their key paths, and the bounds every scenario value
//! must respect (finite, in a physical range; durations and delays bounded
//! so that no input can make memory or run time explode).

use crate::Micros;
use crate::time::micros_from_secs;

/// A key path and what is wrong with its value.
pub(super) type KeyError = (String, String);

/// Longest run: 10^7 s (about 116 days).
pub const MAX_DURATION_S: f64 = 1e7;
/// Longest sensor or estimator delay: 10 s (the engine keeps a history that
/// long at the finest cadence).
pub const MAX_DELAY_US: u64 = 10_000_000;
/// Largest base tick: 1 s.
pub const MAX_TICK_US: u64 = 1_000_000;
/// Largest start offset from the origin, per axis: 1,000 km.
pub const MAX_START_OFFSET_M: f64 = 1e6;
/// Largest wind speed, mean or gust, per axis: 100 m/s.
pub const MAX_WIND_MPS: f64 = 100.0;
/// Largest sensor bias step, in the sensor's units.
pub const MAX_SENSOR_BIAS: f64 = 1e6;
/// Largest sensor noise factor.
pub const MAX_NOISE_SCALE: f64 = 1e3;

/// A number as a person reads it: plain, or in exponent form when very
/// large or small (`1e300`, not 301 digits).
pub(super) fn num(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `v` when finite and in `[lo, hi]`; else an error naming `key`, the range
/// and the value.
pub(super) fn within(key: &str, v: f64, lo: f64, hi: f64) -> Result<f64, KeyError> {
    if v.is_finite() && v >= lo && v <= hi {
        Ok(v)
    } else if !v.is_finite() {
        Err((key.to_string(), format!("must be a finite number, is {v}")))
    } else {
        Err((
            key.to_string(),
            format!("must be in [{}, {}], is {}", num(lo), num(hi), num(v)),
        ))
    }
}

/// `v` when finite, > 0 and at most `max`.
pub(super) fn positive(key: &str, v: f64, max: f64) -> Result<f64, KeyError> {
    if v.is_finite() && v > 0.0 && v <= max {
        Ok(v)
    } else if !v.is_finite() {
        Err((key.to_string(), format!("must be a finite number, is {v}")))
    } else {
        Err((
            key.to_string(),
            format!("must be positive and at most {}, is {}", num(max), num(v)),
        ))
    }
}

/// Every element of `v` within `[lo, hi]`; errors name the element.
pub(super) fn each_within<const N: usize>(
    key: &str,
    v: [f64; N],
    lo: f64,
    hi: f64,
) -> Result<[f64; N], KeyError> {
    for (i, x) in v.iter().enumerate() {
        within(&format!("{key}[{i}]"), *x, lo, hi)?;
    }
    Ok(v)
}

/// A duration in seconds, 0 or a whole number of microseconds up to
/// `max_s`.
pub(super) fn duration(key: &str, s: f64, max_s: f64) -> Result<Micros, KeyError> {
    within(key, s, 0.0, max_s)?;
    if s == 0.0 {
        return Ok(Micros(0));
    }
    micros_from_secs(key, s).map_err(|e| (key.to_string(), e.to_string()))
}

/// A delay in microseconds of at most [`MAX_DELAY_US`].
pub(super) fn delay(key: &str, us: u64) -> Result<Micros, KeyError> {
    if us > MAX_DELAY_US {
        return Err((
            key.to_string(),
            format!("must be at most {MAX_DELAY_US} us (10 s), is {us}"),
        ));
    }
    Ok(Micros(us))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_key_the_range_and_the_value() {
        assert_eq!(
            within("a.b", 2.0, 0.0, 1.0).unwrap_err().1,
            "must be in [0, 1], is 2"
        );
        assert_eq!(
            within("a.b", f64::NAN, 0.0, 1.0).unwrap_err(),
            (
                "a.b".to_string(),
                "must be a finite number, is NaN".to_string()
            )
        );
        assert_eq!(
            each_within("w", [0.0, f64::INFINITY, 0.0], -1.0, 1.0)
                .unwrap_err()
                .0,
            "w[1]"
        );
        assert_eq!(duration("d", 0.0, 10.0), Ok(Micros(0)));
        assert_eq!(duration("d", 1.5, 10.0), Ok(Micros(1_500_000)));
        assert_eq!(
            duration("d", 1e300, 10.0).unwrap_err().1,
            "must be in [0, 10], is 1e300"
        );
        assert_eq!(
            delay("g", MAX_DELAY_US + 1).unwrap_err().1,
            "must be at most 10000000 us (10 s), is 10000001"
        );
    }
}
