//! A flight stepped by its front end rather than flown to its end in one
//! call (C's `lockstep_sim`, Python's `Sim`): steps and runs-until over the
//! engine's boundaries, the run ended once (by the front end, at its end,
//! or by a failed step, with everything before it written), and the same
//! [`FlightReport`] `lockstep fly --json` prints once it has ended.

use std::time::{Duration, Instant};

use lockstep_harness::engine::{Engine, EngineError};
use lockstep_harness::outcome::Summary;

use crate::RunError;
use crate::summary::flight::{FlightReport, ReportContext, report};

/// Why a session refused a call or stopped.
#[derive(Debug)]
pub enum SessionError {
    /// A step failed (the autopilot, the plant, an output): the run ended
    /// there, everything before it written. The engine's own error is
    /// [`Session::failure`].
    Step(RunError),
    /// Ending the run failed (the log's last rows, the recording); as
    /// `Step`.
    End(RunError),
    /// Nothing is left to step, or the run was ended; the message says when.
    Ended(String),
    /// A time before the last boundary processed.
    Past(String),
    /// A report asked for before the run ended.
    NotEnded(String),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Step(e) | SessionError::End(e) => f.write_str(&e.message),
            SessionError::Ended(m) | SessionError::Past(m) | SessionError::NotEnded(m) => {
                f.write_str(m)
            }
        }
    }
}

/// A flight stepped by its front end.
pub struct Session {
    engine: Engine,
    /// The run was ended (log flushed, autopilot destroyed, recording
    /// closed): by [`Session::finish`], or by a failed step.
    finished: bool,
    /// How the run ended, once it has (for its verdict and report).
    ending: Option<Result<Summary, EngineError>>,
    /// What the report says besides what the engine knows.
    context: ReportContext,
    /// Wall time spent stepping.
    stepping: Duration,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("engine", &self.engine)
            .field("finished", &self.finished)
            .finish_non_exhaustive()
    }
}

fn at(t: u64) -> String {
    lockstep_abi::at(t)
}

impl Session {
    /// The one constructor, for [`crate::flight::Prepared::into_session`]:
    /// every stepped flight is prepared first.
    pub(crate) fn new(engine: Engine, context: ReportContext) -> Session {
        Session {
            engine,
            finished: false,
            ending: None,
            context,
            stepping: Duration::ZERO,
        }
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The engine, to send it commands, faults and missions.
    pub fn engine_mut(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// The run was ended (by [`Session::finish`] or a failed step).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Refuses once the run was ended.
    pub fn usable(&self) -> Result<(), SessionError> {
        if self.finished {
            return Err(SessionError::Ended(format!(
                "the run was finished at {}",
                at(self.engine.now().0)
            )));
        }
        Ok(())
    }

    fn nothing_left(&self) -> SessionError {
        SessionError::Ended(format!(
            "the run ended at {}; nothing is left to step",
            at(self.engine.end().0)
        ))
    }

    /// Steps one boundary; a failure ends the run.
    fn step_one(&mut self) -> Result<bool, SessionError> {
        match self.engine.step() {
            Ok(t) => Ok(t.is_some()),
            Err(err) => {
                let failure = RunError::of_run(&err);
                // Finishing returns the step's error again (the first
                // error is the run's): the one reported is the step's.
                self.finished = true;
                self.ending = Some(self.engine.finish(Err(err)));
                Err(SessionError::Step(failure))
            }
        }
    }

    /// Processes up to `n` boundaries; how many were (fewer at the end of
    /// the run). [`SessionError::Ended`] when `n > 0` and none was left.
    pub fn step(&mut self, n: u64) -> Result<u64, SessionError> {
        self.usable()?;
        let started = Instant::now();
        let mut done = 0;
        let stepped = loop {
            if done == n {
                break Ok(());
            }
            match self.step_one() {
                Ok(true) => done += 1,
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        self.stepping += started.elapsed();
        stepped?;
        if n > 0 && done == 0 {
            return Err(self.nothing_left());
        }
        Ok(done)
    }

    /// Processes every boundary at or before `time_us` (up to the end of
    /// the run). [`SessionError::Past`] for a time before the last boundary
    /// processed; [`SessionError::Ended`] for a later one when nothing is
    /// left.
    pub fn run_until(&mut self, time_us: u64) -> Result<(), SessionError> {
        self.usable()?;
        let now = self.engine.now();
        if time_us < now.0 {
            return Err(SessionError::Past(format!(
                "run until {}, but the simulation is at {}",
                at(time_us),
                at(now.0)
            )));
        }
        if time_us > now.0 && self.engine.next_time().is_none() {
            return Err(self.nothing_left());
        }
        let started = Instant::now();
        let mut stepped = Ok(());
        while self.engine.next_time().is_some_and(|t| t.0 <= time_us) {
            if let Err(e) = self.step_one() {
                stepped = Err(e);
                break;
            }
        }
        self.stepping += started.elapsed();
        stepped
    }

    /// Ends the run where it is, once: the log flushed and its sidecar
    /// completed, the autopilot destroyed, the recording closed. Later
    /// steps are refused; reading state still works.
    pub fn finish(&mut self) -> Result<(), SessionError> {
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let ending = self.engine.finish(Ok(()));
        let outcome = match &ending {
            Ok(_) => Ok(()),
            Err(e) => Err(SessionError::End(RunError::of_run(e))),
        };
        self.ending = Some(ending);
        outcome
    }

    /// The error the run ended with, once it has ended with one.
    pub fn failure(&self) -> Option<&EngineError> {
        self.ending.as_ref().and_then(|e| e.as_ref().err())
    }

    /// The report of the run once it has ended, as `lockstep fly --json`
    /// prints it. Before, the refusal says to step to the end or to
    /// `finish` (the front end's name of [`Session::finish`]) first.
    pub fn report(&self, finish: &str) -> Result<FlightReport, SessionError> {
        let Some(ending) = &self.ending else {
            return Err(SessionError::NotEnded(format!(
                "the run is at {} and has not ended: step it to its end ({}) or end it with \
                 {finish} first",
                at(self.engine.now().0),
                at(self.engine.end().0)
            )));
        };
        Ok(report(
            &self.context,
            &self.engine,
            ending,
            self.stepping.as_secs_f64(),
        ))
    }
}
