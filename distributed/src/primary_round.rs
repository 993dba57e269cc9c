//! A round of the primary: the step sent to every secondary, every ack
//! collected (stale, duplicate and damaged ones refused, within the step
//! deadline), the rows they carry written or held; and where the round's
//! wall time went ([`RoundParts`]).

use std::ops::AddAssign;
use std::time::{Duration, Instant};

use lockstep_harness::persist::{Persist, Reader};

use super::{Primary, PrimaryError};
use crate::link::PrimaryLink;
use crate::protocol::{Ack, Step};

/// Where rounds' wall time went, summed over them, along each round's
/// critical path: the step sent, the work of the secondary whose ack came
/// last, its way back, its check, the rows. The parts of a round add up to
/// its time (the acks that came earlier were checked while that secondary
/// still worked).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundParts {
    /// Encoding the step and handing it to the link.
    pub send: Duration,
    /// The work of the secondary whose ack came last, as its ack says: from
    /// the step received to the ack built (the vehicles stepped, their rows
    /// encoded), at most the wait for that ack.
    pub secondary: Duration,
    /// The rest of the wait for the last ack: the step on its way, the ack
    /// sealed, encoded, on its way back and decoded, and the primary
    /// checking earlier acks when that delayed taking this one.
    pub transit: Duration,
    /// Checking the last ack's digest.
    pub checks: Duration,
    /// Reading the acks' rows and writing them to the logs (or holding
    /// them until a stretch is checked).
    pub rows: Duration,
}

impl AddAssign for RoundParts {
    fn add_assign(&mut self, o: RoundParts) {
        self.send += o.send;
        self.secondary += o.secondary;
        self.transit += o.transit;
        self.checks += o.checks;
        self.rows += o.rows;
    }
}

impl<L: PrimaryLink> Primary<L> {
    /// A time-advancing round: its wall time and parts counted (also when
    /// a vehicle failed in it; any other failure ends the run, whose report
    /// then has no rounds).
    pub(super) fn timed_round(&mut self, step: Step) -> Result<Vec<Ack>, PrimaryError> {
        let started = Instant::now();
        let mut parts = RoundParts::default();
        let ran = self.exchange(step, &mut parts);
        self.round_times.push(started.elapsed());
        self.round_parts += parts;
        ran
    }

    /// A round that does not advance time (the first, a pause, a
    /// transfer, the stop): not counted.
    pub(super) fn round(&mut self, step: Step) -> Result<Vec<Ack>, PrimaryError> {
        self.exchange(step, &mut RoundParts::default())
    }

    /// Sends `step` and collects every secondary's ack (in index order),
    /// writing the log rows they carry; `parts` gets where the time went
    /// (when the round got every ack and its rows).
    fn exchange(
        &mut self,
        mut step: Step,
        parts: &mut RoundParts,
    ) -> Result<Vec<Ack>, PrimaryError> {
        let n = self.link.secondaries();
        let started = Instant::now();
        if let Some(router) = &mut self.router {
            (step.mavlink, step.warnings) =
                router.inbound().map_err(PrimaryError::GroundStation)?;
        }
        self.link.broadcast(&step)?;
        let sent = Instant::now();
        let deadline = sent + self.options.step_deadline;
        let mut got: Vec<Option<Ack>> = vec![None; n];
        let mut left = n;
        // When the last ack was taken from the link, and its work.
        let mut last = (sent, 0);
        while left > 0 {
            let now = Instant::now();
            if now >= deadline {
                let missing = got.iter().position(Option::is_none).unwrap_or(0);
                return Err(PrimaryError::Deadline {
                    peer: self.link.peer_name(missing as u32),
                    iteration: step.iteration,
                    deadline: self.options.step_deadline,
                });
            }
            let Some(ack) = self.link.next_ack(deadline - now)? else {
                continue;
            };
            let taken = Instant::now();
            let sender = ack.sender as usize;
            if !ack.intact() {
                return Err(PrimaryError::Protocol(format!(
                    "the ack of {} for step {} fails its digest",
                    self.link.peer_name(ack.sender),
                    ack.iteration
                )));
            }
            if ack.iteration != step.iteration || sender >= n || got[sender].is_some() {
                // Stale (an earlier step's), from no secondary of this run,
                // or a duplicate: refused.
                self.refused += 1;
                continue;
            }
            last = (taken, ack.work_us);
            got[sender] = Some(ack);
            left -= 1;
        }
        let collected = Instant::now();
        let acks: Vec<Ack> = got.into_iter().flatten().collect();
        // A stretch's rows wait for its check (a failure in a stretch is
        // redone one period at a time, where it comes back).
        for a in &acks {
            self.take(a, step.keep)?;
        }
        let relayed = self.relay(&acks, step.stop);
        let waited = last.0 - sent;
        let work = Duration::from_micros(last.1).min(waited);
        *parts = RoundParts {
            send: sent - started,
            secondary: work,
            transit: waited - work,
            checks: collected - last.0,
            rows: collected.elapsed(),
        };
        let failure = acks
            .iter()
            .filter_map(|a| a.failure.as_ref())
            .min_by_key(|f| f.performer);
        if let Some(f) = failure {
            return Err(PrimaryError::Vehicle(f.message.clone(), f.status));
        }
        relayed?;
        Ok(acks)
    }

    /// The ground stations' side of the acks: what the vehicles sent, to
    /// the stations; what they applied, to the record (in the secondaries'
    /// order); on `stop`, what each secondary's link ignored.
    fn relay(&mut self, acks: &[Ack], stop: bool) -> Result<(), PrimaryError> {
        let Some(router) = &mut self.router else {
            return Ok(());
        };
        // Every ack's frames and lines first: an error loses none of them.
        let mut recorded = Ok(());
        for a in acks {
            router.outbound(&a.mavlink);
            if recorded.is_ok() {
                recorded = router.record(&a.recorded);
            }
            if stop {
                self.link_notes.extend(a.link_notes.iter().cloned());
            }
        }
        if let Some((a, e)) = acks
            .iter()
            .find_map(|a| a.link_error.as_ref().map(|e| (a, e)))
        {
            return Err(PrimaryError::GroundStation(format!(
                "{}: {e}",
                self.link.peer_name(a.sender)
            )));
        }
        recorded.map_err(PrimaryError::GroundStation)
    }

    /// Positions and log rows from one ack: the rows written, or held
    /// (`hold`: a stretch not yet checked).
    fn take(&mut self, a: &Ack, hold: bool) -> Result<(), PrimaryError> {
        for r in &a.performers {
            let Some(p) = self.performers.get_mut(r.performer as usize) else {
                return Err(PrimaryError::Protocol(format!(
                    "{} reported vehicle {}, which this run does not have",
                    self.link.peer_name(a.sender),
                    r.performer
                )));
            };
            p.position = r.position_ned_m;
            p.positions.clone_from(&r.positions);
            if r.state.is_none() {
                p.speed_mps = r.speed_mps;
                p.accel_mps2 = r.accel_mps2;
            }
            if r.row_count == 0 || p.log.is_none() {
                continue;
            }
            let mut reader = Reader::new(&r.rows);
            for _ in 0..r.row_count {
                p.row.load(&mut reader).map_err(|e| {
                    PrimaryError::Protocol(format!("the rows of vehicle `{}`: {e}", p.name))
                })?;
                match &mut p.log {
                    Some((log, _)) if !hold => {
                        log.write(&p.row).map_err(|e| PrimaryError::Log {
                            path: log.path().display().to_string(),
                            reason: e.to_string(),
                        })?
                    }
                    _ => p.pending.push(p.row.clone()),
                }
            }
        }
        Ok(())
    }

    /// Writes the rows received and not yet written.
    pub(super) fn write_pending(&mut self) -> Result<(), PrimaryError> {
        for p in &mut self.performers {
            let rows = std::mem::take(&mut p.pending);
            if let Some((log, _)) = &mut p.log {
                for row in &rows {
                    log.write(row).map_err(|e| PrimaryError::Log {
                        path: log.path().display().to_string(),
                        reason: e.to_string(),
                    })?;
                }
            }
        }
        Ok(())
    }
}
