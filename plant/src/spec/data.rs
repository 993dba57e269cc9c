//! The spec as written (after `extends` merging), with serde.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn up() -> [f64; 3] {
    [0.0, 0.0, -1.0]
}
fn default_j0() -> f64 {
    0.8
}
fn one() -> f64 {
    1.0
}
fn default_low() -> f64 {
    0.15
}
fn default_critical() -> f64 {
    0.07
}
fn default_emergency() -> f64 {
    0.05
}
fn default_smoothing() -> f64 {
    0.05
}
fn default_g() -> f64 {
    9.80665
}
fn default_lat() -> f64 {
    47.397742
}
fn default_lon() -> f64 {
    8.545594
}
fn default_alt() -> f64 {
    488.0
}

/// A whole aircraft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AircraftSpec {
    pub schema_version: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub body: BodySpec,
    pub rotors: Vec<RotorSpec>,
    pub propeller: PropellerSpec,
    pub motor: MotorSpec,
    pub esc: EscSpec,
    #[serde(default)]
    pub actuator: ActuatorSpec,
    pub batteries: Vec<BatterySpec>,
    #[serde(default)]
    pub power: PowerSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact: Option<ContactSpec>,
    #[serde(default)]
    pub environment: EnvironmentSpec,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BodySpec {
    pub mass_kg: f64,
    /// Full symmetric tensor about the centre of mass, body FRD.
    pub inertia_kgm2: [[f64; 3]; 3],
    /// Linear drag per body axis on the air-relative velocity (mostly the
    /// rotors' H-force): force `-c v` per axis.
    #[serde(default)]
    pub linear_drag_ns_per_m: [f64; 3],
    /// Quadratic (body) drag per body axis on the air-relative velocity:
    /// force `-c_i |v_i| v_i` on each body axis `i`, `c_i = rho Cd A_i / 2`
    /// (the body-axis form: at 45 degrees between two axes with equal
    /// coefficients the drag is `c v^2 / sqrt(2)`, not `c v^2`).
    #[serde(default)]
    pub quadratic_drag_ns2_per_m2: [f64; 3],
    #[serde(default)]
    pub angular_damping_nms_per_rad: [f64; 3],
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RotorSpec {
    /// Hub position relative to the centre of mass, body FRD.
    pub position_m: [f64; 3],
    /// Unit thrust direction in body FRD.
    #[serde(default = "up")]
    pub thrust_axis: [f64; 3],
    /// +1 counter-clockwise seen from the thrust side, -1 clockwise.
    pub spin_dir: i32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PropellerSpec {
    pub radius_m: f64,
    /// Reaction torque per unit thrust with no inflow (`CP D / (2 pi CT)`).
    pub torque_coeff_m: f64,
    /// Advance ratio at which thrust vanishes (`CT(J)/CT(0) = 1 - J/J0`).
    #[serde(default = "default_j0")]
    pub zero_thrust_advance_ratio: f64,
    /// `[q1, q2]` with `CP(J)/CP(0) = 1 + q1 J + q2 J^2` (default: CP
    /// independent of the inflow).
    #[serde(default)]
    pub torque_inflow_coeffs: [f64; 2],
    /// Thrust per (rad/s)^2 at sea-level density and no inflow, from
    /// propeller data (`CT rho D^4 / (4 pi^2)`); or give
    /// `max_thrust_to_hover_ratio` instead to calibrate it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thrust_coeff_n_s2: Option<f64>,
    /// Calibration, the explicit alternative to `thrust_coeff_n_s2`: full
    /// duty at the first battery's nominal voltage gives this multiple of
    /// the per-rotor hover thrust.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_thrust_to_hover_ratio: Option<f64>,
    /// Cheeseman-Bennett ground effect on the thrust near the ground.
    #[serde(default)]
    pub ground_effect: bool,
    /// Refuse a propulsion unit no real one has (static CT, figure of merit,
    /// hover current; see the README). Switch off only to model something
    /// that is not a propeller on purpose (a flywheel, a test rig).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub plausibility_checks: bool,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MotorSpec {
    pub kv_rpm_per_v: f64,
    pub resistance_ohm: f64,
    pub no_load_current_a: f64,
    pub rotor_inertia_kgm2: f64,
    #[serde(default)]
    pub viscous_friction_nms_per_rad: f64,
    pub current_limit_a: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EscSpec {
    pub efficiency: f64,
    pub deadzone: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActuatorModel {
    #[default]
    Direct,
    FirstOrder,
    SecondOrder,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, JsonSchema)]
pub struct ActuatorSpec {
    #[serde(default)]
    pub model: ActuatorModel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_constant_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub natural_freq_radps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damping_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_s: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BatteryKind {
    Thevenin,
    Ideal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BatterySpec {
    pub model: BatteryKind,
    pub capacity_ah: f64,
    #[serde(default = "one")]
    pub initial_soc: f64,
    pub nominal_voltage_v: f64,
    #[serde(default)]
    pub voltage_floor_v: f64,
    #[serde(default)]
    pub r0_ohm: f64,
    /// Thevenin: the OCV table (state of charge 0..1 -> volts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocv_soc: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocv_v: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r1_ohm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c1_f: Option<f64>,
    /// Ideal: the source voltage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub voltage_v: Option<f64>,
    #[serde(default = "default_low")]
    pub warning_low_soc: f64,
    #[serde(default = "default_critical")]
    pub warning_critical_soc: f64,
    #[serde(default = "default_emergency")]
    pub warning_emergency_soc: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SharingSpec {
    #[default]
    Resistance,
    Equal,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default, JsonSchema)]
pub struct PowerSpec {
    #[serde(default)]
    pub sharing: SharingSpec,
    #[serde(default)]
    pub avionics_power_w: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ContactSpec {
    pub points_m: Vec<[f64; 3]>,
    pub stiffness_n_per_m: f64,
    pub damping_ns_per_m: f64,
    pub friction_coeff: f64,
    #[serde(default = "default_smoothing")]
    pub friction_smoothing_mps: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum GravityModel {
    #[default]
    Uniform,
    Spherical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnvironmentSpec {
    #[serde(default)]
    pub gravity_model: GravityModel,
    #[serde(default = "default_g")]
    pub gravity_mps2: f64,
    #[serde(default = "default_lat")]
    pub origin_lat_deg: f64,
    #[serde(default = "default_lon")]
    pub origin_lon_deg: f64,
    /// Origin altitude above mean sea level.
    #[serde(default = "default_alt")]
    pub origin_alt_m: f64,
}

impl Default for EnvironmentSpec {
    fn default() -> Self {
        EnvironmentSpec {
            gravity_model: GravityModel::Uniform,
            gravity_mps2: default_g(),
            origin_lat_deg: default_lat(),
            origin_lon_deg: default_lon(),
            origin_alt_m: default_alt(),
        }
    }
}
