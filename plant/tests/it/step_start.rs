//! Carry vs restart of the adaptive step size across intervals, on a
//! manoeuvring flight in 4 ms intervals. Neither is cheaper on every plant:
//!
//! - On the built-in Iris (20-60 ms rotors, rotor speeds not in the error
//!   norm) each 4 ms interval is one step either way: DP5 needs 7.0
//!   right-hand-side evaluations per interval with both, BS3 4.0.
//! - With a stiff state in the norm (rotors at 4 ms with their speeds
//!   measured) a carried step just below the interval splits it into two
//!   substeps: DP5 restart 7.1, carry 11.5.
//! - With rotors at 2 ms the carried step is the cheaper one (DP5 13.0
//!   against 17.7), so the default is a choice for the built-in airframes,
//!   not a law.
//!
//! Both reach the same solution.

use lockstep_plant::fixtures::{hovering_state, manoeuvre};
use lockstep_plant::integrate::{Integrator, Method, Options, Stats, StepStart};
use lockstep_plant::{AircraftSpec, HeldPlant, Multirotor, Tolerances};

/// Work and final state of 500 manoeuvre intervals of 4 ms.
fn run(plant: &Multirotor, method: Method, start: StepStart) -> (Stats, Vec<f64>) {
    let opts = Options {
        max_step_ticks: 4000,
        step_start: start,
        ..Options::default()
    };
    let mut integ = Integrator::new(method, plant.dim(), opts).unwrap();
    let mut x = hovering_state(plant, [0.0, 0.0, -200.0]);
    for k in 0..500 {
        let u = manoeuvre(k);
        let sys = HeldPlant { plant, inputs: &u };
        integ
            .step_interval(&sys, k as u64 * 4000, 4000, &mut x)
            .unwrap();
    }
    (integ.total_stats(), x)
}

/// Carry and restart on `plant` with `method`: evaluations per interval
/// (carry, restart), after checking that both reach the same solution.
fn compare(name: &str, plant: &Multirotor, method: Method) -> (f64, f64) {
    let (carry, xc) = run(plant, method, StepStart::Carry);
    let (restart, xr) = run(plant, method, StepStart::Restart);
    let (c, r) = (
        carry.rhs_evals as f64 / 500.0,
        restart.rhs_evals as f64 / 500.0,
    );
    eprintln!("{name} {method:?}: carry {c:.2}, restart {r:.2} rhs/interval");
    for (a, b) in xc.iter().zip(&xr).take(13) {
        assert!(
            (a - b).abs() < 1e-4 * (1.0 + b.abs()),
            "{name} {method:?}: same solution within tolerance"
        );
    }
    (c, r)
}

#[test]
fn the_default_restart_costs_no_more_than_carry_on_the_built_in_iris() {
    assert_eq!(Options::default().step_start, StepStart::Restart);
    let iris = AircraftSpec::builtin("iris").unwrap().build().unwrap();
    let (c, r) = compare("iris", &iris, Method::Dp54);
    assert!(r <= c, "DP5: restart {r} vs carry {c}");
    let (c, r) = compare("iris", &iris, Method::Bs32);
    assert!((r / c - 1.0).abs() < 0.05, "BS3: restart {r} vs carry {c}");
}

#[test]
fn restart_needs_far_fewer_evaluations_with_stiff_rotors_in_the_error_norm() {
    // The Iris with its rotor inertia cut to a 4 ms rotor time constant at
    // hover, rotor speeds measured by the error norm.
    let iris = AircraftSpec::builtin("iris").unwrap();
    let tau = iris.build().unwrap().hover_rotor_time_constant_s(1.17);
    let mut s = iris;
    s.motor.rotor_inertia_kgm2 *= 0.004 / tau;
    let mut stiff = s.build().unwrap();
    let t = stiff.hover_rotor_time_constant_s(1.17);
    assert!((t - 0.004).abs() < 4e-4, "{t}");
    stiff.set_tolerances(&Tolerances {
        rotor_speeds: Some((1e-3, 1e-5)),
        ..Tolerances::default()
    });
    let (c, r) = compare("stiff", &stiff, Method::Dp54);
    assert!(r < 0.7 * c, "DP5: restart {r} vs carry {c}");
}
