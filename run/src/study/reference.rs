//! The reference's check: the same recorded flight integrated by an
//! independent solver, `ode_solvers`' Dopri5 at tight tolerance, driven as
//! a lockstep harness must drive it (a new solver per boundary interval,
//! the inputs held over it, the state projected onto its manifold at each
//! boundary).

use lockstep_plant::integrate::System as _;
use lockstep_plant::{HeldPlant, Multirotor, PlantInputs};
use ode_solvers::{DVector, Dopri5, OutputType};

use super::{Accumulator, Anchor, Failure, Flight, GROUPS, GroupErrors, group_errors};

/// The independent solver's tolerance (rtol = atol).
pub const INDEPENDENT_TOLERANCE: f64 = 1e-12;

/// The largest difference the reference may show against the independent
/// solver, per group of [`GROUPS`]: 1 µm, 1 µm/s, 1 µrad, 1 µrad/s,
/// 1 mrad/s of rotor speed, 1e-9 of charge.
pub const AGREEMENT: [f64; 6] = [1e-6, 1e-6, 1e-6, 1e-6, 1e-3, 1e-9];

/// How far the reference is from the independent solver.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndependentCheck {
    /// Largest and RMS difference per group over every boundary.
    pub difference: GroupErrors,
    /// The independent solver's RHS evaluations.
    pub rhs_evals: u64,
    /// Its wall time, s.
    pub wall_s: f64,
}

struct Adapter<'a> {
    plant: &'a Multirotor,
    inputs: &'a PlantInputs,
}

impl ode_solvers::System<f64, DVector<f64>> for Adapter<'_> {
    fn system(&self, _t: f64, y: &DVector<f64>, dy: &mut DVector<f64>) {
        self.plant.rhs(y.as_slice(), self.inputs, dy.as_mut_slice());
    }
}

/// Integrates `flight` with Dopri5 and compares it with the reference's
/// `states` (one row of `dim` per boundary), restarting from them at the
/// anchor's horizons as the candidates do. Fails when the solver fails
/// or a group differs by more than [`AGREEMENT`].
pub(super) fn check(
    flight: &Flight,
    states: &[f64],
    anchor: Option<Anchor<'_>>,
) -> Result<IndependentCheck, Failure> {
    let plant = &flight.plant;
    let dim = plant.dim();
    let mut y = DVector::from_vec(flight.initial.clone());
    let mut acc = Accumulator::new();
    let mut rhs_evals = 0u64;
    let started = std::time::Instant::now();
    let mut anchors = flight.anchor_times(anchor.map(|a| a.horizon_us));
    for (k, (t, _)) in flight.boundaries.iter().enumerate() {
        if k > 0 {
            let (prev, inputs) = &flight.boundaries[k - 1];
            let dt = (t - prev) as f64 * 1e-6;
            let mut s = Dopri5::new(
                Adapter { plant, inputs },
                0.0,
                dt,
                dt,
                y.clone(),
                INDEPENDENT_TOLERANCE,
                INDEPENDENT_TOLERANCE,
            );
            // Sparse: the last output is the state after the last step,
            // which ends exactly at the interval's end.
            s.set_output(OutputType::Sparse);
            let stats = s.integrate().map_err(|e| Failure {
                time_us: *t,
                reason: format!("the independent solver (ode_solvers Dopri5): {e}"),
            })?;
            rhs_evals += stats.num_eval as u64;
            y = s.y_out().last().cloned().ok_or_else(|| Failure {
                time_us: *t,
                reason: "the independent solver returned no state".into(),
            })?;
            HeldPlant { plant, inputs }.project(y.as_mut_slice());
        }
        acc.add(group_errors(
            &plant.layout,
            y.as_slice(),
            &states[k * dim..(k + 1) * dim],
        ));
        if anchors.reached(*t) {
            y.as_mut_slice()
                .copy_from_slice(&states[k * dim..(k + 1) * dim]);
        }
    }
    let wall_s = started.elapsed().as_secs_f64();
    let difference = acc.finish();
    for (i, (m, bound)) in difference.max.iter().zip(AGREEMENT).enumerate() {
        if m.is_nan() || *m > bound {
            return Err(Failure {
                time_us: flight.span_us(),
                reason: format!(
                    "the reference (dp54) and the independent solver (ode_solvers Dopri5) \
                     differ by {m:.3e} in {} (more than {bound:.0e}): the reference cannot \
                     be trusted on this flight",
                    GROUPS[i]
                ),
            });
        }
    }
    Ok(IndependentCheck {
        difference,
        rhs_evals,
        wall_s,
    })
}
