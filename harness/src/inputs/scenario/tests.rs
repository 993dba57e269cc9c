//! Unit tests of scenario loading.
use super::*;
use crate::environment::sensors::GpsConfig;

const BASE: &str =
    "schema_version = 1\n[simulation]\nseed = 7\nduration_s = 60.0\n[vehicle]\nspec = \"iris\"\n";

fn parse(extra: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml_str(&format!("{BASE}{extra}"), "test.toml")
}

#[test]
fn defaults_and_every_period_form() {
    let s = parse("[cadences]\nautopilot = { rate_hz = 250 }\ngps = { period_s = 0.2 }\nlog = { period_us = 10000 }\n").unwrap();
    assert_eq!(
        (s.seed, s.duration, s.tick, s.integrator),
        (7, Micros(60_000_000), Micros(1000), Method::Rk4)
    );
    assert_eq!(s.cadence("autopilot"), Some(Micros(4000)));
    assert_eq!(s.cadence("gps"), Some(Micros(200_000)));
    assert_eq!(s.cadence("log"), Some(Micros(10_000)));
    assert_eq!(s.cadence("physics"), Some(Micros(1000)));
    assert_eq!(
        parse("").unwrap().cadence("log"),
        None,
        "no log unless asked"
    );
    assert_eq!(s.wind, WindModel::Constant { ned_mps: [0.0; 3] });
}

#[test]
fn cadence_errors_name_the_cadence_and_nearest_values() {
    let e = parse("[cadences]\nautopilot = { rate_hz = 120 }\n").unwrap_err();
    assert!(e.to_string().starts_with("test.toml:8:1: key `cadences.autopilot`: 0.008333333333333333 s is not a whole number of microseconds; nearest valid: 8000 us or 9000 us"), "{e}");
    let e = parse("[cadences]\nbaro = { period_us = 12500 }\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.toml:8:1: key `cadences.baro`: 12500 us is not a multiple of the base tick of 1000 us; nearest valid: 12000 us or 13000 us"
    );
    let e = parse("[cadences]\nautopilot = { period_s = 61.0 }\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.toml:8:1: key `cadences.autopilot`: 61000000 us is longer than the run (60000000 us): the autopilot would step once, at t = 0"
    );
    let e = parse("[cadences]\nimu = { period_us = 4000, rate_hz = 250 }\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.toml:8:1: key `cadences.imu`: give exactly one of period_us, period_s, rate_hz"
    );
    let e = parse("[cadences]\nlidar = { rate_hz = 10 }\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.toml:8:1: unknown key `cadences.lidar` (valid in [cadences]: autopilot, baro, estimator, gps, imu, log, mag, physics, wind)"
    );
}

#[test]
fn events_parse_with_their_parameters() {
    let s = parse(
        "[wind]\nmodel = \"ornstein_uhlenbeck\"\nmean_ned_mps = [2.0, 1.0, 0.0]\nsigma_mps = [0.8, 0.8, 0.3]\ntau_s = [5.0, 5.0, 2.0]\n\
         [[events]]\nat_s = 1.0\naction = \"arm\"\n\
         [[events]]\nwhen = { altitude_above_m = 5.0, since_mission_start_s = 2.0 }\naction = \"motor_fail\"\nmotor = 3\n\
         [[events]]\nat_us = 2500\naction = \"wind_gust\"\ngust = { amplitude_ned_mps = [3.0, 0.0, 0.0], rise_s = 0.5, hold_s = 2.0 }\n\
         [[events]]\nat_s = 3.0\naction = \"sensor_bias_step\"\nsensor = \"baro\"\nvalue = 50.0\n",
    )
    .unwrap();
    assert!(matches!(s.wind, WindModel::OrnsteinUhlenbeck { .. }));
    let d = parse("[wind]\nmodel = \"dryden\"\nmean_ned_mps = [3.0, 4.0, 0.0]\n").unwrap();
    assert_eq!(
        d.wind,
        WindModel::Dryden {
            mean_ned_mps: [3.0, 4.0, 0.0],
            w20_mps: 5.0
        }
    );
    assert_eq!(
        s.events[0],
        Event {
            trigger: Trigger::At(Micros(1_000_000)),
            action: Action::Arm
        }
    );
    assert_eq!(
        s.events[1].trigger,
        Trigger::When(Condition {
            altitude_above_m: Some(5.0),
            since_mission_start: Some(Micros(2_000_000)),
            ..Condition::default()
        })
    );
    assert_eq!(s.events[1].action, Action::MotorFail { motor: 3 });
    assert_eq!(
        s.events[2].action,
        Action::WindGust {
            amplitude_ned_mps: [3.0, 0.0, 0.0],
            rise: Micros(500_000),
            hold: Micros(2_000_000),
            fall: Micros(0)
        }
    );
    assert_eq!(
        s.events[3].action,
        Action::SensorBiasStep {
            sensor: SensorId::Baro,
            value: 50.0
        }
    );
}

#[test]
fn sensor_settings_overlay_the_defaults() {
    let s = parse("[sensors.gps]\ndelay_us = 150000\nhorizontal_noise_m = 1.0\n[estimator]\ndelay_us = 0\nposition_noise_m = 0.1\n").unwrap();
    assert_eq!(
        (s.sensors.gps.delay, s.sensors.gps.horizontal_noise_m),
        (Micros(150_000), 1.0)
    );
    assert_eq!(
        s.sensors.gps.vertical_noise_m,
        GpsConfig::default().vertical_noise_m
    );
    assert_eq!(
        (
            s.sensors.estimator.delay,
            s.sensors.estimator.position_noise_m
        ),
        (Micros(0), 0.1)
    );
    assert_eq!(parse("").unwrap().sensors, SensorSettings::default());
    let e = parse("[sensors.baro]\nnoise_pa = -1.0\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.toml:8:1: key `sensors.baro.noise_pa`: must be in [0, 10000], is -1"
    );
    let e = parse("[sensors.imu]\nnoise = 1.0\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "test.toml:8:1: unknown key `sensors.imu.noise` (valid in [sensors.imu]: accel_bias_walk_mps2_per_sqrt_s, accel_noise_mps2, gyro_bias_walk_radps_per_sqrt_s, gyro_noise_radps)"
    );
}

#[test]
fn event_errors_name_the_event_and_key() {
    let cases = [
        (
            "[[events]]\naction = \"arm\"\n",
            "test.toml: key `events[0].at_s`: give exactly one of at_s, at_us, when",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"explode\"\n",
            "test.toml:9:1: key `events[0].action`: `explode` is not an action",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"motor_fail\"\n",
            "test.toml: key `events[0].motor`: is required by action `motor_fail`",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"thrust_loss\"\nmotor = 1\nfraction = 1.5\n",
            "test.toml:11:1: key `events[0].fraction`: must be in [0, 1], is 1.5",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"push\"\n",
            "test.toml: key `events[0].force_ned_n`: is required by action `push`",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"takeoff\"\nheight_m = 600.0\n",
            "test.toml:10:1: key `events[0].height_m`: must be in [0.5, 500], is 600",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"land\"\nheight_m = 5.0\n",
            "test.toml:10:1: key `events[0].height_m`: goes with action `takeoff` only",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"push\"\nforce_ned_n = [0.0, 2e4, 0.0]\n",
            "test.toml:10:21: key `events[0].force_ned_n[1]`: must be in [-10000, 10000], is 20000",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"sensor_dropout\"\nsensor = \"lidar\"\n",
            "test.toml:10:1: key `events[0].sensor`: `lidar` is not one of imu, mag, baro, gps, estimator",
        ),
        (
            "[[events]]\nat_s = 1.00000025\naction = \"arm\"\n",
            "test.toml:8:1: key `events[0].at_s`: cadence `events[0].at_s`: 1.00000025 s is not a whole number of microseconds",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"arm\"\nmotr = 1\n",
            "test.toml:10:1: unknown key `events.0.motr` (valid in [events.0]: action, at_s, at_us, battery, force_ned_n, fraction, gust, height_m, motor, position_ned_m, rates_frd_radps, sensor, thrust, value, velocity_ned_mps, when, yaw_deg)",
        ),
        (
            "[simulation.extra]\n",
            "test.toml:7:13: unknown key `simulation.extra` (valid in [simulation]: duration_s, engine, integrator, seed, tick_us)",
        ),
    ];
    for (extra, expect) in cases {
        let e = parse(extra).unwrap_err().to_string();
        assert!(
            e.starts_with(expect),
            "{extra:?}\n  got {e}\n  expected {expect}"
        );
    }
    let e = Scenario::from_toml_str(
        "schema_version = 2\n[simulation]\nduration_s = 1.0\n[vehicle]\nspec = \"iris\"\n",
        "v.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "v.toml:1:1: key `schema_version`: 2 is not supported (this build reads 1)"
    );
    let e = Scenario::from_toml_str(
        "schema_version = 1\n[simulation]\nduration_s = 1.0\nengine = \"event_driven\"\n[vehicle]\nspec = \"iris\"\n",
        "e.toml",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "e.toml: key `simulation.integrator`: the event_driven engine needs an adaptive integrator (bs32, dp54), not rk4"
    );
    let e = parse("[simulation.integrator]\n").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "test.toml:7:13: key `simulation.integrator`: invalid type: map, expected a string"
        ),
        "{e}"
    );
}

#[test]
fn every_number_is_checked_at_load_with_its_key_path() {
    let cases = [
        (
            "[wind]\nmodel = \"constant\"\nmean_ned_mps = [nan, 0.0, 0.0]\n",
            "9:17: key `wind.mean_ned_mps[0]`: must be a finite number, is NaN",
        ),
        (
            "[wind]\nmodel = \"ornstein_uhlenbeck\"\nmean_ned_mps = [1.0, 0.0, 0.0]\nsigma_mps = [0.5, 80.0, 0.1]\ntau_s = [1.0, 1.0, 1.0]\n",
            "10:19: key `wind.sigma_mps[1]`: must be in [0, 50], is 80",
        ),
        (
            "[wind]\nmodel = \"ornstein_uhlenbeck\"\nsigma_mps = [0.5, 0.5, 0.1]\ntau_s = [1.0, 0.0, 1.0]\n",
            "10:15: key `wind.tau_s[1]`: must be positive and at most 100000, is 0",
        ),
        (
            "[sensors.gps]\ndelay_us = 20000000\n",
            "8:1: key `sensors.gps.delay_us`: must be at most 10000000 us (10 s), is 20000000",
        ),
        (
            "[estimator]\ndelay_us = 99999999999\n",
            "8:1: key `estimator.delay_us`: must be at most 10000000 us (10 s), is 99999999999",
        ),
        (
            "[sensors.mag]\nfield_ned_gauss = [0.2, inf, 0.4]\n",
            "8:25: key `sensors.mag.field_ned_gauss[1]`: must be a finite number, is inf",
        ),
        (
            "[[events]]\nat_s = 61.0\naction = \"arm\"\n",
            "8:1: key `events[0].at_s`: must be in [0, 60], is 61",
        ),
        (
            "[[events]]\nat_us = 60000001\naction = \"arm\"\n",
            "8:1: key `events[0].at_us`: must be at most the run's end, 60000000 us, is 60000001",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"wind_gust\"\ngust = { amplitude_ned_mps = [1e9, 0.0, 0.0], hold_s = 1.0 }\n",
            "10:31: key `events[0].gust.amplitude_ned_mps[0]`: must be in [-100, 100], is 1e9",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"wind_gust\"\ngust = { amplitude_ned_mps = [1.0, 0.0, 0.0], hold_s = 1e300 }\n",
            "10:47: key `events[0].gust.hold_s`: must be in [0, 60], is 1e300",
        ),
        (
            "[[events]]\nwhen = {}\naction = \"rtl\"\n",
            "8:1: key `events[0].when`: names no condition (altitude_above_m, altitude_below_m, soc_below, mission_item_at_least, after_s, since_mission_start_s): it would fire at once; for that, write at_s = 0",
        ),
        (
            "[[events]]\nwhen = { soc_below = 1.5 }\naction = \"rtl\"\n",
            "8:10: key `events[0].when.soc_below`: must be in [0, 1], is 1.5",
        ),
        (
            "[[events]]\nwhen = { altitude_above_m = nan }\naction = \"rtl\"\n",
            "8:10: key `events[0].when.altitude_above_m`: must be a finite number, is NaN",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"motor_fail\"\nmotor = 12\n",
            "10:1: key `events[0].motor`: must be below 12, is 12",
        ),
        (
            "[[events]]\nat_s = 1.0\naction = \"sensor_noise_scale\"\nsensor = \"imu\"\nvalue = -1.0\n",
            "11:1: key `events[0].value`: must be in [0, 1000], is -1",
        ),
    ];
    for (extra, expected) in cases {
        let e = parse(extra).unwrap_err().to_string();
        // `expected` starts with the key's line and column.
        assert_eq!(e, format!("test.toml:{expected}"), "{extra}");
    }
}

#[test]
fn durations_start_and_tick_are_bounded() {
    let with = |sim: &str, vehicle: &str| {
        Scenario::from_toml_str(
            &format!(
                "schema_version = 1\n[simulation]\n{sim}\n[vehicle]\nspec = \"iris\"\n{vehicle}"
            ),
            "test.toml",
        )
        .unwrap_err()
        .to_string()
    };
    assert_eq!(
        with("duration_s = 1e300", ""),
        "test.toml:3:1: key `simulation.duration_s`: must be positive and at most 10000000, is 1e300"
    );
    assert_eq!(
        with("duration_s = -1.0", ""),
        "test.toml:3:1: key `simulation.duration_s`: must be positive and at most 10000000, is -1"
    );
    assert_eq!(
        with("duration_s = 10.0\ntick_us = 2000000", ""),
        "test.toml:4:1: key `simulation.tick_us`: must be in [1, 1000000], is 2000000"
    );
    assert_eq!(
        with("duration_s = 10.0", "start_north_m = nan"),
        "test.toml:6:1: key `vehicle.start_north_m`: must be a finite number, is NaN"
    );
    assert_eq!(
        with("duration_s = 10.0", "start_east_m = 2e6"),
        "test.toml:6:1: key `vehicle.start_east_m`: must be in [-1000000, 1000000], is 2000000"
    );
    // The loss-of-control and fly-away thresholds.
    for (expect, message) in [
        (
            "fly_away_margin_m = 0.0",
            "test.toml:7:1: key `expect.fly_away_margin_m`: must be positive and at most 1000000, is 0",
        ),
        (
            "loss_of_control_tilt_deg = 200.0",
            "test.toml:7:1: key `expect.loss_of_control_tilt_deg`: must be positive and at most 180, is 200",
        ),
        (
            "loss_of_control_s = inf",
            "test.toml:7:1: key `expect.loss_of_control_s`: must be a finite number, is inf",
        ),
        (
            "loss_of_control_yaw_rate_dps = -1.0",
            "test.toml:7:1: key `expect.loss_of_control_yaw_rate_dps`: must be positive and at most 100000, is -1",
        ),
    ] {
        assert_eq!(
            with("duration_s = 10.0", &format!("[expect]\n{expect}")),
            message
        );
    }
}

#[test]
fn relative_paths_resolve_only_against_the_scenario_directory() {
    let dir = std::env::temp_dir().join(format!("lockstep-paths-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    // A mission next to the working directory's idea of "m.waypoints" must
    // not be picked up: only the scenario's directory counts.
    let text = "schema_version = 1\n[simulation]\nduration_s = 10.0\n[vehicle]\nspec = \"iris\"\nmission = \"m.waypoints\"\n";
    let scenario = dir.join("sub/s.toml");
    let e = Scenario::from_toml_str(text, &scenario)
        .unwrap_err()
        .to_string();
    let resolved = dir.join("sub/m.waypoints");
    assert_eq!(
        e,
        format!(
            "{}:6:1: key `vehicle.mission`: {}: No such file or directory (os error 2) (relative paths are relative to the scenario's directory)",
            scenario.display(),
            resolved.display()
        )
    );
    std::fs::write(&resolved, "QGC WPL 110\n").unwrap();
    let s = Scenario::from_toml_str(text, &scenario).unwrap();
    assert_eq!(s.mission.as_deref(), Some(resolved.as_path()));
    let text =
        "schema_version = 1\n[simulation]\nduration_s = 10.0\n[vehicle]\nspec = \"quad.toml\"\n";
    let e = Scenario::from_toml_str(text, &scenario)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{}:5:1: key `vehicle.spec`: `quad.toml` is not a built-in spec (",
            scenario.display()
        )) && e.ends_with(&format!(
            ") and {}: No such file or directory (os error 2) (relative paths are relative to the scenario's directory)",
            dir.join("sub/quad.toml").display()
        )),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
