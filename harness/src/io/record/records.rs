//! Records: their byte layout, and the rules their times and the end
//! status follow (shared by the recorder and the reader).

use lockstep_abi::ffi::{lockstep_actuator_frame, lockstep_commands};
use lockstep_plant::PlantInputs;

use super::{EndStatus, RecordError, TimeBounds};

/// The shape of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    pub rotors: usize,
    pub batteries: usize,
}

impl Layout {
    pub(super) fn record_bytes(self) -> usize {
        8 + 8 * self.rotors + 24 + 9 * self.rotors + self.batteries + 13 * 4 + 8 + 12
    }

    /// Appends one record to `out` (no allocation when `out` has room).
    pub(super) fn encode(
        self,
        t: u64,
        u: &PlantInputs,
        act: &lockstep_actuator_frame,
        estimate: &[f32; 13],
        commands: &lockstep_commands,
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(&t.to_le_bytes());
        for v in &u.motor_cmd[..self.rotors] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in u.wind_ned_mps {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for i in 0..self.rotors {
            out.push(u8::from(u.motor_enabled[i]));
            out.extend_from_slice(&u.thrust_scale[i].to_le_bytes());
        }
        for b in &u.battery_connected[..self.batteries] {
            out.push(u8::from(*b));
        }
        for v in estimate {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [
            act.mode,
            act.armed,
            commands.arm_request,
            commands.mode_request,
            commands.mission_start,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// The time and plant inputs of one record (`rec` is
    /// [`Layout::record_bytes`] long).
    pub(super) fn decode(self, rec: &[u8]) -> (u64, PlantInputs) {
        let mut at = 0;
        let mut take = |n: usize| {
            let s = &rec[at..at + n];
            at += n;
            s
        };
        let u64_of = |s: &[u8]| u64::from_le_bytes(s.try_into().unwrap_or([0; 8]));
        let f64_of = |s: &[u8]| f64::from_le_bytes(s.try_into().unwrap_or([0; 8]));
        let t = u64_of(take(8));
        let mut u = PlantInputs::default();
        for v in &mut u.motor_cmd[..self.rotors] {
            *v = f64_of(take(8));
        }
        for v in &mut u.wind_ned_mps {
            *v = f64_of(take(8));
        }
        for i in 0..self.rotors {
            u.motor_enabled[i] = take(1)[0] != 0;
            u.thrust_scale[i] = f64_of(take(8));
        }
        for b in &mut u.battery_connected[..self.batteries] {
            *b = take(1)[0] != 0;
        }
        (t, u)
    }
}

/// Why a record time is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TimeFault {
    NotIncreasing { previous_us: u64 },
    Gap { previous_us: u64 },
    BeyondEnd,
}

/// The record-time rules, shared by the recorder (which refuses to write a
/// recording the reader would refuse) and the reader.
#[derive(Debug, Clone, Copy)]
pub(super) struct Sequence {
    pub bounds: TimeBounds,
    /// Records accepted so far.
    pub records: u64,
    /// Time of the last of them.
    pub last_us: Option<u64>,
}

impl Sequence {
    pub(super) fn new(bounds: TimeBounds) -> Self {
        Sequence {
            bounds,
            records: 0,
            last_us: None,
        }
    }

    /// Accepts the next record time or says why not.
    pub(super) fn push(&mut self, t: u64) -> Result<(), TimeFault> {
        if let Some(previous_us) = self.last_us {
            if t <= previous_us {
                return Err(TimeFault::NotIncreasing { previous_us });
            }
            if t - previous_us > self.bounds.max_interval_us {
                return Err(TimeFault::Gap { previous_us });
            }
        }
        if t > self.bounds.end_us {
            return Err(TimeFault::BeyondEnd);
        }
        self.last_us = Some(t);
        self.records += 1;
        Ok(())
    }

    pub(super) fn time_error(
        &self,
        fault: TimeFault,
        path: &str,
        block: u64,
        t: u64,
    ) -> RecordError {
        let (path, index) = (path.to_string(), self.records);
        match fault {
            TimeFault::NotIncreasing { previous_us } => RecordError::NotIncreasing {
                path,
                block,
                index,
                time_us: t,
                previous_us,
            },
            TimeFault::Gap { previous_us } => RecordError::GapTooLarge {
                path,
                block,
                index,
                time_us: t,
                previous_us,
                max_interval_us: self.bounds.max_interval_us,
            },
            TimeFault::BeyondEnd => RecordError::BeyondEnd {
                path,
                block,
                index,
                time_us: t,
                end_us: self.bounds.end_us,
            },
        }
    }

    /// Whether `status` can truthfully end these records.
    pub(super) fn check_end(&self, status: &EndStatus) -> Result<(), String> {
        let last = self.last_us.unwrap_or(0);
        let end = self.bounds.end_us;
        match status {
            EndStatus::Completed if self.last_us != Some(end) => Err(format!(
                "the run is marked completed but its last record is {}, not the planned end {}",
                match self.last_us {
                    Some(t) => format!("at {}", lockstep_abi::at(t)),
                    None => "missing".into(),
                },
                lockstep_abi::at(end)
            )),
            EndStatus::Stopped { time_us, .. } | EndStatus::Interrupted { time_us, .. }
                if *time_us < last || *time_us > end =>
            {
                Err(format!(
                    "the run is marked {status}, outside {} ..= {} (its last record .. its planned end)",
                    lockstep_abi::at(last),
                    lockstep_abi::at(end)
                ))
            }
            _ => Ok(()),
        }
    }
}
