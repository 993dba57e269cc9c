//! The canonical order of the stages at every boundary.
//!
//! At each boundary every due source runs once, in this order, each writing
//! held values to the bus for the ones after it:
//!
//! 1. **Scenario** — timed and conditional events (arm, mission start, RTL,
//!    gusts, failures...).
//! 2. **Faults** — the fault state the events produce (motor failure, thrust
//!    loss, battery disconnect, sensor faults).
//! 3. **Wind** — the air mass velocity.
//! 4. **Sensors and estimator** — samples of the state as it is at the boundary.
//! 5. **Autopilot** — one step with the sensor frame; its commands are held.
//! 6. **Logging** — a row of everything decided at this boundary.
//!
//! Then the plant integrates to the next boundary with all of it held.

/// One stage of a boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    Scenario,
    Faults,
    Wind,
    Sensors,
    Autopilot,
    Logging,
}

/// The stages in the order they run.
pub const STAGE_ORDER: [Stage; 6] = [
    Stage::Scenario,
    Stage::Faults,
    Stage::Wind,
    Stage::Sensors,
    Stage::Autopilot,
    Stage::Logging,
];

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Scenario => "scenario",
            Stage::Faults => "faults",
            Stage::Wind => "wind",
            Stage::Sensors => "sensors",
            Stage::Autopilot => "autopilot",
            Stage::Logging => "logging",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_scenario_faults_wind_sensors_autopilot_logging() {
        let names: Vec<_> = STAGE_ORDER.iter().map(|s| s.name()).collect();
        assert_eq!(
            names,
            [
                "scenario",
                "faults",
                "wind",
                "sensors",
                "autopilot",
                "logging"
            ]
        );
        assert!(
            STAGE_ORDER.windows(2).all(|w| w[0] < w[1]),
            "Ord follows the run order"
        );
    }
}
