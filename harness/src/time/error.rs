//! Configuration errors of the runtime.

/// A configuration the runtime refuses, with what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "cadence `{name}`: {value_s} s is not a whole number of microseconds; \
         nearest valid: {below_us} us or {above_us} us"
    )]
    NonIntegerPeriod {
        name: String,
        value_s: f64,
        below_us: u64,
        above_us: u64,
    },
    #[error(
        "cadence `{name}`: {period_us} us is not a multiple of the base tick of {tick_us} us; \
         nearest valid: {below_us} us or {above_us} us"
    )]
    NotMultipleOfTick {
        name: String,
        period_us: u64,
        tick_us: u64,
        below_us: u64,
        above_us: u64,
    },
    #[error("cadence `{name}`: the period must be positive, is {value}")]
    NonPositivePeriod { name: String, value: String },
    #[error("cadence `{name}` is defined twice")]
    DuplicateCadence { name: String },
    #[error("more than {max} cadences")]
    TooManyCadences { max: usize },
}
