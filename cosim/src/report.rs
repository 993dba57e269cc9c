//! What a participant says of its run when the run ends: a vehicle its
//! outcome and first avoidance, an FMU its steps and the warnings it gave,
//! others nothing. A value of its own type, the same in place and over the
//! wire (where it travels as JSON text inside a postcard message).

use lockstep_harness::outcome::report::VehicleOutcome;
use serde::{Deserialize, Serialize};

use crate::vehicle::Avoidance;

/// A participant's report (its JSON has no tag: a vehicle's, an FMU's, or
/// `null`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParticipantReport {
    Vehicle(VehicleReport),
    Fmu(FmuReport),
    /// Nothing to say (a closure, a C callback, a participant whose finish
    /// failed).
    None,
    /// What a participant of the program's own says (any JSON value but
    /// `null`).
    Other(serde_json::Value),
}

impl ParticipantReport {
    /// The vehicle's report, when it is one.
    pub fn vehicle(&self) -> Option<&VehicleReport> {
        match self {
            ParticipantReport::Vehicle(v) => Some(v),
            _ => None,
        }
    }
}

/// A vehicle participant's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VehicleReport {
    /// Its outcome, `None` when its run did not end.
    pub outcome: Option<VehicleOutcome>,
    /// The first time it held position for a reported neighbour.
    pub avoidance: Option<Avoidance>,
    /// The smallest distance to a neighbour it was told of, m.
    pub min_reported_distance_m: Option<f64>,
    /// Its flight log, as its writer named it (`None`: it wrote none).
    #[serde(default)]
    pub log: Option<String>,
}

impl VehicleReport {
    /// Its verdict passed (`None`: its run did not end).
    pub fn passed(&self) -> Option<bool> {
        self.outcome.as_ref().map(|o| o.passed)
    }
}

/// An FMU participant's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FmuReport {
    /// Where the FMU was unpacked from.
    pub fmu: String,
    pub model_name: String,
    pub steps: u64,
    /// What the importer noted of its description and initialization.
    pub warnings: Vec<String>,
    /// Steps that returned fmi2Warning.
    #[serde(rename = "calls_with_fmi2Warning")]
    pub calls_with_fmi2_warning: u64,
    /// What the FMU logged.
    pub log: Vec<String>,
}

/// What a transfer function says of the run (only a radio says anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TransferReport {
    Radio(RadioReport),
    None,
}

/// A radio's counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RadioReport {
    pub reports_sent: u64,
    pub reports_lost: u64,
    pub reports_delivered: u64,
}

impl std::fmt::Display for RadioReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} reports sent, {} lost, {} delivered",
            self.reports_sent, self.reports_lost, self.reports_delivered
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_back_as_itself() {
        let fmu = ParticipantReport::Fmu(FmuReport {
            fmu: "a.fmu".into(),
            model_name: "m".into(),
            steps: 3,
            warnings: vec!["w".into()],
            calls_with_fmi2_warning: 1,
            log: Vec::new(),
        });
        let vehicle = ParticipantReport::Vehicle(VehicleReport {
            outcome: None,
            avoidance: Some(Avoidance {
                time_us: 4000,
                slot: 1,
                distance_m: 24.5,
            }),
            min_reported_distance_m: None,
            log: Some("a/alpha.csv".into()),
        });
        let other = ParticipantReport::Other(serde_json::json!({ "ok": true }));
        for r in [fmu, vehicle, ParticipantReport::None, other] {
            let text = serde_json::to_string(&r).unwrap();
            let back: ParticipantReport = serde_json::from_str(&text).unwrap();
            assert_eq!(back, r, "{text}");
        }
        assert_eq!(
            serde_json::to_string(&ParticipantReport::None).unwrap(),
            "null"
        );
    }
}
