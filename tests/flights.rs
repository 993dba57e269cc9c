//! The first real flights: the bundled C autopilot flies a mission through
//! the engine, in OU wind, on noisy delayed estimates.

mod common;

use std::path::{Path, PathBuf};

use lockstep_abi::ffi::*;
use lockstep_harness::engine::Engine;
use lockstep_harness::scenario::Scenario;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/square.toml")
}

fn scenario(edits: &[(&str, &str)]) -> Scenario {
    common::example_scenario(edits)
}

struct Trace {
    points: Vec<([f64; 3], u32, i32, u32)>,
    soc: (f64, f64),
}

fn fly(s: &Scenario, log: Option<&Path>) -> Trace {
    let mut e = Engine::new(s, Path::new(common::BUNDLED), log).unwrap();
    let soc0 = e.state()[e.plant().layout.soc(0)];
    let mut points = Vec::new();
    while let Some(t) = e
        .step()
        .unwrap_or_else(|err| panic!("seed {}: {err}", s.seed))
    {
        if t.0 % 100_000 == 0 {
            let x = e.state();
            let a = e.actuators();
            points.push(([x[0], x[1], x[2]], a.mode, a.mission_current, a.armed));
        }
    }
    let soc1 = e.state()[e.plant().layout.soc(0)];
    Trace {
        points,
        soc: (soc0, soc1),
    }
}

fn check(name: &str, t: &Trace) {
    assert!(t.points.iter().any(|p| p.3 == 1), "{name}: never armed");
    assert!(
        t.points.iter().any(|p| p.0[2] < -9.0),
        "{name}: never reached 9 m"
    );
    for (n, e) in [(20.0, 0.0), (20.0, 20.0), (0.0, 20.0)] {
        let d = t
            .points
            .iter()
            .map(|(p, ..)| ((p[0] - n).powi(2) + (p[1] - e).powi(2)).sqrt())
            .fold(f64::MAX, f64::min);
        assert!(
            d < 1.5,
            "{name}: waypoint ({n}, {e}) missed by {d:.2} m (acceptance 1.5 m)"
        );
    }
    let last = t.points.last().unwrap();
    assert_eq!(
        (last.1, last.3),
        (LOCKSTEP_MODE_DISARMED, 0),
        "{name}: not landed and disarmed at the end: {last:?}"
    );
    let d = (last.0[0].powi(2) + last.0[1].powi(2)).sqrt();
    assert!(d < 1.0, "{name}: landed {d:.2} m from home");
    let used = t.soc.0 - t.soc.1;
    assert!(used > 0.02 && used < 0.8, "{name}: SOC {:?}", t.soc);
}

#[test]
fn iris_flies_the_example_mission_in_wind_on_noisy_delayed_estimates() {
    let s = Scenario::load(example()).unwrap();
    check("iris", &fly(&s, None));
}

#[test]
fn hexa_and_octa_fly_it_too() {
    for name in ["hexa", "octa"] {
        let s = scenario(&[("spec = \"iris\"", &format!("spec = \"{name}\""))]);
        check(name, &fly(&s, None));
    }
}

#[test]
fn octa_with_a_motor_failed_mid_mission_still_lands() {
    let s = scenario(&[
        ("spec = \"iris\"", "spec = \"octa\""),
        ("duration_s = 90.0", "duration_s = 100.0"),
        (
            "[[events]]\nat_s = 1.0",
            "[[events]]\nwhen = { mission_item_at_least = 2 }\naction = \"motor_fail\"\nmotor = 0\n\n[[events]]\nat_s = 1.0",
        ),
    ]);
    check("octa, motor 0 failed", &fly(&s, None));
}

#[test]
fn the_event_driven_engine_flies_it_with_an_adaptive_integrator() {
    let s = scenario(&[(
        "integrator = \"rk4\"",
        "integrator = \"dp54\"\nengine = \"event_driven\"",
    )]);
    check("iris, event-driven DP5", &fly(&s, None));
}

#[test]
fn iris_flies_it_in_dryden_turbulence() {
    let s = scenario(&[(
        "model = \"ornstein_uhlenbeck\"\nmean_ned_mps = [2.0, 1.0, 0.0]\nsigma_mps = [0.8, 0.8, 0.3]\ntau_s = [5.0, 5.0, 2.0]",
        "model = \"dryden\"\nmean_ned_mps = [3.0, 1.0, 0.0]\nw20_mps = 6.0",
    )]);
    check("iris, Dryden", &fly(&s, None));
}
