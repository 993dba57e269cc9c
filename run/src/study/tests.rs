use super::*;
use lockstep_plant::AircraftSpec;
use lockstep_plant::fixtures::hovering_state;

/// A manoeuvring 1.5 s flight in 1 ms intervals, commands changing at
/// every 4 ms (the autopilot's rate) and wind at every boundary.
fn flight() -> Flight {
    flight_in(1000)
}

/// The same flight in intervals of `interval` µs.
fn flight_in(interval: u64) -> Flight {
    let plant = AircraftSpec::builtin("iris").unwrap().build().unwrap();
    let initial = hovering_state(&plant, [0.0, 0.0, -20.0]);
    let hover = 0.55;
    let boundaries = (0..=1500u64)
        .step_by((interval / 1000) as usize)
        .map(|k| {
            let mut u = PlantInputs::default();
            let s = ((k / 4) as f64 * 0.02).sin();
            u.motor_cmd[..4].copy_from_slice(&[
                hover + 0.06 * s,
                hover - 0.05 * s,
                hover + 0.04 * s,
                hover - 0.03 * s,
            ]);
            u.wind_ned_mps = [2.0, -1.0 + s, 0.2];
            (k * 1000, u)
        })
        .collect();
    Flight {
        plant,
        initial,
        boundaries,
        recorded_method: Method::Rk4,
    }
}

fn run(candidates: Vec<Candidate>) -> Results {
    run_on(&flight(), candidates)
}

fn run_on(f: &Flight, candidates: Vec<Candidate>) -> Results {
    Study {
        candidates,
        repeats: 1,
        horizon_us: None,
    }
    .run(f, |_, _| {})
    .unwrap_or_else(|e| panic!("{e}"))
}

fn errors(r: &Row) -> GroupErrors {
    r.outcome.clone().unwrap()
}

#[test]
fn errors_fall_as_fixed_steps_tighten() {
    let r = run(default_candidates(1000));
    for m in [Method::Euler, Method::Rk4] {
        let rows: Vec<&Row> = r.rows.iter().filter(|x| x.candidate.method == m).collect();
        assert_eq!(rows.len(), 4, "{m:?}: 1000, 500, 250, 125 us");
        for w in rows.windows(2) {
            let (a, b) = (errors(w[0]), errors(w[1]));
            // Every group that is not at round-off falls.
            for (g, name) in GROUPS.iter().enumerate().take(4) {
                assert!(
                    b.max[g] < a.max[g] || a.max[g] < 1e-12,
                    "{m:?} {} -> {}: {name} {} -> {}",
                    w[0].candidate.setting_text(),
                    w[1].candidate.setting_text(),
                    a.max[g],
                    b.max[g]
                );
            }
            assert!(w[1].stats.rhs_evals > w[0].stats.rhs_evals);
        }
    }
    // Orders: halving the step divides Euler's error by about 2 and
    // RK4's by about 16 (position, the smooth group).
    let pos = |m: Method, s: u64| {
        r.rows
            .iter()
            .find(|x| x.candidate == Candidate::new(m, Setting::StepUs(s)).unwrap())
            .map(|x| errors(x).max[0])
            .unwrap()
    };
    let euler = pos(Method::Euler, 500) / pos(Method::Euler, 250);
    assert!((1.7..2.3).contains(&euler), "euler ratio {euler}");
    let rk4 = pos(Method::Rk4, 1000) / pos(Method::Rk4, 500);
    assert!((10.0..22.0).contains(&rk4), "rk4 ratio {rk4}");
}

#[test]
fn errors_fall_as_tolerances_tighten() {
    // At 1 kHz DP5 takes one step per interval at every tolerance, its
    // error at round-off: a 4 ms interval (the autopilot's period, as
    // the event-driven engine sees it) leaves the tolerance to decide.
    let r = Study {
        candidates: default_candidates(4000),
        repeats: 1,
        horizon_us: None,
    }
    .run(&flight_in(4000), |_, _| {})
    .unwrap();
    println!("{}", table_text(&r));
    for m in [Method::Bs32, Method::Dp54] {
        let rows: Vec<&Row> = r.rows.iter().filter(|x| x.candidate.method == m).collect();
        assert_eq!(rows.len(), 3);
        let first = errors(rows[0]).max[0];
        let last = errors(rows[2]).max[0];
        assert!(last < first / 10.0, "{m:?}: {first} -> {last}");
        for w in rows.windows(2) {
            assert!(errors(w[1]).max[0] <= errors(w[0]).max[0]);
            assert!(w[1].stats.rhs_evals >= w[0].stats.rhs_evals);
        }
    }
}

#[test]
fn the_reference_agrees_with_the_independent_solver() {
    let r = run(vec![]);
    let d = r.check.difference;
    for (g, bound) in reference::AGREEMENT.iter().enumerate() {
        assert!(d.max[g] <= *bound, "{}: {}", GROUPS[g], d.max[g]);
    }
    // It did integrate: the flight moved and the solver worked.
    assert!(r.check.rhs_evals > 1500 * 6);
    assert_eq!(r.boundaries, 1501);
    assert_eq!(r.span_us, 1_500_000);
}

#[test]
fn a_failing_candidate_is_a_failed_row_and_the_study_goes_on() {
    // BS3 asked for 1e-300 cannot meet it: its step falls to the 1 us
    // minimum in the first interval and the replay stops there.
    let c = vec![
        Candidate::new(Method::Bs32, Setting::Tolerance(1e-300)).unwrap(),
        Candidate::new(Method::Rk4, Setting::StepUs(250)).unwrap(),
    ];
    let r = Study {
        candidates: c,
        repeats: 2,
        horizon_us: None,
    }
    .run(&flight(), |_, _| {})
    .unwrap();
    let fail = r.rows[0].outcome.clone().unwrap_err();
    assert!(
        fail.reason
            .starts_with("the step fell to the minimum of 1 µs (error norm "),
        "{fail}"
    );
    assert_eq!(fail.time_us, 1000);
    assert_eq!(r.rows[0].stats.rhs_evals, 0);
    assert!(r.rows[1].outcome.is_ok());
    let csv = csv_text(&r);
    let line = csv.lines().nth(1).unwrap();
    assert!(
        line.starts_with("bs32,,1e-300,failed: the step fell to the minimum of 1 µs"),
        "{line}"
    );
    assert!(
        line.ends_with(" s,,,,,,,,,,,,,,,"),
        "no numbers for a failed row: {line}"
    );
}

#[test]
fn a_flight_resting_on_its_gear_is_referenced_at_a_looser_tolerance() {
    // Dropped onto its gear, motors off: DP5 cannot hold 1e-12 on the
    // contact spring at the 1 us minimum step; 1e-11 or 1e-10 does.
    let mut f = flight();
    f.initial = f.plant.state_at([0.0, 0.0, -0.05], [1.0, 0.0, 0.0, 0.0]);
    f.boundaries = (0..=100u64)
        .map(|k| (k * 50_000, PlantInputs::default()))
        .collect();
    let r = run_on(&f, vec![]);
    assert!(r.reference_tolerance > 1e-12, "{}", r.reference_tolerance);
    assert!(r.check.difference.max[0] <= reference::AGREEMENT[0]);
}

#[test]
fn candidates_take_the_setting_of_their_kind() {
    assert_eq!(
        Candidate::new(Method::Rk4, Setting::Tolerance(1e-6)).unwrap_err(),
        "rk4 is a fixed-step method: give it steps, not tolerances"
    );
    assert_eq!(
        Candidate::new(Method::Dp54, Setting::StepUs(100)).unwrap_err(),
        "dp54 is adaptive: give it tolerances, not steps"
    );
    assert_eq!(
        Candidate::new(Method::Bs32, Setting::Tolerance(1.0)).unwrap_err(),
        "tolerance 1 is not in (0, 1)"
    );
    assert_eq!(
        Candidate::new(Method::Euler, Setting::StepUs(0)).unwrap_err(),
        "a step must be at least 1 µs"
    );
    let steps: Vec<_> = default_candidates(4000)
        .iter()
        .filter(|c| c.method == Method::Euler)
        .map(|c| c.setting)
        .collect();
    assert_eq!(steps, [4000, 2000, 1000, 500].map(Setting::StepUs).to_vec());
    // A 1 us interval cannot be divided: one candidate per fixed method.
    assert_eq!(
        default_candidates(1)
            .iter()
            .filter(|c| c.method == Method::Rk4)
            .count(),
        1
    );
}

#[test]
fn group_errors_are_norms_and_angles() {
    let plant = AircraftSpec::builtin("iris").unwrap().build().unwrap();
    let a = hovering_state(&plant, [0.0, 0.0, -20.0]);
    let mut b = a.clone();
    b[0] += 3.0;
    b[1] += 4.0;
    // A rotation of 1e-9 rad about z: q = (cos(θ/2), 0, 0, sin(θ/2)).
    let th: f64 = 1e-9;
    b[6] = (th / 2.0).cos();
    b[9] = (th / 2.0).sin();
    let e = group_errors(&plant.layout, &b, &a);
    assert_eq!(e[0], 5.0);
    assert!((e[2] - th).abs() < 1e-18, "{}", e[2]);
    // The same rotation with the quaternion's sign flipped.
    let neg: Vec<f64> = b
        .iter()
        .enumerate()
        .map(|(i, v)| if (6..10).contains(&i) { -v } else { *v })
        .collect();
    let e = group_errors(&plant.layout, &neg, &a);
    assert!((e[2] - th).abs() < 1e-18);
    // A half turn.
    b[6] = 0.0;
    b[9] = 1.0;
    let e = group_errors(&plant.layout, &b, &a);
    assert!((e[2] - std::f64::consts::PI).abs() < 1e-15);
}

#[test]
fn the_csv_has_a_row_per_candidate_and_the_independent_row() {
    let r = run(vec![
        Candidate::new(Method::Rk4, Setting::StepUs(500)).unwrap(),
        Candidate::new(Method::Dp54, Setting::Tolerance(1e-8)).unwrap(),
    ]);
    let text = csv_text(&r);
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let h = rd.headers().unwrap().clone();
    assert_eq!(h.len(), 7 + 2 * GROUPS.len());
    assert_eq!(&h[0], "method");
    assert_eq!(&h[7], "position_m_max");
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(
        (&rows[0][0], &rows[0][1], &rows[0][3]),
        ("rk4", "500", "ok")
    );
    assert_eq!((&rows[1][0], &rows[1][2]), ("dp54", "1e-8"));
    assert_eq!(
        (&rows[2][0], &rows[2][3]),
        ("ode_solvers_dopri5", "independent")
    );
    let evals: u64 = rows[0][4].parse().unwrap();
    assert_eq!(evals, r.rows[0].stats.rhs_evals);
    // RK4 at 500 us: 2 substeps of 4 evaluations per 1 ms interval.
    assert_eq!(evals, 1500 * 8);
    let table = table_text(&r);
    assert!(table.contains("rk4      step 500 us"), "{table}");
}
