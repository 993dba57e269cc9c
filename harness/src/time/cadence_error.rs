//! Errors of cadences: a period that is not whole microseconds, not a
//! multiple of the base tick, not positive; a cadence defined twice.

/// A cadence the runtime refuses, with what to change.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CadenceError {
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

impl CadenceError {
    /// The cadence the error is about (empty for a timeline with too many).
    pub fn cadence(&self) -> &str {
        match self {
            CadenceError::NonIntegerPeriod { name, .. }
            | CadenceError::NotMultipleOfTick { name, .. }
            | CadenceError::NonPositivePeriod { name, .. }
            | CadenceError::DuplicateCadence { name } => name,
            CadenceError::TooManyCadences { .. } => "",
        }
    }
}
