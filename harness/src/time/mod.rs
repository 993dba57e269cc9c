//! Time: integer microseconds everywhere, and cadences that are exact; the
//! timeline of boundaries and the stage order at each; the named random
//! streams (all that makes a run repeat to the bit).
//!
//! - [`timeline`], [`stage`]: boundaries in time order, what is due at each,
//!   and the canonical order of the stages.
//! - [`rng`], [`ziggurat`]: streams derived from one seed by name.
//!
//!
//! A cadence may be given in seconds or in microseconds. Seconds must name a
//! whole number of microseconds, and every cadence must be a whole multiple of
//! the base tick; otherwise [`CadenceError`] says which cadence and the nearest
//! valid values. A rate is never silently changed.

use std::fmt;
use std::ops::{Add, Sub};

mod cadence_error;
pub mod rng;
pub mod stage;
pub mod timeline;
pub mod ziggurat;

pub use cadence_error::CadenceError;

/// A time or duration in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Micros(pub u64);

impl crate::persist::Persist for Micros {
    fn save(&self, w: &mut Vec<u8>) {
        self.0.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        self.0.load(r)
    }
}

impl Micros {
    pub const ZERO: Micros = Micros(0);

    pub fn as_u64(self) -> u64 {
        self.0
    }

    /// Seconds, for physics and display only (never for control flow).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }

    /// The first multiple of `period` strictly after `self`.
    pub fn next_multiple_after(self, period: Micros) -> Micros {
        Micros((self.0 / period.0 + 1) * period.0)
    }

    pub fn is_multiple_of(self, period: Micros) -> bool {
        self.0.is_multiple_of(period.0)
    }
}

impl Add for Micros {
    type Output = Micros;
    fn add(self, o: Micros) -> Micros {
        Micros(self.0 + o.0)
    }
}

impl Sub for Micros {
    type Output = Micros;
    fn sub(self, o: Micros) -> Micros {
        Micros(self.0 - o.0)
    }
}

impl fmt::Display for Micros {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} us", self.0)
    }
}

/// Relative slack when deciding that `seconds * 1e6` is a whole number: the
/// decimal a user wrote (0.004) is not exact in binary, and its product with
/// 1e6 may land an ulp or so away from the integer.
const INTEGER_SLACK: f64 = 1e-9;

/// Whole microseconds in `value_s` seconds, or the two nearest whole values.
pub fn micros_from_secs(name: &str, value_s: f64) -> Result<Micros, CadenceError> {
    if !(value_s.is_finite() && value_s > 0.0) {
        return Err(CadenceError::NonPositivePeriod {
            name: name.to_string(),
            value: format!("{value_s} s"),
        });
    }
    let us = value_s * 1e6;
    let nearest = us.round();
    if (us - nearest).abs() <= INTEGER_SLACK * nearest.max(1.0) && nearest >= 1.0 {
        return Ok(Micros(nearest as u64));
    }
    Err(CadenceError::NonIntegerPeriod {
        name: name.to_string(),
        value_s,
        below_us: (us.floor() as u64).max(1),
        above_us: us.ceil() as u64,
    })
}

/// A named periodic activity of the runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cadence {
    pub name: String,
    pub period: Micros,
}

impl Cadence {
    /// A cadence of `period_us`, which must be a positive multiple of `tick`.
    pub fn from_micros(name: &str, period_us: u64, tick: Micros) -> Result<Cadence, CadenceError> {
        if period_us == 0 {
            return Err(CadenceError::NonPositivePeriod {
                name: name.to_string(),
                value: "0 us".into(),
            });
        }
        if !period_us.is_multiple_of(tick.0) {
            let below = period_us / tick.0 * tick.0;
            return Err(CadenceError::NotMultipleOfTick {
                name: name.to_string(),
                period_us,
                tick_us: tick.0,
                below_us: below.max(tick.0),
                above_us: below + tick.0,
            });
        }
        Ok(Cadence {
            name: name.to_string(),
            period: Micros(period_us),
        })
    }

    /// A cadence of `period_s` seconds (see [`micros_from_secs`]).
    ///
    /// A period that is not whole microseconds is refused with the nearest
    /// periods that are valid here: multiples of the base tick.
    pub fn from_secs(name: &str, period_s: f64, tick: Micros) -> Result<Cadence, CadenceError> {
        let us = match micros_from_secs(name, period_s) {
            Ok(us) => us,
            Err(CadenceError::NonIntegerPeriod { name, value_s, .. }) => {
                let ticks = value_s * 1e6 / tick.0 as f64;
                return Err(CadenceError::NonIntegerPeriod {
                    name,
                    value_s,
                    below_us: (ticks.floor() as u64).max(1) * tick.0,
                    above_us: (ticks.ceil() as u64).max(1) * tick.0,
                });
            }
            Err(e) => return Err(e),
        };
        Cadence::from_micros(name, us.0, tick)
    }

    /// A cadence of `rate_hz`, which must give an exact period.
    pub fn from_hz(name: &str, rate_hz: f64, tick: Micros) -> Result<Cadence, CadenceError> {
        if !(rate_hz.is_finite() && rate_hz > 0.0) {
            return Err(CadenceError::NonPositivePeriod {
                name: name.to_string(),
                value: format!("{rate_hz} Hz"),
            });
        }
        Cadence::from_secs(name, 1.0 / rate_hz, tick)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Micros = Micros(1000);

    #[test]
    fn exact_decimal_seconds_become_whole_microseconds() {
        assert_eq!(micros_from_secs("autopilot", 0.004).unwrap(), Micros(4000));
        assert_eq!(micros_from_secs("log", 0.01).unwrap(), Micros(10_000));
        assert_eq!(micros_from_secs("gps", 0.2).unwrap(), Micros(200_000));
        assert_eq!(micros_from_secs("x", 1e-6).unwrap(), Micros(1));
        assert_eq!(
            micros_from_secs("hour", 3600.0).unwrap(),
            Micros(3_600_000_000)
        );
        assert_eq!(
            Cadence::from_hz("imu", 250.0, TICK).unwrap().period,
            Micros(4000)
        );
    }

    #[test]
    fn a_rate_that_is_not_whole_microseconds_is_an_error_with_the_nearest_values() {
        // 120 Hz is 8333.33 us: never silently 8333.
        let err = Cadence::from_hz("autopilot", 120.0, Micros(1)).unwrap_err();
        assert!(
            matches!(&err, CadenceError::NonIntegerPeriod { name, below_us: 8333, above_us: 8334, .. } if name == "autopilot"),
            "{err:?}"
        );
        assert!(err.to_string().starts_with("cadence `autopilot`: 0.008333333333333333 s is not a whole number of microseconds; nearest valid: 8333 us or 8334 us"), "{err}");
        let err = micros_from_secs("wind", 0.0000005).unwrap_err();
        assert!(matches!(
            err,
            CadenceError::NonIntegerPeriod {
                below_us: 1,
                above_us: 1,
                ..
            }
        ));
    }

    /// The suggestions are valid against the tick: 333 Hz at a 1 ms tick
    /// suggests 3000 us and 4000 us, not 3003 us and 3004 us.
    #[test]
    fn suggestions_for_an_inexact_rate_are_multiples_of_the_tick() {
        let err = Cadence::from_hz("imu", 333.0, TICK).unwrap_err();
        assert!(
            matches!(
                &err,
                CadenceError::NonIntegerPeriod {
                    below_us: 3000,
                    above_us: 4000,
                    ..
                }
            ),
            "{err:?}"
        );
        for us in [3000, 4000] {
            assert!(Cadence::from_micros("imu", us, TICK).is_ok());
        }
    }

    #[test]
    fn a_period_that_is_not_a_multiple_of_the_tick_is_an_error_with_the_nearest_multiples() {
        let err = Cadence::from_secs("baro", 0.0125, TICK).unwrap_err();
        assert_eq!(
            err,
            CadenceError::NotMultipleOfTick {
                name: "baro".into(),
                period_us: 12_500,
                tick_us: 1000,
                below_us: 12_000,
                above_us: 13_000
            }
        );
        assert_eq!(
            err.to_string(),
            "cadence `baro`: 12500 us is not a multiple of the base tick of 1000 us; nearest valid: 12000 us or 13000 us"
        );
        let err = Cadence::from_micros("fast", 500, TICK).unwrap_err();
        assert!(matches!(
            err,
            CadenceError::NotMultipleOfTick {
                below_us: 1000,
                above_us: 1000,
                ..
            }
        ));
    }

    #[test]
    fn non_positive_periods_are_errors() {
        for v in [0.0, -0.004, f64::NAN, f64::INFINITY] {
            assert!(
                matches!(
                    micros_from_secs("x", v),
                    Err(CadenceError::NonPositivePeriod { .. })
                ),
                "{v}"
            );
        }
        assert!(matches!(
            Cadence::from_micros("x", 0, TICK),
            Err(CadenceError::NonPositivePeriod { .. })
        ));
        assert!(matches!(
            Cadence::from_hz("x", 0.0, TICK),
            Err(CadenceError::NonPositivePeriod { .. })
        ));
    }

    #[test]
    fn next_multiple_is_strictly_after() {
        assert_eq!(Micros(0).next_multiple_after(Micros(4000)), Micros(4000));
        assert_eq!(Micros(3999).next_multiple_after(Micros(4000)), Micros(4000));
        assert_eq!(Micros(4000).next_multiple_after(Micros(4000)), Micros(8000));
    }
}
