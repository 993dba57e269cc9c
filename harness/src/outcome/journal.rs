//! The run's timeline for its summary: scenario events as they fire, the
//! autopilot's mode and arming changes, failsafes, and detected crashes.

use lockstep_abi::ffi::{
    LOCKSTEP_MODE_HOLD, LOCKSTEP_MODE_LAND, LOCKSTEP_MODE_OFFBOARD, LOCKSTEP_MODE_RTL,
    LOCKSTEP_MODE_TAKEOFF, lockstep_actuator_frame,
};
use lockstep_abi::mode_name;

use crate::Micros;
use crate::inputs::scenario::Action;

/// What kind of happening an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A scenario event fired (a command, a fault, a gust...).
    Event,
    /// The autopilot changed its mode.
    Mode,
    /// The autopilot armed or disarmed.
    Arming,
    /// The autopilot changed to rtl, land or hold on its own while its
    /// battery reported a warning.
    Failsafe,
    /// The verdict's monitor detected a crash.
    Crash,
}

impl EntryKind {
    pub fn name(self) -> &'static str {
        match self {
            EntryKind::Event => "event",
            EntryKind::Mode => "mode",
            EntryKind::Arming => "arming",
            EntryKind::Failsafe => "failsafe",
            EntryKind::Crash => "crash",
        }
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    pub time_us: u64,
    pub kind: EntryKind,
    pub what: String,
}

/// The most entries kept: a pathological autopilot that changes mode at
/// every step cannot grow the summary without bound. What is dropped is
/// counted.
pub const MAX_ENTRIES: usize = 10_000;

#[derive(Debug, Clone, Default)]
pub struct Journal {
    entries: Vec<Entry>,
    dropped: u64,
    /// Mode and arming after the last step (None before the first).
    last: Option<(u32, bool)>,
    /// The mode the scenario requested at the coming step, if any.
    requested: Option<u32>,
}

impl Journal {
    /// The entries so far, in time order (crashes are the monitor's).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn push(&mut self, time: Micros, kind: EntryKind, what: String) {
        if self.entries.len() < MAX_ENTRIES {
            self.entries.push(Entry {
                time_us: time.0,
                kind,
                what,
            });
        } else {
            self.dropped += 1;
        }
    }

    /// A scenario event fired at `t`.
    pub fn event(&mut self, t: Micros, action: &Action) {
        match action {
            Action::Takeoff { .. } => self.requested = Some(LOCKSTEP_MODE_TAKEOFF),
            Action::Rtl => self.requested = Some(LOCKSTEP_MODE_RTL),
            Action::Land => self.requested = Some(LOCKSTEP_MODE_LAND),
            Action::Hold => self.requested = Some(LOCKSTEP_MODE_HOLD),
            Action::Setpoint { .. } => self.requested = Some(LOCKSTEP_MODE_OFFBOARD),
            _ => {}
        }
        self.push(t, EntryKind::Event, action.to_string());
    }

    /// The autopilot's outputs after its step at `t`, with the battery
    /// warning it was given.
    pub fn autopilot(&mut self, t: Micros, act: &lockstep_actuator_frame, battery_warning: u32) {
        let now = (act.mode, act.armed != 0);
        let requested = self.requested.take();
        let Some((mode, armed)) = self.last.replace(now) else {
            return;
        };
        if now.1 != armed {
            let what = if now.1 { "armed" } else { "disarmed" };
            self.push(t, EntryKind::Arming, what.to_string());
        }
        if now.0 != mode {
            let change = format!("{} -> {}", mode_name(mode), mode_name(now.0));
            let own = requested != Some(now.0);
            let failsafe_mode = matches!(
                now.0,
                LOCKSTEP_MODE_RTL | LOCKSTEP_MODE_LAND | LOCKSTEP_MODE_HOLD
            );
            if own && failsafe_mode && battery_warning != 0 {
                self.push(
                    t,
                    EntryKind::Failsafe,
                    format!("{change} (battery warning {battery_warning})"),
                );
            } else {
                self.push(t, EntryKind::Mode, change);
            }
        }
    }

    /// A crash the monitor detected.
    pub fn crash(&mut self, t: Micros, what: String) {
        self.push(t, EntryKind::Crash, what);
    }

    /// The entries in time order (stable: within a time, in the order
    /// they happened), and how many were dropped past [`MAX_ENTRIES`].
    pub fn finish(mut self) -> (Vec<Entry>, u64) {
        self.entries.sort_by_key(|e| e.time_us);
        (self.entries, self.dropped)
    }
}

/// The journal travels with its vehicle (see crate::persist): entries of
/// any number.
impl crate::persist::Persist for Journal {
    fn save(&self, w: &mut Vec<u8>) {
        crate::persist::save_len(self.entries.len(), w);
        for e in &self.entries {
            e.time_us.save(w);
            w.push(e.kind as u8);
            e.what.save(w);
        }
        self.dropped.save(w);
        self.last.save(w);
        self.requested.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        let n = r.len(MAX_ENTRIES, "the timeline")?;
        self.entries.clear();
        for _ in 0..n {
            let mut time_us = 0u64;
            time_us.load(r)?;
            let kind = match r.take(1)?[0] {
                0 => EntryKind::Event,
                1 => EntryKind::Mode,
                2 => EntryKind::Arming,
                3 => EntryKind::Failsafe,
                4 => EntryKind::Crash,
                k => {
                    return Err(crate::persist::PersistError::Mismatch {
                        what: format!("{k} is not a timeline entry kind"),
                    });
                }
            };
            let mut what = String::new();
            what.load(r)?;
            self.entries.push(Entry {
                time_us,
                kind,
                what,
            });
        }
        self.dropped.load(r)?;
        self.last.load(r)?;
        self.requested.load(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_abi::ffi::{LOCKSTEP_MODE_IDLE, LOCKSTEP_MODE_MISSION};

    fn frame(mode: u32, armed: bool) -> lockstep_actuator_frame {
        lockstep_actuator_frame {
            mode,
            armed: u32::from(armed),
            ..Default::default()
        }
    }

    #[test]
    fn changes_are_entries_and_uncommanded_returns_on_a_warning_are_failsafes() {
        let mut j = Journal::default();
        j.autopilot(Micros(0), &frame(LOCKSTEP_MODE_IDLE, false), 0);
        j.event(Micros(1000), &Action::Arm);
        j.autopilot(Micros(1000), &frame(LOCKSTEP_MODE_IDLE, true), 0);
        j.autopilot(Micros(2000), &frame(LOCKSTEP_MODE_MISSION, true), 0);
        j.autopilot(Micros(3000), &frame(LOCKSTEP_MODE_RTL, true), 1);
        j.event(Micros(4000), &Action::Land);
        j.autopilot(Micros(4000), &frame(LOCKSTEP_MODE_LAND, true), 2);
        j.crash(Micros(500), "ground impact".into());
        let (e, dropped) = j.finish();
        assert_eq!(dropped, 0);
        let got: Vec<(u64, &str, &str)> = e
            .iter()
            .map(|e| (e.time_us, e.kind.name(), e.what.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (500, "crash", "ground impact"),
                (1000, "event", "arm"),
                (1000, "arming", "armed"),
                (2000, "mode", "idle -> mission"),
                (3000, "failsafe", "mission -> rtl (battery warning 1)"),
                (4000, "event", "land"),
                (4000, "mode", "rtl -> land"),
            ]
        );
    }

    #[test]
    fn the_journal_is_bounded_and_counts_what_it_drops() {
        let mut j = Journal::default();
        for i in 0..MAX_ENTRIES as u64 + 5 {
            j.event(Micros(i), &Action::Hold);
        }
        let (e, dropped) = j.finish();
        assert_eq!(e.len(), MAX_ENTRIES);
        assert_eq!(dropped, 5);
    }
}
