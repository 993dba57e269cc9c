//! Integrators that step one interval `[t, t + dt]` of integer time with
//! inputs held, in preallocated buffers.
//!
//! - Fixed step: [`Method::Euler`], [`Method::Rk4`] (substeps of at most
//!   `Options::max_step_ticks`).
//! - Adaptive: [`Method::Bs32`] (Bogacki–Shampine 3(2)) and [`Method::Dp54`]
//!   (Dormand–Prince 5(4)), both with FSAL reuse inside an interval, a PI
//!   step-size controller and a scaled max error norm per state group
//!   ([`ErrorGroup`]; attitude error as the quaternion geodesic angle).
//!
//! Time is integer ticks of `Options::tick_ns` nanoseconds (1000 by default:
//! microseconds). Every substep is a whole number of ticks; the last substep
//! of an interval ends exactly at its end, and a remainder shorter than twice
//! the proposed step is split into two equal halves rather than leaving a
//! one-tick tail. No floating-point time drives the loop.

mod adaptive;
mod fixed;
mod norm;
mod tableau;

pub use norm::{ErrorGroup, GroupKind};

use thiserror::Error;

/// A system of ODEs `dx/dt = f(t, x)` with inputs held by the implementor.
pub trait System {
    /// Number of states.
    fn dim(&self) -> usize;
    /// Writes `f(t, x)` into `dx` (`t` in seconds since the interval start).
    /// Must be pure: same `(t, x)`, same bits.
    fn rhs(&self, t: f64, x: &[f64], dx: &mut [f64]);
    /// Groups of states measured by the adaptive error norm. States in no
    /// group do not limit the step. Default: all states, atol = rtol = 1e-6.
    fn error_groups(&self) -> &[ErrorGroup] {
        &[]
    }
    /// Projects an accepted state back onto its manifold (e.g. renormalises
    /// quaternions). Default: nothing.
    fn project(&self, _x: &mut [f64]) {}
}

/// Which scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Euler,
    Rk4,
    /// Bogacki–Shampine 3(2), FSAL.
    Bs32,
    /// Dormand–Prince 5(4), FSAL.
    Dp54,
}

impl Method {
    pub fn is_adaptive(self) -> bool {
        matches!(self, Method::Bs32 | Method::Dp54)
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Euler => "euler",
            Method::Rk4 => "rk4",
            Method::Bs32 => "bs32",
            Method::Dp54 => "dp54",
        }
    }

    /// Parses `euler`, `rk4`, `bs32`, `dp54`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Method::Euler, Method::Rk4, Method::Bs32, Method::Dp54]
            .into_iter()
            .find(|m| m.name() == name)
    }
}

/// What an adaptive integrator does with its step size at the start of an
/// interval.
///
/// Measured on a manoeuvring flight in 4 ms intervals (tests in
/// `plant/tests/it/step_start.rs`): on the built-in Iris DP5 needs 7.0 RHS
/// evaluations per interval and BS3 4.0, with either; with stiff rotors
/// (4 ms) in the error norm DP5 needs 7.1 with `Restart` and 11.5 with
/// `Carry` (a carried step just below the interval splits it into two
/// substeps). Neither wins everywhere (with 2 ms rotors `Carry` is cheaper);
/// `Restart` is the default, never worse on the built-in airframes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepStart {
    /// Start from the step the controller proposed at the end of the
    /// previous interval.
    Carry,
    /// Start every interval by trying the whole interval (capped by
    /// `max_step_ticks`); the default.
    Restart,
}

/// Integrator options.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Length of one tick in nanoseconds (1000: microsecond quantization).
    pub tick_ns: u64,
    /// Fixed methods: the substep. Adaptive methods: the largest substep.
    pub max_step_ticks: u64,
    /// Adaptive: the smallest substep; a rejected step at this size is an error.
    pub min_step_ticks: u64,
    /// Adaptive: the most substeps (accepted + rejected) in one interval.
    pub max_substeps: u32,
    /// Adaptive: step size at the start of an interval.
    pub step_start: StepStart,
    /// PI controller: safety factor and bounds of the step ratio.
    pub safety: f64,
    pub fac_min: f64,
    pub fac_max: f64,
    /// PI controller: weight of the previous error (0 gives an I controller).
    pub beta: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tick_ns: 1000,
            max_step_ticks: 1000,
            min_step_ticks: 1,
            max_substeps: 100_000,
            step_start: StepStart::Restart,
            safety: 0.9,
            fac_min: 0.2,
            fac_max: 5.0,
            beta: 0.04,
        }
    }
}

/// Work counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    pub rhs_evals: u64,
    pub accepted: u64,
    pub rejected: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.rhs_evals += o.rhs_evals;
        self.accepted += o.accepted;
        self.rejected += o.rejected;
    }
}

/// Why an interval could not be integrated. Each carries the time (in
/// ticks) and the state at which it happened.
#[derive(Debug, Clone, Error, PartialEq)]
pub enum IntegratorError {
    #[error(
        "step size fell to the minimum of {min_step_ticks} tick(s) at t = {t_ticks} with error norm {error_norm:.3e}; state {state:?}"
    )]
    StepTooSmall {
        t_ticks: u64,
        min_step_ticks: u64,
        error_norm: f64,
        state: Vec<f64>,
    },
    #[error(
        "more than {max_substeps} substeps in the interval ending at t = {end_ticks} (reached t = {t_ticks}); state {state:?}"
    )]
    TooManySubsteps {
        t_ticks: u64,
        end_ticks: u64,
        max_substeps: u32,
        state: Vec<f64>,
    },
    #[error("state {index} became non-finite at t = {t_ticks}; state {state:?}")]
    NonFinite {
        t_ticks: u64,
        index: usize,
        state: Vec<f64>,
    },
    #[error("state has {found} entries, the system has {expected}")]
    DimensionMismatch { expected: usize, found: usize },
    #[error("invalid integrator options: {reason}")]
    InvalidOptions { reason: String },
}

/// An integrator with its buffers, sized for one system dimension.
#[derive(Debug, Clone)]
pub struct Integrator {
    method: Method,
    opts: Options,
    dim: usize,
    /// Stage derivatives (7 for DP5) and work vectors.
    k: Vec<Vec<f64>>,
    tmp: Vec<f64>,
    x_new: Vec<f64>,
    err: Vec<f64>,
    /// Adaptive: the step proposed at the end of the last interval.
    h_carry: Option<u64>,
    /// Adaptive: previous accepted error norm (PI controller memory).
    err_prev: f64,
    total: Stats,
}

impl Integrator {
    /// Allocates every buffer for systems of dimension `dim`.
    pub fn new(method: Method, dim: usize, opts: Options) -> Result<Self, IntegratorError> {
        let bad = |reason: &str| {
            Err(IntegratorError::InvalidOptions {
                reason: reason.into(),
            })
        };
        if opts.tick_ns == 0 {
            return bad("tick_ns must be positive");
        }
        if opts.max_step_ticks == 0 {
            return bad("max_step_ticks must be positive");
        }
        if opts.min_step_ticks == 0 || opts.min_step_ticks > opts.max_step_ticks {
            return bad("min_step_ticks must be in 1..=max_step_ticks");
        }
        if opts.max_substeps == 0 {
            return bad("max_substeps must be positive");
        }
        if !(opts.safety > 0.0
            && opts.safety <= 1.0
            && opts.fac_min > 0.0
            && opts.fac_min < 1.0
            && opts.fac_max > 1.0)
        {
            return bad("need 0 < safety <= 1, 0 < fac_min < 1 < fac_max");
        }
        let stages = match method {
            Method::Euler => 1,
            Method::Rk4 => 4,
            Method::Bs32 => 4,
            Method::Dp54 => 7,
        };
        Ok(Integrator {
            method,
            opts,
            dim,
            k: vec![vec![0.0; dim]; stages],
            tmp: vec![0.0; dim],
            x_new: vec![0.0; dim],
            err: vec![0.0; dim],
            h_carry: None,
            err_prev: 1e-4,
            total: Stats::default(),
        })
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Work done since construction.
    pub fn total_stats(&self) -> Stats {
        self.total
    }

    /// What the integrator carries from one interval to the next: the
    /// adaptive step proposed, the controller's last error norm, and the
    /// work counted so far (the rest is scratch).
    pub fn memory(&self) -> (Option<u64>, f64, Stats) {
        (self.h_carry, self.err_prev, self.total)
    }

    /// Continues from another integrator's [`Integrator::memory`].
    pub fn set_memory(&mut self, (h_carry, err_prev, total): (Option<u64>, f64, Stats)) {
        self.h_carry = h_carry;
        self.err_prev = err_prev;
        self.total = total;
    }

    /// Forgets the carried step size and controller memory.
    pub fn reset(&mut self) {
        self.h_carry = None;
        self.err_prev = 1e-4;
    }

    /// Integrates `x` from `t0_ticks` over `dt_ticks` with the system's
    /// inputs held; returns the work of this interval. On error `x` holds
    /// the last accepted state.
    pub fn step_interval<S: System + ?Sized>(
        &mut self,
        sys: &S,
        t0_ticks: u64,
        dt_ticks: u64,
        x: &mut [f64],
    ) -> Result<Stats, IntegratorError> {
        if x.len() != self.dim || sys.dim() != self.dim {
            return Err(IntegratorError::DimensionMismatch {
                expected: self.dim,
                found: if x.len() != self.dim {
                    x.len()
                } else {
                    sys.dim()
                },
            });
        }
        let stats = if self.method.is_adaptive() {
            self.adaptive_interval(sys, t0_ticks, dt_ticks, x)
        } else {
            self.fixed_interval(sys, t0_ticks, dt_ticks, x)
        }?;
        self.total.add(&stats);
        Ok(stats)
    }

    fn seconds(&self, ticks: u64) -> f64 {
        ticks as f64 * self.opts.tick_ns as f64 * 1e-9
    }
}

/// Index of the first non-finite entry. The common all-finite case is one
/// pass without early exits.
fn first_non_finite(x: &[f64]) -> Option<usize> {
    if x.iter().fold(true, |ok, v| ok & v.is_finite()) {
        return None;
    }
    x.iter().position(|v| !v.is_finite())
}

/// Splits the remaining ticks into the next substep: the whole remainder
/// when it fits, two equal halves when it is less than two steps (no
/// one-tick tails), otherwise `h`.
fn next_substep(h: u64, remaining: u64) -> u64 {
    if remaining <= h {
        remaining
    } else if remaining < 2 * h {
        remaining.div_ceil(2)
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::next_substep;

    #[test]
    fn substeps_end_exactly_without_tails() {
        for h in 1..40u64 {
            for dt in 1..200u64 {
                let mut t = 0;
                let mut n = 0;
                let mut smallest = u64::MAX;
                while t < dt {
                    let s = next_substep(h, dt - t);
                    assert!(s >= 1 && s <= h);
                    smallest = smallest.min(s);
                    t += s;
                    n += 1;
                }
                assert_eq!(t, dt);
                assert!(n <= dt.div_ceil(h) + 1);
                // Only an interval shorter than h may hold a step below h/2.
                if dt >= h {
                    assert!(2 * smallest >= h, "h {h} dt {dt}: substep {smallest}");
                }
            }
        }
    }
}
