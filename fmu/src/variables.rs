//! The FMU's variables: one table, from which both modelDescription.xml is
//! written and fmi2Get*/fmi2Set* are served (the value reference of a
//! variable is its index in the table).

use lockstep_harness::inputs::scenario::{Action, MAX_START_OFFSET_M, MAX_WIND_MPS};

/// FMI's variable types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Real,
    Integer,
    Boolean,
    String,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Real => "Real",
            Kind::Integer => "Integer",
            Kind::Boolean => "Boolean",
            Kind::String => "String",
        }
    }
}

/// Which of FMI's causalities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Causality {
    /// Fixed before the run (set before initialization ends).
    Parameter,
    /// Read by the FMU at each communication point.
    Input,
    /// Written by the FMU at each communication point.
    Output,
}

/// Where a variable's value lives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Slot {
    /// `simulation.seed` (Integer: FMI's 32 bits; the scenario's seed if not set).
    Seed,
    /// The start position and heading (`vehicle.start`).
    StartNorth,
    StartEast,
    StartYaw,
    /// Where to write the CSV flight log ("" for none).
    LogPath,
    /// A command switch: its rising edge applies the action (arm, disarm,
    /// mission start, RTL, land, hold).
    Command(Action),
    /// Wind added to the scenario's, NED component.
    WindOffset(usize),
    /// Motor `i` failed while true.
    MotorFailed(usize),
    /// Battery `j` disconnected while true.
    BatteryDisconnected(usize),
    /// Sensor `k` (imu, mag, baro, gps, estimator) dropped out while true.
    SensorDropout(usize),
    /// True state component `i` (position, velocity, attitude, rates).
    Truth(usize),
    /// Estimate component `i`, in the same order.
    Estimate(usize),
    /// Motor command `i` from the autopilot.
    Motor(usize),
    BatteryVoltage,
    BatteryCurrent,
    BatteryRemaining,
    Mode,
    Armed,
    MissionCurrent,
    MissionFinished,
}

/// One variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    pub name: String,
    pub kind: Kind,
    pub causality: Causality,
    pub description: String,
    pub unit: Option<&'static str>,
    /// The start value as modelDescription.xml writes it (parameters and
    /// inputs).
    pub start: Option<String>,
    /// The closed range a Real parameter or input takes (the scenario
    /// file's bounds for the same quantity): `min` and `max` in
    /// modelDescription.xml, and what fmi2SetReal checks.
    pub range: Option<(f64, f64)>,
    pub slot: Slot,
}

/// The 13 state components, their names and units.
pub const STATE: [(&str, &str); 13] = [
    ("north_m", "m"),
    ("east_m", "m"),
    ("down_m", "m"),
    ("v_north_mps", "m/s"),
    ("v_east_mps", "m/s"),
    ("v_down_mps", "m/s"),
    ("q_w", "1"),
    ("q_x", "1"),
    ("q_y", "1"),
    ("q_z", "1"),
    ("p_radps", "rad/s"),
    ("q_radps", "rad/s"),
    ("r_radps", "rad/s"),
];

const SENSORS: [&str; 5] = ["imu", "mag", "baro", "gps", "estimator"];

/// The variables of a vehicle with `rotors` rotors and `batteries` packs,
/// whose scenario has seed `seed` and start (north, east, yaw).
///
/// Long because it is the table: one entry per variable in value-reference
/// order, each with its causality, bounds and description where
/// modelDescription.xml and the getters read them; split, the order would
/// live in several places.
pub fn table(rotors: usize, batteries: usize, seed: u64, start: (f64, f64, f64)) -> Vec<Variable> {
    let mut v = Vec::new();
    let mut add = |name: std::string::String,
                   kind: Kind,
                   causality: Causality,
                   description: std::string::String,
                   unit: Option<&'static str>,
                   start: Option<std::string::String>,
                   slot: Slot| {
        let range = match slot {
            Slot::StartNorth | Slot::StartEast => Some((-MAX_START_OFFSET_M, MAX_START_OFFSET_M)),
            Slot::StartYaw => Some((-360.0, 360.0)),
            Slot::WindOffset(_) => Some((-MAX_WIND_MPS, MAX_WIND_MPS)),
            _ => None,
        };
        v.push(Variable {
            name,
            kind,
            causality,
            description,
            unit,
            start,
            range,
            slot,
        })
    };
    use Causality::*;
    use Kind::*;
    add(
        "seed".into(),
        Integer,
        Parameter,
        "The master seed (simulation.seed; 0 to 2147483647)".into(),
        None,
        Some((seed.min(i32::MAX as u64)).to_string()),
        Slot::Seed,
    );
    for (slot, name, desc, unit, value) in [
        (
            Slot::StartNorth,
            "start_north_m",
            "Start position, north of the origin",
            "m",
            start.0,
        ),
        (
            Slot::StartEast,
            "start_east_m",
            "Start position, east of the origin",
            "m",
            start.1,
        ),
        (
            Slot::StartYaw,
            "start_yaw_deg",
            "Start heading",
            "deg",
            start.2,
        ),
    ] {
        add(
            name.into(),
            Real,
            Parameter,
            desc.into(),
            Some(unit),
            Some(real(value)),
            slot,
        );
    }
    add(
        "log_path".into(),
        String,
        Parameter,
        "Write the CSV flight log here (the scenario needs a log cadence); empty: no log".into(),
        None,
        Some(std::string::String::new()),
        Slot::LogPath,
    );
    for (c, name) in [
        (Action::Arm, "cmd_arm"),
        (Action::Disarm, "cmd_disarm"),
        (Action::MissionStart, "cmd_mission_start"),
        (Action::Rtl, "cmd_rtl"),
        (Action::Land, "cmd_land"),
        (Action::Hold, "cmd_hold"),
    ] {
        add(
            name.into(),
            Boolean,
            Input,
            format!("Rising edge: send `{}` to the autopilot", &name[4..]),
            None,
            Some("false".into()),
            Slot::Command(c),
        );
    }
    for (i, axis) in ["north", "east", "down"].into_iter().enumerate() {
        add(
            format!("wind_offset_{axis}_mps"),
            Real,
            Input,
            format!("Wind added to the scenario's, {axis} (NED)"),
            Some("m/s"),
            Some("0".into()),
            Slot::WindOffset(i),
        );
    }
    for i in 0..rotors {
        add(
            format!("fault_motor_{i}"),
            Boolean,
            Input,
            format!("Motor {i} failed while true"),
            None,
            Some("false".into()),
            Slot::MotorFailed(i),
        );
    }
    for j in 0..batteries {
        add(
            format!("fault_battery_{j}"),
            Boolean,
            Input,
            format!("Battery {j} disconnected while true"),
            None,
            Some("false".into()),
            Slot::BatteryDisconnected(j),
        );
    }
    for (k, s) in SENSORS.into_iter().enumerate() {
        add(
            format!("fault_{s}_dropout"),
            Boolean,
            Input,
            format!("The {s} drops out while true"),
            None,
            Some("false".into()),
            Slot::SensorDropout(k),
        );
    }
    for (i, (n, unit)) in STATE.into_iter().enumerate() {
        add(
            format!("truth_{n}"),
            Real,
            Output,
            format!("True state: {n} (NED, body FRD)"),
            Some(unit),
            None,
            Slot::Truth(i),
        );
    }
    for (i, (n, unit)) in STATE.into_iter().enumerate() {
        add(
            format!("estimate_{n}"),
            Real,
            Output,
            format!("The estimate the autopilot last received: {n}"),
            Some(unit),
            None,
            Slot::Estimate(i),
        );
    }
    for i in 0..rotors {
        add(
            format!("motor_{i}"),
            Real,
            Output,
            format!("Motor {i} command from the autopilot, 0..1"),
            Some("1"),
            None,
            Slot::Motor(i),
        );
    }
    for (slot, name, desc, unit) in [
        (
            Slot::BatteryVoltage,
            "battery_voltage_v",
            "Battery 0 terminal voltage",
            "V",
        ),
        (
            Slot::BatteryCurrent,
            "battery_current_a",
            "Battery 0 current",
            "A",
        ),
        (
            Slot::BatteryRemaining,
            "battery_remaining",
            "Battery 0 state of charge, 0..1",
            "1",
        ),
    ] {
        add(
            name.into(),
            Real,
            Output,
            desc.into(),
            Some(unit),
            None,
            slot,
        );
    }
    add(
        "mode".into(),
        Integer,
        Output,
        "The autopilot's mode (LOCKSTEP_MODE_*)".into(),
        None,
        None,
        Slot::Mode,
    );
    add(
        "armed".into(),
        Boolean,
        Output,
        "The autopilot is armed".into(),
        None,
        None,
        Slot::Armed,
    );
    add(
        "mission_current".into(),
        Integer,
        Output,
        "The mission item being flown (-1: none)".into(),
        None,
        None,
        Slot::MissionCurrent,
    );
    add(
        "mission_finished".into(),
        Boolean,
        Output,
        "The mission has finished".into(),
        None,
        None,
        Slot::MissionFinished,
    );
    v
}

/// A Real as modelDescription.xml writes it: exactly (17 significant digits).
pub fn real(x: f64) -> String {
    format!("{x:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_value_references_are_indices() {
        let t = table(6, 2, 7, (1.0, 2.0, 90.0));
        let mut names: Vec<_> = t.iter().map(|v| v.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), t.len());
        assert_eq!(
            t.iter()
                .filter(|v| matches!(v.slot, Slot::Motor(_)))
                .count(),
            6
        );
        assert_eq!(
            t.iter()
                .filter(|v| matches!(v.slot, Slot::BatteryDisconnected(_)))
                .count(),
            2
        );
        // Inputs and parameters have start values, outputs none.
        for v in &t {
            assert_eq!(
                v.start.is_some(),
                v.causality != Causality::Output,
                "{}",
                v.name
            );
        }
    }
}
