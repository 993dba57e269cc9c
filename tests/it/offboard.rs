//! Setpoints through the command path (ABI 3): a scenario's `setpoint`
//! events flown by the reference autopilot's OFFBOARD mode (a position, a
//! velocity, body rates with a collective thrust), the refusals of a bad
//! setpoint, and motors driven around the autopilot (`set_motor_override`).

use std::path::Path;

use lockstep_abi::ffi::*;
use lockstep_harness::engine::Engine;
use lockstep_harness::inputs::scenario::Scenario;

const HEAD: &str = "schema_version = 1\n\
    [simulation]\nseed = 3\nduration_s = 20.0\n\
    [cadences]\nphysics = { rate_hz = 1000 }\nautopilot = { rate_hz = 250 }\n\
    [vehicle]\nspec = \"iris\"\n\
    [[events]]\nat_s = 1.0\naction = \"arm\"\n";

fn scenario(events: &str) -> Scenario {
    Scenario::from_toml_str(&format!("{HEAD}{events}"), "offboard.toml").unwrap()
}

fn engine(s: &Scenario) -> Engine {
    Engine::with_isolation(
        s,
        Path::new(crate::common::BUNDLED),
        None,
        &lockstep_abi::Isolation::InProcess,
    )
    .unwrap()
}

fn run_until(e: &mut Engine, t: u64) {
    while e.next_time().is_some_and(|n| n.0 <= t) {
        e.step().unwrap();
    }
}

fn dist(a: &[f64], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

#[test]
fn a_position_setpoint_takes_off_and_holds_the_point() {
    let s = scenario(
        "[[events]]\nat_s = 2.0\naction = \"setpoint\"\nposition_ned_m = [5.0, -3.0, -8.0]\nyaw_deg = 90.0\n",
    );
    let mut e = engine(&s);
    run_until(&mut e, 20_000_000);
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_OFFBOARD);
    let x = e.state();
    assert!(dist(x, [5.0, -3.0, -8.0]) < 0.3, "{:?}", &x[..3]);
    // Heading 90 degrees: yaw of the attitude quaternion.
    let yaw = (2.0 * (x[6] * x[9] + x[7] * x[8])).atan2(1.0 - 2.0 * (x[8] * x[8] + x[9] * x[9]));
    assert!((yaw - std::f64::consts::FRAC_PI_2).abs() < 0.05, "{yaw}");
    let (timeline, _) = e.timeline();
    let whats: Vec<&str> = timeline.iter().map(|t| t.what.as_str()).collect();
    assert!(
        whats.contains(&"setpoint position [5, -3, -8] m yaw 90 deg"),
        "{whats:?}"
    );
    assert!(whats.contains(&"idle -> offboard"), "{whats:?}");
}

#[test]
fn a_velocity_setpoint_is_flown_and_rates_turn_the_vehicle() {
    let s = scenario(
        "[[events]]\nat_s = 2.0\naction = \"setpoint\"\nvelocity_ned_mps = [2.0, 0.0, -1.0]\n\
         [[events]]\nat_s = 12.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -10.0]\n\
         [[events]]\nat_s = 18.0\naction = \"setpoint\"\nrates_frd_radps = [0.0, 0.0, 1.0]\nthrust = 0.3\n",
    );
    let mut e = engine(&s);
    run_until(&mut e, 10_000_000);
    let v = &e.state()[3..6];
    assert!(dist(v, [2.0, 0.0, -1.0]) < 0.3, "{v:?}");
    run_until(&mut e, 19_000_000);
    // A second into the rates: yawing at 1 rad/s.
    let r = e.state()[12];
    assert!((r - 1.0).abs() < 0.1, "{r}");
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_OFFBOARD);
}

#[test]
fn a_setpoint_while_disarmed_is_refused_by_the_autopilot() {
    let s = Scenario::from_toml_str(
        &format!(
            "{}[[events]]\nat_s = 0.5\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -5.0]\n",
            HEAD.replace(
                "at_s = 1.0\naction = \"arm\"",
                "at_s = 9.0\naction = \"disarm\""
            )
        ),
        "offboard.toml",
    )
    .unwrap();
    let mut e = engine(&s);
    run_until(&mut e, 2_000_000);
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_DISARMED);
    assert_eq!(e.autopilot().last_error(), "setpoint refused in mode 1");
}

#[test]
fn bad_setpoints_are_refused_with_the_key() {
    // Each error is located at its key's line (the event's keys start at line
    // 16; a key that is not there has none).
    for (event, at, expected) in [
        (
            "position_ned_m = [1.0, 0.0, 0.0]\nvelocity_ned_mps = [1.0, 0.0, 0.0]",
            ":16:1",
            "key `events[1].position_ned_m`: action `setpoint` takes exactly one of \
             position_ned_m, velocity_ned_mps, rates_frd_radps",
        ),
        (
            "rates_frd_radps = [0.0, 0.0, 1.0]",
            "",
            "key `events[1].thrust`: is required with rates_frd_radps",
        ),
        (
            "position_ned_m = [1.0, 0.0, 0.0]\nthrust = 0.5",
            ":17:1",
            "key `events[1].thrust`: goes with rates_frd_radps only",
        ),
        (
            "rates_frd_radps = [0.0, 0.0, 1.0]\nthrust = 1.5",
            ":17:1",
            "key `events[1].thrust`: must be in [0, 1], is 1.5",
        ),
        (
            "rates_frd_radps = [0.0, 0.0, 1.0]\nthrust = 0.5\nyaw_deg = 10.0",
            ":18:1",
            "key `events[1].yaw_deg`: goes with position_ned_m or velocity_ned_mps only",
        ),
    ] {
        let text = format!("{HEAD}[[events]]\nat_s = 2.0\naction = \"setpoint\"\n{event}\n");
        let e = Scenario::from_toml_str(&text, "offboard.toml").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("offboard.toml{at}: {expected}"),
            "{event}"
        );
    }
}

#[test]
fn motors_overridden_drive_the_plant_and_the_log_and_are_checked() {
    let s = scenario(
        "[[events]]\nat_s = 2.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -8.0]\n",
    );
    let mut e = engine(&s);
    e.set_motor_override(Some(&[0.0; 4])).unwrap();
    run_until(&mut e, 6_000_000);
    // The autopilot flies OFFBOARD, but the motors are the override's: on
    // the ground still.
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_OFFBOARD);
    assert_eq!(&e.actuators().motors[..4], &[0.0; 4]);
    assert!(e.state()[2].abs() < 0.2, "{}", e.state()[2]);
    e.set_motor_override(None).unwrap();
    run_until(&mut e, 14_000_000);
    assert!(e.state()[2] < -6.0, "{}", e.state()[2]);
    assert_eq!(
        e.set_motor_override(Some(&[0.5; 3])).unwrap_err(),
        "3 motor commands for 4 rotors"
    );
    assert_eq!(
        e.set_motor_override(Some(&[0.5, 0.5, f32::NAN, 0.5]))
            .unwrap_err(),
        "motor command 2 is NaN, outside 0..1"
    );
    assert_eq!(
        e.set_motor_override(Some(&[0.5, 1.5, 0.5, 0.5]))
            .unwrap_err(),
        "motor command 1 is 1.5, outside 0..1"
    );
}

/// The modes the timeline says the vehicle went through.
fn mode_changes(e: &Engine) -> Vec<String> {
    let (timeline, _) = e.timeline();
    timeline
        .iter()
        .filter(|t| t.what.contains(" -> "))
        .map(|t| t.what.clone())
        .collect()
}

#[test]
fn a_setpoint_onto_the_ground_lands_there_and_disarms() {
    // PX4's land detector and auto-disarm run in every mode: set down by
    // a setpoint, the vehicle is LANDED after LNDMC_TRIG_TIME (1 s) and
    // DISARMED after COM_DISARM_LAND (2 s) more, where it stood armed with
    // its motors pressing it down.
    let s = scenario(
        "[[events]]\nat_s = 2.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -4.0]\n\
         [[events]]\nat_s = 8.0\naction = \"setpoint\"\nposition_ned_m = [2.0, 1.0, 0.0]\n",
    );
    let mut e = engine(&s);
    run_until(&mut e, 20_000_000);
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_DISARMED);
    assert!(!e.crashed());
    let x = e.state();
    assert!(
        (x[0] - 2.0).hypot(x[1] - 1.0) < 0.3,
        "landed at {:?}",
        &x[..3]
    );
    assert_eq!(
        mode_changes(&e),
        [
            "disarmed -> idle",
            "idle -> offboard",
            "offboard -> landed",
            "landed -> disarmed"
        ]
    );
}

#[test]
fn landed_by_a_setpoint_it_stays_down_for_the_same_one_and_climbs_for_a_higher_one() {
    // COM_DISARM_LAND = -1: never disarmed on landing, so the setpoints
    // after the landing meet a LANDED vehicle.
    let s = Scenario::from_toml_str(
        &format!(
            "{HEAD}[[events]]\nat_s = 2.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -4.0]\n\
             [[events]]\nat_s = 7.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, 0.0]\n\
             [[events]]\nat_s = 14.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, 0.0]\n\
             [[events]]\nat_s = 14.5\naction = \"setpoint\"\nvelocity_ned_mps = [1.0, 0.0, 0.0]\n\
             [[events]]\nat_s = 15.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -3.0]\n\
             [autopilot.params]\nCOM_DISARM_LAND = -1.0\n"
        ),
        "offboard.toml",
    )
    .unwrap();
    let mut e = engine(&s);
    run_until(&mut e, 14_900_000);
    // The ground setpoint streamed again and a level velocity keep it down,
    // as they ask: no refusal.
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_LANDED);
    assert_eq!(e.autopilot().last_error(), "");
    run_until(&mut e, 20_000_000);
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_OFFBOARD);
    assert!((e.state()[2] + 3.0).abs() < 0.3, "{:?}", &e.state()[..3]);
    assert_eq!(
        mode_changes(&e),
        [
            "disarmed -> idle",
            "idle -> offboard",
            "offboard -> landed",
            "landed -> offboard"
        ]
    );
}

#[test]
fn told_to_hold_as_it_touches_down_it_lands() {
    // A ground station's "stop offboard" (a hold) as the vehicle settles
    // on a ground setpoint: holding on the ground is landing (level on
    // touchdown, then LANDED and disarmed), where it stood armed in HOLD,
    // pressing on its legs, until a wound-up horizontal integrator tipped it
    // over (MAVSDK's offboard_position_ned example ends so).
    let s = scenario(
        "[[events]]\nat_s = 2.0\naction = \"setpoint\"\nposition_ned_m = [0.0, 0.0, -4.0]\n\
         [[events]]\nat_s = 7.0\naction = \"setpoint\"\nposition_ned_m = [0.3, 0.0, 0.0]\n\
         [[events]]\nwhen = { after_s = 7.5, altitude_below_m = 0.1 }\naction = \"hold\"\n",
    );
    let mut e = engine(&s);
    run_until(&mut e, 20_000_000);
    assert!(!e.crashed());
    assert_eq!(e.actuators().mode, LOCKSTEP_MODE_DISARMED);
    assert_eq!(
        mode_changes(&e),
        [
            "disarmed -> idle",
            "idle -> offboard",
            "offboard -> hold",
            "hold -> landed",
            "landed -> disarmed"
        ]
    );
}
