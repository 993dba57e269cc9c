//! The bundled C autopilot flies the plant in a bare loop, the estimate being
//! the truth: checks that the two agree on every convention (frames,
//! quaternion, thrust axes, spin directions, thrust curve) independently of
//! the engine, its sensors and its noise (tests/flights.rs flies through the
//! engine).

use lockstep_abi::ffi::*;
use lockstep_harness::Micros;
use lockstep_harness::engine::autopilot_config::autopilot_config;
use lockstep_harness::inputs::mission::Mission;
use lockstep_plant::integrate::{Integrator, Method, Options};
use lockstep_plant::{AircraftSpec, HeldPlant, PlantInputs};

struct Flight {
    /// (time s, NED position, mode, mission index, armed)
    trace: Vec<(f64, [f64; 3], u32, i32, u32)>,
    soc: (f64, f64),
}

fn fly(spec: &str, mission: &Mission, seconds: f64, fail_motor: Option<(usize, f64)>) -> Flight {
    let plant = AircraftSpec::builtin(spec).unwrap().build().unwrap();
    let mut x = plant.resting_state(0.0, 0.0, 0.0);
    let cfg = autopilot_config(&plant, Micros(4000));
    let mut ap = crate::common::load_bundled().create(&cfg).unwrap();
    ap.upload_mission(&mission.items).unwrap();
    let mut integ = Integrator::new(Method::Rk4, plant.dim(), Options::default()).unwrap();
    let mut u = PlantInputs::default();
    let mut out = lockstep_actuator_frame::default();
    let mut trace = Vec::new();
    let soc0 = x[plant.layout.soc(0)];
    let n = (seconds * 250.0) as u64;
    for k in 0..n {
        let t = k * 4000;
        if let Some((m, at)) = fail_motor
            && t as f64 * 1e-6 >= at
        {
            u.motor_enabled[m] = false;
        }
        let o = plant.outputs(&x, &u);
        let mut f = lockstep_sensor_frame {
            time_us: t,
            fresh_mask: LOCKSTEP_FRESH_ESTIMATE | LOCKSTEP_FRESH_BATTERY,
            landed: u32::from(o.contact_points > 0),
            ..Default::default()
        };
        let q = [x[6], x[7], x[8], x[9]];
        f.estimate = lockstep_estimate {
            timestamp_us: t,
            position_ned_m: [x[0] as f32, x[1] as f32, x[2] as f32],
            velocity_ned_mps: [x[3] as f32, x[4] as f32, x[5] as f32],
            attitude_q: q.map(|v| v as f32),
            rates_frd_radps: [x[10] as f32, x[11] as f32, x[12] as f32],
            reserved0: 0,
        };
        let b = o.batteries[0];
        f.battery = lockstep_battery {
            timestamp_us: t,
            voltage_v: b.voltage_v as f32,
            current_a: b.current_a as f32,
            remaining: b.soc as f32,
            warning: b.warning as u32,
            connected: 1,
            reserved0: 0,
        };
        if t == 500_000 {
            f = crate::common::with_command(f, LOCKSTEP_ARM_ARM, 0, 0);
        }
        if t == 1_000_000 {
            f = crate::common::with_command(f, 0, 0, 1);
        }
        ap.step(t, &f, &mut out)
            .unwrap_or_else(|e| panic!("{spec}: {e}"));
        for i in 0..plant.rotors.len() {
            u.motor_cmd[i] = f64::from(out.motors[i]);
        }
        integ
            .step_interval(
                &HeldPlant {
                    plant: &plant,
                    inputs: &u,
                },
                t,
                4000,
                &mut x,
            )
            .unwrap();
        if k % 25 == 0 {
            trace.push((
                t as f64 * 1e-6,
                [x[0], x[1], x[2]],
                out.mode,
                out.mission_current,
                out.armed,
            ));
        }
    }
    Flight {
        trace,
        soc: (soc0, x[plant.layout.soc(0)]),
    }
}

fn square() -> Mission {
    Mission::load(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/missions/square.waypoints"
    ))
    .unwrap()
}

fn check_mission(name: &str, f: &Flight) {
    let reached_alt = f.trace.iter().any(|(_, p, ..)| p[2] < -9.0);
    assert!(
        reached_alt,
        "{name}: never reached 9 m; trace {:?}",
        &f.trace[..f.trace.len().min(40)]
    );
    for (n, e) in [(20.0, 0.0), (20.0, 20.0), (0.0, 20.0)] {
        let closest = f
            .trace
            .iter()
            .map(|(_, p, ..)| ((p[0] - n).powi(2) + (p[1] - e).powi(2)).sqrt())
            .fold(f64::MAX, f64::min);
        assert!(
            closest < 1.5,
            "{name}: waypoint ({n}, {e}) missed by {closest:.2} m"
        );
    }
    let last = f.trace.last().unwrap();
    assert_eq!(
        (last.2, last.4),
        (LOCKSTEP_MODE_DISARMED, 0),
        "{name}: ends disarmed; last {last:?}"
    );
    let home_dist = (last.1[0].powi(2) + last.1[1].powi(2)).sqrt();
    assert!(
        home_dist < 0.3,
        "{name}: landed {home_dist:.2} m from the LAND item's point (home)"
    );
    assert!(
        f.soc.1 < f.soc.0 - 0.01 && f.soc.1 > 0.2,
        "{name}: SOC {:?}",
        f.soc
    );
}

#[test]
fn iris_flies_the_square_mission_with_truth_estimates() {
    let f = fly("iris", &square(), 90.0, None);
    check_mission("iris", &f);
}

#[test]
fn hexa_and_octa_fly_the_square_mission() {
    for name in ["hexa", "octa"] {
        let f = fly(name, &square(), 90.0, None);
        check_mission(name, &f);
    }
}

#[test]
fn octa_with_a_motor_failed_mid_mission_still_lands() {
    // Motor 0 stops 15 s in, on the second leg.
    let f = fly("octa", &square(), 100.0, Some((0, 15.0)));
    check_mission("octa, motor 0 failed", &f);
}
