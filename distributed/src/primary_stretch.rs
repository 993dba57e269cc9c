//! The primary's lookahead: from every vehicle's reach (the speed and
//! acceleration bounds its secondary reports each round), a round steps a
//! stretch of sync periods when no pair can come near
//! (`lockstep_fleet::lookahead`). A vehicle that leaves its level's grown
//! box during a stretch moves to its new secondary after it, as after any
//! round: where a vehicle runs never changes what it computes. The
//! separation is then observed at each boundary of the stretch from the
//! positions the acks carry, exactly as at every sync period, and the
//! stretch's rows are written; a stretch that broke a vehicle's reach or
//! held a collision before its end is redone from the secondaries'
//! snapshots at the plain period (its rows dropped).

use lockstep_fleet::lookahead::{boundaries, check_stretch, horizon};
use lockstep_harness::Micros;
use lockstep_harness::engine::Reach;

use super::{Primary, PrimaryError};
use crate::link::PrimaryLink;
use crate::protocol::Collision;

impl<L: PrimaryLink> Primary<L> {
    /// The sync periods the next round may cover (1: the next boundary).
    pub(super) fn plan(&self) -> u64 {
        if self.lookahead.off.is_some() || self.now < self.plain_until {
            return 1;
        }
        horizon(
            &self.reach(),
            &self.radii,
            &self.fleet.lookahead,
            self.fleet.sync,
        )
    }

    /// Every vehicle's reach from its last position.
    fn reach(&self) -> Vec<Reach> {
        self.performers
            .iter()
            .map(|p| Reach {
                position_ned_m: p.position,
                speed_mps: p.speed_mps,
                accel_mps2: p.accel_mps2,
            })
            .collect()
    }

    /// One round through `periods` sync periods (the end the last boundary
    /// at most), checked; redone at the plain period when it broke.
    pub(super) fn stretch(&mut self, periods: u64, end: Micros) -> Result<(), PrimaryError> {
        let start = self.now;
        let times = boundaries(start, periods, self.fleet.sync, end);
        let reach = self.reach();
        let last = *times.last().expect("a stretch has a boundary");
        self.iteration += 1;
        let mut step = self.step_message(last.0);
        step.first_us = times[0].0;
        step.keep = true;
        step.collisions = std::mem::take(&mut self.collisions);
        step.arrivals = std::mem::take(&mut self.arrivals);
        step.affinity = std::mem::take(&mut self.affinity);
        match self.timed_round(step) {
            Ok(_) => {}
            // A vehicle failed in the stretch: redone, the failure comes
            // back at its own boundary (or not at all, as in a plain run).
            Err(PrimaryError::Vehicle(..)) => return self.redo(&times),
            Err(e) => return Err(e),
        }
        if let Some(p) = self
            .performers
            .iter()
            .find(|p| p.positions.len() != times.len())
        {
            return Err(PrimaryError::Protocol(format!(
                "vehicle `{}` came back with {} positions for a stretch of {} boundaries",
                p.name,
                p.positions.len(),
                times.len()
            )));
        }
        let performers = &self.performers;
        let checked = check_stretch(&mut self.separation, &reach, start, &times, |k| {
            performers.iter().map(|p| p.positions[k]).collect()
        });
        let Some(collided) = checked else {
            return self.redo(&times);
        };
        self.write_pending()?;
        self.now = last;
        self.syncs += times.len() as u64;
        self.collisions = collided
            .into_iter()
            .map(|(a, b, d)| Collision {
                a: a as u32,
                b: b as u32,
                separation_m: d,
            })
            .collect();
        Ok(())
    }

    /// A broken stretch: back to the snapshots (its rows dropped), one
    /// sync period at a time to its end.
    fn redo(&mut self, times: &[Micros]) -> Result<(), PrimaryError> {
        for p in &mut self.performers {
            p.pending.clear();
        }
        self.lookahead.redone += 1;
        self.plain_until = *times.last().expect("a stretch has a boundary");
        self.iteration += 1;
        let mut redo = self.step_message(times[0].0);
        redo.redo = true;
        self.timed_round(redo)?;
        self.boundary(times[0]);
        Ok(())
    }
}
