//! A vehicle moved to a new engine mid-flight (its state snapshot and
//! restored, its autopilot instance replaced) goes on exactly as if it had
//! not moved: the logs are bit-identical, through wind, gusts, faults,
//! sensor faults, adaptive integrators and isolated autopilots.

use std::path::{Path, PathBuf};

use crate::common::{BUNDLED, HOST, TempDir, examples};
use lockstep_abi::{Isolation, IsolationOptions};
use lockstep_fleet::run::log_path;
use lockstep_fleet::{Fleet, FleetScenario};
use lockstep_harness::engine::RunOptions;
use lockstep_harness::io::digest::file_digest;

/// Three vehicles in busy weather: every kind of state a vehicle carries
/// is live when it moves.
fn busy(dir: &Path, simulation: &str, wind: &str) -> PathBuf {
    let lane = |i: u32| {
        examples()
            .join(format!("missions/swarm/lane_{i:02}.waypoints"))
            .display()
            .to_string()
    };
    let text = format!(
        r#"schema_version = 1
{simulation}
[cadences]
log = {{ rate_hz = 50 }}
[world]
origin_lat_deg = 47.397742
origin_lon_deg = 8.545594
origin_alt_m = 488.0
{wind}
[estimator]
delay_us = 20000
[expect]
allow_crash = true
[[events]]
at_s = 0.5
action = "arm"
[[events]]
at_s = 1.0
action = "mission_start"
[[events]]
at_s = 4.0
action = "wind_gust"
gust = {{ amplitude_ned_mps = [0.0, 3.0, 0.0], rise_s = 0.5, hold_s = 1.0, fall_s = 0.5 }}
[[events]]
when = {{ altitude_above_m = 6.0 }}
action = "sensor_noise_scale"
sensor = "imu"
value = 2.0
[[vehicles]]
name = "a"
spec = "iris"
mission = "{a}"
[[vehicles]]
name = "b"
spec = "hexa"
mission = "{b}"
start_north_m = 10.0
[[vehicles.events]]
at_s = 6.0
action = "sensor_bias_step"
sensor = "baro"
value = 1.5
[[vehicles]]
name = "c"
spec = "iris"
mission = "{c}"
start_north_m = 20.0
[[vehicles.events]]
at_s = 7.0
action = "thrust_loss"
motor = 1
fraction = 0.3
"#,
        a = lane(0),
        b = lane(1),
        c = lane(2),
    );
    let p = dir.join("busy.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs the fleet, moving vehicle `k % n` after the round that passes
/// every `every`-th sync boundary (never when `every` is 0); the logs'
/// digests.
fn fly(scenario: &Path, out: &Path, iso: &Isolation, every: u64) -> Vec<String> {
    let fs = FleetScenario::load(scenario).unwrap();
    let o = RunOptions {
        autopilot: PathBuf::from(BUNDLED),
        log_dir: Some(out.to_path_buf()),
        isolation: iso.clone(),
        threads: Some(2),
    };
    let mut fleet = Fleet::new(&fs, &o).unwrap();
    let mut last = 0u64;
    let mut moved = 0;
    while fleet.step().unwrap().is_some() {
        // Sync boundaries passed (a round of the lookahead passes many).
        let k = fleet.now().0 / fs.sync.0;
        let due = every > 0 && k / every != last / every;
        last = k;
        if due && fleet.next_sync().is_some() {
            fleet
                .migrate((k / every) as usize % fs.vehicles.len())
                .unwrap();
            moved += 1;
        }
    }
    fleet.finish(Ok(())).unwrap();
    if every > 0 {
        assert!(moved > 5, "{moved} moves");
    }
    fs.vehicles
        .iter()
        .map(|v| file_digest(&log_path(out, &v.name)).unwrap())
        .collect()
}

fn same_with_and_without_moves(simulation: &str, wind: &str, iso: &Isolation, every: u64) {
    let dir = TempDir::new("fleet_migration");
    let scenario = busy(dir.path(), simulation, wind);
    let still = fly(&scenario, &dir.join("still"), iso, 0);
    let moving = fly(&scenario, &dir.join("moving"), iso, every);
    assert_eq!(still, moving);
}

#[test]
fn moved_vehicles_fly_on_bit_for_bit_in_gusty_turbulence() {
    same_with_and_without_moves(
        "[simulation]\nseed = 3\nduration_s = 10.0",
        "[wind]\nmodel = \"ornstein_uhlenbeck\"\nmean_ned_mps = [1.0, 0.5, 0.0]\n\
         sigma_mps = [0.8, 0.8, 0.3]\ntau_s = [3.0, 3.0, 1.0]",
        &Isolation::InProcess,
        97,
    );
}

#[test]
fn moved_vehicles_fly_on_bit_for_bit_event_driven_in_dryden_wind() {
    same_with_and_without_moves(
        "[simulation]\nseed = 4\nduration_s = 8.0\nengine = \"event_driven\"\nintegrator = \"bs32\"",
        "[wind]\nmodel = \"dryden\"\nmean_ned_mps = [3.0, 0.0, 0.0]",
        &Isolation::InProcess,
        61,
    );
}

#[test]
fn moved_isolated_autopilots_fly_on_bit_for_bit() {
    let iso = Isolation::Process(IsolationOptions {
        host: Some(HOST.into()),
        ..IsolationOptions::default()
    });
    same_with_and_without_moves("[simulation]\nseed = 5\nduration_s = 8.0", "", &iso, 150);
}

#[test]
fn a_state_from_another_scenario_is_refused() {
    let dir = TempDir::new("fleet_migration_refused");
    let scenario = busy(dir.path(), "[simulation]\nseed = 3\nduration_s = 8.0", "");
    let fs = FleetScenario::load(&scenario).unwrap();
    let o = RunOptions {
        autopilot: PathBuf::from(BUNDLED),
        log_dir: None,
        isolation: Isolation::InProcess,
        threads: Some(1),
    };
    let mut fleet = Fleet::new(&fs, &o).unwrap();
    fleet.step().unwrap();
    let mut iris = lockstep_harness::engine::Engine::with_isolation(
        &fs.vehicles[0].scenario,
        Path::new(BUNDLED),
        None,
        &Isolation::InProcess,
    )
    .unwrap();
    let mut hexa = lockstep_harness::engine::Engine::with_isolation(
        &fs.vehicles[1].scenario,
        Path::new(BUNDLED),
        None,
        &Isolation::InProcess,
    )
    .unwrap();
    let state = hexa.snapshot().unwrap();
    let e = iris.restore(&state).unwrap_err().to_string();
    assert_eq!(
        e,
        "the vehicle state does not fit this vehicle: 5 events where this scenario has 4"
    );
    let e = iris.restore(&state[..100]).unwrap_err().to_string();
    assert!(e.starts_with("the vehicle state ends early"), "{e}");
    let e = iris.restore(b"not a state at all").unwrap_err().to_string();
    assert_eq!(
        e,
        "the vehicle state does not fit this vehicle: not a lockstep vehicle state (or of \
         another version)"
    );
}
