//! The scenario file as written: serde structs, strict (unknown keys are
//! errors), checked and turned into a [`super::Scenario`] by the loader.

use serde::Deserialize;

use super::EngineKind;

fn default_tick() -> u64 {
    1000
}
fn default_integrator() -> String {
    "rk4".into()
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct File {
    pub schema_version: u32,
    #[serde(default)]
    pub description: Option<String>,
    pub simulation: SimulationSection,
    #[serde(default)]
    pub cadences: CadencesSection,
    pub vehicle: VehicleSection,
    #[serde(default)]
    pub wind: Option<WindSection>,
    #[serde(default)]
    pub sensors: SensorsSection,
    #[serde(default)]
    pub estimator: Option<EstimatorSection>,
    #[serde(default)]
    pub events: Vec<EventSection>,
    #[serde(default)]
    pub autopilot: Option<AutopilotSection>,
    #[serde(default)]
    pub expect: Option<ExpectSection>,
    #[serde(default)]
    pub world: Option<WorldSection>,
}

/// `[world]`: the geodetic origin of the local NED frame.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(super) struct WorldSection {
    pub origin_lat_deg: Option<f64>,
    pub origin_lon_deg: Option<f64>,
    /// Above mean sea level.
    pub origin_alt_m: Option<f64>,
    pub max_mission_distance_m: Option<f64>,
}

/// `[expect]`: crash thresholds and the conditions the flight must meet.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct ExpectSection {
    pub impact_speed_mps: Option<f64>,
    pub volume: Option<VolumeSection>,
    pub allow_crash: Option<bool>,
    pub mission_finished: Option<bool>,
    pub landed_within: Option<SpotSection>,
    pub max_tilt_deg: Option<f64>,
    pub min_soc: Option<f64>,
    pub disarmed: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(super) struct VolumeSection {
    pub north_m: [f64; 2],
    pub east_m: [f64; 2],
    pub altitude_m: [f64; 2],
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(super) struct SpotSection {
    pub north_m: f64,
    pub east_m: f64,
    pub radius_m: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct AutopilotSection {
    #[serde(default)]
    pub params: std::collections::BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub(super) struct SensorsSection {
    #[serde(default)]
    pub imu: Option<ImuSection>,
    #[serde(default)]
    pub mag: Option<MagSection>,
    #[serde(default)]
    pub baro: Option<BaroSection>,
    #[serde(default)]
    pub gps: Option<GpsSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct ImuSection {
    pub accel_noise_mps2: Option<f64>,
    pub gyro_noise_radps: Option<f64>,
    pub accel_bias_walk_mps2_per_sqrt_s: Option<f64>,
    pub gyro_bias_walk_radps_per_sqrt_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct MagSection {
    pub field_ned_gauss: Option<[f64; 3]>,
    pub noise_gauss: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct BaroSection {
    pub noise_pa: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct GpsSection {
    pub delay_us: Option<u64>,
    pub horizontal_noise_m: Option<f64>,
    pub vertical_noise_m: Option<f64>,
    pub velocity_noise_mps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct EstimatorSection {
    pub delay_us: Option<u64>,
    pub position_noise_m: Option<f64>,
    pub velocity_noise_mps: Option<f64>,
    pub attitude_noise_rad: Option<f64>,
    pub rates_noise_radps: Option<f64>,
    pub position_bias_m: Option<f64>,
    pub velocity_bias_mps: Option<f64>,
    pub attitude_bias_rad: Option<f64>,
    pub rates_bias_radps: Option<f64>,
    pub bias_tau_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct SimulationSection {
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub engine: EngineKind,
    pub duration_s: f64,
    #[serde(default = "default_tick")]
    pub tick_us: u64,
    #[serde(default = "default_integrator")]
    pub integrator: String,
}

/// A period as `period_us`, `period_s` or `rate_hz` (exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub(super) struct PeriodSection {
    #[serde(default)]
    pub period_us: Option<u64>,
    #[serde(default)]
    pub period_s: Option<f64>,
    #[serde(default)]
    pub rate_hz: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub(super) struct CadencesSection {
    pub physics: Option<PeriodSection>,
    pub autopilot: Option<PeriodSection>,
    pub imu: Option<PeriodSection>,
    pub mag: Option<PeriodSection>,
    pub baro: Option<PeriodSection>,
    pub gps: Option<PeriodSection>,
    pub estimator: Option<PeriodSection>,
    pub wind: Option<PeriodSection>,
    pub log: Option<PeriodSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct VehicleSection {
    pub spec: String,
    #[serde(default)]
    pub mission: Option<String>,
    #[serde(default)]
    pub start_north_m: f64,
    #[serde(default)]
    pub start_east_m: f64,
    #[serde(default)]
    pub start_yaw_deg: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum WindKind {
    Constant,
    OrnsteinUhlenbeck,
    Dryden,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct WindSection {
    pub model: WindKind,
    #[serde(default)]
    pub mean_ned_mps: [f64; 3],
    #[serde(default)]
    pub sigma_mps: Option<[f64; 3]>,
    #[serde(default)]
    pub tau_s: Option<[f64; 3]>,
    /// Dryden: wind speed at 20 ft (default: the mean's horizontal speed).
    #[serde(default)]
    pub w20_mps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
pub(super) struct WhenSection {
    #[serde(default)]
    pub altitude_above_m: Option<f64>,
    #[serde(default)]
    pub altitude_below_m: Option<f64>,
    #[serde(default)]
    pub soc_below: Option<f64>,
    #[serde(default)]
    pub mission_item_at_least: Option<i32>,
    #[serde(default)]
    pub after_s: Option<f64>,
    #[serde(default)]
    pub since_mission_start_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct GustSection {
    pub amplitude_ned_mps: [f64; 3],
    #[serde(default)]
    pub rise_s: f64,
    pub hold_s: f64,
    #[serde(default)]
    pub fall_s: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(super) struct EventSection {
    #[serde(default)]
    pub at_s: Option<f64>,
    #[serde(default)]
    pub at_us: Option<u64>,
    #[serde(default)]
    pub when: Option<WhenSection>,
    pub action: String,
    #[serde(default)]
    pub motor: Option<usize>,
    #[serde(default)]
    pub battery: Option<usize>,
    #[serde(default)]
    pub fraction: Option<f64>,
    #[serde(default)]
    pub sensor: Option<String>,
    #[serde(default)]
    pub value: Option<f64>,
    #[serde(default)]
    pub gust: Option<GustSection>,
}
