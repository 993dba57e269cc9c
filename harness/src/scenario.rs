//! Scenario files (TOML): what to fly, how often everything runs, the wind,
//! the sensors, and the events. Strict like aircraft specs: unknown keys and
//! ill-typed values are errors naming their key path.
//!
//! ```toml
//! schema_version = 1
//! [simulation]
//! seed = 7
//! duration_s = 90.0
//! integrator = "rk4"          # euler, rk4, bs32, dp54
//! [cadences]                  # each one of period_us, period_s, rate_hz
//! autopilot = { rate_hz = 250 }
//! log = { rate_hz = 10 }      # no log cadence: no log
//! [vehicle]
//! spec = "iris"               # built-in name or path (relative to this file)
//! mission = "../missions/square.waypoints"
//! [sensors.gps]              # imu, mag, baro, gps: noise; gps: delay_us
//! delay_us = 100000
//! [estimator]                # noise, AR(1) biases, bias_tau_s, delay_us
//! delay_us = 20000
//! [wind]                     # constant, ornstein_uhlenbeck, dryden (+ w20_mps)
//! model = "ornstein_uhlenbeck"
//! mean_ned_mps = [2.0, 1.0, 0.0]
//! sigma_mps = [0.8, 0.8, 0.3]
//! tau_s = [5.0, 5.0, 2.0]
//! [autopilot.params]        # set through the library's parameter functions
//! MPC_XY_VEL_P = 1.5
//! [[events]]
//! at_s = 1.0
//! action = "arm"
//! [[events]]
//! when = { altitude_above_m = 5.0 }
//! action = "motor_fail"
//! motor = 0
//! ```

use std::path::{Path, PathBuf};

use lockstep_plant::integrate::Method;
use lockstep_plant::spec::{SpecError, deserialize_strict, parse_table};
use serde::Deserialize;

use crate::sensors::{EstimatorConfig, GpsConfig, ImuNoise};
use crate::time::micros_from_secs;
use crate::{Cadence, ConfigError, Micros};

/// What is wrong with a scenario.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ScenarioError {
    #[error("cannot read scenario {path}: {reason}")]
    Io { path: String, reason: String },
    #[error(transparent)]
    Toml(#[from] SpecError),
    #[error("{file}: {source}")]
    Cadence {
        file: String,
        #[source]
        source: ConfigError,
    },
    #[error("{file}: key `{key}`: {reason}")]
    Invalid {
        file: String,
        key: String,
        reason: String,
    },
}

/// The supported `schema_version`.
pub const SCENARIO_SCHEMA_VERSION: u32 = 1;

fn default_tick() -> u64 {
    1000
}
fn default_integrator() -> String {
    "rk4".into()
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct File {
    schema_version: u32,
    #[serde(default)]
    description: Option<String>,
    simulation: SimulationSection,
    #[serde(default)]
    cadences: CadencesSection,
    vehicle: VehicleSection,
    #[serde(default)]
    wind: Option<WindSection>,
    #[serde(default)]
    sensors: SensorsSection,
    #[serde(default)]
    estimator: Option<EstimatorSection>,
    #[serde(default)]
    events: Vec<EventSection>,
    #[serde(default)]
    autopilot: Option<AutopilotSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct AutopilotSection {
    #[serde(default)]
    params: std::collections::BTreeMap<String, toml::Value>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
struct SensorsSection {
    #[serde(default)]
    imu: Option<ImuSection>,
    #[serde(default)]
    mag: Option<MagSection>,
    #[serde(default)]
    baro: Option<BaroSection>,
    #[serde(default)]
    gps: Option<GpsSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct ImuSection {
    accel_noise_mps2: Option<f64>,
    gyro_noise_radps: Option<f64>,
    accel_bias_walk_mps2_per_sqrt_s: Option<f64>,
    gyro_bias_walk_radps_per_sqrt_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct MagSection {
    field_ned_gauss: Option<[f64; 3]>,
    noise_gauss: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct BaroSection {
    noise_pa: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct GpsSection {
    delay_us: Option<u64>,
    horizontal_noise_m: Option<f64>,
    vertical_noise_m: Option<f64>,
    velocity_noise_mps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct EstimatorSection {
    delay_us: Option<u64>,
    position_noise_m: Option<f64>,
    velocity_noise_mps: Option<f64>,
    attitude_noise_rad: Option<f64>,
    rates_noise_radps: Option<f64>,
    position_bias_m: Option<f64>,
    velocity_bias_mps: Option<f64>,
    attitude_bias_rad: Option<f64>,
    rates_bias_radps: Option<f64>,
    bias_tau_s: Option<f64>,
}

/// Sensor and estimator settings (defaults: see each type's `Default`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SensorSettings {
    pub imu: ImuNoise,
    pub mag_field_ned_gauss: [f64; 3],
    pub mag_noise_gauss: f64,
    pub baro_noise_pa: f64,
    pub gps: GpsConfig,
    pub estimator: EstimatorConfig,
}

/// Earth magnetic field at the default origin (Zurich), NED, gauss.
pub const DEFAULT_MAG_FIELD_NED_GAUSS: [f64; 3] = [0.216, 0.0107, 0.425];

impl Default for SensorSettings {
    fn default() -> Self {
        SensorSettings {
            imu: ImuNoise::default(),
            mag_field_ned_gauss: DEFAULT_MAG_FIELD_NED_GAUSS,
            mag_noise_gauss: 0.003,
            baro_noise_pa: 3.0,
            gps: GpsConfig::default(),
            estimator: EstimatorConfig::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// Boundaries at every physics tick too; the plant steps between them.
    #[default]
    FixedStep,
    /// No physics cadence: the plant is integrated between consecutive
    /// boundaries (autopilot, sensors, wind, log, events) by an adaptive
    /// integrator.
    EventDriven,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct SimulationSection {
    #[serde(default)]
    seed: u64,
    #[serde(default)]
    engine: EngineKind,
    duration_s: f64,
    #[serde(default = "default_tick")]
    tick_us: u64,
    #[serde(default = "default_integrator")]
    integrator: String,
}

/// A period as `period_us`, `period_s` or `rate_hz` (exactly one).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
struct PeriodSection {
    #[serde(default)]
    period_us: Option<u64>,
    #[serde(default)]
    period_s: Option<f64>,
    #[serde(default)]
    rate_hz: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
struct CadencesSection {
    physics: Option<PeriodSection>,
    autopilot: Option<PeriodSection>,
    imu: Option<PeriodSection>,
    mag: Option<PeriodSection>,
    baro: Option<PeriodSection>,
    gps: Option<PeriodSection>,
    estimator: Option<PeriodSection>,
    wind: Option<PeriodSection>,
    log: Option<PeriodSection>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct VehicleSection {
    spec: String,
    #[serde(default)]
    mission: Option<String>,
    #[serde(default)]
    start_north_m: f64,
    #[serde(default)]
    start_east_m: f64,
    #[serde(default)]
    start_yaw_deg: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WindKind {
    Constant,
    OrnsteinUhlenbeck,
    Dryden,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct WindSection {
    model: WindKind,
    #[serde(default)]
    mean_ned_mps: [f64; 3],
    #[serde(default)]
    sigma_mps: Option<[f64; 3]>,
    #[serde(default)]
    tau_s: Option<[f64; 3]>,
    /// Dryden: wind speed at 20 ft (default: the mean's horizontal speed).
    #[serde(default)]
    w20_mps: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
struct WhenSection {
    #[serde(default)]
    altitude_above_m: Option<f64>,
    #[serde(default)]
    altitude_below_m: Option<f64>,
    #[serde(default)]
    soc_below: Option<f64>,
    #[serde(default)]
    mission_item_at_least: Option<i32>,
    #[serde(default)]
    after_s: Option<f64>,
    #[serde(default)]
    since_mission_start_s: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct GustSection {
    amplitude_ned_mps: [f64; 3],
    #[serde(default)]
    rise_s: f64,
    hold_s: f64,
    #[serde(default)]
    fall_s: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
struct EventSection {
    #[serde(default)]
    at_s: Option<f64>,
    #[serde(default)]
    at_us: Option<u64>,
    #[serde(default)]
    when: Option<WhenSection>,
    action: String,
    #[serde(default)]
    motor: Option<usize>,
    #[serde(default)]
    battery: Option<usize>,
    #[serde(default)]
    fraction: Option<f64>,
    #[serde(default)]
    sensor: Option<String>,
    #[serde(default)]
    value: Option<f64>,
    #[serde(default)]
    gust: Option<GustSection>,
}

/// A sensor a fault can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SensorId {
    Imu,
    Mag,
    Baro,
    Gps,
    Estimator,
}

impl SensorId {
    pub const ALL: [SensorId; 5] = [
        SensorId::Imu,
        SensorId::Mag,
        SensorId::Baro,
        SensorId::Gps,
        SensorId::Estimator,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SensorId::Imu => "imu",
            SensorId::Mag => "mag",
            SensorId::Baro => "baro",
            SensorId::Gps => "gps",
            SensorId::Estimator => "estimator",
        }
    }

    fn from_name(n: &str) -> Option<SensorId> {
        SensorId::ALL.into_iter().find(|s| s.name() == n)
    }
}

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    Arm,
    Disarm,
    MissionStart,
    Rtl,
    Land,
    Hold,
    WindGust {
        amplitude_ned_mps: [f64; 3],
        rise: Micros,
        hold: Micros,
        fall: Micros,
    },
    MotorFail {
        motor: usize,
    },
    MotorRestore {
        motor: usize,
    },
    ThrustLoss {
        motor: usize,
        fraction: f64,
    },
    BatteryDisconnect {
        battery: usize,
    },
    BatteryReconnect {
        battery: usize,
    },
    SensorDropout {
        sensor: SensorId,
    },
    SensorFreeze {
        sensor: SensorId,
    },
    SensorBiasStep {
        sensor: SensorId,
        value: f64,
    },
    SensorNoiseScale {
        sensor: SensorId,
        value: f64,
    },
    SensorClear {
        sensor: SensorId,
    },
}

/// A condition on the vehicle's state, checked at every boundary: all given
/// parts must hold.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Condition {
    pub altitude_above_m: Option<f64>,
    pub altitude_below_m: Option<f64>,
    pub soc_below: Option<f64>,
    pub mission_item_at_least: Option<i32>,
    pub after: Option<Micros>,
    pub since_mission_start: Option<Micros>,
}

/// When an event fires: at a time (a timeline boundary), or the first
/// boundary at which a condition holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trigger {
    At(Micros),
    When(Condition),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event {
    pub trigger: Trigger,
    pub action: Action,
}

/// The wind model chosen by the scenario.
pub use crate::wind::WindModel;

/// A validated scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub file: PathBuf,
    pub description: Option<String>,
    pub seed: u64,
    pub duration: Micros,
    pub tick: Micros,
    pub engine: EngineKind,
    pub integrator: Method,
    /// physics, autopilot, imu, mag, baro, gps, estimator, wind[, log].
    pub cadences: Vec<Cadence>,
    pub spec: String,
    pub mission: Option<PathBuf>,
    pub start: (f64, f64, f64),
    pub wind: WindModel,
    pub sensors: SensorSettings,
    pub events: Vec<Event>,
    /// `[autopilot.params]`, set after the autopilot is created.
    pub autopilot_params: crate::autopilot_params::Params,
}

const DEFAULT_CADENCES_US: [(&str, u64); 8] = [
    ("physics", 1000),
    ("autopilot", 4000),
    ("imu", 4000),
    ("mag", 20_000),
    ("baro", 20_000),
    ("gps", 200_000),
    ("estimator", 4000),
    ("wind", 10_000),
];

impl Scenario {
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ScenarioError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Scenario::from_toml_str(&text, path)
    }

    /// A scenario from text, as if read from `path` (relative paths in it are
    /// relative to `path`'s directory).
    pub fn from_toml_str(text: &str, path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let label = path.display().to_string();
        let f: File = deserialize_strict(&label, parse_table(&label, text)?)?;
        let invalid = |key: &str, reason: String| ScenarioError::Invalid {
            file: label.clone(),
            key: key.to_string(),
            reason,
        };
        let cad_err = |source| ScenarioError::Cadence {
            file: label.clone(),
            source,
        };
        if f.schema_version != SCENARIO_SCHEMA_VERSION {
            return Err(invalid(
                "schema_version",
                format!(
                    "{} is not supported (this build reads {SCENARIO_SCHEMA_VERSION})",
                    f.schema_version
                ),
            ));
        }
        if f.simulation.tick_us == 0 {
            return Err(invalid("simulation.tick_us", "must be positive".into()));
        }
        let tick = Micros(f.simulation.tick_us);
        let duration = micros_from_secs("duration", f.simulation.duration_s).map_err(cad_err)?;
        let integrator = Method::from_name(&f.simulation.integrator).ok_or_else(|| {
            invalid(
                "simulation.integrator",
                format!(
                    "`{}` is not one of euler, rk4, bs32, dp54",
                    f.simulation.integrator
                ),
            )
        })?;
        if f.simulation.engine == EngineKind::EventDriven && !integrator.is_adaptive() {
            return Err(invalid(
                "simulation.integrator",
                format!(
                    "the event_driven engine needs an adaptive integrator (bs32, dp54), not {}",
                    integrator.name()
                ),
            ));
        }
        let c = &f.cadences;
        let given = [
            c.physics,
            c.autopilot,
            c.imu,
            c.mag,
            c.baro,
            c.gps,
            c.estimator,
            c.wind,
        ];
        let mut cadences = Vec::new();
        for ((name, default_us), spec) in DEFAULT_CADENCES_US.iter().zip(given) {
            cadences.push(
                cadence(name, spec, Some(*default_us), tick).map_err(|e| match e {
                    Either::Config(e) => cad_err(e),
                    Either::Key(reason) => invalid(&format!("cadences.{name}"), reason),
                })?,
            );
        }
        if let Some(spec) = c.log {
            cadences.push(cadence("log", Some(spec), None, tick).map_err(|e| match e {
                Either::Config(e) => cad_err(e),
                Either::Key(reason) => invalid("cadences.log", reason),
            })?);
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let relative = |p: &str| {
            let candidate = dir.join(p);
            if candidate.exists() {
                candidate.display().to_string()
            } else {
                p.to_string()
            }
        };
        let spec = if lockstep_plant::spec::BUILTIN_SPECS
            .iter()
            .any(|(n, _)| *n == f.vehicle.spec)
        {
            f.vehicle.spec.clone()
        } else {
            relative(&f.vehicle.spec)
        };
        let wind = match &f.wind {
            None => WindModel::Constant { ned_mps: [0.0; 3] },
            Some(w) => match w.model {
                WindKind::Constant => {
                    if w.sigma_mps.is_some() || w.tau_s.is_some() {
                        return Err(invalid(
                            "wind",
                            "sigma_mps and tau_s do not apply to model \"constant\"".into(),
                        ));
                    }
                    WindModel::Constant {
                        ned_mps: w.mean_ned_mps,
                    }
                }
                WindKind::OrnsteinUhlenbeck => {
                    let sigma = w
                        .sigma_mps
                        .ok_or_else(|| invalid("wind.sigma_mps", "is required".into()))?;
                    let tau = w
                        .tau_s
                        .ok_or_else(|| invalid("wind.tau_s", "is required".into()))?;
                    if sigma.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
                        return Err(invalid("wind.sigma_mps", "must be >= 0".into()));
                    }
                    if tau.iter().any(|t| !(t.is_finite() && *t > 0.0)) {
                        return Err(invalid("wind.tau_s", "must be positive".into()));
                    }
                    WindModel::OrnsteinUhlenbeck {
                        mean_ned_mps: w.mean_ned_mps,
                        sigma_mps: sigma,
                        tau_s: tau,
                    }
                }
                WindKind::Dryden => {
                    if w.sigma_mps.is_some() || w.tau_s.is_some() {
                        return Err(invalid(
                            "wind",
                            "sigma_mps and tau_s do not apply to model \"dryden\"".into(),
                        ));
                    }
                    let m = w.mean_ned_mps;
                    let w20 = w.w20_mps.unwrap_or((m[0] * m[0] + m[1] * m[1]).sqrt());
                    if !(w20.is_finite() && w20 >= 0.0) {
                        return Err(invalid("wind.w20_mps", format!("must be >= 0, is {w20}")));
                    }
                    WindModel::Dryden {
                        mean_ned_mps: m,
                        w20_mps: w20,
                    }
                }
            },
        };
        let sensors = sensor_settings(&f).map_err(|(k, reason)| invalid(&k, reason))?;
        let mut events = Vec::with_capacity(f.events.len());
        for (i, e) in f.events.iter().enumerate() {
            let key = |k: &str| format!("events[{i}].{k}");
            events.push(event(e, &key).map_err(|(k, reason)| invalid(&k, reason))?);
        }
        let autopilot_params = match &f.autopilot {
            Some(a) => crate::autopilot_params::parse(&a.params)
                .map_err(|(k, reason)| invalid(&k, reason))?,
            None => Default::default(),
        };
        Ok(Scenario {
            file: path.to_path_buf(),
            description: f.description,
            seed: f.simulation.seed,
            duration,
            tick,
            engine: f.simulation.engine,
            integrator,
            cadences,
            spec,
            mission: f
                .vehicle
                .mission
                .as_deref()
                .map(|m| PathBuf::from(relative(m))),
            start: (
                f.vehicle.start_north_m,
                f.vehicle.start_east_m,
                f.vehicle.start_yaw_deg,
            ),
            wind,
            sensors,
            events,
            autopilot_params,
        })
    }

    /// The cadence named `name`.
    pub fn cadence(&self, name: &str) -> Option<Micros> {
        self.cadences
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.period)
    }
}

/// Overlays the file's sensor settings on the defaults; every noise must be
/// finite and non-negative.
fn sensor_settings(f: &File) -> Result<SensorSettings, (String, String)> {
    let mut s = SensorSettings::default();
    let set = |key: &str, target: &mut f64, v: Option<f64>| -> Result<(), (String, String)> {
        if let Some(v) = v {
            if !(v.is_finite() && v >= 0.0) {
                return Err((key.to_string(), format!("must be >= 0 and finite, is {v}")));
            }
            *target = v;
        }
        Ok(())
    };
    if let Some(i) = &f.sensors.imu {
        set(
            "sensors.imu.accel_noise_mps2",
            &mut s.imu.accel_noise_mps2,
            i.accel_noise_mps2,
        )?;
        set(
            "sensors.imu.gyro_noise_radps",
            &mut s.imu.gyro_noise_radps,
            i.gyro_noise_radps,
        )?;
        set(
            "sensors.imu.accel_bias_walk_mps2_per_sqrt_s",
            &mut s.imu.accel_bias_walk_mps2_per_sqrt_s,
            i.accel_bias_walk_mps2_per_sqrt_s,
        )?;
        set(
            "sensors.imu.gyro_bias_walk_radps_per_sqrt_s",
            &mut s.imu.gyro_bias_walk_radps_per_sqrt_s,
            i.gyro_bias_walk_radps_per_sqrt_s,
        )?;
    }
    if let Some(m) = &f.sensors.mag {
        set(
            "sensors.mag.noise_gauss",
            &mut s.mag_noise_gauss,
            m.noise_gauss,
        )?;
        if let Some(b) = m.field_ned_gauss {
            s.mag_field_ned_gauss = b;
        }
    }
    if let Some(b) = &f.sensors.baro {
        set("sensors.baro.noise_pa", &mut s.baro_noise_pa, b.noise_pa)?;
    }
    if let Some(g) = &f.sensors.gps {
        set(
            "sensors.gps.horizontal_noise_m",
            &mut s.gps.horizontal_noise_m,
            g.horizontal_noise_m,
        )?;
        set(
            "sensors.gps.vertical_noise_m",
            &mut s.gps.vertical_noise_m,
            g.vertical_noise_m,
        )?;
        set(
            "sensors.gps.velocity_noise_mps",
            &mut s.gps.velocity_noise_mps,
            g.velocity_noise_mps,
        )?;
        if let Some(d) = g.delay_us {
            s.gps.delay = Micros(d);
        }
    }
    if let Some(e) = &f.estimator {
        let c = &mut s.estimator;
        set(
            "estimator.position_noise_m",
            &mut c.position_noise_m,
            e.position_noise_m,
        )?;
        set(
            "estimator.velocity_noise_mps",
            &mut c.velocity_noise_mps,
            e.velocity_noise_mps,
        )?;
        set(
            "estimator.attitude_noise_rad",
            &mut c.attitude_noise_rad,
            e.attitude_noise_rad,
        )?;
        set(
            "estimator.rates_noise_radps",
            &mut c.rates_noise_radps,
            e.rates_noise_radps,
        )?;
        set(
            "estimator.position_bias_m",
            &mut c.position_bias_m,
            e.position_bias_m,
        )?;
        set(
            "estimator.velocity_bias_mps",
            &mut c.velocity_bias_mps,
            e.velocity_bias_mps,
        )?;
        set(
            "estimator.attitude_bias_rad",
            &mut c.attitude_bias_rad,
            e.attitude_bias_rad,
        )?;
        set(
            "estimator.rates_bias_radps",
            &mut c.rates_bias_radps,
            e.rates_bias_radps,
        )?;
        if let Some(t) = e.bias_tau_s {
            if !(t.is_finite() && t > 0.0) {
                return Err((
                    "estimator.bias_tau_s".into(),
                    format!("must be positive, is {t}"),
                ));
            }
            c.bias_tau_s = t;
        }
        if let Some(d) = e.delay_us {
            c.delay = Micros(d);
        }
    }
    Ok(s)
}

enum Either {
    Config(ConfigError),
    Key(String),
}

fn cadence(
    name: &str,
    spec: Option<PeriodSection>,
    default_us: Option<u64>,
    tick: Micros,
) -> Result<Cadence, Either> {
    match spec {
        None => {
            Cadence::from_micros(name, default_us.unwrap_or(tick.0), tick).map_err(Either::Config)
        }
        Some(PeriodSection {
            period_us: Some(us),
            period_s: None,
            rate_hz: None,
        }) => Cadence::from_micros(name, us, tick).map_err(Either::Config),
        Some(PeriodSection {
            period_us: None,
            period_s: Some(s),
            rate_hz: None,
        }) => Cadence::from_secs(name, s, tick).map_err(Either::Config),
        Some(PeriodSection {
            period_us: None,
            period_s: None,
            rate_hz: Some(hz),
        }) => Cadence::from_hz(name, hz, tick).map_err(Either::Config),
        Some(_) => Err(Either::Key(
            "give exactly one of period_us, period_s, rate_hz".into(),
        )),
    }
}

fn secs(key: String, s: f64) -> Result<Micros, (String, String)> {
    micros_from_secs(&key, s).map_err(|e| (key, e.to_string()))
}

fn event(e: &EventSection, key: &dyn Fn(&str) -> String) -> Result<Event, (String, String)> {
    let trigger = match (e.at_s, e.at_us, &e.when) {
        (Some(s), None, None) => {
            if s == 0.0 {
                Trigger::At(Micros(0))
            } else {
                Trigger::At(secs(key("at_s"), s)?)
            }
        }
        (None, Some(us), None) => Trigger::At(Micros(us)),
        (None, None, Some(w)) => {
            let opt =
                |k: &str, v: Option<f64>| v.map(|s| secs(key(&format!("when.{k}")), s)).transpose();
            Trigger::When(Condition {
                altitude_above_m: w.altitude_above_m,
                altitude_below_m: w.altitude_below_m,
                soc_below: w.soc_below,
                mission_item_at_least: w.mission_item_at_least,
                after: opt("after_s", w.after_s)?,
                since_mission_start: opt("since_mission_start_s", w.since_mission_start_s)?,
            })
        }
        _ => return Err((key("at_s"), "give exactly one of at_s, at_us, when".into())),
    };
    let need = |v: Option<usize>, k: &str| {
        v.ok_or_else(|| (key(k), format!("is required by action `{}`", e.action)))
    };
    let sensor = || -> Result<SensorId, (String, String)> {
        let n = e.sensor.as_deref().ok_or_else(|| {
            (
                key("sensor"),
                format!("is required by action `{}`", e.action),
            )
        })?;
        SensorId::from_name(n).ok_or_else(|| {
            (
                key("sensor"),
                format!("`{n}` is not one of imu, mag, baro, gps, estimator"),
            )
        })
    };
    let value = || {
        e.value.ok_or_else(|| {
            (
                key("value"),
                format!("is required by action `{}`", e.action),
            )
        })
    };
    let action = match e.action.as_str() {
        "arm" => Action::Arm,
        "disarm" => Action::Disarm,
        "mission_start" => Action::MissionStart,
        "rtl" => Action::Rtl,
        "land" => Action::Land,
        "hold" => Action::Hold,
        "wind_gust" => {
            let g = e
                .gust
                .as_ref()
                .ok_or_else(|| (key("gust"), "is required by action `wind_gust`".into()))?;
            let d = |k: &str, s: f64| {
                if s == 0.0 {
                    Ok(Micros(0))
                } else {
                    secs(key(&format!("gust.{k}")), s)
                }
            };
            Action::WindGust {
                amplitude_ned_mps: g.amplitude_ned_mps,
                rise: d("rise_s", g.rise_s)?,
                hold: d("hold_s", g.hold_s)?,
                fall: d("fall_s", g.fall_s)?,
            }
        }
        "motor_fail" => Action::MotorFail {
            motor: need(e.motor, "motor")?,
        },
        "motor_restore" => Action::MotorRestore {
            motor: need(e.motor, "motor")?,
        },
        "thrust_loss" => {
            let fraction = e.fraction.ok_or_else(|| {
                (
                    key("fraction"),
                    "is required by action `thrust_loss`".into(),
                )
            })?;
            if !(0.0..=1.0).contains(&fraction) {
                return Err((key("fraction"), format!("must be in [0, 1], is {fraction}")));
            }
            Action::ThrustLoss {
                motor: need(e.motor, "motor")?,
                fraction,
            }
        }
        "battery_disconnect" => Action::BatteryDisconnect {
            battery: need(e.battery, "battery")?,
        },
        "battery_reconnect" => Action::BatteryReconnect {
            battery: need(e.battery, "battery")?,
        },
        "sensor_dropout" => Action::SensorDropout { sensor: sensor()? },
        "sensor_freeze" => Action::SensorFreeze { sensor: sensor()? },
        "sensor_bias_step" => Action::SensorBiasStep {
            sensor: sensor()?,
            value: value()?,
        },
        "sensor_noise_scale" => Action::SensorNoiseScale {
            sensor: sensor()?,
            value: value()?,
        },
        "sensor_clear" => Action::SensorClear { sensor: sensor()? },
        other => {
            return Err((
                key("action"),
                format!(
                    "`{other}` is not an action (arm, disarm, mission_start, rtl, land, hold, wind_gust, motor_fail, \
                     motor_restore, thrust_loss, battery_disconnect, battery_reconnect, sensor_dropout, sensor_freeze, \
                     sensor_bias_step, sensor_noise_scale, sensor_clear)"
                ),
            ));
        }
    };
    Ok(Event { trigger, action })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "schema_version = 1\n[simulation]\nseed = 7\nduration_s = 60.0\n[vehicle]\nspec = \"iris\"\n";

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
        assert!(e.to_string().starts_with("test.toml: cadence `autopilot`: 0.008333333333333333 s is not a whole number of microseconds; nearest valid: 8333 us or 8334 us"), "{e}");
        let e = parse("[cadences]\nbaro = { period_us = 12500 }\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "test.toml: cadence `baro`: 12500 us is not a multiple of the base tick of 1000 us; nearest valid: 12000 us or 13000 us"
        );
        let e = parse("[cadences]\nimu = { period_us = 4000, rate_hz = 250 }\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "test.toml: key `cadences.imu`: give exactly one of period_us, period_s, rate_hz"
        );
        let e = parse("[cadences]\nlidar = { rate_hz = 10 }\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "test.toml: unknown key(s) cadences.lidar; check the spelling and the unit suffix"
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
            "test.toml: key `sensors.baro.noise_pa`: must be >= 0 and finite, is -1"
        );
        let e = parse("[sensors.imu]\nnoise = 1.0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "test.toml: unknown key(s) sensors.imu.noise; check the spelling and the unit suffix"
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
                "test.toml: key `events[0].action`: `explode` is not an action",
            ),
            (
                "[[events]]\nat_s = 1.0\naction = \"motor_fail\"\n",
                "test.toml: key `events[0].motor`: is required by action `motor_fail`",
            ),
            (
                "[[events]]\nat_s = 1.0\naction = \"thrust_loss\"\nmotor = 1\nfraction = 1.5\n",
                "test.toml: key `events[0].fraction`: must be in [0, 1], is 1.5",
            ),
            (
                "[[events]]\nat_s = 1.0\naction = \"sensor_dropout\"\nsensor = \"lidar\"\n",
                "test.toml: key `events[0].sensor`: `lidar` is not one of imu, mag, baro, gps, estimator",
            ),
            (
                "[[events]]\nat_s = 1.00000025\naction = \"arm\"\n",
                "test.toml: key `events[0].at_s`: cadence `events[0].at_s`: 1.00000025 s is not a whole number of microseconds",
            ),
            (
                "[[events]]\nat_s = 1.0\naction = \"arm\"\nmotr = 1\n",
                "test.toml: unknown key(s) events.0.motr",
            ),
            (
                "[simulation.extra]\n",
                "test.toml: unknown key(s) simulation.extra",
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
            "v.toml: key `schema_version`: 2 is not supported (this build reads 1)"
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
                "test.toml: key `simulation.integrator`: invalid type: map, expected a string"
            ),
            "{e}"
        );
    }
}
