//! A vehicle's outcome as one value: its final state, its verdict (crashes
//! and `[expect]` checks) and its timeline. A flight's report, a fleet's and
//! a co-simulation's each hold one per vehicle, whether the vehicle flew in
//! this process or in another (the value crosses the wire as it is).

use serde::{Deserialize, Serialize};

use crate::outcome::Summary;
use crate::outcome::journal::Entry;

/// Where the vehicle ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FinalState {
    /// The autopilot's mode, by name (`lockstep_abi::mode_name`).
    pub mode: String,
    pub armed: bool,
    pub position_ned_m: [f64; 3],
    pub altitude_m: f64,
    pub mission_finished: bool,
    /// State of charge of the first pack, 0..1.
    pub soc: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrashReport {
    pub time_us: u64,
    pub what: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckReport {
    /// The `[expect]` key checked.
    pub key: String,
    pub passed: bool,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictReport {
    pub passed: bool,
    pub crashes: Vec<CrashReport>,
    pub crashes_allowed: bool,
    pub checks: Vec<CheckReport>,
}

/// A vehicle's outcome: what a fleet or a co-simulation reports for each of
/// its vehicles, the same whether it ran in one process or across many.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VehicleOutcome {
    /// The verdict passed.
    pub passed: bool,
    pub final_state: FinalState,
    pub verdict: VerdictReport,
    pub timeline: Vec<Entry>,
    /// Timeline entries dropped past the journal's bound.
    pub timeline_dropped: u64,
}

impl FinalState {
    pub fn of(s: &Summary) -> FinalState {
        FinalState {
            mode: lockstep_abi::mode_name(s.mode).to_string(),
            armed: s.armed,
            position_ned_m: s.position_ned_m,
            altitude_m: -s.position_ned_m[2],
            mission_finished: s.mission_finished,
            soc: s.soc,
        }
    }
}

impl VerdictReport {
    /// Why the verdict failed, in one line: each failed `[expect]` check
    /// (`key: detail`) and each crash not allowed, `; ` between them; empty
    /// when it passed.
    pub fn failures(&self) -> String {
        let mut why: Vec<String> = self
            .checks
            .iter()
            .filter(|c| !c.passed)
            .map(|c| format!("{}: {}", c.key, c.detail))
            .collect();
        if !self.crashes_allowed {
            why.extend(self.crashes.iter().map(|c| format!("crash: {}", c.what)));
        }
        why.join("; ")
    }

    pub fn of(s: &Summary) -> VerdictReport {
        let v = &s.verdict;
        VerdictReport {
            passed: v.passed(),
            crashes: v
                .crashes
                .iter()
                .map(|c| CrashReport {
                    time_us: c.time.0,
                    what: c.to_string(),
                })
                .collect(),
            crashes_allowed: v.crashes_allowed,
            checks: v
                .checks
                .iter()
                .map(|c| CheckReport {
                    key: c.key.to_string(),
                    passed: c.passed,
                    detail: c.detail.clone(),
                })
                .collect(),
        }
    }
}

impl VehicleOutcome {
    pub fn of(s: &Summary) -> VehicleOutcome {
        VehicleOutcome {
            passed: s.verdict.passed(),
            final_state: FinalState::of(s),
            verdict: VerdictReport::of(s),
            timeline: s.timeline.clone(),
            timeline_dropped: s.timeline_dropped,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_survives_json_and_postcard_bit_for_bit() {
        let o = VehicleOutcome {
            passed: false,
            final_state: FinalState {
                mode: "land".into(),
                armed: false,
                position_ned_m: [1.5, -0.0, f64::MIN_POSITIVE],
                altitude_m: 0.1 + 0.2,
                mission_finished: true,
                soc: 0.25,
            },
            verdict: VerdictReport {
                passed: false,
                crashes: vec![CrashReport {
                    time_us: 7,
                    what: "impact".into(),
                }],
                crashes_allowed: false,
                checks: vec![CheckReport {
                    key: "min_soc".into(),
                    passed: false,
                    detail: "0.2 < 0.3".into(),
                }],
            },
            timeline: vec![Entry {
                time_us: 3,
                kind: crate::outcome::journal::EntryKind::Crash,
                what: "impact".into(),
            }],
            timeline_dropped: 2,
        };
        let json = serde_json::to_string(&o).unwrap();
        let back: VehicleOutcome = serde_json::from_str(&json).unwrap();
        assert_eq!(back, o);
        assert_eq!(
            back.final_state.altitude_m.to_bits(),
            (0.1f64 + 0.2).to_bits()
        );
    }

    #[test]
    fn failures_name_each_failed_check_and_each_crash_not_allowed() {
        let check = |key: &str, passed| CheckReport {
            key: key.into(),
            passed,
            detail: format!("{key} detail"),
        };
        let mut v = VerdictReport {
            passed: false,
            crashes: vec![CrashReport {
                time_us: 5,
                what: "hit the ground at 6 m/s".into(),
            }],
            crashes_allowed: false,
            checks: vec![
                check("expect.disarmed", true),
                check("expect.landed_within", false),
                check("expect.mission_finished", false),
            ],
        };
        assert_eq!(
            v.failures(),
            "expect.landed_within: expect.landed_within detail; \
             expect.mission_finished: expect.mission_finished detail; \
             crash: hit the ground at 6 m/s"
        );
        v.crashes_allowed = true;
        v.checks.truncate(1);
        assert_eq!(v.failures(), "");
    }
}
