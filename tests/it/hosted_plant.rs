//! The composable runtime: a host-owned plant in place of ours, and our plant
//! stepped alone.
//!
//! The strongest check of the split: a "host" that runs our own plant
//! through the public parts ([`PlantRunner`] for the physics,
//! [`HostedVehicle`] for sensors, estimator and autopilot) flies the same
//! flight as the whole-vehicle [`Engine`], bit for bit.

use std::path::{Path, PathBuf};

use lockstep_abi::Isolation;
use lockstep_harness::Micros;
use lockstep_harness::engine::{
    Engine, EngineError, HostBattery, HostTruth, HostedVehicle, PlantRunner,
};
use lockstep_harness::environment::sensors::Truth;
use lockstep_harness::inputs::scenario::{Action, Scenario};

use crate::common::BUNDLED;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The README's default flight, shortened to 20 s. Its physics runs at
/// 1 kHz, its sensors and autopilot at 250 Hz: the host sees only the 4 ms
/// boundaries and integrates the 1 ms steps between them itself.
fn scenario(extra: &str) -> Scenario {
    let text = std::fs::read_to_string(root().join("examples/scenarios/square.toml")).unwrap();
    let text: String = text
        .lines()
        .map(|l| {
            if l.starts_with("duration_s") {
                "duration_s = 20.0\n".to_string()
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let text = text + extra;
    Scenario::from_toml_str(&text, root().join("examples/scenarios/square.toml")).unwrap()
}

/// What a host does at each boundary with our plant as its own: advance it,
/// hand over its truth, hold the commands and the wind it gets back.
fn fly_hosted(s: &Scenario) -> (Vec<f64>, Vec<(u64, Vec<f64>)>) {
    let mut plant = PlantRunner::from_scenario(s).unwrap();
    let mut hosted = HostedVehicle::new(s, Path::new(BUNDLED), &Isolation::InProcess).unwrap();
    let mut samples = Vec::new();
    while let Some(t) = hosted.next_time() {
        plant.advance_to(t).unwrap();
        let o = plant.outputs();
        let x = plant.state();
        let b = o.batteries[0];
        let truth = HostTruth {
            state: Truth {
                time: t,
                position_ned_m: [x[0], x[1], x[2]],
                velocity_ned_mps: [x[3], x[4], x[5]],
                attitude_q: [x[6], x[7], x[8], x[9]],
                rates_frd_radps: [x[10], x[11], x[12]],
                specific_force_frd_mps2: o.specific_force_frd_mps2,
            },
            on_ground: o.contact_points > 0,
            battery: Some(HostBattery {
                voltage_v: b.voltage_v,
                current_a: b.current_a,
                remaining: b.soc.clamp(0.0, 1.0),
                warning: b.warning as u32,
                connected: b.connected,
            }),
        };
        hosted.step(&truth).unwrap();
        let inputs = plant.inputs_mut();
        for (i, m) in hosted.motor_commands().iter().enumerate() {
            inputs.motor_cmd[i] = f64::from(*m);
        }
        inputs.wind_ned_mps = hosted.wind();
        if t.0 % 1_000_000 == 0 {
            samples.push((t.0, plant.state().to_vec()));
        }
    }
    (plant.state().to_vec(), samples)
}

fn fly_engine(s: &Scenario) -> (Vec<f64>, Vec<(u64, Vec<f64>)>) {
    let mut e = Engine::with_isolation(s, Path::new(BUNDLED), None, &Isolation::InProcess).unwrap();
    let mut samples = Vec::new();
    while let Some(t) = e.step().unwrap() {
        if t.0 % 1_000_000 == 0 {
            samples.push((t.0, e.state().to_vec()));
        }
    }
    (e.state().to_vec(), samples)
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn a_host_running_our_plant_flies_the_engines_flight_bit_for_bit() {
    let s = scenario("");
    let (end_h, samples_h) = fly_hosted(&s);
    let (end_e, samples_e) = fly_engine(&s);
    assert_eq!(samples_h.len(), 21, "one sample a second, 0 to 20 s");
    for ((t, h), (_, e)) in samples_h.iter().zip(&samples_e) {
        assert_eq!(bits(h), bits(e), "state at {t} us");
    }
    assert_eq!(bits(&end_h), bits(&end_e));
    // It flew: armed at 1 s, the mission started at 2 s, well off the ground.
    let alt = samples_h.iter().map(|(_, x)| -x[2]).fold(0.0, f64::max);
    assert!(alt > 5.0, "climbed to {alt} m");
}

#[test]
fn the_host_must_hand_over_truth_at_the_boundary_awaiting_it() {
    let s = scenario("");
    let mut hosted = HostedVehicle::new(&s, Path::new(BUNDLED), &Isolation::InProcess).unwrap();
    assert_eq!(hosted.next_time(), Some(Micros::ZERO));
    let mut truth = HostTruth {
        state: Truth {
            time: Micros(500),
            attitude_q: [1.0, 0.0, 0.0, 0.0],
            specific_force_frd_mps2: [0.0, 0.0, -9.81],
            ..Truth::default()
        },
        on_ground: true,
        battery: None,
    };
    let e = hosted.step(&truth).unwrap_err();
    assert!(
        matches!(
            e,
            EngineError::HostTime {
                expected_us: 0,
                found_us: 500
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "truth at t = 0.000500 s, but the next boundary is at t = 0.000000 s"
    );
    truth.state.time = Micros::ZERO;
    truth.state.velocity_ned_mps[1] = f64::NAN;
    let e = hosted.step(&truth).unwrap_err();
    assert_eq!(
        e.to_string(),
        "truth at t = 0.000000 s: `velocity_ned_mps` is not finite or out of range"
    );
    truth.state.velocity_ned_mps[1] = 0.0;
    truth.state.attitude_q = [0.0; 4];
    assert!(matches!(
        hosted.step(&truth).unwrap_err(),
        EngineError::HostTruth {
            field: "attitude_q",
            ..
        }
    ));
    truth.state.attitude_q = [1.0, 0.0, 0.0, 0.0];
    truth.battery = Some(HostBattery {
        voltage_v: 12.0,
        current_a: 1.0,
        remaining: 1.5,
        warning: 0,
        connected: true,
    });
    assert!(matches!(
        hosted.step(&truth).unwrap_err(),
        EngineError::HostTruth {
            field: "battery.remaining",
            ..
        }
    ));
    // Nothing moved: the boundary still awaits its truth, which is taken.
    assert_eq!(hosted.next_time(), Some(Micros::ZERO));
    truth.battery = None;
    hosted.step(&truth).unwrap();
    // No physics boundaries for a host's plant: the next is the sensors' and
    // the autopilot's (250 Hz).
    assert_eq!(hosted.next_time(), Some(Micros(4000)));
    hosted.close().unwrap();
    assert!(matches!(
        hosted.step(&truth).unwrap_err(),
        EngineError::Ended { .. }
    ));
}

#[test]
fn plant_faults_are_refused_on_a_host_owned_plant() {
    let s = scenario("\n[[events]]\nat_s = 5.0\naction = \"motor_fail\"\nmotor = 2\n");
    let e = HostedVehicle::new(&s, Path::new(BUNDLED), &Isolation::InProcess).unwrap_err();
    assert!(
        e.to_string().ends_with(
            "key `events[2].action`: `motor_fail motor 2` acts on the plant, which the host owns here"
        ),
        "{e}"
    );
    let mut hosted =
        HostedVehicle::new(&scenario(""), Path::new(BUNDLED), &Isolation::InProcess).unwrap();
    let e = hosted
        .apply_now(Action::BatteryDisconnect { battery: 0 })
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "`battery_disconnect battery 0` acts on the plant, which the host owns"
    );
    hosted.apply_now(Action::Arm).unwrap();
}

#[test]
fn the_plant_alone_holds_its_inputs_and_counts_its_work() {
    let s = scenario("");
    let mut p = PlantRunner::from_scenario(&s).unwrap();
    let rest = p.state().to_vec();
    // Undriven, at rest on its gear: it stays where it is.
    p.advance_to(Micros(1_000_000)).unwrap();
    for (i, (now, was)) in p.state()[..13].iter().zip(&rest).enumerate() {
        assert!((now - was).abs() < 1e-6, "state {i}: {now} vs {was}");
    }
    assert_eq!(p.stats().rhs_evals, 4 * 1000, "RK4 at 1 ms: 4 RHS a step");
    // Full throttle: it climbs.
    for i in 0..p.plant().rotors.len() {
        p.inputs_mut().motor_cmd[i] = 1.0;
    }
    p.advance_to(Micros(2_000_000)).unwrap();
    assert!(p.state()[2] < -1.0, "climbed: z = {}", p.state()[2]);
    // Time does not go back.
    p.advance_to(Micros(1_500_000)).unwrap();
    assert_eq!(p.now(), Micros(2_000_000));
    assert!(p.set_state(&[0.0; 3]).is_err());
}
