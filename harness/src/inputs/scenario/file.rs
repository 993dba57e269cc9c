//! The scenario file as written: serde structs, strict (unknown keys are
//! errors), checked and turned into a [`super::Scenario`] by the loader.

use schemars::JsonSchema;
use serde::Deserialize;

use super::EngineKind;

fn default_tick() -> u64 {
    1000
}
fn default_integrator() -> String {
    "rk4".into()
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct File {
    /// The scenario format version: 1.
    pub schema_version: u32,
    /// One line saying what the scenario flies.
    #[serde(default)]
    pub description: Option<String>,
    /// Seed, duration, engine and integrator.
    pub simulation: SimulationSection,
    /// How often each part runs.
    #[serde(default)]
    pub cadences: CadencesSection,
    /// The aircraft, its mission and where it starts.
    pub vehicle: VehicleSection,
    /// The wind (default: calm).
    #[serde(default)]
    pub wind: Option<WindSection>,
    /// Sensor noise and delays over the defaults.
    #[serde(default)]
    pub sensors: SensorsSection,
    /// The estimated state the autopilot receives: noise, biases, delay.
    #[serde(default)]
    pub estimator: Option<EstimatorSection>,
    /// Commands, faults and gusts at a time or when a condition holds.
    #[serde(default)]
    pub events: Vec<EventSection>,
    /// Autopilot parameters, set by name after the library creates its instance.
    #[serde(default)]
    pub autopilot: Option<AutopilotSection>,
    /// Crash thresholds and the conditions of the verdict.
    #[serde(default)]
    pub expect: Option<ExpectSection>,
    /// The world origin (default: the mission's home, else the spec's).
    #[serde(default)]
    pub world: Option<WorldSection>,
    /// What `lockstep montecarlo` disperses from run to run.
    #[serde(default)]
    pub montecarlo: Option<MonteCarloSection>,
}

/// `[montecarlo]`: the dispersions of a Monte Carlo batch. Each run draws
/// its own values from a stream derived from the batch's master seed and
/// the run's number; a key left out disperses nothing.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
pub(super) struct MonteCarloSection {
    /// Mass: relative standard deviation of a normal scale factor (0.05 = 5 %, at most 0.3), truncated at 3 sigma.
    pub mass_sigma: Option<f64>,
    /// Inertia tensor: relative standard deviation of a normal scale factor (at most 0.3), truncated at 3 sigma.
    pub inertia_sigma: Option<f64>,
    /// Battery capacity: relative standard deviation of a normal scale factor (at most 0.3), truncated at 3 sigma.
    pub battery_capacity_sigma: Option<f64>,
    /// Mean wind: standard deviation per NED axis added to wind.mean_ned_mps, m/s.
    pub wind_mean_sigma_mps: Option<[f64; 3]>,
    /// Sensor and estimator noise: a factor drawn uniformly in [low, high] scaling every noise standard deviation.
    pub sensor_noise_scale: Option<[f64; 2]>,
    /// Probability that a run loses one motor (which one is uniform).
    pub motor_failure_probability: Option<f64>,
    /// When the motor fails: uniform in [start, end] seconds (default: the whole run).
    pub motor_failure_window_s: Option<[f64; 2]>,
}

/// `[world]`: the geodetic origin of the local NED frame.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
pub(super) struct WorldSection {
    /// Latitude of the origin, degrees (WGS-84).
    pub origin_lat_deg: Option<f64>,
    /// Longitude of the origin, degrees (WGS-84).
    pub origin_lon_deg: Option<f64>,
    /// Above mean sea level.
    pub origin_alt_m: Option<f64>,
    /// A mission with its home or any point farther from the origin is refused (default 50,000 m).
    pub max_mission_distance_m: Option<f64>,
}

/// `[expect]`: crash thresholds and the conditions the flight must meet.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct ExpectSection {
    /// A ground impact faster than this is a crash (default 3 m/s).
    pub impact_speed_mps: Option<f64>,
    /// Leaving this box (NED metres around the origin, altitude up) is a crash.
    pub volume: Option<VolumeSection>,
    /// True: crashes are reported but do not fail the verdict.
    pub allow_crash: Option<bool>,
    /// The mission must (true) or must not (false) have finished.
    pub mission_finished: Option<bool>,
    /// The vehicle must end on the ground within a radius of a point.
    pub landed_within: Option<SpotSection>,
    /// The largest tilt over the flight, degrees.
    pub max_tilt_deg: Option<f64>,
    /// The lowest state of charge over the flight, 0..1.
    pub min_soc: Option<f64>,
    /// The vehicle must (true) or must not (false) end disarmed.
    pub disarmed: Option<bool>,
    /// Spinning faster than this in the air, held for
    /// `loss_of_control_s`, is a crash: a loss of control (default 300°/s).
    pub loss_of_control_yaw_rate_dps: Option<f64>,
    /// Tilted beyond this in the air, held for `loss_of_control_s`, is a
    /// crash: a loss of control (default 60°).
    pub loss_of_control_tilt_deg: Option<f64>,
    /// How long a spin or tilt must last to be a loss of control (default 2 s).
    pub loss_of_control_s: Option<f64>,
    /// Farther than this from the mission's area (the start, every mission
    /// item and every position flown to by setpoint), or above its highest
    /// item by as much, is a crash: a fly-away (default 100 m; a declared
    /// `volume` replaces this fence).
    pub fly_away_margin_m: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
pub(super) struct VolumeSection {
    /// [min, max] north, m.
    pub north_m: [f64; 2],
    /// [min, max] east, m.
    pub east_m: [f64; 2],
    /// [min, max] altitude above the origin, m.
    pub altitude_m: [f64; 2],
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
pub(super) struct SpotSection {
    /// North of the origin, m.
    pub north_m: f64,
    /// East of the origin, m.
    pub east_m: f64,
    /// Horizontal radius, m.
    pub radius_m: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct AutopilotSection {
    /// Parameter name = value (integer or float, as the library declares it).
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, f64>")]
    pub params: std::collections::BTreeMap<String, toml::Value>,
    /// What flies: "library" (default: an `autopilot.h` library, `--autopilot PATH`), "px4-sitl" (PX4 SITL over MAVLink HIL, TCP 4560 + instance) or "ardupilot-json" (ArduPilot SITL's JSON backend, UDP 9002 + 10 x instance). `--autopilot px4-sitl` sets it too.
    pub kind: Option<String>,
    /// Flight stacks: the SITL instance (PX4's `-i`, ArduPilot's `-I`), which sets the default port. Default 0.
    pub instance: Option<u32>,
    /// Flight stacks: the address to listen on. Default "127.0.0.1".
    pub address: Option<String>,
    /// Flight stacks: the port, instead of the instance's.
    pub port: Option<u16>,
    /// Flight stacks: the output channel (0-based) of each rotor of the spec, in the spec's rotor order. Default: rotor i on channel i.
    pub output_map: Option<Vec<i64>>,
    /// Flight stacks: how long the first step waits for the stack to connect, s (default 1800: a first build of the stack takes minutes; at most 3600). A line on the terminal counts the wait every 10 s.
    pub connect_timeout_s: Option<f64>,
    /// Flight stacks: how long a step waits for the stack's answer, s (default 10, at most 3600).
    pub step_deadline_s: Option<f64>,
    /// px4-sitl: "free-run" (default: until PX4's first answer each message waits one autopilot period, motors off, as Gazebo does while PX4 boots) or "strict" (every message waits for its answer from the first: byte-identical runs with a peer that answers every message).
    pub boot: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default, JsonSchema)]
pub(super) struct SensorsSection {
    /// Factor on every sensor and estimator noise (default 1; a Monte Carlo run's drawn sensor_noise_scale).
    #[serde(default)]
    pub noise_scale: Option<f64>,
    /// Accelerometer and gyroscope.
    #[serde(default)]
    pub imu: Option<ImuSection>,
    /// Magnetometer.
    #[serde(default)]
    pub mag: Option<MagSection>,
    /// Barometer.
    #[serde(default)]
    pub baro: Option<BaroSection>,
    /// GPS receiver.
    #[serde(default)]
    pub gps: Option<GpsSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct ImuSection {
    /// White noise standard deviation, m/s^2.
    pub accel_noise_mps2: Option<f64>,
    /// White noise standard deviation, rad/s.
    pub gyro_noise_radps: Option<f64>,
    /// Bias random walk, m/s^2 per sqrt(s).
    pub accel_bias_walk_mps2_per_sqrt_s: Option<f64>,
    /// Bias random walk, rad/s per sqrt(s).
    pub gyro_bias_walk_radps_per_sqrt_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct MagSection {
    /// Earth field in NED, gauss.
    pub field_ned_gauss: Option<[f64; 3]>,
    /// White noise standard deviation, gauss.
    pub noise_gauss: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct BaroSection {
    /// White noise standard deviation, Pa.
    pub noise_pa: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct GpsSection {
    /// Delay of each fix, us.
    pub delay_us: Option<u64>,
    /// Horizontal position noise, m.
    pub horizontal_noise_m: Option<f64>,
    /// Vertical position noise, m.
    pub vertical_noise_m: Option<f64>,
    /// Velocity noise, m/s.
    pub velocity_noise_mps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct EstimatorSection {
    /// Age of the estimate when delivered, us.
    pub delay_us: Option<u64>,
    /// White noise, m.
    pub position_noise_m: Option<f64>,
    /// White noise, m/s.
    pub velocity_noise_mps: Option<f64>,
    /// White noise (small rotation), rad.
    pub attitude_noise_rad: Option<f64>,
    /// White noise, rad/s.
    pub rates_noise_radps: Option<f64>,
    /// AR(1) bias standard deviation, m.
    pub position_bias_m: Option<f64>,
    /// AR(1) bias standard deviation, m/s.
    pub velocity_bias_mps: Option<f64>,
    /// AR(1) bias standard deviation, rad.
    pub attitude_bias_rad: Option<f64>,
    /// AR(1) bias standard deviation, rad/s.
    pub rates_bias_radps: Option<f64>,
    /// Correlation time of the biases, s.
    pub bias_tau_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct SimulationSection {
    /// The master seed: every random stream derives from it by name.
    #[serde(default)]
    pub seed: u64,
    /// fixed_step (default) or event_driven.
    #[serde(default)]
    pub engine: EngineKind,
    /// Simulated duration, s (at most 10^7).
    pub duration_s: f64,
    /// The base tick every cadence is a multiple of, us (default 1000).
    #[serde(default = "default_tick")]
    pub tick_us: u64,
    /// euler, rk4 (default), bs32 or dp54.
    #[serde(default = "default_integrator")]
    pub integrator: String,
}

/// A period as `period_us`, `period_s` or `rate_hz` (exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, JsonSchema)]
pub(super) struct PeriodSection {
    /// The period in microseconds.
    #[serde(default)]
    pub period_us: Option<u64>,
    /// The period in seconds (a whole number of microseconds).
    #[serde(default)]
    pub period_s: Option<f64>,
    /// The rate in hertz (its period must be a whole number of microseconds).
    #[serde(default)]
    pub rate_hz: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default, JsonSchema)]
pub(super) struct CadencesSection {
    /// Fixed-step integration (default 1 kHz).
    pub physics: Option<PeriodSection>,
    /// Autopilot steps (default 250 Hz).
    pub autopilot: Option<PeriodSection>,
    /// IMU samples (default 250 Hz).
    pub imu: Option<PeriodSection>,
    /// Magnetometer samples (default 50 Hz).
    pub mag: Option<PeriodSection>,
    /// Barometer samples (default 50 Hz).
    pub baro: Option<PeriodSection>,
    /// GPS fixes (default 5 Hz).
    pub gps: Option<PeriodSection>,
    /// Estimates (default 250 Hz).
    pub estimator: Option<PeriodSection>,
    /// Wind updates (default 100 Hz).
    pub wind: Option<PeriodSection>,
    /// Log rows (no log cadence: no log).
    pub log: Option<PeriodSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct VehicleSection {
    /// A built-in aircraft (iris, hexa, octa) or a spec file, relative to this scenario.
    pub spec: String,
    /// A mission file (.waypoints or .plan), relative to this scenario.
    #[serde(default)]
    pub mission: Option<String>,
    /// Start position north of the origin, m.
    #[serde(default)]
    pub start_north_m: f64,
    /// Start position east of the origin, m.
    #[serde(default)]
    pub start_east_m: f64,
    /// Start heading, degrees from north.
    #[serde(default)]
    pub start_yaw_deg: f64,
    /// Factor on the spec's mass (default 1; a Monte Carlo run's drawn mass_scale).
    #[serde(default)]
    pub mass_scale: Option<f64>,
    /// Factor on the spec's inertia tensor (default 1; a Monte Carlo run's drawn inertia_scale).
    #[serde(default)]
    pub inertia_scale: Option<f64>,
    /// Factor on every battery's capacity (default 1; a Monte Carlo run's drawn battery_capacity_scale).
    #[serde(default)]
    pub battery_capacity_scale: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum WindKind {
    Constant,
    OrnsteinUhlenbeck,
    Dryden,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct WindSection {
    /// constant, ornstein_uhlenbeck or dryden.
    pub model: WindKind,
    /// Mean wind: the air mass's velocity in NED, m/s (where the wind blows TO: a wind from the east is [0, -6, 0]).
    #[serde(default)]
    pub mean_ned_mps: [f64; 3],
    /// Ornstein-Uhlenbeck: standard deviation per axis, m/s.
    #[serde(default)]
    pub sigma_mps: Option<[f64; 3]>,
    /// Ornstein-Uhlenbeck: correlation time per axis, s.
    #[serde(default)]
    pub tau_s: Option<[f64; 3]>,
    /// Dryden: wind speed at 20 ft (default: the mean's horizontal speed).
    #[serde(default)]
    pub w20_mps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default, JsonSchema)]
pub(super) struct WhenSection {
    /// Altitude above the origin greater than this, m.
    #[serde(default)]
    pub altitude_above_m: Option<f64>,
    /// Altitude above the origin less than this, m.
    #[serde(default)]
    pub altitude_below_m: Option<f64>,
    /// Lowest pack state of charge below this, 0..1.
    #[serde(default)]
    pub soc_below: Option<f64>,
    /// The mission has reached this item index.
    #[serde(default)]
    pub mission_item_at_least: Option<i32>,
    /// Simulated time past this, s.
    #[serde(default)]
    pub after_s: Option<f64>,
    /// Time since mission_start past this, s.
    #[serde(default)]
    pub since_mission_start_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct GustSection {
    /// Gust amplitude in NED, m/s.
    pub amplitude_ned_mps: [f64; 3],
    /// Linear rise time, s.
    #[serde(default)]
    pub rise_s: f64,
    /// Time at full amplitude, s.
    pub hold_s: f64,
    /// Linear fall time, s.
    #[serde(default)]
    pub fall_s: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
pub(super) struct EventSection {
    /// Fire at this time, s (one of at_s, at_us, when).
    #[serde(default)]
    pub at_s: Option<f64>,
    /// Fire at this time, us.
    #[serde(default)]
    pub at_us: Option<u64>,
    /// Fire at the first boundary where all given conditions hold.
    #[serde(default)]
    pub when: Option<WhenSection>,
    /// arm, disarm, mission_start, takeoff, rtl, land, hold, wind_gust, motor_fail, motor_restore, thrust_loss, push, battery_disconnect, battery_reconnect, sensor_dropout, sensor_freeze, sensor_bias_step, sensor_noise_scale, sensor_clear.
    pub action: String,
    /// motor_fail, motor_restore, thrust_loss: the motor index.
    #[serde(default)]
    pub motor: Option<usize>,
    /// battery_disconnect, battery_reconnect: the battery index.
    #[serde(default)]
    pub battery: Option<usize>,
    /// thrust_loss: the fraction of thrust lost, 0..1.
    #[serde(default)]
    pub fraction: Option<f64>,
    /// push: the external force held on the vehicle from then on, N, NED
    /// (each component within ±10000; zero ends the push).
    #[serde(default)]
    pub force_ned_n: Option<[f64; 3]>,
    /// sensor_*: imu, mag, baro, gps or estimator.
    #[serde(default)]
    pub sensor: Option<String>,
    /// sensor_bias_step: the bias added; sensor_noise_scale: the factor.
    #[serde(default)]
    pub value: Option<f64>,
    /// wind_gust: the gust.
    #[serde(default)]
    pub gust: Option<GustSection>,
    /// setpoint: a position to fly to, m, NED from the world origin (or
    /// velocity_ned_mps).
    #[serde(default)]
    pub position_ned_m: Option<[f64; 3]>,
    /// setpoint: a velocity to fly, m/s, NED (or position_ned_m).
    #[serde(default)]
    pub velocity_ned_mps: Option<[f64; 3]>,
    /// setpoint: body rates to fly, rad/s, FRD, with `thrust` (or
    /// position_ned_m, velocity_ned_mps).
    #[serde(default)]
    pub rates_frd_radps: Option<[f64; 3]>,
    /// setpoint with rates: the collective thrust, a fraction (0 to 1) of
    /// the rotors' total at full command.
    #[serde(default)]
    pub thrust: Option<f64>,
    /// setpoint with a position or velocity: the heading to hold, degrees
    /// from north (default: as it is).
    #[serde(default)]
    pub yaw_deg: Option<f64>,
    /// takeoff: the height to climb to, m above home (default: the
    /// autopilot's MIS_TAKEOFF_ALT).
    #[serde(default)]
    pub height_m: Option<f64>,
}
