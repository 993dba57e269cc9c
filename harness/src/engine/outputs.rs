//! What the engine writes as it flies, held apart from the simulation: the
//! CSV log and its sidecar, the recording, the ULog, and the log rows
//! captured for someone else or held back. The engine hands it each row,
//! each boundary and the run's end; nothing here changes the flight.

use std::path::PathBuf;

use lockstep_abi::ffi::{lockstep_actuator_frame, lockstep_commands};
use lockstep_plant::PlantInputs;

use super::EngineError;
use crate::Micros;
use crate::io::log::{FlightLog, LogRow};
use crate::io::log_meta::LogMeta;
use crate::io::record::{EndStatus, Recorder};
use crate::io::ulog::UlogRecorder;
use crate::outcome::journal::Entry;

/// A log being written and its sidecar (taken out of an engine with
/// [`super::Engine::take_log`]).
pub type LogHandle = (FlightLog, Option<(PathBuf, LogMeta)>);

/// The engine's writers.
#[derive(Default)]
pub(super) struct Outputs {
    pub log: Option<FlightLog>,
    /// The log's path and sidecar, rewritten when the log is finished.
    pub log_meta: Option<(PathBuf, LogMeta)>,
    /// The row the engine fills where the log is due.
    pub row: LogRow,
    pub recorder: Option<Recorder>,
    /// The ULog written as the run flies, and the first error writing a
    /// parameter change into it (reported when it is finished).
    pub ulog: Option<UlogRecorder>,
    pub ulog_error: Option<std::io::Error>,
    /// Log rows kept for [`Outputs::take_rows`] (when capturing).
    captured: Option<Vec<LogRow>>,
    /// The log while its rows are held back ([`Outputs::hold_rows`]).
    held_log: Option<FlightLog>,
}

impl Outputs {
    /// Writes to the log `log` (with its sidecar) from the start; `row`
    /// shaped for the vehicle.
    pub fn new(log: Option<FlightLog>, log_meta: Option<(PathBuf, LogMeta)>, row: LogRow) -> Self {
        Outputs {
            log,
            log_meta,
            row,
            ..Outputs::default()
        }
    }

    /// Something takes the log's rows: a log, a ULog, a capture.
    #[inline]
    pub fn wants_rows(&self) -> bool {
        self.log.is_some() || self.captured.is_some() || self.ulog.is_some()
    }

    /// Hands the row just filled to whatever takes it.
    pub fn write_row(&mut self) -> Result<(), EngineError> {
        let r = &self.row;
        if let Some(log) = &mut self.log {
            log.write(r)?;
        }
        if let Some(u) = &mut self.ulog {
            u.row(r).map_err(EngineError::Ulog)?;
        }
        if let Some(rows) = &mut self.captured {
            rows.push(r.clone());
        }
        Ok(())
    }

    /// Records a boundary (when recording): the inputs the plant holds
    /// now, the autopilot's outputs, its estimate, the commands issued.
    pub fn record(
        &mut self,
        t: Micros,
        inputs: &PlantInputs,
        act: &lockstep_actuator_frame,
        estimate: &[f32; 13],
        issued: &lockstep_commands,
    ) -> Result<(), EngineError> {
        if let Some(r) = &mut self.recorder {
            r.record(t, inputs, act, estimate, issued)?;
        }
        Ok(())
    }

    /// Keeps every log row in memory from now on.
    pub fn capture_rows(&mut self) {
        self.captured.get_or_insert_with(Vec::new);
    }

    /// The rows captured since the last call, in time order.
    pub fn take_rows(&mut self) -> Vec<LogRow> {
        self.captured
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Holds the log's rows back from now on (see
    /// [`super::Engine::hold_rows`]).
    pub fn hold_rows(&mut self) {
        if self.captured.is_none()
            && let Some(log) = self.log.take()
        {
            self.held_log = Some(log);
            self.captured = Some(Vec::new());
        }
    }

    /// Writes the rows held back, and writes on from now on.
    pub fn commit_rows(&mut self) -> Result<(), EngineError> {
        let Some(mut log) = self.held_log.take() else {
            return Ok(());
        };
        let rows = self.captured.take().unwrap_or_default();
        let written = rows.iter().try_for_each(|r| log.write(r));
        self.log = Some(log);
        written.map_err(EngineError::from)
    }

    /// Drops the rows held back, and writes on from now on.
    pub fn drop_rows(&mut self) {
        if let Some(log) = self.held_log.take() {
            self.captured = None;
            self.log = Some(log);
        }
    }

    /// Takes the log and its sidecar out: no more rows are written until
    /// [`Outputs::put_log`].
    pub fn take_log(&mut self) -> Option<LogHandle> {
        let log = self.log.take()?;
        Some((log, self.log_meta.take()))
    }

    /// Writes on to `log`.
    pub fn put_log(&mut self, (log, meta): LogHandle) {
        self.log = Some(log);
        self.log_meta = meta;
    }

    /// Ends the log: flushed, and its sidecar completed with its rows,
    /// last time and digest.
    pub fn finish_log(&mut self) -> Result<(), EngineError> {
        let Some(log) = &mut self.log else {
            return Ok(());
        };
        log.finish()?;
        if let Some((path, meta)) = &mut self.log_meta {
            meta.rows = Some(log.rows());
            meta.last_time_us = log.last_time_us();
            meta.digest = log.digest();
            meta.complete = true;
            meta.write(path)?;
        }
        Ok(())
    }

    /// Closes the ULog with `timeline`; the first error writing it.
    pub fn finish_ulog(&mut self, timeline: &[Entry]) -> Result<(), EngineError> {
        let Some(u) = self.ulog.take() else {
            return Ok(());
        };
        if let Some(e) = self.ulog_error.take() {
            return Err(EngineError::Ulog(e));
        }
        u.finish(timeline).map_err(EngineError::Ulog)
    }

    /// Ends the recording with the run's `result` (reached `now`); its
    /// own error counts only when the run had none.
    pub fn finish_recording(
        &mut self,
        result: &Result<(), EngineError>,
        now: Micros,
    ) -> Result<(), EngineError> {
        let Some(r) = self.recorder.take() else {
            return Ok(());
        };
        let finished = r.finish(match result {
            Ok(()) => EndStatus::Completed,
            Err(EngineError::Interrupted { signal, time_us }) => EndStatus::Interrupted {
                time_us: *time_us,
                signal: *signal,
            },
            Err(e) => EndStatus::Stopped {
                time_us: now.0,
                reason: e.to_string(),
            },
        });
        if result.is_ok() {
            finished?;
        }
        Ok(())
    }
}
