//! The world a run's vehicles share: time (the timeline of cadences and
//! events, the last boundary), the wind, the scenario's events, and the
//! run's journal.

use crate::Micros;
use crate::environment::wind::Wind;
use crate::inputs::scenario::Event;
use crate::outcome::journal::Journal;
use crate::time::timeline::{Due, Timeline};

use super::avionics::SensorsDue;
use super::vehicle::VehicleDue;

/// Indices of the run's cadences in the timeline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cad {
    pub(crate) autopilot: usize,
    pub(crate) imu: usize,
    pub(crate) mag: usize,
    pub(crate) baro: usize,
    pub(crate) gps: usize,
    pub(crate) estimator: usize,
    pub(crate) wind: usize,
    pub(crate) log: Option<usize>,
}

#[derive(Debug)]
pub(crate) struct World {
    pub(crate) timeline: Timeline,
    pub(crate) cad: Cad,
    pub(crate) wind: Wind,
    /// The wind at the last wind sample (held until the next).
    pub(crate) wind_now: [f64; 3],
    /// The scenario's events, and whether each has fired.
    pub(crate) events: Vec<(Event, bool)>,
    /// Condition-triggered events not yet fired (checked every boundary).
    pub(crate) pending_when: usize,
    pub(crate) mission_started: Option<Micros>,
    /// The last boundary processed.
    pub(crate) now: Micros,
    pub(crate) boundaries: u64,
    pub(crate) journal: Journal,
    /// Positions flown to by setpoint since the vehicle last took them
    /// (north, east, altitude m): its monitor's fence grows to hold them,
    /// as it does for an uploaded mission.
    pub(crate) destinations: Vec<(f64, f64, f64)>,
}

impl World {
    /// The next boundary and what is due there; `None` past the end. The
    /// world's time moves there with [`World::arrive`], once the vehicles
    /// have been integrated to it.
    pub(crate) fn advance(&mut self) -> Option<(Micros, Due)> {
        self.timeline.advance()
    }

    pub(crate) fn arrive(&mut self, t: Micros) {
        self.now = t;
        self.boundaries += 1;
    }

    /// What a vehicle runs at a boundary where `due` is due.
    pub(crate) fn vehicle_due(&self, due: Due) -> VehicleDue {
        let c = &self.cad;
        VehicleDue {
            sensors: SensorsDue {
                imu: due.contains(c.imu),
                mag: due.contains(c.mag),
                baro: due.contains(c.baro),
                gps: due.contains(c.gps),
                estimator: due.contains(c.estimator),
            },
            autopilot: due.contains(c.autopilot),
            log: c.log.is_some_and(|l| due.contains(l)),
        }
    }

    /// Samples the wind where it is due (and at events: a gust may start)
    /// at the vehicle's altitude and velocity: the new sample, if one was
    /// taken.
    pub(crate) fn stage_wind(&mut self, t: Micros, due: Due, x: &[f64]) -> Option<[f64; 3]> {
        if due.contains(self.cad.wind) || due.event {
            self.wind_now = self.wind.sample(t, -x[2], [x[3], x[4], x[5]]);
            return Some(self.wind_now);
        }
        None
    }
}

/// The world's running state (see crate::persist): the events' fired
/// flags travel, the events themselves are the scenario's.
impl crate::persist::Persist for World {
    fn save(&self, w: &mut Vec<u8>) {
        self.timeline.save(w);
        self.wind.save(w);
        self.wind_now.save(w);
        crate::persist::save_len(self.events.len(), w);
        for (_, fired) in &self.events {
            fired.save(w);
        }
        self.pending_when.save(w);
        self.mission_started.save(w);
        self.now.save(w);
        self.boundaries.save(w);
        self.journal.save(w);
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        self.timeline.load(r)?;
        self.wind.load(r)?;
        self.wind_now.load(r)?;
        let n = r.len(usize::MAX, "the events")?;
        if n != self.events.len() {
            return Err(crate::persist::PersistError::Mismatch {
                what: format!("{n} events where this scenario has {}", self.events.len()),
            });
        }
        for (_, fired) in &mut self.events {
            fired.load(r)?;
        }
        self.pending_when.load(r)?;
        self.mission_started.load(r)?;
        self.now.load(r)?;
        self.boundaries.load(r)?;
        self.journal.load(r)
    }
}
