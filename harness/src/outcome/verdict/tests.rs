//! The monitor against hand-made samples.

use super::*;
use crate::Micros;

fn state(alt: f64, v_down: f64, roll_rad: f64) -> [f64; 13] {
    let (s, c) = (roll_rad / 2.0).sin_cos();
    [
        0.0, 0.0, -alt, 0.0, 0.0, v_down, c, s, 0.0, 0.0, 0.0, 0.0, 0.0,
    ]
}

fn sample<'a>(t: u64, x: &'a [f64], contact: bool, soc: &'a [f64]) -> Sample<'a> {
    Sample {
        time: Micros(t),
        state: x,
        in_contact: contact,
        soc,
        mode: 0,
    }
}

#[test]
fn a_fast_touchdown_is_a_ground_impact_and_a_gentle_one_is_not() {
    let mut m = Monitor::new(Expectations::default());
    m.observe(sample(0, &state(0.0, 0.0, 0.0), true, &[1.0]));
    m.observe(sample(1, &state(1.0, 2.9, 0.0), false, &[1.0]));
    m.observe(sample(2, &state(0.0, 0.5, 0.0), true, &[1.0]));
    assert!(
        m.crashes().is_empty(),
        "2.9 m/s is below the 3 m/s threshold"
    );
    m.observe(sample(3, &state(1.0, 10.6, 0.0), false, &[1.0]));
    m.observe(sample(4, &state(0.0, 2.0, 0.0), true, &[1.0]));
    assert_eq!(
        m.crashes(),
        [Crash {
            time: Micros(4),
            kind: CrashKind::GroundImpact { speed_mps: 10.6 }
        }]
    );
    assert_eq!(
        m.crashes()[0].to_string(),
        "ground impact at 10.60 m/s at t = 0.000004 s"
    );
}

#[test]
fn tilt_past_ninety_degrees_is_inverted_and_max_tilt_is_measured() {
    let mut m = Monitor::new(Expectations {
        max_tilt_deg: Some(35.0),
        ..Expectations::default()
    });
    m.observe(sample(
        0,
        &state(5.0, 0.0, 30f64.to_radians()),
        false,
        &[1.0],
    ));
    let v = m.verdict(&End {
        time: Micros(1_000_000),
        north_m: 0.0,
        east_m: 0.0,
        on_ground: false,
        disarmed: false,
        mission_finished: false,
    });
    assert!(v.passed());
    assert_eq!(v.checks[0].detail, "at most 35°, was 30.0°");
    m.observe(sample(
        1_000_000,
        &state(5.0, 0.0, 120f64.to_radians()),
        false,
        &[1.0],
    ));
    assert_eq!(
        m.crashes()[0].to_string(),
        "inverted (tilt 120.0°) at t = 1.000000 s"
    );
    let v = m.verdict(&End {
        time: Micros(1_000_000),
        north_m: 0.0,
        east_m: 0.0,
        on_ground: false,
        disarmed: false,
        mission_finished: false,
    });
    assert!(!v.passed());
    assert_eq!(v.checks[0].detail, "at most 35°, was 120.0°");
}

#[test]
fn leaving_the_volume_and_an_empty_pack_in_the_air_are_crashes() {
    let mut m = Monitor::new(Expectations {
        volume: Some(Volume {
            north_m: [-10.0, 10.0],
            east_m: [-10.0, 10.0],
            altitude_m: [-1.0, 20.0],
        }),
        ..Expectations::default()
    });
    m.observe(sample(0, &state(25.0, 0.0, 0.0), false, &[0.5, 0.0]));
    assert_eq!(
        m.crashes()
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>(),
        [
            "left the declared volume at N 0.0 m, E 0.0 m, altitude 25.0 m at t = 0.000000 s",
            "battery 1 empty in the air at altitude 25.0 m at t = 0.000000 s"
        ]
    );
    // An empty pack on the ground is not a crash.
    let mut m = Monitor::new(Expectations::default());
    m.observe(sample(0, &state(0.0, 0.0, 0.0), true, &[0.0]));
    assert!(m.crashes().is_empty());
}

#[test]
fn end_checks_report_expected_and_found() {
    let m = Monitor::new(Expectations {
        mission_finished: Some(true),
        disarmed: Some(true),
        landed_within: Some(Spot {
            north_m: 0.0,
            east_m: 0.0,
            radius_m: 2.0,
        }),
        min_soc: Some(0.2),
        ..Expectations::default()
    });
    let v = m.verdict(&End {
        time: Micros(1_000_000),
        north_m: 3.0,
        east_m: 4.0,
        on_ground: true,
        disarmed: true,
        mission_finished: false,
    });
    let d: Vec<_> = v
        .checks
        .iter()
        .map(|c| (c.key, c.passed, c.detail.as_str()))
        .collect();
    assert_eq!(
        d,
        [
            (
                "expect.mission_finished",
                false,
                "expected finished, the mission did not finish"
            ),
            (
                "expect.disarmed",
                true,
                "expected to end disarmed, ended disarmed"
            ),
            (
                "expect.landed_within",
                false,
                "expected on the ground within 2 m of N 0 m, E 0 m; on the ground 5.00 m from it"
            ),
            ("expect.min_soc", true, "at least 0.2, was inf"),
        ]
    );
    assert!(!v.passed());
}

/// A state at (n, e, altitude), level, yawing at `r_dps`.
fn at(n: f64, e: f64, alt: f64, r_dps: f64) -> [f64; 13] {
    [
        n,
        e,
        -alt,
        0.0,
        0.0,
        0.0,
        1.0,
        0.0,
        0.0,
        0.0,
        0.0,
        0.0,
        r_dps.to_radians(),
    ]
}

fn in_mode(t: u64, x: &[f64], contact: bool, mode: u32) -> Sample<'_> {
    Sample {
        time: Micros(t),
        state: x,
        in_contact: contact,
        soc: &[1.0],
        mode,
    }
}

fn item(command: u32, ne: Option<(f64, f64)>, alt: f64, hold_s: f64) -> PlanItem {
    PlanItem {
        command,
        north_east: ne,
        altitude_m: alt,
        hold_s,
    }
}

use lockstep_abi::ffi::{
    LOCKSTEP_MAV_CMD_DO_JUMP, LOCKSTEP_MAV_CMD_NAV_LAND, LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH,
    LOCKSTEP_MAV_CMD_NAV_TAKEOFF, LOCKSTEP_MAV_CMD_NAV_WAYPOINT, LOCKSTEP_MODE_HOLD,
    LOCKSTEP_MODE_MISSION,
};

/// A square: up 10 m, four 20 m legs with 2 s holds, land.
fn square() -> Vec<PlanItem> {
    vec![
        item(LOCKSTEP_MAV_CMD_NAV_TAKEOFF, None, 10.0, 0.0),
        item(LOCKSTEP_MAV_CMD_NAV_WAYPOINT, Some((20.0, 0.0)), 10.0, 2.0),
        item(LOCKSTEP_MAV_CMD_NAV_WAYPOINT, Some((20.0, 20.0)), 10.0, 2.0),
        item(LOCKSTEP_MAV_CMD_NAV_WAYPOINT, Some((0.0, 20.0)), 10.0, 2.0),
        item(LOCKSTEP_MAV_CMD_NAV_WAYPOINT, Some((0.0, 0.0)), 10.0, 2.0),
        item(LOCKSTEP_MAV_CMD_NAV_LAND, None, 0.0, 0.0),
    ]
}

#[test]
fn a_missions_estimate_is_its_legs_at_a_slow_pace_plus_its_holds() {
    // 10 m up at 1 m/s, 80 m along at 2.5 m/s, 8 s of holds, 10 m down at
    // 0.5 m/s, and 10 s: 10 + 32 + 8 + 20 + 10.
    assert_eq!(estimate(&square(), (0.0, 0.0, 0.0)), Some(80.0));
    // Home from 30 m north: 12 s along, 20 s down.
    let rtl = [
        item(LOCKSTEP_MAV_CMD_NAV_TAKEOFF, None, 10.0, 0.0),
        item(LOCKSTEP_MAV_CMD_NAV_WAYPOINT, Some((30.0, 0.0)), 10.0, 0.0),
        item(LOCKSTEP_MAV_CMD_NAV_RETURN_TO_LAUNCH, None, 0.0, 0.0),
    ];
    assert_eq!(
        estimate(&rtl, (0.0, 0.0, 0.0)),
        Some(10.0 + 12.0 + 12.0 + 20.0 + 10.0)
    );
    let jump = [item(LOCKSTEP_MAV_CMD_DO_JUMP, None, 0.0, 0.0)];
    assert_eq!(estimate(&jump, (0.0, 0.0, 0.0)), None, "a jump: unknown");
}

#[test]
fn a_mission_that_had_the_time_and_did_not_finish_fails_unless_told() {
    let end = |t_s: u64, finished: bool| End {
        time: Micros(t_s * 1_000_000),
        north_m: 0.0,
        east_m: 0.0,
        on_ground: false,
        disarmed: false,
        mission_finished: finished,
    };
    let flown = |expect: Expectations| {
        let mut m = Monitor::new(expect);
        m.set_mission((0.0, 0.0, 0.0), &square());
        m.observe(in_mode(
            2_000_000,
            &at(0.0, 0.0, 0.0, 0.0),
            true,
            LOCKSTEP_MODE_MISSION,
        ));
        m
    };
    let m = flown(Expectations::default());
    // Started at 2 s, 80 s needed: due at 82 s.
    assert!(m.verdict(&end(81, false)).passed(), "not yet due");
    assert!(m.verdict(&end(200, true)).passed(), "finished");
    let v = m.verdict(&end(82, false));
    assert!(!v.passed());
    assert_eq!(v.checks.len(), 1);
    assert_eq!(
        v.checks[0].detail,
        "not given, so expected finished: the mission started at t = 2.000000 s and needed 80 s \
         at most by a generous estimate; it had 80 s and did not finish (set \
         expect.mission_finished = false if that is intended)"
    );
    let told = flown(Expectations {
        mission_finished: Some(false),
        ..Expectations::default()
    });
    assert!(
        told.verdict(&end(200, false)).passed(),
        "the scenario said so"
    );
    // A mission uploaded during the run: its length is not known.
    let mut uploaded = flown(Expectations::default());
    uploaded.add_mission(&square());
    assert!(uploaded.verdict(&end(200, false)).passed());
}

#[test]
fn leaving_the_missions_area_by_the_margin_is_a_fly_away() {
    let mut m = Monitor::new(Expectations::default());
    m.set_mission((0.0, 0.0, 0.0), &square());
    m.observe(in_mode(0, &at(0.0, 0.0, 0.0, 0.0), true, 0));
    m.observe(in_mode(
        1,
        &at(119.0, 20.0, 10.0, 0.0),
        false,
        LOCKSTEP_MODE_MISSION,
    ));
    m.observe(in_mode(
        2,
        &at(10.0, -99.0, 109.0, 0.0),
        false,
        LOCKSTEP_MODE_MISSION,
    ));
    assert!(
        m.crashes().is_empty(),
        "within 100 m of the square and its 10 m ceiling"
    );
    m.observe(in_mode(
        3,
        &at(123.0, 24.0, 10.0, 0.0),
        false,
        LOCKSTEP_MODE_MISSION,
    ));
    assert_eq!(
        m.crashes()[0].to_string(),
        "fly-away: at N 123.0 m, E 24.0 m, altitude 10.0 m, 3.1 m beyond the fence round the \
         mission's area at t = 0.000003 s"
    );
    // Climbing away counts too; so does a mission given during the run.
    let mut m = Monitor::new(Expectations::default());
    m.observe(in_mode(0, &at(0.0, 0.0, 0.0, 0.0), true, 0));
    m.add_mission(&[item(
        LOCKSTEP_MAV_CMD_NAV_WAYPOINT,
        Some((400.0, 0.0)),
        30.0,
        0.0,
    )]);
    m.observe(in_mode(
        1,
        &at(450.0, 0.0, 30.0, 0.0),
        false,
        LOCKSTEP_MODE_HOLD,
    ));
    assert!(m.crashes().is_empty(), "the uploaded mission's area");
    m.observe(in_mode(
        2,
        &at(450.0, 0.0, 131.0, 0.0),
        false,
        LOCKSTEP_MODE_HOLD,
    ));
    assert!(
        m.crashes()[0]
            .to_string()
            .contains("1.0 m beyond the fence"),
        "{}",
        m.crashes()[0]
    );
    // A declared volume replaces the fence; a tuned margin moves it.
    for expect in [
        Expectations {
            volume: Some(Volume {
                north_m: [-1000.0, 1000.0],
                east_m: [-1000.0, 1000.0],
                altitude_m: [-1.0, 500.0],
            }),
            ..Expectations::default()
        },
        Expectations {
            fly_away_margin_m: 1000.0,
            ..Expectations::default()
        },
    ] {
        let mut m = Monitor::new(expect);
        m.observe(in_mode(0, &at(0.0, 0.0, 0.0, 0.0), true, 0));
        m.observe(in_mode(
            1,
            &at(900.0, 0.0, 10.0, 0.0),
            false,
            LOCKSTEP_MODE_HOLD,
        ));
        assert!(m.crashes().is_empty(), "{expect:?}");
    }
}

#[test]
fn a_spin_or_a_tilt_held_in_the_air_is_a_loss_of_control() {
    let mut m = Monitor::new(Expectations::default());
    // 400°/s for 1.9 s, then a pause: not yet.
    for k in 0..=19 {
        m.observe(in_mode(k * 100_000, &at(0.0, 0.0, 5.0, 400.0), false, 0));
    }
    m.observe(in_mode(2_000_000, &at(0.0, 0.0, 5.0, 100.0), false, 0));
    assert!(m.crashes().is_empty());
    // On the ground it is no flight.
    for k in 0..=30 {
        m.observe(in_mode(
            3_000_000 + k * 100_000,
            &at(0.0, 0.0, 0.0, 400.0),
            true,
            0,
        ));
    }
    assert!(m.crashes().is_empty());
    for k in 0..=20 {
        m.observe(in_mode(
            7_000_000 + k * 100_000,
            &at(0.0, 0.0, 5.0, -400.0),
            false,
            0,
        ));
    }
    assert_eq!(
        m.crashes()[0].to_string(),
        "loss of control: spinning at 400°/s for 2.0 s in the air at t = 9.000000 s"
    );
    // 65° of tilt for 2 s; a tuned threshold lets 65° pass.
    let tilted = state(5.0, 0.0, 65f64.to_radians());
    for (expect, crashes) in [
        (Expectations::default(), 1),
        (
            Expectations {
                loss_of_control_tilt_deg: 70.0,
                ..Expectations::default()
            },
            0,
        ),
    ] {
        let mut m = Monitor::new(expect);
        for k in 0..=20 {
            m.observe(in_mode(k * 100_000, &tilted, false, 0));
        }
        assert_eq!(m.crashes().len(), crashes);
        if crashes == 1 {
            assert_eq!(
                m.crashes()[0].to_string(),
                "loss of control: tilted 65° for 2.0 s in the air at t = 2.000000 s"
            );
        }
    }
}

#[test]
fn the_monitor_travels_whole() {
    use crate::persist::Persist;
    let mut m = Monitor::new(Expectations::default());
    m.set_mission((0.0, 0.0, 0.0), &square());
    m.observe(in_mode(
        1_000_000,
        &at(0.0, 0.0, 5.0, 400.0),
        false,
        LOCKSTEP_MODE_MISSION,
    ));
    m.observe(in_mode(
        2_000_000,
        &at(300.0, 0.0, 5.0, 400.0),
        false,
        LOCKSTEP_MODE_MISSION,
    ));
    let mut bytes = Vec::new();
    m.save(&mut bytes);
    let mut back = Monitor::new(Expectations::default());
    back.load(&mut crate::persist::Reader::new(&bytes)).unwrap();
    let mut again = Vec::new();
    back.save(&mut again);
    assert_eq!(bytes, again);
    // The spin that began before the move is still timed after it.
    back.observe(in_mode(
        3_000_000,
        &at(300.0, 0.0, 5.0, 400.0),
        false,
        LOCKSTEP_MODE_MISSION,
    ));
    assert!(
        back.crashes().iter().any(|c| c
            .to_string()
            .starts_with("loss of control: spinning at 400°/s for 2.0 s")),
        "{:?}",
        back.crashes()
    );
}
