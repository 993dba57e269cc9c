//! The scenario's public types: sensor settings, engine kind, events.

use serde::Deserialize;

use crate::Micros;
use crate::environment::sensors::{EstimatorConfig, GpsConfig, ImuNoise};

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

impl SensorSettings {
    /// Every sensor and estimator noise times `k` (`sensors.noise_scale`).
    pub fn scale_noise(&mut self, k: f64) {
        self.imu.accel_noise_mps2 *= k;
        self.imu.gyro_noise_radps *= k;
        self.mag_noise_gauss *= k;
        self.baro_noise_pa *= k;
        self.gps.horizontal_noise_m *= k;
        self.gps.vertical_noise_m *= k;
        self.gps.velocity_noise_mps *= k;
        self.estimator.position_noise_m *= k;
        self.estimator.velocity_noise_mps *= k;
        self.estimator.attitude_noise_rad *= k;
        self.estimator.rates_noise_radps *= k;
    }
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, schemars::JsonSchema)]
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

    pub(crate) fn from_name(n: &str) -> Option<SensorId> {
        SensorId::ALL.into_iter().find(|s| s.name() == n)
    }
}

/// What an event does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Action {
    Arm,
    Disarm,
    MissionStart,
    /// Climb over where it is to `height_m` above home, or to the
    /// autopilot's takeoff height (MIS_TAKEOFF_ALT) when `None`.
    Takeoff {
        height_m: Option<f64>,
    },
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
    /// An external force (NED, N) held on the vehicle's centre of mass from
    /// now on (a tether snagging, a bird strike held for a while); a push
    /// of zero ends it.
    Push {
        force_ned_n: [f64; 3],
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
    /// A setpoint for the autopilot to fly (its OFFBOARD mode).
    Setpoint {
        kind: SetpointKind,
        /// A position (m, NED), a velocity (m/s, NED) or body rates
        /// (rad/s, FRD), as `kind` says.
        vector: [f64; 3],
        /// A heading (position and velocity only).
        yaw_rad: Option<f64>,
        /// Rates only: the collective thrust, a fraction of the rotors'
        /// total at full command.
        thrust: f64,
    },
}

/// What a setpoint's vector is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetpointKind {
    Position,
    Velocity,
    Rates,
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

impl Action {
    /// The operator's commands by name, as scenario files, ground stations
    /// and Python name them: they reach the autopilot through its commands.
    pub const COMMANDS: [(&'static str, Action); 7] = [
        ("arm", Action::Arm),
        ("disarm", Action::Disarm),
        ("mission_start", Action::MissionStart),
        ("takeoff", Action::Takeoff { height_m: None }),
        ("rtl", Action::Rtl),
        ("land", Action::Land),
        ("hold", Action::Hold),
    ];

    /// The operator command named `name`.
    pub fn command(name: &str) -> Option<Action> {
        Action::COMMANDS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| *a)
    }

    /// Whether the action reaches the autopilot through its commands (an
    /// operator command or a setpoint) rather than acting on the world.
    pub fn is_command(&self) -> bool {
        matches!(self, Action::Setpoint { .. } | Action::Takeoff { .. })
            || Action::COMMANDS.iter().any(|(_, a)| a == self)
    }

    /// Whether the action changes the plant (its motors or batteries) rather
    /// than the autopilot's commands, the wind or the sensors.
    pub fn acts_on_plant(&self) -> bool {
        matches!(
            self,
            Action::MotorFail { .. }
                | Action::MotorRestore { .. }
                | Action::ThrustLoss { .. }
                | Action::Push { .. }
                | Action::BatteryDisconnect { .. }
                | Action::BatteryReconnect { .. }
        )
    }
}

impl std::fmt::Display for Action {
    /// The action as the scenario names it, with its arguments:
    /// `motor_fail motor 0`, `wind_gust [3, 0, 0] m/s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Arm => f.write_str("arm"),
            Action::Disarm => f.write_str("disarm"),
            Action::MissionStart => f.write_str("mission_start"),
            Action::Takeoff { height_m: None } => f.write_str("takeoff"),
            Action::Takeoff { height_m: Some(h) } => write!(f, "takeoff to {h} m"),
            Action::Rtl => f.write_str("rtl"),
            Action::Land => f.write_str("land"),
            Action::Hold => f.write_str("hold"),
            Action::WindGust {
                amplitude_ned_mps: a,
                rise,
                hold,
                fall,
            } => write!(
                f,
                "wind_gust [{}, {}, {}] m/s NED (rise {} s, hold {} s, fall {} s)",
                a[0],
                a[1],
                a[2],
                rise.as_secs_f64(),
                hold.as_secs_f64(),
                fall.as_secs_f64()
            ),
            Action::MotorFail { motor } => write!(f, "motor_fail motor {motor}"),
            Action::MotorRestore { motor } => write!(f, "motor_restore motor {motor}"),
            Action::ThrustLoss { motor, fraction } => {
                write!(f, "thrust_loss motor {motor} fraction {fraction}")
            }
            Action::Push { force_ned_n: p } => {
                write!(f, "push [{}, {}, {}] N NED", p[0], p[1], p[2])
            }
            Action::BatteryDisconnect { battery } => {
                write!(f, "battery_disconnect battery {battery}")
            }
            Action::BatteryReconnect { battery } => {
                write!(f, "battery_reconnect battery {battery}")
            }
            Action::SensorDropout { sensor } => write!(f, "sensor_dropout {}", sensor.name()),
            Action::SensorFreeze { sensor } => write!(f, "sensor_freeze {}", sensor.name()),
            Action::SensorBiasStep { sensor, value } => {
                write!(f, "sensor_bias_step {} {value}", sensor.name())
            }
            Action::SensorNoiseScale { sensor, value } => {
                write!(f, "sensor_noise_scale {} x{value}", sensor.name())
            }
            Action::SensorClear { sensor } => write!(f, "sensor_clear {}", sensor.name()),
            Action::Setpoint {
                kind,
                vector,
                yaw_rad,
                thrust,
            } => {
                let [a, b, c] = vector;
                match kind {
                    SetpointKind::Position => write!(f, "setpoint position [{a}, {b}, {c}] m")?,
                    SetpointKind::Velocity => write!(f, "setpoint velocity [{a}, {b}, {c}] m/s")?,
                    SetpointKind::Rates => {
                        write!(f, "setpoint rates [{a}, {b}, {c}] rad/s thrust {thrust}")?
                    }
                }
                match yaw_rad {
                    // The degrees given, not their trip through radians.
                    Some(y) => write!(f, " yaw {} deg", (y.to_degrees() * 1e9).round() / 1e9),
                    None => Ok(()),
                }
            }
        }
    }
}
