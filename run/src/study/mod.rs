//! Choosing an integrator (`lockstep compare-integrators`): a recorded
//! closed-loop flight replayed open-loop by each candidate integrator,
//! measured against a tight-tolerance reference that is itself checked
//! against an independent solver (`ode_solvers`' Dopri5).
//!
//! - [`Flight`]: the recorded plant, initial state and the inputs held at
//!   every boundary, in memory.
//! - [`Candidate`]: a method with a fixed step (Euler, RK4) or a tolerance
//!   (BS3, DP5); [`default_candidates`] spans each method's useful range.
//! - [`Study::run`]: the reference, its check, then every candidate:
//!   largest and RMS error per state group over all boundaries, RHS
//!   evaluations, median wall time over repeats.
//!
//! The replay stops at every recorded boundary (the inputs change there),
//! so an adaptive method's step is capped by the boundary interval: in a
//! `fixed_step` scenario at 1 kHz a loose tolerance buys nothing over one
//! step per interval.

mod reference;
mod session;
mod table;

use std::time::Instant;

use lockstep_plant::integrate::{Integrator, IntegratorError, Method, Options, Stats};
use lockstep_plant::{HeldPlant, Multirotor, PlantInputs, StateLayout, Tolerances};

use lockstep_harness::io::record::{RecordError, Replay};

pub use reference::IndependentCheck;
pub use session::{StudyEvent, StudyOutcome, StudyRequest, compare};
pub use table::{csv_text, table_text};

/// The state groups errors are reported for, with their units.
pub const GROUPS: [&str; 6] = [
    "position_m",
    "velocity_mps",
    "attitude_rad",
    "rates_radps",
    "rotor_speed_radps",
    "soc",
];

/// A recorded flight in memory: what every candidate replays.
#[derive(Debug, Clone)]
pub struct Flight {
    pub plant: Multirotor,
    pub initial: Vec<f64>,
    /// Boundary times (µs) and the inputs held from each to the next.
    pub boundaries: Vec<(u64, PlantInputs)>,
    /// The method and step the flight was recorded with.
    pub recorded_method: Method,
}

impl Flight {
    /// Reads a recording (checked whole, as `replay` does).
    pub fn from_recording(path: &std::path::Path) -> Result<Flight, RecordError> {
        let replay = Replay::open(path, None)?;
        let plant = replay.plant().clone();
        let recorded_method = replay.integrator();
        let mut initial = None;
        let mut boundaries = Vec::with_capacity(replay.record_count() as usize);
        replay.run_with_inputs(|t, x, u, _| {
            if initial.is_none() {
                initial = Some(x.to_vec());
            }
            boundaries.push((t.0, *u));
        })?;
        Ok(Flight {
            initial: initial.unwrap_or_else(|| vec![0.0; plant.dim()]),
            plant,
            boundaries,
            recorded_method,
        })
    }

    /// The longest interval between boundaries, µs (at least 1).
    pub fn max_interval_us(&self) -> u64 {
        self.boundaries
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .max()
            .unwrap_or(1)
            .max(1)
    }

    /// Simulated time covered, µs.
    pub fn span_us(&self) -> u64 {
        match (self.boundaries.first(), self.boundaries.last()) {
            (Some(a), Some(b)) => b.0 - a.0,
            _ => 0,
        }
    }

    /// Replays the flight with `method`; `visit(k, x)` sees the state at
    /// boundary `k`. With an anchor, the state is set to the anchor's at
    /// the first boundary at or after each whole horizon (after the visit
    /// there). Returns the work done, or where and why it failed.
    pub fn replay(
        &self,
        method: Method,
        options: Options,
        tolerances: Option<&Tolerances>,
        anchor: Option<Anchor<'_>>,
        mut visit: impl FnMut(usize, &[f64]),
    ) -> Result<Stats, Failure> {
        let mut plant = self.plant.clone();
        if let Some(t) = tolerances {
            plant.set_tolerances(t);
        }
        let mut integ = Integrator::new(method, plant.dim(), options).map_err(|e| Failure {
            time_us: 0,
            reason: short_reason(&e),
        })?;
        let mut x = self.initial.clone();
        let dim = x.len();
        let mut anchors = self.anchor_times(anchor.map(|a| a.horizon_us));
        for (k, (t, _)) in self.boundaries.iter().enumerate() {
            if k > 0 {
                let (prev, inputs) = &self.boundaries[k - 1];
                let sys = HeldPlant {
                    plant: &plant,
                    inputs,
                };
                integ
                    .step_interval(&sys, *prev, t - prev, &mut x)
                    .map_err(|e| Failure {
                        time_us: *t,
                        reason: short_reason(&e),
                    })?;
            }
            visit(k, &x);
            if let Some(a) = &anchor
                && anchors.reached(*t)
            {
                x.copy_from_slice(&a.states[k * dim..(k + 1) * dim]);
                integ.reset();
            }
        }
        Ok(integ.total_stats())
    }

    fn anchor_times(&self, horizon_us: Option<u64>) -> AnchorTimes {
        let t0 = self.boundaries.first().map_or(0, |b| b.0);
        AnchorTimes {
            t0,
            horizon: horizon_us.filter(|h| *h > 0),
            next: horizon_us.map_or(u64::MAX, |h| t0.saturating_add(h.max(1))),
        }
    }
}

/// States to restart from (one row of the plant's dimension per
/// boundary) every `horizon_us` of simulated time.
#[derive(Debug, Clone, Copy)]
pub struct Anchor<'a> {
    pub states: &'a [f64],
    pub horizon_us: u64,
}

/// The anchor times t0 + m·horizon; a boundary at or after the next one
/// anchors (irregular event-driven boundaries included).
#[derive(Debug)]
struct AnchorTimes {
    t0: u64,
    horizon: Option<u64>,
    next: u64,
}

impl AnchorTimes {
    fn reached(&mut self, t: u64) -> bool {
        let Some(h) = self.horizon else { return false };
        if t < self.next {
            return false;
        }
        // The next whole horizon after t.
        self.next = self.t0 + ((t - self.t0) / h + 1) * h;
        true
    }
}

/// Why a candidate's replay stopped.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The end of the interval that failed, µs.
    pub time_us: u64,
    pub reason: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} in the interval ending at t = {:.6} s",
            self.reason,
            self.time_us as f64 * 1e-6
        )
    }
}

/// An integrator error without the state dump.
fn short_reason(e: &IntegratorError) -> String {
    match e {
        IntegratorError::NonFinite { index, .. } => format!("state {index} became non-finite"),
        IntegratorError::StepTooSmall {
            min_step_ticks,
            error_norm,
            ..
        } => format!(
            "the step fell to the minimum of {min_step_ticks} µs (error norm {error_norm:.3e})"
        ),
        IntegratorError::TooManySubsteps { max_substeps, .. } => {
            format!("more than {max_substeps} substeps in one interval")
        }
        other => other.to_string(),
    }
}

/// How a candidate sets its accuracy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Setting {
    /// Fixed-step methods: the substep, µs.
    StepUs(u64),
    /// Adaptive methods: atol = rtol for the groups a flight's adaptive
    /// integrator controls (position, velocity, attitude in radians,
    /// rates; rotor speeds and charge are left out, as in a flight).
    Tolerance(f64),
}

/// One integrator configuration to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Candidate {
    pub method: Method,
    pub setting: Setting,
}

impl Candidate {
    /// Checks that the setting fits the method: a step for euler/rk4, a
    /// tolerance in (0, 1) for bs32/dp54.
    pub fn new(method: Method, setting: Setting) -> Result<Candidate, String> {
        match (method.is_adaptive(), setting) {
            (false, Setting::StepUs(s)) if s >= 1 => Ok(Candidate { method, setting }),
            (false, Setting::StepUs(_)) => Err("a step must be at least 1 µs".into()),
            (true, Setting::Tolerance(t)) if t > 0.0 && t < 1.0 => {
                Ok(Candidate { method, setting })
            }
            (true, Setting::Tolerance(t)) => Err(format!("tolerance {t} is not in (0, 1)")),
            (false, Setting::Tolerance(_)) => Err(format!(
                "{} is a fixed-step method: give it steps, not tolerances",
                method.name()
            )),
            (true, Setting::StepUs(_)) => Err(format!(
                "{} is adaptive: give it tolerances, not steps",
                method.name()
            )),
        }
    }

    /// The options and tolerances this candidate replays with; `interval`
    /// is the flight's longest boundary interval (µs).
    fn configure(&self, interval: u64) -> (Options, Option<Tolerances>) {
        match self.setting {
            Setting::StepUs(s) => (
                Options {
                    max_step_ticks: s,
                    ..Options::default()
                },
                None,
            ),
            Setting::Tolerance(tol) => (
                Options {
                    max_step_ticks: interval,
                    ..Options::default()
                },
                Some(Tolerances::uniform(tol, tol)),
            ),
        }
    }

    /// `step_us=250` or `tolerance=1e-06`.
    pub fn setting_text(&self) -> String {
        match self.setting {
            Setting::StepUs(s) => format!("step {s} us"),
            Setting::Tolerance(t) => format!("tol {t:.0e}"),
        }
    }
}

/// The reference's: atol = rtol = `tol` for every state group, rotor
/// speeds and state of charge included.
fn tight_tolerances(tol: f64) -> Tolerances {
    Tolerances {
        rotor_speeds: Some((tol, tol)),
        soc: Some((tol, tol)),
        v1: Some((tol, tol)),
        ..Tolerances::uniform(tol, tol)
    }
}

/// Each method over its useful range for a flight whose boundaries are at
/// most `interval` µs apart: Euler and RK4 at the interval and at 1/2, 1/4
/// and 1/8 of it (whole microseconds, distinct); BS3 at 1e-4, 1e-6, 1e-8
/// and DP5 at 1e-6, 1e-8, 1e-10.
///
/// Tighter tolerances fail on flights that touch down: the contact
/// spring's onset is a kink in the right-hand side, which at 1e-10 (BS3)
/// or 1e-11 (DP5) needs steps below the 1 µs minimum (measured on the
/// square flight at its touchdown, 48.22 s).
pub fn default_candidates(interval: u64) -> Vec<Candidate> {
    let mut steps: Vec<u64> = [1, 2, 4, 8].iter().map(|d| (interval / d).max(1)).collect();
    steps.dedup();
    let mut out = Vec::new();
    for m in [Method::Euler, Method::Rk4] {
        out.extend(steps.iter().map(|&s| Candidate {
            method: m,
            setting: Setting::StepUs(s),
        }));
    }
    for (m, tols) in [
        (Method::Bs32, [1e-4, 1e-6, 1e-8]),
        (Method::Dp54, [1e-6, 1e-8, 1e-10]),
    ] {
        out.extend(tols.iter().map(|&t| Candidate {
            method: m,
            setting: Setting::Tolerance(t),
        }));
    }
    out
}

/// The reference's tolerances (DP5, every group), tightest first: the
/// first one the whole flight can be integrated at is used.
pub const REFERENCE_TOLERANCES: [f64; 3] = [1e-12, 1e-11, 1e-10];
/// The reference's largest step is the longest interval over this.
pub const REFERENCE_STEP_DIVISOR: u64 = 8;

/// Errors of one replay against the reference, per group of [`GROUPS`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupErrors {
    pub max: [f64; 6],
    pub rms: [f64; 6],
}

/// Accumulates per-group error norms over boundaries.
#[derive(Debug)]
struct Accumulator {
    max: [f64; 6],
    sum_sq: [f64; 6],
    n: u64,
}

impl Accumulator {
    fn new() -> Self {
        Accumulator {
            max: [0.0; 6],
            sum_sq: [0.0; 6],
            n: 0,
        }
    }

    fn add(&mut self, e: [f64; 6]) {
        for (i, v) in e.iter().enumerate() {
            // NaN sticks (`f64::max` would drop it): a diverged state is
            // never "small".
            self.max[i] = if v.is_nan() || self.max[i].is_nan() {
                f64::NAN
            } else {
                self.max[i].max(*v)
            };
            self.sum_sq[i] += v * v;
        }
        self.n += 1;
    }

    fn finish(&self) -> GroupErrors {
        let n = self.n.max(1) as f64;
        GroupErrors {
            max: self.max,
            rms: self.sum_sq.map(|s| (s / n).sqrt()),
        }
    }
}

/// The error of `x` against `r` per group: the Euclidean norm of the
/// difference, the attitude as the geodesic angle between quaternions.
pub fn group_errors(layout: &StateLayout, x: &[f64], r: &[f64]) -> [f64; 6] {
    let norm = |a: usize, n: usize| {
        (a..a + n)
            .map(|i| (x[i] - r[i]) * (x[i] - r[i]))
            .sum::<f64>()
            .sqrt()
    };
    let q = StateLayout::QUAT;
    let soc = (0..layout.batteries)
        .map(|j| (x[layout.soc(j)] - r[layout.soc(j)]).powi(2))
        .sum::<f64>()
        .sqrt();
    [
        norm(StateLayout::POS, 3),
        norm(StateLayout::VEL, 3),
        quaternion_angle(&x[q..q + 4], &r[q..q + 4]),
        norm(StateLayout::RATES, 3),
        norm(layout.rotor_speed(0), layout.rotors),
        soc,
    ]
}

/// Geodesic angle between two quaternions (either sign), accurate for
/// small angles: 4·asin(|a/|a| ∓ b/|b|| / 2).
fn quaternion_angle(a: &[f64], b: &[f64]) -> f64 {
    let na = a.iter().map(|v| v * v).sum::<f64>().sqrt();
    let nb = b.iter().map(|v| v * v).sum::<f64>().sqrt();
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let s = if dot < 0.0 { -1.0 } else { 1.0 };
    let d = (0..4)
        .map(|i| (a[i] / na - s * b[i] / nb).powi(2))
        .sum::<f64>()
        .sqrt();
    4.0 * (0.5 * d).min(1.0).asin()
}

/// One measured candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub candidate: Candidate,
    /// Errors against the reference, or the failure that stopped it.
    pub outcome: Result<GroupErrors, Failure>,
    pub stats: Stats,
    /// Median wall time of a whole replay, s.
    pub wall_median_s: f64,
}

/// A study's results.
#[derive(Debug, Clone)]
pub struct Results {
    pub rows: Vec<Row>,
    /// The reference's tolerance and work, and its check against the
    /// independent solver.
    pub reference_tolerance: f64,
    pub reference_stats: Stats,
    pub check: IndependentCheck,
    pub boundaries: usize,
    pub span_us: u64,
}

/// What to measure.
#[derive(Debug, Clone)]
pub struct Study {
    pub candidates: Vec<Candidate>,
    /// Replays per candidate for the wall-time median (at least 1).
    pub repeats: u32,
    /// Restart every replay from the reference's state at each whole
    /// horizon (µs); `None` replays the whole flight open-loop.
    ///
    /// A multirotor without its controller is unstable: flown open-loop,
    /// a difference of 1e-12 grows to micrometres in a minute (measured
    /// on the square flight: DP5 and ode_solvers' Dopri5, both at 1e-12,
    /// end 2.2e-6 m apart after 90 s). Over a whole flight the errors
    /// measure that instability as much as the integrator; over a
    /// horizon of a second they measure the integrator.
    pub horizon_us: Option<u64>,
}

/// The default horizon, µs.
pub const DEFAULT_HORIZON_US: u64 = 1_000_000;

impl Study {
    /// Runs the reference, checks it, then every candidate in order;
    /// `progress(i, n)` is called before candidate `i` of `n`.
    pub fn run(
        &self,
        flight: &Flight,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Results, Failure> {
        let dim = flight.plant.dim();
        let interval = flight.max_interval_us();
        // DP5 at 1e-12 takes one step per 1 ms interval: cap its step at
        // an eighth of the interval so it is far more accurate than any
        // candidate (its fifth order makes that 8^5 times smaller error).
        let opts = Options {
            max_step_ticks: (interval / REFERENCE_STEP_DIVISOR).max(1),
            ..Options::default()
        };
        // A stiff moment (a landing gear's contact spring) can hold the
        // error above 1e-12 at the 1 µs minimum step: then the next
        // tolerance is tried.
        let mut states = Vec::with_capacity(flight.boundaries.len() * dim);
        let mut last_failure = None;
        let mut found = None;
        for tol in REFERENCE_TOLERANCES {
            states.clear();
            let t = tight_tolerances(tol);
            match flight.replay(Method::Dp54, opts, Some(&t), None, |_, x| {
                states.extend_from_slice(x)
            }) {
                Ok(stats) => {
                    found = Some((tol, stats));
                    break;
                }
                Err(f) => last_failure = Some(f),
            }
        }
        let Some((reference_tolerance, reference_stats)) = found else {
            let f = last_failure.expect("at least one tolerance was tried");
            return Err(Failure {
                reason: format!(
                    "the reference (dp54 at every tolerance from {:.0e} to {:.0e}): {}",
                    REFERENCE_TOLERANCES[0],
                    REFERENCE_TOLERANCES[REFERENCE_TOLERANCES.len() - 1],
                    f.reason
                ),
                ..f
            });
        };
        let anchor = self.horizon_us.map(|h| Anchor {
            states: &states,
            horizon_us: h,
        });
        // The check judges the reference as a solver: over the whole flight
        // the open-loop instability would magnify 1e-12 differences past
        // any bound, so it restarts at least every DEFAULT_HORIZON_US.
        let check_horizon = self
            .horizon_us
            .unwrap_or(DEFAULT_HORIZON_US)
            .min(DEFAULT_HORIZON_US);
        let check = reference::check(
            flight,
            &states,
            Some(Anchor {
                states: &states,
                horizon_us: check_horizon,
            }),
        )?;
        let layout = flight.plant.layout;
        let mut rows = Vec::with_capacity(self.candidates.len());
        for (i, c) in self.candidates.iter().enumerate() {
            progress(i, self.candidates.len());
            let (opts, tol) = c.configure(interval);
            let mut walls = Vec::new();
            let mut first = None;
            // The replay's states, kept so that only the integration is
            // timed (the errors are measured afterwards).
            let mut got = vec![0.0; states.len()];
            for _ in 0..self.repeats.max(1) {
                let started = Instant::now();
                let r = flight.replay(c.method, opts, tol.as_ref(), anchor, |k, x| {
                    got[k * dim..(k + 1) * dim].copy_from_slice(x)
                });
                walls.push(started.elapsed().as_secs_f64());
                let failed = r.is_err();
                if first.is_none() {
                    let mut acc = Accumulator::new();
                    if r.is_ok() {
                        for (x, rf) in got.chunks_exact(dim).zip(states.chunks_exact(dim)) {
                            acc.add(group_errors(&layout, x, rf));
                        }
                    }
                    first = Some((r, acc.finish()));
                }
                // A failure is deterministic: repeating it measures nothing.
                if failed {
                    break;
                }
            }
            let (r, errors) = first.expect("at least one replay ran");
            walls.sort_by(f64::total_cmp);
            rows.push(Row {
                candidate: *c,
                stats: r.as_ref().copied().unwrap_or_default(),
                outcome: r.map(|_| errors),
                wall_median_s: walls[walls.len() / 2],
            });
        }
        Ok(Results {
            rows,
            reference_tolerance,
            reference_stats,
            check,
            boundaries: flight.boundaries.len(),
            span_us: flight.span_us(),
        })
    }
}

#[cfg(test)]
mod tests;
